"""hiredlock.asyncio: the sync suite's semantics again, for async code, on
1 and 5 masters, under asyncio's own loop and under uvloop."""

from __future__ import annotations

import time

import pytest
from pytest_redis import TOLERANT

import hiredlock
import hiredlock.asyncio as hla


def client_on(servers, **options) -> hla.Client:
    return hla.Client(servers.urls, **{**TOLERANT, **options})


@pytest.mark.asyncio
async def test_acquire_excludes_and_release_frees(servers, name):
    a, b = client_on(servers), client_on(servers)
    la, lb = a.lock(name, ttl=10), b.lock(name, ttl=10)
    assert await la.acquire(blocking=False)
    assert la.locked()
    assert 9.5 < la.validity <= 10
    assert servers.values(name) == [la.token.encode()] * servers.n
    assert not await lb.acquire(blocking=False)
    t0 = time.monotonic()
    assert not await lb.acquire(timeout=0.2)
    assert 0.2 <= time.monotonic() - t0 < 0.2 + 2 * 0.5 + 0.5
    await la.release()
    assert not la.locked()
    assert servers.count(name) == 0
    assert await lb.acquire(blocking=False)
    assert lb.token != la.token
    await lb.release()
    await a.close()
    await b.close()


@pytest.mark.asyncio
async def test_the_same_wire_format_as_the_sync_api(servers, name):
    """A lock taken here excludes the sync API, and the reverse."""
    sync = hiredlock.Client(servers.urls, **TOLERANT).lock(name, ttl=10)
    lk = client_on(servers).lock(name, ttl=10)
    assert sync.acquire(blocking=False)
    assert not await lk.acquire(blocking=False)
    sync.release()
    assert await lk.acquire(blocking=False)
    assert not sync.acquire(blocking=False)
    assert servers.values(name) == [lk.token.encode()] * servers.n
    await lk.release()


@pytest.mark.asyncio
async def test_async_with_releases_and_raises_not_acquired(servers, name):
    client = client_on(servers)
    async with client.lock(name, ttl=10) as held:
        assert held.locked()
        assert servers.count(name) == servers.n
        with pytest.raises(
            hiredlock.NotAcquired,
            match=r"^timeout: lock .* not acquired \(one attempt\)$",
        ):
            async with client.lock(name, blocking=False):
                pass
    assert servers.count(name) == 0
    with pytest.raises(ZeroDivisionError):
        async with client.lock(name):
            1 / 0  # noqa: B018
    assert servers.count(name) == 0


@pytest.mark.asyncio
async def test_extend_and_a_lock_lost_behind_our_back(servers, name):
    lk = client_on(servers).lock(name, ttl=2)
    assert await lk.acquire()
    await lk.extend(20)
    assert lk.validity > 19
    for i in range(1, servers.n + 1):
        assert 19000 < servers.redis(i).pttl(name) <= 20000
        servers.redis(i).set(name, "thief")
    with pytest.raises(hiredlock.NotOwned, match=r"^not owned$"):
        await lk.extend()
    assert not lk.locked()
    with pytest.raises(hiredlock.NotOwned, match=r"^not held$"):
        await lk.release()
    for i in range(1, servers.n + 1):
        servers.redis(i).delete(name)


@pytest.mark.asyncio
async def test_a_with_block_whose_lock_was_lost_raises_not_owned(servers1, name):
    client = client_on(servers1)
    with pytest.raises(
        hiredlock.NotOwned, match="was lost before its with block ended"
    ):
        async with client.lock(name, ttl=10):
            servers1.redis(1).set(name, "thief")
    servers1.redis(1).delete(name)


@pytest.mark.asyncio
async def test_bad_arguments_say_what_the_sync_api_says(servers1, name):
    client = client_on(servers1)
    lk = client.lock(name)
    sync = hiredlock.Client(servers1.urls).lock(name)
    for call_async, call_sync in [
        (lambda: lk.acquire(timeout=-2), lambda: sync.acquire(timeout=-2)),
        (lambda: lk.acquire(False, 1), lambda: sync.acquire(False, 1)),
        (lambda: lk.acquire(timeout="1"), lambda: sync.acquire(timeout="1")),
    ]:
        with pytest.raises(Exception) as a:
            await call_async()
        with pytest.raises(Exception) as s:
            call_sync()
        assert (type(a.value), str(a.value)) == (type(s.value), str(s.value))
    # client.lock() passes its options by position (Lock._make): the same
    # checks and words as the sync client's.
    for kwargs in [
        {"ttl": 0.002},
        {"ttl": -1},
        {"ttl": "30"},
        {"timeout": -2},
        {"auto_renew": True, "max_hold": -1},
        {"sync_replicas": -1},
        {"sync_aof": "yes"},
        {"owner": 5},
        {"fenced": "no"},
    ]:
        with pytest.raises((ValueError, TypeError)) as a:
            client.lock(name, **kwargs)
        with pytest.raises((ValueError, TypeError)) as s:
            hiredlock.Client(servers1.urls).lock(name, **kwargs)
        assert (type(a.value), str(a.value)) == (type(s.value), str(s.value))
    fenced = client.lock(name, 7, fenced=True, blocking=False, owner="me")
    assert (fenced.ttl, fenced.blocking, fenced.fence_key is not None) == (
        7,
        False,
        True,
    )
    with pytest.raises(TypeError, match="tiemout"):
        client.lock(name, tiemout=1)  # any other keyword: Lock() names it
    with pytest.raises(ValueError, match="invalid argument: timeout must be between"):
        hla.Client(servers1.urls, timeout=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'tiemout'"):
        hla.Client(servers1.urls, tiemout=1)
    assert servers1.count(name) == 0


@pytest.mark.asyncio
async def test_two_of_five_masters_killed_and_three(fresh5, name):
    client = client_on(fresh5)
    fresh5.kill(2)
    fresh5.kill(4)
    lk = client.lock(name)
    assert await lk.acquire(blocking=False)
    await lk.release()
    fresh5.kill(5)
    t0 = time.monotonic()
    refused = (
        r"^connection failed: 2 of 5 masters answered \(3 needed\); "
        r"127\.0\.0\.1:\d+: connection refused"
    )
    with pytest.raises(hiredlock.ConnectionError, match=refused):
        await lk.acquire(blocking=False)
    assert time.monotonic() - t0 < 1.5  # no wait: at once
    t0 = time.monotonic()
    with pytest.raises(hiredlock.ConnectionError, match=refused):
        await lk.acquire(timeout=0.5)  # tried until its deadline
    assert 0.5 <= time.monotonic() - t0 < 0.5 + 1
    assert fresh5.count(name, alive=[1, 3]) == 0


@pytest.mark.asyncio
async def test_a_paused_master_costs_one_timeout_once(fresh5, name):
    client = client_on(fresh5, timeout=0.2)
    lk = client.lock(name, ttl=10)
    assert await lk.acquire()
    await lk.release()
    fresh5.pause(3)
    try:
        t0 = time.monotonic()
        assert await lk.acquire()  # waits its 0.2 s for the paused master
        await lk.release()
        first = time.monotonic() - t0
        t0 = time.monotonic()
        for _ in range(20):
            assert await lk.acquire()
            await lk.release()
        later = (time.monotonic() - t0) / 20
    finally:
        fresh5.resume(3)
    assert first >= 0.2
    assert later < 0.2  # late: not waited for once a quorum said OK


@pytest.mark.asyncio
async def test_unix_socket_masters(servers1, name):
    client = hla.Client(servers1.unix_urls, **TOLERANT)
    async with client.lock(name) as lk:
        assert servers1.get(1, name) == lk.token.encode()
    assert servers1.count(name) == 0


@pytest.mark.asyncio
async def test_the_default_client_reads_the_environment(servers1, name, monkeypatch):
    monkeypatch.setenv("HIREDLOCK_URLS", ",".join(servers1.urls))
    async with hla.lock(name, ttl=5) as lk:
        assert servers1.get(1, name) == lk.token.encode()
    assert hla.default_client() is hla.default_client()


@pytest.mark.asyncio
async def test_a_refused_handshake_leaves_no_key(servers1, name):
    """The asyncio driver sends AUTH/SELECT alone first, as the others do:
    pipelined behind a refused one, the SET would run in db 0."""
    port = servers1.ports[0]
    for url, text in [
        (f"redis://:nopass@127.0.0.1:{port}", "authentication failed"),
        (f"redis://127.0.0.1:{port}/99", "DB index is out of range"),
    ]:
        client = hla.Client(url, **TOLERANT)
        with pytest.raises(hiredlock.LockError, match=text):
            await client.lock(name).acquire(blocking=False)
        await client.close()
        assert servers1.count(name) == 0


@pytest.mark.asyncio
async def test_fenced_locks_share_the_sync_counter(servers, name):
    """A fenced asyncio lock takes its fence from the counter the sync (and
    every other) runtime uses, through the pipelined SET and INCR."""
    client = hla.Client(servers.urls, **TOLERANT)
    sync = hiredlock.Client(servers.urls, **TOLERANT)
    fences = []
    for i in range(6):
        if i % 2:
            with sync.lock(name, fenced=True) as lk:
                fences.append(lk.fence)
        else:
            async with client.lock(name, fenced=True) as alk:
                assert alk.fence_key == sync.lock(name, fenced=True).fence_key
                fences.append(alk.fence)
            assert alk.fence is None
    assert fences == sorted(set(fences)) and fences[0] >= 1
    plain = client.lock(name)
    async with plain:
        assert plain.fence is None and plain.fence_key is None
    assert servers.count(name) == 0
    await client.close()


@pytest.mark.parametrize(
    "url",
    ["redis+cluster://127.0.0.1:1", "redis+sentinel://127.0.0.1:1/mymaster"],
)
def test_deployments_asyncio_does_not_speak_are_refused(url):
    """Cluster and sentinel masters are the C driver's for now: the asyncio
    client says so at construction instead of connecting as if to a plain
    master."""
    with pytest.raises(ValueError, match=r"hiredlock\.asyncio does not support"):
        hla.Client([url])
    hiredlock.Client([url])  # the sync client takes it
