/* A client's configuration: its options, checked against the option table,
 * and its masters, parsed once, each with the handshake (AUTH, SELECT) a new
 * connection to it sends first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "detail.h"
#include "mutant.h"
#include "reply.h"
#include "resp.h"
#include "sentinel.h"
#include "state.h"

/* INFO server, the last command of a handshake that asks for it. */
#define INFO_SERVER "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"
#define INFO_SERVER_LEN (sizeof INFO_SERVER - 1)

/* AUTH and SELECT, pipelined ahead of a new connection's first command,
 * and INFO server behind them when info (see hrl_config_handshake_reply). */
static hrl_status build_handshake(hrl_master_cfg *m, bool info) {
  const hrl_endpoint *ep = &m->ep;
  char db[24];
  char *auth = NULL, *sel = NULL;
  size_t auth_len = 0, sel_len = 0;
  int replies = 0;
  m->info_reply = -1;
  if (ep->pass != NULL) {
    const char *argv[3] = {"AUTH", ep->user, ep->pass};
    size_t lens[3] = {4, ep->user ? strlen(ep->user) : 0, strlen(ep->pass)};
    if (ep->user == NULL) {
      argv[1] = ep->pass;
      lens[1] = lens[2];
    }
    auth = hrl_resp_format(ep->user ? 3 : 2, argv, lens, &auth_len);
    if (auth == NULL) {
      return HRL_ENOMEM;
    }
    replies++;
  }
  if (ep->db != 0) {
    int n = snprintf(db, sizeof db, "%ld", ep->db);
    const char *argv[2] = {"SELECT", db};
    size_t lens[2] = {6, (size_t)n};
    sel = hrl_resp_format(2, argv, lens, &sel_len);
    if (sel == NULL) {
      free(auth);
      return HRL_ENOMEM;
    }
    replies++;
  }
  m->handshake_plain_len = auth_len + sel_len;
  if (info) {
    m->info_reply = replies++;
  }
  if (replies == 0) {
    return HRL_OK;
  }
  size_t info_len = info ? INFO_SERVER_LEN : 0;
  m->handshake = malloc(auth_len + sel_len + info_len);
  if (m->handshake == NULL) {
    free(auth);
    free(sel);
    return HRL_ENOMEM;
  }
  if (auth_len > 0) {
    memcpy(m->handshake, auth, auth_len);
  }
  if (sel_len > 0) {
    memcpy(m->handshake + auth_len, sel, sel_len);
  }
  if (info_len > 0) {
    memcpy(m->handshake + auth_len + sel_len, INFO_SERVER, info_len);
  }
  m->handshake_len = auth_len + sel_len + info_len;
  m->handshake_replies = replies;
  if (auth != NULL) {
    memset(auth, 0, auth_len); /* holds the password */
  }
  free(auth);
  free(sel);
  return HRL_OK;
}

/* A TLS master's settings: each from its URL's query where given, else
 * the client's option. */
static hrl_status settle_tls(const hrl_config *cfg, hrl_master_cfg *m,
                             char *detail, size_t size) {
  const hrl_url_tls *q = &m->ep.tls_query;
  const hrl_options *o = &cfg->opts;
  hrl_tls_settings *t = &m->tls;
  t->ca_certs = q->ca_certs != NULL ? q->ca_certs : o->ssl_ca_certs;
  t->ca_path = q->ca_path != NULL ? q->ca_path : o->ssl_ca_path;
  t->certfile = q->certfile != NULL ? q->certfile : o->ssl_certfile;
  t->keyfile = q->keyfile != NULL ? q->keyfile : o->ssl_keyfile;
  t->cert_reqs = q->has_cert_reqs ? q->cert_reqs : o->ssl_cert_reqs;
  t->check_hostname =
      q->has_check_hostname ? q->check_hostname : o->ssl_check_hostname;
  if (t->keyfile != NULL && t->certfile == NULL) {
    hrl_detailf(detail, size,
                "master %s: ssl_keyfile is given without ssl_certfile",
                m->ep.label);
    return HRL_EINVAL;
  }
  return HRL_OK;
}

/* The client's ssl_* paths, copied so the caller's may go. */
static hrl_status copy_ssl_paths(hrl_config *cfg) {
  const char **fields[4] = {&cfg->opts.ssl_ca_certs, &cfg->opts.ssl_ca_path,
                            &cfg->opts.ssl_certfile, &cfg->opts.ssl_keyfile};
  for (size_t k = 0; k < 4; k++) {
    if (*fields[k] == NULL) {
      continue;
    }
    size_t len = strlen(*fields[k]);
    cfg->ssl_paths[k] = malloc(len + 1);
    if (cfg->ssl_paths[k] == NULL) {
      return HRL_ENOMEM;
    }
    memcpy(cfg->ssl_paths[k], *fields[k], len + 1);
    *fields[k] = cfg->ssl_paths[k];
  }
  return HRL_OK;
}

static hrl_status add_masters(hrl_config *cfg, const char *const *urls,
                              char *detail, size_t size) {
  for (size_t i = 0; i < cfg->n; i++) {
    hrl_master_cfg *m = &cfg->masters[i];
    hrl_status st = hrl_url_parse(urls[i], &m->ep, detail, size);
    if (st != HRL_OK) {
      return st;
    }
    for (size_t j = 0; j < i; j++) {
      if (hrl_endpoint_same_server(&cfg->masters[j].ep, &m->ep)) {
        hrl_detailf(detail, size,
                    "master %s is listed twice; Redlock needs independent "
                    "masters",
                    m->ep.label);
        return HRL_EINVAL;
      }
    }
    if (m->ep.tls && (st = settle_tls(cfg, m, detail, size)) != HRL_OK) {
      return st;
    }
    if (m->ep.cluster && (m->cluster = hrl_cluster_new(&m->ep)) == NULL) {
      hrl_detailf(detail, size, "out of memory");
      return HRL_ENOMEM;
    }
    cfg->clusters += m->ep.cluster;
    if (m->ep.service != NULL &&
        (m->sentinel = hrl_sentinel_new(&m->ep)) == NULL) {
      hrl_detailf(detail, size, "out of memory");
      return HRL_ENOMEM;
    }
    cfg->sentinels += m->ep.service != NULL;
    /* The server behind each master is asked who it is (INFO) when two
     * of them could be one server under two names, or when a restart
     * must cost a master its vote. */
    bool info = cfg->n > 1 || cfg->opts.restart_guard_ms > 0;
    if (build_handshake(m, info) != HRL_OK) {
      hrl_detailf(detail, size, "out of memory");
      return HRL_ENOMEM;
    }
  }
  return HRL_OK;
}

hrl_status hrl_config_init(hrl_config *cfg, const char *const *urls, size_t n,
                           const hrl_options *opts, hrl_entropy_fn entropy,
                           void *entropy_ctx, char *detail,
                           size_t detail_size) {
  if (urls == NULL || n == 0 || n > HRL_MASTERS_MAX) {
    hrl_detailf(detail, detail_size, "urls must list 1 to %d masters, got %zu",
                HRL_MASTERS_MAX, urls == NULL ? (size_t)0 : n);
    return HRL_EINVAL;
  }
  hrl_status st = hrl_options_check(opts, detail, detail_size);
  if (st != HRL_OK) {
    return st;
  }
  cfg->opts = *opts;
  cfg->entropy = entropy;
  cfg->entropy_ctx = entropy_ctx;
  cfg->n = n;
  cfg->quorum = HRL_MUTANT(QUORUM_LOW) && n > 1 ? n / 2 : n / 2 + 1;
  cfg->min_ttl_ms = hrl_min_ttl_ms(cfg);
  cfg->lease_ms = hrl_lease_ms(opts);
  cfg->window_ms = hrl_window_ms(opts);
  cfg->prefix = malloc(opts->key_prefix_len + 1);
  cfg->masters = calloc(n, sizeof *cfg->masters);
  if (cfg->prefix == NULL || cfg->masters == NULL ||
      copy_ssl_paths(cfg) != HRL_OK) {
    hrl_config_clear(cfg);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  if (opts->key_prefix_len > 0) {
    memcpy(cfg->prefix, opts->key_prefix, opts->key_prefix_len);
  }
  cfg->prefix[opts->key_prefix_len] = '\0';
  cfg->opts.key_prefix = cfg->prefix;
  if (hrl_observer_init(cfg) != HRL_OK) { /* observe.h */
    hrl_config_clear(cfg);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  if (hrl_config_make_channel(cfg) != HRL_OK) {
    hrl_config_clear(cfg);
    hrl_detailf(detail, detail_size, "the OS random generator failed");
    return HRL_ESYSTEM;
  }
  st = add_masters(cfg, urls, detail, detail_size);
  if (st != HRL_OK) {
    hrl_config_clear(cfg);
  }
  return st;
}

void hrl_config_clear(hrl_config *cfg) {
  for (size_t i = 0; cfg->masters != NULL && i < cfg->n; i++) {
    hrl_master_cfg *m = &cfg->masters[i];
    if (m->handshake != NULL) {
      memset(m->handshake, 0, m->handshake_len); /* holds the password */
    }
    free(m->handshake);
    hrl_cluster_free(m->cluster);
    hrl_sentinel_free(m->sentinel);
    hrl_endpoint_clear(&m->ep);
  }
  free(cfg->masters);
  free(cfg->prefix);
  for (size_t k = 0; k < 4; k++) {
    free(cfg->ssl_paths[k]);
  }
  hrl_observer_clear(cfg);
  memset(cfg, 0, sizeof *cfg);
}

const char *hrl_config_handshake(const hrl_config *cfg, size_t i, size_t *len,
                                 int *replies) {
  if (i >= cfg->n || cfg->masters[i].handshake == NULL) {
    *len = 0;
    *replies = 0;
    return NULL;
  }
  *len = cfg->masters[i].handshake_len;
  *replies = cfg->masters[i].handshake_replies;
  return cfg->masters[i].handshake;
}

const char *hrl_config_handshake_plain(const hrl_config *cfg, size_t i,
                                       size_t *len, int *replies) {
  const char *bytes = hrl_config_handshake(cfg, i, len, replies);
  if (bytes != NULL && cfg->masters[i].info_reply >= 0) {
    *len = cfg->masters[i].handshake_plain_len;
    *replies -= 1; /* INFO comes last */
  }
  return *replies > 0 ? bytes : NULL;
}

hrl_node_result hrl_config_handshake_reply(hrl_config *cfg, size_t i, int k,
                                           const hrl_reply *reply,
                                           char *message, size_t message_size) {
  if (i >= cfg->n || k < 0 || k >= cfg->masters[i].handshake_replies) {
    hrl_detailf(message, message_size, "no handshake reply %d expected", k);
    return HRL_NODE_PROTOCOL;
  }
  if (k == cfg->masters[i].info_reply) {
    return hrl_server_info(cfg, i, reply, message, message_size);
  }
  bool is_auth = k == 0 && cfg->masters[i].ep.pass != NULL;
  return hrl_reply_classify_handshake(is_auth, reply, message, message_size);
}
