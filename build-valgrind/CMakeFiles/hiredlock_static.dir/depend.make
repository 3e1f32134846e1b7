# Empty dependencies file for hiredlock_static.
# This may be replaced when dependencies are built.
