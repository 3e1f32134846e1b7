/* A Redis Cluster as one master (redis+cluster://) against a real 3-node
 * cluster from the launcher (--cluster): the key goes to its slot's node,
 * MOVED teaches the slot map, ASK is followed with ASKING, a resharding
 * driven step by step (CLUSTER SETSLOT, MIGRATE: the launcher's migrate)
 * and one driven while clients loop lose no lock and leave no key, and the
 * cluster counts as one member of a quorum. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static hrl_client *client_on(const char *const *urls, size_t n) {
  hrl_options o = check_tolerant_options();
  return check_client(urls, n, &o);
}

/* The key's slot and the node that serves it (the launcher's `slot`). */
static int slot_of(fixture *fx, const char *key, int *owner) {
  char out[64] = "", quoted[128];
  int slot = -1;
  snprintf(quoted, sizeof quoted, "'%s'", key); /* a shell word */
  CHECK(fixture_run(fx, "slot", quoted, out, sizeof out));
  CHECK(sscanf(out, "%d %d", &slot, owner) == 2);
  return slot;
}

static void migrate(fixture *fx, int slot, int to, const char *stage) {
  char args[64];
  snprintf(args, sizeof args, "%d %d %s", slot, to, stage);
  CHECK(fixture_run(fx, "migrate", args, NULL, 0));
}

/* A counter of node's INFO section (errorstat_MOVED:count=,
 * cmdstat_asking:calls=); 0 when absent. */
static long long stat_of(fixture *fx, int node, const char *section,
                         const char *field) {
  redisReply *r = fixture_cmd(fx, node, "INFO %s", section);
  long long v = 0;
  const char *at = r != NULL && r->str != NULL ? strstr(r->str, field) : NULL;
  if (at != NULL) {
    v = atoll(at + strlen(field));
  }
  freeReplyObject(r);
  return v;
}

/* Whether node has key, seen as a client sent there by ASK would: ASKING
 * first (a migration's importing node answers only then); a redirect means
 * the node does not have it. */
static int has_key(fixture *fx, int node, const char *key) {
  freeReplyObject(fixture_cmd(fx, node, "ASKING"));
  redisReply *r = fixture_cmd(fx, node, "EXISTS %s", key);
  int has = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
  freeReplyObject(r);
  return has;
}

static long long moved(fixture *fx, int node) {
  return stat_of(fx, node, "errorstats", "errorstat_MOVED:count=");
}

static long long asked(fixture *fx, int node) {
  return stat_of(fx, node, "errorstats", "errorstat_ASK:count=");
}

static long long askings(fixture *fx, int node) {
  return stat_of(fx, node, "commandstats", "cmdstat_asking:calls=");
}

/* The slot of every name is the server's (CRC16, hash tags). */
static void test_slots_are_the_servers(fixture *fx) {
  hrl_client *c = client_on((const char *[]){fx->cluster_url}, 1);
  const char *names[] = {"a",
                         "{user1000}.following",
                         "foo{}{bar}",
                         "foo{{bar}}zap",
                         "foo{bar}{zap}",
                         "{}",
                         "x{y",
                         "123456789"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    int owner = 0;
    int slot = slot_of(fx, names[k], &owner);
    hrl_lock *lk = check_lock(c, names[k]);
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    /* The key is where its slot is served, and nowhere else. */
    redisReply *r = fixture_cmd(fx, owner, "GET %s", names[k]);
    CHECK(r != NULL && r->type == REDIS_REPLY_STRING &&
          strcmp(r->str, hrl_lock_token(lk)) == 0);
    freeReplyObject(r);
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
    CHECK_INT(fixture_count_key(fx, names[k], strlen(names[k])), 0);
    CHECK(slot >= 0 && slot < 16384);
    hrl_lock_free(lk);
  }
  hrl_client_free(c);
}

/* A name on each node: the first cycle learns the slot (at most one MOVED),
 * and later ones go straight to its node. */
static void test_moved_teaches_the_slot(fixture *fx) {
  hrl_client *c = client_on((const char *[]){fx->cluster_url}, 1);
  long long before = moved(fx, 1) + moved(fx, 2) + moved(fx, 3);
  char name[32];
  int seen[4] = {0, 0, 0, 0};
  for (int k = 0; k < 60; k++) {
    snprintf(name, sizeof name, "cl:learn:%d", k);
    int owner = 0;
    slot_of(fx, name, &owner);
    seen[owner]++;
    hrl_lock *lk = check_lock(c, name);
    for (int cycle = 0; cycle < 3; cycle++) {
      CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
      CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
    }
    hrl_lock_free(lk);
  }
  long long after = moved(fx, 1) + moved(fx, 2) + moved(fx, 3);
  CHECK(seen[1] > 0 && seen[2] > 0 && seen[3] > 0);
  /* 60 names, 3 cycles each: a MOVED for the first acquire of a name not on
   * the node asked first, none after. */
  CHECK(after - before >= 1 && after - before <= 60);
  hrl_client_free(c);
}

/* A slot moves under a name whose node the client knows: MOVED sends it to
 * the new node, in the same call. */
static void test_moved_after_migration(fixture *fx) {
  hrl_client *c = client_on((const char *[]){fx->cluster_url}, 1);
  const char *name = "cl:moved";
  int owner = 0;
  int slot = slot_of(fx, name, &owner);
  int to = owner % 3 + 1;
  hrl_lock *lk = check_lock(c, name);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK); /* learns the slot */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  migrate(fx, slot, to, "all");
  long long m = moved(fx, owner);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_INT(moved(fx, owner), m + 1);
  CHECK_INT(fixture_int(fx, to, "EXISTS %s", name), 1);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(moved(fx, owner), m + 1); /* the map knows the new node now */
  CHECK_INT(fixture_count_key(fx, name, strlen(name)), 0);
  migrate(fx, slot, owner, "all");
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* A slot half migrated (begin): keys the old node still has are served
 * there; others ASK for the new node, which takes the command behind an
 * ASKING. Keys migrated under a held lock stay ours. */
static void test_ask_during_migration(fixture *fx) {
  hrl_client *c = client_on((const char *[]){fx->cluster_url}, 1);
  hrl_client *other = client_on((const char *[]){fx->cluster_url}, 1);
  const char *name = "cl:ask";
  int from = 0;
  int slot = slot_of(fx, name, &from);
  int to = from % 3 + 1;
  hrl_lock *lk = check_lock(c, name);
  hrl_lock *rival = check_lock(other, name);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK); /* on `from` */
  migrate(fx, slot, to, "begin");
  /* Held on `from`, which still has the key: no redirect for anyone. */
  CHECK_STATUS(hrl_lock_acquire(rival, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(has_key(fx, from, name) + has_key(fx, to, name), 0);
  /* No key on `from` now: ASK, and the key is made on `to`. */
  long long ask = asked(fx, from), asking = askings(fx, to);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK(asked(fx, from) > ask);
  CHECK(askings(fx, to) > asking);
  CHECK_INT(has_key(fx, to, name), 1);
  CHECK_INT(has_key(fx, from, name), 0);
  CHECK_STATUS(hrl_lock_acquire(rival, 0), HRL_ETIMEOUT); /* ASK: held */
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_OK);           /* ASK again */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(has_key(fx, from, name) + has_key(fx, to, name), 0);
  /* Held on `from` while the keys move: extend and release follow ASK. */
  migrate(fx, slot, from, "end"); /* back to where it was, undone */
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  migrate(fx, slot, to, "begin");
  migrate(fx, slot, to, "keys");
  CHECK_INT(has_key(fx, to, name), 1);
  CHECK_STATUS(hrl_lock_acquire(rival, 0), HRL_ETIMEOUT);
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_OK);
  migrate(fx, slot, to, "end"); /* now MOVED */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_count_key(fx, name, strlen(name)), 0);
  CHECK_STATUS(hrl_lock_acquire(rival, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(rival), HRL_OK);
  migrate(fx, slot, from, "all");
  hrl_lock_free(lk);
  hrl_lock_free(rival);
  hrl_client_free(c);
  hrl_client_free(other);
}

static hrl_lock *fenced_lock(hrl_client *c, const char *name) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.fenced = true;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new_with(c, name, strlen(name), &lo, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

/* A fenced acquire refused on the node the slot is leaving (the lock is
 * held there) whose INCR is redirected (its counter migrated already):
 * the pipeline is not sent again to the importing node, so no SET runs
 * there; no key is left on two nodes, and the migration's MIGRATE of the
 * rest does not fail with BUSYKEY. (Before: the key on both nodes.) */
static void test_refused_fenced_acquire_leaves_no_stray_key(fixture *fx) {
  hrl_client *c = client_on((const char *[]){fx->cluster_url}, 1);
  hrl_client *other = client_on((const char *[]){fx->cluster_url}, 1);
  const char *name = "cl:stray";
  int from = 0;
  int slot = slot_of(fx, name, &from);
  int to = from % 3 + 1;
  hrl_lock *holder = fenced_lock(c, name);
  hrl_lock *rival = fenced_lock(other, name);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  size_t counter_len;
  const char *counter = hrl_lock_fence_key(holder, &counter_len);
  migrate(fx, slot, to, "begin");
  redisReply *r = fixture_cmd(fx, from, "MIGRATE 127.0.0.1 %d %b 0 5000",
                              fx->port[to - 1], counter, counter_len);
  CHECK(r != NULL && r->type == REDIS_REPLY_STATUS);
  freeReplyObject(r);
  CHECK_STATUS(hrl_lock_acquire(rival, 0), HRL_ETIMEOUT); /* held */
  CHECK_INT(has_key(fx, to, name), 0);
  CHECK_INT(has_key(fx, from, name), 1);
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  CHECK_INT(has_key(fx, from, name) + has_key(fx, to, name), 0);
  migrate(fx, slot, to, "keys"); /* fails on a key already there */
  migrate(fx, slot, to, "end");
  CHECK_STATUS(hrl_lock_acquire(rival, 0), HRL_OK);
  CHECK(hrl_lock_fence(rival) > hrl_lock_fence(holder));
  CHECK_STATUS(hrl_lock_release(rival), HRL_OK);
  migrate(fx, slot, from, "all");
  hrl_lock_free(holder);
  hrl_lock_free(rival);
  hrl_client_free(c);
  hrl_client_free(other);
}

typedef struct later {
  hrl_lock *lock; /* released at release_ms */
  fixture *fx;    /* the migration ended at end_ms (0: not) */
  int slot, to;
  int release_ms, end_ms;
} later;

static void *do_later(void *arg) {
  later *l = arg;
  usleep((useconds_t)l->release_ms * 1000);
  CHECK_STATUS(hrl_lock_release(l->lock), HRL_OK);
  if (l->end_ms > 0) {
    usleep((useconds_t)(l->end_ms - l->release_ms) * 1000);
    migrate(l->fx, l->slot, l->to, "keys");
    migrate(l->fx, l->slot, l->to, "end");
  }
  return NULL;
}

/* Waiters while the lock's slot is held half-way through a migration
 * (begin: every key still on the old node): the queue's script cannot run
 * there (TRYAGAIN, or ASK and then TRYAGAIN on the new node once the key
 * is gone), so a waiter tries on the lock key alone, and takes it soon
 * after the holder's release at 0.3 s (before: not until its 3 s were
 * up, then false). A fenced waiter cannot be fenced while its key and
 * counter are split: it waits for the migration's end at 1.5 s, then
 * takes the lock with a greater fence (before: a server error at once). */
static void test_waiting_through_a_migration(fixture *fx) {
  for (int fenced = 0; fenced < 2; fenced++) {
    hrl_client *c = client_on((const char *[]){fx->cluster_url}, 1);
    hrl_client *other = client_on((const char *[]){fx->cluster_url}, 1);
    const char *name = fenced ? "cl:wait-fenced" : "cl:wait";
    int from = 0;
    int slot = slot_of(fx, name, &from);
    int to = from % 3 + 1;
    hrl_lock *holder = fenced ? fenced_lock(c, name) : check_lock(c, name);
    hrl_lock *waiter =
        fenced ? fenced_lock(other, name) : check_lock(other, name);
    CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
    uint64_t first = hrl_lock_fence(holder);
    migrate(fx, slot, to, "begin");
    later l = {holder, fx, slot, to, 300, fenced ? 1500 : 0};
    pthread_t t;
    pthread_create(&t, NULL, do_later, &l);
    int64_t t0 = hrl_now_us();
    hrl_status st = hrl_lock_acquire(waiter, fenced ? 5000 : 3000);
    int64_t took_ms = (hrl_now_us() - t0) / 1000;
    pthread_join(t, NULL);
    CHECK_STATUS(st, HRL_OK);
    if (st != HRL_OK) {
      fprintf(stderr, "%s waiter after %lld ms: %s\n",
              fenced ? "fenced" : "plain", (long long)took_ms,
              hrl_lock_error(waiter));
    }
    CHECK(took_ms >= 250);
    CHECK(fenced ? took_ms >= 1400 : took_ms < 2500);
    if (fenced) {
      CHECK(hrl_lock_fence(waiter) > first);
    }
    CHECK_STATUS(hrl_lock_release(waiter), HRL_OK);
    CHECK_INT(fixture_count_key(fx, name, strlen(name)), 0);
    /* Undone (the slot back where it was), or moved back. */
    migrate(fx, slot, from, fenced ? "all" : "end");
    hrl_lock_free(holder);
    hrl_lock_free(waiter);
    hrl_client_free(c);
    hrl_client_free(other);
  }
}

typedef struct looper {
  const char *url;
  const char *name;
  atomic_int *inside; /* holders at once: must never exceed 1 */
  atomic_bool *stop;
  long cycles, failures, overlaps;
  char error[HRL_DETAIL_MAX];
} looper;

static void *loop_locks(void *arg) {
  looper *l = arg;
  hrl_client *c = client_on((const char *[]){l->url}, 1);
  hrl_lock *lk = check_lock(c, l->name);
  while (!atomic_load(l->stop)) {
    hrl_status st = hrl_lock_acquire(lk, 5000);
    if (st != HRL_OK) {
      l->failures++;
      snprintf(l->error, sizeof l->error, "acquire: %s: %s", hrl_strerror(st),
               hrl_lock_error(lk));
      continue;
    }
    if (atomic_fetch_add(l->inside, 1) != 0) {
      l->overlaps++;
    }
    usleep(200);
    atomic_fetch_sub(l->inside, 1);
    st = hrl_lock_release(lk);
    if (st != HRL_OK) {
      l->failures++;
      snprintf(l->error, sizeof l->error, "release: %s: %s", hrl_strerror(st),
               hrl_lock_error(lk));
    }
    l->cycles++;
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return NULL;
}

/* Two clients contend for one name while its slot moves back and forth,
 * stage by stage: every call succeeds, never two holders at once, and no
 * key is left. */
static void test_resharding_during_a_run(fixture *fx) {
  const char *name = "cl:reshard";
  int home = 0;
  int slot = slot_of(fx, name, &home);
  atomic_int inside = 0;
  atomic_bool stop = false;
  looper loops[2];
  pthread_t threads[2];
  for (int k = 0; k < 2; k++) {
    loops[k] = (looper){fx->cluster_url, name, &inside, &stop, 0, 0, 0, ""};
    pthread_create(&threads[k], NULL, loop_locks, &loops[k]);
  }
  int at = home;
  for (int move = 0; move < 4; move++) {
    int to = at % 3 + 1;
    migrate(fx, slot, to, "begin");
    usleep(150 * 1000);
    migrate(fx, slot, to, "keys");
    usleep(150 * 1000);
    migrate(fx, slot, to, "end");
    usleep(150 * 1000);
    at = to;
  }
  atomic_store(&stop, true);
  for (int k = 0; k < 2; k++) {
    pthread_join(threads[k], NULL);
    if (loops[k].failures > 0) {
      fprintf(stderr, "looper %d: %ld failures, last: %s\n", k,
              loops[k].failures, loops[k].error);
    }
    CHECK_INT(loops[k].failures, 0);
    CHECK_INT(loops[k].overlaps, 0);
    CHECK(loops[k].cycles > 5);
  }
  CHECK_INT(fixture_count_key(fx, name, strlen(name)), 0);
  if (at != home) {
    migrate(fx, slot, home, "all");
  }
}

/* A cluster is one member of the quorum: with 2 standalone masters, a
 * cluster whose node is down leaves 2 of 3, still a quorum; the failure
 * names the node. */
static void test_one_member_of_a_quorum(fixture *fx) {
  fixture solo;
  fixture_start(&solo, 2, NULL);
  const char *urls[] = {fx->cluster_url, solo.urls[0], solo.urls[1]};
  hrl_client *c = client_on(urls, 3);
  CHECK_INT(hrl_client_masters(c), 3);
  CHECK_INT(hrl_client_quorum(c), 2);
  CHECK(strncmp(hrl_client_master_label(c, 0), "cluster 127.0.0.1:", 18) == 0);
  hrl_master_info info;
  CHECK(hrl_client_master_info(c, 0, &info) && info.cluster && !info.tls);
  const char *name = "cl:member";
  int owner = 0;
  slot_of(fx, name, &owner);
  hrl_lock *lk = check_lock(c, name);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  hrl_counts n;
  hrl_lock_counts(lk, &n);
  CHECK_INT(n.ok, 3);
  CHECK_INT(fixture_count_key(fx, name, strlen(name)), 1);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  fixture_ctl(fx, "pause", owner, NULL);
  hrl_options o = check_tolerant_options();
  o.timeout_ms = 100;
  hrl_client *quick = NULL;
  CHECK_STATUS(hrl_client_new(urls, 3, &o, &quick, NULL, 0), HRL_OK);
  hrl_lock *lk2 = check_lock(quick, name);
  CHECK_STATUS(hrl_lock_acquire(lk2, 0), HRL_OK); /* 2 of 3 */
  hrl_lock_counts(lk2, &n);
  CHECK_INT(n.ok, 2);
  CHECK_STATUS(hrl_lock_release(lk2), HRL_OK);
  fixture_ctl(fx, "resume", owner, NULL);
  /* The resumed node runs what waited for it: the SET, then the release
   * queued behind it on the same connection. */
  for (int k = 0; k < 300 && has_key(fx, owner, name); k++) {
    usleep(10 * 1000);
  }
  CHECK_INT(has_key(fx, owner, name), 0);
  hrl_lock_free(lk2);
  hrl_client_free(quick);
  /* Alone, a cluster node that is down is named in the failure. */
  hrl_client *alone = client_on((const char *[]){fx->cluster_url}, 1);
  hrl_lock *lk3 = check_lock(alone, name);
  CHECK_STATUS(hrl_lock_acquire(lk3, 0), HRL_OK); /* learns the node */
  CHECK_STATUS(hrl_lock_release(lk3), HRL_OK);
  fixture_ctl(fx, "kill", owner, NULL);
  CHECK_STATUS(hrl_lock_acquire(lk3, 0), HRL_ECONNECT);
  char want[64];
  snprintf(want, sizeof want, ": node 127.0.0.1:%d: connection refused",
           fx->port[owner - 1]);
  CHECK_CONTAINS(hrl_lock_error(lk3), want);
  fixture_ctl(fx, "restart", owner, NULL);
  CHECK_STATUS(hrl_lock_acquire(lk3, 2000), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk3), HRL_OK);
  hrl_lock_free(lk3);
  hrl_client_free(alone);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&solo);
}

/* A seed that is down: the next acquire attempt asks another node. */
static void test_dead_seed(fixture *fx) {
  char url[1100];
  snprintf(url, sizeof url, "redis+cluster://127.0.0.1:1,%s",
           fx->cluster_url + strlen("redis+cluster://"));
  hrl_client *c = client_on((const char *[]){url}, 1);
  hrl_lock *lk = check_lock(c, "cl:seed");
  CHECK_STATUS(hrl_lock_acquire(lk, 2000), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static fixture cluster;

#define WITH_CLUSTER(fn)                                                       \
  static void fn##_run(void) {                                                 \
    fn(&cluster);                                                              \
  }
WITH_CLUSTER(test_slots_are_the_servers)
WITH_CLUSTER(test_moved_teaches_the_slot)
WITH_CLUSTER(test_moved_after_migration)
WITH_CLUSTER(test_ask_during_migration)
WITH_CLUSTER(test_resharding_during_a_run)
WITH_CLUSTER(test_refused_fenced_acquire_leaves_no_stray_key)
WITH_CLUSTER(test_waiting_through_a_migration)
WITH_CLUSTER(test_dead_seed)
WITH_CLUSTER(test_one_member_of_a_quorum)

int main(void) {
  fixture_start(&cluster, 3, "--cluster");
  run_test("test_slots_are_the_servers", test_slots_are_the_servers_run);
  run_test("test_moved_teaches_the_slot", test_moved_teaches_the_slot_run);
  run_test("test_moved_after_migration", test_moved_after_migration_run);
  run_test("test_ask_during_migration", test_ask_during_migration_run);
  run_test("test_resharding_during_a_run", test_resharding_during_a_run_run);
  run_test("test_refused_fenced_acquire_leaves_no_stray_key",
           test_refused_fenced_acquire_leaves_no_stray_key_run);
  run_test("test_waiting_through_a_migration",
           test_waiting_through_a_migration_run);
  run_test("test_dead_seed", test_dead_seed_run);
  run_test("test_one_member_of_a_quorum", test_one_member_of_a_quorum_run);
  fixture_stop(&cluster);
  return finish_tests("test_cluster");
}
