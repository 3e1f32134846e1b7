"""hiredlock.asyncio's read-write locks and semaphores: the sync suite's
semantics (tests/python/test_rwsem.py) for async code, on 1 and 5
masters, under asyncio's own loop and uvloop, and the same holds as the
sync API's (one line, one count)."""

from __future__ import annotations

import asyncio

import pytest
from pytest_redis import TOLERANT

import hiredlock
import hiredlock.asyncio as hla


@pytest.mark.asyncio
async def test_a_waiting_write_stops_new_reads(servers, name):
    client = hla.Client(servers.urls, **TOLERANT)
    rw = client.rwlock(name)
    reader, writer, late = rw.read(), rw.write(), rw.read()
    assert (reader.mode, writer.mode) == ("read", "write")
    assert await reader.acquire(blocking=False)
    waiting = asyncio.ensure_future(writer.acquire(timeout=30))
    for _ in range(1000):
        if servers.redis(1).zcard(f"{name}{{{name}}}:queue") >= 1:
            break
        await asyncio.sleep(0.005)
    assert not await late.acquire(blocking=False)  # behind the waiting write
    assert not waiting.done()
    await reader.release()
    assert await asyncio.wait_for(waiting, 30)
    assert "mode=write" in repr(writer)
    await writer.release()
    async with late:
        assert late.locked()
    await client.close()


@pytest.mark.asyncio
async def test_permits_shared_with_the_sync_api(servers, name):
    client = hla.Client(servers.urls, **TOLERANT)
    sem = client.semaphore(name, 2)
    sync_sem = hiredlock.Client(servers.urls, **TOLERANT).semaphore(name, 2)
    mine = await sem.acquire(blocking=False)
    theirs = sync_sem.acquire(blocking=False)
    assert mine is not None and theirs is not None
    assert {mine.permit, theirs.permit} == {1, 2}
    assert await sem.acquire(blocking=False) is None
    assert f"permit={mine.permit} of 2" in repr(mine)
    freed = theirs.permit
    theirs.release()
    waiting = await sem.acquire(timeout=10)
    assert waiting is not None and waiting.permit == freed
    await waiting.release()
    await mine.release()
    assert servers.count(name) == 0
    await client.close()


@pytest.mark.asyncio
async def test_bad_arguments(servers, name):
    client = hla.Client(servers.urls, **TOLERANT)
    with pytest.raises(ValueError, match="permits must be a whole number from 1"):
        client.semaphore(name, 0)
    with pytest.raises(ValueError, match="ttl must be"):
        client.rwlock(name, ttl=-1)
    await client.close()
