"""Waiting inside nginx: a release in another runtime wakes a waiting
request (and a release in nginx wakes a waiter elsewhere), many waiting
requests share one subscriber connection per worker and master, and the
worker serves other requests meanwhile. The patient3 client never polls (a
try after 20 s at the latest without a hand-off): a wait that ends within
seconds was woken. Bounds leave room for a loaded machine."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from pytest_redis import TOLERANT

import hiredlock

PATIENT = {**TOLERANT, "retry_delay": 20.0, "retry_jitter": 0.0}


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


def listener_stats(ngx) -> tuple[int, int]:
    """Subscriptions made and hand-offs heard, summed over the workers."""
    subscribed = handoffs = 0
    for line in ngx.get("/stats").body.splitlines():
        _, _, _, _, s, h = (int(x) for x in line.split())
        subscribed, handoffs = subscribed + s, handoffs + h
    return subscribed, handoffs


def test_a_python_release_wakes_a_waiting_request(ngx, servers3):
    name = unique("wake")
    holder = hiredlock.Client(servers3.urls, **PATIENT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    result = {}

    def waiter():
        result["r"] = ngx.get("/lock", c="patient3", name=name, timeout=15, ttl=10)

    thread = threading.Thread(target=waiter)
    thread.start()
    servers3.queued(name, 1)
    time.sleep(0.2)
    t0 = time.monotonic()
    holder.release()
    thread.join(15)
    r = result["r"]
    assert (r.status, r.body) == (200, "ok")
    assert time.monotonic() - t0 < 3  # woken: not 20 s, not the 30 s TTL


def test_a_nginx_release_wakes_a_python_waiter(ngx, servers3):
    """A request holds the lock for 1 s, then releases it: the Python
    waiter, queued meanwhile, gets it at once."""
    name = unique("wake")
    result = {}
    holding = threading.Thread(
        target=lambda: result.update(
            r=ngx.get("/lock", c="patient3", name=name, ttl=30, hold=1.0)
        )
    )
    holding.start()
    for _ in range(1000):
        if servers3.count(name) >= 2:
            break
        time.sleep(0.005)
    t0 = time.monotonic()
    waiter = hiredlock.Client(servers3.urls, **PATIENT).lock(name, ttl=10)
    assert waiter.acquire(timeout=15)
    took = time.monotonic() - t0
    holding.join(15)
    assert result["r"].status == 200
    assert took < 1.0 + 2  # the hold, then woken: not the 20 s cap
    waiter.release()


def test_many_waiting_requests_share_the_subscriber_connections(ngx, servers3):
    """50 requests wait for one lock at once: each worker subscribes once per
    master (not once per request), every request is served in turn, and
    pings are answered meanwhile."""
    name = unique("many")
    holder = hiredlock.Client(servers3.urls, **PATIENT).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    ngx.get("/lock", c="patient3", name=unique("warm"), timeout=0)
    subscribed0, handoffs0 = listener_stats(ngx)
    with ThreadPoolExecutor(50) as pool:
        futures = [
            pool.submit(
                ngx.get,
                "/lock",
                c="patient3",
                name=name,
                timeout=20,
                ttl=10,
                hold=0.005,
            )
            for _ in range(50)
        ]
        servers3.queued(name, 50)
        pings = [ngx.get("/ping").took for _ in range(5)]
        t0 = time.monotonic()
        holder.release()
        results = [f.result(30) for f in futures]
    took = time.monotonic() - t0
    assert [r.status for r in results] == [200] * 50, [r.body for r in results]
    subscribed1, handoffs1 = listener_stats(ngx)
    # At most one subscription per worker and master (the first wait of a
    # worker's patient3 client), whatever the number of waiting requests.
    assert subscribed1 - subscribed0 <= 2 * 3
    assert handoffs1 - handoffs0 >= 50  # every one was handed the lock
    assert max(pings) < 0.5
    print(f"50 waiting requests served in turn in {took * 1000:.0f} ms")
    assert took < 15  # 50 hand-offs, no 20 s cap
