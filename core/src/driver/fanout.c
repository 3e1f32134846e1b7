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
 * server. At most OWED_MAX replies are owed; past that, the connection is
 * closed after all, at the end of a release or extend round.
 *
 * Such a master is marked late until it answers a command again. Once a
 * round's outcome is settled (a quorum said OK), the round does not wait
 * for late masters: with one master of five stopped, every round would
 * otherwise wait out the per-master timeout, a lock cycle would take two
 * timeouts, and the four healthy masters would serve ~10 cycles/s instead
 * of thousands (docs/PERFORMANCE.md). The first round after a master stops
 * still waits for it, so every master gets its full timeout once.
 *
 * A round waits for a master no longer than its per-master timeout, also
 * while connecting: a connect that takes longer stays in progress and the
 * next round goes on waiting for it, until connect_timeout after it began.
 * A server that accepts no connection (stopped, or its backlog full) thus
 * costs a round the per-master timeout, not the connect timeout.
 *
 * hiredis connects and parses replies; writes go out through send() with
 * MSG_NOSIGNAL so a master that went away cannot raise SIGPIPE in the host
 * program (Lua and C programs do not ignore it as CPython does), and reads
 * through recv() into hiredis's reader.
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
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "driver.h"
#include "proto/detail.h"

/* A blocking recv() ends at least this long before the master's deadline:
 * more than a kernel tick (4 ms at HZ = 250, 10 ms at HZ = 100), which is
 * SO_RCVTIMEO's resolution. Shorter waits use poll() alone. */
#define WAIT_GUARD_MS 20
/* The shortest blocking recv() worth setting a timeout for. */
#define WAIT_MIN_MS 1
/* Most replies a connection may owe (see the top of this file). */
#define OWED_MAX 64

typedef enum slot_state {
  SLOT_DONE,
  SLOT_CONNECTING,
  SLOT_SENDING,
  SLOT_READING
} slot_state;

/* A master's progress in this round. */
typedef struct slot {
  slot_state state;
  int64_t deadline_us;
  uint32_t wait_ms;    /* what the deadline allowed, for the message */
  int handshake_left;  /* handshake replies still to read */
  int handshake_total; /* handshake replies expected on this connection */
  bool reused;         /* the connection was open before this round */
  bool replied;        /* a reply arrived on it in this round */
  uint32_t inflight;   /* this round's replies due to what was written */
  bool carried;        /* a connect begun in an earlier round */
  bool retried;        /* a stale connection was already replaced */
  const char *out;     /* the handshake or the command: bytes not yet sent */
  size_t out_len;
} slot;

typedef struct round {
  hrl_pool *pool;
  const hrl_config *cfg;
  hrl_lock *lock;
  uint32_t timeout_ms;
  pid_t pid; /* 0 when the fork canary vouches for every connection */
  slot slots[HRL_MASTERS_MAX];
} round;

static redisContext *ctx_of(round *r, size_t i) {
  return r->pool->conns[i].ctx;
}

static void fail(round *r, size_t i, hrl_node_result why, const char *msg) {
  hrl_proto_fail(r->lock, i, why, msg);
  hrl_conn_close(&r->pool->conns[i]);
  r->slots[i].state = SLOT_DONE;
}

static void fail_errno(round *r, size_t i, int err) {
  char msg[HRL_NODE_MSG_MAX];
  const char *text = strerror(err);
  hrl_detail_copy_text(msg, sizeof msg, text, strlen(text));
  fail(r, i, HRL_NODE_UNREACHABLE, msg);
}

static void fail_ctx(round *r, size_t i, hrl_node_result why) {
  char msg[HRL_NODE_MSG_MAX];
  const redisContext *ctx = ctx_of(r, i);
  const char *text = ctx->errstr[0] != '\0' ? ctx->errstr : "connection error";
  hrl_detail_copy_text(msg, sizeof msg, text, strlen(text));
  fail(r, i, why, msg);
}

static bool replace_stale(round *r, size_t i);

/* Sends what is left of the slot's bytes; moves on to reading when all of
 * them are out. */
static void flush(round *r, size_t i) {
  slot *s = &r->slots[i];
  ssize_t n =
      send(ctx_of(r, i)->fd, s->out, s->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      s->state = SLOT_SENDING;
      return;
    }
    int err = errno;
    if (!replace_stale(r, i)) {
      fail_errno(r, i, err);
    }
    return;
  }
  s->out += n;
  s->out_len -= (size_t)n;
  s->state = s->out_len > 0 ? SLOT_SENDING : SLOT_READING;
}

/* Queues the protocol's command for master i and starts sending it. */
static void send_command(round *r, size_t i) {
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
static void send_handshake(round *r, size_t i) {
  slot *s = &r->slots[i];
  int replies = 0;
  s->out = hrl_config_handshake(r->cfg, i, &s->out_len, &replies);
  if (replies == 0) {
    send_command(r, i);
    return;
  }
  s->handshake_left = replies;
  s->handshake_total = replies;
  flush(r, i);
}

static void set_deadline(round *r, size_t i, int64_t now_us, uint32_t ms) {
  r->slots[i].deadline_us = now_us + (int64_t)ms * 1000;
  r->slots[i].wait_ms = ms;
}

/* Waits in this round for master i's connect in progress: until the round's
 * per-master timeout, or the connect's own deadline if that comes first. */
static void wait_connect(round *r, size_t i, int64_t now_us) {
  int64_t left_us = r->pool->conns[i].connect_deadline_us - now_us;
  int64_t ms = (left_us + 999) / 1000;
  r->slots[i].state = SLOT_CONNECTING;
  set_deadline(r, i, now_us,
               ms < (int64_t)r->timeout_ms ? (uint32_t)(ms > 0 ? ms : 0)
                                           : r->timeout_ms);
}

/* Opens a new connection to master i; the command follows once it is up. */
static void open_conn(round *r, size_t i, int64_t now_us) {
  const hrl_endpoint *ep = &r->cfg->masters[i].ep;
  hrl_conn *conn = &r->pool->conns[i];
  slot *s = &r->slots[i];
  redisContext *ctx = ep->is_unix ? redisConnectUnixNonBlock(ep->path)
                                  : redisConnectNonBlock(ep->host, ep->port);
  if (ctx == NULL) {
    hrl_proto_fail(r->lock, i, HRL_NODE_UNREACHABLE, "out of memory");
    s->state = SLOT_DONE;
    return;
  }
  conn->ctx = ctx;
  conn->owner_pid = r->pid;
  if (ctx->err != 0) {
    fail_ctx(r, i, HRL_NODE_UNREACHABLE);
    return;
  }
  conn->connecting = true;
  conn->connect_deadline_us =
      now_us + (int64_t)r->cfg->opts.connect_timeout_ms * 1000;
  wait_connect(r, i, now_us);
}

/* Starts master i's part of the round: reuse the connection, or open one. */
static void start(round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = &r->pool->conns[i];
  slot *s = &r->slots[i];
  if (conn->ctx != NULL && r->pid != 0 && conn->owner_pid != r->pid) {
    hrl_conn_close(conn); /* forked: the socket is the parent's */
  }
  s->handshake_left = 0;
  s->handshake_total = 0;
  s->inflight = 0;
  s->replied = false;
  s->retried = false;
  s->carried = false;
  if (conn->ctx != NULL && conn->connecting) {
    s->reused = false; /* not up yet: a connect of an earlier round */
    s->carried = true;
    wait_connect(r, i, now_us);
    return;
  }
  s->reused = conn->ctx != NULL;
  if (s->reused) {
    set_deadline(r, i, now_us, r->timeout_ms);
    send_command(r, i);
    return;
  }
  open_conn(r, i, now_us);
}

/* An I/O error on a connection that was idle since the last round, before
 * any reply: the server closed it (restart, idle timeout) while we were
 * away, so the command never ran. Likewise a connect begun in an earlier
 * round that failed meanwhile: its error is old news about a server that
 * may be back. Replace it once instead of failing. */
static bool replace_stale(round *r, size_t i) {
  slot *s = &r->slots[i];
  if ((!s->reused && !s->carried) || s->replied || s->retried) {
    return false;
  }
  s->retried = true;
  s->reused = false;
  s->carried = false;
  hrl_conn_close(&r->pool->conns[i]);
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

static void connected(round *r, size_t i, int64_t now_us) {
  int err = 0;
  socklen_t len = sizeof err;
  int fd = ctx_of(r, i)->fd;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
    err = errno;
  }
  r->pool->conns[i].connecting = false;
  if (err != 0) {
    if (!replace_stale(r, i)) {
      fail_errno(r, i, err);
    }
    return;
  }
  if (self_connected(fd)) {
    /* Close with a reset, so no TIME_WAIT holds the master's port. */
    struct linger reset = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    fail(r, i, HRL_NODE_UNREACHABLE,
         "connection refused (connected to itself)");
    return;
  }
  /* Blocking mode for the one blocking recv() of a round (see the top of
   * this file); if it cannot be set, every wait goes through poll(). */
  hrl_conn *conn = &r->pool->conns[i];
  int flags = fcntl(fd, F_GETFL);
  conn->blocking = flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
  set_deadline(r, i, now_us, r->timeout_ms);
  send_handshake(r, i);
}

static hrl_reply view_of(const redisReply *rep) {
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
  hrl_conn *conn = &r->pool->conns[i];
  s->replied = true;
  if (conn->owed > 0) {
    conn->owed--; /* the late answer to an earlier round's command */
    return true;
  }
  hrl_reply v = view_of(rep);
  if (s->handshake_left > 0) {
    char msg[HRL_NODE_MSG_MAX];
    int k = s->handshake_total - s->handshake_left;
    hrl_node_result res =
        hrl_config_handshake_reply(r->cfg, i, k, &v, msg, sizeof msg);
    s->handshake_left--;
    if (res != HRL_NODE_OK) {
      fail(r, i, res, msg);
      return false;
    }
    if (s->handshake_left == 0) {
      send_command(r, i); /* the handshake went through: now the command */
      return false;
    }
    return true;
  }
  s->inflight--;
  hrl_node_result res = hrl_proto_reply(r->lock, i, &v);
  if (res == HRL_NODE_MORE) {
    return true; /* the next reply of the same pipeline */
  }
  if (res == HRL_NODE_RESEND) {
    send_command(r, i);
    return false;
  }
  if (res == HRL_NODE_PROTOCOL) {
    /* The stream no longer matches our commands: do not reuse it. */
    hrl_conn_close(&r->pool->conns[i]);
  }
  s->state = SLOT_DONE;
  return false;
}

/* Reads what master i sent (waiting for it when flags is 0, up to the
 * socket's SO_RCVTIMEO) and handles every complete reply in it. */
static void readable(round *r, size_t i, int flags) {
  redisContext *ctx = ctx_of(r, i);
  char buf[16 * 1024];
  ssize_t n = recv(ctx->fd, buf, sizeof buf, flags);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return; /* nothing yet: the caller's loop checks the deadline */
  }
  if (n <= 0) {
    int err = n == 0 ? 0 : errno;
    if (!replace_stale(r, i)) {
      if (err == 0) {
        fail(r, i, HRL_NODE_UNREACHABLE, "Server closed the connection");
      } else {
        fail_errno(r, i, err);
      }
    }
    return;
  }
  if (redisReaderFeed(ctx->reader, buf, (size_t)n) != REDIS_OK) {
    fail(r, i, HRL_NODE_PROTOCOL, "out of memory");
    return;
  }
  for (;;) {
    void *rep = NULL;
    if (redisGetReply(ctx, &rep) != REDIS_OK) {
      fail_ctx(r, i, HRL_NODE_PROTOCOL);
      return;
    }
    if (rep == NULL) {
      return; /* the rest has not arrived yet */
    }
    bool more = take_reply(r, i, rep);
    freeReplyObject(rep);
    if (!more) {
      return;
    }
  }
}

/* Whether the round can stop waiting for master i without closing its
 * connection: a connect still in progress carries over to later rounds; a
 * connection with whole commands out keeps them and owes their replies
 * (see the top of this file). Never closed in a round of an acquire
 * attempt: the release that follows a timed-out SET (or fenced script) must
 * go out on the same connection, behind it. */
static bool can_leave(const round *r, size_t i, int64_t now_us) {
  const slot *s = &r->slots[i];
  const hrl_conn *conn = &r->pool->conns[i];
  if (s->state == SLOT_CONNECTING) {
    return now_us < conn->connect_deadline_us;
  }
  return s->state == SLOT_READING && s->handshake_left == 0 &&
         (conn->owed + s->inflight <= OWED_MAX ||
          hrl_round_of_attempt(r->lock));
}

/* Stops waiting for master i in this round (can_leave said it may): the
 * connection owes the replies to what it has out. */
static void leave(round *r, size_t i) {
  slot *s = &r->slots[i];
  if (s->state == SLOT_READING) {
    r->pool->conns[i].owed += s->inflight;
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
  ssize_t n = send(ctx_of(r, i)->fd, late, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  return n == (ssize_t)len ? LATE_SENT : n > 0 ? LATE_BROKEN : LATE_NONE;
}

static void expire(round *r, size_t i, int64_t now_us) {
  slot *s = &r->slots[i];
  char msg[HRL_NODE_MSG_MAX];
  bool connecting = s->state == SLOT_CONNECTING;
  bool keep = can_leave(r, i, now_us);
  if (connecting && !keep) {
    hrl_detailf(msg, sizeof msg, "connect timeout after %u ms",
                (unsigned)r->cfg->opts.connect_timeout_ms);
  } else {
    hrl_detailf(msg, sizeof msg,
                connecting ? "timeout after %u ms (connecting)"
                           : "timeout after %u ms",
                (unsigned)s->wait_ms);
  }
  hrl_proto_missed(r->lock, i, msg);
  late_send late = LATE_NONE;
  if (s->state == SLOT_READING && s->handshake_left == 0 && s->inflight > 0) {
    late = send_late_command(r, i);
  }
  if (keep && late != LATE_BROKEN) {
    leave(r, i);
    r->pool->conns[i].owed += late == LATE_SENT; /* its answer is owed too */
  } else {
    hrl_conn_close(&r->pool->conns[i]);
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
    readable(r, i, MSG_DONTWAIT);
    if (s->state == SLOT_DONE) {
      return true;
    }
  }
  if (can_leave(r, i, now_us)) {
    hrl_proto_missed(r->lock, i, "not waited for: late since an earlier round");
    leave(r, i);
    return true;
  }
  if (s->state == SLOT_READING && s->handshake_left == 0) {
    /* A release or extend went out whole, but the connection owes too
     * much: close it now rather than wait the timeout out first. */
    fail(r, i, HRL_NODE_UNREACHABLE,
         "not waited for: late since an earlier round (closed)");
    return true;
  }
  return false;
}

/* When master i's reply is all the round still waits for, waits for it in
 * a blocking recv() that ends WAIT_GUARD_MS before its deadline; false when
 * that is not possible here (poll() then waits). */
static bool wait_last(round *r, size_t i, int64_t now_us) {
  hrl_conn *conn = &r->pool->conns[i];
  slot *s = &r->slots[i];
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
  readable(r, i, 0);
  return true;
}

void hrl_driver_round(hrl_pool *pool, hrl_lock *lock, uint32_t timeout_ms) {
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
  int64_t now = hrl_now_us();
  for (size_t i = 0; i < n; i++) {
    start(&r, i, now);
  }
  struct pollfd fds[HRL_MASTERS_MAX];
  size_t which[HRL_MASTERS_MAX];
  for (;;) {
    now = hrl_now_us();
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
      fds[nfds].events = s->state == SLOT_READING ? POLLIN : POLLOUT;
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
        fail_errno(&r, which[k], err);
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
        connected(&r, i, now);
        break;
      case SLOT_SENDING:
        flush(&r, i);
        break;
      case SLOT_READING:
        readable(&r, i, MSG_DONTWAIT);
        break;
      case SLOT_DONE:
        break;
      }
    }
  }
}
