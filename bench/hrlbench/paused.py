"""The paused phase: master 5 of 5 stopped (SIGSTOP), acquire latency of
every N = 5 client."""

from __future__ import annotations

import statistics
import time

from . import PAUSED_NODE, log
from .machine import fixture
from .stats import lat_summary


def paused_phase(args, cases, workers, rng, fixture_dir, defaults) -> dict:
    ids = [
        c
        for c in (
            "c-n5",
            "py-n5",
            "lua5.1-n5",
            "luajit-n5",
            "lua5.4-n5",
            "pottery-n5",
            "node-n5",
        )
        if c in cases
    ]
    log(
        f"paused: master {PAUSED_NODE} of 5 stopped; {len(ids)} cases, "
        f"{args.paused_reps} x {args.paused_seconds} s each"
    )
    lat: dict[str, list[float]] = {c: [] for c in ids}
    rates: dict[str, list[float]] = {c: [] for c in ids}
    failed = {c: 0 for c in ids}
    # Every worker started before the pause: a run restricted by --cases
    # has not started them in the main phase, and the node worker pings
    # every master as it starts (tests/workers/node/worker.js), so it
    # exits when started with master 5 stopped.
    for cid in ids:
        workers[cases[cid]["worker"]]
    fixture("pause", fixture_dir, str(PAUSED_NODE))
    try:
        for _ in range(args.paused_reps):
            for cid in rng.sample(ids, len(ids)):
                c = cases[cid]
                r = workers[c["worker"]].call(f"run {c['wcase']} {args.paused_seconds}")
                rates[cid].append(r["cycles"] / r["elapsed"])
                lat[cid].extend(r["lat"])
                failed[cid] += r.get("failed", 0)
    finally:
        fixture("resume", fixture_dir, str(PAUSED_NODE))
    # The stopped server now runs what was queued for it (SETs of attempts
    # long given up): start the next phases from an empty master.
    time.sleep(0.5)
    fixture("cli", fixture_dir, str(PAUSED_NODE), "FLUSHALL")
    bound = defaults["timeout_ms"] * 1000 + 2000
    out = {}
    for cid in ids:
        summary = lat_summary(lat[cid])
        out[cid] = {
            "label": cases[cid]["label"],
            "library": cases[cid]["library"],
            "runtime": cases[cid]["runtime"],
            "rate_median": statistics.median(rates[cid]),
            "failed": failed[cid],
            "latency_us": summary,
            "p99_bound_us": bound,
            "p99_met": summary["p99"] <= bound,
        }
    return {
        "paused_node": PAUSED_NODE,
        "masters": 5,
        "timeout_ms": defaults["timeout_ms"],
        "connect_timeout_ms": defaults["connect_timeout_ms"],
        "cases": out,
    }
