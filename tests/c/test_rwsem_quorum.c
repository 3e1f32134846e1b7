/* Read-write locks and semaphores on three masters: a hold is what a
 * quorum granted. Masters that disagree on a permit's number settle on
 * the one most granted; at most `permits` permits are valid at once also
 * while a master is paused and after it comes back; a write is refused
 * where a read holds a quorum; a write's fence passes a counter that ran
 * ahead on one master, and a read after it gets that fence. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fixture.h"

static fixture fx;

static hrl_client *client(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 50;
  o.timeout_ms = 500; /* TOLERANT: a loaded machine */
  o.connect_timeout_ms = 1000;
  return fixture_client(&fx, &o);
}

static hrl_lock *permit(hrl_client *c, const char *name, uint32_t permits) {
  hrl_lock *lk = NULL;
  CHECK_STATUS(
      hrl_permit_new(c, name, strlen(name), permits, NULL, &lk, NULL, 0),
      HRL_OK);
  return lk;
}

static hrl_lock *rw(hrl_client *c, const char *name, hrl_lock_mode mode,
                    bool fenced) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.fenced = fenced;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_rwlock_new(c, name, strlen(name), mode, &lo, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

/* A holder of permit `slot` (or of class "r") put on node by hand, with
 * an expiry far ahead and a key TTL of a minute. */
static void foreign_holder(int node, const char *key, const char *cls) {
  char value[64];
  snprintf(value, sizeof value, "%s 99999999999999", cls);
  redisReply *r = fixture_cmd(&fx, node, "HSET %s foreign %s", key, value);
  CHECK(r != NULL && r->type == REDIS_REPLY_INTEGER);
  freeReplyObject(r);
  freeReplyObject(fixture_cmd(&fx, node, "PEXPIRE %s 60000", key));
}

/* Whether node's hash holds token at class cls. */
static bool holds_at(int node, const char *key, const char *token,
                     const char *cls) {
  redisReply *r = fixture_cmd(&fx, node, "HGET %s %s", key, token);
  bool at = r != NULL && r->type == REDIS_REPLY_STRING &&
            strncmp(r->str, cls, strlen(cls)) == 0 &&
            r->str[strlen(cls)] == ' ';
  freeReplyObject(r);
  return at;
}

/* Master 1 has permit 1 taken by another holder: it grants permit 2 where
 * masters 2 and 3 grant 1. The hold is permit 1 (a quorum); master 1's
 * grant does not count and goes with the release. The next permit is 2 on
 * masters 2 and 3; a third finds no quorum with room. */
static void test_masters_that_disagree_settle_on_one_permit(void) {
  hrl_client *c = client();
  foreign_holder(1, "sem:settle", "1");
  hrl_lock *p1 = permit(c, "sem:settle", 2);
  hrl_lock *p2 = permit(c, "sem:settle", 2);
  hrl_lock *p3 = permit(c, "sem:settle", 2);
  CHECK_STATUS(hrl_lock_acquire(p1, 0), HRL_OK);
  CHECK_INT(hrl_lock_permit(p1), 1);
  hrl_counts n;
  hrl_lock_counts(p1, &n);
  CHECK_INT(n.ok, 2);
  CHECK(holds_at(2, "sem:settle", hrl_lock_token(p1), "1"));
  CHECK(holds_at(3, "sem:settle", hrl_lock_token(p1), "1"));
  CHECK_STATUS(hrl_lock_extend(p1, 0), HRL_OK);
  hrl_lock_counts(p1, &n);
  CHECK_INT(n.ok, 2); /* master 1 holds our token at another permit */
  CHECK_STATUS(hrl_lock_acquire(p2, 0), HRL_OK);
  CHECK_INT(hrl_lock_permit(p2), 2);
  CHECK_STATUS(hrl_lock_acquire(p3, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_release(p1), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "HLEN sem:settle"), 1); /* the foreign */
  CHECK_STATUS(hrl_lock_acquire(p3, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(p2), HRL_OK);
  CHECK_STATUS(hrl_lock_release(p3), HRL_OK);
  hrl_lock_free(p1);
  hrl_lock_free(p2);
  hrl_lock_free(p3);
  hrl_client_free(c);
}

/* Two permits taken while master 3 is paused (masters 1 and 2 grant
 * both); once it is back, with room on it alone, a third is refused. */
static void test_no_more_permits_than_allowed_across_a_pause(void) {
  hrl_client *c = client();
  hrl_lock *p[3];
  for (int k = 0; k < 3; k++) {
    p[k] = permit(c, "sem:pause", 2);
  }
  CHECK(fixture_ctl(&fx, "pause", 3, NULL));
  CHECK_STATUS(hrl_lock_acquire(p[0], 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(p[1], 0), HRL_OK);
  CHECK(hrl_lock_permit(p[0]) != hrl_lock_permit(p[1]));
  CHECK_STATUS(hrl_lock_acquire(p[2], 0), HRL_ETIMEOUT);
  CHECK(fixture_ctl(&fx, "resume", 3, NULL));
  CHECK_STATUS(hrl_lock_acquire(p[2], 0), HRL_ETIMEOUT);
  hrl_counts n;
  hrl_lock_counts(p[2], &n);
  CHECK(n.ok <= 1);
  CHECK_STATUS(hrl_lock_release(p[0]), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(p[2], 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(p[1]), HRL_OK);
  CHECK_STATUS(hrl_lock_release(p[2]), HRL_OK);
  for (int k = 0; k < 3; k++) {
    hrl_lock_free(p[k]);
  }
  hrl_client_free(c);
}

/* Our read held on all three masters (beside a foreign one on master 1):
 * a write finds no master free. With only master 1's foreign read left,
 * it gets masters 2 and 3, a quorum, and holds; a read is then refused. */
static void test_a_write_needs_a_quorum_without_reads(void) {
  hrl_client *c = client();
  foreign_holder(1, "rw:quorum", "r");
  hrl_lock *r = rw(c, "rw:quorum", HRL_MODE_READ, false);
  hrl_lock *w = rw(c, "rw:quorum", HRL_MODE_WRITE, false);
  CHECK_STATUS(hrl_lock_acquire(r, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_release(r), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_OK);
  hrl_counts n;
  hrl_lock_counts(w, &n);
  CHECK_INT(n.ok, 2);
  CHECK_STATUS(hrl_lock_acquire(r, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_release(w), HRL_OK);
  hrl_lock_free(r);
  hrl_lock_free(w);
  hrl_client_free(c);
}

/* Master 2's counter ran ahead (a write that won only there): the next
 * write's fence passes it and is raised on the others (the fence round);
 * a read then gets that fence from every master. */
static void test_a_write_fence_passes_a_counter_ahead(void) {
  hrl_client *c = client();
  hrl_lock *w = rw(c, "rw:qfence", HRL_MODE_WRITE, true);
  hrl_lock *r = rw(c, "rw:qfence", HRL_MODE_READ, true);
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_OK);
  uint64_t first = hrl_lock_fence(w);
  CHECK_STATUS(hrl_lock_release(w), HRL_OK);
  freeReplyObject(fixture_cmd(&fx, 2, "SET rw:qfence{rw:qfence}:fence %llu",
                              (unsigned long long)first + 50));
  CHECK_STATUS(hrl_lock_acquire(w, 0), HRL_OK);
  uint64_t second = hrl_lock_fence(w);
  CHECK_INT(second, first + 51);
  char want[32], got[32];
  snprintf(want, sizeof want, "%llu", (unsigned long long)second);
  for (int node = 1; node <= 3; node++) {
    const char *key = "rw:qfence{rw:qfence}:fence";
    fixture_get(&fx, node, key, strlen(key), got, sizeof got);
    CHECK_STR(got, want);
  }
  CHECK_STATUS(hrl_lock_release(w), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(r, 0), HRL_OK);
  CHECK_INT(hrl_lock_fence(r), second);
  CHECK_STATUS(hrl_lock_release(r), HRL_OK);
  hrl_lock_free(r);
  hrl_lock_free(w);
  hrl_client_free(c);
}

int main(void) {
  fixture_start(&fx, 3, NULL);
  RUN(test_masters_that_disagree_settle_on_one_permit);
  RUN(test_no_more_permits_than_allowed_across_a_pause);
  RUN(test_a_write_needs_a_quorum_without_reads);
  RUN(test_a_write_fence_passes_a_counter_ahead);
  fixture_stop(&fx);
  return finish_tests("test_rwsem_quorum");
}
