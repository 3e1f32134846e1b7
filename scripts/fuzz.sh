#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a number of
# executions (default 1,000,000; FUZZ_RUNS overrides), starting from the
# seed corpus in fuzz/corpus and keeping what it finds in build/fuzz/corpus.
# Crashes, leaks (LeakSanitizer) and timeouts fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${FUZZ_RUNS:-1000000}
cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cc" ]; then
  echo "fuzz: clang is missing (scripts/install-deps.sh fuzz)" >&2
  exit 1
fi
out=$(CC=$cc cmake -S . -B build/fuzz -DHRL_FUZZ=ON -DHRL_TESTS=OFF \
  -DHRL_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo 2>&1 &&
  cmake --build build/fuzz -j"$(nproc)" 2>&1) || {
  echo "$out"
  exit 1
}
failed=0
results=()
for target in parser url protocol handshake subscriber; do
  mkdir -p "build/fuzz/corpus/$target" "build/fuzz/artifacts/$target"
  log=build/fuzz/$target.log
  if "build/fuzz/fuzz/fuzz_$target" -runs="$runs" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="build/fuzz/artifacts/$target/" \
    "build/fuzz/corpus/$target" "fuzz/corpus/$target" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    results+=("$target: $execs executions, 0 crashes")
  else
    failed=1
    tail -n 30 "$log"
    results+=("$target: FAILED (see $log and build/fuzz/artifacts/$target)")
  fi
done
printf 'fuzz: %s\n' "${results[@]}"
echo "fuzz: $((${#results[@]} - failed)) of ${#results[@]} targets clean at $runs runs each"
exit $failed
