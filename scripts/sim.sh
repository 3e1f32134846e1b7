#!/usr/bin/env bash
# `make sim`: 10^6 seeded worlds of tests/sim against the protocol as
# shipped, the regression scenarios and every seeded mutant; the figures go
# to tests/reliability/results/sim.json (with the commit measured) and
# docs/RELIABILITY.md is generated again (tests/reliability/report.py).
#   scripts/sim.sh [--seeds A-B] [--allow-dirty]
# Refused on a tree with uncommitted changes (the figures are committed as
# those of a commit) unless --allow-dirty.
set -uo pipefail
cd "$(dirname "$0")/.."
seeds=1-1000000
dirty=()
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --allow-dirty) dirty=(--allow-dirty); shift ;;
    *) echo "usage: scripts/sim.sh [--seeds A-B] [--allow-dirty]" >&2; exit 2 ;;
  esac
done
python3 -c 'import sys; sys.path.insert(0, "tests/fixtures")
from treestate import refuse_dirty, tree_state
refuse_dirty("sim", tree_state(), "--allow-dirty" in sys.argv)' \
  "${dirty[@]}" || exit 1
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
  cmake --build build -j"$(nproc)" --target hrl-sim hrl-sim-mutants >/dev/null ||
  exit 1
results=tests/reliability/results
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
rc=0
tests/sim/suite.sh build/tests/sim "$seeds" 20000 "$tmp" || rc=1
python3 - "$tmp" "$results/sim.json" <<'PY' || rc=1
import datetime, json, os, platform, sys
sys.path.insert(0, "tests/fixtures")
from treestate import tree_state
with open(sys.argv[1]) as f:
    res = json.load(f)
res.update(tree_state())
res["finished"] = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
res["machine"] = f"{platform.node()} ({platform.system()} {platform.release()}, {os.cpu_count()} CPUs)"
res["load_average"] = round(os.getloadavg()[0], 1)
with open(sys.argv[2], "w") as f:
    json.dump(res, f, indent=2)
    f.write("\n")
PY
python3 tests/reliability/report.py "$results" docs/RELIABILITY.md || rc=1
exit $rc
