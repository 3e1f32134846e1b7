#!/usr/bin/env bash
# Installs python3's wheel of `make dist` (build/dist: hiredis 1.2 compiled
# in, OpenSSL bundled by auditwheel) into build/bench/ab-wheel, for the
# Python cycle of the wheel beside that of the suites' build (build/python:
# the system's hiredis and OpenSSL) in one run:
#   bench/ab-wheel.sh
#   bench/run.sh --phases main --ab-python build/bench/ab-wheel \
#     --cases py-n1,ab-py-n1,py-n5,ab-py-n5 --reps 41
# adds ab-py-n1 and ab-py-n5; the paired ratio py-nN over ab-py-nN is what
# the wheel costs (or saves) against the build the suites test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/dist.sh >/dev/null
tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
whl=$(echo build/dist/hiredlock-*-"$tag"-"$tag"-manylinux_*.whl)
[ -f "$whl" ] || { echo "ab-wheel: no $tag wheel in build/dist" >&2; exit 1; }
out=build/bench/ab-wheel
rm -rf "$out"
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
  --no-deps --target "$out" "$whl"
echo "$out"
