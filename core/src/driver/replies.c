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

/* Handles one complete reply; returns false when the slot is finished or
 * must send again before reading more. */
static bool take_reply(round *r, size_t i, const hrl_reply *v) {
  slot *s = &r->slots[i];
  hrl_conn *conn = conn_of(r, i);
  s->replied = true;
  if (conn->owed > 0) {
    conn->owed--; /* the late answer to an earlier round's command */
    return true;
  }
  if (s->handshake_left > 0) {
    char msg[HRL_NODE_MSG_MAX];
    int k = s->handshake_total - s->handshake_left;
    hrl_node_result res =
        hrl_config_handshake_reply(r->cfg, i, k, v, msg, sizeof msg);
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
  hrl_node_result res = hrl_proto_reply(r->lock, i, v);
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
 * again before reading more. The failures say what hrl_stream_feed says. */
static bool take_bytes(round *r, size_t i, const char *buf, ssize_t n) {
  hrl_parser *parser = conn_of(r, i)->parser;
  hrl_status st = hrl_parser_feed(parser, buf, (size_t)n);
  if (st != HRL_OK) {
    hrl_round_fail(r, i, HRL_NODE_PROTOCOL, hrl_strerror(st));
    return false;
  }
  for (;;) {
    hrl_reply rep;
    int got = hrl_parser_next(parser, &rep);
    if (got < 0) {
      hrl_round_fail(r, i, HRL_NODE_PROTOCOL, "malformed reply");
      return false;
    }
    if (got == 0) {
      return true; /* the rest has not arrived yet */
    }
    if (!take_reply(r, i, &rep)) {
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
    if (n <= 0 || hrl_parser_feed(conn->parser, buf, (size_t)n) != HRL_OK) {
      hrl_conn_close(conn); /* closed meanwhile: nothing of ours waits */
      return false;
    }
    for (;;) {
      hrl_reply rep;
      int got = hrl_parser_next(conn->parser, &rep);
      if (got < 0 || (got > 0 && conn->owed == 0)) {
        hrl_conn_close(conn); /* malformed, or more than was owed */
        return false;
      }
      if (got == 0) {
        break;
      }
      conn->owed--;
    }
  }
}
