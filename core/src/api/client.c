/* hrl_client: the masters and settings locks are taken on, and the
 * connections the built-in driver keeps to them. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "driver/tls.h"
#include "hiredlock/binding.h"
#include "proto/detail.h"

hrl_status hrl_client_new(const char *const *urls, size_t n_urls,
                          const hrl_options *opts, hrl_client **out,
                          char *detail, size_t detail_size) {
  hrl_options defaults;
  if (out == NULL) {
    hrl_detailf(detail, detail_size, "out must not be NULL");
    return HRL_EINVAL;
  }
  *out = NULL;
  if (opts == NULL) {
    hrl_options_init(&defaults);
    opts = &defaults;
  }
  hrl_client *c = calloc(1, sizeof *c);
  if (c == NULL || hrl_entropy_pool_new(&c->entropy) != HRL_OK) {
    free(c);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  hrl_status st = hrl_config_init(&c->cfg, urls, n_urls, opts, hrl_pool_entropy,
                                  c->entropy, detail, detail_size);
  if (st != HRL_OK) {
    hrl_entropy_pool_free(c->entropy);
    free(c);
    return st;
  }
  if (hrl_pool_init(&c->pool, &c->cfg, hrl_entropy_pool_canary(c->entropy)) !=
          HRL_OK ||
      hrl_waitroom_init(&c->room, c->cfg.n) != HRL_OK ||
      hrl_turns_init(c) != HRL_OK) {
    hrl_waitroom_clear(&c->room);
    hrl_pool_clear(&c->pool);
    hrl_config_clear(&c->cfg);
    hrl_entropy_pool_free(c->entropy);
    free(c);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  if (hrl_renewer_init(&c->renewer) != HRL_OK) {
    hrl_turns_clear(c);
    hrl_waitroom_clear(&c->room);
    hrl_pool_clear(&c->pool);
    hrl_config_clear(&c->cfg);
    hrl_entropy_pool_free(c->entropy);
    free(c);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  *out = c;
  return HRL_OK;
}

void hrl_client_free(hrl_client *c) {
  if (c == NULL) {
    return;
  }
  hrl_renewer_clear(c); /* first: its thread uses the connections */
  hrl_events_free(c);
  hrl_waitroom_clear(&c->room);
  hrl_pool_clear(&c->pool);
  hrl_turns_clear(c);
  hrl_config_clear(&c->cfg);
  hrl_entropy_pool_free(c->entropy);
  free(c);
}

size_t hrl_client_masters(const hrl_client *c) {
  return c->cfg.n;
}

size_t hrl_client_quorum(const hrl_client *c) {
  return c->cfg.quorum;
}

uint32_t hrl_client_min_ttl_ms(const hrl_client *c) {
  return c->cfg.min_ttl_ms;
}

hrl_status hrl_client_ttl_seconds(const hrl_client *c, double seconds,
                                  int64_t *out_ms, char *detail,
                                  size_t detail_size) {
  return hrl_seconds_to_ms("ttl", seconds, c->cfg.min_ttl_ms, HRL_TTL_MAX_MS,
                           out_ms, detail, detail_size);
}

const char *hrl_client_master_label(const hrl_client *c, size_t i) {
  return i < c->cfg.n ? c->cfg.masters[i].ep.label : NULL;
}

bool hrl_client_master_info(const hrl_client *c, size_t i,
                            hrl_master_info *out) {
  if (i >= c->cfg.n) {
    return false;
  }
  const hrl_endpoint *ep = &c->cfg.masters[i].ep;
  out->host = ep->is_unix ? NULL : ep->host;
  out->port = ep->is_unix ? 0 : ep->port;
  out->path = ep->is_unix ? ep->path : NULL;
  out->db = ep->db;
  out->tls = ep->tls;
  out->cluster = ep->cluster;
  out->sentinel = ep->service != NULL;
  out->asks_server = c->cfg.masters[i].info_reply >= 0;
  memset(&out->tls_settings, 0, sizeof out->tls_settings);
  if (ep->tls) {
    out->tls_settings = c->cfg.masters[i].tls;
  }
  return true;
}

bool hrl_client_tls_check(const hrl_client *c, size_t i, char *msg,
                          size_t size) {
  if (i >= c->cfg.n || !c->cfg.masters[i].ep.tls) {
    return true;
  }
  /* A context of its own, not the pool's: no round's mutex is taken. */
  hrl_tls_ctx *ctx = hrl_tls_ctx_new(&c->cfg.masters[i].tls, msg, size);
  hrl_tls_ctx_unref(ctx);
  return ctx != NULL;
}

void hrl_client_fork_prepare(hrl_client *c) {
  /* A turn at the connections (no round is half done), then its mutex,
   * then the renewer's: the renewer never waits for a turn while it holds
   * its own mutex, so taking them in this order cannot deadlock. */
  hrl_renewer_check_fork(c);
  hrl_turn_take(c, true);
  pthread_mutex_lock(&c->mu);
  hrl_renewer_fork_prepare(c);
  c->fork_prepared = true;
  hrl_waitroom_fork_prepare(&c->room);
}

void hrl_client_fork_parent(hrl_client *c) {
  hrl_waitroom_fork_parent(&c->room);
  if (c->fork_prepared) {
    c->fork_prepared = false;
    hrl_renewer_fork_parent(c);
    pthread_mutex_unlock(&c->mu);
    hrl_turn_give(c);
  }
}

void hrl_client_after_fork(hrl_client *c) {
  /* Only the forking thread exists in the child: no renewer thread either
   * (renewer.c). With the mutexes taken before the fork, no round was half
   * done: release them. Without, another thread may have held them: new
   * ones are the only safe choice. Either way the parent's sockets are
   * closed here, never written to. */
  hrl_renewer_after_fork(c);
  /* With the hooks, this thread holds the turn and its mutex; without,
   * another thread may have: new ones are the only safe choice. Threads
   * that waited for a turn are not here either way. */
  if (c->fork_prepared) {
    c->fork_prepared = false;
    pthread_mutex_unlock(&c->mu);
  }
  hrl_turns_remake(c);
  hrl_pool_after_fork(&c->pool);
  hrl_waitroom_after_fork(&c->room);
  hrl_events_after_fork(c);
  /* The child hears its own hand-offs; failing that (no randomness), it
   * makes one on its first wait (hrl_config_channel). */
  hrl_config_make_channel(&c->cfg);
}

hrl_subscriber *hrl_subscriber_new(hrl_client *c, size_t i) {
  return hrl_subscriber_create(&c->cfg, i);
}

const char *hrl_client_channel(hrl_client *c, size_t *len) {
  return hrl_config_channel(&c->cfg, len);
}

bool hrl_client_share_channel(hrl_client *c, hrl_client *from) {
  return c == from || hrl_config_share_channel(&c->cfg, &from->cfg);
}

size_t hrl_client_subscriber_key(hrl_client *c, size_t i, char *buf,
                                 size_t size) {
  return hrl_config_subscriber_key(&c->cfg, i, buf, size);
}

const char *hrl_proto_handshake(const hrl_client *c, size_t i, size_t *len,
                                int *replies) {
  return hrl_config_handshake(&c->cfg, i, len, replies);
}

hrl_node_result hrl_proto_handshake_reply(hrl_client *c, size_t i, int k,
                                          const hrl_reply *reply, char *message,
                                          size_t message_size) {
  return hrl_config_handshake_reply(&c->cfg, i, k, reply, message,
                                    message_size);
}
