# The installed library is usable as the README says: the header and
# hiredlock.pc land in the prefix, and the quick start builds with
# `pkg-config --cflags --libs hiredlock` (shared and --static) and runs.
suite_summary='^c-install: '
suite_seconds=5 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  local prefix=$PWD/build/install/prefix
  rm -rf build/install
  quiet cmake -S . -B build/install/build -DCMAKE_BUILD_TYPE=Release \
    -DHRL_TESTS=OFF -DHRL_BENCH=OFF "-DCMAKE_INSTALL_PREFIX=$prefix" &&
    quiet cmake --build build/install/build -j"$(nproc)" &&
    quiet cmake --install build/install/build || return 1
  local pc
  pc=$(dirname "$(find "$prefix" -name hiredlock.pc)")
  export PKG_CONFIG_PATH=$pc
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Wextra -Werror -o build/install/qs-shared \
    examples/quickstart.c $(pkg-config --cflags --libs hiredlock) \
    -Wl,-rpath,"$(pkg-config --variable=libdir hiredlock)" || return 1
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Wextra -Werror -o build/install/qs-static \
    examples/quickstart.c $(pkg-config --cflags hiredlock) \
    "$(pkg-config --variable=libdir hiredlock)/libhiredlock.a" \
    $(pkg-config --static --libs-only-l hiredlock | sed 's/-lhiredlock//') ||
    return 1
  local passed=0
  for bin in qs-shared qs-static; do
    # shellcheck disable=SC2016
    if tests/fixtures/redis-fixture run -n 3 -- sh -c \
      'IFS=,; exec "$0" $HRL_FIXTURE_URLS' "build/install/$bin"; then
      passed=$((passed + 1))
    fi
  done
  echo "c-install: $passed of 2 quick start builds ran against 3 masters"
  [ "$passed" -eq 2 ]
}
