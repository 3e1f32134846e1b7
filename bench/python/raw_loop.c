/*
 * The C side of bench/python/bench_cycle.py, on the same servers and in the
 * same run as the Python cases. Reads one command per line on stdin and
 * prints the measured acquire+release cycles per second and the CPU time
 * this process spent per cycle, in microseconds:
 *   raw SECONDS   blocking hiredis on master 1: SET NX PX, then EVALSHA
 *                 release -- the two round trips every cycle needs (the
 *                 loop of bench/c/bench_cycle.c)
 *   fan5 SECONDS  the same two commands fanned out to 5 masters in
 *                 parallel (all written, then all read): the N = 5 floor
 *   c1 SECONDS    hiredlock's C API on master 1
 *   c5 SECONDS    hiredlock's C API on 5 masters
 * Connections stay open between commands, as the Python cases' do.
 * Usage: raw_loop URL1,URL2,... (HRL_FIXTURE_URLS)
 */
#define _GNU_SOURCE
#include <hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hiredlock.h"

#define RELEASE_SHA "b70c2384248f88e6b75b9f89241a180f856ad852"
#define RELEASE_SCRIPT                                                         \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"del\",KEYS[1]) else return 0 end"
#define TOKEN "0123456789abcdef0123456789abcdef"
#define MASTERS 5

static double cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static redisContext *connect_url(const char *url) {
  char host[64];
  int port;
  if (sscanf(url, "redis://%63[^:]:%d", host, &port) != 2) {
    fprintf(stderr, "raw_loop: cannot parse %s\n", url);
    exit(2);
  }
  redisContext *c = redisConnect(host, port);
  if (c == NULL || c->err) {
    fprintf(stderr, "raw_loop: cannot connect to %s\n", url);
    exit(1);
  }
  redisReply *r = redisCommand(c, "SCRIPT LOAD %s", RELEASE_SCRIPT);
  freeReplyObject(r);
  return c;
}

static void expect(redisReply *r, int type, const char *what) {
  if (r == NULL || r->type != type) {
    fprintf(stderr, "raw_loop: %s failed\n", what);
    exit(1);
  }
  freeReplyObject(r);
}

/* Sends what redisAppendCommand() queued on each connection. */
static void flush_all(redisContext **c, int n) {
  for (int i = 0; i < n; i++) {
    int done = 0;
    while (!done) {
      if (redisBufferWrite(c[i], &done) != REDIS_OK) {
        fprintf(stderr, "raw_loop: write failed\n");
        exit(1);
      }
    }
  }
}

/* One cycle on n connections: each command is written to every master
 * before any reply is read, so the masters work in parallel. */
static void raw_cycle(redisContext **c, int n) {
  for (int i = 0; i < n; i++) {
    redisAppendCommand(c[i], "SET bench:raw %s NX PX 30000", TOKEN);
  }
  flush_all(c, n);
  for (int i = 0; i < n; i++) {
    void *r = NULL;
    if (redisGetReply(c[i], &r) != REDIS_OK) {
      r = NULL;
    }
    expect(r, REDIS_REPLY_STATUS, "SET");
  }
  for (int i = 0; i < n; i++) {
    redisAppendCommand(c[i], "EVALSHA " RELEASE_SHA " 1 bench:raw %s", TOKEN);
  }
  flush_all(c, n);
  for (int i = 0; i < n; i++) {
    void *r = NULL;
    if (redisGetReply(c[i], &r) != REDIS_OK) {
      r = NULL;
    }
    expect(r, REDIS_REPLY_INTEGER, "EVALSHA");
  }
}

static void hiredlock_cycle(hrl_lock *lk) {
  hrl_status a = hrl_lock_acquire(lk, 0);
  hrl_status b = a == HRL_OK ? hrl_lock_release(lk) : a;
  if (a != HRL_OK || b != HRL_OK) {
    fprintf(stderr, "raw_loop: hiredlock cycle failed: %s %s\n",
            hrl_strerror(a != HRL_OK ? a : b), hrl_lock_error(lk));
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: raw_loop URL1,URL2,URL3,URL4,URL5\n");
    return 2;
  }
  char *copy = strdup(argv[1]);
  const char *urls[MASTERS];
  int n = 0;
  for (char *u = strtok(copy, ","); u != NULL && n < MASTERS;
       u = strtok(NULL, ",")) {
    urls[n++] = u;
  }
  if (n < MASTERS) {
    fprintf(stderr, "raw_loop: needs %d masters, got %d\n", MASTERS, n);
    return 2;
  }
  redisContext *conns[MASTERS];
  for (int i = 0; i < MASTERS; i++) {
    conns[i] = connect_url(urls[i]);
  }
  hrl_client *c1 = NULL, *c5 = NULL;
  hrl_lock *l1 = NULL, *l5 = NULL;
  if (hrl_client_new(urls, 1, NULL, &c1, NULL, 0) != HRL_OK ||
      hrl_client_new(urls, MASTERS, NULL, &c5, NULL, 0) != HRL_OK ||
      hrl_lock_new(c1, "bench:c1", 8, 30000, &l1, NULL, 0) != HRL_OK ||
      hrl_lock_new(c5, "bench:c5", 8, 30000, &l5, NULL, 0) != HRL_OK) {
    fprintf(stderr, "raw_loop: cannot create the hiredlock client\n");
    return 1;
  }
  char line[128], mode[16];
  double seconds;
  while (fgets(line, sizeof line, stdin) != NULL) {
    if (sscanf(line, "%15s %lf", mode, &seconds) != 2) {
      fprintf(stderr, "raw_loop: bad command: %s", line);
      return 2;
    }
    long cycles = 0;
    double cpu0 = cpu_us();
    int64_t t0 = hrl_now_us(), now = t0;
    int64_t end = t0 + (int64_t)(seconds * 1e6);
    while (now < end) {
      for (int k = 0; k < 64; k++) {
        if (strcmp(mode, "raw") == 0) {
          raw_cycle(conns, 1);
        } else if (strcmp(mode, "fan5") == 0) {
          raw_cycle(conns, MASTERS);
        } else if (strcmp(mode, "c1") == 0) {
          hiredlock_cycle(l1);
        } else if (strcmp(mode, "c5") == 0) {
          hiredlock_cycle(l5);
        } else {
          fprintf(stderr, "raw_loop: unknown mode %s\n", mode);
          return 2;
        }
        cycles++;
      }
      now = hrl_now_us();
    }
    printf("%.1f %.3f\n", (double)cycles / ((double)(now - t0) / 1e6),
           (cpu_us() - cpu0) / (double)cycles);
    fflush(stdout);
  }
  hrl_lock_free(l1);
  hrl_lock_free(l5);
  hrl_client_free(c1);
  hrl_client_free(c5);
  for (int i = 0; i < MASTERS; i++) {
    redisFree(conns[i]);
  }
  free(copy);
  return 0;
}
