/* The holds beside the mutex: a read-write lock's reads and write, a
 * semaphore's permits (proto/hold.c). Each is a lock object made with its
 * mode; everything else is the lock's API. */
#include "api.h"
#include "hiredlock/binding.h"
#include "proto/detail.h"

hrl_status hrl_rwlock_new(hrl_client *c, const void *name, size_t name_len,
                          hrl_lock_mode mode, const hrl_lock_options *opts,
                          hrl_lock **out, char *detail, size_t detail_size) {
  if (c == NULL || out == NULL) {
    hrl_detailf(detail, detail_size, "client and out must not be NULL");
    return HRL_EINVAL;
  }
  if (mode != HRL_MODE_READ && mode != HRL_MODE_WRITE) {
    *out = NULL;
    hrl_detailf(detail, detail_size,
                "a read-write lock's mode is read or write, not %s",
                hrl_lock_mode_name(mode));
    return HRL_EINVAL;
  }
  hrl_lock_options lo = opts != NULL ? *opts : c->cfg.opts.lock;
  lo.mode = mode;
  return hrl_lock_new_with(c, name, name_len, &lo, out, detail, detail_size);
}

hrl_status hrl_permit_new(hrl_client *c, const void *name, size_t name_len,
                          uint32_t permits, const hrl_lock_options *opts,
                          hrl_lock **out, char *detail, size_t detail_size) {
  if (c == NULL || out == NULL) {
    hrl_detailf(detail, detail_size, "client and out must not be NULL");
    return HRL_EINVAL;
  }
  hrl_lock_options lo = opts != NULL ? *opts : c->cfg.opts.lock;
  lo.mode = HRL_MODE_PERMIT;
  lo.permits = permits;
  return hrl_lock_new_with(c, name, name_len, &lo, out, detail, detail_size);
}

uint32_t hrl_lock_permit(const hrl_lock *lk) {
  return lk->held ? lk->permit : 0;
}
