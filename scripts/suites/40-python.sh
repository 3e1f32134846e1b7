# The Python package: `pip install --target build/python` (the extension
# compiles the C core in; scripts/pip-install.sh), then pytest on tests/python
# from outside the checkout with build/python first on PYTHONPATH, so the
# installed package is what is tested. Redis comes from tests/fixtures.
suite_summary='^=* ?[0-9]+ (passed|failed).* in [0-9.]+s'
suite_seconds=400 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  local root run_dir rc
  root=$(pwd)
  # pytest, redis-py for the interop tests with redis-py's Lock, and for
  # hiredlock.asyncio pytest-asyncio and uvloop.
  quiet scripts/pip-install.sh pytest=pytest redis=redis \
    pytest_asyncio=pytest-asyncio uvloop=uvloop \
    prometheus_client=prometheus-client || return 1
  use_python_build || return 1
  run_dir=$(mktemp -d)
  (cd "$run_dir" && python3 -m pytest -p no:cacheprovider -q "$root/tests/python")
  rc=$?
  rm -rf "$run_dir"
  return $rc
}
