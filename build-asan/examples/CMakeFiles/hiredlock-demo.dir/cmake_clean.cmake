file(REMOVE_RECURSE
  "CMakeFiles/hiredlock-demo.dir/demo.c.o"
  "CMakeFiles/hiredlock-demo.dir/demo.c.o.d"
  "hiredlock-demo"
  "hiredlock-demo.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/hiredlock-demo.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
