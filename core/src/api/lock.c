/* hrl_lock: the blocking calls, which run the protocol's operations with
 * the built-in driver, and the lock's accessors. */
#include "api.h"
#include "hiredlock/binding.h"
#include "proto/detail.h"

void hrl_lock_options_init(const hrl_client *c, hrl_lock_options *out) {
  *out = c->cfg.opts.lock;
}

/* A lock object, with its schedule entry when it is a lease. */
static hrl_status new_lock(hrl_client *c, const void *name, size_t name_len,
                           const hrl_lock_options *lo, hrl_lock **out,
                           char *detail, size_t detail_size) {
  hrl_status st =
      hrl_lock_create(&c->cfg, c, name, name_len, lo, out, detail, detail_size);
  if (st == HRL_OK && lo->auto_renew && hrl_lease_attach(*out) != HRL_OK) {
    hrl_lock_destroy(*out);
    *out = NULL;
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  return st;
}

hrl_status hrl_lock_new_with(hrl_client *c, const void *name, size_t name_len,
                             const hrl_lock_options *opts, hrl_lock **out,
                             char *detail, size_t detail_size) {
  if (out == NULL || c == NULL) {
    hrl_detailf(detail, detail_size, "client and out must not be NULL");
    return HRL_EINVAL;
  }
  return new_lock(c, name, name_len, opts != NULL ? opts : &c->cfg.opts.lock,
                  out, detail, detail_size);
}

hrl_status hrl_lock_new_mode(hrl_client *c, const void *name, size_t name_len,
                             const hrl_lock_options *opts, hrl_lock_mode mode,
                             uint32_t permits, hrl_lock **out, char *detail,
                             size_t detail_size) {
  if (out == NULL || c == NULL) {
    hrl_detailf(detail, detail_size, "client and out must not be NULL");
    return HRL_EINVAL;
  }
  *out = NULL;
  hrl_status st = hrl_lock_mode_check(mode, permits, detail, detail_size);
  if (st == HRL_OK) {
    st = new_lock(c, name, name_len, opts != NULL ? opts : &c->cfg.opts.lock,
                  out, detail, detail_size);
  }
  if (st == HRL_OK) {
    hrl_hold_set(*out, mode, permits);
  }
  return st;
}

hrl_status hrl_lock_new(hrl_client *c, const void *name, size_t name_len,
                        uint32_t ttl_ms, hrl_lock **out, char *detail,
                        size_t detail_size) {
  if (out == NULL || c == NULL) {
    hrl_detailf(detail, detail_size, "client and out must not be NULL");
    return HRL_EINVAL;
  }
  hrl_lock_options lo = c->cfg.opts.lock;
  lo.ttl_ms = ttl_ms;
  return new_lock(c, name, name_len, &lo, out, detail, detail_size);
}

void hrl_lock_free(hrl_lock *lk) {
  if (lk != NULL && lk->lease != NULL) {
    hrl_lease_free(lk);
  } else {
    hrl_lock_destroy(lk);
  }
}

/* Runs the begun operation to its end with the built-in driver. Steps and
 * rounds take a turn at the client's connections (a step that starts a
 * round reads the client's record of late masters, which rounds write);
 * waits do not, so a waiter never blocks the holder's release on a shared
 * client, and a holder's release or extend goes before waiting acquires'
 * rounds (turns.c). A waiting acquire registers its token in the client's
 * waitroom before the round that queues it (with its turn given back: the
 * two are never held together), and leaves it when done.
 *
 * The clock is read once per step, and not for the first one when the turn
 * was free at once: the reading the operation was begun at is a few
 * instructions old then, and a round dated a little early only counts its
 * validity from earlier (less of it, never more). After a round, the turn
 * is kept for the step that reads its replies when no other caller waits
 * for it (a give and a take fewer); one that waits gets it there, as
 * before, so a holder's urgent call still waits at most for the round
 * already out and the step before it, and every step runs with a reading
 * taken after its turn began. */
hrl_status hrl_api_run(hrl_lock *lk, int64_t begun_us, hrl_cancel_fn cancel,
                       void *ud) {
  hrl_client *c = lk->client;
  bool urgent = lk->op.kind != HRL_OP_ACQUIRE;
  hrl_waiter w;
  hrl_waiter *waiter = NULL;
  int64_t now = begun_us;
  bool kept = false; /* the turn, since the last round */
  for (;;) {
    hrl_step_info s;
    if (!kept && !hrl_turn_take(c, urgent)) {
      now = hrl_now_us(); /* the turn kept it waiting */
    }
    hrl_step step = hrl_proto_step(lk, now, &s);
    if (step == HRL_STEP_ROUND) {
      if (waiter == NULL && hrl_proto_waiter(lk) != NULL) {
        hrl_turn_give(c);
        if (hrl_waitroom_enter(&c->room, &w, hrl_proto_waiter(lk))) {
          waiter = &w; /* else it waits on its timers alone */
        }
        hrl_turn_take(c, urgent);
        now = hrl_now_us(); /* the turn may have kept it waiting */
      }
      hrl_driver_round(&c->pool, lk, s.timeout_ms, now);
      /* Kept for the next step unless another caller waits for it (an
       * urgent one goes first: turns.c): then given, and taken again. */
      kept = !hrl_turn_wanted(c);
      if (!kept) {
        hrl_turn_give(c);
      }
      now = hrl_now_us(); /* after the replies: the next step judges by it */
      continue;
    }
    hrl_turn_give(c);
    kept = false;
    if (step == HRL_STEP_DONE) {
      if (waiter != NULL) {
        hrl_waitroom_leave(&c->room, waiter);
      }
      return s.status;
    }
    if (step == HRL_STEP_WAIT &&
        !hrl_waitroom_wait(&c->room, c, waiter, lk, s.wait_ms, cancel, ud)) {
      hrl_proto_cancel(lk);
    }
    now = hrl_now_us();
  }
}

/* One call of the holder's: begin and run the operation. On a lease, the
 * call keeps the renewer off the lock for its length (renewer.c). */
static hrl_status call(hrl_lock *lk, hrl_op_kind kind, int64_t arg,
                       hrl_cancel_fn cancel, void *ud) {
  hrl_renewer_check_fork(lk->client);
  if (lk->lease != NULL) {
    hrl_status st = hrl_lease_enter(lk, kind != HRL_OP_RELEASE);
    if (st != HRL_OK) {
      return st;
    }
  }
  int64_t now = hrl_now_us();
  hrl_status st = hrl_proto_begin(lk, kind, arg, now);
  if (st == HRL_OK) {
    st = hrl_api_run(lk, now, cancel, ud);
  }
  if (lk->lease != NULL) {
    hrl_lease_leave(lk);
  }
  return st;
}

hrl_status hrl_lock_acquire_cancellable(hrl_lock *lk, int64_t wait_ms,
                                        hrl_cancel_fn cancel, void *ud) {
  return call(lk, HRL_OP_ACQUIRE, wait_ms, cancel, ud);
}

hrl_status hrl_lock_acquire(hrl_lock *lk, int64_t wait_ms) {
  return hrl_lock_acquire_cancellable(lk, wait_ms, NULL, NULL);
}

hrl_status hrl_lock_release(hrl_lock *lk) {
  return call(lk, HRL_OP_RELEASE, 0, NULL, NULL);
}

hrl_status hrl_lock_extend(hrl_lock *lk, uint32_t ttl_ms) {
  return call(lk, HRL_OP_EXTEND, ttl_ms, NULL, NULL);
}

bool hrl_lock_held(const hrl_lock *lk) {
  if (lk->lease == NULL) {
    return hrl_lock_held_at(lk, hrl_now_us());
  }
  hrl_lease_view v;
  hrl_lease_read(lk, &v);
  return hrl_lease_view_held(&v, hrl_now_us());
}

int64_t hrl_lock_validity_ms(const hrl_lock *lk) {
  int64_t now = hrl_now_us();
  bool held;
  int64_t until;
  if (lk->lease == NULL) {
    held = hrl_lock_held_at(lk, now);
    until = lk->valid_until_us;
  } else {
    hrl_lease_view v;
    hrl_lease_read(lk, &v);
    held = hrl_lease_view_held(&v, now);
    until = v.valid_until_us;
  }
  return held ? (until - now) / 1000 : 0;
}

hrl_status hrl_lock_lost(const hrl_lock *lk, char *reason, size_t size) {
  if (lk->lease == NULL) {
    return hrl_lease_lost_at(lk, hrl_now_us(), reason, size);
  }
  hrl_lease_view v;
  hrl_lease_read(lk, &v);
  return hrl_lease_view_lost(&v, hrl_now_us(), reason, size);
}

hrl_status hrl_lock_on_lost(hrl_lock *lk, hrl_lost_fn fn, void *ud) {
  if (lk->lease == NULL) {
    hrl_detailf(lk->detail, sizeof lk->detail,
                "on_lost needs a lock made with auto_renew");
    return HRL_EINVAL;
  }
  hrl_lease_set_on_lost(lk, fn, ud);
  return HRL_OK;
}

const char *hrl_lock_token(const hrl_lock *lk) {
  return lk->token;
}

const void *hrl_lock_name(const hrl_lock *lk, size_t *len) {
  *len = lk->key_len - lk->prefix_len;
  return lk->key + lk->prefix_len;
}

const void *hrl_lock_key(const hrl_lock *lk, size_t *len) {
  *len = lk->key_len;
  return lk->key;
}

void hrl_lock_get_options(const hrl_lock *lk, hrl_lock_options *out) {
  *out = lk->opts;
}

uint32_t hrl_lock_ttl_ms(const hrl_lock *lk) {
  return lk->ttl_ms;
}

uint64_t hrl_lock_fence(const hrl_lock *lk) {
  return lk->held ? lk->fence : 0;
}

const void *hrl_lock_fence_key(const hrl_lock *lk, size_t *len) {
  *len = lk->fence_key_len;
  return lk->fence_key;
}

const char *hrl_lock_error(const hrl_lock *lk) {
  return lk->detail;
}

void hrl_lock_counts(const hrl_lock *lk, hrl_counts *out) {
  *out = lk->op.counts;
  out->masters = (uint32_t)lk->cfg->n;
  out->quorum = (uint32_t)lk->cfg->quorum;
}
