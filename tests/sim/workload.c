/*
 * The clients and what they do. A client is one process: its
 * configuration (hrl_config: options, masters, channel, saved places in
 * line), its connections, its subscribers and a clock of its own. Its
 * lanes are threads: each runs its sessions one after the other:
 *
 *   acquire (wait, maybe cancelled, or the lane vanishes while waiting)
 *   -> hold: fenced writes (each after checking the lock is held, maybe
 *      with the whole process frozen between the check and the write),
 *      explicit extends, a lease's renewals meanwhile
 *   -> release (once more if it did not finish), or abandon (the holder
 *      dies: its keys expire)
 *
 * What the holder believes (held, and until when, on the global clock) is
 * tracked here for check.c: from the grant to the release's start, the
 * end of the validity, or the loss.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

enum { ACT_START, ACT_HOLD, ACT_CANCEL };
#define LANE_EV(lane, act) ((lane)*8 + (act))

static lane *lane_of(world *w, int c, int l) {
  return &w->clients[c].lanes[l];
}

static const sim_session *session_of(const world *w, const lane *l) {
  return &w->sc->session[l->session];
}

static void schedule(world *w, lane *l, int act, int64_t at) {
  ev_push(w, at, EV_LANE, l->client, LANE_EV(l->id, act), (int64_t)++l->gen);
}

static void name_of(int name, char out[4]) {
  out[0] = 'L';
  out[1] = (char)('0' + name);
  out[2] = '\0';
}

static void client_init(world *w, client *c, int id) {
  const sim_scenario *sc = w->sc;
  memset(c, 0, sizeof *c);
  c->id = id;
  c->rate = sc->client_rate[id];
  c->offset_us = sc->client_offset_us[id];
  c->wall_us = sc->client_wall_us[id];
  sim_rng_init(&c->rng, sc->seed, 2, (uint64_t)id);
  char urls[SIM_MASTERS_MAX][64];
  const char *list[SIM_MASTERS_MAX];
  for (int i = 0; i < sc->masters; i++) {
    snprintf(urls[i], sizeof urls[i],
             sc->handshake ? "redis://:pw@m%d:%d/1" : "redis://m%d:%d", i,
             7000 + i);
    list[i] = urls[i];
  }
  hrl_options o;
  hrl_options_init(&o);
  o.timeout_ms = sc->timeout_ms;
  o.connect_timeout_ms = sc->connect_timeout_ms;
  o.retry_delay_ms = sc->retry_delay_ms;
  o.retry_jitter_ms = sc->retry_jitter_ms;
  o.drift_factor = sc->drift_factor;
  o.lock.sync_replicas = (uint32_t)sc->sync_replicas;
  o.lock.sync_aof = sc->sync_aof;
  o.restart_guard_ms = sc->restart_guard_ms;
  o.key_prefix = "sim:";
  o.key_prefix_len = 4;
  char detail[HRL_DETAIL_MAX];
  seam_enter(w, c);
  hrl_status st = hrl_config_init(&c->cfg, list, (size_t)sc->masters, &o,
                                  sim_entropy, c, detail, sizeof detail);
  seam_leave();
  if (st != HRL_OK) {
    sim_violation(w, V_CRASH, "client %d: %s: %s", id, hrl_strerror(st),
                  detail);
    return;
  }
  c->cfg_ok = true;
  c->mutex_owner = -1;
  for (int i = 0; i < SIM_MASTERS_MAX; i++) {
    c->sub[i].conn = -1;
  }
}

/* The lane's next session from l->next on, or -1. */
static int next_session(const world *w, lane *l) {
  for (; l->next < w->sc->sessions; l->next++) {
    const sim_session *s = &w->sc->session[l->next];
    if (s->client == l->client && s->lane == l->id) {
      return l->next++;
    }
  }
  return -1;
}

static void lane_finished(world *w, lane *l) {
  l->st = L_GONE;
  w->lanes_done++;
}

/* Idle: on to the next session, or done. */
static void lane_next(world *w, lane *l) {
  l->st = L_IDLE;
  l->session = next_session(w, l);
  if (l->session < 0) {
    lane_finished(w, l);
    return;
  }
  int64_t at = w->sc->session[l->session].at_us;
  schedule(w, l, ACT_START, at > w->now ? at : w->now);
}

void workload_start(world *w) {
  for (int c = 0; c < w->sc->clients && !w->stop; c++) {
    client *cl = &w->clients[c];
    client_init(w, cl, c);
    for (int k = 0; k < w->sc->lanes; k++) {
      lane *l = &cl->lanes[k];
      l->client = c;
      l->id = k;
      l->session = -1;
      runner_init(w, &l->run, c, k, false);
      runner_init(w, &l->renew, c, k, true);
      w->lanes_total++;
      lane_next(w, l);
    }
  }
}

/* The lock's own view: held with validity left, not lost. */
static void sync_belief(world *w, lane *l) {
  client *c = &w->clients[l->client];
  hrl_lock *lk = l->lk;
  bool lost = lk->renewal != NULL && lk->renewal->lost;
  if (!lk->held || lost) {
    l->believes = false;
    return;
  }
  int64_t until = client_to_global(w, c, lk->valid_until_us);
  bool longer = until > l->valid_until;
  l->valid_until = until;
  if (longer && l->believes) {
    check_grant(w, l, false);
  }
}

static void end_session(world *w, lane *l) {
  l->believes = false;
  if (l->renew_out) {
    l->renew_lk = l->lk; /* freed when its renewal is back */
  } else {
    hrl_lock_destroy(l->lk);
  }
  l->lk = NULL;
  lane_next(w, l);
}

static void start_session(world *w, lane *l) {
  client *c = &w->clients[l->client];
  const sim_session *s = session_of(w, l);
  hrl_lock_options lo = c->cfg.opts.lock;
  lo.ttl_ms = s->ttl_ms;
  lo.fenced = s->fenced;
  lo.auto_renew = s->lease;
  lo.max_hold_ms = s->lease ? s->max_hold_ms : 0;
  char name[4], detail[HRL_DETAIL_MAX];
  name_of(s->name, name);
  hrl_status st = hrl_lock_create(&c->cfg, NULL, name, strlen(name), &lo,
                                  &l->lk, detail, sizeof detail);
  if (st != HRL_OK) {
    sim_violation(w, V_CRASH, "lock: %s: %s", hrl_strerror(st), detail);
    return;
  }
  l->st = L_ACQUIRING;
  l->call_start = w->now;
  TRACE(w, "client %d lane %d: acquire %s ttl %u wait %lld%s%s", l->client,
        l->id, name, s->ttl_ms, (long long)s->wait_ms,
        s->fenced ? " fenced" : "", s->lease ? " lease" : "");
  if (s->cancel_ms >= 0) {
    ev_push(w, w->now + s->cancel_ms * 1000, EV_LANE, l->client,
            LANE_EV(l->id, ACT_CANCEL), l->session);
  }
  runner_begin(w, &l->run, l->lk, HRL_OP_ACQUIRE, s->wait_ms);
}

static void schedule_hold(world *w, lane *l) {
  const sim_session *s = session_of(w, l);
  int total = s->writes + s->extends;
  int done = total - l->writes_left - l->extends_left;
  int64_t at = l->held_since + s->hold_ms * 1000 * (done + 1) / (total + 1);
  schedule(w, l, ACT_HOLD, at);
}

/* held_back: the protocol said WAIT although the renewal was due (the
 * holder's own call is out on the lock): look again a little later, as
 * the built-in driver's renewer does (STALL_RETRY_US), not at once. */
static void schedule_renewal(world *w, lane *l, bool held_back) {
  if (l->renew_out || l->lk == NULL || !hrl_lease_is(l->lk)) {
    return;
  }
  int64_t due = hrl_proto_renew_due(l->lk);
  if (due == INT64_MAX) {
    return;
  }
  client *c = &w->clients[l->client];
  int64_t at = client_to_global(w, c, due);
  if (held_back && at <= w->now) {
    at = w->now + 10000;
  }
  ev_push(w, at, EV_RENEW, l->client, l->id, (int64_t)++l->renew_gen);
}

static void fenced_write_now(world *w, lane *l) {
  client *c = &w->clients[l->client];
  const sim_session *s = session_of(w, l);
  hrl_lock *lk = l->lk;
  bool lost = lk->renewal != NULL && lk->renewal->lost;
  if (!lk->held || lost || lk->valid_until_us <= client_now(w, c)) {
    return; /* the holder checks first: not held, no write */
  }
  int64_t send_at = w->now;
  if (s->stall_ms > 0 && l->writes_left == s->writes - 1) {
    client_pause(w, l->client, s->stall_ms * 1000);
    send_at = c->paused_until;
  }
  if (w->nwrites == w->writes_cap) {
    w->writes_cap = w->writes_cap ? 2 * w->writes_cap : 64;
    w->writes = realloc(w->writes, (size_t)w->writes_cap * sizeof *w->writes);
    if (w->writes == NULL) {
      abort();
    }
  }
  fenced_write *fw = &w->writes[w->nwrites];
  fw->name = s->name;
  fw->fence = lk->fence;
  fw->grant_seq = l->grant_seq;
  fw->client = l->client;
  fw->lane = l->id;
  ev_push(w, send_at + net_delay(w, -1, 0), EV_STORE, l->client, l->id,
          w->nwrites++);
}

static void hold_step(world *w, lane *l) {
  const sim_session *s = session_of(w, l);
  if (l->writes_left > 0) {
    l->writes_left--;
    if (s->fenced) {
      fenced_write_now(w, l);
    }
    schedule_hold(w, l);
    return;
  }
  if (l->extends_left > 0) {
    l->extends_left--;
    l->st = L_EXTENDING;
    l->call_start = w->now;
    runner_begin(w, &l->run, l->lk, HRL_OP_EXTEND, s->extend_ttl_ms);
    return;
  }
  if (s->abandon) {
    TRACE(w, "client %d lane %d: the holder dies", l->client, l->id);
    end_session(w, l);
    return;
  }
  l->believes = false; /* from the release's start, it is not ours */
  l->st = L_RELEASING;
  l->call_start = w->now;
  l->release_retried = false;
  runner_begin(w, &l->run, l->lk, HRL_OP_RELEASE, 0);
}

void lane_event(world *w, int c, int packed, uint64_t gen) {
  lane *l = lane_of(w, c, packed / 8);
  int act = packed % 8;
  if (act == ACT_CANCEL) {
    if (l->st != L_ACQUIRING || (uint64_t)l->session != gen) {
      return;
    }
    const sim_session *s = session_of(w, l);
    if (s->vanish) {
      TRACE(w, "client %d lane %d: vanishes while acquiring", c, l->id);
      runner_abandon(w, &l->run); /* its timers and replies go nowhere */
      l->believes = false;
      lane_finished(w, l);
      return;
    }
    TRACE(w, "client %d lane %d: cancel", c, l->id);
    runner_cancel(w, &l->run);
    return;
  }
  if (gen != l->gen) {
    return;
  }
  if (act == ACT_START && l->st == L_IDLE) {
    start_session(w, l);
  } else if (act == ACT_HOLD && l->st == L_HOLDING) {
    hold_step(w, l);
  }
}

static void acquired(world *w, lane *l) {
  const sim_session *s = session_of(w, l);
  memcpy(l->token, l->lk->token, sizeof l->token);
  l->believes = true;
  l->valid_until = 0;
  l->held_since = w->now;
  l->grant_seq = ++w->grant_seq;
  l->fence = l->lk->fence;
  w->res->grants++;
  w->res->fenced_grants += s->fenced;
  sync_belief(w, l);
  check_grant(w, l, true);
  l->st = L_HOLDING;
  l->writes_left = s->writes;
  l->extends_left = s->extends;
  if (l->run.cancel) {
    /* cancelled while its round was out, and it won: give it back */
    l->writes_left = l->extends_left = 0;
    hold_step(w, l);
    return;
  }
  schedule_renewal(w, l, false);
  schedule_hold(w, l);
}

void lane_op_done(world *w, runner *r) {
  lane *l = lane_of(w, r->client, r->lane);
  client *c = &w->clients[r->client];
  if (r->renewal) {
    check_mutex_wait(w, r);
    l->renew_out = false;
    hrl_lock *lk = l->renew_lk != NULL ? l->renew_lk : l->lk;
    seam_enter(w, c);
    hrl_status st = hrl_proto_renew_end(lk, client_now(w, c));
    seam_leave();
    cov_hit(COV_RENEW, 10 + (int)st, 0, 0);
    if (l->renew_lk != NULL) {
      hrl_lock_destroy(l->renew_lk); /* its session is over */
      l->renew_lk = NULL;
      return;
    }
    if (l->st == L_GONE) {
      return;
    }
    if (l->believes) {
      sync_belief(w, l);
    }
    schedule_renewal(w, l, false);
    return;
  }
  const sim_session *s = session_of(w, l);
  hrl_status st = r->result;
  switch (l->st) {
  case L_ACQUIRING:
    check_deadline(w, l, r,
                   s->wait_ms + 3 * (int64_t)w->sc->timeout_ms +
                       (int64_t)w->sc->connect_timeout_ms);
    if (st == HRL_OK) {
      acquired(w, l);
      return;
    }
    check_call_failed(w, l, r, l->lk->op.token);
    end_session(w, l);
    return;
  case L_EXTENDING:
    check_deadline(w, l, r, (int64_t)w->sc->timeout_ms);
    l->st = L_HOLDING;
    if (l->believes) {
      sync_belief(w, l);
    }
    if (l->lk->held) {
      schedule_hold(w, l);
      /* As the built-in renewer does when the holder's call ends
       * (api/renewer.c, hrl_lease_leave): the extend moved the validity,
       * and with it when the next renewal is due. */
      schedule_renewal(w, l, false);
    } else {
      l->extends_left = l->writes_left = 0;
      hold_step(w, l);
    }
    return;
  case L_RELEASING:
    check_deadline(w, l, r, (int64_t)w->sc->timeout_ms);
    if (st != HRL_OK && st != HRL_ENOTOWNED && st != HRL_ELOST &&
        l->lk->release_pending && !l->release_retried) {
      l->release_retried = true; /* once more, to finish it */
      l->call_start = w->now;
      runner_begin(w, &l->run, l->lk, HRL_OP_RELEASE, 0);
      return;
    }
    end_session(w, l);
    return;
  default:
    return;
  }
}

void lane_renew_due(world *w, int c, int k, uint64_t gen) {
  lane *l = lane_of(w, c, k);
  if (gen != l->renew_gen || l->renew_out || l->lk == NULL ||
      (l->st != L_HOLDING && l->st != L_EXTENDING)) {
    return;
  }
  client *cl = &w->clients[c];
  hrl_lock *twin = NULL;
  seam_enter(w, cl);
  hrl_renew what = hrl_proto_renew_begin(l->lk, client_now(w, cl), &twin);
  seam_leave();
  cov_hit(COV_RENEW, (int)what, 0, 0);
  switch (what) {
  case HRL_RENEW_ROUND:
    l->renew_out = true;
    runner_begin(w, &l->renew, twin, HRL_OP_EXTEND, INT64_MIN);
    return;
  case HRL_RENEW_LOST:
    TRACE(w, "client %d lane %d: lease lost", c, k);
    l->believes = false;
    return;
  case HRL_RENEW_WAIT:
    schedule_renewal(w, l, true);
    return;
  default:
    return;
  }
}

void client_pause(world *w, int c, int64_t dur) {
  client *cl = &w->clients[c];
  int64_t until = w->now + dur;
  TRACE(w, "client %d frozen for %.1f ms", c, (double)dur / 1000.0);
  cl->paused = true;
  cl->paused_until = until > cl->paused_until ? until : cl->paused_until;
}

void store_arrive(world *w, int c, int k, int64_t index) {
  const fenced_write *fw = &w->writes[index];
  store *s = &w->stores[fw->name];
  bool older = fw->fence < s->last_fence;
  TRACE(w, "store L%d: write of client %d lane %d fence %llu: %s", fw->name, c,
        k, (unsigned long long)fw->fence, older ? "STALEFENCE" : "taken");
  if (!older) {
    if (fw->grant_seq < s->newest_attempt) {
      sim_violation(w, V_STALE_WRITE,
                    "the store of L%d took fence %llu from grant #%llu after "
                    "grant #%llu had written",
                    fw->name, (unsigned long long)fw->fence,
                    (unsigned long long)fw->grant_seq,
                    (unsigned long long)s->newest_attempt);
    }
    s->last_fence = fw->fence;
    w->res->writes_accepted++;
  } else {
    w->res->writes_refused++;
  }
  if (fw->grant_seq > s->newest_attempt) {
    s->newest_attempt = fw->grant_seq;
  }
}
