/* Fences stay strictly increasing over thousands of grants taken by
 * several clients at once, at N = 1 and N = 5, while masters are stopped
 * (SIGSTOP), resumed and restarted (AOF, fsync always): every grant's fence
 * is greater than that of every grant whose acquire returned before its
 * own began, and no two grants share a fence. Attempts that fail part way
 * (split votes between the clients, a master stopped in a round) raise
 * the counters too: the fences skip numbers, and must still increase. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

enum { CLIENTS = 4, GRANTS_EACH = 600 };

typedef struct grant {
  int64_t start_us; /* before the acquire call */
  int64_t end_us;   /* after it returned */
  uint64_t fence;
} grant;

typedef struct worker {
  fixture *fx;
  pthread_t thread;
  grant grants[GRANTS_EACH];
  atomic_size_t count; /* read by the fault loop */
  unsigned attempts;   /* acquire attempts, those that failed included */
} worker;

static void *work(void *arg) {
  worker *w = arg;
  hrl_options o;
  hrl_options_init(&o);
  o.timeout_ms = 100; /* tolerant: a loaded 2-CPU machine, valgrind */
  o.connect_timeout_ms = 500;
  o.retry_delay_ms = 5;
  o.retry_jitter_ms = 5;
  o.lock.fenced = true; /* the client-wide default */
  hrl_client *c = fixture_client(w->fx, &o);
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, "ff:res", 6, 1000, &lk, NULL, 0), HRL_OK);
  while (lk != NULL && w->count < GRANTS_EACH) {
    int64_t t0 = hrl_now_us();
    hrl_status st = hrl_lock_acquire(lk, 1000);
    int64_t t1 = hrl_now_us();
    hrl_counts cnt;
    hrl_lock_counts(lk, &cnt);
    w->attempts += cnt.attempts;
    if (st != HRL_OK) {
      if (st != HRL_ETIMEOUT) {
        usleep(5000); /* no quorum right now: a master is restarting */
      }
      continue;
    }
    w->grants[w->count] = (grant){t0, t1, hrl_lock_fence(lk)};
    w->count++;
    /* "Not owned" after a pause is fine; a release cut short by a restart
     * is finished on the new connection. */
    if (hrl_lock_release(lk) == HRL_ECONNECT) {
      usleep(20000);
      hrl_lock_release(lk);
    }
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return NULL;
}

static int by_start(const void *a, const void *b) {
  const grant *x = a, *y = b;
  return (x->start_us > y->start_us) - (x->start_us < y->start_us);
}

static int by_end(const void *a, const void *b) {
  const grant *x = a, *y = b;
  return (x->end_us > y->end_us) - (x->end_us < y->end_us);
}

static int by_fence(const void *a, const void *b) {
  const grant *x = a, *y = b;
  return (x->fence > y->fence) - (x->fence < y->fence);
}

/* Grants whose fence is not greater than that of a grant that ended
 * before they began; sweeps the grants by start, the ended ones by end. */
static size_t order_violations(grant *g, size_t n) {
  grant *ends = malloc(n * sizeof *ends);
  memcpy(ends, g, n * sizeof *ends);
  qsort(g, n, sizeof *g, by_start);
  qsort(ends, n, sizeof *ends, by_end);
  uint64_t max_ended = 0;
  size_t e = 0, bad = 0;
  for (size_t i = 0; i < n; i++) {
    while (e < n && ends[e].end_us < g[i].start_us) {
      max_ended = ends[e].fence > max_ended ? ends[e].fence : max_ended;
      e++;
    }
    if (g[i].fence <= max_ended) {
      if (bad++ < 5) {
        fprintf(stderr, "fence %llu after an earlier grant's %llu\n",
                (unsigned long long)g[i].fence, (unsigned long long)max_ended);
      }
    }
  }
  free(ends);
  return bad;
}

static size_t duplicates(grant *g, size_t n) {
  qsort(g, n, sizeof *g, by_fence);
  size_t dup = 0;
  for (size_t i = 1; i < n; i++) {
    dup += g[i].fence == g[i - 1].fence;
  }
  return dup;
}

static void run(int n) {
  fixture fx;
  fixture_start(&fx, n, "--aof");
  worker *w = calloc(CLIENTS, sizeof *w);
  for (int k = 0; k < CLIENTS; k++) {
    w[k].fx = &fx;
    pthread_create(&w[k].thread, NULL, work, &w[k]);
  }
  /* Faults until every client has its grants: each master in turn is
   * stopped, resumed, then killed and restarted from its AOF. */
  int faults = 0;
  for (int step = 0;; step++) {
    size_t done = 0;
    for (int k = 0; k < CLIENTS; k++) {
      done += w[k].count;
    }
    if (done == (size_t)CLIENTS * GRANTS_EACH) {
      break;
    }
    int node = step % n + 1;
    usleep(50000);
    /* fixture_ctl aborts the test when a fault cannot be injected (a
     * restart whose port another process took): none is counted unless
     * it happened. */
    fixture_ctl(&fx, "pause", node, NULL);
    usleep(100000);
    fixture_ctl(&fx, "resume", node, NULL);
    usleep(50000);
    fixture_ctl(&fx, "restart", node, NULL);
    faults += 2;
  }
  grant *all = malloc((size_t)CLIENTS * GRANTS_EACH * sizeof *all);
  size_t total = 0;
  unsigned attempts = 0;
  for (int k = 0; k < CLIENTS; k++) {
    pthread_join(w[k].thread, NULL);
    memcpy(all + total, w[k].grants, w[k].count * sizeof *all);
    total += w[k].count;
    attempts += w[k].attempts;
  }
  CHECK_INT(total, CLIENTS * GRANTS_EACH);
  CHECK(faults >= 2); /* at least one stop and one restart */
  CHECK_INT(order_violations(all, total), 0);
  CHECK_INT(duplicates(all, total), 0);
  uint64_t top = all[total - 1].fence; /* sorted by fence now */
  CHECK(top >= total);
  printf("  N=%d: %zu grants in %u attempts, %d faults, last fence %llu\n", n,
         total, attempts, faults, (unsigned long long)top);
  free(all);
  free(w);
  fixture_stop(&fx);
}

static void test_single_master_under_faults(void) {
  run(1);
}

static void test_five_masters_under_faults(void) {
  run(5);
}

int main(void) {
  RUN(test_single_master_under_faults);
  RUN(test_five_masters_under_faults);
  return finish_tests("test_fence_faults");
}
