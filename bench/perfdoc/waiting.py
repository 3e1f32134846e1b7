"""The waiting phases in PERFORMANCE.md: contention (W processes on one
name), the nginx stampede, and the cycle through a delay proxy."""

from __future__ import annotations

from .fmt import DASH, TIMES, mark, md_table

MICRO = "\u00b5"


def _value(t) -> str:
    v = t["value"]
    if "ms" in t["what"]:
        return f"{v:.1f}"
    if t["what"] == "busy":
        if "one_cpu_bound" in t:
            return (
                f"{v * 100:.1f} % ({t['of_bound'] * 100:.0f} % of the "
                f"{t['one_cpu_bound'] * 100:.1f} % one CPU allows)"
            )
        return f"{v * 100:.1f} %"
    if "one_cpu_ratio" in t:
        return (
            f"{v:.2f} (one CPU allows it {t['one_cpu_ratio']:.2f} of the "
            f"peer's: {t['one_cpu_holds']:.0f} holds/s on {t['masters']} masters "
            f"against {t['peer_one_cpu_holds']:.0f} on its one; it used "
            f"{t['of_one_cpu'] * 100:.0f} % of that, the peer "
            f"{t['peer_of_one_cpu'] * 100:.0f} % of its own)"
        )
    return f"{v:.2f}"


def _mark(t) -> str:
    if not t["met"] and t.get("floor_bound"):
        return "**missed: floor-bound here**"
    return mark(t["met"])


def _think(cont) -> str:
    spread = cont.get("think_spread_ms")
    if not spread:
        return f"{cont['think_ms']:g} ms"
    lo, hi = cont["think_ms"] - spread, cont["think_ms"] + spread
    return f"{lo:g}{DASH}{hi:g} ms (uniform, seeded per process)"


def _bound(t) -> str:
    b = t["bound"]
    return f"{t['op']} {b * 100:g} %" if t["what"] == "busy" else f"{t['op']} {b:g}"


def _allows(r) -> str:
    oc = r.get("one_cpu")
    if not oc:
        return DASH
    return (
        f"{oc['busy_bound'] * 100:.1f} % ({oc['handoff_floor_ms'] * 1e3:.0f} "
        f"{MICRO}s floor)"
    )


def contention(d) -> list[str]:
    lines: list[str] = []
    w = lines.append
    cont = d.get("contention")
    if not cont or "runs" not in cont:
        return lines
    runs = cont["runs"]
    w("## Contention: W processes, one name")
    w("")
    w(
        f"W processes on one name, each looping: acquire (blocking), hold "
        f"{cont['hold_ms']:g} ms, release, think {_think(cont)} "
        f"({runs[0]['duration_s']:g} s a run; a perfect lock is busy all the "
        f"time, about 500 holds/s). hiredlock at its defaults (a waiter that "
        f"no release wakes tries again after {cont['retry_delay_ms']} ± "
        f"{cont['retry_jitter_ms']} ms); the peers as their users run them, "
        f"redis-py with its hiredis parser. Busy: the share of the run some "
        f"process held the lock. Hand-off: from a holder calling release to "
        f"the next holder's acquire returning. Wait: from an acquire call to "
        f"its return. Per process: the fewest and most holds of the W. "
        f"Overlaps: holds that began before the previous one was released, "
        f"as the processes saw it (CLOCK_BOOTTIME): must be 0. One CPU "
        f"allows: every process and master shares one CPU, and a release "
        f"call (sending, every master's script with its PUBLISH in turn, the "
        f"replies) is what that CPU does for a hand-off; the next holder needs "
        f"a quorum's share of it. That share of the fastest tenth of the "
        f"run's release calls (the floor in the column), against the "
        f"run's mean hold, gives the busiest the lock could be here. "
        f"python-redis-lock runs on one master only: hiredlock's N = 5 runs "
        f"are held against its N = 1 run, and where one CPU allows hiredlock "
        f"at N = 5 fewer holds/s (that bound over the mean hold) than it "
        f"allows the peer on its one master, the target is floor-bound here "
        f"(the row says how much of its own bound each used)."
    )
    w("")
    for n in sorted({r["n"] for r in runs}):
        for wn in sorted({r["w"] for r in runs}):
            rows = [
                [
                    r["label"],
                    f"{r['holds_per_s']:,.0f}",
                    f"{r['busy'] * 100:.1f} %",
                    _allows(r),
                    f"{r['handoff_ms']['p50']:.2f}",
                    f"{r['handoff_ms']['p99']:.2f}",
                    f"{r['wait_ms']['p50']:.1f}",
                    f"{r['wait_ms']['p99']:.1f}",
                    f"{r['wait_ms']['max']:,.1f}",
                    f"{min(r['holds_per_process'])}{DASH}{max(r['holds_per_process'])}",
                    str(r["overlaps"]),
                ]
                for r in sorted(
                    (r for r in runs if r["n"] == n and r["w"] == wn),
                    key=lambda r: -r["holds_per_s"],
                )
            ]
            if not rows:
                continue
            w(f"### N = {n}, W = {wn}")
            w("")
            w(
                md_table(
                    [
                        "library",
                        "holds/s",
                        "busy",
                        "one CPU allows",
                        "hand-off p50 ms",
                        "p99 ms",
                        "wait p50 ms",
                        "p99 ms",
                        "max ms",
                        "holds per process",
                        "overlaps",
                    ],
                    rows,
                )
            )
            w("")
    targets = cont.get("targets", [])
    if targets:
        w("Targets of issue 14, every hiredlock run:")
        w("")
        rows = [[t["run"], t["what"], _value(t), _bound(t), _mark(t)] for t in targets]
        w(md_table(["run", "target", "measured", "bound", ""], rows, left=2))
        w("")
    return lines


def stampede(d) -> list[str]:
    lines: list[str] = []
    w = lines.append
    st = d.get("stampede")
    if not st:
        return lines
    w("## nginx stampede")
    w("")
    w(
        f"{st['requests']} concurrent requests for one key in one nginx "
        f"({st['workers']} workers), each: lock the key; if the cache (a "
        f"shared dict) has the value, unlock and answer; else work "
        f"{st['work_ms']:g} ms, fill the cache, unlock. The first request "
        f"does the work, the others wait and find the cache filled. Total: "
        f"from the first request's arrival to the last answer (inside "
        f"nginx); after the release: each waiter's answer since the worker's "
        f"unlock. hiredlock on one master (a lock valid across hosts) next "
        f"to lua-resty-lock (one host: a shared dict), in the same nginx; "
        f"{st['reps']} repetitions, medians."
    )
    w("")
    rows = []
    for r in st["libs"].values():
        rows.append(
            [
                r["label"],
                f"{r['total_ms']:.1f}",
                f"{r['after_release_ms']['p50']:.1f}",
                f"{r['after_release_ms']['p99']:.1f}",
                f"{r['after_release_ms']['max']:.1f}",
                f"{r['served']}/{st['requests']}",
            ]
        )
    w(
        md_table(
            [
                "lock",
                "total ms",
                "after release p50 ms",
                "p99 ms",
                "max ms",
                "served",
            ],
            rows,
        )
    )
    w("")
    t = st.get("target")
    if t:
        w(
            f"Target: hiredlock's total within {t['bound_ms']:g} ms of "
            f"lua-resty-lock's: {t['hiredlock_ms']:.1f} {DASH} "
            f"{t['resty_ms']:.1f} = {t['diff_ms']:+.1f} ms, {mark(t['met'])}."
        )
        w("")
    return lines


def delay(d) -> list[str]:
    lines: list[str] = []
    w = lines.append
    dl = d.get("delay")
    if not dl:
        return lines
    w("## Through a delay proxy: what a fan-out saves")
    w("")
    w(
        f"Loopback hides what sending to every master at once saves. Each "
        f"master sits behind {dl['proxy']}, which adds a fixed delay each "
        f"way; one client, back-to-back uncontended acquire + release "
        f"cycles ({dl['seconds']:g} s a case and delay, median of "
        f"{dl['reps']}). A client that asks the masters one after the other "
        f"pays N round trips, one that asks them at once pays one."
    )
    w("")
    delays = dl["delays_ms"]
    head = ["client"] + [f"{x:g} ms: N = {n} ms" for x in delays for n in dl["masters"]]
    rows = []
    for c in dl["cases"].values():
        row = [c["label"]]
        for x in delays:
            for n in dl["masters"]:
                v = c["cycle_ms"].get(f"{x:g}", {}).get(str(n))
                row.append(DASH if v is None else f"{v:.2f}")
        rows.append(row)
    w(md_table(head, rows))
    w("")
    for t in dl.get("targets", []):
        w(
            f"- {t['what']}: {t['ratio']:.3f}{TIMES} (target {t['op']} "
            f"{t['bound']:g}{TIMES}): {mark(t['met'])}"
        )
    if dl.get("targets"):
        w("")
    return lines
