/* Keys that live beside a lock key, in its Redis Cluster slot: the waiting
 * queue of a lock (docs/DESIGN.md, section 3). One rule for every such
 * key, so that a script touching the lock key and its siblings runs on a
 * cluster (all its keys in one slot) and proxies that follow the same rule. */
#ifndef HRL_SIBLING_KEY_H
#define HRL_SIBLING_KEY_H

#include <stddef.h>

/* The longest sibling of a lock key of len bytes with a suffix of
 * suffix_len bytes. */
#define HRL_SIBLING_KEY_MAX(len, suffix_len) (2 * (len) + 16 + (suffix_len))

/* Writes the sibling of the lock key `key` (len bytes) named by `suffix`
 * into out (room for HRL_SIBLING_KEY_MAX bytes); returns its length. */
size_t hrl_sibling_key(const char *key, size_t len, const char *suffix,
                       size_t suffix_len, char *out);

#endif
