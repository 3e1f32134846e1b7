"""Read-write locks and semaphores inside nginx (the cosocket driver):
a read held in Python keeps a request's write out and shares with a
request's read; a request waiting for a semaphore's permit is woken by a
Python release and gets the permit given back. The patient3 client never
polls (a try after 20 s at the latest without a hand-off)."""

from __future__ import annotations

import threading
import time
import uuid

from pytest_redis import TOLERANT

import hiredlock

PATIENT = {**TOLERANT, "retry_delay": 20.0, "retry_jitter": 0.0}


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


def test_reads_share_with_python_and_a_write_waits(ngx, servers3):
    name = unique("rw")
    rw = hiredlock.Client(servers3.urls, **TOLERANT).rwlock(name, 30)
    read = rw.read()
    assert read.acquire(blocking=False)
    r = ngx.get("/lock", c="c3", name=name, mode="read", timeout=0)
    assert (r.status, r.body) == (200, "ok")
    r = ngx.get("/lock", c="c3", name=name, mode="write", timeout=0)
    assert (r.status, r.body) == (409, "timeout")
    read.release()
    r = ngx.get("/lock", c="c3", name=name, mode="write", timeout=0, keep=1)
    assert (r.status, r.body) == (200, "ok")
    assert not rw.read().acquire(blocking=False)


def test_a_python_release_hands_its_permit_to_a_waiting_request(ngx, servers3):
    name = unique("sem")
    sem = hiredlock.Client(servers3.urls, **PATIENT).semaphore(name, 2, 30)
    held = [sem.acquire(blocking=False) for _ in range(2)]
    assert all(p is not None for p in held)
    result = {}

    def waiter():
        result["r"] = ngx.get(
            "/lock", c="patient3", name=name, mode="permit", permits=2,
            timeout=15, ttl=10,
        )  # fmt: skip

    thread = threading.Thread(target=waiter)
    thread.start()
    servers3.queued(name, 1)
    time.sleep(0.2)
    given_back = held[1].permit
    t0 = time.monotonic()
    held[1].release()
    thread.join(15)
    r = result["r"]
    assert (r.status, r.body) == (200, "ok")
    assert int(r.headers["X-Permit"]) == given_back
    assert time.monotonic() - t0 < PATIENT["retry_delay"]  # woken, not polled
    held[0].release()
