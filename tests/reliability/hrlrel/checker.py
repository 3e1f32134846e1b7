"""The checker: reads the workers' logs and the final state, and reports.

A holder's validity window is [acquired, min(release started, valid until)]:
from the moment acquire returned to the moment it began to release, cut at
the validity the library reported (an upper bound, see the workers). Two
windows that overlap are a mutual exclusion violation. An element is
acknowledged when its holder wrote it back and then released (or extended
and released) successfully: an acknowledged element missing from the final
set is a lost update; so is every increment the final counter lacks. With
fencing checked at the data server, a stale holder's read or write-back is
refused there ("refused" events): it writes nothing, so it is no write.

    python3 -m hrlrel.checker RUN_DIR     (prints the report of a run)
"""

from __future__ import annotations

import json
import os
import sys


def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))
    return s[k]


def windows_of(events: list[dict]) -> list[dict]:
    """One window per successful acquire, per worker in log order."""
    by_worker: dict[str, list[dict]] = {}
    for ev in events:
        by_worker.setdefault(ev["w"], []).append(ev)
    out = []
    for wid, evs in by_worker.items():
        cur = None
        for ev in evs:
            kind = ev["ev"]
            if kind == "acq" and ev["ok"]:
                cur = {
                    "w": wid,
                    "start": ev["t1"],
                    "vu": ev["vu"],
                    "end": None,
                    "tok": ev.get("tok"),
                    "writes": [],
                    "ext": [],
                    "rel": None,
                }
                out.append(cur)
            elif cur is None:
                continue
            elif kind == "write":
                cur["writes"].append(ev)
            elif kind == "ext":
                cur["ext"].append(ev)
                if ev["ok"]:
                    cur["vu"] = ev["vu"]
            elif kind == "rel":
                cur["rel"] = ev
                cur["end"] = min(ev["t0"], cur["vu"])
                cur = None
    for w in out:
        if w["end"] is None:
            w["end"] = w["vu"]
    return out


def overlaps_of(windows: list[dict]) -> list[dict]:
    found = []
    ws = sorted(windows, key=lambda w: w["start"])
    best = None  # the window reaching furthest so far
    for w in ws:
        if best is not None and w["start"] < best["end"]:
            found.append(
                {
                    "first": best["w"],
                    "second": w["w"],
                    "overlap_ms": (min(w["end"], best["end"]) - w["start"]) / 1e6,
                    "at": w["start"],
                }
            )
        if best is None or w["end"] > best["end"]:
            best = w
    return found


def check(
    events: list[dict],
    *,
    counter: int,
    elements: set[str],
    wait: float,
    timeout: float,
    epsilon: float,
    faults: list[dict] | None = None,
    orphans_after_run: int | None = None,
    orphans_after_ttl: int | None = None,
) -> dict:
    acqs = [e for e in events if e["ev"] == "acq"]
    rels = [e for e in events if e["ev"] == "rel"]
    exts = [e for e in events if e["ev"] == "ext"]
    ok_acqs = [e for e in acqs if e["ok"]]
    lat = [(e["t1"] - e["t0"]) / 1e6 for e in acqs]
    windows = windows_of(events)
    overlaps = overlaps_of(windows)

    writes, acked, stale_writes = [], set(), 0
    for w in windows:
        for wr in w["writes"]:
            writes.append(wr)
            if wr["t0"] > w["end"]:
                stale_writes += 1  # written after its validity window
        released = w["rel"] is not None and w["rel"]["ok"]
        extended = all(x["ok"] for x in w["ext"])
        if released and extended:
            acked.update(wr["e"] for wr in w["writes"])
    written = {wr["e"] for wr in writes}
    lost_acked = sorted(acked - elements)
    lost_unacked = sorted((written - acked) - elements)

    acq_bound = wait * 1000 + 2 * timeout * 1000 + epsilon * 1000
    round_bound = timeout * 1000 + epsilon * 1000
    overruns = [
        {"op": "acq", "ms": (e["t1"] - e["t0"]) / 1e6, "w": e["w"], "err": e["err"]}
        for e in acqs
        if (e["t1"] - e["t0"]) / 1e6 > acq_bound
    ] + [
        {"op": e["ev"], "ms": (e["t1"] - e["t0"]) / 1e6, "w": e["w"], "err": e["err"]}
        for e in rels + exts
        if (e["t1"] - e["t0"]) / 1e6 > round_bound
    ]

    def outcomes(evs):
        counts: dict[str, int] = {}
        for e in evs:
            key = "ok" if e["ok"] else (e["err"] or "?").split(":")[0]
            counts[key] = counts.get(key, 0) + 1
        return counts

    recoveries = []
    oks = sorted(e["t1"] for e in ok_acqs)
    for f in faults or []:
        if f.get("ev") != "heal":
            continue
        nxt = next((t for t in oks if t >= f["t"]), None)
        recoveries.append(
            {
                "what": f["what"],
                "ms": None if nxt is None else (nxt - f["t"]) / 1e6,
            }
        )

    def r(x):
        return None if x is None else round(x, 3)

    return {
        "workers": len({e["w"] for e in events}),
        "acquire_calls": len(acqs),
        "acquired": len(ok_acqs),
        "success_rate": r(len(ok_acqs) / len(acqs)) if acqs else None,
        "acquire_outcomes": outcomes(acqs),
        "latency_ms": {
            "p50": r(percentile(lat, 50)),
            "p99": r(percentile(lat, 99)),
            "p99.9": r(percentile(lat, 99.9)),
            "max": r(max(lat) if lat else None),
        },
        "overlaps": len(overlaps),
        "overlap_examples": overlaps[:5],
        "max_overlap_ms": r(max((o["overlap_ms"] for o in overlaps), default=0.0)),
        "writes": len(writes),
        "acked": len(acked),
        "counter": counter,
        "counter_lost": len(writes) - counter,
        "lost_acked": len(lost_acked),
        "lost_acked_examples": lost_acked[:5],
        "lost_unacked": len(lost_unacked),
        "stale_writes": stale_writes,
        "fence_refused": sum(1 for e in events if e["ev"] == "refused"),
        "release_outcomes": outcomes(rels),
        "extend_outcomes": outcomes(exts),
        "deadline_bound_ms": {
            "acquire": r(acq_bound),
            "release_extend": r(round_bound),
        },
        "overruns": len(overruns),
        "overrun_examples": sorted(overruns, key=lambda o: -o["ms"])[:5],
        "orphans_after_run": orphans_after_run,
        "orphans_after_ttl": orphans_after_ttl,
        "recoveries": recoveries,
        "max_recovery_ms": r(
            max((x["ms"] for x in recoveries if x["ms"] is not None), default=None)
        ),
    }


def main() -> None:
    run_dir = sys.argv[1]
    with open(os.path.join(run_dir, "result.json")) as f:
        print(json.dumps(json.load(f)["check"], indent=2))


if __name__ == "__main__":
    main()
