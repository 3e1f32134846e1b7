# The shared Redis launcher itself: start, faults, restarts, cleanup.
suite_summary='^fixture selftest: '
suite_seconds=18 # alone on 2 CPUs: the longest suites start first
suite_run() {
  bash tests/fixtures/selftest.sh
}
