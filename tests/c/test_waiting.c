/* Waiting with real Redis and the built-in driver: a release wakes the
 * waiters (they do not poll), they get the lock in arrival order, a holder
 * that releases and takes it again at once queues behind them, and every
 * fallback (a killed subscriber connection, a holder that publishes
 * nothing, one that crashed) still ends the wait within the holder's TTL.
 * Waiters use a retry_delay of 10 s, so a wait that ends sooner was ended
 * by a hand-off or the holder's TTL, never by polling. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "proto/resp.h"

static fixture fx;
static fixture fx5;

/* Waiters that never poll: their cap is 10 s. */
enum { PATIENT_CAP_MS = 10000 };
static hrl_client *patient(fixture *f) {
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = PATIENT_CAP_MS;
  o.retry_jitter_ms = 0;
  o.timeout_ms = 500; /* TOLERANT: a loaded machine */
  o.connect_timeout_ms = 1000;
  return fixture_client(f, &o);
}

static hrl_lock *new_lock(hrl_client *c, const char *name, uint32_t ttl_ms) {
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, name, strlen(name), ttl_ms, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

static int64_t ms_since(int64_t t0) {
  return (hrl_now_us() - t0) / 1000;
}

/* Waits until name's queue on node 1 holds n waiters. */
static void await_queued(fixture *f, const char *name, long long n) {
  for (int i = 0; i < 2000; i++) {
    if (fixture_int(f, 1, "ZCARD %s{%s}:queue", name, name) >= n) {
      return;
    }
    usleep(1000);
  }
  CHECK(!"the waiters did not queue");
}

static void test_the_queue_script_matches_redis(void) {
  redisReply *r = fixture_cmd(&fx, 1, "SCRIPT LOAD %s", HRL_QUEUE_SCRIPT);
  CHECK(r != NULL && r->type == REDIS_REPLY_STRING);
  CHECK_STR(r->str, HRL_QUEUE_SHA1);
  freeReplyObject(r);
  r = fixture_cmd(&fx, 1, "SCRIPT LOAD %s", HRL_EXTEND_SCRIPT);
  CHECK(r != NULL && r->type == REDIS_REPLY_STRING);
  CHECK_STR(r->str, HRL_EXTEND_SHA1);
  freeReplyObject(r);
  r = fixture_cmd(&fx, 1, "SCRIPT LOAD %s", HRL_PLAIN_RELEASE_SCRIPT);
  CHECK(r != NULL && r->type == REDIS_REPLY_STRING);
  CHECK_STR(r->str, HRL_PLAIN_RELEASE_SHA1);
  freeReplyObject(r);
}

typedef struct waiter_arg {
  hrl_client *client;
  const char *name;
  int64_t wait_ms;
  hrl_status status;
  int64_t took_ms;
  int order; /* when it got the lock, counted by got_lock */
  uint32_t hold_ms;
} waiter_arg;

static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER;
static int got_lock = 0;

static void *wait_for_lock(void *p) {
  waiter_arg *a = p;
  hrl_lock *lk = new_lock(a->client, a->name, 10000);
  int64_t t0 = hrl_now_us();
  a->status = hrl_lock_acquire(lk, a->wait_ms);
  a->took_ms = ms_since(t0);
  if (a->status == HRL_OK) {
    pthread_mutex_lock(&order_mu);
    a->order = got_lock++;
    pthread_mutex_unlock(&order_mu);
    usleep(a->hold_ms * 1000);
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  }
  hrl_lock_free(lk);
  return NULL;
}

static void test_a_release_in_another_process_wakes_the_waiter(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *holder = new_lock(c, "wait:wake", 30000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  pid_t pid = fork();
  if (pid == 0) {
    usleep(300 * 1000);
    hrl_status st = hrl_lock_release(holder);
    hrl_lock_free(holder);
    hrl_client_free(c);
    fixture_forget(&fx);
    _exit(st == HRL_OK ? 0 : 1);
  }
  hrl_client *w = patient(&fx);
  waiter_arg a = {w, "wait:wake", 20000, HRL_EINVAL, 0, 0, 0};
  wait_for_lock(&a);
  CHECK_STATUS(a.status, HRL_OK);
  /* Woken by the release at 300 ms: not its cap (10 s), nor the TTL:
   * under half the cap (it was 3 s, which a loaded machine's fork and
   * process exit could approach). */
  CHECK(a.took_ms >= 250 && a.took_ms < PATIENT_CAP_MS / 2);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS wait:wake{wait:wake}:queue"), 0);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS wait:wake{wait:wake}:waiters"), 0);
  hrl_lock_free(holder);
  hrl_client_free(c);
  hrl_client_free(w);
}

/* Waiters queue one after the other (each once the one before is in the
 * queue), then the holder releases: they get the lock in that order. With
 * shared_client, every waiter is a thread of one client (the subscriber
 * connections and the poller's role are shared). */
static void fifo(fixture *f, const char *name, bool shared_client) {
  enum { W = 6 };
  hrl_client *hc = patient(f);
  hrl_client *shared = shared_client ? patient(f) : NULL;
  hrl_lock *holder = new_lock(hc, name, 30000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  got_lock = 0;
  pthread_t th[W];
  waiter_arg a[W];
  int64_t first_try = hrl_now_us(); /* no waiter tried before this */
  for (int k = 0; k < W; k++) {
    hrl_client *c = shared != NULL ? shared : patient(f);
    a[k] = (waiter_arg){c, name, 20000, HRL_EINVAL, 0, -1, 20};
    pthread_create(&th[k], NULL, wait_for_lock, &a[k]);
    await_queued(f, name, k + 1);
  }
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  for (int k = 0; k < W; k++) {
    pthread_join(th[k], NULL);
    CHECK_STATUS(a[k].status, HRL_OK);
    CHECK_INT(a[k].order, k);
  }
  /* Six hand-offs of 20 ms holds, no polling: all done before the first
   * waiter's cap could have woken it (PATIENT_CAP_MS after its first
   * try). It was 5 s after the release, a margin a loaded machine could
   * use up, though a cap costs 10 s. */
  CHECK(ms_since(first_try) < PATIENT_CAP_MS);
  CHECK_INT(fixture_int(f, 1, "EXISTS %s", name), 0);
  CHECK_INT(fixture_int(f, 1, "EXISTS %s{%s}:queue", name, name), 0);
  for (int k = 0; k < W; k++) {
    if (shared == NULL) {
      hrl_client_free(a[k].client);
    }
  }
  hrl_client_free(shared);
  hrl_lock_free(holder);
  hrl_client_free(hc);
}

static void test_waiters_get_the_lock_in_arrival_order(void) {
  fifo(&fx, "wait:fifo", false);
  fifo(&fx, "wait:fifo-shared", true);
}

static void test_fifo_on_five_masters(void) {
  fifo(&fx5, "wait:fifo5", false);
}

static void test_a_holder_that_takes_it_again_queues_behind(void) {
  hrl_client *c = patient(&fx);
  hrl_client *w = patient(&fx);
  hrl_lock *holder = new_lock(c, "wait:again", 30000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  got_lock = 0;
  pthread_t th;
  waiter_arg a = {w, "wait:again", 20000, HRL_EINVAL, 0, -1, 200};
  pthread_create(&th, NULL, wait_for_lock, &a);
  await_queued(&fx, "wait:again", 1);
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  /* At once: the key is reserved for the waiter, so this queues. */
  CHECK_STATUS(hrl_lock_acquire(holder, 20000), HRL_OK);
  pthread_mutex_lock(&order_mu);
  int mine = got_lock++;
  pthread_mutex_unlock(&order_mu);
  pthread_join(th, NULL);
  CHECK_STATUS(a.status, HRL_OK);
  CHECK_INT(a.order, 0);
  CHECK_INT(mine, 1);
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  hrl_lock_free(holder);
  hrl_client_free(c);
  hrl_client_free(w);
}

/* A lock set by someone who publishes nothing (redis-py's Lock, an old
 * client): the waiter gets it after that holder deletes it within its cap,
 * and after it expires within its TTL. */
static void test_a_holder_that_publishes_nothing(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 300;
  o.retry_jitter_ms = 0;
  o.timeout_ms = 500;
  hrl_client *c = fixture_client(&fx, &o);
  freeReplyObject(fixture_cmd(&fx, 1, "SET wait:quiet other PX 30000"));
  pthread_t th;
  waiter_arg a = {c, "wait:quiet", 20000, HRL_EINVAL, 0, -1, 0};
  pthread_create(&th, NULL, wait_for_lock, &a);
  await_queued(&fx, "wait:quiet", 1);
  usleep(200 * 1000);
  int64_t t0 = hrl_now_us();
  freeReplyObject(fixture_cmd(&fx, 1, "DEL wait:quiet"));
  pthread_join(th, NULL);
  CHECK_STATUS(a.status, HRL_OK);
  CHECK(ms_since(t0) < 300 + 1500); /* its cap, not the 30 s TTL */

  /* A crashed holder: its key expires after 1 s; the waiter, whose cap is
   * 10 s, asks the master for that TTL and wakes then. */
  hrl_client *p = patient(&fx);
  freeReplyObject(fixture_cmd(&fx, 1, "SET wait:crashed gone PX 1000"));
  a = (waiter_arg){p, "wait:crashed", 20000, HRL_EINVAL, 0, -1, 0};
  t0 = hrl_now_us();
  wait_for_lock(&a);
  CHECK_STATUS(a.status, HRL_OK);
  CHECK(a.took_ms >= 900 && a.took_ms < 1000 + 2000);
  hrl_client_free(p);
  hrl_client_free(c);
}

/* Whether a client subscribes to channel on node 1. */
static bool subscribed(fixture *f, const char *channel, size_t len) {
  redisReply *r = fixture_cmd(f, 1, "PUBSUB NUMSUB %b", channel, len);
  bool yes = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
             r->element[1]->integer >= 1;
  freeReplyObject(r);
  return yes;
}

/* How many SUBSCRIBE commands master 1 refused (its ACL LOG: entries of
 * the same client and reason add to one entry's count). */
static long long refused_subscribes(fixture *f) {
  redisReply *r = fixture_cmd(f, 1, "ACL LOG");
  long long n = 0;
  for (size_t i = 0;
       r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
    redisReply *e = r->element[i];
    long long count = 0;
    bool subscribe = false;
    for (size_t k = 0; e->type == REDIS_REPLY_ARRAY && k + 1 < e->elements;
         k += 2) {
      const char *field = e->element[k]->str;
      redisReply *v = e->element[k + 1];
      if (strcmp(field, "count") == 0) {
        count = v->integer;
      } else if (strcmp(field, "object") == 0) {
        subscribe = v->str != NULL && strcmp(v->str, "subscribe") == 0;
      }
    }
    n += subscribe ? count : 0;
  }
  freeReplyObject(r);
  return n;
}

/* The subscriber connection is killed while the waiter waits, and cannot
 * subscribe again for a while (ACL): the hand-off is published to nobody.
 * Once the subscription is back, the waiter tries again and claims it.
 * No fixed sleep: the hand-off is seen to stay the waiter's, unclaimed,
 * across two of its subscriber's tries refused after the release (50 ms
 * and 100 ms apart, then up to 1 s: listen.c), which is when it would
 * have heard. */
static void test_a_killed_subscriber_connection(void) {
  hrl_client *c = patient(&fx);
  hrl_client *w = patient(&fx);
  hrl_lock *holder = new_lock(c, "wait:killed", 30000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  pthread_t th;
  waiter_arg a = {w, "wait:killed", 20000, HRL_EINVAL, 0, -1, 0};
  pthread_create(&th, NULL, wait_for_lock, &a);
  await_queued(&fx, "wait:killed", 1);
  size_t len;
  const char *channel = hrl_client_channel(w, &len);
  int64_t t_sub = hrl_now_us();
  while (!subscribed(&fx, channel, len) &&
         ms_since(t_sub) < PATIENT_CAP_MS / 2) {
    usleep(1000); /* until its subscription is up */
  }
  CHECK(subscribed(&fx, channel, len));
  char queued[64];
  redisReply *q =
      fixture_cmd(&fx, 1, "ZRANGE wait:killed{wait:killed}:queue 0 0");
  CHECK(q != NULL && q->type == REDIS_REPLY_ARRAY && q->elements == 1);
  snprintf(queued, sizeof queued, "%s",
           q != NULL && q->elements == 1 ? q->element[0]->str : "");
  freeReplyObject(q);
  /* Kill it, and refuse it until the hand-off is made. */
  freeReplyObject(fixture_cmd(&fx, 1, "ACL LOG RESET"));
  freeReplyObject(fixture_cmd(&fx, 1, "ACL SETUSER default -subscribe"));
  CHECK(fixture_int(&fx, 1, "CLIENT KILL TYPE pubsub") >= 1);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  /* Reserved for the waiter: the key holds the token it queued with. */
  char value[64];
  fixture_get(&fx, 1, "wait:killed", 11, value, sizeof value);
  CHECK_STR(value, queued);
  long long refused = refused_subscribes(&fx);
  while (refused_subscribes(&fx) < refused + 2 &&
         ms_since(t0) < PATIENT_CAP_MS / 2) {
    fixture_get(&fx, 1, "wait:killed", 11, value, sizeof value);
    if (strcmp(value, queued) != 0) {
      break; /* taken by a waiter that heard nothing: checked below */
    }
    usleep(1000);
  }
  /* Still the waiter's, which has not heard of it. */
  fixture_get(&fx, 1, "wait:killed", 11, value, sizeof value);
  CHECK_STR(value, queued);
  CHECK(refused_subscribes(&fx) >= refused + 2);
  freeReplyObject(fixture_cmd(&fx, 1, "ACL SETUSER default +subscribe"));
  pthread_join(th, NULL);
  CHECK_STATUS(a.status, HRL_OK);
  /* Woken by its subscription coming back, not by its 10 s cap (which
   * comes no sooner than that after its first try). */
  printf("  claimed %lld ms after the release, %lld ms after it began\n",
         (long long)ms_since(t0), (long long)a.took_ms);
  CHECK(a.took_ms < PATIENT_CAP_MS);
  hrl_lock_free(holder);
  hrl_client_free(c);
  hrl_client_free(w);
}

static bool after_200ms(void *ud) {
  return ms_since(*(int64_t *)ud) >= 200;
}

static void test_timeout_and_cancel_leave_nothing(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *holder = new_lock(c, "wait:leave", 30000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  hrl_lock *w = new_lock(c, "wait:leave", 10000);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(w, 300), HRL_ETIMEOUT);
  CHECK(ms_since(t0) >= 300 && ms_since(t0) < 300 + 3 * 500);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS wait:leave{wait:leave}:queue"), 0);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS wait:leave{wait:leave}:waiters"), 0);
  /* Cancelled while waiting: it leaves the queue as well. */
  t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire_cancellable(w, 20000, after_200ms, &t0),
               HRL_ECANCELLED);
  CHECK(ms_since(t0) >= 200 && ms_since(t0) < 200 + 3 * 500);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS wait:leave{wait:leave}:queue"), 0);
  hrl_lock_free(w);
  hrl_lock_free(holder);
  hrl_client_free(c);
}

/* A waiter that died (its entry left, its lease run out) is passed over by
 * the release: the lock goes to the next one. */
static void test_a_dead_waiter_is_passed_over(void) {
  hrl_client *c = patient(&fx);
  hrl_client *w = patient(&fx);
  hrl_lock *holder = new_lock(c, "wait:dead", 30000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  pthread_t th;
  waiter_arg a = {w, "wait:dead", 20000, HRL_EINVAL, 0, -1, 0};
  pthread_create(&th, NULL, wait_for_lock, &a);
  await_queued(&fx, "wait:dead", 1);
  /* First in line, but its lease ended at 1 ms past the epoch. */
  freeReplyObject(fixture_cmd(&fx, 1, "ZADD wait:dead{wait:dead}:queue 1 %s",
                              "deaddeaddeaddeaddeaddeaddeaddead"));
  freeReplyObject(fixture_cmd(&fx, 1, "HSET wait:dead{wait:dead}:waiters %s %s",
                              "deaddeaddeaddeaddeaddeaddeaddead", "1 2000 x"));
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  pthread_join(th, NULL);
  CHECK_STATUS(a.status, HRL_OK);
  CHECK(ms_since(t0) < 3000);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS wait:dead{wait:dead}:queue"), 0);
  hrl_lock_free(holder);
  hrl_client_free(c);
  hrl_client_free(w);
}

int main(void) {
  fixture_start(&fx, 1, NULL);
  fixture_start(&fx5, 5, NULL);
  RUN(test_the_queue_script_matches_redis);
  RUN(test_a_release_in_another_process_wakes_the_waiter);
  RUN(test_waiters_get_the_lock_in_arrival_order);
  RUN(test_fifo_on_five_masters);
  RUN(test_a_holder_that_takes_it_again_queues_behind);
  RUN(test_a_holder_that_publishes_nothing);
  RUN(test_a_killed_subscriber_connection);
  RUN(test_timeout_and_cancel_leave_nothing);
  RUN(test_a_dead_waiter_is_passed_over);
  fixture_stop(&fx5);
  fixture_stop(&fx);
  return finish_tests("test_waiting");
}
