/* Five masters, real Redis: quorum with masters killed and paused, and many
 * clients racing for one name. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

enum { N = 5 };

static hrl_lock *new_lock(hrl_client *c, const char *name, uint32_t ttl_ms) {
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, name, strlen(name), ttl_ms, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

/* Per-master deadlines with room for valgrind on a loaded machine: these
 * tests are about the quorum, not timeouts (the killed masters refuse at
 * once). The defaults, 100 ms to connect and 50 ms a reply, were missed by
 * live masters under valgrind at load 20-34: all_up's acquire failed. */
static hrl_client *patient_connect(fixture *fx) {
  hrl_options o;
  hrl_options_init(&o);
  o.connect_timeout_ms = 1000;
  o.timeout_ms = 500;
  return fixture_client(fx, &o);
}

static void test_all_up(void) {
  fixture fx;
  fixture_start(&fx, N, NULL);
  hrl_client *c = patient_connect(&fx);
  hrl_lock *lk = new_lock(c, "rl:up", 10000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_INT(fixture_count_key(&fx, "rl:up", 5), 5);
  for (int i = 1; i <= N; i++) {
    char v[64];
    fixture_get(&fx, i, "rl:up", 5, v, sizeof v);
    CHECK_STR(v, hrl_lock_token(lk)); /* one token on every master */
  }
  hrl_counts cnt;
  hrl_lock_counts(lk, &cnt);
  CHECK_INT(cnt.ok, 5);
  CHECK_INT(cnt.masters, 5);
  CHECK_INT(cnt.quorum, 3);
  CHECK_STATUS(hrl_lock_extend(lk, 20000), HRL_OK);
  for (int i = 1; i <= N; i++) {
    CHECK(fixture_int(&fx, i, "PTTL rl:up") > 19000);
  }
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_count_key(&fx, "rl:up", 5), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_two_killed_still_acquires(void) {
  fixture fx;
  fixture_start(&fx, N, NULL);
  hrl_client *c = patient_connect(&fx);
  hrl_lock *lk = new_lock(c, "rl:two", 10000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK); /* connections open */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  fixture_ctl(&fx, "kill", 2, NULL);
  fixture_ctl(&fx, "kill", 4, NULL);
  int64_t start = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  hrl_counts cnt;
  hrl_lock_counts(lk, &cnt);
  CHECK_INT(cnt.ok, 3);
  CHECK_INT(cnt.unreachable, 2);
  int64_t v = hrl_lock_validity_ms(lk);
  CHECK(v >= 10000 - 102 - (hrl_now_us() - start) / 1000 - 2);
  /* Another client cannot take it: 3 of 5 is a quorum held by us. */
  hrl_client *other = patient_connect(&fx);
  hrl_lock *lo = new_lock(other, "rl:two", 10000);
  CHECK_STATUS(hrl_lock_acquire(lo, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS rl:two"), 0);
  hrl_lock_free(lo);
  hrl_client_free(other);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_three_killed_fails_and_leaves_nothing(void) {
  /* A connect timeout and a pause between tries far longer than what a
   * loaded machine adds to a round: "at once" and "at the deadline" below
   * are told apart from a refusal waited for as a timeout and from a
   * pause not cut at the deadline by wide margins. (With the defaults,
   * 100 ms and 200 +/- 100 ms, the bounds were 100 ms and 400 ms past the
   * deadline: a loaded machine's delays could pass them.) */
  enum { CONNECT_TIMEOUT_MS = 1000, PAUSE_MS = 2000 };
  fixture fx;
  fixture_start(&fx, N, NULL);
  fixture_ctl(&fx, "kill", 1, NULL);
  fixture_ctl(&fx, "kill", 3, NULL);
  fixture_ctl(&fx, "kill", 5, NULL);
  hrl_options o;
  hrl_options_init(&o);
  o.connect_timeout_ms = CONNECT_TIMEOUT_MS;
  o.timeout_ms = 500; /* the live masters' replies, on a loaded machine */
  o.retry_delay_ms = PAUSE_MS;
  o.retry_jitter_ms = 0;
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *lk = new_lock(c, "rl:three", 10000);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ECONNECT);
  int64_t took_ms = (hrl_now_us() - t0) / 1000;
  /* without a wait: at once, not a connect timeout per refused master */
  CHECK(took_ms < CONNECT_TIMEOUT_MS / 2);
  CHECK(!hrl_lock_held(lk));
  CHECK_CONTAINS(hrl_lock_error(lk), "2 of 5 masters answered (3 needed)");
  /* With one, it waits in line until its deadline (a master may come
   * back), and says the same then: its pause is cut at the deadline (one
   * not cut would end at PAUSE_MS at the earliest). */
  t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 500), HRL_ECONNECT);
  took_ms = (hrl_now_us() - t0) / 1000;
  CHECK(took_ms >= 500 && took_ms < 500 + (PAUSE_MS - 500) / 2);
  CHECK(!hrl_lock_held(lk));
  CHECK_INT(fixture_int(&fx, 2, "EXISTS rl:three"), 0);
  CHECK_INT(fixture_int(&fx, 4, "EXISTS rl:three"), 0);
  CHECK_CONTAINS(hrl_lock_error(lk), "2 of 5 masters answered (3 needed)");
  hrl_counts cnt;
  hrl_lock_counts(lk, &cnt);
  CHECK_INT(cnt.ok, 2);
  CHECK_INT(cnt.unreachable, 3);
  /* Back to a quorum, the same client recovers by reconnecting. */
  fixture_ctl(&fx, "restart", 3, NULL);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_INT(fixture_count_key(&fx, "rl:three", 8), 3);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_count_key(&fx, "rl:three", 8), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* The slowest of three acquire-and-release pairs while every master
 * answers (*acquire_ms: of their acquires): what rounds cost on this
 * machine as it is now (loaded, or under valgrind), printed to tell a
 * loaded machine from a wait too many when a bound below fails. */
static int64_t healthy_pair_ms(hrl_lock *lk, int64_t *acquire_ms) {
  int64_t pair = 0, acquire = 0;
  for (int k = 0; k < 3; k++) {
    int64_t t0 = hrl_now_us();
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    int64_t t1 = hrl_now_us();
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
    int64_t t2 = hrl_now_us();
    acquire = (t1 - t0) / 1000 > acquire ? (t1 - t0) / 1000 : acquire;
    pair = (t2 - t0) / 1000 > pair ? (t2 - t0) / 1000 : pair;
  }
  *acquire_ms = acquire;
  return pair;
}

static void test_paused_master_costs_one_timeout_once(void) {
  /* "One timeout, not two" holds when took < 2 x TIMEOUT_MS: a second
   * wait costs that at the least, whatever the rounds cost (a bound of the
   * healthy rounds' cost plus 2 x TIMEOUT_MS let a second wait pass when
   * the rounds were quicker than the slowest healthy one). The margin is
   * TIMEOUT_MS less the rounds' own work, so TIMEOUT_MS is well above
   * what a loaded machine adds to a round (valgrind included). */
  enum { TIMEOUT_MS = 200, CONNECT_TIMEOUT_MS = 100 };
  fixture fx;
  fixture_start(&fx, N, NULL);
  hrl_options o;
  hrl_options_init(&o);
  o.timeout_ms = TIMEOUT_MS;
  o.connect_timeout_ms = CONNECT_TIMEOUT_MS;
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *lk = new_lock(c, "rl:pause", 10000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK); /* connected */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  int64_t base_acquire_ms, base_pair_ms = healthy_pair_ms(lk, &base_acquire_ms);
  printf("  healthy: acquire %lld ms, acquire and release %lld ms\n",
         (long long)base_acquire_ms, (long long)base_pair_ms);
  fixture_ctl(&fx, "pause", 3, NULL);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  int64_t took_ms = (hrl_now_us() - t0) / 1000;
  /* The timeout, once: a second one would add another TIMEOUT_MS. */
  CHECK(took_ms >= TIMEOUT_MS - 1 && took_ms < 2 * TIMEOUT_MS);
  hrl_counts cnt;
  hrl_lock_counts(lk, &cnt);
  CHECK_INT(cnt.ok, 4);
  CHECK_INT(cnt.unreachable, 1);
  int64_t v = hrl_lock_validity_ms(lk);
  CHECK(v >= 10000 - 102 - (hrl_now_us() - t0) / 1000 - 2);
  /* Now known to be late, the paused master is not waited for once a
   * quorum answered: the next rounds cost no timeout. */
  for (int round = 0; round < 3; round++) {
    t0 = hrl_now_us();
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    took_ms = (hrl_now_us() - t0) / 1000;
    /* waiting for master 3 would cost TIMEOUT_MS in the release and
     * another in the acquire */
    CHECK(took_ms < TIMEOUT_MS);
    hrl_lock_counts(lk, &cnt);
    CHECK_INT(cnt.ok, 4);
    CHECK_INT(cnt.unreachable, 1);
  }
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  /* Three paused: no quorum; one attempt and its cleanup, then the error. */
  fixture_ctl(&fx, "pause", 1, NULL);
  fixture_ctl(&fx, "pause", 5, NULL);
  t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ECONNECT);
  took_ms = (hrl_now_us() - t0) / 1000;
  printf("  three paused: %lld ms\n", (long long)took_ms);
  /* one attempt, no retry: its round waits TIMEOUT_MS for the paused
   * masters (a quorum needs them), its cleanup does not wait for them,
   * a second attempt would wait TIMEOUT_MS again */
  CHECK(took_ms < 2 * TIMEOUT_MS);
  hrl_lock_counts(lk, &cnt);
  CHECK_INT(cnt.attempts, 1);
  CHECK_CONTAINS(hrl_lock_error(lk), "timeout");
  for (int i = 1; i <= N; i += 2) {
    fixture_ctl(&fx, "resume", i, NULL);
  }
  /* Keys the paused masters took late expire with the TTL; a fresh name
   * works at once. */
  hrl_lock *fresh = new_lock(c, "rl:pause2", 10000);
  CHECK_STATUS(hrl_lock_acquire(fresh, 0), HRL_OK);
  CHECK_INT(fixture_count_key(&fx, "rl:pause2", 9), 5);
  CHECK_STATUS(hrl_lock_release(fresh), HRL_OK);
  /* Resumed masters catch up on what they owe and are counted again. */
  bool all_five = false;
  for (int round = 0; round < 50 && !all_five; round++) {
    CHECK_STATUS(hrl_lock_acquire(fresh, 0), HRL_OK);
    hrl_lock_counts(fresh, &cnt);
    all_five = cnt.ok == 5;
    CHECK_STATUS(hrl_lock_release(fresh), HRL_OK);
  }
  CHECK(all_five);
  hrl_lock_free(fresh);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* ---- racing ---- */

/* Each round all racers start together and keep retrying for up to WAIT_MS;
 * the winner holds until every racer has returned, so exactly one wins.
 * Losers stop waiting once a winner exists (their acquire cannot succeed
 * while it holds), which keeps the test short. */
enum { RACERS = 16, ROUNDS = 20, WAIT_MS = 3000 };

typedef struct race {
  fixture *fx;
  pthread_barrier_t start, done;
  int winners[ROUNDS];
  int64_t round_start_us[ROUNDS];
  int64_t win_after_us[ROUNDS];
  int win_attempts[ROUNDS];
  pthread_mutex_t mu;
} race;

typedef struct racer_ctx {
  race *race;
  int round;
} racer_ctx;

static bool someone_won(void *ud) {
  racer_ctx *ctx = ud;
  pthread_mutex_lock(&ctx->race->mu);
  bool won = ctx->race->winners[ctx->round] > 0;
  pthread_mutex_unlock(&ctx->race->mu);
  return won;
}

static void *run_racer(void *arg) {
  race *rc = arg;
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 50;
  o.retry_jitter_ms = 40;
  o.timeout_ms = 500; /* TOLERANT: 16 threads, 5 servers, 2 CPUs, valgrind */
  hrl_client *c = fixture_client(rc->fx, &o);
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "rl:race", 7, 10000, &lk, NULL, 0);
  for (int round = 0; round < ROUNDS; round++) {
    if (pthread_barrier_wait(&rc->start) == PTHREAD_BARRIER_SERIAL_THREAD) {
      rc->round_start_us[round] = hrl_now_us();
    }
    racer_ctx ctx = {rc, round};
    hrl_status st =
        hrl_lock_acquire_cancellable(lk, WAIT_MS, someone_won, &ctx);
    if (st == HRL_OK) {
      hrl_counts cnt;
      hrl_lock_counts(lk, &cnt);
      pthread_mutex_lock(&rc->mu);
      rc->winners[round]++;
      rc->win_after_us[round] = hrl_now_us();
      rc->win_attempts[round] = (int)cnt.attempts;
      pthread_mutex_unlock(&rc->mu);
    } else {
      CHECK(st == HRL_ETIMEOUT || st == HRL_ECANCELLED);
    }
    pthread_barrier_wait(&rc->done); /* everyone has given up or won */
    if (st == HRL_OK) {
      CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
    }
    pthread_barrier_wait(&rc->done); /* released before the next round */
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return NULL;
}

static void test_sixteen_clients_race(void) {
  fixture fx;
  fixture_start(&fx, N, NULL);
  race rc;
  memset(&rc, 0, sizeof rc);
  rc.fx = &fx;
  pthread_barrier_init(&rc.start, NULL, RACERS);
  pthread_barrier_init(&rc.done, NULL, RACERS);
  pthread_mutex_init(&rc.mu, NULL);
  pthread_t th[RACERS];
  for (int i = 0; i < RACERS; i++) {
    pthread_create(&th[i], NULL, run_racer, &rc);
  }
  for (int i = 0; i < RACERS; i++) {
    pthread_join(th[i], NULL);
  }
  int64_t slowest_us = 0;
  int retried = 0;
  for (int r = 0; r < ROUNDS; r++) {
    CHECK_INT(rc.winners[r], 1);
    int64_t took = rc.win_after_us[r] - rc.round_start_us[r];
    slowest_us = took > slowest_us ? took : slowest_us;
    retried += rc.win_attempts[r] > 1;
  }
  printf("  race: %d of %d rounds needed a retry (split vote); slowest "
         "winner after %lld ms\n",
         retried, ROUNDS, (long long)(slowest_us / 1000));
  CHECK_INT(fixture_count_key(&fx, "rl:race", 7), 0); /* no partial keys */
  pthread_barrier_destroy(&rc.start);
  pthread_barrier_destroy(&rc.done);
  pthread_mutex_destroy(&rc.mu);
  fixture_stop(&fx);
}

/* Many threads share one client: its mutex serialises rounds, and a waiter
 * sleeping between attempts never blocks the holder's release. */
typedef struct shared {
  hrl_client *client;
  fixture *fx;
  int inside;
  int max_inside;
  int acquired;
  int release_failed;
  pthread_mutex_t mu;
} shared;

static void *shared_worker(void *arg) {
  shared *sh = arg;
  hrl_lock *lk = NULL;
  hrl_lock_new(sh->client, "rl:shared", 7, 5000, &lk, NULL, 0);
  for (int i = 0; i < 5; i++) {
    hrl_status st = hrl_lock_acquire(lk, 20000);
    if (st != HRL_OK) {
      printf("  shared: acquire failed: %s: %s\n", hrl_strerror(st),
             hrl_lock_error(lk));
      continue;
    }
    pthread_mutex_lock(&sh->mu);
    sh->inside++;
    sh->acquired++;
    if (sh->inside > sh->max_inside) {
      sh->max_inside = sh->inside;
    }
    pthread_mutex_unlock(&sh->mu);
    usleep(2000);
    pthread_mutex_lock(&sh->mu);
    sh->inside--;
    pthread_mutex_unlock(&sh->mu);
    st = hrl_lock_release(lk);
    if (st != HRL_OK) {
      printf("  shared: release failed: %s: %s\n", hrl_strerror(st),
             hrl_lock_error(lk));
      pthread_mutex_lock(&sh->mu);
      sh->release_failed++;
      pthread_mutex_unlock(&sh->mu);
    }
  }
  hrl_lock_free(lk);
  return NULL;
}

static void test_threads_share_one_client(void) {
  fixture fx;
  fixture_start(&fx, N, NULL);
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 10;
  o.retry_jitter_ms = 5;
  /* Not a test of deadlines: under valgrind, which runs one thread at a
   * time, a round now and then waits past the default 50 ms for its turn,
   * and the call then fails by design. */
  o.timeout_ms = 500;
  o.connect_timeout_ms = 1000;
  shared sh;
  memset(&sh, 0, sizeof sh);
  sh.client = fixture_client(&fx, &o);
  sh.fx = &fx;
  pthread_mutex_init(&sh.mu, NULL);
  pthread_t th[8];
  for (int i = 0; i < 8; i++) {
    pthread_create(&th[i], NULL, shared_worker, &sh);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
  }
  CHECK_INT(sh.max_inside, 1);
  CHECK_INT(sh.acquired, 40);
  CHECK_INT(sh.release_failed, 0);
  CHECK_INT(fixture_count_key(&fx, "rl:shared", 9), 0);
  hrl_client_free(sh.client);
  pthread_mutex_destroy(&sh.mu);
  fixture_stop(&fx);
}

int main(void) {
  RUN(test_all_up);
  RUN(test_two_killed_still_acquires);
  RUN(test_three_killed_fails_and_leaves_nothing);
  RUN(test_paused_master_costs_one_timeout_once);
  RUN(test_sixteen_clients_race);
  RUN(test_threads_share_one_client);
  return finish_tests("test_redlock");
}
