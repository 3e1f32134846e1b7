#!/usr/bin/env python3
"""Renders one bench/harness.py result file as PERFORMANCE.md and
performance.png. Every number in them comes from the JSON; nothing here is
a measurement.

    python3 bench/report.py bench/results/<date>.json [--docs docs]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIMES = "\u00d7"  # the multiplication sign, in "1.02x" and "2 x CPU"
DASH = "\u2013"  # the en dash: "no value", and ranges "1.01-1.03"
SERIES = [  # (key, legend, colour): the plot's libraries
    ("floor", "floor (raw hiredis)", "#444444"),
    ("C", "hiredlock C", "#1f77b4"),
    ("Python", "hiredlock Python", "#2ca02c"),
    ("lua5.1", "hiredlock lua5.1", "#9467bd"),
    ("luajit", "hiredlock LuaJIT", "#8c564b"),
    ("lua5.4", "hiredlock lua5.4", "#e377c2"),
    ("pottery", "pottery", "#ff7f0e"),
    ("node-redlock", "node-redlock", "#d62728"),
]


def fmt_rate(x):
    return DASH if x is None else f"{x:,.0f}"


def fmt_us(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return DASH
    if x >= 10000:
        return f"{x / 1000:,.1f} ms"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def fmt_ratio(q, digits=3):
    if q is None:
        return DASH
    return (
        f"{q['median']:.{digits}f} ({q['p25']:.{digits}f}{DASH}{q['p75']:.{digits}f})"
    )


def mark(ok):
    return "**met**" if ok else "**missed**"


def series_of(case):
    if case["kind"] == "floor":
        return "floor" if case["runtime"] == "C" else None
    if case["kind"] == "hiredlock":
        return case["runtime"]
    if case["library"] in ("pottery", "node-redlock"):
        return case["library"]
    return None


# ------------------------------------------------------------------- plot


def plot(d, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = d["main"]["cases"]
    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5))
    # (a) cycles/s by library and N
    ax = axes[0][0]
    ns = [1, 3, 5, 7]
    width = 0.8 / len(SERIES)
    for k, (key, legend, colour) in enumerate(SERIES):
        xs, ys = [], []
        for i, n in enumerate(ns):
            for c in cases.values():
                if c["n"] == n and series_of(c) == key and c["kind"] != "diagnostic":
                    xs.append(i + (k - len(SERIES) / 2 + 0.5) * width)
                    ys.append(c["rate_median"])
        if xs:
            ax.bar(xs, ys, width, label=legend, color=colour)
    ax.set_xticks(range(len(ns)), [f"N = {n}" for n in ns])
    ax.set_yscale("log")
    ax.set_ylabel("acquire+release cycles/s (one client, median)")
    ax.set_title("(a) cycles/s by library and number of masters")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(axis="y", which="both", alpha=0.3)

    # (b), (c) latency percentiles at N = 1 and N = 5
    for ax, n, title in (
        (axes[0][1], 1, "(b) acquire latency, N = 1"),
        (axes[1][0], 5, "(c) acquire latency, N = 5"),
    ):
        rows = [
            (cid, c)
            for cid, c in cases.items()
            if c["n"] == n
            and c["kind"] != "diagnostic"
            and c.get("latency_us")
            and c["latency_us"].get("p50")
        ]
        rows.sort(key=lambda r: r[1]["latency_us"]["p50"])
        for y, (_, c) in enumerate(rows):
            lat = c["latency_us"]
            for key, m, colour in (
                ("p50", "o", "#1f77b4"),
                ("p99", "s", "#ff7f0e"),
                ("p999", "^", "#d62728"),
            ):
                if lat.get(key):
                    ax.plot(
                        lat[key],
                        y,
                        m,
                        color=colour,
                        label=key.replace("p999", "p99.9") if y == 0 else None,
                    )
        ax.set_yticks(range(len(rows)), [cid for cid, _ in rows], fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("µs (all repetitions pooled)")
        ax.set_title(title)
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.legend(fontsize=7)

    # (d) one master of five paused
    ax = axes[1][1]
    paused = d.get("paused", {}).get("cases", {})
    if paused:
        rows = sorted(paused.items(), key=lambda r: r[1]["latency_us"]["p50"])
        for y, (_, c) in enumerate(rows):
            lat = c["latency_us"]
            for key, m, colour in (
                ("p50", "o", "#1f77b4"),
                ("p99", "s", "#ff7f0e"),
                ("max", "x", "#d62728"),
            ):
                ax.plot(
                    lat[key] / 1000, y, m, color=colour, label=key if y == 0 else None
                )
        bound = d["paused"]["timeout_ms"] + 2
        ax.axvline(bound, color="grey", ls="--", label=f"target p99 ≤ {bound:g} ms")
        ax.set_yticks(range(len(rows)), [cid for cid, _ in rows], fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("ms")
        ax.legend(fontsize=7)
        ax.grid(axis="x", which="both", alpha=0.3)
    ax.set_title("(d) acquire latency, N = 5 with one master paused")
    fig.suptitle(
        f"hiredlock benchmark, {d['date']} ({d['mode']} run), "
        f"{d['machine']['cpus']} {TIMES} {d['machine']['cpu_model']}, "
        f"one CPU for clients and servers",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ------------------------------------------------------------------- text


def md_table(head, rows, left=1):
    """A table whose first `left` columns (or the columns in the set
    `left`) are left-aligned, the rest right-aligned (numbers)."""
    lefts = set(range(left)) if isinstance(left, int) else left
    out = [
        "| " + " | ".join(head) + " |",
        "| "
        + " | ".join("---" if k in lefts else "---:" for k in range(len(head)))
        + " |",
    ]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def render(d, png_name):
    m, v, s = d["machine"], d["versions"], d["settings"]
    main = d.get("main", {})
    cases = main.get("cases", {})
    load = d["load"]
    lines = []
    w = lines.append
    w("# Performance")
    w("")
    w(
        "<!-- Generated by bench/report.py from "
        f"{d.get('_source', 'the results file')}; do not edit by hand: "
        "run `make bench`. -->"
    )
    w("")
    w(
        "How fast a lock cycle (acquire, then release) is with hiredlock from "
        "C, Python and Lua, next to the raw round-trip floor and the "
        "libraries users would otherwise pick, measured side by side in one "
        "run on the same Redis servers. Every number below comes from "
        f"`{d.get('_source', 'the results file')}`; `make bench` measures "
        "again and regenerates this page and the plot "
        "(`make bench BENCH_ARGS=--quick` is a check in under two minutes "
        "that writes to `build/bench/` instead)."
    )
    w("")
    w(f"![cycles/s and latency percentiles]({png_name})")
    w("")

    # ---- the run
    w("## The run")
    w("")
    wait = load.get("wait", {})
    if wait.get("quiet") is True:
        quiet = (
            f"the machine was quiet first (1-minute load below "
            f"{wait['threshold']} for {wait['hold_s']:.0f} s, after "
            f"waiting {wait['waited_s']} s)"
        )
    elif wait.get("quiet") is False:
        quiet = (
            f"the machine never got quiet: after waiting "
            f"{wait['waited_s']} s for a 1-minute load below "
            f"{wait['threshold']} (lowest seen "
            f"{wait['min_load1_seen']:.2f}) the run went ahead, with "
            f"other work running on the machine"
        )
    else:
        quiet = "the run did not wait for a quiet machine"
    w(
        f"- {d['date']}, a {d['mode']} run of "
        f"{load['run_seconds'] / 60:.1f} minutes; {quiet}."
    )
    samples = [x["load"][0] for x in load.get("samples", [])]
    during = (
        f"; during the main phase the 1-minute load ranged "
        f"{min(samples):.2f}{DASH}{max(samples):.2f}, of which the benchmark "
        f"itself, keeping one CPU busy, accounts for about 1"
        if samples
        else ""
    )
    w(
        f"- Load average (1, 5, 15 min) at the start "
        f"{', '.join(f'{x:.2f}' for x in load['start'])}, at the end "
        f"{', '.join(f'{x:.2f}' for x in load['end'])}{during}. The benchmark's CPU "
        f"was busy {load['bench_cpu_busy'] * 100:.0f} % of the run, "
        f"{(load['bench_cpu_steal'] or 0) * 100:.1f} % of it stolen by the "
        f"hypervisor."
    )
    mod = v.get("git_modified") or []
    w(
        f"- Code: commit `{v['git_commit'][:12]}`"
        + (
            f", with uncommitted changes in {', '.join(f'`{x}`' for x in mod)}"
            if mod
            else ", clean checkout"
        )
        + "."
    )
    w(
        f"- Machine: {m['cpus']} {TIMES} {m['cpu_model']}"
        + (f" ({m['cpu_mhz']:.0f} MHz)" if m.get("cpu_mhz") else "")
        + f", {m['memory_mb']:,} MB, {m['os']}, Linux {m['kernel']}, "
        f"virtual machine: {m['vm']}, container: {m['container']}, clock "
        f"source {m['clocksource']}."
    )
    w(
        f"- Versions: Redis {v['redis']}, hiredis {v['hiredis']}, "
        f"hiredlock {v['hiredlock']}, {v['cc']}; Python {v['python']} "
        f"(redis-py {v['redis-py']}, pottery {v['pottery']}, "
        f"python-redis-lock {v['python-redis-lock']}); {v['lua5.1']}; "
        f"{v['luajit']}; {v['lua5.4']}; lua-redis {v['lua-redis']}; "
        f"Node.js {v['node']} (node-redlock {v['node-redlock']}, ioredis "
        f"{v['ioredis']})."
    )
    w(
        f"- Pinning: {d['pinning']}. On this VM a wake-up across CPUs costs "
        "more than a whole N = 1 cycle, which made unpinned rates bimodal; on "
        "one CPU every client pays the same scheduling, and the N > 1 cycles "
        "are CPU-bound (all servers and the client share that CPU)."
    )
    dflt = s["hiredlock_defaults"]
    w(
        f"- hiredlock's defaults, read from the library: per-master timeout "
        f"{dflt['timeout_ms']} ms, connect timeout "
        f"{dflt['connect_timeout_ms']} ms, retry delay "
        f"{dflt['retry_delay_ms']} ± {dflt['retry_jitter_ms']} ms. The peers "
        f"get the same per-master deadlines where they have them."
    )
    w("")

    # ---- method
    w("## Method")
    w("")
    w(
        f"Each case is one client doing back-to-back uncontended cycles on a "
        f"key of its own: acquire without waiting (TTL {s['ttl_s']} s), "
        f"release. Every runtime runs in a long-lived worker process "
        f"(`bench/c/worker.c`, `bench/python/worker.py`, "
        f"`bench/lua/worker.lua`, `bench/node/worker.js`) with its "
        f"connections open, driven slice by slice by `bench/harness.py`. "
        f"After a {s['warmup']} s warm-up per case, {s['reps']} repetitions "
        f"run every case for {s['seconds']} s in a shuffled order, with the "
        f"raw C loop after every {s['ref_every']} slices. A case's rate is "
        f"the median over the repetitions. Its time relative to the floor "
        f"is, per repetition, its time per cycle divided by that of the raw "
        f"loop measured just before and after it; every ratio below is the "
        f"median over the repetitions of such paired ratios, with the "
        f"interquartile range in brackets. On this VM absolute rates swing "
        f"with the host's load by a factor of several within seconds; paired "
        f"ratios of neighbouring slices do not. Acquire latency is timed "
        f"around every acquire call and pooled over all repetitions."
    )
    w("")

    # ---- targets
    w("## Targets")
    w("")
    rows = []
    for t in main.get("targets", []):
        rows.append(
            [
                t["what"],
                fmt_ratio(t["ratio"]),
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
    w(explain(d))
    w("")

    # ---- main table
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
        order = {"floor": 0, "hiredlock": 1, "peer": 2, "diagnostic": 3}
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

    # ---- A/B of a core change (bench/ab-worker.sh, --ab)
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

    # ---- profile
    prof = d.get("profile")
    if prof:
        w("## Where the time goes (deterministic counts)")
        w("")
        w(
            f"Client-side instructions per cycle (valgrind callgrind) and "
            f"system calls per cycle (strace -c), each the difference between "
            f"a run of {prof['cycles_base']} and one of "
            f"{prof['cycles_base'] + prof['cycles']} cycles, so start-up "
            f"cancels out. Unlike the rates, these do not move with the "
            f"machine's load."
        )
        w("")
        rows = []
        for cid, p in prof["cases"].items():
            sc = p.get("syscalls") or {}
            top = ", ".join(
                f"{k} {x:.2f}"
                for k, x in sorted(sc.items(), key=lambda kv: -kv[1])
                if x >= 0.05
            )
            rows.append(
                [
                    f"`{cid}`",
                    f"{p['instructions']:,.0f}"
                    if p.get("instructions") is not None
                    else DASH,
                    f"{sum(sc.values()):.2f}" if sc else DASH,
                    top,
                ]
            )
        w(
            md_table(
                ["case", "instructions/cycle", "syscalls/cycle", "which"],
                rows,
                left={0, 3},
            )
        )
        w("")

    # ---- paused
    if paused:
        pd = d["paused"]
        w("## One master of five paused")
        w("")
        w(
            f"Master {pd['paused_node']} of the {pd['masters']} stopped with "
            f"SIGSTOP (through the fixture's `pause`) for the whole phase; "
            f"{s['paused_reps']} {TIMES} {s['paused_seconds']} s per case, shuffled. "
            f"hiredlock waits for a master up to the per-master timeout "
            f"({pd['timeout_ms']} ms) the first time it misses a reply; after "
            f"that, until it answers again, a round no longer waits for it "
            f"once a quorum said OK, and still sends it every command. "
            f"pottery and node-redlock decide as soon as a quorum answered "
            f"and leave the stopped master's reply behind."
        )
        w("")
        rows = []
        for cid, p in sorted(paused.items(), key=lambda r: r[1]["latency_us"]["p50"]):
            lat = p["latency_us"]
            rows.append(
                [
                    f"`{cid}`",
                    p["label"],
                    p["runtime"],
                    f"{p['rate_median']:,.1f}",
                    fmt_us(lat["p50"]),
                    fmt_us(lat["p99"]),
                    fmt_us(lat["p999"]),
                    fmt_us(lat["max"]),
                    str(lat["n"]),
                    str(p["failed"]),
                ]
            )
        w(
            md_table(
                [
                    "case",
                    "what",
                    "runtime",
                    "cycles/s",
                    "p50 µs",
                    "p99 µs",
                    "p99.9 µs",
                    "max µs",
                    "acquires",
                    "not acquired",
                ],
                rows,
                left=3,
            )
        )
        w("")

    # ---- contention
    cont = d.get("contention")
    if cont:
        w("## Contention: 8 processes, one name")
        w("")
        c0 = cont[0]
        w(
            f"{len(c0['processes'])} processes ({', '.join(c0['processes'])}), "
            f"all hiredlock, on one name for {c0['duration_s']:g} s per run: "
            f"acquire (blocking), release at once, acquire again. Hand-off: "
            f"from the moment a holder calls release to the moment the next "
            f"holder's acquire returns (CLOCK_MONOTONIC, shared by all "
            f"processes), over all consecutive holds, and over those where the "
            f"next holder is another process. Wait: from an acquire call to "
            f"its return. Overlaps counts holds that began before the previous "
            f"one was released, as the clients saw it: mutual exclusion, it "
            f"must be 0."
        )
        w("")
        w(
            "Waiters poll: one that finds the lock taken sleeps the retry "
            "delay (± jitter) before it tries again, while the holder that "
            "just released is awake and takes the lock again at once. So the "
            "lock rarely changes hands with the default delay, and waiters "
            "wait up to several retry delays; a short delay hands it over "
            "more often, at the cost of waiters' round trips competing for "
            "the one CPU. Waking waiters on release is later work (DESIGN.md "
            "section 7)."
        )
        w("")
        rows = []
        for r in cont:
            other = r["handoff_other_ms"]
            rows.append(
                [
                    str(r["n"]),
                    f"{r['retry']} ({r['retry_delay_ms']:g} ± "
                    f"{r['retry_jitter_ms']:g} ms)",
                    f"{r['holds_per_s']:,.0f}",
                    f"{r['handoff_ms']['p50']:.2f}",
                    f"{r['handoff_ms']['p99']:.2f}",
                    f"{r['other_share'] * 100:.1f} %",
                    f"{other['p50']:.2f}" if other["n"] else DASH,
                    f"{other['p99']:.2f}" if other["n"] else DASH,
                    f"{r['wait_ms']['p50']:.2f}" if "wait_ms" in r else DASH,
                    f"{r['wait_ms']['p99']:.1f}" if "wait_ms" in r else DASH,
                    f"{r['wait_ms']['max']:,.0f}" if "wait_ms" in r else DASH,
                    f"{min(r['holds_per_process']):,}{DASH}{max(r['holds_per_process']):,}",
                    str(r["overlaps"]),
                ]
            )
        w(
            md_table(
                [
                    "N",
                    "retry delay",
                    "holds/s",
                    "hand-off p50 ms",
                    "hand-off p99 ms",
                    "to another process",
                    "hand-off to another p50 ms",
                    "to another p99 ms",
                    "wait p50 ms",
                    "wait p99 ms",
                    "wait max ms",
                    "holds per process",
                    "overlaps",
                ],
                rows,
                left=2,
            )
        )
        w("")

    # ---- memory
    mem = d.get("memory")
    if mem:
        w("## Memory")
        w("")
        w(
            f"A fresh process per runtime on master 1: RSS before, while "
            f"holding {mem['hold_count']:,} locks on distinct names, and after "
            f"releasing them; then {mem['drift_cycles']:,} cycles with a new "
            f"lock object each, RSS read every tenth (drift: RSS at the end "
            f"minus RSS after the first tenth)."
        )
        w("")
        rows = []
        for label, h in mem["hold"].items():
            rows.append(
                [
                    label,
                    f"{h['rss_before_kb']:,}",
                    f"{h['rss_holding_kb']:,}",
                    f"{h['rss_after_kb']:,}",
                    f"{h['bytes_per_lock']:,.0f}",
                ]
            )
        w(
            md_table(
                [
                    "runtime",
                    "RSS before kB",
                    "RSS holding kB",
                    "RSS after release kB",
                    "bytes per held lock",
                ],
                rows,
            )
        )
        w("")
        rows = []
        for label, x in mem["drift"].items():
            pts = x["points"]
            rows.append(
                [
                    label,
                    f"{x['rss_after_first_chunk_kb']:,}",
                    f"{x['rss_end_kb']:,}",
                    f"{x['drift_kb']:+,}",
                    " ".join(f"{p[1]:,}" for p in pts[1:]),
                    f"{x['seconds']:.0f}",
                ]
            )
        w(
            md_table(
                [
                    "runtime",
                    "RSS after first tenth kB",
                    "RSS at end kB",
                    "drift kB",
                    "RSS at each tenth kB",
                    "time s",
                ],
                rows,
            )
        )
        w("")
    return "\n".join(lines) + "\n"


def explain(d):
    """Reading the targets: generated from the numbers, not typed in."""
    main = d.get("main", {})
    t = {x["id"]: x for x in main.get("targets", [])}
    f = {x["id"]: x for x in main.get("floor_ratios", [])}
    cases = main.get("cases", {})
    prof = d.get("profile", {}).get("cases", {})
    out = []

    def vs_floor(cid):
        q = cases.get(cid, {}).get("vs_floor")
        return f"{q['median']:.3f}{TIMES}" if q else DASH

    def calls(cid):
        return prof.get(cid, {}).get("syscalls") or {}

    if "raw" in prof and "c-n1" in prof and "c-floor" in t:
        raw, c1 = prof["raw"], prof["c-n1"]
        extra = {
            k: calls("c-n1").get(k, 0) - calls("raw").get(k, 0)
            for k in set(calls("c-n1")) | set(calls("raw"))
        }
        more = ", ".join(
            f"{k} {v:+.2f}" for k, v in sorted(extra.items()) if abs(v) >= 0.05
        )
        out.append(
            f"- C against the raw loop ({t['c-floor']['ratio']['median']:.3f}"
            f"{TIMES}): per cycle hiredlock runs {c1['instructions']:,.0f} client "
            f"instructions against the loop's {raw['instructions']:,.0f}, and "
            f"{sum(calls('c-n1').values()):.2f} system calls against "
            f"{sum(calls('raw').values()):.2f} (per cycle: {more}). The "
            f"getrandom() is the fresh 128-bit token every acquire needs; "
            f"the loop reuses one fixed token."
        )
    if "py-floor" in t:
        line = (
            f"- Python: one Lock reused is "
            f"{t['py-floor']['ratio']['median']:.3f}{TIMES} the raw loop "
            f"({vs_floor('c-n1')} for C in the same run)"
        )
        if "py-n1" in prof and "c-n1" in prof:
            line += (
                f"; the binding adds "
                f"{prof['py-n1']['instructions'] - prof['c-n1']['instructions']:,.0f}"
                f" instructions per cycle to the C API's"
            )
        if cases.get("py-with-n1", {}).get("vs_floor"):
            line += (
                f"; a `with client.lock(...)` block per cycle (a new "
                f"Lock each time) is {vs_floor('py-with-n1')}"
            )
            if "py-with-n1" in prof:
                line += (
                    f" ({prof['py-with-n1']['instructions']:,.0f} "
                    f"instructions per cycle)"
                )
        out.append(line + ".")
    for interp in ("lua5.1", "luajit", "lua5.4"):
        key = f"{interp}-floor"
        if key not in t:
            continue
        line = (
            f"- {interp}: the API as users call it (a lock object per "
            f"acquire) is {t[key]['ratio']['median']:.3f}{TIMES} the raw loop; "
            f"one `hiredlock.core` handle reused is "
            f"{vs_floor(f'{interp}-core-reuse')}, a new core handle per "
            f"acquire without the facade {vs_floor(f'{interp}-core-n1')}"
        )
        if cases.get(f"{interp}-lean-n1", {}).get("vs_floor"):
            line += (
                f", and with a leaner facade sketched in the benchmark "
                f"(a one-field lock table, the token read when asked for) "
                f"{vs_floor(f'{interp}-lean-n1')}"
            )
        n1, ln, cn, cr = (
            prof.get(f"{interp}-{x}", {}).get("instructions")
            for x in ("n1", "lean-n1", "core-n1", "core-reuse")
        )
        if None not in (n1, cn, cr):
            line += (
                f". Instructions per cycle: {cr:,.0f} with the handle "
                f"reused, {cn - cr:+,.0f} for a new handle per acquire, "
                f"{n1 - cn:+,.0f} more for the facade ({n1:,.0f} in all)"
            )
            if ln is not None:
                line += f"; the leaner sketch {ln - cn:+,.0f} over the handle"
        out.append(line + ".")
    if "fan5-vs-raw" in f and "c5-vs-c1" in t:
        fr = f["fan5-vs-raw"]["ratio"]["median"]
        cr = t["c5-vs-c1"]["ratio"]["median"]
        n5 = ", ".join(
            f"{rt} {vs_floor(cid)}"
            for rt, cid in (
                ("C", "c-n5"),
                ("Python", "py-n5"),
                ("lua5.1", "lua5.1-n5"),
                ("LuaJIT", "luajit-n5"),
                ("lua5.4", "lua5.4-n5"),
            )
            if cid in cases
        )
        out.append(
            f"- N = 5 against N = 1: the raw fan-out to five masters alone "
            f"takes {fr:.2f}{TIMES} the raw N = 1 loop here, because the five "
            f"servers and the client take turns on one CPU: no client can "
            f"get N = 5 within {t['c5-vs-c1']['bound']:g}{TIMES} of N = 1 on this "
            f"machine. hiredlock's C "
            f"N = 5 cycle is {cr:.2f}{TIMES} its N = 1 cycle; against the N = 5 "
            f"floor itself: {n5}."
        )
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results")
    p.add_argument("--docs", default=str(REPO / "docs"))
    args = p.parse_args()
    src = Path(args.results).resolve()
    d = json.loads(src.read_text())
    d["_source"] = str(src.relative_to(REPO)) if src.is_relative_to(REPO) else str(src)
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    png = docs / "performance.png"
    plot(d, png)
    (docs / "PERFORMANCE.md").write_text(render(d, png.name))
    print(f"bench: wrote {docs / 'PERFORMANCE.md'} and {png}")


if __name__ == "__main__":
    main()
