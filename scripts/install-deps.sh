#!/usr/bin/env bash
# Installs the Debian packages a group of suites needs, only those missing,
# so it is quick and quiet on a machine that has them (idempotent).
#   scripts/install-deps.sh core [fuzz] [lua] [nginx] [python] [reliability]
#                           [bench] [dist]
# LuaJIT comes from OpenResty's branch (luajit2): Debian's own luajit
# conflicts with libnginx-mod-http-lua, and this way plain LuaJIT and nginx
# run the very same VM.
set -euo pipefail

group_packages() {
  case "$1" in
    core) echo build-essential cmake pkg-config libhiredis-dev libssl-dev openssl \
               redis-server redis-sentinel redis-tools valgrind clang-format ;;
    fuzz) echo clang-14 libclang-rt-14-dev ;;
    python) echo python3-dev python3-pip python3-venv ;; # venv: make test's fresh install
    lua) echo lua5.1 liblua5.1-0-dev lua5.4 liblua5.4-dev luajit2 \
              libluajit2-5.1-dev lua-busted luarocks lua-socket lua-redis zip ;;
    nginx) echo nginx libnginx-mod-http-lua ;;
    reliability) echo faketime libfaketime ;; # case 8: the client's wall clock
    bench) echo strace ;; # make bench: syscalls per cycle (valgrind is in core)
    # make dist: a compiler, OpenSSL's headers (the wheels' TLS), Python's
    # headers and venv for a Debian python3, zip for the source rock.
    dist) echo build-essential pkg-config libssl-dev python3-dev python3-venv zip ;;
    *) echo "install-deps: unknown group '$1' (core, fuzz, python, lua, nginx, reliability, bench, dist)" >&2
       exit 2 ;;
  esac
}

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then
    sudo_cmd=(sudo)
  else
    echo "install-deps: not root and no sudo; install these yourself" >&2
  fi
fi

updated=0
for group in "${@:-core}"; do
  missing=()
  for pkg in $(group_packages "$group"); do
    installed "$pkg" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && continue
  echo "install-deps: installing ${missing[*]}"
  if [ $updated -eq 0 ]; then
    "${sudo_cmd[@]}" apt-get update -qq
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
done
