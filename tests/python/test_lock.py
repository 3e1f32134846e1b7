"""The C core's acceptance list seen from Python, on 1 and 5 masters."""

from __future__ import annotations

import re
import time

import pytest
from pytest_redis import TOLERANT

import hiredlock


def test_acquire_sets_the_token_with_the_ttl_on_every_master(servers, client, name):
    lk = client.lock(name, ttl=10)
    assert lk.token is None and not lk.locked()
    assert lk.acquire() is True
    assert lk.locked()
    assert re.fullmatch(r"[0-9a-f]{32}", lk.token)
    assert servers.values(name) == [lk.token.encode()] * servers.n
    for i in range(1, servers.n + 1):
        assert 9000 < servers.redis(i).pttl(name) <= 10000
    assert 9.5 < lk.validity < 10.0
    lk.release()


def test_second_acquire_of_a_held_name_fails(servers, client, name):
    holder = client.lock(name)
    other = client.lock(name)
    assert holder.acquire(blocking=False)
    assert other.acquire(blocking=False) is False
    start = time.monotonic()
    assert other.acquire(timeout=0.3) is False
    assert 0.29 <= time.monotonic() - start < 0.8
    assert not other.locked() and other.validity == 0.0
    assert servers.values(name) == [holder.token.encode()] * servers.n
    holder.release()
    assert other.acquire(blocking=False)
    other.release()


def test_release_deletes_the_key_everywhere(servers, client, name):
    lk = client.lock(name)
    assert lk.acquire()
    lk.release()
    assert servers.count(name) == 0
    assert not lk.locked() and lk.validity == 0.0
    with pytest.raises(hiredlock.NotOwned, match=r"^not held$"):
        lk.release()


def test_each_acquisition_has_a_new_token(client, name):
    lk = client.lock(name)
    tokens = set()
    for _ in range(5):
        assert lk.acquire()
        tokens.add(lk.token)
        lk.release()
    assert len(tokens) == 5


def test_release_of_a_lock_taken_over_is_refused_and_leaves_it(servers, client, name):
    lk = client.lock(name)
    assert lk.acquire()
    for i in range(1, servers.n + 1):  # it expired and someone else took it
        servers.redis(i).set(name, "someone-else", px=10000)
    with pytest.raises(hiredlock.NotOwned, match=r"^not owned$"):
        lk.release()
    assert servers.values(name) == [b"someone-else"] * servers.n
    assert not lk.locked()
    for i in range(1, servers.n + 1):
        servers.redis(i).delete(name)


def test_extend_resets_the_ttl(servers, client, name):
    lk = client.lock(name, ttl=2)
    assert lk.acquire()
    time.sleep(0.3)
    assert all(servers.redis(i).pttl(name) < 1750 for i in range(1, servers.n + 1))
    lk.extend()
    for i in range(1, servers.n + 1):
        assert 1900 < servers.redis(i).pttl(name) <= 2000
    assert 1.9 < lk.validity <= 2.0
    lk.extend(ttl=5)
    assert lk.ttl == 5.0
    for i in range(1, servers.n + 1):
        assert 4900 < servers.redis(i).pttl(name) <= 5000
    assert 4.9 < lk.validity <= 5.0
    lk.extend(0.5)
    assert lk.ttl == 0.5 and lk.validity <= 0.5
    lk.release()


def test_extend_after_expiry_is_refused(servers, client, name):
    # 2 s, not 0.2 s: a TTL caps each master's reply deadline at a tenth of
    # it, and a loaded machine's Redis missed 20 ms.
    lk = client.lock(name, ttl=2)
    assert lk.acquire()
    time.sleep(2.15)
    assert not lk.locked() and lk.validity == 0.0
    with pytest.raises(hiredlock.NotOwned, match=r"^not owned$"):
        lk.extend()
    assert servers.count(name) == 0
    with pytest.raises(hiredlock.NotOwned, match=r"^not held$"):
        lk.extend()


def test_an_expired_lock_can_be_taken_by_another(client, name):
    # 2 s, not 0.2 s: a TTL caps each master's reply deadline at a tenth of
    # it, and a loaded machine's Redis missed 20 ms.
    first = client.lock(name, ttl=2)
    assert first.acquire()
    second = client.lock(name)
    start = time.monotonic()
    assert second.acquire(timeout=5)
    assert time.monotonic() - start < 3.0
    with pytest.raises(hiredlock.NotOwned):
        first.release()
    second.release()


def test_with_block_holds_the_lock_and_releases_it(servers, client, name):
    with client.lock(name, ttl=10) as held:
        assert isinstance(held, hiredlock.Lock)
        assert held.locked()
        assert servers.values(name) == [held.token.encode()] * servers.n
    assert servers.count(name) == 0
    assert not held.locked()


def test_with_block_raises_not_acquired_in_time(client, name):
    holder = client.lock(name)
    assert holder.acquire()
    start = time.monotonic()
    with (
        pytest.raises(hiredlock.NotAcquired, match="timeout") as info,
        client.lock(name, timeout=0.2),
    ):
        pytest.fail("the block must not run")
    assert 0.19 <= time.monotonic() - start < 0.7
    assert isinstance(info.value, TimeoutError)
    assert isinstance(info.value, hiredlock.LockError)
    with pytest.raises(hiredlock.NotAcquired), client.lock(name, blocking=False):
        pytest.fail("the block must not run")
    holder.release()


def test_leaving_a_with_block_whose_lock_was_lost_raises_not_owned(
    servers, client, name
):
    with pytest.raises(hiredlock.NotOwned, match="lost") as info, client.lock(name):
        for i in range(1, servers.n + 1):
            servers.redis(i).delete(name)
    assert isinstance(info.value.__cause__, hiredlock.NotOwned)
    assert str(info.value.__cause__) == "not owned"


def test_a_lost_lock_never_masks_the_blocks_own_exception(servers, client, name):
    with pytest.raises(KeyError) as info, client.lock(name):
        for i in range(1, servers.n + 1):
            servers.redis(i).delete(name)
        raise KeyError("mine")
    assert info.value.args == ("mine",)
    notes = getattr(info.value, "__notes__", [])
    assert any("was lost" in note for note in notes) or not hasattr(
        info.value, "add_note"
    )


def test_a_with_block_that_raises_still_releases(servers, client, name):
    with pytest.raises(RuntimeError), client.lock(name):
        raise RuntimeError("boom")
    assert servers.count(name) == 0


def test_synchronized_runs_every_call_under_the_lock(servers, client, name):
    seen = []

    @client.synchronized(name, ttl=5, timeout=0.2)
    def job(x):
        """doc"""
        seen.append(servers.count(name))
        return x * 2

    assert job.__doc__ == "doc" and job.__name__ == "job"
    assert job(21) == 42 and job(1) == 2
    assert seen == [servers.n, servers.n]
    assert servers.count(name) == 0
    holder = client.lock(name)
    assert holder.acquire()
    with pytest.raises(hiredlock.NotAcquired):
        job(3)
    holder.release()


def test_key_prefix_and_binary_names(servers, name):
    c = hiredlock.Client(servers.urls, key_prefix=b"app\x00:", **TOLERANT)
    raw = b"\x00\xffbin:" + name.encode()
    lk = c.lock(raw)
    assert lk.name == raw and lk.key == b"app\x00:" + raw
    assert lk.acquire()
    assert servers.values(lk.key) == [lk.token.encode()] * servers.n
    assert servers.count(raw) == 0
    lk.release()
    text = c.lock("naïve:" + name)
    assert text.key == b"app\x00:" + ("naïve:" + name).encode()


def test_unix_socket_urls(servers, name):
    c = hiredlock.Client(servers.unix_urls, **TOLERANT)
    assert c.masters == tuple(u[len("unix://") :] for u in servers.unix_urls)
    with c.lock(name) as lk:
        assert servers.values(name) == [lk.token.encode()] * servers.n


def test_client_attributes_and_repr(servers):
    c = hiredlock.Client(servers.urls)
    assert c.quorum == servers.n // 2 + 1
    assert c.masters == tuple(u[len("redis://") :] for u in servers.urls)
    assert "quorum=" in repr(c)
    lk = c.lock("x", ttl=1.5, timeout=2, blocking=True)
    assert (lk.client, lk.ttl, lk.timeout, lk.blocking) == (c, 1.5, 2.0, True)
    assert "unheld" in repr(lk)
    assert c.lock("x").timeout == -1.0


def test_default_client_from_the_environment(servers, name, monkeypatch):
    monkeypatch.setenv("HIREDLOCK_URLS", ", ".join(servers.urls))
    monkeypatch.setenv("HIREDLOCK_URL", "redis://127.0.0.1:1")
    hiredlock.set_default_client(None)
    try:
        assert hiredlock.default_client().masters == tuple(
            u[len("redis://") :] for u in servers.urls
        )
        with hiredlock.lock(name, ttl=5) as lk:
            assert servers.values(name) == [lk.token.encode()] * servers.n
        # Every setting of Client.lock reaches the default client's lock
        # too (owner was missing: a TypeError).
        with hiredlock.lock(name, ttl=5, owner="job-1"):
            assert hiredlock.default_client().inspect(name).owner == "job-1"

        @hiredlock.synchronized(name)
        def job():
            return servers.count(name)

        assert job() == servers.n
        monkeypatch.delenv("HIREDLOCK_URLS")
        hiredlock.set_default_client(None)
        assert hiredlock.default_client().masters == ("127.0.0.1:1",)
        monkeypatch.delenv("HIREDLOCK_URL")
        hiredlock.set_default_client(None)
        assert hiredlock.default_client().masters == ("127.0.0.1:6379",)
    finally:
        hiredlock.set_default_client(None)


def test_client_lock_passes_every_argument_to_the_lock(servers, client, name):
    # Client.lock is C (_core.Client._lock): each argument, by position or
    # keyword, must reach the Lock as Lock(...) takes it, and one given
    # wrong must be named in the error.
    lk = client.lock(name, 7, blocking=False, fenced=True)
    assert type(lk) is hiredlock.Lock and lk.client is client and lk.name == name
    assert (lk.ttl, lk.timeout, lk.blocking) == (7.0, -1.0, False)
    assert lk.fence_key is not None and not lk.auto_renew
    assert client.lock(name, timeout=2.5).timeout == 2.5

    def lost(lock):
        pass

    lease = client.lock(name, auto_renew=True, max_hold=60, on_lost=lost)
    assert lease.auto_renew and lease.on_lost is lost
    assert client.lock(name, fenced=False).fence_key is None
    owned = client.lock(name, owner="cron %p", sync_replicas=0, sync_aof=False)
    assert owned.acquire(blocking=False)
    assert client.inspect(name).owner.startswith("cron ")
    owned.release()
    for kw, error in [
        ({"max_hold": -1}, "max_hold"),
        ({"sync_replicas": 101}, "sync_replicas"),
        ({"sync_aof": 2}, "sync_aof"),
        ({"owner": 5}, "owner"),
        ({"fenced": "yes"}, "fenced"),
        ({"auto_renew": 1}, "auto_renew"),
        ({"on_lost": lost}, "on_lost needs auto_renew"),
        ({"on_lost": 5}, "on_lost must be callable"),
        ({"timeout": "1"}, "timeout"),
    ]:
        with pytest.raises((TypeError, ValueError), match=error):
            client.lock(name, **kw)
    with pytest.raises(TypeError, match=r"lock\(\) missing 1 required positional"):
        client.lock()
    with pytest.raises(TypeError, match=r"lock\(\) takes .* positional"):
        client.lock(name, 5, 1)
    with pytest.raises(TypeError, match="multiple values for argument 'ttl'"):
        client.lock(name, 5, ttl=6)
    with pytest.raises(TypeError, match="unexpected keyword argument 'ttl_ms'"):
        client.lock(name, ttl_ms=5)
