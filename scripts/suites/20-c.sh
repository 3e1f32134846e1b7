# The C tests: unit tests without Redis, then real Redis from the fixtures.
suite_summary='tests passed, [0-9]+ tests? failed out of'
suite_run() {
  quiet cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
    quiet cmake --build build -j"$(nproc)" &&
    ctest --test-dir build --output-on-failure
}
