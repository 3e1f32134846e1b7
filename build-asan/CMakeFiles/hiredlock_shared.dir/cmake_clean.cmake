file(REMOVE_RECURSE
  "libhiredlock.pdb"
  "libhiredlock.so"
  "libhiredlock.so.0"
  "libhiredlock.so.0.1.0"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/hiredlock_shared.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
