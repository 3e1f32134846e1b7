/* The benchmark's floor: blocking hiredis on master 1, SET key token NX PX
 * 30000, then EVALSHA of the release script, both formatted once and the
 * token fixed: the two round trips every lock cycle needs, with nothing
 * else. fanK writes each command to K masters before reading any reply:
 * the floor at N = K.
 *
 * raw-exact (a diagnostic, issue 31) is the same loop sending byte for byte
 * what hiredlock sends for an N = 1 acquire and release of c-n1's lock
 * (docs/DESIGN.md section 3): its SET, and its release, EVALSHA of the
 * queue script on the key and its two siblings. The script, its digest and
 * the siblings' names come from the core's own headers, so the two stay
 * the same when the wire format changes; only the token is fixed. Against
 * the raw loop it is what Redis running hiredlock's longer release costs;
 * c-n1 against it, what the library's client side costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/resp.h"
#include "proto/sibling_key.h"
#include "worker.h"

#define RELEASE_SHA "b70c2384248f88e6b75b9f89241a180f856ad852"
#define RELEASE_SCRIPT                                                         \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"del\",KEYS[1]) else return 0 end"
#define TOKEN "0123456789abcdef0123456789abcdef"

/* hiredlock's N = 1 lock of the c-n1 case (worker.c), whose commands
 * raw-exact sends. */
#define EXACT_KEY "bench:c-n1"

/* A floor's two commands, formatted once: the loop only moves bytes. */
typedef struct commands {
  char *set, *release;
  int set_len, release_len;
} commands;

static commands raw, exact;
/* The queue script's release form; its EVAL twin loads the script. */
#define EXACT_RELEASE "%s 3 %s %s %s r %s"

/* The lock key's sibling with suffix, from the core's rule (malloc'd). */
static char *sibling(const char *suffix) {
  size_t klen = strlen(EXACT_KEY), slen = strlen(suffix);
  char *out = malloc(hrl_sibling_key_len(EXACT_KEY, klen, slen) + 1);
  if (out == NULL) {
    die("out of memory");
  }
  out[hrl_sibling_key(EXACT_KEY, klen, suffix, slen, out)] = '\0';
  return out;
}

static char *queue_key, *waiters_key;

void floor_init(void) {
  raw.set_len =
      redisFormatCommand(&raw.set, "SET bench:raw %s NX PX %d", TOKEN, TTL_MS);
  raw.release_len = redisFormatCommand(
      &raw.release, "EVALSHA " RELEASE_SHA " 1 bench:raw %s", TOKEN);
  queue_key = sibling(HRL_QUEUE_SUFFIX);
  waiters_key = sibling(HRL_WAITERS_SUFFIX);
  exact.set_len = redisFormatCommand(
      &exact.set, "SET " EXACT_KEY " %s NX PX %d", TOKEN, TTL_MS);
  exact.release_len = redisFormatCommand(
      &exact.release, "EVALSHA " EXACT_RELEASE, HRL_QUEUE_SHA1, EXACT_KEY,
      queue_key, waiters_key, TOKEN);
  if (raw.set_len < 0 || raw.release_len < 0 || exact.set_len < 0 ||
      exact.release_len < 0) {
    die("out of memory");
  }
}

void floor_free(void) {
  redisFreeCommand(raw.set);
  redisFreeCommand(raw.release);
  redisFreeCommand(exact.set);
  redisFreeCommand(exact.release);
  free(queue_key);
  free(waiters_key);
}

static redisContext *connect_url(const char *url) {
  char host[64];
  int port;
  if (sscanf(url, "redis://%63[^:]:%d", host, &port) != 2) {
    die("cannot parse a master URL (redis://host:port expected)");
  }
  redisContext *c = redisConnect(host, port);
  if (c == NULL || c->err) {
    die("cannot connect to a master");
  }
  return c;
}

redisContext *floor_connect(const char *url) {
  redisContext *c = connect_url(url);
  redisReply *r = redisCommand(c, "SCRIPT LOAD %s", RELEASE_SCRIPT);
  if (r == NULL || r->type != REDIS_REPLY_STRING) {
    die("SCRIPT LOAD failed");
  }
  freeReplyObject(r);
  return c;
}

static void expect(void *reply, int type, const char *what) {
  redisReply *r = reply;
  if (r == NULL || r->type != type) {
    die(what);
  }
  freeReplyObject(r);
}

static void flush_all(redisContext **c, int n) {
  for (int i = 0; i < n; i++) {
    int done = 0;
    while (!done) {
      if (redisBufferWrite(c[i], &done) != REDIS_OK) {
        die("write failed");
      }
    }
  }
}

static void read_all(redisContext **c, int n, int type, const char *what) {
  for (int i = 0; i < n; i++) {
    void *r = NULL;
    if (redisGetReply(c[i], &r) != REDIS_OK) {
      r = NULL;
    }
    expect(r, type, what);
  }
}

/* The queue script loaded as hiredlock loads it: the release by its digest,
 * and after NOSCRIPT the same release with the script in full (EVAL). Its
 * digest is then checked by every EVALSHA of the loop. */
redisContext *exact_connect(const char *url) {
  redisContext *c = connect_url(url);
  redisReply *r = redisCommand(c, "EVALSHA " EXACT_RELEASE, HRL_QUEUE_SHA1,
                               EXACT_KEY, queue_key, waiters_key, TOKEN);
  if (r != NULL && r->type == REDIS_REPLY_ERROR &&
      strncmp(r->str, "NOSCRIPT", 8) == 0) {
    freeReplyObject(r);
    r = redisCommand(c, "EVAL " EXACT_RELEASE, HRL_QUEUE_SCRIPT, EXACT_KEY,
                     queue_key, waiters_key, TOKEN);
  }
  expect(r, REDIS_REPLY_INTEGER, "loading the queue script failed");
  return c;
}

/* Each command is written to every master before any reply is read (n = 1:
 * a plain blocking round trip). */
static double two_rounds(redisContext **c, int n, const commands *cmd) {
  int64_t t0 = hrl_now_us();
  for (int i = 0; i < n; i++) {
    redisAppendFormattedCommand(c[i], cmd->set, (size_t)cmd->set_len);
  }
  flush_all(c, n);
  read_all(c, n, REDIS_REPLY_STATUS, "floor SET failed");
  int64_t t1 = hrl_now_us();
  for (int i = 0; i < n; i++) {
    redisAppendFormattedCommand(c[i], cmd->release, (size_t)cmd->release_len);
  }
  flush_all(c, n);
  read_all(c, n, REDIS_REPLY_INTEGER, "floor EVALSHA failed");
  return (double)(t1 - t0);
}

double floor_cycle(redisContext **c, int n) {
  return two_rounds(c, n, &raw);
}

double exact_cycle(redisContext *c) {
  return two_rounds(&c, 1, &exact);
}
