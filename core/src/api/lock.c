/* hrl_lock: the blocking calls, which run the protocol's operations with
 * the built-in driver, and the lock's accessors. */
#include "api.h"
#include "proto/detail.h"

void hrl_lock_options_init(const hrl_client *c, hrl_lock_options *out) {
  *out = c->cfg.opts.lock;
}

hrl_status hrl_lock_new_with(hrl_client *c, const void *name, size_t name_len,
                             const hrl_lock_options *opts, hrl_lock **out,
                             char *detail, size_t detail_size) {
  if (out == NULL || c == NULL) {
    hrl_detailf(detail, detail_size, "client and out must not be NULL");
    return HRL_EINVAL;
  }
  return hrl_lock_create(&c->cfg, c, name, name_len,
                         opts != NULL ? opts : &c->cfg.opts.lock, out, detail,
                         detail_size);
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
  return hrl_lock_create(&c->cfg, c, name, name_len, &lo, out, detail,
                         detail_size);
}

void hrl_lock_free(hrl_lock *lk) {
  hrl_lock_destroy(lk);
}

/* Runs the begun operation to its end with the built-in driver. Rounds
 * hold the client's mutex; waits do not, so a waiter never blocks the
 * holder's release on a shared client. A waiting acquire registers its
 * token in the client's waitroom before the round that queues it, and
 * leaves it when done. */
static hrl_status run(hrl_lock *lk, hrl_cancel_fn cancel, void *ud) {
  hrl_client *c = lk->client;
  hrl_waiter w;
  hrl_waiter *waiter = NULL;
  for (;;) {
    hrl_step_info s;
    switch (hrl_proto_step(lk, hrl_now_us(), &s)) {
    case HRL_STEP_DONE:
      if (waiter != NULL) {
        hrl_waitroom_leave(&c->room, waiter);
      }
      return s.status;
    case HRL_STEP_WAIT:
      if (!hrl_waitroom_wait(&c->room, c, waiter, lk, s.wait_ms, cancel, ud)) {
        hrl_proto_cancel(lk);
      }
      break;
    case HRL_STEP_ROUND:
      if (waiter == NULL && hrl_proto_waiter(lk) != NULL &&
          hrl_waitroom_enter(&c->room, &w, hrl_proto_waiter(lk))) {
        waiter = &w; /* else it waits on its timers alone */
      }
      pthread_mutex_lock(&c->mu);
      hrl_driver_round(&c->pool, lk, s.timeout_ms);
      pthread_mutex_unlock(&c->mu);
      break;
    }
  }
}

hrl_status hrl_lock_acquire_cancellable(hrl_lock *lk, int64_t wait_ms,
                                        hrl_cancel_fn cancel, void *ud) {
  hrl_status st = hrl_proto_begin(lk, HRL_OP_ACQUIRE, wait_ms, hrl_now_us());
  return st != HRL_OK ? st : run(lk, cancel, ud);
}

hrl_status hrl_lock_acquire(hrl_lock *lk, int64_t wait_ms) {
  return hrl_lock_acquire_cancellable(lk, wait_ms, NULL, NULL);
}

hrl_status hrl_lock_release(hrl_lock *lk) {
  hrl_status st = hrl_proto_begin(lk, HRL_OP_RELEASE, 0, hrl_now_us());
  return st != HRL_OK ? st : run(lk, NULL, NULL);
}

hrl_status hrl_lock_extend(hrl_lock *lk, uint32_t ttl_ms) {
  hrl_status st = hrl_proto_begin(lk, HRL_OP_EXTEND, ttl_ms, hrl_now_us());
  return st != HRL_OK ? st : run(lk, NULL, NULL);
}

bool hrl_lock_held(const hrl_lock *lk) {
  return hrl_lock_held_at(lk, hrl_now_us());
}

int64_t hrl_lock_validity_ms(const hrl_lock *lk) {
  if (!lk->held) {
    return 0;
  }
  int64_t left = lk->valid_until_us - hrl_now_us();
  return left > 0 ? left / 1000 : 0;
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

const char *hrl_lock_error(const hrl_lock *lk) {
  return lk->detail;
}

void hrl_lock_counts(const hrl_lock *lk, hrl_counts *out) {
  *out = lk->op.counts;
  out->masters = (uint32_t)lk->cfg->n;
  out->quorum = (uint32_t)lk->cfg->quorum;
}
