# One lock across Python, C, LuaJIT and Lua 5.4: mutual exclusion, stale
# tokens refused, byte-identical keys, tokens and scripts, same messages.
# Each runtime runs what its installer built: build/python (pip), the rock
# trees build/lua/5.1 and build/lua/5.4 (luarocks make), and CMake's
# build/tests/interop/interop_agent.
suite_summary='^=* ?[0-9]+ (passed|failed).* in [0-9.]+s'
suite_seconds=79 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  local root run_dir rc abi init
  root=$(pwd)
  quiet scripts/pip-install.sh pytest=pytest redis=redis || return 1
  quiet tests/lua/build-rock.sh 5.1 || return 1
  quiet tests/lua/build-rock.sh 5.4 || return 1
  build_main interop_agent || return 1
  use_python_build || return 1
  run_dir=$(mktemp -d)
  (cd "$run_dir" && python3 -m pytest -p no:cacheprovider -q \
    "$root/tests/interop")
  rc=$?
  rm -rf "$run_dir"
  return $rc
}
