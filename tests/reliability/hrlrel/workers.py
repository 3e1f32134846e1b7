"""The reliability cases' workers: the shared per-runtime programs of
tests/workers (one line protocol, tests/workers/README.md), run on what the
installers built (tests/reliability/build.sh): the Python package in
build/python, the Lua rock trees in build/lua/<abi>, and the C worker
(c/canceller under the harness's directory, a CMake target)."""

from __future__ import annotations

import os
import sys

from . import BUILD, LUA_TREES, PYTHON_BUILD, ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "workers"))

import driver  # tests/workers, the path above

C_WORKER = os.path.join(BUILD, "c", "canceller")
command = driver.command


def runtime_env(runtime: str, extra: dict | None = None) -> dict:
    """The environment a worker of runtime runs in (plus extra)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_BUILD
    if runtime in driver.LUA_ABI:
        abi = driver.LUA_ABI[runtime]
        tree = os.path.join(LUA_TREES, abi)
        lpath = ";".join(
            [
                os.path.join(tree, "share", "lua", abi, "?.lua"),
                os.path.join(tree, "share", "lua", abi, "?", "init.lua"),
                "",
            ]
        )
        cpath = os.path.join(tree, "lib", "lua", abi, "?.so") + ";;"
        env["LUA_PATH"] = env["LUA_PATH_5_4"] = lpath + ";"
        env["LUA_CPATH"] = env["LUA_CPATH_5_4"] = cpath
    env.update(extra or {})
    return env


def start(
    runtime: str,
    urls: list[str],
    *,
    env: dict | None = None,
    stdout=None,
    stderr=None,
    cwd: str | None = None,
) -> driver.Worker:
    """A worker of runtime ("python", "c", or a Lua interpreter) on urls;
    its answers are read here unless stdout is a file."""
    return driver.Worker(
        driver.argv(runtime, urls, C_WORKER),
        runtime=runtime,
        env=runtime_env(runtime, env),
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
    )
