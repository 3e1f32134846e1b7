"""hiredlock.redis_py.AsyncLock: redis.asyncio's Lock API driven by
hiredlock.asyncio, under asyncio's own loop and uvloop. Beyond redis-py's
own tests (tests/redis_py/run.sh): exclusion with redis-py's and
hiredlock's locks, a waiter woken by the release, a cancelled acquire that
leaves no key, a cancelled release finished by the next, a lease, one
client per event loop and configuration."""

from __future__ import annotations

import asyncio
import functools
import time

import pytest
import pytest_asyncio
import redis.asyncio
from pytest_redis import TOLERANT
from redis.exceptions import LockError, LockNotOwnedError

import hiredlock.asyncio
from hiredlock import redis_py
from hiredlock.asyncio import _redis_py
from hiredlock.redis_py import AsyncLock

pytestmark = pytest.mark.asyncio


@pytest.fixture(autouse=True)
def tolerant():
    redis_py.configure(**TOLERANT)
    yield
    redis_py.configure()


@pytest_asyncio.fixture
async def r(servers1):
    client = redis.asyncio.Redis(host="127.0.0.1", port=servers1.ports[0])
    yield client
    await client.aclose()


async def test_it_is_what_r_lock_makes_and_excludes_the_others(r, servers1, name):
    ours = r.lock(name, timeout=10, lock_class=AsyncLock)
    theirs = r.lock(name, timeout=10)  # redis-py's own
    native = hiredlock.asyncio.Client(servers1.urls, **TOLERANT)
    try:
        async with ours:
            assert await r.get(name) == ours.local.token
            assert 9000 < await r.pttl(name) <= 10000
            assert await ours.owned() and await ours.locked()
            assert not await theirs.acquire(blocking=False)
            assert not await native.lock(name, ttl=10).acquire(blocking=False)
        assert await r.get(name) is None
        assert await theirs.acquire(blocking=False)
        assert not await ours.acquire(blocking_timeout=0.3)
        await theirs.release()
    finally:
        await native.close()


async def test_a_waiter_is_woken_by_the_release(r, name):
    holder = r.lock(name, timeout=10, lock_class=AsyncLock)
    assert await holder.acquire(blocking=False)

    async def release_later():
        await asyncio.sleep(0.3)
        await holder.release()

    task = asyncio.create_task(release_later())
    waiter = r.lock(name, timeout=10, sleep=3, lock_class=AsyncLock)
    t0 = time.monotonic()
    assert await waiter.acquire()
    assert time.monotonic() - t0 < 2.0  # redis-py's would sleep 3 s
    await task
    await waiter.release()


async def test_a_cancelled_acquire_leaves_no_key(r, name):
    holder = r.lock(name, timeout=10, lock_class=AsyncLock)
    assert await holder.acquire(blocking=False)
    waiter = r.lock(name, timeout=10, lock_class=AsyncLock)
    task = asyncio.create_task(waiter.acquire())
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert waiter.local.token is None
    await holder.release()
    assert await r.get(name) is None
    assert not [k for k in await r.keys(f"{name}*") if b"waiters" in k]


async def test_a_cancelled_release_is_finished_by_the_next(r, name):
    lk = r.lock(name, timeout=10, lock_class=AsyncLock)
    assert await lk.acquire(blocking=False)
    token = lk.local.token
    task = asyncio.create_task(lk.release())
    await asyncio.sleep(0)  # it starts, then is cancelled mid-way
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Finished before the cancellation went on, or not at all: either way
    # the token is kept and release() again ends it without an error.
    assert lk.local.token == token
    await lk.release()
    assert lk.local.token is None
    assert await r.get(name) is None
    with pytest.raises(LockError, match="already unlocked"):
        await lk.release()


async def test_timeout_none_is_a_lease(r, name):
    lk = r.lock(name, lock_class=functools.partial(AsyncLock, lease_ttl=0.3))
    assert await lk.acquire(blocking=False)
    assert 0 < await r.pttl(name) <= 300
    await asyncio.sleep(1.0)
    assert await lk.owned()
    with pytest.raises(LockError, match="no timeout"):
        await lk.reacquire()
    await lk.release()


async def test_extend_and_not_owned(r, name):
    lk = r.lock(name, timeout=10, lock_class=AsyncLock)
    with pytest.raises(LockError, match="unlocked lock"):
        lk.extend(1)  # said at the call, as redis-py's
    assert await lk.acquire(blocking=False)
    assert await lk.extend(5) is True
    assert 14000 < await r.pttl(name) <= 15000
    await r.set(name, "someone")
    with pytest.raises(LockNotOwnedError):
        await lk.reacquire()
    with pytest.raises(LockNotOwnedError):
        await lk.release()
    assert await r.get(name) == b"someone"


async def test_token_refused(r, name):
    with pytest.raises(LockError, match="refuses token="):
        await r.lock(name, lock_class=AsyncLock).acquire(token=b"x")


async def test_one_client_per_loop_and_configuration(r, servers1):
    same = _redis_py.client_for(r)
    port = servers1.ports[0]
    assert (
        _redis_py.client_for(redis.asyncio.Redis(host="127.0.0.1", port=port)) is same
    )
    other_db = redis.asyncio.Redis(host="127.0.0.1", port=port, db=2)
    assert _redis_py.client_for(other_db) is not same

    async def other_loop():
        return _redis_py.client_for(r)

    loop = asyncio.new_event_loop()
    try:
        elsewhere = await asyncio.to_thread(loop.run_until_complete, other_loop())
    finally:
        loop.close()
    assert elsewhere is not same
