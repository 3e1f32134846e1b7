"""hiredlock.asyncio's managed leases: one renewer task per client keeps an
auto-renewed lock alive past its TTL; a loss is seen by lost/check(), the
on_lost callback, a cancelled holder task (cancel_on_lost) and a with block
that raises LockLost; max_hold ends renewal."""

from __future__ import annotations

import asyncio

import pytest
from pytest_redis import TOLERANT

import hiredlock
import hiredlock.asyncio as hla


@pytest.mark.asyncio
async def test_a_lease_outlives_its_ttl_with_one_token(servers, name):
    client = hla.Client(servers.urls, **TOLERANT)
    lk = client.lock(name, ttl=1, auto_renew=True)
    assert await lk.acquire()
    token = lk.token
    for _ in range(6):  # 3 s: three TTLs
        await asyncio.sleep(0.5)
        assert lk.locked()
        assert servers.values(name) == [token.encode()] * servers.n
    lk.check()
    assert not lk.lost
    await lk.release()
    assert servers.count(name) == 0
    await client.close()


@pytest.mark.asyncio
async def test_a_loss_is_seen_every_way(servers1, name):
    client = hla.Client(servers1.urls, **TOLERANT)
    seen: list[hla.Lock] = []
    lk = client.lock(
        name, ttl=1, auto_renew=True, on_lost=seen.append, cancel_on_lost=True
    )

    async def holder():
        async with lk:
            await asyncio.sleep(10)

    task = asyncio.create_task(holder())
    await asyncio.sleep(0.2)
    assert lk.locked()
    servers1.redis(1).delete(name)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)  # within a renewal period (1/3 s)
    assert seen == [lk]
    assert lk.lost and not lk.locked()
    with pytest.raises(hiredlock.LockLost, match=r"^lost: not owned$"):
        lk.check()
    await client.close()


@pytest.mark.asyncio
async def test_a_with_block_whose_lease_was_lost_raises_lock_lost(servers1, name):
    client = hla.Client(servers1.urls, **TOLERANT)
    with pytest.raises(hiredlock.LockLost, match="was lost before its with block"):
        async with client.lock(name, ttl=1, auto_renew=True):
            servers1.redis(1).set(name, "thief")
            await asyncio.sleep(0.8)
    assert servers1.get(1, name) == b"thief"
    servers1.redis(1).delete(name)
    await client.close()


@pytest.mark.asyncio
async def test_max_hold_ends_renewal(servers1, name):
    client = hla.Client(servers1.urls, **TOLERANT)
    lk = client.lock(name, ttl=0.6, auto_renew=True, max_hold=1.0)
    assert await lk.acquire()
    await asyncio.sleep(1.5)
    assert not lk.locked()
    assert lk.lost
    with pytest.raises(hiredlock.LockLost, match="max_hold reached"):
        lk.check()
    assert servers1.count(name) == 0  # it expired on its own
    await client.close()


@pytest.mark.asyncio
async def test_on_lost_needs_a_lease(servers1, name):
    client = hla.Client(servers1.urls, **TOLERANT)
    with pytest.raises(ValueError, match="need auto_renew=True"):
        client.lock(name, on_lost=print)
    with pytest.raises(TypeError, match="on_lost must be callable"):
        client.lock(name, auto_renew=True, on_lost=5)
