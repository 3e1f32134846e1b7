/*
 * The C worker (tests/workers/README.md): a long-lived process that answers
 * each command read on stdin with one JSON line, so the benchmark can
 * interleave it with the Python, Lua and Node workers on the same servers
 * and the reliability cases can drive it like the others. Connections stay
 * open between commands.
 *
 *   run CASE SECONDS  back-to-back uncontended acquire+release cycles for
 *                     SECONDS; answers the cycles, the elapsed time, this
 *                     process's CPU time and every acquire's latency (us)
 *   count CASE K      exactly K cycles, nothing timed (callgrind, strace)
 *   hold K            acquires K locks on distinct names (N = 1) and keeps
 *                     them (the memory case reads this process's RSS)
 *   lease K TTL_MS N  acquires K auto-renewed locks (TTL_MS, on the first N
 *                     masters, a client of their own) and keeps them (the
 *                     leases phase reads this process's CPU time)
 *   unhold            releases and frees them (and the leases' client)
 *   cycles K          K cycles, a new lock object each (the RSS drift case)
 *   client ..., cancel ...   reliability case 7 (cancel.c)
 *   quit
 *
 * Cases:
 *   raw, fanK    the floor: raw hiredis round trips (floor.c)
 *   raw-exact    the same with hiredlock's N = 1 commands (diagnostic)
 *   c-nK         hiredlock's C API on K masters, one lock object reused
 *   c-fenced-nK  the same with a fenced lock (hrl_lock_fence)
 *   c-owner-nK   the same with an owner label (hrl_lock_options.owner)
 *   c-new-n1     hiredlock's C API, a new lock object per cycle
 *
 * Usage: hrl-worker URL1,URL2,... (redis://127.0.0.1:PORT only for the
 * floor cases)
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker.h"

static const int client_sizes[] = {1, 3, 5, 7};
enum { N_CLIENTS = sizeof client_sizes / sizeof client_sizes[0] };

typedef struct worker {
  size_t n_urls;
  const char *urls[MASTERS_MAX];
  redisContext *conns[MASTERS_MAX]; /* the floor's, opened on first use */
  redisContext *exact_conn;         /* raw-exact's, opened on first use */
  hrl_client *clients[N_CLIENTS];
  hrl_lock *locks[N_CLIENTS];
  hrl_lock *fenced[N_CLIENTS]; /* the same names' fenced twins */
  hrl_lock *owned[N_CLIENTS];  /* ... and labelled ones (owner) */
  hrl_lock **held;
  long n_held;
  hrl_client *lease_client; /* the leases' ("lease"), NULL otherwise */
  double *lat;
  size_t lat_cap;
  hrl_options cancel_options; /* set by "client" */
} worker;

static double cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void die(const char *what) {
  fprintf(stderr, "hrl-worker: %s\n", what);
  exit(1);
}

void answer(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

bool option(const char *line, const char *key, char *out, size_t size) {
  size_t klen = strlen(key);
  for (const char *p = line; (p = strstr(p, key)) != NULL; p += klen) {
    if ((p == line || p[-1] == ' ') && p[klen] == '=') {
      const char *v = p + klen + 1;
      size_t n = strcspn(v, " \t\r\n");
      snprintf(out, size, "%.*s", (int)n, v);
      return true;
    }
  }
  return false;
}

static void check(hrl_status st, hrl_lock *lk, const char *what) {
  if (st != HRL_OK) {
    fprintf(stderr, "hrl-worker: %s: %s: %s\n", what, hrl_strerror(st),
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
typedef enum kind { K_UNKNOWN, K_FLOOR, K_EXACT, K_LOCK, K_NEW_LOCK } kind;
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
  } else if (strcmp(name, "raw-exact") == 0) {
    p.kind = K_EXACT;
    if (w->exact_conn == NULL) {
      w->exact_conn = exact_connect(w->urls[0]);
    }
  } else if (sscanf(name, "fan%d%c", &k, &tail) == 1 && k > 1 &&
             (size_t)k <= w->n_urls) {
    p.kind = K_FLOOR;
    p.masters = k;
  } else if (sscanf(name, "c-n%d%c", &k, &tail) == 1 && client_index(k) >= 0 &&
             (size_t)k <= w->n_urls) {
    p.kind = K_LOCK;
    p.lock = w->locks[client_index(k)];
  } else if (sscanf(name, "c-fenced-n%d%c", &k, &tail) == 1 &&
             client_index(k) >= 0 && (size_t)k <= w->n_urls) {
    p.kind = K_LOCK;
    p.lock = w->fenced[client_index(k)];
  } else if (sscanf(name, "c-owner-n%d%c", &k, &tail) == 1 &&
             client_index(k) >= 0 && (size_t)k <= w->n_urls) {
    p.lock = w->owned[client_index(k)];
    p.kind = p.lock != NULL ? K_LOCK : K_UNKNOWN;
  } else if (strcmp(name, "c-new-n1") == 0) {
    p.kind = K_NEW_LOCK;
  }
  for (int i = 0; p.kind == K_FLOOR && i < p.masters; i++) {
    if (w->conns[i] == NULL) {
      w->conns[i] = floor_connect(w->urls[i]);
    }
  }
  return p;
}

/* One cycle; returns the acquire's latency in us. */
static double cycle(worker *w, const plan *p) {
  switch (p->kind) {
  case K_FLOOR:
    return floor_cycle(w->conns, p->masters);
  case K_EXACT:
    return exact_cycle(w->exact_conn);
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

/* Acquires k locks with settings lo on client c, kept in w->held. */
static void hold_with(worker *w, long k, hrl_client *c,
                      const hrl_lock_options *lo, const char *prefix) {
  w->held = calloc((size_t)k, sizeof *w->held);
  if (w->held == NULL) {
    die("out of memory");
  }
  char name[64];
  for (long i = 0; i < k; i++) {
    snprintf(name, sizeof name, "%s%ld", prefix, i);
    check(hrl_lock_new_with(c, name, strlen(name), lo, &w->held[i], NULL, 0),
          NULL, "lock_new");
    check(hrl_lock_acquire(w->held[i], 0), w->held[i], "hold acquire");
  }
  w->n_held = k;
  printf("{\"held\": %ld}\n", k);
  fflush(stdout);
}

static void hold(worker *w, long k) {
  hrl_lock_options lo;
  hrl_lock_options_init(w->clients[0], &lo);
  lo.ttl_ms = TTL_MS;
  hold_with(w, k, w->clients[0], &lo, "bench:hold:c:");
}

/* "lease K TTL_MS N": K managed leases on a client of their own, so the
 * CPU time measured is its renewer's. */
static void lease(worker *w, const char *line) {
  long k = 0, ttl_ms = 0, n = 0;
  if (sscanf(line, "%*s %ld %ld %ld", &k, &ttl_ms, &n) != 3 || k <= 0 ||
      n <= 0 || (size_t)n > w->n_urls) {
    printf("{\"error\": \"usage: lease K TTL_MS N\"}\n");
    fflush(stdout);
    return;
  }
  char detail[HRL_DETAIL_MAX];
  if (hrl_client_new(w->urls, (size_t)n, NULL, &w->lease_client, detail,
                     sizeof detail) != HRL_OK) {
    die(detail);
  }
  hrl_lock_options lo;
  hrl_lock_options_init(w->lease_client, &lo);
  lo.ttl_ms = (uint32_t)ttl_ms;
  lo.auto_renew = true;
  hold_with(w, k, w->lease_client, &lo, "bench:lease:c:");
}

static void unhold(worker *w) {
  for (long i = 0; i < w->n_held; i++) {
    check(hrl_lock_release(w->held[i]), w->held[i], "hold release");
    hrl_lock_free(w->held[i]);
  }
  free(w->held);
  w->held = NULL;
  hrl_client_free(w->lease_client);
  w->lease_client = NULL;
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
    fprintf(stderr, "usage: hrl-worker URL1,URL2,...\n");
    return 2;
  }
  static worker w;
  floor_init();
  char *copy = strdup(argv[1]);
  for (char *u = strtok(copy, ","); u != NULL && w.n_urls < MASTERS_MAX;
       u = strtok(NULL, ",")) {
    w.urls[w.n_urls++] = u;
  }
  for (int i = 0; i < N_CLIENTS; i++) {
    size_t n = (size_t)client_sizes[i];
    if (n > w.n_urls) {
      continue;
    }
    char detail[HRL_DETAIL_MAX];
    char name[32], fenced_name[32], owned_name[32];
    snprintf(name, sizeof name, "bench:c-n%zu", n);
    snprintf(fenced_name, sizeof fenced_name, "bench:c-fenced-n%zu", n);
    snprintf(owned_name, sizeof owned_name, "bench:c-owner-n%zu", n);
    hrl_lock_options lo;
    /* Room for a stall of the one CPU every process is pinned to (as the
     * Python and Lua workers): these bound only late replies. */
    hrl_options tolerant;
    hrl_options_init(&tolerant);
    tolerant.connect_timeout_ms = 1000;
    tolerant.timeout_ms = 500;
    if (hrl_client_new(w.urls, n, &tolerant, &w.clients[i], detail,
                       sizeof detail) != HRL_OK ||
        hrl_lock_new(w.clients[i], name, strlen(name), TTL_MS, &w.locks[i],
                     detail, sizeof detail) != HRL_OK) {
      die(detail);
    }
    hrl_lock_options_init(w.clients[i], &lo);
    lo.ttl_ms = TTL_MS;
    lo.fenced = true;
    if (hrl_lock_new_with(w.clients[i], fenced_name, strlen(fenced_name), &lo,
                          &w.fenced[i], detail, sizeof detail) != HRL_OK) {
      die(detail);
    }
#ifdef HRL_OWNER_HOST_PID /* an older core (bench/ab-worker.sh) has none */
    lo.fenced = false;
    lo.owner = HRL_OWNER_HOST_PID;
    if (hrl_lock_new_with(w.clients[i], owned_name, strlen(owned_name), &lo,
                          &w.owned[i], detail, sizeof detail) != HRL_OK) {
      die(detail);
    }
#endif
  }
  hrl_options_init(&w.cancel_options);
  char line[1024], cmd[32], name[32];
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
    } else if (got >= 1 && strcmp(cmd, "lease") == 0) {
      lease(&w, line);
    } else if (got >= 1 && strcmp(cmd, "unhold") == 0) {
      unhold(&w);
    } else if (got >= 2 && strcmp(cmd, "cycles") == 0) {
      cycles(&w, atol(name));
    } else if (got >= 1 && strcmp(cmd, "client") == 0) {
      client_command(&w.cancel_options, line);
    } else if (got >= 1 && strcmp(cmd, "cancel") == 0) {
      cancel_command(w.urls, w.n_urls, &w.cancel_options, line);
    } else if (got >= 1 && strcmp(cmd, "quit") == 0) {
      break;
    } else {
      printf("{\"error\": \"bad command\"}\n");
      fflush(stdout);
    }
  }
  for (int i = 0; i < N_CLIENTS; i++) {
    hrl_lock_free(w.locks[i]);
    hrl_lock_free(w.fenced[i]);
    hrl_lock_free(w.owned[i]);
    hrl_client_free(w.clients[i]);
  }
  for (size_t i = 0; i < w.n_urls; i++) {
    if (w.conns[i] != NULL) {
      redisFree(w.conns[i]);
    }
  }
  if (w.exact_conn != NULL) {
    redisFree(w.exact_conn);
  }
  free(w.lat);
  floor_free();
  free(copy);
  return 0;
}
