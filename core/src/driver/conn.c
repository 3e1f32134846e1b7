/* The built-in driver's connections: one per master, and the fork canary
 * (in the client's entropy page, entropy.c) that tells a forked child its
 * inherited sockets are its parent's. */
#define _GNU_SOURCE
#include <hiredis/hiredis.h>
#include <stdlib.h>

#include "driver.h"
#include "proto/nodes.h"
#include "tls.h"

void hrl_conn_close(hrl_conn *conn) {
  hrl_tls_free(conn->tls); /* no close_notify: nothing is written */
  conn->tls = NULL;
  if (conn->ctx != NULL) {
    /* redisFree() only close()s the socket: nothing reaches the server, so
     * this is also safe on a socket inherited from a parent process. */
    redisFree(conn->ctx);
    conn->ctx = NULL;
  }
  if (conn->parser != NULL) {
    hrl_parser_reset(conn->parser); /* a partial reply dies with its socket */
  }
  conn->blocking = false;
  conn->rcvtimeo_ms = 0;
  conn->owed = 0;
  conn->connecting = false;
  conn->handshaking = false;
  conn->handshake_left = 0;
  conn->handshake_total = 0;
}

hrl_status hrl_pool_init(hrl_pool *pool, const hrl_config *cfg,
                         volatile unsigned char *fork_canary) {
  size_t n = cfg->n;
  pool->n = n;
  pool->conns = calloc(n, sizeof *pool->conns);
  pool->tls_ctx = calloc(n, sizeof *pool->tls_ctx);
  if (pool->conns == NULL || pool->tls_ctx == NULL) {
    return HRL_ENOMEM;
  }
  if (cfg->clusters + cfg->sentinels > 0) {
    pool->node_conns = calloc(n, sizeof *pool->node_conns);
    if (pool->node_conns == NULL) {
      return HRL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
      if (cfg->masters[i].cluster != NULL || cfg->masters[i].sentinel != NULL) {
        pool->node_conns[i] =
            calloc(HRL_NODES_MAX, sizeof *pool->node_conns[i]);
        if (pool->node_conns[i] == NULL) {
          return HRL_ENOMEM;
        }
      }
    }
  }
  pool->fork_canary = fork_canary;
  return HRL_OK;
}

/* Closes every connection of the pool, writing nothing. */
static void close_all(hrl_pool *pool) {
  for (size_t i = 0; pool->conns != NULL && i < pool->n; i++) {
    hrl_conn_close(&pool->conns[i]);
    hrl_conn *nodes = pool->node_conns != NULL ? pool->node_conns[i] : NULL;
    for (size_t k = 0; nodes != NULL && k < HRL_NODES_MAX; k++) {
      hrl_conn_close(&nodes[k]);
    }
  }
}

/* Frees what a connection keeps between connections. */
static void free_parser(hrl_conn *conn) {
  hrl_parser_free(conn->parser);
  conn->parser = NULL;
}

void hrl_pool_clear(hrl_pool *pool) {
  close_all(pool);
  for (size_t i = 0; pool->conns != NULL && i < pool->n; i++) {
    free_parser(&pool->conns[i]);
    hrl_conn *nodes = pool->node_conns != NULL ? pool->node_conns[i] : NULL;
    for (size_t k = 0; nodes != NULL && k < HRL_NODES_MAX; k++) {
      free_parser(&nodes[k]);
    }
  }
  for (size_t i = 0; pool->node_conns != NULL && i < pool->n; i++) {
    free(pool->node_conns[i]);
  }
  free(pool->node_conns);
  pool->node_conns = NULL;
  for (size_t i = 0; pool->tls_ctx != NULL && i < pool->n; i++) {
    hrl_tls_ctx_unref(pool->tls_ctx[i]);
  }
  free(pool->conns);
  free(pool->tls_ctx);
  pool->tls_ctx = NULL;
  pool->conns = NULL;
  pool->fork_canary = NULL; /* the entropy page's: unmapped with it */
  pool->n = 0;
}

hrl_tls_ctx *hrl_pool_tls_ctx(hrl_pool *pool, const hrl_config *cfg, size_t i,
                              char *msg, size_t size) {
  if (pool->tls_ctx[i] != NULL) {
    return pool->tls_ctx[i];
  }
  const hrl_tls_settings *s = &cfg->masters[i].tls;
  for (size_t j = 0; j < pool->n; j++) {
    if (pool->tls_ctx[j] != NULL && hrl_tls_ctx_fits(pool->tls_ctx[j], s)) {
      pool->tls_ctx[i] = hrl_tls_ctx_ref(pool->tls_ctx[j]);
      return pool->tls_ctx[i];
    }
  }
  pool->tls_ctx[i] = hrl_tls_ctx_new(s, msg, size);
  return pool->tls_ctx[i];
}

void hrl_pool_after_fork(hrl_pool *pool) {
  close_all(pool);
}
