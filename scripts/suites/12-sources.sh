# One list of the core's sources: core/sources.txt, what CMake and setup.py
# compile, the rockspec and the .c files in core/src/ agree; then the same
# check on copies of the tree with one drift each must fail on every one
# (scripts/check-sources.py).
suite_summary='^sources: '
suite_seconds=7 # s, 3 at a time on 2 CPUs: the longest start first
suite_nice=1 # computes only: on the CPU time the other suites leave
suite_run() {
  python3 scripts/check-sources.py
}
