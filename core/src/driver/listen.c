/*
 * A client's subscriber connections, one per master, opened on the first
 * wait and kept for the client's life (docs/DESIGN.md, section 2). What
 * goes over them is the protocol's (hrl_subscriber: handshake, SUBSCRIBE,
 * the pushes); this file connects, writes, reads and reports.
 *
 * A connection that breaks is opened again at once (a master restarted,
 * CLIENT KILL): its subscription coming up wakes every waiter, since a
 * hand-off may have been published while it was down. A master that keeps
 * refusing is retried after 50 ms, doubling to 1 s: meanwhile its waiters
 * try on their timers (the holder's TTL, retry_delay), which is slower but
 * misses nothing. A connection that is not subscribed within
 * connect_timeout + timeout is given up the same way. TCP keepalive finds a
 * master whose host vanished without a word.
 *
 * A rediss:// master's subscriber shakes hands over TLS (tls.c, with a
 * context of the listener's own: the command connections' is the round's,
 * behind the client's mutex) before its first byte, as a round's
 * connection does. Where each connection goes is the stream's word
 * (hrl_subscriber_open): the master, or for a Sentinel-managed primary a
 * sentinel to ask and then the primary it named (HRL_NOTICE_REDIRECT:
 * there at once), again after every break, so failovers are followed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/detail.h"
#include "tls.h"
#include "waitroom.h"

#define BACKOFF_FIRST_US 50000
#define BACKOFF_MAX_US 1000000

/* What one call of hrl_listen reported. */
typedef struct report {
  hrl_notice_fn fn;
  void *ud;
  unsigned told;
} report;

static void drop(hrl_sub *s) {
  hrl_tls_free(s->tls); /* no close_notify: nothing is written */
  s->tls = NULL;
  s->tls_want = 0;
  if (s->ctx != NULL) {
    redisFree(s->ctx); /* close() only: nothing reaches the server */
    s->ctx = NULL;
  }
  s->state = HRL_SUB_DOWN;
  s->out = NULL;
  s->out_len = 0;
}

/* Closes a connection that failed; reconnects at once the first time,
 * then after 50 ms, 100 ms, ... 1 s. */
static void fail(hrl_sub *s, int64_t now_us) {
  drop(s);
  uint32_t shift = s->failures > 5 ? 5 : s->failures - (s->failures > 0);
  int64_t wait = s->failures == 0 ? 0 : (int64_t)BACKOFF_FIRST_US << shift;
  s->retry_at_us = now_us + (wait < BACKOFF_MAX_US ? wait : BACKOFF_MAX_US);
  s->failures++;
}

void hrl_listen_close(hrl_sub *subs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    drop(&subs[i]);
    hrl_subscriber_free(subs[i].stream);
    subs[i].stream = NULL;
    hrl_tls_ctx_unref(subs[i].tls_ctx);
    subs[i].tls_ctx = NULL;
    subs[i].failures = 0;
    subs[i].retry_at_us = 0;
  }
}

static void open_sub(hrl_sub *s, hrl_client *client, const hrl_config *cfg,
                     size_t i, int64_t now_us) {
  if (s->stream == NULL) {
    s->stream = hrl_subscriber_new(client, i);
  }
  const hrl_master_cfg *m = &cfg->masters[i];
  if (s->stream != NULL && m->ep.tls && s->tls_ctx == NULL) {
    char msg[HRL_NODE_MSG_MAX]; /* its certificates: tried again later */
    s->tls_ctx = hrl_tls_ctx_new(&m->tls, msg, sizeof msg);
    now_us = hrl_now_us(); /* loading CA files takes a while */
  }
  if (s->stream == NULL || (m->ep.tls && s->tls_ctx == NULL)) {
    fail(s, now_us);
    return;
  }
  hrl_target to;
  hrl_subscriber_open(s->stream, &to); /* the master, a sentinel, ... */
  redisContext *ctx = to.path != NULL ? redisConnectUnixNonBlock(to.path)
                                      : redisConnectNonBlock(to.host, to.port);
  if (ctx == NULL || ctx->err != 0) {
    redisFree(ctx);
    fail(s, now_us);
    return;
  }
  s->ctx = ctx;
  s->owner_pid = getpid();
  s->state = HRL_SUB_CONNECTING;
  s->deadline_us = now_us + (int64_t)cfg->opts.connect_timeout_ms * 1000;
}

/* send() or TLS; a return below 0 with errno EAGAIN: wait for the socket. */
static ssize_t sub_send(hrl_sub *s, const char *buf, size_t len) {
  if (s->tls != NULL) {
    ssize_t n = hrl_tls_send(s->tls, buf, len);
    s->tls_want = n < 0 && errno == EAGAIN ? hrl_tls_want(s->tls) : 0;
    return n;
  }
  return send(s->ctx->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static ssize_t sub_recv(hrl_sub *s, char *buf, size_t len) {
  if (s->tls != NULL) {
    ssize_t n = hrl_tls_recv(s->tls, buf, len, MSG_DONTWAIT);
    s->tls_want = n < 0 && errno == EAGAIN ? hrl_tls_want(s->tls) : 0;
    return n;
  }
  return recv(s->ctx->fd, buf, len, MSG_DONTWAIT);
}

/* Writes what is left of the bytes to send. */
static void flush(hrl_sub *s, int64_t now_us) {
  ssize_t n = sub_send(s, s->out, s->out_len);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return;
  }
  if (n < 0) {
    fail(s, now_us);
    return;
  }
  s->out += n;
  s->out_len -= (size_t)n;
}

/* A TCP connect to a local port nobody listens on may be given that very
 * port and connect to itself; such a "master" would echo our commands.
 * Closed with a reset, so no TIME_WAIT keeps the master's port. */
static bool to_itself(int fd) {
  struct sockaddr_storage me, peer;
  socklen_t me_len = sizeof me, peer_len = sizeof peer;
  memset(&me, 0, sizeof me);
  memset(&peer, 0, sizeof peer);
  bool itself = getsockname(fd, (struct sockaddr *)&me, &me_len) == 0 &&
                getpeername(fd, (struct sockaddr *)&peer, &peer_len) == 0 &&
                me.ss_family != AF_UNIX && me_len == peer_len &&
                memcmp(&me, &peer, me_len) == 0;
  if (itself) {
    struct linger reset = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  }
  return itself;
}

/* Up (a TLS one has shaken hands): the stream's first bytes go out. */
static void up(hrl_sub *s, const hrl_config *cfg, int64_t now_us) {
  s->out = hrl_subscriber_start(s->stream, &s->out_len);
  s->state = HRL_SUB_OPEN;
  s->deadline_us =
      now_us +
      ((int64_t)cfg->opts.connect_timeout_ms + cfg->opts.timeout_ms) * 1000;
  flush(s, now_us);
}

/* Steps a rediss:// master's TLS handshake (within the connect deadline). */
static void shake(hrl_sub *s, const hrl_config *cfg, int64_t now_us) {
  char msg[HRL_NODE_MSG_MAX];
  short events = 0;
  int done = hrl_tls_handshake(s->tls, &events, msg, sizeof msg);
  if (done > 0) {
    s->tls_want = 0;
    up(s, cfg, now_us);
  } else if (done == 0) {
    s->tls_want = events;
  } else {
    fail(s, now_us); /* a certificate refused: never subscribed there */
  }
}

static void connected(hrl_sub *s, const hrl_config *cfg, size_t i,
                      int64_t now_us) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(s->ctx->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
      err != 0 || to_itself(s->ctx->fd)) {
    fail(s, now_us);
    return;
  }
  const hrl_endpoint *ep = &cfg->masters[i].ep;
  if (!ep->is_unix) {
    redisEnableKeepAlive(s->ctx);
  }
  if (ep->tls) {
    char msg[HRL_NODE_MSG_MAX];
    s->tls = hrl_tls_new(s->tls_ctx, s->ctx->fd, ep->host, msg, sizeof msg);
    if (s->tls == NULL) {
      fail(s, now_us);
      return;
    }
    s->state = HRL_SUB_HANDSHAKE;
    shake(s, cfg, now_us);
    return;
  }
  up(s, cfg, now_us);
}

/* Closes a connection whose stream named another server (a sentinel named
 * the primary) and opens that one at once: not a failure. */
static void redirect(hrl_sub *s, int64_t now_us) {
  drop(s);
  s->retry_at_us = now_us;
}

/* Reads what master i's subscriber connection sent and reports it. */
static void readable(hrl_sub *s, size_t i, report *rep, int64_t now_us) {
  char buf[16 * 1024];
  do {
    ssize_t got = sub_recv(s, buf, sizeof buf);
    if (got < 0 &&
        (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      return;
    }
    if (got <= 0) {
      fail(s, now_us);
      return;
    }
    const char *out;
    size_t out_len;
    for (hrl_notice n =
             hrl_subscriber_feed(s->stream, buf, (size_t)got, &out, &out_len);
         n != HRL_NOTICE_MORE;
         n = hrl_subscriber_feed(s->stream, NULL, 0, &out, &out_len)) {
      switch (n) {
      case HRL_NOTICE_SEND:
        s->out = out;
        s->out_len = out_len;
        flush(s, now_us);
        break;
      case HRL_NOTICE_READY:
        s->state = HRL_SUB_READY;
        s->failures = 0;
        rep->fn(rep->ud, i, NULL);
        rep->told++;
        break;
      case HRL_NOTICE_HANDOFF:
        rep->fn(rep->ud, i, out);
        rep->told++;
        break;
      case HRL_NOTICE_REDIRECT:
        redirect(s, now_us);
        return;
      case HRL_NOTICE_CLOSE:
      default:
        fail(s, now_us);
        return;
      }
      if (s->ctx == NULL) {
        return; /* a write failed */
      }
    }
    /* TLS may hold decrypted bytes poll() cannot see. */
  } while (s->tls != NULL && hrl_tls_pending(s->tls));
}

/* Opens the connections that are due and gives up those whose deadline
 * passed; returns when to look again at the latest (from until_us). */
static int64_t tend(hrl_sub *subs, size_t n, hrl_client *client,
                    const hrl_config *cfg, int64_t now_us, int64_t until_us) {
  int64_t next = until_us;
  for (size_t i = 0; i < n; i++) {
    hrl_sub *s = &subs[i];
    if (s->state == HRL_SUB_DOWN && now_us >= s->retry_at_us) {
      open_sub(s, client, cfg, i, now_us);
    }
    bool pending = s->state == HRL_SUB_CONNECTING ||
                   s->state == HRL_SUB_HANDSHAKE || s->state == HRL_SUB_OPEN;
    if (pending && now_us >= s->deadline_us) {
      fail(s, now_us);
    }
    int64_t at = s->state == HRL_SUB_DOWN ? s->retry_at_us
                 : pending                ? s->deadline_us
                                          : INT64_MAX;
    next = at < next ? at : next;
  }
  return next;
}

void hrl_listen(hrl_sub *subs, size_t n, hrl_client *client,
                const hrl_config *cfg, int64_t until_us, hrl_notice_fn fn,
                void *ud) {
  /* A forked child's connections are its parent's: never write to them
   * (and its channel is its own: a new stream subscribes to that). */
  pid_t pid = getpid();
  for (size_t i = 0; i < n; i++) {
    if (subs[i].ctx != NULL && subs[i].owner_pid != pid) {
      hrl_listen_close(subs, n);
      break;
    }
  }
  report rep = {fn, ud, 0};
  struct pollfd fds[HRL_MASTERS_MAX];
  size_t which[HRL_MASTERS_MAX];
  for (;;) {
    int64_t now = hrl_now_us();
    if (now >= until_us) {
      return;
    }
    int64_t next = tend(subs, n, client, cfg, now, until_us);
    nfds_t nfds = 0;
    for (size_t i = 0; i < n; i++) {
      hrl_sub *s = &subs[i];
      if (s->state == HRL_SUB_DOWN) {
        continue;
      }
      fds[nfds].fd = s->ctx->fd;
      bool to_write = s->out_len > 0 || s->tls_want == POLLOUT;
      fds[nfds].events = s->state == HRL_SUB_CONNECTING  ? POLLOUT
                         : s->state == HRL_SUB_HANDSHAKE ? s->tls_want
                         : to_write                      ? POLLIN | POLLOUT
                                                         : POLLIN;
      fds[nfds].revents = 0;
      which[nfds++] = i;
    }
    int64_t wait_us = next > now ? next - now : 0;
    struct timespec wait = {.tv_sec = (time_t)(wait_us / 1000000),
                            .tv_nsec = (long)(wait_us % 1000000) * 1000};
    int ready = ppoll(fds, nfds, &wait, NULL);
    if (ready < 0) {
      if (errno != EINTR) {
        nanosleep(&wait, NULL); /* ENOMEM: wait without the sockets */
      }
      continue;
    }
    now = hrl_now_us();
    for (nfds_t k = 0; k < nfds; k++) {
      hrl_sub *s = &subs[which[k]];
      if (fds[k].revents == 0 || s->ctx == NULL) {
        continue;
      }
      if (s->state == HRL_SUB_CONNECTING) {
        connected(s, cfg, which[k], now);
        continue;
      }
      if (s->state == HRL_SUB_HANDSHAKE) {
        shake(s, cfg, now);
        continue;
      }
      if ((fds[k].revents & POLLOUT) && s->out_len > 0) {
        flush(s, now);
      }
      /* TLS: a read may have waited for the socket to take a write. */
      bool tls_read = s->tls != NULL && s->tls_want == POLLOUT;
      if (s->ctx != NULL && ((fds[k].revents & ~POLLOUT) || tls_read)) {
        readable(s, which[k], &rep, now);
      }
    }
    if (rep.told > 0) {
      return;
    }
  }
}
