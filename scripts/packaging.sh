#!/usr/bin/env bash
# The release artefacts on a machine without hiredis and OpenSSL: in a mount
# namespace where every file of the libhiredis* and libssl* packages is
# hidden (scripts/hide-packages.sh: headers, pkg-config files, shared
# libraries), each in a fresh place outside the checkout:
#   0. the hiding works: pkg-config and the compiler find neither library,
#      and the old-style build (build/python: scripts/pip-install.sh, linked
#      to the system's libhiredis, libssl and libcrypto, as every wheel of
#      `make dist` was before the bundling), which imports outside, fails to
#      import inside ("cannot open shared object file");
#   1. per CPython of `make dist` (scripts/dist.sh), a fresh venv installs
#      that CPython's manylinux wheel from build/dist and runs the README's
#      Python and asyncio quick starts against the 3 masters, then takes a
#      lock over TLS (the fixture's rediss:// ports, its CA): the OpenSSL
#      auditwheel bundled;
#   2. a fresh venv builds the sdist (pip, --no-index: setuptools from
#      build/wheels) with the bundled hiredis and no OpenSSL, runs the quick
#      starts, and a rediss:// master is refused with the core's message;
#   3. the source rock builds into a fresh Lua 5.4 tree the same way (the
#      bundled hiredis, no OpenSSL), runs the Lua quick start, and refuses a
#      rediss:// master with the same message;
#   4. the C core compiles with cc alone (the bundled hiredis, HRL_NO_TLS)
#      and a C program refuses a rediss:// master with the same message.
# Outside the namespace first: a second `pip install .` of a checkout after
# one of another configuration (HIREDLOCK_TLS=off, then the default) builds
# from a clean tree: the second has TLS (nothing of the first reused).
# Needs root (unshare -m). Run it under the fixture, with TLS ports:
#   tests/fixtures/redis-fixture run -n 3 --tls -- scripts/packaging.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
: "${HRL_FIXTURE_TLS_URLS:?run under tests/fixtures/redis-fixture run -n 3 --tls --}"
root=$PWD
# Seconds since the suite began (across the exec into the namespace).
export HRL_PACKAGING_T0=${HRL_PACKAGING_T0:-$(date +%s)}
elapsed() { echo "$(($(date +%s) - HRL_PACKAGING_T0))s"; }
NO_TLS="TLS: this hiredlock was built without OpenSSL (no rediss://)"
fail() {
  echo "packaging: $*" >&2
  exit 1
}
# new_venv PYTHON DIR: a fresh venv, without pip of its own (ensurepip is
# most of a venv's cost); pip_in VENV ARGS...: python3's pip installs into
# VENV (--python), offline (build/wheels).
new_venv() {
  "$1" -m venv --without-pip "$2"
}
pip_in() {
  local venv=$1
  shift
  python3 -m pip --python "$venv/bin/python" install --disable-pip-version-check \
    --no-cache-dir --no-index --find-links "$root/build/wheels" "$@"
}

if [ "${1:-}" != --inside ]; then
  scripts/dist.sh
  backend_wheels
  quiet scripts/pip-install.sh
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/hrlpack.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT

  # The old-style build imports here, where its libraries are.
  (cd / && PYTHONPATH=$root/build/python python3 -c 'import hiredlock') ||
    fail "build/python does not import even with the system's libraries"
  libs=$(ldd "$root"/build/python/hiredlock/_core*.so)
  grep -q libhiredis <<<"$libs" ||
    fail "build/python links no system hiredis: nothing to show the hiding on"

  # Two builds of one checkout, another configuration each: the second
  # compiles everything anew (before, build/python-build/ kept the first
  # build's objects and setuptools reused them).
  mkdir "$tmp/checkout"
  git ls-files -z --cached --others --exclude-standard |
    tar --null -T - -cf - | tar -xf - -C "$tmp/checkout"
  new_venv python3 "$tmp/venv"
  # The first unoptimised (CFLAGS comes last): quicker, and a configuration
  # of its own all the same.
  out=$(cd "$tmp" && HIREDLOCK_TLS=off CFLAGS=-O0 pip_in "$tmp/venv" ./checkout 2>&1) ||
    fail "pip install . (HIREDLOCK_TLS=off): $out"
  # ldd's output is read whole first: `ldd | grep -q` under pipefail fails
  # when grep, done at the first match, ends ldd with SIGPIPE (the likely
  # cause of a failed run of suites side by side).
  libs=$(ldd "$tmp"/venv/lib/python3*/site-packages/hiredlock/_core*.so)
  ! grep -q libssl <<<"$libs" || fail "HIREDLOCK_TLS=off linked OpenSSL"
  out=$(cd "$tmp" && pip_in "$tmp/venv" --force-reinstall --no-deps ./checkout 2>&1) ||
    fail "the second pip install .: $out"
  libs=$(ldd "$tmp"/venv/lib/python3*/site-packages/hiredlock/_core*.so)
  grep -q libssl <<<"$libs" ||
    fail "the second pip install . has no TLS: it reused the first one's objects"
  left=$(find "$tmp/checkout/build" -name '*.o' 2>/dev/null | wc -l)
  [ "$left" -eq 0 ] || fail "pip install . left $left objects under build/"
  echo "packaging: a second pip install . of a checkout rebuilt from a clean tree (TLS off, then on; no objects left in build/) ($(elapsed))"
  rm -rf "$tmp"
  trap - EXIT

  exec scripts/hide-packages.sh 'libhiredis*' 'libssl*' -- "$0" --inside
fi

# ------------------------------------------------------------ inside
tmp=$(mktemp -d /tmp/hrlpack.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
scripts/quickstarts.sh "$tmp/run"
tls_url=${HRL_FIXTURE_TLS_URLS%%,*}
cat >"$tmp/run/tls.py" <<'EOF'
import os

import hiredlock

url = os.environ["HRL_FIXTURE_TLS_URLS"].split(",")[0]
ca = os.path.join(os.environ["HRL_FIXTURE_TLS_DIR"], "ca.crt")
client = hiredlock.Client([url], ssl_ca_certs=ca)
try:
    with client.lock("packaging:tls", timeout=0):
        print("tls: held")
except hiredlock.ConnectionError as err:
    print(f"tls: {err}")
EOF
cat >"$tmp/run/tls.lua" <<'EOF'
local hiredlock = require "hiredlock"
local url = os.getenv("HRL_FIXTURE_TLS_URLS"):match("[^,]+")
local client = hiredlock.new({url})
local lock, err = client:acquire("packaging:tls", {timeout = 0})
if lock then
  lock:release()
  print("tls: held")
else
  print("tls: " .. tostring(err))
end
EOF

cat >"$tmp/run/tls.c" <<'EOF'
#include <hiredlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  const char *url = getenv("HRL_FIXTURE_TLS_URLS");
  char first[256];
  snprintf(first, sizeof first, "%.*s", (int)strcspn(url, ","), url);
  const char *urls[] = {first};
  hrl_client *client;
  hrl_lock *lock;
  char detail[HRL_DETAIL_MAX], msg[HRL_DETAIL_MAX + 64];
  if (hrl_client_new(urls, 1, NULL, &client, detail, sizeof detail) != HRL_OK ||
      hrl_lock_new(client, "packaging:tls", 13, 30000, &lock, NULL, 0) != HRL_OK) {
    return 2;
  }
  hrl_status st = hrl_lock_acquire(lock, 0);
  printf("tls: %s\n", st == HRL_OK ? "held"
                                     : hrl_format_error(st, hrl_lock_error(lock),
                                                        msg, sizeof msg));
  hrl_lock_free(lock);
  hrl_client_free(client);
  return 0;
}
EOF

# 0. The hiding.
! pkg-config --exists hiredis 2>/dev/null || fail "pkg-config still finds hiredis"
! pkg-config --exists openssl 2>/dev/null || fail "pkg-config still finds openssl"
for h in hiredis/hiredis.h openssl/ssl.h; do
  ! echo "#include <$h>" | cc -E -x c - >/dev/null 2>&1 || fail "cc still finds <$h>"
done
old=$(cd / && PYTHONPATH=$root/build/python python3 -c 'import hiredlock' 2>&1) &&
  fail "the old-style build (system libhiredis) imported: nothing is hidden"
grep -q "cannot open shared object file" <<<"$old" ||
  fail "the old-style build failed otherwise: $old"
echo "packaging: hidden: the old-style build fails: $(tail -n 1 <<<"$old")"

# run_python VENV WHAT: the quick starts from VENV, loaded from it.
run_python() {
  local out
  out=$(cd "$tmp/run" && env -u PYTHONPATH HIREDLOCK_URLS="$HRL_FIXTURE_URLS" \
    "$1/bin/python" quickstart.py 2>&1) || fail "the Python quick start ($2) failed: $out"
  line=$(grep '^python: ' <<<"$out") || fail "no paths from the quick start ($2): $out"
  for path in ${line#python: }; do
    case $path in "$1/"*) ;; *) fail "$2 loaded $path, not its venv" ;; esac
  done
}

# 1. A wheel per CPython.
wheels=0
for whl in "$root"/build/dist/hiredlock-*-manylinux_*.whl; do
  tag=${whl#*-cp}
  tag=${tag%%-*}
  py=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"${tag:0:1}.${tag:1}".*/bin/python3 \
    2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$py" ] || py=$(command -v "python${tag:0:1}.${tag:1}") ||
    fail "no python for $whl"
  venv=$tmp/venv-$tag
  new_venv "$py" "$venv"
  out=$(pip_in "$venv" --no-deps "$whl" 2>&1) || fail "pip install $whl: $out"
  run_python "$venv" "wheel cp$tag"
  out=$(cd "$tmp/run" && "$venv/bin/python" tls.py 2>&1)
  [ "$out" = "tls: held" ] || fail "wheel cp$tag over rediss://: $out"
  wheels=$((wheels + 1))
done
[ "$wheels" -gt 0 ] || fail "no wheel in build/dist"
echo "packaging: $wheels wheels: quick starts and a lock over TLS, each in a fresh venv ($(elapsed))"

# 2. The sdist, compiled here.
venv=$tmp/venv-sdist
new_venv python3 "$venv"
out=$(cd "$tmp" && pip_in "$venv" "$root"/build/dist/hiredlock-*.tar.gz 2>&1) ||
  fail "pip install of the sdist: $out"
grep -q "Building wheel for hiredlock" <<<"$out" ||
  fail "pip installed the sdist without compiling it: $out"
run_python "$venv" sdist
out=$(cd "$tmp/run" && "$venv/bin/python" tls.py 2>&1)
grep -qF "$NO_TLS" <<<"$out" || fail "the sdist built without OpenSSL, over rediss://: $out"
echo "packaging: the sdist built without hiredis and OpenSSL installed: quick starts ran; rediss:// refused: ${out#tls: } ($(elapsed))"

# 3. The source rock, built here.
tree=$tmp/rocks
out=$(luarocks --lua-version 5.4 --tree "$tree" install \
  "$root"/build/dist/hiredlock-*.src.rock 2>&1) || fail "luarocks install: $out"
grep -q "hiredis bundled, TLS none" <<<"$out" ||
  fail "the rock did not build with the bundled hiredis and no TLS: $out"
lua_env=(env -u LUA_INIT -u LUA_INIT_5_4
  LUA_PATH_5_4="$tree/share/lua/5.4/?.lua;$tree/share/lua/5.4/?/init.lua;;"
  LUA_CPATH_5_4="$tree/lib/lua/5.4/?.so;;")
out=$(cd "$tmp/run" && "${lua_env[@]}" lua5.4 quickstart.lua 2>&1) ||
  fail "the Lua quick start failed: $out"
line=$(grep '^lua: ' <<<"$out") || fail "no paths from the Lua quick start: $out"
for path in ${line#lua: }; do
  case $path in "$tree/"*) ;; *) fail "lua loaded $path, not the fresh tree" ;; esac
done
out=$(cd "$tmp/run" && "${lua_env[@]}" lua5.4 tls.lua 2>&1)
grep -qF "$NO_TLS" <<<"$out" || fail "the rock built without OpenSSL, over rediss://: $out"
echo "packaging: the source rock built without hiredis and OpenSSL installed: quick start ran; rediss:// refused: ${out#tls: } ($(elapsed))"

# 4. The C core with a C compiler alone: the bundled hiredis, no OpenSSL
# (-DHRL_NO_TLS, as CMake's -DHRL_TLS=OFF), -O0 for speed.
mapfile -t core < <(sed -e '/^#/d' -e '/^[[:space:]]*$/d' core/sources.txt)
cc -O0 -std=c11 -DHRL_NO_TLS -Icore/include -Icore/src -Ivendor -o "$tmp/tls-c" \
  "$tmp/run/tls.c" "${core[@]}" \
  vendor/hiredis/{alloc,async,hiredis,net,read,sds,sockcompat}.c -lpthread -lm ||
  fail "the C core did not build without hiredis and OpenSSL"
out=$("$tmp/tls-c" 2>&1)
grep -qF "$NO_TLS" <<<"$out" || fail "C built without OpenSSL, over rediss://: $out"
echo "packaging: the C core built without hiredis and OpenSSL installed: rediss:// refused: ${out#tls: } ($(elapsed))"

echo "packaging: ok: old-style build refused, $wheels wheels, the sdist, the rock and the C core ran against $(tr ',' '\n' <<<"$HRL_FIXTURE_URLS" | wc -l) masters with hiredis and OpenSSL hidden"
