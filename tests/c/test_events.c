/* Events and counters against real servers: none on the fast path; a
 * master killed and restarted (down, then up); a lease whose key was
 * deleted (lost) and one whose masters stopped (renewals failed while
 * still valid, then lost); a slow wait; a release that skips a gone
 * waiter; and the queue bindings take events from. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

/* Events as a callback sees them, from any thread. */
typedef struct log {
  pthread_mutex_t mu;
  int n;
  hrl_event_kind kind[64];
  char text[64][300];
  int64_t ms[64];
  hrl_status status[64];
} log;

static void record(const hrl_event *ev, void *ud) {
  log *l = ud;
  pthread_mutex_lock(&l->mu);
  if (l->n < 64) {
    l->kind[l->n] = ev->kind;
    l->ms[l->n] = ev->ms;
    l->status[l->n] = ev->status;
    hrl_event_format(ev, l->text[l->n], sizeof l->text[l->n]);
    l->n++;
  }
  pthread_mutex_unlock(&l->mu);
}

static void log_init(log *l) {
  memset(l, 0, sizeof *l);
  pthread_mutex_init(&l->mu, NULL);
}

/* The index of the first event of kind, waiting up to ms for it; -1. */
static int await_event(log *l, hrl_event_kind kind, int ms) {
  for (int t = 0; t <= ms; t += 10) {
    pthread_mutex_lock(&l->mu);
    for (int k = 0; k < l->n; k++) {
      if (l->kind[k] == kind) {
        pthread_mutex_unlock(&l->mu);
        return k;
      }
    }
    pthread_mutex_unlock(&l->mu);
    usleep(10 * 1000);
  }
  return -1;
}

static hrl_client *watched(fixture *f, log *l, uint32_t slow_wait_ms) {
  hrl_options o = check_tolerant_options();
  o.slow_wait_ms = slow_wait_ms;
  hrl_client *c = fixture_client(f, &o);
  hrl_client_on_event(c, record, l);
  return c;
}

static hrl_lock *lease(hrl_client *c, const char *name, uint32_t ttl_ms) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.ttl_ms = ttl_ms;
  lo.auto_renew = true;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new_with(c, name, strlen(name), &lo, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

static void test_nothing_on_the_fast_path(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  log l;
  log_init(&l);
  hrl_client *c = watched(&fx, &l, 0); /* even a threshold of 0 */
  hrl_lock *lk = check_lock(c, "fast");
  for (int k = 0; k < 200; k++) {
    CHECK_STATUS(hrl_lock_acquire(lk, 1000), HRL_OK);
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  }
  CHECK_INT(l.n, 0);
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.acquired, 200);
  CHECK_INT(s.released, 200);
  CHECK_INT(s.waited, 0);
  CHECK_INT(s.masters, 3);
  uint64_t bucketed = 0;
  for (size_t k = 0; k <= HRL_WAIT_BUCKETS; k++) {
    bucketed += s.wait_buckets[k];
  }
  CHECK_INT(bucketed, 200);
  CHECK(s.wait_sum_us > 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_a_master_goes_and_comes_back(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  log l;
  log_init(&l);
  hrl_client *c = watched(&fx, &l, 1000);
  hrl_lock *lk = check_lock(c, "masters");
  CHECK(fixture_ctl(&fx, "kill", 2, NULL));
  for (int k = 0; k < 3; k++) { /* down once, not at every round */
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  }
  CHECK(fixture_ctl(&fx, "restart", 2, NULL));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(l.n, 2);
  char want[128];
  snprintf(want, sizeof want,
           "master %s unreachable: ", hrl_client_master_label(c, 1));
  CHECK_INT(l.kind[0], HRL_EVENT_MASTER_DOWN);
  CHECK_CONTAINS(l.text[0], want);
  CHECK_INT(l.kind[1], HRL_EVENT_MASTER_UP);
  CHECK(l.ms[1] > 0);
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.master[1].unreachable, 6);
  CHECK_INT(s.master[0].unreachable + s.master[2].unreachable, 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_leases_lost_and_renewals_failed(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  log l;
  log_init(&l);
  hrl_client *c = watched(&fx, &l, 1000);
  /* Taken from under it: the next renewal finds the key not ours. */
  hrl_lock *lk = lease(c, "taken", 1500);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  for (int node = 1; node <= 3; node++) {
    freeReplyObject(fixture_cmd(&fx, node, "SET taken someone-else"));
  }
  int k = await_event(&l, HRL_EVENT_LOST, 6000);
  CHECK(k >= 0);
  CHECK_STR(k >= 0 ? l.text[k] : NULL, "lock 'taken' lost: not owned");
  CHECK_STATUS(hrl_lock_release(lk), HRL_ELOST);
  hrl_lock_free(lk);

  /* Two masters of three stop answering: renewals fail, the lease is
   * still valid for a while, then lost when the validity runs out. */
  log_init(&l);
  lk = lease(c, "stopped", 3000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK(fixture_ctl(&fx, "pause", 1, NULL));
  CHECK(fixture_ctl(&fx, "pause", 2, NULL));
  k = await_event(&l, HRL_EVENT_RENEW_FAILED, 8000);
  CHECK(k >= 0);
  CHECK(k >= 0 && l.ms[k] > 0 && l.ms[k] < 3000);
  CHECK_CONTAINS(k >= 0 ? l.text[k] : NULL,
                 "lock 'stopped' renewal failed, still valid for ");
  CHECK_CONTAINS(k >= 0 ? l.text[k] : NULL, "masters confirmed");
  k = await_event(&l, HRL_EVENT_LOST, 8000);
  CHECK_CONTAINS(k >= 0 ? l.text[k] : NULL, "lock 'stopped' lost: expired: ");
  CHECK(await_event(&l, HRL_EVENT_MASTER_DOWN, 0) >= 0);
  CHECK(fixture_ctl(&fx, "resume", 1, NULL));
  CHECK(fixture_ctl(&fx, "resume", 2, NULL));
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.losses, 2);
  CHECK(s.renewals_failed >= 1);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

typedef struct waiting {
  hrl_lock *lk;
  int64_t wait_ms;
  hrl_status st;
} waiting;

static void *wait_for(void *arg) {
  waiting *w = arg;
  w->st = hrl_lock_acquire(w->lk, w->wait_ms);
  return NULL;
}

static void await_queued(fixture *f, const char *queue, long long n) {
  for (int k = 0; k < 500; k++) {
    if (fixture_int(f, 1, "ZCARD %s", queue) >= n) {
      return;
    }
    usleep(10 * 1000);
  }
  CHECK(!"the waiter did not queue");
}

static void test_a_slow_wait_and_a_gone_waiter(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL);
  log l;
  log_init(&l);
  hrl_client *c = watched(&fx, &l, 100);
  hrl_lock *holder = check_lock(c, "slow");
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  waiting w = {check_lock(c, "slow"), 10000, HRL_OK};
  pthread_t t;
  pthread_create(&t, NULL, wait_for, &w);
  await_queued(&fx, "slow{slow}:queue", 1);
  /* A waiter that is gone, first in line: its entry's lease ran out. */
  struct timeval tv;
  gettimeofday(&tv, NULL);
  long long early = (long long)tv.tv_sec * 1000000 - 60000000LL;
  freeReplyObject(fixture_cmd(&fx, 1, "ZADD slow{slow}:queue %lld %s", early,
                              "0123456789abcdef0123456789abcdef"));
  freeReplyObject(fixture_cmd(&fx, 1, "HSET slow{slow}:waiters %s %s",
                              "0123456789abcdef0123456789abcdef",
                              "1000 410 hiredlock:wake:gone"));
  usleep(200 * 1000);
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  pthread_join(t, NULL);
  CHECK_STATUS(w.st, HRL_OK);
  int k = await_event(&l, HRL_EVENT_DEAD_WAITER, 0);
  CHECK_STR(k >= 0 ? l.text[k] : NULL,
            "lock 'slow' released past 1 gone waiter");
  k = await_event(&l, HRL_EVENT_SLOW_WAIT, 0);
  CHECK(k >= 0 && l.ms[k] >= 200 && l.status[k] == HRL_OK);
  CHECK_CONTAINS(k >= 0 ? l.text[k] : NULL, "ms: acquired");
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.handoffs, 1);
  CHECK_INT(s.dead_waiters, 1);
  CHECK_INT(s.waited, 1);
  CHECK_INT(s.acquired, 2);
  /* A wait that times out is slow too, and busy. */
  waiting late = {check_lock(c, "slow"), 300, HRL_OK};
  wait_for(&late);
  CHECK_STATUS(late.st, HRL_ETIMEOUT);
  hrl_client_stats(c, &s);
  CHECK_INT(s.busy, 1);
  CHECK_INT(l.kind[l.n - 1], HRL_EVENT_SLOW_WAIT);
  CHECK_CONTAINS(l.text[l.n - 1], "ms: timeout");
  CHECK_STATUS(hrl_lock_release(w.lk), HRL_OK);
  hrl_lock_free(late.lk);
  hrl_lock_free(w.lk);
  hrl_lock_free(holder);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static int posted = 0;
static void count_post(void *ud) {
  (void)ud;
  __atomic_fetch_add(&posted, 1, __ATOMIC_RELAXED);
}

static void test_the_queue_for_bindings(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  hrl_options o = check_tolerant_options();
  hrl_client *c = fixture_client(&fx, &o);
  CHECK_STATUS(hrl_client_queue_events(c, 2, count_post, NULL), HRL_OK);
  CHECK(!hrl_client_events_pending(c));
  hrl_lock *lk = check_lock(c, "queued");
  CHECK(fixture_ctl(&fx, "kill", 2, NULL));
  CHECK(fixture_ctl(&fx, "kill", 3, NULL));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ECONNECT);
  CHECK(hrl_client_events_pending(c));
  CHECK(fixture_ctl(&fx, "kill", 1, NULL));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ECONNECT); /* dropped: full */
  hrl_event_record out[4];
  uint64_t dropped = 0;
  CHECK_INT(hrl_client_take_events(c, out, 4, &dropped), 2);
  CHECK_INT(dropped, 1);
  CHECK_INT(posted, 2);
  CHECK(!hrl_client_events_pending(c));
  CHECK_INT(out[0].ev.kind, HRL_EVENT_MASTER_DOWN);
  CHECK_INT(out[0].ev.master, 1);
  CHECK_STR(out[0].ev.master_label, hrl_client_master_label(c, 1));
  CHECK(out[0].ev.detail == out[0].detail && out[0].detail[0] != '\0');
  CHECK(out[0].ev.name == NULL);
  CHECK_INT(hrl_client_take_events(c, out, 4, &dropped), 0);
  CHECK_INT(dropped, 0);
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.failed[HRL_ECONNECT], 2);
  CHECK_INT(s.acquired, 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

int main(void) {
  RUN(test_nothing_on_the_fast_path);
  RUN(test_a_master_goes_and_comes_back);
  RUN(test_leases_lost_and_renewals_failed);
  RUN(test_a_slow_wait_and_a_gone_waiter);
  RUN(test_the_queue_for_bindings);
  return finish_tests("test_events");
}
