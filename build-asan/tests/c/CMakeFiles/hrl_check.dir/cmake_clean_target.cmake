file(REMOVE_RECURSE
  "libhrl_check.a"
)
