#!/usr/bin/env bash
# Builds what the reliability cases run, into build-reliability/ only (never
# into the source tree, which another suite's `luarocks make` also uses):
#   py/                  the hiredlock Python package (pip install --target .)
#   lua/5.1, lua/5.4     hiredlock/core.so for Lua 5.1 + LuaJIT and for 5.4
#   c/                   the C programs (bad inputs, the cancelling client)
# Every C file is compiled with -Wall -Wextra -Werror. Quiet unless it fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build-reliability
mkdir -p "$out/c" "$out/lua/5.1/hiredlock" "$out/lua/5.4/hiredlock"
cflags=(-std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow)
read -r -a hiredis <<<"$(pkg-config --cflags --libs hiredis openssl)"
core=(core/src/*/*.c)

log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
  if ! "$@" >"$log" 2>&1; then
    cat "$log"
    echo "build.sh: failed: $*" >&2
    exit 1
  fi
}

# C programs: the core compiled in, like the bindings do.
for prog in ${HRL_REL_C_PROGS:-bad_inputs canceller}; do
  run cc "${cflags[@]}" -Icore/include -Icore/src -o "$out/c/$prog" \
    "tests/reliability/c/$prog.c" "${core[@]}" "${hiredis[@]}" -lpthread -lm
done

# The Lua C module, from the same file lists as the rockspec.
for abi in 5.1 5.4; do
  run cc "${cflags[@]}" -fPIC -shared -Icore/include -Icore/src \
    -I"/usr/include/lua$abi" $(pkg-config --cflags hiredis | sed 's|-I\(\S*\)|-I\1 -I\1/hiredis|g') \
    -o "$out/lua/$abi/hiredlock/core.so" bindings/lua/*.c "${core[@]}" \
    "${hiredis[@]}" -lpthread -lm
done

# The Python package, into a private directory (PYTHONPATH=build-reliability/py).
pip=(python3 -m pip install -q --disable-pip-version-check)
if python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"),
                                         "EXTERNALLY-MANAGED")))'; then
  pip+=(--break-system-packages)
fi
[ "$(id -u)" -eq 0 ] && pip+=(--root-user-action=ignore)
python3 -c 'import redis' 2>/dev/null || run "${pip[@]}" redis
stamp=$out/py/.stamp
newest=$(find setup.py pyproject.toml python bindings/python core -type f \
  -newer "$stamp" 2>/dev/null | head -n 1 || true)
if [ ! -e "$stamp" ] || [ -n "$newest" ]; then
  rm -rf "$out/py"
  HIREDLOCK_WERROR=1 run "${pip[@]}" --no-deps --target "$out/py" .
  touch "$stamp"
fi
echo "build: $out (c, lua 5.1/5.4, python)"
