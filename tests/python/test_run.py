"""``hiredlock run``: runs a command under a lock against real Redis, and
exits with its status; busy, waiting, signals passed on, and the command
stopped when the lock is lost."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pytest_redis import TOLERANT

import hiredlock

# Prints the lock's key as the command sees it in Redis, via redis-py.
SHOW_KEY = """
import sys, time, redis
r = redis.Redis(unix_socket_path=sys.argv[1])
time.sleep(float(sys.argv[3]))
print(r.get(sys.argv[2]).decode(), r.pttl(sys.argv[2]))
"""

# Writes each signal it gets to a file; exits 3 on SIGTERM.
TRAP = """
import signal, sys, time
out = open(sys.argv[1], "a", buffering=1)
def note(signum, frame):
    out.write(signal.Signals(signum).name + "\\n")
    if signum == signal.SIGTERM:
        sys.exit(3)
for s in (signal.SIGUSR1, signal.SIGHUP, signal.SIGTERM):
    signal.signal(s, note)
out.write("ready\\n")
while True:
    time.sleep(0.05)
"""


def hiredlock_run(servers, *args: str, **popen) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "hiredlock", "run"]
    for url in servers.urls:
        cmd += ["--url", url]
    return subprocess.Popen(
        [*cmd, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
        **popen,
    )


def finish(proc: subprocess.Popen, timeout: float = 30) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def wait_for_line(path: Path, line: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and line in path.read_text().split("\n"):
            return
        time.sleep(0.02)
    raise AssertionError(f"{line!r} never appeared in {path}")


def test_runs_renews_releases_and_passes_the_status(servers5, name):
    proc = hiredlock_run(
        servers5, "--ttl", "0.6", name, "--",
        sys.executable, "-c", SHOW_KEY, servers5.unix_paths[0], name, "1.5",
    )  # fmt: skip
    code, out, err = finish(proc)
    assert code == 0, err
    token, pttl = out.split()
    # Held all along: still our key 1.5 s in, with a TTL of 0.6 s renewed.
    assert len(token) == 32 and int(pttl) > 0
    assert servers5.count(name) == 0  # released when the command exited
    code, _, _ = finish(hiredlock_run(servers5, name, "--", "sh", "-c", "exit 7"))
    assert code == 7
    code, _, _ = finish(
        hiredlock_run(servers5, name, "--", "sh", "-c", "kill -KILL $$")
    )
    assert code == 128 + signal.SIGKILL


def test_busy_exits_with_the_conflict_code(servers5, name, tmp_path):
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    holder = client.lock(name, 10)
    assert holder.acquire(blocking=False)
    marker = tmp_path / "ran"
    try:
        code, _, err = finish(hiredlock_run(servers5, name, "--", "touch", str(marker)))
        assert (code, err) == (1, "")
        code, _, err = finish(
            hiredlock_run(servers5, "-E", "42", "-v", name, "--", "touch", str(marker))
        )
        assert code == 42
        assert f"lock {name!r} is busy" in err
        assert not marker.exists()
    finally:
        holder.release()


def test_waits_for_the_lock(servers5, name, tmp_path):
    client = hiredlock.Client(servers5.urls, **TOLERANT)
    holder = client.lock(name, 10)
    assert holder.acquire(blocking=False)
    threading.Timer(1.0, holder.release).start()
    marker = tmp_path / "ran"
    start = time.monotonic()
    code, _, err = finish(
        hiredlock_run(servers5, "--wait", "8", name, "--", "touch", str(marker))
    )
    assert code == 0, err
    assert marker.exists()
    assert 0.9 <= time.monotonic() - start < 8


def test_signals_reach_the_command(servers5, name, tmp_path):
    log = tmp_path / "signals"
    proc = hiredlock_run(
        servers5, "--ttl", "1", name, "--", sys.executable, "-c", TRAP, str(log)
    )
    wait_for_line(log, "ready")
    proc.send_signal(signal.SIGUSR1)
    wait_for_line(log, "SIGUSR1")
    proc.send_signal(signal.SIGHUP)
    wait_for_line(log, "SIGHUP")
    proc.send_signal(signal.SIGTERM)
    code, _, err = finish(proc)
    assert code == 3, err  # the command's own status on SIGTERM
    assert log.read_text().split() == ["ready", "SIGUSR1", "SIGHUP", "SIGTERM"]
    assert servers5.count(name) == 0


def test_command_is_stopped_when_the_lock_is_lost(servers5, name, tmp_path):
    log = tmp_path / "signals"
    proc = hiredlock_run(
        servers5, "--ttl", "0.6", name, "--", sys.executable, "-c", TRAP, str(log)
    )
    wait_for_line(log, "ready")
    start = time.monotonic()
    for i in range(1, servers5.n + 1):
        servers5.redis(i).delete(name)
    code, _, err = finish(proc)
    assert code == 75
    assert log.read_text().split() == ["ready", "SIGTERM"]
    assert time.monotonic() - start < 0.2 + 2
    assert f"lock {name!r} lost: not owned: stopping the command (SIGTERM)" in err
    # One that ignores SIGTERM gets SIGKILL after --kill-after.
    proc = hiredlock_run(
        servers5, "--ttl", "0.6", "--kill-after", "0.5", "--lost-exit-code", "9",
        name, "--", "sh", "-c", "trap '' TERM; echo ready >" + str(log) + "2;"
        " sleep 30 & sleep 30",
    )  # fmt: skip
    wait_for_line(Path(str(log) + "2"), "ready")
    start = time.monotonic()
    for i in range(1, servers5.n + 1):
        servers5.redis(i).delete(name)
    code, _, err = finish(proc)
    assert code == 9
    assert 0.5 <= time.monotonic() - start < 0.5 + 3
    assert "SIGKILL" in err


def test_max_hold_stops_the_command(servers5, name):
    start = time.monotonic()
    proc = hiredlock_run(
        servers5, "--ttl", "0.5", "--max-hold", "1.2", name, "--", "sleep", "30"
    )
    code, _, err = finish(proc)
    assert code == 75
    assert 1.1 <= time.monotonic() - start < 1.2 + 3
    assert "lost: max_hold reached" in err


def test_max_hold_shorter_than_the_ttl_stops_the_command(servers5, name):
    """--max-hold 1 with the default --ttl 30: stopped after 1 s, not 30.
    The lease is renewed, so without max_hold the command would run its
    30 s: bounded by that, not by a figure a loaded machine's process
    starts can pass."""
    start = time.monotonic()
    proc = hiredlock_run(servers5, "--max-hold", "1", name, "--", "sleep", "30")
    code, _, err = finish(proc)
    assert code == 75
    assert 1 <= time.monotonic() - start < 30 / 2
    assert "lost: max_hold reached" in err
    assert servers5.count(name) == 0


def test_fence_env_passes_increasing_fences(servers5, name):
    show = [sys.executable, "-c", "import os; print(os.environ['FENCE'])"]
    fences = []
    for _ in range(3):
        code, out, err = finish(
            hiredlock_run(servers5, "--fence-env", "FENCE", name, "--", *show)
        )
        assert code == 0, err
        fences.append(int(out))
    assert fences[0] < fences[1] < fences[2]
    # The same counter as the library's fenced locks.
    with hiredlock.Client(servers5.urls).lock(name, fenced=True) as lk:
        assert lk.fence > fences[2]
    assert servers5.count(name) == 0


# Appends "start <t>" and "end <t>" (monotonic) around a sleep to a file.
OVERLAP = """
import sys, time
with open(sys.argv[1], "a", buffering=1) as out:
    out.write(f"start {time.monotonic()}\\n")
    time.sleep(float(sys.argv[2]))
    out.write(f"end {time.monotonic()}\\n")
"""


def test_permits_run_at_most_n_copies(servers5, name, tmp_path):
    log = tmp_path / "log"
    command = [sys.executable, "-c", OVERLAP, str(log), "0.8"]
    options = ["--permits", "2", "--wait", "20", "-v"]
    runs = [hiredlock_run(servers5, *options, name, "--", *command) for _ in range(4)]
    results = [finish(proc) for proc in runs]
    assert [code for code, _, _ in results] == [0] * 4, results
    assert sum("permit " in err for _, _, err in results) == 4
    running = most = 0
    events = sorted(
        (float(t), kind)
        for kind, t in (line.split() for line in log.read_text().split("\n") if line)
    )
    for _, kind in events:
        running += 1 if kind == "start" else -1
        most = max(most, running)
    assert most <= 2  # never three at once (four started together)
    assert servers5.count(name) == 0
    # Busy when both permits are held elsewhere; a bad count is a usage error.
    sem = hiredlock.Client(servers5.urls, **TOLERANT).semaphore(name, 2, 10)
    held = [sem.acquire(blocking=False) for _ in range(2)]
    try:
        code, _, err = finish(
            hiredlock_run(servers5, "--permits", "2", name, "--", "true")
        )
        assert (code, err) == (1, "")
    finally:
        for p in held:
            p.release()
    code, _, err = finish(hiredlock_run(servers5, "--permits", "0", name, "--", "true"))
    assert code == 2 and "permits must be a whole number from 1" in err
    code, _, err = finish(hiredlock_run(servers5, "--permits", "x", name, "--", "true"))
    assert code == 2 and "not a whole number" in err


def test_errors_and_usage(servers5, name):
    code, _, err = finish(hiredlock_run(servers5, name, "--", "/nonexistent/cmd"))
    assert code == 127 and "command not found" in err
    assert servers5.count(name) == 0  # released: the command never ran
    code, _, err = finish(
        hiredlock_run(servers5, "--fence-env", "A=B", name, "--", "true")
    )
    assert code == 2 and "is not a variable name" in err
    assert servers5.count(name) == 0
    code, _, err = finish(hiredlock_run(servers5, name))
    assert code == 2 and "a COMMAND to run is needed" in err
    code, _, err = finish(hiredlock_run(servers5, "--ttl", "0", name, "--", "true"))
    assert code == 2 and "ttl must be between" in err
    nowhere = subprocess.run(
        [sys.executable, "-m", "hiredlock", "run", "-u", "redis://127.0.0.1:1",
         name, "--", "true"],
        capture_output=True, text=True, cwd="/", timeout=30,
    )  # fmt: skip
    assert nowhere.returncode == 69
    assert "connection failed: 0 of 1 masters answered" in nowhere.stderr


def test_masters_from_the_environment(servers1, name, tmp_path):
    marker = tmp_path / "ran"
    env = {**os.environ, "HIREDLOCK_URLS": ",".join(servers1.urls)}
    done = subprocess.run(
        [sys.executable, "-m", "hiredlock", "run", name, "--", "touch", str(marker)],
        env=env, capture_output=True, text=True, cwd="/", timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert marker.exists()


def test_help_documents_everything():
    out = subprocess.run(
        [sys.executable, "-m", "hiredlock", "run", "--help"],
        capture_output=True, text=True, cwd="/", timeout=30, check=True,
    ).stdout  # fmt: skip
    for text in ("--wait", "--conflict-exit-code", "--ttl", "--max-hold",
                 "--url", "--kill-after", "--lost-exit-code", "--fence-env",
                 "HIREDLOCK_URLS", "SIGTERM, then SIGKILL", "exit status:",
                 "signals:", "fencing:", "--permits"):  # fmt: skip
        assert text in out


def test_console_script_is_installed():
    script = shutil.which("hiredlock")
    assert script is not None, "pip install . installs the hiredlock command"
    out = subprocess.run(
        [script, "run", "--help"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0
    assert out.stdout.startswith("usage: hiredlock run [options] NAME -- COMMAND")


@pytest.fixture
def name(request) -> str:
    """Names without the test node's brackets: they go through the shell."""
    return f"run:{request.node.name}:{os.getpid()}"
