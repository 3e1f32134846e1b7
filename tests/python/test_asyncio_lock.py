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


def _connections_received(servers) -> int:
    return int(servers.redis(1).info("stats")["total_connections_received"])


@pytest.mark.asyncio
async def test_a_slow_handshake_carries_over_to_a_later_round(servers1, name):
    """A new connection to a server that accepts but answers its handshake
    (SELECT, for /2) only 500 ms later: with the default 50 ms per-master
    timeout a waiting acquire's first round misses, the handshake carries
    over (connect_timeout 2 s), and a later round reads its replies and
    sends the SET on that one connection. Before, every round closed the
    unanswered handshake and opened another (a connection per round left
    in a stalled server's backlog; one whose every handshake outlasts the
    timeout was never reached)."""
    import asyncio

    client = hla.Client(f"{servers1.urls[0]}/2", connect_timeout=2, timeout=0.05)
    lk = client.lock(name, ttl=10)
    before = _connections_received(servers1)
    servers1.pause(1)
    resumed_at = []

    def resume_later():
        time.sleep(0.5)
        resumed_at.append(time.monotonic())
        servers1.resume(1)

    resuming = asyncio.get_running_loop().run_in_executor(None, resume_later)
    try:
        got = await lk.acquire(timeout=2)
        done_at = time.monotonic()
    finally:
        await resuming
    assert got
    assert done_at >= resumed_at[0]  # answered by the resumed server
    await lk.release()  # on the kept connection
    # the lock's connection and the waiting acquire's subscriber (and the
    # INFO of this test's own)
    assert _connections_received(servers1) - before - 1 == 2
    await client.close()


@pytest.mark.asyncio
async def test_a_paused_server_costs_a_round_its_timeout(servers1, name):
    """A round never waits for a handshake past its per-master timeout: a
    fresh client's try on a paused server ends after ~50 ms, not the 2 s
    connect_timeout (bounded at half of it: load stretches 50 ms, not to
    a second); once the server is back, the next try finds the carried
    handshake answered."""
    client = hla.Client(f"{servers1.urls[0]}/2", connect_timeout=2, timeout=0.05)
    lk = client.lock(name, ttl=10)
    servers1.pause(1)
    try:
        t0 = time.monotonic()
        with pytest.raises(hiredlock.ConnectionError, match="timeout after 50 ms"):
            await lk.acquire(blocking=False)
        took = time.monotonic() - t0
    finally:
        servers1.resume(1)
    assert took < 1.0
    assert await lk.acquire(blocking=False)
    await lk.release()
    await client.close()


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
