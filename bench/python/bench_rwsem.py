#!/usr/bin/env python3
"""Read-write locks and semaphores beside their closest peers, side by
side in one run on one Redis server of its own: the rwsem phase of
bench/harness.py (bench/hrlbench/rwsem.py, which says what it measures),
printed.

    PYTHONPATH=build/python python3 bench/python/bench_rwsem.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
sys.path.insert(0, str(REPO / "bench"))

from hrlbench.rwsem import rwsem_phase  # noqa: E402
from redis_fixture import Servers  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", dest="rwsem_seconds", type=float, default=3.0)
    a = p.parse_args()
    servers = Servers(1)
    try:
        out = rwsem_phase(a, servers.urls)
    finally:
        servers.stop()
    print(f"\ncycle (acquire + release), {out['seconds'] / 3:g} s each")
    print(f"  {'case':<20} {'cycles/s':>10} {'p50 us':>8} {'x floor':>8}")
    for c in out["cycles"]:
        print(
            f"  {c['case']:<20} {c['per_s']:>10.0f} {c['p50_us']:>8.0f} "
            f"{c['x_floor']:>8.2f}"
        )
    rw = out["rw_8_1"]
    print(f"\nrw 8 readers + 1 writer, hold 1 ms, {rw['seconds']:g} s")
    print(f"  reads/s {rw['reads_per_s']:.0f}  writes/s {rw['writes_per_s']:.0f}")
    print(
        f"  writer wait p50 {rw['writer_wait_p50_ms']:.1f} ms  "
        f"p99 {rw['writer_wait_p99_ms']:.1f} ms"
    )
    print("\npermits used / available (target >= 90 %)")
    for u in out["permits"]:
        print(
            f"  {u['case']:<16} {u['used'] * 100:5.1f} %  ({u['grants_per_s']:.0f} "
            f"grants/s; {u['threads']} threads, {u['permits']} permits, hold "
            f"{u['hold_ms']:g} ms)"
        )


if __name__ == "__main__":
    main()
