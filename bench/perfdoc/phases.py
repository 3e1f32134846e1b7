"""The other phases in PERFORMANCE.md: profile (instructions and system
calls per cycle), one master paused, memory, leases (contention and the
waiting phases: waiting.py)."""

from __future__ import annotations

from .fmt import DASH, TIMES, fmt_us, md_table


def profile(d) -> list[str]:
    """Instructions and system calls per cycle."""
    lines: list[str] = []
    w = lines.append
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
    return lines


def paused(d) -> list[str]:
    """Acquire latency with one master of five paused."""
    paused = d.get("paused", {}).get("cases", {})
    s = d["settings"]
    lines: list[str] = []
    w = lines.append
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
    return lines


def memory(d) -> list[str]:
    """RSS holding 10,000 locks, and over many cycles."""
    lines: list[str] = []
    w = lines.append
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
    return lines


def leases(d) -> list[str]:
    """What auto-renewed held locks cost."""
    lines: list[str] = []
    w = lines.append
    le = d.get("leases")
    if le:
        w("## Leases")
        w("")
        w(
            f"A fresh C and Python process each holds {le['locks']:,} "
            f"auto-renewed locks (a client of their own, so its renewer thread "
            f"is the only one at work) for {le['seconds']:g} s: the renewals "
            f"(EVALSHA) master 1 ran, the Redis commands per second each master "
            f"ran (total_commands_processed: a renewal is its EVALSHA and the "
            f"GET and PEXPIRE its script runs), and the holder's CPU time and "
            f"context switches (every thread). The target is one renewal per "
            f"lock per third of a TTL."
        )
        w("")
        rows = []
        for r in le["runs"]:
            rows.append(
                [
                    r["runtime"],
                    str(r["masters"]),
                    f"{r['ttl_ms'] / 1000:g}",
                    f"{r['renewals_per_s']:,.0f}",
                    f"{r['expected_per_s']:,.0f}",
                    f"{r['commands_per_s_per_master']:,.0f}",
                    f"{r['cpu_fraction'] * 100:.1f}",
                    f"{r['cpu_us_per_renewal']:.0f}",
                    f"{r['switches_per_s']:,.0f}",
                ]
            )
        w(
            md_table(
                [
                    "runtime",
                    "N",
                    "TTL s",
                    "renewals/s",
                    "target/s",
                    "commands/s a master",
                    "CPU % of a core",
                    "CPU µs a renewal",
                    "context switches/s",
                ],
                rows,
            )
        )
        w("")
    return lines


def rwsem(d) -> list[str]:
    """Read-write locks and semaphores beside their peers (issue 33)."""
    lines: list[str] = []
    w = lines.append
    rs = d.get("rwsem")
    if not rs:
        return lines
    w("## Read-write locks and semaphores")
    w("")
    w(
        "From Python, on master 1, side by side in this run: one holder's "
        "acquire + release cycle (hiredlock's mutex, a write, a read, a "
        "permit; redis-py's Lock as the writer-lock baseline; pottery's "
        "Redlock; a semaphore built the common way, a ZSET of expiring "
        "members; redis-py's PING as the floor), 8 reader threads and 1 "
        "writer thread with a client each, holding 1 ms, and 8 threads "
        "contending for 4 permits, holding 5 ms: the time integral of permits "
        "held over permits available (target >= 90 %)."
    )
    w("")
    rows = [
        [c["case"], f"{c['per_s']:,.0f}", f"{c['p50_us']:.0f}", f"{c['x_floor']:.2f}"]
        for c in rs["cycles"]
    ]
    w(md_table(["cycle", "cycles/s", "p50 µs", "x PING"], rows))
    w("")
    rw = rs["rw_8_1"]
    w(
        f"8 readers + 1 writer: {rw['reads_per_s']:,.0f} reads/s, "
        f"{rw['writes_per_s']:,.0f} writes/s; the writer waits "
        f"{rw['writer_wait_p50_ms']:.1f} ms (p50), "
        f"{rw['writer_wait_p99_ms']:.1f} ms (p99)."
    )
    w("")
    rows = [
        [u["case"], f"{u['used'] * 100:.1f} %", f"{u['grants_per_s']:,.0f}"]
        for u in rs["permits"]
    ]
    w(md_table(["semaphore", "permits used / available", "grants/s"], rows))
    w("")
    return lines
