# The Lua rock under LuaJIT: luarocks make, then the whole busted suite
# (tests/lua/run.sh has the details).
suite_summary='[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending'
suite_seconds=145 # s, 3 at a time on 2 CPUs: the longest start first
suite_run() {
  tests/lua/run.sh luajit
}
