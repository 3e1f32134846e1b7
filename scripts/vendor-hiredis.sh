#!/usr/bin/env bash
# The hiredis the sdist, the wheels and the source rock compile in when no
# system hiredis is used: vendor/hiredis/, the C library as the hiredis-py
# sdist on PyPI vendors it (hiredis-py 3.0.0: hiredis 1.2.0), pinned by the
# sdist's SHA-256 and committed, so a build needs no network.
#   scripts/vendor-hiredis.sh           fetch the pinned sdist, check its
#                                       checksum, (re)write vendor/hiredis/
#   scripts/vendor-hiredis.sh --check   offline: the committed files are the
#                                       ones vendor/hiredis/SHA256SUMS lists
# To move to another release: change version and sha256 below (the sha256
# PyPI lists for hiredis-V.tar.gz), run the script, build, test, commit.
set -euo pipefail
cd "$(dirname "$0")/.."
version=3.0.0 # hiredis-py 3.0.0 vendors hiredis 1.2.0
sha256=fed8581ae26345dea1f1e0d1a96e05041a727a45e7d8d459164583e23c6ac441
dest=vendor/hiredis
# What the blocking API and the reader need: async.c (and the dict.c it
# includes) too, for hiredis.c calls into it; not ssl.c (the core has its
# own TLS) nor the tests.
files="COPYING alloc.c alloc.h async.c async.h async_private.h dict.c dict.h
  fmacros.h hiredis.c hiredis.h net.c net.h read.c read.h sds.c sds.h
  sdsalloc.h sockcompat.c sockcompat.h win32.h"

if [ "${1:-}" = --check ]; then
  (cd "$dest" && sha256sum --quiet --strict -c SHA256SUMS) ||
    { echo "vendor-hiredis: $dest differs from its SHA256SUMS" >&2; exit 1; }
  listed=$(awk '{print $2}' "$dest/SHA256SUMS" | sort)
  present=$(cd "$dest" && ls | grep -vx SHA256SUMS | sort)
  [ "$listed" = "$present" ] ||
    { echo "vendor-hiredis: $dest has files SHA256SUMS does not list" >&2; exit 1; }
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-binary :all: \
  --no-deps --dest "$tmp" "hiredis==$version"
echo "$sha256  $tmp/hiredis-$version.tar.gz" | sha256sum --quiet -c ||
  { echo "vendor-hiredis: hiredis-$version.tar.gz is not the pinned one" >&2; exit 1; }
tar -xzf "$tmp/hiredis-$version.tar.gz" -C "$tmp"
rm -rf "$dest"
mkdir -p "$dest"
for f in $files; do
  cp "$tmp/hiredis-$version/vendor/hiredis/$f" "$dest/$f"
done
(cd "$dest" && sha256sum $files >SHA256SUMS)
hv=$(sed -n 's/^#define HIREDIS_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' \
  "$dest/hiredis.h" | paste -sd.)
echo "vendor-hiredis: $dest is hiredis $hv from hiredis-py $version"
