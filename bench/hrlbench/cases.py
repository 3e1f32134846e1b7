"""The benchmark's cases: every case of the main phase (who runs it, its
floor) and the cases the profile phase counts. What they are judged
against (targets, ratios) is in targets.py."""

from __future__ import annotations

from . import INTERPS


def build_cases() -> dict[str, dict]:
    """Every case of the main phase: id -> what it is and who runs it."""
    cases: dict[str, dict] = {}

    def add(cid, worker, wcase, library, runtime, n, kind, label):
        cases[cid] = {
            "worker": worker,
            "wcase": wcase,
            "library": library,
            "runtime": runtime,
            "n": n,
            "kind": kind,
            "label": label,
            "floor": "raw" if n == 1 else f"fan{n}",
        }

    add(
        "raw",
        "c",
        "raw",
        "floor",
        "C",
        1,
        "floor",
        "hiredis, blocking: SET NX PX + EVALSHA",
    )
    # Issue 31: the raw loop sending hiredlock's own N = 1 commands (c-n1's
    # SET and its 206-byte release, the queue script on three keys) instead
    # of the raw loop's 125-byte compare-and-delete: c-n1 over it is the
    # library's client side alone (DIAGNOSTIC_RATIOS, targets.py).
    add(
        "raw-exact",
        "c",
        "raw-exact",
        "floor",
        "C",
        1,
        "diagnostic",
        "the raw loop with hiredlock's commands: SET NX PX + its release",
    )
    for n in (3, 5, 7):
        add(
            f"fan{n}",
            "c",
            f"fan{n}",
            "floor",
            "C",
            n,
            "floor",
            f"hiredis, both commands fanned out to {n} masters",
        )
    add(
        "redis-benchmark",
        "rb",
        "",
        "floor",
        "redis-benchmark",
        1,
        "floor",
        "redis-benchmark -c 1: SET NX PX, then EVALSHA",
    )
    for n in (1, 3, 5, 7):
        add(
            f"c-n{n}",
            "c",
            f"c-n{n}",
            "hiredlock",
            "C",
            n,
            "hiredlock",
            "hiredlock C API, one lock object reused",
        )
        add(
            f"py-n{n}",
            "py",
            f"py-n{n}",
            "hiredlock",
            "Python",
            n,
            "hiredlock",
            "hiredlock from Python, one Lock reused",
        )
        for interp in INTERPS:
            add(
                f"{interp}-n{n}",
                interp,
                f"lua-n{n}",
                "hiredlock",
                interp,
                n,
                "hiredlock",
                "hiredlock from Lua: client:acquire, release",
            )
    # Issue 15: the fenced cycle beside the plain one, at N = 1 (a script
    # instead of SET) and N = 5 (the fence round on top).
    for n in (1, 5):
        for cid, worker, runtime, wcase in (
            (f"c-fenced-n{n}", "c", "C", f"c-fenced-n{n}"),
            (f"py-fenced-n{n}", "py", "Python", f"py-fenced-n{n}"),
            (f"luajit-fenced-n{n}", "luajit", "luajit", f"lua-fenced-n{n}"),
        ):
            add(
                cid,
                worker,
                wcase,
                "hiredlock",
                runtime,
                n,
                "fenced",
                "hiredlock, a fenced lock (fenced = true)",
            )
    # Issue 30: an owner label's SET (and DEL at the release) in the same
    # round trip as the acquire's (release's) command.
    for n in (1, 5):
        for cid, worker, runtime, wcase in (
            (f"c-owner-n{n}", "c", "C", f"c-owner-n{n}"),
            (f"py-owner-n{n}", "py", "Python", f"py-owner-n{n}"),
        ):
            add(
                cid,
                worker,
                wcase,
                "hiredlock",
                runtime,
                n,
                "owner",
                "hiredlock, with an owner label (owner = host:pid)",
            )
    add(
        "c-new-n1",
        "c",
        "c-new-n1",
        "hiredlock",
        "C",
        1,
        "diagnostic",
        "hrl_lock_new + acquire + release + free per cycle",
    )
    add(
        "py-with-n1",
        "py",
        "py-with-n1",
        "hiredlock",
        "Python",
        1,
        "diagnostic",
        "with client.lock(name): a new Lock per cycle",
    )
    for interp in INTERPS:
        add(
            f"{interp}-core-reuse",
            interp,
            "core-reuse",
            "hiredlock",
            interp,
            1,
            "diagnostic",
            "hiredlock.core: one lock handle reused",
        )
        add(
            f"{interp}-core-n1",
            interp,
            "core-n1",
            "hiredlock",
            interp,
            1,
            "diagnostic",
            "hiredlock.core client:acquire (no facade)",
        )
        add(
            f"{interp}-lean-n1",
            interp,
            "lean-n1",
            "hiredlock",
            interp,
            1,
            "diagnostic",
            "core-n1 + a leaner facade sketch (tests/workers/lua)",
        )
        add(
            f"{interp}-lua-redis",
            interp,
            "lua-redis",
            "lua-redis",
            interp,
            1,
            "peer",
            "lua-redis: SET NX PX + EVAL",
        )
    for cid, n, what in [
        ("py-async-n1", 1, "hiredlock.asyncio, one task (asyncio's loop)"),
        ("py-async-uv-n1", 1, "hiredlock.asyncio, one task (uvloop)"),
        ("py-async-n5", 5, "hiredlock.asyncio, one task (asyncio's loop)"),
        ("py-async-c100-n1", 1, "hiredlock.asyncio, 100 tasks at once"),
        ("py-async-uv-c100-n1", 1, "hiredlock.asyncio, 100 tasks (uvloop)"),
    ]:
        add(cid, "py", cid, "hiredlock", "Python asyncio", n, "hiredlock", what)
    # The Python floors (tests/workers/python/hrlworker/raw.py): the raw
    # loop's two round trips over a blocking socket, and over asyncio's own
    # transport and Protocol: what any asyncio client pays (issue 31).
    add(
        "py-raw",
        "py",
        "py-raw",
        "floor",
        "Python",
        1,
        "diagnostic",
        "Python socket, blocking: SET NX PX + EVALSHA",
    )
    add(
        "py-async-raw",
        "py",
        "py-async-raw",
        "floor",
        "Python asyncio",
        1,
        "diagnostic",
        "asyncio BufferedProtocol, one connection: SET NX PX + EVALSHA",
    )
    add(
        "py-async-raw-proto",
        "py",
        "py-async-raw-proto",
        "floor",
        "Python asyncio",
        1,
        "diagnostic",
        "the same over a plain asyncio Protocol (256 KiB bytes per read)",
    )
    add(
        "redis-asyncio",
        "py",
        "redis-asyncio",
        "redis-py",
        "Python asyncio",
        1,
        "peer",
        "redis.asyncio Lock (hiredis parser), one task",
    )
    add(
        "redis-asyncio-c100",
        "py",
        "redis-asyncio-c100",
        "redis-py",
        "Python asyncio",
        1,
        "peer",
        "redis.asyncio Lock (hiredis parser), 100 tasks at once",
    )
    # Deployments (issue 18): the same cycle over TLS on the same servers,
    # and on a Redis Cluster as the one master; diagnostics next to c-nN /
    # py-nN (DEPLOY_RATIOS compares them).
    for n in (1, 5):
        add(
            f"c-tls-n{n}",
            "c@tls",
            f"c-n{n}",
            "hiredlock",
            "C",
            n,
            "diagnostic",
            "hiredlock C API over TLS (rediss://, kept connections)",
        )
        add(
            f"py-tls-n{n}",
            "py@tls",
            f"py-n{n}",
            "hiredlock",
            "Python",
            n,
            "diagnostic",
            "hiredlock from Python over TLS (rediss://)",
        )
    for runtime, worker, label in (
        ("C", "c@cluster", "hiredlock C API on a 3-node Redis Cluster (one master)"),
        ("Python", "py@cluster", "hiredlock from Python on a 3-node Redis Cluster"),
    ):
        add(
            f"{worker.split('@')[0]}-cluster-n1",
            worker,
            f"{worker.split('@')[0]}-n1",
            "hiredlock",
            runtime,
            1,
            "diagnostic",
            label,
        )
    # Failover safety (issue 27): the cycle on masters with one replica
    # each, plain and with sync_replicas=1 (the URLs' ?sync_replicas=1: a
    # WAIT pipelined behind the SET and the extend); DEPLOY_RATIOS compares
    # the two on the same replicated servers.
    for n in (1, 5):
        for runtime, w in (("C", "c"), ("Python", "py")):
            add(
                f"{w}-repl-n{n}",
                f"{w}@replicated",
                f"{w}-n{n}",
                "hiredlock",
                runtime,
                n,
                "diagnostic",
                f"hiredlock ({runtime}) on masters with a replica each",
            )
            add(
                f"{w}-sync-n{n}",
                f"{w}@synced",
                f"{w}-n{n}",
                "hiredlock",
                runtime,
                n,
                "diagnostic",
                f"the same with sync_replicas=1 ({runtime}): WAIT 1 behind the SET",
            )
    add("redis-py", "py", "redis-py", "redis-py", "Python", 1, "peer", "redis-py Lock")
    add(
        "redis-lock",
        "py",
        "redis-lock",
        "python-redis-lock",
        "Python",
        1,
        "peer",
        "python-redis-lock",
    )
    for n in (1, 3, 5):
        add(
            f"pottery-n{n}",
            "py",
            f"pottery-n{n}",
            "pottery",
            "Python",
            n,
            "peer",
            "pottery Redlock",
        )
        add(
            f"node-n{n}",
            "node",
            f"node-n{n}",
            "node-redlock",
            "Node.js",
            n,
            "peer",
            "node-redlock v5 on ioredis",
        )
    return cases


PROFILE_CASES = [
    "raw",
    "raw-exact",
    "c-n1",
    "c-fenced-n1",
    "c-new-n1",
    "fan5",
    "c-n5",
    "c-fenced-n5",
    "py-n1",
    "py-fenced-n1",
    "py-with-n1",
    "redis-py",
    "py-raw",
    "py-async-raw",
    "py-async-raw-proto",
    "py-async-n1",
    "redis-asyncio",
] + [
    f"{interp}-{case}"
    for interp in INTERPS
    for case in ("n1", "lean-n1", "core-n1", "core-reuse")
]


QUICK_PROFILE_CASES = ["raw", "raw-exact", "c-n1", "py-n1", "luajit-n1"]
