"""contend: one of several processes taking turns on one name (the bench's
contention phase).

    contend name=NAME retry_delay=S retry_jitter=S

Answers {"ready": true} once connected, reads "go END" on stdin, then until
END (CLOCK_MONOTONIC seconds) acquires (blocking), releases at once, again.
Answers every hold as [acquire called, acquired, release called, released]
in CLOCK_MONOTONIC seconds, the clock every process on the machine shares.
"""

from __future__ import annotations

import sys
import time

from .wire import out, seconds


def contend(urls: list[str], opts: dict[str, str]) -> dict:
    import hiredlock

    name = opts["name"]
    client = hiredlock.Client(urls, **seconds(opts, "retry_delay", "retry_jitter"))
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
    return {"runtime": "python", "holds": holds, "timeouts": timeouts}
