# The docs run as written: every fenced example of README.md and docs/*.md
# carries a marker (run, file or fragment; tests/docs/examples.py), and
# tests/docs/run_examples.py runs the runnable ones against three fixture
# masters with what the installers built (build/python, the rock trees
# build/lua/5.1 and 5.4, CMake's build/libhiredlock.a) and a real nginx,
# whose complete config it also checks in Debian's stock layout.
suite_summary='^docs: '
suite_seconds=10 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  quiet scripts/pip-install.sh redis=redis || return 1
  quiet tests/lua/build-rock.sh 5.1 || return 1
  quiet tests/lua/build-rock.sh 5.4 || return 1
  build_main hiredlock_static || return 1
  use_python_build || return 1
  python3 tests/docs/run_examples.py
}
