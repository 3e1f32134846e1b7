#!/usr/bin/env bash
# The nginx suite: the rock as `luarocks make` installs it for the Lua 5.1
# ABI (what ngx_lua's LuaJIT loads) into build/lua/5.1 (tests/lua/build-rock.sh)
# and the Python package as pip installs it into build/python
# (scripts/pip-install.sh), then pytest on tests/nginx, which starts Redis
# through tests/fixtures/redis-fixture and a real nginx whose prefix is a
# temp dir removed afterwards.
#   tests/nginx/run.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
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
chmod 755 "$tmp" # nginx workers read their prefix from here
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

tests/lua/build-rock.sh 5.1 | sed 's/^installed/rock/'
quiet scripts/pip-install.sh pytest=pytest redis=redis
use_python_build
nginx -v 2>&1
export HRL_NGX_TREE="$root/build/lua/5.1" HRL_NGX_TMP="$tmp"
cd "$tmp"
# -s: the figures the tests print (latencies, reuse) go to the suite log.
python3 -m pytest -p no:cacheprovider -q -s -rs "$root/tests/nginx" "$@"
