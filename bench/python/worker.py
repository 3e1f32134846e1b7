#!/usr/bin/env python3
"""The Python side of bench/harness.py: hiredlock from Python and the
Python peers, one benchmark slice per command on stdin, one JSON line out.

    python3 bench/python/worker.py URL1,URL2,...     (the harness starts it)
    python3 bench/python/worker.py contend ...       (case 5, see contend())

Commands (the same as bench/c/worker.c's):
  run CASE SECONDS   back-to-back uncontended acquire+release cycles
  count CASE K       exactly K cycles, nothing timed (for callgrind, strace)
  hold K             K hiredlock locks held on distinct names (N = 1)
  hold-redis-py K    the same with redis-py's Lock
  unhold             release them
  cycles K           K cycles, a new Lock object each (RSS drift)

Cases (one client, a key of its own, acquire without waiting, release):
  py-nK        hiredlock on K masters, one Lock object reused
  py-with-n1   `with client.lock(name, blocking=False):`, a new Lock each
  redis-py     redis-py's Lock (one master)
  redis-lock   python-redis-lock (one master)
  pottery-nK   pottery's Redlock on K masters
Peers get the same per-master timeouts as hiredlock's defaults (connect
0.1 s, reply 0.05 s), so a paused master costs them no more than us.
"""

from __future__ import annotations

import functools
import gc
import json
import logging
import sys
import time

TTL = 30.0
CONNECT_TIMEOUT = 0.1
REPLY_TIMEOUT = 0.05


def out(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def make_cases(urls: list[str]) -> dict:
    """Case name -> a factory of (acquire, release); each case is set up on
    first use, so a worker running one case imports only what it needs."""
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

    def hiredlock_n(n):
        import hiredlock

        lk = hiredlock.Client(urls[:n]).lock(f"bench:py-n{n}", ttl=TTL)
        return (lambda: lk.acquire(False)), lk.release

    def with_n1():
        import hiredlock

        client1 = hiredlock.Client(urls[:1])

        def with_cycle():
            # A with block on a new Lock per cycle: __enter__ (the acquire)
            # is timed; run_case calls __exit__ (the release).
            lk = client1.lock("bench:py-with", ttl=TTL, blocking=False)
            lk.__enter__()
            return lk

        return with_cycle, None

    def redis_py():
        rp = redis_conns()[0].lock("bench:redis-py", timeout=TTL)
        return (lambda: rp.acquire(blocking=False)), rp.release

    def redis_lock_():
        import redis_lock

        rl = redis_lock.Lock(redis_conns()[0], "bench:redis-lock", expire=int(TTL))
        return (lambda: rl.acquire(blocking=False)), rl.release

    def pottery_n(n):
        import pottery

        logging.getLogger("pottery").setLevel(logging.CRITICAL)
        pot = pottery.Redlock(
            key=f"bench:pottery-n{n}",
            masters=set(redis_conns()[:n]),
            auto_release_time=TTL,
        )
        return (lambda: pot.acquire(blocking=False)), pot.release

    factories = {
        "py-with-n1": with_n1,
        "redis-py": redis_py,
        "redis-lock": redis_lock_,
    }
    for n in (1, 3, 5, 7):
        if n <= len(urls):
            factories[f"py-n{n}"] = functools.partial(hiredlock_n, n)
    for n in (1, 3, 5):
        if n <= len(urls):
            factories[f"pottery-n{n}"] = functools.partial(pottery_n, n)
    return factories


def run_case(case, seconds: float) -> dict:
    acquire, release = case
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
        got = acquire()
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
    return {
        "cycles": len(lat) - failed,
        "failed": failed,
        "elapsed": (t - start) / 1e9,
        "cpu_us": cpu,
        "lat": [round(x, 1) for x in lat],
    }


def count_case(case, k: int) -> dict:
    """Exactly k cycles, nothing timed (the profile phase's counts)."""
    acquire, release = case
    for _ in range(k):
        got = acquire()
        if release is None:
            got.__exit__(None, None, None)
        elif got:
            release()
        else:
            raise RuntimeError("an uncontended acquire failed")
    return {"cycles": k}


def serve(urls: list[str]) -> None:
    import hiredlock

    factories = make_cases(urls)
    cases: dict = {}
    client1 = hiredlock.Client(urls[:1])
    held: list = []
    out({"ready": True})
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        if cmd in ("run", "count"):
            if words[1] not in cases:
                if words[1] not in factories:
                    out({"error": f"unknown case {words[1]}"})
                    continue
                cases[words[1]] = factories[words[1]]()
            if cmd == "run":
                out(run_case(cases[words[1]], float(words[2])))
            else:
                out(count_case(cases[words[1]], int(words[2])))
        elif cmd in ("hold", "hold-redis-py"):
            import redis

            conn = redis.Redis.from_url(urls[0])
            for i in range(int(words[1])):
                if cmd == "hold":
                    lk = client1.lock(f"bench:hold:py:{i}", ttl=TTL)
                    ok = lk.acquire(False)
                else:
                    lk = conn.lock(f"bench:hold:redis-py:{i}", timeout=TTL)
                    ok = lk.acquire(blocking=False)
                if not ok:
                    out({"error": "hold: an acquire failed"})
                    break
                held.append(lk)
            else:
                gc.collect()
                out({"held": len(held)})
        elif cmd == "unhold":
            for lk in held:
                lk.release()
            n = len(held)
            held.clear()
            gc.collect()
            out({"released": n})
        elif cmd == "cycles":
            for _ in range(int(words[1])):
                with client1.lock("bench:drift:py", ttl=TTL, blocking=False):
                    pass
            out({"cycles": int(words[1])})
        elif cmd == "quit":
            break
        else:
            out({"error": f"bad command {cmd}"})


def contend(args: list[str]) -> None:
    """Case 5: one of several processes taking turns on one name.

    contend URLS NAME RETRY_DELAY RETRY_JITTER: prints {"ready": true},
    reads "go END" on stdin, then until END (CLOCK_MONOTONIC seconds)
    acquires (blocking), releases at once, again. Prints one JSON line:
    every hold as [acquire called, acquired, release called, released] in
    CLOCK_MONOTONIC seconds, the clock every process on the machine shares.
    """
    import hiredlock

    urls, name = args[0].split(","), args[1]
    delay, jitter = float(args[2]), float(args[3])
    client = hiredlock.Client(urls, retry_delay=delay, retry_jitter=jitter)
    lk = client.lock(name, ttl=10)
    # Connect first, so every process starts on an equal footing.
    if lk.acquire(timeout=5):
        lk.release()
    out({"ready": True})
    words = sys.stdin.readline().split()
    end = float(words[1])
    holds = []
    timeouts = 0
    mono = time.monotonic
    while True:
        t0 = mono()
        if t0 >= end:
            break
        if not lk.acquire(timeout=max(0.001, end - t0)):
            timeouts += 1
            continue
        t1 = mono()
        t2 = mono()
        lk.release()
        if t1 >= end:
            break
        holds.append([t0, t1, t2, mono()])
    out({"runtime": "python", "holds": holds, "timeouts": timeouts})


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "contend":
        contend(sys.argv[2:])
        return
    if len(sys.argv) != 2:
        sys.exit("usage: worker.py URL1,URL2,... | worker.py contend ...")
    serve(sys.argv[1].split(","))


if __name__ == "__main__":
    main()
