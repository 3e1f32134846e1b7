# Reliability under load, faults and bad input (tests/reliability): the short
# version of every case (a few minutes), and the bad-input tables of C,
# Python and Lua, on what CMake, pip and luarocks built (build.sh); runs and
# results in build/reliability/. `scripts/reliability.sh` runs the full cases
# and writes docs/RELIABILITY.md.
suite_summary='^reliability: [0-9]+ of [0-9]+ cases'
suite_seconds=270 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  tests/reliability/build.sh &&
    python3 tests/reliability/run.py --bad --out build/reliability/results-short
}
