"""Read-write locks and semaphores from Python (Client.rwlock,
Client.semaphore; docs/SAFETY.md, "Read-write locks and semaphores"), on
one and five masters: reads share and a write is alone, a waiting write
stops new reads, permits are counted and numbered, a dead holder's permit
comes back at its TTL, a permit is a managed lease like any lock, fences,
and bad arguments with the core's messages."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
from pytest_redis import TOLERANT

import hiredlock


def test_reads_share_and_a_write_is_alone(servers, client, name):
    rw = client.rwlock(name)
    r1, r2, w = rw.read(), rw.read(), rw.write()
    assert (r1.mode, w.mode, r1.permits, r1.permit) == ("read", "write", None, None)
    assert r1.acquire(blocking=False) and r2.acquire(blocking=False)
    assert r1.token != r2.token
    for i in range(1, servers.n + 1):
        assert servers.redis(i).hlen(name) == 2
    assert not w.acquire(blocking=False)
    r1.release()
    assert not w.acquire(blocking=False)
    r2.release()
    with w:
        assert w.locked()
        assert not rw.read().acquire(blocking=False)
    assert servers.count(name) == 0
    assert "mode=write" in repr(w)


def test_a_waiting_write_stops_new_reads(servers, client, name):
    rw = client.rwlock(name)
    reader = rw.read()
    assert reader.acquire(blocking=False)
    writer = rw.write()
    got = threading.Event()

    def write() -> None:
        if writer.acquire(timeout=30):
            got.set()

    t = threading.Thread(target=write)
    t.start()
    servers.queued(name, 1)
    late = rw.read()
    assert not late.acquire(blocking=False)  # behind the waiting write
    assert not got.is_set()
    reader.release()
    t.join(30)
    assert got.is_set() and writer.locked()
    writer.release()
    assert late.acquire(blocking=False)
    late.release()


def test_permits_are_counted_and_numbered(servers, client, name):
    sem = client.semaphore(name, 3)
    assert sem.permits == 3 and sem.name == name
    held = [sem.acquire(blocking=False) for _ in range(3)]
    assert all(p is not None for p in held)
    assert sorted(p.permit for p in held) == [1, 2, 3]
    assert sem.acquire(blocking=False) is None
    freed = held[1].permit
    held[1].release()
    assert held[1].permit is None
    again = sem.acquire(blocking=False)
    assert again is not None and again.permit == freed
    assert f"permit={freed} of 3" in repr(again)
    for p in (held[0], held[2], again):
        p.release()
    assert servers.count(name) == 0


def test_a_dead_holders_permit_comes_back_at_its_ttl(servers, client, name):
    sem = client.semaphore(name, 1, ttl=0.5)
    dead = sem.acquire(blocking=False)
    assert dead is not None
    del dead  # never released, as a crashed holder leaves it
    start = time.monotonic()
    p = sem.acquire(timeout=10)
    took = time.monotonic() - start
    assert p is not None and p.permit == 1
    assert took >= 0.4  # not before the dead one's TTL ran out
    p.release()


def test_a_permit_is_a_managed_lease(servers, client, name):
    lost = []
    sem = client.semaphore(name, 2, ttl=0.3, auto_renew=True, on_lost=lost.append)
    with sem.permit() as p:
        time.sleep(1.0)  # three TTLs: renewed, or the others would get in
        assert p.locked() and p.auto_renew
        other = [sem.acquire(blocking=False) for _ in range(2)]
        assert other[0] is not None and other[1] is None
        other[0].release()
    assert lost == []


def test_write_fences_grow_and_reads_get_the_last(servers, client, name):
    rw = client.rwlock(name, fenced=True)
    last = 0
    for _ in range(3):
        with rw.write() as w:
            assert w.fence > last
            last = w.fence
        with rw.read() as r:
            assert r.fence == last


def test_bad_arguments(client, name):
    with pytest.raises(ValueError, match="permits must be a whole number from 1"):
        client.semaphore(name, 0)
    with pytest.raises(ValueError, match="got 100001"):
        client.semaphore(name, 100001)
    with pytest.raises(TypeError, match="permits must be int, not str"):
        client.semaphore(name, "3")
    with pytest.raises(ValueError, match="mode must be one of lock, read, write"):
        hiredlock.Lock(client, name, mode="shared")
    with pytest.raises(ValueError, match="permits is for a semaphore's permit"):
        hiredlock.Lock(client, name, mode="read", permits=2)
    with pytest.raises(ValueError, match="ttl must be"):
        client.rwlock(name, ttl=-1)


def kind_refused(lock, held, asked, **wait):
    """lock's acquire fails at once with the core's words: its name is a
    lock of another kind (the same text C and Lua give)."""
    master = lock.client.masters[0]
    t0 = time.monotonic()
    with pytest.raises(ValueError) as caught:
        lock.acquire(**wait)
    assert time.monotonic() - t0 < 4  # not the 5 s wait
    name = lock.name if isinstance(lock.name, str) else lock.name.decode()
    assert str(caught.value) == (
        f"invalid argument: '{name}' is a {held} on {master}, not a {asked}"
        " (a name is one kind of lock)"
    )
    assert not lock.locked()


def test_one_name_is_one_kind(servers, client, name):
    rw, sem = client.rwlock(name), client.semaphore(name, 3)
    r, w, p, m = rw.read(), rw.write(), sem.permit(), client.lock(name)
    assert r.acquire(blocking=False)
    assert not m.acquire(blocking=False)  # SET NX alone: refused, as busy
    kind_refused(m, "read-write lock or semaphore", "lock", timeout=5)
    kind_refused(p, "read-write lock", "semaphore", blocking=False)
    kind_refused(p, "read-write lock", "semaphore", timeout=5)
    r.release()
    assert m.acquire(blocking=False)
    kind_refused(r, "lock", "read-write lock", blocking=False)
    kind_refused(w, "lock", "read-write lock", timeout=5)
    kind_refused(p, "lock", "semaphore", blocking=False)
    m.release()
    assert p.acquire(blocking=False)
    kind_refused(w, "semaphore", "read-write lock", timeout=5)
    kind_refused(m, "read-write lock or semaphore", "lock", timeout=5)
    p.release()
    with w:
        pass
    assert servers.count(name) == 0


# Holds two reads of every "...rw" name given and two permits (of 2) of
# every other, as leases of a 2 s TTL, until it is killed.
HOLD_ALL = """
import sys, time
import hiredlock

client = hiredlock.Client(sys.argv[1].split(","), connect_timeout=1.0,
                          timeout=0.5, retry_delay=0.01, retry_jitter=0.005)
holds = []
for name in sys.argv[2:]:
    for _ in range(2):
        if name.endswith("rw"):
            hold = client.rwlock(name, 2.0, auto_renew=True).read()
        else:
            hold = client.semaphore(name, 2, 2.0, auto_renew=True).permit()
        assert hold.acquire(timeout=30)
        holds.append(hold)
print("held", flush=True)
time.sleep(600)
"""

# Waits on every name given (a write of a read-write lock, or a permit of
# a semaphore of 2) in one event loop, until it is killed. A first attempt
# that finds no quorum (a loaded machine) fails at once: it tries again.
WAIT_ON_ALL = """
import asyncio, sys
import hiredlock, hiredlock.asyncio as hla

async def wait(hold):
    while True:
        try:
            return await hold.acquire(timeout=60)
        except hiredlock.ConnectionError:
            await asyncio.sleep(0.1)

async def main():
    client = hla.Client(sys.argv[1].split(","), connect_timeout=1.0,
                        timeout=0.5, retry_delay=0.01, retry_jitter=0.005)
    holds = []
    for name in sys.argv[2:]:
        if name.endswith("rw"):
            holds.append(client.rwlock(name, 30).write())
        else:
            holds.append(client.semaphore(name, 2, 30).permit())
    await asyncio.gather(*(wait(h) for h in holds))

asyncio.run(main())
"""


def keys_left(servers, pattern: str) -> dict[tuple[int, bytes], int]:
    """Every master's keys matching pattern, with their PTTL."""
    return {
        (i, key): servers.redis(i).pttl(key)
        for i in range(1, servers.n + 1)
        for key in servers.redis(i).scan_iter(match=pattern, count=1000)
    }


def test_no_key_outlives_its_holds_and_waiters(servers, name):
    """Many names, each with holders (leases) whose process is killed
    holding and a waiter whose process is killed waiting (SIGKILL both):
    every key carries a TTL all along, and none is left once the holds'
    TTL and the queue's lease have passed (docs/DESIGN.md section 3)."""
    names = [f"{name}:{i}:{'rw' if i % 2 else 'sem'}" for i in range(24)]
    ttl = 2.0  # HOLD_ALL's
    urls = ",".join(servers.urls)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_ALL, urls, *names],
        cwd="/",
        stdout=subprocess.PIPE,
        text=True,
    )
    waiter = None
    pattern = "".join("\\" + c if c in "[]*?\\" else c for c in name) + ":*"
    try:
        assert holder.stdout.readline() == "held\n"
        waiter = subprocess.Popen([sys.executable, "-c", WAIT_ON_ALL, urls, *names])
        for n in names:
            queue = f"{n}{{{n}}}:queue"
            for _ in range(600):  # TOLERANT: a loaded machine
                if servers.redis(1).zcard(queue) or waiter.poll() is not None:
                    break
                time.sleep(0.05)
            assert servers.redis(1).zcard(queue) == 1, (n, waiter.poll())
        # While both live: every key has a TTL (-1 would be none; -2 is a
        # key that went between SCAN and PTTL).
        keys = keys_left(servers, pattern)
        assert keys and -1 not in keys.values(), keys
    finally:
        for proc in (holder, waiter):
            if proc is not None:
                proc.kill()
                proc.wait()
    killed = time.monotonic()
    # The waiters' lease: 3 gaps between tries, at least 2 s (waiting.c).
    gap = TOLERANT["retry_delay"] + TOLERANT["retry_jitter"] + 2 * TOLERANT["timeout"]
    lease = max(2.0, 3 * gap)
    deadline = killed + max(ttl, lease) + 1.0  # 1 s: a loaded machine
    while time.monotonic() < deadline and keys_left(servers, pattern):
        time.sleep(0.05)
    assert keys_left(servers, pattern) == {}
