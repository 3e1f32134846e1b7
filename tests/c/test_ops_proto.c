/* Unit tests, without Redis, of what operators get from the protocol:
 * owner labels on the wire (the label's command behind the round's, its
 * reply read last), inspections (the script's answer parsed, the quorum's
 * verdict), events and counters as the seam reports them; and what a
 * lock object and a client cost to make. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"
#include "check.h"
#include "proto/inspect_script.h"
#include "proto/resp.h"
#include "proto/state.h"

static const char *const three[] = {
    "redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3"};

/* Events seen by a callback, kept as their names and messages. */
typedef struct seen {
  int n;
  hrl_event_kind kind[16];
  char text[16][256];
  int64_t ms[16];
  uint32_t count[16];
} seen;

static void keep(const hrl_event *ev, void *ud) {
  seen *s = ud;
  if (s->n < 16) {
    s->kind[s->n] = ev->kind;
    s->ms[s->n] = ev->ms;
    s->count[s->n] = ev->count;
    hrl_event_format(ev, s->text[s->n], sizeof s->text[s->n]);
    s->n++;
  }
}

static hrl_client *client_of(size_t n, const char *owner) {
  hrl_options o;
  hrl_options_init(&o);
  o.lock.owner = owner;
  return check_client(three, n, &o);
}

static hrl_step step(hrl_lock *lk, hrl_step_info *info) {
  return hrl_proto_step(lk, hrl_now_us(), info);
}

static void test_owner_label_follows_the_acquire(void) {
  char owner[] = "job-%%-x";
  hrl_client *c = client_of(1, owner);
  owner[0] = 'X'; /* the client keeps its own copy */
  hrl_lock *lk = check_lock(c, "res");
  hrl_step_info info;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  size_t len = 0;
  const char *bytes = hrl_proto_command(lk, 0, &len);
  CHECK_INT(hrl_proto_command_replies(lk, 0), 2);
  char token[HRL_TOKEN_LEN + 1];
  memcpy(token, lk->op.token, sizeof token);
  char want[256];
  int w = snprintf(want, sizeof want,
                   "*5\r\n$3\r\nSET\r\n$47\r\nres{res}:owner:%s\r\n"
                   "$7\r\njob-%%-x\r\n$2\r\nPX\r\n$5\r\n30000\r\n",
                   token);
  CHECK(len > (size_t)w && memcmp(bytes + len - w, want, (size_t)w) == 0);
  CHECK(memcmp(bytes, "*6\r\n$3\r\nSET\r\n$3\r\nres\r\n", 22) == 0);
  /* The SET's OK is kept back until the label's reply is in. */
  hrl_reply ok = status_reply("OK");
  CHECK_INT(hrl_proto_reply(lk, 0, &ok), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(lk, 0, &ok), HRL_NODE_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  CHECK_STATUS(info.status, HRL_OK);

  /* The release deletes it, behind the queue script; a NOSCRIPT is acted
   * on once the DEL's reply was read too. */
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_RELEASE, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  bytes = hrl_proto_command(lk, 0, &len);
  snprintf(want, sizeof want, "*2\r\n$3\r\nDEL\r\n$47\r\nres{res}:owner:%s\r\n",
           token);
  CHECK(memmem(bytes, len, want, strlen(want)) != NULL);
  hrl_reply noscript = error_reply("NOSCRIPT No matching script.");
  hrl_reply one = int_reply(1);
  CHECK_INT(hrl_proto_reply(lk, 0, &noscript), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(lk, 0, &one), HRL_NODE_RESEND);
  bytes = hrl_proto_command(lk, 0, &len);
  CHECK(memcmp(bytes, "*8\r\n$4\r\nEVAL\r\n", 14) == 0);
  CHECK(memmem(bytes, len, want, strlen(want)) != NULL);
  CHECK_INT(hrl_proto_command_replies(lk, 0), 2);
  hrl_reply handed = int_reply(3);
  CHECK_INT(hrl_proto_reply(lk, 0, &handed), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(lk, 0, &one), HRL_NODE_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  CHECK_STATUS(info.status, HRL_OK);
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.acquired, 1);
  CHECK_INT(s.released, 1);
  CHECK_INT(s.handoffs, 1);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* A label behind sync_replicas' WAIT: the vote is decided by the WAIT,
 * and told once the label's reply is in too. */
static void test_owner_label_behind_a_wait(void) {
  hrl_client *c = client_of(1, "w");
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.sync_replicas = 1;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new_with(c, "res", 3, &lo, &lk, NULL, 0), HRL_OK);
  hrl_step_info info;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  size_t len = 0;
  const char *bytes = hrl_proto_command(lk, 0, &len);
  CHECK_INT(hrl_proto_command_replies(lk, 0), 3);
  const char *wait = memmem(bytes, len, "$4\r\nWAIT\r\n", 10);
  static const char set_label[] = "$3\r\nSET\r\n$47\r\nres{res}:owner:";
  const char *label = memmem(bytes, len, set_label, sizeof set_label - 1);
  CHECK(wait != NULL && label != NULL && wait < label);
  hrl_reply ok = status_reply("OK");
  hrl_reply one = int_reply(1);
  CHECK_INT(hrl_proto_reply(lk, 0, &ok), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(lk, 0, &one), HRL_NODE_MORE);
  CHECK_INT(hrl_proto_reply(lk, 0, &ok), HRL_NODE_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  CHECK_STATUS(info.status, HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_no_label_no_extra_bytes(void) {
  hrl_client *c = client_of(1, NULL);
  hrl_lock *lk = check_lock(c, "res");
  hrl_step_info info;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  size_t len = 0;
  hrl_proto_command(lk, 0, &len);
  CHECK_INT(len, 22 + 39 + 16 + 11); /* SET res token NX PX 30000 */
  CHECK_INT(hrl_proto_command_replies(lk, 0), 1);
  CHECK(lk->extra == NULL);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* Bindings make a lock object per acquisition (Python's with, the Lua
 * facade): past glibc's per-thread cache limit (blocks up to 1032 bytes
 * on 64-bit) every one went through the arena, with malloc_consolidate,
 * a tenth of such a cycle's instructions (bench/: c-new-n1). The handle
 * must stay within it; a lock that cannot wait keeps no room for a WAIT
 * in its command buffer, and one that can still gets its WAIT. */
static void test_lock_object_fits_the_malloc_cache(void) {
#if SIZE_MAX > UINT32_MAX
  CHECK(sizeof(hrl_lock) <= 1032);
#endif
  hrl_client *c = client_of(1, NULL);
  hrl_lock *lk = check_lock(c, "res");
  CHECK(!lk->may_wait);
  hrl_lock_free(lk);
  hrl_client_free(c);
  hrl_options o;
  hrl_options_init(&o);
  o.lock.sync_replicas = 1;
  c = check_client(three, 1, &o);
  lk = check_lock(c, "res");
  CHECK(lk->may_wait);
  hrl_step_info info;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  size_t len = 0;
  const char *bytes = hrl_proto_command(lk, 0, &len);
  char text[1024];
  CHECK(len < sizeof text);
  snprintf(text, sizeof text, "%.*s", (int)len, bytes);
  CHECK(strstr(text, "\r\nWAIT\r\n") != NULL);
  CHECK_INT(hrl_proto_command_replies(lk, 0), 2);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_owner_label_is_checked(void) {
  const char *bad[] = {"", "a\nb", "50%", "%x", "tab\there"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    hrl_options o;
    hrl_options_init(&o);
    o.lock.owner = bad[k];
    hrl_client *c = NULL;
    char d[HRL_DETAIL_MAX] = "";
    CHECK_STATUS(hrl_client_new(three, 1, &o, &c, d, sizeof d), HRL_EINVAL);
    CHECK_CONTAINS(d, "owner");
  }
  char longer[HRL_OWNER_MAX + 2];
  memset(longer, 'a', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  hrl_client *c = client_of(1, NULL);
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.owner = longer;
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  CHECK_STATUS(hrl_lock_new_with(c, "res", 3, &lo, &lk, d, sizeof d),
               HRL_EINVAL);
  CHECK_CONTAINS(d, "owner must be 1 to 128 bytes");
  const hrl_option *opt = hrl_option_find("owner");
  CHECK(opt != NULL && opt->kind == HRL_OPTION_LABEL);
  CHECK_STATUS(hrl_lock_options_set_text(&lo, opt, "w%p", 3, d, sizeof d),
               HRL_OK);
  CHECK_STR(lo.owner, "w%p");
  CHECK_STATUS(hrl_lock_options_set(&lo, opt, 1, d, sizeof d), HRL_EINVAL);
  hrl_client_free(c);
}

/* The script's answer, as a master would give it. */
static size_t field(char *out, const char *v) {
  return (size_t)sprintf(out, "%zu:%s", strlen(v), v);
}

static void feed_answer(hrl_lock *lk, size_t i, const char *const *f,
                        size_t n) {
  char buf[2048];
  size_t len = 0;
  for (size_t k = 0; k < n; k++) {
    len += field(buf + len, f[k]);
  }
  hrl_reply r = {.type = HRL_REPLY_STRING, .str = buf, .len = len};
  hrl_proto_reply(lk, i, &r);
}

static void test_inspection_parses_and_judges(void) {
  hrl_client *c = client_of(3, NULL);
  seen ev = {0};
  hrl_client_on_event(c, keep, &ev);
  hrl_lock *lk = check_lock(c, "jobs");
  hrl_step_info info;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_INSPECT, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  CHECK_INT(info.timeout_ms, 50);
  size_t len;
  const char *bytes = hrl_proto_command(lk, 0, &len);
  char want[512];
  snprintf(want, sizeof want,
           "*10\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$1\r\n5\r\n$4\r\njobs\r\n"
           "$16\r\njobs{jobs}:queue\r\n$18\r\njobs{jobs}:waiters\r\n"
           "$16\r\njobs{jobs}:fence\r\n$17\r\njobs{jobs}:owner:\r\n"
           "$2\r\n16\r\n$2\r\n16\r\n",
           HRL_INSPECT_SHA1);
  CHECK_INT(len, strlen(want));
  CHECK(memcmp(bytes, want, len) == 0);
  CHECK_INT(hrl_proto_command_replies(lk, 0), 1);
  CHECK(hrl_proto_late_command(lk, 0, &len) == NULL);
  const char *tok = "aaaaaaaabbbbbbbbccccccccdddddddd";
  const char *held[] = {
      "1000000",  "string",           tok,         "9000",
      "7",        "web-1:42",         "2",         "",
      "0",        "w1tok-0000000000", "997000000", "1004000 410 ch",
      "worker-1", "w2tok-0000000000", "998500000", "999000 410 ch",
      ""};
  feed_answer(lk, 0, held, sizeof held / sizeof held[0]);
  held[3] = "8000";
  /* master 2: NOSCRIPT first, then the same answer to the EVAL */
  hrl_reply noscript = error_reply("NOSCRIPT No matching script.");
  CHECK_INT(hrl_proto_reply(lk, 1, &noscript), HRL_NODE_RESEND);
  bytes = hrl_proto_command(lk, 1, &len);
  CHECK(memcmp(bytes, "*10\r\n$4\r\nEVAL\r\n", 15) == 0);
  feed_answer(lk, 1, held, sizeof held / sizeof held[0]);
  hrl_proto_fail(lk, 2, HRL_NODE_UNREACHABLE, "connection refused");
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  CHECK_STATUS(info.status, HRL_OK);
  const hrl_inspection *r = hrl_lock_inspection(lk);
  CHECK(r != NULL);
  if (r != NULL) {
    CHECK_INT(r->verdict, HRL_VERDICT_HELD);
    CHECK_INT(r->answered, 2);
    CHECK_INT(r->holding, 2);
    CHECK_STR(r->token, "aaaaaaaa");
    CHECK_STR(r->owner, "web-1:42");
    CHECK_INT(r->valid_ms, 8000); /* the quorum-th longest PTTL */
    CHECK_INT(r->fence, 7);
    const hrl_master_view *m = &r->master[0];
    CHECK_STATUS(m->status, HRL_OK);
    CHECK(m->present);
    CHECK_INT(m->pttl_ms, 9000);
    CHECK_INT(m->queued, 2);
    CHECK_INT(m->listed, 2);
    CHECK_STR(m->waiters[0].token, "w1tok-00");
    CHECK_INT(m->waiters[0].age_ms, 3000);
    CHECK_INT(m->waiters[0].lease_ms, 4000);
    CHECK_STR(m->waiters[0].owner, "worker-1");
    CHECK_INT(m->waiters[1].age_ms, 1500);
    CHECK_INT(m->waiters[1].lease_ms, -1000); /* gone: skipped */
    CHECK_STR(m->waiters[1].owner, "");
    CHECK_STATUS(r->master[2].status, HRL_ECONNECT);
    CHECK_STR(r->master[2].error, "connection refused");
  }
  CHECK_INT(ev.n, 1);
  CHECK_INT(ev.kind[0], HRL_EVENT_MASTER_DOWN);
  CHECK_STR(ev.text[0], "master 127.0.0.1:3 unreachable: connection refused");

  /* One holder of three masters, one master silent: cannot tell. */
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_INSPECT, 0, hrl_now_us()), HRL_OK);
  CHECK(hrl_lock_inspection(lk) == NULL);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  feed_answer(lk, 0, held, 9);
  const char *none[] = {"1000000", "none", "", "-2", "", "", "0", "", "0"};
  feed_answer(lk, 1, none, 9);
  hrl_proto_missed(lk, 2, "timeout after 50 ms");
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  r = hrl_lock_inspection(lk);
  CHECK(r != NULL && r->verdict == HRL_VERDICT_UNKNOWN);
  CHECK(r != NULL && r->holding == 1 && r->valid_ms == 0);
  CHECK(r != NULL && !r->master[1].present && r->master[1].pttl_ms == -2);

  /* No holder on two of three: free whatever the third says. */
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_INSPECT, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  feed_answer(lk, 0, none, 9);
  const char *list[] = {"1000000", "list", "", "-1", "", "", "0", "", "0"};
  feed_answer(lk, 1, list, 9);
  hrl_reply bad = status_reply("OK");
  CHECK_INT(hrl_proto_reply(lk, 2, &bad), HRL_NODE_PROTOCOL);
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  r = hrl_lock_inspection(lk);
  CHECK(r != NULL && r->verdict == HRL_VERDICT_FREE);
  CHECK(r != NULL && r->master[1].present);
  CHECK_STR(r != NULL ? r->master[1].token : NULL, "(list)");
  CHECK(r != NULL && r->kind == HRL_KIND_OTHER);

  CHECK(r != NULL && r->master[2].status == HRL_EPROTOCOL);
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.inspections, 3);
  CHECK_INT(s.master[2].unreachable, 2);
  CHECK_INT(s.master[2].errors, 1);
  CHECK_INT(s.acquired, 0);
  /* A semaphore's hash: permit 2 of token p1 on both masters that
   * answered, permit 1 of p2 on one only; the quorum has p1's. */
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_INSPECT, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  const char *sem[] = {"1000000", "hash",
                       "",        "9000",
                       "",        "",
                       "0",       "2",
                       "2",       "p1tok-0000000000",
                       "2",       "1006000",
                       "web-1",   "p2tok-0000000000",
                       "1",       "1003000",
                       ""};
  feed_answer(lk, 0, sem, sizeof sem / sizeof sem[0]);
  sem[11] = "1005000";
  sem[8] = "1";
  feed_answer(lk, 1, sem, 13);
  hrl_proto_missed(lk, 2, "timeout after 50 ms");
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  r = hrl_lock_inspection(lk);
  CHECK(r != NULL && r->kind == HRL_KIND_SEMAPHORE);
  CHECK(r != NULL && r->verdict == HRL_VERDICT_HELD && r->holds == 1);
  CHECK_STR(r != NULL ? r->hold[0].token : NULL, "p1tok-00");
  CHECK_STR(r != NULL ? r->hold[0].hold : NULL, "2");
  CHECK_STR(r != NULL ? r->hold[0].owner : NULL, "web-1");
  CHECK(r != NULL && r->hold[0].ttl_ms == 5000 && r->hold[0].holding == 2);
  CHECK(r != NULL && r->master[0].holds == 2 && r->master[1].holds == 1);
  CHECK(r != NULL && r->master[0].hold[1].ttl_ms == 3000);
  CHECK_STR(r != NULL ? r->master[0].hold[1].hold : NULL, "1");
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_master_down_and_back(void) {
  hrl_client *c = client_of(3, NULL);
  seen ev = {0};
  hrl_client_on_event(c, keep, &ev);
  hrl_lock *lk = check_lock(c, "res");
  hrl_step_info info;
  for (int round = 0; round < 3; round++) {
    CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
    CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
    reply_ok(lk, 0);
    if (round < 2) {
      hrl_proto_fail(lk, 1, HRL_NODE_UNREACHABLE, "connection refused");
    } else {
      reply_ok(lk, 1);
    }
    reply_ok(lk, 2);
    CHECK_INT(step(lk, &info), HRL_STEP_DONE);
    CHECK_STATUS(info.status, HRL_OK);
    CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_RELEASE, 0, hrl_now_us()), HRL_OK);
    CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
    for (size_t i = 0; i < 3; i++) {
      if (i == 1 && round < 2) {
        hrl_proto_fail(lk, 1, HRL_NODE_UNREACHABLE, "connection refused");
      } else {
        reply_int(lk, i, 1);
      }
    }
    CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  }
  /* Down once (not at each round it stays down), then back. */
  CHECK_INT(ev.n, 2);
  CHECK_INT(ev.kind[0], HRL_EVENT_MASTER_DOWN);
  CHECK_INT(ev.kind[1], HRL_EVENT_MASTER_UP);
  CHECK_CONTAINS(ev.text[1], "master 127.0.0.1:2 answers again after");
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.master[1].unreachable, 4);
  CHECK_INT(s.master[0].unreachable, 0);
  CHECK_INT(s.acquired, 3);
  CHECK_INT(s.released, 3);
  CHECK_INT(s.handoffs, 0);
  uint64_t bucketed = 0;
  for (size_t k = 0; k <= HRL_WAIT_BUCKETS; k++) {
    bucketed += s.wait_buckets[k];
  }
  CHECK_INT(bucketed, 3);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* A master's going and coming back are dated by the clock the driver
 * gives the protocol (the simulator's, a test's), never by one the
 * protocol reads itself: rounds 250 ms apart on the driver's clock, gone
 * in the first and back in the third, report 500 ms. */
static void test_master_events_on_the_drivers_clock(void) {
  hrl_client *c = client_of(3, NULL);
  seen ev = {0};
  hrl_client_on_event(c, keep, &ev);
  hrl_lock *lk = check_lock(c, "res");
  hrl_step_info info;
  for (int round = 0; round < 3; round++) {
    int64_t t = 5000000 + round * 250000;
    CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, t), HRL_OK);
    CHECK_INT(hrl_proto_step(lk, t, &info), HRL_STEP_ROUND);
    reply_ok(lk, 0);
    if (round < 2) {
      hrl_proto_fail(lk, 1, HRL_NODE_UNREACHABLE, "connection refused");
    } else {
      reply_ok(lk, 1);
    }
    reply_ok(lk, 2);
    CHECK_INT(hrl_proto_step(lk, t + 1000, &info), HRL_STEP_DONE);
    CHECK_STATUS(info.status, HRL_OK);
    CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_RELEASE, 0, t + 2000), HRL_OK);
    CHECK_INT(hrl_proto_step(lk, t + 2000, &info), HRL_STEP_ROUND);
    for (size_t i = 0; i < 3; i++) {
      if (i == 1 && round < 2) {
        hrl_proto_fail(lk, 1, HRL_NODE_UNREACHABLE, "connection refused");
      } else {
        reply_int(lk, i, 1);
      }
    }
    CHECK_INT(hrl_proto_step(lk, t + 3000, &info), HRL_STEP_DONE);
  }
  CHECK_INT(ev.n, 2);
  CHECK_INT(ev.kind[0], HRL_EVENT_MASTER_DOWN);
  CHECK_INT(ev.kind[1], HRL_EVENT_MASTER_UP);
  CHECK_INT(ev.ms[1], 500);
  CHECK_CONTAINS(ev.text[1], "answers again after 500 ms");
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_dead_waiters_counted_once(void) {
  hrl_client *c = client_of(3, NULL);
  seen ev = {0};
  hrl_client_on_event(c, keep, &ev);
  hrl_lock *lk = check_lock(c, "res");
  hrl_step_info info;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  for (size_t i = 0; i < 3; i++) {
    reply_ok(lk, i);
  }
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_RELEASE, 0, hrl_now_us()), HRL_OK);
  CHECK_INT(step(lk, &info), HRL_STEP_ROUND);
  /* each master handed it on past two gone entries: 1 + 2 + 4 x 2 */
  for (size_t i = 0; i < 3; i++) {
    reply_int(lk, i, 11);
  }
  CHECK_INT(step(lk, &info), HRL_STEP_DONE);
  CHECK_STATUS(info.status, HRL_OK);
  CHECK_INT(ev.n, 1);
  CHECK_INT(ev.kind[0], HRL_EVENT_DEAD_WAITER);
  CHECK_INT(ev.count[0], 2);
  CHECK_STR(ev.text[0], "lock 'res' released past 2 gone waiters");
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.handoffs, 1);
  CHECK_INT(s.dead_waiters, 2);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* Bytes malloc has handed out and not had back (mmap'd blocks too). Zero
 * under ASan, whose allocator glibc's counters do not see. */
static size_t heap_in_use(void) {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

/* Bindings make a client per request (the nginx cosocket driver, per
 * hiredlock.new) and queue its events (256 records, as they do). Such a
 * client for one master once took 354 KiB: the queue's ring of 256
 * records of 1,344 bytes, allocated up front, mmap'd, zeroed and unmapped
 * each time. Now: the client (4,168 bytes), its connection's 4 KiB buffer
 * and a few small parts, ~9 KiB; 16 KiB leaves room for small growth, and
 * is less than even the ring's first size would add (8 records, 10.5
 * KiB). */
static void test_a_client_with_a_queue_is_cheap(void) {
  size_t before = heap_in_use();
  hrl_client *c = client_of(1, NULL);
  CHECK_STATUS(hrl_client_queue_events(c, 256, NULL, NULL), HRL_OK);
  size_t cost = heap_in_use() - before;
  if (cost >= 16 * 1024) {
    fprintf(stderr, "a client with a queue took %zu bytes\n", cost);
  }
  CHECK(cost < 16 * 1024);
  hrl_client_free(c);
}

/* Reports an event with ms = k through the client's callback, as the core
 * does. */
static void post(hrl_client *c, int64_t k) {
  hrl_event ev = {.kind = HRL_EVENT_MASTER_DOWN,
                  .master = 0,
                  .master_label = "m0",
                  .ms = k,
                  .detail = "why"};
  c->cfg.obs.on_event(&ev, c->cfg.obs.on_event_ud);
}

/* Takes every queued event; checks they are first..first+n-1 in order. */
static void take_in_order(hrl_client *c, int64_t first, size_t n,
                          uint64_t want_dropped) {
  hrl_event_record out[64];
  uint64_t dropped = 0;
  size_t got = 0, k;
  while ((k = hrl_client_take_events(c, out, 64, &dropped)) > 0) {
    for (size_t j = 0; j < k; j++) {
      CHECK_INT(out[j].ev.ms, first + (int64_t)(got + j));
      CHECK_STR(out[j].ev.master_label, "m0");
      CHECK(out[j].ev.detail == out[j].detail);
      CHECK_STR(out[j].detail, "why");
    }
    if (got == 0) {
      CHECK_INT(dropped, want_dropped);
    }
    got += k;
  }
  CHECK_INT(got, n);
}

/* The ring grows as events come, keeping their order across its wrap,
 * up to the capacity asked for; past it events are dropped and counted. */
static void test_the_queue_grows_as_events_come(void) {
  hrl_client *c = client_of(1, NULL);
  CHECK_STATUS(hrl_client_queue_events(c, 100, NULL, NULL), HRL_OK);
  CHECK(!hrl_client_events_pending(c));
  for (int64_t k = 0; k < 6; k++) {
    post(c, k);
  }
  hrl_event_record out[4];
  CHECK_INT(hrl_client_take_events(c, out, 4, NULL), 4);
  CHECK_INT(out[3].ev.ms, 3);
  for (int64_t k = 6; k < 30; k++) { /* wraps, then grows twice */
    post(c, k);
  }
  take_in_order(c, 4, 26, 0);
  for (int64_t k = 0; k < 130; k++) { /* 100 kept, 30 dropped */
    post(c, k);
  }
  take_in_order(c, 0, 100, 30);
  CHECK(!hrl_client_events_pending(c));
  hrl_client_free(c);
}

static void test_event_words(void) {
  char buf[256];
  hrl_event ev = {0};
  ev.kind = HRL_EVENT_LOST;
  ev.name = "a'b\x01";
  ev.name_len = 4;
  ev.detail = "expired: connection failed";
  CHECK_STR(hrl_event_format(&ev, buf, sizeof buf),
            "lock 'a\\'b\\x01' lost: expired: connection failed");
  ev.kind = HRL_EVENT_RENEW_FAILED;
  ev.ms = 812;
  ev.detail = "connection failed: 1 of 3 masters confirmed (2 needed)";
  CHECK_STR(hrl_event_format(&ev, buf, sizeof buf),
            "lock 'a\\'b\\x01' renewal failed, still valid for 812 ms: "
            "connection failed: 1 of 3 masters confirmed (2 needed)");
  ev.kind = HRL_EVENT_SLOW_WAIT;
  ev.ms = 1502;
  ev.status = HRL_ETIMEOUT;
  ev.detail = "";
  CHECK_STR(hrl_event_format(&ev, buf, sizeof buf),
            "lock 'a\\'b\\x01' waited 1502 ms: timeout");
  CHECK_STR(hrl_event_name(HRL_EVENT_MASTER_UP), "master_up");
  CHECK_STR(hrl_event_name(HRL_EVENT_COUNT_), "unknown");
  CHECK_STR(hrl_verdict_name(HRL_VERDICT_HELD), "held");
  CHECK_INT(hrl_wait_bucket_ms(0), 1);
  CHECK_INT(hrl_wait_bucket_ms(HRL_WAIT_BUCKETS - 1), 10000);
  CHECK_INT(hrl_wait_bucket_ms(HRL_WAIT_BUCKETS), 0);
  char longname[600];
  memset(longname, 'n', sizeof longname);
  ev.name = longname;
  ev.name_len = sizeof longname;
  hrl_event_format(&ev, buf, sizeof buf);
  CHECK_CONTAINS(buf, "nnn...' waited");
}

static void test_the_inspect_script_has_no_write(void) {
  /* Read-only by construction: it calls no command that writes (the
   * Redis tests also run it as a user that may not). */
  const char *writes[] = {"\"set\"",  "\"del\"",  "expire",
                          "\"zadd\"", "\"zrem\"", "\"hset\"",
                          "\"hdel\"", "publish",  "\"incr\""};
  for (size_t k = 0; k < sizeof writes / sizeof writes[0]; k++) {
    CHECK(strstr(HRL_INSPECT_SCRIPT, writes[k]) == NULL);
  }
}

int main(void) {
  RUN(test_owner_label_follows_the_acquire);
  RUN(test_owner_label_behind_a_wait);
  RUN(test_no_label_no_extra_bytes);
  RUN(test_owner_label_is_checked);
  RUN(test_lock_object_fits_the_malloc_cache);
  RUN(test_a_client_with_a_queue_is_cheap);
  RUN(test_the_queue_grows_as_events_come);
  RUN(test_inspection_parses_and_judges);
  RUN(test_master_down_and_back);
  RUN(test_master_events_on_the_drivers_clock);
  RUN(test_dead_waiters_counted_once);
  RUN(test_event_words);
  RUN(test_the_inspect_script_has_no_write);
  return finish_tests("ops proto");
}
