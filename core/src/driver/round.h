/* One round of the built-in driver, shared by its three parts: fanout.c
 * (the poll() loop, writes, deadlines), replies.c (reading and handling
 * replies) and connect.c (opening a master's connection: TCP or unix, then
 * a rediss:// master's TLS handshake). See the top of fanout.c for how a
 * round goes. */
#ifndef HRL_DRIVER_ROUND_H
#define HRL_DRIVER_ROUND_H

#include <hiredis/hiredis.h>
#include <sys/socket.h>

#include "driver.h"
#include "tls.h"

typedef enum hrl_slot_state {
  SLOT_DONE,
  SLOT_CONNECTING, /* TCP or unix connect in progress */
  SLOT_HANDSHAKE,  /* TLS handshake in progress (rediss://) */
  SLOT_SENDING,
  SLOT_READING
} hrl_slot_state;

/* A master's progress in this round. */
typedef struct hrl_slot {
  hrl_slot_state state;
  int64_t deadline_us;
  uint32_t wait_ms;    /* what the deadline allowed, for the message */
  int handshake_left;  /* handshake replies still to read */
  int handshake_total; /* handshake replies expected on this connection */
  bool reused;         /* the connection was open before this round */
  bool replied;        /* a reply arrived on it in this round */
  uint32_t inflight;   /* this round's commands written, not answered */
  bool carried;        /* a connect begun in an earlier round */
  bool retried;        /* a stale connection was already replaced */
  short tls_want;      /* TLS: what the socket must be polled for; 0: as
                          the state says (POLLOUT sending, POLLIN reading) */
  hrl_conn *conn;      /* the connection of this round: the master's, or
                          that of the cluster node it asks */
  const char *out;     /* the handshake or the command: bytes not yet sent */
  size_t out_len;
} hrl_slot;

typedef struct hrl_round {
  hrl_pool *pool;
  hrl_config *cfg; /* a handshake's INFO records who the server is */
  hrl_lock *lock;
  uint32_t timeout_ms;
  pid_t pid; /* 0 when the fork canary vouches for every connection */
  hrl_slot slots[HRL_MASTERS_MAX];
} hrl_round;

static inline hrl_conn *conn_of(hrl_round *r, size_t i) {
  return r->slots[i].conn;
}

/* Writes on a connection as send() does, without blocking or SIGPIPE; a
 * rediss:// master's through TLS, which also notes in s what the socket
 * must be polled for next. */
static inline ssize_t conn_send(hrl_conn *c, hrl_slot *s, const char *buf,
                                size_t len) {
  if (c->tls == NULL) {
    return send(c->ctx->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  ssize_t n = hrl_tls_send(c->tls, buf, len);
  s->tls_want = n < 0 ? hrl_tls_want(c->tls) : 0;
  return n;
}

/* Reads on a connection as recv(flags) does; a rediss:// master's through
 * TLS, as conn_send. */
static inline ssize_t conn_recv(hrl_conn *c, hrl_slot *s, char *buf, size_t len,
                                int flags) {
  if (c->tls == NULL) {
    return recv(c->ctx->fd, buf, len, flags);
  }
  ssize_t n = hrl_tls_recv(c->tls, buf, len, flags);
  s->tls_want = n < 0 ? hrl_tls_want(c->tls) : 0;
  return n;
}

/* fanout.c: master i failed (why, msg): reported, connection closed. */
void hrl_round_fail(hrl_round *r, size_t i, hrl_node_result why,
                    const char *msg);

/* fanout.c: master i's I/O call failed with err (or, on a TLS connection,
 * what hrl_tls_error says). */
void hrl_round_fail_io(hrl_round *r, size_t i, int err);

/* Master i's deadline in this round: ms from now_us. */
static inline void hrl_round_set_deadline(hrl_round *r, size_t i,
                                          int64_t now_us, uint32_t ms) {
  r->slots[i].deadline_us = now_us + (int64_t)ms * 1000;
  r->slots[i].wait_ms = ms;
}

/* fanout.c: queues the protocol's command for master i and starts
 * sending it. */
void hrl_round_send_command(hrl_round *r, size_t i);

/* fanout.c: a Redis Cluster moved the slot (MOVED) or the key (ASK): the
 * command goes again to the node the protocol names now. */
void hrl_round_redirect(hrl_round *r, size_t i);

/* replies.c: reads what master i sent (waiting for it when flags is 0, up
 * to the socket's SO_RCVTIMEO) and handles every complete reply in it. */
void hrl_round_readable(hrl_round *r, size_t i, int flags);

/* replies.c: reads, without waiting, the late replies master i's kept
 * connection owes (no command of this round is out on it yet) and drops
 * them; false when the connection broke or was out of step (it is closed:
 * the round opens a new one). */
bool hrl_round_drain(hrl_round *r, size_t i);

/* fanout.c: a new connection to master i is up: its handshake (AUTH,
 * SELECT) goes, then the command. */
void hrl_round_send_handshake(hrl_round *r, size_t i);

/* connect.c: starts master i's part of the round when it has no
 * connection that is up (fanout.c handles a kept one): waits for a connect
 * in progress, or opens one. True when that took long enough (a TLS
 * context loaded) for now_us to be read again for the next master. */
bool hrl_round_connect(hrl_round *r, size_t i, int64_t now_us);

/* connect.c: master i's connection is up but its handshake, sent in an
 * earlier round, is still unanswered: this round goes on reading its
 * replies (the command follows them), within the round's timeout. */
void hrl_round_resume_handshake(hrl_round *r, size_t i, int64_t now_us);

/* connect.c: a connection that was idle since the last round (or a connect
 * carried over) failed before any reply: replaces it once; false when it
 * may not be replaced (the caller fails the master). */
bool hrl_round_replace_stale(hrl_round *r, size_t i);

/* connect.c: master i's socket is writable while connecting. */
void hrl_round_connected(hrl_round *r, size_t i, int64_t now_us);

/* connect.c: master i's socket is ready for its TLS handshake's next step. */
void hrl_round_handshake(hrl_round *r, size_t i, int64_t now_us);

#endif
