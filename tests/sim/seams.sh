#!/bin/sh
# The protocol reads no clock and no entropy of its own: the simulator can
# only stand in for what it reads through the seams (tests/sim/seam.c).
# Given the protocol's object files as the simulator builds them (all of
# core/src/proto but clock.c), fails when they call a clock,
# an entropy source or a file of the system, or need a function of the
# core's that is not one of the seams.
set -u
defined=$(nm --defined-only "$@" | awk 'NF == 3 { print $3 }' | sort -u)
undefined=$(nm -u "$@" | awk 'NF == 2 { print $2 }' | sed 's/@.*//' | sort -u |
  grep -Fvx "$defined")
bad=$(printf '%s\n' "$undefined" | grep -Ex \
  'clock_gettime|clock_getres|clock|gettimeofday|time|timespec_get|ftime|getrandom|getentropy|arc4random.*|rand|rand_r|random|srand|srandom|drand48|lrand48|open|open64|openat|openat64|fopen|fopen64|read|syscall')
seams=$(printf '%s\n' "$undefined" | grep -E '^hrl_' | tr '\n' ' ')
unknown=$(printf '%s\n' "$undefined" | grep -E '^hrl_' |
  grep -Evx 'hrl_wall_us|hrl_sim_mutant')
if [ -n "$bad" ] || [ -n "$unknown" ]; then
  echo "seams: the protocol reads the world itself: ${bad} ${unknown}"
  exit 1
fi
echo "seams: the protocol's outside reads are ${seams}and getpid, as the simulator answers them"
