"""The machine under the benchmark: CPU pinning, load, /proc/stat times,
what it is and which versions run on it, and the fixture's launcher."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

from . import LAUNCHER, NODE_DIR, REPO, log

sys.path.insert(0, str(REPO / "tests" / "fixtures"))

from treestate import tree_state  # the path above


def pin(cpu: int | None):
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


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
    tree = tree_state()
    return {
        "hiredlock": pyver("hiredlock"),
        "git_commit": tree["git_commit"],
        "git_modified": tree["git_modified"],
        "redis": m.group(1) if m else redis,
        "hiredis": cmd_out(["pkg-config", "--modversion", "hiredis"]),
        "cc": cmd_out(["cc", "--version"]),
        "python": platform.python_version(),
        "lua5.1": " ".join(cmd_out(["lua5.1", "-v"]).split()[:2]),
        "luajit": " ".join(cmd_out(["luajit", "-v"]).split()[:2]),
        "lua5.4": " ".join(cmd_out(["lua5.4", "-v"]).split()[:2]),
        "node": cmd_out(["node", "--version"]),
        "redis-py": pyver("redis"),
        "hiredis-py": pyver("hiredis"),
        "pottery": pyver("pottery"),
        "python-redis-lock": pyver("python-redis-lock"),
        "node-redlock": npmver("redlock"),
        "ioredis": npmver("ioredis"),
        "lua-redis": cmd_out(["dpkg-query", "-W", "-f", "${Version}", "lua-redis"]),
    }
