#!/usr/bin/env bash
# Builds the core and its C tests against hiredis 1.x, next to Debian's 0.14.
# hiredis 1.x is taken from the hiredis-py sdist on PyPI (which vendors the
# C library), compiled into build/hiredis1/prefix with a pkg-config file, and
# found through PKG_CONFIG_PATH exactly as a system install would be.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
version=3.0.0 # hiredis-py 3.0.0 vendors hiredis 1.2.0
root=build/hiredis1
prefix=$PWD/$root/prefix
if [ ! -f "$prefix/lib/libhiredis.a" ]; then
  mkdir -p "$root/src" "$prefix/lib/pkgconfig" "$prefix/include/hiredis"
  python3 -m pip download --quiet --no-binary :all: --no-deps \
    --dest "$root/src" "hiredis==$version"
  tar -xzf "$root/src/hiredis-$version.tar.gz" -C "$root/src"
  src=$root/src/hiredis-$version/vendor/hiredis
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
fi
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
echo "hiredis-compat: building against hiredis $(pkg-config --modversion hiredis)"
quiet cmake -S . -B "$root/build" -DCMAKE_BUILD_TYPE=Debug -DHRL_BENCH=OFF
quiet cmake --build "$root/build" -j"$(nproc)"
ctest --test-dir "$root/build" --output-on-failure
