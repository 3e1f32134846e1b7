/* Correctness under attack (issue 13), against real Redis: a refused
 * handshake leaves no key, a release that reached too few masters ends the
 * hold and can be finished by a retry, a late master's NOSCRIPT cannot
 * keep a release from running, validity is judged on a clock that counts
 * suspended time, and fork() while another thread is in a round is safe. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static hrl_client *client_on(const char *const *urls, size_t n,
                             uint32_t timeout_ms) {
  hrl_options o;
  hrl_options_init(&o);
  o.timeout_ms = timeout_ms;
  o.connect_timeout_ms = 1000;
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_client_new(urls, n, &o, &c, d, sizeof d), HRL_OK);
  return c;
}

static hrl_lock *lock_on(hrl_client *c, const char *name, uint32_t ttl_ms) {
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, name, strlen(name), ttl_ms, &lk, NULL, 0),
               HRL_OK);
  return lk;
}

/* One attempt with a client on url; returns its status and message. */
static hrl_status attempt(const char *url, const char *name, char *err,
                          size_t size) {
  hrl_client *c = client_on(&url, 1, 200);
  hrl_lock *lk = lock_on(c, name, 10000);
  hrl_status st = hrl_lock_acquire(lk, 0);
  snprintf(err, size, "%s", hrl_lock_error(lk));
  if (st == HRL_OK) {
    hrl_lock_release(lk);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return st;
}

/* Before the fix, the SET went out pipelined behind the AUTH or SELECT and
 * ran anyway, as the default user in database 0: the key stayed a TTL. */
static void test_refused_handshake_leaves_no_key(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL);
  char url[256], err[HRL_DETAIL_MAX];

  snprintf(url, sizeof url, "redis://:nopass@127.0.0.1:%d", fx.port[0]);
  CHECK_STATUS(attempt(url, "hs:auth", err, sizeof err), HRL_EAUTH);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS hs:auth"), 0);

  snprintf(url, sizeof url, "redis://nobody:pw@127.0.0.1:%d", fx.port[0]);
  CHECK_STATUS(attempt(url, "hs:user", err, sizeof err), HRL_EAUTH);
  CHECK_CONTAINS(err, "WRONGPASS");
  CHECK_INT(fixture_int(&fx, 1, "EXISTS hs:user"), 0);

  snprintf(url, sizeof url, "redis://127.0.0.1:%d/99", fx.port[0]);
  CHECK_STATUS(attempt(url, "hs:db", err, sizeof err), HRL_ESERVER);
  CHECK_CONTAINS(err, "DB index is out of range");
  CHECK_INT(fixture_int(&fx, 1, "EXISTS hs:db"), 0);

  /* A user that may not run SET (NOPERM): refused, nothing written. */
  redisReply *r = fixture_cmd(&fx, 1, "ACL SETUSER noset on >pw ~* +ping");
  freeReplyObject(r);
  snprintf(url, sizeof url, "redis://noset:pw@127.0.0.1:%d", fx.port[0]);
  CHECK_STATUS(attempt(url, "hs:noperm", err, sizeof err), HRL_EPERM);
  CHECK_CONTAINS(err, "NOPERM");
  CHECK_CONTAINS(err, "; refused: SET on 'hs:noperm'");
  CHECK_INT(fixture_int(&fx, 1, "EXISTS hs:noperm"), 0);

  /* The right database still works, on a connection that is reused. */
  snprintf(url, sizeof url, "redis://127.0.0.1:%d/3", fx.port[0]);
  hrl_client *c = client_on((const char *[]){url}, 1, 200);
  hrl_lock *lk = lock_on(c, "hs:db3", 10000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS hs:db3"), 0);
  redisReply *moved = fixture_cmd(&fx, 1, "MOVE hs:db3 0");
  CHECK(moved == NULL || moved->integer == 0); /* it is in db 3, not 0 */
  freeReplyObject(moved);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* Granted by masters 1 and 2 of 3 (3 holds another token), then 2 dies:
 * the release confirms 1 of 2 needed. Before the fix the lock stayed
 * "held" with its old validity, and the retry, once 2 came back with our
 * key from its AOF, said "not owned" because 1 answered 0 (we had deleted
 * it there ourselves). */
static void test_unfinished_release_ends_the_hold(void) {
  fixture fx;
  fixture_start(&fx, 3, "--aof");
  redisReply *r = fixture_cmd(&fx, 3, "SET rel:part someone-else PX 60000");
  freeReplyObject(r);
  hrl_client *c = client_on(fx.urls, 3, 200);
  hrl_lock *lk = lock_on(c, "rel:part", 30000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  char token[HRL_TOKEN_LEN + 1];
  snprintf(token, sizeof token, "%s", hrl_lock_token(lk));
  fixture_ctl(&fx, "kill", 2, NULL);

  CHECK_STATUS(hrl_lock_release(lk), HRL_ECONNECT);
  CHECK_CONTAINS(hrl_lock_error(lk), "1 of 3 masters confirmed (2 needed)");
  CHECK(!hrl_lock_held(lk));
  CHECK_INT(hrl_lock_validity_ms(lk), 0);
  CHECK_STR(hrl_lock_token(lk), token); /* kept for the retry */
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_ENOTHELD);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS rel:part"), 0);

  fixture_ctl(&fx, "restart", 2, NULL); /* with our key, from its AOF */
  char value[64];
  fixture_get(&fx, 2, "rel:part", 8, value, sizeof value);
  CHECK_STR(value, token);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_int(&fx, 2, "EXISTS rel:part"), 0);
  fixture_get(&fx, 3, "rel:part", 8, value, sizeof value);
  CHECK_STR(value, "someone-else"); /* never ours: left alone */
  CHECK_STATUS(hrl_lock_release(lk), HRL_ENOTHELD);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* Waits up to 2 s for key to be gone from node; returns whether it went. */
static bool gone_within(fixture *fx, int node, const char *cmd) {
  for (int i = 0; i < 200; i++) {
    if (fixture_int(fx, node, cmd) == 0) {
      return true;
    }
    usleep(10 * 1000);
  }
  return false;
}

/* Master 3 lost its script cache and stops answering. Its replies come
 * after the rounds stopped listening, so a NOSCRIPT from it was dropped
 * unread and our key stayed there for a whole TTL after it resumed. */
static void test_late_master_noscript_still_releases(void) {
  fixture fx;
  fixture_start(&fx, 3, NULL);
  hrl_client *c = client_on(fx.urls, 3, 50);

  /* Late during the release itself: the first round it misses. */
  hrl_lock *lk = lock_on(c, "ns:first", 60000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK); /* loads the scripts */
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  freeReplyObject(fixture_cmd(&fx, 3, "SCRIPT FLUSH"));
  fixture_ctl(&fx, "pause", 3, NULL);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK); /* 2 of 3 */
  fixture_ctl(&fx, "resume", 3, NULL);
  CHECK(gone_within(&fx, 3, "EXISTS ns:first"));

  /* Known late already: the acquire's SET and the release queue up. */
  freeReplyObject(fixture_cmd(&fx, 3, "SCRIPT FLUSH"));
  fixture_ctl(&fx, "pause", 3, NULL);
  hrl_lock *late = lock_on(c, "ns:late", 60000);
  CHECK_STATUS(hrl_lock_acquire(late, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(late), HRL_OK);
  fixture_ctl(&fx, "resume", 3, NULL);
  CHECK(gone_within(&fx, 3, "EXISTS ns:late"));

  /* The connection stays in step: once master 3 has caught up (a slow
   * checker like valgrind may need a few cycles), all three grant again. */
  hrl_counts n = {0};
  for (int k = 0; k < 50 && n.ok < 3; k++) {
    CHECK_STATUS(hrl_lock_acquire(late, 0), HRL_OK);
    hrl_lock_counts(late, &n);
    CHECK_STATUS(hrl_lock_release(late), HRL_OK);
  }
  CHECK_INT(n.ok, 3);
  hrl_lock_free(late);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static int64_t clock_us(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Validity must be judged on a clock that counts suspended time, as the
 * TTLs on the masters do. A suspend cannot be made here, but a time
 * namespace can make CLOCK_BOOTTIME run 10^5 s ahead of CLOCK_MONOTONIC:
 * the core's clock must follow the first. */
static void test_clock_counts_suspended_time(void) {
  if (unshare(CLONE_NEWTIME) == 0) {
    FILE *f = fopen("/proc/self/timens_offsets", "w");
    CHECK(f != NULL);
    if (f != NULL) {
      fprintf(f, "boottime 100000 0\n");
      CHECK(fclose(f) == 0);
    }
    pid_t pid = fork(); /* the namespace applies to children */
    if (pid == 0) {
      int64_t boot = clock_us(CLOCK_BOOTTIME);
      int64_t now = hrl_now_us();
      int64_t mono = clock_us(CLOCK_MONOTONIC);
      bool ok = boot - mono > 99000LL * 1000000 && now - boot >= 0 &&
                now - boot < 1000000;
      if (!ok) {
        fprintf(stderr, "boottime %lld, hrl_now_us %lld, monotonic %lld\n",
                (long long)boot, (long long)now, (long long)mono);
      }
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("  (checked in a time namespace, boottime +100000 s)\n");
    return;
  }
  /* Without the privilege for a time namespace: the clock is BOOTTIME. */
  int64_t boot = clock_us(CLOCK_BOOTTIME);
  int64_t now = hrl_now_us();
  CHECK(now - boot >= 0 && now - boot < 1000000);
  printf("  (no time namespace here: compared with CLOCK_BOOTTIME)\n");
}

/* One thread runs rounds that open and close connections all the time (a
 * master that refuses, one that answers) while another forks: the child
 * must inherit no half-closed connection. The hooks keep rounds out while
 * the process is copied; the child then frees the client, which frees
 * every inherited connection once. */
typedef struct churn {
  hrl_client *client;
  hrl_lock *lock; /* the thread's, made here so a child can free its copy */
  atomic_bool stop;
} churn;

static void *churn_rounds(void *arg) {
  churn *ch = arg;
  while (!atomic_load(&ch->stop)) {
    if (hrl_lock_acquire(ch->lock, 0) == HRL_OK) {
      hrl_lock_release(ch->lock);
    }
  }
  return NULL;
}

static void test_fork_while_another_thread_is_in_a_round(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL);
  /* Nothing listens on ports 1 and 2: a connect and a close each round. */
  const char *urls[] = {fx.url[0], "redis://127.0.0.1:1",
                        "redis://127.0.0.1:2"};
  churn ch = {client_on(urls, 3, 50), NULL, false};
  ch.lock = lock_on(ch.client, "fork:churn", 10000);
  pthread_t t;
  pthread_create(&t, NULL, churn_rounds, &ch);
  int bad = 0;
  for (int i = 0; i < 200; i++) {
    hrl_client_fork_prepare(ch.client);
    pid_t pid = fork();
    if (pid == 0) {
      hrl_client_after_fork(ch.client);
      hrl_lock *lk = NULL;
      hrl_lock_new(ch.client, "fork:child", 10, 10000, &lk, NULL, 0);
      hrl_status st = hrl_lock_acquire(lk, 0);
      if (st == HRL_OK) {
        hrl_lock_release(lk);
      }
      hrl_lock_free(lk);
      hrl_lock_free(ch.lock); /* the thread's copy: no thread uses it here */
      hrl_client_free(ch.client);
      fixture_forget(&fx);
      _exit(st == HRL_ECONNECT ? 0 : 3); /* 1 of 3 masters answers */
    }
    hrl_client_fork_parent(ch.client);
    int status = 0;
    waitpid(pid, &status, 0);
    bad += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  atomic_store(&ch.stop, true);
  pthread_join(t, NULL);
  CHECK_INT(bad, 0);
  hrl_lock_free(ch.lock);
  hrl_client_free(ch.client);
  fixture_stop(&fx);
}

int main(void) {
  RUN(test_refused_handshake_leaves_no_key);
  RUN(test_unfinished_release_ends_the_hold);
  RUN(test_late_master_noscript_still_releases);
  RUN(test_fork_while_another_thread_is_in_a_round);
  /* Last: it moves this process's children into a time namespace. */
  RUN(test_clock_counts_suspended_time);
  return finish_tests("test_correctness");
}
