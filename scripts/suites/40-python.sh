# The Python package: `pip install .` (the extension compiles the C core
# in), then pytest on tests/python from outside the checkout, so the
# installed package is what is tested. Redis comes from tests/fixtures.
suite_summary='^=* ?[0-9]+ (passed|failed).* in [0-9.]+s'
suite_run() {
  local root run_dir rc
  root=$(pwd)
  # pytest, redis-py for the interop tests with redis-py's Lock, and for
  # hiredlock.asyncio pytest-asyncio and uvloop.
  quiet scripts/pip-install.sh pytest=pytest redis=redis \
    pytest_asyncio=pytest-asyncio uvloop=uvloop || return 1
  run_dir=$(mktemp -d)
  (cd "$run_dir" && python3 -m pytest -p no:cacheprovider -q "$root/tests/python")
  rc=$?
  rm -rf "$run_dir"
  return $rc
}
