"""hrlrel: the reliability harness of hiredlock (tests/reliability).

fixture  the shared Redis launcher (tests/fixtures/redis-fixture), driven
proxy    our delay / blackhole / refuse TCP proxy (no netem here)
workload the Python and Lua worker processes and their logs
inject   the fault injector
checker  reads the logs and the final state, reports the figures
cases    the cases of docs/RELIABILITY.md
report   writes docs/RELIABILITY.md from the result files
"""

import os
import time

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
)
HERE = os.path.join(ROOT, "tests", "reliability")
# The harness's directory: its runs and results, and links to what CMake,
# pip and luarocks built (tests/reliability/build.sh).
BUILD = os.path.join(ROOT, "build", "reliability")
# Where the installers put the Python package and the Lua rock trees.
PYTHON_BUILD = os.path.join(ROOT, "build", "python")
LUA_TREES = os.path.join(ROOT, "build", "lua")


def now_ns() -> int:
    """CLOCK_MONOTONIC, as every worker logs it (comparable across
    processes on this machine)."""
    return time.monotonic_ns()
