"""The cosocket driver's connections inside a real nginx: keepalive pools
reused (what the driver counts is what Redis saw), kept apart by database
and credentials, dropped when their master restarts; a handshake the
masters refuse leaves no key, and one answered late carries over to the
lock's next round on the same connection.
"""

from __future__ import annotations

import re
import threading
import time
import uuid

import pytest
from pytest_redis import TOLERANT

import hiredlock


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


def stats(ngx) -> tuple[int, int]:
    """The driver's new and reused connections, summed over the workers."""
    new = reused = 0
    for line in ngx.get("/stats").body.splitlines():
        _, n, r, *_ = (int(x) for x in line.split())
        new, reused = new + n, reused + r
    return new, reused


def test_a_slow_handshake_carries_over_to_a_later_round(ngx, servers3):
    """A new connection to a master that accepts but answers its handshake
    (SELECT) only 500 ms later: a waiting acquire's first round misses (50
    ms per master), the handshake carries over to its next round in the
    request (connect_timeout 2 s), which reads its replies and sends the
    SET on that one connection. Before, every round closed the unanswered
    handshake and opened another one."""
    name = unique("slowhs")
    new0, _ = stats(ngx)
    servers3.ctl("pause", 1)
    resumed_at = []

    def resume() -> None:
        resumed_at.append(time.monotonic())
        servers3.ctl("resume", 1)

    t = threading.Timer(0.5, resume)
    t.start()
    try:
        r = ngx.get("/lock", c="slowhs1", name=name, timeout=2)
        done_at = time.monotonic()
    finally:
        t.join()
    assert r.status == 200, r.body
    assert done_at >= resumed_at[0]  # answered by the resumed master
    # The driver's new connections (its subscriber's are not counted): the
    # worker publishes them from the request's log phase, just after it.
    deadline = time.monotonic() + 5
    while stats(ngx)[0] == new0 and time.monotonic() < deadline:
        time.sleep(0.05)
    new1, _ = stats(ngx)
    # the release took it from the pool
    assert new1 - new0 == 1, ngx.get("/stats").body


@pytest.mark.parametrize(
    "config, text",
    [
        ("db99", "server error: .*DB index is out of range"),
        ("nopw", "authentication failed: .*AUTH"),
    ],
)
def test_a_refused_handshake_leaves_no_key(ngx, servers3, config, text):
    # The command waits for the handshake's replies: pipelined behind a
    # refused AUTH or SELECT, it would run anyway, in db 0.
    name = unique("handshake")
    r = ngx.get("/lock", c=config, name=name)
    assert r.status == 409
    assert re.match(text, r.body), r.body
    assert servers3.values(name) == [None] * 3


def test_keepalive_pools_are_reused(ngx, servers3):
    # ka3: the same masters, database 2, so a pool no other test warmed.
    received = [servers3.connections_received(i) for i in (1, 2, 3)]
    new0, reused0 = stats(ngx)
    for _ in range(100):  # acquire + release: 2 rounds x 3 masters each
        assert ngx.get("/lock", c="ka3", name=unique("ka")).status == 200
    # Each worker publishes its counters from its log phase, just after
    # the response: wait until the last request's are in.
    deadline = time.monotonic() + 5
    new1, reused1 = stats(ngx)
    while new1 + reused1 - new0 - reused0 < 600 and time.monotonic() < deadline:
        time.sleep(0.01)
        new1, reused1 = stats(ngx)
    opened = sum(servers3.connections_received(i) for i in (1, 2, 3)) - sum(received)
    new, reused = new1 - new0, reused1 - reused0
    print(
        f"keepalive: {reused} of {new + reused} exchanges on pooled "
        f"connections, {opened} connections opened"
    )
    assert new + reused == 600
    assert new == opened  # what the driver counts is what Redis saw
    assert new >= 3  # the pool started cold: one connection per master at least
    assert reused / (new + reused) >= 0.95


def test_a_restarted_master_is_reconnected(ngx, servers3):
    # Pooled connections to master 2 die with it; the next lock must still
    # be granted by all three (the pool drops the dead ones).
    assert ngx.get("/lock", name=unique("warm")).status == 200
    servers3.ctl("restart", 2)
    name = unique("restart")
    r = ngx.get("/lock", name=name, keep=1, timeout=0)
    assert (r.status, r.headers["X-Granted"]) == (200, "3"), r.body
    assert servers3.values(name) == [r.headers["X-Token"].encode()] * 3


def test_pools_keep_databases_and_credentials_apart(ngx, servers3, servers_pw):
    # c3 has pooled connections to database 0 by now; c3db1 must not get
    # them (no SELECT would be sent).
    ngx.get("/lock", c="c3", name=unique("warm"))
    name = unique("db1")
    r = ngx.get("/lock", c="c3db1", name=name, keep=1)
    assert r.status == 200, r.body
    assert servers3.values(name, db=1) == [r.headers["X-Token"].encode()] * 3
    assert servers3.values(name, db=0) == [None] * 3

    # An authenticated pooled connection must not serve a wrong password.
    assert ngx.get("/lock", c="pw", name=unique("pw")).status == 200
    r = ngx.get("/lock", c="badpw", name=unique("pw"))
    assert r.status == 409
    py = hiredlock.Client(servers_pw.urls[0].replace(":pw@", ":wrong@"), **TOLERANT)
    with pytest.raises(hiredlock.LockError) as exc:
        py.lock("pw", ttl=10).acquire(timeout=0)
    assert r.body == str(exc.value)
    assert r.body.startswith("authentication failed: 0 of 1 masters answered")
    assert ngx.get("/lock", c="pw", name=unique("pw")).status == 200
