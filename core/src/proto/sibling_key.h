/* Keys that live beside a lock key, in its Redis Cluster slot: the waiting
 * queue's and a fenced lock's counter (docs/DESIGN.md, section 3). One
 * rule for every such key, so that a script touching the lock key and its
 * siblings runs on a cluster (all its keys in one slot) and proxies that
 * follow the same rule. */
#ifndef HRL_SIBLING_KEY_H
#define HRL_SIBLING_KEY_H

#include <stddef.h>
#include <stdint.h>

/* The siblings of a lock key: a fenced lock's counter, and the waiting
 * queue's sorted set and hash. */
#define HRL_FENCE_SUFFIX ":fence"
#define HRL_QUEUE_SUFFIX ":queue"
#define HRL_WAITERS_SUFFIX ":waiters"
/* The longest of them. */
#define HRL_SIBLING_SUFFIX_MAX (sizeof HRL_WAITERS_SUFFIX - 1)
_Static_assert(sizeof HRL_QUEUE_SUFFIX <= sizeof HRL_WAITERS_SUFFIX &&
                   sizeof HRL_FENCE_SUFFIX <= sizeof HRL_WAITERS_SUFFIX,
               "HRL_SIBLING_SUFFIX_MAX must be the longest suffix");

/* Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash tag, or of the
 * whole key when it has none, modulo 16384. */
uint16_t hrl_cluster_slot(const char *key, size_t len);

/* The longest sibling of a lock key of len bytes with a suffix of
 * suffix_len bytes. */
#define HRL_SIBLING_KEY_MAX(len, suffix_len) (2 * (len) + 16 + (suffix_len))

/* Length of the sibling of the lock key `key` (len bytes) with a suffix of
 * suffix_len bytes (at most HRL_SIBLING_KEY_MAX). */
size_t hrl_sibling_key_len(const char *key, size_t len, size_t suffix_len);

/* Writes the sibling of the lock key `key` (len bytes) named by `suffix`
 * into out (hrl_sibling_key_len bytes); returns its length. */
size_t hrl_sibling_key(const char *key, size_t len, const char *suffix,
                       size_t suffix_len, char *out);

/* When key (len bytes) is a sibling of some lock key, the suffix it
 * carries (HRL_QUEUE_SUFFIX, ...); else NULL. Such a key is refused as a
 * lock's: as a lock it would be another lock's queue or counter (two locks
 * never share a sibling only when no lock key is one). */
const char *hrl_sibling_key_of(const char *key, size_t len);

#endif
