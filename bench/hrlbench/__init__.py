"""hrlbench: the parts of the benchmark harness (bench/harness.py).

cases            the main phase's cases, the profile's cases
targets          the targets and ratios the cases are judged by
stats            percentiles, latency summaries, quartiles
machine          pinning, load, machine and versions, the fixture launcher
pool             the long-lived workers (tests/workers), one per runtime
redis_benchmark  the redis-benchmark floor case
main_phase       the main phase, its paired ratios and its table
paused, contention, memory, profile   the other phases, one file each
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "tests" / "fixtures" / "redis-fixture"
# The C worker as `make build` / bench/run.sh build it (tests/workers/c).
C_WORKER = REPO / "build" / "tests" / "workers" / "c" / "hrl-worker"
# node-redlock and ioredis, as bench/run.sh installs them (npm ci).
NODE_DIR = REPO / "build" / "bench" / "node"
FIXTURE_NODES = 7
PAUSED_NODE = 5  # of the N = 5 clients' masters 1..5
REF = "raw"  # the reference case run between every few slices
INTERPS = {"lua5.1": "5.1", "luajit": "5.1", "lua5.4": "5.4"}


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)
