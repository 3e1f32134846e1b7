# The core and its C tests built against hiredis 1.x as well as Debian's 0.14.
suite_summary='tests passed, [0-9]+ tests? failed out of'
suite_seconds=180 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  scripts/hiredis1-compat.sh
}
