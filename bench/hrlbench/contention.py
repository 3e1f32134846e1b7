"""The contention phase (issue 14): W processes on one name, each looping
acquire (blocking), hold 2 ms, release, think 1-3 ms, for hiredlock from
Python, from Lua and mixed, and for the Python peers, at N = 1 and N = 5,
W = 4 and 8, in one run: holds per second, how busy the lock was, hand-off
and wait latencies, fairness, and a mutual-exclusion check. A perfect lock
is busy all the time (about 500 holds/s). hiredlock from Python also over
TLS (the same servers' rediss:// ports, N = 1): its hand-off beside the plain
one shows the subscriber over TLS at work (issue 24, item 7: without it,
every TLS hand-off waited for the retry cap).

Every process and master runs on one CPU, so a hand-off cannot take less
than a quorum of the masters' release scripts run one after the other; each
run measures that from its own release calls (and what its masters did,
INFO before and after) and gives the busy share one CPU allows, beside the
busy share measured."""

from __future__ import annotations

import random
import time

import redis

from . import log
from .pool import command, start_worker
from .stats import lat_summary

LUA_ROLES = ["luajit", "lua5.1", "lua5.4"]

# id -> (label, lib, roles for W processes, the N it runs at)
LIBS = {
    "hiredlock-py": ("hiredlock, Python", "hiredlock", lambda w: ["py"] * w, (1, 5)),
    "hiredlock-py-tls": (
        "hiredlock, Python over TLS (rediss://)",
        "hiredlock",
        lambda w: ["py"] * w,
        (1,),
    ),
    "hiredlock-lua": (
        "hiredlock, Lua (LuaJIT, 5.1, 5.4)",
        "hiredlock",
        lambda w: [LUA_ROLES[k % 3] for k in range(w)],
        (1, 5),
    ),
    "hiredlock-mixed": (
        "hiredlock, Python and Lua",
        "hiredlock",
        lambda w: ["py" if k % 2 == 0 else LUA_ROLES[k // 2 % 3] for k in range(w)],
        (1, 5),
    ),
    "redis-py": ("redis-py Lock (hiredis; polls 0.1 s)", "redis-py", None, (1,)),
    "redis-lock": ("python-redis-lock (hiredis; BLPOP)", "redis-lock", None, (1,)),
    "pottery": ("pottery Redlock (hiredis; polls 0-0.2 s)", "pottery", None, (1, 5)),
}
# Per-master deadlines of every case, the main phase's (hrlworker/cycles.py):
# with hiredlock's 50 ms default one late reply on a loaded machine (a
# stall of the one CPU the processes share, 8 processes shaking hands over
# TLS at once) timed a release out and ended the whole phase. They bound
# only a reply that is late, so they cost a hold nothing. The Python
# worker gives the peers the same.
DEADLINES = {"connect_timeout": 1.0, "timeout": 0.5}
HOLD_MS = 2.0
THINK_MS = 2.0
# Each think is drawn from THINK_MS +- THINK_SPREAD_MS (seeded): with a fixed
# think a process's next attempt lands in every hand-off in lock-step.
THINK_SPREAD_MS = 1.0
# The targets of issue 14, for every hiredlock run.
BUSY_MIN = 0.90
WAIT_MAX_MS_W8 = 50.0
FAIR_MIN = 0.5  # no process below this share of the mean


def boottime() -> float:
    """CLOCK_BOOTTIME, the clock the workers stamp holds with."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def master_counters(urls: list[str]) -> list[tuple[float, dict[str, int]]]:
    """(CPU seconds, calls by command) of every master (plain URLs)."""
    out = []
    for url in urls:
        conn = redis.Redis.from_url(url)
        try:
            info = conn.info("all")
        finally:
            conn.close()
        cpu = float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
        calls = {
            k[len("cmdstat_") :]: int(v["calls"])
            for k, v in info.items()
            if k.startswith("cmdstat_")
        }
        out.append((cpu, calls))
    return out


def one_cpu_bound(before, after, holds: list[tuple], start, end) -> dict:
    """The busy share one CPU allows. A release call is what the CPU does
    for a hand-off: the releaser sending, every master's script (with its
    PUBLISH) run in turn on the one CPU, the replies read; the next holder
    needs a quorum of those scripts, so a hand-off takes at least that share
    of a release call. The fastest tenth of the run's release calls (the
    ones no other process's work landed in) against the run's mean hold
    gives the busiest the lock could be here; the masters' CPU and commands
    per hold (INFO) say what they did meanwhile."""
    n = len(before)
    inside = [h for h in holds if start <= h[0] < end]
    if not inside:
        return {}
    releases = sorted(h[4] - h[1] for h in inside)
    release = releases[len(releases) // 10]
    hold = sum(h[1] - h[0] for h in inside) / len(inside)
    gap = release * (n // 2 + 1) / n
    calls: dict[str, int] = {}
    for b, a in zip(before, after):
        for name, k in a[1].items():
            calls[name] = calls.get(name, 0) + k - b[1].get(name, 0)
    calls["info"] = calls.get("info", 0) - n  # our own
    cpu = sum(a[0] - b[0] for a, b in zip(after, before))
    return {
        "release_call_p10_ms": release * 1e3,
        "hold_ms_mean": hold * 1e3,
        "handoff_floor_ms": gap * 1e3,
        "busy_bound": hold / (hold + gap),
        "master_cpu_ms_per_hold": cpu / len(inside) * 1e3,
        "commands_per_hold": {
            k: v / len(inside) for k, v in sorted(calls.items()) if v > 0
        },
    }


def analyse(holds: list[tuple], w: int, start: float, end: float) -> dict:
    """holds: (acquired, release called, process, acquire called) within
    the run. Busy: the time some process held it, over the run's length."""
    duration = end - start
    holds = sorted(h for h in holds if h[0] < end)
    busy = sum(max(0.0, min(h[1], end) - max(h[0], start)) for h in holds)
    per = [sum(1 for h in holds if h[2] == k) for k in range(w)]
    mean = sum(per) / w
    return {
        "duration_s": duration,
        "holds": len(holds),
        "holds_per_s": len(holds) / duration,
        "busy": busy / duration,
        "handoff_ms": lat_summary(
            [(b[0] - a[1]) * 1e3 for a, b in zip(holds, holds[1:])]
        ),
        "wait_ms": lat_summary([(h[0] - h[3]) * 1e3 for h in holds]),
        "holds_per_process": per,
        "min_share": min(per) / mean if mean else 0.0,
        "overlaps": sum(1 for a, b in zip(holds, holds[1:]) if b[0] < a[1]),
    }


def contention_run(urls, plain, name, lib_id, w, duration, cpu, extra, seed) -> dict:
    """plain: the same masters' plain URLs, for their counters."""
    label, lib, roles_of, _ = LIBS[lib_id]
    roles = roles_of(w) if roles_of else ["py"] * w
    workers = [start_worker(role, urls, cpu) for role in roles]
    try:
        for k, wk in enumerate(workers):
            wk.send(
                command(
                    "contend",
                    name=name,
                    lib=lib,
                    hold_ms=HOLD_MS,
                    think_ms=THINK_MS,
                    think_spread_ms=THINK_SPREAD_MS,
                    seed=seed + k,
                    **extra,
                )
            )
        for wk in workers:
            if not wk.read().get("ready"):
                raise RuntimeError("a contention process did not start")
        start = boottime() + 0.05
        end = start + duration
        before = master_counters(plain)
        for wk in workers:
            wk.send(f"go {end:.6f}")
        holds, timeouts = [], 0
        for k, wk in enumerate(workers):
            r = wk.read()
            timeouts += r["timeouts"]
            holds += [(h[1], h[2], k, h[0], h[3]) for h in r["holds"]]
        after = master_counters(plain)
    finally:
        for wk in workers:
            wk.close()
    out = analyse(holds, w, start, end)
    out["one_cpu"] = one_cpu_bound(before, after, holds, start, end)
    out.update(
        {"lib": lib_id, "label": label, "processes": roles, "timeouts": timeouts}
    )
    return out


def holds_bound(r: dict) -> float | None:
    """The holds per second one CPU allows run r: its busy bound over its
    mean hold (one_cpu_bound)."""
    oc = r.get("one_cpu") or {}
    if not oc.get("busy_bound") or not oc.get("hold_ms_mean"):
        return None
    return oc["busy_bound"] / (oc["hold_ms_mean"] / 1e3)


def judge(runs: list[dict]) -> list[dict]:
    """The targets of issue 14 for every hiredlock run.

    python-redis-lock is a lock on one Redis: it runs at N = 1 only, and
    hiredlock's N = 5 runs are held against that same N = 1 run. On one CPU
    an N = 5 hand-off waits for a quorum of five masters' release scripts
    where the peer's waits for one, which is the deployment's cost and not
    the lock's: where the holds/s one CPU allows hiredlock at its N (this
    run's floor) are fewer than it allows the peer at its one master, the
    row is judged floor-bound and says by how much (one_cpu_ratio). At the
    same N a slower floor is hiredlock's own doing: no such excuse there."""
    peer = {r["w"]: r for r in runs if r["lib"] == "redis-lock"}
    targets = []
    for r in runs:
        if not r["lib"].startswith("hiredlock"):
            continue
        where = f"{r['lib']} N = {r['n']} W = {r['w']}"
        checks = [
            ("busy", r["busy"], ">=", BUSY_MIN, r["busy"] >= BUSY_MIN),
            (
                "min share of the mean",
                r["min_share"],
                ">=",
                FAIR_MIN,
                r["min_share"] >= FAIR_MIN,
            ),
        ]
        if r["w"] in peer:
            p = peer[r["w"]]
            checks.append(
                (
                    "holds/s over python-redis-lock's",
                    r["holds_per_s"] / p["holds_per_s"],
                    ">",
                    1.0,
                    r["holds_per_s"] > p["holds_per_s"],
                )
            )
        if r["w"] == 8:
            m = r["wait_ms"]["max"]
            checks.append(("wait max ms", m, "<=", WAIT_MAX_MS_W8, m <= WAIT_MAX_MS_W8))
        for what, value, op, bound, met in checks:
            t = {
                "run": where,
                "what": what,
                "value": value,
                "op": op,
                "bound": bound,
                "met": met,
            }
            reach = r.get("one_cpu", {}).get("busy_bound")
            if what == "busy" and reach:
                # What one CPU allows in this run, and how much of it the
                # lock used: a bound below the target is the machine's.
                t["one_cpu_bound"] = reach
                t["of_bound"] = value / reach
                t["floor_bound"] = reach < bound
            mine, theirs = holds_bound(r), holds_bound(peer.get(r["w"], {}))
            if what.startswith("holds/s") and r["n"] != 1 and mine and theirs:
                # Five masters against the peer's one: what one CPU allows
                # each, measured in the same run, and that ratio.
                t["masters"] = r["n"]
                t["one_cpu_holds"] = mine
                t["peer_one_cpu_holds"] = theirs
                t["one_cpu_ratio"] = mine / theirs
                # How much of its own bound each used: the lock's share of
                # the verdict, beside the machine's.
                t["of_one_cpu"] = r["holds_per_s"] / mine
                t["peer_of_one_cpu"] = peer[r["w"]]["holds_per_s"] / theirs
                t["floor_bound"] = mine < theirs
            targets.append(t)
    return targets


def contention_phase(args, urls, defaults, tls_urls=None) -> dict:
    """tls_urls: the same servers' TLS ports (with the CA in the query),
    for hiredlock-py-tls; without them (a fixture from outside) that case
    is left out."""
    rng = random.Random(args.seed)
    runs = []
    extra = {}  # hiredlock's defaults: its retry_delay is a waiter's cap
    for n in args.contention_n:
        for w in args.contention_w:
            ids = [
                k
                for k, v in LIBS.items()
                if n in v[3]
                and (tls_urls or not k.endswith("-tls"))
                and (not args.contention_libs or k in args.contention_libs.split(","))
            ]
            for lib_id in rng.sample(ids, len(ids)):
                log(
                    f"contention: {lib_id}, N = {n}, W = {w}, "
                    f"{args.contention_seconds:g} s"
                )
                masters = tls_urls if lib_id.endswith("-tls") else urls
                r = contention_run(
                    masters[:n],
                    urls[:n],
                    f"bench:contend:{lib_id}:{n}:{w}",
                    lib_id,
                    w,
                    args.contention_seconds,
                    args.cpu,
                    {**extra, **DEADLINES},
                    rng.randrange(1 << 30),
                )
                r.update({"n": n, "w": w})
                runs.append(r)
    return {
        "hold_ms": HOLD_MS,
        "think_ms": THINK_MS,
        "think_spread_ms": THINK_SPREAD_MS,
        "retry_delay_ms": defaults["retry_delay_ms"],
        "retry_jitter_ms": defaults["retry_jitter_ms"],
        "runs": runs,
        "targets": judge(runs),
    }
