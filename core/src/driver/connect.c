/*
 * The built-in driver's connects: a master's connection is opened lazily,
 * in parallel with the others', within the round (fanout.c).
 *
 * A round waits for a master no longer than its per-master timeout, also
 * while connecting: a connect that takes longer stays in progress and the
 * next round goes on waiting for it, until connect_timeout after it began.
 * A server that accepts no connection (stopped, or its backlog full) thus
 * costs a round the per-master timeout, not the connect timeout.
 *
 * The handshake commands (AUTH, SELECT, INFO) are part of opening the
 * connection and carry over the same way: a round that ends before their
 * replies keeps the connection (fanout.c's can_leave), and the next round
 * goes on reading them (hrl_round_resume_handshake) and then sends its
 * command, until connect_timeout after the connect began; a handshake
 * still unanswered at a round's end past that is closed. So a loaded or
 * briefly stalled server makes a waiting acquire's first round miss, not
 * its later ones, and no round waits past its per-master timeout.
 *
 * A rediss:// master's TLS handshake follows the TCP connect and counts
 * against the same connect_timeout: it is stepped by the round's poll()
 * loop like the connect (SLOT_HANDSHAKE) and carries over to later rounds
 * the same way. Only once it is done do the handshake commands (AUTH,
 * SELECT) and the command go out, so nothing reaches a server whose
 * certificate failed verification.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "proto/detail.h"
#include "round.h"

/* Waits in this round for master i's connect (or TLS handshake) in
 * progress: until the round's per-master timeout, or the connect's own
 * deadline if that comes first. */
static void wait_connect(hrl_round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = conn_of(r, i);
  int64_t left_us = conn->connect_deadline_us - now_us;
  int64_t ms = (left_us + 999) / 1000;
  r->slots[i].state = conn->handshaking ? SLOT_HANDSHAKE : SLOT_CONNECTING;
  hrl_round_set_deadline(r, i, now_us,
                         ms < (int64_t)r->timeout_ms
                             ? (uint32_t)(ms > 0 ? ms : 0)
                             : r->timeout_ms);
}

/* Opens a new connection to master i; the command follows once it is up.
 * Returns true when it first had to load the master's TLS context (CA
 * files: milliseconds, seconds under valgrind), which the clock reading
 * now_us predates. */
static bool open_conn(hrl_round *r, size_t i, int64_t now_us) {
  const hrl_endpoint *ep = &r->cfg->masters[i].ep;
  hrl_target to;
  hrl_proto_target(r->lock, i, &to); /* the master, or a cluster's node */
  hrl_conn *conn = conn_of(r, i);
  hrl_slot *s = &r->slots[i];
  char msg[HRL_NODE_MSG_MAX];
  bool loaded = false;
  if (ep->tls && r->pool->tls_ctx[i] == NULL) {
    loaded = true;
    if (hrl_pool_tls_ctx(r->pool, r->cfg, i, msg, sizeof msg) == NULL) {
      hrl_proto_fail(r->lock, i, HRL_NODE_UNREACHABLE, msg); /* no cluster */
      s->state = SLOT_DONE;
      return loaded;
    }
    now_us = hrl_now_us(); /* the connect begins now */
  }
  if (conn->parser == NULL && (conn->parser = hrl_parser_new()) == NULL) {
    hrl_round_fail(r, i, HRL_NODE_UNREACHABLE, "out of memory");
    return loaded;
  }
  redisContext *ctx = to.path != NULL ? redisConnectUnixNonBlock(to.path)
                                      : redisConnectNonBlock(to.host, to.port);
  if (ctx == NULL) {
    hrl_round_fail(r, i, HRL_NODE_UNREACHABLE, "out of memory");
    return loaded;
  }
  conn->ctx = ctx;
  conn->owner_pid = r->pid;
  if (ctx->err != 0) {
    const char *text = ctx->errstr[0] != '\0' ? ctx->errstr : "connect error";
    hrl_detail_copy_text(msg, sizeof msg, text, strlen(text));
    hrl_round_fail(r, i, HRL_NODE_UNREACHABLE, msg);
    return loaded;
  }
  conn->connecting = true;
  conn->connect_deadline_us =
      now_us + (int64_t)r->cfg->opts.connect_timeout_ms * 1000;
  wait_connect(r, i, now_us);
  return loaded;
}

bool hrl_round_connect(hrl_round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = conn_of(r, i);
  hrl_slot *s = &r->slots[i];
  s->reused = false;
  if (conn->ctx != NULL && now_us >= conn->connect_deadline_us) {
    /* A connect of an earlier round whose deadline passed while no round
     * watched it (a client idle between calls): whether it failed or came
     * up unseen, it is old news about a server that may be back. It begins
     * again: failing it here failed this master in every later round, as
     * nothing else ever replaced it. */
    hrl_conn_close(conn);
  }
  if (conn->ctx != NULL) {
    s->carried = true; /* not up yet: a connect of an earlier round */
    wait_connect(r, i, now_us);
    return false;
  }
  return open_conn(r, i, now_us);
}

void hrl_round_resume_handshake(hrl_round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = conn_of(r, i);
  hrl_slot *s = &r->slots[i];
  s->reused = false;
  s->carried = true; /* an I/O error before any reply: begun again once */
  s->handshake_left = conn->handshake_left;
  s->handshake_total = conn->handshake_total;
  conn->handshake_left = 0; /* the slot's now; leave() hands back the rest */
  conn->handshake_total = 0;
  s->state = SLOT_READING;
  /* The round's full timeout, also past connect_timeout: replies that came
   * between rounds are still read (expire() then closes it if none). */
  hrl_round_set_deadline(r, i, now_us, r->timeout_ms);
}

/* An I/O error on a connection that was idle since the last round, before
 * any reply: the server closed it (restart, idle timeout) while we were
 * away, so the command never ran. Likewise a connect begun in an earlier
 * round that failed meanwhile: its error is old news about a server that
 * may be back. Replace it once instead of failing. */
bool hrl_round_replace_stale(hrl_round *r, size_t i) {
  hrl_slot *s = &r->slots[i];
  if ((!s->reused && !s->carried) || s->replied || s->retried) {
    return false;
  }
  s->retried = true;
  s->reused = false;
  s->carried = false;
  s->tls_want = 0;
  s->inflight = 0; /* what went out on the closed connection is gone */
  hrl_conn_close(conn_of(r, i));
  open_conn(r, i, hrl_now_us());
  return true;
}

/* A connect to a local port nobody listens on can be given that very port
 * as its own and connect to itself (TCP simultaneous open): the launcher's
 * or anyone's master port may lie in the kernel's ephemeral range. Such a
 * "master" echoes our commands back, and its TIME_WAIT would keep the real
 * server from binding the port again for a minute. */
static bool self_connected(int fd) {
  struct sockaddr_storage me, peer;
  socklen_t me_len = sizeof me, peer_len = sizeof peer;
  if (getsockname(fd, (struct sockaddr *)&me, &me_len) != 0 ||
      getpeername(fd, (struct sockaddr *)&peer, &peer_len) != 0 ||
      me_len != peer_len || me.ss_family != peer.ss_family) {
    return false;
  }
  if (me.ss_family == AF_INET) {
    const struct sockaddr_in *a = (const struct sockaddr_in *)&me;
    const struct sockaddr_in *b = (const struct sockaddr_in *)&peer;
    return a->sin_port == b->sin_port &&
           a->sin_addr.s_addr == b->sin_addr.s_addr;
  }
  if (me.ss_family == AF_INET6) {
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&me;
    const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)&peer;
    return a->sin6_port == b->sin6_port &&
           memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
  }
  return false;
}

/* The connection is up (and a TLS one has shaken hands): in blocking mode
 * for the one blocking recv() of a round (see fanout.c; if it cannot be
 * set, every wait goes through poll()), then the handshake commands. */
static void ready(hrl_round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = conn_of(r, i);
  int fd = conn->ctx->fd;
  int flags = fcntl(fd, F_GETFL);
  conn->connecting = false;
  conn->handshaking = false;
  conn->blocking = flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
  r->slots[i].tls_want = 0;
  hrl_round_set_deadline(r, i, now_us, r->timeout_ms);
  hrl_round_send_handshake(r, i);
}

void hrl_round_handshake(hrl_round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = conn_of(r, i);
  char msg[HRL_NODE_MSG_MAX];
  short events = 0;
  int done = hrl_tls_handshake(conn->tls, &events, msg, sizeof msg);
  if (done > 0) {
    ready(r, i, now_us);
  } else if (done == 0) {
    r->slots[i].tls_want = events;
  } else if (!hrl_round_replace_stale(r, i)) {
    hrl_round_fail(r, i, HRL_NODE_UNREACHABLE, msg);
  }
}

/* A rediss:// master's connect is done: its TLS handshake begins, still
 * within the connect deadline. */
static void start_tls(hrl_round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = conn_of(r, i);
  const hrl_endpoint *ep = &r->cfg->masters[i].ep;
  char msg[HRL_NODE_MSG_MAX];
  conn->tls = hrl_tls_new(r->pool->tls_ctx[i], conn->ctx->fd, ep->host, msg,
                          sizeof msg);
  if (conn->tls == NULL) {
    hrl_round_fail(r, i, HRL_NODE_UNREACHABLE, msg);
    return;
  }
  conn->handshaking = true;
  r->slots[i].state = SLOT_HANDSHAKE;
  hrl_round_handshake(r, i, now_us);
}

void hrl_round_connected(hrl_round *r, size_t i, int64_t now_us) {
  int err = 0;
  socklen_t len = sizeof err;
  int fd = conn_of(r, i)->ctx->fd;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
    err = errno;
  }
  if (err != 0) {
    conn_of(r, i)->connecting = false;
    if (!hrl_round_replace_stale(r, i)) {
      hrl_round_fail_io(r, i, err);
    }
    return;
  }
  if (self_connected(fd)) {
    /* Close with a reset, so no TIME_WAIT holds the master's port. */
    struct linger reset = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    hrl_round_fail(r, i, HRL_NODE_UNREACHABLE,
                   "connection refused (connected to itself)");
    return;
  }
  if (r->cfg->masters[i].ep.tls) {
    start_tls(r, i, now_us);
    return;
  }
  ready(r, i, now_us);
}
