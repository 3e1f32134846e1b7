/* Managed leases against real Redis (five masters): renewal keeps a short
 * TTL held, losses are seen by every signal, a stopped master does not
 * matter and a lost quorum does, max_hold ends renewal, fork and threads
 * leave the renewer working, and release or free stop it. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static fixture fx;

#define N 5

/* Per-master deadlines with room for a loaded machine (a lock's TTL caps
 * them at a tenth of it anyway). */
static hrl_client *tolerant_client(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.connect_timeout_ms = 500;
  o.timeout_ms = 500;
  o.retry_delay_ms = 20;
  o.retry_jitter_ms = 10;
  return fixture_client(&fx, &o);
}

static hrl_lock *lease(hrl_client *c, const char *name, uint32_t ttl_ms,
                       uint32_t max_hold_ms) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.ttl_ms = ttl_ms;
  lo.auto_renew = true;
  lo.max_hold_ms = max_hold_ms;
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_new_with(c, name, strlen(name), &lo, &lk, d, sizeof d),
               HRL_OK);
  return lk;
}

/* What the loss callback saw. */
typedef struct seen {
  pthread_mutex_t mu;
  int calls;
  pthread_t thread;
  int64_t at_us;
  char reason[HRL_DETAIL_MAX];
  hrl_status release_status; /* of a release made from the callback */
  bool release_in_callback;
  /* wait_lost: the most one of its 10 ms sleeps overslept (ms): how late
   * this machine, as loaded as it is now, wakes a thread that is due */
  int64_t late_ms;
} seen;

static void on_lost(hrl_lock *lk, const char *reason, void *ud) {
  seen *s = ud;
  hrl_status rs = HRL_OK;
  if (s->release_in_callback) {
    rs = hrl_lock_release(lk); /* calls into its own lock: no deadlock */
  }
  pthread_mutex_lock(&s->mu);
  s->calls++;
  s->thread = pthread_self();
  s->at_us = hrl_now_us();
  s->release_status = rs;
  snprintf(s->reason, sizeof s->reason, "%s", reason);
  pthread_mutex_unlock(&s->mu);
}

static int seen_calls(seen *s) {
  pthread_mutex_lock(&s->mu);
  int n = s->calls;
  pthread_mutex_unlock(&s->mu);
  return n;
}

/* Waits up to limit_ms for the callback; returns how long it took. */
static int64_t wait_lost(seen *s, int64_t since_us, int limit_ms) {
  s->late_ms = 0;
  for (int i = 0; i < limit_ms / 10 && seen_calls(s) == 0; i++) {
    int64_t t = hrl_now_us();
    usleep(10 * 1000);
    int64_t late = (hrl_now_us() - t) / 1000 - 10;
    s->late_ms = late > s->late_ms ? late : s->late_ms;
  }
  return seen_calls(s) > 0 ? (s->at_us - since_us) / 1000 : -1;
}

/* How late the renewer may signal on this machine as it is now, on top
 * of a bound that holds on an idle one: twice what the waiting thread
 * measured of its own wake-ups (the renewer's timer and its callback are
 * woken alike). */
static int64_t load_ms(const seen *s) {
  return 2 * s->late_ms;
}

/* EVALSHA and EVAL commands master `node` ran since the last reset: the
 * renewals (and releases) it got. */
static long scripts_run(int node) {
  redisReply *r = fixture_cmd(&fx, node, "INFO commandstats");
  long total = 0;
  if (r != NULL && r->type == REDIS_REPLY_STRING) {
    const char *names[] = {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="};
    for (size_t i = 0; i < 2; i++) {
      const char *p = strstr(r->str, names[i]);
      total += p != NULL ? strtol(p + strlen(names[i]), NULL, 10) : 0;
    }
  }
  freeReplyObject(r);
  return total;
}

static void reset_stats(int node) {
  freeReplyObject(fixture_cmd(&fx, node, "CONFIG RESETSTAT"));
}

static bool key_is(int node, const char *key, const char *token) {
  char value[64];
  fixture_get(&fx, node, key, strlen(key), value, sizeof value);
  return strcmp(value, token) == 0 &&
         fixture_int(&fx, node, "PTTL %s", key) > 0;
}

static void test_short_ttl_held_long(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:long", 1000, 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  char token[HRL_TOKEN_LEN + 1];
  snprintf(token, sizeof token, "%s", hrl_lock_token(lk));
  reset_stats(1);
  int64_t start = hrl_now_us();
  int misses = 0;
  while (hrl_now_us() - start < 5000 * 1000) {
    for (int node = 1; node <= N; node++) {
      misses += !key_is(node, "lease:long", token);
    }
    misses += !hrl_lock_held(lk) || hrl_lock_validity_ms(lk) <= 0;
    usleep(100 * 1000);
  }
  CHECK_INT(misses, 0);
  CHECK_STR(hrl_lock_token(lk), token);
  CHECK_STATUS(hrl_lock_lost(lk, NULL, 0), HRL_OK);
  /* One renewal a third of a TTL: about 15 in 5 s, not one per poll. */
  long renewals = scripts_run(1);
  CHECK(renewals >= 10 && renewals <= 20);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_count_key(&fx, "lease:long", 10), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_deleted_keys_seen_as_lost(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:deleted", 1500, 0);
  seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
  CHECK_STATUS(hrl_lock_on_lost(lk, on_lost, &s), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  usleep(100 * 1000);
  int64_t t0 = hrl_now_us();
  for (int node = 1; node <= N; node++) {
    freeReplyObject(fixture_cmd(&fx, node, "DEL lease:deleted"));
  }
  /* Within one renewal period (a third of the TTL) and a round. */
  int64_t took = wait_lost(&s, t0, 3000);
  CHECK(took >= 0 && took <= 500 + 400 + load_ms(&s));
  CHECK_STR(s.reason, "not owned");
  CHECK(!pthread_equal(s.thread, pthread_self())); /* the renewer's */
  char reason[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_lost(lk, reason, sizeof reason), HRL_ELOST);
  CHECK_STR(reason, "not owned");
  CHECK(!hrl_lock_held(lk));
  CHECK_INT(hrl_lock_validity_ms(lk), 0);
  CHECK_STATUS(hrl_lock_release(lk), HRL_ELOST);
  CHECK_STR(hrl_lock_error(lk), "not owned");
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_ELOST);
  usleep(600 * 1000);
  CHECK_INT(seen_calls(&s), 1); /* once per hold */
  /* A new hold is a new lease. */
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_lost(lk, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_callback_may_use_its_lock(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:callback", 900, 0);
  seen s = {.mu = PTHREAD_MUTEX_INITIALIZER, .release_in_callback = true};
  CHECK_STATUS(hrl_lock_on_lost(lk, on_lost, &s), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  freeReplyObject(fixture_cmd(&fx, 1, "SET lease:callback other"));
  freeReplyObject(fixture_cmd(&fx, 2, "SET lease:callback other"));
  freeReplyObject(fixture_cmd(&fx, 3, "SET lease:callback other"));
  CHECK(wait_lost(&s, hrl_now_us(), 3000) >= 0);
  CHECK_STATUS(s.release_status, HRL_ELOST);
  for (int node = 1; node <= N; node++) {
    freeReplyObject(fixture_cmd(&fx, node, "DEL lease:callback"));
  }
  seen s2 = {.mu = PTHREAD_MUTEX_INITIALIZER};
  CHECK_STATUS(hrl_lock_on_lost(lk, on_lost, &s2), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  /* The holder's own call finds the loss first: the callback runs in the
   * holder's thread, as that call returns. */
  for (int node = 1; node <= N; node++) {
    freeReplyObject(fixture_cmd(&fx, node, "DEL lease:callback"));
  }
  hrl_status st = hrl_lock_extend(lk, 0);
  CHECK_STATUS(st, HRL_ENOTOWNED);
  CHECK_INT(seen_calls(&s2), 1);
  CHECK(pthread_equal(s2.thread, pthread_self()));
  CHECK_STATUS(hrl_lock_release(lk), HRL_ELOST);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_one_master_stopped_keeps_lease(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:stopped", 1000, 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  char token[HRL_TOKEN_LEN + 1];
  snprintf(token, sizeof token, "%s", hrl_lock_token(lk));
  CHECK(fixture_ctl(&fx, "pause", 5, NULL));
  int64_t start = hrl_now_us();
  int misses = 0;
  while (hrl_now_us() - start < 3000 * 1000) {
    for (int node = 1; node <= 4; node++) {
      misses += !key_is(node, "lease:stopped", token);
    }
    misses += !hrl_lock_held(lk);
    usleep(100 * 1000);
  }
  CHECK_INT(misses, 0);
  CHECK_STATUS(hrl_lock_lost(lk, NULL, 0), HRL_OK);
  CHECK(fixture_ctl(&fx, "resume", 5, NULL));
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* Sends sig to the servers of masters 1 to 3 at once. The launcher's pause
 * and resume are scripts that take hundreds of ms each on a loaded machine
 * (load 24: the quorum meant to be gone for 400 ms was gone for over a
 * second, longer than the validity, and the lease was rightly lost). */
static void signal_quorum(const pid_t pids[3], int sig) {
  for (int k = 0; k < 3; k++) {
    CHECK(kill(pids[k], sig) == 0);
  }
}

static void test_quorum_lost_longer_than_validity(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:quorum", 1500, 0);
  seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
  CHECK_STATUS(hrl_lock_on_lost(lk, on_lost, &s), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  pid_t pids[3];
  for (int node = 1; node <= 3; node++) {
    char arg[8], out[32] = "";
    snprintf(arg, sizeof arg, "%d", node);
    CHECK(fixture_run(&fx, "pid", arg, out, sizeof out));
    pids[node - 1] = (pid_t)atoi(out);
    CHECK(pids[node - 1] > 0);
  }
  /* A quorum gone for less than the validity: the next renewal that
   * gets through keeps the lease. */
  int64_t gone = hrl_now_us();
  signal_quorum(pids, SIGSTOP);
  usleep(400 * 1000);
  signal_quorum(pids, SIGCONT);
  printf("  quorum gone for %lld ms\n",
         (long long)(hrl_now_us() - gone) / 1000);
  usleep(1500 * 1000);
  CHECK(hrl_lock_held(lk));
  CHECK_INT(seen_calls(&s), 0);
  /* Gone for longer: lost once the validity runs out, counted from when
   * the third master was gone (the launcher's kill waits for that). */
  int64_t t0 = hrl_now_us();
  for (int node = 1; node <= 3; node++) {
    CHECK(fixture_ctl(&fx, "kill", node, NULL));
  }
  int64_t killed_ms = (hrl_now_us() - t0) / 1000;
  int64_t took = wait_lost(&s, t0, 4000 + (int)killed_ms);
  printf("  lost %lld ms after the kills began (they took %lld ms; a "
         "thread woke up to %lld ms late)\n",
         (long long)took, (long long)killed_ms, (long long)s.late_ms);
  CHECK(took >= 0 && took <= killed_ms + 1500 + 500 + load_ms(&s));
  /* The two live masters may miss the deadline left on a loaded machine
   * ("1 of 5"): the loss is the quorum's, whichever of them answered. */
  CHECK_CONTAINS(s.reason, "expired: connection failed: ");
  CHECK_CONTAINS(s.reason, " of 5 masters confirmed (3 needed)");
  CHECK(atoi(s.reason + strlen("expired: connection failed: ")) <= 2);
  char reason[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_lost(lk, reason, sizeof reason), HRL_ELOST);
  CHECK_STR(reason, s.reason);
  CHECK(!hrl_lock_held(lk));
  for (int node = 1; node <= 3; node++) {
    CHECK(fixture_ctl(&fx, "restart", node, NULL));
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_max_hold_ends_renewal(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:cap", 1000, 2000);
  seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
  CHECK_STATUS(hrl_lock_on_lost(lk, on_lost, &s), HRL_OK);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  usleep(1500 * 1000);
  CHECK(hrl_lock_held(lk)); /* renewed past its TTL */
  CHECK_INT(fixture_count_key(&fx, "lease:cap", 9), N);
  int64_t took = wait_lost(&s, t0, 3000);
  CHECK(took >= 1900 && took <= 2000 + 400 + load_ms(&s));
  CHECK_STR(s.reason, "max_hold reached");
  usleep(100 * 1000);
  /* The keys expired at the cap on their own. */
  CHECK_INT(fixture_count_key(&fx, "lease:cap", 9), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* The loss is known by the time the validity ends: no renewal round
 * outlasts it (one begun 200 ms before would otherwise wait its whole
 * 300 ms for the stopped masters, and the loss came 100 ms late, after
 * the keys could have expired and been taken). */
static void test_loss_known_by_validity_end(void) {
  hrl_client *c = tolerant_client(); /* 500 ms, capped at 300 by the TTL */
  hrl_lock *lk = lease(c, "lease:intime", 3000, 0);
  seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
  CHECK_STATUS(hrl_lock_on_lost(lk, on_lost, &s), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  for (int node = 1; node <= 3; node++) {
    CHECK(fixture_ctl(&fx, "pause", node, NULL));
  }
  int64_t until = hrl_now_us() + hrl_lock_validity_ms(lk) * 1000;
  CHECK(wait_lost(&s, until, 5000) != -1);
  int64_t late_ms = (s.at_us - until) / 1000;
  printf("  lost %+lld ms after the validity ended (a thread woke up to "
         "%lld ms late)\n",
         (long long)late_ms, (long long)s.late_ms);
  CHECK(late_ms <= 30 + load_ms(&s));
  for (int node = 1; node <= 3; node++) {
    CHECK(fixture_ctl(&fx, "resume", node, NULL));
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* max_hold shorter than the TTL: the keys live no longer than max_hold,
 * and the lease is lost then ("max_hold reached"), not a TTL later. */
static void test_max_hold_shorter_than_ttl(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:shortcap", 4000, 1000);
  seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
  CHECK_STATUS(hrl_lock_on_lost(lk, on_lost, &s), HRL_OK);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  for (int node = 1; node <= N; node++) {
    long long pttl = fixture_int(&fx, node, "PTTL %s", "lease:shortcap");
    CHECK(pttl > 0 && pttl <= 1000);
  }
  CHECK(hrl_lock_validity_ms(lk) <= 1000);
  int64_t took = wait_lost(&s, t0, 6000);
  CHECK(took >= 900 && took <= 1000 + 400 + load_ms(&s));
  CHECK_STR(s.reason, "max_hold reached");
  usleep(100 * 1000);
  CHECK_INT(fixture_count_key(&fx, "lease:shortcap", 14), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_release_and_free_stop_renewal(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:stop", 600, 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  usleep(300 * 1000);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  reset_stats(1);
  usleep(800 * 1000);
  CHECK_INT(scripts_run(1), 0);

  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  hrl_lock_free(lk); /* held: not released, no longer renewed */
  reset_stats(1);
  usleep(900 * 1000);
  CHECK_INT(scripts_run(1), 0);
  CHECK_INT(fixture_count_key(&fx, "lease:stop", 10), 0);
  hrl_client_free(c);
}

/* When lk's validity ends, in ms on the monotonic clock (0: not held). */
static int64_t expiry_ms(hrl_lock *lk) {
  int64_t v = hrl_lock_validity_ms(lk);
  return v > 0 ? hrl_now_us() / 1000 + v : 0;
}

/* Waits, polling, until lk's renewer has renewed it `want` times (its
 * expiry moved later: a renewal a third of a TTL in moves it by that
 * much), or until it is not held, or limit_ms: how many renewals it saw. */
static int renewals_seen(hrl_lock *lk, int want, int limit_ms) {
  int seen_renewals = 0;
  int64_t last = expiry_ms(lk), start = hrl_now_us();
  while (seen_renewals < want && last > 0 &&
         hrl_now_us() - start < limit_ms * 1000LL) {
    usleep(10 * 1000);
    int64_t e = expiry_ms(lk);
    seen_renewals += e > last + 50;
    last = e;
  }
  return seen_renewals;
}

/* A child holds a lease of its own until its renewer (the child's: the
 * parent's is not forked) renewed it twice, and exits 0 when it did and
 * the lease stayed held; with hooks, the parent calls them around fork().
 * Counted, not slept: with 500 ms leases held a fixed 1.5 s, a renewer
 * late by 300 ms on a loaded machine lost them. */
static void fork_child_holds(hrl_client *c, bool hooks) {
  if (hooks) {
    hrl_client_fork_prepare(c);
  }
  pid_t pid = fork();
  if (pid == 0) {
    if (hooks) {
      hrl_client_after_fork(c);
    }
    hrl_lock *mine = lease(c, hooks ? "lease:child1" : "lease:child2", 1500, 0);
    bool ok = hrl_lock_acquire(mine, 0) == HRL_OK;
    ok = ok && renewals_seen(mine, 2, 10000) == 2;
    ok = ok && hrl_lock_held(mine) && hrl_lock_lost(mine, NULL, 0) == HRL_OK;
    ok = ok && hrl_lock_release(mine) == HRL_OK;
    hrl_lock_free(mine);
    hrl_client_free(c);
    fixture_forget(&fx);
    _exit(ok ? 0 : 1);
  }
  if (hooks) {
    hrl_client_fork_parent(c);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_fork_keeps_renewers_apart(void) {
  hrl_client *c = tolerant_client();
  hrl_lock *lk = lease(c, "lease:parent", 1500, 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  int64_t before = expiry_ms(lk);
  fork_child_holds(c, true);
  fork_child_holds(c, false);
  /* The parent's renewer went on all along: held, and renewed since. */
  CHECK(hrl_lock_held(lk));
  CHECK(expiry_ms(lk) > before + 50);
  CHECK_INT(renewals_seen(lk, 1, 5000), 1);
  CHECK_STATUS(hrl_lock_lost(lk, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

typedef struct worker {
  hrl_client *c;
  hrl_lock *lk;
  int failures;
} worker;

/* Holds its own lease on the shared client, extending it now and then
 * itself (its calls and the renewals take turns), for 1.5 s. */
static void *hold_and_poke(void *arg) {
  worker *w = arg;
  w->failures += hrl_lock_acquire(w->lk, 0) != HRL_OK;
  int64_t start = hrl_now_us();
  for (int i = 0; hrl_now_us() - start < 1500 * 1000; i++) {
    w->failures += !hrl_lock_held(w->lk);
    if (i % 20 == 0) {
      w->failures += hrl_lock_extend(w->lk, 0) != HRL_OK;
    }
    usleep(5 * 1000);
  }
  return NULL;
}

/* Reads every lease's state, from another thread, while all that runs. */
static void *watch(void *arg) {
  worker *ws = arg;
  int64_t start = hrl_now_us();
  while (hrl_now_us() - start < 1400 * 1000) {
    for (int i = 0; i < 4; i++) {
      hrl_lock_validity_ms(ws[i].lk);
      hrl_lock_lost(ws[i].lk, NULL, 0);
    }
    usleep(1000);
  }
  return NULL;
}

static void test_threads_share_the_renewer(void) {
  hrl_client *c = tolerant_client();
  worker ws[4];
  pthread_t threads[5];
  char name[32];
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "lease:thread%d", i);
    /* 900 ms: about four renewals each in the 1.5 s, with room for
     * valgrind's one-thread-at-a-time on a loaded machine. */
    ws[i] = (worker){c, lease(c, name, 900, 0), 0};
  }
  for (int i = 0; i < 4; i++) {
    pthread_create(&threads[i], NULL, hold_and_poke, &ws[i]);
  }
  usleep(50 * 1000);
  pthread_create(&threads[4], NULL, watch, ws);
  for (int i = 0; i < 5; i++) {
    pthread_join(threads[i], NULL);
  }
  for (int i = 0; i < 4; i++) {
    CHECK_INT(ws[i].failures, 0);
    CHECK_STATUS(hrl_lock_release(ws[i].lk), HRL_OK);
    hrl_lock_free(ws[i].lk);
  }
  hrl_client_free(c);
}

int main(void) {
  fixture_start(&fx, N, NULL);
  RUN(test_short_ttl_held_long);
  RUN(test_deleted_keys_seen_as_lost);
  RUN(test_callback_may_use_its_lock);
  RUN(test_one_master_stopped_keeps_lease);
  RUN(test_quorum_lost_longer_than_validity);
  RUN(test_max_hold_ends_renewal);
  RUN(test_loss_known_by_validity_end);
  RUN(test_max_hold_shorter_than_ttl);
  RUN(test_release_and_free_stop_renewal);
  RUN(test_fork_keeps_renewers_apart);
  RUN(test_threads_share_the_renewer);
  fixture_stop(&fx);
  return finish_tests("test_lease");
}
