"""race and release: one racer of reliability case 6, clients racing for
one lock on the same monotonic instant.

    race phase=A|B name=NAME at=NS   -> {"won": true, "t0", "t1", "token"}
                                        | {"won": false, "t0", "t1", "err"}
    release                          -> {"released": true}

Phase A is one attempt; a winner holds the lock until "release". Phase B
keeps trying up to 10 s, holds 20 ms and releases. t0, t1: CLOCK_MONOTONIC
ns around the acquire. The client comes from the "client" command.
"""

from __future__ import annotations

import select
import time


class Racer:
    def __init__(self) -> None:
        self.held = None

    def race(self, client, opts: dict[str, str]) -> dict:
        import hiredlock

        at = int(opts["at"])  # everyone starts at this monotonic instant
        left = (at - time.monotonic_ns()) / 1e9 - 0.002
        if left > 0:
            select.select([], [], [], left)
        while time.monotonic_ns() < at:
            pass
        lk = client.lock(opts["name"], ttl=5)
        t0 = time.monotonic_ns()
        try:
            if opts["phase"] == "A":
                won = lk.acquire(blocking=False)
            else:
                won = lk.acquire(timeout=10)
            err = "timeout"
        except hiredlock.LockError as e:
            won, err = False, str(e).split(":")[0]
        t1 = time.monotonic_ns()
        if not won:
            return {"won": False, "t0": t0, "t1": t1, "err": err}
        if opts["phase"] == "B":
            select.select([], [], [], 0.02)
            lk.release()
        else:
            self.held = lk
        return {"won": True, "t0": t0, "t1": t1, "token": lk.token}

    def release(self) -> dict:
        lk, self.held = self.held, None
        lk.release()
        return {"released": True}
