# Empty dependencies file for test_tls.
# This may be replaced when dependencies are built.
