"""The benchmark's workers: the shared per-runtime programs of tests/workers,
each a long-lived process pinned to the benchmark's CPU, with the library
the benchmark installed (the package, bench/run.sh's copy of the rock)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from . import C_WORKER, INTERPS, NODE_DIR, REPO, log
from .machine import pin

sys.path.insert(0, str(REPO / "tests" / "workers"))

import driver  # tests/workers, the path above

# The benchmark's worker kinds: the runtimes, "ab", the C worker built
# on another revision's core (--ab), and "abpy", the Python worker on
# another build of the package (--ab-python: make dist's wheel). A kind
# "RUNTIME@VARIANT" is that runtime's worker on the variant's masters
# (Workers.variants: "tls", the same servers' TLS ports; "cluster", a Redis
# Cluster as one master).
RUNTIME = {"c": "c", "ab": "c", "py": "python", "abpy": "python", "node": "node"}
AB_WORKER: list[str] = []
AB_PYTHON: list[str] = []


def lua_env(abi: str) -> dict:
    # bench/run.sh's copy of the rock in build/lua/<abi>
    tree = REPO / "build" / "bench" / "lua" / abi
    lpath = f"{tree}/share/lua/{abi}/?.lua;{tree}/share/lua/{abi}/?/init.lua;;"
    cpath = f"{tree}/lib/lua/{abi}/?.so;;"
    env = dict(os.environ)
    env.update(LUA_PATH=lpath, LUA_CPATH=cpath, LUA_PATH_5_4=lpath, LUA_CPATH_5_4=cpath)
    return env


def node_env() -> dict:
    # the worker lives in tests/workers/node, its packages under build/
    return dict(os.environ, NODE_PATH=str(NODE_DIR / "node_modules"))


def env_of(kind: str) -> dict | None:
    if kind in INTERPS:
        return lua_env(INTERPS[kind])
    if kind == "abpy":  # the other build alone, not build/python
        return dict(os.environ, PYTHONPATH=AB_PYTHON[0])
    return node_env() if kind == "node" else None


class Worker(driver.Worker):
    """A benchmark worker of one kind (c, ab, py, node or a Lua
    interpreter), optionally under a wrapper (valgrind, strace)."""

    def __init__(
        self, kind: str, urls: list[str], cpu: int | None, wrap: list[str] | None = None
    ) -> None:
        base = kind.split("@", 1)[0]
        runtime = RUNTIME.get(base, base)
        c_worker = AB_WORKER[0] if kind == "ab" else C_WORKER
        super().__init__(
            (wrap or []) + driver.argv(runtime, urls, str(c_worker)),
            runtime=kind,
            env=env_of(base),
            cwd=REPO,
            preexec_fn=pin(cpu),
        )
        self.kind = kind

    def rss_kb(self) -> int:
        text = Path(f"/proc/{self.pid}/status").read_text()
        return int(re.search(r"^VmRSS:\s+(\d+) kB", text, re.M).group(1))


def start_worker(kind: str, urls: list[str], cpu: int | None) -> Worker:
    return Worker(kind, urls, cpu)


command = driver.command


class Workers(dict):
    """The long-lived workers, each started on first use; a kind
    "RUNTIME@VARIANT" on the masters variants[VARIANT]."""

    def __init__(
        self,
        urls: list[str],
        cpu: int | None,
        variants: dict[str, list[str]] | None = None,
    ) -> None:
        super().__init__()
        self.urls, self.cpu = urls, cpu
        self.variants = variants or {}

    def __missing__(self, kind: str) -> Worker:
        log(f"starting the {kind} worker")
        variant = kind.split("@", 1)[1] if "@" in kind else None
        urls = self.variants[variant] if variant else self.urls
        self[kind] = Worker(kind, urls, cpu=self.cpu)
        return self[kind]

    def close(self) -> None:
        for w in self.values():
            w.close()
