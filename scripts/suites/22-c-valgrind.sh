# The C tests under valgrind memcheck: any error or leak (but "still
# reachable") fails the test. The stress tests (label stress: thousands of
# grants under faults) run under valgrind in make reliability only; here they
# run in the c, c-asan and c-hiredis1 suites (scripts/c-valgrind.sh).
suite_summary='tests passed, [0-9]+ tests? failed out of'
suite_seconds=250 # s, 3 at a time on 2 CPUs: the longest start first
# Beside nice suites only (scripts/run-tests.sh): under valgrind a test's
# own client needs a CPU to meet its 100 ms connect and 50 ms reply
# deadlines; beside the python and lua suites it missed them.
suite_alone=1
suite_run() {
  scripts/c-valgrind.sh -LE stress
}
