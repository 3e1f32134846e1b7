# redis-py's own lock tests (redis-py 8.1.0's tests/test_lock.py and
# tests/test_asyncio/test_lock.py, from its PyPI sdist) with
# hiredlock.redis_py's Lock and AsyncLock swapped in: every test passes but
# the ones docs/MIGRATING.md lists, which are strict expected failures
# (tests/redis_py/run.sh has the details).
suite_summary='^=* ?[0-9]+ (passed|failed).* in [0-9.]+s'
suite_seconds=13 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  tests/redis_py/run.sh
}
