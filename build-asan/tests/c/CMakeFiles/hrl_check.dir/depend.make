# Empty dependencies file for hrl_check.
# This may be replaced when dependencies are built.
