file(REMOVE_RECURSE
  "CMakeFiles/test_acl.dir/test_acl.c.o"
  "CMakeFiles/test_acl.dir/test_acl.c.o.d"
  "test_acl"
  "test_acl.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_acl.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
