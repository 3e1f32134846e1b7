/* Unit tests of a hand-off taken without a claim round (waiting.c,
 * docs/SAFETY.md "Hand-off without a claim"), without Redis: a fake clock,
 * replies played by the test. The hold must count from the start of the
 * acquire's first queue round, never from a later refusal nor from the
 * message, and only on masters where every queue round was a plain
 * refusal; the claim round stays wherever that cannot be shown. */
#include <stdlib.h>

#include "check.h"
#include "proto/resp.h"
#include "proto/state.h"

static const char *const five[] = {"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                                   "redis://127.0.0.1:3", "redis://127.0.0.1:4",
                                   "redis://127.0.0.1:5"};

#define TTL_MS 10000
/* drift: ttl x 0.01 + 2 ms */
#define DRIFT_US (TTL_MS * 10 + 2000)

typedef struct env {
  hrl_client *c;
  hrl_lock *lk;
  size_t n;
} env;

/* A client of n masters (cap 1 s, no jitter, per-master timeout 50 ms)
 * with a lock of 10 s; fenced, restart_guard and sync_replicas as asked. */
static env make_with(size_t n, bool fenced, uint32_t guard_ms,
                     uint32_t replicas) {
  env e = {NULL, NULL, n};
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 1000;
  o.retry_jitter_ms = 0;
  o.restart_guard_ms = guard_ms;
  CHECK_STATUS(hrl_client_new(five, n, &o, &e.c, NULL, 0), HRL_OK);
  hrl_lock_options lo;
  hrl_lock_options_init(e.c, &lo);
  lo.ttl_ms = TTL_MS;
  lo.fenced = fenced;
  lo.sync_replicas = replicas;
  CHECK_STATUS(hrl_lock_new_with(e.c, "res", 3, &lo, &e.lk, NULL, 0), HRL_OK);
  return e;
}

static env make(size_t n) {
  return make_with(n, false, 0, 0);
}

static void drop(env e) {
  hrl_lock_free(e.lk);
  hrl_client_free(e.c);
}

static bool sends(env e, size_t i, const char *needle, size_t len) {
  size_t n;
  const char *cmd = hrl_proto_command(e.lk, i, &n);
  return cmd != NULL && memmem(cmd, n, needle, len) != NULL;
}

#define SENDS(e, i, lit) sends((e), (i), (lit), sizeof(lit) - 1)

/* One reply per master: the same one to all. */
static void answer_all(env e, hrl_reply r) {
  for (size_t i = 0; i < e.n; i++) {
    size_t len;
    CHECK(hrl_proto_command(e.lk, i, &len) != NULL);
    hrl_proto_reply(e.lk, i, &r);
  }
}

/* Begins an acquire at t (waiting for ever); every master refuses its SET
 * (and answers the `more` commands behind it with 1: a fenced lock's INCR,
 * a WAIT); the step at t + 1 ms sends the first try (the first queue
 * round). */
static void first_try_more_at(env e, int64_t t, int more) {
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, HRL_WAIT_FOREVER, t),
               HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  answer_all(e, nil_reply());
  for (int k = 0; k < more; k++) {
    for (size_t i = 0; i < e.n; i++) {
      hrl_reply one = int_reply(1);
      hrl_proto_reply(e.lk, i, &one);
    }
  }
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
}

static void first_try_at(env e, int64_t t) {
  first_try_more_at(e, t, 0);
}

/* When the hold is valid until, on the protocol's clock. */
static int64_t valid_until(env e) {
  return e.lk->valid_until_us;
}

static void test_a_hand_off_heard_of_is_held_without_a_round(void) {
  env e = make(1);
  hrl_step_info s;
  first_try_at(e, 0);
  /* The try asks for hand-offs with the whole TTL (its last argument). */
  CHECK(SENDS(e, 0, "$47\r\n"));
  CHECK(SENDS(e, 0, "\r\n$1\r\n1\r\n"));
  const char *waiter = hrl_proto_waiter(e.lk);
  CHECK(waiter != NULL);
  char token[HRL_TOKEN_LEN + 1];
  memcpy(token, waiter, sizeof token);
  answer_all(e, int_reply(8000)); /* held by someone else */
  CHECK_INT(hrl_proto_step(e.lk, 5000, &s), HRL_STEP_WAIT);
  /* The holder's release hands it over: held at once, no round. */
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, 21000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK(e.lk->held);
  CHECK_STR(hrl_lock_token(e.lk), token);
  CHECK(hrl_proto_waiter(e.lk) == NULL);
  /* Valid from the first try's start (1 ms): the key cannot have been
   * handed to our token before that try queued it. */
  CHECK_INT(valid_until(e), 1000 + TTL_MS * 1000 - DRIFT_US);
  hrl_counts cnt;
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.attempts, 2); /* the SET and one try */
  CHECK_INT(cnt.ok, 1);
  /* The release takes it from there (mode r, our token). */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, 22000), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 22000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
  drop(e);
}

/* Two refused tries (the second at once: a subscriber came up), then the
 * message: a hand-off made after the first try may have lapsed before the
 * second (a waiter stopped for longer than the key lived), and its message
 * read only now, so the bound is the first try's start: neither the last
 * refusal's nor the message's. */
static void test_the_hold_counts_from_the_first_queue_round(void) {
  env e = make(1);
  hrl_step_info s;
  first_try_at(e, 0);
  answer_all(e, int_reply(8000));
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_WAIT);
  hrl_proto_wake(e.lk);
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_ROUND); /* try 2 */
  answer_all(e, int_reply(7990));
  CHECK_INT(hrl_proto_step(e.lk, 4000, &s), HRL_STEP_WAIT);
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, 30000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  int64_t first = 1000 + TTL_MS * 1000 - DRIFT_US;
  int64_t last = 3000 + TTL_MS * 1000 - DRIFT_US;
  int64_t message = 30000 + TTL_MS * 1000 - DRIFT_US;
  CHECK(valid_until(e) != last);
  CHECK(valid_until(e) != message);
  CHECK_INT(valid_until(e), first);
  drop(e);
}

/* Heard of more than the longest claim round (50 ms here) after the first
 * queue round: counting from there would leave less than a claim round
 * does, so the try claims it, as it always did. */
static void test_a_late_hand_off_is_claimed(void) {
  env e = make(1);
  hrl_step_info s;
  first_try_at(e, 0);
  answer_all(e, int_reply(8000));
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_WAIT);
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, 1000 + 50001, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  answer_all(e, status_reply("OK"));
  CHECK_INT(hrl_proto_step(e.lk, 52000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(valid_until(e), 51001 + TTL_MS * 1000 - DRIFT_US);
  drop(e);
  /* At 50 ms exactly it is still taken as it is. */
  e = make(1);
  first_try_at(e, 0);
  answer_all(e, int_reply(8000));
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_WAIT);
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, 1000 + 50000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  drop(e);
}

/* N = 3: a master whose try went unanswered may run that try (or a later
 * round) after the hand-off: its message proves nothing, and without it
 * the two others are no quorum. */
static void test_only_masters_that_plainly_refused_count(void) {
  env e = make(3);
  hrl_step_info s;
  first_try_at(e, 0);
  hrl_reply r = int_reply(8000);
  hrl_proto_reply(e.lk, 0, &r);
  hrl_proto_reply(e.lk, 1, &r);
  hrl_proto_missed(e.lk, 2, "timeout after 50 ms");
  /* Master 2 may have queued us: it steps aside first. */
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\na\r\n"));
  answer_all(e, int_reply(0));
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_WAIT);
  /* A step aside passes on whatever it finds of ours, whose message may
   * still come: no hand-off is taken without a claim after one. */
  hrl_proto_notified(e.lk, 0);
  hrl_proto_notified(e.lk, 1);
  CHECK_INT(hrl_proto_step(e.lk, 4000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  drop(e);

  /* A try that said OK on a master took a key holding our token there
   * (the first SET's): a message about that master may be stale. */
  e = make(3);
  first_try_at(e, 0);
  hrl_reply refused = int_reply(8000), ok = status_reply("OK");
  hrl_proto_reply(e.lk, 0, &ok);
  hrl_proto_reply(e.lk, 1, &refused);
  hrl_proto_reply(e.lk, 2, &refused);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_ROUND); /* aside */
  answer_all(e, int_reply(0));
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_WAIT);
  hrl_proto_notified(e.lk, 1);
  hrl_proto_notified(e.lk, 2);
  CHECK_INT(hrl_proto_step(e.lk, 4000, &s), HRL_STEP_ROUND);
  drop(e);

  /* Every try refused everywhere: two of three hand-offs are a quorum,
   * and the hold is theirs (the third master may hand it later: the
   * release passes it on). */
  e = make(3);
  first_try_at(e, 0);
  answer_all(e, int_reply(8000));
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_WAIT);
  hrl_proto_notified(e.lk, 0);
  hrl_proto_notified(e.lk, 2);
  CHECK_INT(hrl_proto_step(e.lk, 4000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(valid_until(e), 1000 + TTL_MS * 1000 - DRIFT_US);
  CHECK_INT((long long)e.lk->granted, 5); /* masters 0 and 2 */
  drop(e);
}

/* Where a grant needs more than the hand-off's SET (a fence from the try's
 * INCR, replicas' acknowledgements, a restarted master kept out), the try
 * asks for no whole-TTL hand-off and claims every hand-off. */
static void test_the_claim_stays_where_a_grant_needs_the_try(void) {
  struct {
    bool fenced;
    uint32_t guard_ms, replicas;
  } cases[] = {{true, 0, 0}, {false, 30000, 0}, {false, 0, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    env e = make_with(1, cases[k].fenced, cases[k].guard_ms, cases[k].replicas);
    hrl_step_info s;
    first_try_more_at(e, 0, cases[k].fenced || cases[k].replicas > 0);
    CHECK(SENDS(e, 0, "\r\n$1\r\n0\r\n"));
    hrl_reply r = int_reply(8000);
    hrl_proto_reply(e.lk, 0, &r);
    if (cases[k].fenced) {
      r = int_reply(7); /* the INCR behind the try */
      hrl_proto_reply(e.lk, 0, &r);
    }
    if (cases[k].replicas > 0) {
      r = int_reply(1); /* WAIT's count: refused all the same */
      hrl_proto_reply(e.lk, 0, &r);
    }
    CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_WAIT);
    hrl_proto_notified(e.lk, 0);
    CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_ROUND);
    CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
    drop(e);
  }
}

int main(void) {
  RUN(test_a_hand_off_heard_of_is_held_without_a_round);
  RUN(test_the_hold_counts_from_the_first_queue_round);
  RUN(test_a_late_hand_off_is_claimed);
  RUN(test_only_masters_that_plainly_refused_count);
  RUN(test_the_claim_stays_where_a_grant_needs_the_try);
  return finish_tests("test_handoff_proto");
}
