file(REMOVE_RECURSE
  "libhiredlock.a"
  "libhiredlock.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/hiredlock_static.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
