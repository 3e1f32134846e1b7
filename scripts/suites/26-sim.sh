# The deterministic simulation of the protocol (tests/sim): the regression
# scenarios, a fixed slice of 10^4 seeds, and every seeded mutant caught
# within its bound of seeds; a mutant marked without a bound (a rare
# schedule, tests/sim/MODEL.md; none today) is hunted for 4000 seeds here,
# 20000 in `make sim`
# (which runs 10^6 seeds and writes the figures docs/RELIABILITY.md cites).
suite_summary='^sim suite: '
# It only computes (no Redis, no deadline): nice, beside the suites that
# wait on timers. build/ is shared with c, interop, reliability and docs:
# build_main takes its lock.
suite_nice=1
suite_seconds=96 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  build_main hrl-sim hrl-sim-mutants &&
    tests/sim/suite.sh build/tests/sim "${SIM_SEEDS:-1-10000}" \
      "${SIM_MUTANT_SEEDS:-20000,4000}"
}
