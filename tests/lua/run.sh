#!/usr/bin/env bash
# Builds and installs the rock for one interpreter, then runs the whole busted
# suite (tests/lua) under that interpreter; used by scripts/suites/5x-lua-*.sh.
#   tests/lua/run.sh lua5.1|luajit|lua5.4 [busted args...]
# The rock goes into a project-local tree, build/lua/5.1 (shared by lua5.1
# and LuaJIT, as on a real machine) or build/lua/5.4, with every C file
# compiled under -Wall -Wextra -Werror (tests/lua/build-rock.sh). Redis comes
# from the specs' own tests/fixtures/redis-fixture calls.
set -euo pipefail
cd "$(dirname "$0")/../.."
interp=${1:?usage: tests/lua/run.sh lua5.1|luajit|lua5.4 [busted args...]}
shift
case $interp in
  lua5.1) abi=5.1 want=5.1 ;;
  luajit) abi=5.1 want=luajit ;;
  lua5.4) abi=5.4 want=5.4 ;;
  *) echo "run.sh: unknown interpreter '$interp'" >&2; exit 2 ;;
esac
tree=$PWD/build/lua/$abi
tests/lua/build-rock.sh "$abi"

lpath="$tree/share/lua/$abi/?.lua;$tree/share/lua/$abi/?/init.lua;;"
cpath="$tree/lib/lua/$abi/?.so;;"
export LUA_PATH="$lpath" LUA_CPATH="$cpath"
if [ "$abi" = 5.4 ]; then
  export LUA_PATH_5_4="$lpath" LUA_CPATH_5_4="$cpath"
fi
export HRL_LUA_VERSION=$want
"$interp" -v 2>&1 | head -n 1
exec "$interp" "$(command -v busted)" -f tests/lua/busted-config.lua "$@"
