/* Read-write locks and semaphores against real Redis, through the public
 * API and the built-in driver: many reads or one write, a waiting write
 * stops new reads, the queue is served in arrival order (woken by the
 * release, not by polling: waiters' retry cap is 10 s), a crashed reader
 * frees its share alone, writes' fences grow and reads see the last one;
 * at most `permits` permits, each with its own number, a dead holder's
 * permit expiring with its TTL, waiters woken in arrival order, and what
 * changing `permits` does. Keys carry a TTL throughout. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "hiredlock/binding.h"
#include "proto/hold_script.h"

static fixture fx;

/* Waiters that never poll before RETRY_CAP_MS: one woken sooner was woken
 * by a release (its hand-off message), not by its own retry. */
#define RETRY_CAP_MS 10000

static hrl_client *patient(fixture *f) {
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = RETRY_CAP_MS;
  o.retry_jitter_ms = 0;
  o.timeout_ms = 500; /* TOLERANT: a loaded machine */
  o.connect_timeout_ms = 1000;
  return fixture_client(f, &o);
}

static hrl_lock *rw(hrl_client *c, const char *name, hrl_lock_mode mode,
                    uint32_t ttl_ms, bool fenced) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.ttl_ms = ttl_ms;
  lo.fenced = fenced;
  hrl_lock *lk = NULL;
  char detail[HRL_DETAIL_MAX] = "";
  CHECK_STATUS(hrl_rwlock_new(c, name, strlen(name), mode, &lo, &lk, detail,
                              sizeof detail),
               HRL_OK);
  return lk;
}

static hrl_lock *permit(hrl_client *c, const char *name, uint32_t permits,
                        uint32_t ttl_ms) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.ttl_ms = ttl_ms;
  hrl_lock *lk = NULL;
  CHECK_STATUS(
      hrl_permit_new(c, name, strlen(name), permits, &lo, &lk, NULL, 0),
      HRL_OK);
  return lk;
}

static int64_t ms_since(int64_t t0) {
  return (hrl_now_us() - t0) / 1000;
}

static void await_queued(fixture *f, const char *name, long long n) {
  for (int i = 0; i < 4000; i++) {
    if (fixture_int(f, 1, "ZCARD %s{%s}:queue", name, name) >= n) {
      return;
    }
    usleep(1000);
  }
  CHECK(!"the waiters did not queue");
}

static void test_the_scripts_match_redis(void) {
  redisReply *r = fixture_cmd(&fx, 1, "SCRIPT LOAD %s", HRL_RW_SCRIPT);
  CHECK(r != NULL && r->type == REDIS_REPLY_STRING);
  CHECK_STR(r->str, HRL_RW_SHA1);
  freeReplyObject(r);
  r = fixture_cmd(&fx, 1, "SCRIPT LOAD %s", HRL_SEM_SCRIPT);
  CHECK(r != NULL && r->type == REDIS_REPLY_STRING);
  CHECK_STR(r->str, HRL_SEM_SHA1);
  freeReplyObject(r);
}

/* One acquire in a thread: its outcome, when it returned, and in which
 * order among the others it got its hold. */
typedef struct waiter {
  hrl_client *client; /* its own, freed with it */
  hrl_lock *lock;
  int64_t wait_ms;
  hrl_status status;
  int64_t took_ms;
  int order;
} waiter;

static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER;
static int got = 0;

static void *acquire_in_thread(void *p) {
  waiter *w = p;
  int64_t t0 = hrl_now_us();
  w->status = hrl_lock_acquire(w->lock, w->wait_ms);
  w->took_ms = ms_since(t0);
  pthread_mutex_lock(&order_mu);
  w->order = w->status == HRL_OK ? got++ : -1;
  pthread_mutex_unlock(&order_mu);
  return NULL;
}

static void waiter_free(waiter *w) {
  hrl_lock_free(w->lock);
  hrl_client_free(w->client);
}

static void test_reads_share_and_a_write_is_alone(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *r1 = rw(c, "rw:share", HRL_MODE_READ, 30000, false);
  hrl_lock *r2 = rw(c, "rw:share", HRL_MODE_READ, 30000, false);
  hrl_lock *w = rw(c, "rw:share", HRL_MODE_WRITE, 30000, false);
  CHECK_STATUS(hrl_lock_acquire(r1, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(r2, 0), HRL_OK);
  CHECK(strcmp(hrl_lock_token(r1), hrl_lock_token(r2)) != 0);
  CHECK_INT(fixture_int(&fx, 1, "HLEN rw:share"), 2);
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_release(r1), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_release(r2), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(r1, 0), HRL_ETIMEOUT);
  /* extend keeps the key's TTL with its longest hold */
  CHECK_STATUS(hrl_lock_extend(w, 60000), HRL_OK);
  long long pttl = fixture_int(&fx, 1, "PTTL rw:share");
  CHECK(pttl > 50000 && pttl <= 60000);
  CHECK_STATUS(hrl_lock_release(w), HRL_OK);
  CHECK_STATUS(hrl_lock_release(w), HRL_ENOTHELD);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS rw:share"), 0);
  hrl_lock_free(r1);
  hrl_lock_free(r2);
  hrl_lock_free(w);
  hrl_client_free(c);
}

/* Readers hold; a writer waits; later readers queue behind it (the
 * writer is not starved). The last read's release hands the lock to the
 * writer, whose release hands it to every queued read at once. */
static void test_a_waiting_write_stops_new_reads(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *r0 = rw(c, "rw:order", HRL_MODE_READ, 30000, false);
  CHECK_STATUS(hrl_lock_acquire(r0, 0), HRL_OK);
  got = 0;
  waiter w = {patient(&fx), NULL, 20000, HRL_EINVAL, 0, -1};
  w.lock = rw(w.client, "rw:order", HRL_MODE_WRITE, 30000, false);
  pthread_t tw, tr[3];
  pthread_create(&tw, NULL, acquire_in_thread, &w);
  await_queued(&fx, "rw:order", 1);
  hrl_lock *late = rw(c, "rw:order", HRL_MODE_READ, 30000, false);
  CHECK_STATUS(hrl_lock_acquire(late, 0), HRL_ETIMEOUT); /* behind w */
  waiter r[3];
  for (int k = 0; k < 3; k++) {
    r[k] = (waiter){patient(&fx), NULL, 20000, HRL_EINVAL, 0, -1};
    r[k].lock = rw(r[k].client, "rw:order", HRL_MODE_READ, 30000, false);
    pthread_create(&tr[k], NULL, acquire_in_thread, &r[k]);
    await_queued(&fx, "rw:order", k + 2);
  }
  usleep(200 * 1000);
  CHECK_INT(got, 0);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_release(r0), HRL_OK);
  pthread_join(tw, NULL);
  CHECK_STATUS(w.status, HRL_OK);
  CHECK_INT(w.order, 0);
  CHECK(ms_since(t0) < RETRY_CAP_MS); /* handed over, not polled */
  usleep(200 * 1000);
  CHECK_INT(got, 1); /* the reads wait for the write */
  t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_release(w.lock), HRL_OK);
  for (int k = 0; k < 3; k++) {
    pthread_join(tr[k], NULL);
    CHECK_STATUS(r[k].status, HRL_OK);
    CHECK(r[k].order >= 1);
  }
  CHECK(ms_since(t0) < RETRY_CAP_MS);
  CHECK_INT(fixture_int(&fx, 1, "HLEN rw:order"), 3); /* all at once */
  for (int k = 0; k < 3; k++) {
    CHECK_STATUS(hrl_lock_release(r[k].lock), HRL_OK);
    waiter_free(&r[k]);
  }
  waiter_free(&w);
  hrl_lock_free(late);
  hrl_lock_free(r0);
  hrl_client_free(c);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS rw:order rw:order{rw:order}:queue"), 0);
}

/* A reader that dies holding its read (its object freed unreleased, as a
 * crash leaves it) frees its share alone when its TTL runs out: the other
 * reader's hold stands, and a writer gets in once both are gone. */
static void test_a_crashed_reader_frees_its_share_alone(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *crashed = rw(c, "rw:crash", HRL_MODE_READ, 800, false);
  hrl_lock *alive = rw(c, "rw:crash", HRL_MODE_READ, 30000, false);
  CHECK_STATUS(hrl_lock_acquire(crashed, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(alive, 0), HRL_OK);
  hrl_lock_free(crashed);
  hrl_lock *w = rw(c, "rw:crash", HRL_MODE_WRITE, 30000, false);
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_ETIMEOUT);
  usleep(1000 * 1000);
  CHECK_INT(fixture_int(&fx, 1, "HLEN rw:crash"), 2); /* not pruned yet */
  hrl_lock *r2 = rw(c, "rw:crash", HRL_MODE_READ, 30000, false);
  CHECK_STATUS(hrl_lock_acquire(r2, 0), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "HLEN rw:crash"), 2); /* alive's and r2's */
  CHECK(hrl_lock_held(alive));
  CHECK_STATUS(hrl_lock_extend(alive, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(alive), HRL_OK);
  CHECK_STATUS(hrl_lock_release(r2), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(w), HRL_OK);
  hrl_lock_free(alive);
  hrl_lock_free(r2);
  hrl_lock_free(w);
  hrl_client_free(c);
}

/* A write's fence is greater than every earlier write's; a read gets the
 * last write's fence to compare with (and never a smaller one). */
static void test_write_fences_grow_and_reads_see_the_last(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *w = rw(c, "rw:fence", HRL_MODE_WRITE, 30000, true);
  hrl_lock *r = rw(c, "rw:fence", HRL_MODE_READ, 30000, true);
  CHECK_STATUS(hrl_lock_acquire(r, 0), HRL_OK);
  CHECK_INT(hrl_lock_fence(r), 1); /* no write yet: the counter starts at 1 */
  CHECK_STATUS(hrl_lock_release(r), HRL_OK);
  uint64_t last = 0;
  for (int k = 0; k < 3; k++) {
    CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_OK);
    CHECK(hrl_lock_fence(w) > last);
    last = hrl_lock_fence(w);
    CHECK_STATUS(hrl_lock_release(w), HRL_OK);
    CHECK_STATUS(hrl_lock_acquire(r, 0), HRL_OK);
    CHECK_INT(hrl_lock_fence(r), last);
    CHECK_STATUS(hrl_lock_release(r), HRL_OK);
  }
  size_t len;
  const char *key = hrl_lock_fence_key(w, &len);
  CHECK(key != NULL && len == strlen("rw:fence{rw:fence}:fence"));
  CHECK_INT(fixture_int(&fx, 1, "PTTL rw:fence{rw:fence}:fence"), -1);
  hrl_lock_free(w);
  hrl_lock_free(r);
  hrl_client_free(c);
}

static void test_permits_are_counted_and_numbered(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *p[4];
  for (int k = 0; k < 4; k++) {
    p[k] = permit(c, "sem:count", 3, 30000);
  }
  unsigned seen = 0;
  for (int k = 0; k < 3; k++) {
    CHECK_STATUS(hrl_lock_acquire(p[k], 0), HRL_OK);
    uint32_t n = hrl_lock_permit(p[k]);
    CHECK(n >= 1 && n <= 3);
    seen |= 1u << n;
  }
  CHECK_INT(seen, 0xE); /* 1, 2 and 3 */
  CHECK_STATUS(hrl_lock_acquire(p[3], 0), HRL_ETIMEOUT);
  CHECK_INT(hrl_lock_permit(p[3]), 0);
  uint32_t freed = hrl_lock_permit(p[1]);
  CHECK_STATUS(hrl_lock_release(p[1]), HRL_OK);
  CHECK_INT(hrl_lock_permit(p[1]), 0);
  CHECK_STATUS(hrl_lock_acquire(p[3], 0), HRL_OK);
  CHECK_INT(hrl_lock_permit(p[3]), freed);
  for (int k = 0; k < 4; k++) {
    if (k != 1) {
      CHECK_STATUS(hrl_lock_release(p[k]), HRL_OK);
    }
    hrl_lock_free(p[k]);
  }
  CHECK_INT(fixture_int(&fx, 1, "EXISTS sem:count"), 0);
  hrl_client_free(c);
}

/* Permit holders that die keep nothing past their TTL; waiters get the
 * permits released in the order they arrived, woken by the release. */
static void test_permit_waiters_in_arrival_order(void) {
  enum { W = 4 };
  hrl_client *c = patient(&fx);
  hrl_lock *dead = permit(c, "sem:fifo", 2, 1000);
  hrl_lock *held = permit(c, "sem:fifo", 2, 30000);
  CHECK_STATUS(hrl_lock_acquire(dead, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(held, 0), HRL_OK);
  hrl_lock_free(dead); /* a crash: never released */
  got = 0;
  waiter w[W];
  pthread_t th[W];
  int64_t t0 = hrl_now_us();
  for (int k = 0; k < W; k++) {
    w[k] = (waiter){patient(&fx), NULL, 20000, HRL_EINVAL, 0, -1};
    w[k].lock = permit(w[k].client, "sem:fifo", 2, 30000);
    pthread_create(&th[k], NULL, acquire_in_thread, &w[k]);
    await_queued(&fx, "sem:fifo", k + 1);
  }
  /* The dead holder's permit comes back at its TTL: the first waiter. */
  pthread_join(th[0], NULL);
  CHECK_STATUS(w[0].status, HRL_OK);
  CHECK(ms_since(t0) >= 900 && ms_since(t0) < RETRY_CAP_MS);
  CHECK_INT(w[0].order, 0);
  /* Then each release hands its permit to the next in line. */
  hrl_lock *release_next = held;
  for (int k = 1; k < W; k++) {
    usleep(100 * 1000);
    CHECK_INT(got, k);
    int64_t t1 = hrl_now_us();
    CHECK_STATUS(hrl_lock_release(release_next), HRL_OK);
    pthread_join(th[k], NULL);
    CHECK_STATUS(w[k].status, HRL_OK);
    CHECK_INT(w[k].order, k);
    CHECK(ms_since(t1) < RETRY_CAP_MS); /* handed over, not polled */
    release_next = w[k - 1].lock;
  }
  CHECK_STATUS(hrl_lock_release(w[W - 2].lock), HRL_OK);
  CHECK_STATUS(hrl_lock_release(w[W - 1].lock), HRL_OK);
  for (int k = 0; k < W; k++) {
    waiter_free(&w[k]);
  }
  hrl_lock_free(held);
  hrl_client_free(c);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS sem:fifo sem:fifo{sem:fifo}:queue"), 0);
}

/* Changing permits while in use: a holder keeps what it holds; a smaller
 * count is granted only once fewer than it are held, a larger one at
 * once. Each grant respects the count it was asked with. */
static void test_changing_permits_while_in_use(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *old[3], *small, *big;
  for (int k = 0; k < 3; k++) {
    old[k] = permit(c, "sem:change", 3, 30000);
    CHECK_STATUS(hrl_lock_acquire(old[k], 0), HRL_OK);
  }
  small = permit(c, "sem:change", 2, 30000);
  big = permit(c, "sem:change", 5, 30000);
  CHECK_STATUS(hrl_lock_acquire(small, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_acquire(big, 0), HRL_OK);
  CHECK_INT(hrl_lock_permit(big), 4);
  CHECK_STATUS(hrl_lock_release(big), HRL_OK);
  CHECK_STATUS(hrl_lock_release(old[0]), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(small, 0), HRL_ETIMEOUT); /* 2 held */
  CHECK_STATUS(hrl_lock_release(old[1]), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(small, 0), HRL_OK); /* 1 held */
  CHECK(hrl_lock_permit(small) >= 1 && hrl_lock_permit(small) <= 2);
  CHECK_STATUS(hrl_lock_release(small), HRL_OK);
  CHECK_STATUS(hrl_lock_release(old[2]), HRL_OK);
  for (int k = 0; k < 3; k++) {
    hrl_lock_free(old[k]);
  }
  hrl_lock_free(small);
  hrl_lock_free(big);
  hrl_client_free(c);
}

static void test_bad_settings(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *lk = NULL;
  char detail[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_permit_new(c, "x", 1, 0, NULL, &lk, detail, sizeof detail),
               HRL_EINVAL);
  CHECK_STR(detail, "permits must be a whole number from 1 to 100000, got 0");
  CHECK(lk == NULL);
  CHECK_STATUS(hrl_rwlock_new(c, "x", 1, HRL_MODE_PERMIT, NULL, &lk, detail,
                              sizeof detail),
               HRL_EINVAL);
  CHECK_STR(detail, "a read-write lock's mode is read or write, not permit");
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  CHECK_STATUS(hrl_lock_new_mode(c, "x", 1, &lo, HRL_MODE_LOCK, 3, &lk, detail,
                                 sizeof detail),
               HRL_EINVAL);
  CHECK_STR(detail,
            "permits is for a semaphore's permit (mode permit), not mode lock");
  CHECK(lk == NULL);
  CHECK_STATUS(hrl_lock_mode_check(HRL_MODE_LOCK, 3, detail, sizeof detail),
               HRL_EINVAL);
  CHECK_STR(detail,
            "permits is for a semaphore's permit (mode permit), not mode lock");
  hrl_lock_mode mode = HRL_MODE_LOCK;
  CHECK_STATUS(hrl_lock_mode_parse("permit", 6, &mode, detail, sizeof detail),
               HRL_OK);
  CHECK_INT(mode, HRL_MODE_PERMIT);
  CHECK_STATUS(hrl_lock_mode_check(mode, 3, detail, sizeof detail), HRL_OK);
  CHECK_STATUS(hrl_lock_mode_check((hrl_lock_mode)7, 0, detail, sizeof detail),
               HRL_EINVAL);
  CHECK_STR(detail, "mode must be one of lock, read, write, permit, got 7");
  CHECK_STATUS(hrl_lock_mode_parse("shared", 6, &mode, detail, sizeof detail),
               HRL_EINVAL);
  CHECK_STR(detail,
            "mode must be one of lock, read, write, permit, got 'shared'");
  uint32_t permits = 0;
  CHECK_STATUS(hrl_lock_permits_parse(2.5, &permits, detail, sizeof detail),
               HRL_EINVAL);
  CHECK_STR(detail, "permits must be a whole number from 1 to 100000, got 2.5");
  CHECK_STATUS(hrl_lock_permits_parse(4, &permits, detail, sizeof detail),
               HRL_OK);
  CHECK_INT(permits, 4);
  hrl_client_free(c);
}

/* An acquire of lk refused because its name is a lock of another kind:
 * HRL_EINVAL at once, whatever its wait, with the core's words. */
static void check_kind_refused(hrl_lock *lk, int64_t wait_ms, const char *name,
                               const char *held, const char *asked) {
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, wait_ms), HRL_EINVAL);
  CHECK(ms_since(t0) < wait_ms || wait_ms == 0); /* did not wait it out */
  char want[HRL_DETAIL_MAX];
  snprintf(want, sizeof want,
           "'%s' is a %s on 127.0.0.1:%d, not a %s (a name is one kind of "
           "lock)",
           name, held, fx.port[0], asked);
  CHECK_STR(hrl_lock_error(lk), want);
  char msg[HRL_DETAIL_MAX + 64];
  CHECK_CONTAINS(
      hrl_format_error(HRL_EINVAL, hrl_lock_error(lk), msg, sizeof msg),
      "invalid argument: '");
  CHECK(!hrl_lock_held(lk));
}

/* One name is one kind of lock at a time: while a mutex, a read-write lock
 * or a semaphore holds it, the others' acquires fail with HRL_EINVAL
 * (a mutex's without a wait is refused as for any holder: SET NX alone),
 * and nothing of theirs is left behind. */
static void test_one_name_is_one_kind(void) {
  hrl_client *c = patient(&fx);
  hrl_lock *r = rw(c, "kind:a", HRL_MODE_READ, 30000, false);
  hrl_lock *w = rw(c, "kind:a", HRL_MODE_WRITE, 30000, false);
  hrl_lock *p = permit(c, "kind:a", 3, 30000);
  hrl_lock *m = NULL;
  CHECK_STATUS(hrl_lock_new(c, "kind:a", 6, 30000, &m, NULL, 0), HRL_OK);
  /* A read holds it. */
  CHECK_STATUS(hrl_lock_acquire(r, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(m, 0), HRL_ETIMEOUT);
  check_kind_refused(m, 5000, "kind:a", "read-write lock or semaphore", "lock");
  check_kind_refused(p, 0, "kind:a", "read-write lock", "semaphore");
  check_kind_refused(p, 5000, "kind:a", "read-write lock", "semaphore");
  CHECK_INT(fixture_int(&fx, 1, "HLEN kind:a"), 1); /* the read alone */
  CHECK_INT(fixture_int(&fx, 1, "EXISTS kind:a{kind:a}:queue"), 0);
  CHECK_STATUS(hrl_lock_release(r), HRL_OK);
  /* The mutex holds it. */
  CHECK_STATUS(hrl_lock_acquire(m, 0), HRL_OK);
  check_kind_refused(r, 0, "kind:a", "lock", "read-write lock");
  check_kind_refused(w, 5000, "kind:a", "lock", "read-write lock");
  check_kind_refused(p, 0, "kind:a", "lock", "semaphore");
  CHECK_STATUS(hrl_lock_release(m), HRL_OK);
  /* A permit holds it. */
  CHECK_STATUS(hrl_lock_acquire(p, 0), HRL_OK);
  check_kind_refused(r, 0, "kind:a", "semaphore", "read-write lock");
  check_kind_refused(w, 5000, "kind:a", "semaphore", "read-write lock");
  CHECK_STATUS(hrl_lock_acquire(m, 0), HRL_ETIMEOUT);
  check_kind_refused(m, 5000, "kind:a", "read-write lock or semaphore", "lock");
  CHECK_INT(fixture_int(&fx, 1, "HLEN kind:a"), 1); /* the permit alone */
  CHECK_STATUS(hrl_lock_release(p), HRL_OK);
  /* Free again: any kind takes it. */
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(w), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS kind:a"), 0);
  /* A waiter of another kind first in line (no holder): a read's entry,
   * as its try writes it, refuses a permit. */
  redisReply *t = fixture_cmd(&fx, 1, "TIME");
  CHECK(t != NULL && t->type == REDIS_REPLY_ARRAY && t->elements == 2);
  long long now_ms =
      atoll(t->element[0]->str) * 1000 + atoll(t->element[1]->str) / 1000;
  freeReplyObject(t);
  freeReplyObject(fixture_cmd(&fx, 1, "ZADD kind:q{kind:q}:queue 1 %s",
                              "0123456789abcdef0123456789abcdef"));
  char entry[64]; /* "<expiry> <window> <class> <channel>": one argument */
  snprintf(entry, sizeof entry, "%lld 1000 r ch", now_ms + 60000);
  freeReplyObject(fixture_cmd(&fx, 1, "HSET kind:q{kind:q}:waiters %s %s",
                              "0123456789abcdef0123456789abcdef", entry));
  hrl_lock *pq = permit(c, "kind:q", 3, 30000);
  check_kind_refused(pq, 0, "kind:q", "read-write lock", "semaphore");
  CHECK_INT(fixture_int(&fx, 1, "EXISTS kind:q"), 0);
  freeReplyObject(
      fixture_cmd(&fx, 1, "DEL kind:q{kind:q}:queue kind:q{kind:q}:waiters"));
  hrl_lock_free(pq);
  hrl_lock_free(r);
  hrl_lock_free(w);
  hrl_lock_free(p);
  hrl_lock_free(m);
  hrl_client_free(c);
}

int main(void) {
  fixture_start(&fx, 1, NULL);
  RUN(test_the_scripts_match_redis);
  RUN(test_reads_share_and_a_write_is_alone);
  RUN(test_a_waiting_write_stops_new_reads);
  RUN(test_a_crashed_reader_frees_its_share_alone);
  RUN(test_write_fences_grow_and_reads_see_the_last);
  RUN(test_permits_are_counted_and_numbered);
  RUN(test_permit_waiters_in_arrival_order);
  RUN(test_changing_permits_while_in_use);
  RUN(test_bad_settings);
  RUN(test_one_name_is_one_kind);
  fixture_stop(&fx);
  return finish_tests("test_rwsem");
}
