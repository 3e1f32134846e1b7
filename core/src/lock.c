/* Lock objects and the blocking driver loop over the sans-I/O protocol. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "detail.h"
#include "internal.h"
#include "resp.h"

/* Longest single sleep between cancellation checks. */
#define CANCEL_POLL_MS 50

hrl_status hrl_lock_new(hrl_client *c, const void *name, size_t name_len,
                        uint32_t ttl_ms, hrl_lock **out, char *detail,
                        size_t detail_size) {
  if (out == NULL || c == NULL) {
    hrl_detailf(detail, detail_size, "client and out must not be NULL");
    return HRL_EINVAL;
  }
  *out = NULL;
  if (name_len == 0 || name_len > HRL_NAME_MAX || name == NULL) {
    hrl_detailf(detail, detail_size, "name must be 1 to %d bytes, got %zu",
                HRL_NAME_MAX, name == NULL ? (size_t)0 : name_len);
    return HRL_EINVAL;
  }
  if (ttl_ms == 0 || ttl_ms > HRL_TTL_MAX_MS) {
    hrl_detailf(detail, detail_size, "ttl_ms must be between 1 and %d, got %u",
                HRL_TTL_MAX_MS, (unsigned)ttl_ms);
    return HRL_EINVAL;
  }
  /* Two allocations per lock: the handle, and one buffer for its
   * per-master round states, the key and the two command buffers. Bindings
   * make a lock per acquisition (Lua's API does), so this is on their hot
   * path. Not one block: at N = 1 each part stays under glibc's per-thread
   * cache limit (1032 bytes) where the whole would not, and a garbage
   * collector freeing a batch of larger blocks makes malloc trim and regrow
   * the heap, a brk() every few cycles under LuaJIT. */
  size_t prefix_len = c->opts.key_prefix_len;
  size_t key_len = prefix_len + name_len;
  size_t cap = hrl_resp_command_capacity(key_len);
  size_t nodes_size = c->n * sizeof(hrl_node);
  hrl_lock *lk = calloc(1, sizeof *lk);
  char *buf = malloc(2 * nodes_size + key_len + 2 * cap);
  if (lk == NULL || buf == NULL) {
    free(lk);
    free(buf);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  memset(buf, 0, 2 * nodes_size); /* the commands are written before use */
  lk->client = c;
  lk->op.nodes = (hrl_node *)(void *)buf;
  lk->op.decided = (hrl_node *)(void *)(buf + nodes_size);
  lk->key = buf + 2 * nodes_size;
  lk->op.cmd = lk->key + key_len;
  lk->op.cmd_eval = lk->op.cmd + cap;
  memcpy(lk->key, c->prefix, prefix_len);
  memcpy(lk->key + prefix_len, name, name_len);
  lk->key_len = key_len;
  lk->prefix_len = prefix_len;
  lk->ttl_ms = ttl_ms;
  lk->op.phase = HRL_PHASE_IDLE;
  *out = lk;
  return HRL_OK;
}

void hrl_lock_free(hrl_lock *lk) {
  if (lk == NULL) {
    return;
  }
  free(lk->op.nodes); /* the buffer: see hrl_lock_new */
  free(lk);
}

/* Sleeps ms, checking cancel at least every CANCEL_POLL_MS. */
static bool sleep_unless_cancelled(uint32_t ms, hrl_cancel_fn cancel,
                                   void *ud) {
  for (;;) {
    if (cancel != NULL && cancel(ud)) {
      return false;
    }
    if (ms == 0) {
      return true;
    }
    uint32_t slice =
        cancel != NULL && ms > CANCEL_POLL_MS ? CANCEL_POLL_MS : ms;
    hrl_sleep_ms(slice);
    ms -= slice;
  }
}

/* Runs the begun operation to its end with the hiredis driver. Rounds hold
 * the client's mutex; sleeps do not, so a waiter never blocks the holder's
 * release on a shared client. */
static hrl_status run(hrl_lock *lk, hrl_cancel_fn cancel, void *ud) {
  for (;;) {
    hrl_step_info s;
    switch (hrl_proto_step(lk, hrl_now_us(), &s)) {
    case HRL_STEP_DONE:
      return s.status;
    case HRL_STEP_SLEEP:
      if (!sleep_unless_cancelled(s.sleep_ms, cancel, ud)) {
        hrl_proto_cancel(lk);
      }
      break;
    case HRL_STEP_ROUND:
      pthread_mutex_lock(&lk->client->mu);
      hrl_fanout_round(lk->client, lk, s.timeout_ms);
      pthread_mutex_unlock(&lk->client->mu);
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
  return lk->held && lk->valid_until_us > hrl_now_us();
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

uint32_t hrl_lock_ttl_ms(const hrl_lock *lk) {
  return lk->ttl_ms;
}

const char *hrl_lock_error(const hrl_lock *lk) {
  return lk->detail;
}

void hrl_lock_counts(const hrl_lock *lk, hrl_counts *out) {
  *out = lk->op.counts;
  out->masters = (uint32_t)lk->client->n;
  out->quorum = (uint32_t)lk->client->quorum;
}
