# A short libFuzzer run of each target (`make fuzz` runs 10^6 each).
suite_summary='^fuzz: [0-9]+ of [0-9]+ targets clean'
suite_seconds=150 # s, 3 at a time on 2 CPUs: the longest start first
suite_nice=1 # computes only: on the CPU time the other suites leave
suite_run() {
  FUZZ_RUNS=${FUZZ_RUNS:-200000} scripts/fuzz.sh
}
