"""hiredlock.redis_py.Lock: redis-py's Lock API (r.lock(..., lock_class=))
driven by hiredlock. What redis-py's own tests do not check
(tests/redis_py/run.sh runs those): it excludes hiredlock's and redis-py's
own locks on the same key, a waiter is woken by the release rather than
its `sleep`, timeout=None is a lease that a crashed holder does not keep
forever, extend adds to what is left, tokens are per thread, token= is
refused, fences, redis-py's exceptions, one hiredlock client per
configuration."""

from __future__ import annotations

import functools
import threading
import time

import pytest
import redis
import redis.lock
from pytest_redis import TOLERANT
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockError, LockNotOwnedError

import hiredlock
from conftest import run_python
from hiredlock import redis_py
from hiredlock.redis_py import Lock


@pytest.fixture(autouse=True)
def tolerant():
    """Per-master deadlines that survive this loaded machine."""
    redis_py.configure(**TOLERANT)
    yield
    redis_py.configure()


@pytest.fixture
def r(servers1):
    client = redis.Redis(host="127.0.0.1", port=servers1.ports[0])
    yield client
    client.close()


def test_it_is_what_r_lock_makes(r, name):
    lk = r.lock(name, timeout=10, blocking_timeout=2, lock_class=Lock)
    assert isinstance(lk, Lock)
    assert (lk.timeout, lk.blocking_timeout, lk.redis) == (10, 2, r)
    with lk:
        assert r.get(name) == lk.local.token
        assert len(lk.local.token) == 32  # hiredlock's token
        assert 9000 < r.pttl(name) <= 10000
        assert lk.locked() and lk.owned()
    assert r.get(name) is None
    assert not lk.locked() and not lk.owned()


def test_it_excludes_hiredlock_and_redis_py_locks_on_the_same_key(r, servers1, name):
    ours = r.lock(name, timeout=10, lock_class=Lock)
    theirs = r.lock(name, timeout=10)  # redis-py's own Lock
    native = hiredlock.Client(servers1.urls, **TOLERANT).lock(name, ttl=10)
    assert ours.acquire(blocking=False)
    assert not theirs.acquire(blocking=False)
    assert not native.acquire(blocking=False)
    ours.release()
    assert native.acquire(blocking=False)
    assert not ours.acquire(blocking=False)
    native.release()
    assert theirs.acquire(blocking=False)
    assert not ours.acquire(blocking_timeout=0.3)  # waits, then gives up
    theirs.release()
    assert ours.acquire(blocking=False)
    ours.release()


def test_the_context_manager_raises_redis_py_s_error(r, name):
    r.set(name, "someone")
    lk = r.lock(name, blocking_timeout=0.1, lock_class=Lock)
    with pytest.raises(LockError, match="Unable to acquire lock") as info, lk:
        pass
    assert info.value.lock_name == name


def test_a_waiter_is_woken_by_the_release_not_its_sleep(r, name):
    holder = r.lock(name, timeout=10, thread_local=False, lock_class=Lock)
    assert holder.acquire(blocking=False)
    threading.Timer(0.3, holder.release).start()  # from another thread
    # redis-py's own Lock would try again after sleep=3 s.
    waiter = r.lock(name, timeout=10, sleep=3, blocking_timeout=10, lock_class=Lock)
    t0 = time.monotonic()
    assert waiter.acquire()
    assert time.monotonic() - t0 < 2.0
    waiter.release()


def test_timeout_none_is_a_lease_renewed_while_held(r, name):
    lk = r.lock(name, lock_class=functools.partial(Lock, lease_ttl=0.3))
    assert lk.acquire(blocking=False)
    assert 0 < r.pttl(name) <= 300  # a TTL, not none (redis-py: -1)
    time.sleep(1.0)  # three leases' worth
    assert lk.owned()
    assert 0 < r.pttl(name) <= 300
    with pytest.raises(LockError, match="no timeout"):
        lk.extend(1)  # as redis-py: the lease renews itself
    lk.release()
    assert r.get(name) is None


def test_a_crashed_holder_s_lease_expires(r, servers1, name):
    code = f"""
import os, redis, functools
from hiredlock import redis_py
redis_py.configure(timeout=0.5, connect_timeout=1)
r = redis.Redis(port={servers1.ports[0]})
lk = r.lock({name!r}, lock_class=functools.partial(redis_py.Lock, lease_ttl=0.5))
assert lk.acquire(blocking=False)
print(lk.local.token.decode(), flush=True)
os._exit(0)  # dies holding it
"""
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert r.get(name) == done.stdout.strip().encode()
    lk = r.lock(name, lock_class=Lock, blocking_timeout=3)
    t0 = time.monotonic()
    assert lk.acquire()
    assert time.monotonic() - t0 < 1.5
    lk.release()


def test_extend_adds_replace_ttl_replaces_reacquire_resets(r, name):
    lk = r.lock(name, timeout=10, lock_class=Lock)
    assert lk.acquire(blocking=False)
    assert lk.extend(5) is True
    assert 14000 < r.pttl(name) <= 15000
    assert lk.extend(3, replace_ttl=True) is True
    assert 2000 < r.pttl(name) <= 3000
    assert lk.reacquire() is True
    assert 9000 < r.pttl(name) <= 10000
    lk.release()


def test_a_lock_taken_by_another_is_not_owned(r, name):
    lk = r.lock(name, timeout=10, lock_class=Lock)
    assert lk.acquire(blocking=False)
    r.set(name, "someone")
    assert lk.locked() and not lk.owned()
    with pytest.raises(LockNotOwnedError, match="no longer owned") as info:
        lk.extend(10)
    assert "not owned" in str(info.value)  # hiredlock's words too
    assert isinstance(info.value.__cause__, hiredlock.NotOwned)
    with pytest.raises(LockNotOwnedError):
        lk.release()
    assert lk.local.token is None
    assert r.get(name) == b"someone"  # nothing of theirs deleted
    with pytest.raises(LockError, match="not owned or is already unlocked"):
        lk.release()


def test_tokens_are_per_thread_unless_told_otherwise(r, name):
    def in_thread(fn):
        out = []
        t = threading.Thread(target=lambda: out.append(_call(fn)))
        t.start()
        t.join()
        return out[0]

    lk = r.lock(name, timeout=10, lock_class=Lock)
    assert lk.acquire(blocking=False)
    assert in_thread(lambda: lk.local.token) is None
    assert isinstance(in_thread(lk.release), LockError)
    assert in_thread(lk.owned) is False
    lk.release()

    shared = r.lock(name, timeout=10, thread_local=False, lock_class=Lock)
    assert shared.acquire(blocking=False)
    assert in_thread(lambda: shared.local.token) == r.get(name)
    assert in_thread(shared.release) is None
    assert r.get(name) is None


def _call(fn):
    try:
        return fn()
    except Exception as err:
        return err


def test_a_token_of_the_caller_s_is_refused(r, name):
    lk = r.lock(name, timeout=10, lock_class=Lock)
    with pytest.raises(LockError, match="refuses token="):
        lk.acquire(token="mine")
    assert r.get(name) is None
    assert lk.acquire(blocking=False)
    with pytest.raises(ValueError, match="refuses token="):
        lk.local.token = b"mine"
    lk.release()


def test_fenced_when_asked(r, name):
    make = functools.partial(Lock, fenced=True)
    fences = []
    for _ in range(3):
        lk = r.lock(name, timeout=10, lock_class=make)
        assert lk.fence is None
        with lk:
            fences.append(lk.fence)
        assert lk.fence is None
    assert fences == sorted(set(fences)) and fences[0] >= 1
    redis_py.configure(**TOLERANT, fenced=True)  # every lock of the module
    with r.lock(name, timeout=10, lock_class=Lock) as lk:
        assert lk.fence > fences[-1]


def test_connection_failures_are_redis_py_s(name):
    dead = redis.Redis(host="127.0.0.1", port=1)
    lk = dead.lock(name, timeout=10, lock_class=Lock)
    with pytest.raises(RedisConnectionError, match="connection failed") as info:
        lk.acquire(blocking=False)
    assert isinstance(info.value.__cause__, hiredlock.ConnectionError)


def test_a_release_that_found_too_few_masters_can_be_finished(fresh5, name):
    r = redis.Redis(host="127.0.0.1", port=fresh5.ports[0])
    lk = r.lock(name, timeout=10, lock_class=Lock)
    assert lk.acquire(blocking=False)
    fresh5.pause(1)
    try:
        with pytest.raises(RedisConnectionError):
            lk.release()
        assert lk.local.token is not None  # kept, to finish the job
    finally:
        fresh5.resume(1)
    lk.release()
    assert r.get(name) is None


def test_decoded_responses_and_names_as_redis_py_encodes_them(servers1):
    r = redis.Redis(port=servers1.ports[0], decode_responses=True)
    for name, key in (("é:1", "é:1".encode()), (b"raw\xff", b"raw\xff"), (42, b"42")):
        lk = r.lock(name, timeout=10, lock_class=Lock)
        with lk:
            assert lk.owned()
            assert servers1.get(1, key) == lk.local.token
    with pytest.raises(ValueError, match="name"):
        Lock(r, "x" * 513, timeout=10)  # hiredlock's limit, said at once


def test_one_hiredlock_client_per_configuration(servers1):
    port = servers1.ports[0]
    same = redis_py.client_for(redis.Redis(port=port))
    assert redis_py.client_for(redis.Redis(port=port)) is same
    assert redis_py.client_for(redis.Redis(port=port).client()) is same
    assert redis_py.client_for(redis.Redis(port=port, db=1)) is not same
    redis_py.configure(timeout=0.3)
    assert redis_py.client_for(redis.Redis(port=port)) is not same
    with pytest.raises(TypeError, match="key_prefix"):
        redis_py.configure(key_prefix="x:")
    with pytest.raises(ValueError, match="timeout"):
        redis_py.configure(timeout=-1)
