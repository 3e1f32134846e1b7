"""Fenced locks from Python (docs/PYTHON-API.md, "Fencing"): the option,
``Lock.fence`` and ``Lock.fence_key``, the drifted-counter scenario of
issue 15 with its negative control, fences strictly increasing over
hundreds of grants (thousands in make reliability) by several clients
while masters are stopped, resumed and restarted, and
:func:`hiredlock.fenced_write` refusing a paused holder's write."""

from __future__ import annotations

import contextlib
import os
import threading
import time

import pytest
from pytest_redis import TOLERANT
from redis_fixture import Servers

import hiredlock


def test_fences_increase_and_the_counter_never_expires(servers, client, name):
    lk = client.lock(name, fenced=True)
    assert lk.fence is None
    key = name.encode()
    assert lk.fence_key == key + b"{" + key + b"}:fence"
    for want in (1, 2, 3):
        with lk:
            assert lk.fence == want
            assert servers.values(lk.fence_key) == [str(want).encode()] * servers.n
        assert lk.fence is None
    for i in range(1, servers.n + 1):
        assert servers.redis(i).pttl(lk.fence_key) == -1
    assert servers.count(name) == 0


def test_plain_locks_have_no_fence_and_leave_no_counter(servers, client, name):
    lk = client.lock(name)
    assert lk.fence_key is None
    with lk:
        assert lk.fence is None
    assert servers.all_keys(name + "*") == {i: {} for i in range(1, servers.n + 1)}


def test_a_client_default_that_a_lock_can_turn_off(servers1, name):
    client = hiredlock.Client(servers1.urls, fenced=True, **TOLERANT)
    assert client.lock(name).fence_key is not None
    assert client.lock(name, fenced=None).fence_key is not None
    assert client.lock(name, fenced=False).fence_key is None
    assert hiredlock.OPTIONS["fenced"] is False
    with client.lock(name) as lk:
        assert lk.fence == 1
    plain = hiredlock.Client(servers1.urls, **TOLERANT)
    with plain.lock(name, fenced=True) as lk:
        assert lk.fence == 2
    called = []

    @client.synchronized(name, fenced=False)
    def work() -> None:
        called.append(True)

    work()
    assert called == [True]
    assert servers1.get(1, lk.fence_key) == b"2"


def test_the_option_takes_a_bool(servers1, name):
    with pytest.raises(TypeError, match=r"^fenced must be a bool, not int$"):
        hiredlock.Client(servers1.urls, fenced=1)
    client = hiredlock.Client(servers1.urls)
    with pytest.raises(TypeError, match=r"^fenced must be a bool, not str$"):
        client.lock(name, fenced="yes")


def test_the_fence_outlives_the_validity_until_release(servers1, name):
    """A holder paused past its TTL still has its fence to send: the store
    is what refuses it. The hold ends with the release."""
    client = hiredlock.Client(servers1.urls, **TOLERANT)
    # A TTL long enough for the first connect of a loaded machine (the
    # acquire's round is bounded by the TTL it asks for), short to wait out.
    lk = client.lock(name, ttl=0.5, fenced=True)
    assert lk.acquire()
    fence = lk.fence
    time.sleep(0.6)
    assert not lk.locked()
    assert lk.fence == fence
    with pytest.raises(hiredlock.NotOwned):
        lk.release()
    assert lk.fence is None


def test_exact_to_two_to_the_63_minus_one(servers1, name):
    client = hiredlock.Client(servers1.urls, **TOLERANT)
    lk = client.lock(name, fenced=True)
    servers1.redis(1).set(lk.fence_key, 2**63 - 2)
    with lk:
        assert lk.fence == 2**63 - 1
    with pytest.raises(hiredlock.LockError, match=r"^server error: .*overflow"):
        lk.acquire(blocking=False)
    assert servers1.count(name) == 0


def test_drifted_counters_do_not_break_monotonicity(fresh5, name):
    """Issue 15's scenario: with masters 2-5 down, our attempts reach master
    1 alone and its counter runs ahead; then a grant on all five, and one
    whose quorum misses master 1. The naive maximum of INCRs on the same
    counters goes back (negative control)."""
    client = hiredlock.Client(fresh5.urls, **TOLERANT)
    lk = client.lock(name, fenced=True)
    for i in range(2, 6):
        fresh5.kill(i)
    for _ in range(10):
        with pytest.raises(hiredlock.ConnectionError):
            lk.acquire(blocking=False)
    for i in range(2, 6):
        fresh5.restart(i)
    assert fresh5.values(lk.fence_key) == [b"10", None, None, None, None]
    with lk:
        first = lk.fence
    assert fresh5.values(lk.fence_key) == [b"11"] * 5  # the fence round
    fresh5.pause(1)
    try:
        with lk:
            second = lk.fence
    finally:
        fresh5.resume(1)
    assert (first, second) == (11, 12)

    # The naive scheme on the same drift: SET NX and INCR everywhere, the
    # greatest counter where the SET took is the fence, nothing written back.
    def naive(masters: list[int]) -> int:
        fence = 0
        for i in masters:
            r = fresh5.redis(i)
            took = r.set(name, "naive", nx=True, px=10000)
            counter = r.incr(lk.fence_key)
            if took:
                fence = max(fence, counter)
                r.delete(name)
        return fence

    fresh5.redis(1).set(lk.fence_key, 10)
    for i in range(2, 6):
        fresh5.redis(i).delete(lk.fence_key)
    assert naive([1, 2, 3, 4, 5]) == 11
    assert naive([2, 3, 4, 5]) == 2  # went back: not a fence


# Grants each of the three clients takes in test_fences_increase_under_faults:
# 250 in make test (the C core's test_fence_faults, 4 x 600 grants under the
# same faults at N = 1 and 5, runs there in the c, c-asan and c-hiredis1
# suites), 700 in make reliability (scripts/reliability.sh). At N = 1 most of
# the run is spent waiting out keys a stopped master kept, so the time grows
# with the grants: 700 each took a quarter of the python suite.
GRANTS_EACH = int(os.environ.get("HRL_FENCE_GRANTS_EACH", "250"))
# Whatever the grants, the clients go on until every master has been through
# this many rounds of pause, resume and restart (so that fewer grants still
# span the faults).
FAULT_ROUNDS = 2


@pytest.mark.parametrize("n", [1, 5])
def test_fences_increase_under_faults(n):
    """Three clients, 3 x GRANTS_EACH grants, masters stopped, resumed and
    restarted from their AOF meanwhile (every master FAULT_ROUNDS times at
    least): every fence is greater than that of every grant whose acquire
    returned before its own began, and none repeats."""
    masters = Servers(n, "--aof")
    grants: list[tuple[int, int, int]] = []
    done = threading.Event()
    rounds = [0]  # complete rounds of faults on every master
    failures: list[BaseException] = []

    def work() -> None:
        client = hiredlock.Client(
            masters.urls,
            timeout=0.1,
            connect_timeout=0.5,
            retry_delay=0.005,
            retry_jitter=0.005,
            fenced=True,
        )
        lk = client.lock("pf:faults", ttl=1)
        mine = 0
        try:
            while mine < GRANTS_EACH or rounds[0] < FAULT_ROUNDS:
                t0 = time.monotonic_ns()
                try:
                    ok = lk.acquire(timeout=1)
                except hiredlock.LockError:
                    time.sleep(0.005)  # no quorum while a master restarts
                    continue
                t1 = time.monotonic_ns()
                if not ok:
                    continue
                grants.append((t0, t1, lk.fence))
                mine += 1
                try:
                    lk.release()
                except hiredlock.NotOwned:
                    pass
                except hiredlock.LockError:
                    time.sleep(0.02)  # cut short by a restart: finish it
                    with contextlib.suppress(hiredlock.LockError):
                        lk.release()
        except BaseException as e:
            failures.append(e)  # reported by the test

    def faults() -> None:
        while not done.is_set():
            for i in range(1, n + 1):
                for verb in ("pause", "resume", "restart"):
                    if done.wait(0.05):
                        return
                    getattr(masters, verb)(i)
            rounds[0] += 1

    workers = [threading.Thread(target=work) for _ in range(3)]
    injector = threading.Thread(target=faults)
    try:
        injector.start()
        for w in workers:
            w.start()
        for w in workers:
            w.join(300)
    finally:
        done.set()
        injector.join(60)
        masters.stop()
    assert not failures
    assert len(grants) >= 3 * GRANTS_EACH
    assert rounds[0] >= FAULT_ROUNDS
    fences = [g[2] for g in grants]
    assert len(set(fences)) == len(fences)
    ended = sorted(grants, key=lambda g: g[1])
    top, e, bad = 0, 0, 0
    for t0, _, fence in sorted(grants):
        while e < len(ended) and ended[e][1] < t0:
            top = max(top, ended[e][2])
            e += 1
        bad += fence <= top
    assert bad == 0


def test_fenced_write_refuses_an_older_fence(servers1, name):
    store = servers1.redis(1)
    key, fence_key = f"{name}:doc", f"{name}:doc:fence"
    assert hiredlock.fenced_write(store, fence_key, 5, "SET", key, "five") == b"OK"
    assert hiredlock.fenced_write(store, fence_key, 5, "APPEND", key, "!") == 5
    with pytest.raises(hiredlock.StaleFence) as stale:
        hiredlock.fenced_write(store, fence_key, 4, "SET", key, "four")
    assert str(stale.value) == "STALEFENCE fence 4 is older than 5"
    assert isinstance(stale.value, hiredlock.LockError)
    assert store.get(key) == b"five!"
    top = 2**63 - 1
    assert hiredlock.fenced_write(store, fence_key, top, "GET", key, keys=[key])
    assert store.get(fence_key) == str(top).encode()
    with pytest.raises(ValueError, match=r"^invalid argument: fence must be from"):
        hiredlock.fenced_write(store, fence_key, 0, "GET", key)
    with pytest.raises(ValueError, match=r"got 9223372036854775808$"):
        hiredlock.fenced_write(store, fence_key, 2**63, "GET", key)
    with pytest.raises(TypeError, match=r"^fence must be an int"):
        hiredlock.fenced_write(store, fence_key, "5", "GET", key)
    with pytest.raises(TypeError, match=r"^fence must be an int"):
        hiredlock.fenced_write(store, fence_key, True, "GET", key)
    with pytest.raises(TypeError, match=r"needs a command"):
        hiredlock.fenced_write(store, fence_key, 5)
    assert hiredlock.FENCED_WRITE_SCRIPT == hiredlock._core.FENCED_WRITE_SCRIPT


def test_equal_fences_are_one_holds_unless_a_failover_lost_increments(servers1, name):
    """fenced_write's rule for equal fences (docs/SAFETY.md, "Equal
    fences"): accepted, since with counters that keep every increment only
    one hold has a given fence, and it may write several times. A failover
    that loses a holder's SET loses the INCR sent with it; the next holder
    is then given the same fence, and the store accepts both holders'
    writes: that is the limit the docs state, played here by setting the
    master back as the promoted replica would have it."""
    master = servers1.redis(1)
    store_key, fence_key = f"{name}:doc", f"{name}:doc:fence"
    client = hiredlock.Client(servers1.urls, **TOLERANT)
    a = client.lock(name, fenced=True)
    assert a.acquire(blocking=False)
    fence = a.fence
    assert hiredlock.fenced_write(master, fence_key, fence, "SET", store_key, "A")
    assert hiredlock.fenced_write(master, fence_key, fence, "APPEND", store_key, "a")
    # The failover: the key and the increment are gone on the new primary.
    master.delete(a.key)
    master.set(a.fence_key, fence - 1)
    b = client.lock(name, fenced=True)
    assert b.acquire(blocking=False)
    assert b.fence == fence  # the same fence for another holder
    assert b.token != a.token
    hiredlock.fenced_write(master, fence_key, b.fence, "APPEND", store_key, "B")
    hiredlock.fenced_write(master, fence_key, fence, "APPEND", store_key, "a")
    assert master.get(store_key) == b"AaBa"  # both accepted, interleaved
    b.release()
    # With the counter intact, the next holder's fence is greater, and the
    # older holder is refused from its first write on.
    c = client.lock(name, fenced=True)
    assert c.acquire(blocking=False)
    assert c.fence == fence + 1
    hiredlock.fenced_write(master, fence_key, c.fence, "SET", store_key, "C")
    with pytest.raises(hiredlock.StaleFence):
        hiredlock.fenced_write(master, fence_key, fence, "SET", store_key, "A")
    assert master.get(store_key) == b"C"
    c.release()


@pytest.mark.asyncio
async def test_asyncio_fenced_write_refuses_an_older_fence(servers1, name):
    """With a redis.asyncio client: awaited, and a stale fence is a
    StaleFence, as in sync code."""
    import redis.asyncio

    import hiredlock.asyncio as hla

    store = redis.asyncio.Redis(unix_socket_path=servers1.unix_paths[0])
    key, fence_key = f"{name}:doc", f"{name}:doc:fence"
    try:
        assert await hla.fenced_write(store, fence_key, 5, "SET", key, "v") == b"OK"
        assert await hla.fenced_write(store, fence_key, 5, "APPEND", key, "!") == 2
        with pytest.raises(hiredlock.StaleFence) as stale:
            await hla.fenced_write(store, fence_key, 4, "SET", key, "four")
        assert str(stale.value) == "STALEFENCE fence 4 is older than 5"
        assert hla.StaleFence is hiredlock.StaleFence
        assert await store.get(key) == b"v!"
        with pytest.raises(ValueError, match=r"^invalid argument: fence must be"):
            await hla.fenced_write(store, fence_key, 0, "GET", key)
        with pytest.raises(TypeError, match=r"^fence must be an int"):
            await hla.fenced_write(store, fence_key, "5", "GET", key)
        # The sync one refuses an asyncio client rather than hand back a
        # coroutine that never runs (and whose StaleFence would never come).
        with pytest.raises(TypeError, match=r"hiredlock\.asyncio\.fenced_write"):
            hiredlock.fenced_write(store, fence_key, 4, "SET", key, "four")
        assert await store.get(key) == b"v!"
    finally:
        await store.aclose()


def test_a_paused_holders_write_is_refused(fresh5, name):
    """The safety caveat end to end: A's lock expires while A is paused, B
    takes it with a greater fence and writes; A wakes up and writes with
    its own fence, and the store refuses it."""
    store = Servers(1)
    try:
        data = store.redis(1)
        client = hiredlock.Client(fresh5.urls, **TOLERANT)
        # 2 s, not 0.2 s: a TTL caps each master's reply deadline at a
        # tenth of it, and a loaded machine's Redis missed 20 ms.
        a = client.lock(name, ttl=2, fenced=True)
        b = client.lock(name, ttl=5, fenced=True)
        assert a.acquire()
        time.sleep(2.15)  # A is "paused" past its TTL
        assert b.acquire(blocking=False)
        assert b.fence > a.fence
        hiredlock.fenced_write(data, "doc:fence", b.fence, "SET", "doc", "B")
        with pytest.raises(hiredlock.StaleFence):
            hiredlock.fenced_write(data, "doc:fence", a.fence, "SET", "doc", "A")
        assert data.get("doc") == b"B"
        b.release()
    finally:
        store.stop()
