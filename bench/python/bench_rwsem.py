#!/usr/bin/env python3
"""Read-write locks and semaphores beside their closest peers, side by
side in one run on the same Redis server (issue 33): a first measurement,
not yet a phase of bench/harness.py nor a figure of docs/PERFORMANCE.md.

    PYTHONPATH=build/python python3 bench/python/bench_rwsem.py [--seconds 3]

Cases, each on one master started through tests/fixtures/redis-fixture:
  cycle      acquire + release, one holder, no contention: hiredlock's
             mutex, write, read and permit; redis-py's Lock (a writer lock
             baseline); pottery's Redlock; a semaphore built the common way
             (a ZSET of expiring members, one script, polled); and the raw
             round trip of redis-py's PING as the floor (with its Python
             overhead: a hold may beat it).
  rw 8+1     8 reader threads and 1 writer thread, each with its own
             client, hold 1 ms and release: reads/s, writes/s, the
             writer's wait p50/p99.
  permits    8 threads contend for 4 permits, holding 5 ms each: the time
             integral of permits held over permits available (target
             >= 90 %), hiredlock beside the ZSET semaphore.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))

import redis  # noqa: E402
from redis_fixture import Servers  # noqa: E402

import hiredlock  # noqa: E402

OPTS = {"timeout": 0.5, "connect_timeout": 1.0}

# The common Redis semaphore: a ZSET of holders scored by expiry; expired
# ones are dropped, then a member is added while fewer than the limit.
ZSET_ACQUIRE = """
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1])
if redis.call('zcard', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('zadd', KEYS[1], ARGV[2], ARGV[4])
  redis.call('pexpire', KEYS[1], ARGV[5])
  return 1
end
return 0
"""


class ZsetSemaphore:
    def __init__(self, r: redis.Redis, name: str, permits: int, ttl: float):
        self.r, self.key, self.permits, self.ttl = r, name, permits, ttl
        self.script = r.register_script(ZSET_ACQUIRE)

    def acquire(self, poll: float = 0.001) -> str:
        token = uuid.uuid4().hex
        while True:
            now = time.time()
            args = [now, now + self.ttl, self.permits, token, int(self.ttl * 1000)]
            if self.script(keys=[self.key], args=args):
                return token
            time.sleep(poll)

    def release(self, token: str) -> None:
        self.r.zrem(self.key, token)


def rate(fn, seconds: float) -> tuple[float, float]:
    """Cycles per second of fn and its median latency in microseconds."""
    lat = []
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        t0 = time.perf_counter()
        fn()
        lat.append(time.perf_counter() - t0)
    return len(lat) / seconds, statistics.median(lat) * 1e6


def cycles(servers: Servers, seconds: float) -> None:
    client = hiredlock.Client(servers.urls, **OPTS)
    r = redis.Redis.from_url(servers.urls[0])
    mutex = client.lock("b:mutex", 10)
    rw = client.rwlock("b:rw", 10)
    write, read = rw.write(), rw.read()
    permit = client.semaphore("b:sem", 4, 10).permit()
    rlock = r.lock("b:redis-py", timeout=10)
    from pottery import Redlock

    pottery = Redlock(key="b:pottery", masters={r}, auto_release_time=10)
    zsem = ZsetSemaphore(r, "b:zset", 4, 10)

    def hold(lock):
        def cycle():
            lock.acquire(blocking=False)
            lock.release()

        return cycle

    cases = [
        ("floor: PING", r.ping),
        ("hiredlock mutex", hold(mutex)),
        ("hiredlock write", hold(write)),
        ("hiredlock read", hold(read)),
        ("hiredlock permit", hold(permit)),
        ("redis-py Lock", hold(rlock)),
        ("pottery Redlock", lambda: (pottery.acquire(), pottery.release())),
        ("ZSET semaphore", lambda: zsem.release(zsem.acquire())),
    ]
    print(f"\ncycle (acquire + release), {seconds:g} s each")
    print(f"  {'case':<20} {'cycles/s':>10} {'p50 us':>8} {'x floor':>8}")
    floor = None
    for name, fn in cases:
        per_s, p50 = rate(fn, seconds)
        floor = floor or p50
        print(f"  {name:<20} {per_s:>10.0f} {p50:>8.0f} {p50 / floor:>8.2f}")


def readers_and_a_writer(servers: Servers, seconds: float) -> None:
    stop = time.perf_counter() + seconds
    reads, writes, waits = [0], [0], []
    mu = threading.Lock()

    def reader():
        rw = hiredlock.Client(servers.urls, **OPTS).rwlock("b:rw81", 10)
        while time.perf_counter() < stop:
            with rw.read():
                time.sleep(0.001)
            with mu:
                reads[0] += 1

    def writer():
        rw = hiredlock.Client(servers.urls, **OPTS).rwlock("b:rw81", 10)
        while time.perf_counter() < stop:
            w = rw.write()
            t0 = time.perf_counter()
            if not w.acquire(timeout=5):
                continue
            waits.append(time.perf_counter() - t0)
            time.sleep(0.001)
            w.release()
            writes[0] += 1

    threads = [threading.Thread(target=reader) for _ in range(8)]
    threads.append(threading.Thread(target=writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    waits.sort()
    p50 = waits[len(waits) // 2] * 1e3 if waits else float("nan")
    p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))] * 1e3 if waits else 0
    print(f"\nrw 8 readers + 1 writer, hold 1 ms, {seconds:g} s")
    print(f"  reads/s {reads[0] / seconds:.0f}  writes/s {writes[0] / seconds:.0f}")
    print(f"  writer wait p50 {p50:.1f} ms  p99 {p99:.1f} ms")


def utilisation(servers: Servers, seconds: float) -> None:
    permits, workers, hold = 4, 8, 0.005

    def run(make):
        spans = []
        mu = threading.Lock()
        start = time.perf_counter()
        stop = start + seconds

        def work():
            acquire, release = make()
            while time.perf_counter() < stop:
                h = acquire()
                t0 = time.perf_counter()
                time.sleep(hold)
                t1 = time.perf_counter()
                release(h)
                with mu:
                    spans.append((t0, t1))

        threads = [threading.Thread(target=work) for _ in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        held = sum(min(b, stop) - a for a, b in spans if a < stop)
        return held / (permits * seconds), len(spans) / seconds

    def hiredlock_make():
        sem = hiredlock.Client(servers.urls, **OPTS).semaphore("b:util", permits, 10)

        def acquire():
            return sem.acquire(timeout=10)

        return acquire, lambda p: p.release()

    def zset_make():
        zsem = ZsetSemaphore(redis.Redis.from_url(servers.urls[0]), "b:zutil", 4, 10)
        return zsem.acquire, zsem.release

    print(f"\npermits used / available: {workers} threads, {permits} permits, "
          f"hold {hold * 1e3:g} ms, {seconds:g} s")  # fmt: skip
    for name, make in (("hiredlock", hiredlock_make), ("ZSET semaphore", zset_make)):
        used, per_s = run(make)
        print(f"  {name:<16} {used * 100:5.1f} %  ({per_s:.0f} grants/s)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=3.0)
    a = p.parse_args()
    servers = Servers(1)
    try:
        cycles(servers, a.seconds / 3)
        readers_and_a_writer(servers, a.seconds)
        utilisation(servers, a.seconds)
    finally:
        servers.stop()


if __name__ == "__main__":
    main()
