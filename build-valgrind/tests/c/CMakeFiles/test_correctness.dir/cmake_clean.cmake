file(REMOVE_RECURSE
  "CMakeFiles/test_correctness.dir/test_correctness.c.o"
  "CMakeFiles/test_correctness.dir/test_correctness.c.o.d"
  "test_correctness"
  "test_correctness.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_correctness.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
