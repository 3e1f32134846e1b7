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

from hrlrel import BUILD, HERE
from hrlrel.badenv import bad_env
from hrlrel.workers import runtime_env

COMMANDS = {
    "c": lambda out: [os.path.join(BUILD, "c", "bad_inputs"), out],
    "python": lambda out: [sys.executable, os.path.join(HERE, "bad_inputs.py"), out],
    "lua5.1": lambda out: ["lua5.1", os.path.join(HERE, "lua", "bad_inputs.lua"), out],
    "luajit": lambda out: ["luajit", os.path.join(HERE, "lua", "bad_inputs.lua"), out],
    "lua5.4": lambda out: ["lua5.4", os.path.join(HERE, "lua", "bad_inputs.lua"), out],
}


RUNTIMES = "c,python,lua5.1,luajit,lua5.4"


def run_bad(out_dir: str, runtimes: str = RUNTIMES) -> tuple[bool, str]:
    """Runs the tables; returns (all as expected, summary text)."""
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
