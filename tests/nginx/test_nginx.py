"""hiredlock inside a real nginx (ngx_lua): the cosocket driver against real
Redis masters, seen from an HTTP client, next to Python and plain-Lua
holders of the same locks.

Deadlines are upper bounds with room for a loaded 2-CPU machine; each claim
that could pass vacuously has a negative control beside it (the counter
without the lock, the blocking C driver inside nginx). Masters killed,
paused or late mid-round are test_faults.py's; keepalive pools and
handshakes test_connections.py's.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from pytest_redis import TOLERANT

import hiredlock
from conftest import HERE

PHASE_ERROR = (
    "cosockets unavailable in the {} phase (lock from rewrite, access, "
    "content or an ngx.timer)"
)


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


def plain_lua(interp: str, *args: str) -> str:
    """Runs tests/nginx/plain.lua under lua5.1 or LuaJIT with the rock tree
    nginx uses (the C driver: plain Lua)."""
    tree = os.environ["HRL_NGX_TREE"]
    env = {
        **os.environ,
        "LUA_PATH": f"{tree}/share/lua/5.1/?.lua;{tree}/share/lua/5.1/?/init.lua;"
        f"{HERE}/?.lua;{HERE.parent}/lua/?.lua;;",
        "LUA_CPATH": f"{tree}/lib/lua/5.1/?.so;;",
    }
    out = subprocess.run(
        [interp, str(HERE / "plain.lua"), *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout.strip()


def same_worker_pair(ngx):
    """Two kept-alive connections served by the same worker: nginx binds a
    connection to the worker that accepted it, so what one waits for cannot
    be what the other is served by. Of 8 connections to 2 workers, one
    worker has at least 2."""
    by_pid: dict[int, list] = {}
    for _ in range(8):
        conn = ngx.connect()
        by_pid.setdefault(ngx.get("/ping", conn).pid, []).append(conn)
    pid, conns = max(by_pid.items(), key=lambda kv: len(kv[1]))
    for other in by_pid.values():
        for conn in other:
            if conn not in conns[:2]:
                conn.close()
    return pid, conns[0], conns[1]


def ping_while_waiting(ngx, servers3, client_config, release_after):
    """Holds a lock from Python; a request on worker W waits for it (timeout
    3 s); meanwhile /ping goes to W every 50 ms. Returns the waiter's
    response, the ping latencies and whether every ping came back before the
    waiter did."""
    name = unique("wait")
    py = hiredlock.Client(servers3.urls, **TOLERANT)
    holder = py.lock(name, ttl=30)
    assert holder.acquire(timeout=5)
    pid, wait_conn, ping_conn = same_worker_pair(ngx)
    result = {}

    def waiter():
        result["resp"] = ngx.get(
            "/lock", wait_conn, c=client_config, name=name, timeout=3, ttl=10
        )
        result["done"] = time.monotonic()

    thread = threading.Thread(target=waiter)
    start = time.monotonic()
    thread.start()
    time.sleep(0.3)  # the waiter is in its retry loop by now
    latencies, pids = [], []
    while time.monotonic() - start < release_after:
        r = ngx.get("/ping", ping_conn)
        latencies.append(r.took)
        pids.append(r.pid)
        time.sleep(0.05)
    pings_done = time.monotonic()
    holder.release()
    thread.join(30)
    assert not thread.is_alive()
    wait_conn.close()
    ping_conn.close()
    assert set(pids) == {pid} and result["resp"].pid == pid
    return result["resp"], latencies, pings_done < result["done"]


def test_a_waiting_request_does_not_block_its_worker(ngx, servers3):
    resp, latencies, before = ping_while_waiting(ngx, servers3, "c3", 1.0)
    # The waiter got the lock once Python released it, after waiting for it.
    assert resp.status == 200, (resp.body, resp.elapsed, resp.took)
    assert resp.elapsed >= 0.3
    assert before, "every ping was answered while the request still waited"
    print(
        f"ping while waiting: median {statistics.median(latencies) * 1000:.1f} ms, "
        f"max {max(latencies) * 1000:.1f} ms over {len(latencies)} pings"
    )
    assert len(latencies) >= 5
    assert statistics.median(latencies) < 0.050
    assert max(latencies) < 0.5  # none waited for the lock


def test_negative_control_the_blocking_driver_stalls_the_worker(ngx, servers3):
    # The C driver's blocking sockets inside nginx: the same measurement
    # must see the worker stall, or it could not see anything.
    # The first ping waits for the whole 3 s wait of the blocked worker, so
    # Python releases only after the waiter gave up.
    resp, latencies, _ = ping_while_waiting(ngx, servers3, "blocking:c3", 1.0)
    assert (resp.status, resp.body) == (409, "timeout")
    assert max(latencies) > 1.0, latencies


def test_200_concurrent_increments_under_the_lock(ngx, servers3):
    key = unique("counter")
    t0 = time.monotonic()
    with ThreadPoolExecutor(50) as pool:
        codes = list(
            pool.map(lambda _: ngx.get("/counter", key=key).status, range(200))
        )
    print(f"200 locked increments, 50 at a time: {time.monotonic() - t0:.2f} s")
    assert codes == [200] * 200
    assert servers3.redis(1).get(key) == b"200"


def test_negative_control_the_increment_without_the_lock_loses_updates(ngx, servers3):
    key = unique("counter")
    with ThreadPoolExecutor(50) as pool:
        codes = list(
            pool.map(lambda _: ngx.get("/counter", key=key, lock=0).status, range(200))
        )
    assert codes == [200] * 200
    count = int(servers3.redis(1).get(key))
    print(f"without the lock: {count} of 200 increments kept")
    assert count < 200


def test_python_holds_nginx_waits_and_the_reverse(ngx, servers3):
    name = unique("interop")
    py = hiredlock.Client(servers3.urls, **TOLERANT)
    held = py.lock(name, ttl=10)
    assert held.acquire(timeout=5)
    r = ngx.get("/lock", name=name, timeout=0.3)
    assert (r.status, r.body) == (409, "timeout")
    assert servers3.values(name) == [held.token.encode()] * 3
    held.release()
    r = ngx.get("/lock", name=name, timeout=0.3)
    assert (r.status, r.body) == (200, "ok")

    # nginx holds (keep=1 leaves it to its TTL): Python cannot take it.
    r = ngx.get("/lock", name=name, keep=1, ttl=10)
    assert r.status == 200
    assert servers3.values(name) == [r.headers["X-Token"].encode()] * 3
    assert not py.lock(name, ttl=10).acquire(timeout=0.3)
    for i in range(1, 4):
        servers3.redis(i).delete(name)
    assert py.lock(name, ttl=10).acquire(timeout=0)


@pytest.mark.parametrize("interp", ["luajit", "lua5.1"])
def test_plain_lua_holds_nginx_waits_and_the_reverse(ngx, servers3, interp):
    urls = ",".join(servers3.urls)
    name = unique("plain")
    out = plain_lua(interp, "acquire", urls, name, "10", "0")
    assert out.startswith("ok "), out
    assert servers3.values(name) == [out[3:].encode()] * 3
    r = ngx.get("/lock", name=name, timeout=0.3)
    assert (r.status, r.body) == (409, "timeout")

    other = unique("plain")
    r = ngx.get("/lock", name=other, keep=1, ttl=10)
    assert r.status == 200
    assert plain_lua(interp, "acquire", urls, other, "10", "0.3") == "err timeout"
    assert servers3.values(other) == [r.headers["X-Token"].encode()] * 3


def test_extend_release_and_their_errors(ngx, servers3):
    name = unique("extend")
    # NOSCRIPT on every master: release and extend send the script again.
    for i in (1, 2, 3):
        servers3.redis(i).script_flush()
    r = ngx.get("/lock", name=name, ttl=5, extend=20, keep=1)
    assert (r.status, r.headers["X-Extend"]) == (200, "true")
    for i in (1, 2, 3):
        assert 19000 < servers3.redis(i).pttl(name) <= 20000
    for i in (1, 2, 3):
        servers3.redis(i).delete(name)
    r = ngx.get("/lock", name=name)
    assert (r.status, r.body) == (200, "ok")
    assert servers3.values(name) == [None] * 3

    # Taken over while held: extend and release say "not owned".
    def steal():
        time.sleep(0.3)
        for i in (1, 2, 3):
            servers3.redis(i).set(name, "thief")

    thief = threading.Thread(target=steal)
    thief.start()
    r = ngx.get("/lock", name=name, hold=0.6)
    thief.join()
    assert (r.status, r.body) == (500, "release: not owned")
    assert servers3.values(name) == [b"thief"] * 3


def test_with_releases_also_when_fn_raises(ngx, servers3):
    name = unique("with")
    r = ngx.get("/with", name=name)
    assert r.status == 200 and len(r.body) == 32
    r = ngx.get("/with", name=name, **{"raise": 1})
    assert r.status == 500 and r.body.startswith("raised ")
    assert servers3.values(name) == [None] * 3


def test_the_readme_example(ngx, servers3):
    r = ngx.get("/reports/build", id="1")
    assert (r.status, r.body) == (200, "built under report:1\n")
    py = hiredlock.Client(servers3.urls, **TOLERANT)
    held = py.lock("report:2", ttl=10)
    assert held.acquire(timeout=5)
    try:
        r = ngx.get("/reports/build", id="2")
        assert (r.status, r.body) == (409, "timeout\n")
        assert 2 <= r.took < 5
    finally:
        held.release()
    r = ngx.get("/reports/build", id="x" * 600)  # a name of 607 bytes
    assert r.status == 400
    assert (
        "bad argument #1 to 'acquire' (name must be 1 to 512 bytes, got 607)"
        in ngx.log_text()
    )
    # A name from the request that is lock report:1's queue key: refused
    # as a bad name, so no request can reach another lock's keys.
    r = ngx.get("/reports/build?id=1{report:1}:queue")
    assert r.status == 400
    assert (
        "bad argument #1 to 'acquire' (name must not make another lock's queue key"
        in ngx.log_text()
    )


def test_unix_socket_masters(ngx, servers3):
    name = unique("unix")
    r = ngx.get("/lock", c="unix3", name=name, keep=1)
    assert r.status == 200, r.body
    assert servers3.values(name) == [r.headers["X-Token"].encode()] * 3
    r = ngx.get("/lock", c="c3", name=name, timeout=0)
    assert (r.status, r.body) == (409, "timeout")


@pytest.mark.parametrize(
    "phase,path",
    [
        ("init", None),
        ("init_worker", None),
        ("set", "/phase/set"),
        ("header_filter", "/phase/header_filter"),
        ("log", "/phase/log"),
    ],
)
def test_phases_without_cosockets_say_so_at_once(ngx, phase, path):
    if path == "/phase/set":
        got = ngx.get(path).body
    elif path == "/phase/header_filter":
        got = ngx.get(path).headers["X-Hrl-Phase"]
    else:
        if path:
            assert ngx.get(path).status == 200
        deadline = time.monotonic() + 5
        got = ""
        while not got and time.monotonic() < deadline:  # log runs after the reply
            got = ngx.get("/phase", name=phase).body
            time.sleep(0.02)
    message, took = got.split("|")
    assert message == PHASE_ERROR.format(phase)
    assert float(took) < 0.05  # an answer, not a wait of the 1 s timeout


def test_a_timer_from_init_worker_can_lock(ngx):
    deadline = time.monotonic() + 5
    got = ""
    while not got and time.monotonic() < deadline:
        got = ngx.get("/phase", name="timer").body
        time.sleep(0.02)
    assert got.startswith("ok "), got


# Rows of the Lua bad-input table (tests/lua/helpers/bad_inputs.lua), by id.
BAD_CASES = [
    "empty_name",
    "long_name",
    "nil_name",
    "number_name",
    "negative_ttl",
    "short_ttl",
    "string_ttl",
    "nan_timeout",
    "unknown_option",
    "with_no_fn",
    "extend_ttl",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_requests_raise_as_in_plain_lua_and_the_worker_serves_on(
    ngx, servers3, case
):
    pid, conn, other = same_worker_pair(ngx)
    # The pcall idiom: the very message plain Lua raises, as a 400.
    r = ngx.get("/bad", conn, case=case, guard=1)
    assert (r.status, r.pid) == (400, pid)
    expected = plain_lua("luajit", "bad", case, ",".join(servers3.urls))
    # Plain Lua's message may start with the position of the C driver's call
    # (hiredlock/driver/hiredis.lua:NN:), which nginx leaves out.
    expected = re.sub(r"^raised (.*?:\d+: )?(?=bad argument #)", "", expected)
    assert expected.startswith("bad argument #")
    assert r.body == expected
    # Unguarded: ngx_lua turns the error into a 500 for this request only
    # (and closes its connection).
    r = ngx.get("/bad", conn, case=case, guard=0)
    assert r.status == 500
    assert "bad argument" not in r.body  # no error text to the client
    # The worker that raised serves the next request.
    assert ngx.get("/ping", other).pid == pid
    conn.close()
    other.close()
    assert ngx.workers() == ngx.initial_workers


def test_zz_the_error_log_holds_no_crash_or_alert(ngx):
    # Last in this file: after every test above, and those of the files
    # before this one in name order, ran against this (session's) nginx.
    assert ngx.workers() == ngx.initial_workers, "a worker was replaced"
    log = ngx.log_text()
    for bad in (
        "[alert]",
        "[emerg]",
        "[crit]",
        "exited on signal",
        "core dumped",
        "lua user thread aborted",
    ):
        assert bad not in log, [line for line in log.splitlines() if bad in line]
    # The unguarded bad requests are there, as [error] lines.
    assert (
        "lua entry thread aborted: runtime error: bad argument #1 to 'acquire'" in log
    )
