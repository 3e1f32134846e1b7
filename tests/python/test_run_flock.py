"""``hiredlock run``'s flock(1) options against real Redis: -n, -c, --version,
-w's refused negative values, and -v saying how long the lock took and
when a renewal failed or the lock was lost."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

from pytest_redis import TOLERANT
from redis_fixture import Servers

import hiredlock


def run(servers, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "hiredlock", "run"]
    for url in servers.urls:
        cmd += ["--url", url]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, timeout=timeout, cwd="/"
    )


def test_version():
    for args in (["--version"], ["run", "--version"]):
        done = subprocess.run(
            [sys.executable, "-m", "hiredlock", *args],
            capture_output=True,
            text=True,
            cwd="/",
        )
        assert (done.returncode, done.stdout) == (
            0,
            f"hiredlock {hiredlock.__version__}\n",
        )


def test_nonblock_and_command(servers1, name):
    done = run(servers1, "-c", "echo in sh; exit 3", name)
    assert (done.returncode, done.stdout) == (3, "in sh\n")
    holder = hiredlock.Client(servers1.urls, **TOLERANT).lock(name)
    with holder:
        started = time.monotonic()
        done = run(servers1, "-n", "-v", name, "--", "true")
        assert done.returncode == 1
        assert f"lock {name!r} is busy (waited 0.0" in done.stderr
        assert time.monotonic() - started < 10
        done = run(servers1, "--nonblock", "-E", "7", name, "--", "true")
        assert done.returncode == 7


def test_usage_errors(servers1, name):
    for args, words in (
        (["-w", "-2", name, "--", "true"], "-w: a wait is >= 0 seconds, or -1"),
        (["-w", "-0.5", name, "--", "true"], "-w: a wait is >= 0 seconds, or -1"),
        (["-n", "-w", "2", name, "--", "true"], "-n and -w: give one of them"),
        (["-c", "true", name, "--", "true"], "-c CMD and a COMMAND"),
    ):
        done = run(servers1, *args)
        assert done.returncode == 2, args
        assert words in done.stderr, done.stderr


def test_owner_label_shown_by_status_while_the_command_runs(servers1, name):
    """--owner labels the lock (%h, %p expanded: hiredlock's pid, the
    command's parent): hiredlock status, run by the command itself, says who
    holds it; without --owner no label is written."""
    url = servers1.urls[0]
    status = f"{sys.executable} -m hiredlock status --json --url {url} {name}"
    check = f'{status}; echo "pid $PPID"'
    done = run(servers1, "--owner", "cron@%h:%p", "-c", check, name)
    assert done.returncode == 0, done.stderr
    report, pid = done.stdout.rsplit("pid ", 1)
    (got,) = json.loads(report)
    assert got["state"] == "held"
    assert got["owner"] == f"cron@{socket.gethostname()}:{int(pid)}"
    assert int(pid) != os.getpid()
    done = run(servers1, "-c", status, name)
    assert done.returncode == 0, done.stderr
    (got,) = json.loads(done.stdout)
    assert (got["state"], got["owner"]) == ("held", None)
    assert servers1.redis(1).keys(f"{name}*") == []
    done = run(servers1, "--owner", "bad\nlabel", "-c", "true", name)
    assert done.returncode == 2, done.stderr
    assert "owner" in done.stderr


def test_wait_forever_and_verbose(servers1, name):
    holder = hiredlock.Client(servers1.urls, **TOLERANT).lock(name)
    holder.acquire()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hiredlock", "run", "-w", "-1", "-v",
         "--url", servers1.urls[0], name, "--", "true"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
    )  # fmt: skip
    servers1.queued(name, 1)
    time.sleep(0.3)
    holder.release()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    line = next(x for x in err.splitlines() if "taken after" in x)
    took = float(line.split("taken after ")[1].split(" s")[0])
    assert 0.3 < took < 10


def test_verbose_says_a_renewal_failed_and_the_loss(name):
    servers = Servers(3)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hiredlock", "run", "-v", "-t", "1.5",
             "-k", "1", "--url", ",".join(servers.urls), name,
             "--", "sleep", "20"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
        )  # fmt: skip
        for _ in range(500):
            if servers.count(name) == 3:
                break
            time.sleep(0.01)
        servers.pause(1)
        servers.pause(2)
        _, err = proc.communicate(timeout=30)
        servers.resume(1)
        servers.resume(2)
        assert proc.returncode == 75, err
        assert f"lock {name!r} renewal failed, still valid for " in err
        assert "master 127.0.0.1:" in err and " unreachable: " in err
        assert f"lock {name!r} lost: expired: " in err
        assert err.index("renewal failed") < err.index("lost: expired")
    finally:
        servers.stop(check=False)
