/* Waiting under faults, with real Redis and the built-in driver (#24): a
 * paused master does not starve a holder whose client other threads wait
 * through; waiters stay quiet while a holder lacks one master; a stalled
 * master does not end a fresh acquire's wait; releases reach a master that
 * was stopped with its script cache flushed; a key without a TTL is named
 * when the wait runs out. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static hrl_lock *new_lock(hrl_client *c, const char *name, uint32_t ttl_ms) {
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, name, strlen(name), ttl_ms, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

static int64_t ms_since(int64_t t0) {
  return (hrl_now_us() - t0) / 1000;
}

/* A fresh client's first acquire, which also connects: a connect or its
 * handshake (bounded by the 50 ms per-master default) can miss under a
 * loaded test run ("connection failed" in a clean-clone make test beside
 * valgrind and the prebuild), and connecting is not what these tests are
 * about: tried again for up to 5 s while that is the answer. A failed
 * acquire leaves no key behind. */
static void acquire_connecting(hrl_lock *lk) {
  int64_t t0 = hrl_now_us();
  hrl_status st = hrl_lock_acquire(lk, 0);
  while (st == HRL_ECONNECT && ms_since(t0) < 5000) {
    usleep(20 * 1000);
    st = hrl_lock_acquire(lk, 0);
  }
  CHECK_STATUS(st, HRL_OK);
}

typedef struct contender {
  hrl_client *client;
  const char *name;
  atomic_bool *stop;
} contender;

/* Waits for the lock (500 ms at a time), takes it, lets go, again. */
static void *contend(void *p) {
  contender *a = p;
  while (!atomic_load(a->stop)) {
    hrl_lock *lk = new_lock(a->client, a->name, 1000);
    if (hrl_lock_acquire(lk, 500) == HRL_OK) {
      hrl_lock_release(lk);
    }
    hrl_lock_free(lk);
  }
  return NULL;
}

typedef struct stall_probe {
  atomic_bool *stop;
  int64_t worst_us;
} stall_probe;

/* How long a thread of this process that wants to run may wait for a CPU:
 * the worst lateness of a 5 ms sleep and a little work after it (as the
 * renewer's wake and step). The work matters: valgrind runs one thread at
 * a time, and one that computes waits for the others' time slices, which a
 * bare sleep hardly shows (9 ms where the renewer was kept off the CPU for
 * 150 ms and more between two of its lines). */
static void *probe_stalls(void *p) {
  stall_probe *a = p;
  volatile uint64_t x = 88172645463325252u;
  while (!atomic_load(a->stop)) {
    int64_t t = hrl_now_us();
    usleep(5 * 1000);
    for (int k = 0; k < 20000; k++) { /* some work, as a renewal's step */
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    int64_t late = hrl_now_us() - t - 5 * 1000;
    a->worst_us = late > a->worst_us ? late : a->worst_us;
  }
  return NULL;
}

/* N = 5, master 5 paused, 12 threads waiting through the holder's own
 * client (the default 50 ms per master): a 1 s lease stays held, and the
 * holder's extends answer within a few rounds. Before #24 the renewal
 * queued behind the waiters' rounds (each of which waited out the paused
 * master's timeout while holding the client): the lease was lost within
 * 1 to 2.5 s, and an extend took up to a second. The rounds' cost on this
 * machine as it is now is measured beside them: a lone client's extends
 * of a lock of its own, on the same masters. */
static void test_a_paused_master_does_not_starve_the_holder(void) {
  enum { THREADS = 12, TIMEOUT_MS = 50 /* the default */ };
  fixture fx;
  fixture_start(&fx, 5, NULL);
  hrl_options o; /* the default 50 ms per master; time for a first
                    connect under valgrind, which is not what is tested */
  hrl_options_init(&o);
  o.connect_timeout_ms = 1000;
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.ttl_ms = 1000;
  lo.auto_renew = true;
  hrl_lock *lease = NULL;
  CHECK_STATUS(hrl_lock_new_with(c, "wf:starve", 9, &lo, &lease, NULL, 0),
               HRL_OK);
  acquire_connecting(lease);
  hrl_lock *held = new_lock(c, "wf:held", 10000);
  acquire_connecting(held);
  hrl_client *lone = fixture_client(&fx, &o);
  hrl_lock *alone = new_lock(lone, "wf:alone", 10000);
  acquire_connecting(alone);
  atomic_bool stop = false;
  contender a = {c, "wf:starve", &stop};
  atomic_bool probe_stop = false;
  stall_probe probe = {&probe_stop, 0};
  pthread_t probe_th;
  pthread_create(&probe_th, NULL, probe_stalls, &probe);
  pthread_t th[THREADS];
  for (int k = 0; k < THREADS; k++) {
    pthread_create(&th[k], NULL, contend, &a);
  }
  usleep(300 * 1000);
  fixture_ctl(&fx, "pause", 5, NULL);
  int64_t t0 = hrl_now_us(), worst_ms = 0, alone_ms = 0;
  bool kept = true;
  hrl_status held_st = HRL_OK, alone_st = HRL_OK; /* a failed extend's */
  while (ms_since(t0) < 3000 && kept) {
    int64_t e0 = hrl_now_us();
    hrl_status st = hrl_lock_extend(held, 0);
    held_st = st != HRL_OK ? st : held_st;
    worst_ms = ms_since(e0) > worst_ms ? ms_since(e0) : worst_ms;
    e0 = hrl_now_us();
    st = hrl_lock_extend(alone, 0);
    alone_st = st != HRL_OK ? st : alone_st;
    alone_ms = ms_since(e0) > alone_ms ? ms_since(e0) : alone_ms;
    kept = hrl_lock_held(lease);
    usleep(50 * 1000);
  }
  atomic_store(&probe_stop, true);
  pthread_join(probe_th, NULL);
  int64_t stall_ms = probe.worst_us / 1000;
  printf("  lease kept %s (%lld ms), slowest extend %lld ms (a lone "
         "client's: %lld ms), a thread waited up to %lld ms to run\n",
         kept ? "all along" : "NOT", (long long)ms_since(t0),
         (long long)worst_ms, (long long)alone_ms, (long long)stall_ms);
  if (!kept) { /* why: a renewal's deadlines, or the quorum's answers */
    char why[HRL_DETAIL_MAX];
    hrl_lock_lost(lease, why, sizeof why);
    printf("  lease lost: %s\n", why);
  }
  /* The renewer needs, from when its renewal is due (2/3 of the TTL
   * left), to wake, to wait for the round already out (at most the
   * per-master timeout), and its own round (the same) and the step that
   * reads it: four waits to run and two timeouts. Where a thread of this
   * process waited longer than that allows (valgrind runs one thread at a
   * time; at a load of 10-25 it waited 200-1090 ms where natively 4-10),
   * the lease's loss says nothing about the turns, and is not judged. */
  int64_t judged_ms = ((int64_t)lo.ttl_ms * 2 / 3 - 2 * TIMEOUT_MS) / 4;
  if (!kept && stall_ms > judged_ms) {
    printf("  not judged: a thread waited %lld ms to run, more than the "
           "%lld ms the lease allows\n",
           (long long)stall_ms, (long long)judged_ms);
  }
  CHECK(kept || stall_ms > judged_ms);
  /* An extend's round ends with every master's reply late ("connection
   * failed") when its thread waits past the per-master timeout to read
   * them: under valgrind at a load of ~20, 1563 ms. */
  if (held_st != HRL_OK || alone_st != HRL_OK) {
    printf("  an extend failed: %s (shared client), %s (lone client)\n",
           hrl_strerror(held_st), hrl_strerror(alone_st));
  }
  CHECK((held_st == HRL_OK && alone_st == HRL_OK) || stall_ms > TIMEOUT_MS);
  /* At most a waiter's round in flight, then its own: two rounds as the
   * lone client's cost, the paused master's timeout in either (the first
   * waits it once), and one more for the turn, and the longest a thread
   * here waited to run; not a queue of the 12 waiters' rounds. */
  CHECK(worst_ms < 2 * alone_ms + 3 * TIMEOUT_MS + stall_ms);
  atomic_store(&stop, true);
  fixture_ctl(&fx, "resume", 5, NULL);
  for (int k = 0; k < THREADS; k++) {
    pthread_join(th[k], NULL);
  }
  hrl_status released = hrl_lock_release(lease);
  CHECK(released == HRL_OK || (released == HRL_ELOST && stall_ms > judged_ms));
  released = hrl_lock_release(held); /* a failed extend may lose it */
  CHECK(released == HRL_OK || held_st != HRL_OK);
  released = hrl_lock_release(alone);
  CHECK(released == HRL_OK || alone_st != HRL_OK);
  hrl_lock_free(lease);
  hrl_lock_free(held);
  hrl_lock_free(alone);
  hrl_client_free(lone);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* The queue script's runs on node so far (EVALSHA and EVAL). */
static long long script_calls(fixture *f, int node) {
  static const char *const stats[] = {"cmdstat_evalsha:calls=",
                                      "cmdstat_eval:calls="};
  redisReply *r = fixture_cmd(f, node, "INFO commandstats");
  long long calls = 0;
  for (size_t k = 0; r != NULL && k < 2; k++) {
    const char *at = strstr(r->str, stats[k]);
    calls += at != NULL ? atoll(at + strlen(stats[k])) : 0;
  }
  freeReplyObject(r);
  return calls;
}

typedef struct waiter_arg {
  hrl_client *client;
  hrl_status status;
} waiter_arg;

static void *wait_for_churn(void *p) {
  waiter_arg *a = p;
  hrl_lock *lk = new_lock(a->client, "wf:churn", 30000);
  a->status = hrl_lock_acquire(lk, 20000);
  if (a->status == HRL_OK) {
    hrl_lock_release(lk);
  }
  hrl_lock_free(lk);
  return NULL;
}

/* The holder's key is gone from master 5 (restarted empty): two patient
 * waiters (their cap is 10 s) used to pass master 5 to each other by
 * step aside and PUBLISH for the whole hold, ~36 queue-script calls a
 * second on every master; they stay parked now, and still get the lock
 * once it is released. */
static void test_waiters_stay_parked_while_the_holder_lacks_a_master(void) {
  fixture fx;
  fixture_start(&fx, 5, NULL);
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 10000;
  o.retry_jitter_ms = 0;
  hrl_client *hc = fixture_client(&fx, NULL);
  hrl_lock *holder = new_lock(hc, "wf:churn", 30000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  CHECK_INT(fixture_int(&fx, 5, "DEL wf:churn"), 1);
  waiter_arg a[2];
  pthread_t th[2];
  for (int k = 0; k < 2; k++) {
    a[k] = (waiter_arg){fixture_client(&fx, &o), HRL_EINVAL};
    pthread_create(&th[k], NULL, wait_for_churn, &a[k]);
  }
  usleep(1000 * 1000);
  long long before[5], calls = 0;
  for (int i = 0; i < 5; i++) {
    before[i] = script_calls(&fx, i + 1);
  }
  usleep(2000 * 1000);
  for (int i = 0; i < 5; i++) {
    long long d = script_calls(&fx, i + 1) - before[i];
    calls = d > calls ? d : calls;
  }
  printf("  queue-script calls in 2 s on the busiest master: %lld\n", calls);
  CHECK(calls <= 4); /* parked: nothing between their caps */
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  for (int k = 0; k < 2; k++) {
    pthread_join(th[k], NULL);
    CHECK_STATUS(a[k].status, HRL_OK);
    hrl_client_free(a[k].client);
  }
  CHECK(ms_since(t0) < 5000); /* handed over, not the 10 s cap */
  hrl_lock_free(holder);
  hrl_client_free(hc);
  fixture_stop(&fx);
}

/* N = 1, the master stalled 300 ms (CLIENT PAUSE) under a fresh acquire
 * willing to wait 5 s: it rides the stall out and gets the lock, as a
 * queued waiter does (it failed after its first 50 ms before #24); one
 * without a wait still fails at once. */
static void test_a_stalled_master_does_not_end_a_wait(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL);
  hrl_client *c = fixture_client(&fx, NULL); /* 50 ms per master */
  hrl_lock *lk = new_lock(c, "wf:stall", 10000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK); /* connected */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  freeReplyObject(fixture_cmd(&fx, 1, "CLIENT PAUSE 300"));
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 5000), HRL_OK);
  int64_t took = ms_since(t0);
  printf("  acquired after a 300 ms stall in %lld ms\n", (long long)took);
  CHECK(took >= 250 && took < 3000);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  freeReplyObject(fixture_cmd(&fx, 1, "CLIENT PAUSE 300"));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ECONNECT);
  CHECK_CONTAINS(hrl_lock_error(lk), "timeout after 50 ms");
  usleep(400 * 1000);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* Master 3 of 3 stopped after its script cache was flushed, 50 acquire /
 * release cycles over 7 names, then resumed: every key is gone once it
 * caught up. Before #24 the driver closed the stopped master's connection
 * once it owed 64 replies; the server, waking up, ran the first of what
 * was queued on it and dropped the rest, a release behind its SET among
 * them: one key of the 7 stayed for its TTL (3 runs of 3). */
static void test_releases_reach_a_stopped_master(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  hrl_client *c = fixture_client(&fx, NULL);
  char names[7][16];
  hrl_lock *locks[7];
  for (int k = 0; k < 7; k++) {
    snprintf(names[k], sizeof names[k], "wf:nos:%d", k);
    locks[k] = new_lock(c, names[k], 10000);
    CHECK_STATUS(hrl_lock_acquire(locks[k], 0), HRL_OK);
    CHECK_STATUS(hrl_lock_release(locks[k]), HRL_OK); /* scripts cached */
  }
  freeReplyObject(fixture_cmd(&fx, 3, "SCRIPT FLUSH"));
  fixture_ctl(&fx, "pause", 3, NULL);
  for (int cycle = 0; cycle < 50; cycle++) {
    hrl_lock *lk = locks[cycle % 7];
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  }
  fixture_ctl(&fx, "resume", 3, NULL);
  usleep(1000 * 1000); /* it catches up in milliseconds; the keys live 10 s */
  int left = 0;
  for (int k = 0; k < 7; k++) {
    left += fixture_count_key(&fx, names[k], strlen(names[k]));
  }
  printf("  keys left a second after the resume: %d\n", left);
  CHECK_INT(left, 0);
  for (int k = 0; k < 7; k++) {
    hrl_lock_free(locks[k]);
  }
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* A plain SET without a TTL over the lock's name: the wait runs out (a
 * key like that frees only when what wrote it deletes it) and says so. */
static void test_a_key_without_a_ttl_is_named(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL);
  hrl_client *c = fixture_client(&fx, NULL);
  hrl_lock *holder = new_lock(c, "wf:orders:42", 10000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  freeReplyObject(fixture_cmd(&fx, 1, "SET wf:orders:42 paid"));
  hrl_lock *lk = new_lock(c, "wf:orders:42", 10000);
  CHECK_STATUS(hrl_lock_acquire(lk, 500), HRL_ETIMEOUT);
  CHECK_CONTAINS(hrl_lock_error(lk), ": the key has no TTL (it never expires");
  char msg[HRL_DETAIL_MAX + 64];
  printf("  %s\n",
         hrl_format_error(HRL_ETIMEOUT, hrl_lock_error(lk), msg, sizeof msg));
  CHECK_STATUS(hrl_lock_release(holder), HRL_ENOTOWNED);
  hrl_lock_free(holder);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

int main(void) {
  RUN(test_a_paused_master_does_not_starve_the_holder);
  RUN(test_waiters_stay_parked_while_the_holder_lacks_a_master);
  RUN(test_a_stalled_master_does_not_end_a_wait);
  RUN(test_releases_reach_a_stopped_master);
  RUN(test_a_key_without_a_ttl_is_named);
  return finish_tests("test_waiting_faults");
}
