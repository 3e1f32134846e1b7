"""The leases phase: what 1,000 auto-renewed held locks cost. A fresh C
and Python worker each hold them (a client of their own, so its renewer is
the only thread at work) while the phase reads, over a window, the
renewals and commands the masters ran and the CPU time and context
switches of the worker. The target: one renewal command per lock and
master per third of a TTL, and a renewer that sleeps in between."""

from __future__ import annotations

import time
from pathlib import Path

import redis

from . import log
from .pool import Worker

CLOCK_TICKS = 100  # USER_HZ: the unit of utime and stime in /proc/PID/stat


def process_stats(pid: int) -> tuple[float, int]:
    """CPU seconds (user + system) and context switches of every thread."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    switches = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt")):
                switches += int(line.split()[1])
    return cpu, switches


def scripts_run(conn: redis.Redis) -> int:
    stats = conn.info("commandstats")
    return sum(
        stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("evalsha", "eval")
    )


def leases_phase(args, urls) -> dict:
    out = {"locks": args.lease_count, "seconds": args.lease_seconds, "runs": []}
    for kind in ("c", "py"):
        for n, ttl_ms in args.lease_configs:
            w = Worker(kind, urls, args.cpu)
            conns = [redis.Redis.from_url(u) for u in urls[:n]]
            try:
                w.call(f"lease {args.lease_count} {ttl_ms} {n}")
                time.sleep(ttl_ms / 1000 / 3)  # every lock renewed once
                for c in conns:
                    c.config_resetstat()
                cpu0, sw0 = process_stats(w.pid)
                t0 = time.monotonic()
                time.sleep(args.lease_seconds)
                cpu1, sw1 = process_stats(w.pid)
                took = time.monotonic() - t0
                renewals = [scripts_run(c) for c in conns]
                commands = [c.info("stats")["total_commands_processed"] for c in conns]
                w.call("unhold")
            finally:
                w.close()
                for c in conns:
                    c.close()
            expected = args.lease_count / (ttl_ms / 1000 / 3)
            run = {
                "runtime": "C" if kind == "c" else "Python",
                "masters": n,
                "ttl_ms": ttl_ms,
                "seconds": took,
                "renewals_per_s": renewals[0] / took,
                "expected_per_s": expected,
                "commands_per_s_per_master": sum(commands) / n / took,
                "cpu_fraction": (cpu1 - cpu0) / took,
                "cpu_us_per_renewal": (cpu1 - cpu0) * 1e6 / max(renewals[0], 1),
                "switches_per_s": (sw1 - sw0) / took,
            }
            out["runs"].append(run)
            log(
                f"leases: {run['runtime']} {args.lease_count} locks, N={n}, TTL "
                f"{ttl_ms} ms: {run['renewals_per_s']:.0f} renewals/s (target "
                f"{expected:.0f}), {run['commands_per_s_per_master']:.0f} Redis "
                f"commands/s a master (with the script's), CPU "
                f"{run['cpu_fraction'] * 100:.1f}% of a core, "
                f"{run['switches_per_s']:.0f} context switches/s"
            )
    return out
