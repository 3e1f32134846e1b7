/* Failover safety against real servers (docs/SAFETY.md, "Failover"): a vote
 * that counts only once replicas have the write (sync_replicas, WAIT), a
 * replica stopped, a failover forced through Sentinel, a master restarted
 * empty (restart_guard), one server under two names, and fences after a
 * failover. Each scenario runs without the option too and shows the double
 * grant the option prevents, so the test can fail. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static hrl_lock *lock_with(hrl_client *c, const char *name,
                           uint32_t sync_replicas, bool fenced) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.sync_replicas = sync_replicas;
  lo.fenced = fenced;
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  CHECK_STATUS(hrl_lock_new_with(c, name, strlen(name), &lo, &lk, d, sizeof d),
               HRL_OK);
  if (lk == NULL) {
    fprintf(stderr, "lock: %s\n", d);
    abort();
  }
  return lk;
}

static hrl_client *client_on(const char *const *urls, size_t n,
                             uint32_t restart_guard_ms) {
  hrl_options o = check_tolerant_options();
  o.restart_guard_ms = restart_guard_ms;
  return check_client(urls, n, &o);
}

/* A replica stopped: without sync_replicas the lock is granted on the
 * master alone, and a failover to that replica grants it again; with it,
 * the acquire is refused, says why, and leaves no key. */
static void test_replica_stopped(void) {
  fixture fx;
  fixture_start(&fx, 1, "--replicas 1");
  CHECK_INT(fx.replicas, 1);
  hrl_client *c = client_on(fx.urls, 1, 0);
  /* Healthy: the key is on the replica when the acquire returns. */
  hrl_lock *lk = lock_with(c, "fo:stopped", 1, false);
  CHECK_STATUS(hrl_lock_acquire(lk, 5000), HRL_OK); /* a new replica may lag */
  char value[64] = "";
  CHECK(fixture_cli(&fx, "r1", "GET fo:stopped", value, sizeof value));
  CHECK_STR(value, hrl_lock_token(lk));
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);

  CHECK(fixture_run(&fx, "kill", "r1", NULL, 0));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ESERVER);
  char want[96];
  snprintf(want, sizeof want, "127.0.0.1:%d: 0 of 1 replicas acknowledged",
           fx.port[0]);
  CHECK_CONTAINS(hrl_lock_error(lk), want);
  CHECK(!hrl_lock_held(lk));
  CHECK_INT(fixture_count_key(&fx, "fo:stopped", 10), 0); /* cleaned up */
  /* A waiting acquire keeps trying while the replica is away, and reports
   * why at its deadline (not a timeout: nobody held the lock). */
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 1500), HRL_ESERVER);
  CHECK((hrl_now_us() - t0) / 1000 >= 1400);
  CHECK_CONTAINS(hrl_lock_error(lk), "replicas acknowledged");
  CHECK_INT(fixture_count_key(&fx, "fo:stopped", 10), 0);

  /* The same without sync_replicas: granted on the master alone; the
   * master dies, the replica (restarted empty) is promoted, and a second
   * client is granted the same lock while the first holds it. */
  hrl_lock *plain = lock_with(c, "fo:stopped", 0, false);
  CHECK_STATUS(hrl_lock_acquire(plain, 0), HRL_OK);
  CHECK(fixture_ctl(&fx, "kill", 1, NULL));
  CHECK(fixture_run(&fx, "restart", "r1", NULL, 0));
  CHECK(fixture_cli(&fx, "r1", "REPLICAOF NO ONE", NULL, 0));
  hrl_client *other = client_on(fx.replica_urls, 1, 0);
  hrl_lock *second = lock_with(other, "fo:stopped", 0, false);
  CHECK_STATUS(hrl_lock_acquire(second, 0), HRL_OK);
  CHECK(hrl_lock_held(plain) && hrl_lock_held(second)); /* the double grant */
  hrl_lock_free(second);
  hrl_client_free(other);
  hrl_lock_free(plain);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* A waiting acquire through a replica outage: the holder's release cannot
 * be claimed while no replica acknowledges, and the waiter gets the lock
 * once the replica is back (Redisson's waiters never recovered). */
static void test_waiter_recovers(void) {
  fixture fx;
  fixture_start(&fx, 1, "--replicas 1");
  hrl_client *c = client_on(fx.urls, 1, 0);
  hrl_lock *holder = lock_with(c, "fo:recover", 1, false);
  hrl_lock *waiter = lock_with(c, "fo:recover", 1, false);
  CHECK_STATUS(hrl_lock_acquire(holder, 5000), HRL_OK);
  CHECK(fixture_run(&fx, "kill", "r1", NULL, 0));
  CHECK(fixture_run(&fx, "restart", "r1 --delay 1", NULL, 0));
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(waiter, 10000), HRL_OK);
  int64_t ms = (hrl_now_us() - t0) / 1000;
  CHECK(ms >= 700 && ms < 9000);
  char value[64] = "";
  CHECK(fixture_cli(&fx, "r1", "GET fo:recover", value, sizeof value));
  CHECK_STR(value, hrl_lock_token(waiter));
  CHECK_STATUS(hrl_lock_release(waiter), HRL_OK);
  hrl_lock_free(waiter);
  hrl_lock_free(holder);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* A master's URL sets its own count: here 2 on the first master (two
 * replicas), 1 on the second (the lock's), each its own WAIT. */
static void test_url_counts(void) {
  fixture fx;
  fixture_start(&fx, 2, "--replicas 2");
  char first[300];
  snprintf(first, sizeof first, "%s?sync_replicas=2", fx.url[0]);
  const char *urls[] = {first, fx.url[1]};
  hrl_client *c = client_on(urls, 2, 0);
  hrl_lock *lk = lock_with(c, "fo:counts", 1, false);
  CHECK_STATUS(hrl_lock_acquire(lk, 5000), HRL_OK);
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  /* One of the first master's two replicas down: 1 of 2 is too few
   * there, and with it the quorum of 2. */
  CHECK(fixture_run(&fx, "kill", "r2", NULL, 0));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ESERVER);
  char want[96];
  snprintf(want, sizeof want, "127.0.0.1:%d: 1 of 2 replicas acknowledged",
           fx.port[0]);
  CHECK_CONTAINS(hrl_lock_error(lk), want);
  CHECK_INT(fixture_count_key(&fx, "fo:counts", 9), 0);
  /* ?sync_replicas=0 turns the wait off for that master. */
  char off[300];
  snprintf(off, sizeof off, "%s?sync_replicas=0", fx.url[0]);
  const char *urls_off[] = {off, fx.url[1]};
  hrl_client *c2 = client_on(urls_off, 2, 0);
  hrl_lock *lk2 = lock_with(c2, "fo:counts", 1, false);
  CHECK_STATUS(hrl_lock_acquire(lk2, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk2), HRL_OK);
  hrl_lock_free(lk2);
  hrl_client_free(c2);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* An extend (and so a renewal) counts only what replicas acknowledged. */
static void test_extend_waits(void) {
  fixture fx;
  fixture_start(&fx, 1, "--replicas 1");
  hrl_client *c = client_on(fx.urls, 1, 0);
  hrl_lock *lk = lock_with(c, "fo:extend", 1, false);
  CHECK_STATUS(hrl_lock_acquire(lk, 5000), HRL_OK);
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_OK); /* the script is cached */
  CHECK(fixture_run(&fx, "kill", "r1", NULL, 0));
  CHECK_STATUS(hrl_lock_extend(lk, 60000), HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(lk), "0 of 1 replicas acknowledged");
  CHECK(hrl_lock_held(lk));
  CHECK(hrl_lock_validity_ms(lk) <= 30000); /* not the unacknowledged 60 s */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static int sentinel_failover(fixture *fx) {
  char out[16] = "";
  CHECK(fixture_run(fx, "failover", NULL, out, sizeof out));
  return atoi(out);
}

/* Waits until node i is a replica of the new primary, in sync. */
static void wait_demoted(fixture *fx, int i) {
  char node[8];
  snprintf(node, sizeof node, "%d", i);
  for (int k = 0; k < 300; k++) {
    redisReply *r = fixture_cmd(fx, i, "INFO replication");
    bool done = r != NULL && r->type == REDIS_REPLY_STRING &&
                strstr(r->str, "role:slave") != NULL &&
                strstr(r->str, "master_link_status:up") != NULL;
    freeReplyObject(r);
    if (done) {
      return;
    }
    usleep(100 * 1000);
  }
  CHECK(!"the old primary was never demoted");
}

/* A forced failover: a client whose connection is still on the old
 * primary locks in the window before Sentinel demotes it. Without
 * sync_replicas that lock is granted, lost with the demotion, and granted
 * again to the next client; with it, it is refused (the promoted replica
 * no longer acknowledges anything there). */
static void failover_window(uint32_t sync_replicas, bool *double_grant) {
  fixture fx;
  fixture_start(&fx, 2, "--sentinels 1");
  hrl_client *a = client_on((const char *[]){fx.sentinel_url}, 1, 0);
  hrl_client *b = client_on((const char *[]){fx.sentinel_url}, 1, 0);
  hrl_lock *la = lock_with(a, "fo:window", sync_replicas, false);
  hrl_lock *lb = lock_with(b, "fo:window", sync_replicas, false);
  CHECK_STATUS(hrl_lock_acquire(la, 5000), HRL_OK); /* connects a */
  CHECK_STATUS(hrl_lock_release(la), HRL_OK);
  int old = 1, now = sentinel_failover(&fx);
  CHECK_INT(now, 2);
  hrl_status st = hrl_lock_acquire(la, 0);
  if (sync_replicas > 0) {
    CHECK_STATUS(st, HRL_ESERVER);
    CHECK_CONTAINS(hrl_lock_error(la), "0 of 1 replicas acknowledged");
    CHECK_INT(fixture_int(&fx, old, "EXISTS fo:window"), 0);
  }
  wait_demoted(&fx, old);
  CHECK_STATUS(hrl_lock_acquire(lb, 5000), HRL_OK);
  *double_grant = st == HRL_OK && hrl_lock_held(la) && hrl_lock_held(lb);
  hrl_lock_free(la);
  hrl_lock_free(lb);
  hrl_client_free(a);
  hrl_client_free(b);
  fixture_stop(&fx);
}

static void test_sentinel_failover_window(void) {
  bool doubled = false;
  failover_window(0, &doubled);
  CHECK(doubled); /* the hole, without the option */
  failover_window(1, &doubled);
  CHECK(!doubled);
}

/* Fences after a failover: the next holder's fence must be greater than
 * every fence granted before. Without sync_replicas a grant in the window
 * raised the old primary's counter only, and the next holder gets the
 * same fence; with it, that grant is refused. */
static void fence_after_failover(uint32_t sync_replicas, uint64_t *granted,
                                 uint64_t *next) {
  fixture fx;
  fixture_start(&fx, 2, "--sentinels 1");
  hrl_client *a = client_on((const char *[]){fx.sentinel_url}, 1, 0);
  hrl_client *b = client_on((const char *[]){fx.sentinel_url}, 1, 0);
  hrl_lock *la = lock_with(a, "fo:fence", sync_replicas, true);
  hrl_lock *lb = lock_with(b, "fo:fence", sync_replicas, true);
  CHECK_STATUS(hrl_lock_acquire(la, 5000), HRL_OK);
  if (!hrl_lock_held(la)) {
    fprintf(stderr, "first acquire: %s\n", hrl_lock_error(la));
  }
  *granted = hrl_lock_fence(la);
  CHECK_STATUS(hrl_lock_release(la), HRL_OK);
  sentinel_failover(&fx);
  if (hrl_lock_acquire(la, 0) == HRL_OK) {
    *granted = hrl_lock_fence(la); /* the window's grant */
    CHECK_STATUS(hrl_lock_release(la), HRL_OK);
  }
  wait_demoted(&fx, 1);
  CHECK_STATUS(hrl_lock_acquire(lb, 5000), HRL_OK);
  *next = hrl_lock_fence(lb);
  hrl_lock_free(la);
  hrl_lock_free(lb);
  hrl_client_free(a);
  hrl_client_free(b);
  fixture_stop(&fx);
}

static void test_fence_after_failover(void) {
  uint64_t granted = 0, next = 0;
  fence_after_failover(0, &granted, &next);
  CHECK(next <= granted); /* the hole: a fence that does not grow */
  fence_after_failover(1, &granted, &next);
  CHECK(granted >= 1 && next > granted);
}

/* A master restarted empty: lock A was granted by masters 1 and 2 while 3
 * was down; 1 restarts without its data and 3 comes back. Without
 * restart_guard, B builds a quorum out of 1 and 3 while A holds the lock;
 * with it, 1 and 3 give no vote until they have been up that long. (3 s:
 * INFO counts whole seconds, and a loaded machine may take one to restart
 * a server and reach it.) */
static void test_restart_guard(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  usleep(3200 * 1000); /* the servers are older than the guard below */
  hrl_client *a = client_on(fx.urls, 3, 0);
  hrl_client *plain = client_on(fx.urls, 3, 0);
  hrl_client *guarded = client_on(fx.urls, 3, 3000);
  hrl_lock *la = lock_with(a, "fo:restart", 0, false);
  hrl_lock *lg = lock_with(guarded, "fo:restart", 0, false);
  CHECK_STATUS(hrl_lock_acquire(lg, 0), HRL_OK); /* connects: run_ids */
  CHECK_STATUS(hrl_lock_release(lg), HRL_OK);
  CHECK(fixture_ctl(&fx, "kill", 3, NULL));
  CHECK_STATUS(hrl_lock_acquire(la, 0), HRL_OK);
  CHECK(fixture_ctl(&fx, "restart", 1, NULL)); /* empty: no AOF */
  CHECK(fixture_ctl(&fx, "restart", 3, NULL));
  CHECK_STATUS(hrl_lock_acquire(lg, 0), HRL_ESERVER);
  char want[128];
  /* INFO counts whole seconds: 0, or 1 on a loaded machine. */
  snprintf(want, sizeof want, "127.0.0.1:%d: restarted ", fx.port[0]);
  CHECK_CONTAINS(hrl_lock_error(lg), want);
  CHECK_CONTAINS(hrl_lock_error(lg), " s ago (new run_id), under "
                                     "restart_guard (3 s): no vote");
  snprintf(want, sizeof want, "127.0.0.1:%d: restarted ", fx.port[2]);
  CHECK_CONTAINS(hrl_lock_error(lg), want);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS fo:restart"), 0);
  hrl_lock *lp = lock_with(plain, "fo:restart", 0, false);
  CHECK_STATUS(hrl_lock_acquire(lp, 0), HRL_OK);
  CHECK(hrl_lock_held(la) && hrl_lock_held(lp)); /* the double grant */
  CHECK_STATUS(hrl_lock_release(lp), HRL_OK);
  CHECK_STATUS(hrl_lock_release(la), HRL_ENOTOWNED);
  /* Once the guard has passed, the restarted masters vote again. */
  usleep(3100 * 1000);
  CHECK_STATUS(hrl_lock_acquire(lg, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lg), HRL_OK);
  hrl_lock_free(lp);
  hrl_lock_free(lg);
  hrl_lock_free(la);
  hrl_client_free(guarded);
  hrl_client_free(plain);
  hrl_client_free(a);
  fixture_stop(&fx);
}

/* One server under two names (127.0.0.1 and localhost; TCP and its unix
 * socket): refused at the first handshake with both named, nothing left
 * behind, and every later acquire refused at once. */
static void test_one_server_two_names(void) {
  fixture fx;
  fixture_start(&fx, 2, NULL);
  char alias[128];
  snprintf(alias, sizeof alias, "redis://localhost:%d", fx.port[0]);
  const char *urls[] = {fx.urls[0], alias, fx.urls[1]};
  hrl_client *c = client_on(urls, 3, 0);
  hrl_lock *lk = lock_with(c, "fo:alias", 0, false);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_EINVAL);
  char want[128];
  snprintf(want, sizeof want,
           "masters 127.0.0.1:%d and localhost:%d are one "
           "server (run_id ",
           fx.port[0], fx.port[0]);
  CHECK_CONTAINS(hrl_lock_error(lk), want);
  CHECK_CONTAINS(hrl_lock_error(lk), "Redlock needs independent masters");
  CHECK(!hrl_lock_held(lk));
  CHECK_INT(fixture_count_key(&fx, "fo:alias", 8), 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 1000), HRL_EINVAL);
  CHECK_CONTAINS(hrl_lock_error(lk), "are one server");
  hrl_lock_free(lk);
  hrl_client_free(c);

  const char *by_socket[] = {fx.unix_urls[0], fx.urls[1], fx.urls[0]};
  c = client_on(by_socket, 3, 0);
  lk = lock_with(c, "fo:alias", 0, false);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_EINVAL);
  CHECK_CONTAINS(hrl_lock_error(lk), "are one server");
  CHECK_INT(fixture_count_key(&fx, "fo:alias", 8), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* An ACL user without INFO: the check of one server under two names falls
 * back to the URLs (locks work); a restart_guard cannot be kept and the
 * masters are refused, saying so. */
static void test_acl_without_info(void) {
  fixture fx;
  fixture_start(&fx, 2,
                "--acl-user locker:pw --acl-rules "
                "'~* &* +@all -info'");
  char u[2][256];
  const char *urls[2];
  for (int i = 0; i < 2; i++) {
    snprintf(u[i], sizeof u[i], "redis://locker:pw@127.0.0.1:%d", fx.port[i]);
    urls[i] = u[i];
  }
  hrl_client *c = client_on(urls, 2, 0);
  hrl_lock *lk = lock_with(c, "fo:acl", 0, false);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
  c = client_on(urls, 2, 1000);
  lk = lock_with(c, "fo:acl", 0, false);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_EAUTH);
  CHECK_CONTAINS(hrl_lock_error(lk), "restart_guard needs INFO: NOPERM");
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* The path of a valkey-server with WAITAOF (scripts/valkey-server.sh). */
static const char *valkey_server(void) {
  static char path[1024];
  char cmd[1200];
  const char *script = HRL_FIXTURE_SCRIPT;
  snprintf(cmd, sizeof cmd, "%.*s/scripts/valkey-server.sh",
           (int)(strstr(script, "/tests/fixtures/") - script), script);
  FILE *p = popen(cmd, "r");
  path[0] = '\0';
  if (p == NULL || fgets(path, sizeof path, p) == NULL) {
    path[0] = '\0';
  }
  if (p != NULL) {
    pclose(p);
  }
  path[strcspn(path, "\n")] = '\0';
  CHECK(path[0] == '/');
  return path;
}

static hrl_lock *aof_lock(hrl_client *c, uint32_t replicas) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.sync_replicas = replicas;
  lo.sync_aof = true;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new_with(c, "fo:aof", 6, &lo, &lk, NULL, 0), HRL_OK);
  return lk;
}

/* sync_aof: WAITAOF where the server has it (Valkey 9 with appendonly), a
 * clear refusal where it does not (Redis 7.0), never ignored. */
static void test_sync_aof(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL); /* the system's Redis 7.0: no WAITAOF */
  hrl_client *c = client_on(fx.urls, 1, 0);
  hrl_lock *lk = aof_lock(c, 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 2000), HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(lk), "sync_aof needs WAITAOF (Redis >= 7.2, "
                                     "Valkey >= 8), which this server lacks");
  CHECK_INT(fixture_count_key(&fx, "fo:aof", 6), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);

  setenv("HRL_REDIS_SERVER", valkey_server(), 1);
  fixture_start(&fx, 1, "--aof --replicas 1");
  unsetenv("HRL_REDIS_SERVER");
  /* A Valkey 9 replica reports its AOF fsyncs with its once-a-second
   * acknowledgement when the master's request raced the fsync (median
   * 7 ms, p90 650 ms, at most 961 ms in 40 tries here): room for that
   * (WAITAOF gets 1.2 s of the 3 s deadline). */
  hrl_options slow = check_tolerant_options();
  slow.timeout_ms = 3000;
  c = check_client(fx.urls, 1, &slow);
  lk = aof_lock(c, 1);
  CHECK_STATUS(hrl_lock_acquire(lk, 10000), HRL_OK);
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK(fixture_run(&fx, "kill", "r1", NULL, 0));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(lk), "0 of 1 replicas acknowledged (WAITAOF)");
  CHECK_INT(fixture_count_key(&fx, "fo:aof", 6), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);

  setenv("HRL_REDIS_SERVER", valkey_server(), 1);
  fixture_start(&fx, 1, NULL); /* no appendonly: nothing to fsync */
  unsetenv("HRL_REDIS_SERVER");
  c = client_on(fx.urls, 1, 0);
  lk = aof_lock(c, 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(lk), "appendonly is disabled");
  CHECK_INT(fixture_count_key(&fx, "fo:aof", 6), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

int main(void) {
  /* Sentinel closes the clients of a primary it demotes, our inspection
   * connections (hiredis, plain write()) among them. */
  signal(SIGPIPE, SIG_IGN);
  RUN(test_replica_stopped);
  RUN(test_waiter_recovers);
  RUN(test_url_counts);
  RUN(test_extend_waits);
  RUN(test_sentinel_failover_window);
  RUN(test_fence_after_failover);
  RUN(test_restart_guard);
  RUN(test_one_server_two_names);
  RUN(test_acl_without_info);
  RUN(test_sync_aof);
  return finish_tests("test_failover");
}
