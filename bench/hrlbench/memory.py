"""The memory phase: RSS of a fresh process per runtime while holding
10,000 locks, then over 1,000,000 cycles."""

from __future__ import annotations

import time

from . import INTERPS, log
from .pool import Worker


def memory_phase(args, urls) -> dict:
    out = {
        "hold": {},
        "drift": {},
        "hold_count": args.hold,
        "drift_cycles": args.drift_cycles,
    }
    kinds = ["c", "py", "lua5.1", "luajit", "lua5.4", "node"]
    for kind in kinds:
        w = Worker(kind, urls[:1], args.cpu)
        try:
            holds = [("hold", kind)]
            if kind == "py":
                holds.append(("hold-redis-py", "redis-py"))
            if kind in ("c", "py") or kind in INTERPS:
                w.call("cycles 1000")  # warm: connections, allocator
            for cmd, label in holds:
                label = {"c": "C", "py": "Python", "node": "node-redlock"}.get(
                    label, label
                )
                before = w.rss_kb()
                w.call(f"{cmd} {args.hold}")
                held = w.rss_kb()
                w.call("unhold")
                after = w.rss_kb()
                out["hold"][label] = {
                    "rss_before_kb": before,
                    "rss_holding_kb": held,
                    "rss_after_kb": after,
                    "bytes_per_lock": (held - before) * 1024 / args.hold,
                }
                log(
                    f"memory: {label} holding {args.hold} locks: RSS "
                    f"{before} -> {held} kB"
                )
            if kind == "node":
                continue
            label = {"c": "C", "py": "Python"}.get(kind, kind)
            chunk = args.drift_cycles // 10
            points = [(0, w.rss_kb())]
            t0 = time.monotonic()
            for k in range(1, 11):
                w.call(f"cycles {chunk}")
                points.append((k * chunk, w.rss_kb()))
            took = time.monotonic() - t0
            first = points[1][1]
            out["drift"][label] = {
                "points": points,
                "rss_after_first_chunk_kb": first,
                "rss_end_kb": points[-1][1],
                "drift_kb": points[-1][1] - first,
                "seconds": took,
            }
            log(
                f"memory: {label} over {args.drift_cycles} cycles: RSS "
                f"{first} -> {points[-1][1]} kB ({took:.0f} s)"
            )
        finally:
            w.close()
    return out
