# The C tests under AddressSanitizer and UndefinedBehaviorSanitizer.
suite_summary='tests passed, [0-9]+ tests? failed out of'
suite_seconds=130 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  build_asan &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build/asan --output-on-failure -j"$(ctest_jobs)"
}
