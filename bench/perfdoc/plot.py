"""performance.png: cycles/s by library and N, latency percentiles at
N = 1 and N = 5, and N = 5 with one master paused."""

from __future__ import annotations

from .fmt import TIMES

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


def series_of(case):
    if case["kind"] == "floor":
        return "floor" if case["runtime"] == "C" else None
    if case["kind"] == "hiredlock":
        return case["runtime"]
    if case["library"] in ("pottery", "node-redlock"):
        return case["library"]
    return None


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
