file(REMOVE_RECURSE
  "CMakeFiles/test_redlock.dir/test_redlock.c.o"
  "CMakeFiles/test_redlock.dir/test_redlock.c.o.d"
  "test_redlock"
  "test_redlock.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_redlock.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
