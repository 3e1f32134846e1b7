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
 */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "resp.h"
#include "state.h"

#define PUSH_ELEMENTS 3

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
  return s;
}

void hrl_subscriber_free(hrl_subscriber *s) {
  if (s != NULL) {
    hrl_parser_free(s->parser);
    free(s->subscribe);
    free(s);
  }
}

const char *hrl_subscriber_start(hrl_subscriber *s, size_t *len) {
  hrl_parser_reset(s->parser);
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

/* One reply of the stream. */
static hrl_notice take(hrl_subscriber *s, const hrl_reply *r, const char **out,
                       size_t *out_len) {
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
