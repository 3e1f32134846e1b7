"""Waiting from Python, sync and asyncio: a release wakes the waiter, waiters
get the lock in arrival order, and every fallback (a holder that publishes
nothing, one that crashed, a killed subscriber connection) ends the wait
within the holder's TTL or the waiter's cap. Waiters are patient (their cap,
retry_delay, is 20 s) unless a test is about the cap: a wait that ends
sooner was ended by a hand-off or the holder's TTL, never by polling.
Timings are bounds with room for a loaded machine, not measurements."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import redis
from pytest_redis import TOLERANT

import hiredlock
import hiredlock.asyncio as hla

PATIENT = {**TOLERANT, "retry_delay": 20.0, "retry_jitter": 0.0}


def queue_keys(servers, name: str) -> list[bytes]:
    return [
        k for i in range(1, servers.n + 1) for k in servers.redis(i).keys(f"{name}{{*")
    ]


class Waiter(threading.Thread):
    """A thread acquiring name on its own client, holding hold seconds."""

    def __init__(self, urls, name, *, hold=0.0, timeout=15.0, got=None, **options):
        super().__init__()
        self.lock = hiredlock.Client(urls, **{**PATIENT, **options}).lock(name, ttl=10)
        self.hold, self.timeout, self.got = hold, timeout, got
        self.acquired: bool | None = None
        self.took = 0.0
        self.start()

    def run(self) -> None:
        t0 = time.monotonic()
        self.acquired = self.lock.acquire(timeout=self.timeout)
        self.took = time.monotonic() - t0
        if self.acquired:
            if self.got is not None:
                self.got.append(self)
            time.sleep(self.hold)
            self.lock.release()


def test_a_release_wakes_the_waiter(servers, name):
    holder = hiredlock.Client(servers.urls, **PATIENT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    w = Waiter(servers.urls, name)
    servers.queued(name, 1)
    time.sleep(0.2)
    t0 = time.monotonic()
    holder.release()
    w.join(10)
    assert w.acquired
    assert time.monotonic() - t0 < 3  # woken: not the 20 s cap, nor the TTL
    assert queue_keys(servers, name) == []


def test_threads_of_one_client_get_it_in_arrival_order(servers, name):
    """Every waiter a thread of one client: one subscriber connection per
    master, read by one waiting thread at a time for all of them."""
    shared = hiredlock.Client(servers.urls, **PATIENT)
    holder = shared.lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    got: list = []
    waiters = []
    for k in range(8):
        w = threading.Thread(target=lambda k=k: hold_once(shared, name, got, k))
        w.start()
        waiters.append(w)
        servers.queued(name, k + 1)
    holder.release()
    for w in waiters:
        w.join(20)
    assert got == list(range(8))
    # One subscriber connection per master, not one per waiting thread.
    for i in range(1, servers.n + 1):
        assert servers.redis(i).pubsub_numsub(shared._channel)[0][1] == 1


def hold_once(client, name, got, k) -> None:
    lock = client.lock(name, ttl=10)
    assert lock.acquire(timeout=15)
    got.append(k)
    time.sleep(0.01)
    lock.release()


def test_a_redis_py_holder_is_waited_for(servers1, name):
    """redis-py's Lock publishes nothing: the waiter tries again after its
    cap once redis-py released, and after the key's TTL when it crashed."""
    r = redis.Redis(unix_socket_path=servers1.unix_paths[0])
    theirs = r.lock(name, timeout=30)
    assert theirs.acquire(blocking=False)
    w = Waiter(servers1.urls, name, retry_delay=0.3)
    servers1.queued(name, 1)
    time.sleep(0.3)
    t0 = time.monotonic()
    theirs.release()
    w.join(10)
    assert w.acquired
    assert time.monotonic() - t0 < 0.3 + 2  # the cap, not 30 s
    # A redis-py holder that died: its key expires after 1 s; the patient
    # waiter (cap 20 s) asked for that TTL and tries then.
    dead = r.lock(name, timeout=1)
    assert dead.acquire(blocking=False)
    w = Waiter(servers1.urls, name)
    w.join(10)
    assert w.acquired
    assert 0.8 < w.took < 1 + 2


def test_a_killed_subscriber_connection_loses_nothing(servers1, name):
    holder = hiredlock.Client(servers1.urls, **PATIENT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    w = Waiter(servers1.urls, name)
    servers1.queued(name, 1)
    r = servers1.redis(1)
    channel = w.lock.client._channel
    for _ in range(1000):  # its subscription is up
        if r.pubsub_numsub(channel)[0][1] == 1:
            break
        time.sleep(0.002)
    # Kill it, and refuse it until the hand-off is made.
    r.execute_command("ACL", "SETUSER", "default", "-subscribe")
    try:
        assert r.execute_command("CLIENT", "KILL", "TYPE", "pubsub") >= 1
        t0 = time.monotonic()
        holder.release()  # the hand-off is published to nobody
        time.sleep(0.3)
        assert w.acquired is None and r.exists(name)  # reserved, unheard
    finally:
        r.execute_command("ACL", "SETUSER", "default", "+subscribe")
    w.join(10)
    assert w.acquired
    assert time.monotonic() - t0 < 0.3 + 3  # resubscribed: not the 20 s cap


def test_a_holder_taking_it_again_queues_behind(servers1, name):
    holder = hiredlock.Client(servers1.urls, **PATIENT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    got: list = []
    w = Waiter(servers1.urls, name, hold=0.2, got=got)
    servers1.queued(name, 1)
    holder.release()
    assert holder.acquire(timeout=10)  # at once: queued behind w
    got.append(holder)
    holder.release()
    w.join(10)
    assert got == [w, holder]


def test_timeout_and_signals_leave_no_queue_entry(servers1, name):
    holder = hiredlock.Client(servers1.urls, **PATIENT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    waiter = hiredlock.Client(servers1.urls, **PATIENT).lock(name, ttl=10)
    t0 = time.monotonic()
    assert waiter.acquire(timeout=0.3) is False
    assert 0.3 <= time.monotonic() - t0 < 0.3 + 2
    assert queue_keys(servers1, name) == []
    holder.release()


# --- asyncio ---------------------------------------------------------------


@pytest.mark.asyncio
async def test_asyncio_waiters_are_woken_in_arrival_order(servers, name):
    client = hla.Client(servers.urls, **PATIENT)
    holder = hiredlock.Client(servers.urls, **PATIENT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    got: list[int] = []

    async def take(k: int) -> None:
        async with client.lock(name, ttl=10, timeout=15):
            got.append(k)
            await asyncio.sleep(0.01)

    tasks = []
    for k in range(6):
        tasks.append(asyncio.create_task(take(k)))
        await asyncio.to_thread(servers.queued, name, k + 1)
    t0 = time.monotonic()
    holder.release()
    await asyncio.wait_for(asyncio.gather(*tasks), 20)
    assert got == list(range(6))
    assert time.monotonic() - t0 < 5
    await client.close()


@pytest.mark.asyncio
async def test_asyncio_fallbacks_and_cancel(servers1, name):
    client = hla.Client(servers1.urls, **PATIENT)
    r = redis.Redis(unix_socket_path=servers1.unix_paths[0])
    # A crashed holder: its 1 s TTL ends the wait, not the 20 s cap.
    r.set(name, "gone", px=1000)
    t0 = time.monotonic()
    lock = client.lock(name, ttl=10)
    assert await lock.acquire(timeout=10)
    assert 0.8 < time.monotonic() - t0 < 1 + 2
    await lock.release()
    # A task cancelled while it waits leaves the queue.
    r.set(name, "other", px=30000)
    task = asyncio.create_task(client.lock(name, ttl=10).acquire(timeout=10))
    await asyncio.to_thread(servers1.queued, name, 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert queue_keys(servers1, name) == []
    r.delete(name)
    await client.close()
