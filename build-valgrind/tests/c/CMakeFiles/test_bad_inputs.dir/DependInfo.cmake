
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-deploy/tests/c/bad_inputs_args.c" "tests/c/CMakeFiles/test_bad_inputs.dir/bad_inputs_args.c.o" "gcc" "tests/c/CMakeFiles/test_bad_inputs.dir/bad_inputs_args.c.o.d"
  "/work/wt-deploy/tests/c/bad_inputs_deploy.c" "tests/c/CMakeFiles/test_bad_inputs.dir/bad_inputs_deploy.c.o" "gcc" "tests/c/CMakeFiles/test_bad_inputs.dir/bad_inputs_deploy.c.o.d"
  "/work/wt-deploy/tests/c/bad_inputs_run.c" "tests/c/CMakeFiles/test_bad_inputs.dir/bad_inputs_run.c.o" "gcc" "tests/c/CMakeFiles/test_bad_inputs.dir/bad_inputs_run.c.o.d"
  "/work/wt-deploy/tests/c/bad_inputs_state.c" "tests/c/CMakeFiles/test_bad_inputs.dir/bad_inputs_state.c.o" "gcc" "tests/c/CMakeFiles/test_bad_inputs.dir/bad_inputs_state.c.o.d"
  "/work/wt-deploy/tests/c/test_bad_inputs.c" "tests/c/CMakeFiles/test_bad_inputs.dir/test_bad_inputs.c.o" "gcc" "tests/c/CMakeFiles/test_bad_inputs.dir/test_bad_inputs.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-deploy/build-valgrind/tests/c/CMakeFiles/hrl_check.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
