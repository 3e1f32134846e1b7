"""Forced Sentinel failovers in a loop while threads lock: how long after a
failover a lock can still be granted and then lost (the window), without
and with sync_replicas. test_failover.py runs it briefly; run it at length
for the figures of docs/SAFETY.md:

    PYTHONPATH=build/python:tests/fixtures \
        python3 tests/python/failover_loop.py --loops 10

Each worker thread (its own client on the sentinel URL; the first makes a
new client for every attempt, as a program that makes one per request)
tries the lock without waiting, holds it for HOLD seconds, releases it.
A grant is lost when its release finds the key gone (the old primary was
demoted and resynced from the new one; a TTL is 20 holds long, so nothing
expires); two grants overlap when one worker was granted the lock while
another still held it (a double grant). The window of a failover is the
time from its start (SENTINEL FAILOVER) to the last grant acquired then
that was lost or overlapped another.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import threading
import time

from redis_fixture import Servers

import hiredlock

HOLD = 0.05
# Short, so that a copy of the lock the new primary kept from the moment of
# the promotion (its release went to the old primary) is soon gone; still
# 20 holds long: a hold never expires.
TTL = 1.0
WORKERS = 3
OPTIONS = {
    "connect_timeout": 1.0,
    "timeout": 0.2,
    "retry_delay": 0.01,
    "retry_jitter": 0.005,
}


@dataclasses.dataclass
class Figures:
    sync_replicas: int
    loops: int
    grants: int = 0
    lost: int = 0
    overlaps: int = 0
    refused: int = 0  # attempts refused for want of a replica's ack
    errors: int = 0  # other failures (connections closed by the demotion)
    windows_ms: list[float] = dataclasses.field(default_factory=list)
    refusal_ms: list[float] = dataclasses.field(default_factory=list)


def _worker(url, name, sync, fresh, stop, grants, counts, lock):
    client = hiredlock.Client(url, **OPTIONS)
    lk = client.lock(name, TTL, sync_replicas=sync)
    while not stop.is_set():
        if fresh:  # a client made per request: it asks the sentinels
            client = hiredlock.Client(url, **OPTIONS)
            lk = client.lock(name, TTL, sync_replicas=sync)
        t0 = time.monotonic()
        try:
            got = lk.acquire(blocking=False)
        except hiredlock.LockError as e:
            with lock:
                key = "refused" if "replicas acknowledged" in str(e) else "errors"
                counts[key].append(t0)
            time.sleep(0.005)
            continue
        if not got:
            time.sleep(0.001)
            continue
        t1 = time.monotonic()
        time.sleep(HOLD)
        t2 = time.monotonic()
        lost = False
        try:
            lk.release()
        except hiredlock.NotOwned:
            lost = True
        except hiredlock.LockError:
            lost = None  # could not tell (the demotion closed the connection)
        with lock:
            grants.append((t1, t2, lost))


def measure(loops: int, sync_replicas: int, name: str) -> Figures:
    s = Servers(2, "--sentinels", "1")
    stop = threading.Event()
    grants: list[tuple[float, float, bool | None]] = []
    counts: dict[str, list[float]] = {"refused": [], "errors": []}
    lock = threading.Lock()
    failovers: list[float] = []
    threads = [
        threading.Thread(
            target=_worker,
            args=(
                s.sentinel_url,
                name,
                sync_replicas,
                k == 0,
                stop,
                grants,
                counts,
                lock,
            ),
        )
        for k in range(WORKERS)
    ]
    try:
        for t in threads:
            t.start()
        time.sleep(0.5)
        for _ in range(loops):
            failovers.append(time.monotonic())
            s.failover(demoted=True)
            time.sleep(0.5)
    finally:
        stop.set()
        for t in threads:
            t.join()
        s.stop()
    f = Figures(sync_replicas=sync_replicas, loops=loops, grants=len(grants))
    f.refused, f.errors = len(counts["refused"]), len(counts["errors"])
    f.lost = sum(1 for g in grants if g[2])
    held = sorted(grants)
    bad = {g[0] for g in grants if g[2]}
    latest_end = float("-inf")
    for g in held:
        if g[0] < latest_end:  # granted while an earlier grant still held
            f.overlaps += 1
            bad.add(g[0])
        latest_end = max(latest_end, g[1])
    ends = [*failovers[1:], float("inf")]
    for start, end in zip(failovers, ends):
        lost = [t for t in bad if start <= t < end]
        f.windows_ms.append(round((max(lost) - start) * 1000, 1) if lost else 0.0)
        refused = [t for t in counts["refused"] if start <= t < end]
        f.refusal_ms.append(round((max(refused) - start) * 1000, 1) if refused else 0.0)
    return f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loops", type=int, default=10)
    args = ap.parse_args()
    for sync in (0, 1):
        f = measure(args.loops, sync, f"failover-loop:{sync}")
        print(json.dumps(dataclasses.asdict(f)))


if __name__ == "__main__":
    main()
