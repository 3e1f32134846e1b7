"""Interoperability with redis-py's Lock on the same key (docs/DESIGN.md, section 3)."""

from __future__ import annotations

import pytest
import redis
from pytest_redis import TOLERANT
from redis.exceptions import LockNotOwnedError

import hiredlock


@pytest.fixture
def r(servers1):
    return redis.Redis.from_url(servers1.urls[0])


@pytest.fixture
def c(servers1):
    return hiredlock.Client(servers1.urls[0], **TOLERANT)


def test_a_redis_py_lock_excludes_hiredlock(r, c, name):
    theirs = r.lock(name, timeout=10)
    assert theirs.acquire(blocking=False)
    ours = c.lock(name)
    assert ours.acquire(blocking=False) is False
    assert ours.acquire(timeout=0.1) is False
    with pytest.raises(hiredlock.NotAcquired), c.lock(name, timeout=0.1):
        pytest.fail("the block must not run")
    theirs.release()
    assert ours.acquire(blocking=False)
    ours.release()


def test_hiredlock_excludes_a_redis_py_lock(r, c, name):
    ours = c.lock(name, ttl=10)
    assert ours.acquire()
    theirs = r.lock(name, timeout=10)
    assert theirs.acquire(blocking=False) is False
    assert theirs.acquire(blocking=True, blocking_timeout=0.1) is False
    assert r.get(name) == ours.token.encode()
    assert 9000 < r.pttl(name) <= 10000
    ours.release()
    assert theirs.acquire(blocking=False)
    theirs.release()


def test_neither_releases_the_others_lock(r, c, name):
    ours = c.lock(name)
    assert ours.acquire()
    impostor = r.lock(name, timeout=10)
    impostor.local.token = b"f" * 32  # pretends to hold it
    with pytest.raises(LockNotOwnedError):
        impostor.release()
    assert r.get(name) == ours.token.encode()
    ours.release()
    theirs = r.lock(name, timeout=10)
    assert theirs.acquire(blocking=False)
    mine = c.lock(name)
    assert mine.acquire(blocking=False) is False
    with pytest.raises(hiredlock.NotOwned):
        mine.release()
    assert r.get(name) is not None
    theirs.release()
