"""@synchronized and coroutines: the sync decorator refuses an async
function (it would hold the lock only while the coroutine is made, never
while its body runs), and hiredlock.asyncio has its own, which holds the
lock for the whole body, from the module (the running loop's default
client) and from an asyncio Client."""

from __future__ import annotations

import asyncio

import pytest
from pytest_redis import TOLERANT

import hiredlock
import hiredlock.asyncio as hla


def test_the_sync_decorator_refuses_an_async_function(client, name):
    async def job():
        pass

    async def stream():
        yield 1

    for decorator in (hiredlock.synchronized(name), client.synchronized(name)):
        with pytest.raises(TypeError, match=r"hiredlock\.asyncio\.synchronized"):
            decorator(job)
        with pytest.raises(TypeError, match=r"an async function"):
            decorator(stream)


def test_the_asyncio_decorator_holds_the_lock_while_the_body_runs(
    servers1, name, monkeypatch
):
    monkeypatch.setenv("HIREDLOCK_URL", servers1.urls[0])
    monkeypatch.delenv("HIREDLOCK_URLS", raising=False)
    client = hla.Client(servers1.urls, **TOLERANT)
    seen: list[tuple[str, int]] = []
    inside = 0

    async def body(who: str) -> str:
        nonlocal inside
        inside += 1
        assert inside == 1  # never two bodies at once
        seen.append((who, servers1.count(name)))
        await asyncio.sleep(0.05)
        inside -= 1
        return who

    @hla.synchronized(name, 5, timeout=5)
    async def from_default(who: str) -> str:
        return await body(who)

    @client.synchronized(name, 5, timeout=5)
    async def from_client(who: str) -> str:
        return await body(who)

    assert from_default.__name__ == "from_default"

    async def main() -> list[str]:
        done = await asyncio.gather(
            from_default("a"), from_client("b"), from_default("c"), from_client("d")
        )
        await client.close()
        return done

    assert asyncio.run(main()) == ["a", "b", "c", "d"]
    assert sorted(who for who, _ in seen) == ["a", "b", "c", "d"]
    assert [count for _, count in seen] == [1, 1, 1, 1]  # held in every body
    assert servers1.count(name) == 0


def test_the_asyncio_decorator_refuses_a_plain_function(name):
    def job():
        pass

    with pytest.raises(TypeError, match=r"use @hiredlock\.synchronized"):
        hla.synchronized(name)(job)
    client = hla.Client("redis://127.0.0.1:1")
    with pytest.raises(TypeError, match=r"needs an async function"):
        client.synchronized(name)(job)
    with pytest.raises(ValueError, match=r"^invalid argument: ttl"):
        client.synchronized(name, ttl=0)
