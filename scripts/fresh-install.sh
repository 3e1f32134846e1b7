#!/usr/bin/env bash
# Installs the artefacts of `make dist` (build/dist/) the way a user does,
# outside the checkout, and runs the README's quick starts on them:
#   - the sdist into a fresh virtual environment: pip compiles the C core
#     (the build backend's wheels come from build/wheels, no built wheel is
#     reused), then the Python quick start; then the wheel over it, and the
#     quick start again;
#   - the source rock into a fresh Lua 5.4 rocks tree (it builds offline),
#     then the Lua quick start (it uses <close>, so Lua 5.4).
# The quick starts are the README's code blocks with its example masters
# replaced by the fixture's; they run from an empty temp dir and print where
# hiredlock was loaded from, which must be the fresh install. Everything is
# in a temp dir, removed afterwards. Run it under the Redis fixture:
#   tests/fixtures/redis-fixture run -n 3 -- scripts/fresh-install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
: "${HRL_FIXTURE_URLS:?run under tests/fixtures/redis-fixture run -n 3 --}"
root=$PWD
sdist=$(echo "$root"/build/dist/hiredlock-*.tar.gz)
wheel=$(echo "$root"/build/dist/hiredlock-*.whl)
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

# code LANG HEADING: the first LANG code block under the README's HEADING,
# its example masters "redis://10.0.0.N:6379" made URLS[N] (HRL_FIXTURE_URLS).
code() {
  local text
  text=$(awk -v heading="$2" -v fence="\`\`\`$1" '
    $0 == heading { inside = 1; next }
    inside && /^## / { exit }
    inside && $0 == fence { block = 1; next }
    block && $0 == "```" { exit }
    block' "$root/README.md")
  [ -n "$text" ] || fail "no $1 block under '$2' in README.md"
  text=$(sed -E 's|"redis://10\.0\.0\.([0-9]):6379"|URLS[\1]|g' <<<"$text")
  ! grep -q '"redis://' <<<"$text" || fail "a master in '$2' is not a fixture's"
  echo "$text"
}
{
  echo 'import os'
  echo 'URLS = [None, *os.environ["HRL_FIXTURE_URLS"].split(",")]'
  code python "## Python quick start"
  echo 'cleanup()'
  code python "## asyncio quick start"
  echo 'import hiredlock._core'
  echo 'print("python:", hiredlock.__file__, hiredlock._core.__file__)'
} >"$tmp/run/quickstart.py"
{
  echo 'local URLS = {}'
  echo 'for url in os.getenv("HRL_FIXTURE_URLS"):gmatch("[^,]+") do'
  echo '  URLS[#URLS + 1] = url'
  echo 'end'
  code lua "## Lua quick start"
  echo 'assert(ok and result == "done", tostring(result))'
  echo 'print("lua: " .. package.searchpath("hiredlock", package.path) .. " "'
  echo '      .. package.searchpath("hiredlock.core", package.cpath))'
} >"$tmp/run/quickstart.lua"

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
