"""cancel: reliability case 7, the Python side.

    cancel mode=hold|cancel seconds=S name=NAME

"hold" keeps the lock busy (acquire, hold 150 ms, release); "cancel" loops
on acquires that the harness interrupts with SIGINT (KeyboardInterrupt) at
random moments. Answers {"ready": true} once interrupts are expected, then
its counts when the time is up. The client comes from "client".
"""

from __future__ import annotations

import select
import time

from .wire import out


def cancel(client, opts: dict[str, str]) -> dict:
    import hiredlock

    mode, name = opts["mode"], opts["name"]
    counts = {
        "acquired": 0,
        "timeout": 0,
        "interrupted_in_acquire": 0,
        "interrupted_elsewhere": 0,
        "errors": 0,
    }
    end = time.monotonic() + float(opts["seconds"])
    out({"ready": True})  # the harness interrupts only from now on
    while True:
        stage = "other"
        try:
            if time.monotonic() >= end:
                break
            lk = client.lock(name, ttl=2)
            stage = "acquire"
            ok = lk.acquire(timeout=5)
            stage = "other"
            if not ok:
                counts["timeout"] += 1
                continue
            counts["acquired"] += 1
            select.select([], [], [], 0.15 if mode == "hold" else 0.005)
            lk.release()
        except KeyboardInterrupt:
            key = (
                "interrupted_in_acquire"
                if stage == "acquire"
                else "interrupted_elsewhere"
            )
            counts[key] += 1
        except hiredlock.LockError:
            counts["errors"] += 1
    return counts
