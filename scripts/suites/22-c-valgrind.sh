# The C tests under valgrind memcheck: any error or leak (but "still
# reachable") fails the test.
suite_summary='tests passed, [0-9]+ tests? failed out of'
suite_seconds=272 # alone on 2 CPUs: the longest suites start first
suite_run() {
  local vg="valgrind;-q;--error-exitcode=99;--leak-check=full"
  vg+=";--errors-for-leak-kinds=definite,indirect,possible"
  vg+=";--show-leak-kinds=definite,indirect,possible"
  quiet cmake -S . -B build/valgrind -DCMAKE_BUILD_TYPE=Debug -DHRL_BENCH=OFF \
    "-DHRL_TEST_WRAPPER=$vg" &&
    quiet cmake --build build/valgrind -j"$(nproc)" &&
    ctest --test-dir build/valgrind --output-on-failure
}
