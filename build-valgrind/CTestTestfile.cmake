# CMake generated Testfile for 
# Source directory: /work/wt-deploy
# Build directory: /work/wt-deploy/build-valgrind
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("tests/c")
subdirs("tests/interop")
subdirs("examples")
