/*
 * A client's counters and events (docs/OPERATING.md), from what the
 * protocol decided: seam.c calls in here around every public call of the
 * protocol, and lease.c when a lease is lost or renewed. Nothing here
 * changes a decision, does I/O or takes a lock: counters are atomic adds
 * (a client is shared by threads, and the renewer counts beside them), and
 * events go to the client's callback as they happen.
 *
 * An uncontended acquire and release count four adds and report no event:
 * the events are a loss, a failed renewal, a master going or coming back,
 * a hand-off skipping gone waiters, and a wait at least slow_wait long.
 */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "state.h"

#define US_PER_MS 1000

static const char *const event_names[] = {
#define EVENT_NAME_(code, name, level) name,
    HRL_EVENT_LIST(EVENT_NAME_)
#undef EVENT_NAME_
};

static const hrl_event_level event_levels[] = {
#define EVENT_LEVEL_(code, name, level) level,
    HRL_EVENT_LIST(EVENT_LEVEL_)
#undef EVENT_LEVEL_
};

static const uint32_t bucket_ms[HRL_WAIT_BUCKETS] = {
    1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};

const char *hrl_event_name(hrl_event_kind kind) {
  return (unsigned)kind < HRL_EVENT_COUNT_ ? event_names[kind] : "unknown";
}

uint32_t hrl_wait_bucket_ms(size_t k) {
  return k < HRL_WAIT_BUCKETS ? bucket_ms[k] : 0;
}

const char *hrl_verdict_name(hrl_verdict v) {
  switch (v) {
  case HRL_VERDICT_FREE:
    return "free";
  case HRL_VERDICT_HELD:
    return "held";
  default:
    return "unknown";
  }
}

const char *hrl_kind_name(hrl_kind k) {
  switch (k) {
  case HRL_KIND_MUTEX:
    return "mutex";
  case HRL_KIND_RWLOCK:
    return "read-write lock";
  case HRL_KIND_SEMAPHORE:
    return "semaphore";
  case HRL_KIND_OTHER:
    return "other";
  default:
    return "none";
  }
}

static void add(uint64_t *counter, uint64_t n) {
  __atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

hrl_status hrl_observer_init(hrl_config *cfg) {
  const char *owner = cfg->opts.lock.owner;
  if (owner == NULL) {
    return HRL_OK;
  }
  size_t len = strlen(owner);
  cfg->obs.owner_default = malloc(len + 1);
  if (cfg->obs.owner_default == NULL) {
    return HRL_ENOMEM;
  }
  memcpy(cfg->obs.owner_default, owner, len + 1);
  cfg->opts.lock.owner = cfg->obs.owner_default;
  return HRL_OK;
}

void hrl_observer_clear(hrl_config *cfg) {
  free(cfg->obs.owner_default);
  cfg->obs.owner_default = NULL;
}

void hrl_observe_emit(const hrl_config *cfg, hrl_event *ev) {
  if (cfg->obs.on_event == NULL) {
    return;
  }
  ev->level = event_levels[ev->kind];
  if (ev->detail == NULL) {
    ev->detail = "";
  }
  cfg->obs.on_event(ev, cfg->obs.on_event_ud);
}

void hrl_observe_lock_event(const hrl_lock *lk, hrl_event_kind kind, int64_t ms,
                            hrl_status status, const char *detail) {
  if (lk->cfg->obs.on_event == NULL) {
    return;
  }
  hrl_event ev = {0};
  ev.kind = kind;
  ev.name = lk->key + lk->prefix_len;
  ev.name_len = lk->key_len - lk->prefix_len;
  ev.master = -1;
  ev.ms = ms;
  ev.count = kind == HRL_EVENT_DEAD_WAITER ? lk->obs.dead : 0;
  ev.status = status;
  ev.detail = detail;
  hrl_observe_emit(lk->cfg, &ev);
}

static void master_event(const hrl_config *cfg, size_t i, hrl_event_kind kind,
                         int64_t ms, const char *detail) {
  if (cfg->obs.on_event == NULL) {
    return;
  }
  hrl_event ev = {0};
  ev.kind = kind;
  ev.master = (int)i;
  ev.master_label = cfg->masters[i].ep.label;
  ev.ms = ms;
  ev.status = HRL_OK;
  ev.detail = detail;
  hrl_observe_emit(cfg, &ev);
}

void hrl_observe_begin(hrl_lock *lk, int64_t now_us) {
  lk->obs.begun_us = now_us;
  lk->obs.now_us = now_us;
  lk->obs.handed = false;
  lk->obs.dead = 0;
}

/* Bucket of a wait of us microseconds. */
static size_t bucket_of(int64_t us) {
  size_t k = 0;
  while (k < HRL_WAIT_BUCKETS && us > (int64_t)bucket_ms[k] * US_PER_MS) {
    k++;
  }
  return k;
}

static void acquire_done(hrl_lock *lk, hrl_status st, int64_t now_us) {
  hrl_stats *s = &lk->cfg->obs.stats;
  int64_t took = now_us - lk->obs.begun_us;
  took = took > 0 ? took : 0;
  switch (st) {
  case HRL_OK:
    add(&s->acquired, 1);
    break;
  case HRL_ETIMEOUT:
    add(&s->busy, 1);
    break;
  case HRL_ECANCELLED:
    add(&s->cancelled, 1);
    break;
  default:
    add(&s->failed[(unsigned)st < HRL_STATUS_COUNT_ ? st : HRL_ESYSTEM], 1);
    break;
  }
  add(&s->wait_buckets[bucket_of(took)], 1);
  add(&s->wait_sum_us, (uint64_t)took);
  if (!lk->op.waiting) {
    return; /* the fast path ends here: no event */
  }
  add(&s->waited, 1);
  if (took >= (int64_t)lk->cfg->opts.slow_wait_ms * US_PER_MS) {
    const char *why = st == HRL_OK ? "" : lk->detail;
    hrl_observe_lock_event(lk, HRL_EVENT_SLOW_WAIT, took / US_PER_MS, st, why);
  }
}

/* The hand-offs a round of the release script made (a release, a
 * waiter's leave or step aside), counted as its round ends. */
void hrl_observe_round(hrl_lock *lk) {
  hrl_stats *s = &lk->cfg->obs.stats;
  if (lk->obs.handed) {
    add(&s->handoffs, 1);
  }
  if (lk->obs.dead > 0) {
    add(&s->dead_waiters, lk->obs.dead);
    hrl_observe_lock_event(lk, HRL_EVENT_DEAD_WAITER, 0, HRL_OK, "");
  }
  lk->obs.handed = false;
  lk->obs.dead = 0;
}

void hrl_observe_done(hrl_lock *lk, hrl_status st, int64_t now_us) {
  hrl_stats *s = &lk->cfg->obs.stats;
  switch (lk->op.kind) {
  case HRL_OP_ACQUIRE:
    acquire_done(lk, st, now_us);
    break;
  case HRL_OP_RELEASE:
    if (st == HRL_OK) {
      add(&s->released, 1);
    } else if (st == HRL_ENOTOWNED) {
      add(&s->losses, 1);
    }
    break;
  case HRL_OP_EXTEND:
    if (lk->obs.renewal) {
      break; /* a lease's renewal: counted when it ends (lease.c) */
    }
    if (st == HRL_OK) {
      add(&s->extended, 1);
    } else if (st == HRL_ENOTOWNED && !hrl_lease_is(lk)) {
      add(&s->losses, 1); /* a lease's loss is counted as it is marked */
    }
    break;
  case HRL_OP_INSPECT:
    add(&s->inspections, 1);
    break;
  }
}

/* A master answered: it is up, and it was down for a while. */
static void master_answers(hrl_config *cfg, size_t i, int64_t now_us) {
  int64_t since = cfg->obs.down_since_us[i];
  if (since == 0) {
    return;
  }
  cfg->obs.down_since_us[i] = 0;
  int64_t ms = (now_us - since) / US_PER_MS;
  master_event(cfg, i, HRL_EVENT_MASTER_UP, ms > 0 ? ms : 0, "");
}

static void count_failure(hrl_config *cfg, size_t i, hrl_node_result r) {
  hrl_stats *s = &cfg->obs.stats;
  if (r == HRL_NODE_UNREACHABLE) {
    add(&s->master[i].unreachable, 1);
  } else if (r == HRL_NODE_AUTH || r == HRL_NODE_DENIED ||
             r == HRL_NODE_SERVER || r == HRL_NODE_PROTOCOL) {
    add(&s->master[i].errors, 1);
  }
}

void hrl_observe_reply(hrl_lock *lk, size_t i, const hrl_reply *reply,
                       hrl_node_result before, hrl_node_result after) {
  hrl_config *cfg = lk->cfg;
  if (i >= cfg->n) {
    return;
  }
  if (cfg->obs.down_since_us[i] != 0) {
    master_answers(cfg, i, lk->obs.now_us);
  }
  hrl_round_kind kind = lk->op.round_kind;
  if ((kind == HRL_ROUND_RELEASE || kind == HRL_ROUND_ASIDE) &&
      before == HRL_NODE_PENDING && reply->type == HRL_REPLY_INTEGER &&
      reply->integer >= 2 && !lk->op.nodes[i].plain) {
    /* The queue script's answer: bit 1 handed on, 4 x gone waiters. The
     * masters skip the same entries: their greatest count, not the sum. */
    uint64_t v = (uint64_t)reply->integer;
    lk->obs.handed |= (v & 2) != 0;
    uint32_t dead = (uint32_t)(v >> 2 < UINT32_MAX ? v >> 2 : UINT32_MAX);
    lk->obs.dead = dead > lk->obs.dead ? dead : lk->obs.dead;
  }
  (void)after;
  if (before == HRL_NODE_PENDING) {
    count_failure(cfg, i, lk->op.nodes[i].result); /* decided just now */
  }
}

void hrl_observe_fail(hrl_lock *lk, size_t i, hrl_node_result before,
                      hrl_node_result why, const char *message) {
  hrl_config *cfg = lk->cfg;
  if (before != HRL_NODE_PENDING || !hrl_proto_in_round(lk, i)) {
    return; /* not a new failure of this round */
  }
  hrl_node_result r = lk->op.nodes[i].result;
  if (r == HRL_NODE_PENDING) {
    return; /* a cluster's node: another one is asked instead */
  }
  (void)why;
  count_failure(cfg, i, r);
  if (r != HRL_NODE_UNREACHABLE || cfg->obs.down_since_us[i] != 0) {
    return;
  }
  int64_t now = lk->obs.now_us;
  cfg->obs.down_since_us[i] = now != 0 ? now : 1;
  master_event(cfg, i, HRL_EVENT_MASTER_DOWN, 0,
               message != NULL ? message : "failed");
}

void hrl_observe_lost(hrl_lock *lk, const char *reason) {
  add(&lk->cfg->obs.stats.losses, 1);
  hrl_observe_lock_event(lk, HRL_EVENT_LOST, 0, HRL_ELOST, reason);
}

void hrl_observe_renewal(hrl_lock *lk, hrl_status st, int64_t now_us) {
  hrl_stats *s = &lk->cfg->obs.stats;
  if (st == HRL_OK) {
    add(&s->renewals, 1);
    return;
  }
  if (st == HRL_ECANCELLED || st == HRL_ELOST) {
    return; /* nothing to say; a loss was reported as it was marked */
  }
  add(&s->renewals_failed, 1);
  if (lk->cfg->obs.on_event == NULL) {
    return;
  }
  int64_t left = (lk->valid_until_us - now_us) / US_PER_MS;
  char why[HRL_DETAIL_MAX];
  const hrl_lock *twin = lk->renewal != NULL ? lk->renewal->twin : lk;
  hrl_format_error(st, twin->detail, why, sizeof why);
  hrl_observe_lock_event(lk, HRL_EVENT_RENEW_FAILED, left > 0 ? left : 0, st,
                         why);
}

/* A lock name quoted for a message: printable ASCII as is, quotes and
 * backslashes escaped, other bytes as \xHH, cut short with "..." when
 * long. */
static void quote_name(const hrl_event *ev, char *buf, size_t size) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = ev->name;
  size_t n = 0;
  for (size_t k = 0; k < ev->name_len; k++) {
    if (n + 8 > size) { /* room for one more (4) and "..." */
      memcpy(buf + n, "...", 3);
      n += 3;
      break;
    }
    unsigned char c = p[k];
    if (c == '\'' || c == '\\') {
      buf[n++] = '\\';
      buf[n++] = (char)c;
    } else if (c >= 0x20 && c < 0x7f) {
      buf[n++] = (char)c;
    } else {
      buf[n++] = '\\';
      buf[n++] = 'x';
      buf[n++] = hex[c >> 4];
      buf[n++] = hex[c & 15];
    }
  }
  buf[n] = '\0';
}

char *hrl_event_format(const hrl_event *ev, char *buf, size_t size) {
  char name[160];
  char status[HRL_DETAIL_MAX];
  const char *detail = ev->detail != NULL ? ev->detail : "";
  const char *label = ev->master_label != NULL ? ev->master_label : "?";
  if (size == 0) {
    return buf;
  }
  name[0] = '\0';
  if (ev->name != NULL) {
    quote_name(ev, name, sizeof name);
  }
  switch (ev->kind) {
  case HRL_EVENT_LOST:
    hrl_detailf(buf, size, "lock '%s' lost: %s", name, detail);
    break;
  case HRL_EVENT_RENEW_FAILED:
    hrl_detailf(buf, size,
                "lock '%s' renewal failed, still valid for %lld ms: %s", name,
                (long long)ev->ms, detail);
    break;
  case HRL_EVENT_MASTER_DOWN:
    hrl_detailf(buf, size, "master %s unreachable: %s", label, detail);
    break;
  case HRL_EVENT_MASTER_UP:
    hrl_detailf(buf, size, "master %s answers again after %lld ms", label,
                (long long)ev->ms);
    break;
  case HRL_EVENT_DEAD_WAITER:
    hrl_detailf(buf, size, "lock '%s' released past %u gone waiter%s", name,
                (unsigned)ev->count, ev->count == 1 ? "" : "s");
    break;
  case HRL_EVENT_SLOW_WAIT:
    hrl_format_error(ev->status, detail, status, sizeof status);
    hrl_detailf(buf, size, "lock '%s' waited %lld ms: %s", name,
                (long long)ev->ms, ev->status == HRL_OK ? "acquired" : status);
    break;
  default:
    hrl_detailf(buf, size, "unknown event %d", (int)ev->kind);
    break;
  }
  return buf;
}
