/*
 * A client's subscriber connections, one per master, opened on its first
 * wait and kept (docs/DESIGN.md, "Hear the hand-offs"), as the built-in
 * driver's listen.c keeps them: the protocol's hrl_subscriber speaks on
 * them; a hand-off goes to the lock waiting with that token
 * (hrl_proto_notified), a subscription coming up wakes every waiter of
 * the client (hrl_proto_wake); a connection that breaks is opened again
 * at once, then after 50 ms doubling to 1 s while it keeps failing.
 */
#include <string.h>

#include "world.h"

#define BACKOFF_FIRST_US 50000
#define BACKOFF_MAX_US 1000000

static void sub_open(world *w, client *c, int i) {
  sub_conn *s = &c->sub[i];
  if (s->s == NULL) {
    seam_enter(w, c);
    s->s = hrl_subscriber_create(&c->cfg, (size_t)i);
    seam_leave();
    if (s->s == NULL) {
      sim_violation(w, V_CRASH, "hrl_subscriber_create failed");
      return;
    }
  }
  s->ready = false;
  /* Where this connection goes: master i itself (the simulated masters are
   * plain; a Sentinel-managed one would name a sentinel to ask first). */
  hrl_target where;
  hrl_subscriber_open(s->s, &where);
  s->conn = conn_open(w, c->id, i, ROLE_SUB);
}

void listener_start(world *w, client *c) {
  c->listening = true;
  for (int i = 0; i < w->n; i++) {
    c->sub[i].conn = -1;
    sub_open(w, c, i);
  }
}

/* The connection of sub i failed: again at once the first time, then
 * after a back-off. */
static void sub_failed(world *w, client *c, int i) {
  sub_conn *s = &c->sub[i];
  TRACE(w, "client %d: subscriber to master %d failed (%d)", c->id, i,
        s->failures);
  if (s->conn >= 0) {
    conn_close(w, s->conn);
    s->conn = -1;
  }
  s->ready = false;
  int shift = s->failures > 5 ? 5 : s->failures - (s->failures > 0);
  int64_t wait = s->failures == 0 ? 0 : (int64_t)BACKOFF_FIRST_US << shift;
  s->failures++;
  if (!s->retry_out) {
    s->retry_out = true;
    ev_push(w, w->now + (wait < BACKOFF_MAX_US ? wait : BACKOFF_MAX_US),
            EV_SUB_RETRY, c->id, i, 0);
  }
}

void listener_retry(world *w, int client_id, int i) {
  client *c = &w->clients[client_id];
  c->sub[i].retry_out = false;
  if (c->sub[i].conn < 0) {
    sub_open(w, c, i);
  }
}

static int sub_of(world *w, int id, client **c) {
  conn *cn = &w->conns[id];
  *c = &w->clients[cn->client];
  return (*c)->sub[cn->master].conn == id ? cn->master : -1;
}

void listener_opened(world *w, int id, bool ok) {
  client *c;
  int i = sub_of(w, id, &c);
  if (i < 0) {
    conn_close(w, id);
    return;
  }
  if (!ok) {
    sub_failed(w, c, i);
    return;
  }
  size_t len;
  const char *bytes = hrl_subscriber_start(c->sub[i].s, &len);
  conn_send(w, id, TO_MASTER, bytes, len);
}

static void wake_all(world *w, client *c) {
  for (int k = 0; k < w->nrunners; k++) {
    runner *r = w->runners[k];
    if (r->client == c->id && r->lk != NULL &&
        (r->st == R_WAIT || r->st == R_ROUND)) {
      hrl_proto_wake(r->lk);
      runner_wake(w, r);
    }
  }
}

void listener_bytes(world *w, int id) {
  client *c;
  int i = sub_of(w, id, &c);
  conn *cn = &w->conns[id];
  if (i < 0) {
    cn->rlen = 0;
    return;
  }
  sub_conn *s = &c->sub[i];
  const char *data = cn->rbuf;
  size_t len = cn->rlen;
  cn->rlen = 0;
  for (;;) {
    const char *out;
    size_t out_len;
    hrl_notice n = hrl_subscriber_feed(s->s, data, len, &out, &out_len);
    data = NULL;
    len = 0;
    cov_hit(COV_NOTICE, (int)n, 0, 0);
    if (n == HRL_NOTICE_MORE) {
      return;
    }
    switch (n) {
    case HRL_NOTICE_SEND:
      conn_send(w, id, TO_MASTER, out, out_len);
      break;
    case HRL_NOTICE_READY:
      TRACE(w, "client %d: subscribed on master %d", c->id, i);
      s->ready = true;
      s->failures = 0;
      wake_all(w, c);
      break;
    case HRL_NOTICE_HANDOFF: {
      runner *r = runner_by_waiter(w, c->id, out);
      TRACE(w, "client %d: hand-off %.8s from master %d%s", c->id, out, i,
            r == NULL ? " (no such waiter)" : "");
      if (r != NULL) {
        hrl_proto_notified(r->lk, (size_t)i);
        runner_wake(w, r);
      }
      break;
    }
    case HRL_NOTICE_CLOSE:
      TRACE(w, "client %d: subscriber to master %d: %.*s", c->id, i,
            (int)out_len, out);
      sub_failed(w, c, i);
      return;
    case HRL_NOTICE_REDIRECT: /* only a sentinel's answer redirects */
      sim_violation(w, V_CRASH,
                    "client %d: a subscriber redirect, with no "
                    "sentinel in the model",
                    c->id);
      return;
    default:
      return;
    }
    if (c->sub[i].conn != id) {
      return; /* replaced meanwhile */
    }
  }
}

void listener_broken(world *w, int id) {
  client *c;
  int i = sub_of(w, id, &c);
  if (i < 0) {
    return;
  }
  sub_failed(w, c, i);
}
