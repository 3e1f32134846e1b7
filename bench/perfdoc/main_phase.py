"""The main phase in PERFORMANCE.md: the targets (with the reading of
them, perfdoc/explain.py), one table per N, the peers, the A/B cases."""

from __future__ import annotations

from hrlbench.targets import ROUND_TRIP_TARGETS, TARGETS  # bench/, beside

from .explain import explain
from .fmt import DASH, TIMES, fmt_rate, fmt_ratio, fmt_us, mark, md_table

# The targets the bench sets now: a results file of an older run may hold
# retired ones (issue 31 dropped N = 5 against N = 1 on loopback).
CURRENT = {t[0] for t in TARGETS} | {t[0] for t in ROUND_TRIP_TARGETS}


def targets(d) -> list[str]:
    """The targets of issues 7 and 15, met or missed, and the floor's
    ratios."""
    main = d.get("main", {})
    lines: list[str] = []
    w = lines.append
    w("## Targets")
    w("")
    rows = []
    beside: dict[str, list[dict]] = {}
    for x in main.get("diagnostic_ratios", []):
        beside.setdefault(x["beside"], []).append(x)
    for t in main.get("targets", []):
        if t["id"] not in CURRENT:
            continue
        verdict = mark(t["met"])
        if not t["met"] and t.get("floor_bound"):
            # The machine's floor alone is past the bound (hrlbench/targets.py,
            # TARGET_FLOORS): said so, with that floor from the same run.
            verdict = (
                f"**missed: floor-bound here** (the floor alone: "
                f"{fmt_ratio(t['floor']['ratio'])})"
            )
        rows.append(
            [
                t["what"],
                fmt_ratio(t["ratio"]),
                f"{t['op']} {t['bound']:g}",
                verdict,
            ]
        )
        # Diagnostics beside the target (hrlbench/targets.py,
        # DIAGNOSTIC_RATIOS): no bound, no verdict; the target's stands.
        for x in beside.get(t["id"], []):
            rows.append(
                [f"{x['what']} *(diagnostic)*", fmt_ratio(x["ratio"]), DASH, DASH]
            )
    # The fan-out target: N = 5 against N = 1 where a round trip costs
    # something, through the delay proxy (loopback is floor-bound).
    for t in d.get("delay", {}).get("targets", []):
        rows.append(
            [
                f"{t['what']} (delay proxy: the fan-out target)",
                f"{t['ratio']:.3f}",
                f"{t['op']} {t['bound']:g}",
                mark(t["met"]),
            ]
        )
    paused = d.get("paused", {}).get("cases", {})
    for cid in ("c-n5", "py-n5", "lua5.1-n5", "luajit-n5", "lua5.4-n5"):
        if cid in paused:
            p = paused[cid]
            rows.append(
                [
                    f"{cid}: acquire p99 with 1 of 5 masters paused",
                    fmt_us(p["latency_us"]["p99"]) + " µs"
                    if p["latency_us"]["p99"] < 10000
                    else fmt_us(p["latency_us"]["p99"]),
                    f"<= {p['p99_bound_us'] / 1000:g} ms",
                    mark(p["p99_met"]),
                ]
            )
    w(md_table(["target", "measured: median (IQR)", "bound", ""], rows, left=4))
    w("")
    w("What the floor itself allows, in the same run:")
    w("")
    w(
        md_table(
            ["floor ratio", "measured: median (IQR)"],
            [[f["what"], fmt_ratio(f["ratio"])] for f in main.get("floor_ratios", [])],
        )
    )
    w("")
    deploy = main.get("deploy_ratios", [])
    if deploy:
        w(
            "Deployments (TLS, Redis Cluster, replica-acknowledged writes), in"
            " the same run:"
        )
        w("")
        w(
            md_table(
                ["ratio", "measured: median (IQR)"],
                [[x["what"], fmt_ratio(x["ratio"])] for x in deploy],
            )
        )
        w("")
        sync = {
            x["id"]: x["ratio"]["median"] for x in deploy if x["id"].startswith("sync-")
        }
        if "sync-c1" in sync and "sync-c5" in sync:
            w(
                '`sync_replicas=1` (docs/SAFETY.md, "Failover") adds no round'
                " trip: its `WAIT 1` goes in the same write as the `SET` and the"
                " release needs none, so a cycle pays the replica's"
                " acknowledgement once: "
                f"{sync['sync-c1']:.2f}{TIMES} the plain cycle on the same"
                f" replicated masters at N = 1, {sync['sync-c5']:.2f}{TIMES} at"
                " N = 5 (C)."
            )
            w("")
    w(explain(d))
    w("")
    return lines


def main_table(d) -> list[str]:
    """One client, uncontended cycles: a table per N, the peers."""
    main = d.get("main", {})
    cases = d.get("main", {}).get("cases", {})
    lines: list[str] = []
    w = lines.append
    w("## One client, uncontended cycles")
    w("")
    w(
        "Time ratio: time per cycle over the floor's at the same N (the raw "
        "loop at N = 1, the raw fan-out at N > 1), median of paired "
        "repetitions (IQR). Client CPU: the benchmark process's own CPU time "
        "per cycle. Diagnostic rows isolate one cost and are not part of any "
        "target."
    )
    w("")
    for n in (1, 3, 5, 7):
        group = [(cid, c) for cid, c in cases.items() if c["n"] == n]
        if not group:
            continue
        order = {
            "floor": 0,
            "hiredlock": 1,
            "fenced": 2,
            "owner": 2,
            "peer": 3,
            "diagnostic": 4,
        }
        group.sort(key=lambda r: (order[r[1]["kind"]], -r[1]["rate_median"]))
        w(f"### N = {n}")
        w("")
        rows = []
        for cid, c in group:
            lat = c.get("latency_us") or {}
            label = c["label"] + (
                " *(diagnostic)*" if c["kind"] == "diagnostic" else ""
            )
            rows.append(
                [
                    f"`{cid}`",
                    label,
                    c["runtime"],
                    fmt_rate(c["rate_median"]),
                    f"{c['us_per_cycle']:.1f}",
                    f"{c['cpu_us_per_cycle']:.1f}"
                    if c.get("cpu_us_per_cycle")
                    else DASH,
                    fmt_us(lat.get("p50")),
                    fmt_us(lat.get("p99")),
                    fmt_us(lat.get("p999")),
                    fmt_ratio(c.get("vs_floor"))
                    if c.get("vs_floor")
                    else "1 (floor)"
                    if cid == c["floor"]
                    else DASH,
                ]
            )
        w(
            md_table(
                [
                    "case",
                    "what",
                    "runtime",
                    "cycles/s",
                    "µs/cycle",
                    "CPU µs/cycle",
                    "p50 µs",
                    "p99 µs",
                    "p99.9 µs",
                    "ratio to floor",
                ],
                rows,
                left=3,
            )
        )
        w("")
    rb = cases.get("redis-benchmark", {}).get("rb")
    if rb:
        w(
            f"`redis-benchmark` runs `-c 1` on master 1 twice per repetition, "
            f"`SET key token NX PX 30000` (median {rb['set']:,.0f} requests/s) "
            f"and `EVALSHA` of the release script ({rb['evalsha']:,.0f} "
            f"requests/s) on random keys; its cycle is one of each. Its "
            f"latencies are its own, for the SET (it reports no p99.9)."
        )
        w("")
    vs = main.get("versus", [])
    if vs:
        w(
            "hiredlock's speed over each peer's at the same N (the peer's time "
            "per cycle over hiredlock's, paired by repetition):"
        )
        w("")
        peers = sorted({x["peer"] for x in vs}, key=lambda p: (cases[p]["n"], p))
        hs = ["c", "py", "lua5.1", "luajit", "lua5.4"]
        rows = []
        for p in peers:
            row = [f"`{p}` ({cases[p]['label']})"]
            for h in hs:
                x = next(
                    (
                        e
                        for e in vs
                        if e["peer"] == p and e["hiredlock"] == f"{h}-n{cases[p]['n']}"
                    ),
                    None,
                )
                row.append(
                    f"{x['ratio']['median']:.2f}{TIMES}" if x and x["ratio"] else DASH
                )
            rows.append(row)
        w(
            md_table(
                [
                    "peer",
                    f"{TIMES} C",
                    f"{TIMES} Python",
                    f"{TIMES} lua5.1",
                    f"{TIMES} LuaJIT",
                    f"{TIMES} lua5.4",
                ],
                rows,
            )
        )
        w("")
    return lines


def ab(d) -> list[str]:
    """A/B of a core change (bench/ab-worker.sh, --ab)."""
    main = d.get("main", {})
    cases = d.get("main", {}).get("cases", {})
    lines: list[str] = []
    w = lines.append
    ab = main.get("ab") or []
    if ab:
        w("### A/B: this checkout's core against another")
        w("")
        w(
            "The `ab-` cases run the same C worker built on another "
            "revision's core (`bench/ab-worker.sh`), interleaved with this "
            "checkout's: the time per cycle of this checkout over the other's, "
            "paired by repetition (below 1: faster now)."
        )
        w("")
        rows = [
            [
                f"`{x['case']}` / `{x['ab']}`",
                cases[x["ab"]]["label"],
                fmt_ratio(x["ratio"]),
            ]
            for x in ab
            if x["ratio"]
        ]
        w(md_table(["cases", "other core", "time ratio: median (IQR)"], rows, 2))
        w("")
    return lines
