"""Runs the bad-input tables of C, Python and Lua against the servers of
hrlrel/badenv.py, and writes OUT_DIR/bad_inputs_<runtime>.json.

  python3 tests/reliability/run_bad.py [OUT_DIR] [--runtimes c,python,lua5.4]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hrlrel import BUILD, HERE, ROOT
from hrlrel.badenv import bad_env
from hrlrel.workers import runtime_env

# One table per runtime, each beside that runtime's own suite, which runs
# its rows that need no misbehaving server; here every row runs.
PYTHON_TESTS = os.path.join(ROOT, "tests", "python")
LUA_RUNNER = os.path.join(HERE, "lua", "run_bad_inputs.lua")
COMMANDS = {
    # tests/c/bad_inputs*.c, built by build.sh through c/bad_inputs.c
    "c": lambda out: [os.path.join(BUILD, "c", "bad_inputs"), out],
    # tests/python/bad_inputs (python3 -m bad_inputs, from tests/python)
    "python": lambda out: [sys.executable, "-m", "bad_inputs", out],
    # tests/lua/helpers/bad_inputs*.lua
    "lua5.1": lambda out: ["lua5.1", LUA_RUNNER, out],
    "luajit": lambda out: ["luajit", LUA_RUNNER, out],
    "lua5.4": lambda out: ["lua5.4", LUA_RUNNER, out],
}


RUNTIMES = "c,python,lua5.1,luajit,lua5.4"


def run_bad(out_dir: str, runtimes: str = RUNTIMES) -> tuple[bool, str]:
    """Runs the tables; returns (all as expected, summary text)."""
    out_dir = os.path.abspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    failed = 0
    counts = []
    with bad_env() as (env, busy):
        for rt in runtimes.split(","):
            out = os.path.join(out_dir, f"bad_inputs_{rt}.json")
            busy.start()
            try:
                env_rt = dict(env, HRL_LUA_INTERP=rt)
                rc = subprocess.run(
                    COMMANDS[rt](out),
                    env=runtime_env("python" if rt == "c" else rt, env_rt),
                    cwd=PYTHON_TESTS if rt == "python" else None,
                    timeout=300,
                ).returncode
            finally:
                busy.stop()
            try:
                with open(out) as f:
                    rows = json.load(f)["rows"]
                good = sum(r["as_expected"] for r in rows)
            except (OSError, ValueError):
                rows, good = [], 0
            counts.append(f"{rt} {good}/{len(rows)}")
            failed += rc != 0 or good != len(rows) or len(rows) < 40
    return not failed, (
        f"bad inputs: {', '.join(counts)} as expected"
        f"{'' if not failed else ' (FAILED)'}"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=os.path.join(BUILD, "results"))
    ap.add_argument("--runtimes", default=RUNTIMES)
    args = ap.parse_args()
    ok, line = run_bad(args.out, args.runtimes)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
