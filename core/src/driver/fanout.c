/*
 * The hiredis driver: runs one protocol round on all N masters at once.
 *
 * Every master's command is written without blocking, back to back, then a
 * single poll() loop collects the replies, each master against its own
 * deadline. Connections are opened lazily, in parallel, and a new one sends
 * its AUTH / SELECT pipelined ahead of the command. A master that fails has
 * its connection closed and reopened by a later round. A master that only
 * misses its deadline keeps its connection: the replies it still owes are
 * counted (hrl_conn.owed) and dropped when they come, so a late reply is
 * never read as the answer to a later command. Closing it instead would
 * cost a reconnect per round, and against a stopped server (SIGSTOP, a
 * hung host) every new connection waits in its listen backlog, which fills
 * after a few hundred rounds: then each round would wait out the connect
 * timeout rather than the per-master timeout. Keeping the connection also
 * keeps a timed-out SET and the release that follows it in order on the
 * server. Such a connection is never closed for owing too much: a server
 * that wakes up to a closed connection drops what it has not run yet (its
 * replies meet the reset), so the release behind a SET that did run would
 * be lost, and the key left for its TTL. Instead, while a connection owes
 * OWED_MAX replies or more (what came meanwhile is read first), nothing
 * more is sent on it but the releases (and a waiter's step aside or
 * leave) of a lock whose token that master may hold
 * (hrl_round_must_reach): the master counts as unreachable in the round,
 * with nothing of it left to run there.
 *
 * Such a master is marked late until it answers a command again. Once a
 * round's outcome is settled (a quorum said OK), the round does not wait
 * for late masters: with one master of five stopped, every round would
 * otherwise wait out the per-master timeout, a lock cycle would take two
 * timeouts, and the four healthy masters would serve ~10 cycles/s instead
 * of thousands (docs/PERFORMANCE.md). The first round after a master stops
 * still waits for it, so every master gets its full timeout once.
 *
 * Connects (and a rediss:// master's TLS handshake, and the handshake
 * commands after it) are connect.c's: a round waits for one no longer than
 * the per-master timeout, and a connect or handshake still in progress
 * carries over to the next round, until connect_timeout after it began.
 *
 * hiredis connects and parses replies; writes go out through send() with
 * MSG_NOSIGNAL so a master that went away cannot raise SIGPIPE in the host
 * program (Lua and C programs do not ignore it as CPython does), and reads
 * through recv() into hiredis's reader. A TLS connection's go through
 * OpenSSL over the same calls (tls.c); conn_send and conn_recv choose, so
 * a plain connection pays one predictable branch for it.
 *
 * The last reply of a round (at N = 1, every reply) is awaited in a
 * blocking recv() instead of poll() and then recv(): on a loopback round
 * trip of ~40 us that second system call and poll's wait-queue set-up cost
 * a measurable ~1 us (bench/, docs/PERFORMANCE.md). SO_RCVTIMEO bounds that
 * wait, but only to the kernel tick, so it is set to end WAIT_GUARD_MS
 * before the master's deadline; what is left of the wait goes through
 * poll(), so deadlines stay as exact as before. Every other call passes
 * MSG_DONTWAIT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "proto/detail.h"
#include "round.h"

/* A blocking recv() ends at least this long before the master's deadline:
 * more than a kernel tick (4 ms at HZ = 250, 10 ms at HZ = 100), which is
 * SO_RCVTIMEO's resolution. Shorter waits use poll() alone. */
#define WAIT_GUARD_MS 20
/* The shortest blocking recv() worth setting a timeout for. */
#define WAIT_MIN_MS 1
/* Most replies a connection may owe (see the top of this file). */
#define OWED_MAX 64

typedef hrl_round round;
typedef hrl_slot slot;

static redisContext *ctx_of(round *r, size_t i) {
  return r->slots[i].conn->ctx;
}

void hrl_round_fail(round *r, size_t i, hrl_node_result why, const char *msg) {
  hrl_node_result res = hrl_proto_fail(r->lock, i, why, msg);
  hrl_conn_close(conn_of(r, i));
  if (res == HRL_NODE_REDIRECT) {
    hrl_round_redirect(r,
                       i); /* a cluster node that was never reached: another */
    return;
  }
  r->slots[i].state = SLOT_DONE;
}

void hrl_round_fail_io(round *r, size_t i, int err) {
  char msg[HRL_NODE_MSG_MAX];
  const hrl_conn *conn = conn_of(r, i);
  const char *text = conn->tls != NULL && hrl_tls_error(conn->tls)[0] != '\0'
                         ? hrl_tls_error(conn->tls)
                         : strerror(err);
  hrl_detail_copy_text(msg, sizeof msg, text, strlen(text));
  hrl_round_fail(r, i, HRL_NODE_UNREACHABLE, msg);
}

/* Sends what is left of the slot's bytes; moves on to reading when all of
 * them are out. */
static void flush(round *r, size_t i) {
  slot *s = &r->slots[i];
  ssize_t n = conn_send(conn_of(r, i), s, s->out, s->out_len);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      s->state = SLOT_SENDING;
      return;
    }
    int err = errno;
    if (!hrl_round_replace_stale(r, i)) {
      hrl_round_fail_io(r, i, err);
    }
    return;
  }
  s->out += n;
  s->out_len -= (size_t)n;
  s->state = s->out_len > 0 ? SLOT_SENDING : SLOT_READING;
}

/* Queues the protocol's command for master i and starts sending it. */
void hrl_round_send_command(round *r, size_t i) {
  slot *s = &r->slots[i];
  s->out = hrl_proto_command(r->lock, i, &s->out_len);
  s->inflight += (uint32_t)hrl_proto_command_replies(r->lock, i);
  flush(r, i);
}

/* A new connection sends its handshake (AUTH, SELECT) alone and the
 * command only once every handshake reply said OK: pipelined together, a
 * refused AUTH or SELECT would still let the command run, as the default
 * user in database 0, and leave a key the caller never asked for. This
 * costs a round trip on new connections only. */
void hrl_round_send_handshake(round *r, size_t i) {
  slot *s = &r->slots[i];
  int replies = 0;
  s->out = hrl_config_handshake(r->cfg, i, &s->out_len, &replies);
  if (replies > 0 && r->cfg->sentinels > 0) {
    hrl_target to;
    hrl_proto_target(r->lock, i, &to);
    replies = to.handshake ? replies : 0; /* a sentinel: no AUTH, SELECT */
  }
  if (replies == 0) {
    hrl_round_send_command(r, i);
    return;
  }
  s->handshake_left = replies;
  s->handshake_total = replies;
  flush(r, i);
}

/* The connection master i's command goes out on: the master's, or, for a
 * Redis Cluster, that of the node the protocol names (hrl_proto_target). */
static hrl_conn *conn_for(round *r, size_t i) {
  hrl_conn *nodes = r->pool->node_conns != NULL ? r->pool->node_conns[i] : NULL;
  return nodes == NULL ? &r->pool->conns[i]
                       : &nodes[r->lock->op.nodes[i].target];
}

/* Takes up master i's connection for the round: a forked child's is closed
 * (the socket is its parent's), and the slot starts afresh on it. */
static hrl_conn *take_conn(round *r, size_t i) {
  slot *s = &r->slots[i];
  hrl_conn *conn = conn_for(r, i);
  if (conn->ctx != NULL && r->pid != 0 && conn->owner_pid != r->pid) {
    hrl_conn_close(conn);
  }
  s->conn = conn;
  s->handshake_left = 0;
  s->handshake_total = 0;
  s->inflight = 0;
  s->replied = false;
  s->retried = false;
  s->carried = false;
  s->tls_want = 0;
  return conn;
}

/* Whether master i's command is held back from its kept connection, which
 * owes OWED_MAX replies or more even after reading what came meanwhile
 * (see the top of this file); the master is then done for the round. A
 * connection the drain found closed is not kept either. */
static bool held_back(round *r, size_t i) {
  hrl_conn *conn = r->slots[i].conn;
  if (conn->ctx == NULL || conn->connecting || conn->owed < OWED_MAX) {
    return false;
  }
  if (!hrl_round_drain(r, i) || conn->owed < OWED_MAX ||
      hrl_round_must_reach(r->lock, i)) {
    return false;
  }
  char msg[HRL_NODE_MSG_MAX];
  hrl_detailf(msg, sizeof msg,
              "not sent: %u replies owed since it stopped "
              "answering",
              (unsigned)conn->owed);
  hrl_round_withhold(r->lock, i, msg);
  r->slots[i].state = SLOT_DONE;
  return true;
}

/* Starts master i's part of the round: a kept connection sends at once;
 * connect.c waits for or opens one otherwise (see hrl_round_connect). */
static bool start(round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = take_conn(r, i);
  if (held_back(r, i)) {
    return false;
  }
  if (conn->ctx == NULL || conn->connecting) {
    return hrl_round_connect(r, i, now_us);
  }
  if (conn->handshake_left > 0) {
    hrl_round_resume_handshake(r, i, now_us);
    return false;
  }
  r->slots[i].reused = true;
  hrl_round_set_deadline(r, i, now_us, r->timeout_ms);
  hrl_round_send_command(r, i);
  return false;
}

/* A Redis Cluster moved the slot (MOVED) or this key (ASK): the command
 * goes again to the node the protocol names now, within what is left of
 * the master's deadline on a kept connection (a new one waits as any
 * connect does). */
void hrl_round_redirect(round *r, size_t i) {
  int64_t deadline = r->slots[i].deadline_us;
  uint32_t wait_ms = r->slots[i].wait_ms;
  hrl_conn *conn = take_conn(r, i);
  if (held_back(r, i)) {
    return;
  }
  if (conn->ctx == NULL || conn->connecting) {
    hrl_round_connect(r, i, hrl_now_us());
    return;
  }
  if (conn->handshake_left > 0) {
    hrl_round_resume_handshake(r, i, hrl_now_us());
    return;
  }
  r->slots[i].reused = true;
  r->slots[i].deadline_us = deadline;
  r->slots[i].wait_ms = wait_ms;
  hrl_round_send_command(r, i);
}

/* Whether master i's handshake commands are out, unanswered. */
static bool shaking_hands(const slot *s) {
  return s->state == SLOT_READING && s->handshake_left > 0;
}

/* Whether the round can stop waiting for master i without closing its
 * connection: a connect or a handshake still in progress carries over to
 * later rounds until connect_timeout after the connect began (connect.c);
 * a connection with whole commands out keeps them and owes their replies
 * (see the top of this file): the release that follows a timed-out SET
 * (or a try) must go out on the same connection, behind it. */
static bool can_leave(const round *r, size_t i, int64_t now_us) {
  const slot *s = &r->slots[i];
  const hrl_conn *conn = s->conn;
  if (s->state == SLOT_CONNECTING || s->state == SLOT_HANDSHAKE ||
      shaking_hands(s)) {
    return now_us < conn->connect_deadline_us;
  }
  return s->state == SLOT_READING;
}

/* Stops waiting for master i in this round (can_leave said it may): the
 * connection owes the replies to what it has out, or goes on with its
 * handshake in the next round. */
static void leave(round *r, size_t i) {
  slot *s = &r->slots[i];
  hrl_conn *conn = conn_of(r, i);
  if (shaking_hands(s)) {
    conn->handshake_left = s->handshake_left;
    conn->handshake_total = s->handshake_total;
  } else if (s->state == SLOT_READING) {
    conn->owed += s->inflight;
  }
  s->state = SLOT_DONE;
}

typedef enum late_send { LATE_NONE, LATE_SENT, LATE_BROKEN } late_send;

/* Sends hrl_proto_late_command()'s bytes behind the unanswered command
 * (see there), whole or not at all: LATE_BROKEN when a part went out,
 * which leaves the stream out of step. */
static late_send send_late_command(round *r, size_t i) {
  size_t len = 0;
  const char *late = hrl_proto_late_command(r->lock, i, &len);
  if (late == NULL) {
    return LATE_NONE;
  }
  ssize_t n = conn_send(conn_of(r, i), &r->slots[i], late, len);
  return n == (ssize_t)len ? LATE_SENT : n > 0 ? LATE_BROKEN : LATE_NONE;
}

static void expire(round *r, size_t i, int64_t now_us) {
  slot *s = &r->slots[i];
  char msg[HRL_NODE_MSG_MAX];
  bool connecting = s->state == SLOT_CONNECTING || s->state == SLOT_HANDSHAKE;
  bool keep = can_leave(r, i, now_us);
  const char *stage = s->state == SLOT_HANDSHAKE ? " (TLS handshake)" : "";
  if (connecting && !keep) {
    hrl_detailf(msg, sizeof msg, "connect timeout after %u ms%s",
                (unsigned)r->cfg->opts.connect_timeout_ms, stage);
  } else if (connecting) {
    hrl_detailf(msg, sizeof msg, "timeout after %u ms (%s)",
                (unsigned)s->wait_ms,
                stage[0] != '\0' ? "TLS handshake" : "connecting");
  } else {
    hrl_detailf(msg, sizeof msg, "timeout after %u ms", (unsigned)s->wait_ms);
  }
  hrl_proto_missed(r->lock, i, msg);
  late_send late = LATE_NONE;
  if (s->state == SLOT_READING && s->handshake_left == 0 && s->inflight > 0) {
    late = send_late_command(r, i);
  }
  if (keep && late != LATE_BROKEN) {
    leave(r, i);
    /* its answers are owed too */
    conn_of(r, i)->owed +=
        late == LATE_SENT ? (uint32_t)hrl_round_late_replies(r->lock, i) : 0;
  } else {
    hrl_conn_close(conn_of(r, i));
    s->state = SLOT_DONE;
  }
}

/* Once the round's outcome is settled (hrl_proto_settled), a master known
 * to be late is not waited for: it missed its deadline in an earlier round
 * and has not answered since, so waiting would most likely cost the whole
 * per-master timeout again, on every round, while it stays stopped or cut
 * off: a single hung master of five would slow every lock to one round per
 * timeout. What it has sent already is still read. Masters not known to be
 * late are waited for as before, so the counts of a healthy round stay
 * exact. Returns true when the slot is finished. */
static bool leave_late(round *r, size_t i, int64_t now_us) {
  slot *s = &r->slots[i];
  if (s->state == SLOT_READING) {
    hrl_round_readable(r, i, MSG_DONTWAIT);
    if (s->state == SLOT_DONE) {
      return true;
    }
  }
  if (can_leave(r, i, now_us)) {
    hrl_proto_missed(r->lock, i, "not waited for: late since an earlier round");
    leave(r, i);
    return true;
  }
  return false;
}

/* When master i's reply is all the round still waits for, waits for it in
 * a blocking recv() that ends WAIT_GUARD_MS before its deadline; false when
 * that is not possible here (poll() then waits). */
static bool wait_last(round *r, size_t i, int64_t now_us) {
  slot *s = &r->slots[i];
  hrl_conn *conn = s->conn;
  if (!conn->blocking || s->state != SLOT_READING) {
    return false;
  }
  int64_t stage_ms = (s->deadline_us - now_us) / 1000 - WAIT_GUARD_MS;
  if (stage_ms < WAIT_MIN_MS) {
    return false;
  }
  /* Any timeout up to stage_ms will do: keep the one set, if it fits, so
   * that a round costs no setsockopt(). */
  if (conn->rcvtimeo_ms == 0 || conn->rcvtimeo_ms > stage_ms) {
    struct timeval tv = {.tv_sec = (time_t)(stage_ms / 1000),
                         .tv_usec = (suseconds_t)(stage_ms % 1000) * 1000};
    if (setsockopt(ctx_of(r, i)->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) !=
        0) {
      conn->blocking = false;
      return false;
    }
    conn->rcvtimeo_ms = (uint32_t)stage_ms;
  }
  hrl_round_readable(r, i, 0);
  return true;
}

/* Whether a master of the round is still to be heard. */
static bool pending(const round *r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (r->slots[i].state != SLOT_DONE) {
      return true;
    }
  }
  return false;
}

void hrl_driver_round(hrl_pool *pool, hrl_lock *lock, uint32_t timeout_ms,
                      int64_t now_us) {
  round r;
  r.pool = pool;
  r.cfg = lock->cfg;
  r.lock = lock;
  r.timeout_ms = timeout_ms;
  /* Connections inherited through fork() are the parent's: close them
   * (never write to them) and open our own. The canary page says so
   * without a system call; without it, every connection's owner_pid. */
  volatile unsigned char *canary = pool->fork_canary;
  r.pid = 0;
  if (canary == NULL) {
    r.pid = getpid();
  } else if (*canary == 0) {
    hrl_pool_after_fork(pool);
    *canary = 1;
  }
  size_t n = pool->n;
  int64_t now = now_us;
  for (size_t i = 0; i < n; i++) {
    if (start(&r, i, now)) {
      now = hrl_now_us();
    }
  }
  struct pollfd fds[HRL_MASTERS_MAX];
  size_t which[HRL_MASTERS_MAX];
  /* The clock is read once per pass, and only while a master is still to
   * be heard: a round's last reply costs no clock read after it (the
   * caller's next step reads the clock its validity is judged by), and
   * the first pass takes the reading made after the last command went
   * out. */
  bool fresh = true;
  for (;;) {
    if (!fresh) {
      if (!pending(&r, n)) {
        return;
      }
      now = hrl_now_us();
    }
    fresh = false;
    nfds_t nfds = 0;
    int64_t first_deadline = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
      slot *s = &r.slots[i];
      if (s->state == SLOT_DONE) {
        continue;
      }
      if (now >= s->deadline_us) {
        expire(&r, i, now);
        continue;
      }
      if (hrl_proto_skippable(lock, i) && leave_late(&r, i, now)) {
        continue;
      }
      fds[nfds].fd = ctx_of(&r, i)->fd;
      fds[nfds].events = s->tls_want != 0           ? s->tls_want
                         : s->state == SLOT_READING ? POLLIN
                                                    : POLLOUT;
      fds[nfds].revents = 0;
      which[nfds++] = i;
      if (s->deadline_us < first_deadline) {
        first_deadline = s->deadline_us;
      }
    }
    if (nfds == 0) {
      return;
    }
    if (nfds == 1 && wait_last(&r, which[0], now)) {
      continue;
    }
    /* ppoll: microseconds, so a deadline is not rounded up to the next
     * millisecond. */
    int64_t wait_us = first_deadline - now;
    struct timespec wait = {.tv_sec = (time_t)(wait_us / 1000000),
                            .tv_nsec = (long)(wait_us % 1000000) * 1000};
    int ready = ppoll(fds, nfds, &wait, NULL);
    if (ready < 0) {
      if (errno == EINTR) {
        continue;
      }
      int err = errno;
      for (nfds_t k = 0; k < nfds; k++) {
        hrl_round_fail_io(&r, which[k], err);
      }
      return;
    }
    now = hrl_now_us();
    for (nfds_t k = 0; k < nfds && ready > 0; k++) {
      if (fds[k].revents == 0) {
        continue;
      }
      ready--;
      size_t i = which[k];
      switch (r.slots[i].state) {
      case SLOT_CONNECTING:
        hrl_round_connected(&r, i, now);
        break;
      case SLOT_HANDSHAKE:
        hrl_round_handshake(&r, i, now);
        break;
      case SLOT_SENDING:
        flush(&r, i);
        break;
      case SLOT_READING:
        hrl_round_readable(&r, i, MSG_DONTWAIT);
        break;
      case SLOT_DONE:
        break;
      }
    }
  }
}
