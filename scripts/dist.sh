#!/usr/bin/env bash
# `make dist`: the release artefacts of this checkout, in build/dist/:
#   hiredlock-V.tar.gz          the sdist (python -m build; the C core and
#                               the glue, compiled at install time)
#   hiredlock-V-cpXY-...whl     a wheel, built from that sdist
#   hiredlock-V-R.src.rock      the source rock
# The source rock is what `luarocks pack` makes of the rockspec, a zip of
# the rockspec and of its sources in the directory source.dir names, but
# packed from this checkout instead of fetched from source.url (a git URL
# luarocks pack would clone), so `luarocks install` builds it offline.
# Quiet unless something fails; prints the artefacts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
out=build/dist
quiet scripts/pip-install.sh build=build
rm -rf "$out"
mkdir -p "$out"

# From /: in the checkout, python3 -m build would find build/ instead.
root=$PWD
quiet sh -c 'cd / && exec python3 -m build --outdir "$1/$2" "$1"' sh "$root" "$out"

rockspec=$(echo hiredlock-*.rockspec)
dir=$(sed -n 's/^ *dir = "\([^"]*\)",$/\1/p' "$rockspec")
[ -n "$dir" ] || { echo "dist: no source.dir in $rockspec" >&2; exit 1; }
stage=$out/rock
stage_rock "$stage/$dir"
cp "$rockspec" "$stage/"
(cd "$stage" && zip -qrX "../${rockspec%.rockspec}.src.rock" "$rockspec" "$dir")
rm -rf "$stage"

ls -l "$out" | sed -n 's/^[^ ]* *[^ ]* *[^ ]* *[^ ]* *\([0-9]*\) .* \(hiredlock.*\)$/dist: \2 (\1 bytes)/p'
