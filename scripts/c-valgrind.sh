#!/usr/bin/env bash
# The C tests under valgrind memcheck, in build/valgrind: any error or leak
# (but "still reachable") fails the test. The ctest arguments pass through:
# the c-valgrind suite (make test) runs all but the stress tests (-LE
# stress), scripts/reliability.sh (make reliability) those (-L stress); the
# c and c-asan suites run every test.
#   scripts/c-valgrind.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
vg="valgrind;-q;--error-exitcode=99;--leak-check=full"
vg+=";--errors-for-leak-kinds=definite,indirect,possible"
vg+=";--show-leak-kinds=definite,indirect,possible"
quiet cmake -S . -B build/valgrind -DCMAKE_BUILD_TYPE=Debug -DHRL_BENCH=OFF \
  "-DHRL_TEST_WRAPPER=$vg"
quiet cmake --build build/valgrind -j"$(nproc)"
# One test at a time: under valgrind a test keeps a CPU busy and its
# deadlines (connect 100 ms, replies 50 ms by default) slip when two do.
ctest --test-dir build/valgrind --output-on-failure "$@"
