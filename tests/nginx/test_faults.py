"""The cosocket driver inside a real nginx with masters killed, paused or
late mid-round: the quorum's errors as the C driver words them, a paused
master costing at most the per-master timeout (and nothing once it is known
to be late and the round is decided without it), a late reply never
answering a later command, releases that finish late or without scripts.

Deadlines are upper bounds with room for a loaded 2-CPU machine
(tests/nginx/test_nginx.py has the application's other tests).
"""

from __future__ import annotations

import re
import threading
import time
import uuid

import pytest

import hiredlock

R5_TIMEOUT = 0.2  # the r5 client's per-master timeout (hrltest_configs.lua)


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


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
