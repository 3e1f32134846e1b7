/* The C suite's run of the C bad-input table (bad_inputs.h): every row
 * that needs no server or one healthy master, against a master of the
 * shared fixture. The rows that need misbehaving servers run in the
 * reliability suite (tests/reliability/c/bad_inputs.c), with these. */
#include <stdlib.h>
#include <string.h>

#include "bad_inputs.h"
#include "fixture.h"

int main(void) {
  fixture f;
  fixture_start(&f, 1, NULL);
  char dup[64];
  snprintf(dup, sizeof dup, "redis://localhost:%d", f.port[0]);
  setenv("HRL_BAD_OK", f.url[0], 1);
  setenv("HRL_BAD_OK_SOCK", f.unix_url[0] + strlen("unix://"), 1);
  setenv("HRL_BAD_DUP", dup, 1);
  int bad = bad_inputs_run(BAD_OK, NULL);
  fixture_stop(&f);
  return bad == 0 ? 0 : 1;
}
