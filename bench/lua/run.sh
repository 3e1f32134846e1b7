#!/usr/bin/env bash
# Lua cycle rates under lua5.1, LuaJIT and lua5.4 beside the raw C loop, the
# C library and Debian's lua-redis: the Lua cases of the one benchmark
# harness (bench/harness.py), main phase only, everything pinned to one CPU.
#   bench/lua/run.sh [seconds per case, default 0.25] [repetitions, default 21]
#   CPU=0 bench/lua/run.sh          pin to CPU 0 (default: the last CPU)
# Prints the table; the full results go to build/bench/lua.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
cases=c-n1,c-n5
for interp in lua5.1 luajit lua5.4; do
  cases+=",$interp-n1,$interp-n5,$interp-core-n1,$interp-core-reuse"
  cases+=",$interp-lua-redis"
done
exec bench/run.sh --phases main --cases "$cases" --seconds "${1:-0.25}" \
  --reps "${2:-21}" ${CPU:+--cpu "$CPU"} --json build/bench/lua.json \
  --no-report --wait-quiet 0
