#!/usr/bin/env bash
# Runs every test suite in scripts/suites/ (in file-name order), carrying on
# after a failure, then prints each suite's summary line and exits non-zero
# when any suite failed.
#   scripts/run-tests.sh [name...]     e.g. scripts/run-tests.sh c c-asan
# A suite file defines suite_run (run from the repository root) and
# suite_summary, a regex for the line that sums it up; it may use the
# functions of scripts/lib.sh (quiet, use_python_build, ...).
# Every file the suites write goes under build/ (the logs to build/logs/),
# or into temp dirs they remove: the checkout itself is left as it was.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
logs=build/logs
mkdir -p "$logs"
# No byte-code caches of the tests' modules (__pycache__ under tests/).
# Not PYTHONPYCACHEPREFIX=build/...: Python then ignores the standard
# library's own caches too, and where PYTHONDONTWRITEBYTECODE is set as well
# every process compiles it anew (the reliability cases took a third longer).
export PYTHONDONTWRITEBYTECODE=1

failed=0
summaries=()
for file in scripts/suites/*.sh; do
  name=$(basename "$file" .sh)
  name=${name#[0-9][0-9]-}
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
    continue
  fi
  echo
  echo "=============== suite: $name ==============="
  start=$(date +%s)
  (
    # shellcheck source=/dev/null
    source "$file"
    suite_run
  ) 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  took=$(($(date +%s) - start))
  pattern=$(
    # shellcheck source=/dev/null
    source "$file"
    echo "$suite_summary"
  )
  line=$(grep -E "$pattern" "$logs/$name.log" | tail -n 1)
  [ -n "$line" ] || line="(no summary line: the suite did not get to run)"
  if [ "$rc" -eq 0 ]; then
    summaries+=("PASS  $name (${took}s): $line")
  else
    summaries+=("FAIL  $name (${took}s): $line")
    failed=1
  fi
done
echo
echo "=============== summary ==============="
if [ ${#summaries[@]} -eq 0 ]; then
  echo "no suite matched: $*"
  exit 2
fi
printf '%s\n' "${summaries[@]}"
exit $failed
