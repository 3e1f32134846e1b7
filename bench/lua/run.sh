#!/usr/bin/env bash
# Lua acquire+release cycles/s under lua5.1, LuaJIT and lua5.4, next to the
# raw hiredis loop and the C library, on the same 5 local masters in the same
# run (see compare.lua), all on one CPU (CPU=n, default 0). Not a test: it
# prints figures.
#   bench/lua/run.sh [seconds per case, default 1] [repetitions, default 9]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target bench_cycle >/dev/null
for abi in 5.1 5.4; do
  luarocks --lua-version "$abi" --tree "build-lua/$abi" make \
    "$(echo hiredlock-*.rockspec)" >/dev/null
done
rm -f bindings/lua/*.o core/src/*.o hiredlock/core.so
rmdir hiredlock 2>/dev/null || true
exec tests/fixtures/redis-fixture run -n 5 -- \
  lua5.4 bench/lua/compare.lua "${1:-1}" "${2:-9}"
