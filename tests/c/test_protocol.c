/* Unit tests of the sans-I/O protocol without Redis: command bytes, reply
 * meanings, and the Redlock state machine driven by a fake transport with a
 * fake clock (the RESP reader: test_parser.c). */
#include <stdlib.h>

#include "check.h"
#include "proto/resp.h"

static const char *const five[] = {"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                                   "redis://127.0.0.1:3", "redis://127.0.0.1:4",
                                   "redis://127.0.0.1:5"};

typedef struct env {
  hrl_client *c;
  hrl_lock *lk;
} env;

static env make_env(size_t n, uint32_t ttl_ms, const hrl_options *o) {
  env e = {NULL, NULL};
  CHECK_STATUS(hrl_client_new(five, n, o, &e.c, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_new(e.c, "res", 3, ttl_ms, &e.lk, NULL, 0), HRL_OK);
  return e;
}

static void free_env(env e) {
  hrl_lock_free(e.lk);
  hrl_client_free(e.c);
}

static void test_command_bytes(void) {
  char buf[4096];
  const char *token = "0123456789abcdef0123456789abcdef";
  hrl_command_args a = {"res",
                        3,
                        "res{res}:queue",
                        14,
                        "res{res}:waiters",
                        16,
                        NULL,
                        0,
                        token,
                        30000,
                        1700000000000001,
                        2000,
                        410,
                        "chan",
                        4,
                        HRL_MODE_LOCK,
                        0,
                        0,
                        true};
  size_t n = hrl_resp_command(buf, HRL_ROUND_SET, true, &a);
  const char want_set[] = "*6\r\n$3\r\nSET\r\n$3\r\nres\r\n$32\r\n"
                          "0123456789abcdef0123456789abcdef\r\n"
                          "$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n";
  CHECK_INT(n, sizeof want_set - 1);
  CHECK(memcmp(buf, want_set, n) == 0);

  n = hrl_resp_command(buf, HRL_ROUND_RELEASE, true, &a);
  const char want_rel[] =
      "*8\r\n$7\r\nEVALSHA\r\n$40\r\n" HRL_QUEUE_SHA1
      "\r\n$1\r\n3\r\n$3\r\nres\r\n$14\r\nres{res}:queue\r\n"
      "$16\r\nres{res}:waiters\r\n$1\r\nr\r\n$32\r\n"
      "0123456789abcdef0123456789abcdef\r\n";
  CHECK_INT(n, sizeof want_rel - 1);
  CHECK(memcmp(buf, want_rel, n) == 0);

  n = hrl_resp_command(buf, HRL_ROUND_TRY, true, &a);
  const char want_try[] =
      "*14\r\n$7\r\nEVALSHA\r\n$40\r\n" HRL_QUEUE_SHA1
      "\r\n$1\r\n3\r\n$3\r\nres\r\n$14\r\nres{res}:queue\r\n"
      "$16\r\nres{res}:waiters\r\n$1\r\nt\r\n$32\r\n"
      "0123456789abcdef0123456789abcdef\r\n$5\r\n30000\r\n"
      "$16\r\n1700000000000001\r\n$4\r\n2000\r\n$3\r\n410\r\n"
      "$4\r\nchan\r\n$1\r\n1\r\n";
  CHECK_INT(n, sizeof want_try - 1);
  CHECK(memcmp(buf, want_try, n) == 0);
  a.handed_ttl = false; /* the waiter claims every hand-off */
  n = hrl_resp_command(buf, HRL_ROUND_TRY, true, &a);
  CHECK(memcmp(buf + n - 13, "chan\r\n$1\r\n0\r\n", 13) == 0);
  n = hrl_resp_command(buf, HRL_ROUND_ASIDE, false, &a);
  CHECK(memcmp(buf, "*14\r\n$4\r\nEVAL\r\n$", 16) == 0);
  CHECK(memmem(buf, n, HRL_QUEUE_SCRIPT, strlen(HRL_QUEUE_SCRIPT)) != NULL);
  CHECK(memmem(buf, n, "$1\r\na\r\n", 7) != NULL);

  a.number = 7;
  n = hrl_resp_command(buf, HRL_ROUND_EXTEND, false, &a);
  CHECK(memcmp(buf, "*6\r\n$4\r\nEVAL\r\n$", 15) == 0);
  CHECK(memmem(buf, n, HRL_EXTEND_SCRIPT, strlen(HRL_EXTEND_SCRIPT)) != NULL);
  CHECK(memcmp(buf + n - 7, "$1\r\n7\r\n", 7) == 0);

  /* Binary-safe keys: embedded NUL and CRLF are framed by length. */
  char key[5] = {'a', '\0', '\r', '\n', 'b'};
  a.key = key;
  a.key_len = 5;
  a.number = 1;
  n = hrl_resp_command(buf, HRL_ROUND_SET, true, &a);
  CHECK(memmem(buf, n, "$5\r\na\0\r\nb\r\n", 11) != NULL);
  size_t big = HRL_PREFIX_MAX + HRL_NAME_MAX;
  CHECK(hrl_resp_eval_capacity(big, 2 * big + 24, HRL_PREFIX_MAX + 47) >=
        strlen(HRL_QUEUE_SCRIPT) + 5 * big + HRL_PREFIX_MAX + 200);
}

/* Numbers and lengths are framed without stdio, with shortcuts for one
 * and two digits: every digit count's edges against snprintf, as a
 * number and as the length of an argument. */
static void test_number_framing(void) {
  static char arg[1200];
  memset(arg, 'x', sizeof arg);
  uint64_t v = 1;
  for (int digits = 1; digits <= 20; digits++) {
    uint64_t top = digits < 20 ? v * 10 - 1 : UINT64_MAX;
    uint64_t edges[] = {v - 1, v, v + 1, top};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) {
      char buf[64], want[64];
      size_t n = hrl_resp_number(buf, edges[k]);
      int w = snprintf(want, sizeof want, "$%d\r\n%llu\r\n",
                       snprintf(NULL, 0, "%llu", (unsigned long long)edges[k]),
                       (unsigned long long)edges[k]);
      CHECK_INT(n, w);
      CHECK(memcmp(buf, want, n) == 0);
      if (edges[k] <= sizeof arg) {
        char framed[1300];
        n = hrl_resp_arg(framed, arg, (size_t)edges[k]);
        w = snprintf(want, sizeof want, "$%llu\r\n",
                     (unsigned long long)edges[k]);
        CHECK_INT(n, (size_t)w + edges[k] + 2);
        CHECK(memcmp(framed, want, (size_t)w) == 0);
        CHECK(memcmp(framed + n - 2, "\r\n", 2) == 0);
      }
    }
    if (digits < 20) {
      v *= 10;
    }
  }
  char buf[64];
  size_t n = hrl_resp_number(buf, UINT64_MAX);
  CHECK(n == 27 && memcmp(buf, "$20\r\n18446744073709551615\r\n", n) == 0);
}

static void test_handshake(void) {
  const char *urls[] = {"redis://user:pw@127.0.0.1:1/2", "redis://:pw@h:2",
                        "redis://h:3/4", "redis://h:5"};
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(urls, 4, NULL, &c, NULL, 0), HRL_OK);
  size_t len;
  int replies;
  /* Several masters: each handshake ends with INFO server (who the
   * server is: two masters that are one server are refused). */
  const char *hs = hrl_proto_handshake(c, 0, &len, &replies);
  const char want0[] = "*3\r\n$4\r\nAUTH\r\n$4\r\nuser\r\n$2\r\npw\r\n"
                       "*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n"
                       "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n";
  CHECK_INT(replies, 3);
  CHECK(len == sizeof want0 - 1 && memcmp(hs, want0, len) == 0);
  hs = hrl_proto_handshake(c, 1, &len, &replies);
  CHECK_INT(replies, 2);
  const char want1[] = "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n"
                       "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n";
  CHECK(len == sizeof want1 - 1 && memcmp(hs, want1, len) == 0);
  hs = hrl_proto_handshake(c, 2, &len, &replies);
  CHECK_INT(replies, 2);
  CHECK(memmem(hs, len, "SELECT", 6) != NULL);
  hs = hrl_proto_handshake(c, 3, &len, &replies);
  CHECK_INT(replies, 1);
  CHECK(len == 26 && memcmp(hs, "*2\r\n$4\r\nINFO\r\n", 14) == 0);

  char msg[96];
  hrl_reply ok = status_reply("OK");
  hrl_reply wrongpass = error_reply(
      "WRONGPASS invalid username-password pair or user is disabled.");
  hrl_reply nopass = error_reply("ERR AUTH <password> called without any "
                                 "password configured for the default user.");
  hrl_reply baddb = error_reply("ERR DB index is out of range");
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 0, &ok, msg, sizeof msg),
            HRL_NODE_OK);
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 0, &wrongpass, msg, sizeof msg),
            HRL_NODE_AUTH);
  CHECK_CONTAINS(msg, "WRONGPASS");
  CHECK_INT(hrl_proto_handshake_reply(c, 1, 0, &nopass, msg, sizeof msg),
            HRL_NODE_AUTH);
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 1, &baddb, msg, sizeof msg),
            HRL_NODE_SERVER);
  CHECK_STR(msg, "ERR DB index is out of range");
  /* An ACL user that may not SELECT: a permission refusal, said to be
   * SELECT's. */
  hrl_reply noselect = error_reply(
      "NOPERM this user has no permissions to run the 'select' command");
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 1, &noselect, msg, sizeof msg),
            HRL_NODE_DENIED);
  CHECK_STR(msg, "SELECT refused: NOPERM this user has no permissions to run "
                 "the 'select' command");
  CHECK_INT(hrl_proto_handshake_reply(c, 2, 0, &baddb, msg, sizeof msg),
            HRL_NODE_SERVER);
  CHECK_INT(hrl_proto_handshake_reply(c, 3, 1, &ok, msg, sizeof msg),
            HRL_NODE_PROTOCOL);
  hrl_reply num = int_reply(1);
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 0, &num, msg, sizeof msg),
            HRL_NODE_PROTOCOL);
  hrl_client_free(c);
}

/* Feeds one reply to every master of the round. */
static void answer_all(env e, size_t n, const hrl_reply *replies) {
  for (size_t i = 0; i < n; i++) {
    size_t len;
    CHECK(hrl_proto_command(e.lk, i, &len) != NULL && len > 0);
    hrl_proto_reply(e.lk, i, &replies[i]);
  }
}

static void test_acquire_quorum(void) {
  env e = make_env(5, 10000, NULL);
  int64_t t = hrl_now_us(); /* held-ness is judged on the real clock */
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  CHECK_INT(s.timeout_ms, 50);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  CHECK(memcmp(cmd, "*6\r\n$3\r\nSET\r\n$3\r\nres\r\n$32\r\n", 27) == 0);
  char token[HRL_TOKEN_LEN + 1];
  memcpy(token, cmd + 27, HRL_TOKEN_LEN);
  token[HRL_TOKEN_LEN] = '\0';
  hrl_reply r[5] = {status_reply("OK"), status_reply("OK"), nil_reply(),
                    status_reply("OK"), error_reply("READONLY x")};
  answer_all(e, 5, r);
  /* 3 of 5 after 5 ms: validity 10000 - 5 - (100 + 2) ms. */
  CHECK_INT(hrl_proto_step(e.lk, t + 5000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_STR(hrl_lock_token(e.lk), token);
  CHECK(hrl_lock_held(e.lk));
  int64_t v = hrl_lock_validity_ms(e.lk);
  CHECK(v > 9800 && v <= 10000 - 102); /* anchored at the round start */
  hrl_counts cnt;
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.ok, 3);
  CHECK_INT(cnt.refused, 1);
  CHECK_INT(cnt.failed, 1);
  CHECK_INT(cnt.attempts, 1);
  CHECK_INT(cnt.quorum, 3);
  /* Holding it, a second acquire on the same object is refused. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_EHELD);
  free_env(e);
}

static void test_acquire_validity_must_be_positive(void) {
  env e = make_env(1, 100, NULL);
  int64_t t = 0;
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  CHECK_INT(s.timeout_ms, 10); /* never more than ttl/10 */
  hrl_reply ok = status_reply("OK");
  answer_all(e, 1, &ok);
  /* 100 ms ttl - 98 ms elapsed - 3 ms drift < 0: not held; the key set on
   * the master is released before anything else happens. */
  CHECK_INT(hrl_proto_step(e.lk, t + 98000, &s), HRL_STEP_ROUND);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  CHECK(memmem(cmd, len, "EVALSHA", 7) != NULL);
  CHECK(memmem(cmd, len, HRL_QUEUE_SHA1, 40) != NULL);
  hrl_reply one = int_reply(1);
  answer_all(e, 1, &one);
  CHECK_INT(hrl_proto_step(e.lk, t + 99000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  CHECK(!hrl_lock_held(e.lk));
  free_env(e);
}

/* Without a wait, too few answers fail the call at once, naming every
 * master that did not answer (test_wait_proto.c: with one, it waits). */
static void test_acquire_fails_fast_without_quorum(void) {
  env e = make_env(5, 10000, NULL);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  reply_ok(e.lk, 0);
  reply_ok(e.lk, 1);
  hrl_proto_fail(e.lk, 2, HRL_NODE_UNREACHABLE, "Connection refused");
  hrl_proto_fail(e.lk, 3, HRL_NODE_UNREACHABLE, "timeout after 50 ms");
  /* Master 5 never reported: counts as unreachable. */
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* cleanup */
  for (size_t i = 0; i < 5; i++) {
    reply_int(e.lk, i, 1);
  }
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  CHECK_STR(hrl_lock_error(e.lk),
            "2 of 5 masters answered (3 needed); 127.0.0.1:3: connection "
            "refused; 127.0.0.1:4: timeout after 50 ms; 127.0.0.1:5: no "
            "reply");
  CHECK(!hrl_lock_held(e.lk));
  free_env(e);
}

static void test_acquire_error_replies(void) {
  env e = make_env(1, 10000, NULL);
  hrl_step_info s;
  hrl_reply oom =
      error_reply("OOM command not allowed when used memory > 'maxmemory'.");
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  answer_all(e, 1, &oom);
  /* An error reply means the SET was not applied: no cleanup round. */
  CHECK_INT(hrl_proto_step(e.lk, 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "127.0.0.1:1: OOM command not allowed");

  hrl_reply noauth = error_reply("NOAUTH Authentication required.");
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  answer_all(e, 1, &noauth);
  CHECK_INT(hrl_proto_step(e.lk, 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EAUTH);

  /* A permission refusal is not an authentication failure: its own
   * status, naming the command and key refused. */
  hrl_reply noperm = error_reply("NOPERM this user has no permissions to "
                                 "access one of the keys used as arguments");
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  answer_all(e, 1, &noperm);
  CHECK_INT(hrl_proto_step(e.lk, 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EPERM);
  char shown[HRL_DETAIL_MAX + 64];
  hrl_format_error(s.status, hrl_lock_error(e.lk), shown, sizeof shown);
  CHECK_STR(shown, "permission denied: 0 of 1 masters answered (1 needed); "
                   "127.0.0.1:1: NOPERM this user has no permissions to access "
                   "one of the keys used as arguments; refused: SET on 'res'");

  hrl_reply weird = int_reply(7);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  answer_all(e, 1, &weird);
  CHECK_INT(hrl_proto_step(e.lk, 10, &s), HRL_STEP_ROUND); /* may hold */
  hrl_reply zero = int_reply(0);
  answer_all(e, 1, &zero);
  CHECK_INT(hrl_proto_step(e.lk, 20, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EPROTOCOL);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "unexpected reply to SET");
  free_env(e);
}

/* Takes the lock on all masters so release / extend can be driven. */
static void hold(env e, size_t n, int64_t t) {
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < n; i++) {
    reply_ok(e.lk, i);
  }
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
}

static void test_release_outcomes(void) {
  env e = make_env(5, 10000, NULL);
  int64_t t = hrl_now_us();
  hrl_step_info s;
  hold(e, 5, t);
  /* NOSCRIPT: the same master gets the full script with EVAL. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply noscript = error_reply("NOSCRIPT No matching script.");
  CHECK_INT(hrl_proto_reply(e.lk, 0, &noscript), HRL_NODE_RESEND);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  CHECK(memmem(cmd, len, "$4\r\nEVAL\r\n", 10) != NULL);
  CHECK(memmem(cmd, len, HRL_QUEUE_SCRIPT, strlen(HRL_QUEUE_SCRIPT)));
  cmd = hrl_proto_command(e.lk, 1, &len);
  CHECK(memmem(cmd, len, "EVALSHA", 7) != NULL);
  /* NOSCRIPT twice is not a loop. */
  CHECK_INT(hrl_proto_reply(e.lk, 0, &noscript), HRL_NODE_PROTOCOL);
  hrl_reply rel[5] = {int_reply(1), int_reply(1), int_reply(1), int_reply(1),
                      int_reply(0)};
  answer_all(e, 5, rel);
  CHECK_INT(hrl_proto_step(e.lk, t + 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK); /* 3 of 5 deleted */
  CHECK(!hrl_lock_held(e.lk));
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_ENOTHELD);

  hold(e, 5, t);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply lost[5] = {int_reply(1), int_reply(1), int_reply(0), int_reply(0),
                       error_reply("WRONGTYPE Operation against a key")};
  answer_all(e, 5, lost);
  CHECK_INT(hrl_proto_step(e.lk, t + 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ENOTOWNED);
  CHECK(!hrl_lock_held(e.lk));

  hold(e, 5, t);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  reply_int(e.lk, 0, 1);
  reply_int(e.lk, 1, 0);
  for (size_t i = 2; i < 5; i++) {
    hrl_proto_fail(e.lk, i, HRL_NODE_UNREACHABLE, "timeout after 50 ms");
  }
  CHECK_INT(hrl_proto_step(e.lk, t + 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  /* The hold is over (nobody may rely on it now), but the release can be
   * retried with the same token. */
  CHECK(!hrl_lock_held(e.lk));
  CHECK_INT(hrl_lock_validity_ms(e.lk), 0);
  hrl_counts cnt;
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.ok, 1);
  CHECK_INT(cnt.refused, 1);
  CHECK_INT(cnt.unreachable, 3);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 0, t), HRL_ENOTHELD);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  /* Master 0 deleted our key the first time: its 0 now is that same
   * confirmation, not "not owned". Two more confirm: 3 of 5. */
  hrl_reply retry[5] = {int_reply(0), int_reply(0), int_reply(1), int_reply(1),
                        int_reply(0)};
  answer_all(e, 5, retry);
  CHECK_INT(hrl_proto_step(e.lk, t + 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.ok, 3);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_ENOTHELD);
  free_env(e);
}

/* Only the masters that granted the hold can say it is lost: a master that
 * refused the acquire (someone else's key, or a split vote) refuses the
 * release too, and that must not read as "not owned". */
static void test_release_judged_on_granting_masters(void) {
  env e = make_env(5, 10000, NULL);
  int64_t t = hrl_now_us();
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply grant[5] = {status_reply("OK"), status_reply("OK"),
                        status_reply("OK"), nil_reply(), nil_reply()};
  answer_all(e, 5, grant);
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);

  /* Two granting masters deleted it, the third is slow, the two that never
   * had it say 0: undecided, so a transport error, and still held. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  reply_int(e.lk, 0, 1);
  reply_int(e.lk, 1, 1);
  hrl_proto_fail(e.lk, 2, HRL_NODE_UNREACHABLE, "timeout after 50 ms");
  reply_int(e.lk, 3, 0);
  reply_int(e.lk, 4, 0);
  CHECK_INT(hrl_proto_step(e.lk, t + 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  CHECK_STR(hrl_lock_error(e.lk), "2 of 5 masters confirmed (3 needed); "
                                  "127.0.0.1:3: timeout after 50 ms");
  CHECK(!hrl_lock_held(e.lk));

  /* The retry: the two that deleted it say 0 (they did), the slow one now
   * deletes it: 3 of 3 granting masters confirmed, never "not owned". */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply retry[5] = {int_reply(0), int_reply(0), int_reply(1), int_reply(0),
                        int_reply(0)};
  answer_all(e, 5, retry);
  CHECK_INT(hrl_proto_step(e.lk, t + 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);

  /* A granting master that says 0 leaves only 2 of 3 that can hold it:
   * lost for sure. */
  hold(e, 3, t);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  reply_int(e.lk, 0, 0);
  for (size_t i = 1; i < 5; i++) {
    hrl_proto_fail(e.lk, i, HRL_NODE_UNREACHABLE, "timeout");
  }
  CHECK_INT(hrl_proto_step(e.lk, t + 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ENOTOWNED);
  CHECK(!hrl_lock_held(e.lk));
  free_env(e);
}

/* A round is settled once its remaining replies cannot change the outcome;
 * transports then stop waiting for masters known to be late. */
static void test_round_settled(void) {
  env e = make_env(5, 10000, NULL);
  int64_t t = hrl_now_us();
  hrl_step_info s;
  hrl_reply ok = status_reply("OK"), nil = nil_reply(), one = int_reply(1);
  CHECK(!hrl_proto_settled(e.lk)); /* nothing begun */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK(!hrl_proto_settled(e.lk));
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_proto_reply(e.lk, 0, &ok);
  hrl_proto_reply(e.lk, 1, &ok);
  hrl_proto_reply(e.lk, 2, &nil);
  CHECK(!hrl_proto_settled(e.lk)); /* two OK, a refusal: still open */
  hrl_proto_reply(e.lk, 3, &ok);
  CHECK(hrl_proto_settled(e.lk)); /* a quorum: master 4 cannot undo it */
  hrl_proto_fail(e.lk, 4, HRL_NODE_UNREACHABLE, "not waited for");
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK(!hrl_proto_settled(e.lk)); /* done: no round out */

  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < 2; i++) {
    hrl_proto_reply(e.lk, i, &one);
  }
  CHECK(!hrl_proto_settled(e.lk));
  hrl_proto_reply(e.lk, 3, &one);
  CHECK(hrl_proto_settled(e.lk));

  /* A failed attempt's cleanup decides nothing: settled from the start. */
  free_env(e);
  e = make_env(5, 10000, NULL);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  for (size_t i = 0; i < 2; i++) {
    hrl_proto_fail(e.lk, i, HRL_NODE_UNREACHABLE, "timeout");
  }
  CHECK(!hrl_proto_settled(e.lk)); /* 3 still out could make a quorum */
  hrl_proto_reply(e.lk, 2, &nil);
  /* Decided the other way: the 2 still out can no longer make one, so a
   * late master among them is not waited for either. */
  CHECK(hrl_proto_settled(e.lk));
  for (size_t i = 3; i < 5; i++) {
    hrl_proto_fail(e.lk, i, HRL_NODE_UNREACHABLE, "timeout");
  }
  CHECK_INT(hrl_proto_step(e.lk, t + 100, &s), HRL_STEP_ROUND); /* cleanup */
  CHECK(hrl_proto_settled(e.lk));
  free_env(e);

  /* A release that more than n - quorum masters did not confirm. */
  e = make_env(3, 10000, NULL);
  hold(e, 3, t);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_proto_reply(e.lk, 0, &(hrl_reply){.type = HRL_REPLY_INTEGER});
  CHECK(!hrl_proto_settled(e.lk));
  hrl_proto_fail(e.lk, 1, HRL_NODE_UNREACHABLE, "timeout");
  CHECK(hrl_proto_settled(e.lk));
  free_env(e);
}

static void test_extend_outcomes(void) {
  env e = make_env(3, 10000, NULL);
  int64_t t = hrl_now_us();
  hrl_step_info s;
  hold(e, 3, t);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, -5, t), HRL_EINVAL);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 60000, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  CHECK(memmem(cmd, len, HRL_EXTEND_SHA1, 40) != NULL);
  CHECK(memcmp(cmd + len - 11, "$5\r\n60000\r\n", 11) == 0);
  hrl_reply ext[3] = {int_reply(1), int_reply(1), int_reply(0)};
  answer_all(e, 3, ext);
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_lock_ttl_ms(e.lk), 60000);
  CHECK(hrl_lock_validity_ms(e.lk) > 10000);

  /* A shorter TTL on masters that did not answer bounds what we keep. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 1000, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  reply_int(e.lk, 0, 1);
  hrl_proto_fail(e.lk, 1, HRL_NODE_UNREACHABLE, "timeout");
  hrl_proto_fail(e.lk, 2, HRL_NODE_UNREACHABLE, "timeout");
  CHECK_INT(hrl_proto_step(e.lk, t + 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ECONNECT);
  CHECK(hrl_lock_validity_ms(e.lk) <= 1000);
  CHECK_INT(hrl_lock_ttl_ms(e.lk), 60000);

  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 0, t), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, t, &s), HRL_STEP_ROUND);
  hrl_reply gone[3] = {int_reply(0), int_reply(0), int_reply(1)};
  answer_all(e, 3, gone);
  CHECK_INT(hrl_proto_step(e.lk, t + 10, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ENOTOWNED);
  CHECK(!hrl_lock_held(e.lk));
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 0, t), HRL_ENOTHELD);
  free_env(e);
}

static void test_protocol_misuse(void) {
  env e = make_env(2, 1000, NULL);
  hrl_step_info s;
  size_t len;
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EINVAL);
  CHECK(hrl_proto_command(e.lk, 0, &len) == NULL && len == 0);
  CHECK_STATUS(hrl_proto_begin(e.lk, (hrl_op_kind)9, 0, 0), HRL_EINVAL);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_EINVAL);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  CHECK(hrl_proto_command(e.lk, 2, &len) == NULL);
  hrl_reply ok = status_reply("OK");
  CHECK_INT(hrl_proto_reply(e.lk, 7, &ok), HRL_NODE_PROTOCOL);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &ok), HRL_NODE_OK);
  /* A late second reply does not change a master's answer. */
  hrl_reply nil = nil_reply();
  CHECK_INT(hrl_proto_reply(e.lk, 0, &nil), HRL_NODE_OK);
  hrl_proto_fail(e.lk, 0, HRL_NODE_UNREACHABLE, "late");
  hrl_proto_fail(e.lk, 1, HRL_NODE_OK, "a failure cannot be ok");
  CHECK_INT(hrl_proto_step(e.lk, 10, &s), HRL_STEP_ROUND);
  hrl_reply zero[2] = {int_reply(1), int_reply(0)};
  answer_all(e, 2, zero);
  CHECK_INT(hrl_proto_step(e.lk, 20, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EPROTOCOL);
  /* DONE is sticky until the next begin. */
  CHECK_INT(hrl_proto_step(e.lk, 30, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EPROTOCOL);
  free_env(e);
}

int main(void) {
  RUN(test_command_bytes);
  RUN(test_number_framing);
  RUN(test_handshake);
  RUN(test_acquire_quorum);
  RUN(test_acquire_validity_must_be_positive);
  RUN(test_acquire_fails_fast_without_quorum);
  RUN(test_acquire_error_replies);
  RUN(test_release_outcomes);
  RUN(test_release_judged_on_granting_masters);
  RUN(test_extend_outcomes);
  RUN(test_round_settled);
  RUN(test_protocol_misuse);
  return finish_tests("test_protocol");
}
