"""`with client.lock(name):` and `with hiredlock.lock(name):`, the way the
README tells users to lock: a new Lock per block, made by Lock._make (every
argument by position) and released by the C __exit__. These pin down that
the fast path checks and tells exactly what Lock(...) does, and what a block
whose release fails raises."""

from __future__ import annotations

import sys
import threading

import pytest
from pytest_redis import TOLERANT

import hiredlock

# Client.lock's keywords with a value each accepts, and one each refuses.
GOOD = {
    "ttl": 5,
    "timeout": 2.5,
    "blocking": True,
    "auto_renew": True,
    "max_hold": 60,
    "on_lost": print,
    "fenced": True,
    "sync_replicas": 0,
    "sync_aof": False,
    "owner": "job-7",
}
BAD = [
    {"ttl": -1},
    {"ttl": "10"},
    {"ttl": True},
    {"timeout": 3, "blocking": False},
    {"timeout": -2},
    {"timeout": "x"},
    {"fenced": 1},
    {"auto_renew": "yes"},
    {"max_hold": "a"},
    {"max_hold": -1},
    {"sync_replicas": 1.5},
    {"sync_replicas": -1},
    {"sync_aof": 0},
    {"owner": 7},
    {"owner": "x" * 100000},
    {"on_lost": 3},
    {"on_lost": print},  # needs auto_renew=True
]


def failure_of(make):
    try:
        make()
    except Exception as e:
        return type(e), str(e)
    return None


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_client_lock_refuses_what_lock_refuses_with_the_same_words(bad):
    c = hiredlock.Client("redis://127.0.0.1:1")
    fast = failure_of(lambda: c.lock("n", **bad))
    slow = failure_of(lambda: hiredlock.Lock(c, "n", **bad))
    assert fast is not None and fast == slow
    hiredlock.set_default_client(c)
    try:
        assert failure_of(lambda: hiredlock.lock("n", **bad)) == slow
    finally:
        hiredlock.set_default_client(None)


def test_client_lock_refuses_a_bad_name_or_client():
    c = hiredlock.Client("redis://127.0.0.1:1")
    for bad in (3, None, ["n"]):
        got = failure_of(lambda bad=bad: c.lock(bad))
        assert got == failure_of(lambda bad=bad: hiredlock.Lock(c, bad))
        assert got[0] is TypeError and "name must be str or bytes" in got[1]
    with pytest.raises(TypeError, match=r"client must be a hiredlock\.Client"):
        hiredlock.Lock._make(
            object(), "n", 30, -1, True, None, None, None, None, None, None, None
        )
    with pytest.raises(TypeError, match="takes exactly 12 arguments"):
        hiredlock.Lock._make(c, "n")


def settings(lk):
    return (
        type(lk),
        lk.name,
        lk.key,
        lk.ttl,
        lk.timeout,
        lk.blocking,
        lk.auto_renew,
        lk.on_lost,
        lk.fence_key,
        lk.mode,
        lk.client,
    )


@pytest.mark.parametrize("given", [{}, GOOD, {"blocking": False, "ttl": 0.5}])
def test_client_lock_makes_what_lock_makes(given):
    c = hiredlock.Client("redis://127.0.0.1:1", key_prefix="p:")
    fast = c.lock(b"n", **given)
    assert type(fast) is hiredlock.Lock
    assert settings(fast) == settings(hiredlock.Lock(c, b"n", **given))


def test_none_takes_the_clients_defaults():
    c = hiredlock.Client("redis://127.0.0.1:1", auto_renew=True, fenced=True)
    lk = c.lock("n", auto_renew=None, fenced=None, max_hold=None, owner=None)
    assert lk.auto_renew and lk.fence_key == b"n{n}:fence"
    assert not c.lock("n", auto_renew=False, fenced=False).auto_renew


def test_default_lock_uses_a_client_subclass_lock():
    made = []

    class Mine(hiredlock.Client):
        def lock(self, name, *args, **kwargs):
            made.append(name)
            return super().lock(name, *args, **kwargs)

    hiredlock.set_default_client(Mine("redis://127.0.0.1:1"))
    try:
        assert hiredlock.lock("n", ttl=3).ttl == 3.0
    finally:
        hiredlock.set_default_client(None)
    assert made == ["n"]


def test_with_block_holds_and_releases(servers1, name):
    c = hiredlock.Client(servers1.urls, **TOLERANT)
    hiredlock.set_default_client(c)
    try:
        for make in (c.lock, hiredlock.lock):
            with make(name, ttl=10) as lk:
                assert lk.locked()
                assert servers1.values(name) == [lk.token.encode()]
            assert not lk.locked() and servers1.values(name) == [None]
    finally:
        hiredlock.set_default_client(None)


def test_with_block_whose_lock_was_lost_raises_not_owned(servers1, name):
    c = hiredlock.Client(servers1.urls, **TOLERANT)
    with pytest.raises(hiredlock.NotOwned) as info, c.lock(name):
        servers1.redis(1).delete(name)
    assert "was lost before its with block ended" in str(info.value)
    assert isinstance(info.value.__cause__, hiredlock.NotOwned)


def test_with_block_keeps_its_own_exception_when_the_lock_was_lost(servers1, name):
    c = hiredlock.Client(servers1.urls, **TOLERANT)
    with pytest.raises(KeyError) as info, c.lock(name):
        servers1.redis(1).delete(name)
        raise KeyError("mine")
    if sys.version_info >= (3, 11):
        assert any("was lost before the with block" in n for n in info.value.__notes__)


def test_with_block_release_failing_otherwise_raises_it(servers1, name):
    c = hiredlock.Client(servers1.urls, **TOLERANT)
    try:
        with pytest.raises(hiredlock.ConnectionError), c.lock(name, ttl=2):
            servers1.pause(1)  # the release finds no master
    finally:
        servers1.resume(1)


def test_with_block_keeps_its_own_exception_when_the_release_fails(servers1, name):
    c = hiredlock.Client(servers1.urls, **TOLERANT)
    try:
        with pytest.raises(KeyError) as info, c.lock(name, ttl=2):
            servers1.pause(1)
            raise KeyError("mine")
    finally:
        servers1.resume(1)
    if sys.version_info >= (3, 11):
        assert any("releasing lock" in n for n in info.value.__notes__)


def test_exit_without_a_policy_raises_the_failure():
    c = hiredlock.Client("redis://127.0.0.1:1")
    core = hiredlock._core.Lock(c, "n")
    with pytest.raises(hiredlock.NotOwned):
        core.__exit__(None, None, None)
    with pytest.raises(TypeError, match="takes exactly 3 arguments"):
        core.__exit__()


def test_with_blocks_in_threads_on_one_client_never_overlap(servers1, name):
    c = hiredlock.Client(servers1.urls, **TOLERANT)
    inside = []
    overlaps = []
    done = []

    def work():
        for _ in range(50):
            with c.lock(name, timeout=20):
                inside.append(1)
                if len(inside) > 1:
                    overlaps.append(1)
                inside.pop()
            done.append(1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(done) == 200 and not overlaps
