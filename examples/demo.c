/* `make demo`: a lock on 5 local masters, told as it happens.
 * Run through the fixture launcher, which starts the masters and tells us
 * their URLs (HRL_FIXTURE_URLS) and how to kill them (HRL_FIXTURE). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hiredlock.h"

static int64_t t_start;

static void say(const char *who, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(const char *who, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("[%5lld ms] %-8s ", (long long)((hrl_now_us() - t_start) / 1000), who);
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
}

static void describe(const char *who, hrl_lock *lk, hrl_status st) {
  hrl_counts c;
  hrl_lock_counts(lk, &c);
  char msg[HRL_DETAIL_MAX + 64];
  if (st == HRL_OK) {
    say(who,
        "acquired: %u of %u masters said yes (quorum %u), valid %lld ms,"
        " token %.8s...",
        c.ok, c.masters, c.quorum, (long long)hrl_lock_validity_ms(lk),
        hrl_lock_token(lk));
  } else {
    say(who, "not acquired: %s",
        hrl_format_error(st, hrl_lock_error(lk), msg, sizeof msg));
  }
}

typedef struct worker {
  hrl_client *client;
  const char *who;
  int64_t wait_ms;
  int hold_ms;
} worker;

static void *contend(void *arg) {
  worker *w = arg;
  hrl_lock *lk = NULL;
  hrl_lock_new(w->client, "demo:nightly-report", 19, 10000, &lk, NULL, 0);
  say(w->who, "wants demo:nightly-report (waits up to %lld ms)",
      (long long)w->wait_ms);
  hrl_status st = hrl_lock_acquire(lk, w->wait_ms);
  describe(w->who, lk, st);
  if (st == HRL_OK) {
    say(w->who, "working for %d ms...", w->hold_ms);
    usleep((useconds_t)w->hold_ms * 1000);
    st = hrl_lock_release(lk);
    say(w->who, "released: %s", hrl_strerror(st));
  }
  hrl_lock_free(lk);
  return NULL;
}

static void kill_master(int i) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "\"%s\" kill \"%s\" %d", getenv("HRL_FIXTURE"),
           getenv("HRL_FIXTURE_DIR"), i);
  if (system(cmd) != 0) {
    fprintf(stderr, "demo: could not kill master %d\n", i);
    exit(1);
  }
}

int main(void) {
  const char *list = getenv("HRL_FIXTURE_URLS");
  if (list == NULL || getenv("HRL_FIXTURE") == NULL) {
    fprintf(stderr, "run me with: tests/fixtures/redis-fixture run -n 5 -- "
                    "build/examples/hiredlock-demo\n");
    return 2;
  }
  char *copy = strdup(list);
  const char *urls[HRL_MASTERS_MAX];
  size_t n = 0;
  for (char *u = strtok(copy, ","); u != NULL && n < HRL_MASTERS_MAX;
       u = strtok(NULL, ",")) {
    urls[n++] = u;
  }
  hrl_options opts;
  hrl_options_init(&opts);
  opts.retry_delay_ms = 50;
  opts.retry_jitter_ms = 25;
  hrl_client *a = NULL, *b = NULL;
  char detail[HRL_DETAIL_MAX];
  if (hrl_client_new(urls, n, &opts, &a, detail, sizeof detail) != HRL_OK ||
      hrl_client_new(urls, n, &opts, &b, detail, sizeof detail) != HRL_OK) {
    fprintf(stderr, "demo: %s\n", detail);
    return 1;
  }
  t_start = hrl_now_us();
  printf("hiredlock %s demo: one lock on %zu independent Redis masters "
         "(quorum %zu)\n",
         HIREDLOCK_VERSION, n, hrl_client_quorum(a));
  for (size_t i = 0; i < n; i++) {
    /* The client's label (host:port or the socket path), never the URL:
     * a URL may carry a password. */
    printf("  master %zu: %s\n", i + 1, hrl_client_master_label(a, i));
  }

  printf("\n1. Two holders contend for the same name\n");
  worker wa = {a, "alice", 0, 600}, wb = {b, "bob", 2000, 100};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, contend, &wa);
  usleep(100 * 1000);
  pthread_create(&tb, NULL, contend, &wb);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);

  printf("\n2. Masters 2 and 4 are killed: 3 of 5 is still a quorum\n");
  kill_master(2);
  kill_master(4);
  say("demo", "killed masters 2 and 4");
  hrl_lock *lk = NULL;
  hrl_lock_new(a, "demo:nightly-report", 19, 10000, &lk, NULL, 0);
  int64_t t0 = hrl_now_us();
  hrl_status st = hrl_lock_acquire(lk, 1000);
  describe("alice", lk, st);
  say("alice", "that took %lld ms", (long long)((hrl_now_us() - t0) / 1000));
  if (st == HRL_OK) {
    hrl_lock_release(lk);
  }

  printf("\n3. Master 5 is killed too: 2 of 5 can never make a quorum\n");
  kill_master(5);
  say("demo", "killed master 5");
  t0 = hrl_now_us();
  hrl_status st3 = hrl_lock_acquire(lk, 0);
  describe("alice", lk, st3);
  say("alice", "with no wait it fails at once: %lld ms",
      (long long)((hrl_now_us() - t0) / 1000));
  t0 = hrl_now_us();
  hrl_status st4 = hrl_lock_acquire(lk, 1000);
  describe("alice", lk, st4);
  say("alice",
      "willing to wait 1000 ms, it kept trying (a master may come back) "
      "and said why at its deadline: %lld ms",
      (long long)((hrl_now_us() - t0) / 1000));

  hrl_lock_free(lk);
  hrl_client_free(a);
  hrl_client_free(b);
  free(copy);
  bool as_expected = st == HRL_OK && st3 == HRL_ECONNECT && st4 == HRL_ECONNECT;
  printf("\ndemo %s\n",
         as_expected ? "finished as expected" : "did NOT behave as expected");
  return as_expected ? 0 : 1;
}
