"""Inspections and ``hiredlock status`` against a state built by hand on
three real masters (a holder with a label and a fence, three waiters in
line, one master down), read by the sync client, the asyncio client and the
command, which agree field by field; the verdicts and exit statuses; and an
inspection that writes nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
from pytest_redis import TOLERANT
from redis_fixture import Servers

import hiredlock
import hiredlock.asyncio

HOLDER = "aaaaaaaa11112222333344445555aaaa"
WAITERS = [
    "b1b1b1b111112222333344445555bbbb",
    "c2c2c2c211112222333344445555cccc",
    "d3d3d3d311112222333344445555dddd",
]


def sibling(name: str, suffix: str) -> str:
    return f"{name}{{{name}}}{suffix}"


def build(servers: Servers, i: int, name: str) -> tuple[float, float]:
    """On master i: the holder with its label, the fence counter at 7, and
    three waiters queued 3, 2 and 1 s ago whose entries live 5, 4 and 3 s
    more, the first two labelled (as their tries write them). Returns the
    instants (wall clock, s) those are counted from: the arrival's and the
    master's TIME."""
    r = servers.redis(i)
    r.set(name, HOLDER, px=20000)
    r.set(sibling(name, ":owner:") + HOLDER, "web-1:4242", px=20000)
    r.set(sibling(name, ":fence"), 7)
    sec, usec = r.time()
    now_ms = sec * 1000 + usec // 1000
    arrival = time.time_ns() // 1000
    for k, token in enumerate(WAITERS):
        r.zadd(sibling(name, ":queue"), {token: arrival - (3 - k) * 1_000_000})
        r.hset(
            sibling(name, ":waiters"),
            token,
            f"{now_ms + (5 - k) * 1000} 410 hiredlock:wake:x",
        )
    r.set(sibling(name, ":owner:") + WAITERS[0], "worker-1", px=20000)
    r.set(sibling(name, ":owner:") + WAITERS[1], "worker-2", px=20000)
    return arrival / 1e6, now_ms / 1e3


@pytest.fixture
def state():
    """Three masters with the state built on each, the third one killed."""
    servers = Servers(3)
    try:
        servers.built = [build(servers, i, "jobs:reindex") for i in (1, 2, 3)]
        servers.kill(3)
        yield servers
    finally:
        servers.stop(check=False)


def check(
    ins: hiredlock.Inspection, servers: Servers, before: float, after: float
) -> None:
    """before, after: the wall clock around the inspection, which ages the
    waiters by as much as it came after the state was built (a loaded
    machine takes seconds to kill a server)."""
    assert ins.name == "jobs:reindex"
    assert (ins.state, ins.held) == ("held", True)
    assert (ins.quorum, ins.answered, ins.holding) == (2, 2, 2)
    assert (ins.token, ins.owner, ins.fence) == ("aaaaaaaa", "web-1:4242", 7)
    assert 19.0 < ins.validity <= 20.0
    assert [m.master for m in ins.masters] == [
        u.removeprefix("redis://") for u in servers.urls
    ]
    for m in ins.masters[:2]:
        assert (m.ok, m.error, m.present) == (True, None, True)
        assert (m.token, m.fence, m.owner, m.queued) == (
            "aaaaaaaa",
            7,
            "web-1:4242",
            3,
        )
        assert 19.0 < m.ttl <= 20.0
        assert [w.token for w in m.waiters] == [t[:8] for t in WAITERS]
        assert [w.owner for w in m.waiters] == ["worker-1", "worker-2", None]
    for (arrival, now), m in zip(servers.built, ins.masters[:2]):
        for k, w in enumerate(m.waiters):  # to the ms both ways
            assert before - arrival - 0.002 <= w.age - (3 - k)
            assert w.age - (3 - k) <= after - arrival + 0.002
            assert now - after - 0.002 <= w.lease - (5 - k)
            assert w.lease - (5 - k) <= now - before + 0.002
    down = ins.masters[2]
    assert (down.ok, down.present, down.token, down.ttl) == (False, False, None, None)
    assert down.error.startswith("connection failed: ")


def test_sync_client_reads_the_state(state):
    client = hiredlock.Client(state.urls, **TOLERANT)
    before = time.time()
    ins = client.inspect("jobs:reindex")
    check(ins, state, before, time.time())
    assert client.stats()["inspections"] == 1
    assert client.inspect(b"nobody").state == "free"
    state.redis(2).delete("jobs:reindex")
    ins = client.inspect("jobs:reindex")
    assert (ins.state, ins.held, ins.holding, ins.validity) == (
        "unknown",
        False,
        1,
        None,
    )


@pytest.mark.asyncio
async def test_asyncio_client_reads_the_same(state):
    async with hiredlock.asyncio.Client(state.urls, **TOLERANT) as client:
        before = time.time()
        ins = await client.inspect("jobs:reindex")
        check(ins, state, before, time.time())
        assert client.stats()["inspections"] == 1


def status(servers: Servers, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "hiredlock", "status"]
    for url in servers.urls:
        cmd += ["--url", url]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, timeout=60, cwd="/"
    )


def test_status_prints_it_and_says_held_free_or_unknown(state):
    done = status(state, "jobs:reindex")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("jobs:reindex: held by aaaaaaaa (web-1:4242), valid ")
    assert "2 of 3 masters hold it, 2 answered (quorum 2); fence 7" in lines[0]
    assert lines[1].split() == ["MASTER", "KEY", "TTL", "FENCE", "OWNER", "QUEUED"]
    assert lines[2].split()[1:] == ["aaaaaaaa", lines[2].split()[2], "7",
                                    "web-1:4242", "3"]  # fmt: skip
    assert "unreachable" in lines[4] and "connection failed" in lines[4]
    assert re.fullmatch(
        r"    1\. b1b1b1b1  queued \d+\.\ds ago  lease \d+\.\ds  worker-1",
        lines[6],
    )
    assert lines[8].startswith("    3. d3d3d3d3")
    done = status(state, "jobs:reindex", "other", "--json")
    assert done.returncode == 1, done.stderr  # "other" is free
    got = json.loads(done.stdout)
    assert [g["state"] for g in got] == ["held", "free"]
    last = got[0]["masters"][0]["waiters"][2]
    assert (last["token"], last["owner"]) == ("d3d3d3d3", None)
    # Queued 1 s before the state was built, 3 s of lease left then.
    assert last["age"] + last["lease"] == pytest.approx(4, abs=0.3)
    state.redis(2).delete("jobs:reindex")
    done = status(state, "jobs:reindex")
    assert done.returncode == 69
    assert done.stdout.startswith("jobs:reindex: unknown;")
    done = status(state, "")
    assert done.returncode == 2
    assert "name must be 1 to 512 bytes" in done.stderr


def test_status_of_a_lock_held_by_hiredlock(servers5, name):
    client = hiredlock.Client(servers5.urls, owner="cron:%p", **TOLERANT)
    lock = client.lock(name, 30, fenced=True)
    with lock:
        done = status(servers5, name, "--json")
        assert done.returncode == 0, done.stderr
        (got,) = json.loads(done.stdout)
        assert got["token"] == lock.token[:8]
        assert got["owner"] == f"cron:{__import__('os').getpid()}"
        assert got["fence"] == lock.fence and got["holding"] == 5
    done = status(servers5, name)
    assert done.returncode == 1
    assert done.stdout.startswith(f"{name}: free;")


def test_an_inspection_writes_nothing(servers1, name):
    r = servers1.redis(1)
    build(servers1, 1, name)
    r.script_flush()
    started = time.monotonic()
    before = {k: (r.dump(k), r.pttl(k)) for k in r.keys(f"{name}*")}
    dirty = r.info("persistence")["rdb_changes_since_last_save"]
    client = hiredlock.Client(servers1.urls, **TOLERANT)
    for _ in range(3):
        assert client.inspect(name).held
    assert r.info("persistence")["rdb_changes_since_last_save"] == dirty
    after = {k: (r.dump(k), r.pttl(k)) for k in r.keys(f"{name}*")}
    elapsed_ms = (time.monotonic() - started) * 1000
    assert len(before) == 7 and after.keys() == before.keys()
    for k, (value, pttl) in after.items():
        assert value == before[k][0], k
        # No TTL set anew: each only ran down, by at most the time passed.
        was = before[k][1]
        assert (pttl < 0) == (was < 0), k
        assert pttl < 0 or 0 <= was - pttl <= elapsed_ms + 1, (k, was, pttl)
    for k in before:
        r.delete(k)


def test_status_reads_urls_from_a_file(servers5, name, tmp_path):
    """--url-file, as hiredlock run's: the masters (one or more a line, #
    comments) without their URLs in the process list."""
    path = tmp_path / "urls"
    path.write_text("# the masters\n" + ",".join(servers5.urls[:2]) + "\n"
                    + "\n".join(servers5.urls[2:]) + "\n")  # fmt: skip
    cmd = [sys.executable, "-m", "hiredlock", "status", "--json"]
    done = subprocess.run(
        [*cmd, "--url-file", str(path), name], capture_output=True, text=True,
        timeout=60, cwd="/",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    (got,) = json.loads(done.stdout)
    assert (got["state"], got["answered"], len(got["masters"])) == ("free", 5, 5)
    done = subprocess.run(
        [*cmd, "--url-file", str(tmp_path / "none"), name], capture_output=True,
        text=True, timeout=60, cwd="/",
    )  # fmt: skip
    assert done.returncode == 2
    assert f"--url-file {tmp_path / 'none'}: No such file" in done.stderr


def test_reads_writes_and_permits_are_listed(servers3, name):
    """A read-write lock's and a semaphore's hash (docs/DESIGN.md, the
    holds): its kind and every hold on a quorum, with its class, TTL,
    label and masters; the same in the sync and asyncio clients and in
    ``hiredlock status``."""
    client = hiredlock.Client(servers3.urls, owner="tester", **TOLERANT)
    rw = client.rwlock(name, 30)
    r1, r2 = rw.read(), rw.read()
    assert r1.acquire() and r2.acquire()
    # One read gone from master 3: on two of three, still a quorum's.
    servers3.redis(3).hdel(name, r2.token)
    ins = client.inspect(name)
    assert (ins.kind, ins.state, ins.held) == ("read-write lock", "held", True)
    holds = {h.token: h for h in ins.holds}
    assert holds.keys() == {r1.token[:8], r2.token[:8]}
    assert [holds[t.token[:8]].hold for t in (r1, r2)] == ["read", "read"]
    assert [holds[t.token[:8]].holding for t in (r1, r2)] == [3, 2]
    assert holds[r1.token[:8]].owner == "tester"
    assert 29.0 < holds[r1.token[:8]].ttl <= 30.0
    assert [m.kind for m in ins.masters] == ["read-write lock"] * 3
    assert [m.hold_count for m in ins.masters] == [2, 2, 1]
    done = status(servers3, name)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{name} (read-write lock): held, 2 holds on a quorum")
    reads = sorted(ln for ln in lines[1:3])
    assert all(ln.startswith("  read ") and "on " in ln for ln in reads)
    assert any(f"read {r2.token[:8]}" in ln and "on 2 of 3  tester" in ln
               for ln in reads)  # fmt: skip
    assert lines[3].split() == ["MASTER", "KEY", "TTL", "FENCE", "OWNER", "QUEUED"]
    assert lines[6].split()[1:3] == ["1", "hold"]
    r1.release()
    r2.release()
    with rw.write() as w:
        ins = client.inspect(name)
        assert [(h.token, h.hold, h.holding) for h in ins.holds] == [
            (w.token[:8], "write", 3)
        ]
    assert (client.inspect(name).kind, client.inspect(name).state) == ("none", "free")

    sem = client.semaphore(name + ":sem", 3, 30)
    p1, p2 = sem.acquire(), sem.acquire()
    ins = client.inspect(name + ":sem")
    assert (ins.kind, ins.held) == ("semaphore", True)
    assert sorted((h.token, h.hold, h.holding) for h in ins.holds) == sorted(
        (p.token[:8], str(p.permit), 3) for p in (p1, p2)
    )
    done = status(servers3, name + ":sem", "--json")
    (got,) = json.loads(done.stdout)
    assert got["kind"] == "semaphore" and len(got["holds"]) == 2
    assert got["masters"][0]["kind"] == "semaphore"
    assert sorted(h["hold"] for h in got["holds"]) == sorted(
        str(p.permit) for p in (p1, p2)
    )
    p1.release()
    p2.release()


@pytest.mark.asyncio
async def test_asyncio_client_lists_the_same_holds(servers3, name):
    async with hiredlock.asyncio.Client(servers3.urls, **TOLERANT) as client:
        sem = client.semaphore(name, 2, 30)
        p = await sem.acquire()
        ins = await client.inspect(name)
        assert (ins.kind, ins.held) == ("semaphore", True)
        assert [(h.token, h.hold) for h in ins.holds] == [(p.token[:8], str(p.permit))]
        await p.release()
