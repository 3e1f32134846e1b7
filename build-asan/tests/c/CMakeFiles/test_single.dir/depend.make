# Empty dependencies file for test_single.
# This may be replaced when dependencies are built.
