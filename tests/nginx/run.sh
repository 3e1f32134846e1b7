#!/usr/bin/env bash
# The nginx suite: builds the rock (Lua 5.1 ABI, what ngx_lua's LuaJIT loads)
# into a private tree and the Python package into a private directory, both
# from a copy of this checkout in a temp dir (so no other suite's build in
# the checkout can race with it), then runs pytest on tests/nginx, which
# starts Redis through tests/fixtures/redis-fixture and a real nginx.
#   tests/nginx/run.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
for tool in nginx luarocks luajit lua5.1 python3; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || {
    echo "run.sh: $tool is missing (scripts/install-deps.sh core lua nginx python)" >&2
    exit 1
  }
done
for module in /usr/lib/nginx/modules/ndk_http_module.so \
              /usr/lib/nginx/modules/ngx_http_lua_module.so; do
  [ -f "$module" ] || { echo "run.sh: $module is missing" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hrlngx.XXXXXX")
chmod 755 "$tmp" # nginx workers read the rock tree from here
cleanup() {
  # nginx process groups pytest started and could not stop (pytest killed)
  if [ -f "$tmp/nginx.pgid" ]; then
    while read -r pgid; do
      kill -KILL -- "-$pgid" 2>/dev/null || true
    done <"$tmp/nginx.pgid"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir "$tmp/src"
cp -r hiredlock-*.rockspec lua bindings core setup.py pyproject.toml \
  MANIFEST.in README.md python "$tmp/src/"
find "$tmp/src" \( -name '*.o' -o -name '*.so' -o -name '__pycache__' \) \
  -prune -exec rm -rf {} +

cflags="-O2 -fPIC -std=c11 -Wall -Wextra -Werror -Wshadow"
cflags+=" -Wstrict-prototypes -Wmissing-prototypes"
if ! out=$(cd "$tmp/src" && luarocks --lua-version 5.1 --tree "$tmp/tree" \
    make hiredlock-*.rockspec CFLAGS="$cflags" 2>&1); then
  echo "$out"
  echo "run.sh: luarocks make failed" >&2
  exit 1
fi
echo "rock: $(luarocks --lua-version 5.1 --tree "$tmp/tree" list --porcelain hiredlock)"

# The Python package from this checkout, built into a private directory:
# the system's site-packages stay untouched (the python suite may be
# installing there right now), and no build backend is fetched.
if ! out=$(cd "$tmp/src" && HIREDLOCK_WERROR=1 python3 setup.py -q build \
    --build-lib "$tmp/py" --build-temp "$tmp/pybuild" 2>&1); then
  echo "$out"
  echo "run.sh: building the Python package failed" >&2
  exit 1
fi
python3 -c 'import pytest, redis' 2>/dev/null || {
  echo "run.sh: pytest and redis-py are needed (pip install pytest redis)" >&2
  exit 1
}
nginx -v 2>&1
export HRL_NGX_TREE="$tmp/tree" HRL_NGX_TMP="$tmp"
export PYTHONPATH="$tmp/py${PYTHONPATH:+:$PYTHONPATH}"
cd "$tmp"
# -s: the figures the tests print (latencies, reuse) go to the suite log.
python3 -m pytest -p no:cacheprovider -q -s -rs "$root/tests/nginx" "$@"
