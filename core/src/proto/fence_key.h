/* The key of a fenced lock's counter, in the lock key's Redis Cluster slot
 * (docs/DESIGN.md, section 3). */
#ifndef HRL_FENCE_KEY_H
#define HRL_FENCE_KEY_H

#include <stddef.h>
#include <stdint.h>

/* What every counter key ends with. */
#define HRL_FENCE_SUFFIX ":fence"

/* Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash tag, or of the
 * whole key when it has none, modulo 16384. */
uint16_t hrl_cluster_slot(const char *key, size_t len);

/* The longest counter key of a lock key of len bytes. */
#define HRL_FENCE_KEY_MAX(len) (2 * (len) + 22)

/* Length of the counter key of the lock key key (at most
 * HRL_FENCE_KEY_MAX(len)). */
size_t hrl_fence_key_len(const char *key, size_t len);

/* Writes the counter key of the lock key into out (hrl_fence_key_len bytes);
 * returns its length. */
size_t hrl_fence_key(const char *key, size_t len, char *out);

#endif
