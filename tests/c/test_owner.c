/* Owner labels against real servers: the lock key keeps the token (what
 * redis-py reads), the label sits in S(K, ":owner:" token) with the lock's
 * TTL, follows extends and renewals, goes with the release, is written by
 * a waiter's tries, and a refused attempt never touches the holder's. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static fixture fx;

static hrl_lock *labelled(hrl_client *c, const char *name, const char *owner,
                          uint32_t ttl_ms, bool lease) {
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.owner = owner;
  lo.ttl_ms = ttl_ms;
  lo.auto_renew = lease;
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  CHECK_STATUS(hrl_lock_new_with(c, name, strlen(name), &lo, &lk, d, sizeof d),
               HRL_OK);
  return lk;
}

/* The label key of name's hold with token. */
static void label_key(char *out, size_t size, const char *name,
                      const char *token) {
  snprintf(out, size, "%s{%s}:owner:%s", name, name, token);
}

static void label_of(hrl_lock *lk, const char *name, char *out, size_t size) {
  char key[256];
  label_key(key, sizeof key, name, hrl_lock_token(lk));
  fixture_get(&fx, 1, key, strlen(key), out, size);
}

static long long label_pttl(hrl_lock *lk, const char *name) {
  char key[256];
  label_key(key, sizeof key, name, hrl_lock_token(lk));
  return fixture_int(&fx, 1, "PTTL %s", key);
}

static void test_the_label_beside_the_token(void) {
  hrl_options o = check_tolerant_options();
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *lk = labelled(c, "wire", "job %h:%p", 20000, false);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  char value[128], label[256], host[256], want[300];
  fixture_get(&fx, 1, "wire", 4, value, sizeof value);
  CHECK_STR(value, hrl_lock_token(lk)); /* redis-py's view: the token */
  gethostname(host, sizeof host);
  snprintf(want, sizeof want, "job %s:%ld", host, (long)getpid());
  label_of(lk, "wire", label, sizeof label);
  CHECK_STR(label, want);
  long long pttl = label_pttl(lk, "wire");
  CHECK(pttl > 19000 && pttl <= 20000);
  CHECK_STATUS(hrl_lock_extend(lk, 5000), HRL_OK);
  pttl = label_pttl(lk, "wire");
  CHECK(pttl > 4000 && pttl <= 5000);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "DBSIZE"), 0); /* nothing left behind */
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_a_refused_attempt_leaves_the_holders_label(void) {
  hrl_options o = check_tolerant_options();
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *holder = labelled(c, "busy", "holder", 20000, false);
  hrl_lock *other = labelled(c, "busy", "other", 3000, false);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(other, 0), HRL_ETIMEOUT);
  char label[64];
  label_of(holder, "busy", label, sizeof label);
  CHECK_STR(label, "holder");
  /* The refused attempt's own label (its token's) lives no longer than
   * its TTL. */
  redisReply *keys = fixture_cmd(&fx, 1, "KEYS busy{busy}:owner:*");
  CHECK(keys != NULL && keys->elements == 2);
  for (size_t k = 0; keys != NULL && k < keys->elements; k++) {
    long long pttl = fixture_int(&fx, 1, "PTTL %s", keys->element[k]->str);
    char who[64];
    fixture_get(&fx, 1, keys->element[k]->str, keys->element[k]->len, who,
                sizeof who);
    CHECK(strcmp(who, "holder") == 0
              ? pttl > 19000
              : strcmp(who, "other") == 0 && pttl > 0 && pttl <= 3000);
  }
  freeReplyObject(keys);
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  hrl_lock_free(holder);
  hrl_lock_free(other);
  hrl_client_free(c);
  freeReplyObject(fixture_cmd(&fx, 1, "FLUSHALL"));
}

static void test_renewals_keep_the_label(void) {
  hrl_options o = check_tolerant_options();
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *lk = labelled(c, "lease", "renewed", 600, true);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  usleep(1500 * 1000); /* past two TTLs: renewed a few times */
  CHECK(hrl_lock_held(lk));
  char label[64];
  label_of(lk, "lease", label, sizeof label);
  CHECK_STR(label, "renewed");
  CHECK(label_pttl(lk, "lease") > 0);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "DBSIZE"), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

typedef struct waiting {
  hrl_lock *lk;
  hrl_status st;
} waiting;

static void *wait_for(void *arg) {
  waiting *w = arg;
  w->st = hrl_lock_acquire(w->lk, 10000);
  return NULL;
}

static void test_a_waiter_is_labelled_while_it_waits(void) {
  hrl_options o = check_tolerant_options();
  o.retry_delay_ms = 5000; /* woken by the hand-off, not by polling */
  o.retry_jitter_ms = 0;
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *holder = labelled(c, "line", "first", 20000, false);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  waiting w = {labelled(c, "line", "second", 20000, false), HRL_OK};
  pthread_t t;
  pthread_create(&t, NULL, wait_for, &w);
  hrl_inspection *r = NULL;
  for (int k = 0; k < 200; k++) {
    hrl_inspection_free(r);
    r = NULL;
    CHECK_STATUS(hrl_client_inspect(c, "line", 4, &r, NULL, 0), HRL_OK);
    if (r != NULL && r->master[0].listed == 1 &&
        r->master[0].waiters[0].owner[0] != '\0') {
      break;
    }
    usleep(10 * 1000);
  }
  CHECK(r != NULL && r->master[0].listed == 1);
  CHECK_STR(r != NULL ? r->master[0].waiters[0].owner : NULL, "second");
  CHECK_STR(r != NULL ? r->owner : NULL, "first");
  hrl_inspection_free(r);
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  pthread_join(t, NULL);
  CHECK_STATUS(w.st, HRL_OK);
  r = NULL;
  CHECK_STATUS(hrl_client_inspect(c, "line", 4, &r, NULL, 0), HRL_OK);
  CHECK_STR(r != NULL ? r->owner : NULL, "second");
  CHECK(r != NULL && r->master[0].queued == 0);
  hrl_inspection_free(r);
  CHECK_STATUS(hrl_lock_release(w.lk), HRL_OK);
  hrl_lock_free(w.lk);
  hrl_lock_free(holder);
  hrl_client_free(c);
  freeReplyObject(fixture_cmd(&fx, 1, "FLUSHALL"));
}

static void test_fenced_locks_on_three_masters(void) {
  fixture f3;
  fixture_start(&f3, 3, NULL);
  hrl_options o = check_tolerant_options();
  o.lock.owner = "fenced-%p";
  hrl_client *c = fixture_client(&f3, &o);
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.fenced = true;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new_with(c, "f", 1, &lo, &lk, NULL, 0), HRL_OK);
  for (uint64_t k = 1; k <= 3; k++) {
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    CHECK_INT(hrl_lock_fence(lk), k);
    char key[128], label[64], want[64];
    snprintf(key, sizeof key, "f{f}:owner:%s", hrl_lock_token(lk));
    snprintf(want, sizeof want, "fenced-%ld", (long)getpid());
    for (int node = 1; node <= 3; node++) {
      fixture_get(&f3, node, key, strlen(key), label, sizeof label);
      CHECK_STR(label, want);
    }
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
    CHECK_INT(fixture_count_key(&f3, key, strlen(key)), 0);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&f3);
}

static void test_a_forked_child_says_its_own_pid(void) {
  hrl_options o = check_tolerant_options();
  o.lock.owner = HRL_OWNER_HOST_PID;
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *lk = check_lock(c, "forked");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK); /* the parent's label */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  pid_t pid = fork();
  if (pid == 0) {
    hrl_client_after_fork(c);
    fixture_forget(&fx);
    bool ok = hrl_lock_acquire(lk, 0) == HRL_OK;
    char key[128], label[128], host[128], want[300];
    snprintf(key, sizeof key, "forked{forked}:owner:%s", hrl_lock_token(lk));
    fixture_get(&fx, 1, key, strlen(key), label, sizeof label);
    gethostname(host, sizeof host);
    snprintf(want, sizeof want, "%s:%ld", host, (long)getpid());
    ok = ok && strcmp(label, want) == 0 && hrl_lock_release(lk) == HRL_OK;
    hrl_lock_free(lk); /* nothing left for valgrind to call lost */
    hrl_client_free(c);
    fixture_forget(&fx);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

int main(void) {
  fixture_start(&fx, 1, NULL);
  RUN(test_the_label_beside_the_token);
  RUN(test_a_refused_attempt_leaves_the_holders_label);
  RUN(test_renewals_keep_the_label);
  RUN(test_a_waiter_is_labelled_while_it_waits);
  RUN(test_fenced_locks_on_three_masters);
  RUN(test_a_forked_child_says_its_own_pid);
  fixture_stop(&fx);
  return finish_tests("test_owner");
}
