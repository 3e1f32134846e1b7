/* A Redis Cluster as one master of a Redlock client (redis+cluster://):
 * its nodes (the seeds of the URL, then those redirects name), which node
 * serves which slot as MOVED taught it, the slot of a lock's key, and the
 * redirects of a round (MOVED, ASK), all sans-I/O: a driver asks where
 * master i's command goes (hrl_proto_target) and resends it there when a
 * reply says HRL_NODE_REDIRECT. */
#ifndef HRL_PROTO_CLUSTER_H
#define HRL_PROTO_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hiredlock/proto.h"
#include "nodes.h"
#include "sibling_key.h" /* hrl_cluster_slot */
#include "url.h"

#define HRL_CLUSTER_SLOTS 16384

typedef struct hrl_cluster {
  hrl_nodes nodes; /* the seeds, then the nodes redirects named */
  /* owner[slot]: 1 + the index of the node MOVED named for it; 0 when no
   * node is known to serve it: then `guess` is asked, which answers or
   * says who does. */
  uint8_t owner[HRL_CLUSTER_SLOTS];
  size_t guess;
} hrl_cluster;

/* A cluster whose nodes are ep's seeds; NULL when out of memory. */
hrl_cluster *hrl_cluster_new(const hrl_endpoint *ep);
void hrl_cluster_free(hrl_cluster *c);

/* The node a command about slot goes to first. */
size_t hrl_cluster_target(const hrl_cluster *c, uint16_t slot);

/* A node failed (unreachable): what it was known to serve is forgotten and
 * the next guess is another node, so that a later round finds the slot's
 * new owner (a failover, a node removed) through a redirect. */
void hrl_cluster_node_failed(hrl_cluster *c, size_t node);

/* Whether an error reply is a redirect for slot: 0 when it is not, 1 for
 * MOVED (the slot map learns it) and 2 for ASK (this command only), with
 * the node it names in *node; -1 when it names a node that cannot be
 * taken (malformed, or too many nodes), with why in message. `from` is the
 * node that answered (an address without a host means its host). */
int hrl_cluster_redirect(hrl_cluster *c, size_t from, uint16_t slot,
                         const hrl_reply *reply, size_t *node, char *message,
                         size_t size);

#endif
