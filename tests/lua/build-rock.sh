#!/usr/bin/env bash
# Builds and installs the rock for one Lua ABI with `luarocks make` into the
# tree build/lua/<abi> (5.1 is shared by lua5.1 and LuaJIT, as on a real
# machine), every C file compiled under -Wall -Wextra -Werror. Used by
# tests/lua/run.sh and the interop, nginx and reliability suites; rebuilt
# only when the rock's sources changed since the last build.
# `luarocks make` builds in the directory it runs in (objects, and
# hiredlock/core.so where a ./?.so on LUA_CPATH would load it for any Lua
# version), so it runs in a copy of the rock's sources, build/lua/src-<abi>,
# never in the checkout, and whatever happens to the build (a failure, a
# Ctrl-C) nothing is left beside the sources.
#   tests/lua/build-rock.sh 5.1|5.4
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
abi=${1:?usage: tests/lua/build-rock.sh 5.1|5.4}
# One build of a tree at a time: suites run side by side
# (scripts/run-tests.sh), and the second finds the tree fresh.
mkdir -p build/locks
exec 9>"build/locks/rock-$abi.lock"
flock_9
tree=$PWD/build/lua/$abi
src=build/lua/src-$abi
cflags="-O2 -fPIC -std=c11 -Wall -Wextra -Werror -Wshadow"
cflags+=" -Wstrict-prototypes -Wmissing-prototypes"

key="$(fingerprint hiredlock-*.rockspec LICENSE README.md lua bindings/lua \
  core vendor) $cflags $(luarocks --version | head -n 1)"
if ! fresh "$tree.stamp" "$key" ||
  [ ! -f "$tree/lib/lua/$abi/hiredlock/core.so" ]; then
  rm -rf "$src" "$tree.new" "$tree.stamp"
  stage_rock "$src"
  # luarocks is noisy: show its output only when it fails.
  if ! out=$(cd "$src" && luarocks --lua-version "$abi" --tree "$tree.new" \
      make hiredlock-*.rockspec CFLAGS="$cflags" 2>&1); then
    echo "$out"
    echo "build-rock.sh: luarocks make failed for Lua $abi" >&2
    exit 1
  fi
  rm -rf "$src" "$tree"
  mv "$tree.new" "$tree"
  echo "$key" >"$tree.stamp"
fi
echo "installed: $(luarocks --lua-version "$abi" --tree "$tree" list --porcelain hiredlock)"
