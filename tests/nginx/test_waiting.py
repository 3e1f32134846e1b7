"""Waiting inside nginx: a release in another runtime wakes a waiting
request (and a release in nginx wakes a waiter elsewhere), many waiting
requests share one subscriber connection per worker and master, also when
each request makes a client of its own, the worker serves other requests
meanwhile, and a quiet subscriber logs nothing. Masters over TLS and
through Sentinel are heard too. The patient clients never poll (a try
after 20 s at the latest without a hand-off): a wait that ends within
seconds was woken. Bounds leave room for a loaded machine."""

from __future__ import annotations

import contextlib
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
        _, _, _, _, s, h, *_ = (int(x) for x in line.split())
        subscribed, handoffs = subscribed + s, handoffs + h
    return subscribed, handoffs


def feeds(ngx) -> dict[int, int]:
    """Subscriber connections each worker (by pid) runs now."""
    lines = ngx.get("/stats").body.splitlines()
    return {int(line.split()[0]): int(line.split()[6]) for line in lines}


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


class Holder:
    """A Python holder of name (patient), and a look at its queue."""

    def __init__(self, servers, name: str, masters: int = 0) -> None:
        urls = servers.urls[:masters] if masters else servers.urls
        self.lock = hiredlock.Client(urls, **PATIENT).lock(name, ttl=30)
        assert self.lock.acquire(blocking=False)
        self.servers, self.name = servers, name


def stampede(ngx, holder: Holder, config: str, n: int) -> float:
    """n requests wait at once for holder's lock, each holding it 2 ms in
    its turn; returns the seconds from the release until the last one was
    served."""
    with ThreadPoolExecutor(n) as pool:
        futures = [
            pool.submit(
                ngx.get,
                "/lock",
                c=config,
                name=holder.name,
                timeout=15,
                ttl=10,
                hold=0.002,
            )
            for _ in range(n)
        ]
        with contextlib.suppress(AssertionError):  # the results say why
            holder.servers.queued(holder.name, n)
        t0 = time.monotonic()
        holder.lock.release()
        results = [f.result(40) for f in futures]
    took = time.monotonic() - t0
    bad = [(r.status, r.body) for r in results if r.status != 200]
    assert bad == [], f"{len(bad)} of {n} failed: {bad[:3]}"
    return took


def test_clients_made_per_request_share_the_worker_subscriber(ngx, servers3):
    """A client made inside the handler for every request (the habit
    lua-resty-redis teaches: hiredlock.new(url)) waits as well as one made
    per worker: three stampedes of 200 requests on one key, each request
    with a client of its own (patient: one that hears no hand-off waits
    20 s, past its 15 s timeout), are all served, and each worker keeps one
    subscriber connection for all of them (issue 24, item 1: every client
    had a timer and connections of its own for the worker's life; past
    lua_max_running_timers new waiters heard nothing and timed out). One
    master here; three in the next test."""
    ngx.get("/lock", c="fresh:patient1", name=unique("warm"), timeout=0)
    subscribed0, _ = listener_stats(ngx)
    feeds0 = feeds(ngx)
    for _ in range(3):
        name = unique("fresh")
        holder = Holder(servers3, name, masters=1)
        took = stampede(ngx, holder, "fresh:patient1", 200)
        print(f"200 requests, a client each, served in {took * 1000:.0f} ms")
    subscribed1, _ = listener_stats(ngx)
    # One subscription per worker (none when it was up already), and one
    # connection.
    assert subscribed1 - subscribed0 <= 2
    feeds1 = feeds(ngx)
    assert all(n - feeds0.get(pid, 0) <= 1 for pid, n in feeds1.items()), (
        feeds0,
        feeds1,
    )


def driver_connections(ngx) -> tuple[int, int]:
    """The driver's new and reused connections, summed over the workers."""
    new = reused = 0
    for line in ngx.get("/stats").body.splitlines():
        _, n, r, *_ = (int(x) for x in line.split())
        new, reused = new + n, reused + r
    return new, reused


def clients_of(servers, i: int) -> int:
    return int(servers.redis(i).info("clients")["connected_clients"])


def test_clients_of_three_masters_made_per_request_share_the_pools(ngx, servers3):
    """Clients of three masters made per request, which ask each server who
    it is (INFO in their handshake), share the worker's keepalive pools
    (issue 24, item 1): three stampedes of 200 requests on one key, a
    client each, are all served, and the workers keep no more connections
    to a master than their pools hold (lua_socket_pool_size, 30 a worker).
    Before, such a client kept pools of its own, left idle until
    lua_socket_keepalive_timeout: a connection per request and master
    stayed open, and a stampede ran a worker out of worker_connections."""
    ngx.get("/lock", c="fresh:patient3", name=unique("warm"), timeout=0)
    held0 = [clients_of(servers3, i) for i in (1, 2, 3)]
    new0, reused0 = driver_connections(ngx)
    for _ in range(3):
        holder = Holder(servers3, unique("fresh3"))
        took = stampede(ngx, holder, "fresh:patient3", 200)
        print(f"200 requests, a client of 3 masters each: {took * 1000:.0f} ms")
    new1, reused1 = driver_connections(ngx)
    held1 = [clients_of(servers3, i) for i in (1, 2, 3)]
    grown = max(b - a for a, b in zip(held0, held1))
    print(
        f"connections opened {new1 - new0}, reused {reused1 - reused0}; "
        f"left open to a master: {grown} more than before"
    )
    # two workers' pools, a subscriber each, the holders' connections
    assert grown <= 2 * 30 + 10


def set_idle(ngx, seconds: float) -> None:
    """Every worker closes a subscriber connection after seconds without
    waiters."""
    seen: set[int] = set()
    for _ in range(200):
        seen.add(ngx.get("/idle", s=seconds).pid)
        if seen >= ngx.workers():
            return
    raise AssertionError("not every worker was reached")


def db1_subscribers(servers) -> int:
    """Subscriber connections on node 1 that selected database 1."""
    clients = servers.redis(1).client_list()
    return sum(1 for c in clients if "P" in c["flags"] and c["db"] == "1")


def test_an_idle_subscriber_connection_closes(ngx, servers3):
    """A subscriber connection no request waited on for IDLE_S (60 s; 1 s
    here) closes, and its timer ends: a client made per request with
    masters of its own leaves nothing behind for long."""
    set_idle(ngx, 1)
    try:
        name = unique("idle")
        db1 = [url + "/1" for url in servers3.urls]
        holder = hiredlock.Client(db1, **PATIENT).lock(name, ttl=30)
        assert holder.acquire(blocking=False)
        result: dict = {}
        thread = threading.Thread(
            target=lambda: result.update(
                r=ngx.get("/lock", c="fresh:c3db1", name=name, timeout=10)
            )
        )
        thread.start()
        for _ in range(500):
            if db1_subscribers(servers3) >= 1:
                break
            time.sleep(0.01)
        assert db1_subscribers(servers3) >= 1
        holder.release()
        thread.join(15)
        assert result["r"].status == 200
        for _ in range(600):  # 1 s idle, then within the timer's next look
            if db1_subscribers(servers3) == 0:
                break
            time.sleep(0.01)
        assert db1_subscribers(servers3) == 0
    finally:
        set_idle(ngx, 60)


def test_a_quiet_subscriber_logs_nothing(ngx, servers3):
    """Once requests waited, the workers' subscriber connections sit
    quietly: no error line (issue 24, item 2: every worker logged "lua tcp
    socket read timed out, context: ngx.timer" every second per master)."""
    name = unique("quiet")
    holder = Holder(servers3, name)
    for _ in range(4):  # both workers, most likely
        r = ngx.get("/lock", c="patient3", name=unique("q"), timeout=0)
        assert r.status == 200
    with ThreadPoolExecutor(8) as pool:
        futures = [
            pool.submit(ngx.get, "/lock", c="patient3", name=name, timeout=10)
            for _ in range(8)
        ]
        servers3.queued(name, 8)
        holder.lock.release()
        assert [f.result(30).status for f in futures] == [200] * 8
    before = len(ngx.log_text().splitlines())
    time.sleep(3.5)
    lines = ngx.log_text().splitlines()[before:]
    errors = [line for line in lines if "[error]" in line or "[alert]" in line]
    print(f"{len(lines)} log lines in 3.5 s after waits, {len(errors)} errors")
    assert errors == []


def test_a_release_wakes_a_waiting_request_over_tls(ngx, tls1, resolver):
    url = tls1.tls_urls[0].replace("127.0.0.1", "localhost")
    ca = {"ssl_ca_certs": f"{tls1.tls_dir}/ca.crt"}
    name = unique("tls-wake")
    holder = hiredlock.Client(url, **PATIENT, **ca).lock(name, ttl=30)
    assert holder.acquire(blocking=False)
    result = {}
    thread = threading.Thread(
        target=lambda: result.update(
            r=ngx.get("/lock", c="tls_patient", name=name, timeout=15, ttl=10)
        )
    )
    thread.start()
    tls1.queued(name, 1)
    time.sleep(0.3)
    t0 = time.monotonic()
    holder.release()
    thread.join(20)
    assert (result["r"].status, result["r"].body) == (200, "ok")
    assert time.monotonic() - t0 < 3  # woken: not the 20 s cap


def subscribers_on(servers, node: int) -> int:
    """hiredlock channels with a subscriber on node."""
    return len(servers.redis(node).pubsub_channels("*hiredlock:wake:*"))


def test_a_release_wakes_a_waiting_request_through_sentinel(ngx, sentinels):
    """Through a Sentinel-managed primary (issue 24, item 7: none had a
    subscriber), also after a failover: the subscriber asks the sentinels
    again when the deposed primary closes it, and subscribes at the new
    primary."""
    for failover in (False, True):
        if failover:
            old = sentinels.primary()
            assert sentinels.failover(demoted=True) != old
        primary = sentinels.primary()
        name = unique("st-wake")
        holder = hiredlock.Client(sentinels.sentinel_url, **PATIENT).lock(name, ttl=30)
        assert holder.acquire(timeout=5)
        result: dict = {}
        thread = threading.Thread(
            target=lambda name=name, result=result: result.update(
                r=ngx.get("/lock", c="sentinel_patient", name=name, timeout=15)
            )
        )
        thread.start()
        for _ in range(1000):
            if sentinels.redis(primary).zcard(f"{name}{{{name}}}:queue"):
                break
            time.sleep(0.005)
        for _ in range(500):  # its subscription is up on the primary
            if subscribers_on(sentinels, primary) >= 1:
                break
            time.sleep(0.01)
        assert subscribers_on(sentinels, primary) >= 1
        t0 = time.monotonic()
        holder.release()
        thread.join(20)
        assert (result["r"].status, result["r"].body) == (200, "ok"), result["r"].body
        assert time.monotonic() - t0 < 3  # woken: not the 20 s cap
