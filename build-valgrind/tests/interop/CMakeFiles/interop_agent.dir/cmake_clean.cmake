file(REMOVE_RECURSE
  "CMakeFiles/interop_agent.dir/agent.c.o"
  "CMakeFiles/interop_agent.dir/agent.c.o.d"
  "interop_agent"
  "interop_agent.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/interop_agent.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
