file(REMOVE_RECURSE
  "libhiredlock.a"
)
