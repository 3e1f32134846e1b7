#!/usr/bin/env bash
# Runs every test suite in scripts/suites/, carrying on after a failure, then
# prints each suite's summary line (in file-name order), then, for each
# suite that failed, the tests that failed (failures_of), and exits non-zero
# when any suite failed.
#   scripts/run-tests.sh [-j JOBS] [name...]   e.g. scripts/run-tests.sh c c-asan
# Suites run side by side, JOBS at a time (HRL_TEST_JOBS, default: the CPUs
# plus one; most suites spend their time waiting on Redis, timers and
# processes, not on a CPU), the alone ones (below) first, then the longest
# first (the seconds each took last time, build/logs/NAME.seconds, else its
# suite_seconds). They share nothing
# but what the build scripts make under build/, and those take a lock
# (scripts/lib.sh: locked) while they build it; every Redis comes from
# tests/fixtures/redis-fixture on ports and directories of its own. Each
# suite's output goes to build/logs/NAME.log and is printed whole when the
# suite ends, never interleaved with another's. With -j 1 the suites run one
# after the other in file-name order, their output shown as it comes.
# A suite file defines suite_run (run from the repository root) and
# suite_summary, a regex for the line that sums it up, and may set
# suite_seconds (how long it takes on 2 CPUs) and suite_nice=1: a suite that
# only computes (no Redis, no deadline a slow CPU could miss) runs at nice
# 19, on the CPU time the suites waiting on timers leave; suite_alone=1: a
# suite whose every process needs a CPU to meet its deadlines (valgrind)
# runs beside nice suites only; it may use the functions of scripts/lib.sh
# (quiet, locked, use_python_build, ...).
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

jobs=${HRL_TEST_JOBS:-$(($(nproc) + 1))}
if [ "${1:-}" = -j ]; then
  jobs=${2:?usage: scripts/run-tests.sh [-j JOBS] [name...]}
  shift 2
fi
[[ $jobs =~ ^[1-9][0-9]*$ ]] || {
  echo "run-tests.sh: JOBS must be a positive number, not '$jobs'" >&2
  exit 2
}

# The suites asked for, in file-name order: names[i] from files[i].
names=()
files=()
for file in scripts/suites/*.sh; do
  name=$(basename "$file" .sh)
  name=${name#[0-9][0-9]-}
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
    continue
  fi
  names+=("$name")
  files+=("$file")
done
if [ ${#names[@]} -eq 0 ]; then
  echo "no suite matched: $*"
  exit 2
fi

# suite_var FILE VAR: the value the suite file FILE gives VAR.
suite_var() {
  (
    # shellcheck source=/dev/null
    source "$1"
    echo "${!2:-}"
  )
}

# How long suite i is expected to take: its last run's figure, else its own.
expected_seconds() {
  local last=$logs/${names[$1]}.seconds s
  if [ -f "$last" ] && s=$(cat "$last") && [[ $s =~ ^[0-9]+$ ]]; then
    echo "$s"
  else
    s=$(suite_var "${files[$1]}" suite_seconds)
    echo "${s:-60}"
  fi
}

# The summary of suite i: PASS/FAIL, its time and its summary line, read
# from its log when it ends (kept: another run may write the log later).
rcs=()
tooks=()
summaries=()
summary_of() {
  local i=$1 pattern line verdict=PASS
  pattern=$(suite_var "${files[$i]}" suite_summary)
  line=$(grep -E "$pattern" "$logs/${names[$i]}.log" | tail -n 1)
  [ -n "$line" ] || line="(no summary line: the suite did not get to run)"
  [ "${rcs[$i]}" -eq 0 ] || verdict=FAIL
  echo "$verdict  ${names[$i]} (${tooks[$i]}s): $line"
}

# The failures of suite i, short: what a CI's tail of the output must show
# to say which test failed without the whole log. busted: each Failure /
# Error block's head, the test's name and the first line of its message
# (file:line: message); pytest: its short summary's FAILED / ERROR lines;
# ctest: its list of the tests that failed, after the tests/c cases that
# failed and their CHECK lines (tests/c/check.h); from a log with none of these
# (a build error, a suite of another kind), its last 15 lines. At most 40
# lines: the rest is in the log.
failures_of() {
  local log=$logs/${names[$1]}.log lines count cap=40
  lines=$(sed 's/\x1b\[[0-9;]*m//g' "$log" 2>/dev/null | awk '
    taken > 0 { print "    " $0; taken--; next }
    /^(Failure|Error) (→|->) / { print; taken = 2; next }
    /^(FAILED|ERROR) [^ ]*\.py/ { print; next }
    / FAILED \([0-9]+ ms\)$/ || /: CHECK failed: / { print; next }
    /^The following tests FAILED:/ { print; listing = 1; next }
    listing && /^[ \t]/ { print; next }
    { listing = 0 }')
  if [ -z "$lines" ]; then
    echo "  (no failed test named in the log; its last 15 lines:)"
    lines=$(tail -n 15 "$log" 2>/dev/null)
  fi
  count=$(printf '%s\n' "$lines" | wc -l)
  printf '%s\n' "$lines" | head -n "$cap"
  if [ "$count" -gt "$cap" ]; then
    echo "  ... $((count - cap)) more lines"
  fi
}

run_suite() {
  # shellcheck source=/dev/null
  source "$1"
  if [ "${suite_nice:-0}" = 1 ]; then
    renice -n 19 -p "$BASHPID" >/dev/null
  fi
  suite_run
}

t0=$(date +%s)
stamp() {
  local s=$(($(date +%s) - t0))
  printf '[%02d:%02d]' $((s / 60)) $((s % 60))
}

if [ "$jobs" -eq 1 ]; then
  for i in "${!names[@]}"; do
    echo
    echo "=============== suite: ${names[$i]} ==============="
    start=$(date +%s)
    (run_suite "${files[$i]}") 2>&1 | tee "$logs/${names[$i]}.log"
    rcs[i]=${PIPESTATUS[0]}
    tooks[i]=$(($(date +%s) - start))
    echo "${tooks[$i]}" >"$logs/${names[$i]}.seconds"
    summaries[i]=$(summary_of "$i")
  done
else
  # Longest first: the last suite to start is a short one; but an alone
  # suite before all: it runs beside nice suites only, so started first it
  # runs while they do (and the prebuild suite fills the CPU it leaves),
  # while started later it would wait for every other suite to end and run
  # at the tail, with slots idle (its figure from a last run, shorter than
  # python's, put it there).
  mapfile -t order < <(for i in "${!names[@]}"; do
    alone=$(suite_var "${files[$i]}" suite_alone)
    echo "$([ "$alone" = 1 ] && echo 0 || echo 1) $(expected_seconds "$i") $i"
  done | sort -k1,1n -k2,2nr -k3,3n | cut -d' ' -f3)
  echo "run-tests.sh: ${#names[@]} suites, $jobs at a time" \
    "(load average $(cut -d' ' -f1-3 /proc/loadavg))"
  # Every suite in a process group of its own (job control), so that an
  # interrupt stops each one whole, Redis fixtures and all.
  set -m
  declare -A running=() # pid -> suite index
  slot_pid=()            # slot -> pid of the suite running in it
  port_span=$((12768 / jobs))
  starts=()
  stop_all() {
    local pid
    for pid in "${!running[@]}"; do
      kill -TERM -- "-$pid" 2>/dev/null
    done
    wait
    echo "run-tests.sh: interrupted" >&2
    exit 130
  }
  trap stop_all INT TERM
  nices=()
  alones=()
  for i in "${!names[@]}"; do
    nices[i]=$(suite_var "${files[$i]}" suite_nice)
    alones[i]=$(suite_var "${files[$i]}" suite_alone)
  done
  # Whether suite i may start beside the running ones: an alone suite only
  # beside nice ones, and beside an alone suite only nice ones.
  may_start() {
    local pid r
    for pid in "${!running[@]}"; do
      r=${running[$pid]}
      if [ "${alones[$1]}" = 1 ] && [ "${nices[$r]}" != 1 ]; then
        return 1
      fi
      if [ "${alones[$r]}" = 1 ] && [ "${nices[$1]}" != 1 ]; then
        return 1
      fi
    done
  }
  pending=("${order[@]}")
  while [ ${#pending[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
    # The first pending suites (longest first) that may start, while a
    # slot is free.
    for k in "${!pending[@]}"; do
      [ ${#running[@]} -lt "$jobs" ] || break
      i=${pending[$k]}
      may_start "$i" || continue
      unset "pending[$k]"
      starts[i]=$(date +%s)
      # A slot of its own, and with it a part of the fixture's port range
      # of its own (see tests/fixtures/redis-fixture).
      for ((slot = 0; slot < jobs; slot++)); do
        [ -z "${slot_pid[$slot]:-}" ] && break
      done
      (
        export HRL_FIXTURE_PORT_MIN=$((20000 + slot * port_span))
        export HRL_FIXTURE_PORT_SPAN=$port_span
        run_suite "${files[$i]}"
      ) </dev/null >"$logs/${names[$i]}.log" 2>&1 &
      running[$!]=$i
      slot_pid[slot]=$!
      echo "$(stamp) started ${names[$i]}"
    done
    pending=("${pending[@]}")
    done_pid=
    wait -n -p done_pid
    rc=$?
    [ -n "$done_pid" ] || continue
    i=${running[$done_pid]}
    unset "running[$done_pid]"
    for slot in "${!slot_pid[@]}"; do
      [ "${slot_pid[$slot]}" = "$done_pid" ] && slot_pid[slot]=
    done
    rcs[i]=$rc
    tooks[i]=$(($(date +%s) - starts[i]))
    echo "${tooks[$i]}" >"$logs/${names[$i]}.seconds"
    echo
    echo "=============== suite: ${names[$i]} (${tooks[$i]}s) ==============="
    cat "$logs/${names[$i]}.log"
    summaries[i]=$(summary_of "$i")
    echo "$(stamp) ${summaries[$i]}"
  done
  set +m
  trap - INT TERM
fi

echo
echo "=============== summary ==============="
failed=0
for i in "${!names[@]}"; do
  echo "${summaries[$i]}"
  [ "${rcs[$i]}" -eq 0 ] || failed=1
done
echo "took $(($(date +%s) - t0))s, ${jobs} at a time" \
  "(load average $(cut -d' ' -f1-3 /proc/loadavg))"
# After the summary, last: a CI that shows only the tail of the output
# shows which tests failed.
for i in "${!names[@]}"; do
  [ "${rcs[$i]}" -ne 0 ] || continue
  echo
  echo "=============== failed in ${names[$i]} ($logs/${names[$i]}.log) ==============="
  failures_of "$i"
done
exit $failed
