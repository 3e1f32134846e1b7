#!/usr/bin/env python3
"""Runs tests/reliability/run.py (same arguments) so that it writes under
build/ only, and leaves no temp dir behind:

- its build directory, hrlrel.BUILD, is build/reliability/ rather than
  build-reliability/ (where tests/reliability/build.sh links what CMake, pip
  and luarocks built, and where the runs go);
- TMPDIR is a temp dir of its own, removed afterwards, since the harness
  leaves some of its temp dirs behind (hrlrel.badenv's hrlbad.*).

A bridge: once hrlrel.BUILD is build/reliability (and run.py's sys.path
entry build/reliability/py) and the harness removes its temp dirs, callers
run tests/reliability/run.py directly and this file goes.

    scripts/reliability-run.py [run.py arguments]
"""

import os
import runpy
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "tests", "reliability")
BUILD = os.path.join(ROOT, "build", "reliability")


def main() -> None:
    sys.path.insert(0, os.path.join(BUILD, "py"))
    sys.path.insert(0, HARNESS)
    import hrlrel  # the harness, from the path above

    # Read by the harness's modules when they are first imported, below.
    hrlrel.BUILD = BUILD
    with tempfile.TemporaryDirectory(prefix="hrlrel.") as tmp:
        os.environ["TMPDIR"] = tempfile.tempdir = tmp  # and its children's
        sys.argv[0] = os.path.join(HARNESS, "run.py")
        runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
