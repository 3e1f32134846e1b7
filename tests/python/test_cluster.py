"""A Redis Cluster as one master (redis+cluster://) against a real 3-node
cluster from the launcher (--cluster): the key on its slot's node, MOVED
and ASK during a slot migration driven stage by stage (the launcher's
migrate: CLUSTER SETSLOT, MIGRATE), a resharding while threads contend for
a lock (no lost lock, no two holders, no key left), and the cluster as one
member of a quorum."""

from __future__ import annotations

import threading
import time

import pytest
import redis
from pytest_redis import TOLERANT

import hiredlock


def client(cluster3, *more: str, **options) -> hiredlock.Client:
    return hiredlock.Client([cluster3.cluster_url, *more], **{**TOLERANT, **options})


def has_key(servers, i: int, key: str) -> bool:
    """Whether node i has key, as a client an ASK sent there sees it."""
    pipe = servers.redis(i).pipeline(transaction=False)
    pipe.execute_command("ASKING")
    pipe.exists(key)
    try:
        return pipe.execute()[1] == 1
    except redis.ResponseError:  # MOVED, ASK: not here
        return False


def count(servers, key: str) -> int:
    return sum(has_key(servers, i, key) for i in (1, 2, 3))


def stat(servers, i: int, section: str, field: str) -> int:
    info = servers.redis(i).info(section)
    value = info.get(field, {})
    return int(value.get("count", value.get("calls", 0))) if value else 0


def test_key_goes_to_its_slots_node(cluster3, name):
    c = client(cluster3)
    assert c.masters == (
        "cluster " + cluster3.cluster_url.removeprefix("redis+cluster://"),
    )
    _, owner = cluster3.slot(name)
    lk = c.lock(name)
    for _ in range(3):
        with lk:
            assert cluster3.redis(owner).get(name) == lk.token.encode()
            assert count(cluster3, name) == 1
    assert count(cluster3, name) == 0


def test_moved_after_a_migration(cluster3, name):
    c = client(cluster3)
    slot, owner = cluster3.slot(name)
    to = owner % 3 + 1
    with c.lock(name):  # learns the slot
        pass
    cluster3.migrate(slot, to)
    try:
        moved = stat(cluster3, owner, "errorstats", "errorstat_MOVED")
        lk = c.lock(name)
        with lk:
            assert cluster3.redis(to).get(name) == lk.token.encode()
        assert stat(cluster3, owner, "errorstats", "errorstat_MOVED") == moved + 1
        assert count(cluster3, name) == 0
    finally:
        cluster3.migrate(slot, owner)


def test_ask_during_a_migration(cluster3, name):
    c, rival = client(cluster3), client(cluster3)
    slot, home = cluster3.slot(name)
    to = home % 3 + 1
    lk, other = c.lock(name, 30), rival.lock(name)
    try:
        cluster3.migrate(slot, to, "begin")
        asking = stat(cluster3, to, "commandstats", "cmdstat_asking")
        assert lk.acquire(blocking=False)  # not on `home`: ASK
        assert stat(cluster3, to, "commandstats", "cmdstat_asking") > asking
        assert has_key(cluster3, to, name) and not has_key(cluster3, home, name)
        assert not other.acquire(blocking=False)
        lk.extend()
        lk.release()
        assert count(cluster3, name) == 0
        # Held on `home` while its key moves: extend and release follow it.
        cluster3.migrate(slot, home, "end")
        assert lk.acquire(blocking=False)
        cluster3.migrate(slot, to, "begin")
        cluster3.migrate(slot, to, "keys")
        assert has_key(cluster3, to, name)
        assert not other.acquire(blocking=False)
        lk.extend()
        cluster3.migrate(slot, to, "end")
        lk.release()
        assert count(cluster3, name) == 0
    finally:
        cluster3.migrate(slot, home)


def test_resharding_during_a_run(cluster3, name):
    """Four threads contend for one name while its slot moves around the
    three nodes stage by stage: every call succeeds, the holds never
    overlap, and no key is left."""
    slot, home = cluster3.slot(name)
    stop = threading.Event()
    inside = threading.Semaphore(1)
    errors: list[str] = []
    holds = [0]

    def contend() -> None:
        lk = client(cluster3).lock(name, 10, timeout=10)
        while not stop.is_set():
            try:
                with lk:
                    if not inside.acquire(blocking=False):
                        errors.append("two holders at once")
                        continue
                    time.sleep(0.0005)
                    inside.release()
                    holds[0] += 1
            except hiredlock.LockError as e:
                errors.append(repr(e))

    threads = [threading.Thread(target=contend) for _ in range(4)]
    for t in threads:
        t.start()
    at = home
    try:
        for _ in range(4):
            to = at % 3 + 1
            for stage in ("begin", "keys", "end"):
                cluster3.migrate(slot, to, stage)
                time.sleep(0.15)
            at = to
    finally:
        stop.set()
        for t in threads:
            t.join()
        if at != home:
            cluster3.migrate(slot, home)
    assert errors == []
    assert holds[0] > 10
    assert count(cluster3, name) == 0


def test_one_member_of_a_quorum(cluster3, servers3, name):
    c = client(cluster3, servers3.urls[0], servers3.urls[1])
    assert c.quorum == 2
    with c.lock(name, timeout=1):
        assert count(cluster3, name) == 1
        assert servers3.count(name, alive=[1, 2]) == 2


@pytest.mark.parametrize(
    "url,message",
    [
        ("redis+cluster://h:1,h:1", "an address is listed twice"),
        ("redis+cluster://h:1/2", "a cluster has no databases"),
        ("rediss+cluster://h:1", "TLS to a Redis Cluster or through Sentinel"),
    ],
)
def test_bad_cluster_urls(url, message):
    with pytest.raises(ValueError, match=message):
        hiredlock.Client(url)
