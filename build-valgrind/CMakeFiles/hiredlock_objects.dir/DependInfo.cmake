
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-deploy/core/src/api/client.c" "CMakeFiles/hiredlock_objects.dir/core/src/api/client.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/api/client.c.o.d"
  "/work/wt-deploy/core/src/api/lock.c" "CMakeFiles/hiredlock_objects.dir/core/src/api/lock.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/api/lock.c.o.d"
  "/work/wt-deploy/core/src/driver/conn.c" "CMakeFiles/hiredlock_objects.dir/core/src/driver/conn.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/driver/conn.c.o.d"
  "/work/wt-deploy/core/src/driver/connect.c" "CMakeFiles/hiredlock_objects.dir/core/src/driver/connect.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/driver/connect.c.o.d"
  "/work/wt-deploy/core/src/driver/fanout.c" "CMakeFiles/hiredlock_objects.dir/core/src/driver/fanout.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/driver/fanout.c.o.d"
  "/work/wt-deploy/core/src/driver/sleep.c" "CMakeFiles/hiredlock_objects.dir/core/src/driver/sleep.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/driver/sleep.c.o.d"
  "/work/wt-deploy/core/src/driver/tls.c" "CMakeFiles/hiredlock_objects.dir/core/src/driver/tls.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/driver/tls.c.o.d"
  "/work/wt-deploy/core/src/proto/clock.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/clock.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/clock.c.o.d"
  "/work/wt-deploy/core/src/proto/cluster.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/cluster.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/cluster.c.o.d"
  "/work/wt-deploy/core/src/proto/config.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/config.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/config.c.o.d"
  "/work/wt-deploy/core/src/proto/convert.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/convert.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/convert.c.o.d"
  "/work/wt-deploy/core/src/proto/lock_state.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/lock_state.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/lock_state.c.o.d"
  "/work/wt-deploy/core/src/proto/nodes.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/nodes.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/nodes.c.o.d"
  "/work/wt-deploy/core/src/proto/options.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/options.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/options.c.o.d"
  "/work/wt-deploy/core/src/proto/parser.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/parser.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/parser.c.o.d"
  "/work/wt-deploy/core/src/proto/random.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/random.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/random.c.o.d"
  "/work/wt-deploy/core/src/proto/redlock.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/redlock.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/redlock.c.o.d"
  "/work/wt-deploy/core/src/proto/reply.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/reply.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/reply.c.o.d"
  "/work/wt-deploy/core/src/proto/resp.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/resp.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/resp.c.o.d"
  "/work/wt-deploy/core/src/proto/sentinel.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/sentinel.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/sentinel.c.o.d"
  "/work/wt-deploy/core/src/proto/status.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/status.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/status.c.o.d"
  "/work/wt-deploy/core/src/proto/target.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/target.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/target.c.o.d"
  "/work/wt-deploy/core/src/proto/url.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/url.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/url.c.o.d"
  "/work/wt-deploy/core/src/proto/url_seeds.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/url_seeds.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/url_seeds.c.o.d"
  "/work/wt-deploy/core/src/proto/url_tls.c" "CMakeFiles/hiredlock_objects.dir/core/src/proto/url_tls.c.o" "gcc" "CMakeFiles/hiredlock_objects.dir/core/src/proto/url_tls.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
