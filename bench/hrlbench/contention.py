"""The contention phase: 8 processes (Python and Lua workers) on one
name, holds per second, hand-off latency, fairness, mutual exclusion."""

from __future__ import annotations

import time

from . import log
from .pool import command, start_worker
from .stats import percentile


def contention_run(urls, name, delay, jitter, duration, cpu) -> dict:
    roles = ["py", "lua5.1", "py", "luajit", "py", "lua5.4", "py", "luajit"]
    workers = [start_worker(role, urls, cpu) for role in roles]
    for w in workers:
        w.send(command("contend", name=name, retry_delay=delay, retry_jitter=jitter))
    for w in workers:
        if not w.read().get("ready"):
            raise RuntimeError("a contention process did not start")
    end = time.monotonic() + duration
    for w in workers:
        w.send(f"go {end:.6f}")
    holds = []
    timeouts = 0
    for k, w in enumerate(workers):
        r = w.read()
        w.close()
        timeouts += r["timeouts"]
        holds += [(h[1], h[2], k, h[0], h[3]) for h in r["holds"]]
    holds.sort()
    overlaps = sum(1 for a, b in zip(holds, holds[1:]) if b[0] < a[1])
    hand = [(b[0] - a[1]) * 1e3 for a, b in zip(holds, holds[1:])]
    cross = [(b[0] - a[1]) * 1e3 for a, b in zip(holds, holds[1:]) if a[2] != b[2]]
    per_proc = [sum(1 for h in holds if h[2] == k) for k in range(len(roles))]
    waits = [(h[0] - h[3]) * 1e3 for h in holds]

    def pct(v):
        s = sorted(v)
        return {
            "n": len(s),
            "p50": percentile(s, 50),
            "p99": percentile(s, 99),
            "max": s[-1] if s else float("nan"),
        }

    return {
        "processes": roles,
        "duration_s": duration,
        "retry_delay_ms": delay * 1000,
        "retry_jitter_ms": jitter * 1000,
        "holds": len(holds),
        "holds_per_s": len(holds) / duration,
        "timeouts": timeouts,
        "overlaps": overlaps,
        "handoff_ms": pct(hand),
        "handoff_other_ms": pct(cross),
        "wait_ms": pct(waits),
        "other_share": len(cross) / len(hand) if hand else 0.0,
        "holds_per_process": per_proc,
        "by_runtime": {
            rt: sum(n for n, r in zip(per_proc, roles) if r == rt)
            for rt in dict.fromkeys(roles)
        },
    }


def contention_phase(args, urls, defaults) -> list[dict]:
    runs = []
    settings = [
        (
            "default",
            defaults["retry_delay_ms"] / 1000,
            defaults["retry_jitter_ms"] / 1000,
        ),
        ("short", args.short_retry_ms / 1000, args.short_retry_ms / 2000),
    ]
    for n in args.contention_n:
        for label, delay, jitter in settings:
            log(
                f"contention: 8 processes, N = {n}, {label} retry delay "
                f"({delay * 1000:g} +/- {jitter * 1000:g} ms), "
                f"{args.contention_seconds} s"
            )
            r = contention_run(
                urls[:n],
                f"bench:contend:{n}:{label}",
                delay,
                jitter,
                args.contention_seconds,
                args.cpu,
            )
            r.update({"n": n, "retry": label})
            runs.append(r)
    return runs
