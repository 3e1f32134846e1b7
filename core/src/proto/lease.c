/*
 * Managed leases (auto_renew) as protocol decisions, for every driver: when
 * a renewal is due, what TTL it asks for (max_hold), what its outcome means
 * (renewed, lost, failed), and when a hold is lost. The built-in driver's
 * renewer thread (api/renewer.c) and the OpenResty driver's timer drive
 * these the same way.
 *
 * A renewal runs on the lock's twin, a private copy of its hold: the same
 * extend operation as hrl_lock_extend(), with its own operation state,
 * detail and counts, so a renewal never disturbs what the holder reads of
 * its own calls, and a driver without threads may have a renewal out while
 * the holder's release runs on the lock itself. hold_gen tells the outcome
 * of a renewal begun for a hold that has ended since (discarded).
 *
 * Loss is final for the hold: a lease is lost when a renewal finds the key
 * not ours ("not owned"), or when its validity runs out before a renewal
 * was confirmed by a quorum ("expired", or "max_hold reached" once renewal
 * stopped at the cap). Even a renewal confirmed after that moment does not
 * bring it back: the holder was told it was not held in between.
 */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "state.h"

#define US_PER_MS 1000

/* Renewal starts when two thirds of the TTL are left: a renewal about
 * every third of it, and two more chances before the validity runs out. */
#define RENEW_LEFT_NUM 2
#define RENEW_LEFT_DEN 3

/* After a failed renewal the next try comes a tenth of the TTL later. */
#define RETRY_DIVISOR 10

bool hrl_lease_is(const hrl_lock *lk) {
  return lk->renewal != NULL;
}

hrl_status hrl_lease_state_new(hrl_lock *lk, char *detail, size_t detail_size) {
  hrl_renewal *rn = calloc(1, sizeof *rn);
  if (rn == NULL) {
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  hrl_lock_options twin_opts = lk->opts;
  twin_opts.auto_renew = false;
  size_t name_len = lk->key_len - lk->prefix_len;
  hrl_status st =
      hrl_lock_create(lk->cfg, lk->client, lk->key + lk->prefix_len, name_len,
                      &twin_opts, &rn->twin, detail, detail_size);
  if (st != HRL_OK) {
    free(rn);
    return st;
  }
  rn->twin->obs.renewal = true; /* its extends are counted as renewals */
  lk->renewal = rn;
  return HRL_OK;
}

void hrl_lease_state_free(hrl_lock *lk) {
  if (lk->renewal != NULL) {
    hrl_lock_destroy(lk->renewal->twin);
    free(lk->renewal);
    lk->renewal = NULL;
  }
}

static bool op_running(const hrl_lock *lk) {
  return lk->op.phase != HRL_PHASE_IDLE && lk->op.phase != HRL_PHASE_DONE;
}

/* What "expired" says: the cap, the last failed renewal, or nothing. */
static void expiry_reason(const hrl_renewal *rn, const hrl_lock *lk, char *out,
                          size_t size) {
  if (rn->renew_final && lk->opts.max_hold_ms > 0) {
    hrl_detailf(out, size, "max_hold reached");
  } else if (rn->lost_reason[0] != '\0') {
    hrl_detail_copy_text(out, size, rn->lost_reason, strlen(rn->lost_reason));
  } else {
    hrl_detailf(out, size, "expired");
  }
}

static bool expired(const hrl_lock *lk, int64_t now_us) {
  return hrl_lease_is(lk) && lk->held && !lk->renewal->lost &&
         now_us >= lk->valid_until_us;
}

void hrl_lease_mark_lost(hrl_lock *lk, const char *reason) {
  hrl_renewal *rn = lk->renewal;
  hrl_detail_copy_text(rn->lost_reason, sizeof rn->lost_reason, reason,
                       strlen(reason));
  lk->held = false;
  rn->lost = true;
  rn->hold_gen++;
  hrl_observe_lost(lk, rn->lost_reason);
}

const char *hrl_lease_lost_reason(const hrl_lock *lk) {
  return hrl_lease_is(lk) && lk->renewal->lost ? lk->renewal->lost_reason : "";
}

void hrl_lease_held_since(hrl_lock *lk, int64_t start_us) {
  if (hrl_lease_is(lk)) {
    lk->renewal->hold_start_us = start_us;
    /* Acquired with all max_hold allows (a max_hold of at most the TTL):
     * no renewal can add to it, only the expiry is left to see. */
    lk->renewal->renew_final =
        lk->opts.max_hold_ms > 0 && lk->opts.max_hold_ms <= lk->op.ttl_ms;
    lk->renewal->counted_ttl_ms = 0;
  }
}

bool hrl_lease_check_expiry(hrl_lock *lk, int64_t now_us) {
  if (!hrl_lease_is(lk)) {
    return false;
  }
  if (expired(lk, now_us)) {
    char reason[HRL_DETAIL_MAX];
    expiry_reason(lk->renewal, lk, reason, sizeof reason);
    hrl_lease_mark_lost(lk, reason);
  }
  return lk->renewal->lost;
}

void hrl_lease_new_hold(hrl_lock *lk, bool starting) {
  hrl_renewal *rn = lk->renewal;
  if (rn == NULL) {
    return;
  }
  rn->hold_gen++;
  if (starting) {
    rn->lost = false;
    rn->lost_reason[0] = '\0';
    rn->renew_final = false;
    rn->retry_at_us = 0;
  }
}

void hrl_lease_view_of(const hrl_lock *lk, hrl_lease_view *out) {
  const hrl_renewal *rn = lk->renewal;
  out->held = lk->held;
  out->lost = rn != NULL && rn->lost;
  out->valid_until_us = lk->valid_until_us;
  out->reason[0] = '\0';
  if (out->lost) {
    hrl_detail_copy_text(out->reason, sizeof out->reason, rn->lost_reason,
                         strlen(rn->lost_reason));
  } else if (rn != NULL) {
    expiry_reason(rn, lk, out->reason, sizeof out->reason);
  }
}

bool hrl_lease_view_held(const hrl_lease_view *v, int64_t now_us) {
  return v->held && !v->lost && v->valid_until_us > now_us;
}

hrl_status hrl_lease_view_lost(const hrl_lease_view *v, int64_t now_us,
                               char *reason, size_t size) {
  /* Lost, or (a lease: it has an expiry text) expired before the renewer
   * looked, which will say the same. A plain lock just is not held. */
  if (v->lost ||
      (v->held && v->reason[0] != '\0' && now_us >= v->valid_until_us)) {
    hrl_detail_copy_text(reason, size, v->reason, strlen(v->reason));
    return HRL_ELOST;
  }
  if (reason != NULL && size > 0) {
    reason[0] = '\0';
  }
  return HRL_OK;
}

hrl_status hrl_lease_lost_at(const hrl_lock *lk, int64_t now_us, char *reason,
                             size_t size) {
  hrl_lease_view v;
  hrl_lease_view_of(lk, &v);
  return hrl_lease_view_lost(&v, now_us, reason, size);
}

int64_t hrl_proto_renew_due(const hrl_lock *lk) {
  if (!hrl_lease_is(lk) || !lk->held || lk->renewal->lost) {
    return INT64_MAX;
  }
  if (lk->renewal->renew_final) {
    return lk->valid_until_us; /* only the expiry is left to see */
  }
  uint32_t ttl = lk->renewal->counted_ttl_ms != 0 &&
                         lk->renewal->counted_ttl_ms < lk->ttl_ms
                     ? lk->renewal->counted_ttl_ms
                     : lk->ttl_ms;
  int64_t next = lk->renewal->retry_at_us != 0
                     ? lk->renewal->retry_at_us
                     : lk->valid_until_us - (int64_t)ttl * US_PER_MS *
                                                RENEW_LEFT_NUM / RENEW_LEFT_DEN;
  return next < lk->valid_until_us ? next : lk->valid_until_us;
}

/* The TTL an extend of the hold at now_us (a renewal's, or the holder's
 * asking for want_ms) may ask for: want_ms, or what max_hold leaves when
 * that is less (max_hold counts from the acquire: the longest the lease
 * holds the lock). 0 when nothing is left: what is left would not
 * outlast the validity the lock has, or no round could hold it. */
static uint32_t capped_ttl(const hrl_lock *lk, int64_t now_us, uint32_t want_ms,
                           bool *capped) {
  *capped = false;
  if (lk->opts.max_hold_ms == 0) {
    return want_ms;
  }
  int64_t cap_us =
      lk->renewal->hold_start_us + (int64_t)lk->opts.max_hold_ms * US_PER_MS;
  int64_t left_ms = (cap_us - now_us) / US_PER_MS;
  if (left_ms >= (int64_t)want_ms) {
    return want_ms;
  }
  *capped = true;
  if (left_ms < (int64_t)lk->cfg->min_ttl_ms ||
      now_us + left_ms * US_PER_MS <= lk->valid_until_us) {
    return 0;
  }
  return (uint32_t)left_ms;
}

hrl_status hrl_lease_extend_cap(hrl_lock *lk, int64_t now_us,
                                uint32_t *ttl_ms) {
  if (!hrl_lease_is(lk)) {
    return HRL_OK;
  }
  bool capped;
  uint32_t ttl = capped_ttl(lk, now_us, *ttl_ms, &capped);
  lk->renewal->holder_capped = capped;
  lk->renewal->holder_asked_ms = *ttl_ms;
  if (ttl == 0) {
    /* As a renewal finds it: only the expiry is left, which reports
     * "max_hold reached" when the validity ends. */
    lk->renewal->renew_final = true;
    hrl_detailf(lk->detail, sizeof lk->detail, "max_hold reached");
    return HRL_ELOST;
  }
  *ttl_ms = ttl;
  return HRL_OK;
}

hrl_renew hrl_proto_renew_begin(hrl_lock *lk, int64_t now_us,
                                hrl_lock **twin_out) {
  *twin_out = NULL;
  if (!hrl_lease_is(lk) || !lk->held || lk->renewal->lost) {
    return HRL_RENEW_NONE;
  }
  if (hrl_lease_check_expiry(lk, now_us)) {
    return HRL_RENEW_LOST;
  }
  if (lk->renewal->renew_final || op_running(lk)) {
    return HRL_RENEW_WAIT; /* the holder's own call decides meanwhile */
  }
  if (lk->valid_until_us - now_us < US_PER_MS) {
    /* No round could be confirmed before the validity ends (a round is
     * capped at it, and lasts at least 1 ms): see the expiry then. */
    lk->renewal->retry_at_us = lk->valid_until_us;
    return HRL_RENEW_WAIT;
  }
  bool capped;
  uint32_t ttl_ms = capped_ttl(lk, now_us, lk->ttl_ms, &capped);
  if (ttl_ms == 0) {
    lk->renewal->renew_final = true;
    return HRL_RENEW_WAIT;
  }
  hrl_lock *t = lk->renewal->twin;
  /* Whatever an abandoned renewal left (a fork in the middle of one). */
  t->op.phase = HRL_PHASE_IDLE;
  t->held = true;
  t->release_pending = false;
  t->granted = lk->granted;
  t->valid_until_us = lk->valid_until_us;
  t->ttl_ms = lk->ttl_ms;
  memcpy(t->token, lk->token, sizeof t->token);
  t->permit = lk->permit;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    /* The extends of the hold still owed a reply cap this one too. */
    t->op.nodes[i].owed_px = lk->op.nodes[i].owed_px;
  }
  if (hrl_proto_begin(t, HRL_OP_EXTEND, ttl_ms, now_us) != HRL_OK) {
    return HRL_RENEW_WAIT; /* cannot happen: the TTL is in range */
  }
  lk->renewal->twin_gen = lk->renewal->hold_gen;
  lk->renewal->twin_capped = capped;
  lk->renewal->twin_floor_us = hrl_validity_floor_us(lk->cfg, now_us, ttl_ms);
  lk->renewal->holder_raced = false; /* the holder's call is not running */
  *twin_out = t;
  return HRL_RENEW_ROUND;
}

/* A renewal of the current hold is out: begun, its outcome not yet taken
 * by hrl_lease_renew_end (its commands may still run on a master). */
static bool renewal_out(const hrl_lock *lk) {
  const hrl_renewal *rn = lk->renewal;
  return rn->twin->op.phase != HRL_PHASE_IDLE && rn->twin_gen == rn->hold_gen;
}

void hrl_lease_extend_begun(hrl_lock *lk, int64_t now_us, uint32_t ttl_ms) {
  if (!hrl_lease_is(lk)) {
    return;
  }
  lk->renewal->holder_raced = renewal_out(lk);
  lk->renewal->holder_floor_us = hrl_validity_floor_us(lk->cfg, now_us, ttl_ms);
}

void hrl_lease_extend_judged(hrl_lock *lk, bool confirmed) {
  if (!hrl_lease_is(lk)) {
    return;
  }
  if (lk->renewal->holder_raced &&
      lk->valid_until_us > lk->renewal->twin_floor_us) {
    lk->valid_until_us = lk->renewal->twin_floor_us;
  }
  if (confirmed) {
    uint32_t counted = hrl_extend_counted_ttl(lk);
    lk->renewal->counted_ttl_ms = counted < lk->op.ttl_ms ? counted : 0;
  }
  if (confirmed && lk->renewal->holder_capped) {
    lk->ttl_ms = lk->renewal->holder_asked_ms;
    /* Extended to max_hold: no renewal can add to it, as after a capped
     * renewal; the expiry reports "max_hold reached" on time. */
    lk->renewal->renew_final = true;
  }
}

hrl_status hrl_lease_renew_end(hrl_lock *lk, int64_t now_us) {
  if (!hrl_lease_is(lk)) {
    return HRL_ECANCELLED;
  }
  hrl_lock *t = lk->renewal->twin;
  if (t->op.phase != HRL_PHASE_DONE) {
    return HRL_ECANCELLED;
  }
  t->op.phase = HRL_PHASE_IDLE;
  if (lk->renewal->twin_gen != lk->renewal->hold_gen || !lk->held ||
      lk->renewal->lost) {
    return HRL_ECANCELLED; /* the hold this renewal was for has ended */
  }
  hrl_status st = t->op.result;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    /* What this renewal left unanswered caps the holder's next extends. */
    uint32_t owed = t->op.nodes[i].owed_px, *mine = &lk->op.nodes[i].owed_px;
    if (owed != 0 && (*mine == 0 || owed < *mine)) {
      *mine = owed;
    }
  }
  int64_t holder_floor = lk->renewal->holder_floor_us;
  if (lk->renewal->holder_raced && t->valid_until_us > holder_floor) {
    /* The holder's extend raced this renewal: the least of both. */
    t->valid_until_us = holder_floor;
  }
  if (st != HRL_OK && st != HRL_ENOTOWNED) {
    /* What "expired" will say if no later renewal gets through. */
    char failure[HRL_DETAIL_MAX];
    hrl_format_error(st, t->detail, failure, sizeof failure);
    hrl_detailf(lk->renewal->lost_reason, sizeof lk->renewal->lost_reason,
                "expired: %s", failure);
  }
  if (hrl_lease_check_expiry(lk, now_us)) {
    return HRL_ELOST; /* too late, whatever the renewal found */
  }
  switch (st) {
  case HRL_OK: {
    uint32_t counted = hrl_extend_counted_ttl(t);
    lk->renewal->counted_ttl_ms = counted < t->op.ttl_ms ? counted : 0;
    lk->valid_until_us = t->valid_until_us;
    lk->granted = t->granted;
    lk->renewal->retry_at_us = 0;
    lk->renewal->lost_reason[0] = '\0';
    lk->renewal->renew_final = lk->renewal->twin_capped;
    return HRL_OK;
  }
  case HRL_ENOTOWNED:
    hrl_lease_mark_lost(lk, hrl_strerror(HRL_ENOTOWNED));
    return HRL_ELOST;
  default:
    /* Masters that timed out may have applied a shorter TTL: keep the
     * shorter bound, as extend does. */
    if (t->valid_until_us < lk->valid_until_us) {
      lk->valid_until_us = t->valid_until_us;
    }
    uint32_t retry_ms = lk->ttl_ms / RETRY_DIVISOR;
    lk->renewal->retry_at_us =
        now_us + (int64_t)(retry_ms > 0 ? retry_ms : 1) * US_PER_MS;
    return st;
  }
}
