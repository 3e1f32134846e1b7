# The C core's layers include one way, api -> driver -> proto, and proto/
# includes no socket, poll or hiredis header (scripts/check-layers.py).
suite_summary='^layers: '
suite_seconds=1 # s, 3 at a time on 2 CPUs: the longest start first
suite_nice=1 # computes only: on the CPU time the other suites leave
suite_run() {
  python3 scripts/check-layers.py
}
