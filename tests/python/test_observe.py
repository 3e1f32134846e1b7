"""Owner labels, counters, events as ``logging`` records and the Prometheus
collector, in the sync and asyncio clients, against real Redis."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time

import prometheus_client
import pytest
from pytest_redis import TOLERANT
from redis_fixture import Servers

import hiredlock
import hiredlock.asyncio
from hiredlock.prometheus import HiredlockCollector


def label_of(servers, i: int, lock) -> bytes | None:
    name = lock.name if isinstance(lock.name, str) else lock.name.decode()
    return servers.get(i, f"{name}{{{name}}}:owner:{lock.token}")


def test_owner_labels(servers5, name):
    client = hiredlock.Client(servers5.urls, owner=True, **TOLERANT)
    lock = client.lock(name, 20)
    with lock:
        want = f"{socket.gethostname()}:{os.getpid()}".encode()
        assert servers5.values(name) == [lock.token.encode()] * 5  # redis-py's
        assert [label_of(servers5, i, lock) for i in range(1, 6)] == [want] * 5
        assert client.inspect(name).owner == want.decode()
    assert label_of(servers5, 1, lock) is None  # gone with the release
    other = client.lock(name, owner="job %p")
    with other:
        assert label_of(servers5, 3, other) == f"job {os.getpid()}".encode()
    none = client.lock(name, owner=False)
    with none:
        assert label_of(servers5, 1, none) is None
    with pytest.raises(ValueError, match="owner: % must be followed by h"):
        client.lock(name, owner="50%")
    with pytest.raises(TypeError, match="owner must be str, bool or None"):
        client.lock(name, owner=3)
    with pytest.raises(ValueError, match="owner must not contain control"):
        hiredlock.Client(servers5.urls, owner="a\nb")
    assert hiredlock.OPTIONS["owner"] is None


def test_stats_count_per_client(servers1, name):
    client = hiredlock.Client(servers1.urls, **TOLERANT)
    other = hiredlock.Client(servers1.urls, **TOLERANT)
    for _ in range(10):
        with client.lock(name):
            pass
    held = client.lock(name, 5)
    held.acquire()
    assert not other.lock(name).acquire(blocking=False)
    assert not other.lock(name).acquire(timeout=0.1)
    held.release()
    s, o = client.stats(), other.stats()
    assert (s["acquired"], s["released"], s["busy"]) == (11, 11, 0)
    assert (o["acquired"], o["busy"], o["waited"]) == (0, 2, 1)
    assert sum(s["wait_buckets"]) == 11 and len(s["wait_buckets"]) == 13
    assert s["wait_bounds"][0] == 0.001 and s["wait_bounds"][-1] == 10.0
    assert s["masters"] == [
        {"master": client.masters[0], "unreachable": 0, "errors": 0}
    ]


def test_stats_are_thread_safe(servers1, name):
    client = hiredlock.Client(servers1.urls, **TOLERANT)

    def work(k: int) -> None:
        lock = client.lock(f"{name}:{k}")
        for _ in range(50):
            with lock:
                pass

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = client.stats()
    assert (s["acquired"], s["released"], sum(s["wait_buckets"])) == (400,) * 3


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def kinds(self) -> list[str]:
        return [r.hiredlock_event["kind"] for r in self.records]


@pytest.fixture
def records():
    handler = Records()
    logger = logging.getLogger("hiredlock")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_events_are_logged_at_their_levels(records, name):
    servers = Servers(3)
    try:
        client = hiredlock.Client(servers.urls, slow_wait=0.05, **TOLERANT)
        lock = client.lock(name)
        for _ in range(20):  # the fast path logs nothing
            with lock:
                pass
        assert records.records == []
        servers.kill(2)
        with lock:
            pass
        servers.restart(2)
        with lock:
            pass
        down, up = records.records
        assert (down.levelno, up.levelno) == (logging.INFO, logging.INFO)
        assert down.getMessage().startswith(f"master {client.masters[1]} unreachable")
        assert up.hiredlock_event["kind"] == "master_up"
        assert up.hiredlock_event["master"] == client.masters[1]
        records.records.clear()

        # A lease taken from under it: WARNING, from the renewer's thread.
        lease = client.lock(name, 0.6, auto_renew=True)
        lease.acquire()
        for i in (1, 2, 3):
            servers.redis(i).set(name, "someone-else")
        for _ in range(300):
            if "lost" in records.kinds():
                break
            time.sleep(0.01)
        lost = records.records[records.kinds().index("lost")]
        assert lost.levelno == logging.WARNING
        assert lost.getMessage() == f"lock '{name}' lost: not owned"
        assert lost.hiredlock_event["name"] == name.encode()
        for i in (1, 2, 3):
            servers.redis(i).delete(name)

        # A wait longer than slow_wait: DEBUG.
        records.records.clear()
        holder = client.lock(name)
        holder.acquire()
        threading.Timer(0.2, holder.release).start()
        with client.lock(name, timeout=5):
            pass
        (slow,) = records.records
        assert slow.levelno == logging.DEBUG
        assert slow.hiredlock_event["kind"] == "slow_wait"
        assert slow.hiredlock_event["ms"] >= 150
        assert slow.getMessage().endswith("ms: acquired")
    finally:
        servers.stop(check=False)


@pytest.mark.asyncio
async def test_asyncio_logs_and_counts_the_same(records, name):
    servers = Servers(3)
    try:
        async with hiredlock.asyncio.Client(
            servers.urls, owner="async", **TOLERANT
        ) as client:
            lock = client.lock(name)
            for _ in range(5):
                async with lock:
                    pass
            assert records.records == []
            servers.kill(3)
            async with lock:
                assert label_of(servers, 1, lock) == b"async"
            assert records.kinds() == ["master_down"]
            s = client.stats()
            assert (s["acquired"], s["released"]) == (6, 6)
            assert s["masters"][2]["unreachable"] == 2
    finally:
        servers.stop(check=False)


def test_prometheus_collector(servers1, name):
    client = hiredlock.Client(servers1.urls, **TOLERANT)
    registry = prometheus_client.CollectorRegistry()
    collector = HiredlockCollector()
    collector.add(client, name="main")
    registry.register(collector)
    for _ in range(3):
        with client.lock(name):
            pass
    text = prometheus_client.generate_latest(registry).decode()
    get = registry.get_sample_value
    assert (
        get(
            "hiredlock_acquires_total",
            {"client": "main", "result": "acquired", "reason": ""},
        )
        == 3
    )
    assert get("hiredlock_releases_total", {"client": "main"}) == 3
    assert get("hiredlock_acquire_seconds_count", {"client": "main"}) == 3
    inf = {"client": "main", "le": "+Inf"}
    assert get("hiredlock_acquire_seconds_bucket", inf) == 3
    assert (
        get(
            "hiredlock_master_failures_total",
            {"client": "main", "master": client.masters[0], "kind": "unreachable"},
        )
        == 0
    )
    assert "# TYPE hiredlock_acquire_seconds histogram" in text
    assert "hiredlock_renewals_total" in text
