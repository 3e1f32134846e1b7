#!/usr/bin/env python3
"""hiredlock's benchmark: every runtime and every peer, side by side, in one
run on the same Redis servers (`make bench`; bench/README.md has the method).

    python3 bench/harness.py [--quick] [--reps R] [--seconds S] ...

bench/run.sh builds and installs what this needs first; run it directly
only when that is done. Without a fixture in the environment the harness
re-runs itself under `tests/fixtures/redis-fixture run -n 7`, so its Redis
servers are its own. It writes the results as JSON and renders
docs/PERFORMANCE.md and docs/performance.png from them (bench/report.py);
--quick writes under build/bench/ instead and leaves docs/ alone.

Phases:
  main        one client, back-to-back uncontended acquire+release cycles:
              the floors, hiredlock from C, Python and Lua at N = 1, 3, 5, 7,
              the peers. Many short repetitions; in each, the cases run in a
              shuffled order with the raw C loop between every few of them,
              so each slice has a floor measured seconds away.
  paused      one of 5 masters stopped (SIGSTOP): acquire latency of the
              N = 5 clients.
  contention  8 processes (Python and Lua) on one name: holds per second and
              hand-off latency, with the default and a short retry delay.
  memory      RSS of a process holding 10,000 locks; RSS over 1M cycles.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "tests" / "fixtures" / "redis-fixture"
C_WORKER = REPO / "build" / "bench" / "c" / "hrl-bench-worker"
PY_WORKER = REPO / "bench" / "python" / "worker.py"
LUA_WORKER = REPO / "bench" / "lua" / "worker.lua"
NODE_DIR = REPO / "bench" / "node"
NODE_WORKER = NODE_DIR / "worker.js"
FIXTURE_NODES = 7
PAUSED_NODE = 5  # of the N = 5 clients' masters 1..5
REF = "raw"  # the reference case run between every few slices
INTERPS = {"lua5.1": "5.1", "luajit": "5.1", "lua5.4": "5.4"}


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the cases


def build_cases() -> dict[str, dict]:
    """Every case of the main phase: id -> what it is and who runs it."""
    cases: dict[str, dict] = {}

    def add(cid, worker, wcase, library, runtime, n, kind, label):
        cases[cid] = {
            "worker": worker,
            "wcase": wcase,
            "library": library,
            "runtime": runtime,
            "n": n,
            "kind": kind,
            "label": label,
            "floor": "raw" if n == 1 else f"fan{n}",
        }

    add(
        "raw",
        "c",
        "raw",
        "floor",
        "C",
        1,
        "floor",
        "hiredis, blocking: SET NX PX + EVALSHA",
    )
    for n in (3, 5, 7):
        add(
            f"fan{n}",
            "c",
            f"fan{n}",
            "floor",
            "C",
            n,
            "floor",
            f"hiredis, both commands fanned out to {n} masters",
        )
    add(
        "redis-benchmark",
        "rb",
        "",
        "floor",
        "redis-benchmark",
        1,
        "floor",
        "redis-benchmark -c 1: SET NX PX, then EVALSHA",
    )
    for n in (1, 3, 5, 7):
        add(
            f"c-n{n}",
            "c",
            f"c-n{n}",
            "hiredlock",
            "C",
            n,
            "hiredlock",
            "hiredlock C API, one lock object reused",
        )
        add(
            f"py-n{n}",
            "py",
            f"py-n{n}",
            "hiredlock",
            "Python",
            n,
            "hiredlock",
            "hiredlock from Python, one Lock reused",
        )
        for interp in INTERPS:
            add(
                f"{interp}-n{n}",
                interp,
                f"lua-n{n}",
                "hiredlock",
                interp,
                n,
                "hiredlock",
                "hiredlock from Lua: client:acquire, release",
            )
    add(
        "c-new-n1",
        "c",
        "c-new-n1",
        "hiredlock",
        "C",
        1,
        "diagnostic",
        "hrl_lock_new + acquire + release + free per cycle",
    )
    add(
        "py-with-n1",
        "py",
        "py-with-n1",
        "hiredlock",
        "Python",
        1,
        "diagnostic",
        "with client.lock(name): a new Lock per cycle",
    )
    for interp in INTERPS:
        add(
            f"{interp}-core-reuse",
            interp,
            "core-reuse",
            "hiredlock",
            interp,
            1,
            "diagnostic",
            "hiredlock.core: one lock handle reused",
        )
        add(
            f"{interp}-core-n1",
            interp,
            "core-n1",
            "hiredlock",
            interp,
            1,
            "diagnostic",
            "hiredlock.core client:acquire (no facade)",
        )
        add(
            f"{interp}-lean-n1",
            interp,
            "lean-n1",
            "hiredlock",
            interp,
            1,
            "diagnostic",
            "core-n1 + a leaner facade sketch (bench/lua/worker.lua)",
        )
        add(
            f"{interp}-lua-redis",
            interp,
            "lua-redis",
            "lua-redis",
            interp,
            1,
            "peer",
            "lua-redis: SET NX PX + EVAL",
        )
    add("redis-py", "py", "redis-py", "redis-py", "Python", 1, "peer", "redis-py Lock")
    add(
        "redis-lock",
        "py",
        "redis-lock",
        "python-redis-lock",
        "Python",
        1,
        "peer",
        "python-redis-lock",
    )
    for n in (1, 3, 5):
        add(
            f"pottery-n{n}",
            "py",
            f"pottery-n{n}",
            "pottery",
            "Python",
            n,
            "peer",
            "pottery Redlock",
        )
        add(
            f"node-n{n}",
            "node",
            f"node-n{n}",
            "node-redlock",
            "Node.js",
            n,
            "peer",
            "node-redlock v5 on ioredis",
        )
    return cases


# The targets of issue 7: (id, what, numerator, denominator, op, bound).
# A ratio is time(numerator) / time(denominator), per repetition, median.
TARGETS = [
    ("c-floor", "C cycle time / raw loop time", "c-n1", "raw", "<=", 1.02),
    ("py-floor", "Python cycle time / raw loop time", "py-n1", "raw", "<=", 1.05),
    (
        "lua5.1-floor",
        "lua5.1 cycle time / raw loop time",
        "lua5.1-n1",
        "raw",
        "<=",
        1.05,
    ),
    (
        "luajit-floor",
        "LuaJIT cycle time / raw loop time",
        "luajit-n1",
        "raw",
        "<=",
        1.05,
    ),
    (
        "lua5.4-floor",
        "lua5.4 cycle time / raw loop time",
        "lua5.4-n1",
        "raw",
        "<=",
        1.05,
    ),
    (
        "py-vs-redis-py",
        "redis-py Lock time / Python N=1 time",
        "redis-py",
        "py-n1",
        ">",
        1.0,
    ),
    (
        "py5-vs-pottery5",
        "pottery N=5 time / Python N=5 time",
        "pottery-n5",
        "py-n5",
        ">=",
        3.0,
    ),
    (
        "py5-vs-node5",
        "node-redlock N=5 time / Python N=5 time",
        "node-n5",
        "py-n5",
        ">",
        1.0,
    ),
    ("c5-vs-c1", "C N=5 cycle time / C N=1 cycle time", "c-n5", "c-n1", "<=", 1.3),
    (
        "py5-vs-py1",
        "Python N=5 cycle time / Python N=1 cycle time",
        "py-n5",
        "py-n1",
        "<=",
        1.3,
    ),
    (
        "luajit5-vs-luajit1",
        "LuaJIT N=5 cycle time / N=1 cycle time",
        "luajit-n5",
        "luajit-n1",
        "<=",
        1.3,
    ),
]
# What the floor itself allows for the same comparisons.
FLOOR_RATIOS = [
    ("fan5-vs-raw", "fan-out N=5 time / raw N=1 time", "fan5", "raw"),
    ("fan3-vs-raw", "fan-out N=3 time / raw N=1 time", "fan3", "raw"),
    ("fan7-vs-raw", "fan-out N=7 time / raw N=1 time", "fan7", "raw"),
    (
        "rb-vs-raw",
        "redis-benchmark cycle time / raw loop time",
        "redis-benchmark",
        "raw",
    ),
]


# ------------------------------------------------------------------ helpers


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    if not sorted_values:
        return float("nan")
    k = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[min(k, len(sorted_values) - 1)]


def lat_summary(samples: list[float]) -> dict:
    s = sorted(samples)
    return {
        "n": len(s),
        "p50": percentile(s, 50),
        "p99": percentile(s, 99),
        "p999": percentile(s, 99.9),
        "max": s[-1] if s else float("nan"),
    }


def quartiles(values: list[float]) -> dict:
    s = sorted(values)
    return {
        "median": statistics.median(s),
        "p25": percentile(s, 25),
        "p75": percentile(s, 75),
        "n": len(s),
    }


def pin(cpu: int | None):
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def lua_env(abi: str) -> dict:
    # bench/run.sh's copy of the rock in build-lua/<abi>
    tree = REPO / "build" / "bench" / "lua" / abi
    lpath = f"{tree}/share/lua/{abi}/?.lua;{tree}/share/lua/{abi}/?/init.lua;;"
    cpath = f"{tree}/lib/lua/{abi}/?.so;;"
    env = dict(os.environ)
    env.update(LUA_PATH=lpath, LUA_CPATH=cpath, LUA_PATH_5_4=lpath, LUA_CPATH_5_4=cpath)
    return env


AB_WORKER: list[str] = []  # --ab: a C worker built on another core


def worker_argv(kind: str, urls: list[str]) -> tuple[list[str], dict | None]:
    joined = ",".join(urls)
    if kind == "c":
        return [str(C_WORKER), joined], None
    if kind == "ab":
        return [AB_WORKER[0], joined], None
    if kind == "py":
        return [sys.executable, str(PY_WORKER), joined], None
    if kind == "node":
        return ["node", str(NODE_WORKER), joined], None
    if kind in INTERPS:
        return [kind, str(LUA_WORKER), joined], lua_env(INTERPS[kind])
    raise ValueError(kind)


class Worker:
    """A long-lived benchmark process: one command line in, one JSON out."""

    def __init__(
        self, kind: str, urls: list[str], cpu: int | None, wrap: list[str] | None = None
    ) -> None:
        argv, env = worker_argv(kind, urls)
        argv = (wrap or []) + argv
        self.kind = kind
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
            preexec_fn=pin(cpu),
        )
        self.hello = self.read()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the {self.kind} worker exited (status {self.proc.poll()})"
            )
        obj = json.loads(line)
        if "error" in obj:
            raise RuntimeError(f"{self.kind} worker: {obj['error']}")
        return obj

    def call(self, line: str) -> dict:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()

    def rss_kb(self) -> int:
        text = Path(f"/proc/{self.pid}/status").read_text()
        return int(re.search(r"^VmRSS:\s+(\d+) kB", text, re.M).group(1))


class Workers(dict):
    """The long-lived workers, each started on first use."""

    def __init__(self, urls: list[str], cpu: int | None) -> None:
        super().__init__()
        self.urls, self.cpu = urls, cpu

    def __missing__(self, kind: str) -> Worker:
        log(f"starting the {kind} worker")
        self[kind] = Worker(kind, self.urls, self.cpu)
        return self[kind]

    def close(self) -> None:
        for w in self.values():
            w.close()


def fixture(*args: str) -> str:
    return subprocess.run(
        [str(LAUNCHER), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def cpu_times(cpu: int) -> list[int]:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith(f"cpu{cpu} "):
            return [int(x) for x in line.split()[1:]]
    return []


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def wait_quiet(max_wait: float, below: float = 0.3, hold: float = 60) -> dict:
    """Waits until the 1-minute load average stays below `below` for `hold`
    seconds, at most max_wait seconds. Says what happened."""
    t0 = time.monotonic()
    quiet_since = None
    samples = []
    while True:
        now = time.monotonic()
        load1 = loadavg()[0]
        samples.append(load1)
        if load1 < below:
            quiet_since = quiet_since or now
            if now - quiet_since >= hold:
                return {
                    "quiet": True,
                    "waited_s": round(now - t0),
                    "threshold": below,
                    "hold_s": hold,
                }
        else:
            quiet_since = None
        if now - t0 >= max_wait:
            return {
                "quiet": False,
                "waited_s": round(now - t0),
                "threshold": below,
                "hold_s": hold,
                "min_load1_seen": min(samples),
            }
        if len(samples) % 12 == 1:
            log(
                f"waiting for a quiet machine: load {load1:.2f} "
                f"(want < {below} for {hold:.0f} s), "
                f"{now - t0:.0f}/{max_wait:.0f} s"
            )
        time.sleep(5)


# ---------------------------------------------------------- machine/version


def cmd_out(argv: list[str]) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (
        (p.stdout.strip() or p.stderr.strip()).splitlines()[0]
        if (p.stdout.strip() or p.stderr.strip())
        else ""
    )


def machine_info() -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
    mhz = re.search(r"^cpu MHz\s*:\s*(.*)$", cpuinfo, re.M)
    os_release = Path("/etc/os-release").read_text()
    pretty = re.search(r'^PRETTY_NAME="?([^"\n]*)', os_release, re.M)
    mem = re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.M)
    clocksource = Path(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource"
    )
    return {
        "cpu_model": model.group(1) if model else platform.processor(),
        "cpu_mhz": float(mhz.group(1)) if mhz else None,
        "cpus": os.cpu_count(),
        "memory_mb": int(mem.group(1)) // 1024 if mem else None,
        "kernel": platform.release(),
        "os": pretty.group(1) if pretty else platform.platform(),
        "vm": cmd_out(["systemd-detect-virt", "--vm"]) or "unknown",
        "container": cmd_out(["systemd-detect-virt", "--container"]) or "unknown",
        "clocksource": clocksource.read_text().strip()
        if clocksource.exists()
        else "unknown",
    }


def versions() -> dict:
    from importlib import metadata

    def pyver(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    def npmver(name):
        p = NODE_DIR / "node_modules" / name / "package.json"
        return json.loads(p.read_text())["version"] if p.exists() else None

    redis = cmd_out(["redis-server", "--version"])
    m = re.search(r"v=(\S+)", redis)
    git = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    return {
        "hiredlock": pyver("hiredlock"),
        "git_commit": git,
        "git_modified": sorted(line[3:] for line in dirty if line.strip()),
        "redis": m.group(1) if m else redis,
        "hiredis": cmd_out(["pkg-config", "--modversion", "hiredis"]),
        "cc": cmd_out(["cc", "--version"]),
        "python": platform.python_version(),
        "lua5.1": " ".join(cmd_out(["lua5.1", "-v"]).split()[:2]),
        "luajit": " ".join(cmd_out(["luajit", "-v"]).split()[:2]),
        "lua5.4": " ".join(cmd_out(["lua5.4", "-v"]).split()[:2]),
        "node": cmd_out(["node", "--version"]),
        "redis-py": pyver("redis"),
        "pottery": pyver("pottery"),
        "python-redis-lock": pyver("python-redis-lock"),
        "node-redlock": npmver("redlock"),
        "ioredis": npmver("ioredis"),
        "lua-redis": cmd_out(["dpkg-query", "-W", "-f", "${Version}", "lua-redis"]),
    }


# ------------------------------------------------------------- redis-bench


class RedisBenchmark:
    """redis-benchmark -c 1 on master 1, SET NX PX and EVALSHA in turn; a
    cycle is one of each, so cycles/s = 1 / (1/rps_set + 1/rps_evalsha)."""

    TOKEN = "0123456789abcdef0123456789abcdef"
    SHA = "b70c2384248f88e6b75b9f89241a180f856ad852"

    def __init__(self, port: str, cpu: int | None) -> None:
        self.port = port
        self.cpu = cpu
        self.rate_guess = 5000.0

    def _one(self, count: int, *command: str) -> dict:
        p = subprocess.run(
            [
                "redis-benchmark",
                "-h",
                "127.0.0.1",
                "-p",
                self.port,
                "-c",
                "1",
                "-n",
                str(count),
                "-r",
                "1000000000",
                "--csv",
                *command,
            ],
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=pin(self.cpu),
        )
        rows = [r for r in p.stdout.splitlines() if r.startswith('"')]
        head = [h.strip('"') for h in rows[0].split(",")]
        vals = [v.strip('"') for v in rows[1].split(",")]
        row = dict(zip(head, vals))
        return {
            "rps": float(row["rps"]),
            "p50": float(row["p50_latency_ms"]) * 1000,
            "p99": float(row["p99_latency_ms"]) * 1000,
            "max": float(row["max_latency_ms"]) * 1000,
        }

    def run(self, seconds: float) -> dict:
        count = max(200, int(self.rate_guess * seconds))
        t0 = time.monotonic()
        s = self._one(
            count, "SET", "bench:rb:__rand_int__", self.TOKEN, "NX", "PX", "30000"
        )
        e = self._one(
            count, "EVALSHA", self.SHA, "1", "bench:rb:__rand_int__", self.TOKEN
        )
        rate = 1 / (1 / s["rps"] + 1 / e["rps"])
        self.rate_guess = rate
        return {
            "cycles": count,
            "elapsed": count / rate,
            "rate": rate,
            "cpu_us": None,
            "wall": time.monotonic() - t0,
            "rb": {"set": s, "evalsha": e},
        }


# ------------------------------------------------------------------ phases


def run_slice(workers, rb, case: dict, seconds: float) -> dict:
    if case["worker"] == "rb":
        return rb.run(seconds)
    r = workers[case["worker"]].call(f"run {case['wcase']} {seconds}")
    r["rate"] = r["cycles"] / r["elapsed"]
    return r


def main_phase(args, cases, workers, rb, rng, env_samples) -> dict:
    ids = [c for c in cases if c != REF]
    log(
        f"main: {len(ids) + 1} cases, {args.reps} repetitions of "
        f"{args.seconds} s per case, the raw loop after every "
        f"{args.ref_every} slices"
    )
    for cid in [REF, *ids]:  # warm-up: connections, scripts, caches, JITs
        run_slice(workers, rb, cases[cid], args.warmup)
    slices = []
    lat: dict[str, list[float]] = {c: [] for c in cases}
    rb_lat: list[dict] = []
    for rep in range(args.reps):
        order = rng.sample(ids, len(ids))
        seq = []
        for i, cid in enumerate(order):
            if i % args.ref_every == 0:
                seq.append(REF)
            seq.append(cid)
        seq.append(REF)
        t_rep = time.monotonic()
        for pos, cid in enumerate(seq):
            r = run_slice(workers, rb, cases[cid], args.seconds)
            slices.append(
                {
                    "rep": rep,
                    "pos": pos,
                    "case": cid,
                    "rate": r["rate"],
                    "cycles": r["cycles"],
                    "failed": r.get("failed", 0),
                    "cpu_us_per_cycle": (r["cpu_us"] / r["cycles"])
                    if r.get("cpu_us") is not None
                    else None,
                }
            )
            if "lat" in r:
                lat[cid].extend(r["lat"])
            if "rb" in r:
                rb_lat.append(r["rb"])
        env_samples.append({"t": time.time(), "load": loadavg()})
        raw_rates = [s["rate"] for s in slices if s["rep"] == rep and s["case"] == REF]
        log(
            f"main: repetition {rep + 1}/{args.reps} in "
            f"{time.monotonic() - t_rep:.1f} s, raw "
            f"{min(raw_rates):.0f}-{max(raw_rates):.0f} cycles/s, "
            f"load {env_samples[-1]['load'][0]:.2f}"
        )
    return analyse_main(args, cases, slices, lat, rb_lat)


def analyse_main(args, cases, slices, lat, rb_lat) -> dict:
    # Time of each slice relative to the raw loop around it: the mean rate
    # of the reference slices just before and just after it, divided by
    # the slice's own rate.
    rel: dict[str, dict[int, float]] = {c: {} for c in cases}
    by_rep: dict[int, list[dict]] = {}
    for s in slices:
        by_rep.setdefault(s["rep"], []).append(s)
    for rep, seq in by_rep.items():
        seq.sort(key=lambda s: s["pos"])
        refs = [i for i, s in enumerate(seq) if s["case"] == REF]
        for i, s in enumerate(seq):
            if s["case"] == REF:
                continue
            before = max(j for j in refs if j < i)
            after = min(j for j in refs if j > i)
            ref_rate = (seq[before]["rate"] + seq[after]["rate"]) / 2
            rel[s["case"]][rep] = ref_rate / s["rate"]
        rel[REF][rep] = 1.0

    def ratio(num: str, den: str) -> dict | None:
        reps = sorted(set(rel[num]) & set(rel[den]))
        if not reps:
            return None
        return quartiles([rel[num][r] / rel[den][r] for r in reps])

    out_cases = {}
    for cid, c in cases.items():
        rates = [s["rate"] for s in slices if s["case"] == cid]
        if not rates:
            continue
        cpus = [
            s["cpu_us_per_cycle"]
            for s in slices
            if s["case"] == cid and s["cpu_us_per_cycle"] is not None
        ]
        entry = dict(c)
        entry.update(
            {
                "rates": [round(x, 1) for x in rates],
                "rate_median": statistics.median(rates),
                "us_per_cycle": 1e6 / statistics.median(rates),
                "cpu_us_per_cycle": statistics.median(cpus) if cpus else None,
                "failed": sum(s["failed"] for s in slices if s["case"] == cid),
                "latency_us": lat_summary(lat[cid]) if lat[cid] else None,
                "vs_floor": ratio(cid, c["floor"]) if cid != c["floor"] else None,
            }
        )
        if cid == "redis-benchmark" and rb_lat:
            entry["latency_us"] = {
                "n": None,
                "p50": statistics.median(x["set"]["p50"] for x in rb_lat),
                "p99": statistics.median(x["set"]["p99"] for x in rb_lat),
                "p999": None,
                "max": max(x["set"]["max"] for x in rb_lat),
                "note": "redis-benchmark's own SET percentiles, median over "
                "repetitions (it reports no p99.9)",
            }
            entry["rb"] = {
                k: statistics.median(x[k]["rps"] for x in rb_lat)
                for k in ("set", "evalsha")
            }
        out_cases[cid] = entry
    targets = []
    for tid, what, num, den, op, bound in TARGETS:
        q = ratio(num, den) if num in out_cases and den in out_cases else None
        if q is None:
            continue
        v = q["median"]
        met = {"<=": v <= bound, ">=": v >= bound, ">": v > bound}[op]
        targets.append(
            {
                "id": tid,
                "what": what,
                "num": num,
                "den": den,
                "op": op,
                "bound": bound,
                "ratio": q,
                "met": met,
            }
        )
    floors = []
    for fid, what, num, den in FLOOR_RATIOS:
        q = ratio(num, den) if num in out_cases and den in out_cases else None
        if q is not None:
            floors.append({"id": fid, "what": what, "num": num, "den": den, "ratio": q})
    # Every pair a reader may want: hiredlock against each peer at equal N.
    versus = []
    for cid, c in out_cases.items():
        if c["kind"] != "peer":
            continue
        for h in ("c", "py", "luajit", "lua5.4", "lua5.1"):
            hid = f"{h}-n{c['n']}"
            if hid in out_cases:
                q = ratio(cid, hid)
                versus.append({"peer": cid, "hiredlock": hid, "ratio": q})
    # --ab: this checkout's C cases against the same on another core.
    ab = [
        {"case": cid[3:], "ab": cid, "ratio": ratio(cid[3:], cid)}
        for cid in out_cases
        if cid.startswith("ab-") and cid[3:] in out_cases
    ]
    return {
        "cases": out_cases,
        "ab": ab,
        "targets": targets,
        "floor_ratios": floors,
        "versus": versus,
        "slices": [
            {k: (round(v, 4) if isinstance(v, float) else v) for k, v in s.items()}
            for s in slices
        ],
    }


def print_summary(main: dict) -> None:
    """The main phase's table on stdout, for a reader at the terminal."""
    print(
        f"{'case':<22}{'cycles/s':>10}{'us/cycle':>10}{'CPU us':>8}"
        f"{'p50 us':>9}{'p99 us':>9}   time ratio to floor (IQR)"
    )
    for cid, c in sorted(
        main["cases"].items(),
        key=lambda kv: (kv[1]["n"], kv[1]["kind"] != "floor", -kv[1]["rate_median"]),
    ):
        lat = c.get("latency_us") or {}
        q = c.get("vs_floor")
        ratio = (
            f"{q['median']:.3f} x {c['floor']} ({q['p25']:.3f}-{q['p75']:.3f})"
            if q
            else ""
        )
        cpu = c.get("cpu_us_per_cycle")
        print(
            f"{cid:<22}{c['rate_median']:>10.0f}{c['us_per_cycle']:>10.1f}"
            f"{cpu if cpu is not None else float('nan'):>8.1f}"
            f"{lat.get('p50') or float('nan'):>9.1f}"
            f"{lat.get('p99') or float('nan'):>9.1f}   {ratio}"
        )
    for x in main.get("ab", []):
        q = x["ratio"]
        print(
            f"A/B {x['case']} time / {x['ab']} time: {q['median']:.3f} "
            f"({q['p25']:.3f}-{q['p75']:.3f})"
        )
    for t in main["targets"]:
        print(
            f"target {t['what']}: {t['ratio']['median']:.3f} "
            f"({t['op']} {t['bound']:g}: {'met' if t['met'] else 'MISSED'})"
        )


def paused_phase(args, cases, workers, rng, fixture_dir, defaults) -> dict:
    ids = [
        c
        for c in (
            "c-n5",
            "py-n5",
            "lua5.1-n5",
            "luajit-n5",
            "lua5.4-n5",
            "pottery-n5",
            "node-n5",
        )
        if c in cases
    ]
    log(
        f"paused: master {PAUSED_NODE} of 5 stopped; {len(ids)} cases, "
        f"{args.paused_reps} x {args.paused_seconds} s each"
    )
    lat: dict[str, list[float]] = {c: [] for c in ids}
    rates: dict[str, list[float]] = {c: [] for c in ids}
    failed = {c: 0 for c in ids}
    fixture("pause", fixture_dir, str(PAUSED_NODE))
    try:
        for _ in range(args.paused_reps):
            for cid in rng.sample(ids, len(ids)):
                c = cases[cid]
                r = workers[c["worker"]].call(f"run {c['wcase']} {args.paused_seconds}")
                rates[cid].append(r["cycles"] / r["elapsed"])
                lat[cid].extend(r["lat"])
                failed[cid] += r.get("failed", 0)
    finally:
        fixture("resume", fixture_dir, str(PAUSED_NODE))
    # The stopped server now runs what was queued for it (SETs of attempts
    # long given up): start the next phases from an empty master.
    time.sleep(0.5)
    fixture("cli", fixture_dir, str(PAUSED_NODE), "FLUSHALL")
    bound = defaults["timeout_ms"] * 1000 + 2000
    out = {}
    for cid in ids:
        summary = lat_summary(lat[cid])
        out[cid] = {
            "label": cases[cid]["label"],
            "library": cases[cid]["library"],
            "runtime": cases[cid]["runtime"],
            "rate_median": statistics.median(rates[cid]),
            "failed": failed[cid],
            "latency_us": summary,
            "p99_bound_us": bound,
            "p99_met": summary["p99"] <= bound,
        }
    return {
        "paused_node": PAUSED_NODE,
        "masters": 5,
        "timeout_ms": defaults["timeout_ms"],
        "connect_timeout_ms": defaults["connect_timeout_ms"],
        "cases": out,
    }


def contention_run(urls, name, delay, jitter, duration, cpu) -> dict:
    roles = ["py", "lua5.1", "py", "luajit", "py", "lua5.4", "py", "luajit"]
    procs = []
    for role in roles:
        args = [",".join(urls), name, f"{delay}", f"{jitter}"]
        if role == "py":
            argv, env = [sys.executable, str(PY_WORKER), "contend", *args], None
        else:
            argv = [role, str(LUA_WORKER), "contend", *args]
            env = lua_env(INTERPS[role])
        procs.append(
            subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=REPO,
                preexec_fn=pin(cpu),
            )
        )
    for p in procs:
        line = p.stdout.readline()
        if not json.loads(line).get("ready"):
            raise RuntimeError("a contention process did not start")
    end = time.monotonic() + duration
    for p in procs:
        p.stdin.write(f"go {end:.6f}\n")
        p.stdin.flush()
    holds = []
    timeouts = 0
    for k, p in enumerate(procs):
        r = json.loads(p.stdout.readline())
        p.wait()
        timeouts += r["timeouts"]
        holds += [(h[1], h[2], k, h[0], h[3]) for h in r["holds"]]
    holds.sort()
    overlaps = sum(1 for a, b in zip(holds, holds[1:]) if b[0] < a[1])
    hand = [(b[0] - a[1]) * 1e3 for a, b in zip(holds, holds[1:])]
    cross = [(b[0] - a[1]) * 1e3 for a, b in zip(holds, holds[1:]) if a[2] != b[2]]
    per_proc = [sum(1 for h in holds if h[2] == k) for k in range(len(roles))]
    waits = [(h[0] - h[3]) * 1e3 for h in holds]

    def pct(v):
        s = sorted(v)
        return {
            "n": len(s),
            "p50": percentile(s, 50),
            "p99": percentile(s, 99),
            "max": s[-1] if s else float("nan"),
        }

    return {
        "processes": roles,
        "duration_s": duration,
        "retry_delay_ms": delay * 1000,
        "retry_jitter_ms": jitter * 1000,
        "holds": len(holds),
        "holds_per_s": len(holds) / duration,
        "timeouts": timeouts,
        "overlaps": overlaps,
        "handoff_ms": pct(hand),
        "handoff_other_ms": pct(cross),
        "wait_ms": pct(waits),
        "other_share": len(cross) / len(hand) if hand else 0.0,
        "holds_per_process": per_proc,
        "by_runtime": {
            rt: sum(n for n, r in zip(per_proc, roles) if r == rt)
            for rt in dict.fromkeys(roles)
        },
    }


def contention_phase(args, urls, defaults) -> list[dict]:
    runs = []
    settings = [
        (
            "default",
            defaults["retry_delay_ms"] / 1000,
            defaults["retry_jitter_ms"] / 1000,
        ),
        ("short", args.short_retry_ms / 1000, args.short_retry_ms / 2000),
    ]
    for n in args.contention_n:
        for label, delay, jitter in settings:
            log(
                f"contention: 8 processes, N = {n}, {label} retry delay "
                f"({delay * 1000:g} +/- {jitter * 1000:g} ms), "
                f"{args.contention_seconds} s"
            )
            r = contention_run(
                urls[:n],
                f"bench:contend:{n}:{label}",
                delay,
                jitter,
                args.contention_seconds,
                args.cpu,
            )
            r.update({"n": n, "retry": label})
            runs.append(r)
    return runs


def memory_phase(args, urls) -> dict:
    out = {
        "hold": {},
        "drift": {},
        "hold_count": args.hold,
        "drift_cycles": args.drift_cycles,
    }
    kinds = ["c", "py", "lua5.1", "luajit", "lua5.4", "node"]
    for kind in kinds:
        w = Worker(kind, urls[:1], args.cpu)
        try:
            holds = [("hold", kind)]
            if kind == "py":
                holds.append(("hold-redis-py", "redis-py"))
            if kind in ("c", "py") or kind in INTERPS:
                w.call("cycles 1000")  # warm: connections, allocator
            for cmd, label in holds:
                label = {"c": "C", "py": "Python", "node": "node-redlock"}.get(
                    label, label
                )
                before = w.rss_kb()
                w.call(f"{cmd} {args.hold}")
                held = w.rss_kb()
                w.call("unhold")
                after = w.rss_kb()
                out["hold"][label] = {
                    "rss_before_kb": before,
                    "rss_holding_kb": held,
                    "rss_after_kb": after,
                    "bytes_per_lock": (held - before) * 1024 / args.hold,
                }
                log(
                    f"memory: {label} holding {args.hold} locks: RSS "
                    f"{before} -> {held} kB"
                )
            if kind == "node":
                continue
            label = {"c": "C", "py": "Python"}.get(kind, kind)
            chunk = args.drift_cycles // 10
            points = [(0, w.rss_kb())]
            t0 = time.monotonic()
            for k in range(1, 11):
                w.call(f"cycles {chunk}")
                points.append((k * chunk, w.rss_kb()))
            took = time.monotonic() - t0
            first = points[1][1]
            out["drift"][label] = {
                "points": points,
                "rss_after_first_chunk_kb": first,
                "rss_end_kb": points[-1][1],
                "drift_kb": points[-1][1] - first,
                "seconds": took,
            }
            log(
                f"memory: {label} over {args.drift_cycles} cycles: RSS "
                f"{first} -> {points[-1][1]} kB ({took:.0f} s)"
            )
        finally:
            w.close()
    return out


PROFILE_CASES = [
    "raw",
    "c-n1",
    "c-new-n1",
    "fan5",
    "c-n5",
    "py-n1",
    "py-with-n1",
    "redis-py",
] + [
    f"{interp}-{case}"
    for interp in INTERPS
    for case in ("n1", "lean-n1", "core-n1", "core-reuse")
]


QUICK_PROFILE_CASES = ["raw", "c-n1", "py-n1", "luajit-n1"]


def counted(case: dict, urls, cpu, wrap, k: int, base: int) -> None:
    """A fresh worker (under wrap) runs base cycles, then k more."""
    w = Worker(case["worker"], urls, cpu, wrap)
    try:
        w.call(f"count {case['wcase']} {base}")
        if k:
            w.call(f"count {case['wcase']} {k}")
    finally:
        w.close()


def callgrind_total(path: Path) -> int:
    text = path.read_text()
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    return int(m.group(1))


def strace_calls(path: Path) -> dict[str, int]:
    calls = {}
    for line in path.read_text().splitlines():
        tok = line.split()
        if len(tok) >= 5 and tok[0][0].isdigit() and tok[-1] != "total":
            calls[tok[-1]] = int(tok[3])
    return calls


def profile_phase(args, cases, urls) -> dict:
    """Deterministic client-side costs: instructions (callgrind) and system
    calls (strace) per cycle, each the difference between a run of `base`
    cycles and one of base + k, so start-up cancels out."""
    base, k = 200, args.profile_cycles
    tmp = REPO / "build" / "bench" / "profile"
    tmp.mkdir(parents=True, exist_ok=True)
    out = {"cycles_base": base, "cycles": k, "cases": {}}
    # Python's start-up depends on its hash seed; fix it, so both runs of
    # a pair start alike.
    os.environ["PYTHONHASHSEED"] = "0"
    have_valgrind = shutil.which("valgrind") is not None
    have_strace = shutil.which("strace") is not None
    wanted = (
        args.cases.split(",")
        if args.cases
        else (QUICK_PROFILE_CASES if args.quick else PROFILE_CASES)
    )
    for cid in wanted:
        if cid not in cases:
            continue
        case = cases[cid]
        entry = {}
        if have_valgrind:
            totals = []
            for cycles in (0, k):
                f = tmp / f"{cid}.{cycles}.callgrind"
                wrap = [
                    "valgrind",
                    "--tool=callgrind",
                    "--quiet",
                    "--smc-check=all-non-file",
                    f"--callgrind-out-file={f}",
                ]
                counted(case, urls, args.cpu, wrap, cycles, base)
                totals.append(callgrind_total(f))
            entry["instructions"] = (totals[1] - totals[0]) / k
        if have_strace:
            counts = []
            for cycles in (0, k):
                f = tmp / f"{cid}.{cycles}.strace"
                wrap = ["strace", "-f", "-c", "-o", str(f)]
                counted(case, urls, args.cpu, wrap, cycles, base)
                counts.append(strace_calls(f))
            entry["syscalls"] = {
                name: (counts[1].get(name, 0) - counts[0].get(name, 0)) / k
                for name in set(counts[0]) | set(counts[1])
                if counts[1].get(name, 0) != counts[0].get(name, 0)
            }
        out["cases"][cid] = entry
        log(
            f"profile: {cid}: "
            + (
                f"{entry['instructions']:,.0f} instructions/cycle, "
                if "instructions" in entry
                else ""
            )
            + (
                f"{sum(entry['syscalls'].values()):.2f} syscalls/cycle"
                if "syscalls" in entry
                else ""
            )
        )
    return out


# --------------------------------------------------------------------- main


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        help="a routine check in under 2 minutes; writes under build/bench/, not docs/",
    )
    p.add_argument("--reps", type=int, help="main-phase repetitions")
    p.add_argument("--seconds", type=float, help="per case and repetition")
    p.add_argument("--warmup", type=float, default=0.3)
    p.add_argument(
        "--ref-every",
        type=int,
        default=3,
        help="run the raw loop after every this many slices",
    )
    p.add_argument(
        "--cpu",
        type=int,
        default=None,
        help="the one CPU for servers and clients (default: the last one)",
    )
    p.add_argument("--no-pin", action="store_true", help="do not pin")
    p.add_argument("--phases", default="main,paused,contention,memory,profile")
    p.add_argument("--cases", help="main phase: only these (comma list)")
    p.add_argument(
        "--wait-quiet",
        type=float,
        default=None,
        help="wait up to this many seconds for load < 0.3 (default 600, --quick 0)",
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--json",
        help="results file (default bench/results/<date>.json; --quick: build/bench/)",
    )
    p.add_argument(
        "--docs",
        help="directory for PERFORMANCE.md and "
        "performance.png (default docs/; --quick: "
        "build/bench/)",
    )
    p.add_argument("--no-report", action="store_true")
    p.add_argument(
        "--ab",
        help="a C worker built on another core "
        "(bench/ab-worker.sh REV): adds the cases ab-c-n1, "
        "ab-c-n5 and ab-c-new-n1",
    )
    a = p.parse_args()
    quick = a.quick
    a.reps = a.reps or (3 if quick else 21)
    a.seconds = a.seconds or (0.1 if quick else 0.25)
    a.paused_reps = 1 if quick else 3
    a.paused_seconds = 0.6 if quick else 4.0
    a.contention_seconds = 2.0 if quick else 10.0
    a.contention_n = [5] if quick else [1, 5]
    a.short_retry_ms = 2.0
    a.hold = 10000
    a.drift_cycles = 20000 if quick else 1000000
    a.profile_cycles = 300 if quick else 2000
    if a.wait_quiet is None:
        a.wait_quiet = 0 if quick else 600
    if a.no_pin:
        a.cpu = None
    elif a.cpu is None:
        a.cpu = (os.cpu_count() or 1) - 1
    return a


def main() -> None:
    args = parse_args()
    if "HRL_FIXTURE_URLS" not in os.environ:
        os.execv(
            str(LAUNCHER),
            [
                str(LAUNCHER),
                "run",
                "-n",
                str(FIXTURE_NODES),
                "--",
                sys.executable,
                __file__,
                *sys.argv[1:],
            ],
        )
    urls = os.environ["HRL_FIXTURE_URLS"].split(",")
    fixture_dir = os.environ["HRL_FIXTURE_DIR"]
    if len(urls) < FIXTURE_NODES:
        sys.exit(f"bench: needs {FIXTURE_NODES} masters, got {len(urls)}")
    if not C_WORKER.exists():
        sys.exit(f"bench: {C_WORKER} is missing; run bench/run.sh")
    phases = args.phases.split(",")
    quiet = {"quiet": None, "waited_s": 0}
    if args.wait_quiet > 0:
        quiet = wait_quiet(args.wait_quiet)
    started = datetime.datetime.now().astimezone()  # after the wait
    load_start = loadavg()
    if args.cpu is not None:
        for i in range(1, FIXTURE_NODES + 1):
            os.sched_setaffinity(int(fixture("pid", fixture_dir, str(i))), {args.cpu})
    cpu0 = cpu_times(args.cpu if args.cpu is not None else 0)
    t_start = time.monotonic()
    all_cases = build_cases()
    if not shutil.which("node") or not (NODE_DIR / "node_modules").exists():
        log("node or bench/node/node_modules missing: no node-redlock cases")
        all_cases = {k: v for k, v in all_cases.items() if v["worker"] != "node"}
    if args.ab:
        AB_WORKER.append(str(Path(args.ab).resolve()))
        for cid in ("c-n1", "c-n5", "c-new-n1"):
            ab = dict(all_cases[cid])
            ab.update(
                worker="ab", kind="diagnostic", label=f"{ab['label']} ({args.ab})"
            )
            all_cases[f"ab-{cid}"] = ab
    cases = all_cases
    if args.cases:
        wanted = set(args.cases.split(",")) | {REF}
        unknown = wanted - set(all_cases)
        if unknown:
            sys.exit(f"bench: unknown cases {sorted(unknown)}")
        for cid in list(wanted):
            wanted.add(all_cases[cid]["floor"])
        cases = {k: v for k, v in all_cases.items() if k in wanted}
    rng = random.Random(args.seed)
    env_samples: list[dict] = []
    log(f"clients and the {FIXTURE_NODES} servers pinned to CPU {args.cpu}")
    workers = Workers(urls, args.cpu)
    defaults = workers["c"].hello["defaults"]
    rb = RedisBenchmark(urls[0].rsplit(":", 1)[1], args.cpu)
    result = {
        "schema": 1,
        "date": started.isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "argv": sys.argv[1:],
        "machine": machine_info(),
        "versions": versions(),
        "settings": {
            "reps": args.reps,
            "seconds": args.seconds,
            "warmup": args.warmup,
            "ref_every": args.ref_every,
            "seed": args.seed,
            "cpu": args.cpu,
            "servers": FIXTURE_NODES,
            "hiredlock_defaults": defaults,
            "paused_reps": args.paused_reps,
            "paused_seconds": args.paused_seconds,
            "contention_seconds": args.contention_seconds,
            "short_retry_ms": args.short_retry_ms,
            "hold": args.hold,
            "drift_cycles": args.drift_cycles,
            "ttl_s": 30,
        },
        "pinning": (
            "none"
            if args.cpu is None
            else f"every Redis server and every benchmark process on "
            f"CPU {args.cpu} (sched_setaffinity)"
        ),
        "load": {"wait": quiet, "start": load_start},
    }
    took = result["phase_seconds"] = {}

    def timed(name, fn, *fargs):
        t0 = time.monotonic()
        result[name] = fn(*fargs)
        took[name] = round(time.monotonic() - t0, 1)

    try:
        if "main" in phases:
            timed("main", main_phase, args, cases, workers, rb, rng, env_samples)
            print_summary(result["main"])
        if "paused" in phases:
            timed(
                "paused",
                paused_phase,
                args,
                all_cases,
                workers,
                rng,
                fixture_dir,
                defaults,
            )
    finally:
        workers.close()
    if "contention" in phases:
        timed("contention", contention_phase, args, urls, defaults)
    if "memory" in phases:
        timed("memory", memory_phase, args, urls)
    if "profile" in phases:
        timed("profile", profile_phase, args, all_cases, urls)
    cpu1 = cpu_times(args.cpu if args.cpu is not None else 0)
    delta = [b - a for a, b in zip(cpu0, cpu1)]
    total = sum(delta) or 1
    result["load"].update(
        {
            "end": loadavg(),
            "samples": env_samples,
            "run_seconds": time.monotonic() - t_start,
            # /proc/stat fields: user nice system idle iowait irq softirq steal
            "bench_cpu_busy": 1 - (delta[3] + delta[4]) / total,
            "bench_cpu_steal": delta[7] / total if len(delta) > 7 else None,
        }
    )
    if args.json:
        path = Path(args.json)
    elif args.quick:
        path = REPO / "build" / "bench" / "quick.json"
    else:
        path = (
            REPO / "bench" / "results" / (started.strftime("%Y-%m-%d-%H%M") + ".json")
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    if not args.no_report:
        docs = (
            Path(args.docs)
            if args.docs
            else (REPO / "build" / "bench" if args.quick else REPO / "docs")
        )
        subprocess.run(
            [
                sys.executable,
                str(REPO / "bench" / "report.py"),
                str(path),
                "--docs",
                str(docs),
            ],
            check=True,
        )


if __name__ == "__main__":
    main()
