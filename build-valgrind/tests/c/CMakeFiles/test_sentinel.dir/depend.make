# Empty dependencies file for test_sentinel.
# This may be replaced when dependencies are built.
