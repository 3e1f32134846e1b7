"""Managed leases (auto_renew) from Python against real Redis: renewal
keeps a short TTL held, a loss is seen by every signal (lost, check(),
on_lost, a with block, release), a stopped master does not matter and a
lost quorum does, max_hold ends renewal, fork and threads leave the renewer
working, release and garbage collection stop it, and the callback thread
never gets in the way of the interpreter's exit."""

from __future__ import annotations

import gc
import os
import sys
import threading
import time

import pytest
from pytest_redis import TOLERANT

import hiredlock
from conftest import run_python


def scripts_run(servers, i: int) -> int:
    """EVALSHA + EVAL calls master i ran since its stats were reset."""
    stats = servers.redis(i).info("commandstats")
    return sum(
        stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("evalsha", "eval")
    )


def reset_stats(servers, i: int) -> None:
    servers.redis(i).config_resetstat()


def delete_everywhere(servers, key) -> None:
    for i in range(1, servers.n + 1):
        servers.redis(i).delete(key)


class Seen:
    """What on_lost calls saw: (thread name, when, lost, exception text)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, bool, str]] = []
        self.event = threading.Event()

    def __call__(self, lock: hiredlock.Lock) -> None:
        try:
            lock.check()
            text = ""
        except hiredlock.LockLost as err:
            text = str(err)
        self.calls.append(
            (threading.current_thread().name, time.monotonic(), lock.lost, text)
        )
        self.event.set()


def test_short_ttl_held_long(servers5, name):
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    lk = client.lock(name, 1, auto_renew=True)
    assert lk.acquire(blocking=False)
    token = lk.token
    reset_stats(servers5, 1)
    start, misses = time.monotonic(), []
    while time.monotonic() - start < 5:
        for i in range(1, 6):
            if (
                servers5.get(i, name) != token.encode()
                or servers5.redis(i).pttl(name) <= 0
            ):
                misses.append(i)
        if not lk.locked() or lk.validity <= 0 or lk.token != token:
            misses.append("lock")
        time.sleep(0.1)
    assert misses == []
    assert not lk.lost
    # One renewal a third of the TTL: about 15 in 5 s.
    assert 10 <= scripts_run(servers5, 1) <= 20
    lk.release()
    assert servers5.count(name) == 0


def test_lost_seen_by_every_signal(servers5, name):
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    seen = Seen()
    lk = client.lock(name, 1.5, auto_renew=True, on_lost=seen)
    assert lk.acquire(blocking=False)
    time.sleep(0.1)
    t0 = time.monotonic()
    delete_everywhere(servers5, name)
    # Within one renewal period (a third of the TTL) and a round.
    assert seen.event.wait(3)
    thread, at, lost_then, text = seen.calls[0]
    assert at - t0 <= 0.5 + 0.4
    assert thread == "hiredlock-on-lost"
    assert lost_then
    assert text == "lost: not owned"
    assert lk.lost
    assert not lk.locked()
    assert lk.validity == 0
    with pytest.raises(hiredlock.LockLost, match=r"^lost: not owned$"):
        lk.check()
    with pytest.raises(hiredlock.LockLost, match=r"^lost: not owned$"):
        lk.release()
    with pytest.raises(hiredlock.NotOwned):  # LockLost is a NotOwned
        lk.extend()
    time.sleep(0.6)
    assert len(seen.calls) == 1  # once per hold
    assert "lost" in repr(lk)
    # A new hold is a new lease.
    assert lk.acquire(blocking=False)
    assert not lk.lost
    lk.check()
    lk.release()


def test_with_block_raises_lock_lost_after_the_body(servers5, name):
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    ran = []
    lease = client.lock(name, 0.6, auto_renew=True)
    pattern = r"^lost: not owned: lock .* was lost"
    with pytest.raises(hiredlock.LockLost, match=pattern) as info, lease:
        delete_everywhere(servers5, name)
        time.sleep(0.8)
        ran.append("body")
    assert ran == ["body"]  # the body ran to its end first
    assert isinstance(info.value.__cause__, hiredlock.LockLost)
    # The body's own error is never masked; the loss is a note on it.
    with pytest.raises(KeyError) as info, client.lock(name, 0.6, auto_renew=True):
        delete_everywhere(servers5, name)
        time.sleep(0.8)
        raise KeyError("mine")
    if sys.version_info >= (3, 11):
        assert any("was lost" in note for note in info.value.__notes__)
    # A lease that was not lost leaves the block quietly, renewed past its TTL.
    with client.lock(name, 0.3, auto_renew=True) as lk:
        time.sleep(0.8)
        assert lk.locked()


def test_one_master_stopped_keeps_lease(fresh5, name):
    client = hiredlock.Client(fresh5.urls, **TOLERANT)
    lk = client.lock(name, 1, auto_renew=True)
    assert lk.acquire(blocking=False)
    token = lk.token.encode()
    fresh5.pause(5)
    try:
        start, misses = time.monotonic(), []
        while time.monotonic() - start < 3:
            misses += [i for i in range(1, 5) if fresh5.get(i, name) != token]
            if not lk.locked():
                misses.append("lock")
            time.sleep(0.1)
        assert misses == []
        assert not lk.lost
    finally:
        fresh5.resume(5)
    lk.release()


def test_quorum_lost_longer_than_validity(fresh5, name):
    client = hiredlock.Client(fresh5.urls, **TOLERANT)
    seen = Seen()
    lk = client.lock(name, 1.5, auto_renew=True, on_lost=seen)
    assert lk.acquire(blocking=False)
    t0 = time.monotonic()
    for i in (1, 2, 3):
        fresh5.kill(i)
    assert seen.event.wait(4)
    assert seen.calls[0][1] - t0 <= 1.5 + 0.5
    with pytest.raises(hiredlock.LockLost) as info:
        lk.check()
    assert str(info.value).startswith(
        "lost: expired: connection failed: 2 of 5 masters confirmed (3 needed)"
    )
    assert not lk.locked()


def test_max_hold_ends_renewal(servers5, name):
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    seen = Seen()
    t0 = time.monotonic()
    lk = client.lock(name, 1, auto_renew=True, max_hold=2, on_lost=seen)
    assert lk.acquire(blocking=False)
    time.sleep(1.5)
    assert lk.locked()  # renewed past its TTL
    assert seen.event.wait(3)
    assert 1.9 <= seen.calls[0][1] - t0 <= 2.4
    assert seen.calls[0][3] == "lost: max_hold reached"
    time.sleep(0.1)
    assert servers5.count(name) == 0  # expired on its own at the cap


def test_release_and_garbage_collection_stop_renewal(servers5, name):
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    lk = client.lock(name, 0.6, auto_renew=True)
    assert lk.acquire(blocking=False)
    time.sleep(0.3)
    lk.release()
    reset_stats(servers5, 1)
    time.sleep(0.8)
    assert scripts_run(servers5, 1) == 0
    # Collected while held (a callback referring to its lock: a cycle):
    # not released, no longer renewed, expired with its TTL.
    lk = client.lock(name, 0.6, auto_renew=True)
    holder: list = []  # the callback refers to its own lock: a cycle
    lk2 = client.lock(name + ":2", 0.6, auto_renew=True, on_lost=holder.append)
    holder.append(lk2)
    assert lk.acquire(blocking=False)
    assert lk2.acquire(blocking=False)
    del lk, lk2, holder
    gc.collect()
    reset_stats(servers5, 1)
    time.sleep(0.9)
    assert scripts_run(servers5, 1) == 0
    assert servers5.count(name) == 0
    assert servers5.count(name + ":2") == 0


def test_callback_that_raises_is_reported(servers1, name, monkeypatch):
    client = hiredlock.Client(servers1.urls, **TOLERANT)
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    seen = Seen()

    def boom(lock):
        raise RuntimeError("callback failed")

    first = client.lock(name, 0.6, auto_renew=True, on_lost=boom)
    second = client.lock(name + ":2", 0.6, auto_renew=True, on_lost=seen)
    assert first.acquire(blocking=False)
    assert second.acquire(blocking=False)
    servers1.redis(1).delete(name, name + ":2")
    assert seen.event.wait(3)  # the next callback still ran
    for _ in range(100):
        if reported:
            break
        time.sleep(0.01)
    assert len(reported) == 1
    assert isinstance(reported[0].exc_value, RuntimeError)
    assert reported[0].object is boom
    assert first.lost


def test_threads_and_fork_keep_the_renewer(servers5, name):
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    shared = client.lock(name, 0.4, auto_renew=True)
    assert shared.acquire(blocking=False)
    failures = []

    def work(i):
        mine = client.lock(f"{name}:{i}", 0.4, auto_renew=True)
        if not mine.acquire(blocking=False):
            failures.append(("acquire", i))
        start = time.monotonic()
        while time.monotonic() - start < 1.2:
            if not (mine.locked() and shared.locked()) or shared.lost:
                failures.append(("held", i))
            if int((time.monotonic() - start) * 10) % 5 == 0:
                mine.extend()  # the holder's calls and renewals take turns
            time.sleep(0.01)
        mine.release()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    pid = os.fork()
    if pid == 0:  # the child: a renewer of its own, on first use
        ok = False
        try:
            child = client.lock(f"{name}:child", 0.4, auto_renew=True)
            ok = child.acquire(blocking=False)
            time.sleep(1.2)
            ok = ok and child.locked() and not child.lost
            child.release()
        finally:
            os._exit(0 if ok else 1)
    time.sleep(1.2)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert shared.locked() and not shared.lost  # the parent's went on
    shared.release()


def test_options_and_client_defaults(servers1, name):
    client = hiredlock.Client(servers1.urls, auto_renew=True, max_hold=60, **TOLERANT)
    assert client.lock(name).auto_renew
    assert not client.lock(name, auto_renew=False).auto_renew
    assert hiredlock.OPTIONS["auto_renew"] is False
    assert hiredlock.OPTIONS["max_hold"] == 0.0
    with pytest.raises(ValueError, match=r"max_hold must be between 0\.000 and"):
        client.lock(name, max_hold=-1)
    with pytest.raises(TypeError, match="auto_renew must be a bool"):
        hiredlock.Client(servers1.urls, auto_renew=1)
    with pytest.raises(TypeError, match="on_lost must be callable"):
        client.lock(name, on_lost=3)
    plain = hiredlock.Client(servers1.urls)
    with pytest.raises(ValueError, match="on_lost needs auto_renew=True"):
        plain.lock(name, on_lost=print)
    assert plain.lock(name).lost is False


EXIT_WHILE_HELD = """
import sys, time, hiredlock
client = hiredlock.Client(sys.argv[1].split(","), timeout=0.5)
held = client.lock("exit:held", 0.3, auto_renew=True, on_lost=print)
assert held.acquire(blocking=False)
lost = client.lock("exit:lost", 0.3, auto_renew=True,
                   on_lost=lambda lock: time.sleep(2))
assert lost.acquire(blocking=False)
import redis
redis.Redis(unix_socket_path=sys.argv[2]).delete("exit:lost")
time.sleep(0.5)   # the callback runs (sleeping) as the interpreter exits
print("exiting")
"""


def test_interpreter_exits_with_leases_held(servers1):
    """Leases still held and a callback still running at exit: the
    interpreter exits at once, without a hang or a crash."""
    start = time.monotonic()
    out = run_python(EXIT_WHILE_HELD, ",".join(servers1.urls), servers1.unix_paths[0])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("exiting")
    assert time.monotonic() - start < 10
