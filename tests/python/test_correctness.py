"""Correctness under attack (issue 13), from Python: a refused handshake
leaves no key, a release that reached too few masters ends the hold and a
retry finishes it, no TTL without room for a round, a late master's
NOSCRIPT cannot keep a release from running, waits are judged on a clock
that counts suspended time, and fork() while a thread is in a round."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest
from redis_fixture import Servers

import hiredlock


@pytest.fixture
def one():
    s = Servers(1)
    yield s
    s.stop()


def wait_gone(servers: Servers, i: int, key: str, seconds: float = 2.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if servers.get(i, key) is None:
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize(
    "url_of, error, text",
    [
        (lambda p: f"redis://:nopass@127.0.0.1:{p}", hiredlock.LockError, "AUTH"),
        (
            lambda p: f"redis://nobody:pw@127.0.0.1:{p}",
            hiredlock.LockError,
            "WRONGPASS",
        ),
        (lambda p: f"redis://127.0.0.1:{p}/99", hiredlock.LockError, "DB index"),
        (
            lambda p: f"redis://noset:pw@127.0.0.1:{p}",
            hiredlock.PermissionDenied,
            "^permission denied: .*NOPERM",
        ),
    ],
    ids=["password-for-none", "unknown-user", "db-out-of-range", "noperm"],
)
def test_a_refused_handshake_leaves_no_key(one, name, url_of, error, text):
    one.redis(1).execute_command("ACL", "SETUSER", "noset", "on", ">pw", "~*", "+ping")
    client = hiredlock.Client(url_of(one.ports[0]), timeout=0.5)
    with pytest.raises(error, match=text):
        client.lock(name).acquire(blocking=False)
    assert one.count(name) == 0  # not in db 0 as the default user either


def test_an_unfinished_release_ends_the_hold_and_a_retry_finishes_it(name):
    s = Servers(3, "--aof")
    try:
        s.redis(3).set(name, "someone-else", px=60000)
        client = hiredlock.Client(s.urls, timeout=0.5, connect_timeout=1)
        lk = client.lock(name, ttl=30)
        assert lk.acquire(blocking=False)  # granted by 1 and 2
        token = lk.token
        s.kill(2)
        with pytest.raises(
            hiredlock.ConnectionError, match=r"1 of 3 masters confirmed \(2 needed\)"
        ):
            lk.release()
        assert not lk.locked()
        assert lk.validity == 0
        assert lk.token == token
        with pytest.raises(hiredlock.LockError, match="not held"):
            lk.extend()
        s.restart(2)  # with our key, from its AOF
        assert s.get(2, name) == token.encode()
        lk.release()  # master 1's 0 is its earlier confirmation, not "not owned"
        assert s.get(2, name) is None
        assert s.get(3, name) == b"someone-else"
    finally:
        s.stop()


def test_a_ttl_without_room_for_a_round_is_refused(one, name):
    client = hiredlock.Client(one.urls)
    for ttl in (0.001, 0.002, 0.004):
        with pytest.raises(
            ValueError,
            match=rf"^invalid argument: ttl must be between 0\.005 and "
            rf"2147483\.647 seconds, got {ttl:g}$",
        ):
            client.lock(name, ttl=ttl)
    lk = client.lock(name, ttl=10)
    assert lk.acquire(blocking=False)
    with pytest.raises(ValueError, match=r"ttl must be between 0\.005 and"):
        lk.extend(0.002)
    lk.release()
    # A wider drift allowance needs a longer one.
    drifty = hiredlock.Client(one.urls, drift_factor=0.49)
    with pytest.raises(ValueError, match=r"ttl must be between 0\.008 and"):
        drifty.lock(name, ttl=0.007)


def test_a_late_master_without_its_scripts_still_releases(name):
    s = Servers(3)
    try:
        client = hiredlock.Client(s.urls, timeout=0.05, connect_timeout=1)
        lk = client.lock(name, ttl=60)
        assert lk.acquire(blocking=False)
        lk.release()  # the scripts are loaded now
        assert lk.acquire(blocking=False)
        s.redis(3).script_flush()
        s.pause(3)
        lk.release()  # 2 of 3 confirm; the 3rd answers after we stopped listening
        s.resume(3)
        assert wait_gone(s, 3, name)
    finally:
        s.stop()


UNDER_A_BOOTTIME_OFFSET = r"""
import sys, threading, time, hiredlock
client = hiredlock.Client(sys.argv[1].split(","))
lk = client.lock(sys.argv[2], ttl=10)
other = hiredlock.Client(sys.argv[1].split(",")).lock(sys.argv[2], ttl=10)
assert other.acquire(blocking=False)
# A thread waits on this Lock object; the main thread then waits for the
# object itself (its gate) with a timeout, which must be kept.
waiter = threading.Thread(target=lk.acquire, kwargs={"timeout": 1.5})
waiter.start()
time.sleep(0.1)
t0 = time.monotonic()
got = lk.acquire(timeout=0.3)
print(got, round(time.monotonic() - t0, 3))
other.release()
waiter.join()
"""


def test_waits_keep_their_deadline_when_boottime_runs_ahead(one, name):
    """The core's clock counts suspended time (CLOCK_BOOTTIME); a wait on a
    Lock object must still end on time. A time namespace puts BOOTTIME
    10^5 s ahead of MONOTONIC, as a long suspend would."""
    unshare = shutil.which("unshare")
    assert unshare is not None, "util-linux unshare is needed"
    probe = subprocess.run(
        [unshare, "--time", "--boottime", "100000", "true"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.fail(f"no time namespace here: {probe.stderr.decode().strip()}")
    out = subprocess.run(
        [
            unshare,
            "--time",
            "--boottime",
            "100000",
            sys.executable,
            "-c",
            UNDER_A_BOOTTIME_OFFSET,
            ",".join(one.urls),
            name,
        ],
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr
    got, took = out.stdout.split()
    assert got == "False"
    assert float(took) < 1.0  # 0.3 s asked; before, it waited for the thread


FORK_WHILE_ROUNDS_RUN = r"""
import os, sys, threading, hiredlock
urls = sys.argv[1].split(",")
client = hiredlock.Client(urls + ["redis://127.0.0.1:1", "redis://127.0.0.1:2"],
                          timeout=0.05)
stop = threading.Event()
def churn():
    lk = client.lock("fork:churn")
    while not stop.is_set():
        try:
            lk.acquire(blocking=False)
        except hiredlock.ConnectionError:
            pass
threads = [threading.Thread(target=churn) for _ in range(2)]
for t in threads:
    t.start()
bad = 0
for _ in range(100):
    pid = os.fork()
    if pid == 0:
        try:
            client.lock("fork:child").acquire(blocking=False)
        except hiredlock.ConnectionError:
            os._exit(0)
        os._exit(3)
    _, status = os.waitpid(pid, 0)
    bad += os.waitstatus_to_exitcode(status) != 0
stop.set()
for t in threads:
    t.join()
print(bad)
"""


def test_fork_while_other_threads_run_rounds(one):
    out = subprocess.run(
        [sys.executable, "-c", FORK_WHILE_ROUNDS_RUN, ",".join(one.urls)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0", out.stderr
