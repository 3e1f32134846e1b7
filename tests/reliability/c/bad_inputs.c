/* The reliability side of the C bad-input table (tests/c/bad_inputs.h, the
 * table the C suite runs too): every row, the BAD_ENV ones against the
 * HRL_BAD_* servers of tests/reliability/hrlrel/badenv.py, the observed
 * outcomes written as JSON for docs/RELIABILITY.md.
 *   bad_inputs OUT.json       (run by tests/reliability/run_bad.py)
 * One translation unit of the table's files (a CMake target, linked with
 * the library: tests/reliability/CMakeLists.txt). */
#include "../../c/bad_inputs_args.c"
#include "../../c/bad_inputs_deploy.c"
#include "../../c/bad_inputs_run.c"
#include "../../c/bad_inputs_state.c"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bad_inputs OUT.json\n");
    return 2;
  }
  FILE *out = fopen(argv[1], "w");
  if (out == NULL) {
    perror(argv[1]);
    return 2;
  }
  int bad = bad_inputs_run(BAD_ENV, out);
  fclose(out);
  return bad == 0 ? 0 : 1;
}
