"""Case 10: reads and writes of a read-write lock, and permits of a
semaphore, under faults: masters paused (SIGSTOP), a minority killed -9
and restarted after the TTL, a minority partitioned (the proxy's
blackhole). Python workers on five masters log every hold's window, from
the moment acquire returned to the moment release began, cut at the
validity the library reported; at no instant may a write's window share
the time with another window, nor more permits' windows be open than the
semaphore has. The negative control SIGSTOPs permit holders past their
validity and measures their windows to their release instead (as a
holder that trusts a lock it lost would use it): the check must report
it, while the same run's windows cut at the validity stay clean."""

from __future__ import annotations

import os
import random

from .. import now_ns
from ..inject import Injector
from .common import clean, healthy, workload_run

TTL = 1.0
PERMITS = 3


def windows(events: list[dict], cut: bool = True) -> list[tuple[int, int, str]]:
    """(start, end, mode) per hold: acquire's return to release's start,
    at most to the validity reported (cut), or to the release (not cut)."""
    out = []
    open_now: dict[str, dict] = {}
    for ev in sorted(events, key=lambda e: e.get("t0", e.get("t", 0))):
        w = ev["w"]
        if ev["ev"] == "acq" and ev["ok"]:
            open_now[w] = {"start": ev["t1"], "vu": ev["vu"], "m": ev.get("m", "lock")}
        elif ev["ev"] == "ext" and ev["ok"] and w in open_now:
            open_now[w]["vu"] = ev["vu"]
        elif ev["ev"] == "rel" and w in open_now:
            h = open_now.pop(w)
            end = min(ev["t0"], h["vu"]) if cut else ev["t0"]
            out.append((h["start"], end, h["m"]))
    for h in open_now.values():
        out.append((h["start"], h["vu"], h["m"]))
    return out


def violations(ws: list[tuple[int, int, str]], permits: int | None) -> dict:
    """Instants where a write shares the time with another hold, or more
    permits than the semaphore's are held; and the most held at once."""
    points = []
    for start, end, mode in ws:
        if end > start:
            points.append((start, 1, mode))
            points.append((end, -1, mode))
    points.sort(key=lambda p: (p[0], p[1]))  # an end before a start at a tie
    held = {"read": 0, "write": 0, "permit": 0}
    most, write_shared, over = 0, 0, 0
    for _, step, mode in points:
        held[mode] = held.get(mode, 0) + step
        total = sum(held.values())
        most = max(most, total)
        if step > 0 and held["write"] and total > 1:
            write_shared += 1
        if step > 0 and permits is not None and held["permit"] > permits:
            over += 1
    return {
        "windows": len(ws),
        "most_at_once": most,
        "write_shared": write_shared,
        "over_permits": over,
        "violations": write_shared + over,
    }


def faults(count: int, period: float):
    """Pauses one master for 0.75 TTL, kills two and restarts them after
    the TTL (their holds had expired: no state lost that counted), and
    partitions two behind the proxy for a second, in turn."""

    def schedule(inj: Injector) -> None:
        for k in range(count):
            if not inj.sleep(period):
                return
            kind = ("pause", "kill", "partition")[k % 3]
            if kind == "pause":
                nodes = random.sample(range(1, 6), 1)
                inj.log("fault", f"SIGSTOP master {nodes}", nodes=nodes)
                inj.pause(nodes)
                inj.sleep(0.75 * TTL)
                inj.resume(nodes)
            elif kind == "kill":
                nodes = random.sample(range(1, 6), 2)
                inj.log("fault", f"kill -9 {nodes}", nodes=nodes)
                inj.kill(nodes)
                inj.restart(nodes, delay=TTL + 0.5)
                inj.sleep(TTL + 0.5)
            else:
                nodes = random.sample(range(1, 6), 2)
                inj.log("fault", f"partition {nodes}", nodes=nodes)
                inj.proxy_mode(nodes, "blackhole")
                inj.sleep(1.0)
                inj.proxy_mode(nodes, "pass")
            inj.log("heal", f"{kind} {nodes} healed", nodes=nodes)

    return schedule


def paused_holders(count: int, period: float):
    """The negative control: SIGSTOPs a holder inside its hold for 1.5 TTL."""

    def schedule(inj: Injector) -> None:
        for _ in range(count):
            if not inj.sleep(period):
                return
            for _ in range(2000):
                wid, _ev = inj.find_holder("read", 5)
                if wid is not None:
                    break
                inj.sleep(0.001)
            else:
                continue
            inj.stop_worker(wid)
            inj.log("fault", f"SIGSTOP holder {wid}", worker=wid, t=now_ns())
            inj.sleep(1.5 * TTL)
            inj.cont_worker(wid)
            inj.log("heal", f"SIGCONT {wid}", worker=wid)

    return schedule


def run(out: str, name: str, modes, permits, schedule, dur: float) -> dict:
    r = workload_run(
        os.path.join(out, f"case10-{name}"),
        n=5,
        duration=dur,
        proxy=True,
        workers=8,
        runtimes=["python"],
        modes=modes,
        ttl=TTL,
        hold_ms=5,
        extend_p=0.2,
        schedule=schedule,
    )
    res = clean(r)
    res["holds"] = violations(windows(r["_events"]), permits)
    res["hold_violations"] = res["holds"]["violations"]
    # The mutex's overlap (any two windows) is the holds' rule here: reads
    # and permits share by design. No data is written: nothing to lose.
    res["overlaps"] = res["hold_violations"]
    res["overlap_examples"] = []
    res["healthy"] = healthy(r)
    if name == "negative":
        res["uncut"] = violations(windows(r["_events"], cut=False), permits)
    return res


def case10(out: str, full: bool) -> dict:
    dur = 40.0 if full else 12.0
    count = 9 if full else 3
    period = dur / (count + 1) - 1.0
    rw_modes = lambda i: ("write", None) if i % 4 == 0 else ("read", None)  # noqa: E731
    sem_modes = lambda i: ("permit", PERMITS)  # noqa: E731
    runs = {
        "rw": run(out, "rw", rw_modes, None, faults(count, period), dur),
        "permits": run(out, "permits", sem_modes, PERMITS, faults(count, period), dur),
        "negative": run(
            out,
            "negative",
            lambda i: ("permit", 2),
            2,
            paused_holders(count, period),
            dur,
        ),
    }
    good = [runs["rw"], runs["permits"]]
    neg = runs["negative"]
    caught = neg["uncut"]["violations"] > 0
    ok = (
        all(r["healthy"] and r["hold_violations"] == 0 for r in good)
        and runs["rw"]["holds"]["most_at_once"] > 1  # reads did share
        and runs["permits"]["holds"]["most_at_once"] == PERMITS
        and neg["healthy"]
        and neg["hold_violations"] == 0
        and caught
    )
    return {
        "case": 10,
        "title": "reads, writes and permits under pauses, kills and partitions",
        "expected": "no write beside another hold, never more than 3 of 3 "
        "permits, with masters paused, killed and partitioned; holders "
        "paused past their validity and trusted to their release: reported "
        "(negative control)",
        "as_expected": ok,
        "runs": runs,
        "negative_control_caught": caught,
        "summary": "; ".join(
            f"{k}: {r['acquired']} holds, most {r['holds']['most_at_once']} at once, "
            f"{r['hold_violations']} violations"
            for k, r in runs.items()
        )
        + f"; negative uncut: {neg['uncut']['violations']} violations",
    }
