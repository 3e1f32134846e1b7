"""Case 9: error replies (READONLY, OOM, NOSCRIPT) and paused masters."""

from __future__ import annotations

import os
import random

from ..inject import Injector
from .common import clean, healthy, safe, workload_run


def case9(out: str, full: bool) -> dict:
    faults = [
        ("pause", 2),
        ("readonly", 2),
        ("oom", 2),
        ("noscript", 5),
        ("pause", 3),
        ("readonly", 3),
        ("oom", 3),
    ]

    def schedule(inj: Injector) -> None:
        rounds = 3 if full else 1
        for _ in range(rounds):
            for kind, count in faults:
                if not inj.sleep(1.0):
                    return
                nodes = random.sample(range(1, 6), count)
                inj.log("fault", f"{kind} on {len(nodes)} masters", nodes=nodes)
                if kind == "pause":
                    inj.pause(nodes)
                elif kind == "readonly":
                    inj.readonly(nodes)
                elif kind == "oom":
                    inj.oom(nodes)
                else:
                    for _ in range(10):
                        inj.script_flush(nodes)
                        inj.sleep(0.15)
                    inj.log("heal", f"{kind} on {len(nodes)} masters", nodes=nodes)
                    continue
                inj.sleep(1.5)
                if kind == "pause":
                    inj.resume(nodes)
                elif kind == "readonly":
                    inj.writable(nodes)
                else:
                    inj.no_oom(nodes)
                inj.log("heal", f"{kind} on {len(nodes)} masters", nodes=nodes)

    def commandstats(masters) -> dict:
        calls = {"eval": 0, "evalsha": 0}
        for i in range(1, 6):
            info = masters.redis(i).info("commandstats")
            for cmd in calls:
                calls[cmd] += info.get(f"cmdstat_{cmd}", {}).get("calls", 0)
        return calls

    dur = (len(faults) * 3 * 2.6 + 3) if full else (len(faults) * 2.6 + 2)
    r = workload_run(
        os.path.join(out, "case9"),
        n=5,
        duration=dur,
        schedule=schedule,
        inspect=commandstats,
    )
    res = clean(r)
    rec = [x for x in res["recoveries"] if x["ms"] is not None]
    ok = (
        healthy(r)
        and safe(res)
        and len(rec) == len(res["recoveries"])
        and res["inspect"]["eval"] > 0
    )
    return {
        "case": 9,
        "title": "error replies (READONLY, OOM, NOSCRIPT) and paused masters",
        "expected": "minority: no effect on safety; majority: acquires fail with the "
        "reason (at once for a lasting refusal, at their deadline for a "
        "pause), then recover after the heal; 0 overlaps, 0 lost",
        "as_expected": ok,
        "runs": {"n5": res},
        "summary": f"EVAL fallbacks after NOSCRIPT: {res['inspect']['eval']}; "
        f"max recovery {res['max_recovery_ms']} ms",
    }
