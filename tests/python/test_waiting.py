"""Waiting from Python, sync and asyncio: a release wakes the waiter (also
over TLS and through Sentinel, across a failover), waiters get the lock in
arrival order, clients made per call are woken and leave no connection
behind, and every fallback (a holder that publishes nothing, one that
crashed, a killed subscriber connection) ends the wait within the holder's
TTL or the waiter's cap. Waiters are patient (their cap,
retry_delay, is 20 s) unless a test is about the cap: a wait that ends
sooner was ended by a hand-off or the holder's TTL, never by polling.
Timings are bounds with room for a loaded machine, not measurements."""

from __future__ import annotations

import asyncio
import gc
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


# --- TLS and Sentinel (issue 24, item 7) -------------------------------------


def test_a_release_wakes_the_waiter_over_tls(tls1, name):
    """A rediss:// master's subscriber shakes hands over TLS: the waiter
    hears the hand-off (before: no subscriber, every hand-off waited for
    the cap)."""
    tls = {"ssl_ca_certs": f"{tls1.tls_dir}/ca.crt"}
    holder = hiredlock.Client(tls1.tls_urls, **PATIENT, **tls).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    w = Waiter(tls1.tls_urls, name, **tls)
    tls1.queued(name, 1)
    time.sleep(0.3)
    t0 = time.monotonic()
    holder.release()
    w.join(25)
    assert w.acquired
    assert time.monotonic() - t0 < 3  # woken: not the 20 s cap


@pytest.mark.asyncio
async def test_asyncio_a_release_wakes_the_waiter_over_tls(tls1, name):
    tls = {"ssl_ca_certs": f"{tls1.tls_dir}/ca.crt"}
    client = hla.Client(tls1.tls_urls, **PATIENT, **tls)
    holder = hiredlock.Client(tls1.tls_urls, **PATIENT, **tls).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    task = asyncio.create_task(client.lock(name, ttl=10).acquire(timeout=25))
    await asyncio.to_thread(tls1.queued, name, 1)
    await asyncio.sleep(0.3)
    t0 = time.monotonic()
    holder.release()
    assert await asyncio.wait_for(task, 30)
    assert time.monotonic() - t0 < 3
    await client.close()


def subscribed_on(servers, node: int, channel: bytes) -> bool:
    """Whether channel has a subscriber on node (within 10 s)."""
    for _ in range(1000):
        if servers.redis(node).pubsub_numsub(channel)[0][1] >= 1:
            return True
        time.sleep(0.01)
    return False


def test_a_release_wakes_the_waiter_through_sentinel(sentinel2, name):
    """A Sentinel-managed primary's subscriber asks a sentinel where the
    primary is, and asks again after a failover (SENTINEL FAILOVER closes
    the deposed primary's clients): the hand-off on the new primary is
    heard too."""
    url = sentinel2.sentinel_url
    holder = hiredlock.Client(url, **PATIENT).lock(name, ttl=30)
    for failover in (False, True):
        assert holder.acquire(timeout=5)
        w = Waiter(url, name)
        primary = sentinel2.primary()
        for _ in range(1000):
            if sentinel2.redis(primary).zcard(f"{name}{{{name}}}:queue"):
                break
            time.sleep(0.005)
        channel = w.lock.client._channel
        assert subscribed_on(sentinel2, primary, channel)
        if failover:
            # The key and the queue on the replica first: SENTINEL FAILOVER
            # does not wait for it, and a replica behind grants the waiter
            # the lock on the promoted one (the holder's release then "not
            # owned": Sentinel's caveat, not what this test is about).
            assert sentinel2.redis(primary).execute_command("WAIT", 1, 10000) == 1
            new = sentinel2.failover(demoted=True)
            assert new != primary
            assert subscribed_on(sentinel2, new, channel)
        t0 = time.monotonic()
        holder.release()
        w.join(25)
        assert w.acquired
        assert time.monotonic() - t0 < 3  # woken: not the 20 s cap


# --- clients made per call (issue 24, item 1) --------------------------------


def pubsub_clients(servers) -> int:
    return sum(1 for c in servers.redis(1).client_list() if "P" in c["flags"])


def test_sync_clients_made_per_call_close_their_subscribers(servers1, name):
    """A client made per call (threads of a web server): each waits and
    hears its hand-off, and its subscriber connection goes with it."""
    holder = hiredlock.Client(servers1.urls, **PATIENT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    waiters = []
    for k in range(20):
        waiters.append(Waiter(servers1.urls, name, hold=0.002))
        servers1.queued(name, k + 1)
    t0 = time.monotonic()
    holder.release()
    for w in waiters:
        w.join(25)
    assert all(w.acquired for w in waiters)
    assert time.monotonic() - t0 < 10  # each woken: no 20 s cap
    del waiters, w
    gc.collect()
    for _ in range(500):
        if pubsub_clients(servers1) == 0:
            break
        time.sleep(0.01)
    assert pubsub_clients(servers1) == 0


@pytest.mark.asyncio
async def test_asyncio_clients_made_per_call_share_one_subscriber(servers1, name):
    """Tasks that each make a client and never close it (a web handler):
    every one is woken, and the event loop keeps one subscriber connection
    per master for all of them (before: one per client, for good)."""

    async def handler(name: str) -> None:
        client = hla.Client(servers1.urls, **PATIENT)
        async with client.lock(name, ttl=10, timeout=25):
            await asyncio.sleep(0.002)

    before = pubsub_clients(servers1)
    for burst in range(3):
        key = f"{name}:{burst}"
        holder = hiredlock.Client(servers1.urls, **PATIENT).lock(key, ttl=30)
        assert holder.acquire(blocking=False)
        tasks = [asyncio.create_task(handler(key)) for _ in range(30)]
        await asyncio.to_thread(servers1.queued, key, 30)
        t0 = time.monotonic()
        holder.release()
        await asyncio.wait_for(asyncio.gather(*tasks), 40)
        assert time.monotonic() - t0 < 15  # each woken: no 20 s cap
        gc.collect()
        assert pubsub_clients(servers1) - before <= 1
