/*
 * A subscriber connection's stream (hiredlock/proto.h): the handshake
 * (AUTH, SELECT) alone first, as on every connection, then SUBSCRIBE to the
 * client's channel; from then on the server only pushes arrays of three:
 * ["subscribe", channel, count] once, then ["message", channel, token] for
 * every hand-off to one of the client's waiters. The reader takes flat
 * arrays of at most HRL_REPLY_ELEMENTS_MAX elements, bounded like every
 * reply; a push of another shape is ignored (it is not ours), a nested
 * array, a longer one or anything but an array closes the connection (a
 * waiter then falls back to its timers).
 *
 * A Sentinel-managed primary's subscriber asks a sentinel first (on a
 * connection of its own, the question alone), then subscribes at the
 * primary it named; the connection after one to the primary asks again,
 * so a failover (Sentinel closes the deposed primary's clients) is
 * followed. Its state is its own: the sentinels' addresses are read from
 * the configuration (never changed once made), the primary is copied
 * here, so a driver may run it beside the client's rounds.
 */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "resp.h"
#include "sentinel.h"
#include "state.h"

#define PUSH_ELEMENTS 3
/* Longest host name a sentinel may name (DNS: 253). */
#define HOST_MAX 255

/* Where a Sentinel-managed primary's subscriber stands. */
typedef enum sub_phase {
  PHASE_START,      /* no connection yet, or the primary's ended: ask */
  PHASE_ASK,        /* connected (or connecting) to sentinel `asking` */
  PHASE_PRIMARY,    /* a sentinel named the primary: connect there next */
  PHASE_ON_PRIMARY, /* connected (or connecting) to the primary */
} sub_phase;

typedef enum push_kind { PUSH_OTHER, PUSH_SUBSCRIBE, PUSH_MESSAGE } push_kind;

struct hrl_subscriber {
  hrl_config *cfg;
  size_t i;
  hrl_parser *parser;
  char *subscribe; /* SUBSCRIBE channel */
  size_t subscribe_len;
  char channel[HRL_CHANNEL_MAX];
  size_t channel_len;
  int handshake_left;  /* handshake replies still to read */
  int handshake_total; /* handshake replies expected */
  /* The push being read: its next element, and what it is so far. */
  int element;
  push_kind kind;
  bool ours; /* its channel is ours */
  bool has_token;
  char token[HRL_TOKEN_LEN];
  char message[HRL_NODE_MSG_MAX];
  /* A Sentinel-managed primary's (NULL for any other master). */
  const hrl_sentinel *sentinel;
  sub_phase phase;
  size_t asking; /* the sentinel asked in PHASE_ASK */
  size_t next;   /* the sentinel to ask first: the last that answered */
  char primary_host[HOST_MAX + 1];
  int primary_port;
  char primary_label[HRL_LABEL_MAX];
};

hrl_subscriber *hrl_subscriber_create(hrl_config *cfg, size_t i) {
  size_t len;
  const char *channel = i < cfg->n ? hrl_config_channel(cfg, &len) : NULL;
  if (channel == NULL) {
    return NULL;
  }
  hrl_subscriber *s = calloc(1, sizeof *s);
  if (s == NULL) {
    return NULL;
  }
  const char *argv[2] = {"SUBSCRIBE", channel};
  size_t lens[2] = {9, len};
  s->cfg = cfg;
  s->i = i;
  s->parser = hrl_parser_new();
  s->subscribe = hrl_resp_format(2, argv, lens, &s->subscribe_len);
  if (s->parser == NULL || s->subscribe == NULL) {
    hrl_subscriber_free(s);
    return NULL;
  }
  memcpy(s->channel, channel, len);
  s->channel_len = len;
  s->sentinel = cfg->masters[i].sentinel;
  return s;
}

void hrl_subscriber_free(hrl_subscriber *s) {
  if (s != NULL) {
    hrl_parser_free(s->parser);
    free(s->subscribe);
    free(s);
  }
}

/* A server of the sentinel's table (a sentinel) as the target. */
static void sentinel_target(const hrl_sentinel *sn, size_t k, hrl_target *out) {
  out->host = sn->nodes.at[k].host;
  out->port = sn->nodes.at[k].port;
  out->node = k;
  out->label = sn->nodes.at[k].label;
  out->handshake = false;
}

void hrl_subscriber_open(hrl_subscriber *s, hrl_target *out) {
  memset(out, 0, sizeof *out);
  out->handshake = true;
  const hrl_sentinel *sn = s->sentinel;
  if (sn == NULL) {
    const hrl_endpoint *ep = &s->cfg->masters[s->i].ep;
    out->host = ep->is_unix ? NULL : ep->host;
    out->port = ep->is_unix ? 0 : ep->port;
    out->path = ep->is_unix ? ep->path : NULL;
    out->label = ep->label;
    return;
  }
  switch (s->phase) {
  case PHASE_PRIMARY:
    s->phase = PHASE_ON_PRIMARY;
    out->host = s->primary_host;
    out->port = s->primary_port;
    out->node = sn->n_sentinels; /* not a sentinel */
    out->label = s->primary_label;
    return;
  case PHASE_ASK: /* the sentinel asked did not answer: the next one */
    s->asking = (s->asking + 1) % sn->n_sentinels;
    break;
  case PHASE_START:
  case PHASE_ON_PRIMARY: /* (the primary's connection ended: ask again) */
  default:
    s->phase = PHASE_ASK;
    s->asking = s->next;
    break;
  }
  sentinel_target(sn, s->asking, out);
}

const char *hrl_subscriber_start(hrl_subscriber *s, size_t *len) {
  hrl_parser_reset(s->parser);
  s->handshake_left = s->handshake_total = 0;
  if (s->sentinel != NULL && s->phase == PHASE_ASK) {
    *len = s->sentinel->query_len; /* the question, no handshake */
    return s->sentinel->query;
  }
  int replies = 0;
  const char *hs = hrl_config_handshake_plain(s->cfg, s->i, len, &replies);
  s->handshake_left = s->handshake_total = replies;
  if (replies > 0) {
    return hs;
  }
  *len = s->subscribe_len;
  return s->subscribe;
}

/* CLOSE, saying why (the server's words; ours when it said nothing). */
static hrl_notice closing(hrl_subscriber *s, const char *why, const char **out,
                          size_t *out_len) {
  if (why != s->message) {
    hrl_detailf(s->message, sizeof s->message, "%s", why);
  }
  if (s->message[0] == '\0') {
    hrl_detailf(s->message, sizeof s->message, "refused without a reason");
  }
  *out = s->message;
  *out_len = strlen(s->message);
  return HRL_NOTICE_CLOSE;
}

static bool is_string(const hrl_reply *r, const char *text) {
  size_t n = strlen(text);
  return r->type == HRL_REPLY_STRING && r->len == n &&
         memcmp(r->str, text, n) == 0;
}

static bool is_token(const hrl_reply *r) {
  if (r->type != HRL_REPLY_STRING || r->len != HRL_TOKEN_LEN) {
    return false;
  }
  for (size_t k = 0; k < r->len; k++) {
    char ch = r->str[k];
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
      return false;
    }
  }
  return true;
}

/* One element of the push being read. */
static void take_element(hrl_subscriber *s, const hrl_reply *r) {
  switch (s->element++) {
  case 0:
    s->kind = is_string(r, "message")     ? PUSH_MESSAGE
              : is_string(r, "subscribe") ? PUSH_SUBSCRIBE
                                          : PUSH_OTHER;
    break;
  case 1:
    s->ours = r->type == HRL_REPLY_STRING && r->len == s->channel_len &&
              memcmp(r->str, s->channel, r->len) == 0;
    break;
  default:
    s->has_token = is_token(r);
    if (s->has_token) {
      memcpy(s->token, r->str, HRL_TOKEN_LEN);
    }
    break;
  }
}

/* A complete push: what it tells the driver (MORE: nothing). */
static hrl_notice push_notice(hrl_subscriber *s, const char **out,
                              size_t *out_len) {
  if (!s->ours || s->element != PUSH_ELEMENTS) {
    return HRL_NOTICE_MORE;
  }
  if (s->kind == PUSH_SUBSCRIBE) {
    return HRL_NOTICE_READY;
  }
  if (s->kind == PUSH_MESSAGE && s->has_token) {
    *out = s->token;
    *out_len = HRL_TOKEN_LEN;
    return HRL_NOTICE_HANDOFF;
  }
  return HRL_NOTICE_MORE;
}

/* A sentinel's answer: REDIRECT to the primary it named, or CLOSE (the
 * next connection asks the next sentinel). */
static hrl_notice answer(hrl_subscriber *s, const hrl_reply *r,
                         const char **out, size_t *out_len) {
  const char *host;
  size_t host_len;
  int port;
  if (!hrl_sentinel_answer(s->sentinel, s->asking, r, &host, &host_len, &port,
                           s->message, sizeof s->message)) {
    return closing(s, s->message, out, out_len);
  }
  if (host_len > HOST_MAX || memchr(host, '\0', host_len) != NULL) {
    hrl_detailf(s->message, sizeof s->message,
                "sentinel %s: a primary address that cannot be taken",
                s->sentinel->nodes.at[s->asking].label);
    return closing(s, s->message, out, out_len);
  }
  memcpy(s->primary_host, host, host_len);
  s->primary_host[host_len] = '\0';
  s->primary_port = port;
  bool v6 = memchr(host, ':', host_len) != NULL;
  hrl_detailf(s->primary_label, sizeof s->primary_label, "%s%s%s:%d",
              v6 ? "[" : "", s->primary_host, v6 ? "]" : "", port);
  s->next = s->asking; /* it answered: ask it first next time */
  s->phase = PHASE_PRIMARY;
  *out = s->primary_label;
  *out_len = strlen(s->primary_label);
  return HRL_NOTICE_REDIRECT;
}

/* One reply of the stream. */
static hrl_notice take(hrl_subscriber *s, const hrl_reply *r, const char **out,
                       size_t *out_len) {
  if (s->sentinel != NULL && s->phase == PHASE_ASK) {
    return answer(s, r, out, out_len);
  }
  if (s->handshake_left > 0) {
    int k = s->handshake_total - s->handshake_left;
    if (hrl_config_handshake_reply(s->cfg, s->i, k, r, s->message,
                                   sizeof s->message) != HRL_NODE_OK) {
      return closing(s, s->message, out, out_len);
    }
    if (--s->handshake_left > 0) {
      return HRL_NOTICE_MORE;
    }
    *out = s->subscribe;
    *out_len = s->subscribe_len;
    return HRL_NOTICE_SEND;
  }
  if (r->type == HRL_REPLY_ERROR) {
    hrl_detail_copy_text(s->message, sizeof s->message, r->str, r->len);
    return closing(s, s->message, out, out_len); /* NOPERM: no channel */
  }
  if (r->type != HRL_REPLY_ARRAY) {
    return closing(s, "unexpected reply to SUBSCRIBE", out, out_len);
  }
  /* A push comes whole, a flat array (the reader takes nothing nested). */
  s->element = 0;
  s->kind = PUSH_OTHER;
  s->ours = s->has_token = false;
  for (size_t k = 0; k < r->elements; k++) {
    take_element(s, &r->element[k]);
  }
  return push_notice(s, out, out_len);
}

hrl_notice hrl_subscriber_feed(hrl_subscriber *s, const char *data, size_t len,
                               const char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (len > 0) {
    hrl_status st = hrl_parser_feed(s->parser, data, len);
    if (st != HRL_OK) {
      return closing(s, hrl_strerror(st), out, out_len);
    }
  }
  for (;;) {
    hrl_reply r;
    int got = hrl_parser_next(s->parser, &r);
    if (got == 0) {
      return HRL_NOTICE_MORE;
    }
    if (got < 0) {
      return closing(s, "malformed reply", out, out_len);
    }
    hrl_notice n = take(s, &r, out, out_len);
    if (n != HRL_NOTICE_MORE) {
      return n;
    }
  }
}

/* ------------------------------------------------ sharing a subscriber */

bool hrl_config_share_channel(hrl_config *cfg, hrl_config *from) {
  size_t from_len;
  const char *channel = hrl_config_channel(from, &from_len);
  if (channel == NULL) {
    return false;
  }
  /* A wait in progress keeps the channel its queue entries name: its
   * subscriber (made with it) stays subscribed there. */
  hrl_config_set_channel(cfg, channel + from_len - HRL_TOKEN_LEN);
  return true;
}

/* Appends len bytes of p and a NUL to the key (as far as size allows);
 * returns the new length. */
static size_t put(char *buf, size_t size, size_t at, const char *p,
                  size_t len) {
  for (size_t k = 0; k <= len; k++, at++) {
    if (at < size) {
      buf[at] = k < len && p != NULL ? p[k] : '\0';
    }
  }
  return at;
}

static size_t put_str(char *buf, size_t size, size_t at, const char *p) {
  return put(buf, size, at, p, p != NULL ? strlen(p) : 0);
}

size_t hrl_config_subscriber_key(hrl_config *cfg, size_t i, char *buf,
                                 size_t size) {
  size_t channel_len;
  const char *channel =
      i < cfg->n ? hrl_config_channel(cfg, &channel_len) : NULL;
  if (channel == NULL) {
    return 0;
  }
  const hrl_master_cfg *m = &cfg->masters[i];
  const hrl_endpoint *ep = &m->ep;
  size_t at = put(buf, size, 0, channel, channel_len);
  at = put_str(buf, size, at, ep->is_unix ? ep->path : ep->host);
  char number[32];
  hrl_detailf(number, sizeof number, "%d %d", ep->port, (int)ep->n_seeds);
  at = put_str(buf, size, at, number);
  for (size_t k = 0; k < ep->n_seeds; k++) { /* a cluster's, a sentinel's */
    at = put_str(buf, size, at, ep->seeds[k].label);
  }
  at = put_str(buf, size, at, ep->service);
  if (ep->tls) {
    const hrl_tls_settings *t = &m->tls;
    hrl_detailf(number, sizeof number, "tls %d %d", (int)t->cert_reqs,
                (int)t->check_hostname);
    at = put_str(buf, size, at, number);
    at = put_str(buf, size, at, t->ca_certs);
    at = put_str(buf, size, at, t->ca_path);
    at = put_str(buf, size, at, t->certfile);
    at = put_str(buf, size, at, t->keyfile);
  }
  size_t hs_len = 0;
  int replies = 0;
  const char *hs = hrl_config_handshake_plain(cfg, i, &hs_len, &replies);
  return put(buf, size, at, hs, hs != NULL ? hs_len : 0);
}
