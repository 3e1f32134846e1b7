"""Case 4: a lock holder paused (SIGSTOP) for 1.5 x TTL: its extend and
release say not owned; the unfenced counter loses updates (negative
control)."""

from __future__ import annotations

import os
import time

from .. import now_ns
from ..inject import Injector
from .common import clean, healthy, workload_run


def case4(out: str, full: bool) -> dict:
    dur = 40.0 if full else 12.0
    count = 8 if full else 3
    ttl = 1.0
    pauses = []

    def schedule(inj: Injector) -> None:
        for k in range(count):
            if not inj.sleep(1.0 if k == 0 else dur / (count + 1) - 1.5 * ttl):
                return
            for _ in range(2000):
                wid, ev = inj.find_holder("read", 5)
                if wid is None:
                    time.sleep(0.001)
                    continue
                inj.stop_worker(wid)
                last = inj.workload.last_event(wid)
                if last["ev"] == "read" and last["t"] == ev["t"]:
                    break  # stopped inside its critical section
                inj.cont_worker(wid)
            else:
                continue
            t = now_ns()
            inj.log("fault", f"SIGSTOP holder {wid}", worker=wid)
            inj.sleep(1.5 * ttl)
            inj.cont_worker(wid)
            pauses.append({"w": wid, "stopped": t, "resumed": now_ns()})
            inj.log("heal", f"SIGCONT {wid}", worker=wid)

    r = workload_run(
        os.path.join(out, "case4"),
        n=5,
        duration=dur,
        ttl=ttl,
        timeout=0.1,
        extend_p=0.5,
        schedule=schedule,
    )
    events = r["_events"]
    per_pause = []
    for p in pauses:
        mine = []
        for e in events:  # the stale holder's calls, up to its next acquire
            if (
                e["w"] != p["w"]
                or e.get("t0", e.get("t", 0)) < p["resumed"] - 50_000_000
            ):
                continue
            if e["ev"] == "acq":
                break
            if e["ev"] in ("ext", "rel"):
                mine.append(e)
        first = mine[0] if mine else None
        # Releases of the other holders right after the stale holder's call:
        # their keys were left alone if they released fine.
        others = [
            e
            for e in events
            if e["w"] != p["w"]
            and e["ev"] == "rel"
            and first is not None
            and first["t1"] <= e["t0"] <= first["t1"] + 1e9
        ]
        per_pause.append(
            {
                "w": p["w"],
                "paused_ms": round((p["resumed"] - p["stopped"]) / 1e6, 1),
                "first_call": first["ev"] if first else None,
                "first_result": (first["err"] or "ok") if first else None,
                "next_call": (mine[1]["ev"] + ": " + (mine[1]["err"] or "ok"))
                if len(mine) > 1
                else None,
                "others_released_ok": all(e["ok"] for e in others),
                # the stale holder never deleted the new holder's key:
                "others_not_owned": sum(
                    1 for e in others if (e["err"] or "").startswith("not owned")
                ),
                "others_released": len(others),
            }
        )
    res = clean(r)
    res["pauses"] = per_pause
    not_owned = [
        x for x in per_pause if (x["first_result"] or "").startswith("not owned")
    ]
    ext_no = sum(1 for x in not_owned if x["first_call"] == "ext")
    rel_no = sum(1 for x in not_owned if x["first_call"] == "rel")
    lost = res["lost_acked"] + max(res["counter_lost"], 0)
    ok = (
        healthy(r)
        and len(per_pause) >= 1
        and len(not_owned) == len(per_pause)
        and all(x["others_not_owned"] == 0 for x in per_pause)
        and res["overlaps"] == 0
        and lost > 0
        and res["stale_writes"] >= 1
    )
    return {
        "case": 4,
        "title": "a lock holder paused (SIGSTOP) for 1.5 x TTL",
        "expected": "its extend/release say not owned, the new holder's key is "
        "left alone; the unfenced counter loses updates and the "
        "checker reports it (negative control)",
        "as_expected": ok,
        "runs": {"n5": res},
        "extend_not_owned": ext_no,
        "release_not_owned": rel_no,
        "negative_control_caught": lost > 0,
    }
