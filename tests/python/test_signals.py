"""Ctrl-C (SIGINT) interrupts a long blocking acquire, which leaves no key."""

from __future__ import annotations

import json

from conftest import run_python

INTERRUPTED = r"""
import json, os, signal, sys, threading, time, hiredlock
urls, name, where = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
client = hiredlock.Client(urls, connect_timeout=1, timeout=0.5,
                          retry_delay=0.5, retry_jitter=0.1)
holder = client.lock(name, ttl=30)
assert holder.acquire()
# The same object (its gate) or another object (the core's retry loop).
waiter = holder if where == "same-object" else client.lock(name, ttl=30)
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
start = time.monotonic()
try:
    waiter.acquire()  # forever: only the signal can end it
    outcome = "acquired"
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
took = time.monotonic() - start
print(json.dumps({"outcome": outcome, "took": took, "token": holder.token,
                  "waiter_locked": waiter.locked() if waiter is not holder else None}))
holder.release()
"""


def interrupted(servers, name, where):
    proc = run_python(INTERRUPTED, ",".join(servers.urls), name, where)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_sigint_interrupts_a_long_acquire_and_leaves_no_key(servers, name):
    result = interrupted(servers, name, "other-object")
    assert result["outcome"] == "KeyboardInterrupt"
    assert 0.25 < result["took"] < 0.3 + 0.25
    assert result["waiter_locked"] is False
    assert servers.count(name) == 0  # the holder released; nothing else left


def test_sigint_interrupts_a_wait_on_a_held_lock_object(servers, name):
    result = interrupted(servers, name, "same-object")
    assert result["outcome"] == "KeyboardInterrupt"
    assert 0.25 < result["took"] < 0.3 + 0.25
    assert servers.count(name) == 0


def test_a_signal_during_a_cancelled_attempt_leaves_the_holders_key(servers, name):
    code = INTERRUPTED.replace("holder.release()\n", "")
    proc = run_python(code, ",".join(servers.urls), name, "other-object")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["outcome"] == "KeyboardInterrupt"
    assert servers.values(name) == [result["token"].encode()] * servers.n
    for i in range(1, servers.n + 1):
        servers.redis(i).delete(name)
