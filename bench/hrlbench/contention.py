"""The contention phase (issue 14): W processes on one name, each looping
acquire (blocking), hold 2 ms, release, think 2 ms, for hiredlock from
Python, from Lua and mixed, and for the Python peers, at N = 1 and N = 5,
W = 4 and 8, in one run: holds per second, how busy the lock was, hand-off
and wait latencies, fairness, and a mutual-exclusion check. A perfect lock
is busy all the time (about 500 holds/s). hiredlock from Python also over
TLS (the same servers' rediss:// ports, N = 1): its hand-off beside the plain
one shows the subscriber over TLS at work (issue 24, item 7: without it,
every TLS hand-off waited for the retry cap)."""

from __future__ import annotations

import random
import time

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
# Per-master deadlines of a case, beside hiredlock's defaults: 8 processes
# shaking hands over TLS at once on the one CPU of the servers (and of
# everyone else's load) take longer than the default 100 ms connect.
DEADLINES = {"hiredlock-py-tls": {"connect_timeout": 1.0, "timeout": 0.5}}
HOLD_MS = 2.0
THINK_MS = 2.0
# The targets of issue 14, for every hiredlock run.
BUSY_MIN = 0.90
WAIT_MAX_MS_W8 = 50.0
FAIR_MIN = 0.5  # no process below this share of the mean


def boottime() -> float:
    """CLOCK_BOOTTIME, the clock the workers stamp holds with."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


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


def contention_run(urls, name, lib_id, w, duration, cpu, extra) -> dict:
    label, lib, roles_of, _ = LIBS[lib_id]
    roles = roles_of(w) if roles_of else ["py"] * w
    workers = [start_worker(role, urls, cpu) for role in roles]
    try:
        for wk in workers:
            wk.send(
                command(
                    "contend",
                    name=name,
                    lib=lib,
                    hold_ms=HOLD_MS,
                    think_ms=THINK_MS,
                    **extra,
                )
            )
        for wk in workers:
            if not wk.read().get("ready"):
                raise RuntimeError("a contention process did not start")
        start = boottime() + 0.05
        end = start + duration
        for wk in workers:
            wk.send(f"go {end:.6f}")
        holds, timeouts = [], 0
        for k, wk in enumerate(workers):
            r = wk.read()
            timeouts += r["timeouts"]
            holds += [(h[1], h[2], k, h[0]) for h in r["holds"]]
    finally:
        for wk in workers:
            wk.close()
    out = analyse(holds, w, start, end)
    out.update(
        {"lib": lib_id, "label": label, "processes": roles, "timeouts": timeouts}
    )
    return out


def judge(runs: list[dict]) -> list[dict]:
    """The targets of issue 14 for every hiredlock run."""
    peer = {r["w"]: r["holds_per_s"] for r in runs if r["lib"] == "redis-lock"}
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
            checks.append(
                (
                    "holds/s over python-redis-lock's",
                    r["holds_per_s"] / peer[r["w"]],
                    ">",
                    1.0,
                    r["holds_per_s"] > peer[r["w"]],
                )
            )
        if r["w"] == 8:
            m = r["wait_ms"]["max"]
            checks.append(("wait max ms", m, "<=", WAIT_MAX_MS_W8, m <= WAIT_MAX_MS_W8))
        for what, value, op, bound, met in checks:
            targets.append(
                {
                    "run": where,
                    "what": what,
                    "value": value,
                    "op": op,
                    "bound": bound,
                    "met": met,
                }
            )
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
                    f"bench:contend:{lib_id}:{n}:{w}",
                    lib_id,
                    w,
                    args.contention_seconds,
                    args.cpu,
                    {**extra, **DEADLINES.get(lib_id, {})},
                )
                r.update({"n": n, "w": w})
                runs.append(r)
    return {
        "hold_ms": HOLD_MS,
        "think_ms": THINK_MS,
        "retry_delay_ms": defaults["retry_delay_ms"],
        "retry_jitter_ms": defaults["retry_jitter_ms"],
        "runs": runs,
        "targets": judge(runs),
    }
