"""One lock, five runtimes: Python (sync and asyncio), C, LuaJIT and Lua 5.4
exclude each other, cannot release or extend each other's locks, write
byte-identical keys, tokens and scripts, take fences from one counter, wake
each other's waiters in arrival order, say the same thing when they fail,
and renew leases and report their loss the same way."""

from __future__ import annotations

import itertools
import re
import time
import uuid

import pytest

from conftest import RUNTIMES

PAIRS = list(itertools.permutations(RUNTIMES, 2))
TOKEN = re.compile(r"^[0-9a-f]{32}$")
QUEUE_SHA = "355d797da61ba015dee7563c90be63c1a738b4c3"
EXTEND_SHA = "36e94d1c6e02fcefaa7ee5d79eee614dbac55f10"
FENCE_SHA = "9c38fba8e96eb3c37a8add861f63fed33fe29963"


def fresh_name() -> bytes:
    return f"interop:{uuid.uuid4().hex[:12]}".encode()


def token_of(answer: str) -> str:
    verdict, _, token = answer.partition(" ")
    assert verdict == "ok", answer
    assert TOKEN.match(token), answer
    return token


@pytest.mark.parametrize("holder,other", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_a_holder_excludes_the_other_runtime(agents, servers1, holder, other):
    name = fresh_name()
    a = agents(holder, servers1.urls)
    b = agents(other, servers1.urls)
    token_a = token_of(a.acquire(name, 10, 0))
    assert servers1.get(1, name) == token_a.encode()
    assert b.acquire(name, 10, 0) == "err timeout"
    assert b.acquire(name, 10, 0.3) == "err timeout"  # retries, still held
    assert a.release() == "ok"
    assert servers1.get(1, name) is None
    token_b = token_of(b.acquire(name, 10, 0))
    assert token_b != token_a
    assert a.acquire(name, 10, 0) == "err timeout"
    assert b.release() == "ok"


@pytest.mark.parametrize("stale,taker", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_a_stale_holder_cannot_touch_the_new_holders_lock(
    agents, servers1, stale, taker
):
    name = fresh_name()
    a = agents(stale, servers1.urls)
    b = agents(taker, servers1.urls)
    # The stale holder's lock expires and the other runtime takes it; the
    # stale one still has its old token and tries to extend, then release.
    for attempt in ("extend", "release"):
        token_of(a.acquire(name, 0.2, 0))
        time.sleep(0.35)
        token_b = token_of(b.acquire(name, 10, 0))
        if attempt == "extend":
            assert a.extend(30) == "err not owned"
            assert a.release() == "err not held"  # lost, so no I/O at all
        else:
            assert a.release() == "err not owned"
        assert servers1.get(1, name) == token_b.encode()
        assert 9000 < servers1.redis(1).pttl(name) <= 10000
        assert b.release() == "ok"


def test_every_runtime_writes_the_same_key_and_token_format(agents, servers1):
    prefix = b"app:\x00\xff:"
    name = b"n\x00\r\n\xfe" + uuid.uuid4().hex[:6].encode()
    r = servers1.redis(1)
    keys = {}
    for runtime in RUNTIMES:
        agent = agents(runtime, servers1.urls, prefix)
        token = token_of(agent.acquire(name, 7, 0))
        found = list(r.scan_iter(match=b"app:*"))
        assert len(found) == 1, (runtime, found)
        keys[runtime] = found[0]
        assert r.get(found[0]) == token.encode()
        assert 6000 < r.pttl(found[0]) <= 7000
        assert agent.release() == "ok"
    assert set(keys.values()) == {prefix + name}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_every_runtime_sends_the_same_scripts(agents, servers1, runtime):
    """After SCRIPT FLUSH a release or extend falls back to EVAL of the full
    script text; Redis then knows it under the SHA every runtime uses."""
    r = servers1.redis(1)
    agent = agents(runtime, servers1.urls)
    name = fresh_name()
    token_of(agent.acquire(name, 10, 0))
    r.script_flush()
    assert agent.extend(10) == "ok"
    assert r.script_exists(EXTEND_SHA, QUEUE_SHA) == [True, False]
    r.script_flush()
    assert agent.release() == "ok"
    assert r.script_exists(EXTEND_SHA, QUEUE_SHA) == [False, True]


# A patient waiter: it tries again after 20 s at the latest without a
# hand-off, so a wait that ends within seconds was ended by the release.
PATIENT = 20


@pytest.mark.parametrize("holder,waiter", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_a_release_wakes_the_other_runtimes_waiter(agents, servers1, holder, waiter):
    name = fresh_name()
    a = agents(holder, servers1.urls)
    b = agents(waiter, servers1.urls, retry_delay=PATIENT)
    token_of(a.acquire(name, 30, 0))
    b.start_acquire(name, 10, 15)
    servers1.queued(name, 1)
    assert b.answer(0.3) is None  # it waits: the holder's TTL is 30 s
    t0 = time.monotonic()
    assert a.release() == "ok"
    token = token_of(b.answer(10))
    assert time.monotonic() - t0 < 5  # woken, not its cap nor the TTL
    assert servers1.get(1, name) == token.encode()
    assert b.release() == "ok"
    assert servers1.redis(1).keys(b"interop:*") == []


@pytest.mark.parametrize("masters", [1, 3])
def test_waiters_of_every_runtime_get_it_in_arrival_order(
    agents, servers1, servers3, masters
):
    """A waiter of each runtime queues, one after the other; from the
    release on, each gets the lock only after the one before it released
    (the holder's re-acquire queues behind them all)."""
    servers = servers1 if masters == 1 else servers3
    name = fresh_name()
    holder = agents("python", servers.urls, retry_delay=PATIENT)
    order = ["lua5.4", "c", "python", "luajit"]
    waiters = [agents(rt, servers.urls, retry_delay=PATIENT) for rt in order]
    token_of(holder.acquire(name, 30, 0))
    for k, w in enumerate(waiters):
        w.start_acquire(name, 10, 15)
        servers.queued(name, k + 1)
    assert holder.release() == "ok"
    holder.start_acquire(name, 10, 15)  # at once: it queues last
    servers.queued(name, len(waiters))
    for k, w in enumerate(waiters):
        token = token_of(w.answer(10))
        assert servers.values(name).count(token.encode()) >= servers.n // 2 + 1
        for later in waiters[k + 1 :]:
            assert later.answer(0) is None, (order[k], "was passed")
        assert holder.answer(0) is None
        assert w.release() == "ok"
    token_of(holder.answer(10))
    assert holder.release() == "ok"


def fence_of(answer: str) -> int:
    verdict, token, fence = answer.split(" ")
    assert verdict == "ok" and TOKEN.match(token), answer
    return int(fence)


@pytest.mark.parametrize("n", [1, 3])
def test_fences_increase_from_one_runtime_to_the_next(agents, servers1, servers3, n):
    """Python, then Lua, then C (and every other order of the four): each
    fence is greater than the last, whichever runtime took it, because they
    all count on the same counter key; at N = 3 each runs the fence round."""
    servers = servers1 if n == 1 else servers3
    name = fresh_name()
    by_runtime = {rt: agents(rt, servers.urls) for rt in RUNTIMES}
    fences = []
    for order in itertools.permutations(RUNTIMES):
        for runtime in order:
            agent = by_runtime[runtime]
            fences.append(fence_of(agent.fenced(name, 10, 1)))
            assert agent.release() == "ok"
    assert fences == list(range(1, len(fences) + 1))
    counter = name + b"{" + name + b"}:fence"
    assert servers.values(counter) == [str(len(fences)).encode()] * n


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_every_runtime_sends_the_same_fence_round(agents, servers3, runtime):
    """Master 1's counter ahead of the others: every runtime's fenced acquire
    on 3 masters runs the fence round, after SCRIPT FLUSH with EVAL of the
    fence script, which Redis then knows under the documented SHA, and
    raises the other counters to the fence."""
    agent = agents(runtime, servers3.urls)
    name = fresh_name()
    counter = name + b"{" + name + b"}:fence"
    servers3.redis(1).set(counter, 40)
    for i in (1, 2, 3):
        servers3.redis(i).script_flush()
    assert fence_of(agent.fenced(name, 10, 0)) == 41
    for i in (1, 2, 3):
        assert servers3.redis(i).script_exists(FENCE_SHA) == [True]
    assert servers3.values(counter) == [b"41"] * 3
    assert agent.release() == "ok"


def test_quorum_across_runtimes_on_three_masters(agents, servers3):
    """Three runtimes race for one name on 3 masters: one wins, and the
    winner's token is on a quorum of them."""
    name = fresh_name()
    holders = [agents(rt, servers3.urls) for rt in ("python", "c", "luajit")]
    answers = [h.acquire(name, 10, 0) for h in holders]
    winners = [h for h, ans in zip(holders, answers) if ans.startswith("ok")]
    assert len(winners) == 1, answers
    token = token_of(answers[holders.index(winners[0])])
    assert servers3.values(name).count(token.encode()) >= 2
    assert winners[0].release() == "ok"
    assert servers3.count(name) == 0


def test_failures_read_the_same_in_every_runtime(agents):
    dead = fixtures_servers_killed()
    try:
        messages = {rt: agents(rt, dead.urls).acquire(b"x", 10, 1) for rt in RUNTIMES}
    finally:
        dead.stop()
    port = dead.ports[0]
    want = (
        "err connection failed: 0 of 1 masters answered (1 needed); "
        f"127.0.0.1:{port}: connection refused"
    )
    assert messages == {rt: want for rt in RUNTIMES}


def fixtures_servers_killed():
    from redis_fixture import Servers

    s = Servers(1)
    s.kill(1)
    return s


@pytest.mark.parametrize("holder,other", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_a_lease_excludes_past_its_ttl_and_its_loss_reads_the_same(
    agents, servers1, holder, other
):
    name = fresh_name()
    a = agents(holder, servers1.urls)
    b = agents(other, servers1.urls)
    token = token_of(a.lease(name, 0.6))
    time.sleep(1.2)  # twice the TTL: renewed, the same key and token
    assert servers1.get(1, name) == token.encode()
    assert a.check() == "ok"
    assert b.acquire(name, 10, 0) == "err timeout"
    servers1.redis(1).delete(name)
    time.sleep(0.6)  # a renewal (every 0.2 s) finds it gone
    assert a.check() == "err lost: not owned"
    assert a.release() == "err lost: not owned"
    token_of(b.lease(name, 0.6))
    assert b.release() == "ok"


def hold_of(answer: str) -> tuple[str, int]:
    """The token and permit number of a hold's answer."""
    verdict, token, permit = answer.split(" ")
    assert verdict == "ok" and TOKEN.match(token), answer
    return token, int(permit)


RW_SHA = "a6dab9793c988e855009d68407ecfbdb407d92f9"
SEM_SHA = "1313f93bc3dca45e0a8405cbe21b71fef31220dd"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_reads_of_every_runtime_share_and_exclude_a_write(agents, servers3, runtime):
    """A read in each of the five runtimes, all held at once on three
    masters; a write from `runtime` is refused until they are gone."""
    name = fresh_name()
    readers = [agents(r, servers3.urls) for r in RUNTIMES]
    tokens = {hold_of(a.hold("read", 0, name, 10, 0))[0] for a in readers}
    assert len(tokens) == len(RUNTIMES)
    assert servers3.redis(1).hlen(name) == len(RUNTIMES)
    writer = agents(runtime, servers3.urls)
    assert writer.hold("write", 0, name, 10, 0) == "err timeout"
    for a in readers:
        assert a.release() == "ok"
    token, permit = hold_of(writer.hold("write", 0, name, 10, 0))
    assert permit == 0 and token not in tokens
    assert readers[0].hold("read", 0, name, 10, 0) == "err timeout"
    assert writer.release() == "ok"
    assert servers3.count(name) == 0


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_permits_of_every_runtime_are_one_count(agents, servers3, runtime):
    """Two permits of 2 taken by two other runtimes leave none for
    `runtime`; the one given back is the one it gets. The scripts are
    the same text in every runtime (their SHA1 is known to Redis)."""
    name = fresh_name()
    others = [r for r in RUNTIMES if r != runtime][:2]
    a, b = (agents(r, servers3.urls) for r in others)
    me = agents(runtime, servers3.urls)
    _, pa = hold_of(a.hold("permit", 2, name, 10, 0))
    _, pb = hold_of(b.hold("permit", 2, name, 10, 0))
    assert {pa, pb} == {1, 2}
    assert me.hold("permit", 2, name, 10, 0) == "err timeout"
    assert a.release() == "ok"
    _, mine = hold_of(me.hold("permit", 2, name, 10, 0))
    assert mine == pa
    r = servers3.redis(1)
    r.script_flush()
    assert me.extend(10) == "ok"  # NOSCRIPT, then the full text
    assert r.script_exists(SEM_SHA, RW_SHA) == [True, False]
    assert me.release() == "ok" and b.release() == "ok"
    assert servers3.count(name) == 0
