/* The C worker of tests/workers/c, built as build-reliability/c/canceller:
 * tests/reliability/build.sh compiles tests/reliability/c/<prog>.c with the
 * core for each program the reliability cases run, and "canceller" is the
 * name it builds. The cases drive this binary over the workers' line
 * protocol like the Python and Lua workers (case 7 uses its "cancel").
 * One translation unit of the worker's files, so build.sh needs no list. */
#include "../../workers/c/worker.c"

#include "../../workers/c/cancel.c"
#include "../../workers/c/floor.c"
