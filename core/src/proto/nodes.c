/* The servers behind a master that is more than one server (nodes.h). */
#include "nodes.h"

#include <stdlib.h>
#include <string.h>

#include "detail.h"

int hrl_nodes_add(hrl_nodes *t, const char *host, size_t host_len, int port) {
  for (size_t k = 0; k < t->n; k++) {
    if (t->at[k].port == port && strlen(t->at[k].host) == host_len &&
        memcmp(t->at[k].host, host, host_len) == 0) {
      return (int)k;
    }
  }
  if (t->n == HRL_NODES_MAX) {
    return -1;
  }
  hrl_server *s = &t->at[t->n];
  s->host = malloc(host_len + 1);
  if (s->host == NULL) {
    return -1;
  }
  memcpy(s->host, host, host_len);
  s->host[host_len] = '\0';
  s->port = port;
  bool v6 = memchr(host, ':', host_len) != NULL;
  hrl_detailf(s->label, sizeof s->label, "%s%s%s:%d", v6 ? "[" : "", s->host,
              v6 ? "]" : "", port);
  return (int)t->n++;
}

bool hrl_nodes_add_seeds(hrl_nodes *t, const hrl_endpoint *ep) {
  for (size_t k = 0; k < ep->n_seeds; k++) {
    const hrl_seed *s = &ep->seeds[k];
    if (hrl_nodes_add(t, s->host, strlen(s->host), s->port) < 0) {
      return false;
    }
  }
  return true;
}

void hrl_nodes_clear(hrl_nodes *t) {
  for (size_t k = 0; k < t->n; k++) {
    free(t->at[k].host);
  }
  t->n = 0;
}
