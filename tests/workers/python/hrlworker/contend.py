"""contend: one of W processes taking turns on one name (the bench's
contention phase), with hiredlock or a Python peer.

    contend name=NAME [lib=hiredlock|redis-py|redis-lock|pottery]
            [hold_ms=2] [think_ms=2] [think_spread_ms=0] [seed=N]
            [retry_delay=S] [retry_jitter=S] [connect_timeout=S] [timeout=S]

Answers {"ready": true} once connected, reads "go END" on stdin, then until
END acquires (blocking), holds hold_ms, releases, thinks think_ms, again.
With think_spread_ms each think is drawn uniformly from think_ms +- spread
(a random.Random(seed)): a fixed think puts a process's next attempt in the
same place of every hand-off, in lock-step with the others' holds.
Answers every hold as [acquire called, acquired, release called, released]
in CLOCK_BOOTTIME seconds: the clock every process on the machine shares,
and the one the Lua worker reads (hiredlock.core.now). redis-py gets its
hiredis parser when hiredis is installed (the benchmark installs it), and
the peers hiredlock's per-master deadlines, as in the main phase.
"""

from __future__ import annotations

import logging
import random
import sys
import time

from .wire import out, seconds

TTL = 10.0
# The peers' socket timeouts: those the bench gives hiredlock (contention.py
# DEADLINES, the main phase's), so that a late reply costs all the same.
CONNECT_TIMEOUT = 1.0
REPLY_TIMEOUT = 0.5


def now() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def make_lock(lib: str, urls: list[str], name: str, opts: dict[str, str]):
    """(acquire(wait) -> bool, release()) for lib on urls."""
    if lib == "hiredlock":
        import hiredlock

        names = ("retry_delay", "retry_jitter", "connect_timeout", "timeout")
        client = hiredlock.Client(urls, **seconds(opts, *names))
        lk = client.lock(name, ttl=TTL)
        return (lambda wait: lk.acquire(timeout=wait)), lk.release
    import redis

    conns = [
        redis.Redis.from_url(
            u, socket_timeout=REPLY_TIMEOUT, socket_connect_timeout=CONNECT_TIMEOUT
        )
        for u in urls
    ]
    if lib == "redis-py":  # polls every 0.1 s, its default
        rp = conns[0].lock(name, timeout=TTL)
        return (lambda wait: rp.acquire(blocking_timeout=wait)), rp.release
    if lib == "redis-lock":  # a BLPOP on a signal list the release pushes
        import redis_lock

        # Its BLPOP blocks for up to the wait: no reply deadline on it.
        rl = redis_lock.Lock(redis.Redis.from_url(urls[0]), name, expire=int(TTL))
        return (
            lambda wait: rl.acquire(timeout=min(int(TTL), max(1, int(wait))))
        ), rl.release
    if lib == "pottery":  # polls every random(0, 0.2) s
        import pottery

        logging.getLogger("pottery").setLevel(logging.CRITICAL)
        pot = pottery.Redlock(key=name, masters=set(conns), auto_release_time=TTL)
        return (lambda wait: pot.acquire(timeout=wait)), pot.release
    raise ValueError(f"unknown lib {lib!r}")


def contend(urls: list[str], opts: dict[str, str]) -> dict:
    lib = opts.get("lib", "hiredlock")
    hold = float(opts.get("hold_ms", 2)) / 1000
    think = float(opts.get("think_ms", 2)) / 1000
    spread = float(opts.get("think_spread_ms", 0)) / 1000
    draw = random.Random(int(opts.get("seed", 0))).uniform
    acquire, release = make_lock(lib, urls, opts["name"], opts)
    # Connect first, so every process starts on an equal footing.
    if acquire(5):
        release()
    out({"ready": True})
    end = float(sys.stdin.readline().split()[1])
    holds = []
    timeouts = 0
    sleep = time.sleep
    while True:
        t0 = now()
        if t0 >= end:
            break
        if not acquire(max(0.001, end - t0)):
            timeouts += 1
            continue
        t1 = now()
        sleep(hold)
        t2 = now()
        release()
        holds.append([t0, t1, t2, now()])
        sleep(draw(think - spread, think + spread) if spread else think)
    return {"runtime": "python", "lib": lib, "holds": holds, "timeouts": timeouts}
