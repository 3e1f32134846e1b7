# Empty compiler generated dependencies file for test_acl.
# This may be replaced when dependencies are built.
