# The shared Redis launcher itself: start, faults, restarts, cleanup.
suite_summary='^fixture selftest: '
suite_run() {
  bash tests/fixtures/selftest.sh
}
