file(REMOVE_RECURSE
  "CMakeFiles/test_sentinel.dir/test_sentinel.c.o"
  "CMakeFiles/test_sentinel.dir/test_sentinel.c.o.d"
  "test_sentinel"
  "test_sentinel.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_sentinel.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
