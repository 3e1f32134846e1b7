"""The benchmark's command line (bench/harness.py), in a module that needs
nothing but the standard library: `bench/run.sh --help` prints it before
installing or building anything (toxiproxy's Go install takes minutes)."""

from __future__ import annotations

import argparse
import os
import sys

DESCRIPTION = (
    "hiredlock's benchmark: every runtime and every peer, side by side, in "
    "one run on the same Redis servers (`make bench`; bench/README.md has "
    "the method)."
)
PHASES = "main,paused,contention,stampede,delay,memory,profile,leases,rwsem"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run.sh", description=DESCRIPTION)
    p.add_argument(
        "--quick",
        action="store_true",
        help="a routine check in under 2 minutes; writes under build/bench/, not docs/",
    )
    p.add_argument("--reps", type=int, help="main-phase repetitions")
    p.add_argument("--seconds", type=float, help="per case and repetition")
    p.add_argument("--warmup", type=float, default=0.3)
    p.add_argument(
        "--ref-every",
        type=int,
        default=3,
        help="run the raw loop after every this many slices",
    )
    p.add_argument(
        "--cpu",
        type=int,
        default=None,
        help="the one CPU for servers and clients (default: the last one)",
    )
    p.add_argument("--no-pin", action="store_true", help="do not pin")
    p.add_argument("--phases", default=PHASES)
    p.add_argument("--cases", help="main phase: only these (comma list)")
    p.add_argument(
        "--contention-libs",
        help="contention phase: only these (comma list, e.g. "
        "hiredlock-py,hiredlock-py-tls)",
    )
    p.add_argument(
        "--contention-n",
        help="contention phase: these numbers of masters (comma list; "
        "default 1,5, --quick 1)",
    )
    p.add_argument(
        "--contention-seconds",
        type=float,
        help="contention phase: seconds a run (default 10, --quick 1.5)",
    )
    p.add_argument(
        "--wait-quiet",
        type=float,
        default=None,
        help="wait up to this many seconds for load < 0.3 (default 600, --quick 0)",
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--resty-lock",
        help="directory holding lua-resty-lock's resty/lock.lua, for the "
        "stampede phase (default: $HRL_RESTY_LOCK; without, hiredlock alone)",
    )
    p.add_argument(
        "--json",
        help="results file (default bench/results/<date>.json; --quick: build/bench/)",
    )
    p.add_argument(
        "--docs",
        help="directory for PERFORMANCE.md and "
        "performance.png (default docs/; --quick: "
        "build/bench/)",
    )
    p.add_argument("--no-report", action="store_true")
    p.add_argument(
        "--allow-dirty",
        action="store_true",
        help="let a full run measure a tree with uncommitted changes "
        "(the results list them)",
    )
    p.add_argument(
        "--ab",
        help="a C worker built on another core "
        "(bench/ab-worker.sh REV): adds the cases ab-c-n1, "
        "ab-c-n5 and ab-c-new-n1",
    )
    p.add_argument(
        "--ab-python",
        help="a directory holding another build of the Python package "
        "(bench/ab-wheel.sh: make dist's wheel; or pip install --target DIR "
        "of another revision): adds the cases ab-py-n1, ab-py-n5 and "
        "ab-py-async-n1, the Python worker importing hiredlock from there",
    )
    a = p.parse_args(argv)
    quick = a.quick
    a.reps = a.reps or (3 if quick else 21)
    a.seconds = a.seconds or (0.1 if quick else 0.25)
    a.paused_reps = 1 if quick else 3
    a.paused_seconds = 0.6 if quick else 4.0
    a.contention_seconds = a.contention_seconds or (1.5 if quick else 10.0)
    a.contention_n = (
        [int(n) for n in a.contention_n.split(",")]
        if a.contention_n
        else [1]
        if quick
        else [1, 5]
    )
    a.contention_w = [4, 8]
    a.stampede_reps = 1 if quick else 5
    a.delay_reps = 1 if quick else 3
    a.delay_seconds = 0.3 if quick else 1.0
    a.hold = 10000
    a.drift_cycles = 20000 if quick else 1000000
    a.profile_cycles = 300 if quick else 2000
    a.lease_count = 1000
    a.lease_seconds = 3.0 if quick else 10.0
    a.rwsem_seconds = 1.5 if quick else 6.0
    # (masters, TTL ms): a renewal a second per lock at 3 s, fewer at 30 s
    a.lease_configs = [(1, 3000)] if quick else [(1, 3000), (1, 30000), (5, 3000)]
    if a.wait_quiet is None:
        a.wait_quiet = 0 if quick else 600
    if a.no_pin:
        a.cpu = None
    elif a.cpu is None:
        a.cpu = (os.cpu_count() or 1) - 1
    return a


if __name__ == "__main__":  # bench/run.sh --help
    parse_args(sys.argv[1:])
