file(REMOVE_RECURSE
  "CMakeFiles/hrl_check.dir/check.c.o"
  "CMakeFiles/hrl_check.dir/check.c.o.d"
  "CMakeFiles/hrl_check.dir/fixture.c.o"
  "CMakeFiles/hrl_check.dir/fixture.c.o.d"
  "libhrl_check.a"
  "libhrl_check.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/hrl_check.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
