/* Unit tests of the waiting acquire at its edges, without Redis (a fake
 * clock, replies played by the test): a first attempt that masters did not
 * answer waits within the caller's wait; a waiter handed a few masters by
 * another waiter while a holder keeps the rest stays parked; a place in
 * line kept after a leave that missed a master expires with its lease; a
 * key that never expires is named at the deadline. The queue's ordinary
 * rounds: test_wait_proto.c. */
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

/* A client of n masters whose cap (retry_delay) is 1 s without jitter (its
 * queue entries' lease: 3.3 s), and a lock of 10 s. */
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

/* Begins an acquire waiting wait_ms at t: the token of its first SET. */
static void first_set(env e, int64_t wait_ms, int64_t t, char *token) {
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, wait_ms, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  const char *at = cmd != NULL ? memmem(cmd, len, "$32\r\n", 5) : NULL;
  CHECK(at != NULL);
  if (at != NULL) {
    memcpy(token, at + 5, HRL_TOKEN_LEN);
  }
  token[HRL_TOKEN_LEN] = '\0';
}

/* A stalled master (CLIENT PAUSE, a restart) at the first attempt: with
 * time to wait, the acquire waits in line as a queued waiter does, and
 * gets the lock once the master answers; without, it fails at once; and a
 * refusal that lasts (authentication) fails at once either way. */
static void test_a_first_attempt_unanswered_waits(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  char token[HRL_TOKEN_LEN + 1];
  first_set(e, 5000, t, token);
  hrl_proto_missed(e.lk, 0, "timeout after 50 ms");
  /* Its SET may have landed: it steps aside (and queues), then waits. */
  CHECK_INT(hrl_proto_step(e.lk, t + 50000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\na\r\n"));
  CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
  CHECK(hrl_proto_waiter(e.lk) != NULL); /* its hand-offs count now */
  hrl_proto_missed(e.lk, 0, "not waited for: late since an earlier round");
  CHECK_INT(hrl_proto_step(e.lk, t + 51000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 999); /* the cap, not at once */
  CHECK_INT(hrl_proto_step(e.lk, t + 1050000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n")); /* the same token: claims the SET */
  CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
  hrl_reply ok = status_reply("OK");
  answer(e, &ok);
  CHECK_INT(hrl_proto_step(e.lk, t + 1052000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_STR(hrl_lock_token(e.lk), token);

  /* Still unanswered at the deadline: leave, then that error (not a
   * timeout). */
  t = 10 * 1000 * 1000;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply one = int_reply(1);
  answer(e, &one);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_DONE);
  first_set(e, 1500, t, token);
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_ROUND); /* aside */
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 200, &s), HRL_STEP_WAIT);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000100, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 1000200, &s), HRL_STEP_ROUND); /* a */
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 1000300, &s), HRL_STEP_WAIT);
  CHECK_INT(hrl_proto_step(e.lk, t + 1500000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n")); /* the leave */
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(hrl_proto_step(e.lk, t + 1500100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  CHECK_STR(hrl_lock_error(e.lk), "0 of 1 masters answered (1 needed); "
                                  "127.0.0.1:1: connection refused");

  /* blocking=False (a wait of 0): at once, as before. It takes up the
   * place the leave above kept; its connection is reset under its SET and
   * under its cleanup, which ran nothing there then, nor can later: the
   * place is put back, with the lease it had. */
  first_set(e, 0, t, token);
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection reset");
  CHECK_INT(hrl_proto_step(e.lk, t + 50000, &s), HRL_STEP_ROUND); /* clean */
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection reset");
  CHECK_INT(hrl_proto_step(e.lk, t + 100000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "connection reset");

  /* A refused AUTH lasts: no wait fixes it; nor a refused certificate.
   * This acquire takes up the place the poll above put back: a release may
   * have handed the key to that token, so it cleans up before it fails,
   * with the same error (an error reply ran nothing: the place is put back
   * again). */
  char kept[HRL_TOKEN_LEN + 1];
  first_set(e, 5000, t, kept);
  CHECK_STR(kept, token);
  hrl_proto_fail(e.lk, 0, HRL_NODE_AUTH, "WRONGPASS invalid password");
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_ROUND); /* cleanup */
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
  hrl_proto_fail(e.lk, 0, HRL_NODE_AUTH, "WRONGPASS invalid password");
  CHECK_INT(hrl_proto_step(e.lk, t + 200, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EAUTH);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "WRONGPASS invalid password");
  /* A poll whose SET and cleanup time out instead takes the place up and
   * drops it: those commands may still run (a paused master runs them
   * once resumed), and that cleanup would delete the key of a later
   * acquire that took the token up and won (two holders: tests/sim,
   * regress/rejoin-late-release.txt). The next acquire has a fresh token. */
  first_set(e, 0, t, kept);
  CHECK_STR(kept, token);
  hrl_proto_missed(e.lk, 0, "timeout after 50 ms");
  CHECK_INT(hrl_proto_step(e.lk, t + 50000, &s), HRL_STEP_ROUND); /* clean */
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  hrl_proto_missed(e.lk, 0, "timeout after 50 ms");
  CHECK_INT(hrl_proto_step(e.lk, t + 100000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "timeout after 50 ms");
  first_set(e, 5000, t + 100000, kept);
  CHECK(strcmp(kept, token) != 0);
  hrl_proto_fail(e.lk, 0, HRL_NODE_AUTH, "WRONGPASS invalid password");
  CHECK_INT(hrl_proto_step(e.lk, t + 100100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EAUTH);
  /* After that place's lease, a fresh token: refused, it holds nothing,
   * and fails at once. */
  t += 10 * 1000 * 1000;
  first_set(e, 5000, t, kept);
  CHECK(strcmp(kept, token) != 0);
  hrl_proto_fail(e.lk, 0, HRL_NODE_AUTH, "WRONGPASS invalid password");
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EAUTH);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE,
                 "TLS: certificate verify failed: self-signed certificate");
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_ROUND); /* cleanup */
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "TLS: certificate verify");
  CHECK_INT(hrl_proto_step(e.lk, t + 200, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  /* A server that closed the connection mid-handshake may be restarting. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE,
                 "TLS: server closed the connection during the handshake");
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\na\r\n")); /* steps aside, stays in line */
  drop(e);
}

/* Begins an acquire waiting wait_ms at t whose first SET every master
 * refuses: the next step is the first try. */
static void refused(env e, int64_t wait_ms, int64_t t) {
  hrl_step_info s;
  hrl_reply nil[5] = {nil_reply(), nil_reply(), nil_reply(), nil_reply(),
                      nil_reply()};
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, wait_ms, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  answer(e, nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND);
}

/* The holder lacks master 5 (restarted empty): whoever tries wins it alone
 * and passes it on to the next waiter. That waiter cannot win while the
 * holder keeps the others, so it stays parked instead of trying and
 * passing it back (the churn of #24: ~40 scripts a second per master for
 * two waiters). A hand-off from a master the holder had is its release:
 * that one is tried after the usual gathering. */
static void test_a_waiter_that_cannot_win_stays_parked(void) {
  env e = make(5);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, HRL_WAIT_FOREVER, t);
  hrl_reply held[5] = {int_reply(9000), int_reply(9000), int_reply(9000),
                       int_reply(9000), status_reply("OK")};
  answer(e, held); /* won master 5 alone: steps aside */
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 4, "$1\r\na\r\n"));
  hrl_reply zero[5] = {int_reply(0), int_reply(0), int_reply(0), int_reply(0),
                       int_reply(0)};
  answer(e, zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 999); /* the cap: the holder's 9 s are further */
  /* The other waiter passed master 5 back: 4 masters are the holder's. */
  hrl_proto_notified(e.lk, 4);
  CHECK_INT(hrl_proto_step(e.lk, t + 4000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 998);
  CHECK_INT(hrl_proto_step(e.lk, t + 60000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 942);
  /* The holder releases: master 1 hands it over, the others follow. */
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, t + 61000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 50); /* the gathering of a release */
  hrl_proto_notified(e.lk, 1);
  CHECK_INT(hrl_proto_step(e.lk, t + 62000, &s), HRL_STEP_ROUND);
  hrl_reply won[5] = {status_reply("OK"), status_reply("OK"),
                      status_reply("OK"), status_reply("OK"),
                      status_reply("OK")};
  answer(e, won);
  CHECK_INT(hrl_proto_step(e.lk, t + 63000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  drop(e);

  /* Hand-offs that could make a quorum with the masters not held are
   * tried as before (waiters that each won a few step aside to each
   * other; one of them gets enough). */
  e = make(5);
  refused(e, HRL_WAIT_FOREVER, t);
  hrl_reply split[5] = {status_reply("OK"), status_reply("OK"), int_reply(900),
                        int_reply(900), int_reply(-2) /* no key */};
  answer(e, split);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_ROUND); /* aside */
  answer(e, zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_WAIT);
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, t + 4000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 50);
  CHECK_INT(hrl_proto_step(e.lk, t + 54000, &s), HRL_STEP_ROUND);
  drop(e);
}

/* Leaves the queue at t (a wait of 2 ms) and loses the only master's
 * connection (a reset: the leave did not run there, nor can it later): the
 * entry stays there, and the client keeps its token and place until the
 * entry's lease ends (3.3 s here). Returns the token. */
static void leave_behind(env e, int64_t t, char *token) {
  hrl_step_info s;
  first_set(e, 2, t, token);
  hrl_reply nil = nil_reply();
  answer(e, &nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND); /* try */
  hrl_reply pttl = int_reply(9000);
  answer(e, &pttl);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_ROUND); /* leave */
  CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection reset");
  CHECK_INT(hrl_proto_step(e.lk, t + 52000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
}

/* A client that polls with blocking=False after such a leave must not
 * keep that old place for good: every poll took it up and put it back
 * with a new lease, so its next blocking acquire went ahead of waiters
 * that came long after it left (#24, queue jumping). The place expires
 * with the entry's lease, polls or not. */
static void test_a_kept_place_expires_with_its_lease(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  char token[HRL_TOKEN_LEN + 1], again[HRL_TOKEN_LEN + 1];
  leave_behind(e, t, token);
  /* Polls, one every 500 ms for 5 s: each takes the place up (its entry
   * may still be there, so a hand-off made for it is claimed) while the
   * lease lasts, and none of them renews it. A refused SET of that token
   * may be refused by a key handed to it (tests/sim/regress/
   * rejoin-handoff.txt): each such poll sends a release of the token, then
   * times out. The master's connection is reset under the first releases
   * (the entry may stay, so the place is kept: a release that timed out
   * instead may still run, and drops it, test_wait_proto.c); the last one
   * in the lease finds the key handed to the token and passes it on. Once
   * the lease is over, a fresh token's refusal holds nothing: no cleanup. */
  hrl_reply nil = nil_reply();
  int64_t lease_end = t + 52000 + 3300000;
  for (int64_t at = t + 500000; at <= t + 5000000; at += 500000) {
    first_set(e, 0, at, again);
    answer(e, &nil);
    if (at < lease_end) {
      CHECK_STR(again, token);
      CHECK_INT(hrl_proto_step(e.lk, at + 1000, &s), HRL_STEP_ROUND);
      CHECK(SENDS(e, 0, "$1\r\nr\r\n"));
      CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
      if (at + 500000 < lease_end) {
        hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection reset");
      } else {
        hrl_reply passed_on = int_reply(1);
        answer(e, &passed_on);
      }
      CHECK_INT(hrl_proto_step(e.lk, at + 51000, &s), HRL_STEP_DONE);
    } else {
      CHECK(strcmp(again, token) != 0);
      CHECK_INT(hrl_proto_step(e.lk, at + 1000, &s), HRL_STEP_DONE);
    }
    CHECK_STATUS(s.status, HRL_ETIMEOUT);
  }
  /* A blocking acquire after the lease: a new token, a new arrival. */
  first_set(e, 5000, t + 6000000, again);
  CHECK(strcmp(again, token) != 0);
  drop(e);
}

/* A waiter whose last try went unanswered for want of connections (a
 * refused connect here; in tests/sim, a connection owing too many replies
 * that holds the try back) does not try at a hand-off's message before a
 * timeout after that try began, as its timer does not: each such try could
 * not reach the master either, and the step aside behind it passed the key
 * to the client's other waiter, whose message and step aside passed it
 * back, for good (tests/sim/regress/aside-chain.txt). */
static void test_a_handoff_after_an_unanswered_try_waits(void) {
  env e = make(1);
  int64_t t = 0;
  hrl_step_info s;
  char token[HRL_TOKEN_LEN + 1];
  first_set(e, 5000, t, token);
  hrl_reply nil = nil_reply();
  answer(e, &nil);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_ROUND); /* try */
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "connection refused");
  hrl_step st = hrl_proto_step(e.lk, t + 2000, &s);
  if (st == HRL_STEP_ROUND) { /* a step aside first: answered */
    CHECK(SENDS(e, 0, "$1\r\na\r\n"));
    hrl_reply zero = int_reply(0);
    answer(e, &zero);
    st = hrl_proto_step(e.lk, t + 2000, &s);
  }
  CHECK_INT(st, HRL_STEP_WAIT);
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000, &s), HRL_STEP_WAIT);
  /* Until a timeout after the last round began (not the cap: 1 s). */
  CHECK(s.wait_ms > 40 && s.wait_ms <= 50);
  int64_t floor = t + 3000 + (int64_t)s.wait_ms * 1000;
  hrl_proto_notified(e.lk, 0);
  CHECK_INT(hrl_proto_step(e.lk, floor - 1000, &s), HRL_STEP_WAIT);
  CHECK_INT(hrl_proto_step(e.lk, floor, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nt\r\n"));
  CHECK(sends(e, 0, token, HRL_TOKEN_LEN));
  drop(e);
}

/* A key that never expires (a plain SET without a TTL over the lock's
 * name, or one that is not a string): the acquire waits as for any holder
 * (a redis-py Lock without timeout frees its key when released) and, at
 * its deadline, says which masters hold such a key. */
static void test_a_key_that_never_expires_is_named(void) {
  env e = make(3);
  int64_t t = 0;
  hrl_step_info s;
  refused(e, 3000, t);
  hrl_reply forever[3] = {
      int_reply(-1), int_reply(-1),
      error_reply("WRONGTYPE Operation against a key holding the wrong "
                  "kind of value")};
  answer(e, forever);
  CHECK_INT(hrl_proto_step(e.lk, t + 2000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 1000); /* no expiry: the cap */
  CHECK_INT(hrl_proto_step(e.lk, t + 1002000, &s), HRL_STEP_ROUND);
  answer(e, forever);
  CHECK_INT(hrl_proto_step(e.lk, t + 1003000, &s), HRL_STEP_WAIT);
  CHECK_INT(hrl_proto_step(e.lk, t + 3000000, &s), HRL_STEP_ROUND);
  CHECK(SENDS(e, 0, "$1\r\nr\r\n")); /* the leave */
  hrl_reply zero[3] = {int_reply(0), int_reply(0), int_reply(0)};
  answer(e, zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 3001000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  CHECK_STR(hrl_lock_error(e.lk),
            "127.0.0.1:1: the key has no TTL; 127.0.0.1:2: the key has no "
            "TTL; 127.0.0.1:3: WRONGTYPE Operation against a key holding the "
            "wrong kind of value (it never expires: only what wrote it can "
            "free it)");
  char msg[HRL_DETAIL_MAX + 64];
  CHECK_CONTAINS(
      hrl_format_error(HRL_ETIMEOUT, hrl_lock_error(e.lk), msg, sizeof msg),
      "timeout: 127.0.0.1:1: the key has no TTL");
  /* An ordinary holder's key leaves the timeout as it was. */
  refused(e, 300, t);
  hrl_reply pttl[3] = {int_reply(8000), int_reply(8000), int_reply(8000)};
  answer(e, pttl);
  CHECK_INT(hrl_proto_step(e.lk, t + 300000, &s), HRL_STEP_ROUND);
  answer(e, zero);
  CHECK_INT(hrl_proto_step(e.lk, t + 301000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  CHECK_STR(hrl_lock_error(e.lk), "");
  drop(e);
}

int main(void) {
  RUN(test_a_first_attempt_unanswered_waits);
  RUN(test_a_waiter_that_cannot_win_stays_parked);
  RUN(test_a_kept_place_expires_with_its_lease);
  RUN(test_a_key_that_never_expires_is_named);
  RUN(test_a_handoff_after_an_unanswered_try_waits);
  return finish_tests("test_wait_edges");
}
