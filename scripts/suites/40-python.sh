# The Python package: `pip install .` (the extension compiles the C core
# in), then pytest on tests/python from outside the checkout, so the
# installed package is what is tested. Redis comes from tests/fixtures.
suite_summary='^=* ?[0-9]+ (passed|failed).* in [0-9.]+s'
suite_run() {
  local root missing=() run_dir rc pip=(python3 -m pip install -q
    --disable-pip-version-check)
  root=$(pwd)
  # A distribution's own python3 (PEP 668) refuses user installs unless told.
  if python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"),
                                         "EXTERNALLY-MANAGED")))'; then
    pip+=(--break-system-packages)
  fi
  [ "$(id -u)" -eq 0 ] && pip+=(--root-user-action=ignore)
  python3 -c 'import pytest' 2>/dev/null || missing+=(pytest)
  python3 -c 'import redis' 2>/dev/null || missing+=(redis) # interop tests
  if [ ${#missing[@]} -gt 0 ]; then
    echo "python: installing ${missing[*]}"
    quiet "${pip[@]}" "${missing[@]}" || return 1
  fi
  HIREDLOCK_WERROR=1 quiet "${pip[@]}" . || return 1
  run_dir=$(mktemp -d)
  (cd "$run_dir" && python3 -m pytest -p no:cacheprovider -q "$root/tests/python")
  rc=$?
  rm -rf "$run_dir"
  return $rc
}
