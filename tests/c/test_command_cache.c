/* Unit tests, without Redis, of the commands a lock keeps as bytes
 * (core/src/proto/command_cache.c): every round's bytes, on every master,
 * over several cycles of one lock object, are what resp.c formats for that
 * round from the lock's key, sibling keys, token and TTL -- plain and
 * fenced acquires, releases, extends (the TTL changed and not), waiting
 * acquires and their tries, N = 1 and N = 5, and a read-write lock's
 * hold, whose commands are never kept. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proto/command_cache.h"
#include "proto/resp.h"
#include "proto/state.h"

static const char *const five[] = {"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                                   "redis://127.0.0.1:3", "redis://127.0.0.1:4",
                                   "redis://127.0.0.1:5"};

/* Rounds whose bytes were compared, by kind. */
static int compared[HRL_ROUND_INSPECT + 1];

/* What resp.c formats for the round out now, built here from the lock's
 * fields rather than from round.c's arguments. */
static size_t expected(const hrl_lock *lk, char *buf) {
  const hrl_op *op = &lk->op;
  hrl_command_args a = {lk->key,
                        lk->key_len,
                        lk->queue,
                        lk->queue_len,
                        lk->waiters,
                        lk->waiters_len,
                        lk->fence_key,
                        lk->fence_key_len,
                        op->token,
                        op->ttl_ms,
                        0,
                        0,
                        0,
                        NULL,
                        0,
                        lk->mode,
                        lk->permits,
                        0,
                        false};
  return hrl_resp_command(buf, op->round_kind, true, &a);
}

/* Whether the round out now is one whose bytes a lock may keep. */
static bool keepable(const hrl_lock *lk) {
  hrl_round_kind k = lk->op.round_kind;
  return lk->mode == HRL_MODE_LOCK &&
         (k == HRL_ROUND_SET || k == HRL_ROUND_FENCED_ACQUIRE ||
          k == HRL_ROUND_RELEASE || k == HRL_ROUND_EXTEND);
}

/* Answers master i's round as a master that grants it would (refuse:
 * as one where another holder has the key); checks the bytes first. */
static void answer(hrl_lock *lk, size_t i, bool refuse) {
  size_t len = 0;
  const char *bytes = hrl_proto_command(lk, i, &len);
  CHECK(bytes != NULL);
  if (keepable(lk)) {
    char want[4096];
    size_t n = expected(lk, want);
    CHECK_INT(len, n);
    CHECK(len == n && memcmp(bytes, want, n) == 0);
    compared[lk->op.round_kind]++;
  }
  hrl_round_kind k = lk->op.round_kind;
  hrl_reply r = int_reply(1);
  if (k == HRL_ROUND_SET || k == HRL_ROUND_FENCED_ACQUIRE ||
      k == HRL_ROUND_TRY || k == HRL_ROUND_FENCED_TRY) {
    r = refuse ? (k == HRL_ROUND_SET || k == HRL_ROUND_FENCED_ACQUIRE
                      ? nil_reply()
                      : int_reply(5000))
               : status_reply("OK");
  } else if (k == HRL_ROUND_ASIDE) {
    r = int_reply(0);
  }
  hrl_node_result got = hrl_proto_reply(lk, i, &r);
  if (k == HRL_ROUND_FENCED_ACQUIRE || k == HRL_ROUND_FENCED_TRY) {
    CHECK_INT(got, HRL_NODE_MORE);
    hrl_reply counter = int_reply(7);
    hrl_proto_reply(lk, i, &counter);
  }
}

/* Runs the operation begun on lk to its end; refused_rounds: how many of
 * its first rounds every master refuses. Returns its status. */
static hrl_status run(hrl_lock *lk, int refused_rounds) {
  hrl_step_info info;
  for (int rounds = 0; rounds < 64; rounds++) {
    int64_t now = hrl_now_us();
    hrl_step s = hrl_proto_step(lk, now, &info);
    if (s == HRL_STEP_DONE) {
      return info.status;
    }
    if (s == HRL_STEP_WAIT) {
      continue; /* the retry comes at once: no time passes here */
    }
    for (size_t i = 0; i < lk->cfg->n; i++) {
      answer(lk, i, rounds < refused_rounds);
    }
  }
  CHECK(!"the operation ended");
  return HRL_EPROTOCOL;
}

static void cycles(size_t n, const hrl_options *o, int count) {
  hrl_client *c = check_client(five, n, o);
  hrl_lock *lk = check_lock(c, "res{x}");
  char last[HRL_TOKEN_LEN + 1] = "";
  for (int k = 0; k < count; k++) {
    CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
    CHECK_STATUS(run(lk, 0), HRL_OK);
    CHECK(strcmp(lk->token, last) != 0); /* a fresh token every hold */
    memcpy(last, lk->token, sizeof last);
    /* the extend: the same TTL twice, then another, then back */
    for (int e = 0; e < 4 && k % 2 == 1; e++) {
      int64_t ttl = e == 2 ? 12345 : 30000;
      CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_EXTEND, ttl, hrl_now_us()),
                   HRL_OK);
      CHECK_STATUS(run(lk, 0), HRL_OK);
    }
    CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_RELEASE, 0, hrl_now_us()), HRL_OK);
    CHECK_STATUS(run(lk, 0), HRL_OK);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_plain_cycles_send_the_formatted_bytes(void) {
  memset(compared, 0, sizeof compared);
  cycles(1, NULL, 4);
  cycles(5, NULL, 4);
  CHECK_INT(compared[HRL_ROUND_SET], 4 + 4 * 5);
  CHECK_INT(compared[HRL_ROUND_RELEASE], 4 + 4 * 5);
  CHECK_INT(compared[HRL_ROUND_EXTEND], 8 + 8 * 5);
}

static void test_fenced_cycles_send_the_formatted_bytes(void) {
  memset(compared, 0, sizeof compared);
  hrl_options o;
  hrl_options_init(&o);
  o.lock.fenced = true;
  cycles(1, &o, 3);
  cycles(5, &o, 3);
  CHECK_INT(compared[HRL_ROUND_FENCED_ACQUIRE], 3 + 3 * 5);
  CHECK_INT(compared[HRL_ROUND_RELEASE], 3 + 3 * 5);
}

/* A waiting acquire: its first attempt refused, then a try that takes the
 * lock; the tries are formatted every time (their arrival and channel),
 * the SET and the release come from the kept bytes from the second cycle
 * on. */
static void test_waiting_cycles_send_the_formatted_bytes(void) {
  memset(compared, 0, sizeof compared);
  for (size_t n = 1; n <= 5; n += 4) {
    hrl_client *c = check_client(five, n, NULL);
    hrl_lock *lk = check_lock(c, "res");
    for (int k = 0; k < 3; k++) {
      CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 5000, hrl_now_us()),
                   HRL_OK);
      CHECK_STATUS(run(lk, 1), HRL_OK);
      CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_RELEASE, 0, hrl_now_us()),
                   HRL_OK);
      CHECK_STATUS(run(lk, 0), HRL_OK);
    }
    hrl_lock_free(lk);
    hrl_client_free(c);
  }
  CHECK_INT(compared[HRL_ROUND_SET], 3 + 3 * 5);
  CHECK(compared[HRL_ROUND_RELEASE] >= 3 + 3 * 5);
}

/* A lock made for one acquisition keeps nothing: no allocation beyond
 * the lock's own. One used again keeps its acquire and release. */
static void test_only_a_reused_lock_keeps_its_commands(void) {
  hrl_client *c = check_client(five, 1, NULL);
  hrl_lock *lk = check_lock(c, "res");
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
  CHECK_STATUS(run(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_RELEASE, 0, hrl_now_us()), HRL_OK);
  CHECK_STATUS(run(lk, 0), HRL_OK);
  CHECK(lk->op.spare == NULL);
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
  CHECK_STATUS(run(lk, 0), HRL_OK);
  CHECK(lk->op.spare != NULL && lk->op.spare->slot[0].len > 0);
  CHECK(lk->op.spare != NULL && lk->op.spare->slot[1].len == 0);
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_RELEASE, 0, hrl_now_us()), HRL_OK);
  CHECK_STATUS(run(lk, 0), HRL_OK);
  CHECK(lk->op.spare != NULL && lk->op.spare->slot[1].len > 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* A read-write lock's hold names a permit that may change between rounds:
 * its commands are formatted every time, never kept. */
static void test_a_hold_keeps_nothing(void) {
  hrl_client *c = check_client(five, 1, NULL);
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_rwlock_new(c, "rw", 2, HRL_MODE_WRITE, NULL, &lk, NULL, 0),
               HRL_OK);
  for (int k = 0; lk != NULL && k < 3; k++) {
    CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
    hrl_step_info info;
    CHECK_INT(hrl_proto_step(lk, hrl_now_us(), &info), HRL_STEP_ROUND);
    hrl_proto_cancel(lk);
    /* the cancelled acquire's cleanup, on a master that went away */
    for (int r = 0; r < 8; r++) {
      if (hrl_proto_step(lk, hrl_now_us(), &info) == HRL_STEP_DONE) {
        break;
      }
      hrl_proto_fail(lk, 0, HRL_NODE_UNREACHABLE, "gone");
    }
  }
  CHECK(lk == NULL || lk->op.spare == NULL || lk->op.spare->slot[0].len == 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

int main(void) {
  RUN(test_plain_cycles_send_the_formatted_bytes);
  RUN(test_fenced_cycles_send_the_formatted_bytes);
  RUN(test_waiting_cycles_send_the_formatted_bytes);
  RUN(test_only_a_reused_lock_keeps_its_commands);
  RUN(test_a_hold_keeps_nothing);
  return finish_tests("test_command_cache");
}
