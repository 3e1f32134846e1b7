/*
 * The C side of bench/harness.py: a long-lived process that runs one
 * benchmark slice per command read on stdin and answers with one JSON line,
 * so the harness can interleave it with the Python, Lua and Node workers on
 * the same servers. Connections stay open between commands.
 *
 *   run CASE SECONDS  back-to-back uncontended acquire+release cycles for
 *                     SECONDS; answers the cycles, the elapsed time, this
 *                     process's CPU time and every acquire's latency (us)
 *   count CASE K      exactly K cycles, nothing timed (callgrind, strace)
 *   hold K            acquires K locks on distinct names (N = 1) and keeps
 *                     them (the memory case reads this process's RSS)
 *   unhold            releases and frees them
 *   cycles K          K cycles, a new lock object each (the RSS drift case)
 *
 * Cases:
 *   raw          blocking hiredis on master 1: SET key token NX PX 30000,
 *                then EVALSHA of the release script, both formatted once
 *                and the token fixed: the two round trips every lock cycle
 *                needs, with nothing else (the floor)
 *   fanK         the same two commands written to K masters before any
 *                reply is read, then every reply read (the floor at N = K)
 *   c-nK         hiredlock's C API on K masters, one lock object reused
 *   c-new-n1     hiredlock's C API, a new lock object per cycle
 *
 * Usage: hrl-bench-worker URL1,URL2,... (redis://127.0.0.1:PORT only)
 */
#define _GNU_SOURCE
#include <hiredis/hiredis.h>
#include <stdbool.h>
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
#define MASTERS_MAX 7
#define TTL_MS 30000

static const int client_sizes[] = {1, 3, 5, 7};
enum { N_CLIENTS = sizeof client_sizes / sizeof client_sizes[0] };

typedef struct worker {
  size_t n_urls;
  const char *urls[MASTERS_MAX];
  redisContext *conns[MASTERS_MAX];
  hrl_client *clients[N_CLIENTS];
  hrl_lock *locks[N_CLIENTS];
  hrl_lock **held;
  long n_held;
  double *lat;
  size_t lat_cap;
} worker;

static double cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what) {
  fprintf(stderr, "hrl-bench-worker: %s\n", what);
  exit(1);
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

/* The floor's two commands, formatted once: the loop only moves bytes. */
static char *set_cmd, *evalsha_cmd;
static int set_len, evalsha_len;

static void format_floor_commands(void) {
  set_len =
      redisFormatCommand(&set_cmd, "SET bench:raw %s NX PX %d", TOKEN, TTL_MS);
  evalsha_len = redisFormatCommand(
      &evalsha_cmd, "EVALSHA " RELEASE_SHA " 1 bench:raw %s", TOKEN);
  if (set_len < 0 || evalsha_len < 0) {
    die("out of memory");
  }
}

/* One floor cycle on n connections: each command is written to every
 * master before any reply is read (n = 1: a plain blocking round trip).
 * Returns the acquire's latency (us). */
static double raw_cycle(redisContext **c, int n) {
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

static void check(hrl_status st, hrl_lock *lk, const char *what) {
  if (st != HRL_OK) {
    fprintf(stderr, "hrl-bench-worker: %s: %s: %s\n", what, hrl_strerror(st),
            lk != NULL ? hrl_lock_error(lk) : "");
    exit(1);
  }
}

static double hiredlock_cycle(hrl_lock *lk) {
  int64_t t0 = hrl_now_us();
  check(hrl_lock_acquire(lk, 0), lk, "acquire");
  int64_t t1 = hrl_now_us();
  check(hrl_lock_release(lk), lk, "release");
  return (double)(t1 - t0);
}

static double new_lock_cycle(hrl_client *c, const char *name) {
  hrl_lock *lk = NULL;
  check(hrl_lock_new(c, name, strlen(name), TTL_MS, &lk, NULL, 0), NULL,
        "lock_new");
  double lat = hiredlock_cycle(lk);
  hrl_lock_free(lk);
  return lat;
}

static int client_index(int masters) {
  for (int i = 0; i < N_CLIENTS; i++) {
    if (client_sizes[i] == masters) {
      return i;
    }
  }
  return -1;
}

/* A case, resolved once per command: the per-cycle loop does no parsing. */
typedef enum kind { K_UNKNOWN, K_FLOOR, K_LOCK, K_NEW_LOCK } kind;
typedef struct plan {
  kind kind;
  int masters;
  hrl_lock *lock;
} plan;

static plan resolve(worker *w, const char *name) {
  plan p = {K_UNKNOWN, 0, NULL};
  int k;
  char tail;
  if (strcmp(name, "raw") == 0) {
    p.kind = K_FLOOR;
    p.masters = 1;
  } else if (sscanf(name, "fan%d%c", &k, &tail) == 1 && k > 1 &&
             (size_t)k <= w->n_urls) {
    p.kind = K_FLOOR;
    p.masters = k;
  } else if (sscanf(name, "c-n%d%c", &k, &tail) == 1 && client_index(k) >= 0 &&
             (size_t)k <= w->n_urls) {
    p.kind = K_LOCK;
    p.lock = w->locks[client_index(k)];
  } else if (strcmp(name, "c-new-n1") == 0) {
    p.kind = K_NEW_LOCK;
  }
  return p;
}

/* One cycle; returns the acquire's latency in us. */
static double cycle(worker *w, const plan *p) {
  switch (p->kind) {
  case K_FLOOR:
    return raw_cycle(w->conns, p->masters);
  case K_LOCK:
    return hiredlock_cycle(p->lock);
  case K_NEW_LOCK:
    return new_lock_cycle(w->clients[0], "bench:c-new");
  case K_UNKNOWN:
    break;
  }
  return -1;
}

static bool known(const plan *p, const char *name) {
  if (p->kind == K_UNKNOWN) {
    printf("{\"error\": \"unknown case %s\"}\n", name);
    fflush(stdout);
    return false;
  }
  return true;
}

static void run_case(worker *w, const char *name, double seconds) {
  plan p = resolve(w, name);
  if (!known(&p, name)) {
    return;
  }
  size_t n = 0;
  double cpu0 = cpu_us();
  int64_t t0 = hrl_now_us(), now = t0;
  int64_t end = t0 + (int64_t)(seconds * 1e6);
  while (now < end || n == 0) {
    double lat = cycle(w, &p);
    if (n == w->lat_cap) {
      w->lat_cap = w->lat_cap ? 2 * w->lat_cap : 65536;
      w->lat = realloc(w->lat, w->lat_cap * sizeof *w->lat);
      if (w->lat == NULL) {
        die("out of memory");
      }
    }
    w->lat[n++] = lat;
    now = hrl_now_us();
  }
  double cpu = cpu_us() - cpu0;
  printf("{\"cycles\": %zu, \"elapsed\": %.6f, \"cpu_us\": %.1f, \"lat\": [", n,
         (double)(now - t0) / 1e6, cpu);
  for (size_t i = 0; i < n; i++) {
    printf(i ? ",%.0f" : "%.0f", w->lat[i]);
  }
  printf("]}\n");
  fflush(stdout);
}

/* Exactly k cycles, nothing timed (the profile phase's counts). */
static void count_case(worker *w, const char *name, long k) {
  plan p = resolve(w, name);
  if (!known(&p, name)) {
    return;
  }
  for (long i = 0; i < k; i++) {
    cycle(w, &p);
  }
  printf("{\"cycles\": %ld}\n", k);
  fflush(stdout);
}

static void hold(worker *w, long k) {
  w->held = calloc((size_t)k, sizeof *w->held);
  if (w->held == NULL) {
    die("out of memory");
  }
  char name[64];
  for (long i = 0; i < k; i++) {
    snprintf(name, sizeof name, "bench:hold:c:%ld", i);
    check(hrl_lock_new(w->clients[0], name, strlen(name), TTL_MS, &w->held[i],
                       NULL, 0),
          NULL, "lock_new");
    check(hrl_lock_acquire(w->held[i], 0), w->held[i], "hold acquire");
  }
  w->n_held = k;
  printf("{\"held\": %ld}\n", k);
  fflush(stdout);
}

static void unhold(worker *w) {
  for (long i = 0; i < w->n_held; i++) {
    check(hrl_lock_release(w->held[i]), w->held[i], "hold release");
    hrl_lock_free(w->held[i]);
  }
  free(w->held);
  w->held = NULL;
  printf("{\"released\": %ld}\n", w->n_held);
  w->n_held = 0;
  fflush(stdout);
}

static void cycles(worker *w, long k) {
  for (long i = 0; i < k; i++) {
    new_lock_cycle(w->clients[0], "bench:drift:c");
  }
  printf("{\"cycles\": %ld}\n", k);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hrl-bench-worker URL1,URL2,...\n");
    return 2;
  }
  static worker w;
  format_floor_commands();
  char *copy = strdup(argv[1]);
  for (char *u = strtok(copy, ","); u != NULL && w.n_urls < MASTERS_MAX;
       u = strtok(NULL, ",")) {
    w.urls[w.n_urls++] = u;
  }
  for (size_t i = 0; i < w.n_urls; i++) {
    w.conns[i] = connect_url(w.urls[i]);
  }
  for (int i = 0; i < N_CLIENTS; i++) {
    size_t n = (size_t)client_sizes[i];
    if (n > w.n_urls) {
      continue;
    }
    char detail[HRL_DETAIL_MAX];
    char name[32];
    snprintf(name, sizeof name, "bench:c-n%zu", n);
    if (hrl_client_new(w.urls, n, NULL, &w.clients[i], detail, sizeof detail) !=
            HRL_OK ||
        hrl_lock_new(w.clients[i], name, strlen(name), TTL_MS, &w.locks[i],
                     detail, sizeof detail) != HRL_OK) {
      die(detail);
    }
  }
  char line[256], cmd[32], name[32];
  double arg;
  hrl_options o;
  hrl_options_init(&o);
  printf("{\"ready\": true, \"defaults\": {\"connect_timeout_ms\": %u, "
         "\"timeout_ms\": %u, \"retry_delay_ms\": %u, "
         "\"retry_jitter_ms\": %u, \"drift_factor\": %g}}\n",
         (unsigned)o.connect_timeout_ms, (unsigned)o.timeout_ms,
         (unsigned)o.retry_delay_ms, (unsigned)o.retry_jitter_ms,
         o.drift_factor);
  fflush(stdout);
  while (fgets(line, sizeof line, stdin) != NULL) {
    int got = sscanf(line, "%31s %31s %lf", cmd, name, &arg);
    if (got == 3 && strcmp(cmd, "run") == 0) {
      run_case(&w, name, arg);
    } else if (got == 3 && strcmp(cmd, "count") == 0) {
      count_case(&w, name, (long)arg);
    } else if (got >= 2 && strcmp(cmd, "hold") == 0) {
      hold(&w, atol(name));
    } else if (got >= 1 && strcmp(cmd, "unhold") == 0) {
      unhold(&w);
    } else if (got >= 2 && strcmp(cmd, "cycles") == 0) {
      cycles(&w, atol(name));
    } else if (got >= 1 && strcmp(cmd, "quit") == 0) {
      break;
    } else {
      printf("{\"error\": \"bad command\"}\n");
      fflush(stdout);
    }
  }
  for (int i = 0; i < N_CLIENTS; i++) {
    hrl_lock_free(w.locks[i]);
    hrl_client_free(w.clients[i]);
  }
  for (size_t i = 0; i < w.n_urls; i++) {
    redisFree(w.conns[i]);
  }
  free(w.lat);
  redisFreeCommand(set_cmd);
  redisFreeCommand(evalsha_cmd);
  free(copy);
  return 0;
}
