# The C tests: unit tests without Redis, then real Redis from the fixtures.
suite_summary='tests passed, [0-9]+ tests? failed out of'
suite_seconds=130 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  build_main &&
    ctest --test-dir build --output-on-failure -j"$(ctest_jobs)"
}
