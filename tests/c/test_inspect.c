/* Inspections against real servers: a state built by hand on three
 * masters (a holder with a label and a fence, three waiters in the queue,
 * one master down) read back field by field; the verdicts; and proof that
 * an inspection writes nothing: the servers' change counters and every
 * key's value and TTL are the same after it, and a user whose ACL allows
 * no write can run it. */
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "proto/inspect_script.h"

#define NAME "jobs:reindex"
#define KEY NAME
#define QUEUE NAME "{" NAME "}:queue"
#define WAITERS NAME "{" NAME "}:waiters"
#define FENCE NAME "{" NAME "}:fence"
#define OWNER NAME "{" NAME "}:owner:"
#define HOLDER "aaaaaaaa11112222333344445555aaaa"

static const char *const waiters[3] = {"b1b1b1b111112222333344445555bbbb",
                                       "c2c2c2c211112222333344445555cccc",
                                       "d3d3d3d311112222333344445555dddd"};

static int64_t wall_us(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* The master's clock (TIME), in ms. */
static long long master_ms(fixture *f, int node) {
  redisReply *r = fixture_cmd(f, node, "TIME");
  long long ms = 0;
  if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
    ms = atoll(r->element[0]->str) * 1000 + atoll(r->element[1]->str) / 1000;
  }
  freeReplyObject(r);
  return ms;
}

static void run(fixture *f, int node, const char *fmt, const char *a,
                const char *b) {
  freeReplyObject(fixture_cmd(f, node, fmt, a, b));
}

/* On node: the holder with its label, the fence counter at 7, and three
 * waiters queued 3, 2 and 1 s ago whose entries live 5, 4 and 3 s more,
 * the first two with labels (as their tries write them). */
static void build_state(fixture *f, int node) {
  freeReplyObject(fixture_cmd(f, node, "SET %s %s PX 20000", KEY, HOLDER));
  freeReplyObject(
      fixture_cmd(f, node, "SET %s%s web-1:4242 PX 20000", OWNER, HOLDER));
  freeReplyObject(fixture_cmd(f, node, "SET %s 7", FENCE));
  long long now = master_ms(f, node);
  int64_t arrival = wall_us();
  for (int k = 0; k < 3; k++) {
    char score[32], entry[64];
    snprintf(score, sizeof score, "%lld",
             (long long)(arrival - (3 - k) * 1000000LL));
    snprintf(entry, sizeof entry, "%lld 410 hiredlock:wake:x",
             now + (5 - k) * 1000LL);
    run(f, node, "ZADD " QUEUE " %s %s", score, waiters[k]);
    run(f, node, "HSET " WAITERS " %s %s", waiters[k], entry);
  }
  freeReplyObject(
      fixture_cmd(f, node, "SET %s%s worker-1 PX 20000", OWNER, waiters[0]));
  freeReplyObject(
      fixture_cmd(f, node, "SET %s%s worker-2 PX 20000", OWNER, waiters[1]));
  freeReplyObject(fixture_cmd(f, node, "PEXPIRE %s 6000", QUEUE));
  freeReplyObject(fixture_cmd(f, node, "PEXPIRE %s 6000", WAITERS));
}

static hrl_inspection *inspect(hrl_client *c, const char *name) {
  hrl_inspection *r = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status st = hrl_client_inspect(c, name, strlen(name), &r, d, sizeof d);
  if (st != HRL_OK) {
    fprintf(stderr, "inspect: %s: %s\n", hrl_strerror(st), d);
  }
  CHECK_STATUS(st, HRL_OK);
  return r;
}

/* got is want give or take the time the test took (a loaded machine,
 * valgrind): within [want - slack_below, want + slack_above]. */
static void within(int64_t got, int64_t want, int64_t below, int64_t above) {
  if (got < want - below || got > want + above) {
    fprintf(stderr, "within: %lld not in [%lld - %lld, %lld + %lld]\n",
            (long long)got, (long long)want, (long long)below, (long long)want,
            (long long)above);
    check_failures++;
  }
}

static void test_a_holder_three_waiters_one_master_down(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  int64_t built = hrl_now_us();
  for (int node = 1; node <= 3; node++) {
    build_state(&fx, node);
  }
  CHECK(fixture_ctl(&fx, "kill", 3, NULL));
  hrl_options o = check_tolerant_options();
  hrl_client *c = fixture_client(&fx, &o);
  hrl_inspection *r = inspect(c, NAME);
  int64_t took = (hrl_now_us() - built) / 1000 + 100; /* ms, and rounding */
  if (r == NULL) {
    hrl_client_free(c);
    fixture_stop(&fx);
    return;
  }
  CHECK_INT(r->verdict, HRL_VERDICT_HELD);
  CHECK_STR(hrl_verdict_name(r->verdict), "held");
  CHECK_INT(r->masters, 3);
  CHECK_INT(r->quorum, 2);
  CHECK_INT(r->answered, 2);
  CHECK_INT(r->holding, 2);
  CHECK_STR(r->token, "aaaaaaaa");
  CHECK_STR(r->owner, "web-1:4242");
  within(r->valid_ms, 20000, took, 0);
  CHECK_INT(r->fence, 7);
  for (int i = 0; i < 2; i++) {
    const hrl_master_view *m = &r->master[i];
    CHECK_STATUS(m->status, HRL_OK);
    CHECK_STR(m->label, hrl_client_master_label(c, (size_t)i));
    CHECK(m->present);
    CHECK_STR(m->token, "aaaaaaaa");
    within(m->pttl_ms, 20000, took, 0);
    CHECK_INT(m->fence, 7);
    CHECK_STR(m->owner, "web-1:4242");
    CHECK_INT(m->queued, 3);
    CHECK_INT(m->listed, 3);
    const char *labels[3] = {"worker-1", "worker-2", ""};
    for (int k = 0; k < 3; k++) {
      char want[HRL_SHORT_TOKEN + 1];
      memcpy(want, waiters[k], HRL_SHORT_TOKEN);
      want[HRL_SHORT_TOKEN] = '\0';
      CHECK_STR(m->waiters[k].token, want); /* in arrival order */
      within(m->waiters[k].age_ms, (3 - k) * 1000, 100, took);
      within(m->waiters[k].lease_ms, (5 - k) * 1000, took, 100);
      CHECK_STR(m->waiters[k].owner, labels[k]);
    }
  }
  CHECK_STATUS(r->master[2].status, HRL_ECONNECT);
  CHECK(r->master[2].error[0] != '\0');
  CHECK(!r->master[2].present);
  hrl_inspection_free(r);

  /* A name nobody holds: free (two of three say so). */
  r = inspect(c, "nobody");
  CHECK(r != NULL && r->verdict == HRL_VERDICT_FREE && r->holding == 0 &&
        r->token[0] == '\0' && r->valid_ms == 0);
  hrl_inspection_free(r);

  /* The holder's key on one master only, another down: cannot tell. */
  freeReplyObject(fixture_cmd(&fx, 2, "DEL %s", KEY));
  r = inspect(c, NAME);
  CHECK(r != NULL && r->verdict == HRL_VERDICT_UNKNOWN && r->holding == 1);
  hrl_inspection_free(r);
  hrl_stats s;
  hrl_client_stats(c, &s);
  CHECK_INT(s.inspections, 3);
  CHECK_INT(s.acquired, 0);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* Every key the state has: its value's size and whether it has a TTL, as
 * one string (in KEYS order), and each key's PTTL in ms. */
#define SNAPSHOT_KEYS 16
typedef struct snapshot_t {
  char text[4096];
  size_t n;
  char key[SNAPSHOT_KEYS][160];
  long long pttl[SNAPSHOT_KEYS];
} snapshot_t;

static void snapshot(fixture *f, snapshot_t *out) {
  redisReply *keys = fixture_cmd(f, 1, "KEYS *");
  size_t len = 0;
  out->text[0] = '\0';
  out->n = 0;
  for (size_t k = 0; keys != NULL && k < keys->elements; k++) {
    const char *key = keys->element[k]->str;
    redisReply *d = fixture_cmd(f, 1, "DUMP %s", key);
    long long t = fixture_int(f, 1, "PTTL %s", key);
    if (out->n < SNAPSHOT_KEYS) {
      snprintf(out->key[out->n], sizeof out->key[0], "%s", key);
      out->pttl[out->n++] = t;
    }
    len +=
        (size_t)snprintf(out->text + len, sizeof out->text - len, "%s:%zu:%s;",
                         key, d != NULL ? d->len : 0, t > 0 ? "ttl" : "none");
    freeReplyObject(d);
  }
  CHECK(keys != NULL && keys->elements <= SNAPSHOT_KEYS);
  freeReplyObject(keys);
}

/* No TTL was set anew between the snapshots: each key's PTTL went down by
 * at most the time that passed (elapsed_ms, measured by the caller). */
static void check_ttls_only_ran(const snapshot_t *before,
                                const snapshot_t *after, long long elapsed_ms) {
  for (size_t k = 0; k < after->n; k++) {
    for (size_t j = 0; j < before->n; j++) {
      if (strcmp(after->key[k], before->key[j]) != 0 || after->pttl[k] < 0) {
        continue;
      }
      CHECK(after->pttl[k] <= before->pttl[j]);
      CHECK(before->pttl[j] - after->pttl[k] <= elapsed_ms + 1);
    }
  }
}

static long long changes(fixture *f) {
  redisReply *r = fixture_cmd(f, 1, "INFO persistence");
  const char *p =
      r != NULL ? strstr(r->str, "rdb_changes_since_last_save:") : NULL;
  long long v =
      p != NULL ? atoll(p + strlen("rdb_changes_since_last_save:")) : -1;
  freeReplyObject(r);
  return v;
}

#define READ_ONLY_RULES                                                        \
  "resetkeys ~jobs:* -@all +eval +evalsha +type +get +pttl +zcard +zrange "    \
  "+zscore +hget +hgetall +time"

static void test_an_inspection_writes_nothing(void) {
  fixture fx;
  fixture_start(&fx, 1,
                "--acl-user reader:pw --acl-rules '" READ_ONLY_RULES "'");
  build_state(&fx, 1);
  freeReplyObject(fixture_cmd(&fx, 1, "SCRIPT FLUSH"));
  snapshot_t before, after;
  int64_t first = hrl_now_us();
  snapshot(&fx, &before);
  long long dirty = changes(&fx);
  hrl_options o = check_tolerant_options();
  hrl_client *c = fixture_client(&fx, &o);
  for (int k = 0; k < 3; k++) { /* EVAL after NOSCRIPT, then EVALSHA */
    hrl_inspection *r = inspect(c, NAME);
    CHECK(r != NULL && r->verdict == HRL_VERDICT_HELD);
    hrl_inspection_free(r);
  }
  CHECK_INT(changes(&fx), dirty);
  snapshot(&fx, &after);
  CHECK_STR(after.text, before.text);
  check_ttls_only_ran(&before, &after, (hrl_now_us() - first) / 1000);
  CHECK(strstr(before.text, QUEUE) != NULL);

  /* The script's digest is the server's. */
  redisReply *rep = fixture_cmd(&fx, 1, "SCRIPT LOAD %s", HRL_INSPECT_SCRIPT);
  CHECK(rep != NULL && rep->type == REDIS_REPLY_STRING);
  CHECK_STR(rep != NULL ? rep->str : NULL, HRL_INSPECT_SHA1);
  freeReplyObject(rep);

  /* A user that may not write: it inspects, and cannot take the lock. */
  char url[128];
  snprintf(url, sizeof url, "redis://reader:pw@127.0.0.1:%d", fx.port[0]);
  const char *urls[1] = {url};
  hrl_client *reader = check_client(urls, 1, &o);
  hrl_inspection *r = inspect(reader, NAME);
  CHECK(r != NULL && r->verdict == HRL_VERDICT_HELD &&
        r->master[0].listed == 3);
  CHECK_STR(r != NULL ? r->owner : NULL, "web-1:4242");
  hrl_inspection_free(r);
  hrl_lock *lk = check_lock(reader, "jobs:other");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_EPERM);
  CHECK_CONTAINS(hrl_lock_error(lk), "NOPERM");
  hrl_lock_free(lk);
  /* Outside its keys, an inspection is refused, in the same words. */
  r = inspect(reader, "other:name");
  CHECK(r != NULL && r->verdict == HRL_VERDICT_UNKNOWN);
  CHECK_STATUS(r != NULL ? r->master[0].status : HRL_OK, HRL_EPERM);
  CHECK_CONTAINS(r != NULL ? r->master[0].error : NULL, "no permissions");
  hrl_inspection_free(r);
  CHECK_INT(changes(&fx), dirty);
  hrl_client_free(reader);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_what_hiredlock_itself_left(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL);
  hrl_options o = check_tolerant_options();
  o.lock.owner = "tester:%p";
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.fenced = true;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new_with(c, "mine", 4, &lo, &lk, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  uint64_t fence = hrl_lock_fence(lk);
  hrl_inspection *r = inspect(c, "mine");
  char want_owner[64];
  snprintf(want_owner, sizeof want_owner, "tester:%ld", (long)getpid());
  char want_token[HRL_SHORT_TOKEN + 1];
  memcpy(want_token, hrl_lock_token(lk), HRL_SHORT_TOKEN);
  want_token[HRL_SHORT_TOKEN] = '\0';
  CHECK(r != NULL && r->verdict == HRL_VERDICT_HELD);
  CHECK_STR(r != NULL ? r->owner : NULL, want_owner);
  CHECK_STR(r != NULL ? r->token : NULL, want_token);
  CHECK(r != NULL && fence >= 1 && r->fence == fence);
  CHECK(r != NULL && r->valid_ms > 29000 && r->valid_ms <= 30000);
  hrl_inspection_free(r);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  r = inspect(c, "mine");
  CHECK(r != NULL && r->verdict == HRL_VERDICT_FREE && r->owner[0] == '\0');
  CHECK(r != NULL && r->fence == fence); /* a counter outlives the hold */
  hrl_inspection_free(r);
  char d[HRL_DETAIL_MAX] = "";
  CHECK_STATUS(hrl_client_inspect(c, "", 0, &r, d, sizeof d), HRL_EINVAL);
  CHECK(r == NULL);
  CHECK_CONTAINS(d, "name must be 1 to 512 bytes");
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static hrl_lock *hold(hrl_client *c, const char *name, hrl_lock_mode mode,
                      uint32_t permits) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status st =
      mode == HRL_MODE_PERMIT
          ? hrl_permit_new(c, name, strlen(name), permits, &lo, &lk, d,
                           sizeof d)
          : hrl_rwlock_new(c, name, strlen(name), mode, &lo, &lk, d, sizeof d);
  CHECK_STATUS(st, HRL_OK);
  if (lk != NULL) {
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  }
  return lk;
}

static void short_of(const hrl_lock *lk, char out[HRL_SHORT_TOKEN + 1]) {
  memcpy(out, hrl_lock_token(lk), HRL_SHORT_TOKEN);
  out[HRL_SHORT_TOKEN] = '\0';
}

/* The hold of token (its short form) in the list, or NULL. */
static const hrl_hold_view *find_hold(const hrl_hold_view *h, size_t n,
                                      const char *token) {
  for (size_t k = 0; k < n; k++) {
    if (strcmp(h[k].token, token) == 0) {
      return &h[k];
    }
  }
  return NULL;
}

/* A read-write lock's and a semaphore's hash (docs/DESIGN.md, the holds):
 * the kind, every hold with its class, TTL, label and masters. */
static void test_reads_writes_and_permits(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  hrl_options o = check_tolerant_options();
  o.lock.owner = "tester";
  hrl_client *c = fixture_client(&fx, &o);
  int64_t began = hrl_now_us();
  hrl_lock *r1 = hold(c, "rw", HRL_MODE_READ, 0);
  hrl_lock *r2 = hold(c, "rw", HRL_MODE_READ, 0);
  char t1[HRL_SHORT_TOKEN + 1], t2[HRL_SHORT_TOKEN + 1];
  short_of(r1, t1);
  short_of(r2, t2);
  /* One read gone from master 3: on two of three, still a quorum's. */
  freeReplyObject(fixture_cmd(&fx, 3, "HDEL rw %s", hrl_lock_token(r2)));
  hrl_inspection *r = inspect(c, "rw");
  int64_t took = (hrl_now_us() - began) / 1000 + 100;
  CHECK(r != NULL);
  if (r != NULL) {
    CHECK_INT(r->kind, HRL_KIND_RWLOCK);
    CHECK_STR(hrl_kind_name(r->kind), "read-write lock");
    CHECK_INT(r->verdict, HRL_VERDICT_HELD);
    CHECK_INT(r->holds, 2);
    CHECK_INT(r->holding, 3);
    CHECK_STR(r->token, t1);
    const hrl_hold_view *h1 = find_hold(r->hold, r->holds, t1);
    const hrl_hold_view *h2 = find_hold(r->hold, r->holds, t2);
    CHECK(h1 != NULL && h2 != NULL);
    if (h1 != NULL && h2 != NULL) {
      CHECK_STR(h1->hold, "read");
      CHECK_STR(h2->hold, "read");
      CHECK_INT(h1->holding, 3);
      CHECK_INT(h2->holding, 2);
      within(h1->ttl_ms, 30000, took, 5);
      CHECK_STR(h1->owner, "tester");
    }
    for (size_t i = 0; i < 3; i++) {
      const hrl_master_view *m = &r->master[i];
      CHECK_INT(m->kind, HRL_KIND_RWLOCK);
      CHECK_INT(m->holds, i == 2 ? 1 : 2);
      CHECK_INT(m->holds_listed, m->holds);
      CHECK(find_hold(m->hold, m->holds_listed, t1) != NULL);
      CHECK_STR(m->token, "(hash)");
    }
  }
  hrl_inspection_free(r);
  CHECK_STATUS(hrl_lock_release(r1), HRL_OK);
  CHECK_STATUS(hrl_lock_release(r2), HRL_OK);
  hrl_lock_free(r1);
  hrl_lock_free(r2);

  hrl_lock *w = hold(c, "rw", HRL_MODE_WRITE, 0);
  char tw[HRL_SHORT_TOKEN + 1];
  short_of(w, tw);
  r = inspect(c, "rw");
  CHECK(r != NULL && r->kind == HRL_KIND_RWLOCK && r->holds == 1 &&
        r->verdict == HRL_VERDICT_HELD);
  CHECK_STR(r != NULL ? r->hold[0].hold : NULL, "write");
  CHECK_STR(r != NULL ? r->hold[0].token : NULL, tw);
  hrl_inspection_free(r);
  CHECK_STATUS(hrl_lock_release(w), HRL_OK);
  hrl_lock_free(w);
  /* Released: the key is gone, nothing is held. */
  r = inspect(c, "rw");
  CHECK(r != NULL && r->kind == HRL_KIND_NONE && r->holds == 0 &&
        r->verdict == HRL_VERDICT_FREE);
  hrl_inspection_free(r);

  hrl_lock *p1 = hold(c, "jobs", HRL_MODE_PERMIT, 3);
  hrl_lock *p2 = hold(c, "jobs", HRL_MODE_PERMIT, 3);
  char tp[HRL_SHORT_TOKEN + 1];
  short_of(p2, tp);
  r = inspect(c, "jobs");
  CHECK(r != NULL && r->kind == HRL_KIND_SEMAPHORE && r->holds == 2 &&
        r->verdict == HRL_VERDICT_HELD);
  CHECK_STR(hrl_kind_name(HRL_KIND_SEMAPHORE), "semaphore");
  const hrl_hold_view *hp = r != NULL ? find_hold(r->hold, r->holds, tp) : NULL;
  char permit[12];
  snprintf(permit, sizeof permit, "%u", (unsigned)hrl_lock_permit(p2));
  CHECK_STR(hp != NULL ? hp->hold : NULL, permit);
  CHECK(hp != NULL && hp->holding == 3);
  hrl_inspection_free(r);

  /* A mutex's key is a mutex. */
  hrl_lock *lk = check_lock(c, "plain");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  r = inspect(c, "plain");
  CHECK(r != NULL && r->kind == HRL_KIND_MUTEX && r->holds == 0 &&
        r->master[0].kind == HRL_KIND_MUTEX);
  hrl_inspection_free(r);
  hrl_lock_free(lk);
  hrl_lock_free(p1);
  hrl_lock_free(p2);
  hrl_client_free(c);
  fixture_stop(&fx);
}

int main(void) {
  RUN(test_a_holder_three_waiters_one_master_down);
  RUN(test_an_inspection_writes_nothing);
  RUN(test_what_hiredlock_itself_left);
  RUN(test_reads_writes_and_permits);
  return finish_tests("test_inspect");
}
