"""Case 8: the client wall clock jumps +1 h, then -1 h (libfaketime);
only CLOCK_MONOTONIC may matter."""

from __future__ import annotations

import os

from ..inject import Injector
from .common import clean, healthy, safe, workload_run

LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


def case8(out: str, full: bool) -> dict:
    run_dir = os.path.join(out, "case8")
    stamp = os.path.join(out, "case8.faketime")
    os.makedirs(out, exist_ok=True)
    with open(stamp, "w") as f:
        f.write("+0\n")
    faked = {0, 1, 3, 5}  # python, lua5.1, luajit, lua5.4

    def env_for(i: int) -> dict:
        if i not in faked:
            return {}
        return {
            "LD_PRELOAD": LIBFAKETIME,
            "FAKETIME_TIMESTAMP_FILE": stamp,
            "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        }

    def schedule(inj: Injector) -> None:
        third = (inj.end_at - inj.start_at) / 3
        for k, offset in ((1, "+1h"), (2, "-1h")):
            if not inj.wait_until(inj.start_at + int(k * third)):
                return
            with open(stamp, "w") as f:
                f.write(offset + "\n")
            inj.log("fault", f"wall clock {offset} on the faked workers")
        inj.sleep(third / 1e9)

    dur = 60.0 if full else 12.0
    r = workload_run(run_dir, n=5, duration=dur, schedule=schedule, env_for=env_for)
    events = r["_events"]
    # t0 is CLOCK_MONOTONIC (never faked, one clock for every process), so
    # wall - t0 is one constant for a real worker and that constant plus the
    # faked offset for a faked one. Each acquire is judged on its own: a
    # worker that won no acquire in some third of the run (the lock is
    # contended; who wins is the scheduler's choice) proves nothing either
    # way, so the jumps are required of the faked workers together, in the
    # order they were made.
    acqs = sorted((e for e in events if e["ev"] == "acq"), key=lambda e: e["t0"])
    real_offs = sorted(
        e["wall"] - e["t0"] / 1e9 for e in acqs if int(e["w"][1:3]) not in faked
    )
    if real_offs:
        base = real_offs[len(real_offs) // 2]
    else:
        base = next((e["wall"] - e["t0"] / 1e9 for e in acqs), 0.0)
    jumps: dict = {}
    sequence: list = []
    for e in acqs:
        level = round((e["wall"] - e["t0"] / 1e9 - base) / 60) * 60
        jumps.setdefault(e["w"], set()).add(level)
        if int(e["w"][1:3]) in faked and (not sequence or sequence[-1] != level):
            sequence.append(level)
    jumps = {w: sorted(v) for w, v in jumps.items()}
    faked_ids = [w for w in jumps if int(w[1:3]) in faked]
    real_ids = [w for w in jumps if int(w[1:3]) not in faked]
    saw = sequence == [0, 3600, -3600] and len(faked_ids) == len(faked)
    steady = all(jumps[w] == [0] for w in real_ids)
    res = clean(r)
    res["wall_offsets_s"] = jumps
    ok = healthy(r) and safe(res) and saw and steady
    faked_acq = [e for e in events if e["ev"] == "acq" and int(e["w"][1:3]) in faked]
    return {
        "case": 8,
        "title": "client wall clock jumped +1 h, then -1 h (libfaketime)",
        "expected": "the faked workers see the jumps in their wall clock; 0 overlaps, "
        "0 lost (only CLOCK_MONOTONIC is used)",
        "as_expected": ok,
        "runs": {"n5": res},
        "faked_workers_saw_jumps": saw,
        "faked_workers": faked_ids,
        "faked_acquired": sum(1 for e in faked_acq if e["ok"]),
        "summary": f"faked workers' wall-clock levels in turn: {sequence}, "
        f"real workers' {sorted({tuple(jumps[w]) for w in real_ids})}",
    }
