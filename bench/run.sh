#!/usr/bin/env bash
# `make bench`: builds and installs what the benchmark needs (only what is
# missing), then runs bench/harness.py on Redis servers of its own. Options
# go to the harness, e.g.
#   bench/run.sh --quick          a check in under 2 minutes (build/bench/)
#   bench/run.sh                  the full run: bench/results/<date>.json,
#                                 docs/PERFORMANCE.md, docs/performance.png
#                                 (refused on a tree with uncommitted
#                                 changes unless --allow-dirty)
# bench/README.md describes the cases and the method.
set -euo pipefail
cd "$(dirname "$0")/.."

# --help first: the installs and builds below take minutes on a new machine
# (toxiproxy's Go install alone), and the options need none of them.
for arg in "$@"; do
  case $arg in
  -h | --help) exec python3 bench/hrlbench/cli.py --help ;;
  esac
done

# Debian packages: the compiler, hiredis, Redis, Lua, LuaRocks, lua-redis,
# valgrind and strace (the profile phase).
scripts/install-deps.sh core python lua bench

# The C worker (tests/workers/c), in the same tree as `make build`.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target hrl-worker >/dev/null

# True when nothing under the given sources is newer than file $1.
fresh() {
  local stamp=$1
  shift
  [ -e "$stamp" ] && [ -z "$(find "$@" -newer "$stamp" -print -quit)" ]
}

# Other suites build the same package and rock from this checkout (the rock
# is compiled inside the source tree): build only what changed, and try
# again when a concurrent build pulled the objects away.
retry() {
  local try
  for try in 1 2 3; do
    "$@" >/dev/null && return 0
    echo "bench: '$*' failed (attempt $try of 3)" >&2
    sleep 3
  done
  return 1
}

# The Python package from this checkout, plus the Python peers (redis-py
# with its hiredis parser, as users who care about speed run it) and
# matplotlib (for the plot), each installed only when missing.
mkdir -p build/bench
# scripts/pip-install.sh installs into build/python: the harness and every
# Python worker it starts import hiredlock from there, never from an older
# install elsewhere.
export PYTHONPATH=$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}
pystamp=build/bench/.python-installed
if ! fresh "$pystamp" core bindings/python python setup.py pyproject.toml ||
  ! python3 -c "import hiredlock, redis, hiredis, pottery, redis_lock, matplotlib" \
    2>/dev/null; then
  retry scripts/pip-install.sh redis=redis hiredis=hiredis pottery=pottery \
    redis_lock=python-redis-lock matplotlib=matplotlib uvloop=uvloop
  touch "$pystamp"
fi

# The Lua rock for 5.1 (also LuaJIT's) and 5.4, into build/lua/<abi>, then
# a copy of it in build/bench/lua/<abi> for the harness, so that a test
# suite rebuilding build/lua/ meanwhile cannot pull it from under a run.
for abi in 5.1 5.4; do
  so=build/lua/$abi/lib/lua/$abi/hiredlock/core.so
  fresh "$so" core bindings/lua lua hiredlock-*.rockspec ||
    retry tests/lua/build-rock.sh "$abi"
  dst=build/bench/lua/$abi
  tree=$PWD/$dst.new
  for try in 1 2 3; do
    rm -rf "$dst.new" && mkdir -p "$dst.new"
    if cp -a "build/lua/$abi/share" "build/lua/$abi/lib" "$dst.new/" &&
      LUA_PATH="$tree/share/lua/$abi/?.lua;$tree/share/lua/$abi/?/init.lua" \
        LUA_CPATH="$tree/lib/lua/$abi/?.so" \
        LUA_PATH_5_4="$tree/share/lua/$abi/?.lua;$tree/share/lua/$abi/?/init.lua" \
        LUA_CPATH_5_4="$tree/lib/lua/$abi/?.so" \
        "lua$abi" -e 'require "hiredlock"' 2>/dev/null; then
      rm -rf "$dst" && mv "$dst.new" "$dst"
      break
    fi
    [ "$try" -lt 3 ] || { echo "bench: no usable Lua $abi rock" >&2; exit 1; }
    sleep 3
    retry tests/lua/build-rock.sh "$abi"
  done
done

# node-redlock and ioredis at the versions of
# tests/workers/node/package-lock.json, installed into build/bench/node (the
# harness points NODE_PATH there). Node.js itself is not installed here:
# without it, no node-redlock case.
node=build/bench/node
if ! command -v npm >/dev/null; then
  echo "bench: no Node.js/npm on this machine: node-redlock is left out" >&2
elif ! cmp -s tests/workers/node/package-lock.json "$node/package-lock.json" ||
  ! (cd "$node" && npm ls --omit=dev >/dev/null 2>&1); then
  mkdir -p "$node"
  cp tests/workers/node/package.json tests/workers/node/package-lock.json "$node/"
  (cd "$node" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# toxiproxy (the delay phase's proxy) from the Go module proxy, into
# build/bench/toxiproxy; without Go, no delay phase.
toxi=build/bench/toxiproxy
if [ ! -x "$toxi/server" ]; then
  if command -v go >/dev/null; then
    GOBIN=$PWD/$toxi GOPATH=$PWD/build/bench/go \
      GOCACHE=$PWD/build/bench/go/cache GOFLAGS=-modcacherw \
      go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0
  else
    echo "bench: no Go toolchain: the delay phase is left out" >&2
  fi
fi

exec python3 bench/harness.py "$@"
