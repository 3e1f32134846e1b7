/* One client's acquire+release cycles per second, side by side in one run:
 *   raw   blocking hiredis: SET key token NX PX ttl, then EVALSHA release --
 *         the two round trips every lock cycle needs: the floor.
 *   c-n1  hiredlock on master 1 (N = 1)
 *   c-n5  hiredlock on all 5 masters (N = 5)
 * Cases are interleaved in short repetitions so drift in the machine (other
 * load, frequency) hits them alike; rates are the medians of the
 * repetitions, and each ratio is the median of the per-repetition ratios,
 * which is what stays stable on a noisy machine.
 * Run through the fixture: redis-fixture run -n 5 -- bench_cycle [secs] [reps]
 */
#define _GNU_SOURCE
#include <hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hiredlock.h"

#define RELEASE_SHA "b70c2384248f88e6b75b9f89241a180f856ad852"
#define RELEASE_SCRIPT                                                         \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"del\",KEYS[1]) else return 0 end"

typedef struct target {
  char host[64];
  int port;
} target;

static target parse_target(const char *url) {
  target t;
  memset(&t, 0, sizeof t);
  if (sscanf(url, "redis://%63[^:]:%d", t.host, &t.port) != 2) {
    fprintf(stderr, "bench: cannot parse %s\n", url);
    exit(2);
  }
  return t;
}

static double run_raw(const target *t, double seconds, long *cycles_out) {
  redisContext *c = redisConnect(t->host, t->port);
  if (c == NULL || c->err) {
    fprintf(stderr, "bench: raw connect failed\n");
    exit(1);
  }
  redisReply *r = redisCommand(c, "SCRIPT LOAD %s", RELEASE_SCRIPT);
  freeReplyObject(r);
  const char *token = "0123456789abcdef0123456789abcdef";
  long cycles = 0;
  int64_t t0 = hrl_now_us();
  int64_t end = t0 + (int64_t)(seconds * 1e6);
  int64_t now = t0;
  while (now < end) {
    for (int k = 0; k < 64; k++) {
      r = redisCommand(c, "SET bench:raw %s NX PX 30000", token);
      if (r == NULL || r->type != REDIS_REPLY_STATUS) {
        fprintf(stderr, "bench: raw SET failed\n");
        exit(1);
      }
      freeReplyObject(r);
      r = redisCommand(c, "EVALSHA " RELEASE_SHA " 1 bench:raw %s", token);
      if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer != 1) {
        fprintf(stderr, "bench: raw EVALSHA failed\n");
        exit(1);
      }
      freeReplyObject(r);
      cycles++;
    }
    now = hrl_now_us();
  }
  redisFree(c);
  *cycles_out = cycles;
  return (double)cycles / ((double)(now - t0) / 1e6);
}

static double run_hiredlock(hrl_client *c, double seconds, long *cycles_out) {
  hrl_lock *lk = NULL;
  if (hrl_lock_new(c, "bench:c", 7, 30000, &lk, NULL, 0) != HRL_OK) {
    exit(1);
  }
  long cycles = 0;
  int64_t t0 = hrl_now_us();
  int64_t end = t0 + (int64_t)(seconds * 1e6);
  int64_t now = t0;
  while (now < end) {
    for (int k = 0; k < 64; k++) {
      hrl_status a = hrl_lock_acquire(lk, 0);
      hrl_status b = a == HRL_OK ? hrl_lock_release(lk) : a;
      if (a != HRL_OK || b != HRL_OK) {
        fprintf(stderr, "bench: hiredlock cycle failed: %s %s\n",
                hrl_strerror(a != HRL_OK ? a : b), hrl_lock_error(lk));
        exit(1);
      }
      cycles++;
    }
    now = hrl_now_us();
  }
  hrl_lock_free(lk);
  *cycles_out = cycles;
  return (double)cycles / ((double)(now - t0) / 1e6);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { MAX_REPS = 64 };

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.5;
  int reps = argc > 2 ? atoi(argv[2]) : 21;
  if (reps < 1 || reps > MAX_REPS || seconds <= 0) {
    fprintf(stderr, "usage: bench_cycle [seconds per rep] [reps <= 64]\n");
    return 2;
  }
  const char *list = getenv("HRL_FIXTURE_URLS");
  if (list == NULL) {
    fprintf(stderr, "bench: run under `redis-fixture run -n 5 --`\n");
    return 2;
  }
  char *copy = strdup(list);
  const char *urls[HRL_MASTERS_MAX];
  size_t n = 0;
  for (char *u = strtok(copy, ","); u && n < HRL_MASTERS_MAX;
       u = strtok(NULL, ",")) {
    urls[n++] = u;
  }
  if (n < 5) {
    fprintf(stderr, "bench: needs 5 masters, got %zu\n", n);
    return 2;
  }
  target raw = parse_target(urls[0]);
  hrl_client *n1 = NULL, *n5 = NULL;
  if (hrl_client_new(urls, 1, NULL, &n1, NULL, 0) != HRL_OK ||
      hrl_client_new(urls, 5, NULL, &n5, NULL, 0) != HRL_OK) {
    return 1;
  }
  long cycles;
  /* Warm-up: connections, script caches, CPU frequency. */
  run_raw(&raw, 0.5, &cycles);
  run_hiredlock(n1, 0.5, &cycles);
  run_hiredlock(n5, 0.5, &cycles);
  double r_raw[MAX_REPS], r_n1[MAX_REPS], r_n5[MAX_REPS];
  for (int i = 0; i < reps; i++) {
    r_raw[i] = run_raw(&raw, seconds, &cycles);
    r_n1[i] = run_hiredlock(n1, seconds, &cycles);
    r_n5[i] = run_hiredlock(n5, seconds, &cycles);
    fprintf(stderr, "rep %d: raw %.0f  c-n1 %.0f  c-n5 %.0f cycles/s\n", i + 1,
            r_raw[i], r_n1[i], r_n5[i]);
  }
  double q_n1[MAX_REPS], q_n5[MAX_REPS];
  for (int i = 0; i < reps; i++) {
    q_n1[i] = r_raw[i] / r_n1[i];
    q_n5[i] = r_n1[i] / r_n5[i];
  }
  double m_raw = median(r_raw, reps), m_n1 = median(r_n1, reps),
         m_n5 = median(r_n5, reps);
  double ratio_n1 = median(q_n1, reps), ratio_n5 = median(q_n5, reps);
  printf("case   cycles/s   us/cycle   ratio\n");
  printf("raw    %8.0f   %8.1f   1.000 (floor: SET NX PX + EVALSHA)\n", m_raw,
         1e6 / m_raw);
  printf("c-n1   %8.0f   %8.1f   %.3f x raw (target <= 1.02)\n", m_n1,
         1e6 / m_n1, ratio_n1);
  printf("c-n5   %8.0f   %8.1f   %.3f x c-n1 (target <= 1.3)\n", m_n5,
         1e6 / m_n5, ratio_n5);
  printf("{\"raw\": %.1f, \"c_n1\": %.1f, \"c_n5\": %.1f, "
         "\"c_n1_over_raw\": %.4f, \"c_n5_over_c_n1\": %.4f, \"reps\": %d, "
         "\"seconds\": %.2f}\n",
         m_raw, m_n1, m_n5, ratio_n1, ratio_n5, reps, seconds);
  hrl_client_free(n1);
  hrl_client_free(n5);
  free(copy);
  return 0;
}
