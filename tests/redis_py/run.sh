#!/usr/bin/env bash
# The yardstick of hiredlock.redis_py: redis-py's own lock tests,
# tests/test_lock.py and tests/test_asyncio/test_lock.py of redis-py 8.1.0,
# run with the lock class swapped (one import line in each file, nothing
# else changed) against a Redis of the shared fixtures.
# The sdist comes from PyPI (`pip download`, its sha256 checked) into
# build/redis-py/ once, and is unpacked afresh under build/ each run; its own
# redis package (8.1.0) is the redis-py under test, whatever is installed.
# tests/redis_py/redis_py_expected.py marks the tests hiredlock fails on purpose
# (docs/MIGRATING.md says why) as strict expected failures.
#   tests/redis_py/run.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
root=$PWD
version=8.1.0
sha256=6e1a19beef9225c83efd689c7e6b7da2d5215b1f42cd13b7fc3714d0a09c7b25
dist=build/redis-py
sdist=$dist/redis-$version.tar.gz

quiet scripts/pip-install.sh pytest=pytest pytest_asyncio=pytest-asyncio \
  packaging=packaging
use_python_build

if ! echo "$sha256  $sdist" | sha256sum -c --status 2>/dev/null; then
  mkdir -p "$dist"
  rm -f "$sdist"
  echo "run.sh: fetching the redis $version sdist from PyPI"
  quiet python3 -m pip download --disable-pip-version-check --no-deps \
    --no-binary :all: -d "$dist" "redis==$version"
  echo "$sha256  $sdist" | sha256sum -c --quiet || {
    echo "run.sh: $sdist does not have the sha256 pinned here" >&2
    exit 1
  }
fi

src=$dist/src
rm -rf "$src"
mkdir -p "$src"
tar -xzf "$sdist" -C "$src"
src=$root/$src/redis-$version

# swap FILE OLD NEW: OLD is the one line of FILE that changes, into NEW.
swap() {
  local file=$src/$1
  [ "$(grep -cxF "$2" "$file")" = 1 ] || {
    echo "run.sh: '$2' is not one line of $1" >&2
    return 1
  }
  cp "$file" "$file.orig"
  sed -i "s|^$2\$|$3|" "$file"
  [ "$(diff "$file.orig" "$file" | grep -c '^[<>]')" = 2 ] || {
    echo "run.sh: the swap changed more than one line of $1" >&2
    return 1
  }
  rm "$file.orig"
  echo "swapped in $1: $3"
}
swap tests/test_lock.py "from redis.lock import Lock" \
  "from hiredlock.redis_py import Lock"
swap tests/test_asyncio/test_lock.py "from redis.asyncio.lock import Lock" \
  "from hiredlock.redis_py import AsyncLock as Lock"

export HRL_REDIS_PY_VERSION=$version
export PYTHONPATH="$root/tests/redis_py:$PYTHONPATH"
cd "$src"
# From the sdist's root: `python3 -m pytest` puts it first on sys.path, so
# `import redis` is the sdist's; redis_py_expected.py checks that it is.
"$root/tests/fixtures/redis-fixture" run -n 1 -- bash -c \
  'exec python3 -m pytest -p no:cacheprovider -p redis_py_expected -q -rxXf \
     --redis-url="${HRL_FIXTURE_URLS%%,*}/9" "$@" \
     tests/test_lock.py tests/test_asyncio/test_lock.py' _ "$@"
