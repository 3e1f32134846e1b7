/* The client: validated settings, parsed masters, their connections. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "detail.h"
#include "internal.h"
#include "reply.h"
#include "resp.h"

void hrl_options_init(hrl_options *o) {
  memset(o, 0, sizeof *o);
  o->connect_timeout_ms = 100;
  o->timeout_ms = 50;
  o->retry_delay_ms = 200;
  o->retry_jitter_ms = 100;
  o->drift_factor = 0.01;
  o->key_prefix = "";
  o->key_prefix_len = 0;
}

#define CANARY_PAGE 4096

volatile unsigned char *hrl_fork_canary_new(void) {
#ifdef MADV_WIPEONFORK
  void *p = mmap(NULL, CANARY_PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return NULL;
  }
  if (madvise(p, CANARY_PAGE, MADV_WIPEONFORK) != 0) {
    munmap(p, CANARY_PAGE); /* Linux < 4.14: getpid() it is */
    return NULL;
  }
  return p;
#else
  return NULL;
#endif
}

void hrl_fork_canary_free(volatile unsigned char *canary) {
  if (canary != NULL) {
    munmap((void *)canary, CANARY_PAGE);
  }
}

static hrl_status check_range(const char *what, uint32_t v, uint32_t min,
                              char *detail, size_t size) {
  if (v < min || v > HRL_TTL_MAX_MS) {
    hrl_detailf(detail, size, "%s must be between %u and %d ms, got %u", what,
                (unsigned)min, HRL_TTL_MAX_MS, (unsigned)v);
    return HRL_EINVAL;
  }
  return HRL_OK;
}

static hrl_status check_options(const hrl_options *o, char *detail,
                                size_t size) {
  hrl_status st;
  if ((st = check_range("connect_timeout", o->connect_timeout_ms, 1, detail,
                        size)) != HRL_OK ||
      (st = check_range("timeout", o->timeout_ms, 1, detail, size)) != HRL_OK ||
      (st = check_range("retry_delay", o->retry_delay_ms, 0, detail, size)) !=
          HRL_OK ||
      (st = check_range("retry_jitter", o->retry_jitter_ms, 0, detail, size)) !=
          HRL_OK) {
    return st;
  }
  if (!(o->drift_factor >= 0.0 && o->drift_factor < 0.5)) {
    hrl_detailf(detail, size, "drift_factor must be in [0, 0.5), got %g",
                o->drift_factor);
    return HRL_EINVAL;
  }
  if (o->key_prefix == NULL && o->key_prefix_len > 0) {
    hrl_detailf(detail, size, "key_prefix is NULL with a non-zero length");
    return HRL_EINVAL;
  }
  if (o->key_prefix_len > HRL_PREFIX_MAX) {
    hrl_detailf(detail, size, "key_prefix must be at most %d bytes, got %zu",
                HRL_PREFIX_MAX, o->key_prefix_len);
    return HRL_EINVAL;
  }
  return HRL_OK;
}

/* AUTH and SELECT, pipelined ahead of a new connection's first command. */
static hrl_status build_handshake(hrl_master *m) {
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

static hrl_status add_masters(hrl_client *c, const char *const *urls,
                              char *detail, size_t size) {
  for (size_t i = 0; i < c->n; i++) {
    hrl_master *m = &c->masters[i];
    hrl_status st = hrl_url_parse(urls[i], &m->ep, detail, size);
    if (st != HRL_OK) {
      return st;
    }
    for (size_t j = 0; j < i; j++) {
      if (hrl_endpoint_same_server(&c->masters[j].ep, &m->ep)) {
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
  if (urls == NULL || n_urls == 0 || n_urls > HRL_MASTERS_MAX) {
    hrl_detailf(detail, detail_size, "urls must list 1 to %d masters, got %zu",
                HRL_MASTERS_MAX, urls == NULL ? (size_t)0 : n_urls);
    return HRL_EINVAL;
  }
  hrl_status st = check_options(opts, detail, detail_size);
  if (st != HRL_OK) {
    return st;
  }
  hrl_client *c = calloc(1, sizeof *c);
  if (c == NULL) {
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  c->opts = *opts;
  c->n = n_urls;
  c->quorum = n_urls / 2 + 1;
  c->prefix = malloc(opts->key_prefix_len + 1);
  c->masters = calloc(n_urls, sizeof *c->masters);
  if (c->prefix == NULL || c->masters == NULL ||
      pthread_mutex_init(&c->mu, NULL) != 0) {
    free(c->prefix);
    free(c->masters);
    free(c);
    hrl_detailf(detail, detail_size, "out of memory");
    return HRL_ENOMEM;
  }
  if (opts->key_prefix_len > 0) {
    memcpy(c->prefix, opts->key_prefix, opts->key_prefix_len);
  }
  c->prefix[opts->key_prefix_len] = '\0';
  c->opts.key_prefix = c->prefix;
  c->fork_canary = hrl_fork_canary_new();
  st = add_masters(c, urls, detail, detail_size);
  if (st != HRL_OK) {
    hrl_client_free(c);
    return st;
  }
  *out = c;
  return HRL_OK;
}

void hrl_client_free(hrl_client *c) {
  if (c == NULL) {
    return;
  }
  for (size_t i = 0; i < c->n; i++) {
    hrl_conn_close(&c->masters[i].conn);
    if (c->masters[i].handshake != NULL) {
      memset(c->masters[i].handshake, 0, c->masters[i].handshake_len);
    }
    free(c->masters[i].handshake);
    hrl_endpoint_clear(&c->masters[i].ep);
  }
  pthread_mutex_destroy(&c->mu);
  hrl_fork_canary_free(c->fork_canary);
  free(c->masters);
  free(c->prefix);
  free(c);
}

size_t hrl_client_masters(const hrl_client *c) {
  return c->n;
}

size_t hrl_client_quorum(const hrl_client *c) {
  return c->quorum;
}

const char *hrl_client_master_label(const hrl_client *c, size_t i) {
  return i < c->n ? c->masters[i].ep.label : NULL;
}

bool hrl_client_master_info(const hrl_client *c, size_t i,
                            hrl_master_info *out) {
  if (i >= c->n) {
    return false;
  }
  const hrl_endpoint *ep = &c->masters[i].ep;
  out->host = ep->is_unix ? NULL : ep->host;
  out->port = ep->is_unix ? 0 : ep->port;
  out->path = ep->is_unix ? ep->path : NULL;
  out->db = ep->db;
  return true;
}

void hrl_client_after_fork(hrl_client *c) {
  /* Only the forking thread exists in the child: re-creating the mutex is
   * safe, and the parent's sockets are closed here, never written to. */
  pthread_mutex_init(&c->mu, NULL);
  for (size_t i = 0; i < c->n; i++) {
    hrl_conn_close(&c->masters[i].conn);
  }
}

const char *hrl_proto_handshake(const hrl_client *c, size_t i, size_t *len,
                                int *replies) {
  if (i >= c->n || c->masters[i].handshake == NULL) {
    *len = 0;
    *replies = 0;
    return NULL;
  }
  *len = c->masters[i].handshake_len;
  *replies = c->masters[i].handshake_replies;
  return c->masters[i].handshake;
}

hrl_node_result hrl_proto_handshake_reply(const hrl_client *c, size_t i, int k,
                                          const hrl_reply *reply, char *message,
                                          size_t message_size) {
  if (i >= c->n || k < 0 || k >= c->masters[i].handshake_replies) {
    hrl_detailf(message, message_size, "no handshake reply %d expected", k);
    return HRL_NODE_PROTOCOL;
  }
  bool is_auth = k == 0 && c->masters[i].ep.pass != NULL;
  return hrl_reply_classify_handshake(is_auth, reply, message, message_size);
}
