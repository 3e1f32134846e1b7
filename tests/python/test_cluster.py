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


def test_refused_fenced_acquire_leaves_no_stray_key(cluster3, name):
    # The lock held on the node the slot leaves, its counter migrated
    # already: the rival's SET is refused there and its INCR redirected,
    # and the pipeline must not go again to the importing node (before: the
    # key on both nodes, holding the lock for the rival's TTL).
    holder_c, rival_c = client(cluster3), client(cluster3)
    slot, home = cluster3.slot(name)
    to = home % 3 + 1
    holder, rival = holder_c.lock(name, fenced=True), rival_c.lock(name, fenced=True)
    assert holder.acquire(blocking=False)
    first = holder.fence
    try:
        cluster3.migrate(slot, to, "begin")
        assert cluster3.redis(home).execute_command(
            "MIGRATE", "127.0.0.1", cluster3.ports[to - 1], holder.fence_key, 0, 5000
        ) in (b"OK", "OK", True)
        assert not rival.acquire(blocking=False)
        assert not has_key(cluster3, to, name)
        holder.release()
        assert count(cluster3, name) == 0
        cluster3.migrate(slot, to, "keys")
        cluster3.migrate(slot, to, "end")
        assert rival.acquire(blocking=False)
        assert rival.fence > first
        rival.release()
    finally:
        cluster3.migrate(slot, home)


@pytest.mark.parametrize("fenced", [False, True], ids=["plain", "fenced"])
def test_waiting_through_a_migration(cluster3, name, fenced):
    # The slot held half-way through a migration (begin): the holder
    # releases at 0.3 s; a waiter takes the lock soon after on the lock key
    # alone (before: false after its 3 s). A fenced one waits for the end
    # of the migration (at 1.5 s) to be fenced (before: a server error at
    # once).
    holder_c, waiter_c = client(cluster3), client(cluster3)
    slot, home = cluster3.slot(name)
    to = home % 3 + 1
    holder = holder_c.lock(name, fenced=fenced)
    waiter = waiter_c.lock(name, fenced=fenced)
    assert holder.acquire(blocking=False)
    first = holder.fence
    cluster3.migrate(slot, to, "begin")
    ended = False  # the migration's end began

    def later() -> None:
        nonlocal ended
        time.sleep(0.3)
        holder.release()
        if fenced:
            time.sleep(1.2)
            ended = True  # from here on: its keys, then its end
            cluster3.migrate(slot, to, "keys")
            cluster3.migrate(slot, to, "end")

    thread = threading.Thread(target=later)
    thread.start()
    try:
        t0 = time.monotonic()
        assert waiter.acquire(timeout=5 if fenced else 3)
        took = time.monotonic() - t0
        assert took >= 0.25
        if fenced:
            assert ended and took >= 1.4 and waiter.fence > first
        else:
            assert took < 2.5
        waiter.release()
        assert count(cluster3, name) == 0
    finally:
        thread.join()
        cluster3.migrate(slot, home, "all" if fenced else "end")


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
