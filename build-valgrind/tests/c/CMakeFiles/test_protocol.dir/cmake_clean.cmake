file(REMOVE_RECURSE
  "CMakeFiles/test_protocol.dir/test_protocol.c.o"
  "CMakeFiles/test_protocol.dir/test_protocol.c.o.d"
  "test_protocol"
  "test_protocol.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_protocol.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
