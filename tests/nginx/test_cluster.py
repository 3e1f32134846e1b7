"""A Redis Cluster as one master inside nginx: the cosocket driver follows
MOVED and ASK (a pool per node), a lock held across a slot migration is
released where its key went, and requests counting under the lock while
the slot moves around the cluster never overlap and leave no key."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import redis
from pytest_redis import TOLERANT

import hiredlock


def unique(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:12]}"


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
    value = servers.redis(i).info(section).get(field, {})
    return int(value.get("count", value.get("calls", 0))) if value else 0


def lock(ngx, name: str, **args):
    return ngx.get("/lock", c="cluster", name=name, **args)


def test_key_on_its_slots_node(ngx, cluster3):
    name = unique("ngx-cl")
    _, owner = cluster3.slot(name)
    r = lock(ngx, name, keep="1")
    assert r.status == 200, r.body
    assert cluster3.redis(owner).get(name) == r.headers["X-Token"].encode()
    cluster3.redis(owner).delete(name)
    for _ in range(10):
        assert lock(ngx, name).status == 200
    assert count(cluster3, name) == 0


def test_moved_and_ask(ngx, cluster3):
    name = unique("ngx-cl")
    slot, home = cluster3.slot(name)
    to = home % 3 + 1
    conn = ngx.connect()  # kept alive: one worker, whose slot map is known
    try:
        assert lock(ngx, name, conn=conn).status == 200  # it learns the slot
        cluster3.migrate(slot, to, "begin")
        asking = stat(cluster3, to, "commandstats", "cmdstat_asking")
        r = lock(ngx, name, conn=conn, keep="1")  # no key on `home`: ASK
        assert r.status == 200, r.body
        assert stat(cluster3, to, "commandstats", "cmdstat_asking") > asking
        assert has_key(cluster3, to, name) and not has_key(cluster3, home, name)
        cluster3.migrate(slot, to, "keys")
        cluster3.migrate(slot, to, "end")
        moved = stat(cluster3, home, "errorstats", "errorstat_MOVED")
        assert lock(ngx, name, conn=conn).status == 409  # kept: held
        assert stat(cluster3, home, "errorstats", "errorstat_MOVED") > moved
        cluster3.redis(to).delete(name)
        moved = stat(cluster3, home, "errorstats", "errorstat_MOVED")
        for _ in range(4):  # learnt: straight to `to`
            assert lock(ngx, name, conn=conn).status == 200
        assert stat(cluster3, home, "errorstats", "errorstat_MOVED") == moved
    finally:
        conn.close()
        cluster3.migrate(slot, home)
    assert count(cluster3, name) == 0


def test_held_lock_follows_its_key(ngx, cluster3):
    name = unique("ngx-cl")
    slot, home = cluster3.slot(name)
    to = home % 3 + 1
    assert lock(ngx, name).status == 200
    result = {}
    holder = threading.Thread(
        target=lambda: result.update(r=lock(ngx, name, hold="1.5", ttl="30"))
    )
    holder.start()
    try:
        deadline = time.monotonic() + 5
        while count(cluster3, name) == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        cluster3.migrate(slot, to, "begin")
        cluster3.migrate(slot, to, "keys")  # moved while held
        assert has_key(cluster3, to, name)
        holder.join()
        assert result["r"].status == 200, result["r"].body  # released there
    finally:
        holder.join()
        cluster3.migrate(slot, to, "end")
        cluster3.migrate(slot, home)
    assert count(cluster3, name) == 0


def test_refused_fenced_acquire_leaves_no_stray_key(ngx, cluster3):
    # The lock held on the node its slot leaves (a Python holder), its
    # counter migrated already: nginx's fenced acquire is refused there and
    # its INCR asked elsewhere; the pipeline must not go to the importing
    # node (before: a key there too, holding the lock for the TTL).
    name = unique("ngx-cl")
    slot, home = cluster3.slot(name)
    to = home % 3 + 1
    holder = hiredlock.Client(cluster3.cluster_url, **TOLERANT).lock(name, fenced=True)
    assert holder.acquire(blocking=False)
    first = holder.fence
    try:
        cluster3.migrate(slot, to, "begin")
        assert cluster3.redis(home).execute_command(
            "MIGRATE", "127.0.0.1", cluster3.ports[to - 1], holder.fence_key, 0, 5000
        ) in (b"OK", "OK", True)
        r = lock(ngx, name, fenced="1")
        assert (r.status, r.body) == (409, "timeout")
        assert not has_key(cluster3, to, name)
        holder.release()
        assert count(cluster3, name) == 0
        cluster3.migrate(slot, to, "keys")
        cluster3.migrate(slot, to, "end")
        r = lock(ngx, name, fenced="1")
        assert r.status == 200, r.body
        assert int(r.headers["X-Fence"]) > first
    finally:
        cluster3.migrate(slot, home)
    assert count(cluster3, name) == 0


def test_waiting_through_a_migration(ngx, cluster3):
    # The slot held half-way through a migration (begin) while a Python
    # holder releases at 0.3 s: nginx's waiter takes the lock soon after, on
    # the lock key alone (before: 409 "timeout" after its 3 s); a fenced
    # one waits for the migration's end at 1.5 s (before: an error at once).
    for fenced in ("0", "1"):
        name = unique("ngx-cl")
        slot, home = cluster3.slot(name)
        to = home % 3 + 1
        holder = hiredlock.Client(cluster3.cluster_url, **TOLERANT).lock(
            name, fenced=fenced == "1"
        )
        assert holder.acquire(blocking=False)
        first = holder.fence or 0
        cluster3.migrate(slot, to, "begin")

        def later(fenced=fenced, slot=slot, to=to, holder=holder) -> None:
            time.sleep(0.3)
            holder.release()
            if fenced == "1":
                time.sleep(1.2)
                cluster3.migrate(slot, to, "keys")
                cluster3.migrate(slot, to, "end")

        thread = threading.Thread(target=later)
        thread.start()
        try:
            r = lock(ngx, name, fenced=fenced, timeout="5" if fenced == "1" else "3")
            assert r.status == 200, r.body
            elapsed = float(r.headers["X-Elapsed"])
            if fenced == "1":
                assert elapsed >= 1.4 and int(r.headers["X-Fence"]) > first
            else:
                assert 0.25 <= elapsed < 2.5, elapsed
        finally:
            thread.join()
            cluster3.migrate(slot, home, "all" if fenced == "1" else "end")
        assert count(cluster3, name) == 0


def test_counting_under_the_lock_while_resharding(ngx, cluster3, servers3):
    key = unique("ngx-cl-count")
    slot, home = cluster3.slot("lock:" + key)
    n = 48

    def count_once(_):
        return ngx.get("/counter", c="cluster", key=key).status

    at = home
    with ThreadPoolExecutor(8) as pool:
        statuses = pool.map(count_once, range(n))
        for _ in range(3):
            to = at % 3 + 1
            for stage in ("begin", "keys", "end"):
                cluster3.migrate(slot, to, stage)
                time.sleep(0.1)
            at = to
        statuses = list(statuses)
    if at != home:
        cluster3.migrate(slot, home)
    assert statuses == [200] * n
    assert int(servers3.redis(1).get(key)) == n
    assert count(cluster3, "lock:" + key) == 0
