/* The C worker of tests/workers/c, built as canceller by CMake
 * (tests/reliability/CMakeLists.txt): the reliability cases drive it over
 * the workers' line protocol like the Python and Lua workers (case 7 uses
 * its "cancel"). One translation unit of the worker's files. */
#include "../../workers/c/worker.c"

#include "../../workers/c/cancel.c"
#include "../../workers/c/floor.c"
