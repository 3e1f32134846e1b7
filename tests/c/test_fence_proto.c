/* The fenced acquire in the sans-I/O protocol, without Redis: its command
 * bytes (SET and INCR pipelined, two replies), what its replies mean, the
 * fence round when fewer than a quorum of the granting masters returned
 * the fence, and the failures part way through an attempt, driven by
 * hand with a fake clock. */
#include <stdlib.h>

#include "check.h"
#include "proto/resp.h"

static const char *const five[] = {"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                                   "redis://127.0.0.1:3", "redis://127.0.0.1:4",
                                   "redis://127.0.0.1:5"};

#define TOKEN "0123456789abcdef0123456789abcdef"

static hrl_reply ok_reply(void) {
  return status_reply("OK");
}

typedef struct env {
  hrl_client *c;
  hrl_lock *lk;
} env;

static env fenced_env(size_t n, uint32_t ttl_ms) {
  env e = {NULL, NULL};
  CHECK_STATUS(hrl_client_new(five, n, NULL, &e.c, NULL, 0), HRL_OK);
  hrl_lock_options lo;
  hrl_lock_options_init(e.c, &lo);
  lo.ttl_ms = ttl_ms;
  lo.fenced = true;
  CHECK_STATUS(hrl_lock_new_with(e.c, "res", 3, &lo, &e.lk, NULL, 0), HRL_OK);
  return e;
}

static void free_env(env e) {
  hrl_lock_free(e.lk);
  hrl_client_free(e.c);
}

/* The command master i gets in this round must contain `part`. */
static void expect_command(env e, size_t i, const char *part, size_t len) {
  size_t n;
  const char *cmd = hrl_proto_command(e.lk, i, &n);
  CHECK(cmd != NULL && memmem(cmd, n, part, len) != NULL);
}

/* One reply to every master of a plain round (a script's). */
static void answer(env e, size_t n, const hrl_reply *replies) {
  for (size_t i = 0; i < n; i++) {
    size_t len;
    CHECK(hrl_proto_command(e.lk, i, &len) != NULL);
    CHECK_INT(hrl_proto_command_replies(e.lk, i), 1);
    hrl_proto_reply(e.lk, i, &replies[i]);
  }
}

/* The SET's and the INCR's reply to every master of a fenced acquire. */
static void answer_pairs(env e, size_t n, const hrl_reply *set,
                         const hrl_reply *incr) {
  for (size_t i = 0; i < n; i++) {
    size_t len;
    CHECK(hrl_proto_command(e.lk, i, &len) != NULL);
    CHECK_INT(hrl_proto_command_replies(e.lk, i), 2);
    CHECK_INT(hrl_proto_reply(e.lk, i, &set[i]), HRL_NODE_MORE);
    hrl_proto_reply(e.lk, i, &incr[i]);
  }
}

static void test_fenced_command_bytes(void) {
  char buf[1024];
  hrl_command_args a = {"res", 3, NULL, 0, NULL, 0, "res{res}:fence", 14, TOKEN,
                        30000, 0, 0,    0, NULL, 0, HRL_MODE_LOCK,    0,  0,
                        false};
  size_t n = hrl_resp_command(buf, HRL_ROUND_FENCED_ACQUIRE, true, &a);
  const char want_acq[] = "*6\r\n$3\r\nSET\r\n$3\r\nres\r\n$32\r\n" TOKEN
                          "\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n"
                          "*2\r\n$4\r\nINCR\r\n$14\r\nres{res}:fence\r\n";
  CHECK_INT(n, sizeof want_acq - 1);
  CHECK(memcmp(buf, want_acq, n) == 0);
  CHECK_INT(hrl_resp_replies(HRL_ROUND_FENCED_ACQUIRE), 2);
  CHECK_INT(hrl_resp_replies(HRL_ROUND_FENCE), 1);
  a.number = 9223372036854775807ULL;
  n = hrl_resp_command(buf, HRL_ROUND_FENCE, true, &a);
  const char want_fence[] =
      "*7\r\n$7\r\nEVALSHA\r\n$40\r\n" HRL_FENCE_SHA1
      "\r\n$1\r\n2\r\n$3\r\nres\r\n$14\r\nres{res}:fence"
      "\r\n$32\r\n" TOKEN "\r\n$19\r\n9223372036854775807\r\n";
  CHECK_INT(n, sizeof want_fence - 1);
  CHECK(memcmp(buf, want_fence, n) == 0);
  n = hrl_resp_command(buf, HRL_ROUND_FENCE, false, &a);
  CHECK(memcmp(buf, "*7\r\n$4\r\nEVAL\r\n$", 15) == 0);
  CHECK(memmem(buf, n, HRL_FENCE_SCRIPT, strlen(HRL_FENCE_SCRIPT)) != NULL);
  CHECK(hrl_resp_eval_capacity(1024, 2070, 0) >=
        strlen(HRL_FENCE_SCRIPT) + 1024 + 2070 + 150);
}

/* The option, the counter key and the accessors before any hold. */
static void test_fenced_lock_object(void) {
  env e = fenced_env(1, 10000);
  size_t len;
  const char *fk = hrl_lock_fence_key(e.lk, &len);
  CHECK(fk != NULL && len == 14 && memcmp(fk, "res{res}:fence", 14) == 0);
  CHECK_INT(hrl_lock_fence(e.lk), 0);
  hrl_lock_options lo;
  hrl_lock_get_options(e.lk, &lo);
  CHECK(lo.fenced);
  hrl_lock *plain = NULL;
  CHECK_STATUS(hrl_lock_new(e.c, "res", 3, 10000, &plain, NULL, 0), HRL_OK);
  CHECK(hrl_lock_fence_key(plain, &len) == NULL && len == 0);
  hrl_lock_get_options(plain, &lo);
  CHECK(!lo.fenced);
  hrl_lock_free(plain);
  /* A client-wide default: every lock of this client is fenced. */
  hrl_options o;
  hrl_options_init(&o);
  CHECK(!o.lock.fenced);
  o.lock.fenced = true;
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(five, 1, &o, &c, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_new(c, "x", 1, 10000, &plain, NULL, 0), HRL_OK);
  CHECK(hrl_lock_fence_key(plain, &len) != NULL);
  hrl_lock_free(plain);
  hrl_client_free(c);
  free_env(e);
}

/* N = 1: one round, the INCR is the fence; the fence lasts as long as the
 * hold, not its validity. */
static void test_single_master_one_round(void) {
  env e = fenced_env(1, 10000);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  expect_command(e, 0, "INCR", 4);
  hrl_reply set = ok_reply(), incr = int_reply(9223372036854775807LL);
  answer_pairs(e, 1, &set, &incr);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK(hrl_lock_fence(e.lk) == 9223372036854775807ULL);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, 2000), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_ROUND);
  hrl_reply one = int_reply(1);
  answer(e, 1, &one);
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_DONE);
  CHECK_INT(hrl_lock_fence(e.lk), 0);
  free_env(e);
}

/* N = 5, counters in step: the masters that granted returned the same
 * counter, which they hold already: no fence round. */
static void test_counters_in_step_one_round(void) {
  env e = fenced_env(5, 10000);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply set[5] = {ok_reply(), ok_reply(), ok_reply(), nil_reply(),
                      ok_reply()};
  /* master 4 refused (its INCR still counted: 9 says nothing); master 5's
   * counter lags, and 3 of the 4 granting masters hold the fence 8 */
  hrl_reply incr[5] = {int_reply(8), int_reply(8), int_reply(8), int_reply(9),
                       int_reply(2)};
  answer_pairs(e, 5, set, incr);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_lock_fence(e.lk), 8);
  hrl_counts cnt;
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.ok, 4);
  CHECK_INT(cnt.refused, 1);
  free_env(e);
}

/* N = 5, counters drifted: the fence is the greatest counter a granting
 * master returned, and too few hold it: it goes to all 5 in the fence
 * round; the counts say what each master did in the end. */
static void test_fence_round(void) {
  env e = fenced_env(5, 10000);
  int64_t t = hrl_now_us(); /* held-ness is judged on the real clock */
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply set[5] = {ok_reply(), ok_reply(), nil_reply(), ok_reply(),
                      error_reply("READONLY x")};
  hrl_reply incr[5] = {int_reply(12), int_reply(40), int_reply(41),
                       int_reply(7), error_reply("READONLY x")};
  answer_pairs(e, 5, set, incr);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_ROUND);
  CHECK_INT(s.timeout_ms, 50);
  for (size_t i = 0; i < 5; i++) { /* to all N, 40 with the token */
    expect_command(e, i, HRL_FENCE_SHA1, 40);
    expect_command(e, i, "$2\r\n40\r\n", 8);
  }
  CHECK(!hrl_lock_held(e.lk));
  CHECK_INT(hrl_lock_fence(e.lk), 0);
  hrl_reply second[5] = {int_reply(1), int_reply(1), int_reply(0), int_reply(1),
                         error_reply("READONLY x")};
  answer(e, 5, second);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_lock_fence(e.lk), 40);
  int64_t v = hrl_lock_validity_ms(e.lk); /* from the first round's start */
  CHECK(v > 0 && v <= 10000 - 102);
  hrl_counts cnt;
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.ok, 3);
  CHECK_INT(cnt.refused, 1);
  CHECK_INT(cnt.failed, 1);
  CHECK_INT(cnt.attempts, 1);
  free_env(e);
}

/* Drifted, and too few accept the fence: the attempt failed, the keys are
 * released on all N, the caller is told "timeout", and no fence is
 * reported. */
static void test_fence_round_without_quorum(void) {
  env e = fenced_env(5, 10000);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply set[5] = {ok_reply(), ok_reply(), ok_reply(), nil_reply(),
                      nil_reply()};
  hrl_reply incr[5] = {int_reply(3), int_reply(2), int_reply(1), int_reply(3),
                       int_reply(3)};
  answer_pairs(e, 5, set, incr);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND);
  hrl_reply second[5] = {int_reply(1), int_reply(1), int_reply(0), int_reply(0),
                         int_reply(0)};
  answer(e, 5, second);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_ROUND); /* cleanup */
  for (size_t i = 0; i < 5; i++) {
    expect_command(e, i, HRL_QUEUE_SHA1, 40);
  }
  hrl_reply rel[5] = {int_reply(1), int_reply(1), int_reply(1), int_reply(0),
                      int_reply(0)};
  answer(e, 5, rel);
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  CHECK(!hrl_lock_held(e.lk));
  CHECK_INT(hrl_lock_fence(e.lk), 0);
  free_env(e);
}

/* Masters that stop answering between the rounds: fewer than a quorum
 * answered in the end, so a call without a wait fails at once naming
 * them. */
static void test_fence_round_unreachable(void) {
  env e = fenced_env(3, 10000);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply set[3] = {ok_reply(), ok_reply(), ok_reply()};
  hrl_reply incr[3] = {int_reply(2), int_reply(1), int_reply(1)};
  answer_pairs(e, 3, set, incr);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND);
  CHECK(hrl_proto_command(e.lk, 0, &(size_t){0}) != NULL);
  hrl_proto_reply(e.lk, 0,
                  &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = 1});
  hrl_proto_missed(e.lk, 1, "timeout after 50 ms");
  hrl_proto_fail(e.lk, 2, HRL_NODE_UNREACHABLE, "Connection refused");
  CHECK_INT(hrl_proto_step(e.lk, 51000, &s), HRL_STEP_ROUND); /* cleanup */
  hrl_proto_reply(e.lk, 0,
                  &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = 1});
  hrl_proto_fail(e.lk, 1, HRL_NODE_UNREACHABLE, "timeout");
  hrl_proto_fail(e.lk, 2, HRL_NODE_UNREACHABLE, "Connection refused");
  CHECK_INT(hrl_proto_step(e.lk, 60000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "1 of 3 masters answered (2 needed)");
  free_env(e);
}

/* The fence round waits no longer than the validity the first round left,
 * and a hold is only granted within it. */
static void test_fence_round_within_validity(void) {
  env e = fenced_env(3, 1000); /* drift 12 ms: valid until 988 ms */
  hrl_step_info s;
  hrl_reply set[3] = {ok_reply(), ok_reply(), ok_reply()};
  hrl_reply incr[3] = {int_reply(6), int_reply(5), int_reply(5)};
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  answer_pairs(e, 3, set, incr);
  CHECK_INT(hrl_proto_step(e.lk, 960000, &s), HRL_STEP_ROUND);
  CHECK_INT(s.timeout_ms, 28); /* not the 50 ms of the client */
  hrl_reply ok[3] = {int_reply(1), int_reply(1), int_reply(1)};
  answer(e, 3, ok);
  CHECK_INT(hrl_proto_step(e.lk, 990000, &s), HRL_STEP_ROUND); /* too late */
  expect_command(e, 0, HRL_QUEUE_SHA1, 40);
  answer(e, 3, ok);
  CHECK_INT(hrl_proto_step(e.lk, 991000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  /* No validity left for a fence round at all: straight to the cleanup. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  answer_pairs(e, 3, set, incr);
  CHECK_INT(hrl_proto_step(e.lk, 987500, &s), HRL_STEP_ROUND);
  expect_command(e, 0, HRL_QUEUE_SHA1, 40);
  free_env(e);
}

/* What a fenced acquire's replies mean: an INCR that fails after a SET
 * that took leaves our key there, so it is cleaned up; a counter that is
 * not from 1 to 2^63 - 1 is a protocol error; a refused SET's INCR reply
 * changes nothing. */
static void test_fenced_replies(void) {
  env e = fenced_env(1, 10000);
  hrl_step_info s;
  hrl_reply set = ok_reply();
  hrl_reply incr = error_reply("ERR value is not an integer or out of range");
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  answer_pairs(e, 1, &set, &incr);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND);
  expect_command(e, 0, HRL_QUEUE_SHA1, 40);
  hrl_reply one = int_reply(1);
  answer(e, 1, &one);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "value is not an integer");

  hrl_reply bad[] = {int_reply(0), int_reply(-3), ok_reply(), nil_reply()};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
    CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
    answer_pairs(e, 1, &set, &bad[k]);
    CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* cleanup */
    answer(e, 1, &one);
    CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
    CHECK_STATUS(s.status, HRL_EPROTOCOL);
  }
  /* Refused: the INCR's reply, error or not, is no news. */
  hrl_reply refused = nil_reply();
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  answer_pairs(e, 1, &refused, &incr);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  free_env(e);
}

/* A late master gets no late command in the fenced rounds (running the
 * acquire or the fence there later is of no use), and a master that misses
 * a fenced acquire owes both its replies. */
static void test_no_late_command_for_fenced_rounds(void) {
  env e = fenced_env(3, 10000);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  size_t len;
  hrl_reply set = ok_reply(), two = int_reply(2), one = int_reply(1);
  for (size_t i = 0; i < 2; i++) {
    CHECK(hrl_proto_command(e.lk, i, &len) != NULL);
    CHECK_INT(hrl_proto_reply(e.lk, i, &set), HRL_NODE_MORE);
    CHECK_INT(hrl_proto_reply(e.lk, i, i == 0 ? &two : &one), HRL_NODE_OK);
  }
  CHECK(hrl_proto_command(e.lk, 2, &len) != NULL);
  CHECK_INT(hrl_proto_command_replies(e.lk, 2), 2);
  hrl_proto_missed(e.lk, 2, "timeout");
  CHECK(hrl_proto_late_command(e.lk, 2, &len) == NULL && len == 0);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* fence */
  CHECK(!hrl_proto_settled(e.lk));
  hrl_reply acc = int_reply(1);
  for (size_t i = 0; i < 2; i++) {
    CHECK(hrl_proto_command(e.lk, i, &len) != NULL);
    hrl_proto_reply(e.lk, i, &acc);
  }
  CHECK(hrl_proto_settled(e.lk));
  CHECK(hrl_proto_skippable(e.lk, 2)); /* late since the first round */
  CHECK(hrl_proto_command(e.lk, 2, &len) != NULL);
  hrl_proto_missed(e.lk, 2, "not waited for");
  CHECK(hrl_proto_late_command(e.lk, 2, &len) == NULL);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_lock_fence(e.lk), 2);
  CHECK_INT(hrl_proto_command_replies(e.lk, 0), 0); /* no round out */
  free_env(e);
}

/* A fenced acquire that waits: its tries are the queue script with INCR
 * behind (two replies), and a try that wins is fenced by its own INCR. */
static void test_waiting_try_is_fenced(void) {
  env e = fenced_env(1, 10000);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply set = nil_reply(), incr = int_reply(3);
  answer_pairs(e, 1, &set, &incr); /* held by another */
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND);
  CHECK(hrl_proto_waiter(e.lk) != NULL);
  expect_command(e, 0, HRL_QUEUE_SHA1, 40);
  expect_command(e, 0, "INCR\r\n$14\r\nres{res}:fence", 25);
  hrl_reply pttl = int_reply(300);
  incr = int_reply(4);
  answer_pairs(e, 1, &pttl, &incr); /* queued: the holder has 300 ms */
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_WAIT);
  hrl_proto_notified(e.lk, 0); /* a quorum (N = 1) handed it over */
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_ROUND);
  hrl_reply ok = ok_reply();
  incr = int_reply(5);
  answer_pairs(e, 1, &ok, &incr);
  CHECK_INT(hrl_proto_step(e.lk, 4000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK(hrl_lock_fence(e.lk) == 5);
  free_env(e);
}

/* A NOSCRIPT to a fenced try: its INCR ran before the try, so once its
 * reply is in, both go again (the script in full): the fence is the second
 * INCR's. */
static void test_waiting_try_noscript(void) {
  env e = fenced_env(1, 10000);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply set = nil_reply(), incr = int_reply(3);
  answer_pairs(e, 1, &set, &incr);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND);
  size_t len;
  CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
  hrl_reply noscript = error_reply("NOSCRIPT No matching script.");
  CHECK_INT(hrl_proto_reply(e.lk, 0, &noscript), HRL_NODE_MORE);
  incr = int_reply(4);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &incr), HRL_NODE_RESEND);
  CHECK_INT(hrl_proto_command_replies(e.lk, 0), 2);
  expect_command(e, 0, HRL_QUEUE_SCRIPT, strlen(HRL_QUEUE_SCRIPT));
  expect_command(e, 0, "INCR", 4);
  hrl_reply ok = ok_reply();
  CHECK_INT(hrl_proto_reply(e.lk, 0, &ok), HRL_NODE_MORE);
  incr = int_reply(6);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &incr), HRL_NODE_OK);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK(hrl_lock_fence(e.lk) == 6);
  free_env(e);
}

/* N = 3, a try that wins with counters out of step: the fence round; when
 * it fails the waiter steps aside and stays queued, never cleaned up as a
 * fresh attempt would be. */
static void test_waiting_try_fence_round_fails(void) {
  env e = fenced_env(3, 10000);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply set[3] = {nil_reply(), nil_reply(), nil_reply()};
  hrl_reply incr[3] = {int_reply(1), int_reply(1), int_reply(1)};
  answer_pairs(e, 3, set, incr);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* a try */
  hrl_reply won[3] = {ok_reply(), ok_reply(), ok_reply()};
  hrl_reply drift[3] = {int_reply(7), int_reply(2), int_reply(3)};
  answer_pairs(e, 3, won, drift);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_ROUND);
  expect_command(e, 0, HRL_FENCE_SHA1, 40);
  hrl_reply zero[3] = {int_reply(1), int_reply(0), int_reply(0)};
  answer(e, 3, zero);
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_ROUND);
  expect_command(e, 0, HRL_QUEUE_SHA1, 40);
  expect_command(e, 0, "$1\r\na\r\n", 7); /* step aside */
  hrl_reply aside[3] = {int_reply(0), int_reply(0), int_reply(0)};
  answer(e, 3, aside);
  CHECK_INT(hrl_proto_step(e.lk, 4000, &s), HRL_STEP_WAIT);
  CHECK(hrl_proto_waiter(e.lk) != NULL);
  CHECK(!hrl_lock_held(e.lk));
  free_env(e);
}

int main(void) {
  RUN(test_fenced_command_bytes);
  RUN(test_fenced_lock_object);
  RUN(test_single_master_one_round);
  RUN(test_counters_in_step_one_round);
  RUN(test_fence_round);
  RUN(test_fence_round_without_quorum);
  RUN(test_fence_round_unreachable);
  RUN(test_fence_round_within_validity);
  RUN(test_fenced_replies);
  RUN(test_no_late_command_for_fenced_rounds);
  RUN(test_waiting_try_is_fenced);
  RUN(test_waiting_try_noscript);
  RUN(test_waiting_try_fence_round_fails);
  return finish_tests("test_fence_proto");
}
