#!/usr/bin/env python3
"""Runs tests/reliability/run.py (same arguments) with its build directory,
hrlrel.BUILD, at build/reliability/ instead of build-reliability/, so that
the reliability suite writes under build/ only.

A bridge: the harness still names build-reliability/ itself. Once
hrlrel.BUILD is build/reliability (and run.py's sys.path entry
build/reliability/py), callers run tests/reliability/run.py directly and
this file goes.

    scripts/reliability-run.py [run.py arguments]
"""

import os
import runpy
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "tests", "reliability")
BUILD = os.path.join(ROOT, "build", "reliability")

sys.path.insert(0, os.path.join(BUILD, "py"))
sys.path.insert(0, HARNESS)
import hrlrel  # noqa: E402  (the harness, from the path above)

# Read by the harness's modules when they are first imported, below.
hrlrel.BUILD = BUILD
sys.argv[0] = os.path.join(HARNESS, "run.py")
runpy.run_path(sys.argv[0], run_name="__main__")
