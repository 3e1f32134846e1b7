/* What a client offers operators (docs/OPERATING.md): its events, to a
 * callback or kept in a queue for a binding to take; its counters; and
 * inspections of a lock, run with the built-in driver like any
 * operation. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "hiredlock/binding.h"
#include "proto/detail.h"

struct hrl_event_queue {
  pthread_mutex_t mu;     /* held for a copy, never across a callback */
  hrl_event_record *ring; /* NULL until the first event */
  size_t size;            /* records in ring */
  size_t capacity;        /* records it may grow to */
  size_t first, count;
  uint64_t dropped;
  int pending; /* count, for a read without the mutex */
  void (*posted)(void *);
  void *posted_ud;
};

void hrl_client_on_event(hrl_client *c, hrl_event_fn fn, void *ud) {
  c->cfg.obs.on_event = fn;
  c->cfg.obs.on_event_ud = ud;
}

static void copy_text(char *dst, size_t size, const char *s, size_t len) {
  size_t n = len < size - 1 ? len : size - 1;
  if (n > 0) {
    memcpy(dst, s, n);
  }
  dst[n] = '\0';
}

/* Points the event's strings into its record (after a copy). */
static void fix_pointers(hrl_event_record *r) {
  r->ev.name = r->ev.name != NULL ? r->name : NULL;
  r->ev.master_label = r->ev.master_label != NULL ? r->master_label : NULL;
  r->ev.detail = r->detail;
}

/* The ring's first size, in records: what a burst of events on a few
 * masters (down, then back) takes without growing again. */
#define RING_FIRST 8

/* Room for one more record. The ring grows as events come (doubling, up to
 * the capacity asked for), not when the queue is made: the bindings make
 * a client per request (the nginx cosocket driver, per hiredlock.new),
 * and most never see an event; a ring of the bindings' 256 records
 * (344 KiB) per client was mmap'd, zeroed and unmapped each time. An
 * allocation that fails drops the event, counted like one the queue had
 * no room for. */
static bool make_room(struct hrl_event_queue *q) {
  if (q->count < q->size) {
    return true;
  }
  if (q->size == q->capacity) {
    return false;
  }
  size_t size = q->size == 0 ? RING_FIRST : q->size * 2;
  size = size < q->capacity ? size : q->capacity;
  hrl_event_record *ring = calloc(size, sizeof *ring);
  if (ring == NULL) {
    return false;
  }
  for (size_t k = 0; k < q->count; k++) {
    ring[k] = q->ring[(q->first + k) % q->size];
    fix_pointers(&ring[k]);
  }
  free(q->ring);
  q->ring = ring;
  q->size = size;
  q->first = 0;
  return true;
}

/* The core's callback when events are queued: a copy into the ring. */
static void queue_event(const hrl_event *ev, void *ud) {
  struct hrl_event_queue *q = ud;
  pthread_mutex_lock(&q->mu);
  if (!make_room(q)) {
    q->dropped++;
    pthread_mutex_unlock(&q->mu);
    return;
  }
  hrl_event_record *r = &q->ring[(q->first + q->count) % q->size];
  r->ev = *ev;
  if (ev->name != NULL) {
    size_t n = ev->name_len < sizeof r->name ? ev->name_len : sizeof r->name;
    memcpy(r->name, ev->name, n);
    r->ev.name_len = n;
  }
  if (ev->master_label != NULL) {
    copy_text(r->master_label, sizeof r->master_label, ev->master_label,
              strlen(ev->master_label));
  }
  copy_text(r->detail, sizeof r->detail, ev->detail, strlen(ev->detail));
  fix_pointers(r);
  q->count++;
  __atomic_store_n(&q->pending, (int)q->count, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&q->mu);
  if (q->posted != NULL) {
    q->posted(q->posted_ud);
  }
}

hrl_status hrl_client_queue_events(hrl_client *c, size_t capacity,
                                   void (*posted)(void *), void *ud) {
  struct hrl_event_queue *q = c->events;
  if (q == NULL) {
    q = calloc(1, sizeof *q);
    if (q == NULL || pthread_mutex_init(&q->mu, NULL) != 0) {
      free(q);
      return HRL_ENOMEM;
    }
    c->events = q;
  }
  pthread_mutex_lock(&q->mu);
  if (q->capacity == 0) { /* the first call's capacity, as before */
    q->capacity = capacity > 0 ? capacity : 1;
  }
  q->posted = posted;
  q->posted_ud = ud;
  pthread_mutex_unlock(&q->mu);
  hrl_client_on_event(c, queue_event, q);
  return HRL_OK;
}

bool hrl_client_events_pending(const hrl_client *c) {
  const struct hrl_event_queue *q = c->events;
  return q != NULL && __atomic_load_n(&q->pending, __ATOMIC_ACQUIRE) > 0;
}

size_t hrl_client_take_events(hrl_client *c, hrl_event_record *out, size_t max,
                              uint64_t *dropped) {
  struct hrl_event_queue *q = c->events;
  size_t n = 0;
  if (dropped != NULL) {
    *dropped = 0;
  }
  if (q == NULL) {
    return 0;
  }
  pthread_mutex_lock(&q->mu);
  for (; n < max && q->count > 0; n++) {
    out[n] = q->ring[q->first];
    fix_pointers(&out[n]);
    q->first = (q->first + 1) % q->size;
    q->count--;
  }
  if (dropped != NULL) {
    *dropped = q->dropped;
    q->dropped = 0;
  }
  __atomic_store_n(&q->pending, (int)q->count, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&q->mu);
  return n;
}

void hrl_events_free(hrl_client *c) {
  struct hrl_event_queue *q = c->events;
  if (q == NULL) {
    return;
  }
  c->cfg.obs.on_event = NULL;
  pthread_mutex_destroy(&q->mu);
  free(q->ring);
  free(q);
  c->events = NULL;
}

void hrl_events_after_fork(hrl_client *c) {
  if (c->events != NULL) {
    /* whoever held it does not exist in the child */
    pthread_mutex_init(&c->events->mu, NULL);
  }
}

_Static_assert(sizeof(size_t) == sizeof(uint64_t) &&
                   sizeof(hrl_stats) % sizeof(uint64_t) == 0,
               "hrl_client_stats copies hrl_stats as uint64_t words");

void hrl_client_stats(const hrl_client *c, hrl_stats *out) {
  const hrl_stats *s = &c->cfg.obs.stats;
  const uint64_t *from = (const uint64_t *)(const void *)s;
  uint64_t *to = (uint64_t *)(void *)out;
  /* Every field is a uint64_t but `masters`, set below. */
  for (size_t k = 0; k < sizeof *s / sizeof(uint64_t); k++) {
    to[k] = __atomic_load_n(&from[k], __ATOMIC_RELAXED);
  }
  out->masters = c->cfg.n;
}

hrl_status hrl_client_inspect(hrl_client *c, const void *name, size_t name_len,
                              hrl_inspection **out, char *detail,
                              size_t detail_size) {
  if (c == NULL || out == NULL) {
    hrl_detailf(detail, detail_size, "client and out must not be NULL");
    return HRL_EINVAL;
  }
  *out = NULL;
  hrl_lock_options lo = c->cfg.opts.lock;
  lo.auto_renew = false;
  lo.max_hold_ms = 0;
  lo.fenced = false;
  lo.owner = NULL; /* an inspection reads labels; it has none */
  if (lo.ttl_ms < c->cfg.min_ttl_ms) {
    lo.ttl_ms = c->cfg.min_ttl_ms;
  }
  hrl_lock *lk = NULL;
  hrl_status st = hrl_lock_create(&c->cfg, c, name, name_len, &lo, &lk, detail,
                                  detail_size);
  if (st != HRL_OK) {
    return st;
  }
  hrl_renewer_check_fork(c);
  int64_t now = hrl_now_us();
  st = hrl_proto_begin(lk, HRL_OP_INSPECT, 0, now);
  if (st == HRL_OK) {
    st = hrl_api_run(lk, now, NULL, NULL);
  }
  if (st == HRL_OK) {
    *out = hrl_inspect_take(lk);
  } else {
    hrl_detailf(detail, detail_size, "%s", hrl_lock_error(lk));
  }
  hrl_lock_destroy(lk);
  return st;
}
