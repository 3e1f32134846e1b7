/*
 * The built-in driver's reading side of a round: the bytes a master sent go
 * into its hiredis reader, and each complete reply is handled in turn: an
 * owed one (the late answer to an earlier round's command) is dropped, a
 * handshake reply is checked before the command may follow, and the
 * command's replies go to the protocol, whose verdict (done, resend the
 * full script, follow a cluster's redirect, read one more) is carried out
 * here. fanout.c runs the loop that calls hrl_round_readable.
 */
#include <errno.h>
#include <string.h>

#include "proto/detail.h"
#include "round.h"

typedef hrl_round round;
typedef hrl_slot slot;

static redisContext *ctx_of(round *r, size_t i) {
  return r->slots[i].conn->ctx;
}

static void fail_ctx(round *r, size_t i, hrl_node_result why) {
  char msg[HRL_NODE_MSG_MAX];
  const redisContext *ctx = ctx_of(r, i);
  const char *text = ctx->errstr[0] != '\0' ? ctx->errstr : "connection error";
  hrl_detail_copy_text(msg, sizeof msg, text, strlen(text));
  hrl_round_fail(r, i, why, msg);
}

/* A view of one hiredis reply; a flat array's items (a Sentinel's answer)
 * go into elems. */
static hrl_reply view_of(const redisReply *rep, hrl_reply *elems) {
  hrl_reply v;
  memset(&v, 0, sizeof v);
  switch (rep->type) {
  case REDIS_REPLY_STATUS:
    v.type = HRL_REPLY_STATUS;
    break;
  case REDIS_REPLY_ERROR:
    v.type = HRL_REPLY_ERROR;
    break;
  case REDIS_REPLY_INTEGER:
    v.type = HRL_REPLY_INTEGER;
    v.integer = rep->integer;
    return v;
  case REDIS_REPLY_NIL:
    v.type = HRL_REPLY_NIL;
    return v;
  case REDIS_REPLY_STRING:
    v.type = HRL_REPLY_STRING;
    break;
  case REDIS_REPLY_ARRAY:
    v.type = HRL_REPLY_OTHER;
    if (elems != NULL && rep->elements <= HRL_REPLY_ELEMENTS_MAX) {
      for (size_t k = 0; k < rep->elements; k++) {
        if (rep->element[k]->type == REDIS_REPLY_ARRAY) {
          return v; /* nested: never one of our answers */
        }
        elems[k] = view_of(rep->element[k], NULL);
      }
      v.type = HRL_REPLY_ARRAY;
      v.elements = rep->elements;
      v.element = elems;
    }
    return v;
  default:
    v.type = HRL_REPLY_OTHER;
    return v;
  }
  v.str = rep->str;
  v.len = (size_t)rep->len;
  return v;
}

/* Handles one complete reply; returns false when the slot is finished or
 * must send again before reading more. */
static bool take_reply(round *r, size_t i, const redisReply *rep) {
  slot *s = &r->slots[i];
  hrl_conn *conn = conn_of(r, i);
  s->replied = true;
  if (conn->owed > 0) {
    conn->owed--; /* the late answer to an earlier round's command */
    return true;
  }
  hrl_reply elems[HRL_REPLY_ELEMENTS_MAX];
  hrl_reply v = view_of(rep, elems);
  if (s->handshake_left > 0) {
    char msg[HRL_NODE_MSG_MAX];
    int k = s->handshake_total - s->handshake_left;
    hrl_node_result res =
        hrl_config_handshake_reply(r->cfg, i, k, &v, msg, sizeof msg);
    s->handshake_left--;
    if (res != HRL_NODE_OK) {
      hrl_round_fail(r, i, res, msg);
      return false;
    }
    if (s->handshake_left == 0) {
      hrl_round_send_command(
          r, i); /* the handshake went through: now the command */
      return false;
    }
    return true;
  }
  s->inflight--;
  hrl_node_result res = hrl_proto_reply(r->lock, i, &v);
  switch (res) {
  case HRL_NODE_RESEND:
    hrl_round_send_command(r, i);
    return false;
  case HRL_NODE_MORE:
    /* The next reply of the same pipeline: ASKING's OK, or a fenced
     * acquire's SET before its INCR. */
    return true;
  case HRL_NODE_REDIRECT:
    hrl_round_redirect(r, i);
    return false;
  case HRL_NODE_PROTOCOL:
    /* The stream no longer matches our commands: do not reuse it. */
    hrl_conn_close(conn);
    break;
  default:
    /* A reply to come that the result did not need (the command behind a
     * refused ASKING) is owed. */
    conn->owed += s->inflight;
    break;
  }
  s->state = SLOT_DONE;
  return false;
}

/* Feeds n bytes read from master i to its reader and handles every
 * complete reply in them; false when the slot is finished or must send
 * again before reading more. */
static bool take_bytes(round *r, size_t i, const char *buf, ssize_t n) {
  redisContext *ctx = ctx_of(r, i);
  if (redisReaderFeed(ctx->reader, buf, (size_t)n) != REDIS_OK) {
    hrl_round_fail(r, i, HRL_NODE_PROTOCOL, "out of memory");
    return false;
  }
  for (;;) {
    void *rep = NULL;
    if (redisGetReply(ctx, &rep) != REDIS_OK) {
      fail_ctx(r, i, HRL_NODE_PROTOCOL);
      return false;
    }
    if (rep == NULL) {
      return true; /* the rest has not arrived yet */
    }
    bool more = take_reply(r, i, rep);
    freeReplyObject(rep);
    if (!more) {
      return false;
    }
  }
}

/* Reads what master i sent (waiting for it when flags is 0, up to the
 * socket's SO_RCVTIMEO) and handles every complete reply in it. A TLS
 * connection may hold bytes poll() cannot see (decrypted, or read ahead):
 * those are read too, without waiting. */
void hrl_round_readable(round *r, size_t i, int flags) {
  hrl_conn *conn = conn_of(r, i);
  char buf[16 * 1024];
  ssize_t n = conn_recv(conn, &r->slots[i], buf, sizeof buf, flags);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return; /* nothing yet: the caller's loop checks the deadline */
  }
  if (n <= 0) {
    int err = n == 0 ? 0 : errno;
    if (!hrl_round_replace_stale(r, i)) {
      if (err == 0) {
        hrl_round_fail(r, i, HRL_NODE_UNREACHABLE,
                       "Server closed the connection");
      } else {
        hrl_round_fail_io(r, i, err);
      }
    }
    return;
  }
  if (take_bytes(r, i, buf, n) && conn->tls != NULL &&
      hrl_tls_pending(conn->tls)) {
    hrl_round_readable(r, i, MSG_DONTWAIT);
  }
}

bool hrl_round_drain(round *r, size_t i) {
  hrl_conn *conn = conn_of(r, i);
  char buf[16 * 1024];
  for (;;) {
    ssize_t n = conn_recv(conn, &r->slots[i], buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (conn->tls != NULL && hrl_tls_pending(conn->tls)) {
        continue;
      }
      return true;
    }
    if (n <= 0 ||
        redisReaderFeed(conn->ctx->reader, buf, (size_t)n) != REDIS_OK) {
      hrl_conn_close(conn); /* closed meanwhile: nothing of ours waits */
      return false;
    }
    for (;;) {
      void *rep = NULL;
      if (redisGetReply(conn->ctx, &rep) != REDIS_OK ||
          (rep != NULL && conn->owed == 0)) {
        freeReplyObject(rep); /* more than was owed: out of step */
        hrl_conn_close(conn);
        return false;
      }
      if (rep == NULL) {
        break;
      }
      freeReplyObject(rep);
      conn->owed--;
    }
  }
}
