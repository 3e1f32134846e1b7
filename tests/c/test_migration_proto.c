/* Unit tests without Redis of a lock on a Redis Cluster whose slot is
 * migrating (the replies played by the test, as the nodes give them): a
 * fenced acquire's pipeline is never sent to a second node once the first
 * answered part of it, a fenced acquire that cannot be fenced mid-migration
 * is refused (a waiter waits) instead of failing, and a fenced waiter's try
 * falls back to the plain try after TRYAGAIN. test_cluster.c runs the same
 * against a real cluster. */
#include "check.h"

typedef struct env {
  hrl_client *c;
  hrl_lock *lk;
} env;

/* A lock on a cluster (one master); retries every second; each grant
 * waits for `replicas` replicas (sync_replicas). */
static env make_with(bool fenced, uint32_t replicas) {
  env e;
  const char *url = "redis+cluster://127.0.0.1:1,127.0.0.1:2";
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 1000;
  o.retry_jitter_ms = 0;
  CHECK_STATUS(hrl_client_new(&url, 1, &o, &e.c, NULL, 0), HRL_OK);
  hrl_lock_options lo;
  hrl_lock_options_init(e.c, &lo);
  lo.fenced = fenced;
  lo.sync_replicas = replicas;
  lo.ttl_ms = 10000;
  CHECK_STATUS(hrl_lock_new_with(e.c, "res", 3, &lo, &e.lk, NULL, 0), HRL_OK);
  return e;
}

/* A fenced lock on a cluster (one master); retries every second. */
static env make(void) {
  return make_with(true, 0);
}

static void drop(env e) {
  hrl_lock_free(e.lk);
  hrl_client_free(e.c);
}

/* The command that goes out now (the driver takes it), whether it holds
 * needle, and the node it goes to. */
static bool sent(env e, const char *needle, size_t *node) {
  size_t len;
  const char *cmd = hrl_proto_command(e.lk, 0, &len);
  hrl_target to;
  hrl_proto_target(e.lk, 0, &to);
  *node = to.node;
  return cmd != NULL && memmem(cmd, len, needle, strlen(needle)) != NULL;
}

static hrl_node_result feed(env e, hrl_reply r) {
  return hrl_proto_reply(e.lk, 0, &r);
}

/* The SET is answered on the node the slot is leaving (the lock is held
 * there, or a SET took), and the INCR behind it is redirected: the counter
 * moved between the two. The pipeline must not go again to the other node,
 * where its SET would run too (the key on two nodes: MIGRATE then fails
 * with BUSYKEY). */
static void test_no_second_set_after_an_answered_one(void) {
  env e = make();
  hrl_step_info s;
  size_t node, first;
  static const char *const redirects[] = {"ASK 5061 127.0.0.1:2",
                                          "MOVED 5061 127.0.0.1:2"};
  for (int k = 0; k < 2; k++) {
    CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
    CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
    CHECK(sent(e, "INCR", &first));
    CHECK_INT(feed(e, nil_reply()), HRL_NODE_MORE); /* held there */
    CHECK_INT(feed(e, error_reply(redirects[k])), HRL_NODE_REFUSED);
    hrl_target to;
    hrl_proto_target(e.lk, 0, &to);
    CHECK_INT(to.node, first); /* no second node */
    CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_DONE);
    CHECK_STATUS(s.status, HRL_ETIMEOUT); /* busy, nothing to clean up */
  }
  /* A SET that took holds our key there without a fence: the attempt
   * fails and its release goes to that node. */
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 0, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  CHECK(sent(e, "INCR", &first));
  CHECK_INT(feed(e, status_reply("OK")), HRL_NODE_MORE);
  CHECK_INT(feed(e, error_reply(redirects[0])), HRL_NODE_SERVER);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* cleanup */
  CHECK(sent(e, "$1\r\nr\r\n", &node));
  CHECK_INT(node, first);
  CHECK_INT(feed(e, int_reply(1)), HRL_NODE_OK);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(e.lk), "is migrating: the counter moved (ASK");
  drop(e);
}

/* The SET asked elsewhere (the key is not on the node the slot is leaving)
 * while the INCR ran there (the counter still is): not to be fenced until
 * the two are on one node. Refused, so a blocking acquire waits for the
 * migration instead of failing at once; the TRYAGAIN of its tries (the
 * queue's keys are split too) brings the plain try, SET and INCR, and a
 * try that takes the key is fenced by that INCR. */
static void test_a_fenced_waiter_waits_through_a_migration(void) {
  env e = make();
  hrl_step_info s;
  size_t node;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  CHECK(sent(e, "SET", &node));
  CHECK_INT(feed(e, error_reply("ASK 5061 127.0.0.1:2")), HRL_NODE_MORE);
  CHECK_INT(feed(e, int_reply(7)), HRL_NODE_REFUSED);
  hrl_counts n;
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* the try */
  CHECK(sent(e, "$1\r\nt\r\n", &node));
  CHECK_INT(feed(e, error_reply("TRYAGAIN Multiple keys request during "
                                "rehashing of slot")),
            HRL_NODE_MORE);
  CHECK_INT(feed(e, int_reply(8)), HRL_NODE_RESEND);
  CHECK(sent(e, "*6\r\n$3\r\nSET\r\n$3\r\nres\r\n", &node));
  CHECK(sent(e, "*2\r\n$4\r\nINCR\r\n$14\r\nres{res}:fence\r\n", &node));
  CHECK_INT(hrl_proto_command_replies(e.lk, 0), 2);
  CHECK_INT(feed(e, nil_reply()), HRL_NODE_MORE); /* still held */
  CHECK_INT(feed(e, int_reply(9)), HRL_NODE_REFUSED);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_WAIT);
  CHECK_INT(s.wait_ms, 1000);
  /* Released meanwhile (plainly: the key is free, nobody handed it). */
  CHECK_INT(hrl_proto_step(e.lk, 1002000, &s), HRL_STEP_ROUND);
  CHECK(sent(e, "$1\r\nt\r\n", &node));
  CHECK_INT(feed(e, error_reply("TRYAGAIN Multiple keys request during "
                                "rehashing of slot")),
            HRL_NODE_MORE);
  CHECK_INT(feed(e, error_reply("ASK 5061 127.0.0.1:2")), HRL_NODE_RESEND);
  CHECK(sent(e, "SET", &node));
  CHECK_INT(feed(e, status_reply("OK")), HRL_NODE_MORE);
  CHECK_INT(feed(e, int_reply(10)), HRL_NODE_OK);
  CHECK_INT(hrl_proto_step(e.lk, 1003000, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_OK);
  CHECK_INT(hrl_lock_fence(e.lk), 10);
  hrl_lock_counts(e.lk, &n);
  CHECK_INT(n.attempts, 3);
  drop(e);
}

/* A try whose SET took on the old node while the counter moved: failed
 * there (no fence), which in a wait is no lasting refusal: the waiter
 * passes on what it won and waits on. */
static void test_a_counter_moved_mid_try_does_not_end_the_wait(void) {
  env e = make();
  hrl_step_info s;
  size_t node;
  CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, 0), HRL_OK);
  CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
  CHECK(sent(e, "SET", &node));
  CHECK_INT(feed(e, nil_reply()), HRL_NODE_MORE);
  CHECK_INT(feed(e, int_reply(3)), HRL_NODE_REFUSED);
  CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* the try */
  CHECK(sent(e, "$1\r\nt\r\n", &node));
  CHECK_INT(feed(e, status_reply("OK")), HRL_NODE_MORE); /* claimed */
  CHECK_INT(feed(e, error_reply("ASK 5061 127.0.0.1:2")), HRL_NODE_SERVER);
  CHECK_INT(hrl_proto_step(e.lk, 2000, &s), HRL_STEP_ROUND); /* aside */
  CHECK(sent(e, "$1\r\na\r\n", &node));
  CHECK_INT(feed(e, int_reply(0)), HRL_NODE_OK);
  CHECK_INT(hrl_proto_step(e.lk, 3000, &s), HRL_STEP_WAIT);
  drop(e);
}

/* A waiter whose grants wait for a replica (sync_replicas=1): the try's
 * pipeline has the WAIT behind it, so after a TRYAGAIN the plain try goes
 * with its WAIT behind as the script did, the replies counted with it, and
 * the WAIT's answer decides the vote. Plain and fenced. */
static void test_a_plain_try_keeps_its_wait(void) {
  for (int fenced = 0; fenced < 2; fenced++) {
    env e = make_with(fenced, 1);
    hrl_step_info s;
    size_t node;
    int before_wait = fenced ? 2 : 1;
    CHECK_STATUS(hrl_proto_begin(e.lk, HRL_OP_ACQUIRE, 5000, 0), HRL_OK);
    CHECK_INT(hrl_proto_step(e.lk, 0, &s), HRL_STEP_ROUND);
    CHECK(sent(e, "SET", &node));
    CHECK(sent(e, "WAIT", &node));
    CHECK_INT(feed(e, nil_reply()), HRL_NODE_MORE); /* held */
    if (fenced) {
      CHECK_INT(feed(e, int_reply(4)), HRL_NODE_MORE);
    }
    CHECK_INT(feed(e, int_reply(1)), HRL_NODE_REFUSED);
    CHECK_INT(hrl_proto_step(e.lk, 1000, &s), HRL_STEP_ROUND); /* the try */
    CHECK(sent(e, "$1\r\nt\r\n", &node));
    CHECK(sent(e, "WAIT", &node));
    CHECK_INT(hrl_proto_command_replies(e.lk, 0), before_wait + 1);
    CHECK_INT(feed(e, error_reply("TRYAGAIN Multiple keys request during "
                                  "rehashing of slot")),
              HRL_NODE_MORE);
    if (fenced) {
      CHECK_INT(feed(e, int_reply(5)), HRL_NODE_MORE);
    }
    CHECK_INT(feed(e, int_reply(1)), HRL_NODE_RESEND); /* the WAIT's */
    CHECK(sent(e, "*6\r\n$3\r\nSET\r\n$3\r\nres\r\n", &node));
    CHECK(sent(e, "*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n", &node));
    CHECK(!sent(e, "EVAL", &node));
    CHECK_INT(hrl_proto_command_replies(e.lk, 0), before_wait + 1);
    CHECK_INT(feed(e, status_reply("OK")), HRL_NODE_MORE);
    if (fenced) {
      CHECK_INT(feed(e, int_reply(6)), HRL_NODE_MORE);
    }
    CHECK_INT(feed(e, int_reply(1)), HRL_NODE_OK); /* the replica has it */
    CHECK_INT(hrl_proto_step(e.lk, 1001000, &s), HRL_STEP_DONE);
    CHECK_STATUS(s.status, HRL_OK);
    CHECK_INT(hrl_lock_fence(e.lk), fenced ? 6 : 0);
    drop(e);
  }
}

int main(void) {
  RUN(test_no_second_set_after_an_answered_one);
  RUN(test_a_fenced_waiter_waits_through_a_migration);
  RUN(test_a_counter_moved_mid_try_does_not_end_the_wait);
  RUN(test_a_plain_try_keeps_its_wait);
  return finish_tests("test_migration_proto");
}
