# CMake generated Testfile for 
# Source directory: /work/wt-deploy/tests/interop
# Build directory: /work/wt-deploy/build-asan/tests/interop
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
