"""Killed, paused and restarted masters, and authentication."""

from __future__ import annotations

import re
import time

import pytest
from pytest_redis import TOLERANT

import hiredlock


def make_client(servers, **options):
    return hiredlock.Client(servers.urls, **{**TOLERANT, **options})


def test_acquire_succeeds_with_two_of_five_masters_killed(fresh5, name):
    c = make_client(fresh5)
    fresh5.kill(2)
    fresh5.kill(4)
    lk = c.lock(name)
    assert lk.acquire(timeout=1)
    assert [fresh5.get(i, name) for i in (1, 3, 5)] == [lk.token.encode()] * 3
    lk.extend()
    lk.release()
    assert fresh5.count(name, alive=[1, 3, 5]) == 0


def test_three_of_five_killed_fails_and_leaves_no_key(fresh5, name):
    """No quorum: without a wait the acquire fails at once; with one it
    tries until its deadline (a master may come back) and says the same
    then."""
    c = make_client(fresh5, retry_delay=0.2)
    for i in (1, 2, 3):
        fresh5.kill(i)
    lk = c.lock(name)
    start = time.monotonic()
    with pytest.raises(hiredlock.ConnectionError) as info:
        lk.acquire(blocking=False)
    assert time.monotonic() - start < 0.5
    assert isinstance(info.value, ConnectionError)  # the built-in one too
    assert isinstance(info.value, hiredlock.LockError)
    message = str(info.value)
    assert message.startswith("connection failed: 2 of 5 masters answered (3 needed)")
    for port in fresh5.ports[:3]:
        assert re.search(rf"127\.0\.0\.1:{port}: connection refused", message)
    assert fresh5.count(name, alive=[4, 5]) == 0
    assert not lk.locked()
    start = time.monotonic()
    with pytest.raises(hiredlock.ConnectionError) as again, c.lock(name, timeout=1):
        pytest.fail("the block must not run")
    assert 1 <= time.monotonic() - start < 1 + 1
    assert str(again.value).startswith("connection failed: 2 of 5 masters answered")
    assert fresh5.count(name, alive=[4, 5]) == 0


def test_a_single_dead_master_is_a_connection_error(fresh5, name):
    fresh5.kill(1)
    c = hiredlock.Client(fresh5.urls[0])
    with pytest.raises(hiredlock.ConnectionError, match=r"^connection failed: 0 of 1"):
        c.lock(name).acquire(blocking=False)


def test_a_paused_master_costs_one_per_master_timeout_once(fresh5, name):
    # "One timeout, not two" holds when took < 2 T: a second wait costs 2 T
    # at the least, whatever the rounds cost. The margin is T less the
    # rounds' own work, so T is well above what a loaded machine adds to a
    # round (at 0.05 s, with bounds of 0.05 + 0.04 s and 0.05 s, the
    # scheduling delays of a loaded machine could use up the margin).
    t = 0.2
    c = make_client(fresh5, timeout=t)
    lk = c.lock(name, ttl=10)
    assert lk.acquire(blocking=False)  # connections up before the pause
    lk.release()
    fresh5.pause(3)
    try:
        start = time.monotonic()
        assert lk.acquire(blocking=False)
        took = time.monotonic() - start
        assert t - 0.001 <= took < 2 * t
        assert lk.validity < 10 - t
        assert [fresh5.get(i, name) for i in (1, 2, 4, 5)] == [lk.token.encode()] * 4
        start = time.monotonic()
        lk.release()
        assert time.monotonic() - start < t  # known to be late: not waited for
        # Known to be late now, it is not waited for once a quorum said OK:
        # a whole cycle costs less than one per-master timeout (waiting
        # for it would cost one in the acquire, and one more in the
        # release).
        for _ in range(3):
            start = time.monotonic()
            assert lk.acquire(blocking=False)
            lk.release()
            assert time.monotonic() - start < t
    finally:
        fresh5.resume(3)
    assert fresh5.count(name, alive=[1, 2, 4, 5]) == 0


def test_masters_restarted_between_calls_are_reconnected(fresh5, name):
    c = make_client(fresh5)
    lk = c.lock(name)
    assert lk.acquire()
    lk.release()
    for i in range(1, 6):
        fresh5.restart(i)
    assert lk.acquire(blocking=False)
    assert fresh5.values(name) == [lk.token.encode()] * 5
    lk.release()


def test_release_without_quorum_ends_the_hold(fresh5, name):
    c = make_client(fresh5)
    lk = c.lock(name, ttl=5)
    assert lk.acquire()
    for i in (1, 2, 3):
        fresh5.kill(i)
    with pytest.raises(hiredlock.ConnectionError):
        lk.release()
    assert not lk.locked()  # over: a retry may finish the release, though
    for i in (1, 2, 3):
        fresh5.restart(i)  # without persistence: they come back empty
    with pytest.raises(hiredlock.NotOwned, match=r"^not owned$"):
        lk.release()  # a quorum answered, and 3 of them hold no key of ours
    assert fresh5.count(name) == 0  # the 2 that had it deleted it
    assert not lk.locked()


def test_error_replies_are_a_lock_error_not_a_connection_error(fresh5, name):
    fresh5.redis(1).replicaof("127.0.0.1", fresh5.ports[1])  # read-only now
    c = hiredlock.Client(fresh5.urls[0])
    with pytest.raises(
        hiredlock.LockError,
        match=r"^server error: 0 of 1 masters answered \(1 needed\); "
        r"127\.0\.0\.1:\d+: READONLY",
    ) as info:
        c.lock(name).acquire()
    assert not isinstance(info.value, hiredlock.ConnectionError)
    assert fresh5.count(name) == 0


def test_password_urls_and_a_wrong_password():
    from redis_fixture import Servers

    s = Servers(3, "--password", "s3cret")
    try:
        c = hiredlock.Client(s.urls, **TOLERANT)
        assert all("s3cret" not in m for m in c.masters)
        assert "s3cret" not in repr(c)
        with c.lock("auth:ok") as lk:
            assert s.values("auth:ok") == [lk.token.encode()] * 3
        bad = hiredlock.Client([u.replace("s3cret", "wrong") for u in s.urls])
        with pytest.raises(
            hiredlock.ConnectionError, match=r"^authentication failed"
        ) as info:
            bad.lock("auth:bad").acquire()
        assert "wrong" not in str(info.value)
        nopass = hiredlock.Client([u.replace(":s3cret@", "") for u in s.urls])
        with pytest.raises(hiredlock.ConnectionError, match=r"^authentication failed"):
            nopass.lock("auth:none").acquire()
    finally:
        s.stop()
