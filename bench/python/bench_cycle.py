#!/usr/bin/env python3
"""Python cycle rates beside the raw C loop and the Python peers: the Python
cases of the one benchmark harness (bench/harness.py), main phase only.

    python3 bench/python/bench_cycle.py [--seconds 0.25] [--reps 21]
        [--cases py-n1,redis-py,...] [--json FILE]

Prints the table of cases with their rates, latencies and time ratios to
the floor; --json keeps the full results. `make bench` runs every case of
every runtime; bench/README.md has the method.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CASES = [
    "c-n1",
    "py-n1",
    "py-with-n1",
    "redis-py",
    "redis-lock",
    "pottery-n1",
    "c-n5",
    "py-n5",
    "pottery-n5",
]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=0.25)
    p.add_argument("--reps", type=int, default=21)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--json", default=str(REPO / "build" / "bench" / "python.json"))
    a = p.parse_args()
    # bench/run.sh builds and installs what the cases need, then runs the
    # harness with these arguments.
    run = str(REPO / "bench" / "run.sh")
    argv = [
        run,
        "--phases",
        "main",
        "--cases",
        a.cases,
        "--seconds",
        str(a.seconds),
        "--reps",
        str(a.reps),
        "--json",
        a.json,
        "--no-report",
        "--wait-quiet",
        "0",
    ]
    os.execv(run, argv)


if __name__ == "__main__":
    main()
