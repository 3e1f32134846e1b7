/* Servers that refuse: passwords, ACL users, read-only replicas, full
 * memory, restarts under an open connection. Each gets its own status and a
 * message that names the cause. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

static hrl_client *client_for(const char *url) {
  const char *urls[] = {url};
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_client_new(urls, 1, NULL, &c, d, sizeof d), HRL_OK);
  return c;
}

static hrl_status try_acquire(hrl_client *c, const char *name, char *err,
                              size_t size) {
  hrl_lock *lk = NULL;
  hrl_lock_new(c, name, strlen(name), 5000, &lk, NULL, 0);
  hrl_status st = hrl_lock_acquire(lk, 1000);
  snprintf(err, size, "%s", hrl_lock_error(lk));
  if (st == HRL_OK) {
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  }
  hrl_lock_free(lk);
  return st;
}

static void test_password(void) {
  fixture fx;
  fixture_start(&fx, 1, "--password s3cret");
  char err[HRL_DETAIL_MAX];
  hrl_client *good = client_for(fx.url[0]); /* the URL carries it */
  CHECK_STATUS(try_acquire(good, "f:pw", err, sizeof err), HRL_OK);
  hrl_client_free(good);

  char url[256];
  snprintf(url, sizeof url, "redis://:wrong@127.0.0.1:%d", fx.port[0]);
  hrl_client *wrong = client_for(url);
  int64_t t0 = hrl_now_us();
  CHECK_STATUS(try_acquire(wrong, "f:pw", err, sizeof err), HRL_EAUTH);
  CHECK((hrl_now_us() - t0) / 1000 < 200); /* said at once, not retried */
  CHECK_CONTAINS(err, "WRONGPASS");
  CHECK(strstr(err, "wrong") == NULL || strstr(err, ":wrong@") == NULL);
  hrl_client_free(wrong);

  snprintf(url, sizeof url, "redis://127.0.0.1:%d", fx.port[0]);
  hrl_client *none = client_for(url);
  CHECK_STATUS(try_acquire(none, "f:pw", err, sizeof err), HRL_EAUTH);
  CHECK_CONTAINS(err, "NOAUTH");
  hrl_client_free(none);
  fixture_stop(&fx);

  /* A password for a server that has none is refused, not ignored. */
  fixture open;
  fixture_start(&open, 1, NULL);
  snprintf(url, sizeof url, "redis://:extra@127.0.0.1:%d", open.port[0]);
  hrl_client *extra = client_for(url);
  CHECK_STATUS(try_acquire(extra, "f:pw", err, sizeof err), HRL_EAUTH);
  CHECK_CONTAINS(err, "AUTH");
  hrl_client_free(extra);
  fixture_stop(&open);
}

static void test_acl_user(void) {
  fixture fx;
  fixture_start(&fx, 1, "--acl-user alice:wonder%land");
  char url[256], err[HRL_DETAIL_MAX];
  snprintf(url, sizeof url, "redis://alice:wonder%%25land@127.0.0.1:%d/2",
           fx.port[0]);
  hrl_client *c = client_for(url);
  CHECK_STATUS(try_acquire(c, "f:acl", err, sizeof err), HRL_OK);
  hrl_client_free(c);
  snprintf(url, sizeof url, "redis://alice:nope@127.0.0.1:%d", fx.port[0]);
  c = client_for(url);
  CHECK_STATUS(try_acquire(c, "f:acl", err, sizeof err), HRL_EAUTH);
  CHECK_CONTAINS(err, "WRONGPASS");
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_readonly_replica(void) {
  fixture fx;
  fixture_start(&fx, 2, NULL);
  redisReply *r = fixture_cmd(&fx, 2, "REPLICAOF 127.0.0.1 %d", fx.port[0]);
  CHECK(r != NULL && r->type == REDIS_REPLY_STATUS);
  freeReplyObject(r);
  char err[HRL_DETAIL_MAX];
  hrl_client *c = client_for(fx.url[1]);
  CHECK_STATUS(try_acquire(c, "f:ro", err, sizeof err), HRL_ESERVER);
  CHECK_CONTAINS(err, "READONLY");
  CHECK_INT(fixture_int(&fx, 2, "EXISTS f:ro"), 0);
  freeReplyObject(fixture_cmd(&fx, 2, "REPLICAOF NO ONE"));
  CHECK_STATUS(try_acquire(c, "f:ro", err, sizeof err), HRL_OK);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_out_of_memory(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL);
  hrl_client *c = client_for(fx.url[0]);
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "f:oom", 5, 5000, &lk, NULL, 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  freeReplyObject(fixture_cmd(&fx, 1, "CONFIG SET maxmemory 1"));
  /* Release still works when full: DEL frees memory. */
  hrl_status st = hrl_lock_release(lk);
  CHECK(st == HRL_OK || st == HRL_ESERVER);
  if (st != HRL_OK) {
    CHECK_CONTAINS(hrl_lock_error(lk), "OOM");
  }
  char err[HRL_DETAIL_MAX];
  CHECK_STATUS(try_acquire(c, "f:oom2", err, sizeof err), HRL_ESERVER);
  CHECK_CONTAINS(err, "OOM command not allowed");
  freeReplyObject(fixture_cmd(&fx, 1, "CONFIG SET maxmemory 0"));
  CHECK_STATUS(try_acquire(c, "f:oom2", err, sizeof err), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_restart_under_open_connection(void) {
  fixture fx;
  fixture_start(&fx, 1, NULL);
  hrl_client *c = client_for(fx.url[0]);
  char err[HRL_DETAIL_MAX];
  CHECK_STATUS(try_acquire(c, "f:restart", err, sizeof err), HRL_OK);
  /* The server goes away and comes back: the stale connection is noticed
   * and replaced within the same call. */
  fixture_ctl(&fx, "restart", 1, NULL);
  CHECK_STATUS(try_acquire(c, "f:restart", err, sizeof err), HRL_OK);
  fixture_ctl(&fx, "kill", 1, NULL);
  CHECK_STATUS(try_acquire(c, "f:restart", err, sizeof err), HRL_ECONNECT);
  CHECK_CONTAINS(err, "connection refused");
  fixture_ctl(&fx, "restart", 1, NULL);
  CHECK_STATUS(try_acquire(c, "f:restart", err, sizeof err), HRL_OK);
  /* A server that is killed while we hold the lock: release cannot reach
   * it and says so; the hold ends there, and a retry may finish it. */
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "f:restart", 9, 5000, &lk, NULL, 0);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  fixture_ctl(&fx, "kill", 1, NULL);
  CHECK_STATUS(hrl_lock_release(lk), HRL_ECONNECT);
  CHECK(!hrl_lock_held(lk));
  fixture_ctl(&fx, "restart", 1, NULL); /* no persistence: the key is gone */
  CHECK_STATUS(hrl_lock_release(lk), HRL_ENOTOWNED);
  CHECK(!hrl_lock_held(lk));
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* A free even port in the kernel's ephemeral range (connect() takes even
 * ports there, bind(0) odd ones), or 0. */
static int free_even_ephemeral_port(void) {
  int lo = 32768, hi = 60999;
  FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
  if (f != NULL) {
    if (fscanf(f, "%d %d", &lo, &hi) != 2) {
      lo = 32768;
      hi = 60999;
    }
    fclose(f);
  }
  for (int tries = 0; tries < 1000; tries++) {
    int port = (lo + rand() % (hi - lo + 1)) & ~1;
    if (port < lo) {
      continue;
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int ok = bind(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    if (ok) {
      return port;
    }
  }
  return 0;
}

/* Whether a server could listen on port now (SO_REUSEADDR, as Redis). */
static bool can_listen(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 1) == 0;
  close(s);
  return ok;
}

/* The TCP sockets bound to 127.0.0.1:port, from /proc/net/tcp, in any
 * state (TIME_WAIT too): *self counts those connected to that same address
 * (what is left of a self-connection), *others the rest (another process's
 * connection that the kernel gave this port as its own). */
static void port_users(int port, int *self, int *others) {
  *self = *others = 0;
  FILE *f = fopen("/proc/net/tcp", "r");
  CHECK(f != NULL);
  char line[512];
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    unsigned la, lp, ra, rp;
    if (sscanf(line, " %*d: %8X:%4X %8X:%4X", &la, &lp, &ra, &rp) != 4 ||
        (int)lp != port) {
      continue;
    }
    if (la == ra && lp == rp) {
      (*self)++;
    } else {
      (*others)++;
    }
  }
  if (f != NULL) {
    fclose(f);
  }
}

/* A client that keeps connecting to a local master that is down can be
 * given the master's own port and connect to itself. That socket must be
 * refused and reset, not read as a master, and must not leave a TIME_WAIT
 * that keeps the master from binding its port again (seen in the
 * reliability suite: restarts failing with "Address already in use").
 * The port is free when picked, but another process's connect() may be
 * given it while the test runs (once, in a make test at load 20-34): then
 * the test runs again on another port; what is left of the self-connection
 * is looked for either way. */
static void test_self_connect(void) {
  srand((unsigned)hrl_now_us());
  bool listened = false;
  for (int attempt = 0; attempt < 3 && !listened; attempt++) {
    int port = free_even_ephemeral_port();
    CHECK(port != 0);
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    hrl_client *c = client_for(url);
    hrl_lock *lk = NULL;
    hrl_lock_new(c, "f:self", 6, 5000, &lk, NULL, 0);
    bool seen = false;
    for (int k = 0; k < 200000 && !seen; k++) {
      CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_ECONNECT);
      seen = strstr(hrl_lock_error(lk), "connected to itself") != NULL;
    }
    CHECK(seen);
    hrl_lock_free(lk);
    hrl_client_free(c);
    int self = 0, others = 0;
    port_users(port, &self, &others);
    CHECK_INT(self, 0);
    listened = can_listen(port);
    if (!listened) {
      printf("  port %d: %d other socket(s) on it%s\n", port, others,
             others > 0 ? ", another process's: again" : "");
      CHECK(others > 0);
      if (others == 0) {
        return; /* held by nothing this test can see: failed above */
      }
    }
  }
  CHECK(listened);
}

/* A scripted server on 127.0.0.1 (not Redis: it answers what the test
 * says, byte for byte): for each command it reads, it sends the next
 * answer, in two writes 20 ms apart when the answer has a '|' (the reply
 * split across reads), then closes. One connection: the next is refused. */
typedef struct scripted {
  int listener;
  int port;
  const char *answers[4];
} scripted;

static void *scripted_serve(void *arg) {
  scripted *sv = arg;
  int fd = accept(sv->listener, NULL, NULL);
  close(sv->listener); /* a second connection is refused, not kept waiting */
  for (int k = 0; fd >= 0 && k < 4 && sv->answers[k] != NULL; k++) {
    char buf[4096];
    if (recv(fd, buf, sizeof buf, 0) <= 0) {
      break;
    }
    const char *a = sv->answers[k];
    const char *cut = strchr(a, '|');
    size_t first = cut != NULL ? (size_t)(cut - a) : strlen(a);
    if (send(fd, a, first, MSG_NOSIGNAL) < 0) {
      break;
    }
    if (cut != NULL) {
      usleep(20000);
      if (send(fd, cut + 1, strlen(cut + 1), MSG_NOSIGNAL) < 0) {
        break;
      }
    }
  }
  if (fd >= 0) {
    close(fd);
  }
  return NULL;
}

static void scripted_start(scripted *sv, pthread_t *t) {
  sv->listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  CHECK(bind(sv->listener, (struct sockaddr *)&a, sizeof a) == 0);
  CHECK(listen(sv->listener, 1) == 0);
  CHECK(getsockname(sv->listener, (struct sockaddr *)&a, &len) == 0);
  sv->port = ntohs(a.sin_port);
  CHECK(pthread_create(t, NULL, scripted_serve, sv) == 0);
}

static hrl_lock *scripted_lock(const scripted *sv, hrl_client **c) {
  char url[64];
  snprintf(url, sizeof url, "redis://127.0.0.1:%d", sv->port);
  const char *urls[] = {url};
  hrl_options o;
  hrl_options_init(&o);
  o.timeout_ms = 5000; /* the split reply's 20 ms, under valgrind too */
  o.connect_timeout_ms = 5000;
  CHECK_STATUS(hrl_client_new(urls, 1, &o, c, NULL, 0), HRL_OK);
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(*c, "f:scripted", 10, 5000, &lk, NULL, 0), HRL_OK);
  return lk;
}

/* The C driver reads replies with the core's RESP parser, as the stream
 * drivers (asyncio, nginx) do: a reply split across reads is put together
 * (the SET's +OK, the release's :1), and a stream that is not RESP fails
 * the master with the stream drivers' words, "malformed reply" (hiredis's
 * reader said "Protocol error, got \"?\" as reply type byte"). */
static void test_scripted_replies(void) {
  scripted sv = {.answers = {"+O|K\r\n", ":|1\r\n", NULL}};
  pthread_t t;
  scripted_start(&sv, &t);
  hrl_client *c = NULL;
  hrl_lock *lk = scripted_lock(&sv, &c);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  hrl_lock_free(lk);
  hrl_client_free(c);
  pthread_join(t, NULL);

  scripted bad = {.answers = {"?what\r\n", NULL}};
  scripted_start(&bad, &t);
  lk = scripted_lock(&bad, &c);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_EPROTOCOL);
  CHECK_CONTAINS(hrl_lock_error(lk), "malformed reply");
  hrl_lock_free(lk);
  hrl_client_free(c);
  pthread_join(t, NULL);
}

int main(void) {
  RUN(test_password);
  RUN(test_acl_user);
  RUN(test_readonly_replica);
  RUN(test_out_of_memory);
  RUN(test_restart_under_open_connection);
  RUN(test_self_connect);
  RUN(test_scripted_replies);
  return finish_tests("test_faults");
}
