#!/usr/bin/env bash
# Builds the C worker (tests/workers/c) against the core of another revision, for
# an A/B comparison of a core change in one run (same servers, same
# repetitions, paired ratios):
#   bench/ab-worker.sh REV             -> build/bench/ab/REV/hrl-worker
#   bench/run.sh --ab build/bench/ab/REV/hrl-worker [--cases ab-c-n1,...]
# adds the cases ab-c-n1, ab-c-n5, ab-c-new-n1 (that revision's core, this
# checkout's worker) beside c-n1, c-n5, c-new-n1. Same flags as the CMake
# RelWithDebInfo build: -O2 -g.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: bench/ab-worker.sh REV}
out=build/bench/ab/$rev
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git archive "$(git rev-parse --verify "$rev^{commit}")" core | tar -x -C "$src"
mkdir -p "$out"
# shellcheck disable=SC2046
cc -O2 -g -std=c11 -Wall -Wextra -Werror -fvisibility=hidden -DHRL_BUILDING \
  -I"$src/core/include" -I"$src/core/src" $(pkg-config --cflags hiredis) \
  tests/workers/c/*.c $(find "$src/core/src" -name '*.c') \
  -o "$out/hrl-worker" \
  $(pkg-config --libs hiredis openssl) -lpthread -lm
echo "$out/hrl-worker"
