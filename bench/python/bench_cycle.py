#!/usr/bin/env python3
"""Acquire+release cycles per second: hiredlock from Python next to the raw
C loop, hiredlock's C API and the Python peers, in one run on the same
servers.

    python3 bench/python/bench_cycle.py [--seconds 0.5] [--reps 15]

Runs itself under `tests/fixtures/redis-fixture run -n 5` when no fixture is
set. Every case is one client doing back-to-back uncontended cycles (acquire
without waiting, then release) on a key of its own. Cases are interleaved
repetition by repetition, in a shuffled order, so drift in the machine hits
them alike; rates are the medians of the repetitions, and each ratio is the
median of the per-repetition ratios. Needs `pip install redis pottery
python-redis-lock` (benchmark only, never a dependency of hiredlock) and a
C compiler with hiredis (the raw loop, bench/python/raw_loop.c).

Cases, N = 1 (master 1):
  raw         C, blocking hiredis: SET NX PX + EVALSHA release (the floor)
  c-n1        hiredlock's C API
  py-n1       hiredlock from Python
  redis-py    redis-py's Lock
  redis-lock  python-redis-lock
  pottery-n1  pottery's Redlock on one master
and N = 5:
  fan5        C, the same two commands fanned out to 5 masters in parallel
  c-n5, py-n5, pottery-n5
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "tests" / "fixtures" / "redis-fixture"
RAW_LOOP = REPO / "build-python" / "bench" / "raw_loop"


def build_raw_loop() -> None:
    sources = [
        REPO / "bench" / "python" / "raw_loop.c",
        *sorted((REPO / "core" / "src").glob("*.c")),
    ]
    newest = max(
        p.stat().st_mtime for p in [*sources, REPO / "core" / "include" / "hiredlock.h"]
    )
    if RAW_LOOP.exists() and RAW_LOOP.stat().st_mtime >= newest:
        return
    RAW_LOOP.parent.mkdir(parents=True, exist_ok=True)
    cflags = shlex.split(
        subprocess.check_output(["pkg-config", "--cflags", "hiredis"], text=True)
    )
    libs = shlex.split(
        subprocess.check_output(["pkg-config", "--libs", "hiredis"], text=True)
    )
    subprocess.run(
        [
            "cc",
            "-O2",
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            f"-I{REPO / 'core' / 'include'}",
            f"-I{REPO / 'core' / 'src'}",
            *cflags,
            *map(str, sources),
            "-o",
            str(RAW_LOOP),
            *libs,
            "-lpthread",
            "-lm",
        ],
        check=True,
    )


class RawLoop:
    """The C cases, in a long-lived process on the same servers."""

    def __init__(self, urls: list[str]) -> None:
        self.proc = subprocess.Popen(
            [str(RAW_LOOP), ",".join(urls)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def rate(self, mode: str, seconds: float) -> tuple[float, float]:
        self.proc.stdin.write(f"{mode} {seconds}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"bench: raw_loop {mode} failed")
        rate, cpu = line.split()
        return float(rate), float(cpu)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def python_rate(acquire, release, seconds: float) -> tuple[float, float]:
    """Back-to-back cycles for `seconds`; the same harness for every case.
    Returns cycles/s and this process's CPU microseconds per cycle."""
    cycles = 0
    cpu = time.process_time()
    start = now = time.perf_counter()
    end = start + seconds
    while now < end:
        for _ in range(64):
            if not acquire():
                raise RuntimeError("bench: an uncontended acquire failed")
            release()
        cycles += 64
        now = time.perf_counter()
    return cycles / (now - start), (time.process_time() - cpu) * 1e6 / cycles


def make_cases(urls: list[str]):
    try:
        import pottery
        import redis
        import redis_lock
    except ImportError as err:
        sys.exit(f"bench: {err}; pip install redis pottery python-redis-lock")
    import logging

    import hiredlock

    logging.getLogger("pottery").setLevel(logging.ERROR)
    raw = RawLoop(urls)
    py1 = hiredlock.Client(urls[:1]).lock("bench:py1")
    py5 = hiredlock.Client(urls).lock("bench:py5")
    conns = [redis.Redis.from_url(u) for u in urls]
    rp = conns[0].lock("bench:redispy", timeout=30)
    rl = redis_lock.Lock(conns[0], "bench:redislock", expire=30)
    pot1 = pottery.Redlock(key="bench:pot1", masters={conns[0]}, auto_release_time=30)
    pot5 = pottery.Redlock(key="bench:pot5", masters=set(conns), auto_release_time=30)

    def py(acquire, release):
        return functools.partial(python_rate, acquire, release)

    cases = {
        "raw": functools.partial(raw.rate, "raw"),
        "c-n1": functools.partial(raw.rate, "c1"),
        "py-n1": py(functools.partial(py1.acquire, False), py1.release),
        "redis-py": py(functools.partial(rp.acquire, blocking=False), rp.release),
        "redis-lock": py(functools.partial(rl.acquire, blocking=False), rl.release),
        "pottery-n1": py(functools.partial(pot1.acquire, blocking=False), pot1.release),
        "fan5": functools.partial(raw.rate, "fan5"),
        "c-n5": functools.partial(raw.rate, "c5"),
        "py-n5": py(functools.partial(py5.acquire, False), py5.release),
        "pottery-n5": py(functools.partial(pot5.acquire, blocking=False), pot5.release),
    }
    return cases, raw


# (name, numerator case, denominator case, what it says, target)
RATIOS = [
    ("py-n1 time / raw time", "raw", "py-n1", "<= 1.05"),
    ("py-n1 time / c-n1 time", "c-n1", "py-n1", ""),
    ("py-n1 speed / redis-py speed", "py-n1", "redis-py", "> 1"),
    ("py-n1 speed / redis-lock speed", "py-n1", "redis-lock", ""),
    ("py-n1 speed / pottery-n1 speed", "py-n1", "pottery-n1", ""),
    ("py-n5 time / fan5 time", "fan5", "py-n5", ""),
    ("py-n5 time / c-n5 time", "c-n5", "py-n5", ""),
    ("py-n5 speed / pottery-n5 speed", "py-n5", "pottery-n5", ">= 3"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=0.5, help="per case and repetition"
    )
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument(
        "--cases", help="comma-separated subset of the cases (default: all)"
    )
    args = parser.parse_args()
    if "HRL_FIXTURE_URLS" not in os.environ:
        os.execv(
            str(LAUNCHER),
            [
                str(LAUNCHER),
                "run",
                "-n",
                "5",
                "--",
                sys.executable,
                __file__,
                *sys.argv[1:],
            ],
        )
    urls = os.environ["HRL_FIXTURE_URLS"].split(",")
    build_raw_loop()
    cases, raw = make_cases(urls)
    if args.cases:
        unknown = set(args.cases.split(",")) - set(cases)
        if unknown:
            sys.exit(f"bench: unknown cases {sorted(unknown)}; known: {list(cases)}")
        cases = {n: run for n, run in cases.items() if n in args.cases.split(",")}
    names = list(cases)
    for run in cases.values():  # warm-up: connections, scripts, caches
        run(0.2)
    rates: dict[str, list[float]] = {n: [] for n in names}
    cpus: dict[str, list[float]] = {n: [] for n in names}
    shuffler = random.Random(42)
    for rep in range(args.reps):
        order = shuffler.sample(names, len(names))
        for n in order:
            rate, cpu = cases[n](args.seconds)
            rates[n].append(rate)
            cpus[n].append(cpu)
        print(
            f"rep {rep + 1}: " + "  ".join(f"{n} {rates[n][-1]:.0f}" for n in names),
            file=sys.stderr,
        )
    raw.close()
    medians = {n: statistics.median(v) for n, v in rates.items()}
    cpu_medians = {n: statistics.median(v) for n, v in cpus.items()}
    print(f"{'case':<12}{'cycles/s':>10}{'us/cycle':>10}{'client CPU us/cycle':>21}")
    for n in names:
        rate, cpu = medians[n], cpu_medians[n]
        print(f"{n:<12}{rate:>10.0f}{1e6 / rate:>10.1f}{cpu:>21.1f}")
    print()
    ratios = {}
    for label, num, den, target in RATIOS:
        if num not in rates or den not in rates:
            continue
        ratio = statistics.median(a / b for a, b in zip(rates[num], rates[den]))
        ratios[label] = ratio
        print(f"{label:<34}{ratio:>7.3f}  {('target ' + target) if target else ''}")
    result = {
        "seconds": args.seconds,
        "reps": args.reps,
        "cycles_per_s": medians,
        "client_cpu_us_per_cycle": cpu_medians,
        "ratios": ratios,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
