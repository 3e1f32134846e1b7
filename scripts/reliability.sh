#!/usr/bin/env bash
# The full reliability run (`make reliability`): the documented cases of
# tests/reliability (about 20 minutes on 2 CPUs), the bad-input tables of
# C, Python and Lua, the C stress tests under valgrind, and the fuzzers at
# 10^6 executions per target, the Python and Lua fences under faults at
# full length; the results go to tests/reliability/results/
# and docs/RELIABILITY.md is generated from them.
#   scripts/reliability.sh [--cases 1,2,...] [--no-fuzz] [--allow-dirty]
# Refused on a tree with uncommitted changes (the results are committed as
# those of a commit) unless --allow-dirty.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ under tests/
results=tests/reliability/results
cases=()
fuzz=1
dirty=()
while [ $# -gt 0 ]; do
  case $1 in
    --cases) cases=(--cases "$2"); shift 2 ;;
    --no-fuzz) fuzz=0; shift ;;
    --allow-dirty) dirty=(--allow-dirty); shift ;;
    *) echo "usage: scripts/reliability.sh [--cases 1,2,...] [--no-fuzz] [--allow-dirty]" >&2; exit 2 ;;
  esac
done
# Before anything is built: a full run on a dirty tree stops here.
python3 -c 'import sys; sys.path.insert(0, "tests/fixtures")
from treestate import refuse_dirty, tree_state
refuse_dirty("reliability", tree_state(), "--allow-dirty" in sys.argv)' \
  "${dirty[@]}" || exit 1
tests/reliability/build.sh || exit 1
mkdir -p "$results"
rc=0
python3 tests/reliability/run.py --full --bad --out "$results" "${cases[@]}" \
  "${dirty[@]}" || rc=1
# The C stress tests under valgrind (make test runs them in every other
# build, and the rest of the C tests under valgrind).
scripts/c-valgrind.sh -L stress || rc=1
# The fences under faults at full length, 3 x 700 grants, from Python and
# Lua 5.4 (make test's python and lua suites take 3 x 250:
# tests/python/test_fencing.py, tests/lua/12-fencing_spec.lua).
HRL_FENCE_GRANTS_EACH=700 tests/lua/run.sh lua5.4 --filter 'under faults' \
  tests/lua/12-fencing_spec.lua || rc=1
(
  source scripts/lib.sh
  quiet scripts/pip-install.sh pytest=pytest redis=redis \
    pytest_asyncio=pytest-asyncio uvloop=uvloop || exit 1
  use_python_build || exit 1
  root=$PWD
  run_dir=$(mktemp -d)
  (cd "$run_dir" && HRL_FENCE_GRANTS_EACH=700 python3 -m pytest \
    -p no:cacheprovider -q "$root/tests/python/test_fencing.py" -k under_faults)
  rc=$?
  rm -rf "$run_dir"
  exit $rc
) || rc=1
if [ $fuzz -eq 1 ]; then
  scripts/fuzz.sh || rc=1
  python3 tests/reliability/fuzz_figures.py build/fuzz "$results/fuzz.json" || rc=1
fi
python3 tests/reliability/report.py "$results" docs/RELIABILITY.md || rc=1
exit $rc
