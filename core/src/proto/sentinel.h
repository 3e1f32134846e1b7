/* A Sentinel-managed primary as one master of a Redlock client
 * (redis+sentinel://sentinels/service), sans-I/O: where the primary is, as
 * the sentinels said, and when to ask them again. A round whose primary
 * is not known goes to a sentinel first: hrl_proto_target names it (with
 * no handshake) and hrl_proto_command is the question,
 *   SENTINEL get-master-addr-by-name <service>
 * whose answer (hrl_proto_reply) redirects the command to the primary.
 * The primary is asked again after it refuses as a replica (READONLY: a
 * failover happened) or cannot be reached. */
#ifndef HRL_PROTO_SENTINEL_H
#define HRL_PROTO_SENTINEL_H

#include <stdbool.h>
#include <stddef.h>

#include "nodes.h"

struct hrl_reply;

typedef struct hrl_sentinel {
  /* The sentinels (entries 0 .. n_sentinels - 1), then every primary they
   * named, each once (a connection per entry in the drivers). */
  hrl_nodes nodes;
  size_t n_sentinels;
  int primary; /* the entry of the primary, -1 while not known */
  size_t next; /* the sentinel to ask next */
  char *query; /* SENTINEL get-master-addr-by-name <service>, as RESP */
  size_t query_len;
  const char *service; /* the endpoint's */
} hrl_sentinel;

/* The sentinels and service of ep; NULL when out of memory. */
hrl_sentinel *hrl_sentinel_new(const hrl_endpoint *ep);
void hrl_sentinel_free(hrl_sentinel *s);

/* Whether node is one of the sentinels (not a primary they named). */
static inline bool hrl_sentinel_asks(const hrl_sentinel *s, size_t node) {
  return node < s->n_sentinels;
}

/* A sentinel's answer to the question (sentinel: the one asked): true with
 * the primary's host (host_len bytes, in r) and port; else false with msg
 * saying why, in the words of a round's failure. */
bool hrl_sentinel_answer(const hrl_sentinel *s, size_t sentinel,
                         const struct hrl_reply *r, const char **host,
                         size_t *host_len, int *port, char *msg, size_t size);

#endif
