# Empty dependencies file for test_correctness.
# This may be replaced when dependencies are built.
