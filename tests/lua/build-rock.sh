#!/usr/bin/env bash
# Builds and installs the rock for one Lua ABI into the project-local tree
# build-lua/<abi> (5.1 is shared by lua5.1 and LuaJIT, as on a real machine),
# every C file compiled under -Wall -Wextra -Werror. Used by tests/lua/run.sh
# and by the interop suite.
#   tests/lua/build-rock.sh 5.1|5.4
set -euo pipefail
cd "$(dirname "$0")/../.."
abi=${1:?usage: tests/lua/build-rock.sh 5.1|5.4}
tree=$PWD/build-lua/$abi
cflags="-O2 -fPIC -std=c11 -Wall -Wextra -Werror -Wshadow"
cflags+=" -Wstrict-prototypes -Wmissing-prototypes"

rockspec=$(echo hiredlock-*.rockspec)
# luarocks is noisy: show its output only when it fails.
if ! out=$(luarocks --lua-version "$abi" --tree "$tree" make "$rockspec" \
    CFLAGS="$cflags" 2>&1); then
  echo "$out"
  echo "build-rock.sh: luarocks make failed for Lua $abi" >&2
  exit 1
fi
# luarocks builds in the source tree; keep the checkout clean.
rm -f bindings/lua/*.o core/src/*.o hiredlock/core.so
rmdir hiredlock 2>/dev/null || true
echo "installed: $(luarocks --lua-version "$abi" --tree "$tree" list --porcelain hiredlock)"

