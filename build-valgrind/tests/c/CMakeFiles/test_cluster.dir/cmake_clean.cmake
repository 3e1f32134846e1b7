file(REMOVE_RECURSE
  "CMakeFiles/test_cluster.dir/test_cluster.c.o"
  "CMakeFiles/test_cluster.dir/test_cluster.c.o.d"
  "test_cluster"
  "test_cluster.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_cluster.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
