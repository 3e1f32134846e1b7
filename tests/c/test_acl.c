/* An ACL user allowed only what a lock needs (docs/DEPLOYMENTS.md, "ACL
 * users"): the documented rules are enough for acquire, extend and release
 * (EVAL after NOSCRIPT too), on a standalone master and on a Redis Cluster
 * during a migration (ASKING); a key outside the pattern, or a command the
 * rules leave out, is refused as an authentication failure naming it. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

/* The line DEPLOYMENTS.md gives, for the key prefix "locks:". */
#define LOCK_RULES                                                             \
  "resetkeys ~locks:* resetchannels &locks:hiredlock:wake:* -@all +set +eval " \
  "+evalsha +get +del +pexpire +exists +pttl +time +zadd +zrange +zrem +hset " \
  "+hget +hdel +publish +subscribe"

static hrl_client *client_as(const char *url, const char *prefix) {
  hrl_options o;
  hrl_options_init(&o);
  o.connect_timeout_ms = 1000;
  o.timeout_ms = 500;
  o.key_prefix = prefix;
  o.key_prefix_len = strlen(prefix);
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_client_new(&url, 1, &o, &c, d, sizeof d), HRL_OK);
  return c;
}

/* url for the ACL user of a fixture: redis://locker:pw@127.0.0.1:PORT. */
static void user_url(char *out, size_t size, const char *scheme, int port) {
  snprintf(out, size, "%s://locker:pw@127.0.0.1:%d", scheme, port);
}

static void *release_soon(void *lock) {
  usleep(200 * 1000); /* the waiter is queued by then */
  CHECK_STATUS(hrl_lock_release(lock), HRL_OK);
  return NULL;
}

static void test_the_documented_rules_are_enough(void) {
  fixture fx;
  fixture_start(&fx, 1, "--acl-user locker:pw --acl-rules '" LOCK_RULES "'");
  char url[128];
  user_url(url, sizeof url, "redis", fx.port[0]);
  hrl_client *c = client_as(url, "locks:");
  hrl_lock *lk = check_lock(c, "acl");
  for (int k = 0; k < 3; k++) {
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    CHECK_STATUS(hrl_lock_extend(lk, 20000), HRL_OK);
    if (k == 1) {
      freeReplyObject(fixture_cmd(&fx, 1, "SCRIPT FLUSH")); /* NOSCRIPT */
    }
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  }
  CHECK_INT(fixture_int(&fx, 1, "EXISTS locks:acl"), 0);
  /* A waiter: queued (the queue script's commands), then handed the lock
   * by the release (PUBLISH, and SUBSCRIBE on its client's channel). */
  hrl_client *c2 = client_as(url, "locks:");
  hrl_lock *waiter = check_lock(c2, "acl");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  pthread_t t;
  pthread_create(&t, NULL, release_soon, lk);
  CHECK_STATUS(hrl_lock_acquire(waiter, 5000), HRL_OK);
  pthread_join(t, NULL);
  CHECK_STATUS(hrl_lock_release(waiter), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS locks:acl"), 0);
  hrl_lock_free(waiter);
  hrl_client_free(c2);
  hrl_lock_free(lk);
  hrl_client_free(c);

  /* Outside the key pattern: a permission refusal (not an authentication
   * failure: the password was fine), naming the command and key. */
  c = client_as(url, "other:");
  lk = check_lock(c, "acl");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_EPERM);
  CHECK_CONTAINS(hrl_lock_error(lk), "NOPERM");
  CHECK_CONTAINS(hrl_lock_error(lk), "; refused: SET on 'other:acl'");
  hrl_lock_free(lk);
  hrl_client_free(c);

  /* A command the rules leave out: PEXPIRE, which extend's script runs. */
  freeReplyObject(fixture_cmd(&fx, 1, "ACL SETUSER locker -pexpire"));
  c = client_as(url, "locks:");
  lk = check_lock(c, "acl");
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_extend(lk, 20000), HRL_EPERM);
  CHECK_CONTAINS(hrl_lock_error(lk), "can't run this command");
  CHECK_CONTAINS(hrl_lock_error(lk),
                 "; refused: the extend script on 'locks:acl'");
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* On a cluster, an ASK needs ASKING: +asking is on the line for clusters. */
static void test_a_cluster_needs_asking(void) {
  fixture fx;
  fixture_start(&fx, 3,
                "--cluster --acl-user locker:pw --acl-rules '" LOCK_RULES
                " +asking'");
  char url[128];
  user_url(url, sizeof url, "redis+cluster", fx.port[0]);
  hrl_client *c = client_as(url, "locks:");
  hrl_lock *lk = check_lock(c, "acl-cluster");
  char out[64];
  CHECK(fixture_run(&fx, "slot", "locks:acl-cluster", out, sizeof out));
  int slot = 0, owner = 0;
  CHECK(sscanf(out, "%d %d", &slot, &owner) == 2);
  char args[64];
  snprintf(args, sizeof args, "%d %d begin", slot, owner % 3 + 1);
  CHECK(fixture_run(&fx, "migrate", args, NULL, 0));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK); /* ASK, then ASKING */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  for (int i = 1; i <= 3; i++) { /* the same rules without +asking */
    freeReplyObject(fixture_cmd(&fx, i, "ACL SETUSER locker -asking"));
  }
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_EPERM);
  CHECK_CONTAINS(hrl_lock_error(lk), "NOPERM");
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

int main(void) {
  RUN(test_the_documented_rules_are_enough);
  RUN(test_a_cluster_needs_asking);
  return finish_tests("test_acl");
}
