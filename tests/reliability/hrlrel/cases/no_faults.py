"""Case 1: 16 workers on one lock, no faults."""

from __future__ import annotations

import os

from .common import clean, healthy, safe, workload_run


def case1(out: str, full: bool) -> dict:
    dur = 120.0 if full else 8.0
    runs = {}
    for n in (1, 5):
        r = workload_run(os.path.join(out, f"case1-n{n}"), n=n, duration=dur)
        runs[f"n{n}"] = clean(r)
    ok = all(
        healthy(r) and safe(r) and r["orphans_after_run"] == 0 for r in runs.values()
    )
    return {
        "case": 1,
        "title": "16 workers x 1 lock, no faults",
        "expected": "0 overlaps, 0 lost, 0 orphans, no deadline overrun",
        "as_expected": ok,
        "runs": runs,
    }
