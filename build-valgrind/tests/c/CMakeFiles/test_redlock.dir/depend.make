# Empty dependencies file for test_redlock.
# This may be replaced when dependencies are built.
