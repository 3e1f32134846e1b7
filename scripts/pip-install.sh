#!/usr/bin/env bash
# Installs the Python package from this checkout (warnings as errors) plus
# the named test dependencies that are missing, into the python3 on PATH.
#   scripts/pip-install.sh [module=pip-name ...]   e.g. pytest=pytest redis=redis
set -euo pipefail
cd "$(dirname "$0")/.."
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
  python3 -c "import ${pair%%=*}" 2>/dev/null || missing+=("${pair#*=}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pip-install: installing ${missing[*]}"
  "${pip[@]}" "${missing[@]}"
fi
HIREDLOCK_WERROR=1 "${pip[@]}" .
