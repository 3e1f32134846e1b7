#!/usr/bin/env bash
# Installs the Python package from this checkout with pip into build/python
# (`pip install --target`, warnings as errors; against the system's hiredis
# and OpenSSL, both required, where a user's build would bundle hiredis and
# take OpenSSL when present: setup.py), the one Python build every
# suite puts first on PYTHONPATH; plus the named test dependencies that are
# missing, into the python3 on PATH. The package is rebuilt only when its
# sources (or python3) changed since the last install.
#   scripts/pip-install.sh [module=pip-name ...]   e.g. pytest=pytest redis=redis
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
# One install at a time: suites run side by side (scripts/run-tests.sh), and
# the second finds build/python fresh.
mkdir -p build/locks
exec 9>build/locks/python.lock
flock_9
pip=(python3 -m pip install -q --disable-pip-version-check)
# A distribution's own python3 (PEP 668) refuses installs unless told.
if python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"),
                                         "EXTERNALLY-MANAGED")))'; then
  pip+=(--break-system-packages)
fi
[ "$(id -u)" -eq 0 ] && pip+=(--root-user-action=ignore)
missing=()
for pair in "$@"; do
  # From /: here, build/ would pass for the module `build`.
  (cd / && python3 -c "import ${pair%%=*}") 2>/dev/null ||
    missing+=("${pair#*=}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pip-install: installing ${missing[*]}"
  "${pip[@]}" "${missing[@]}"
fi

out=build/python
key="$(fingerprint core bindings/python python setup.py pyproject.toml \
  MANIFEST.in vendor) $(python3 -c 'import sys; print(sys.version)')"
fresh "$out.stamp" "$key" && [ -d "$out/hiredlock" ] && exit 0
mkdir -p build
rm -rf "$out.new" "$out.stamp"
HIREDLOCK_WERROR=1 HIREDLOCK_HIREDIS=system HIREDLOCK_TLS=on "${pip[@]}" --no-deps --target "$out.new" .
rm -rf "$out"
mv "$out.new" "$out"
echo "$key" >"$out.stamp"
