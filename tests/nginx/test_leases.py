"""Managed leases (auto_renew) inside nginx: the cosocket driver renews them
from one ngx.timer per worker and client, with the same sans-I/O extend as
every other driver; a request sees a loss through lock:lost() and
lock:check(), and release or garbage collection stop the renewal."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor


def unique(prefix: str) -> str:
    return f"lease:{prefix}:{uuid.uuid4().hex[:12]}"


def fields(body: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in body.splitlines())


def test_lease_outlives_its_ttl_on_one_timer(ngx, servers3):
    name = unique("long")
    seen: list[tuple[bytes | None, int]] = []
    stop = threading.Event()

    def watch() -> None:
        time.sleep(0.3)
        while not stop.is_set():
            seen.append((servers3.get(1, name), servers3.redis(1).pttl(name)))
            time.sleep(0.1)

    with ThreadPoolExecutor(2) as pool:
        watcher = pool.submit(watch)
        r = ngx.get("/lease", name=name, ttl=1, hold=3, n=5)
        stop.set()
        watcher.result()
    assert r.status == 200, r.body
    got = fields(r.body)
    assert got["held"] == "true"
    assert got["lost"] == "false"
    assert got["renewers"] == "1"  # five leases, one timer
    assert got["release"] == "true"
    assert got["renewers_after"] == "0"
    # A 1 s TTL seen in Redis for ~2.5 s: same token, never expired. The
    # samples before the key first shows (a loaded nginx took the lock a
    # little later) and after the release (the response is still on its
    # way) do not count; between them the key is never missing.
    while seen and seen[0][0] is None:
        seen.pop(0)
    while seen and seen[-1][0] is None:
        seen.pop()
    assert len(seen) >= 15
    assert {value for value, _ in seen} == {got["token"].encode()}
    assert all(pttl > 0 for _, pttl in seen)
    assert servers3.count(name) == 0


def test_one_timer_per_client(ngx):
    r = ngx.get("/lease", name=unique("two"), ttl=1, hold=1, n=3, c2="c3db1")
    got = fields(r.body)
    assert (got["held"], got["renewers"], got["renewers_after"]) == ("true", "2", "0")


def test_loss_is_seen_in_the_request(ngx, servers3):
    name = unique("gone")
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            ngx.get, "/lease", name=name, ttl=1.5, hold=5, until_lost=1
        )
        time.sleep(0.4)
        for i in range(1, 4):
            servers3.redis(i).delete(name)
        r = pending.result()
    got = fields(r.body)
    assert got["lost"] == "true not owned"
    assert got["check"] == "lost: not owned"
    assert got["release"] == "lost: not owned"
    # Within one renewal period (a third of the TTL) and a round.
    assert float(got["after"]) <= 0.4 + 0.5 + 0.4
    assert got["renewers_after"] == "0"


def test_stopped_master_keeps_it_and_a_lost_quorum_loses_it(ngx, servers5):
    servers5.ctl("pause", 5)
    try:
        r = ngx.get("/lease", c="r5", name=unique("stopped"), ttl=1, hold=2.5)
    finally:
        servers5.ctl("resume", 5)
    got = fields(r.body)
    assert (got["held"], got["lost"], got["release"]) == ("true", "false", "true")

    name = unique("quorum")
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            ngx.get, "/lease", c="r5", name=name, ttl=1.5, hold=6, until_lost=1
        )
        time.sleep(0.3)
        try:
            for i in (1, 2, 3):
                servers5.ctl("kill", i)
            r = pending.result()
        finally:
            for i in (1, 2, 3):
                servers5.ctl("restart", i)
    got = fields(r.body)
    assert got["lost"].startswith(
        "true expired: connection failed: 2 of 5 masters confirmed (3 needed)"
    ), got
    assert float(got["after"]) <= 0.3 + 1.5 + 0.6


def test_max_hold_ends_renewal(ngx, servers3):
    name = unique("cap")
    r = ngx.get("/lease", name=name, ttl=1, max_hold=1.5, hold=4, until_lost=1)
    got = fields(r.body)
    assert got["lost"] == "true max_hold reached"
    assert 1.3 <= float(got["after"]) <= 1.5 + 0.5
    # The lease says lost when its validity ends, which is the drift (10 ms
    # here) plus a round trip before the keys' last PX runs out; renewal
    # past the cap would keep them at least a third of the TTL (~0.67 s).
    deadline = time.monotonic() + 0.2
    while servers3.count(name) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert servers3.count(name) == 0


def test_collected_lease_is_not_renewed(ngx, servers3):
    name = unique("dropped")
    r = ngx.get("/lease", name=name, ttl=0.6, hold=0.5, drop=1)
    got = fields(r.body)
    assert got["renewers_after"] == "0"
    time.sleep(0.7)
    assert servers3.count(name) == 0  # expired with its TTL, unrenewed
