# Empty dependencies file for hiredlock_shared.
# This may be replaced when dependencies are built.
