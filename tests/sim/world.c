/*
 * The event loop of one world: a binary heap of events ordered by (time,
 * sequence), so two events at one instant run in the order they were
 * made and a run is the same every time. A paused client's events wait
 * for its resume (its clock runs on, it does nothing); a paused master's
 * deliveries wait in net.c. The world ends when every lane is done, when
 * an invariant fails (check.c), or at the horizon (V_STUCK).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

/* How often liveness is looked at (its bound is 120 ms at the least). */
#define LIVENESS_EVERY_US 5000
/* Most events at one instant: more is a loop in the simulation. */
#define SAME_INSTANT_MAX 100000
#define ARENA_BLOCK (1u << 20)

/* ---- arena: what chunks and replies are made of, freed per world ---- */

typedef struct arena_block {
  struct arena_block *next;
  size_t used, cap;
  char data[];
} arena_block;

static arena_block *arena_first, *arena_cur;

void *arena_alloc(world *w, size_t size) {
  (void)w;
  size = (size + 15) & ~(size_t)15;
  if (arena_cur == NULL || arena_cur->used + size > arena_cur->cap) {
    arena_block *next = arena_cur != NULL ? arena_cur->next : arena_first;
    if (next == NULL || size > next->cap) {
      size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
      arena_block *b = malloc(sizeof *b + cap);
      if (b == NULL) {
        abort();
      }
      b->cap = cap;
      b->next = next;
      if (arena_cur != NULL) {
        arena_cur->next = b;
      } else {
        arena_first = b;
      }
      next = b;
    }
    arena_cur = next;
    arena_cur->used = 0;
  }
  void *p = arena_cur->data + arena_cur->used;
  arena_cur->used += size;
  return p;
}

static void arena_reset(void) {
  arena_cur = NULL;
  if (arena_first != NULL) {
    arena_first->used = 0;
  }
}

/* ---- the heap ---- */

static bool before(const sim_event *a, const sim_event *b) {
  return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

void ev_push(world *w, int64_t at, ev_kind kind, int a, int b, int64_t c) {
  if (w->heap_len == w->heap_cap) {
    w->heap_cap = w->heap_cap ? 2 * w->heap_cap : 1024;
    w->heap = realloc(w->heap, w->heap_cap * sizeof *w->heap);
    if (w->heap == NULL) {
      abort();
    }
  }
  sim_event e = {at < w->now ? w->now : at, w->seq++, kind, a, b, c};
  size_t i = w->heap_len++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!before(&e, &w->heap[parent])) {
      break;
    }
    w->heap[i] = w->heap[parent];
    i = parent;
  }
  w->heap[i] = e;
}

static sim_event ev_pop(world *w) {
  sim_event top = w->heap[0];
  sim_event last = w->heap[--w->heap_len];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    const sim_event *best = &last;
    if (l < w->heap_len && before(&w->heap[l], best)) {
      m = l;
      best = &w->heap[l];
    }
    if (r < w->heap_len && before(&w->heap[r], best)) {
      m = r;
    }
    if (m == i) {
      break;
    }
    w->heap[i] = w->heap[m];
    i = m;
  }
  if (w->heap_len > 0) {
    w->heap[i] = last;
  }
  return top;
}

/* ---- clocks ---- */

int64_t client_now(const world *w, const client *c) {
  return c->offset_us + (int64_t)(c->rate * (double)w->now);
}

int64_t client_to_global(const world *w, const client *c, int64_t local_us) {
  double t = (double)(local_us - c->offset_us) / c->rate;
  int64_t g = t < 0 ? 0 : (int64_t)t;
  while (c->offset_us + (int64_t)(c->rate * (double)g) < local_us) {
    g++;
  }
  while (g > 0 &&
         c->offset_us + (int64_t)(c->rate * (double)(g - 1)) >= local_us) {
    g--;
  }
  (void)w;
  return g;
}

int64_t master_now_ms(const world *w, const master *m) {
  return (m->offset_us + (int64_t)(m->rate * (double)w->now)) / 1000;
}

/* ---- reports ---- */

void sim_trace(world *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(w->trace, "%10.3f ms  ", (double)w->now / 1000.0);
  vfprintf(w->trace, fmt, ap);
  fputc('\n', w->trace);
  va_end(ap);
}

void sim_violation(world *w, sim_violation_kind kind, const char *fmt, ...) {
  if (w->res->violation != V_NONE) {
    return; /* the first one is the one to shrink */
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->res->what, sizeof w->res->what, fmt, ap);
  va_end(ap);
  w->res->violation = kind;
  w->res->at_us = w->now;
  w->stop = true;
  TRACE(w, "VIOLATION %s: %s", sim_violation_name(kind), w->res->what);
}

const char *sim_violation_name(sim_violation_kind k) {
  static const char *const names[V_KINDS] = {
      "none",         "exclusion", "fence-order", "stale-write",
      "fence-quorum", "key-ttl",   "left-behind", "queue-ttl",
      "liveness",     "deadline",  "stuck",       "crash"};
  return k < V_KINDS ? names[k] : "?";
}

/* ---- the loop ---- */

/* The client an event belongs to, or -1 (a master's, the network's). */
static int event_client(const world *w, const sim_event *e) {
  switch (e->kind) {
  case EV_HEAD:
    return e->b == TO_CLIENT ? w->conns[e->a].client : -1;
  case EV_OPENED:
  case EV_RESET_SEEN:
    return w->conns[e->a].client;
  case EV_RUNNER:
    return w->runners[e->a]->client;
  case EV_MUTEX:
    return e->a;
  case EV_LANE:
  case EV_RENEW:
  case EV_SUB_RETRY:
    return e->a;
  default:
    return -1;
  }
}

static void fault_event(world *w, int index, bool end) {
  const sim_fault *f = &w->sc->fault[index];
  TRACE(w, "fault %d %s", (int)f->kind, end ? "ends" : "begins");
  w->active_faults += end ? -1 : 1;
  if (w->active_faults == 0) {
    w->calm_since = w->now;
  }
  switch (f->kind) {
  case FAULT_PARTITION:
    if (!end) {
      w->cut_until[f->client][f->master] = w->now + f->dur_us;
    }
    break;
  case FAULT_SLOW:
    if (!end) {
      w->slow_until[f->client][f->master] = w->now + f->dur_us;
      w->slow_extra[f->client][f->master] = f->extra_us;
    }
    break;
  case FAULT_RESET:
    if (!end) {
      for (int i = 0; i < w->nconns; i++) {
        conn *c = &w->conns[i];
        if (c->client == f->client && c->master == f->master && !c->broken &&
            !c->client_closed) {
          conn_reset(w, i);
        }
      }
    }
    break;
  case FAULT_CLIENT_PAUSE:
    if (!end) {
      client_pause(w, f->client, f->dur_us);
    }
    break;
  default:
    master_fault(w, f, end);
    break;
  }
}

static void dispatch(world *w, const sim_event *e) {
  switch (e->kind) {
  case EV_HEAD:
    net_head_due(w, e->a, e->b);
    break;
  case EV_SYN:
    net_syn(w, e->a);
    break;
  case EV_OPENED:
    net_opened(w, e->a);
    break;
  case EV_RESET_SEEN:
    net_reset_seen(w, e->a);
    break;
  case EV_RUNNER:
    runner_timer(w, w->runners[e->a], (uint64_t)e->c);
    break;
  case EV_LANE:
    lane_event(w, e->a, e->b, (uint64_t)e->c);
    break;
  case EV_RENEW:
    lane_renew_due(w, e->a, e->b, (uint64_t)e->c);
    break;
  case EV_SUB_RETRY:
    listener_retry(w, e->a, e->b);
    break;
  case EV_FAULT:
    fault_event(w, e->a, e->b != 0);
    break;
  case EV_STORE:
    store_arrive(w, e->a, e->b, e->c);
    break;
  case EV_MUTEX:
    runner_mutex_next(w, e->a);
    break;
  case EV_LIVENESS:
    check_liveness(w);
    if (!w->stop && w->lanes_done < w->lanes_total) {
      ev_push(w, w->now + LIVENESS_EVERY_US, EV_LIVENESS, 0, 0, 0);
    }
    break;
  }
}

static world the_world;

static void world_reset(world *w, const sim_scenario *sc,
                        const sim_options *opts, sim_result *out) {
  memset(w, 0, offsetof(world, heap));
  w->heap_len = 0;
  w->nconns = 0;
  w->nwrites = 0;
  w->token_gen++;
  w->sc = sc;
  w->opts = opts;
  w->res = out;
  w->n = sc->masters;
  w->trace = opts->trace ? stdout : NULL;
  arena_reset();
  sim_rng_init(&w->net_rng, sc->seed, 1, 0);
  for (int i = 0; i < sc->masters; i++) {
    master_init(w, &w->masters[i], i);
  }
  for (int k = 0; k < SIM_NAMES_MAX; k++) {
    w->free_since[k] = -1;
  }
}

static void world_free(world *w) {
  for (int i = 0; i < w->nconns; i++) {
    hrl_stream_free(w->conns[i].stream);
    free(w->conns[i].rbuf);
  }
  for (int c = 0; c < w->sc->clients; c++) {
    client *cl = &w->clients[c];
    for (int l = 0; l < SIM_LANES_MAX; l++) {
      hrl_lock_destroy(cl->lanes[l].lk);
    }
    for (int m = 0; m < w->n; m++) {
      hrl_subscriber_free(cl->sub[m].s);
    }
    if (cl->cfg_ok) {
      hrl_config_clear(&cl->cfg);
    }
  }
}

/* When every lane should be done at the latest: each lane's sessions one
 * after the other, each its wait, hold, calls and stall, plus every
 * fault's duration, plus 10 s. */
static int64_t horizon_of(const sim_scenario *sc) {
  int64_t end = 0, faults = 0, t_ms = sc->timeout_ms;
  for (int c = 0; c < sc->clients; c++) {
    for (int l = 0; l < sc->lanes; l++) {
      int64_t t = 0;
      for (int i = 0; i < sc->sessions; i++) {
        const sim_session *s = &sc->session[i];
        if (s->client != c || s->lane != l) {
          continue;
        }
        t = (s->at_us > t ? s->at_us : t) +
            1000 * (s->wait_ms + 2 * s->hold_ms + s->stall_ms +
                    (10 + 2 * s->extends) * t_ms);
      }
      end = t > end ? t : end;
    }
  }
  for (int i = 0; i < sc->faults; i++) {
    faults += sc->fault[i].dur_us;
  }
  return end + faults + 10000000;
}

void sim_run(const sim_scenario *given, const sim_options *opts,
             sim_result *out) {
  world *w = &the_world;
  static sim_scenario with_driver;
  const sim_scenario *sc = given;
  if (opts->driver > 0 && given->driver != opts->driver - 1) {
    with_driver = *given;
    with_driver.driver = opts->driver - 1;
    sc = &with_driver;
  }
  memset(out, 0, sizeof *out);
  world_reset(w, sc, opts, out);
  for (int i = 0; i < sc->faults; i++) {
    const sim_fault *f = &sc->fault[i];
    ev_push(w, f->at_us, EV_FAULT, i, 0, 0);
    ev_push(w, f->at_us + f->dur_us, EV_FAULT, i, 1, 0);
  }
  workload_start(w);
  ev_push(w, LIVENESS_EVERY_US, EV_LIVENESS, 0, 0, 0);
  int64_t horizon = horizon_of(sc);
  int same = 0;
  while (!w->stop && w->heap_len > 0 && w->lanes_done < w->lanes_total) {
    sim_event e = ev_pop(w);
    if (e.at > horizon) {
      sim_violation(w, V_STUCK, "%d of %d lanes still busy at the horizon",
                    w->lanes_total - w->lanes_done, w->lanes_total);
      break;
    }
    same = e.at == w->now ? same + 1 : 0;
    if (same > SAME_INSTANT_MAX) {
      sim_violation(w, V_CRASH, "a loop: %d events at one instant", same);
      break;
    }
    w->now = e.at;
    int c = event_client(w, &e);
    if (c >= 0 && w->clients[c].paused) {
      if (w->clients[c].paused_until > w->now) {
        ev_push(w, w->clients[c].paused_until, e.kind, e.a, e.b, e.c);
        continue;
      }
      w->clients[c].paused = false;
    }
    w->events++;
    dispatch(w, &e);
  }
  if (!w->stop && w->lanes_done < w->lanes_total && w->heap_len == 0) {
    sim_violation(w, V_STUCK, "nothing left to happen, %d lanes busy",
                  w->lanes_total - w->lanes_done);
  }
  out->events = w->events;
  out->end_us = w->now;
  world_free(w);
}
