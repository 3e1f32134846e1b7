# The build outputs the suites share, made at nice 19 while c-valgrind runs:
# c-valgrind runs beside nice suites only (scripts/run-tests.sh), and once
# fuzz and sim are done a CPU stays idle for the rest of its tests. Each
# output is built the way, and under the lock, of the suites that use it
# (build/python: scripts/pip-install.sh; build/: build_main; the rock trees
# build/lua/5.1 and 5.4: tests/lua/build-rock.sh; build/hiredis1:
# scripts/hiredis1-compat.sh; build/asan: build_asan; build/dist:
# scripts/dist.sh), in the order those suites start, so that each finds it
# fresh. A suite that starts first builds it itself and this one finds it
# fresh: nothing is built twice, and every suite still builds what it needs
# when run alone.
suite_summary='^prebuild: '
suite_seconds=200 # s, 3 at a time on 2 CPUs: the longest start first
suite_nice=1 # computes only: on the CPU time the other suites leave
suite_run() {
  local start=$SECONDS built=()
  quiet scripts/pip-install.sh pytest=pytest redis=redis \
    pytest_asyncio=pytest-asyncio uvloop=uvloop \
    prometheus_client=prometheus-client && built+=(python) &&
    build_main && built+=(cmake) &&
    quiet tests/lua/build-rock.sh 5.1 && built+=(rock-5.1) &&
    quiet tests/lua/build-rock.sh 5.4 && built+=(rock-5.4) &&
    quiet scripts/hiredis1-compat.sh --build-only && built+=(hiredis1) &&
    build_asan && built+=(asan) &&
    quiet scripts/dist.sh && built+=(dist)
  local rc=$?
  echo "prebuild: ${#built[@]} of 7 outputs fresh (${built[*]})" \
    "in $((SECONDS - start)) s"
  return $rc
}
