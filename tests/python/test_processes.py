"""Processes: a non-atomic read-modify-write in Redis under the lock, and a
lock and client used on both sides of fork()."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

COUNTER_WORKER = r"""
import sys, hiredlock, redis
urls, name, counter_socket = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4])
client = hiredlock.Client(urls, connect_timeout=1, timeout=0.5,
                          retry_delay=0.002, retry_jitter=0.002)
counter = redis.Redis(unix_socket_path=counter_socket)
lock = client.lock(name, ttl=10)
for _ in range(rounds):
    assert lock.acquire(timeout=60)
    try:
        value = int(counter.get("counter:" + name) or 0)  # GET, then SET:
        counter.set("counter:" + name, value + 1)         # not atomic alone
    finally:
        lock.release()
"""


def test_eight_processes_increment_a_counter_under_the_lock(servers, name):
    rounds = 300 if servers.n == 1 else 250
    counter_socket = servers.unix_urls[0][len("unix://") :]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                COUNTER_WORKER,
                ",".join(servers.urls),
                name,
                counter_socket,
                str(rounds),
            ],
            cwd="/",
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    assert int(servers.get(1, "counter:" + name)) == 8 * rounds
    assert servers.count(name) == 0


def child_exit_code(pid):
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_fork_child_uses_the_client_and_the_parents_connections_survive(
    servers, client, name
):
    held = client.lock(name + ":parent", ttl=10)
    assert held.acquire()
    pid = os.fork()
    if pid == 0:  # the child: any failure is its exit code
        code = 1
        try:
            mine = client.lock(name + ":child")
            for _ in range(200):
                assert mine.acquire(blocking=False)
                mine.release()
            code = 2
            assert held.locked()  # inherited, like a threading.Lock
            assert client.lock(name + ":parent").acquire(blocking=False) is False
            code = 0
        finally:
            os._exit(code)
    # The parent works on the same connections while the child runs.
    other = client.lock(name + ":other")
    for _ in range(200):
        assert other.acquire(blocking=False)
        other.release()
    assert child_exit_code(pid) == 0
    for _ in range(50):
        assert other.acquire(blocking=False)
        other.release()
    assert servers.values(name + ":parent") == [held.token.encode()] * servers.n
    held.release()
    assert servers.count(name + ":parent") == 0
    assert servers.count(name + ":child") == 0


def test_fork_while_another_thread_waits_on_a_lock_object(servers, client, name):
    holder = client.lock(name, ttl=10)
    assert holder.acquire()
    waiting = client.lock(name, ttl=10)
    t = threading.Thread(target=waiting.acquire, kwargs={"timeout": 1})
    t.start()
    time.sleep(0.2)  # the thread is inside waiting.acquire()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            # That thread does not exist here: the object must be usable.
            assert waiting.acquire(blocking=False) is False  # holder has it
            assert waiting.acquire(timeout=0.05) is False
            fresh = client.lock(name + ":child")
            assert fresh.acquire(blocking=False)
            fresh.release()
            code = 0
        finally:
            os._exit(code)
    assert child_exit_code(pid) == 0
    t.join()
    assert not waiting.locked()
    holder.release()
    assert waiting.acquire(blocking=False)
    waiting.release()


def test_a_forked_child_never_repeats_a_parents_token(servers, client, name):
    """Tokens come from a batch of CSPRNG bytes per client (the C core's
    driver/entropy.c): a child forked while the parent's batch has bytes
    left must draw its own, and never take a token the parent takes."""
    lock = client.lock(name + ":parent")
    parent = []

    def draw(lk, into, k):
        for _ in range(k):
            assert lk.acquire(blocking=False)
            into.append(lk.token)
            lk.release()

    draw(lock, parent, 3)  # a batch drawn, most of it left
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: any failure is its exit code
        code = 1
        try:
            os.close(r)
            mine = []
            draw(client.lock(name + ":child"), mine, 100)
            with os.fdopen(w, "w") as out:
                out.write("\n".join(mine))
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    draw(lock, parent, 100)
    with os.fdopen(r) as inp:
        child = inp.read().split("\n")
    assert child_exit_code(pid) == 0
    assert len(child) == 100 and len(set(child)) == 100
    assert len(set(parent)) == len(parent)
    assert not set(child) & set(parent)
