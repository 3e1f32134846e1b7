#include "check.h"

#include <time.h>
#include <unistd.h>

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
  hrl_reply r = {.type = HRL_REPLY_STATUS, .str = s, .len = strlen(s)};
  return r;
}

hrl_reply error_reply(const char *s) {
  hrl_reply r = {.type = HRL_REPLY_ERROR, .str = s, .len = strlen(s)};
  return r;
}

hrl_reply int_reply(long long v) {
  hrl_reply r = {.type = HRL_REPLY_INTEGER, .integer = v};
  return r;
}

void reply_ok(hrl_lock *lk, size_t i) {
  hrl_reply r = status_reply("OK");
  hrl_proto_reply(lk, i, &r);
}

void reply_int(hrl_lock *lk, size_t i, long long v) {
  hrl_reply r = int_reply(v);
  hrl_proto_reply(lk, i, &r);
}

int64_t check_run_delay_us(void) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  if (f == NULL) {
    return 0;
  }
  unsigned long long on_cpu = 0, waiting = 0;
  int got = fscanf(f, "%llu %llu", &on_cpu, &waiting);
  fclose(f);
  return got == 2 ? (int64_t)(waiting / 1000) : 0;
}

hrl_options check_tolerant_options(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.connect_timeout_ms = 1000;
  o.timeout_ms = 500;
  o.retry_delay_ms = 10;
  o.retry_jitter_ms = 5;
  return o;
}

hrl_client *check_client(const char *const *urls, size_t n,
                         const hrl_options *o) {
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX];
  hrl_status st = hrl_client_new(urls, n, o, &c, d, sizeof d);
  if (st != HRL_OK) {
    fprintf(stderr, "check_client: %s\n", d);
  }
  CHECK_STATUS(st, HRL_OK);
  return c;
}

hrl_lock *check_lock(hrl_client *c, const char *name) {
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, name, strlen(name), 30000, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

hrl_reply nil_reply(void) {
  hrl_reply r = {.type = HRL_REPLY_NIL};
  return r;
}

size_t read_all(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t r = read(fd, (char *)buf + got, len - got);
    if (r <= 0) {
      break;
    }
    got += (size_t)r;
  }
  return got;
}
