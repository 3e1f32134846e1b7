/*
 * The simulator's driver: runs one begun operation of a lock to its end
 * as docs/DESIGN.md (section 2) tells every driver to, with one
 * hrl_stream per connection, so the stream rules (handshake first, owed
 * replies, NOSCRIPT resends, when a late connection is kept) are the
 * core's own:
 *   - a round goes to every master at once, each with the round's
 *     deadline (on the client's clock); a master without an idle
 *     connection gets a new one (a connect not done by the deadline is a
 *     missed master, and given up);
 *   - replies are fed as they come; a refused connect or a reset is
 *     hrl_proto_fail; the deadline is hrl_stream_expire (its late command
 *     sent, the connection kept when the stream says so);
 *   - once hrl_proto_skippable, a late master is not waited for;
 *   - a WAIT ends at its time, or at once on a hand-off for the lock's
 *     waiter token or a subscriber coming up (listener.c);
 *   - a cancel is applied between tries (hrl_proto_cancel), never in the
 *     middle of a round.
 * Kept connections go back to the client's pool, newest first.
 */
#include <stdio.h>
#include <string.h>

#include "world.h"

static void pool_put(world *w, int id) {
  conn *cn = &w->conns[id];
  client *c = &w->clients[cn->client];
  /* DRIVER_POOLED: owing replies to a lock's commands, it serves that
   * lock's next round, so its late commands run before the next ones. */
  cn->owner = w->sc->driver == DRIVER_POOLED && !cn->broken &&
                      hrl_stream_owed(cn->stream) > 0
                  ? cn->runner
                  : -1;
  cn->runner = -1;
  if (cn->broken || cn->client_closed || c->pooled[cn->master] == POOL_MAX) {
    conn_close(w, id);
    return;
  }
  cn->idle = true;
  c->pool[cn->master][c->pooled[cn->master]++] = id;
}

/* The newest idle connection to master m runner r may use, or -1. */
static int pool_take(world *w, client *c, int m, int r) {
  int kept = 0;
  for (int k = 0; k < c->pooled[m]; k++) { /* forget the dead ones */
    conn *cn = &w->conns[c->pool[m][k]];
    if (cn->broken || cn->client_closed) {
      cn->idle = false;
    } else {
      c->pool[m][kept++] = c->pool[m][k];
    }
  }
  c->pooled[m] = kept;
  int pick = -1;
  for (int k = c->pooled[m] - 1; k >= 0; k--) {
    conn *cn = &w->conns[c->pool[m][k]];
    if (cn->owner == r) {
      pick = k;
      break;
    }
    if (cn->owner < 0 && pick < 0) {
      pick = k;
    }
  }
  if (pick < 0) {
    return -1;
  }
  int id = c->pool[m][pick];
  memmove(&c->pool[m][pick], &c->pool[m][pick + 1],
          (size_t)(c->pooled[m] - pick - 1) * sizeof(int));
  c->pooled[m]--;
  w->conns[id].idle = false;
  w->conns[id].owner = -1;
  return id;
}

static void pool_remove(world *w, client *c, int m, int id) {
  for (int k = 0; k < c->pooled[m]; k++) {
    if (c->pool[m][k] == id) {
      memmove(&c->pool[m][k], &c->pool[m][k + 1],
              (size_t)(c->pooled[m] - k - 1) * sizeof(int));
      c->pooled[m]--;
      break;
    }
  }
  w->conns[id].idle = false;
}

void runner_init(world *w, runner *r, int client_id, int lane_id,
                 bool renewal) {
  memset(r, 0, sizeof *r);
  r->id = w->nrunners;
  w->runners[w->nrunners++] = r;
  r->client = client_id;
  r->lane = lane_id;
  r->renewal = renewal;
  for (int i = 0; i < SIM_MASTERS_MAX; i++) {
    r->conn[i] = -1;
  }
}

static client *owner(world *w, const runner *r) {
  return &w->clients[r->client];
}

static void step_now(world *w, runner *r);

/* ---- the serial driver's client mutex ---- */

/* A serial client's runner steps, and runs the round a step starts, only
 * while it holds the client's mutex, as hrl_api_run does; waits do not
 * hold it. A pooled client's runners never wait for one another. */
static bool mutex_take(world *w, runner *r) {
  client *c = owner(w, r);
  if (w->sc->driver != DRIVER_SERIAL || c->mutex_owner == r->id) {
    return true;
  }
  if (c->mutex_owner < 0 && c->mutex_waiting == 0) {
    c->mutex_owner = r->id;
    return true;
  }
  for (int k = 0; k < c->mutex_waiting; k++) {
    if (c->mutex_queue[k] == r->id) {
      return false;
    }
  }
  c->mutex_queue[c->mutex_waiting++] = r->id;
  r->queued_at = w->now;
  if (c->mutex_owner < 0) {
    ev_push(w, w->now, EV_MUTEX, c->id, 0, 0);
  }
  return false;
}

static void mutex_give(world *w, runner *r) {
  client *c = owner(w, r);
  if (w->sc->driver != DRIVER_SERIAL || c->mutex_owner != r->id) {
    return;
  }
  c->mutex_owner = -1;
  if (c->mutex_waiting > 0) {
    ev_push(w, w->now, EV_MUTEX, c->id, 0, 0);
  }
}

/* The runner's next step, once it holds the mutex. */
static void want_step(world *w, runner *r) {
  r->want_step = true;
  if (mutex_take(w, r)) {
    r->want_step = false;
    step_now(w, r);
  }
}

/* The next turn: a holder's release or extend (a renewal too) before any
 * acquire's step or round, as the built-in driver's turns go
 * (core/src/api); else the first come. */
static int next_turn(const world *w, const client *c) {
  for (int k = 0; k < c->mutex_waiting; k++) {
    const runner *r = w->runners[c->mutex_queue[k]];
    if (r->want_step && r->kind != HRL_OP_ACQUIRE) {
      return k;
    }
  }
  return 0;
}

void runner_mutex_next(world *w, int client_id) {
  client *c = &w->clients[client_id];
  while (c->mutex_owner < 0 && c->mutex_waiting > 0) {
    int k = next_turn(w, c);
    runner *r = w->runners[c->mutex_queue[k]];
    memmove(&c->mutex_queue[k], &c->mutex_queue[k + 1],
            (size_t)(--c->mutex_waiting - k) * sizeof c->mutex_queue[0]);
    if (r->want_step) {
      c->mutex_owner = r->id;
      r->want_step = false;
      r->mutex_wait += w->now - r->queued_at;
      step_now(w, r);
    }
  }
}

void runner_abandon(world *w, runner *r) {
  client *c = owner(w, r);
  r->gen++;
  r->st = R_IDLE;
  r->want_step = false;
  mutex_give(w, r);
  (void)c;
}

/* Master i is done with this round (its connection kept or closed). */
static void node_done(world *w, runner *r, int i) {
  if (r->node[i] == X_DONE || r->node[i] == X_OFF) {
    return;
  }
  const hrl_node *node = &r->lk->op.nodes[i];
  cov_hit(COV_REPLY, (int)r->lk->op.round_kind, (int)node->result,
          node->eval_sent);
  if (node->unacked) {
    cov_hit(COV_REPLY, (int)r->lk->op.round_kind, COV_UNACKED, 0);
  }
  r->node[i] = X_DONE;
  r->conn[i] = -1;
  if (--r->pending == 0) {
    r->gen++;         /* the deadline is stale */
    mutex_give(w, r); /* let go between rounds, as hrl_api_run does */
    want_step(w, r);
  }
}

static void act(world *w, runner *r, int i, int id, hrl_stream_action a,
                const char *out, size_t out_len);

/* Once settled, a master known to be late is not waited for. */
static void skip_late(world *w, runner *r) {
  uint64_t gen = r->gen;
  for (int j = 0; j < w->n && r->st == R_ROUND && r->gen == gen; j++) {
    if (r->node[j] != X_ACTIVE && r->node[j] != X_CONNECTING) {
      continue;
    }
    if (!hrl_proto_skippable(r->lk, (size_t)j)) {
      continue;
    }
    int id = r->conn[j];
    cov_hit(COV_FAIL, (int)r->lk->op.round_kind, 2, 0);
    if (r->node[j] == X_CONNECTING) {
      hrl_proto_missed(r->lk, (size_t)j, "not waited for (connecting)");
      conn_close(w, id);
      node_done(w, r, j);
    } else {
      act(w, r, j, id, hrl_stream_skip(w->conns[id].stream, r->lk, (size_t)j),
          NULL, 0);
    }
  }
}

/* What the stream said about master i's connection. */
static void act(world *w, runner *r, int i, int id, hrl_stream_action a,
                const char *out, size_t out_len) {
  cov_hit(COV_STREAM, (int)a, 0, 0);
  switch (a) {
  case HRL_STREAM_MORE:
    return;
  case HRL_STREAM_SEND:
    conn_send(w, id, TO_MASTER, out, out_len);
    return;
  case HRL_STREAM_DONE:
    pool_put(w, id);
    node_done(w, r, i);
    return;
  case HRL_STREAM_CLOSE:
    conn_close(w, id);
    node_done(w, r, i);
    return;
  }
}

/* Feeds what the connection holds to master i's part of the round. */
static void feed(world *w, runner *r, int i, int id) {
  uint64_t gen = r->gen;
  client *c = owner(w, r);
  conn *cn = &w->conns[id];
  const char *data = cn->rbuf;
  size_t len = cn->rlen;
  cn->rlen = 0;
  seam_enter(w, c);
  for (;;) {
    const char *out = NULL;
    size_t out_len = 0;
    hrl_stream_action a = hrl_stream_feed(w->conns[id].stream, r->lk, (size_t)i,
                                          data, len, &out, &out_len);
    data = NULL;
    len = 0;
    act(w, r, i, id, a, out, out_len);
    if (a != HRL_STREAM_SEND || r->gen != gen || r->node[i] != X_ACTIVE) {
      break;
    }
  }
  seam_leave();
  if (r->st == R_ROUND && r->gen == gen) {
    seam_enter(w, c);
    skip_late(w, r);
    seam_leave();
  }
}

/* A new connection for master i's part of the round. */
static void open_node(world *w, runner *r, int i) {
  int id = conn_open(w, r->client, i, ROLE_LOCK);
  w->conns[id].runner = r->id;
  w->conns[id].node = i;
  r->node[i] = X_CONNECTING;
  r->conn[i] = id;
}

static void start_node(world *w, runner *r, int i, int id) {
  conn *cn = &w->conns[id];
  cn->runner = r->id;
  cn->node = i;
  cn->idle = false;
  r->node[i] = X_ACTIVE;
  r->conn[i] = id;
  size_t len;
  seam_enter(w, owner(w, r));
  /* Replies that came while no round was out: dropped as owed (more than
   * were owed: the connection is out of step, a new one serves). */
  bool in_step =
      cn->rlen == 0 || hrl_stream_drain(cn->stream, cn->rbuf, cn->rlen);
  cn->rlen = 0;
  const char *bytes =
      in_step ? hrl_stream_start(cn->stream, r->lk, (size_t)i, cn->fresh, &len)
              : NULL;
  seam_leave();
  if (!in_step) {
    conn_close(w, id);
    open_node(w, r, i);
    return;
  }
  cn->fresh = false;
  if (bytes == NULL) {
    /* Held back: the connection owes too many replies, and the master is
     * done for this round (unreachable, nothing sent); it stays. */
    cov_hit(COV_FAIL, (int)r->lk->op.round_kind, 5, 0);
    pool_put(w, id);
    node_done(w, r, i);
    return;
  }
  conn_send(w, id, TO_MASTER, bytes, len);
  feed(w, r, i, id); /* replies that came since the round began */
}

static void start_round(world *w, runner *r, uint32_t timeout_ms) {
  client *c = owner(w, r);
  r->st = R_ROUND;
  r->gen++;
  r->pending = w->n;
  r->deadline =
      client_to_global(w, c, client_now(w, c) + (int64_t)timeout_ms * 1000);
  if (!c->listening && hrl_proto_waiter(r->lk) != NULL) {
    listener_start(w, c);
  }
  TRACE(w, "client %d lane %d%s: round %d to %d masters, %u ms", r->client,
        r->lane, r->renewal ? " (renewal)" : "", (int)r->lk->op.round_kind,
        w->n, timeout_ms);
  for (int i = 0; i < w->n; i++) {
    r->node[i] = X_OFF;
    r->conn[i] = -1;
  }
  token_add(w, r->lk->op.token, r->client, r->lane, r->lk->op.ttl_ms);
  if (r->lk->op.round_kind == HRL_ROUND_RELEASE) {
    r->released_to = (1u << w->n) - 1; /* a release goes to every master */
  }
  ev_push(w, r->deadline, EV_RUNNER, r->id, 0, (int64_t)r->gen);
  uint64_t gen = r->gen;
  for (int i = 0; i < w->n && r->gen == gen; i++) {
    int id = pool_take(w, c, i, r->id);
    if (id >= 0) {
      start_node(w, r, i, id);
      continue;
    }
    open_node(w, r, i);
  }
}

static void step_now(world *w, runner *r) {
  client *c = owner(w, r);
  for (;;) {
    hrl_step_info info;
    int before = (int)r->lk->op.phase;
    seam_enter(w, c);
    hrl_step s = hrl_proto_step(r->lk, client_now(w, c), &info);
    seam_leave();
    cov_hit(COV_STEP, before, (int)s, (int)r->lk->op.phase);
    if (s == HRL_STEP_DONE) {
      r->st = R_DONE;
      r->result = info.status;
      r->gen++;
      mutex_give(w, r);
      cov_hit(COV_DONE, (int)r->kind, (int)info.status, r->renewal);
      TRACE(w, "client %d lane %d%s: %s done: %s", r->client, r->lane,
            r->renewal ? " (renewal)" : "",
            r->kind == HRL_OP_ACQUIRE   ? "acquire"
            : r->kind == HRL_OP_RELEASE ? "release"
                                        : "extend",
            hrl_strerror(info.status));
      lane_op_done(w, r);
      return;
    }
    if (s == HRL_STEP_WAIT) {
      if (r->cancel) {
        hrl_proto_cancel(r->lk); /* the next step leaves the queue */
        continue;
      }
      r->st = R_WAIT;
      r->gen++;
      mutex_give(w, r);
      TRACE(w, "client %d lane %d: wait %u ms", r->client, r->lane,
            info.wait_ms);
      ev_push(w,
              client_to_global(w, c,
                               client_now(w, c) + (int64_t)info.wait_ms * 1000),
              EV_RUNNER, r->id, 0, (int64_t)r->gen);
      return;
    }
    start_round(w, r, info.timeout_ms);
    return;
  }
}

void runner_begin(world *w, runner *r, hrl_lock *lk, hrl_op_kind kind,
                  int64_t arg_ms) {
  client *c = owner(w, r);
  r->lk = lk;
  r->kind = kind;
  r->cancel = false;
  r->released_to = 0;
  r->began = w->now;
  r->mutex_wait = 0;
  if (arg_ms != INT64_MIN) { /* else: begun already (a lease's twin) */
    seam_enter(w, c);
    hrl_status st = hrl_proto_begin(lk, kind, arg_ms, client_now(w, c));
    seam_leave();
    if (st != HRL_OK) {
      r->st = R_DONE;
      r->result = st;
      r->gen++;
      cov_hit(COV_DONE, (int)kind, (int)st, r->renewal);
      lane_op_done(w, r);
      return;
    }
  }
  r->st = R_IDLE;
  want_step(w, r);
}

void runner_timer(world *w, runner *r, uint64_t gen) {
  if (gen != r->gen) {
    return;
  }
  if (r->st == R_WAIT) {
    want_step(w, r);
    return;
  }
  if (r->st != R_ROUND) {
    return;
  }
  client *c = owner(w, r);
  char msg[64];
  for (int i = 0; i < w->n && r->gen == gen; i++) {
    int id = r->conn[i];
    if (r->node[i] == X_CONNECTING) {
      snprintf(msg, sizeof msg, "timeout (connecting)");
      seam_enter(w, c);
      hrl_proto_missed(r->lk, (size_t)i, msg);
      seam_leave();
      cov_hit(COV_FAIL, (int)r->lk->op.round_kind, 1, 0);
      conn_close(w, id);
      node_done(w, r, i);
    } else if (r->node[i] == X_ACTIVE) {
      snprintf(msg, sizeof msg, "timeout");
      const char *out = NULL;
      size_t out_len = 0;
      seam_enter(w, c);
      hrl_stream_action a = hrl_stream_expire(w->conns[id].stream, r->lk,
                                              (size_t)i, msg, &out, &out_len);
      seam_leave();
      cov_hit(COV_FAIL, (int)r->lk->op.round_kind, 3, out != NULL);
      if (out != NULL) {
        conn_send(w, id, TO_MASTER, out, out_len);
      }
      act(w, r, i, id, a, NULL, 0);
    }
  }
}

void runner_cancel(world *w, runner *r) {
  r->cancel = true;
  if (r->st == R_WAIT) {
    r->gen++;
    hrl_proto_cancel(r->lk);
    want_step(w, r);
  }
}

void runner_wake(world *w, runner *r) {
  if (r->st == R_WAIT) {
    r->gen++;
    want_step(w, r);
  }
}

runner *runner_by_waiter(world *w, int client_id, const char *token) {
  for (int k = 0; k < w->nrunners; k++) {
    runner *r = w->runners[k];
    if (r->client != client_id || r->lk == NULL ||
        (r->st != R_ROUND && r->st != R_WAIT)) {
      continue;
    }
    const char *t = hrl_proto_waiter(r->lk);
    if (t != NULL && memcmp(t, token, HRL_TOKEN_LEN) == 0) {
      return r;
    }
  }
  return NULL;
}

/* The connection's runner and master, when it is in a round now. */
static runner *user(world *w, int id, int *i) {
  conn *cn = &w->conns[id];
  if (cn->runner < 0) {
    return NULL;
  }
  runner *r = w->runners[cn->runner];
  *i = cn->node;
  if (r->st != R_ROUND || r->conn[*i] != id) {
    return NULL;
  }
  return r;
}

void runner_conn_bytes(world *w, int id) {
  int i;
  runner *r = user(w, id, &i);
  if (r != NULL && r->node[i] == X_ACTIVE) {
    feed(w, r, i, id);
  }
}

void runner_notify_opened(world *w, int id, bool ok) {
  int i;
  runner *r = user(w, id, &i);
  if (r == NULL || r->node[i] != X_CONNECTING) {
    if (ok) {
      pool_put(w, id); /* opened for a round that is over: keep it */
    } else {
      conn_close(w, id);
    }
    return;
  }
  if (ok) {
    start_node(w, r, i, id);
    return;
  }
  seam_enter(w, owner(w, r));
  hrl_proto_fail(r->lk, (size_t)i, HRL_NODE_UNREACHABLE, "connection refused");
  seam_leave();
  cov_hit(COV_FAIL, (int)r->lk->op.round_kind, 0, 0);
  conn_close(w, id);
  node_done(w, r, i);
}

void runner_conn_broken(world *w, int id) {
  conn *cn = &w->conns[id];
  if (cn->idle) {
    pool_remove(w, &w->clients[cn->client], cn->master, id);
    conn_close(w, id);
    return;
  }
  int i;
  runner *r = user(w, id, &i);
  if (r == NULL) {
    conn_close(w, id);
    return;
  }
  seam_enter(w, owner(w, r));
  hrl_proto_fail(r->lk, (size_t)i, HRL_NODE_UNREACHABLE,
                 "connection reset by peer");
  seam_leave();
  cov_hit(COV_FAIL, (int)r->lk->op.round_kind, 4, 0);
  conn_close(w, id);
  node_done(w, r, i);
}
