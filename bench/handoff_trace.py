"""Where a contended lock's idle time goes: the contention phase's workload
(W processes on one name: acquire, hold, release, think; every process and
master pinned on one CPU) under `perf record` of that CPU's scheduler
switches (and, with --syscalls, its system calls), on CLOCK_MONOTONIC.

    bench/handoff_trace.py [-n 5] [-w 4] [--tls] [--seconds 3] [--syscalls]
                           [--hold-ms 2] [--think-ms 2] [--think-spread-ms 0]
                           [--show 1]
                           [--slowlog] [--profile FILE]

Run after bench/run.sh built and installed the package (build/python is
put first on the path); it starts a fixture of its own. Needs perf and the
right to trace (root, or perf_event_paranoid <= -1). Diagnostic only: it
judges nothing, and nothing runs it in a suite.

Every process runs on the one CPU, so a gap between two holds (from the
holder calling release to the next holder's acquire returning) is exactly
the CPU time of what ran on that CPU meanwhile. For every gap it says who
ran and for how long: the releaser, the masters, the waiter (the next
holder), the previous holder (whose think time ends about then when hold
and think are equal, as in the bench), other workers, anything else (other
load on the machine), idle. With --syscalls: which system calls each made,
the gaps in which the next holder sent a round of its own (a claim), and
the hand-off's phases: the releaser sending, the masters until a quorum of
them published the hand-off, the waiter until its acquire returned.
--show K prints K median gaps event by event. With -w 2 --think-ms 1 the
next acquire queues mid-hold: every gap is a hand-off alone, the floor.
--slowlog also times every command on the masters (SLOWLOG at 0 us; it
slows them). --profile samples the CPU instead (perf report -i FILE
--sort comm,dso).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
# The package bench/run.sh installed, for the workers too (as run.sh does).
PYBUILD = str(REPO / "build" / "python")
sys.path.insert(0, PYBUILD)
os.environ["PYTHONPATH"] = os.pathsep.join(
    [PYBUILD, *filter(None, [os.environ.get("PYTHONPATH")])]
)

from hrlbench import LAUNCHER  # noqa: E402
from hrlbench.delay import DELAYS, Toxiproxy  # noqa: E402
from hrlbench.machine import fixture  # noqa: E402
from hrlbench.pool import command, start_worker  # noqa: E402

# x86-64 numbers of the calls a hand-off makes.
SYSCALLS = {
    0: "read",
    1: "write",
    3: "close",
    7: "poll",
    20: "writev",
    39: "getpid",
    44: "sendto",
    45: "recvfrom",
    202: "futex",
    228: "clock_gettime",
    230: "nanosleep",
    232: "epoll_wait",
    271: "ppoll",
    318: "getrandom",
}
SENDTO, WRITE = 44, 1
# A master's write longer than this is a hand-off's message (its replies
# to a release, a try or SET are a few bytes).
MESSAGE_MIN = 60
CATEGORIES = [
    "releaser",
    "masters",
    "waiter",
    "previous holder",
    "other workers",
    "other load",
    "idle",
]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=5, help="masters (at most 5)")
    p.add_argument("-w", type=int, default=4, help="processes")
    p.add_argument("--tls", action="store_true", help="the masters' TLS ports")
    p.add_argument("--seconds", type=float, default=3.0, help="traced time")
    p.add_argument("--lib", default="hiredlock")
    p.add_argument("--role", default="py", help="worker kind: py, luajit, ...")
    p.add_argument("--hold-ms", type=float, default=2.0)
    p.add_argument("--think-ms", type=float, default=2.0)
    p.add_argument(
        "--think-spread-ms",
        type=float,
        default=0.0,
        help="draw each think from think-ms +- this (seeded), as the bench does with 1",
    )
    p.add_argument("--cpu", type=int, default=(os.cpu_count() or 1) - 1)
    p.add_argument("--show", type=int, default=1, help="gap timelines to print")
    p.add_argument("--syscalls", action="store_true", help="trace system calls")
    p.add_argument("--slowlog", action="store_true")
    p.add_argument("--profile", help="sample the CPU into this perf.data file")
    p.add_argument(
        "--delay",
        type=float,
        choices=sorted(DELAYS),
        help="every master behind toxiproxy with the delay phase's delay "
        "(ms one way; toxiproxy on the other CPUs): its gaps, not who ran",
    )
    return p.parse_args()


def masters_urls(n: int, tls: bool) -> tuple[list[str], list[str]]:
    """(the workers' URLs, the plain ones for SLOWLOG)."""
    plain = os.environ["HRL_FIXTURE_URLS"].split(",")[:n]
    if not tls:
        return plain, plain
    ca = Path(os.environ["HRL_FIXTURE_TLS_DIR"]) / "ca.crt"
    tls_urls = os.environ["HRL_FIXTURE_TLS_URLS"].split(",")[:n]
    return [f"{u}?ssl_ca_certs={ca}" for u in tls_urls], plain


def redis_of(url: str):
    import redis  # bench/run.sh installs redis-py

    return redis.Redis.from_url(url)


def slowlog(url: str) -> list[tuple[str, int]]:
    """(what, microseconds) of every command the master logged: EVALSHA by
    the queue script's mode (r release, t try, a aside)."""
    out = []
    for e in redis_of(url).slowlog_get(100000):
        args = e["command"].decode(errors="replace").split()
        name = args[0].upper() if args else "?"
        if name in ("EVALSHA", "EVAL") and len(args) > 6:
            name += " mode " + args[6]
        if name not in ("SLOWLOG", "CONFIG"):
            out.append((name, int(e["duration"])))
    return out


def perf_events(path: Path) -> list[tuple]:
    """(t, kind, fields), time-ordered: kind "switch" with (prev_pid,
    next_pid), "enter" with (pid, nr), "exit" with (pid, nr, return)."""
    text = subprocess.run(
        ["perf", "script", "-i", str(path), "-F", "pid,tid,time,event,trace"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line_re = re.compile(r"\s*(\d+)/\d+\s+([\d.]+):\s+(\S+):\s*(.*)")
    switch_re = re.compile(r"prev_pid=(\d+).* next_pid=(\d+)")
    enter_re = re.compile(r"NR (\d+)")
    exit_re = re.compile(r"NR (\d+) = (-?\d+)")
    events = []
    for line in text.splitlines():
        m = line_re.match(line)
        if not m:
            continue
        pid, t, ev, rest = int(m[1]), float(m[2]), m[3], m[4]
        if ev.endswith("sched_switch") and (s := switch_re.search(rest)):
            events.append((t, "switch", (int(s[1]), int(s[2]))))
        elif ev.endswith("sys_enter") and (s := enter_re.search(rest)):
            events.append((t, "enter", (pid, int(s[1]))))
        elif ev.endswith("sys_exit") and (s := exit_re.search(rest)):
            events.append((t, "exit", (pid, int(s[1]), int(s[2]))))
    events.sort(key=lambda e: e[0])
    return events


def run_traced(args, urls: list[str], plain: list[str], data: Path) -> tuple:
    """Runs the workload, traces its middle into data; (holds, release
    times, worker pids, timings by command, load before/after).
    A hold: (acquired, release called, worker) on CLOCK_MONOTONIC."""
    extra = {"connect_timeout": 1.0, "timeout": 0.5} if args.tls else {}
    workers = [start_worker(args.role, urls, args.cpu) for _ in range(args.w)]
    try:
        for k, wk in enumerate(workers):
            wk.send(
                command(
                    "contend",
                    name=f"trace:{os.getpid()}",
                    lib=args.lib,
                    hold_ms=args.hold_ms,
                    think_ms=args.think_ms,
                    think_spread_ms=args.think_spread_ms,
                    seed=k,
                    **extra,
                )
            )
        for wk in workers:
            if not wk.read().get("ready"):
                raise RuntimeError("a contention process did not start")
        to_mono = time.clock_gettime(time.CLOCK_MONOTONIC) - time.clock_gettime(
            time.CLOCK_BOOTTIME
        )
        warm = 0.5
        end = time.clock_gettime(time.CLOCK_BOOTTIME) + warm + args.seconds + 0.3
        load0 = os.getloadavg()[0]
        for wk in workers:
            wk.send(f"go {end:.6f}")
        time.sleep(warm)
        if args.slowlog:
            for u in plain:
                r = redis_of(u)
                r.slowlog_reset()
                r.config_set("slowlog-max-len", 100000)
                r.config_set("slowlog-log-slower-than", 0)
        events = ["-e", "sched:sched_switch"]
        if args.syscalls:
            events += ["-e", "raw_syscalls:sys_enter", "-e", "raw_syscalls:sys_exit"]
        if args.profile:
            events = ["-e", "cpu-clock", "-F", "10000", "-g"]
        perf = ["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-C", str(args.cpu)]
        subprocess.run(
            [*perf, *events, "-o", str(data), "--", "sleep", str(args.seconds)],
            stdout=subprocess.DEVNULL,
            check=True,
        )
        timings = defaultdict(list)
        for u in plain if args.slowlog else []:
            redis_of(u).config_set("slowlog-log-slower-than", 10000)
            for what, us in slowlog(u):
                timings[what].append(us)
            redis_of(u).slowlog_reset()
        holds, released = [], []
        for k, wk in enumerate(workers):
            for h in wk.read()["holds"]:
                holds.append((h[1] + to_mono, h[2] + to_mono, k))
                released.append(h[3] - h[2])
    finally:
        for wk in workers:
            wk.close()
    pids = [wk.pid for wk in workers]
    return holds, released, pids, timings, (load0, os.getloadavg()[0])


def slices_of(events: list[tuple]) -> list[tuple[float, float, int]]:
    """(start, end, pid) of everything that ran on the CPU."""
    slices, cur, since = [], None, events[0][0]
    for t, kind, f in events:
        if kind == "switch":
            slices.append((since, t, f[0] if cur is None else cur))
            cur, since = f[1], t
    return slices


def analyse(args, holds, released, pids, events, masters) -> None:
    t_lo, t_hi = events[0][0], events[-1][0]
    holds.sort()
    # (release called, next acquire returned, releaser, next holder, the
    # holder before the releaser)
    gaps = [
        (a[1], b[0], pids[a[2]], pids[b[2]], pids[z[2]])
        for z, a, b in zip(holds, holds[1:], holds[2:])
        if a[1] >= t_lo and b[0] <= t_hi and b[0] > a[1]
    ]
    if not gaps:
        sys.exit("trace: no complete gap in the traced time")
    workers = set(pids)

    def who(pid: int, gap: tuple) -> str:
        if pid == 0:
            return "idle"
        if pid in masters:
            return "masters"
        roles = {gap[2]: "releaser", gap[3]: "waiter", gap[4]: "previous holder"}
        if pid in roles:
            return roles[pid]
        return "other workers" if pid in workers else "other load"

    slices = slices_of(events)
    per_gap = []  # (gap, CPU time by who, slices, syscall events)
    si = ei = 0
    for g in gaps:
        while si < len(slices) and slices[si][1] <= g[0]:
            si += 1
        while ei < len(events) and events[ei][0] < g[0]:
            ei += 1
        share, mine = defaultdict(float), []
        j = si
        while j < len(slices) and slices[j][0] < g[1]:
            s0, s1, pid = slices[j]
            a, b = max(s0, g[0]), min(s1, g[1])
            share[who(pid, g)] += b - a
            mine.append((a, b, pid))
            j += 1
        k = ei
        calls = []
        while k < len(events) and events[k][0] < g[1]:
            if events[k][1] != "switch":
                calls.append(events[k])
            k += 1
        per_gap.append((g, share, mine, calls))
    hold_len = [h[1] - h[0] for h in holds if h[0] >= t_lo and h[1] <= t_hi]
    gap_len = [g[1] - g[0] for g in gaps]
    print(
        f"N = {args.n}{' TLS' if args.tls else ''}, W = {args.w}, {args.role}, "
        f"hold {args.hold_ms:g} ms, think {args.think_ms:g} "
        f"+- {args.think_spread_ms:g} ms: "
        f"{len(gaps)} gaps traced"
    )
    print(
        f"hold p50 {statistics.median(hold_len) * 1e3:.3f} ms; gap p50 "
        f"{statistics.median(gap_len) * 1e3:.3f} ms, mean "
        f"{statistics.mean(gap_len) * 1e3:.3f} ms; busy "
        f"{sum(hold_len) / (sum(hold_len) + sum(gap_len)):.1%}; release call "
        f"p50 {statistics.median(released) * 1e3:.3f} ms"
    )
    print("CPU time per gap by who ran (us): mean, p50")
    for c in CATEGORIES:
        v = [p[1].get(c, 0.0) * 1e6 for p in per_gap]
        print(f"  {c:16s} {statistics.mean(v):7.1f} {statistics.median(v):7.1f}")
    switches = statistics.mean(len(p[2]) for p in per_gap)
    print(f"  slices per gap: {switches:.1f}")
    if args.syscalls:
        syscall_report(args, per_gap, who, masters)
    shown = sorted(per_gap, key=lambda p: p[0][1] - p[0][0])
    for p in shown[len(shown) // 2 : len(shown) // 2 + args.show]:
        timeline(p, who, masters, args.syscalls)


def syscall_report(args, per_gap, who, masters) -> None:
    calls = defaultdict(lambda: defaultdict(int))
    own_round, phases = [], defaultdict(list)
    quorum = args.n // 2 + 1
    for g, _, _, evs in per_gap:
        for _, kind, f in evs:
            if kind == "enter":
                calls[who(f[0], g)][SYSCALLS.get(f[1], str(f[1]))] += 1
        if any(k == "enter" and f[0] == g[3] and f[1] == SENDTO for _, k, f in evs):
            own_round.append(g[1] - g[0])
            continue
        sent = [t for t, k, f in evs if k == "exit" and f[0] == g[2] and f[1] == SENDTO]
        told = [
            t
            for t, k, f in evs
            if k == "exit" and f[0] in masters and f[1] == WRITE and f[2] > MESSAGE_MIN
        ]
        if sent and len(told) >= quorum:
            phases["releaser sends"].append(sent[-1] - g[0])
            phases["a quorum published"].append(told[quorum - 1] - sent[-1])
            phases["the waiter returns"].append(g[1] - told[quorum - 1])
    print("system calls per gap, by caller:")
    for c in CATEGORIES:
        if calls[c]:
            top = sorted(calls[c].items(), key=lambda x: -x[1])[:8]
            text = ", ".join(f"{n} {v / len(per_gap):.1f}" for n, v in top)
            print(f"  {c:16s} {text}")
    p50 = statistics.median(own_round) * 1e3 if own_round else 0.0
    print(
        f"gaps in which the next holder sent a round of its own: "
        f"{len(own_round)} of {len(per_gap)} (their gap p50 {p50:.3f} ms)"
    )
    print("the hand-off's phases, in the other gaps (us): p50, mean")
    for what, v in phases.items():
        print(
            f"  {what:22s} {statistics.median(v) * 1e6:7.1f} "
            f"{statistics.mean(v) * 1e6:7.1f}"
        )


def timeline(p, who, masters, syscalls: bool) -> None:
    g, _, mine, evs = p
    print(f"\na gap of {(g[1] - g[0]) * 1e6:.0f} us:")
    for a, b, pid in mine:
        line = f"  +{(a - g[0]) * 1e6:7.1f} {(b - a) * 1e6:7.1f} us  {who(pid, g):16s}"
        if pid in masters:
            line += f"({masters[pid]}) "
        if syscalls:
            line += " ".join(
                SYSCALLS.get(f[1], str(f[1])) if k == "enter" else f"={f[2]}"
                for t, k, f in evs
                if f[0] == pid and a <= t < b
            )
        print(line)


def main() -> None:
    args = parse_args()
    if "HRL_FIXTURE_URLS" not in os.environ:
        launch = [str(LAUNCHER), "run", "-n", "5", "--tls", "--"]
        os.execv(launch[0], [*launch, sys.executable, __file__, *sys.argv[1:]])
    urls, plain = masters_urls(args.n, args.tls)
    masters = {}
    for i in range(1, 6):
        pid = int(fixture("pid", os.environ["HRL_FIXTURE_DIR"], str(i)))
        os.sched_setaffinity(pid, {args.cpu})
        masters[pid] = f"master{i}"
    os.sched_setaffinity(0, {0 if args.cpu != 0 else 1})  # off the traced CPU
    proxy = None
    if args.delay is not None:
        proxy = Toxiproxy(args.cpu)
        up, down = DELAYS[args.delay]
        proxied = []
        for i, u in enumerate(urls, 1):
            port = proxy.proxy(f"m{i}", int(u.split("?")[0].rsplit(":", 1)[1]))
            proxy.set_delay(f"m{i}", up, down)
            proxied.append(f"redis://127.0.0.1:{port}")
        urls = proxied
    tmp = None if args.profile else tempfile.mkdtemp(prefix="hrl-trace-")
    data = Path(args.profile) if args.profile else Path(tmp) / "perf.data"
    try:
        holds, released, pids, timings, load = run_traced(args, urls, plain, data)
        print(f"load average (1 min) {load[0]:.2f} -> {load[1]:.2f}")
        if args.profile:
            print(f"profile in {data}: perf report -i {data} --sort comm,dso")
            return
        events = perf_events(data)
    finally:
        if proxy is not None:
            proxy.close()
        if tmp is not None:
            shutil.rmtree(tmp)
    analyse(args, holds, released, pids, events, masters)
    if timings:
        print("command time on the masters (SLOWLOG, us): count, p50, mean")
        for what, v in sorted(timings.items(), key=lambda x: -len(x[1])):
            print(
                f"  {what:22s} {len(v):6d} {statistics.median(v):6.0f} "
                f"{statistics.mean(v):7.1f}"
            )


if __name__ == "__main__":
    main()
