/*
 * One connection's part of the protocol, for drivers that move the bytes
 * themselves: the rules of docs/DESIGN.md section 2 that are about a byte
 * stream rather than about a lock, kept here so a new driver has none of
 * its own to write.
 *
 *   - A new connection sends its handshake (AUTH, SELECT) alone; the
 *     command follows only once every handshake reply said OK.
 *   - A handshake still unanswered when the round's deadline passes is
 *     part of opening the connection, as a connect in progress is: the
 *     connection is kept (DONE) and the next round goes on reading its
 *     replies (start() then writes nothing) before its command goes out,
 *     in rounds that begin within connect_timeout of the round it began
 *     in; at the end of a later one it is closed. Its replies that come
 *     between rounds are checked by drain(). So no round waits past its
 *     timeout for a handshake, and one slower than that still gets through.
 *   - Replies still owed for commands of earlier rounds (the connection
 *     was kept after a missed deadline) are read and dropped first, never
 *     taken as this round's answer.
 *   - NOSCRIPT: the command goes again with the full script.
 *   - A missed deadline keeps the connection (its replies are then owed):
 *     a release must follow an unanswered SET on the same connection, and
 *     a server that wakes up to a closed connection drops what it has not
 *     run yet (the release among it). The full script goes behind an
 *     unanswered release or extend (hrl_proto_late_command).
 *   - A connection that owes OWED_MAX replies or more gets no new command
 *     but a release (or a waiter's step aside or leave) of a lock whose
 *     token that master may hold: hrl_stream_start holds the others back,
 *     and the master counts as unreachable in that round.
 *
 * The driver writes what start() and feed() hand it, feeds what it reads,
 * and tells the stream when a deadline passed (expire) or when the round
 * stops waiting for a late master (skip).
 */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "state.h"

/* Most replies a kept connection may owe (the C driver's limit too). */
#define OWED_MAX 64

struct hrl_stream {
  hrl_parser *parser;
  /* A handshake out (handshake_left > 0): the client's configuration and
   * master it is for (drain() checks replies between rounds), and when it
   * stops carrying over to later rounds. */
  hrl_config *cfg;
  size_t index;
  int64_t handshake_deadline_us;
  uint32_t owed;       /* replies to drop before this round's */
  uint32_t inflight;   /* this round's commands not answered yet */
  int handshake_left;  /* handshake replies still to read */
  int handshake_total; /* handshake replies expected */
  bool replied;        /* a reply arrived in this round */
};

hrl_stream *hrl_stream_new(void) {
  hrl_stream *s = calloc(1, sizeof *s);
  if (s == NULL) {
    return NULL;
  }
  s->parser = hrl_parser_new();
  if (s->parser == NULL) {
    free(s);
    return NULL;
  }
  return s;
}

void hrl_stream_free(hrl_stream *s) {
  if (s != NULL) {
    hrl_parser_free(s->parser);
    free(s);
  }
}

uint32_t hrl_stream_owed(const hrl_stream *s) {
  return s->owed;
}

bool hrl_stream_replied(const hrl_stream *s) {
  return s->replied;
}

const char *hrl_stream_start(hrl_stream *s, hrl_lock *lk, size_t i, bool fresh,
                             size_t *len) {
  s->inflight = 0;
  s->replied = false;
  if (!fresh && s->handshake_left > 0) {
    *len = 0; /* the handshake of an earlier round: its replies first */
    return "";
  }
  s->handshake_left = 0;
  s->handshake_total = 0;
  if (fresh) {
    hrl_parser_reset(s->parser);
    s->owed = 0;
    int replies = 0;
    const char *hs = hrl_config_handshake(lk->cfg, i, len, &replies);
    if (replies > 0) {
      s->handshake_left = replies;
      s->handshake_total = replies;
      s->cfg = lk->cfg;
      s->index = i;
      s->handshake_deadline_us =
          lk->op.round_start_us +
          (int64_t)lk->cfg->opts.connect_timeout_ms * 1000;
      return hs;
    }
  }
  if (s->owed >= OWED_MAX && !hrl_round_must_reach(lk, i)) {
    char msg[HRL_NODE_MSG_MAX];
    hrl_detailf(msg, sizeof msg,
                "not sent: %u replies owed since it stopped answering",
                (unsigned)s->owed);
    hrl_round_withhold(lk, i, msg);
    *len = 0;
    return NULL;
  }
  const char *cmd = hrl_proto_command(lk, i, len);
  s->inflight = cmd != NULL ? (uint32_t)hrl_proto_command_replies(lk, i) : 0;
  return cmd;
}

bool hrl_stream_drain(hrl_stream *s, const char *data, size_t len) {
  if (len > 0 && hrl_parser_feed(s->parser, data, len) != HRL_OK) {
    return false;
  }
  for (;;) {
    hrl_reply r;
    int got = hrl_parser_next(s->parser, &r);
    if (got == 0) {
      return true;
    }
    if (got > 0 && s->handshake_left > 0) {
      /* A carried handshake's reply: one refused closes the connection
       * (the next round opens another, whose refusal says why). */
      char msg[HRL_NODE_MSG_MAX];
      int k = s->handshake_total - s->handshake_left;
      s->handshake_left--;
      if (hrl_config_handshake_reply(s->cfg, s->index, k, &r, msg,
                                     sizeof msg) != HRL_NODE_OK) {
        s->handshake_left = 0;
        return false;
      }
      continue;
    }
    if (got < 0 || s->owed == 0) {
      return false; /* malformed, or more than was owed: out of step */
    }
    s->owed--;
  }
}

/* The command after the handshake, or again after NOSCRIPT. */
static hrl_stream_action send_command(hrl_stream *s, hrl_lock *lk, size_t i,
                                      const char **out, size_t *out_len) {
  *out = hrl_proto_command(lk, i, out_len);
  s->inflight = (uint32_t)hrl_proto_command_replies(lk, i);
  return HRL_STREAM_SEND;
}

/* One complete reply to this round. */
static hrl_stream_action take(hrl_stream *s, hrl_lock *lk, size_t i,
                              const hrl_reply *r, const char **out,
                              size_t *out_len) {
  s->replied = true;
  if (s->handshake_left > 0) {
    char msg[HRL_NODE_MSG_MAX];
    int k = s->handshake_total - s->handshake_left;
    hrl_node_result res =
        hrl_config_handshake_reply(lk->cfg, i, k, r, msg, sizeof msg);
    s->handshake_left--;
    if (res != HRL_NODE_OK) {
      hrl_proto_fail(lk, i, res, msg);
      return HRL_STREAM_CLOSE;
    }
    return s->handshake_left == 0 ? send_command(s, lk, i, out, out_len)
                                  : HRL_STREAM_MORE;
  }
  if (s->inflight > 0) {
    s->inflight--;
  }
  hrl_node_result res = hrl_proto_reply(lk, i, r);
  if (res == HRL_NODE_MORE) {
    return HRL_STREAM_MORE; /* the next reply of the same pipeline */
  }
  if (res == HRL_NODE_RESEND) {
    return send_command(s, lk, i, out, out_len);
  }
  /* A reply out of step leaves the stream unusable. Replies still to come
   * that the result did not need (the rest of a pipeline cut short) are
   * owed. */
  if (res == HRL_NODE_PROTOCOL) {
    return HRL_STREAM_CLOSE;
  }
  s->owed += s->inflight;
  s->inflight = 0;
  return HRL_STREAM_DONE;
}

hrl_stream_action hrl_stream_feed(hrl_stream *s, hrl_lock *lk, size_t i,
                                  const char *data, size_t len,
                                  const char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  hrl_status st = len > 0 ? hrl_parser_feed(s->parser, data, len) : HRL_OK;
  if (st != HRL_OK) {
    hrl_proto_fail(lk, i, HRL_NODE_PROTOCOL, hrl_strerror(st));
    return HRL_STREAM_CLOSE;
  }
  for (;;) {
    hrl_reply r;
    int got = hrl_parser_next(s->parser, &r);
    if (got == 0) {
      return HRL_STREAM_MORE;
    }
    if (got < 0) {
      hrl_proto_fail(lk, i, HRL_NODE_PROTOCOL, "malformed reply");
      return HRL_STREAM_CLOSE;
    }
    if (s->owed > 0) {
      s->owed--; /* the late answer to an earlier round's command */
      s->replied = true;
      continue;
    }
    hrl_stream_action a = take(s, lk, i, &r, out, out_len);
    if (a != HRL_STREAM_MORE) {
      return a;
    }
  }
}

/* Whether the handshake out may carry over to the next round: while the
 * round ending began within connect_timeout of the round the handshake
 * began in. The protocol reads no clock (the simulator runs it on its
 * own), so the round's start stands for now: a handshake goes on at most
 * a per-master timeout past connect_timeout. */
static bool handshake_carries(const hrl_stream *s, const hrl_lock *lk) {
  return lk->op.round_start_us < s->handshake_deadline_us;
}

/* Stops waiting for this round's replies (late: a late command went out
 * too): they become owed, when the connection can be kept; a handshake
 * goes on in the next round until its deadline. */
static hrl_stream_action leave(hrl_stream *s, const hrl_lock *lk, size_t i,
                               bool late) {
  if (s->handshake_left > 0) {
    return handshake_carries(s, lk) ? HRL_STREAM_DONE : HRL_STREAM_CLOSE;
  }
  s->owed += s->inflight + (late ? (uint32_t)hrl_round_late_replies(lk, i) : 0);
  s->inflight = 0;
  return HRL_STREAM_DONE;
}

hrl_stream_action hrl_stream_expire(hrl_stream *s, hrl_lock *lk, size_t i,
                                    const char *message, const char **out,
                                    size_t *out_len) {
  hrl_proto_missed(lk, i, message);
  *out = NULL;
  *out_len = 0;
  if (s->inflight > 0) {
    *out = hrl_proto_late_command(lk, i, out_len);
  }
  return leave(s, lk, i, *out != NULL);
}

hrl_stream_action hrl_stream_skip(hrl_stream *s, hrl_lock *lk, size_t i) {
  hrl_proto_missed(lk, i, "not waited for: late since an earlier round");
  return leave(s, lk, i, false);
}
