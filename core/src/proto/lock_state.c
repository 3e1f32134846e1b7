/* Lock objects: a name on a client's masters and the buffers its rounds
 * use. Making one does no I/O. */
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "command_cache.h"
#include "detail.h"
#include "resp.h"
#include "sibling_key.h"
#include "state.h"

_Static_assert(HRL_SIBLING_KEY_MAX(HRL_PREFIX_MAX + HRL_NAME_MAX,
                                   HRL_SIBLING_SUFFIX_MAX) <= UINT16_MAX,
               "hrl_lock's key lengths are 16 bits");

hrl_status hrl_lock_create(hrl_config *cfg, hrl_client *client,
                           const void *name, size_t name_len,
                           const hrl_lock_options *lo, hrl_lock **out,
                           char *detail, size_t detail_size) {
  *out = NULL;
  uint32_t ttl_ms = lo->ttl_ms;
  if (name_len == 0 || name_len > HRL_NAME_MAX || name == NULL) {
    hrl_detailf(detail, detail_size, "name must be 1 to %d bytes, got %zu",
                HRL_NAME_MAX, name == NULL ? (size_t)0 : name_len);
    return HRL_EINVAL;
  }
  if (ttl_ms < cfg->min_ttl_ms || ttl_ms > HRL_TTL_MAX_MS) {
    hrl_detailf(detail, detail_size, "ttl_ms must be between %u and %d, got %u",
                (unsigned)cfg->min_ttl_ms, HRL_TTL_MAX_MS, (unsigned)ttl_ms);
    return HRL_EINVAL;
  }
  hrl_status st = hrl_lock_options_check(lo, detail, detail_size);
  if (st != HRL_OK) {
    return st;
  }
  /* A lease acquires with min(ttl, max_hold) (redlock.c): a max_hold no
   * round could hold a lock for is as useless as such a TTL. */
  if (lo->max_hold_ms > 0 && lo->max_hold_ms < cfg->min_ttl_ms) {
    hrl_detailf(detail, detail_size,
                "max_hold must be 0 (no cap) or at least the smallest TTL, "
                "%u ms; got %u ms",
                (unsigned)cfg->min_ttl_ms, (unsigned)lo->max_hold_ms);
    return HRL_EINVAL;
  }
  /* Two allocations per lock: the handle, and one buffer for its
   * per-master round states, the key, its siblings (the queue's keys, a
   * fenced lock's counter key) and the command buffer (the EVAL form,
   * rarely needed, is allocated on first use). Bindings make a lock per
   * acquisition (Lua's API does), so this is on their hot path. Not one
   * block: at N = 1 each part stays under glibc's per-thread cache limit
   * (1032 bytes) where the whole would not, and a garbage collector freeing
   * a batch of larger blocks makes malloc trim and regrow the heap, a brk()
   * every few cycles under LuaJIT. */
  size_t prefix_len = cfg->opts.key_prefix_len;
  size_t key_len = prefix_len + name_len;
  size_t sibling_max = HRL_SIBLING_KEY_MAX(key_len, HRL_SIBLING_SUFFIX_MAX);
  /* A fenced lock's counter key: room for the longest it can be. */
  size_t fence_room = lo->fenced ? sibling_max : 0;
  /* The command buffer has room for an ASKING in front (a cluster's ASK
   * redirect sends the two at once, with no copy), and for a WAIT behind
   * only when the lock's rounds may wait: at N = 1 that room was what
   * took the buffer past the cache limit above. */
  bool may_wait = hrl_round_may_wait(cfg, lo);
  size_t cap =
      HRL_ASKING_LEN + hrl_resp_command_capacity(key_len, sibling_max,
                                                 cfg->channel_len, may_wait);
  size_t nodes_size = cfg->n * sizeof(hrl_node);
  /* malloc and a copy of an empty lock, not calloc: glibc's calloc never
   * takes a block from the per-thread cache, and went through the arena
   * every time (a memset would be folded back into calloc by the
   * compiler). */
  static const hrl_lock empty;
  hrl_lock *lk = malloc(sizeof *lk);
  if (lk != NULL) {
    *lk = empty;
  }
  char *buf =
      malloc(2 * nodes_size + key_len + 2 * sibling_max + fence_room + cap);
  if (lk == NULL || buf == NULL) {
    free(lk);
    free(buf);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  memset(buf, 0, 2 * nodes_size); /* the commands are written before use */
  lk->cfg = cfg;
  lk->client = client;
  lk->op.nodes = (hrl_node *)(void *)buf;
  lk->key = buf + 2 * nodes_size;
  lk->queue = lk->key + key_len;
  lk->waiters = lk->queue + sibling_max;
  lk->op.cmd = lk->waiters + sibling_max + fence_room + HRL_ASKING_LEN;
  memcpy(lk->op.cmd - HRL_ASKING_LEN, HRL_ASKING, HRL_ASKING_LEN);
  memcpy(lk->key, cfg->prefix, prefix_len);
  memcpy(lk->key + prefix_len, name, name_len);
  /* Rarely worth the look: a sibling holds a '{' and ends in a suffix. */
  const char *sibling = memchr(lk->key, '{', key_len) != NULL
                            ? hrl_sibling_key_of(lk->key, key_len)
                            : NULL;
  if (sibling != NULL) {
    hrl_detailf(detail, detail_size,
                "name must not make another lock's %s key (key_prefix + "
                "name is a sibling key: docs/DESIGN.md, section 3)",
                sibling + 1);
    free(lk);
    free(buf);
    return HRL_EINVAL;
  }
  if (lo->fenced) {
    lk->fence_key = lk->waiters + sibling_max;
    lk->fence_key_len =
        hrl_sibling_key(lk->key, key_len, HRL_FENCE_SUFFIX,
                        sizeof HRL_FENCE_SUFFIX - 1, lk->fence_key);
  }
  lk->key_len = key_len;
  lk->queue_len = hrl_sibling_key(lk->key, key_len, HRL_QUEUE_SUFFIX,
                                  sizeof HRL_QUEUE_SUFFIX - 1, lk->queue);
  lk->waiters_len = hrl_sibling_key(lk->key, key_len, HRL_WAITERS_SUFFIX,
                                    sizeof HRL_WAITERS_SUFFIX - 1, lk->waiters);
  if (cfg->clusters > 0) { /* a lock is made per acquire in Lua: no CRC */
    lk->slot = hrl_cluster_slot(lk->key, key_len);
  }
  lk->prefix_len = prefix_len;
  lk->opts = *lo;
  lk->may_wait = may_wait;
  lk->ttl_ms = ttl_ms;
  lk->op.phase = HRL_PHASE_IDLE;
  if (lo->owner != NULL) {
    st = hrl_lock_extra_init(lk, detail, detail_size); /* observe.h */
    if (st != HRL_OK) {
      hrl_lock_destroy(lk);
      return st;
    }
  }
  if (lo->auto_renew) {
    /* A lease's state, and the twin its renewals run on (lease.c). */
    st = hrl_lease_state_new(lk, detail, detail_size);
    if (st != HRL_OK) {
      hrl_lock_destroy(lk);
      return st;
    }
  }
  *out = lk;
  return HRL_OK;
}

void hrl_lock_destroy(hrl_lock *lk) {
  if (lk == NULL) {
    return;
  }
  hrl_lease_state_free(lk);
  hrl_lock_extra_free(lk);
  free(lk->op.nodes); /* the buffer: see hrl_lock_create */
  if (lk->op.cmd_eval != NULL) {
    free(lk->op.cmd_eval - HRL_ASKING_LEN); /* round.c keeps ASKING room */
  }
  hrl_op_spare_free(lk);
  free(lk);
}
