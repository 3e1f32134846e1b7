# hiredlock inside a real nginx (Debian's nginx + ngx_lua): the cosocket
# driver, the rock built into a private tree, pytest driving HTTP requests
# against the shared Redis fixtures (tests/nginx/run.sh has the details).
suite_summary='^=* ?[0-9]+ (passed|failed).* in [0-9.]+s'
suite_seconds=75 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  tests/nginx/run.sh
}
