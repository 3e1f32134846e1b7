/*
 * The network: a connection is two ordered streams of chunks (TCP keeps
 * the order within a connection; nothing orders two connections, so
 * replies and commands on different connections overtake each other
 * freely). What the model lets the network do:
 *   - delay each chunk by net_min..net_max, plus `extra` on a slow link;
 *   - cut a client from a master (a partition): nothing passes until it
 *     heals, then everything queued passes in order (TCP retransmits);
 *     a connect meanwhile waits as well;
 *   - reset a connection: what is queued either way is lost and both ends
 *     learn it (the client after one delay);
 *   - refuse a connect to a master that is down.
 * A client's close is a FIN: the commands it sent still reach the master
 * and run there, their replies go nowhere. A paused master's host still
 * accepts connections (the kernel does), it reads nothing until resumed.
 */
#include <stdlib.h>
#include <string.h>

#include "world.h"

int64_t net_delay(world *w, int client_id, int master_id) {
  int64_t d = sim_rng_range(&w->net_rng, w->sc->net_min_us, w->sc->net_max_us);
  if (client_id >= 0 && w->slow_until[client_id][master_id] > w->now) {
    d += w->slow_extra[client_id][master_id];
  }
  return d;
}

int conn_open(world *w, int client_id, int master_id, conn_role role) {
  if (w->nconns == w->conns_cap) {
    w->conns_cap = w->conns_cap ? 2 * w->conns_cap : 256;
    w->conns = realloc(w->conns, (size_t)w->conns_cap * sizeof *w->conns);
    if (w->conns == NULL) {
      abort();
    }
  }
  int id = w->nconns++;
  conn *c = &w->conns[id];
  memset(c, 0, sizeof *c);
  c->client = client_id;
  c->master = master_id;
  c->role = role;
  c->runner = -1;
  c->owner = -1;
  c->fresh = true;
  if (role == ROLE_LOCK) {
    c->stream = hrl_stream_new();
    if (c->stream == NULL) {
      abort();
    }
  }
  ev_push(w, w->now + net_delay(w, client_id, master_id), EV_SYN, id, 0, 0);
  return id;
}

static void drop_queue(conn_dir *d) {
  d->head = d->tail = NULL; /* the chunks live in the arena */
}

static void schedule_head(world *w, int id, int dir) {
  conn_dir *d = &w->conns[id].dir[dir];
  if (d->head != NULL && !d->scheduled) {
    d->scheduled = true;
    ev_push(w, d->head->at, EV_HEAD, id, dir, 0);
  }
}

void conn_send(world *w, int id, int dir, const char *data, size_t len) {
  conn_send_from(w, id, dir, data, len, w->now);
}

void conn_send_from(world *w, int id, int dir, const char *data, size_t len,
                    int64_t from) {
  conn *c = &w->conns[id];
  if (c->broken || len == 0 || (dir == TO_CLIENT && c->client_closed)) {
    return;
  }
  conn_dir *d = &c->dir[dir];
  chunk *k = arena_alloc(w, sizeof *k + len);
  k->next = NULL;
  k->len = (uint32_t)len;
  memcpy(k->data, data, len);
  int64_t at = from + net_delay(w, c->client, c->master);
  k->at = at > d->last_at ? at : d->last_at;
  d->last_at = k->at;
  if (d->tail != NULL) {
    d->tail->next = k;
  } else {
    d->head = k;
  }
  d->tail = k;
  schedule_head(w, id, dir);
}

void conn_unread(world *w, int id, const char *data, size_t len, int64_t at) {
  conn *c = &w->conns[id];
  conn_dir *d = &c->dir[TO_MASTER];
  chunk *k = arena_alloc(w, sizeof *k + len);
  k->len = (uint32_t)len;
  memcpy(k->data, data, len);
  k->at = at;
  k->next = d->head;
  d->head = k;
  if (d->tail == NULL) {
    d->tail = k;
  }
  d->last_at = at > d->last_at ? at : d->last_at;
  schedule_head(w, id, TO_MASTER);
}

/* The master saw the end of the connection: it forgets it. */
static void server_gone(world *w, int id) {
  conn *c = &w->conns[id];
  if (c->accepted) {
    c->accepted = false;
    master_closed_conn(w, id);
  }
}

void conn_close(world *w, int id) {
  conn *c = &w->conns[id];
  if (c->client_closed) {
    return;
  }
  c->client_closed = true;
  c->idle = false;
  c->runner = -1;
  drop_queue(&c->dir[TO_CLIENT]);
  if (c->dir[TO_MASTER].head == NULL) {
    server_gone(w, id); /* the FIN behind nothing */
  }
}

void conn_reset(world *w, int id) {
  conn *c = &w->conns[id];
  if (c->broken) {
    return;
  }
  TRACE(w, "conn %d (client %d, master %d) reset", id, c->client, c->master);
  c->broken = true;
  drop_queue(&c->dir[TO_MASTER]);
  drop_queue(&c->dir[TO_CLIENT]);
  server_gone(w, id);
  if (!c->client_closed) {
    ev_push(w, w->now + net_delay(w, c->client, c->master), EV_RESET_SEEN, id,
            0, 0);
  }
}

void net_head_due(world *w, int id, int dir) {
  conn *c = &w->conns[id];
  conn_dir *d = &c->dir[dir];
  d->scheduled = false;
  if (c->broken || d->head == NULL) {
    return;
  }
  int64_t cut = w->cut_until[c->client][c->master];
  if (cut > w->now) {
    /* Retransmitted once the link heals: everything behind waits too. */
    d->head->at = cut + net_delay(w, c->client, c->master);
    d->last_at = d->head->at > d->last_at ? d->head->at : d->last_at;
    schedule_head(w, id, dir);
    return;
  }
  const master *m = &w->masters[c->master];
  if (dir == TO_MASTER) {
    if (!m->up || !c->accepted || c->epoch != m->epoch) {
      conn_reset(w, id); /* the server it was talking to is gone */
      return;
    }
    if (m->paused) {
      d->head->at = w->master_paused_until[c->master];
      schedule_head(w, id, dir);
      return;
    }
    if (c->blocked_until > w->now) { /* a WAIT: read on once it returns */
      d->head->at = c->blocked_until;
      schedule_head(w, id, dir);
      return;
    }
  }
  chunk *k = d->head;
  d->head = k->next;
  if (d->head == NULL) {
    d->tail = NULL;
  }
  if (dir == TO_MASTER) {
    master_receive(w, id, k->data, k->len);
    c = &w->conns[id]; /* the master may have opened nothing, but be safe */
    if (c->client_closed && c->dir[TO_MASTER].head == NULL) {
      server_gone(w, id);
    }
  } else if (!c->client_closed) {
    if (c->rlen + k->len > c->rcap) {
      c->rcap = (c->rlen + k->len) * 2;
      c->rbuf = realloc(c->rbuf, c->rcap);
      if (c->rbuf == NULL) {
        abort();
      }
    }
    memcpy(c->rbuf + c->rlen, k->data, k->len);
    c->rlen += k->len;
    if (c->role == ROLE_LOCK) {
      runner_conn_bytes(w, id);
    } else {
      listener_bytes(w, id);
    }
  }
  if (id < w->nconns && !w->conns[id].broken) {
    schedule_head(w, id, dir);
  }
}

void net_syn(world *w, int id) {
  conn *c = &w->conns[id];
  if (c->broken) {
    return;
  }
  int64_t cut = w->cut_until[c->client][c->master];
  if (cut > w->now) {
    ev_push(w, cut + net_delay(w, c->client, c->master), EV_SYN, id, 0, 0);
    return;
  }
  master *m = &w->masters[c->master];
  if (c->client_closed) {
    return; /* given up: the handshake ends in a FIN, nothing is served */
  }
  if (!m->up) {
    c->broken = true; /* refused */
  } else {
    c->accepted = true;
    c->epoch = m->epoch;
  }
  ev_push(w, w->now + net_delay(w, c->client, c->master), EV_OPENED, id, 0, 0);
}

void net_opened(world *w, int id) {
  conn *c = &w->conns[id];
  if (c->client_closed) {
    return;
  }
  bool ok = !c->broken;
  c->open = ok;
  if (c->role == ROLE_LOCK) {
    runner_notify_opened(w, id, ok);
  } else {
    listener_opened(w, id, ok);
  }
}

void net_reset_seen(world *w, int id) {
  conn *c = &w->conns[id];
  if (c->client_closed) {
    return;
  }
  if (c->role == ROLE_LOCK) {
    runner_conn_broken(w, id);
  } else {
    listener_broken(w, id);
  }
}
