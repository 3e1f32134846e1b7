# The shared Redis launcher itself: start, faults, restarts, cleanup.
suite_summary='^fixture selftest: '
suite_seconds=18 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  bash tests/fixtures/selftest.sh
}
