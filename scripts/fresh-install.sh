#!/usr/bin/env bash
# Installs the artefacts of `make dist` (build/dist/) the way a user does,
# outside the checkout, and runs the README's quick starts on them:
#   - the sdist into a fresh virtual environment: pip compiles the C core
#     with the bundled hiredis and, found on this machine, OpenSSL (the
#     build backend's wheels come from build/wheels, no built wheel is
#     reused), then the Python quick start; then python3's wheel over it,
#     and the quick start again;
#   - the source rock into a fresh Lua 5.4 rocks tree (it builds offline),
#     then the Lua quick start (it uses <close>, so Lua 5.4).
# The quick starts are the README's code blocks with its example masters
# replaced by the fixture's (scripts/quickstarts.sh); they run from an empty temp dir and print where
# hiredlock was loaded from, which must be the fresh install. Everything is
# in a temp dir, removed afterwards. Run it under the Redis fixture:
#   tests/fixtures/redis-fixture run -n 3 -- scripts/fresh-install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
: "${HRL_FIXTURE_URLS:?run under tests/fixtures/redis-fixture run -n 3 --}"
root=$PWD
sdist=$(echo "$root"/build/dist/hiredlock-*.tar.gz)
tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
wheel=$(echo "$root"/build/dist/hiredlock-*-"$tag"-"$tag"-manylinux_*.whl)
rock=$(echo "$root"/build/dist/hiredlock-*.src.rock)
for f in "$sdist" "$wheel" "$rock"; do
  [ -f "$f" ] || { echo "fresh-install: no $f: run scripts/dist.sh" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hrlfresh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run"
fail() {
  echo "fresh-install: $*" >&2
  exit 1
}

# The build backend, downloaded once (scripts/lib.sh): the sdist installs
# with --no-index like on a machine without PyPI.
wheels=$root/build/wheels
backend_wheels

scripts/quickstarts.sh "$tmp/run"

# loaded_from WHAT OUTPUT: OUTPUT's paths (after "WHAT: ") all in $tmp/DIR.
loaded_from() {
  local line path
  line=$(grep "^$1: " <<<"$3") || fail "$1 quick start printed no paths: $3"
  for path in ${line#*: }; do
    case $path in
      "$tmp/$2/"*) ;;
      *) fail "$1 quick start loaded $path, not the fresh install in $tmp/$2" ;;
    esac
  done
  echo "$line"
}

# The sdist, compiled into a fresh venv, then the wheel over it.
ran=0
python3 -m venv "$tmp/venv"
py=$tmp/venv/bin/python
pip=("$py" -m pip install --disable-pip-version-check --no-cache-dir
  --no-index --find-links "$wheels")
out=$("${pip[@]}" "$sdist" 2>&1) || fail "pip install of the sdist: $out"
grep -q "Building wheel for hiredlock" <<<"$out" ||
  fail "pip installed the sdist without compiling it: $out"
run_python() {
  local out
  out=$(cd "$tmp/run" && env -u PYTHONPATH HIREDLOCK_URLS="$HRL_FIXTURE_URLS" \
    "$py" quickstart.py 2>&1) || fail "the Python quick start ($1) failed: $out"
  loaded_from python venv "$out"
  ran=$((ran + 1))
}
run_python sdist
# Built here, where both are installed: hiredis compiled in all the same,
# OpenSSL found with pkg-config and linked.
libs=$(ldd "$tmp"/venv/lib/python3*/site-packages/hiredlock/_core*.so)
! grep -q libhiredis <<<"$libs" || fail "the sdist's build links a hiredis: $libs"
grep -q libssl <<<"$libs" || fail "the sdist's build found no OpenSSL here: $libs"
quiet "${pip[@]}" --force-reinstall --no-deps "$wheel"
run_python wheel

# The source rock into a fresh Lua 5.4 tree.
tree=$tmp/rocks
quiet luarocks --lua-version 5.4 --tree "$tree" install "$rock"
version=${rock##*/hiredlock-}
[ -f "$tree/lib/luarocks/rocks-5.4/hiredlock/${version%.src.rock}/doc/LICENSE" ] ||
  fail "the rock installed no LICENSE"
out=$(cd "$tmp/run" && env -u LUA_INIT -u LUA_INIT_5_4 \
  LUA_PATH_5_4="$tree/share/lua/5.4/?.lua;$tree/share/lua/5.4/?/init.lua;;" \
  LUA_CPATH_5_4="$tree/lib/lua/5.4/?.so;;" lua5.4 quickstart.lua 2>&1) ||
  fail "the Lua quick start failed: $out"
loaded_from lua rocks "$out"
ran=$((ran + 1))

n=$(tr ',' '\n' <<<"$HRL_FIXTURE_URLS" | wc -l)
echo "fresh-install: $ran of 3 quick starts ran against $n masters (sdist compiled into a fresh venv, then its wheel; source rock into a fresh Lua 5.4 tree)"
