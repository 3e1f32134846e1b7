"""The rwsem phase (issue 33): read-write locks and semaphores beside
their closest peers measurable here, side by side in one run on the same
master: the uncontended cycle (hiredlock's mutex, write, read and permit;
redis-py's Lock as a writer-lock baseline; pottery's Redlock; a semaphore
built the common way, a ZSET of expiring members; redis-py's PING as the
floor), 8 readers + 1 writer (throughput, the writer's wait), and permits
used over permits available under contention (target >= 90 %).
bench/python/bench_rwsem.py runs the same on a server of its own."""

from __future__ import annotations

import statistics
import threading
import time
import uuid

import redis

import hiredlock

from . import log

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


def cycles(urls: list[str], seconds: float) -> list[dict]:
    """acquire + release, one holder: cycles/s, p50 and its ratio to PING's."""
    client = hiredlock.Client(urls[:1], **OPTS)
    r = redis.Redis.from_url(urls[0])
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
    out = []
    floor = None
    for name, fn in cases:
        per_s, p50 = rate(fn, seconds)
        floor = floor or p50
        out.append(
            {"case": name, "per_s": per_s, "p50_us": p50, "x_floor": p50 / floor}
        )
    return out


def readers_and_a_writer(urls: list[str], seconds: float) -> dict:
    """8 reader threads and 1 writer, each its own client, hold 1 ms."""
    stop = time.perf_counter() + seconds
    reads, writes, waits = [0], [0], []
    mu = threading.Lock()

    def reader():
        rw = hiredlock.Client(urls[:1], **OPTS).rwlock("b:rw81", 10)
        while time.perf_counter() < stop:
            with rw.read():
                time.sleep(0.001)
            with mu:
                reads[0] += 1

    def writer():
        rw = hiredlock.Client(urls[:1], **OPTS).rwlock("b:rw81", 10)
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
    return {
        "seconds": seconds,
        "reads_per_s": reads[0] / seconds,
        "writes_per_s": writes[0] / seconds,
        "writer_wait_p50_ms": p50,
        "writer_wait_p99_ms": p99,
    }


def utilisation(urls: list[str], seconds: float) -> list[dict]:
    """8 threads contend for 4 permits, holding 5 ms: permits used over
    permits available (the time integral), hiredlock beside the ZSET one."""
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
        sem = hiredlock.Client(urls[:1], **OPTS).semaphore("b:util", permits, 10)

        def acquire():
            return sem.acquire(timeout=10)

        return acquire, lambda p: p.release()

    def zset_make():
        zsem = ZsetSemaphore(redis.Redis.from_url(urls[0]), "b:zutil", 4, 10)
        return zsem.acquire, zsem.release

    out = []
    for name, make in (("hiredlock", hiredlock_make), ("ZSET semaphore", zset_make)):
        used, per_s = run(make)
        out.append(
            {
                "case": name,
                "threads": workers,
                "permits": permits,
                "hold_ms": hold * 1e3,
                "used": used,
                "grants_per_s": per_s,
            }
        )
    return out


def rwsem_phase(args, urls: list[str]) -> dict:
    """The phase: the three measurements on the first master, side by side
    with the peers in this one run (issue 33's targets: permits used
    >= 90 % of those available under contention)."""
    seconds = args.rwsem_seconds
    out = {
        "seconds": seconds,
        "cycles": cycles(urls, seconds / 3),
        "rw_8_1": readers_and_a_writer(urls, seconds),
        "permits": utilisation(urls, seconds),
    }
    for c in out["cycles"]:
        log(f"rwsem: cycle {c['case']}: {c['per_s']:.0f}/s, p50 {c['p50_us']:.0f} us")
    rw = out["rw_8_1"]
    log(
        f"rwsem: 8 readers + 1 writer: {rw['reads_per_s']:.0f} reads/s, "
        f"{rw['writes_per_s']:.0f} writes/s, writer wait p99 "
        f"{rw['writer_wait_p99_ms']:.1f} ms"
    )
    for u in out["permits"]:
        used = u["used"] * 100
        log(f"rwsem: permits used {u['case']}: {used:.1f} % (target >= 90 %)")
    return out
