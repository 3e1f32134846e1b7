#!/usr/bin/env bash
# Builds the core and its C tests against hiredis 1.x, next to Debian's 0.14.
# hiredis 1.x is the copy the packages bundle, vendor/hiredis/ (taken from
# the hiredis-py sdist on PyPI by scripts/vendor-hiredis.sh, pinned by its
# checksum), compiled into build/hiredis1/prefix with a pkg-config file, and
# found through PKG_CONFIG_PATH exactly as a system install would be; then
# runs the C tests there.
#   scripts/hiredis1-compat.sh [--build-only]
# The build holds the lock build/locks/hiredis1.lock (the prebuild suite
# builds it too); --build-only stops before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
root=build/hiredis1
prefix=$PWD/$root/prefix
src=vendor/hiredis
build_only=0
[ "${1:-}" = --build-only ] && build_only=1
mkdir -p build/locks
exec 9>build/locks/hiredis1.lock
flock_9
scripts/vendor-hiredis.sh --check
if ! fresh "$root/stamp" "$(fingerprint "$src")" ||
  [ ! -f "$prefix/lib/libhiredis.a" ]; then
  rm -rf "$root"
  mkdir -p "$root/src" "$prefix/lib/pkgconfig" "$prefix/include/hiredis"
  objs=()
  for f in alloc async hiredis net read sds sockcompat; do
    cc -O2 -fPIC -std=c99 -c "$src/$f.c" -o "$root/src/$f.o"
    objs+=("$root/src/$f.o")
  done
  ar rcs "$prefix/lib/libhiredis.a" "${objs[@]}"
  cp "$src"/*.h "$prefix/include/hiredis/"
  hv=$(sed -n 's/^#define HIREDIS_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' \
    "$src/hiredis.h" | paste -sd.)
  cat >"$prefix/lib/pkgconfig/hiredis.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib
Name: hiredis
Description: hiredis $hv built for the compatibility check
Version: $hv
Libs: -L\${libdir} -lhiredis
Cflags: -I\${includedir}/hiredis -I\${includedir} -D_FILE_OFFSET_BITS=64
PC
  fingerprint "$src" >"$root/stamp"
fi
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
echo "hiredis-compat: building against hiredis $(pkg-config --modversion hiredis)"
quiet cmake -S . -B "$root/build" -DCMAKE_BUILD_TYPE=Debug -DHRL_BENCH=OFF
quiet cmake --build "$root/build" -j"$(nproc)"
exec 9>&- # built: the lock is released before the tests
[ $build_only -eq 0 ] || exit 0
ctest --test-dir "$root/build" --output-on-failure -j"$(ctest_jobs)"
