/*
 * The invariants, checked as the world runs (docs/RELIABILITY.md,
 * "Simulation", states each with its assumptions):
 *   exclusion    when a hold starts or its validity grows, no other holder
 *                of the name is within its validity (global time, 2 us
 *                for the rounding of clock conversions);
 *   fence order  a fenced grant's fence is above every earlier grant's;
 *   stale write  the store never takes a write from a hold granted before
 *                one that has written already (workload.c);
 *   fence quorum a fenced grant with fence T had a quorum of masters whose
 *                counter was T at a moment their key held its token
 *                (docs/SAFETY.md, Lemma 2 and "Overlapping acquires": what
 *                keeps two fenced acquires whose calls overlap from
 *                sharing a fence; the schedule that shows that sharing
 *                is rare, this is seen at every fenced grant);
 *   key TTL      every write of a lock key leaves it with a TTL no longer
 *                than the TTL its token's call asked for;
 *   left behind  when a call fails, a master whose key holds its token
 *                was sent a release by that call;
 *   queue TTL    the queue's keys always carry a TTL of at most the lease;
 *   liveness     while nothing is faulty, the lock does not stay free for
 *                long (below) while a live waiter waits;
 *   deadline     a call returns within its bound (wait + 3 timeouts for an
 *                acquire: a try, its fence round and the leave; one
 *                timeout for release and extend), unless its process was
 *                frozen meanwhile.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/sibling_key.h"
#include "world.h"

#define CLOCK_SLACK_US 2

static int lane_name(const world *w, const lane *l) {
  return l->session >= 0 ? w->sc->session[l->session].name : -1;
}

/* Counts the masters that witnessed lane l's fence: their counter was the
 * fence while their key held l's token (check_counter). */
static void check_fence_quorum(world *w, const lane *l, int name) {
  const token_info *t = token_find(w, l->token);
  int witnesses = 0, quorum = w->n / 2 + 1;
  for (int i = 0; t != NULL && i < w->n; i++) {
    witnesses += t->counted_hi[i] != 0 && t->counted_lo[i] <= l->fence &&
                 l->fence <= t->counted_hi[i];
  }
  if (witnesses < quorum) {
    sim_violation(w, V_FENCE_QUORUM,
                  "L%d: grant #%llu (client %d lane %d) has fence %llu, which "
                  "%d of %d masters counted while their key held its token "
                  "(%d needed)",
                  name, (unsigned long long)l->grant_seq, l->client, l->id,
                  (unsigned long long)l->fence, witnesses, w->n, quorum);
  }
}

void check_grant(world *w, lane *l, bool new_hold) {
  int name = lane_name(w, l);
  for (int c = 0; c < w->sc->clients; c++) {
    for (int k = 0; k < w->sc->lanes; k++) {
      lane *o = &w->clients[c].lanes[k];
      if (o == l || !o->believes || lane_name(w, o) != name) {
        continue;
      }
      if (o->valid_until > w->now + CLOCK_SLACK_US) {
        sim_violation(w, V_EXCLUSION,
                      "L%d: client %d lane %d %s while client %d lane %d "
                      "holds it for %.3f ms more",
                      name, l->client, l->id,
                      new_hold ? "is granted" : "is extended", c, k,
                      (double)(o->valid_until - w->now) / 1000.0);
        return;
      }
    }
  }
  if (new_hold && w->sc->session[l->session].fenced) {
    if (l->fence <= w->last_fence[name]) {
      sim_violation(w, V_FENCE_ORDER,
                    "L%d: grant #%llu (client %d lane %d) has fence %llu, "
                    "after fence %llu",
                    name, (unsigned long long)l->grant_seq, l->client, l->id,
                    (unsigned long long)l->fence,
                    (unsigned long long)w->last_fence[name]);
      return;
    }
    w->last_fence[name] = l->fence;
    check_fence_quorum(w, l, name);
  }
}

/* ---- tokens ---- */

static uint64_t token_hash(const char *t) {
  uint64_t h = 1469598103934665603ULL;
  for (int i = 0; i < HRL_TOKEN_LEN; i++) {
    h = (h ^ (unsigned char)t[i]) * 1099511628211ULL;
  }
  return h;
}

token_info *token_find(world *w, const char *token) {
  size_t i = token_hash(token) % SIM_TOKENS_MAX;
  for (size_t probe = 0; probe < SIM_TOKENS_MAX; probe++) {
    token_info *t = &w->tokens[(i + probe) % SIM_TOKENS_MAX];
    if (t->gen != w->token_gen) {
      return NULL;
    }
    if (memcmp(t->token, token, HRL_TOKEN_LEN) == 0) {
      return t;
    }
  }
  return NULL;
}

token_info *token_add(world *w, const char *token, int client_id, int lane_id,
                      uint32_t ttl_ms) {
  token_info *t = token_find(w, token);
  if (t == NULL) {
    size_t i = token_hash(token) % SIM_TOKENS_MAX;
    for (size_t probe = 0; probe < SIM_TOKENS_MAX && t == NULL; probe++) {
      token_info *s = &w->tokens[(i + probe) % SIM_TOKENS_MAX];
      if (s->gen != w->token_gen) {
        t = s;
      }
    }
    if (t == NULL) {
      sim_violation(w, V_CRASH, "more tokens than the model keeps");
      return NULL;
    }
    t->gen = w->token_gen;
    memcpy(t->token, token, HRL_TOKEN_LEN);
    t->ttl_ms = 0;
    memset(t->counted_lo, 0, sizeof t->counted_lo);
    memset(t->counted_hi, 0, sizeof t->counted_hi);
  }
  t->client = client_id;
  t->lane = lane_id;
  t->failed = false;
  if (ttl_ms > t->ttl_ms) {
    t->ttl_ms = ttl_ms;
  }
  return t;
}

static bool is_counter(const sim_key *k) {
  return k->name_len > 6 && memcmp(k->name + k->name_len - 6, ":fence", 6) == 0;
}

void check_write(world *w, master *m, sim_key *k) {
  if (is_counter(k)) {
    return;
  }
  token_info *t = k->str_len == HRL_TOKEN_LEN ? token_find(w, k->str) : NULL;
  if (t == NULL) {
    sim_violation(w, V_KEY_TTL, "master %d: %.*s holds %.*s, no call's token",
                  m->id, (int)k->name_len, k->name, (int)k->str_len, k->str);
    return;
  }
  int64_t pttl = ks_pttl(w, m, k);
  if (pttl < 0 || pttl > (int64_t)t->ttl_ms) {
    sim_violation(w, V_KEY_TTL,
                  "master %d: %.*s (client %d lane %d's token %.8s) has PTTL "
                  "%lld, its call's TTL is %u",
                  m->id, (int)k->name_len, k->name, t->client, t->lane,
                  t->token, (long long)pttl, t->ttl_ms);
  }
}

/* A fence counter took a value (an INCR, or the fence script's 1): when
 * its name's key holds a call's token there, that token's witness. */
void check_counter(world *w, master *m, const sim_key *counter) {
  if (counter == NULL || counter->str_len == 0 ||
      counter->str_len >= KEY_STR_MAX) {
    return;
  }
  char lock_key[8] = "sim:L0", sibling[HRL_SIBLING_KEY_MAX(8, 8)];
  for (int name = 0; name < w->sc->names; name++) {
    lock_key[5] = (char)('0' + name);
    size_t len = hrl_sibling_key(lock_key, 6, HRL_FENCE_SUFFIX,
                                 sizeof HRL_FENCE_SUFFIX - 1, sibling);
    if (len != counter->name_len || memcmp(sibling, counter->name, len) != 0) {
      continue;
    }
    const sim_key *k = ks_get(w, m, lock_key, 6);
    token_info *t =
        k != NULL && k->type == KT_STRING && k->str_len == HRL_TOKEN_LEN
            ? token_find(w, k->str)
            : NULL;
    if (t == NULL) {
      return;
    }
    char digits[KEY_STR_MAX];
    memcpy(digits, counter->str, counter->str_len);
    digits[counter->str_len] = '\0';
    uint64_t v = strtoull(digits, NULL, 10);
    uint64_t *lo = &t->counted_lo[m->id], *hi = &t->counted_hi[m->id];
    *lo = *hi == 0 || v < *lo ? v : *lo;
    *hi = v > *hi ? v : *hi;
    return;
  }
}

void check_queue(world *w, master *m, sim_key *k) {
  if (k == NULL) {
    return;
  }
  int64_t pttl = ks_pttl(w, m, k);
  uint32_t lease = w->clients[0].cfg.lease_ms;
  if (pttl < 0 || pttl > (int64_t)lease) {
    sim_violation(w, V_QUEUE_TTL, "master %d: %.*s has PTTL %lld (lease %u)",
                  m->id, (int)k->name_len, k->name, (long long)pttl, lease);
  }
}

void check_call_failed(world *w, lane *l, runner *r, const char *token) {
  if (token[0] == '\0') {
    return; /* cancelled before a round */
  }
  token_info *t = token_find(w, token);
  if (t != NULL) {
    t->failed = true;
  }
  for (int i = 0; i < w->n; i++) {
    master *m = &w->masters[i];
    sim_key *k = ks_get(w, m, l->lk->key, l->lk->key_len);
    if (k == NULL || k->type != KT_STRING || k->str_len != HRL_TOKEN_LEN ||
        memcmp(k->str, token, HRL_TOKEN_LEN) != 0) {
      continue;
    }
    if (!(r->released_to & (1u << i))) {
      sim_violation(w, V_LEFT_BEHIND,
                    "client %d lane %d's acquire failed (%s) leaving its key "
                    "on master %d (PTTL %lld) with no release sent there",
                    l->client, l->id, hrl_strerror(r->result), i,
                    (long long)ks_pttl(w, m, k));
      return;
    }
  }
}

void check_mutex_wait(world *w, runner *r) {
  /* The holder's calls (release, extend) and renewals only: issue 24
   * wants them never to wait behind other locks' waiting rounds. */
  if (r->kind != HRL_OP_ACQUIRE && r->mutex_wait > w->res->max_mutex_wait) {
    w->res->max_mutex_wait = r->mutex_wait;
  }
}

void check_deadline(world *w, lane *l, runner *r, int64_t bound_ms) {
  const client *c = &w->clients[l->client];
  if (c->paused_until > l->call_start) {
    return; /* frozen during the call: no bound holds */
  }
  /* Time waiting for the client's mutex behind other locks' rounds (the
   * serial driver) is not the protocol's: counted apart (issue 24). */
  int64_t took = w->now - l->call_start - r->mutex_wait;
  check_mutex_wait(w, r);
  int64_t bound = (int64_t)((double)bound_ms * 1000.0 / c->rate) + 1000;
  if (took > bound) {
    sim_violation(w, V_DEADLINE,
                  "client %d lane %d: %s took %.3f ms, bound %lld ms",
                  l->client, l->id,
                  r->kind == HRL_OP_ACQUIRE   ? "acquire"
                  : r->kind == HRL_OP_RELEASE ? "release"
                                              : "extend",
                  (double)took / 1000.0, (long long)bound_ms);
  }
}

/* ---- liveness ---- */

static bool live_waiter(const world *w, const lane *l) {
  const client *c = &w->clients[l->client];
  return l->st == L_ACQUIRING && !c->paused &&
         (l->run.st == R_WAIT || l->run.st == R_ROUND) &&
         hrl_proto_waiter(l->lk) != NULL;
}

/* Whether the name is free for its waiters: nobody believes they hold
 * it, and every master's key is absent or reserved for a live waiter. */
static bool name_free(world *w, int name, const char *key, size_t key_len) {
  for (int c = 0; c < w->sc->clients; c++) {
    for (int k = 0; k < w->sc->lanes; k++) {
      const lane *l = &w->clients[c].lanes[k];
      if (lane_name(w, l) == name && l->believes) {
        return false;
      }
    }
  }
  for (int i = 0; i < w->n; i++) {
    sim_key *k = ks_get(w, &w->masters[i], key, key_len);
    if (k == NULL) {
      continue;
    }
    token_info *t = k->str_len == HRL_TOKEN_LEN ? token_find(w, k->str) : NULL;
    if (t == NULL) {
      return false;
    }
    const lane *owner = &w->clients[t->client].lanes[t->lane];
    if (!live_waiter(w, owner) ||
        memcmp(owner->lk->op.token, k->str, HRL_TOKEN_LEN) != 0) {
      return false;
    }
  }
  return true;
}

void check_liveness(world *w) {
  const sim_scenario *sc = w->sc;
  int64_t gap = (int64_t)sc->retry_delay_ms + sc->retry_jitter_ms +
                2 * (int64_t)sc->timeout_ms;
  int64_t bound = (6 * gap + 20) * 1000;
  bool calm = w->active_faults == 0;
  for (int c = 0; calm && c < sc->clients; c++) {
    calm = !w->clients[c].paused;
  }
  for (int name = 0; name < sc->names; name++) {
    char key[8] = "sim:L0";
    key[5] = (char)('0' + name);
    const lane *waiter = NULL;
    for (int c = 0; c < sc->clients && waiter == NULL; c++) {
      for (int k = 0; k < sc->lanes; k++) {
        const lane *l = &w->clients[c].lanes[k];
        if (lane_name(w, l) == name && live_waiter(w, l)) {
          waiter = l;
          break;
        }
      }
    }
    if (!calm || waiter == NULL || !name_free(w, name, key, 6)) {
      w->free_since[name] = -1;
      continue;
    }
    if (w->free_since[name] < 0) {
      w->free_since[name] = w->now;
      continue;
    }
    double part = (double)(w->now - w->free_since[name]) / (double)bound;
    if (part > w->res->max_free_part) {
      w->res->max_free_part = part;
    }
    if (w->now - w->free_since[name] <= bound) {
      continue;
    }
    /* Free that long: was one waiter there all along, with time left? */
    for (int c = 0; c < sc->clients; c++) {
      for (int k = 0; k < sc->lanes; k++) {
        const lane *l = &w->clients[c].lanes[k];
        const sim_session *s = l->session >= 0 ? &sc->session[l->session] : 0;
        if (s == NULL || s->name != name || !live_waiter(w, l) ||
            l->call_start > w->free_since[name] ||
            l->call_start + s->wait_ms * 1000 < w->now) {
          continue;
        }
        sim_violation(w, V_LIVENESS,
                      "L%d free for %.1f ms (bound %.1f) while client %d lane "
                      "%d waits",
                      name, (double)(w->now - w->free_since[name]) / 1000.0,
                      (double)bound / 1000.0, c, k);
        return;
      }
    }
  }
}
