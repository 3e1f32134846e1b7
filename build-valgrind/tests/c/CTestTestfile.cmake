# CMake generated Testfile for 
# Source directory: /work/wt-deploy/tests/c
# Build directory: /work/wt-deploy/build-valgrind/tests/c
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test(test_inputs "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_inputs")
set_tests_properties(test_inputs PROPERTIES  _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;13;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_protocol "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_protocol")
set_tests_properties(test_protocol PROPERTIES  _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;13;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_bad_inputs "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_bad_inputs")
set_tests_properties(test_bad_inputs PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;22;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_single "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_single")
set_tests_properties(test_single PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;30;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_redlock "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_redlock")
set_tests_properties(test_redlock PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;30;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_faults "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_faults")
set_tests_properties(test_faults PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;30;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_correctness "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_correctness")
set_tests_properties(test_correctness PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;30;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_tls "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_tls")
set_tests_properties(test_tls PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;30;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_cluster "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_cluster")
set_tests_properties(test_cluster PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;30;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_sentinel "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_sentinel")
set_tests_properties(test_sentinel PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;30;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
add_test(test_acl "valgrind" "-q" "--error-exitcode=99" "--leak-check=full" "--errors-for-leak-kinds=definite,indirect,possible" "--show-leak-kinds=definite,indirect,possible" "/work/wt-deploy/build-valgrind/tests/c/test_acl")
set_tests_properties(test_acl PROPERTIES  TIMEOUT "600" _BACKTRACE_TRIPLES "/work/wt-deploy/tests/c/CMakeLists.txt;30;add_test;/work/wt-deploy/tests/c/CMakeLists.txt;0;")
