/* Unit tests of the failover rules of the sans-I/O protocol, without Redis:
 * the WAIT pipelined behind the writes that make a grant (sync_replicas,
 * sync_aof), its replies in every order a pipeline can take, and the INFO
 * of the handshake (one server under two names, restart_guard). */
#include <stdlib.h>

#include "check.h"

static const char *const three[] = {
    "redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3"};

typedef struct env {
  hrl_client *c;
  hrl_lock *lk;
} env;

static env make_env(const char *const *urls, size_t n, uint32_t replicas,
                    bool aof, bool fenced) {
  env e = {NULL, NULL};
  hrl_options o;
  hrl_options_init(&o);
  CHECK_STATUS(hrl_client_new(urls, n, &o, &e.c, NULL, 0), HRL_OK);
  hrl_lock_options lo;
  hrl_lock_options_init(e.c, &lo);
  lo.ttl_ms = 10000;
  lo.sync_replicas = replicas;
  lo.sync_aof = aof;
  lo.fenced = fenced;
  CHECK_STATUS(hrl_lock_new_with(e.c, "res", 3, &lo, &e.lk, NULL, 0), HRL_OK);
  return e;
}

static void free_env(env e) {
  hrl_lock_free(e.lk);
  hrl_client_free(e.c);
}

static hrl_reply array_of(hrl_reply *items, size_t n) {
  hrl_reply r;
  memset(&r, 0, sizeof r);
  r.type = HRL_REPLY_ARRAY;
  r.elements = n;
  r.element = items;
  return r;
}

/* The bytes of master i's command end with want (a WAIT), and it produces
 * `replies` replies. */
static void check_tail(hrl_lock *lk, size_t i, const char *want, int replies) {
  size_t len;
  const char *cmd = hrl_proto_command(lk, i, &len);
  size_t n = strlen(want);
  CHECK(cmd != NULL && len > n && memcmp(cmd + len - n, want, n) == 0);
  CHECK_INT(hrl_proto_command_replies(lk, i), replies);
}

static void test_wait_bytes(void) {
  /* 50 ms per master: WAIT gets (50 - 10) / 2 = 20 ms. */
  env e = make_env(three, 1, 1, false, false);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  check_tail(e.lk, 0, "\r\n*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$2\r\n20\r\n", 2);
  free_env(e);

  e = make_env(three, 1, 2, true, true);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  check_tail(e.lk, 0,
             "INCR\r\n$14\r\nres{res}:fence\r\n*4\r\n$7\r\nWAITAOF\r\n$1\r\n1"
             "\r\n$1\r\n2\r\n$2\r\n20\r\n",
             3);
  free_env(e);

  /* No WAIT without the option, nor behind a release. */
  e = make_env(three, 1, 0, false, false);
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  CHECK(memmem(cmd, len, "WAIT", 4) == NULL);
  CHECK_INT(hrl_proto_command_replies(e.lk, 0), 1);
  free_env(e);
}

/* Each master's own count from its URL: the round's WAIT for those that
 * share it, bytes of their own for another count, none at 0. */
static void test_wait_per_master(void) {
  const char *urls[] = {"redis://127.0.0.1:1?sync_replicas=3",
                        "redis://127.0.0.1:2",
                        "redis://127.0.0.1:3?sync_replicas=0"};
  env e = make_env(urls, 3, 1, false, false);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  check_tail(e.lk, 0, "WAIT\r\n$1\r\n3\r\n$2\r\n20\r\n", 2);
  check_tail(e.lk, 1, "WAIT\r\n$1\r\n1\r\n$2\r\n20\r\n", 2);
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 2, &len);
  CHECK(memmem(cmd, len, "WAIT", 4) == NULL);
  CHECK_INT(hrl_proto_command_replies(e.lk, 2), 1);
  /* master 1: 3 wanted, 2 acknowledged; master 2: 1 of 1; master 3: OK. */
  hrl_reply ok = status_reply("OK"), two = int_reply(2), one = int_reply(1);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &ok), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &two), HRL_NODE_SERVER);
  CHECK_INT(hrl_proto_reply(e.lk, 1, &ok), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(e.lk, 1, &one), HRL_NODE_OK);
  CHECK_INT(hrl_proto_reply(e.lk, 2, &ok), HRL_NODE_OK);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  hrl_counts cnt;
  hrl_lock_counts(e.lk, &cnt);
  CHECK_INT(cnt.ok, 2);
  CHECK_INT(cnt.failed, 1);
  free_env(e);
}

/* A master that took the write without the acknowledgement gives no vote,
 * is cleaned up (the release goes to it), and the error says why. */
static void test_unacked_vote_is_cleaned_up(void) {
  env e = make_env(three, 1, 1, false, false);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply ok = status_reply("OK"), none = int_reply(0);
  size_t len;
  CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &ok), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &none), HRL_NODE_SERVER);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* cleanup */
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  CHECK(memmem(cmd, len, "EVALSHA", 7) != NULL);
  CHECK(memmem(cmd, len, "WAIT", 4) == NULL);
  reply_int(e.lk, 0, 1);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ESERVER);
  CHECK_STR(hrl_lock_error(e.lk), "0 of 1 masters answered (1 needed); "
                                  "127.0.0.1:1: 0 of 1 replicas acknowledged");
  CHECK(!hrl_lock_held(e.lk));

  /* A refused SET: the WAIT behind it says nothing, no cleanup. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply nil = nil_reply();
  CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &nil), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &none), HRL_NODE_REFUSED);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ETIMEOUT);
  free_env(e);
}

/* NOSCRIPT to an extend with a WAIT behind it: the WAIT's reply is read,
 * then both go again, the script in full. WAITAOF's answers and errors. */
static void test_wait_replies(void) {
  env e = make_env(three, 1, 1, true, false);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  hrl_reply items[2] = {int_reply(1), int_reply(1)};
  hrl_reply both = array_of(items, 2);
  hrl_reply ok = status_reply("OK");
  size_t len;
  CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &ok), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &both), HRL_NODE_OK);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);

  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_EXTEND, 0, 2000), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_ROUND);
  CHECK_INT(hrl_proto_command_replies(e.lk, 0), 2);
  CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
  hrl_reply noscript = error_reply("NOSCRIPT No matching script.");
  CHECK_INT(hrl_proto_reply(e.lk, 0, &noscript), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &both), HRL_NODE_RESEND);
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  CHECK(memmem(cmd, len, "*6\r\n$4\r\nEVAL\r\n", 14) != NULL);
  CHECK(memmem(cmd, len, "WAITAOF", 7) != NULL);
  /* The late command is the script alone: one reply. */
  size_t late_len;
  hrl_proto_missed(e.lk, 0, "timeout after 50 ms");
  const char *late = hrl_proto_late_command(e.lk, 0, &late_len);
  CHECK(late == NULL || memmem(late, late_len, "WAIT", 4) == NULL);
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_DONE);
  free_env(e);

  /* The AOF not fsynced; a server without WAITAOF. */
  e = make_env(three, 1, 0, true, false);
  hrl_reply local0[2] = {int_reply(0), int_reply(0)};
  hrl_reply not_synced = array_of(local0, 2);
  hrl_reply unknown = error_reply("ERR unknown command 'WAITAOF', with args "
                                  "beginning with: '1' '0' '20' ");
  const hrl_reply *answers[] = {&not_synced, &unknown};
  const char *why[] = {"not fsynced to the AOF in time (WAITAOF)",
                       "sync_aof needs WAITAOF (Redis >= 7.2, Valkey >= 8), "
                       "which this server lacks"};
  for (size_t k = 0; k < 2; k++) {
    CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
    CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
    CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
    CHECK_INT(hrl_proto_reply(e.lk, 0, &ok), HRL_NODE_MORE);
    CHECK_INT(hrl_proto_reply(e.lk, 0, answers[k]), HRL_NODE_SERVER);
    CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* cleanup */
    reply_int(e.lk, 0, 1);
    CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
    CHECK_STATUS(s.status, HRL_ESERVER);
    CHECK_CONTAINS(hrl_lock_error(e.lk), why[k]);
  }
  free_env(e);
}

/* A fenced acquire's pipeline: SET, INCR, WAIT. */
static void test_fenced_wait(void) {
  env e = make_env(three, 1, 1, false, true);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  size_t len;
  CHECK(hrl_proto_command(e.lk, 0, &len) != NULL);
  hrl_reply ok = status_reply("OK"), seven = int_reply(7), one = int_reply(1);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &ok), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &seven), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(e.lk, 0, &one), HRL_NODE_OK);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_lock_fence(e.lk), 7);
  free_env(e);
}

/* A reply to INFO server, with that run_id and uptime. */
static hrl_reply info_reply(char *buf, size_t size, const char *run_id,
                            int uptime) {
  snprintf(buf, size,
           "# Server\r\nredis_version:7.0.15\r\nrun_id:%s\r\n"
           "uptime_in_seconds:%d\r\nuptime_in_days:0\r\n",
           run_id, uptime);
  hrl_reply r;
  memset(&r, 0, sizeof r);
  r.type = HRL_REPLY_STRING;
  r.str = buf;
  r.len = strlen(buf);
  return r;
}

#define RUN_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define RUN_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static void test_one_server_two_names(void) {
  env e = make_env(three, 3, 0, false, false);
  char buf[256], msg[HRL_DETAIL_MAX];
  hrl_reply a = info_reply(buf, sizeof buf, RUN_A, 100);
  CHECK_INT(hrl_proto_handshake_reply(e.c, 0, 0, &a, msg, sizeof msg),
            HRL_NODE_OK);
  char buf2[256];
  hrl_reply b = info_reply(buf2, sizeof buf2, RUN_B, 100);
  CHECK_INT(hrl_proto_handshake_reply(e.c, 1, 0, &b, msg, sizeof msg),
            HRL_NODE_OK);
  CHECK_INT(hrl_proto_handshake_reply(e.c, 2, 0, &a, msg, sizeof msg),
            HRL_NODE_SERVER);
  CHECK_STR(msg, "the same server as 127.0.0.1:1 (run_id aaaaaaaaaaaa...)");
  /* From now on every acquire and extend is refused, saying which. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_EINVAL);
  CHECK_STR(hrl_lock_error(e.lk),
            "masters 127.0.0.1:1 and 127.0.0.1:3 are one server (run_id "
            "aaaaaaaaaaaa...): Redlock needs independent masters");
  free_env(e);

  /* Detected in the middle of an acquire: refused with that error, and
   * the masters that granted are cleaned up. */
  e = make_env(three, 3, 0, false, false);
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  CHECK_INT(hrl_proto_handshake_reply(e.c, 0, 0, &a, msg, sizeof msg),
            HRL_NODE_OK);
  reply_ok(e.lk, 0);
  CHECK_INT(hrl_proto_handshake_reply(e.c, 1, 0, &a, msg, sizeof msg),
            HRL_NODE_SERVER);
  hrl_proto_fail(e.lk, 1, HRL_NODE_SERVER, msg);
  reply_ok(e.lk, 2);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* cleanup */
  for (size_t i = 0; i < 3; i++) {
    reply_int(e.lk, i, 1);
  }
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_EINVAL);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "are one server");
  CHECK(!hrl_lock_held(e.lk));
  /* A release is still allowed (it frees what a lock holds). */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_RELEASE, 0, 0), HRL_ENOTHELD);
  free_env(e);
}

static void test_restart_guard(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.restart_guard_ms = 30000;
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(three, 1, &o, &c, NULL, 0), HRL_OK);
  size_t len;
  int replies = 0;
  const char *hs = hrl_proto_handshake(c, 0, &len, &replies);
  CHECK_INT(replies, 1); /* N = 1, but a guard: INFO */
  CHECK(hs != NULL && memmem(hs, len, "INFO", 4) != NULL);
  char buf[256], msg[HRL_DETAIL_MAX];
  hrl_reply young = info_reply(buf, sizeof buf, RUN_A, 3);
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 0, &young, msg, sizeof msg),
            HRL_NODE_SERVER);
  CHECK_STR(msg, "started 3 s ago, under restart_guard (30 s): no vote");
  char buf2[256];
  hrl_reply old = info_reply(buf2, sizeof buf2, RUN_A, 30);
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 0, &old, msg, sizeof msg),
            HRL_NODE_OK);
  hrl_reply restarted = info_reply(buf, sizeof buf, RUN_B, 0);
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 0, &restarted, msg, sizeof msg),
            HRL_NODE_SERVER);
  CHECK_STR(msg,
            "restarted 0 s ago (new run_id), under restart_guard (30 s): no "
            "vote");
  /* INFO refused: the guard cannot be kept. */
  hrl_reply noperm = error_reply("NOPERM this user has no permissions to run "
                                 "the 'info' command");
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 0, &noperm, msg, sizeof msg),
            HRL_NODE_AUTH);
  CHECK_CONTAINS(msg, "restart_guard needs INFO: NOPERM");
  hrl_client_free(c);

  /* Without a guard, an ACL user without INFO passes (the URLs were
   * compared), and N = 1 asks no INFO at all. */
  CHECK_STATUS(hrl_client_new(three, 2, NULL, &c, NULL, 0), HRL_OK);
  CHECK_INT(hrl_proto_handshake_reply(c, 0, 0, &noperm, msg, sizeof msg),
            HRL_NODE_OK);
  hrl_client_free(c);
  CHECK_STATUS(hrl_client_new(three, 1, NULL, &c, NULL, 0), HRL_OK);
  CHECK(hrl_proto_handshake(c, 0, &len, &replies) == NULL);
  CHECK_INT(replies, 0);
  hrl_client_free(c);
}

static void test_options(void) {
  const hrl_option *o = hrl_option_find("sync_replicas");
  CHECK(o != NULL && o->kind == HRL_OPTION_COUNT &&
        o->scope == HRL_SCOPE_LOCK_DEFAULT);
  hrl_lock_options lo;
  memset(&lo, 0, sizeof lo);
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_options_set(&lo, o, 2, d, sizeof d), HRL_OK);
  CHECK_INT(lo.sync_replicas, 2);
  CHECK_STATUS(hrl_lock_options_set(&lo, o, 1.5, d, sizeof d), HRL_EINVAL);
  CHECK_STR(d, "sync_replicas must be a whole number from 0 to 100, got 1.5");
  CHECK_STATUS(hrl_lock_options_set(&lo, o, 101, d, sizeof d), HRL_EINVAL);
  hrl_options co;
  hrl_options_init(&co);
  CHECK_STATUS(hrl_options_set(&co, hrl_option_find("restart_guard"), 2.5, NULL,
                               0, d, sizeof d),
               HRL_OK);
  CHECK_INT(co.restart_guard_ms, 2500);
  CHECK_STATUS(hrl_options_set(&co, hrl_option_find("sync_aof"), 1, NULL, 0, d,
                               sizeof d),
               HRL_OK);
  CHECK(co.lock.sync_aof);
  co.lock.sync_replicas = 200;
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(three, 1, &co, &c, d, sizeof d), HRL_EINVAL);
  CHECK_CONTAINS(d, "sync_replicas must be a whole number from 0 to 100");
}

int main(void) {
  RUN(test_wait_bytes);
  RUN(test_wait_per_master);
  RUN(test_unacked_vote_is_cleaned_up);
  RUN(test_wait_replies);
  RUN(test_fenced_wait);
  RUN(test_one_server_two_names);
  RUN(test_restart_guard);
  RUN(test_options);
  return finish_tests("test_sync_proto");
}
