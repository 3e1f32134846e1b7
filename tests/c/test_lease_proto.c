/* Unit tests of managed leases in the sans-I/O protocol, without Redis:
 * when renewals are due, what they ask for (max_hold), what their outcomes
 * mean (renewed, failed, lost, discarded), driven by a fake transport on a
 * fake clock. */
#include <stdlib.h>

#include "check.h"
#include "proto/resp.h"
#include "proto/state.h"

static const char *const three[] = {
    "redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3"};

#define MS 1000

typedef struct env {
  hrl_client *c;
  hrl_lock *lk;
  int64_t t;   /* when the hold's acquire round started */
  uint32_t px; /* the TTL its SET asked for */
} env;

/* The PX of a SET command. */
static uint32_t px_of(const char *cmd, size_t len) {
  const char *px = memmem(cmd, len, "\r\nPX\r\n$", 7);
  CHECK(px != NULL);
  if (px == NULL) {
    return 0;
  }
  px = memchr(px + 7, '\n', (size_t)(cmd + len - px - 7));
  return (uint32_t)strtoul(px + 1, NULL, 10);
}

static env make_env(uint32_t ttl_ms, uint32_t max_hold_ms) {
  env e = {NULL, NULL, 0, 0};
  CHECK_STATUS(hrl_client_new(three, 3, NULL, &e.c, NULL, 0), HRL_OK);
  hrl_lock_options lo;
  hrl_lock_options_init(e.c, &lo);
  lo.ttl_ms = ttl_ms;
  lo.auto_renew = true;
  lo.max_hold_ms = max_hold_ms;
  CHECK_STATUS(hrl_lock_new_with(e.c, "res", 3, &lo, &e.lk, NULL, 0), HRL_OK);
  /* Held from now on the real clock, so that the accessors agree. */
  e.t = hrl_now_us();
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, e.t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, e.t, &s), HRL_STEP_ROUND);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  e.px = px_of(cmd, len);
  for (size_t i = 0; i < 3; i++) {
    hrl_proto_reply(
        e.lk, i, &(hrl_reply){.type = HRL_REPLY_STATUS, .str = "OK", .len = 2});
  }
  CHECK_INT(hrl_proto_step(e.lk, e.t, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  return e;
}

static void free_env(env e) {
  hrl_lock_free(e.lk);
  hrl_client_free(e.c);
}

/* Runs the twin's extend round at now_us, each master answering with the
 * integer in answers (-1: a timeout), and hands the outcome over. */
static hrl_status renew_at(env e, int64_t now_us, const int answers[3],
                           uint32_t *asked_ttl) {
  hrl_lock *twin = NULL;
  hrl_renew what = hrl_proto_renew_begin(e.lk, now_us, &twin);
  CHECK_INT(what, HRL_RENEW_ROUND);
  if (twin == NULL) {
    return HRL_EINVAL;
  }
  hrl_step_info s;
  CHECK_INT(hrl_proto_step(twin, now_us, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < 3; i++) {
    size_t len;
    const char *cmd = hrl_proto_command(twin, i, &len);
    CHECK(cmd != NULL && memmem(cmd, len, HRL_EXTEND_SHA1, 40) != NULL);
    if (asked_ttl != NULL && i == 0) {
      /* The last argument: "$<n>\r\n<ttl>\r\n". */
      const char *end = cmd + len - 2, *p = end;
      while (p[-1] != '\n') {
        p--;
      }
      *asked_ttl = (uint32_t)strtoul(p, NULL, 10);
    }
    if (answers[i] < 0) {
      hrl_proto_missed(twin, i, "timeout after 50 ms");
    } else {
      hrl_proto_reply(
          twin, i,
          &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = answers[i]});
    }
  }
  CHECK_INT(hrl_proto_step(twin, now_us + 2 * MS, &s), HRL_STEP_DONE);
  return hrl_proto_renew_end(e.lk, now_us + 2 * MS);
}

static const int all_ok[3] = {1, 1, 1};

static void test_due_every_third_and_renewed(void) {
  env e = make_env(3000, 0);
  /* validity: 3000 - (30 + 2) ms; due when two thirds are left. */
  int64_t until = e.t + (3000 - 32) * MS;
  CHECK_INT(hrl_proto_renew_due(e.lk), until - 2000 * MS);
  hrl_counts before;
  hrl_lock_counts(e.lk, &before);
  uint32_t asked = 0;
  int64_t t1 = e.t + 1000 * MS;
  CHECK_STATUS(renew_at(e, t1, all_ok, &asked), HRL_OK);
  CHECK_INT(asked, 3000);
  CHECK_INT(hrl_proto_renew_due(e.lk), t1 + (3000 - 32 - 2000) * MS);
  /* The renewal left the holder's own call's record alone. */
  hrl_counts after;
  hrl_lock_counts(e.lk, &after);
  CHECK_INT(after.attempts, before.attempts);
  CHECK_INT(after.ok, 3);
  CHECK_STR(hrl_lock_error(e.lk), "");
  CHECK(hrl_lock_held(e.lk));
  CHECK_STATUS(hrl_lock_lost(e.lk, NULL, 0), HRL_OK);
  free_env(e);
}

static void test_failed_renewal_retries_then_expires(void) {
  env e = make_env(3000, 0);
  int64_t t1 = e.t + 1000 * MS;
  const int two_down[3] = {1, -1, -1};
  hrl_status st = renew_at(e, t1, two_down, NULL);
  CHECK_STATUS(st, HRL_ECONNECT);
  CHECK(hrl_lock_held(e.lk));
  CHECK_STATUS(hrl_lock_lost(e.lk, NULL, 0), HRL_OK);
  /* The next try comes a tenth of the TTL after the failure. */
  CHECK_INT(hrl_proto_renew_due(e.lk), t1 + 2 * MS + 300 * MS);
  /* Past the validity, the next look finds it lost, with the failure. */
  int64_t late = e.t + 3000 * MS;
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_begin(e.lk, late, &twin), HRL_RENEW_LOST);
  CHECK(twin == NULL);
  char reason[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_lost(e.lk, reason, sizeof reason), HRL_ELOST);
  CHECK_CONTAINS(reason, "expired: connection failed: 1 of 3 masters "
                         "confirmed (2 needed); 127.0.0.1:2: timeout");
  CHECK(!hrl_lock_held(e.lk));
  CHECK_INT(hrl_proto_renew_due(e.lk), INT64_MAX);
  CHECK_INT(hrl_proto_renew_begin(e.lk, late, &twin), HRL_RENEW_NONE);
  /* Release and extend say so, without I/O, until a new hold. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, late), HRL_ELOST);
  CHECK_STR(hrl_lock_error(e.lk), reason);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 0, late), HRL_ELOST);
  char msg[HRL_DETAIL_MAX + 64];
  hrl_format_error(HRL_ELOST, hrl_lock_error(e.lk), msg, sizeof msg);
  CHECK_CONTAINS(msg, "lost: expired: connection failed");
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, late), HRL_OK);
  CHECK_STATUS(hrl_lock_lost(e.lk, NULL, 0), HRL_OK);
  free_env(e);
}

static void test_not_owned_is_lost(void) {
  env e = make_env(3000, 0);
  const int gone[3] = {0, 0, 1};
  CHECK_STATUS(renew_at(e, e.t + 1000 * MS, gone, NULL), HRL_ELOST);
  char reason[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_lost(e.lk, reason, sizeof reason), HRL_ELOST);
  CHECK_STR(reason, "not owned");
  CHECK(!hrl_lock_held(e.lk));
  CHECK_INT(hrl_lock_validity_ms(e.lk), 0);
  free_env(e);
}

static void test_renewal_confirmed_too_late_is_lost(void) {
  env e = make_env(3000, 0);
  /* Begun before the validity ran out, judged after: lost all the same. */
  int64_t t1 = e.t + (3000 - 32 - 1) * MS;
  CHECK_STATUS(renew_at(e, t1, all_ok, NULL), HRL_ELOST);
  char reason[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_lost(e.lk, reason, sizeof reason), HRL_ELOST);
  CHECK_STR(reason, "expired");
  free_env(e);
}

static void test_hold_changed_meanwhile_is_discarded(void) {
  env e = make_env(3000, 0);
  int64_t t1 = e.t + 1000 * MS;
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_begin(e.lk, t1, &twin), HRL_RENEW_ROUND);
  /* The holder releases while the renewal is out (a driver without
   * threads, the OpenResty one, allows that). */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t1), HRL_OK);
  hrl_step_info s;
  CHECK_INT(hrl_proto_step(twin, t1, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < 3; i++) {
    size_t len;
    hrl_proto_command(twin, i, &len);
    hrl_proto_reply(twin, i,
                    &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = 0});
  }
  CHECK_INT(hrl_proto_step(twin, t1, &s), HRL_STEP_DONE);
  CHECK_STATUS(hrl_proto_renew_end(e.lk, t1), HRL_ECANCELLED);
  CHECK_STATUS(hrl_lock_lost(e.lk, NULL, 0), HRL_OK);
  /* While the holder's own call is out, the renewal waits. */
  CHECK_INT(hrl_proto_renew_begin(e.lk, t1, &twin), HRL_RENEW_WAIT);
  free_env(e);
}

static void test_max_hold_caps_renewal(void) {
  env e = make_env(3000, 4000);
  uint32_t asked = 0;
  int64_t t1 = e.t + 1000 * MS;
  CHECK_STATUS(renew_at(e, t1, all_ok, &asked), HRL_OK);
  CHECK_INT(asked, 3000); /* 3 s of the 4 are left: a full TTL fits */
  int64_t t2 = e.t + 2000 * MS;
  CHECK_STATUS(renew_at(e, t2, all_ok, &asked), HRL_OK);
  CHECK_INT(asked, 2000); /* only what max_hold leaves */
  /* The last renewal: nothing is due but the expiry. */
  int64_t until = t2 + (2000 - 22) * MS;
  CHECK_INT(hrl_proto_renew_due(e.lk), until);
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_begin(e.lk, until - MS, &twin), HRL_RENEW_WAIT);
  CHECK_INT(hrl_proto_renew_begin(e.lk, until, &twin), HRL_RENEW_LOST);
  char reason[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_lost(e.lk, reason, sizeof reason), HRL_ELOST);
  CHECK_STR(reason, "max_hold reached");
  free_env(e);
}

/* A max_hold shorter than the TTL: the acquire asks for max_hold (the
 * hold could not end on time otherwise), renews nothing, and the lease is
 * lost at its validity with "max_hold reached". */
static void test_max_hold_shorter_than_ttl(void) {
  env e = make_env(3000, 2000);
  CHECK_INT(e.px, 2000);
  CHECK_INT(hrl_lock_ttl_ms(e.lk), 3000); /* what it was made with */
  int64_t until = e.t + (2000 - 22) * MS;
  CHECK_INT(hrl_proto_renew_due(e.lk), until);
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_begin(e.lk, e.t + 1000 * MS, &twin),
            HRL_RENEW_WAIT);
  CHECK_INT(hrl_proto_renew_begin(e.lk, until, &twin), HRL_RENEW_LOST);
  char reason[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_lost(e.lk, reason, sizeof reason), HRL_ELOST);
  CHECK_STR(reason, "max_hold reached");
  free_env(e);
  /* max_hold equal to the TTL: the same, a full TTL and no renewal. */
  e = make_env(3000, 3000);
  CHECK_INT(e.px, 3000);
  CHECK_INT(hrl_proto_renew_due(e.lk), e.t + (3000 - 32) * MS);
  free_env(e);
  /* A max_hold no round could hold a lock for is refused up front, in
   * every runtime's words (the core's option checks). */
  hrl_client *c = NULL;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_client_new(three, 3, NULL, &c, NULL, 0), HRL_OK);
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.auto_renew = true;
  lo.max_hold_ms = 3;
  char detail[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_new_with(c, "res", 3, &lo, &lk, detail, sizeof detail),
               HRL_EINVAL);
  CHECK_STR(detail, "max_hold must be 0 (no cap) or at least the smallest "
                    "TTL, 5 ms; got 3 ms");
  lo.max_hold_ms = 5;
  CHECK_STATUS(hrl_lock_new_with(c, "res", 3, &lo, &lk, NULL, 0), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* The round timeout of the step the twin (or the lock) is at. */
static uint32_t round_timeout(hrl_lock *lk, int64_t now_us) {
  hrl_step_info s;
  CHECK_INT(hrl_proto_step(lk, now_us, &s), HRL_STEP_ROUND);
  return s.timeout_ms;
}

/* No extend round outlasts the validity it is meant to keep: a renewal
 * (or the holder's extend) begun with 20 ms of it left waits 20 ms for
 * the masters, not the per-master timeout (50 ms), so a loss is known by
 * the time `validity` said, before another client can take the lock. */
static void test_extend_rounds_end_with_the_validity(void) {
  env e = make_env(3000, 0);
  int64_t until = e.t + (3000 - 32) * MS;
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_begin(e.lk, until - 20 * MS, &twin),
            HRL_RENEW_ROUND);
  CHECK_INT(round_timeout(twin, until - 20 * MS), 20);
  /* Plenty left: the per-master timeout as before. */
  free_env(e);
  e = make_env(3000, 0);
  until = e.t + (3000 - 32) * MS;
  CHECK_INT(hrl_proto_renew_begin(e.lk, e.t + 1000 * MS, &twin),
            HRL_RENEW_ROUND);
  CHECK_INT(round_timeout(twin, e.t + 1000 * MS), 50);
  free_env(e);
  /* The holder's own extend, on a lease and on a plain lock. */
  e = make_env(3000, 0);
  until = e.t + (3000 - 32) * MS;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 0, until - 7 * MS), HRL_OK);
  CHECK_INT(round_timeout(e.lk, until - 7 * MS), 7);
  free_env(e);
  /* Less than a millisecond left: no round could end in time; the renewal
   * waits for the expiry, which finds the lease lost. */
  e = make_env(3000, 0);
  until = e.t + (3000 - 32) * MS;
  CHECK_INT(hrl_proto_renew_begin(e.lk, until - 500, &twin), HRL_RENEW_WAIT);
  CHECK_INT(hrl_proto_renew_due(e.lk), until);
  CHECK_INT(hrl_proto_renew_begin(e.lk, until, &twin), HRL_RENEW_LOST);
  free_env(e);
}

static void test_plain_extend_capped_while_valid(void) {
  hrl_client *c = NULL;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_client_new(three, 3, NULL, &c, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_new(c, "res", 3, 3000, &lk, NULL, 0), HRL_OK);
  int64_t t = hrl_now_us();
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(lk, t, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < 3; i++) {
    hrl_proto_reply(
        lk, i, &(hrl_reply){.type = HRL_REPLY_STATUS, .str = "OK", .len = 2});
  }
  CHECK_INT(hrl_proto_step(lk, t, &s), HRL_STEP_DONE);
  int64_t until = t + (3000 - 32) * MS;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_EXTEND, 0, until - 12 * MS), HRL_OK);
  CHECK_INT(round_timeout(lk, until - 12 * MS), 12);
  for (size_t i = 0; i < 3; i++) {
    hrl_proto_missed(lk, i, "timeout after 12 ms");
  }
  CHECK_INT(hrl_proto_step(lk, until - 0 * MS, &s), HRL_STEP_DONE);
  /* Its validity gone (it is not held), a plain lock's extend still asks
   * the masters with the usual timeout: nothing it says can come late. */
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_EXTEND, 0, until + 5 * MS), HRL_OK);
  CHECK_INT(round_timeout(lk, until + 5 * MS), 50);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* Answers every master of lk's (or a twin's) extend round begun at now_us
 * with 1 (extended) and steps it to its end. */
static void extend_round_ok(hrl_lock *lk, int64_t now_us) {
  hrl_step_info s;
  CHECK_INT(hrl_proto_step(lk, now_us, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < 3; i++) {
    size_t len;
    hrl_proto_command(lk, i, &len);
    hrl_proto_reply(lk, i,
                    &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = 1});
  }
  CHECK_INT(hrl_proto_step(lk, now_us + MS, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
}

/* The renewal (PX 2000, what max_hold leaves) and the holder's extend
 * (PX 3000) of one hold out at once: a master keeps whichever it runs
 * last, so both count on the shorter, in either order of their ends (sim
 * seed 993543, tests/sim/regress/lease-extend-race.txt). */
static void test_renewal_and_extend_at_once_count_the_least(void) {
  for (int renewal_first = 0; renewal_first < 2; renewal_first++) {
    env e = make_env(3000, 4000);
    int64_t t2 = e.t + 2000 * MS;
    hrl_lock *twin = NULL;
    CHECK_INT(hrl_proto_renew_begin(e.lk, t2, &twin), HRL_RENEW_ROUND);
    CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 3000, t2), HRL_OK);
    if (renewal_first) {
      extend_round_ok(twin, t2);
      CHECK_STATUS(hrl_proto_renew_end(e.lk, t2 + MS), HRL_OK);
      extend_round_ok(e.lk, t2);
    } else {
      extend_round_ok(e.lk, t2);
      extend_round_ok(twin, t2);
      CHECK_STATUS(hrl_proto_renew_end(e.lk, t2 + MS), HRL_OK);
    }
    /* The renewal's 2000 ms less drift (20 + 2 ms), not the extend's 3000 */
    CHECK_INT(hrl_proto_renew_due(e.lk), t2 + (2000 - 22) * MS);
    hrl_lock *again = NULL;
    CHECK_INT(hrl_proto_renew_begin(e.lk, t2 + (2000 - 22) * MS, &again),
              HRL_RENEW_LOST);
    free_env(e);
  }
  /* One after the other, the holder's extend counts on its own TTL (a
   * max_hold far enough not to cut it). */
  env e = make_env(3000, 6000);
  int64_t t2 = e.t + 2000 * MS;
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_begin(e.lk, t2, &twin), HRL_RENEW_ROUND);
  extend_round_ok(twin, t2);
  CHECK_STATUS(hrl_proto_renew_end(e.lk, t2 + MS), HRL_OK);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 3000, t2 + 2 * MS), HRL_OK);
  extend_round_ok(e.lk, t2 + 2 * MS);
  CHECK_INT(e.lk->valid_until_us, t2 + 2 * MS + (3000 - 32) * MS);
  free_env(e);
}

/* The TTL of lk's extend round command to master 0 (its last argument). */
static uint32_t extend_px(hrl_lock *lk) {
  size_t len;
  const char *cmd = hrl_proto_command(lk, 0, &len);
  CHECK(cmd != NULL);
  if (cmd == NULL) {
    return 0;
  }
  const char *p = cmd + len - 2;
  while (p[-1] != '\n') {
    p--;
  }
  return (uint32_t)strtoul(p, NULL, 10);
}

/* Runs lk's (or a twin's) extend round begun at now_us: each master
 * answers with the integer in answers (-1: no reply by the deadline).
 * Returns the outcome; *px: the TTL it asked for. */
static hrl_status extend_round(hrl_lock *lk, int64_t now_us,
                               const int answers[3], uint32_t *px) {
  hrl_step_info s;
  CHECK_INT(hrl_proto_step(lk, now_us, &s), HRL_STEP_ROUND);
  *px = extend_px(lk);
  for (size_t i = 0; i < 3; i++) {
    size_t len;
    hrl_proto_command(lk, i, &len);
    if (answers[i] < 0) {
      hrl_proto_missed(lk, i, "timeout after 50 ms");
    } else {
      hrl_proto_reply(
          lk, i,
          &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = answers[i]});
    }
  }
  CHECK_INT(hrl_proto_step(lk, now_us + MS, &s), HRL_STEP_DONE);
  return s.status;
}

/* The holder's own extend of a lease is cut to what max_hold leaves, as
 * a renewal is: max_hold is the longest the lease holds the lock, from
 * its acquire; the lease reports "max_hold reached" when that validity
 * ends, and an extend with nothing left fails with those words. */
static void test_max_hold_caps_the_holders_extend(void) {
  env e = make_env(3000, 4000);
  int64_t t2 = e.t + 2000 * MS;
  uint32_t px = 0;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 3000, t2), HRL_OK);
  CHECK_STATUS(extend_round(e.lk, t2, all_ok, &px), HRL_OK);
  CHECK_INT(px, 2000); /* 3000 asked, 2000 of max_hold left */
  CHECK_INT(hrl_lock_ttl_ms(e.lk), 3000); /* the lock's TTL stays */
  int64_t until = t2 + (2000 - 22) * MS;
  CHECK_INT(hrl_proto_renew_due(e.lk), until); /* no renewal: expiry next */
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_begin(e.lk, until - MS, &twin), HRL_RENEW_WAIT);
  /* At the validity, the loss says why, to the extend as to lost(). */
  char detail[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 0, until), HRL_ELOST);
  CHECK_STR(e.lk->detail, "max_hold reached");
  CHECK_STATUS(hrl_lock_lost(e.lk, detail, sizeof detail), HRL_ELOST);
  CHECK_STR(detail, "max_hold reached");
  free_env(e);
  /* Held, with less of max_hold left than any round could hold it for:
   * the extend fails at once with the words the loss will have. */
  e = make_env(30, 40);
  int64_t t1 = e.t + 10 * MS;
  CHECK_STATUS(renew_at(e, t1, all_ok, &px), HRL_OK);
  CHECK_INT(px, 30);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 0, e.t + 36 * MS),
               HRL_ELOST);
  CHECK_STR(e.lk->detail, "max_hold reached");
  CHECK_STATUS(hrl_lock_lost(e.lk, detail, sizeof detail), HRL_OK);
  CHECK_INT(hrl_proto_renew_due(e.lk), e.lk->valid_until_us);
  free_env(e);
  /* With room to spare, an extend asks for what it was asked. */
  e = make_env(3000, 10000);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 3000, e.t + 1000 * MS),
               HRL_OK);
  CHECK_STATUS(extend_round(e.lk, e.t + 1000 * MS, all_ok, &px), HRL_OK);
  CHECK_INT(px, 3000);
  free_env(e);
}

/* An extend of the hold that a master never answered may still run
 * there, after any later extend sent on another connection: a renewal
 * (PX 3000) that timed out on two masters, then the holder's extend of
 * 5000 ms confirmed by all three, counts on 3000 ms from its start there;
 * the reverse, the holder's extend of 1000 ms unanswered, then a renewal
 * confirmed, counts on 1000 ms. */
static void test_unanswered_extend_caps_the_next(void) {
  const int one_ok[3] = {1, -1, -1};
  env e = make_env(3000, 0);
  int64_t t1 = e.t + 1000 * MS;
  CHECK_STATUS(renew_at(e, t1, one_ok, NULL), HRL_ECONNECT);
  int64_t t2 = t1 + 10 * MS;
  uint32_t px = 0;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 5000, t2), HRL_OK);
  CHECK_STATUS(extend_round(e.lk, t2, all_ok, &px), HRL_OK);
  CHECK_INT(px, 5000);
  CHECK_INT(e.lk->valid_until_us, t2 + (3000 - 32) * MS);
  free_env(e);

  e = make_env(3000, 0);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 1000, t1 = e.t + 500 * MS),
               HRL_OK);
  CHECK_STATUS(extend_round(e.lk, t1, one_ok, &px), HRL_ECONNECT);
  CHECK_INT(e.lk->valid_until_us, t1 + (1000 - 12) * MS);
  t2 = t1 + 20 * MS;
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_begin(e.lk, t2, &twin), HRL_RENEW_ROUND);
  CHECK_STATUS(extend_round(twin, t2, all_ok, &px), HRL_OK);
  CHECK_STATUS(hrl_proto_renew_end(e.lk, t2 + MS), HRL_OK);
  CHECK_INT(px, 3000);
  CHECK_INT(e.lk->valid_until_us, t2 + (1000 - 12) * MS);
  /* Renewed as a lock of that TTL would be, a third of it later. */
  CHECK_INT(hrl_proto_renew_due(e.lk),
            e.lk->valid_until_us - 1000 * MS * 2 / 3);
  /* A new hold owes nothing: its extends count on their own TTL. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t2 + 2 * MS), HRL_OK);
  hrl_step_info s;
  CHECK_INT(hrl_proto_step(e.lk, t2 + 2 * MS, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < 3; i++) {
    hrl_proto_reply(e.lk, i,
                    &(hrl_reply){.type = HRL_REPLY_INTEGER, .integer = 1});
  }
  CHECK_INT(hrl_proto_step(e.lk, t2 + 2 * MS, &s), HRL_STEP_DONE);
  int64_t t3 = t2 + 10 * MS;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t3), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t3, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < 3; i++) {
    hrl_proto_reply(
        e.lk, i, &(hrl_reply){.type = HRL_REPLY_STATUS, .str = "OK", .len = 2});
  }
  CHECK_INT(hrl_proto_step(e.lk, t3, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_proto_renew_begin(e.lk, t3 + 1000 * MS, &twin),
            HRL_RENEW_ROUND);
  CHECK_STATUS(extend_round(twin, t3 + 1000 * MS, all_ok, &px), HRL_OK);
  CHECK_STATUS(hrl_proto_renew_end(e.lk, t3 + 1001 * MS), HRL_OK);
  CHECK_INT(e.lk->valid_until_us, t3 + 1000 * MS + (3000 - 32) * MS);
  free_env(e);
}

static void test_plain_lock_has_no_lease(void) {
  hrl_client *c = NULL;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_client_new(three, 3, NULL, &c, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_new(c, "res", 3, 3000, &lk, NULL, 0), HRL_OK);
  hrl_lock *twin = NULL;
  CHECK_INT(hrl_proto_renew_due(lk), INT64_MAX);
  CHECK_INT(hrl_proto_renew_begin(lk, hrl_now_us(), &twin), HRL_RENEW_NONE);
  CHECK_STATUS(hrl_lock_lost(lk, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_on_lost(lk, NULL, NULL), HRL_EINVAL);
  CHECK_CONTAINS(hrl_lock_error(lk), "auto_renew");
  hrl_lock_free(lk);
  hrl_client_free(c);
}

int main(void) {
  RUN(test_due_every_third_and_renewed);
  RUN(test_failed_renewal_retries_then_expires);
  RUN(test_not_owned_is_lost);
  RUN(test_renewal_confirmed_too_late_is_lost);
  RUN(test_hold_changed_meanwhile_is_discarded);
  RUN(test_max_hold_caps_renewal);
  RUN(test_max_hold_shorter_than_ttl);
  RUN(test_extend_rounds_end_with_the_validity);
  RUN(test_plain_extend_capped_while_valid);
  RUN(test_renewal_and_extend_at_once_count_the_least);
  RUN(test_max_hold_caps_the_holders_extend);
  RUN(test_unanswered_extend_caps_the_next);
  RUN(test_plain_lock_has_no_lease);
  return finish_tests("test_lease_proto");
}
