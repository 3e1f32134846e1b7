/*
 * Scenarios: everything about a world that is chosen up front, made from
 * a seed (sim_scenario_generate), written as text and read back (so that a
 * shrunk failing scenario replays exactly: `hrl-sim --replay FILE`), and
 * shrunk (fewer faults and sessions, the same kind of violation). What is
 * drawn while the world runs (delays, tokens, jitter) comes from the
 * seed's streams (rng.c), so a scenario file and its seed are the whole
 * run.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

static int64_t pick(sim_rng *r, const int64_t *v, int n) {
  return v[sim_rng_range(r, 0, n - 1)];
}

#define PICK(r, ...)                                                           \
  pick((r), (const int64_t[]){__VA_ARGS__},                                    \
       (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* What a seed stresses most: its draws lean that way. */
typedef enum flavor {
  FLAVOR_MIXED,  /* a bit of everything */
  FLAVOR_FENCES, /* fenced acquires racing over masters that fail apart */
  FLAVOR_WAITS,  /* many waiters on one name, hand-offs, dead waiters */
  FLAVOR_CLOCKS  /* clocks at the edges of the drift, short TTLs, leases,
                    frozen clients */
} flavor;

static double rate_within(sim_rng *r, double drift_factor, flavor f) {
  /* Any two clocks' rates differ by less than drift_factor: each is
   * within half of it of the true rate (at its edge for FLAVOR_CLOCKS). */
  double at = f == FLAVOR_CLOCKS ? (sim_rng_chance(r, 50) ? 1.0 : -1.0)
                                 : 2.0 * sim_rng_unit(r) - 1.0;
  return 1.0 + at * drift_factor * 0.49;
}

static void gen_session(sim_rng *r, sim_scenario *sc, sim_session *s,
                        flavor f) {
  s->name = (int)sim_rng_range(r, 0, sc->names - 1);
  s->ttl_ms = f == FLAVOR_CLOCKS
                  ? (uint32_t)PICK(r, 30, 50, 60, 100)
                  : (uint32_t)PICK(r, 30, 60, 100, 100, 250, 1000);
  if (s->ttl_ms < 10 * sc->timeout_ms && sim_rng_chance(r, 70)) {
    s->ttl_ms = 10 * sc->timeout_ms; /* rounds at their full timeout */
  }
  s->wait_ms = sim_rng_chance(r, 20)
                   ? 0
                   : sim_rng_range(r, s->ttl_ms / 2, 4 * (int64_t)s->ttl_ms);
  if (s->wait_ms > 3000) {
    s->wait_ms = 3000;
  }
  if (f == FLAVOR_FENCES && sim_rng_chance(r, 50)) {
    s->wait_ms = 0; /* attempts that fail part way raise some counters */
  }
  if (f == FLAVOR_WAITS) {
    s->wait_ms = sim_rng_range(r, 2 * (int64_t)s->ttl_ms, 3000);
  }
  s->fenced = f == FLAVOR_FENCES || sim_rng_chance(r, 35);
  s->lease = sim_rng_chance(r, f == FLAVOR_CLOCKS ? 40 : 20);
  s->max_hold_ms = s->lease && sim_rng_chance(r, 40)
                       ? (uint32_t)sim_rng_range(r, s->ttl_ms, 4 * s->ttl_ms)
                       : 0;
  int64_t ttl = s->ttl_ms;
  s->hold_ms = s->lease                ? sim_rng_range(r, 0, 3 * ttl)
               : sim_rng_chance(r, 15) ? sim_rng_range(r, ttl, 2 * ttl)
               : f == FLAVOR_WAITS     ? sim_rng_range(r, 0, ttl / 4)
                                       : sim_rng_range(r, 0, ttl * 8 / 10);
  s->extends = sim_rng_chance(r, f == FLAVOR_CLOCKS ? 50 : 20)
                   ? (int)sim_rng_range(r, 1, 2)
                   : 0;
  s->extend_ttl_ms = 0; /* the lock's: only a scenario file asks others */
  s->writes = s->fenced ? (int)sim_rng_range(r, 0, 3) : 0;
  s->stall_ms = s->writes > 0 && sim_rng_chance(r, 20)
                    ? sim_rng_range(r, ttl / 2, 2 * ttl)
                    : 0;
  s->cancel_ms = -1;
  s->vanish = false;
  if (s->wait_ms > 0 && sim_rng_chance(r, f == FLAVOR_WAITS ? 25 : 14)) {
    s->cancel_ms = sim_rng_range(r, 0, s->wait_ms);
    s->vanish = sim_rng_chance(r, 30);
  }
  s->abandon = sim_rng_chance(r, 5);
}

static bool overlaps_restart(const sim_scenario *sc, const sim_fault *f) {
  for (int i = 0; i < sc->faults; i++) {
    const sim_fault *o = &sc->fault[i];
    bool down = o->kind == FAULT_MASTER_RESTART || o->kind == FAULT_MASTER_WIPE;
    bool wipes = f->kind == FAULT_MASTER_WIPE && o->kind == FAULT_MASTER_WIPE;
    bool apart =
        f->at_us + f->dur_us < o->at_us || o->at_us + o->dur_us < f->at_us;
    if (down && !apart && (o->master == f->master || wipes)) {
      return true;
    }
  }
  return false;
}

static void gen_fault(sim_rng *r, sim_scenario *sc, int64_t max_ttl_ms,
                      flavor fl) {
  sim_fault f = {0};
  int64_t t = sc->timeout_ms, ms = 1000;
  /* Replica lags are drawn apart (gen_sync), so that the worlds of the
   * seeds without replication stay what they were. */
  f.kind = (sim_fault_kind)sim_rng_range(r, 0, FAULT_ERRORS);
  if (fl == FLAVOR_FENCES && sim_rng_chance(r, 60)) {
    /* one master out of step with the others for a while */
    f.kind = (sim_fault_kind)PICK(r, FAULT_PARTITION, FAULT_SLOW,
                                  FAULT_MASTER_PAUSE, FAULT_RESET);
  } else if (fl == FLAVOR_CLOCKS && sim_rng_chance(r, 50)) {
    f.kind = (sim_fault_kind)PICK(r, FAULT_CLIENT_PAUSE, FAULT_SLOW);
  } else if (fl == FLAVOR_WAITS && sim_rng_chance(r, 50)) {
    f.kind = (sim_fault_kind)PICK(r, FAULT_RESET, FAULT_MASTER_PAUSE,
                                  FAULT_SCRIPT_FLUSH, FAULT_ERRORS);
  }
  if (f.kind == FAULT_MASTER_WIPE && sc->masters == 1) {
    /* No other master to take the fence counters back from: N = 1 is
     * out of the fences' assumptions after a wipe (docs/SAFETY.md). */
    f.kind = FAULT_MASTER_RESTART;
  }
  f.at_us = sim_rng_range(r, 0, 2000 * ms);
  f.master = (int)sim_rng_range(r, 0, sc->masters - 1);
  f.client = (int)sim_rng_range(r, 0, sc->clients - 1);
  switch (f.kind) {
  case FAULT_MASTER_PAUSE:
    f.dur_us = sim_rng_range(r, t * ms / 2, 3 * max_ttl_ms * ms);
    break;
  case FAULT_MASTER_RESTART:
    f.dur_us = sim_rng_range(r, ms, max_ttl_ms * ms);
    break;
  case FAULT_MASTER_WIPE:
    f.dur_us = sim_rng_range(r, (max_ttl_ms + 10) * ms, 2 * max_ttl_ms * ms);
    break;
  case FAULT_PARTITION:
    f.dur_us = sim_rng_range(r, t * ms / 2, 2 * max_ttl_ms * ms);
    break;
  case FAULT_SLOW:
    f.dur_us = sim_rng_range(r, 10 * ms, 500 * ms);
    f.extra_us = sim_rng_range(r, t * ms / 2, 3 * t * ms);
    break;
  case FAULT_CLIENT_PAUSE:
    f.dur_us = sim_rng_range(r, max_ttl_ms * ms / 4, 2 * max_ttl_ms * ms);
    break;
  case FAULT_ERRORS:
    f.dur_us = sim_rng_range(r, t * ms, 200 * ms);
    f.extra_us = sim_rng_chance(r, 20);
    break;
  default: /* SCRIPT_FLUSH, RESET: an instant */
    break;
  }
  if (!overlaps_restart(sc, &f)) {
    sc->fault[sc->faults++] = f;
  }
}

/* Replication, in one world of eight: each master's replicas, the
 * clients' sync_replicas or sync_aof, and the times replicas lag. From a
 * stream of the seed's own, so that the other worlds stay as they were. */
static void gen_sync(sim_scenario *sc, int64_t max_ttl_ms) {
  sim_rng r;
  sim_rng_init(&r, sc->seed, 5, 0);
  if (!sim_rng_chance(&r, 12)) {
    return;
  }
  sc->replicas = (int)sim_rng_range(&r, 1, 2);
  sc->sync_aof = sim_rng_chance(&r, 35);
  sc->sync_replicas =
      (int)sim_rng_range(&r, sc->sync_aof ? 0 : 1, sc->replicas);
  int lags = (int)PICK(&r, 0, 1, 1, 2, 3);
  for (int k = 0; k < lags && sc->faults < SIM_FAULTS_MAX; k++) {
    sim_fault f = {0};
    f.kind = FAULT_REPLICA_LAG;
    f.at_us = sim_rng_range(&r, 0, 2000 * 1000);
    f.dur_us = sim_rng_range(&r, 10 * 1000, 2 * max_ttl_ms * 1000);
    f.extra_us = sim_rng_range(&r, 1, sc->replicas);
    f.master = (int)sim_rng_range(&r, 0, sc->masters - 1);
    sc->fault[sc->faults++] = f;
  }
}

/* Fenced acquires racing through a slow link, in one world of ten: three
 * masters, one name, every session fenced and short, and links of a
 * client to a master slow but within the timeout for a while, so that
 * many fence rounds go out while one of the attempt's masters is slow to
 * answer. Such a round is decided by the others' answers, and the fence
 * script's token check is what keeps a master that holds another's key
 * out of them (docs/SAFETY.md). From a stream of the seed's own, so that
 * the other worlds stay as they were. */
static void gen_fence_race(sim_scenario *sc) {
  sim_rng r;
  sim_rng_init(&r, sc->seed, 6, 0);
  if (!sim_rng_chance(&r, 10)) {
    return;
  }
  sc->masters = 3;
  sc->names = 1;
  sc->timeout_ms = (uint32_t)PICK(&r, 20, 50);
  sc->connect_timeout_ms = 2 * sc->timeout_ms;
  sc->retry_delay_ms = (uint32_t)PICK(&r, 10, 30);
  sc->retry_jitter_ms = sc->retry_delay_ms / 2;
  for (int i = 0; i < sc->sessions; i++) {
    sim_session *s = &sc->session[i];
    s->name = 0;
    s->fenced = true;
    s->ttl_ms = 10 * sc->timeout_ms;
    s->hold_ms = sim_rng_range(&r, 0, s->ttl_ms / 4);
    s->wait_ms = sim_rng_chance(&r, 50) ? 0 : sim_rng_range(&r, 50, 500);
    s->cancel_ms = -1;
    s->stall_ms = 0;
  }
  int kept = 0;
  for (int i = 0; i < sc->faults; i++) {
    if (sc->fault[i].master < sc->masters) {
      sc->fault[kept++] = sc->fault[i]; /* of the masters that stay */
    }
  }
  sc->faults = kept;
  int slow = (int)sim_rng_range(&r, 1, 3);
  for (int k = 0; k < slow && sc->faults < SIM_FAULTS_MAX; k++) {
    sim_fault f = {0};
    f.kind = FAULT_SLOW;
    f.at_us = sim_rng_range(&r, 0, 500 * 1000);
    f.dur_us = sim_rng_range(&r, 200 * 1000, 1000 * 1000);
    f.extra_us = sim_rng_range(&r, sc->timeout_ms * 1000 / 4,
                               sc->timeout_ms * 1000 * 9 / 20);
    f.client = (int)sim_rng_range(&r, 0, sc->clients - 1);
    f.master = (int)sim_rng_range(&r, 0, sc->masters - 1);
    sc->fault[sc->faults++] = f;
  }
}

/* Whether two faults may not run together (gen_fault's rule, both ways):
 * a master down while anything else happens to it, or two wipes. */
static bool clash(const sim_fault *a, const sim_fault *b) {
  bool a_down = a->kind == FAULT_MASTER_RESTART || a->kind == FAULT_MASTER_WIPE;
  bool b_down = b->kind == FAULT_MASTER_RESTART || b->kind == FAULT_MASTER_WIPE;
  bool wipes = a->kind == FAULT_MASTER_WIPE && b->kind == FAULT_MASTER_WIPE;
  bool apart =
      a->at_us + a->dur_us < b->at_us || b->at_us + b->dur_us < a->at_us;
  return !apart && (wipes || ((a_down || b_down) && a->master == b->master));
}

/* A master restarts empty only after being down at least the longest TTL
 * of the world (docs/SAFETY.md's condition for exclusion without
 * restart_guard; MODEL.md). gen_fault draws a wipe's downtime from the
 * TTLs of the sessions as first drawn, which a fence race then replaces
 * (ten timeouts, up to 500 ms): a wipe of 141 ms under TTLs of 500 ms
 * gave two holders whose quorums met only at the wiped master (seed
 * 250983, regress/restart-guard-early-wipe.txt). So, last, every wipe
 * shorter than that is drawn again past it, from a stream of the seed's
 * own (the other worlds stay as they were), and left out if it would
 * then run into another restart of its master or another wipe. */
static void keep_wipes_past_ttl(sim_scenario *sc) {
  int64_t max_ttl = 0;
  for (int i = 0; i < sc->sessions; i++) {
    int64_t ttl = sc->session[i].ttl_ms;
    max_ttl = ttl > max_ttl ? ttl : max_ttl;
  }
  sim_rng r;
  sim_rng_init(&r, sc->seed, 7, 0);
  sim_fault drawn[SIM_FAULTS_MAX];
  bool again[SIM_FAULTS_MAX], kept[SIM_FAULTS_MAX];
  for (int i = 0; i < sc->faults; i++) {
    drawn[i] = sc->fault[i];
    again[i] =
        drawn[i].kind == FAULT_MASTER_WIPE && drawn[i].dur_us < max_ttl * 1000;
    if (again[i]) {
      drawn[i].dur_us =
          sim_rng_range(&r, (max_ttl + 10) * 1000, 2 * max_ttl * 1000);
    }
  }
  int n = 0;
  for (int i = 0; i < sc->faults; i++) {
    kept[i] = true;
    for (int j = 0; j < sc->faults && again[i] && kept[i]; j++) {
      kept[i] = j == i || (j < i && !kept[j]) || !clash(&drawn[i], &drawn[j]);
    }
    if (kept[i]) {
      sc->fault[n++] = drawn[i];
    }
  }
  sc->faults = n;
}

bool sim_scenario_assumed(const sim_scenario *sc, char *why, size_t size) {
  int64_t max_ttl = 0;
  for (int i = 0; i < sc->sessions; i++) {
    int64_t ttl = sc->session[i].ttl_ms;
    max_ttl = ttl > max_ttl ? ttl : max_ttl;
  }
  if (sc->restart_guard_ms >= max_ttl) {
    return true; /* a wiped master gets no vote until the TTLs lapse */
  }
  for (int i = 0; i < sc->faults; i++) {
    const sim_fault *f = &sc->fault[i];
    if (f->kind == FAULT_MASTER_WIPE && f->dur_us < max_ttl * 1000) {
      snprintf(why, size,
               "master %d restarts empty after %.3f ms down, under the "
               "longest TTL (%" PRId64 " ms)",
               f->master, (double)f->dur_us / 1000.0, max_ttl);
      return false;
    }
  }
  return true;
}

void sim_scenario_generate(sim_scenario *sc, uint64_t seed) {
  sim_rng r;
  sim_rng_init(&r, seed, 3, 0);
  memset(sc, 0, sizeof *sc);
  sc->seed = seed;
  flavor fl = (flavor)PICK(&r, FLAVOR_MIXED, FLAVOR_MIXED, FLAVOR_MIXED,
                           FLAVOR_FENCES, FLAVOR_WAITS, FLAVOR_CLOCKS);
  sc->masters = fl == FLAVOR_FENCES
                    ? (int)PICK(&r, 3, 3, 5)
                    : (int)PICK(&r, 1, 1, 2, 3, 3, 3, 3, 5, 5, 5);
  sc->clients = (int)sim_rng_range(&r, fl == FLAVOR_MIXED ? 2 : 3, 4);
  sc->lanes = fl == FLAVOR_WAITS || sim_rng_chance(&r, 40) ? 2 : 1;
  sc->names = fl == FLAVOR_WAITS || sim_rng_chance(&r, 75) ? 1 : 2;
  sc->timeout_ms = (uint32_t)PICK(&r, 5, 10, 10, 20, 50);
  sc->connect_timeout_ms = 2 * sc->timeout_ms;
  sc->retry_delay_ms = (uint32_t)PICK(&r, 10, 30, 100, 200);
  sc->retry_jitter_ms = (uint32_t)(sc->retry_delay_ms * PICK(&r, 0, 1, 2) / 4);
  sc->drift_factor = (double)PICK(&r, 10, 10, 10, 10, 50, 1, 0) / 1000.0;
  if (fl == FLAVOR_CLOCKS) {
    sc->drift_factor = (double)PICK(&r, 10, 50, 100) / 1000.0;
  }
  sc->handshake = sim_rng_chance(&r, 15);
  sc->driver = sim_rng_chance(&r, 50) ? DRIVER_POOLED : DRIVER_SERIAL;
  int64_t wall = 1700000000000000LL + sim_rng_range(&r, 0, 1000000000000LL);
  for (int c = 0; c < sc->clients; c++) {
    sc->client_rate[c] = rate_within(&r, sc->drift_factor, fl);
    sc->client_offset_us[c] = sim_rng_range(&r, 1000000, 1000000000000LL);
    sc->client_wall_us[c] = wall + sim_rng_range(&r, -50000, 50000);
  }
  for (int m = 0; m < sc->masters; m++) {
    sc->master_rate[m] = rate_within(&r, sc->drift_factor, fl);
    sc->master_offset_us[m] = sim_rng_range(&r, 0, 1000000000000LL);
  }
  sc->net_min_us = sim_rng_range(&r, 20, 100);
  sc->net_max_us = sc->net_min_us + sim_rng_range(&r, 50, 1000);
  int64_t max_ttl = 0;
  for (int c = 0; c < sc->clients; c++) {
    for (int l = 0; l < sc->lanes; l++) {
      int count = (int)sim_rng_range(&r, 1, 5);
      int64_t at = sim_rng_range(&r, 0, 300000);
      for (int k = 0; k < count && sc->sessions < SIM_SESSIONS_MAX; k++) {
        sim_session *s = &sc->session[sc->sessions++];
        s->client = c;
        s->lane = l;
        s->at_us = at;
        gen_session(&r, sc, s, fl);
        max_ttl = s->ttl_ms > max_ttl ? s->ttl_ms : max_ttl;
        at += sim_rng_range(&r, 0, 200000);
      }
    }
  }
  int faults = sim_rng_chance(&r, fl == FLAVOR_MIXED ? 30 : 10)
                   ? 0
                   : (int)sim_rng_range(&r, 1, 6);
  for (int k = 0; k < faults; k++) {
    gen_fault(&r, sc, max_ttl, fl);
  }
  gen_sync(sc, max_ttl);
  gen_fence_race(sc);
  keep_wipes_past_ttl(sc);
}

/* ---- text ---- */

static const char *const fault_names[FAULT_KINDS] = {
    "master-pause", "master-restart", "master-wipe", "script-flush",
    "partition",    "reset",          "slow",        "client-pause",
    "errors",       "replica-lag"};

bool sim_scenario_write(const sim_scenario *sc, const char *path) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
  if (f == NULL) {
    return false;
  }
  fprintf(f, "hrl-sim scenario 1\nseed %" PRIu64 "\n", sc->seed);
  if (sc->expect != V_NONE) {
    fprintf(f, "expect %s\n", sim_violation_name(sc->expect));
  }
  fprintf(f,
          "world masters=%d clients=%d lanes=%d names=%d timeout=%u "
          "connect=%u retry_delay=%u retry_jitter=%u drift=%.17g "
          "handshake=%d driver=%d net_min=%" PRId64 " net_max=%" PRId64
          " replicas=%d sync_replicas=%d sync_aof=%d restart_guard=%u\n",
          sc->masters, sc->clients, sc->lanes, sc->names, sc->timeout_ms,
          sc->connect_timeout_ms, sc->retry_delay_ms, sc->retry_jitter_ms,
          sc->drift_factor, sc->handshake, sc->driver, sc->net_min_us,
          sc->net_max_us, sc->replicas, sc->sync_replicas, sc->sync_aof,
          sc->restart_guard_ms);
  for (int c = 0; c < sc->clients; c++) {
    fprintf(f, "client id=%d rate=%.17g offset=%" PRId64 " wall=%" PRId64 "\n",
            c, sc->client_rate[c], sc->client_offset_us[c],
            sc->client_wall_us[c]);
  }
  for (int m = 0; m < sc->masters; m++) {
    fprintf(f, "master id=%d rate=%.17g offset=%" PRId64 "\n", m,
            sc->master_rate[m], sc->master_offset_us[m]);
  }
  for (int i = 0; i < sc->sessions; i++) {
    const sim_session *s = &sc->session[i];
    fprintf(f,
            "session client=%d lane=%d at=%" PRId64 " name=%d wait=%" PRId64
            " ttl=%u fenced=%d lease=%d max_hold=%u hold=%" PRId64
            " extends=%d writes=%d stall=%" PRId64 " cancel=%" PRId64
            " abandon=%d vanish=%d",
            s->client, s->lane, s->at_us, s->name, s->wait_ms, s->ttl_ms,
            s->fenced, s->lease, s->max_hold_ms, s->hold_ms, s->extends,
            s->writes, s->stall_ms, s->cancel_ms, s->abandon, s->vanish);
    if (s->extend_ttl_ms != 0) {
      /* Written only when set: the scenarios of before read the same. */
      fprintf(f, " extend_ttl=%u", s->extend_ttl_ms);
    }
    fputc('\n', f);
  }
  for (int i = 0; i < sc->faults; i++) {
    const sim_fault *x = &sc->fault[i];
    fprintf(f,
            "fault kind=%s at=%" PRId64 " dur=%" PRId64 " extra=%" PRId64
            " client=%d master=%d\n",
            fault_names[x->kind], x->at_us, x->dur_us, x->extra_us, x->client,
            x->master);
  }
  return f == stdout ? fflush(f) == 0 : fclose(f) == 0;
}

/* The value of key=... in line, as text (NULL when absent). */
static const char *field(const char *line, const char *key, char *buf,
                         size_t size) {
  size_t n = strlen(key);
  for (const char *p = line; (p = strstr(p, key)) != NULL; p++) {
    if ((p == line || p[-1] == ' ') && p[n] == '=') {
      size_t len = strcspn(p + n + 1, " \n");
      if (len >= size) {
        return NULL;
      }
      memcpy(buf, p + n + 1, len);
      buf[len] = '\0';
      return buf;
    }
  }
  return NULL;
}

static bool num(const char *line, const char *key, int64_t *out) {
  char b[64], *end;
  if (field(line, key, b, sizeof b) == NULL) {
    return false;
  }
  *out = strtoll(b, &end, 10);
  return *end == '\0';
}

static bool real(const char *line, const char *key, double *out) {
  char b[64], *end;
  if (field(line, key, b, sizeof b) == NULL) {
    return false;
  }
  *out = strtod(b, &end);
  return *end == '\0' && isfinite(*out);
}

#define NUM(line, key, dst)                                                    \
  do {                                                                         \
    int64_t v_;                                                                \
    if (!num((line), (key), &v_))                                              \
      return false;                                                            \
    (dst) = v_;                                                                \
  } while (0)

static bool read_line(sim_scenario *sc, const char *l) {
  int64_t id;
  if (strncmp(l, "seed ", 5) == 0) {
    sc->seed = strtoull(l + 5, NULL, 10);
  } else if (strncmp(l, "expect ", 7) == 0) {
    sc->expect = V_KINDS;
    for (int k = 0; k < V_KINDS; k++) {
      size_t n = strlen(sim_violation_name((sim_violation_kind)k));
      if (strncmp(l + 7, sim_violation_name((sim_violation_kind)k), n) == 0 &&
          (l[7 + n] == '\n' || l[7 + n] == '\0')) {
        sc->expect = k;
      }
    }
    return sc->expect != V_KINDS;
  } else if (strncmp(l, "world ", 6) == 0) {
    NUM(l, "masters", sc->masters);
    NUM(l, "clients", sc->clients);
    NUM(l, "lanes", sc->lanes);
    NUM(l, "names", sc->names);
    NUM(l, "timeout", sc->timeout_ms);
    NUM(l, "connect", sc->connect_timeout_ms);
    NUM(l, "retry_delay", sc->retry_delay_ms);
    NUM(l, "retry_jitter", sc->retry_jitter_ms);
    NUM(l, "handshake", sc->handshake);
    NUM(l, "driver", sc->driver);
    NUM(l, "net_min", sc->net_min_us);
    NUM(l, "net_max", sc->net_max_us);
    /* replication: absent from the scenarios written before it */
    int64_t v;
    sc->replicas = num(l, "replicas", &v) ? (int)v : 0;
    sc->sync_replicas = num(l, "sync_replicas", &v) ? (int)v : 0;
    sc->sync_aof = num(l, "sync_aof", &v) && v != 0;
    /* absent from the scenarios written before it: off */
    if (!num(l, "restart_guard", &v)) {
      v = 0;
    } else if (v < 0 || v > 86400000) {
      return false;
    }
    sc->restart_guard_ms = (uint32_t)v;
    return sc->replicas >= 0 && sc->replicas <= 8 && sc->sync_replicas >= 0 &&
           sc->sync_replicas <= 8 && real(l, "drift", &sc->drift_factor) &&
           sc->masters >= 1 && sc->masters <= SIM_MASTERS_MAX &&
           sc->clients >= 1 && sc->clients <= SIM_CLIENTS_MAX &&
           sc->lanes >= 1 && sc->lanes <= SIM_LANES_MAX && sc->names >= 1 &&
           sc->driver >= 0 && sc->driver < DRIVER_KINDS &&
           sc->names <= SIM_NAMES_MAX;
  } else if (strncmp(l, "client ", 7) == 0) {
    if (!num(l, "id", &id) || id < 0 || id >= SIM_CLIENTS_MAX) {
      return false;
    }
    NUM(l, "offset", sc->client_offset_us[id]);
    NUM(l, "wall", sc->client_wall_us[id]);
    return real(l, "rate", &sc->client_rate[id]);
  } else if (strncmp(l, "master ", 7) == 0) {
    if (!num(l, "id", &id) || id < 0 || id >= SIM_MASTERS_MAX) {
      return false;
    }
    NUM(l, "offset", sc->master_offset_us[id]);
    return real(l, "rate", &sc->master_rate[id]);
  } else if (strncmp(l, "session ", 8) == 0) {
    if (sc->sessions == SIM_SESSIONS_MAX) {
      return false;
    }
    sim_session *s = &sc->session[sc->sessions++];
    NUM(l, "client", s->client);
    NUM(l, "lane", s->lane);
    NUM(l, "at", s->at_us);
    NUM(l, "name", s->name);
    NUM(l, "wait", s->wait_ms);
    NUM(l, "ttl", s->ttl_ms);
    NUM(l, "fenced", s->fenced);
    NUM(l, "lease", s->lease);
    NUM(l, "max_hold", s->max_hold_ms);
    NUM(l, "hold", s->hold_ms);
    NUM(l, "extends", s->extends);
    NUM(l, "writes", s->writes);
    NUM(l, "stall", s->stall_ms);
    NUM(l, "cancel", s->cancel_ms);
    NUM(l, "abandon", s->abandon);
    NUM(l, "vanish", s->vanish);
    int64_t extend_ttl = 0; /* optional: the lock's TTL when absent */
    if (field(l, "extend_ttl", (char[16]){0}, 16) != NULL &&
        (!num(l, "extend_ttl", &extend_ttl) || extend_ttl < 0 ||
         extend_ttl > HRL_TTL_MAX_MS)) {
      return false;
    }
    s->extend_ttl_ms = (uint32_t)extend_ttl;
    return s->client >= 0 && s->client < sc->clients && s->lane >= 0 &&
           s->lane < sc->lanes && s->name >= 0 && s->name < sc->names;
  } else if (strncmp(l, "fault ", 6) == 0) {
    if (sc->faults == SIM_FAULTS_MAX) {
      return false;
    }
    sim_fault *f = &sc->fault[sc->faults++];
    char kind[32];
    if (field(l, "kind", kind, sizeof kind) == NULL) {
      return false;
    }
    f->kind = FAULT_KINDS;
    for (int k = 0; k < FAULT_KINDS; k++) {
      if (strcmp(kind, fault_names[k]) == 0) {
        f->kind = (sim_fault_kind)k;
      }
    }
    NUM(l, "at", f->at_us);
    NUM(l, "dur", f->dur_us);
    NUM(l, "extra", f->extra_us);
    NUM(l, "client", f->client);
    NUM(l, "master", f->master);
    return f->kind != FAULT_KINDS && f->client >= 0 &&
           f->client < sc->clients && f->master >= 0 && f->master < sc->masters;
  } else if (l[0] != '#' && l[0] != '\n' && strncmp(l, "hrl-sim ", 8) != 0) {
    return false;
  }
  return true;
}

bool sim_scenario_read(sim_scenario *sc, const char *path, char *err,
                       size_t err_size) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, err_size, "cannot open %s", path);
    return false;
  }
  memset(sc, 0, sizeof *sc);
  char line[1024];
  int no = 0;
  bool ok = true;
  while (ok && fgets(line, sizeof line, f) != NULL) {
    no++;
    ok = read_line(sc, line);
  }
  fclose(f);
  if (!ok) {
    snprintf(err, err_size, "%s:%d: not a scenario line", path, no);
  }
  return ok;
}

/* ---- shrinking ---- */

/* sc without items [from, from + count) of the list faults then
 * sessions. */
static void without(const sim_scenario *sc, int from, int count,
                    sim_scenario *out) {
  *out = *sc;
  out->faults = 0;
  out->sessions = 0;
  for (int i = 0; i < sc->faults + sc->sessions; i++) {
    if (i >= from && i < from + count) {
      continue;
    }
    if (i < sc->faults) {
      out->fault[out->faults++] = sc->fault[i];
    } else {
      out->session[out->sessions++] = sc->session[i - sc->faults];
    }
  }
}

int sim_shrink(sim_scenario *sc, const sim_options *opts,
               sim_violation_kind kind, int budget) {
  static sim_scenario candidate;
  sim_result res;
  int runs = 0;
  bool progress = true;
  while (progress && runs < budget) {
    progress = false;
    int items = sc->faults + sc->sessions;
    for (int span = items / 2 > 0 ? items / 2 : 1; span >= 1 && runs < budget;
         span /= 2) {
      for (int from = 0; from < sc->faults + sc->sessions && runs < budget;) {
        without(sc, from, span, &candidate);
        sim_run(&candidate, opts, &res);
        runs++;
        if (res.violation == kind) {
          *sc = candidate;
          progress = true;
        } else {
          from += span;
        }
      }
    }
  }
  return runs;
}
