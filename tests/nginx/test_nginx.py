"""hiredlock inside a real nginx (ngx_lua): the cosocket driver against real
Redis masters, seen from an HTTP client, next to Python and plain-Lua
holders of the same locks.

Deadlines are upper bounds with room for a loaded 2-CPU machine; each claim
that could pass vacuously has a negative control beside it (the counter
without the lock, the blocking C driver inside nginx).
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

R5_TIMEOUT = 0.2  # the r5 client's per-master timeout (hrltest.lua)
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


def test_redlock_on_5_masters_with_masters_killed(ngx, servers5):
    name = unique("rl")
    try:
        servers5.ctl("kill", 4)
        servers5.ctl("kill", 5)
        r = ngx.get("/lock", c="r5", name=name, keep=1)
        assert r.status == 200, r.body
        token = r.headers["X-Token"]
        assert [servers5.redis(i).get(name) for i in (1, 2, 3)] == [token.encode()] * 3

        servers5.ctl("kill", 3)
        other = unique("rl")
        # With a wait, it tries until its deadline (a master may be back)
        # and says why then, as the C driver's waiters do.
        r = ngx.get("/lock", c="r5", name=other, timeout=1)
        assert r.status == 409
        assert r.body.startswith(
            "connection failed: 2 of 5 masters answered (3 needed); "
        ), r.body
        assert 1 <= r.elapsed < 1 + 2 * R5_TIMEOUT + 0.3
        r = ngx.get("/lock", c="r5", name=other, timeout=0)
        print(
            f"3 of 5 killed: failed after {r.elapsed * 1000:.1f} ms in nginx, "
            f"{r.took * 1000:.1f} ms at the client"
        )
        assert r.status == 409
        assert r.body.startswith(
            "connection failed: 2 of 5 masters answered (3 needed); "
        ), r.body
        # Without a wait, at once: within one per-master timeout.
        assert r.elapsed < R5_TIMEOUT + 0.1
        assert r.took < R5_TIMEOUT + 1.0
        # Python's C driver says the very same.
        py = hiredlock.Client(
            servers5.urls, connect_timeout=R5_TIMEOUT, timeout=R5_TIMEOUT
        )
        with pytest.raises(hiredlock.ConnectionError) as exc:
            py.lock(other, ttl=10).acquire(timeout=0)
        assert str(exc.value) == r.body
        assert [servers5.redis(i).exists(other) for i in (1, 2)] == [0, 0]
    finally:
        for i in (3, 4, 5):
            servers5.ctl("restart", i)
        for i in (1, 2):
            servers5.redis(i).delete(name)


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


def test_a_paused_master_costs_at_most_the_per_master_timeout(ngx, servers5):
    try:
        servers5.ctl("pause", 2)
        for _ in range(3):  # pooled connections, then fresh ones
            r = ngx.get("/lock", c="r5", name=unique("paused"))
            assert r.status == 200, r.body
            # acquire: one round, the paused master given up after 0.2 s
            assert r.elapsed < R5_TIMEOUT + 0.15
            # acquire and release (two rounds), seen from the client
            assert r.took < 2 * R5_TIMEOUT + 1.0
        servers5.ctl("pause", 1)
        servers5.ctl("pause", 3)
        r = ngx.get("/lock", c="r5", name=unique("paused"), timeout=0)
        assert r.status == 409
        assert re.match(
            r"connection failed: 2 of 5 masters answered \(3 needed\); "
            r"127\.0\.0\.1:\d+: timeout after 200 ms; "
            r"127\.0\.0\.1:\d+: timeout after 200 ms; "
            r"127\.0\.0\.1:\d+: timeout after 200 ms$",
            r.body,
        ), r.body
        # the attempt, then its cleanup round: two per-master timeouts
        print(f"3 of 5 paused: failed after {r.elapsed * 1000:.1f} ms in nginx")
        assert r.elapsed < 2 * R5_TIMEOUT + 0.15
    finally:
        for i in (1, 2, 3):
            servers5.ctl("resume", i)
    # What timed out was closed, not pooled: the late replies the resumed
    # masters send now cannot answer a later command. A resumed master is
    # known to be late (not waited for once a round is decided) until it
    # answers a command of a later round: rounds until all five have.
    for _ in range(20):
        r = ngx.get("/lock", c="r5", name=unique("resumed"))
        if (r.status, r.headers["X-Granted"]) == (200, "5"):
            break
    name = unique("resumed")
    r = ngx.get("/lock", c="r5", name=name, keep=1)
    assert (r.status, r.headers["X-Granted"]) == (200, "5"), r.body
    assert servers5.values(name) == [r.headers["X-Token"].encode()] * 5


def test_a_master_known_to_be_late_is_not_waited_for_once_settled(ngx, servers5):
    # Issue 24 item 4: a round ends once its outcome is decided. The first
    # cycle waits the per-master timeout once for paused master 2 (its
    # acquire), and master 2 is known to be late from then on; the worker's
    # next cycle (one connection: the same worker and client) does not wait
    # for it at all, in its acquire or its release: less than one
    # per-master timeout, where waiting costs two (0.4 s and more before).
    conn = ngx.connect()
    try:
        name = unique("settled")
        r = ngx.get("/lock", conn, c="r5", name=name)  # pools filled
        assert r.status == 200, r.body
        servers5.ctl("pause", 2)
        r = ngx.get("/lock", conn, c="r5", name=name, timeout=0)
        assert (r.status, r.headers["X-Granted"]) == (200, "4"), r.body
        assert r.elapsed >= R5_TIMEOUT - 0.01  # waited for it once
        for _ in range(2):
            r = ngx.get("/lock", conn, c="r5", name=name, timeout=0)
            assert (r.status, r.headers["X-Granted"]) == (200, "4"), r.body
            print(f"a cycle past a late master: {r.took * 1000:.1f} ms")
            assert r.took < R5_TIMEOUT, (r.took, r.elapsed)
    finally:
        servers5.ctl("resume", 2)
        conn.close()
    # What it owed was dropped, nothing was left behind once it ran.
    time.sleep(0.1)
    assert servers5.redis(2).exists(name) == 0


def test_a_timed_out_connection_never_answers_a_later_command(ngx, servers5):
    # Request A times out on paused master 2. Request B (same worker, so the
    # same pools) asks for a key that masters 1-3 refuse, and master 2 is
    # resumed while B waits for it. Had A's connection been pooled, B would
    # read A's late "+OK" as master 2 granting its SET: 3 of 5, a lock
    # reported held that a quorum refused.
    taken = unique("taken")
    for i in (1, 2, 3):
        servers5.redis(i).set(taken, "someone else", ex=30)
    conn = ngx.connect()
    try:
        servers5.ctl("pause", 2)
        r = ngx.get("/lock", conn, c="r5slow", name=unique("a"), keep=1)
        assert (r.status, r.headers["X-Granted"]) == (200, "4"), r.body
        threading.Timer(0.3, servers5.ctl, ("resume", 2)).start()
        r = ngx.get("/lock", conn, c="r5slow", name=taken, timeout=0)
        assert (r.status, r.body) == (409, "timeout")
        assert servers5.values(taken)[:3] == [b"someone else"] * 3
    finally:
        time.sleep(0.5)
        servers5.ctl("resume", 2)  # a no-op once the timer did it
        conn.close()


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


def test_an_unfinished_release_ends_the_hold_and_a_retry_finishes_it(ngx, servers5):
    # Granted by 3 of 5 (masters 4 and 5 hold another token); master 3 is
    # stopped while the release runs: 2 of 3 needed confirmations. The
    # stopped master gets the release late, when it wakes up; its "no key"
    # to the retry is that release's doing, not "not owned".
    name = unique("partial")
    for i in (4, 5):
        servers5.redis(i).set(name, "someone else", ex=30)
    t = threading.Timer(0.25, servers5.ctl, ("pause", 3))
    t.start()
    resume = threading.Timer(0.75, servers5.ctl, ("resume", 3))
    resume.start()
    try:
        r = ngx.get("/release_twice", c="r5", name=name, ttl=30, pause=0.5)
    finally:
        t.join()
        resume.join()
        servers5.ctl("resume", 3)
    assert r.status == 200, r.body
    first, held, second = r.body.split("|")
    assert re.match(
        r"connection failed: 2 of 5 masters confirmed \(3 needed\)", first
    ), first
    assert held == "not held"
    assert second == "true"
    assert servers5.values(name)[:3] == [None] * 3


def test_a_late_master_without_its_scripts_still_releases(ngx, servers5):
    name = unique("noscript")
    r = ngx.get("/lock", c="r5", name=name)  # the scripts are loaded
    assert r.status == 200, r.body

    def stop_master_5():
        servers5.redis(5).script_flush()
        servers5.ctl("pause", 5)

    t = threading.Timer(0.2, stop_master_5)
    t.start()
    try:
        r = ngx.get("/lock", c="r5", name=name, ttl=60, hold=0.5)
        assert r.status == 200, r.body  # 4 of 5 confirmed the release
    finally:
        t.join()
        servers5.ctl("resume", 5)
    deadline = time.monotonic() + 2
    while servers5.get(5, name) is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert servers5.get(5, name) is None


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


def stats(ngx) -> tuple[int, int]:
    """The driver's new and reused connections, summed over the workers."""
    new = reused = 0
    for line in ngx.get("/stats").body.splitlines():
        _, n, r, *_ = (int(x) for x in line.split())
        new, reused = new + n, reused + r
    return new, reused


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
    # Last in this file: after every test above ran against this nginx.
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
