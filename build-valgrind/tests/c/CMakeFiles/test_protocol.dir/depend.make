# Empty dependencies file for test_protocol.
# This may be replaced when dependencies are built.
