/* The servers behind one master that is more than one server: a Redis
 * Cluster's nodes, or a Sentinel-managed primary's sentinels and the
 * primaries they named. A driver keeps a connection per entry (its index
 * is hrl_target.node), so entries are only ever added. */
#ifndef HRL_PROTO_NODES_H
#define HRL_PROTO_NODES_H

#include <stddef.h>

#include "url.h"

/* Most servers one master learns. */
#define HRL_NODES_MAX 64
/* Most redirects one command follows in a round: a slot that keeps moving
 * (or a cluster that disagrees with itself, or sentinels naming primaries
 * that refuse) fails the master instead. */
#define HRL_REDIRECTS_MAX 5

typedef struct hrl_server {
  char *host;
  int port;
  char label[HRL_LABEL_MAX]; /* "host:port" */
} hrl_server;

typedef struct hrl_nodes {
  size_t n;
  hrl_server at[HRL_NODES_MAX];
} hrl_nodes;

/* The index of host:port (host_len bytes of host), added when new; -1 when
 * the table is full or out of memory. */
int hrl_nodes_add(hrl_nodes *t, const char *host, size_t host_len, int port);

/* Adds ep's addresses (its seeds) in order; false when out of memory. */
bool hrl_nodes_add_seeds(hrl_nodes *t, const hrl_endpoint *ep);

/* Frees the hosts. */
void hrl_nodes_clear(hrl_nodes *t);

#endif
