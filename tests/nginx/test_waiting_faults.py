"""Waiting under faults inside nginx (#24), over the cosocket driver: a
fresh request's wait rides out masters that stall, waiting requests stay
quiet while the holder lacks a master, and a key without a TTL is named
when the wait runs out. Releases to a master stopped mid-request are a
known gap of this driver (an expected failure, not strict: the resumed
server runs the reordered release first only in some runs, so the test
passes now and then). Bounds leave room for a loaded machine."""

from __future__ import annotations

import re
import threading
import time
import uuid

import pytest

import hiredlock

R5_TIMEOUT = 0.2  # hrltest.lua's r5: 0.2 s per master


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


def script_calls(servers, i: int) -> int:
    stats = servers.redis(i).info("commandstats")
    names = ("cmdstat_evalsha", "cmdstat_eval")
    return sum(stats.get(k, {}).get("calls", 0) for k in names)


def test_a_wait_rides_out_stalled_masters(ngx, servers5):
    """3 of 5 masters stalled for 0.6 s (CLIENT PAUSE): a request willing to
    wait 5 s gets the lock once they answer (before: 409 "connection
    failed" after one per-master timeout); one without a wait still fails
    at once."""
    name = unique("stall")
    assert ngx.get("/lock", c="r5", name=unique("warm")).status == 200
    for i in (1, 2, 3):
        servers5.redis(i).execute_command("CLIENT", "PAUSE", "600")
    r = ngx.get("/lock", c="r5", name=name, timeout=5)
    print(f"3 of 5 stalled 0.6 s: acquired after {r.elapsed * 1000:.0f} ms")
    assert (r.status, r.body) == (200, "ok")
    assert 0.4 < r.elapsed < 3
    time.sleep(0.1)
    for i in (1, 2, 3):
        servers5.redis(i).execute_command("CLIENT", "PAUSE", "600")
    r = ngx.get("/lock", c="r5", name=name, timeout=0)
    assert r.status == 409
    assert r.body.startswith("connection failed: 2 of 5 masters answered"), r.body
    assert r.elapsed < 2 * R5_TIMEOUT + 0.15
    time.sleep(0.7)


def test_waiting_requests_stay_parked_while_the_holder_lacks_a_master(ngx, servers3):
    """The holder's key gone from master 3 (restarted empty): two waiting
    requests (patient3: a cap of 20 s) no longer pass master 3 to each
    other for the whole hold (8 to 10 queue-script calls in 2 s before), and
    get the lock when it is released."""
    name = unique("churn")
    holder = hiredlock.Client(servers3.urls).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    servers3.redis(3).delete(name)
    results = []

    def waiter() -> None:
        r = ngx.get("/lock", c="patient3", name=name, timeout=15, ttl=10)
        results.append((r.status, r.body))

    threads = [threading.Thread(target=waiter) for _ in range(2)]
    for t in threads:
        t.start()
    servers3.queued(name, 2)
    time.sleep(1)
    before = [script_calls(servers3, i) for i in (1, 2, 3)]
    time.sleep(2)
    calls = max(script_calls(servers3, i) - b for i, b in zip((1, 2, 3), before))
    print(f"queue-script calls in 2 s on the busiest master: {calls}")
    assert calls <= 4
    holder.release()
    for t in threads:
        t.join(15)
    assert results == [(200, "ok"), (200, "ok")]


def test_a_key_without_a_ttl_is_named(ngx, servers3):
    """A plain SET without a TTL over the lock's name on every master: the
    request's wait runs out and its error names them (before: "timeout")."""
    name = unique("orders")
    for i in (1, 2, 3):
        servers3.redis(i).set(name, "paid")
    try:
        r = ngx.get("/lock", c="c3", name=name, timeout=1)
    finally:
        for i in (1, 2, 3):
            servers3.redis(i).delete(name)
    assert r.status == 409
    assert re.match(
        r"^timeout: (127\.0\.0\.1:\d+: the key has no TTL(; )?){3} \(it never "
        r"expires: only what wrote it can free it\)$",
        r.body,
    ), r.body


@pytest.mark.xfail(
    strict=False,
    reason="#24 item 9 is not fixed in the cosocket driver: it closes a "
    "connection whose reply is late, so a release goes on another "
    "connection than the SET it must follow, and the resumed server may run "
    "it first (2 of 7 keys left in most runs, before and after the C "
    "driver's fix; 0 in some, so not strict)",
)
def test_releases_reach_a_stopped_master(ngx, servers3):
    """Master 3 stopped after SCRIPT FLUSH, 21 acquire/release requests over
    7 names (7 at a time), resumed: no key should be left there. The
    cosocket driver closes a connection whose reply is late and sends the
    full script behind a late release; the release must still run after the
    SET it follows."""
    names = [unique("flushed") for _ in range(7)]
    for n in names:
        assert ngx.get("/lock", c="c3", name=n).status == 200
    servers3.redis(3).script_flush()
    servers3.pause(3)
    results = []
    try:
        for _ in range(3):
            threads = [
                threading.Thread(
                    target=lambda n=n: results.append(
                        ngx.get("/lock", c="c3", name=n).status
                    )
                )
                for n in names
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
    finally:
        servers3.resume(3)
    assert results == [200] * 21
    time.sleep(1)  # it catches up in milliseconds; the keys live 10 s
    left = sum(servers3.count(n) for n in names)
    print(f"keys left a second after the resume: {left}")
    assert left == 0
