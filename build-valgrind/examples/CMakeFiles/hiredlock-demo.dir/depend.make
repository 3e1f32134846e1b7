# Empty dependencies file for hiredlock-demo.
# This may be replaced when dependencies are built.
