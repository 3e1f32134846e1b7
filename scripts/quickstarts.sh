#!/usr/bin/env bash
# Writes the README's quick starts as programs into DIR, for installing the
# artefacts the way a user does (scripts/fresh-install.sh, scripts/
# packaging.sh): quickstart.py (the Python and asyncio quick starts) and
# quickstart.lua (the Lua one), their example masters "redis://10.0.0.N:6379"
# made the fixture's (URLS[N], from HRL_FIXTURE_URLS at run time). Each
# prints where hiredlock was loaded from ("python: PATH PATH", "lua: PATH
# PATH"), for the caller to check it is the fresh install.
#   scripts/quickstarts.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/quickstarts.sh DIR}
fail() {
  echo "quickstarts: $*" >&2
  exit 1
}

# code LANG HEADING: the first LANG code block under the README's HEADING,
# its example masters "redis://10.0.0.N:6379" made URLS[N] (HRL_FIXTURE_URLS).
code() {
  local text
  text=$(awk -v heading="$2" -v fence="\`\`\`$1" '
    $0 == heading { inside = 1; next }
    inside && /^## / { exit }
    inside && $0 == fence { block = 1; next }
    block && $0 == "```" { exit }
    block' README.md)
  [ -n "$text" ] || fail "no $1 block under '$2' in README.md"
  text=$(sed -E 's|"redis://10\.0\.0\.([0-9]):6379"|URLS[\1]|g' <<<"$text")
  ! grep -q '"redis://' <<<"$text" || fail "a master in '$2' is not a fixture's"
  echo "$text"
}
py=$(
  echo 'import os'
  echo 'URLS = [None, *os.environ["HRL_FIXTURE_URLS"].split(",")]'
  code python "## Python quick start"
  echo 'cleanup()'
  code python "## asyncio quick start"
  echo 'import hiredlock._core'
  echo 'print("python:", hiredlock.__file__, hiredlock._core.__file__)'
)
lua=$(
  echo 'local URLS = {}'
  echo 'for url in os.getenv("HRL_FIXTURE_URLS"):gmatch("[^,]+") do'
  echo '  URLS[#URLS + 1] = url'
  echo 'end'
  code lua "## Lua quick start"
  echo 'assert(ok and result == "done", tostring(result))'
  echo 'print("lua: " .. package.searchpath("hiredlock", package.path) .. " "'
  echo '      .. package.searchpath("hiredlock.core", package.cpath))'
)
mkdir -p "$dir"
echo "$py" >"$dir/quickstart.py"
echo "$lua" >"$dir/quickstart.lua"
