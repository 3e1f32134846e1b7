"""Case 4: a lock holder paused (SIGSTOP) for 1.5 x TTL: its extend and
release say not owned. Twice: with plain locks the counter loses updates
(the negative control: the checker sees what a pause costs); with fenced
locks whose fence the data server checks (hiredlock.fenced_write on the
read and the write-back), the paused holder's write is refused and
nothing is lost."""

from __future__ import annotations

import os
import time

from .. import now_ns
from ..inject import Injector
from .common import clean, healthy, workload_run


def paused_run(out: str, full: bool, fenced: bool) -> tuple[dict, dict]:
    """One workload run with holders paused inside their critical section;
    returns its result and, per pause, what the stale holder saw next."""
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
        os.path.join(out, "case4-fenced" if fenced else "case4"),
        n=5,
        duration=dur,
        ttl=ttl,
        timeout=0.1,
        extend_p=0.5,
        fenced=fenced,
        schedule=schedule,
    )
    return r, {"pauses": pauses}


def stale_holders(r: dict, pauses: list[dict]) -> list[dict]:
    """Per pause: the stale holder's first calls after SIGCONT, whether its
    fence was refused, and the releases of the other holders right after
    (their keys were left alone if they released fine)."""
    events = r["_events"]
    per_pause = []
    for p in pauses:
        mine = []
        refused = False
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
            refused |= e["ev"] == "refused"
        first = mine[0] if mine else None
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
                "write_refused": refused,
                "others_released_ok": all(e["ok"] for e in others),
                # the stale holder never deleted the new holder's key:
                "others_not_owned": sum(
                    1 for e in others if (e["err"] or "").startswith("not owned")
                ),
                "others_released": len(others),
            }
        )
    return per_pause


def lost(res: dict) -> int:
    return res["lost_acked"] + max(res["counter_lost"], 0)


def case4(out: str, full: bool) -> dict:
    results = {}
    for fenced in (False, True):
        r, extra = paused_run(out, full, fenced)
        res = clean(r)
        res["pauses"] = stale_holders(r, extra["pauses"])
        not_owned = [
            x
            for x in res["pauses"]
            if (x["first_result"] or "").startswith("not owned")
        ]
        res["not_owned"] = {
            "ext": sum(1 for x in not_owned if x["first_call"] == "ext"),
            "rel": sum(1 for x in not_owned if x["first_call"] == "rel"),
        }
        # Both runs: every stale holder hears "not owned" and leaves the new
        # holder's key alone, and no two validity windows overlap.
        res["holders_ok"] = (
            healthy(r)
            and len(res["pauses"]) >= 1
            and len(not_owned) == len(res["pauses"])
            and all(x["others_not_owned"] == 0 for x in res["pauses"])
            and res["overlaps"] == 0
        )
        results["n5_fenced" if fenced else "n5"] = res
    plain, fenced_res = results["n5"], results["n5_fenced"]
    negative_caught = lost(plain) > 0 and plain["stale_writes"] >= 1
    fenced_safe = (
        lost(fenced_res) == 0
        and fenced_res["fence_refused"] >= 1
        and any(x["write_refused"] for x in fenced_res["pauses"])
    )
    return {
        "case": 4,
        "title": "a lock holder paused (SIGSTOP) for 1.5 x TTL",
        "expected": "its extend/release say not owned, the new holder's key is "
        "left alone; with plain locks the counter loses updates and the "
        "checker reports it (negative control); with fenced locks checked at "
        "the data server the stale holder's write is refused and nothing is "
        "lost",
        "as_expected": plain["holders_ok"]
        and fenced_res["holders_ok"]
        and negative_caught
        and fenced_safe,
        "runs": results,
        "extend_not_owned": plain["not_owned"]["ext"] + fenced_res["not_owned"]["ext"],
        "release_not_owned": plain["not_owned"]["rel"] + fenced_res["not_owned"]["rel"],
        "negative_control_caught": negative_caught,
        "fenced_lost_nothing": fenced_safe,
    }
