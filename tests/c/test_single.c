/* One master, real Redis: the plain lock's whole life, seen in Redis. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static fixture fx;

static hrl_lock *new_lock(hrl_client *c, const char *name, uint32_t ttl_ms) {
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_lock_new(c, name, strlen(name), ttl_ms, &lk, d, sizeof d),
               HRL_OK);
  return lk;
}

static void test_acquire_excludes_and_release_frees(void) {
  hrl_client *a = fixture_client(&fx, NULL);
  hrl_client *b = fixture_client(&fx, NULL);
  hrl_lock *la = new_lock(a, "single:basic", 10000);
  hrl_lock *lb = new_lock(b, "single:basic", 10000);
  int64_t start = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(la, 0), HRL_OK);
  CHECK(hrl_lock_held(la));
  char value[64];
  fixture_get(&fx, 1, "single:basic", 12, value, sizeof value);
  CHECK_STR(value, hrl_lock_token(la));
  long long pttl = fixture_int(&fx, 1, "PTTL single:basic");
  CHECK(pttl > 9000 && pttl <= 10000);
  /* ttl - elapsed - drift (1 % + 2 ms), with the time elapsed since the
   * acquire began as this test measured it (valgrind on a loaded machine
   * takes its time), read after the validity. */
  int64_t v = hrl_lock_validity_ms(la);
  int64_t elapsed_ms = (hrl_now_us() - start) / 1000;
  CHECK(v >= 10000 - 102 - elapsed_ms - 2 && v <= 10000 - 102);

  CHECK_STATUS(hrl_lock_acquire(lb, 0), HRL_ETIMEOUT);
  CHECK(!hrl_lock_held(lb));
  hrl_counts cnt;
  hrl_lock_counts(lb, &cnt);
  CHECK_INT(cnt.refused, 1);
  CHECK_INT(cnt.ok, 0);
  /* A wait of 300 ms retries and still times out, within a bound. */
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(lb, 300), HRL_ETIMEOUT);
  int64_t took_ms = (hrl_now_us() - t0) / 1000;
  CHECK(took_ms >= 300 && took_ms < 300 + 2 * 50 + 50);
  hrl_lock_counts(lb, &cnt);
  CHECK(cnt.attempts >= 2);
  CHECK_STATUS(hrl_lock_acquire(la, 0), HRL_EHELD);

  CHECK_STATUS(hrl_lock_release(la), HRL_OK);
  CHECK(!hrl_lock_held(la));
  CHECK_INT(fixture_int(&fx, 1, "EXISTS single:basic"), 0);
  CHECK_STATUS(hrl_lock_release(la), HRL_ENOTHELD);
  CHECK_STATUS(hrl_lock_acquire(lb, 0), HRL_OK);
  CHECK(strcmp(hrl_lock_token(la), hrl_lock_token(lb)) != 0);
  CHECK_STATUS(hrl_lock_release(lb), HRL_OK);
  hrl_lock_free(la);
  hrl_lock_free(lb);
  hrl_client_free(a);
  hrl_client_free(b);
}

static void test_waiter_gets_lock_after_release(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 20;
  o.retry_jitter_ms = 10;
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *holder = new_lock(c, "single:handoff", 10000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  pid_t pid = fork();
  if (pid == 0) {
    /* The child releases after 200 ms through the inherited client: it
     * must reconnect rather than use the parent's socket. */
    usleep(200 * 1000);
    hrl_status st = hrl_lock_release(holder);
    if (st != HRL_OK) {
      fprintf(stderr, "child release: %s %s\n", hrl_strerror(st),
              hrl_lock_error(holder));
    }
    /* Free the child's copies so leak checkers see a clean exit. */
    hrl_lock_free(holder);
    hrl_client_free(c);
    fixture_forget(&fx);
    _exit(st == HRL_OK ? 0 : 1);
  }
  hrl_lock *waiter = new_lock(c, "single:handoff", 10000);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(hrl_lock_acquire(waiter, 5000), HRL_OK);
  int64_t took_ms = (hrl_now_us() - t0) / 1000;
  CHECK(took_ms >= 150 && took_ms < 1000);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* The parent's connection still works after the child's use. */
  CHECK_STATUS(hrl_lock_release(waiter), HRL_OK);
  hrl_lock_free(holder);
  hrl_lock_free(waiter);
  hrl_client_free(c);
}

static void test_wrong_token_cannot_release_or_extend(void) {
  hrl_client *c = fixture_client(&fx, NULL);
  hrl_lock *lk = new_lock(c, "single:stolen", 10000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  /* Someone else's key now stands where ours was (our hold was lost). */
  freeReplyObject(fixture_cmd(
      &fx, 1, "SET single:stolen othertoken0000000000000000000000"));
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_ENOTOWNED);
  CHECK(!hrl_lock_held(lk));
  CHECK_INT(fixture_int(&fx, 1, "PTTL single:stolen"), -1); /* untouched */
  /* release on an object that lost its hold does no I/O... */
  CHECK_STATUS(hrl_lock_release(lk), HRL_ENOTHELD);
  /* ...and one that still thinks it holds is refused by the script. */
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ETIMEOUT);
  freeReplyObject(fixture_cmd(&fx, 1, "DEL single:stolen"));
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  freeReplyObject(fixture_cmd(
      &fx, 1, "SET single:stolen othertoken0000000000000000000000 PX 60000"));
  CHECK_STATUS(hrl_lock_release(lk), HRL_ENOTOWNED);
  char value[64];
  fixture_get(&fx, 1, "single:stolen", 13, value, sizeof value);
  CHECK_STR(value, "othertoken0000000000000000000000");
  hrl_counts cnt;
  hrl_lock_counts(lk, &cnt);
  CHECK_INT(cnt.refused, 1);
  freeReplyObject(fixture_cmd(&fx, 1, "DEL single:stolen"));
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_extend_resets_ttl_and_expiry_is_final(void) {
  hrl_client *c = fixture_client(&fx, NULL);
  hrl_lock *lk = new_lock(c, "single:extend", 1000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  usleep(300 * 1000);
  long long before = fixture_int(&fx, 1, "PTTL single:extend");
  CHECK(before > 0 && before <= 700);
  int64_t start = hrl_now_us();
  CHECK_STATUS(hrl_lock_extend(lk, 5000), HRL_OK);
  long long after = fixture_int(&fx, 1, "PTTL single:extend");
  CHECK(after > 4000 && after <= 5000);
  int64_t v = hrl_lock_validity_ms(lk);
  CHECK(v >= 5000 - 52 - (hrl_now_us() - start) / 1000 - 2);
  CHECK_INT(hrl_lock_ttl_ms(lk), 5000);
  CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_OK); /* 0: the lock's ttl */
  CHECK(fixture_int(&fx, 1, "PTTL single:extend") > 4000);
  /* A shorter TTL also replaces a longer one. 1 s, not 0.2 s: the extend's
   * reply deadline is a tenth of the TTL, and a loaded machine missed 20 ms. */
  CHECK_STATUS(hrl_lock_extend(lk, 1000), HRL_OK);
  CHECK(fixture_int(&fx, 1, "PTTL single:extend") <= 1000);
  usleep(1200 * 1000);
  CHECK(!hrl_lock_held(lk));
  CHECK_INT(hrl_lock_validity_ms(lk), 0);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS single:extend"), 0);
  CHECK_STATUS(hrl_lock_extend(lk, 1000), HRL_ENOTOWNED);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS single:extend"), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_scripts_match_redis_and_survive_flush(void) {
  redisReply *r =
      fixture_cmd(&fx, 1, "SCRIPT LOAD %s",
                  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "
                  "redis.call(\"del\",KEYS[1]) else return 0 end");
  CHECK(r != NULL && r->type == REDIS_REPLY_STRING);
  CHECK_STR(r->str, "b70c2384248f88e6b75b9f89241a180f856ad852");
  freeReplyObject(r);
  r = fixture_cmd(&fx, 1, "SCRIPT LOAD %s",
                  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "
                  "redis.call(\"pexpire\",KEYS[1],ARGV[2]) else return 0 end");
  CHECK(r != NULL && r->type == REDIS_REPLY_STRING);
  CHECK_STR(r->str, "36e94d1c6e02fcefaa7ee5d79eee614dbac55f10");
  freeReplyObject(r);

  hrl_client *c = fixture_client(&fx, NULL);
  hrl_lock *lk = new_lock(c, "single:flush", 10000);
  for (int i = 0; i < 3; i++) {
    freeReplyObject(fixture_cmd(&fx, 1, "SCRIPT FLUSH"));
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    CHECK_STATUS(hrl_lock_extend(lk, 0), HRL_OK); /* NOSCRIPT -> EVAL */
    freeReplyObject(fixture_cmd(&fx, 1, "SCRIPT FLUSH"));
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
    CHECK_INT(fixture_int(&fx, 1, "EXISTS single:flush"), 0);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_binary_names_and_prefix(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.key_prefix = "app:\0x:";
  o.key_prefix_len = 7;
  hrl_client *c = fixture_client(&fx, &o);
  const char name[] = {'n', '\0', '\r', '\n', (char)0xff};
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, name, sizeof name, 5000, &lk, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  char key[12];
  memcpy(key, "app:\0x:", 7);
  memcpy(key + 7, name, sizeof name);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS %b", key, sizeof key), 1);
  size_t len;
  CHECK(memcmp(hrl_lock_key(lk, &len), key, sizeof key) == 0);
  CHECK_INT(len, sizeof key);
  CHECK(memcmp(hrl_lock_name(lk, &len), name, sizeof name) == 0);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS %b", key, sizeof key), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_unix_socket_and_database(void) {
  char url[300];
  snprintf(url, sizeof url, "%s?db=3", fx.unix_url[0]);
  const char *urls[] = {url};
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(urls, 1, NULL, &c, NULL, 0), HRL_OK);
  hrl_lock *lk = new_lock(c, "single:db3", 5000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS single:db3"), 0);
  freeReplyObject(fixture_cmd(&fx, 1, "SELECT 3"));
  CHECK_INT(fixture_int(&fx, 1, "EXISTS single:db3"), 1);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_int(&fx, 1, "EXISTS single:db3"), 0);
  freeReplyObject(fixture_cmd(&fx, 1, "SELECT 0"));
  hrl_lock_free(lk);
  hrl_client_free(c);

  /* A database Redis does not have is a server error, said at once. */
  char bad[300];
  snprintf(bad, sizeof bad, "%s/99", fx.url[0]);
  const char *bad_urls[] = {bad};
  CHECK_STATUS(hrl_client_new(bad_urls, 1, NULL, &c, NULL, 0), HRL_OK);
  lk = new_lock(c, "single:db99", 5000);
  CHECK_STATUS(hrl_lock_acquire(lk, 1000), HRL_ESERVER);
  CHECK_CONTAINS(hrl_lock_error(lk), "DB index is out of range");
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* A master out of reach: without a wait, the acquire fails at once and
 * says why; with one, it keeps trying (a master may be restarting) and
 * says the same at its deadline. */
static void test_unreachable_port_fails_fast(void) {
  /* A port nobody listens on: the fixture's port + 1 after killing nothing
   * would be a guess, so use a port of a server we stop ourselves. */
  fixture dead;
  fixture_start(&dead, 1, NULL);
  fixture_ctl(&dead, "kill", 1, NULL);
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 150; /* a pause longer than the slack below */
  o.retry_jitter_ms = 0;
  hrl_client *c = fixture_client(&dead, &o);
  hrl_lock *lk = new_lock(c, "single:dead", 5000);
  /* The bounds below are the API's (at once; the wait plus two per-master
   * timeouts) plus what the load took from this thread meanwhile (its run
   * delay): a refused connect costs no time of its own. */
  int64_t slack_us = 2 * (int64_t)o.timeout_ms * 1000;
  int64_t t0 = hrl_now_us(), delay0 = check_run_delay_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ECONNECT);
  int64_t took_us = hrl_now_us() - t0;
  int64_t delayed_us = check_run_delay_us() - delay0;
  hrl_counts cnt;
  hrl_lock_counts(lk, &cnt);
  CHECK_INT(cnt.attempts, 1);
  /* At once: no pause (150 ms) before failing. */
  CHECK(took_us < slack_us + delayed_us);
  if (took_us >= slack_us + delayed_us) {
    printf("  at once took %lld us, run delay %lld us\n", (long long)took_us,
           (long long)delayed_us);
  }
  CHECK_CONTAINS(hrl_lock_error(lk), "0 of 1 masters answered (1 needed)");
  CHECK_CONTAINS(hrl_lock_error(lk), "connection refused");
  char msg[HRL_DETAIL_MAX + 32];
  hrl_format_error(HRL_ECONNECT, hrl_lock_error(lk), msg, sizeof msg);
  CHECK_CONTAINS(msg, "connection failed: 0 of 1 masters answered");
  t0 = hrl_now_us();
  delay0 = check_run_delay_us();
  CHECK_STATUS(hrl_lock_acquire(lk, 600), HRL_ECONNECT);
  took_us = hrl_now_us() - t0;
  delayed_us = check_run_delay_us() - delay0;
  /* It kept trying (a master may be restarting) until its deadline, and
   * no later: no pause or try past it. */
  hrl_lock_counts(lk, &cnt);
  CHECK(cnt.attempts >= 2);
  CHECK(took_us >= 600 * 1000);
  CHECK(took_us < 600 * 1000 + slack_us + delayed_us);
  if (took_us >= 600 * 1000 + slack_us + delayed_us) {
    printf("  the 600 ms wait took %lld us, run delay %lld us\n",
           (long long)took_us, (long long)delayed_us);
  }
  CHECK_CONTAINS(hrl_lock_error(lk), "0 of 1 masters answered (1 needed)");
  CHECK_CONTAINS(hrl_lock_error(lk), "connection refused");
  hrl_lock_free(lk);
  hrl_client_free(c);

  char path[300];
  snprintf(path, sizeof path, "unix://%s/nope.sock", dead.dir);
  const char *urls[] = {path};
  CHECK_STATUS(hrl_client_new(urls, 1, NULL, &c, NULL, 0), HRL_OK);
  lk = new_lock(c, "single:dead", 5000);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ECONNECT);
  CHECK_CONTAINS(hrl_lock_error(lk), "no such file or directory");
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&dead);
}

/* Says stop on its first call at or after stop_at_us (0: the first call),
 * stamping that call on the test's clock. */
typedef struct cancel_state {
  int calls;
  int64_t stop_at_us;
  int64_t fired_us;
} cancel_state;

static bool cancel_when_due(void *ud) {
  cancel_state *cs = ud;
  cs->calls++;
  int64_t now = hrl_now_us();
  if (now < cs->stop_at_us) {
    return false;
  }
  cs->fired_us = now;
  return true;
}

/* A waiting acquire calls its cancel callback in slices of at most 50 ms
 * (waitroom.c), not only between its tries, and returns as soon as the
 * callback says stop. No fixed bound on the time (the machine's load
 * stretches every slice): the client's retry delay is 2 s without jitter,
 * so a wait that called the callback only between its tries could not
 * say stop before 2 s; sliced, it does at the first slice past 300 ms. */
static void test_cancel_stops_waiting(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.retry_delay_ms = 2000;
  o.retry_jitter_ms = 0;
  hrl_client *c = fixture_client(&fx, &o);
  hrl_lock *holder = new_lock(c, "single:cancel", 10000);
  hrl_lock *waiter = new_lock(c, "single:cancel", 10000);
  CHECK_STATUS(hrl_lock_acquire(holder, 0), HRL_OK);
  int64_t t0 = hrl_now_us();
  cancel_state cs = {0, t0 + 300 * 1000, 0};
  CHECK_STATUS(
      hrl_lock_acquire_cancellable(waiter, 10000, cancel_when_due, &cs),
      HRL_ECANCELLED);
  int64_t returned_us = hrl_now_us();
  int64_t fired_ms = (cs.fired_us - t0) / 1000;
  printf("  stopped at %lld ms (call %d), returned %lld us later\n",
         (long long)fired_ms, cs.calls, (long long)(returned_us - cs.fired_us));
  /* Called while waiting, and before even the first retry. */
  CHECK(cs.calls >= 2);
  CHECK(fired_ms >= 300 && fired_ms < (int64_t)o.retry_delay_ms);
  /* Returned at the cancel, not at the end of the 10 s wait: leaving took
   * less than the wait before it. */
  CHECK(returned_us - cs.fired_us < cs.fired_us - t0);
  CHECK(!hrl_lock_held(waiter));
  char value[64];
  fixture_get(&fx, 1, "single:cancel", 13, value, sizeof value);
  CHECK_STR(value, hrl_lock_token(holder));
  CHECK_STATUS(hrl_lock_release(holder), HRL_OK);
  /* Cancelled before the first pause: one attempt, and it may win. */
  cs = (cancel_state){0, 0, 0};
  CHECK_STATUS(
      hrl_lock_acquire_cancellable(waiter, 10000, cancel_when_due, &cs),
      HRL_OK);
  CHECK_STATUS(hrl_lock_release(waiter), HRL_OK);
  hrl_lock_free(holder);
  hrl_lock_free(waiter);
  hrl_client_free(c);
}

/* Resumes the paused node 1 of fx after 500 ms, noting when. */
static void *resume_later(void *p) {
  _Atomic int64_t *resumed_at_us = p;
  usleep(500 * 1000);
  atomic_store(resumed_at_us, hrl_now_us());
  fixture_ctl(&fx, "resume", 1, NULL);
  return NULL;
}

/* A client on database 2 (a SELECT in each new connection's handshake),
 * connect_timeout 2 s and the default 50 ms per master. */
static hrl_client *slow_handshake_client(void) {
  char url[300];
  snprintf(url, sizeof url, "%s/2", fx.url[0]);
  const char *urls[] = {url};
  hrl_options o;
  hrl_options_init(&o);
  o.connect_timeout_ms = 2000;
  CHECK_INT(o.timeout_ms, 50);
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(urls, 1, &o, &c, NULL, 0), HRL_OK);
  return c;
}

/* The connections node 1 accepted so far (INFO stats). */
static long long connections_received(void) {
  redisReply *r = fixture_cmd(&fx, 1, "INFO stats");
  const char *at = r != NULL && r->type == REDIS_REPLY_STRING
                       ? strstr(r->str, "total_connections_received:")
                       : NULL;
  long long n = at != NULL ? atoll(strchr(at, ':') + 1) : -1;
  freeReplyObject(r);
  return n;
}

/* A fresh connection to a server that accepts but answers its handshake
 * only 500 ms later (a loaded server or machine): a waiting acquire's
 * first round misses (50 ms), the handshake carries over, and a later
 * round reads its replies and sends the SET (connect_timeout 2 s covers
 * opening a connection) on that one connection. Before, every round
 * closed the unanswered handshake and opened another: a connection per
 * round left in a stalled server's backlog, and a server whose every
 * handshake outlasts the timeout (valgrind, a loaded machine) was never
 * reached at all. */
static void test_a_slow_handshake_carries_over_to_a_later_round(void) {
  hrl_client *c = slow_handshake_client();
  hrl_lock *lk = new_lock(c, "single:slowhs", 10000);
  long long before = connections_received();
  fixture_ctl(&fx, "pause", 1, NULL);
  _Atomic int64_t resumed_at_us = 0;
  pthread_t th;
  pthread_create(&th, NULL, resume_later, &resumed_at_us);
  hrl_status st = hrl_lock_acquire(lk, 2000);
  int64_t done_us = hrl_now_us();
  pthread_join(th, NULL);
  if (st != HRL_OK) {
    fprintf(stderr, "  waiting acquire: %s\n", hrl_lock_error(lk));
  }
  CHECK_STATUS(st, HRL_OK);
  CHECK(done_us >= atomic_load(&resumed_at_us)); /* the resumed server's */
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);    /* the kept connection */
  /* The lock's connection and the waiting acquire's subscriber (the
   * fixture's own INFO is the third). */
  long long opened = connections_received() - before - 1;
  if (opened != 2) {
    fprintf(stderr, "  connections opened: %lld\n", opened);
  }
  CHECK_INT(opened, 2);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* The other half of the rule: a round never waits for a handshake past its
 * per-master timeout. With the server paused, a fresh client's try ends
 * after about the 50 ms timeout, never the 2 s connect_timeout (bounded
 * at half of it: a loaded machine stretches 50 ms, not to a second); once
 * the server is back, the next try finds the carried handshake answered. */
static void test_a_paused_server_costs_a_round_its_timeout(void) {
  hrl_client *c = slow_handshake_client();
  hrl_lock *lk = new_lock(c, "single:pausedhs", 10000);
  fixture_ctl(&fx, "pause", 1, NULL);
  int64_t t0 = hrl_now_us();
  hrl_status st = hrl_lock_acquire(lk, 0);
  int64_t took_ms = (hrl_now_us() - t0) / 1000;
  fixture_ctl(&fx, "resume", 1, NULL);
  CHECK_STATUS(st, HRL_ECONNECT);
  CHECK(took_ms < 1000);
  if (took_ms >= 1000) {
    fprintf(stderr, "  one round took %lld ms\n", (long long)took_ms);
  }
  CHECK(strstr(hrl_lock_error(lk), "timeout after 50 ms") != NULL);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

int main(void) {
  fixture_start(&fx, 1, NULL);
  RUN(test_acquire_excludes_and_release_frees);
  RUN(test_waiter_gets_lock_after_release);
  RUN(test_wrong_token_cannot_release_or_extend);
  RUN(test_extend_resets_ttl_and_expiry_is_final);
  RUN(test_scripts_match_redis_and_survive_flush);
  RUN(test_binary_names_and_prefix);
  RUN(test_unix_socket_and_database);
  RUN(test_unreachable_port_fails_fast);
  RUN(test_cancel_stops_waiting);
  RUN(test_a_slow_handshake_carries_over_to_a_later_round);
  RUN(test_a_paused_server_costs_a_round_its_timeout);
  fixture_stop(&fx);
  return finish_tests("test_single");
}
