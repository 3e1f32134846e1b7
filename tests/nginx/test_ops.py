"""Operability inside nginx (the cosocket driver): an inspection of a
state built by hand on three masters (a holder, three waiters, a master
stopped), the events in nginx's error log at their levels, and
hiredlock.prometheus() for a /metrics location."""

from __future__ import annotations

import re
import time
import uuid

from pytest_redis import TOLERANT

import hiredlock

HOLDER = "aaaaaaaa11112222333344445555aaaa"
WAITERS = [
    "b1b1b1b111112222333344445555bbbb",
    "c2c2c2c211112222333344445555cccc",
    "d3d3d3d311112222333344445555dddd",
]


def sibling(name: str, suffix: str) -> str:
    return f"{name}{{{name}}}{suffix}"


def build(servers, i: int, name: str) -> None:
    r = servers.redis(i)
    r.set(name, HOLDER, px=20000)
    r.set(sibling(name, ":owner:") + HOLDER, "web-1:4242", px=20000)
    r.set(sibling(name, ":fence"), 7)
    sec, usec = r.time()
    now_ms = sec * 1000 + usec // 1000
    arrival = time.time_ns() // 1000
    for k, token in enumerate(WAITERS):
        r.zadd(sibling(name, ":queue"), {token: arrival - (3 - k) * 1_000_000})
        r.hset(sibling(name, ":waiters"), token, f"{now_ms + (5 - k) * 1000} 1 x")
    r.set(sibling(name, ":owner:") + WAITERS[0], "worker-1", px=20000)


def fields(body: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in body.splitlines())


def test_an_inspection_in_nginx(ngx, servers3):
    name = f"ops:{uuid.uuid4().hex[:12]}"
    for i in (1, 2, 3):
        build(servers3, i, name)
    servers3.pause(3)
    try:
        r = ngx.get("/inspect", c="c3", name=name)
    finally:
        servers3.resume(3)
    assert r.status == 200, r.body
    f = fields(r.body)
    assert (f["state"], f["held"], f["token"], f["owner"], f["fence"]) == (
        "held", "true", "aaaaaaaa", "web-1:4242", "7"
    )  # fmt: skip
    assert (f["quorum"], f["answered"], f["holding"]) == ("2", "2", "2")
    for m in ("1", "2"):
        assert f[f"masters.{m}.ok"] == "true"
        assert f[f"masters.{m}.queued"] == "3"
        assert [f[f"masters.{m}.waiters.{k}.token"] for k in "123"] == [
            t[:8] for t in WAITERS
        ]
        assert f[f"masters.{m}.waiters.1.owner"] == "worker-1"
        assert f"masters.{m}.waiters.3.owner" not in f
    assert f["masters.3.ok"] == "false"
    assert f["masters.3.error"].startswith("connection failed: timeout")
    # The same state, read by Python: the same fields.
    ins = hiredlock.Client(servers3.urls, **TOLERANT).inspect(name)
    assert (ins.token, ins.owner, ins.fence, ins.holding) == (
        "aaaaaaaa", "web-1:4242", 7, 3
    )  # fmt: skip


def test_events_go_to_the_error_log(ngx, servers3):
    """Master 3 stopped, then back: INFO lines in the error log, from the
    worker that ran the requests."""
    name = f"ops:{uuid.uuid4().hex[:12]}"
    conn = ngx.connect()
    assert ngx.get("/lock", conn, c="c3", name=name).status == 200
    servers3.pause(3)
    try:
        r = ngx.get("/lock", conn, c="c3", name=name)
    finally:
        servers3.resume(3)
    assert r.status == 200, r.body
    assert ngx.get("/lock", conn, c="c3", name=name).status == 200
    log = ngx.log_text()
    port = servers3.urls[2].rsplit(":", 1)[1]
    down = re.search(
        rf"\[info\] .*hiredlock: master 127\.0\.0\.1:{port} unreachable: "
        r"timeout after \d+ ms",
        log,
    )
    up = re.search(
        rf"\[info\] .*hiredlock: master 127\.0\.0\.1:{port} answers again after",
        log,
    )
    assert down and up and down.start() < up.start(), log[-2000:]


def test_metrics_location(ngx):
    name = f"ops:{uuid.uuid4().hex[:12]}"
    conn = ngx.connect()
    for _ in range(3):
        assert ngx.get("/lock", conn, c="c3", name=name).status == 200
    r = ngx.get("/metrics", conn)
    assert r.status == 200
    assert "# TYPE hiredlock_acquire_seconds histogram" in r.body
    acquired = [
        int(v)
        for v in re.findall(
            r'hiredlock_acquires_total\{client="\d+",worker="\d+",'
            r'result="acquired",reason=""\} (\d+)',
            r.body,
        )
    ]
    assert acquired and sum(acquired) >= 3
