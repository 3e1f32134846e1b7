/* The holds beside the mutex: a read-write lock's reads and write, a
 * semaphore's permits (proto/hold.c). Each is a lock object made with its
 * mode (hrl_lock_new_mode, api/lock.c); everything else is the lock's
 * API. */
#include "api.h"
#include "hiredlock/binding.h"
#include "proto/detail.h"

hrl_status hrl_rwlock_new(hrl_client *c, const void *name, size_t name_len,
                          hrl_lock_mode mode, const hrl_lock_options *opts,
                          hrl_lock **out, char *detail, size_t detail_size) {
  if (mode != HRL_MODE_READ && mode != HRL_MODE_WRITE) {
    if (out != NULL) {
      *out = NULL;
    }
    hrl_detailf(detail, detail_size,
                "a read-write lock's mode is read or write, not %s",
                hrl_lock_mode_name(mode));
    return HRL_EINVAL;
  }
  return hrl_lock_new_mode(c, name, name_len, opts, mode, 0, out, detail,
                           detail_size);
}

hrl_status hrl_permit_new(hrl_client *c, const void *name, size_t name_len,
                          uint32_t permits, const hrl_lock_options *opts,
                          hrl_lock **out, char *detail, size_t detail_size) {
  return hrl_lock_new_mode(c, name, name_len, opts, HRL_MODE_PERMIT, permits,
                           out, detail, detail_size);
}

uint32_t hrl_lock_permit(const hrl_lock *lk) {
  return lk->held ? lk->permit : 0;
}
