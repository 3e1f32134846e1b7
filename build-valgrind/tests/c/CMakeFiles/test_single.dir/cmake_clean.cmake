file(REMOVE_RECURSE
  "CMakeFiles/test_single.dir/test_single.c.o"
  "CMakeFiles/test_single.dir/test_single.c.o.d"
  "test_single"
  "test_single.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_single.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
