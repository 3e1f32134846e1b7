/* The benchmark's floor: blocking hiredis on master 1, SET key token NX PX
 * 30000, then EVALSHA of the release script, both formatted once and the
 * token fixed: the two round trips every lock cycle needs, with nothing
 * else. fanK writes each command to K masters before reading any reply:
 * the floor at N = K. */
#include <stdio.h>
#include <stdlib.h>

#include "worker.h"

#define RELEASE_SHA "b70c2384248f88e6b75b9f89241a180f856ad852"
#define RELEASE_SCRIPT                                                         \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"del\",KEYS[1]) else return 0 end"
#define TOKEN "0123456789abcdef0123456789abcdef"

/* The floor's two commands, formatted once: the loop only moves bytes. */
static char *set_cmd, *evalsha_cmd;
static int set_len, evalsha_len;

void floor_init(void) {
  set_len =
      redisFormatCommand(&set_cmd, "SET bench:raw %s NX PX %d", TOKEN, TTL_MS);
  evalsha_len = redisFormatCommand(
      &evalsha_cmd, "EVALSHA " RELEASE_SHA " 1 bench:raw %s", TOKEN);
  if (set_len < 0 || evalsha_len < 0) {
    die("out of memory");
  }
}

void floor_free(void) {
  redisFreeCommand(set_cmd);
  redisFreeCommand(evalsha_cmd);
}

redisContext *floor_connect(const char *url) {
  char host[64];
  int port;
  if (sscanf(url, "redis://%63[^:]:%d", host, &port) != 2) {
    die("cannot parse a master URL (redis://host:port expected)");
  }
  redisContext *c = redisConnect(host, port);
  if (c == NULL || c->err) {
    die("cannot connect to a master");
  }
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

/* Each command is written to every master before any reply is read (n = 1:
 * a plain blocking round trip). */
double floor_cycle(redisContext **c, int n) {
  int64_t t0 = hrl_now_us();
  for (int i = 0; i < n; i++) {
    redisAppendFormattedCommand(c[i], set_cmd, (size_t)set_len);
  }
  flush_all(c, n);
  read_all(c, n, REDIS_REPLY_STATUS, "floor SET failed");
  int64_t t1 = hrl_now_us();
  for (int i = 0; i < n; i++) {
    redisAppendFormattedCommand(c[i], evalsha_cmd, (size_t)evalsha_len);
  }
  flush_all(c, n);
  read_all(c, n, REDIS_REPLY_INTEGER, "floor EVALSHA failed");
  return (double)(t1 - t0);
}
