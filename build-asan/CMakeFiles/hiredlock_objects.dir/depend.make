# Empty dependencies file for hiredlock_objects.
# This may be replaced when dependencies are built.
