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
  contention  W = 4 and 8 processes on one name, N = 1 and 5, each looping
              acquire / hold 2 ms / release / think 1-3 ms: hiredlock from
              Python, Lua and both (and from Python over TLS, N = 1),
              redis-py, python-redis-lock, pottery (--contention-libs:
              only some).
  stampede    200 concurrent requests for one key in nginx, whose holder
              works 100 ms: hiredlock next to lua-resty-lock (--resty-lock).
  delay       5 masters behind toxiproxy adding 0.5 and 1 ms each way: the
              N = 1, 3, 5 cycle of hiredlock (C, Python, Lua), node-redlock
              and pottery.
  memory      RSS of a process holding 10,000 locks; RSS over 1M cycles.
  profile     instructions and system calls per cycle (callgrind, strace).
  leases      1,000 auto-renewed held locks: renewals and commands per
              second on the masters, the holder's CPU and wakeups.
  rwsem       read-write locks and semaphores (Python, N = 1) beside
              redis-py's Lock, pottery's Redlock and a ZSET semaphore: the
              uncontended cycle, 8 readers + 1 writer, permits used over
              permits available under contention (target >= 90 %).

A full run (neither --quick nor --phases/--cases) refuses a tree with
uncommitted changes unless --allow-dirty: its results are committed as the
measurement of a commit. The parts live in bench/hrlbench/, the workers in
tests/workers/.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from hrlbench import C_WORKER, FIXTURE_NODES, LAUNCHER, NODE_DIR, REF, REPO, log
from hrlbench.cases import build_cases
from hrlbench.cli import PHASES, parse_args
from hrlbench.contention import contention_phase
from hrlbench.delay import delay_phase
from hrlbench.leases import leases_phase
from hrlbench.machine import (
    cpu_times,
    fixture,
    loadavg,
    machine_info,
    versions,
    wait_quiet,
)
from hrlbench.main_phase import main_phase, print_summary
from hrlbench.memory import memory_phase
from hrlbench.paused import paused_phase
from hrlbench.pool import AB_PYTHON, AB_WORKER, Workers
from hrlbench.profile import profile_phase
from hrlbench.redis_benchmark import RedisBenchmark
from hrlbench.rwsem import rwsem_phase
from hrlbench.stampede import stampede_phase

sys.path.insert(0, str(REPO / "tests" / "fixtures"))

from treestate import refuse_dirty, tree_state  # the path above


def deploy_variants(
    cluster: dict | None, replicated: dict | None = None
) -> dict[str, list[str]]:
    """The masters of the deployment cases' workers (pool.Workers): the
    fixture's TLS ports, verified against its CA (none when the fixture has
    no TLS: a fixture from outside), the Redis Cluster the harness started
    (start_cluster), and its masters with a replica each (start_replicated),
    plain and with sync_replicas=1 in their URLs."""
    variants = {}
    if replicated:
        plain = replicated["HRL_FIXTURE_URLS"].split(",")
        variants["replicated"] = plain
        variants["synced"] = [f"{u}?sync_replicas=1" for u in plain]
    if "HRL_FIXTURE_TLS_URLS" in os.environ:
        ca = Path(os.environ["HRL_FIXTURE_TLS_DIR"]) / "ca.crt"
        tls_urls = os.environ["HRL_FIXTURE_TLS_URLS"].split(",")
        variants["tls"] = [f"{u}?ssl_ca_certs={ca}" for u in tls_urls]
    if cluster:
        # One seed: the workers take their masters comma separated, and
        # MOVED teaches the rest.
        variants["cluster"] = [cluster["HRL_FIXTURE_CLUSTER_URL"].split(",")[0]]
    return variants


def start_cluster(cpu: int | None) -> dict:
    """A 3-node Redis Cluster of the harness's own (the launcher's
    --cluster), its servers pinned like the others; the launcher's lines."""
    out = fixture("start", "-n", "3", "--cluster", "--owner", str(os.getpid()))
    env = dict(line.split("=", 1) for line in out.splitlines())
    if cpu is not None:
        for i in (1, 2, 3):
            pid = int(fixture("pid", env["HRL_FIXTURE_DIR"], str(i)))
            os.sched_setaffinity(pid, {cpu})
    return env


def start_replicated(cpu: int | None) -> dict:
    """Five masters of the harness's own with a replica each (the
    launcher's --replicas 1), pinned like the others; the launcher's
    lines."""
    out = fixture("start", "-n", "5", "--replicas", "1", "--owner", str(os.getpid()))
    env = dict(line.split("=", 1) for line in out.splitlines())
    if cpu is not None:
        for i in [*(str(k) for k in range(1, 6)), *(f"r{k}" for k in range(1, 6))]:
            pid = int(fixture("pid", env["HRL_FIXTURE_DIR"], i))
            os.sched_setaffinity(pid, {cpu})
    return env


def main() -> None:
    args = parse_args()
    # A full run's results are committed as those of a commit; a partial
    # or quick one only checks, and records what was dirty either way.
    full = not args.quick and not args.cases and args.phases == PHASES
    refuse_dirty("bench", tree_state(), args.allow_dirty or not full)
    if "HRL_FIXTURE_URLS" not in os.environ:
        os.execv(
            str(LAUNCHER),
            [
                str(LAUNCHER),
                "run",
                "-n",
                str(FIXTURE_NODES),
                "--tls",  # the TLS cases' ports, on the same servers
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
    wants_cluster = any(
        c["worker"].endswith("@cluster")
        for cid, c in all_cases.items()
        if not args.cases or cid in args.cases.split(",")
    )
    cluster = start_cluster(args.cpu) if wants_cluster else None
    wants_replicated = any(
        c["worker"].endswith(("@replicated", "@synced"))
        for cid, c in all_cases.items()
        if not args.cases or cid in args.cases.split(",")
    )
    replicated = start_replicated(args.cpu) if wants_replicated else None
    variants = deploy_variants(cluster, replicated)
    for cid, c in list(all_cases.items()):
        variant = c["worker"].partition("@")[2]
        if variant and variant not in variants:
            log(f"no {variant} masters: no {cid} case")
            del all_cases[cid]
    if not shutil.which("node") or not (NODE_DIR / "node_modules").exists():
        log("node or build/bench/node/node_modules missing: no node-redlock cases")
        all_cases = {k: v for k, v in all_cases.items() if v["worker"] != "node"}
    if args.ab:
        AB_WORKER.append(str(Path(args.ab).resolve()))
        for cid in ("c-n1", "c-n5", "c-new-n1"):
            ab = dict(all_cases[cid])
            ab.update(
                worker="ab", kind="diagnostic", label=f"{ab['label']} ({args.ab})"
            )
            all_cases[f"ab-{cid}"] = ab
    if args.ab_python:
        AB_PYTHON.append(str(Path(args.ab_python).resolve()))
        for cid in ("py-n1", "py-n5", "py-async-n1", "py-with-n1"):
            ab = dict(all_cases[cid])
            ab.update(
                worker="abpy",
                kind="diagnostic",
                label=f"{ab['label']} ({args.ab_python})",
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
    workers = Workers(urls, args.cpu, variants=variants)
    defaults = workers["c"].hello["defaults"]
    rb = RedisBenchmark(urls[0].rsplit(":", 1)[1], args.cpu)
    result = {
        "schema": 1,
        "date": started.isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full" if full else "partial",
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
            "stampede_reps": args.stampede_reps,
            "delay_reps": args.delay_reps,
            "delay_seconds": args.delay_seconds,
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
        if cluster:
            fixture("stop", cluster["HRL_FIXTURE_DIR"])
        if replicated:
            fixture("stop", replicated["HRL_FIXTURE_DIR"])
    if "contention" in phases:
        timed("contention", contention_phase, args, urls, defaults, variants.get("tls"))
    if "stampede" in phases:
        timed("stampede", stampede_phase, args, urls)
    if "delay" in phases:
        timed(
            "delay",
            delay_phase,
            args,
            urls,
            lambda worker: any(c["worker"] == worker for c in all_cases.values()),
        )
    if "memory" in phases:
        timed("memory", memory_phase, args, urls)
    if "profile" in phases:
        timed("profile", profile_phase, args, all_cases, urls)
    if "leases" in phases:
        timed("leases", leases_phase, args, urls)
    if "rwsem" in phases:
        timed("rwsem", rwsem_phase, args, urls)
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
