"""The benchmark cases of the Python worker: back-to-back uncontended
acquire+release cycles of hiredlock and of the Python peers, and the memory
commands (hold, unhold, cycles). bench/README.md describes the cases.

Peers get the same per-master timeouts as hiredlock's defaults (connect
0.1 s, reply 0.05 s), so a paused master costs them no more than us.
"""

from __future__ import annotations

import functools
import gc
import logging
import time
from typing import Any, NamedTuple

from . import async_cycles

TTL = 30.0
# Timeouts with room for a stall of the one CPU every process is pinned to
# (a 50 ms wait once in millions of cycles ended whole runs); they bound
# only a reply that is late, so they cost a cycle nothing. The same for
# hiredlock in every runtime and for the peers that take them.
CONNECT_TIMEOUT = 1.0
REPLY_TIMEOUT = 0.5


def make_cases(urls: list[str]) -> dict:
    """Case name -> a factory of its Case; each case is set up on first
    use, so a worker running one case imports only what it needs."""
    conns: list = []

    def redis_conns():
        import redis

        if not conns:
            conns.extend(
                redis.Redis.from_url(
                    u,
                    socket_timeout=REPLY_TIMEOUT,
                    socket_connect_timeout=CONNECT_TIMEOUT,
                )
                for u in urls
            )
        return conns

    def hiredlock_n(n, fenced=False, owner=None):
        import hiredlock

        kind = "fenced-" if fenced else "owner-" if owner else ""
        name = f"bench:py-{kind}n{n}"
        client = hiredlock.Client(
            urls[:n], connect_timeout=CONNECT_TIMEOUT, timeout=REPLY_TIMEOUT
        )
        # owner only when asked: an A/B build from before labels (bench
        # --ab-python) has no such option.
        labelled = {"owner": owner} if owner else {}
        lk = client.lock(name, ttl=TTL, fenced=fenced, **labelled)
        return Case("positional", lk, lk.release)

    def with_n1():
        import hiredlock

        client1 = hiredlock.Client(
            urls[:1], connect_timeout=CONNECT_TIMEOUT, timeout=REPLY_TIMEOUT
        )
        # A with block on a new Lock per cycle: the lock's making and its
        # __enter__ (the acquire) are timed, then its __exit__ (the release).
        return Case("with", client1.lock, None, "bench:py-with")

    def redis_py():
        rp = redis_conns()[0].lock("bench:redis-py", timeout=TTL)
        return Case("keyword", rp, rp.release)

    def redis_lock_():
        import redis_lock

        rl = redis_lock.Lock(redis_conns()[0], "bench:redis-lock", expire=int(TTL))
        return Case("keyword", rl, rl.release)

    def pottery_n(n):
        import pottery

        logging.getLogger("pottery").setLevel(logging.CRITICAL)
        pot = pottery.Redlock(
            key=f"bench:pottery-n{n}",
            masters=set(redis_conns()[:n]),
            auto_release_time=TTL,
        )
        return Case("keyword", pot, pot.release)

    def raw_py():
        from . import raw

        acquire, release = raw.sync_case(urls[0])
        return Case("call", acquire, release)

    factories = {
        "py-raw": raw_py,
        "py-with-n1": with_n1,
        "redis-py": redis_py,
        "redis-lock": redis_lock_,
    }
    for n in (1, 3, 5, 7):
        if n <= len(urls):
            factories[f"py-n{n}"] = functools.partial(hiredlock_n, n)
            factories[f"py-fenced-n{n}"] = functools.partial(hiredlock_n, n, True)
            factories[f"py-owner-n{n}"] = functools.partial(hiredlock_n, n, owner=True)
    for n in (1, 3, 5):
        if n <= len(urls):
            factories[f"pottery-n{n}"] = functools.partial(pottery_n, n)
    return factories


class Case(NamedTuple):
    """A case: how its acquire is called (a key of ACQUIRE_CALLS), on what
    (lk: the lock, the function of a `call` case, Client.lock for `with`),
    its release (None: `with`, the acquire returns the entered lock) and
    the name a `with` case makes its locks with."""

    style: str
    lk: Any
    release: Any
    name: str = ""


# The acquire call of each case as a user's own loop writes it. The loops
# of run_case and count_case are compiled once per style with that call
# written into them: calling it through a lambda (or a with-block helper)
# added a Python frame per cycle, some 400 instructions that no user's loop
# pays, to every Python case alike (hiredlock's and the peers'), more than
# hiredlock's binding itself cost.
ACQUIRE_CALLS = {
    "positional": "lk.acquire(False)",  # hiredlock: threading.Lock's idiom
    "keyword": "lk.acquire(blocking=False)",  # redis-py, redis-lock, pottery
    "with": "lk(name, ttl=TTL, blocking=False).__enter__()",
    "call": "lk()",  # py-raw: its acquire is a function of the floor's
}

_LOOPS = """
def run(lk, release, name, seconds):
    now_ns = time.perf_counter_ns
    lat = []
    append = lat.append
    failed = 0
    cpu0 = time.process_time()
    start = now_ns()
    end = start + int(seconds * 1e9)
    t = start
    while t < end or not lat:
        t0 = now_ns()
        got = {call}
        t1 = now_ns()
        if release is None:  # the with-block case: got is the entered Lock
            got.__exit__(None, None, None)
        elif got:
            release()
        else:
            failed += 1
        append((t1 - t0) / 1000)
        t = now_ns()
    cpu = (time.process_time() - cpu0) * 1e6
    return {{
        "cycles": len(lat) - failed,
        "failed": failed,
        "elapsed": (t - start) / 1e9,
        "cpu_us": cpu,
        "lat": [round(x, 1) for x in lat],
    }}


def count(lk, release, name, k):
    for _ in range(k):
        got = {call}
        if release is None:
            got.__exit__(None, None, None)
        elif got:
            release()
        else:
            raise RuntimeError("an uncontended acquire failed")
    return {{"cycles": k}}
"""


@functools.cache
def _loops(style: str) -> dict:
    scope = {"time": time, "TTL": TTL}
    exec(compile(_LOOPS.format(call=ACQUIRE_CALLS[style]), f"<{style}>", "exec"), scope)
    return scope


def run_case(case: Case, seconds: float) -> dict:
    return _loops(case.style)["run"](case.lk, case.release, case.name, seconds)


def count_case(case: Case, k: int) -> dict:
    """Exactly k cycles, nothing timed (the profile phase's counts)."""
    return _loops(case.style)["count"](case.lk, case.release, case.name, k)


class Bench:
    """The state of the benchmark commands: cases set up so far, one
    one-master client, the locks a hold command keeps."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.factories = make_cases(urls)
        self.cases: dict = {}
        self.held: list = []
        self._client1 = None

    def client1(self):
        import hiredlock

        if self._client1 is None:
            self._client1 = hiredlock.Client(
                self.urls[:1], connect_timeout=CONNECT_TIMEOUT, timeout=REPLY_TIMEOUT
            )
        return self._client1

    def case(self, name: str):
        if name not in self.cases:
            self.cases[name] = self.factories[name]()
        return self.cases[name]

    def run(self, args: list[str]) -> dict:
        if args[0] in async_cycles.CASES:
            return async_cycles.run(self.urls, args[0], float(args[1]))
        if args[0] not in self.factories:
            return {"error": f"unknown case {args[0]}"}
        return run_case(self.case(args[0]), float(args[1]))

    def count(self, args: list[str]) -> dict:
        if args[0] in async_cycles.CASES:
            return async_cycles.count(self.urls, args[0], int(args[1]))
        if args[0] not in self.factories:
            return {"error": f"unknown case {args[0]}"}
        return count_case(self.case(args[0]), int(args[1]))

    def hold(self, k: int, redis_py: bool = False) -> dict:
        import redis

        conn = redis.Redis.from_url(self.urls[0])
        for i in range(k):
            if redis_py:
                lk = conn.lock(f"bench:hold:redis-py:{i}", timeout=TTL)
                ok = lk.acquire(blocking=False)
            else:
                lk = self.client1().lock(f"bench:hold:py:{i}", ttl=TTL)
                ok = lk.acquire(False)
            if not ok:
                return {"error": "hold: an acquire failed"}
            self.held.append(lk)
        gc.collect()
        return {"held": len(self.held)}

    def lease(self, k: int, ttl_ms: int, n: int) -> dict:
        """K managed leases on a client of their own (the leases phase)."""
        import hiredlock

        client = hiredlock.Client(self.urls[:n])
        for i in range(k):
            lk = client.lock(f"bench:lease:py:{i}", ttl=ttl_ms / 1000, auto_renew=True)
            if not lk.acquire(False):
                return {"error": "lease: an acquire failed"}
            self.held.append(lk)
        return {"held": len(self.held)}

    def unhold(self) -> dict:
        for lk in self.held:
            lk.release()
        n = len(self.held)
        self.held.clear()
        gc.collect()
        return {"released": n}

    def cycles(self, k: int) -> dict:
        for _ in range(k):
            with self.client1().lock("bench:drift:py", ttl=TTL, blocking=False):
                pass
        return {"cycles": k}
