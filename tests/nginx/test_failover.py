"""Failover safety inside nginx, through the cosocket driver (the WAIT
behind a write, WAITAOF's array, the INFO of the handshake are the
protocol's; the driver moves their bytes): a replica stopped
(sync_replicas), one server under two names, WAITAOF on Valkey 9, and a
master restarted empty (restart_guard), each beside the same scenario
without the option."""

from __future__ import annotations

import re
import time
import uuid


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


def test_replica_acknowledges_or_no_vote(ngx, replicated):
    name = unique("ngx-fo")
    r = ngx.get("/lock", c="rep1", name=name, sync="1", keep="1", timeout="5")
    assert r.status == 200, r.body
    assert replicated.redis("r1").get(name) == r.headers["X-Token"].encode()
    replicated.redis(1).delete(name)
    replicated.kill("r1")
    try:
        r = ngx.get("/lock", c="rep1", name=name, sync="1")
        assert r.status == 409
        port = replicated.ports[0]
        assert r.body == (
            "server error: 0 of 1 masters answered (1 needed); "
            f"127.0.0.1:{port}: 0 of 1 replicas acknowledged"
        )
        assert replicated.get(1, name) is None  # cleaned up
        # Without the option the master alone grants it.
        r = ngx.get("/lock", c="rep1", name=name)
        assert r.status == 200, r.body
    finally:
        replicated.restart("r1")


def test_one_server_under_two_names(ngx, servers3):
    name = unique("ngx-fo")
    port = servers3.ports[0]
    for _ in range(2):  # at the first handshake, then at once
        r = ngx.get("/lock", c="alias3", name=name)
        assert r.status == 409
        assert re.fullmatch(
            rf"invalid argument: masters 127\.0\.0\.1:{port} and localhost:{port}"
            r" are one server \(run_id [0-9a-f]{12}\.\.\.\): Redlock needs"
            r" independent masters",
            r.body,
        ), r.body
    assert servers3.count(name) == 0


def test_waitaof(ngx, valkey_aof):
    name = unique("ngx-fo")
    r = ngx.get("/lock", c="valkey", name=name, sync="1", aof="1", timeout="10")
    assert r.status == 200, r.body
    # Debian's Redis 7.0 has no WAITAOF: refused, never ignored.
    r = ngx.get("/lock", c="c3", name=name, aof="1")
    assert r.status == 409
    assert "sync_aof needs WAITAOF (Redis >= 7.2, Valkey >= 8)" in r.body


def test_restart_guard(ngx, guarded3):
    """Lock A on masters 1 and 2 while 3 is down; 1 restarts empty and 3
    comes back: without the guard a second lock is granted by 1 and 3,
    with it the restarted masters give no vote."""
    name = unique("ngx-fo")
    time.sleep(3.2)  # the servers are older than the guard
    for c in ("guard3", "plain_guard3"):  # every worker's connections up
        for _ in range(4):
            assert ngx.get("/lock", c=c, name=unique("warm")).status == 200
    guarded3.kill(3)
    assert ngx.get("/lock", c="plain_guard3", name=name, keep="1").status == 200
    guarded3.restart(1)
    guarded3.restart(3)
    r = ngx.get("/lock", c="guard3", name=name)
    if r.status == 409 and "server closed the connection" in r.body:
        r = ngx.get("/lock", c="guard3", name=name)  # a pooled one, closed
    assert r.status == 409
    assert re.search(
        rf"127\.0\.0\.1:{guarded3.ports[0]}: r?e?started [01] s ago.*, under"
        r" restart_guard \(3 s\): no vote",
        r.body,
    ), r.body
    r = ngx.get("/lock", c="plain_guard3", name=name, keep="1")
    assert r.status == 200, r.body  # the double grant, without the guard
