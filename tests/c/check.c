#include "check.h"

#include <time.h>

int check_failures = 0;
static int tests_run = 0;
static int tests_failed = 0;

void run_test(const char *name, test_fn fn) {
  int before = check_failures;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fn();
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
              (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  tests_run++;
  bool ok = check_failures == before;
  tests_failed += !ok;
  printf("%-52s %s (%.0f ms)\n", name, ok ? "ok" : "FAILED", ms);
  fflush(stdout);
}

int finish_tests(const char *suite) {
  printf("%s: %d tests, %d failed\n", suite, tests_run, tests_failed);
  return tests_failed == 0 ? 0 : 1;
}

hrl_reply status_reply(const char *s) {
  hrl_reply r = {HRL_REPLY_STATUS, 0, s, strlen(s)};
  return r;
}

hrl_reply error_reply(const char *s) {
  hrl_reply r = {HRL_REPLY_ERROR, 0, s, strlen(s)};
  return r;
}

hrl_reply int_reply(long long v) {
  hrl_reply r = {HRL_REPLY_INTEGER, v, NULL, 0};
  return r;
}

hrl_reply nil_reply(void) {
  hrl_reply r = {HRL_REPLY_NIL, 0, NULL, 0};
  return r;
}
