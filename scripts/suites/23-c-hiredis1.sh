# The core and its C tests built against hiredis 1.x as well as Debian's 0.14.
suite_summary='tests passed, [0-9]+ tests? failed out of'
suite_seconds=136 # alone on 2 CPUs: the longest suites start first
suite_run() {
  scripts/hiredis1-compat.sh
}
