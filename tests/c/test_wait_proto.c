/* Unit tests of the waiting acquire without Redis: the queue's rounds and
 * their bytes, when a waiter waits and for how long, hand-offs and wakes,
 * stepping aside, leaving on timeout and cancel, masters out of reach and
 * migrating slots (a fake clock, replies played by the test). The
 * subscriber's stream: test_subscriber_proto.c. */
#include <stdlib.h>

#include "check.h"
#include "proto/resp.h"

static const char *const five[] = {"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                                   "redis://127.0.0.1:3", "redis://127.0.0.1:4",
                                   "redis://127.0.0.1:5"};

typedef struct env {
  hrl_client *c;
  hrl_lock *lk;
  size_t n;
} env;

/* A client of n masters whose cap (retry_delay) is 1 s without jitter, and
 * a lock of 10 s. */
static env make(size_t n) {
  env e = {NULL, NULL, n};
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 1000;
  o.retry_jitter_ms = 0;
  CHECK_STATUS(hrl_client_new(five, n, &o, &e.c, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_new(e.c, "res", 3, 10000, &e.lk, NULL, 0), HRL_OK);
  return e;
}

static void drop(env e) {
  hrl_lock_free(e.lk);
  hrl_client_free(e.c);
}

/* The round's command to master i contains needle. */
static bool sends(env e, size_t i, const char *needle, size_t len) {
  size_t n;
  const char *cmd = hrl_proto_command(e.lk, i, &n);
  return cmd != NULL && memmem(cmd, n, needle, len) != NULL;
}

#define SENDS(e, i, lit) sends((e), (i), (lit), sizeof(lit) - 1)

/* Plays one reply per master. */
static void answer(env e, const hrl_reply *r) {
  for (size_t i = 0; i < e.n; i++) {
    size_t len;
    CHECK(hrl_proto_command(e.lk, i, &len) != NULL);
    hrl_proto_reply(e.lk, i, &r[i]);
  }
}

/* Begins an acquire waiting wait_ms at t and has every master refuse the
 * first SET: the next step is the first try. */
static void refused(env e, int64_t wait_ms, int64_t t) {
  hrl_step_info s;
  hrl_reply nil[5] = {nil_reply(), nil_reply(), nil_reply(), nil_reply(),
                      nil_reply()};
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, wait_ms, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  CHECK(hrl_proto_waiter(e.lk) == NULL); /* not queued by a SET */
  answer(e, nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND);
}

static void test_a_refused_acquire_queues_up(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 5000, t);
  /* The try: the queue script in mode t, with the lock's TTL, its arrival,
   * the lease of its entry, the window of a hand-off and the client's
   * channel. */
  size_t chan_len;
  const char *chan = hrl_client_channel(e.c, &chan_len);
  CHECK(chan != NULL && chan_len == 15 + 32);
  CHECK(memcmp(chan, "hiredlock:wake:", 15) == 0);
  CHECK(SENDS(e, 0, HRL_QUEUE_SHA1));
  CHECK(SENDS(e, 0,
              "$3\r\nres\r\n$14\r\nres{res}:queue\r\n"
              "$16\r\nres{res}:waiters\r\n$1\r\nt\r\n"));
  CHECK(SENDS(e, 0, "$5\r\n10000\r\n$16\r\n1")); /* ttl, arrival (us) */
  /* lease, window, channel, and "1": a hand-off heard of is taken without
   * a claim when it comes soon enough (test_handoff_proto.c) */
  CHECK(SENDS(e, 0, "\r\n$4\r\n3300\r\n$4\r\n1100\r\n$47\r\n"));
  CHECK(sends(e, 0, chan, chan_len));
  CHECK(SENDS(e, 0, "\r\n$1\r\n1\r\n"));
  /* Hand-offs come with the token of the first attempt. */
  const char *waiter = hrl_proto_waiter(e.lk);
  CHECK(waiter != NULL && strlen(waiter) == HRL_TOKEN_LEN);
  char token[HRL_TOKEN_LEN + 1];
  memcpy(token, waiter, sizeof token);
  CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
  /* Held for 8 more seconds: wait for the cap (1 s), not for that. */
  hrl_reply pttl = int_reply(8000);
  answer(e, &pttl);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 1000);
  /* Nothing came: a step before the time waits the rest. */
  CHECK_INT(hrl_proto_step(e.lk, t + 500000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 502);
  /* The hand-off: the next step tries at once, and claims it. */
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, t + 600000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
  hrl_reply ok = status_reply("OK");
  answer(e, &ok);
  CHECK_INT(hrl_proto_step(e.lk, t + 601000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_STR(hrl_lock_token(e.lk), token);
  CHECK(hrl_proto_waiter(e.lk) == NULL);
  hrl_counts cnt;
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.attempts, 3); /* the SET and two tries */
  CHECK_INT(cnt.ok, 1);
  /* Its release goes through the queue script (mode r): a waiter of ours
   * or anyone's gets it next. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  drop(e);
}

static void test_the_holders_ttl_bounds_the_wait(void) {
  env e = make(3);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 5000, t);
  /* The keys expire on a quorum (2 of 3) after the second smallest PTTL;
   * a master that did not answer never counts. */
  hrl_proto_reply(e.lk, 0,
                  &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = 30});
  hrl_proto_reply(e.lk, 1,
                  &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = 80});
  hrl_proto_missed(e.lk, 2, "timeout after 50 ms");
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND); /* aside */
  CHECK(SENDS(e, 0, "$1\r\na\r\n")); /* master 3 may have queued it */
  hrl_reply zero[3] = {int_reply(0), int_reply(0), int_reply(0)};
  answer(e, zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_WAIT);
  /* Expiry: round start (1 ms) + 80 ms + 1 ms of rounding, from 2 ms. */
  CHECK_INT(s.wait_ms, 80);
  /* A key without a TTL (-1) bounds nothing: the cap does. */
  CHECK_INT(hrl_proto_step(e.lk, t + 82000, &s), HRL_STEP_ROUND);
  hrl_reply forever[3] = {int_reply(-1), int_reply(-1), int_reply(10)};
  answer(e, forever);
  CHECK_INT(hrl_proto_step(e.lk, t + 83000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 1000);
  /* Keys set in one round expire close together: it waits for the last
   * of them within a per-master timeout, to get every master. */
  CHECK_INT(hrl_proto_step(e.lk, t + 1083000, &s), HRL_STEP_ROUND);
  hrl_reply near[3] = {int_reply(30), int_reply(40), int_reply(45)};
  answer(e, near);
  CHECK_INT(hrl_proto_step(e.lk, t + 1083000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 46);
  CHECK_INT(hrl_proto_step(e.lk, t + 1129000, &s), HRL_STEP_ROUND);
  hrl_reply far[3] = {int_reply(30), int_reply(40), int_reply(900)};
  answer(e, far);
  CHECK_INT(hrl_proto_step(e.lk, t + 1129000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 41); /* the quorum's: 900 is too far */
  drop(e);
}

static void test_waits_never_pass_the_deadline(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 300, t);
  hrl_reply pttl = int_reply(8000);
  answer(e, &pttl);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 298);
  /* The deadline: the waiter leaves the queue (mode r), then times out. */
  CHECK_INT(hrl_proto_step(e.lk, t + 300000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  CHECK(hrl_proto_settled(e.lk)); /* its replies decide nothing */
  hrl_reply zero = int_reply(0);
  answer(e, &zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 301000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  CHECK_STR(hrl_lock_error(e.lk), "");
  CHECK(!hrl_lock_held(e.lk));
  /* A wait of 0 makes one attempt and never queues. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply nil = nil_reply();
  answer(e, &nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  drop(e);
}

static void test_a_quorum_of_hand_offs_tries_at_once(void) {
  env e = make(5);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, HRL_WAIT_FOREVER, t);
  hrl_reply held[5] = {int_reply(9000), int_reply(9000), int_reply(9000),
                       int_reply(9000), int_reply(9000)};
  answer(e, held);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_WAIT);
  /* One master handed it over: the others get a per-master deadline
   * (timeout, 50 ms) to follow before it tries. (Hand-offs heard of more
   * than 50 ms after the first try: they are claimed by a try, not taken
   * as they are: test_handoff_proto.c.) */
  t += 100000;
  hrl_proto_notified(e.lk, 3);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 50);
  hrl_proto_notified(e.lk, 3); /* the same master twice is still one */
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, t + 4000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 49);
  hrl_proto_notified(e.lk, 4);
  CHECK_INT(hrl_proto_step(e.lk, t + 5000, &s), HRL_STEP_ROUND);
  /* A hand-off heard while the try is out counts for the next wait. */
  hrl_proto_notified(e.lk, 1);
  hrl_reply mixed[5] = {status_reply("OK"), int_reply(20), int_reply(20),
                        status_reply("OK"), int_reply(20)};
  answer(e, mixed); /* 2 of 5: too few, so it steps aside */
  CHECK_INT(hrl_proto_step(e.lk, t + 6000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\na\r\n"));
  hrl_reply zero[5] = {int_reply(0), int_reply(0), int_reply(0), int_reply(0),
                       int_reply(0)};
  answer(e, zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 7000, &s), HRL_STEP_WAIT);
  CHECK(s.wait_ms <= 50);
  /* One hand-off and the others silent: it tries once that passed. */
  CHECK_INT(hrl_proto_step(e.lk, t + 7000 + 50000, &s), HRL_STEP_ROUND);
  hrl_reply ok[5] = {status_reply("OK"), status_reply("OK"), status_reply("OK"),
                     int_reply(5), int_reply(5)};
  answer(e, ok);
  CHECK_INT(hrl_proto_step(e.lk, t + 58000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  /* Valid from the start of the try that won, not the first attempt. */
  CHECK(hrl_lock_validity_ms(e.lk) == 0); /* the fake clock is long past */
  drop(e);
}

static void test_a_subscription_wakes_every_waiter(void) {
  env e = make(3);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 5000, t);
  hrl_reply held[3] = {int_reply(9000), int_reply(9000), int_reply(9000)};
  answer(e, held);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_WAIT);
  hrl_proto_wake(e.lk);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_ROUND);
  answer(e, held);
  CHECK_INT(hrl_proto_step(e.lk, t + 4000, &s), HRL_STEP_WAIT);
  /* Outside a waiting acquire, hand-offs and wakes are nothing. */
  drop(e);
  e = make(1);
  hrl_proto_notified(e.lk, 0);
  hrl_proto_wake(e.lk);
  hrl_proto_notified(e.lk, 7);
  CHECK(hrl_proto_waiter(e.lk) == NULL);
  drop(e);
}

static void test_cancel_leaves_the_queue(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 5000, t);
  hrl_reply pttl = int_reply(8000);
  answer(e, &pttl);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_WAIT);
  hrl_proto_cancel(e.lk);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  hrl_reply one = int_reply(1); /* a hand-off was made for us: passed on */
  answer(e, &one);
  CHECK_INT(hrl_proto_step(e.lk, t + 4000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECANCELLED);
  CHECK(!hrl_lock_held(e.lk));
  /* Cancelled during a round: nothing until the round is judged. */
  refused(e, 5000, t);
  hrl_proto_cancel(e.lk);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  hrl_reply ok = status_reply("OK");
  answer(e, &ok);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK); /* the caller releases it */
  drop(e);
}

static void test_failing_masters_end_the_wait(void) {
  env e = make(3);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 5000, t);
  hrl_proto_reply(e.lk, 0,
                  &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = 100});
  hrl_proto_fail(e.lk, 1, HRL_NODE_UNREACHABLE, "connection refused");
  hrl_reply noperm = error_reply("NOPERM this user has no permissions to "
                                 "access one of the channels");
  hrl_proto_reply(e.lk, 2, &noperm);
  /* 1 of 3 answered: leave the queue (where it may be), then fail. */
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  hrl_reply zero[3] = {int_reply(0), int_reply(0), int_reply(0)};
  answer(e, zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EPERM);
  CHECK_STR(hrl_lock_error(e.lk),
            "1 of 3 masters answered (2 needed); 127.0.0.1:2: connection "
            "refused; 127.0.0.1:3: NOPERM this user has no permissions to "
            "access one of the channels; refused: the queue script on 'res', "
            "'res{res}:queue', 'res{res}:waiters'");
  hrl_counts cnt;
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.refused, 1); /* the counts of the try, not of the leave */
  CHECK_INT(cnt.unreachable, 1);
  CHECK_INT(cnt.failed, 1);
  drop(e);
}

/* Begins an acquire waiting wait_ms at t: the token its first SET carries
 * (into token). */
static void first_set(env e, int64_t wait_ms, int64_t t, char *token) {
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, wait_ms, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  CHECK(cmd != NULL && len > 23 + HRL_TOKEN_LEN);
  const char *at = memmem(cmd, len, "$32\r\n", 5);
  CHECK(at != NULL);
  memcpy(token, at + 5, HRL_TOKEN_LEN);
  token[HRL_TOKEN_LEN] = '\0';
}

/* A leave that did not reach a master left our entry there: the next
 * acquire carries the same token (and keeps its place) instead of leaving
 * a dead entry that releases would be handed to. One that reached every
 * master starts afresh. */
static void test_an_entry_left_behind_is_taken_up_again(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  char first[HRL_TOKEN_LEN + 1], again[HRL_TOKEN_LEN + 1];
  first_set(e, 2, t, first); /* waits 2 ms */
  hrl_reply nil = nil_reply();
  answer(e, &nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND); /* try */
  size_t len;
  const char *try_cmd = hrl_proto_command(e.lk, 0, &len);
  const char *arrival = memmem(try_cmd, len, "$16\r\n", 5);
  CHECK(arrival != NULL);
  char place[17] = {0};
  memcpy(place, arrival + 5, 16);
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection reset");
  CHECK_INT(hrl_proto_step(e.lk, t + 2100, &s), HRL_STEP_ROUND); /* leave */
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection reset");
  CHECK_INT(hrl_proto_step(e.lk, t + 2200, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  first_set(e, 5000, t + 2000, again);
  CHECK_STR(again, first);
  answer(e, &nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 2100, &s), HRL_STEP_ROUND);
  CHECK(sends(e, 0, place, 16)); /* the same arrival: its place */
  /* This time the leave gets through: the next acquire is a new one. */
  hrl_reply pttl = int_reply(8000);
  answer(e, &pttl);
  CHECK_INT(hrl_proto_step(e.lk, t + 2200, &s), HRL_STEP_WAIT);
  hrl_proto_cancel(e.lk);
  CHECK_INT(hrl_proto_step(e.lk, t + 2250, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  hrl_reply zero = int_reply(0);
  answer(e, &zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 2300, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECANCELLED);
  first_set(e, 5000, t + 3000, again);
  CHECK(strcmp(again, first) != 0);
  drop(e);
}

/* A master out of reach in the middle of a wait (restarting, paused): the
 * waiter keeps its place and tries again, and says why only when its
 * deadline comes without a quorum of answers. */
static void test_an_unreachable_master_does_not_end_the_wait(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  char token[HRL_TOKEN_LEN + 1];
  first_set(e, 5000, t, token);
  hrl_reply nil = nil_reply();
  answer(e, &nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND); /* try */
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection reset");
  /* It may hold the key there: steps aside, and stays queued. */
  CHECK_INT(hrl_proto_step(e.lk, t + 1100, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\na\r\n"));
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 1200, &s), HRL_STEP_WAIT);
  t += 1100 + 1000 * 1000; /* the cap */
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
  hrl_reply ok = status_reply("OK");
  answer(e, &ok);
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply one = int_reply(1);
  answer(e, &one);
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_DONE);
  /* Out of reach until the deadline: that is the error, not a timeout. */
  t = 10 * 1000 * 1000;
  first_set(e, 1500, t, token);
  answer(e, &nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND);
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 1100, &s), HRL_STEP_ROUND); /* aside */
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 1200, &s), HRL_STEP_WAIT);
  CHECK_INT(hrl_proto_step(e.lk, t + 1500 * 1000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n")); /* the leave */
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 1600 * 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "connection refused");
  drop(e);
}

/* A cluster slot migrating under the queue's keys (TRYAGAIN): a try goes
 * again in the same round as the plain try (the acquire's SET on the lock
 * key alone), refused when the key is held (then the waiter waits for its
 * cap) and taken when it is free; every try begins with the queue script
 * again. A release goes again as the plain compare-and-delete on the lock
 * key alone. */
static void test_tryagain_tries_or_releases_plainly(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 5000, t);
  hrl_reply again = error_reply("TRYAGAIN Multiple keys request during "
                                "rehashing of slot");
  hrl_reply nil = nil_reply(), ok = status_reply("OK");
  for (int k = 0; k < 2; k++) {
    CHECK(SENDS(e, 0, HRL_QUEUE_SHA1));
    size_t len;
    CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
    CHECK_INT(hrl_proto_reply(e.lk, 0, &again), HRL_NODE_RESEND);
    CHECK(SENDS(e, 0, "*6\r\n$3\r\nSET\r\n$3\r\nres\r\n"));
    CHECK(SENDS(e, 0, "$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n10000\r\n"));
    CHECK(!SENDS(e, 0, "res{res}:queue"));
    CHECK_INT(hrl_proto_command_replies(e.lk, 0), 1);
    CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
    CHECK_INT(hrl_proto_reply(e.lk, 0, k == 0 ? &nil : &ok),
              k == 0 ? HRL_NODE_REFUSED : HRL_NODE_OK);
    if (k == 0) {
      CHECK_INT(hrl_proto_step(e.lk, t + 1100, &s), HRL_STEP_WAIT);
      CHECK_INT(s.wait_ms, 1000); /* the cap: the holder's PTTL is unknown */
      t += 1100 + 1000 * 1000;    /* microseconds */
      CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
    }
  }
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t + 3000), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, HRL_QUEUE_SHA1));
  size_t len;
  CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &again), HRL_NODE_RESEND);
  CHECK(SENDS(e, 0, "*5\r\n$4\r\nEVAL\r\n"));
  CHECK(SENDS(e, 0, HRL_PLAIN_RELEASE_SCRIPT));
  CHECK(!SENDS(e, 0, "res{res}:queue"));
  hrl_reply one = int_reply(1);
  CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &one), HRL_NODE_OK);
  CHECK_INT(hrl_proto_step(e.lk, t + 3100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  drop(e);
}

static void test_a_set_that_won_too_few_is_claimed_by_the_try(void) {
  env e = make(3);
  int64_t t = 0;
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply split[3] = {status_reply("OK"), nil_reply(), nil_reply()};
  answer(e, split);
  /* No cleanup round: the try claims master 1 (the key holds our token)
   * and queues us on the others. */
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  hrl_reply won[3] = {status_reply("OK"), status_reply("OK"), int_reply(50)};
  answer(e, won);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  /* Without wait, the split vote is cleaned up (mode r) as before. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply one[3] = {int_reply(1), int_reply(1), int_reply(1)};
  answer(e, one);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_DONE);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  answer(e, split);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  answer(e, one);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  drop(e);
}

static void test_queue_replies(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 5000, t);
  hrl_reply noscript = error_reply("NOSCRIPT No matching script.");
  CHECK_INT(hrl_proto_reply(e.lk, 0, &noscript), HRL_NODE_RESEND);
  CHECK(SENDS(e, 0, "$4\r\nEVAL\r\n"));
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  hrl_reply wrong = error_reply("WRONGTYPE Operation against a key holding "
                                "the wrong kind of value");
  CHECK_INT(hrl_proto_reply(e.lk, 0, &wrong), HRL_NODE_REFUSED);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 1000); /* no PTTL: the cap */
  CHECK_INT(hrl_proto_step(e.lk, t + 1002000, &s), HRL_STEP_ROUND);
  hrl_reply nonsense = status_reply("QUEUED");
  CHECK_INT(hrl_proto_reply(e.lk, 0, &nonsense), HRL_NODE_PROTOCOL);
  CHECK_INT(hrl_proto_step(e.lk, t + 1003000, &s), HRL_STEP_ROUND); /* leave */
  hrl_reply zero = int_reply(0);
  answer(e, &zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 1004000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EPROTOCOL);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "unexpected reply to the queue script");
  drop(e);
}

int main(void) {
  RUN(test_a_refused_acquire_queues_up);
  RUN(test_the_holders_ttl_bounds_the_wait);
  RUN(test_waits_never_pass_the_deadline);
  RUN(test_a_quorum_of_hand_offs_tries_at_once);
  RUN(test_a_subscription_wakes_every_waiter);
  RUN(test_cancel_leaves_the_queue);
  RUN(test_failing_masters_end_the_wait);
  RUN(test_an_entry_left_behind_is_taken_up_again);
  RUN(test_an_unreachable_master_does_not_end_the_wait);
  RUN(test_tryagain_tries_or_releases_plainly);
  RUN(test_a_set_that_won_too_few_is_claimed_by_the_try);
  RUN(test_queue_replies);
  return finish_tests("test_wait_proto");
}
