file(REMOVE_RECURSE
  "CMakeFiles/test_tls.dir/test_tls.c.o"
  "CMakeFiles/test_tls.dir/test_tls.c.o.d"
  "test_tls"
  "test_tls.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_tls.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
