/* A client's configuration: its options, checked against the option table,
 * and its masters, parsed once, each with the handshake (AUTH, SELECT) a new
 * connection to it sends first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "reply.h"
#include "resp.h"
#include "state.h"

/* AUTH and SELECT, pipelined ahead of a new connection's first command. */
static hrl_status build_handshake(hrl_master_cfg *m) {
  const hrl_endpoint *ep = &m->ep;
  char db[24];
  char *auth = NULL, *sel = NULL;
  size_t auth_len = 0, sel_len = 0;
  int replies = 0;
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
  if (replies == 0) {
    return HRL_OK;
  }
  m->handshake = malloc(auth_len + sel_len);
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
  m->handshake_len = auth_len + sel_len;
  m->handshake_replies = replies;
  if (auth != NULL) {
    memset(auth, 0, auth_len); /* holds the password */
  }
  free(auth);
  free(sel);
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
    if (build_handshake(m) != HRL_OK) {
      hrl_detailf(detail, size, "out of memory");
      return HRL_ENOMEM;
    }
  }
  return HRL_OK;
}

hrl_status hrl_config_init(hrl_config *cfg, const char *const *urls, size_t n,
                           const hrl_options *opts, char *detail,
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
  cfg->n = n;
  cfg->quorum = n / 2 + 1;
  cfg->min_ttl_ms = hrl_min_ttl_ms(cfg);
  cfg->lease_ms = hrl_lease_ms(opts);
  cfg->prefix = malloc(opts->key_prefix_len + 1);
  cfg->masters = calloc(n, sizeof *cfg->masters);
  if (cfg->prefix == NULL || cfg->masters == NULL) {
    hrl_config_clear(cfg);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  if (opts->key_prefix_len > 0) {
    memcpy(cfg->prefix, opts->key_prefix, opts->key_prefix_len);
  }
  cfg->prefix[opts->key_prefix_len] = '\0';
  cfg->opts.key_prefix = cfg->prefix;
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
    hrl_endpoint_clear(&m->ep);
  }
  free(cfg->masters);
  free(cfg->prefix);
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

hrl_node_result hrl_config_handshake_reply(const hrl_config *cfg, size_t i,
                                           int k, const hrl_reply *reply,
                                           char *message, size_t message_size) {
  if (i >= cfg->n || k < 0 || k >= cfg->masters[i].handshake_replies) {
    hrl_detailf(message, message_size, "no handshake reply %d expected", k);
    return HRL_NODE_PROTOCOL;
  }
  bool is_auth = k == 0 && cfg->masters[i].ep.pass != NULL;
  return hrl_reply_classify_handshake(is_auth, reply, message, message_size);
}
