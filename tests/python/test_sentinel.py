"""A Sentinel-managed primary as one master (redis+sentinel://sentinels/
service) against real sentinels from the launcher (--sentinels 2): the
primary resolved through the sentinels, a failover (SENTINEL FAILOVER)
while threads take and release a lock, a sentinel that is down, a service
nobody knows, and one member of a quorum."""

from __future__ import annotations

import threading
import time

import pytest
from pytest_redis import TOLERANT

import hiredlock

TRANSIENT = ("server closed the connection", "connection reset by peer")


def client(sentinel2, url=None, **options) -> hiredlock.Client:
    return hiredlock.Client(url or sentinel2.sentinel_url, **{**TOLERANT, **options})


def test_resolves_the_primary(sentinel2, name):
    c = client(sentinel2)
    assert c.masters[0].startswith("hrl (sentinel 127.0.0.1:")
    primary = sentinel2.primary()
    lk = c.lock(name)
    for _ in range(5):
        with lk:
            assert sentinel2.get(primary, name) == lk.token.encode()
    assert sentinel2.get(primary, name) is None


def test_a_sentinel_down_and_an_unknown_service(sentinel2, name):
    sentinel2.kill("s1")
    with client(sentinel2).lock(name, timeout=0):
        assert sentinel2.get(sentinel2.primary(), name) is not None
    url = sentinel2.sentinel_url.rsplit("/", 1)[0] + "/nope"
    with pytest.raises(hiredlock.LockError, match="no primary known for service nope"):
        client(sentinel2, url).lock(name).acquire(blocking=False)


def test_failover_during_a_run(sentinel2, name):
    """Two threads take and release a lock while the sentinels fail over:
    every acquire succeeds (a copy of a lock the new primary kept, released
    on the old one after the promotion, is waited out: TTL 2 s), a lock
    taken after the old primary was demoted is on the new one, and nothing
    outlives its TTL. Releases that find the lock lost (held on the deposed
    primary only) are the failover caveat, counted."""
    old = sentinel2.primary()
    stop = threading.Event()
    errors: list[str] = []
    counts = {"cycles": 0, "lost": 0, "transient": 0}

    def failed(e: hiredlock.LockError) -> None:
        # A command out on a connection the deposed primary closes (as it
        # becomes a replica) fails that call; the next asks the sentinels.
        if isinstance(e, hiredlock.ConnectionError) and any(
            t in str(e) for t in TRANSIENT
        ):
            counts["transient"] += 1
        else:
            errors.append(repr(e))

    def loop() -> None:
        lk = client(sentinel2).lock(name, 2, timeout=5)
        while not stop.is_set():
            try:
                if not lk.acquire():
                    errors.append("not acquired within 5 s")
                    continue
            except hiredlock.LockError as e:
                failed(e)
                continue
            time.sleep(0.002)
            try:
                lk.release()
            except hiredlock.NotOwned:
                counts["lost"] += 1
            except hiredlock.LockError as e:
                failed(e)
            counts["cycles"] += 1

    threads = [threading.Thread(target=loop) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.3)
        new = sentinel2.failover(demoted=True)
        assert new != old
        time.sleep(0.5)
        after = client(sentinel2).lock(name + ":after")
        with after:
            assert sentinel2.get(new, name + ":after") == after.token.encode()
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    assert counts["transient"] <= 3
    assert counts["cycles"] > 10
    print(f"{counts['cycles']} cycles across the failover, {counts['lost']} lost,")
    print(f"{counts['transient']} failed as their connection closed")
    time.sleep(2.2)
    assert sentinel2.get(new, name) is None


def test_one_member_of_a_quorum(sentinel2, servers3, name):
    c = hiredlock.Client([sentinel2.sentinel_url, *servers3.urls[:2]], **TOLERANT)
    assert c.quorum == 2
    with c.lock(name, timeout=1):
        assert sentinel2.get(sentinel2.primary(), name) is not None
        assert servers3.count(name, alive=[1, 2]) == 2


@pytest.mark.parametrize(
    "url,message",
    [
        ("redis+sentinel://h:1", "the service name must follow the sentinels"),
        ("redis+sentinel://h:1/", "the service name must follow the sentinels"),
        ("redis+sentinel://h:1/a b", "%-escaped"),
        ("redis+sentinel://h:1/svc/x", "database must be a number after the service"),
        ("rediss+sentinel://h:1/svc", "is not supported"),
    ],
)
def test_bad_sentinel_urls(url, message):
    with pytest.raises(ValueError, match=message):
        hiredlock.Client(url)
