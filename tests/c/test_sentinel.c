/* A Sentinel-managed primary as one master (redis+sentinel://) against real
 * sentinels from the launcher (--sentinels): resolved through the
 * sentinels, asked again after a failover (SENTINEL FAILOVER during a run:
 * the deposed primary answers READONLY, or its connections are closed),
 * a sentinel that is down, a service nobody knows, and one member of a
 * quorum. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static hrl_client *client_on(const char *const *urls, size_t n) {
  hrl_options o = check_tolerant_options();
  return check_client(urls, n, &o);
}

static int primary(fixture *fx) {
  char out[16] = "";
  CHECK(fixture_run(fx, "primary", NULL, out, sizeof out));
  return atoi(out);
}

static int failover(fixture *fx, bool demoted) {
  char out[16] = "";
  CHECK(fixture_run(fx, "failover", demoted ? "--demoted" : NULL, out,
                    sizeof out));
  return atoi(out);
}

/* The token on node i, "" when the key is not there. */
static void value_on(fixture *fx, int i, const char *name, char *out,
                     size_t size) {
  fixture_get(fx, i, name, strlen(name), out, size);
}

static void test_resolves_the_primary(void) {
  fixture fx;
  fixture_start(&fx, 2, "--sentinels 2");
  hrl_client *c = client_on((const char *[]){fx.sentinel_url}, 1);
  CHECK(strncmp(hrl_client_master_label(c, 0),
                "hrl (sentinel 127.0.0.1:", 24) == 0);
  hrl_master_info info;
  CHECK(hrl_client_master_info(c, 0, &info) && info.sentinel);
  CHECK_INT(info.port, fx.sentinel_port[0]);
  hrl_lock *lk = check_lock(c, "st:resolve");
  int p = primary(&fx);
  for (int k = 0; k < 5; k++) {
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    char value[64];
    value_on(&fx, p, "st:resolve", value, sizeof value);
    CHECK_STR(value, hrl_lock_token(lk));
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);

  /* The first sentinel down: the next one answers, in the same call. */
  CHECK(fixture_run(&fx, "kill", "s1", NULL, 0));
  c = client_on((const char *[]){fx.sentinel_url}, 1);
  lk = check_lock(c, "st:dead-sentinel");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);

  /* A service no sentinel knows: every sentinel asked, and it is named. */
  char url[1100];
  snprintf(url, sizeof url, "%.*s/nope",
           (int)(strrchr(fx.sentinel_url, '/') - fx.sentinel_url),
           fx.sentinel_url);
  c = client_on((const char *[]){url}, 1);
  lk = check_lock(c, "st:nope");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(lk), "no primary known for service nope");
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

typedef struct looper {
  const char *url;
  atomic_bool *stop;
  long cycles, lost, transient, failures;
  char error[HRL_DETAIL_MAX];
} looper;

/* What a call may meet while the deposed primary closes its clients
 * (Sentinel does, as it turns it into a replica): a command out on a
 * connection that closes before its reply fails that call; the next one
 * asks the sentinels again. */
static bool transient(hrl_status st, const char *error) {
  return st == HRL_ECONNECT &&
         (strstr(error, "server closed the connection") != NULL ||
          strstr(error, "connection reset by peer") != NULL);
}

/* A short TTL: a copy the promoted replica kept of a lock that was then
 * released on the deposed primary stays until its TTL ends. */
#define RUN_TTL_MS 2000

static void *loop_locks(void *arg) {
  looper *l = arg;
  hrl_client *c = client_on((const char *[]){l->url}, 1);
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, "st:run", 6, RUN_TTL_MS, &lk, NULL, 0), HRL_OK);
  while (!atomic_load(l->stop)) {
    hrl_status st = hrl_lock_acquire(lk, 5000);
    if (st != HRL_OK && transient(st, hrl_lock_error(lk))) {
      l->transient++;
      continue;
    }
    if (st != HRL_OK) {
      l->failures++;
      snprintf(l->error, sizeof l->error, "acquire: %s: %s", hrl_strerror(st),
               hrl_lock_error(lk));
      continue;
    }
    usleep(2000);
    st = hrl_lock_release(lk);
    if (st == HRL_ENOTOWNED) {
      l->lost++; /* held on the deposed primary only: the caveat */
    } else if (st != HRL_OK && transient(st, hrl_lock_error(lk))) {
      l->transient++;
    } else if (st != HRL_OK) {
      l->failures++;
      snprintf(l->error, sizeof l->error, "release: %s: %s", hrl_strerror(st),
               hrl_lock_error(lk));
    }
    l->cycles++;
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return NULL;
}

/* SENTINEL FAILOVER while a client loops: every acquire succeeds, before,
 * during and after, and once the old primary is a replica the locks are on
 * the new one. What the failover does is Sentinel's, not ours, and is
 * counted rather than hidden (docs/DEPLOYMENTS.md): a lock taken on the
 * deposed primary after the promotion is lost (its release may say "not
 * owned"), a copy the new primary kept of a lock released on the old one
 * after the promotion is held until its TTL ends (the loop's acquire waits
 * it out: the TTL is shorter than the wait), and a call whose connection
 * the deposed primary closes mid-command fails (a few at most). */
static void test_failover_during_a_run(void) {
  fixture fx;
  fixture_start(&fx, 2, "--sentinels 2");
  int old = primary(&fx);
  atomic_bool stop = false;
  looper l = {fx.sentinel_url, &stop, 0, 0, 0, 0, ""};
  pthread_t thread;
  pthread_create(&thread, NULL, loop_locks, &l);
  usleep(300 * 1000);
  int now = failover(&fx, true);
  CHECK(now != old);
  usleep(500 * 1000);
  /* A lock taken now is on the new primary. */
  hrl_client *c = client_on((const char *[]){fx.sentinel_url}, 1);
  hrl_lock *lk = check_lock(c, "st:after");
  CHECK_STATUS(hrl_lock_acquire(lk, 5000), HRL_OK);
  char value[64];
  value_on(&fx, now, "st:after", value, sizeof value);
  CHECK_STR(value, hrl_lock_token(lk));
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  atomic_store(&stop, true);
  pthread_join(thread, NULL);
  if (l.failures > 0) {
    fprintf(stderr, "looper: %ld failures, last: %s\n", l.failures, l.error);
  }
  CHECK_INT(l.failures, 0);
  CHECK(l.transient <= 3);
  CHECK(l.cycles > 10);
  fprintf(stderr,
          "  %ld cycles across the failover, %ld reported lost, %ld failed "
          "as its connection closed\n",
          l.cycles, l.lost, l.transient);
  usleep((RUN_TTL_MS + 200) * 1000);
  value_on(&fx, now, "st:run", value, sizeof value);
  CHECK_STR(value, ""); /* nothing outlives its TTL */
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* The primary dies: the sentinels fail over on their own (down after 1 s),
 * and the client, asking them again after each failure, gets there. */
static void test_primary_killed(void) {
  fixture fx;
  fixture_start(&fx, 2, "--sentinels 2");
  hrl_client *c = client_on((const char *[]){fx.sentinel_url}, 1);
  hrl_lock *lk = check_lock(c, "st:killed");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  int old = primary(&fx);
  CHECK(fixture_ctl(&fx, "kill", old, NULL));
  hrl_status st = HRL_ECONNECT;
  int64_t t0 = hrl_now_us();
  while (st != HRL_OK && hrl_now_us() - t0 < 30 * 1000000LL) {
    st = hrl_lock_acquire(lk, 500);
    if (st != HRL_OK) {
      CHECK(st == HRL_ECONNECT || st == HRL_ESERVER);
      usleep(100 * 1000);
    }
  }
  CHECK_STATUS(st, HRL_OK);
  int now = primary(&fx);
  CHECK(now != old);
  char value[64];
  value_on(&fx, now, "st:killed", value, sizeof value);
  CHECK_STR(value, hrl_lock_token(lk));
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* One member of a quorum, with two standalone masters. */
static void test_one_member_of_a_quorum(void) {
  fixture fx, solo;
  fixture_start(&fx, 2, "--sentinels 1");
  fixture_start(&solo, 2, NULL);
  const char *urls[] = {fx.sentinel_url, solo.urls[0], solo.urls[1]};
  hrl_client *c = client_on(urls, 3);
  CHECK_INT(hrl_client_quorum(c), 2);
  hrl_lock *lk = check_lock(c, "st:member");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  hrl_counts n;
  hrl_lock_counts(lk, &n);
  CHECK_INT(n.ok, 3);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&solo);
  fixture_stop(&fx);
}

int main(void) {
  RUN(test_resolves_the_primary);
  RUN(test_one_member_of_a_quorum);
  RUN(test_primary_killed);
  RUN(test_failover_during_a_run);
  return finish_tests("test_sentinel");
}
