/*
 * The scripts a master runs, modelled by what docs/DESIGN.md (section 3)
 * says each does, one row per script keyed by its SHA1, as EVALSHA finds
 * it: a master knows a script once an EVAL of its text ran there, and
 * forgets every script on SCRIPT FLUSH and on a restart (NOSCRIPT then).
 * A script runs atomically: nothing else happens on its master meanwhile.
 * The text of each (core/src/proto/resp.h) is what EVAL is recognised by;
 * the model does not interpret Lua.
 *
 * The model's own mutants (main.c --mutant) live here: a release that
 * deletes whatever the key holds, a fence script that raises the counter
 * without our key, queue keys left without their PEXPIRE, a hand-off
 * heard of that keeps the window's PX instead of the waiter's ttl.
 */
#include <stdio.h>
#include <string.h>

#include "proto/resp.h"
#include "world.h"

typedef void (*script_fn)(world *w, master *m, const sim_args *a, int keys,
                          sim_reply *out);

static bool is_token(const sim_args *a, int i) {
  return i < a->argc && a->len[i] == HRL_TOKEN_LEN;
}

/* GET of a string key; *wrong when it holds another type. */
static sim_key *get_string(world *w, master *m, const sim_args *a, int i,
                           bool *wrong) {
  sim_key *k = ks_get(w, m, a->argv[i], a->len[i]);
  *wrong = k != NULL && k->type != KT_STRING;
  return *wrong ? NULL : k;
}

static bool holds(const sim_key *k, const char *token) {
  return k != NULL && k->str_len == HRL_TOKEN_LEN &&
         memcmp(k->str, token, HRL_TOKEN_LEN) == 0;
}

static bool mutant(const world *w, sim_model_mutant which) {
  return w->opts->model_mutant == which;
}

/* ---- the queue script (release r, try t, step aside a) ---- */

typedef struct queue_ctx {
  world *w;
  master *m;
  const sim_args *a;
  int k, q, wk; /* argument indexes of the three keys */
  int argv1;    /* ... and of ARGV[1] */
  const char *t;
  int64_t now;
  /* What a release or step aside reports (for the observers): entries
   * found dead by head(), and 2 once the key was handed to a waiter. */
  long long dead, handed;
} queue_ctx;

static sim_key *key_at(queue_ctx *x, int i, key_type type, bool create) {
  sim_key *k = ks_get(x->w, x->m, x->a->argv[i], x->a->len[i]);
  if (k == NULL && create) {
    k = ks_create(x->w, x->m, x->a->argv[i], x->a->len[i], type);
  }
  return k;
}

static void drop(queue_ctx *x, const char *h) {
  sim_key *q = key_at(x, x->q, KT_ZSET, false);
  sim_key *wk = key_at(x, x->wk, KT_HASH, false);
  if (q != NULL) {
    ks_zrem(q, h);
  }
  if (wk != NULL) {
    ks_hdel(wk, h);
  }
}

typedef struct waiter {
  char token[HRL_TOKEN_LEN];
  int64_t window;
  char channel[HRL_CHANNEL_MAX + 1];
  size_t channel_len;
  int64_t ttl; /* the "\t" ttl after the channel (a waiter that takes a
                  hand-off without a claim), else -1 */
} waiter;

/* "\t<digits>" at the end of the channel, as string.match(ch,
 * "^(.+)\t(%d+)$"): the channel is cut there and *ttl is the number. */
static bool split_ttl(waiter *h) {
  size_t end = h->channel_len, p = end;
  while (p > 0 && h->channel[p - 1] >= '0' && h->channel[p - 1] <= '9') {
    p--;
  }
  if (p == end || p < 2 || h->channel[p - 1] != '\t') {
    return false;
  }
  h->ttl = 0;
  for (size_t k = p; k < end; k++) {
    h->ttl = h->ttl * 10 + (h->channel[k] - '0');
  }
  h->channel_len = p - 1;
  return true;
}

/* "<expiry> <window> <channel>", as string.match(v, "^(%d+) (%d+) (.+)$") */
static bool parse_entry(const hfield *f, int64_t *expiry, waiter *out) {
  if (f == NULL) {
    return false;
  }
  const char *p = f->value, *end = f->value + f->value_len;
  int64_t v[2];
  for (int n = 0; n < 2; n++) {
    if (p == end || *p < '0' || *p > '9') {
      return false;
    }
    v[n] = 0;
    while (p < end && *p >= '0' && *p <= '9') {
      v[n] = v[n] * 10 + (*p++ - '0');
    }
    if (p == end || *p++ != ' ') {
      return false;
    }
  }
  if (p == end || (size_t)(end - p) > HRL_CHANNEL_MAX) {
    return false;
  }
  *expiry = v[0];
  out->window = v[1];
  out->channel_len = (size_t)(end - p);
  memcpy(out->channel, p, out->channel_len);
  out->ttl = -1;
  return true;
}

/* The first live waiter but skip; dead ones met on the way are dropped. */
static bool head(queue_ctx *x, const char *skip, waiter *out) {
  int i = 0;
  for (;;) {
    sim_key *q = key_at(x, x->q, KT_ZSET, false);
    const zmember *z = ks_zat(q, i);
    if (z == NULL) {
      return false;
    }
    if (skip != NULL && memcmp(z->member, skip, HRL_TOKEN_LEN) == 0) {
      i++;
      continue;
    }
    char h[HRL_TOKEN_LEN];
    memcpy(h, z->member, HRL_TOKEN_LEN);
    sim_key *wk = key_at(x, x->wk, KT_HASH, false);
    int64_t expiry;
    if (parse_entry(ks_hget(wk, h), &expiry, out) && expiry > x->now) {
      memcpy(out->token, h, HRL_TOKEN_LEN);
      return true;
    }
    drop(x, h);
    x->dead++;
  }
}

static void set_key(queue_ctx *x, const char *token, int64_t px) {
  sim_key *k = key_at(x, x->k, KT_STRING, false);
  if (k != NULL) {
    ks_del(k);
  }
  k = key_at(x, x->k, KT_STRING, true);
  if (k == NULL) {
    return;
  }
  memcpy(k->str, token, HRL_TOKEN_LEN);
  k->str_len = HRL_TOKEN_LEN;
  ks_pexpire(x->w, x->m, k, px);
  if (k->used) {
    check_write(x->w, x->m, k);
  }
}

/* Hands the key to waiter h: SET key h PX window, its entry dropped, its
 * token published on its channel. A waiter that takes a hand-off without
 * a claim ("\t" ttl after its channel): PX ttl and the message when its
 * channel has a subscriber on this master, else PX window and none. */
static void give(queue_ctx *x, const waiter *h) {
  waiter at = *h;
  bool claimless = split_ttl(&at);
  bool heard =
      claimless && master_numsub(x->w, x->m, at.channel, at.channel_len) > 0;
  bool whole = heard && !mutant(x->w, MODEL_HANDOFF_PX_WINDOW);
  set_key(x, h->token, whole ? at.ttl : h->window);
  drop(x, h->token);
  if (heard || !claimless) {
    master_publish(x->w, x->m, at.channel, at.channel_len, h->token,
                   HRL_TOKEN_LEN, NULL);
  }
}

/* The key goes to the first live waiter but us, or is deleted. */
static void pass(queue_ctx *x) {
  waiter h;
  if (head(x, x->t, &h)) {
    give(x, &h);
    x->handed = 2;
  } else {
    sim_key *k = key_at(x, x->k, KT_STRING, false);
    if (k != NULL) {
      ks_del(k);
    }
  }
}

static bool enqueue(queue_ctx *x, int64_t ttl, int64_t arrival, int64_t lease,
                    int64_t win, bool handed) {
  const sim_args *a = x->a;
  sim_key *q = key_at(x, x->q, KT_ZSET, true);
  if (q == NULL || !ks_zadd(q, x->t, arrival)) {
    sim_violation(x->w, V_CRASH, "a queue longer than the model's");
    return false;
  }
  sim_key *wk = key_at(x, x->wk, KT_HASH, true);
  char v[HASH_VALUE_MAX];
  int n = snprintf(v, sizeof v, "%lld %lld ", (long long)(x->now + lease),
                   (long long)(ttl < win ? ttl : win));
  int ch = x->argv1 + 6; /* ARGV[7]: the channel */
  char tail[24] = "";
  int tail_len =
      handed ? snprintf(tail, sizeof tail, "\t%lld", (long long)ttl) : 0;
  if (wk == NULL || (size_t)n + a->len[ch] + (size_t)tail_len > sizeof v) {
    sim_violation(x->w, V_CRASH, "a waiters entry longer than the model's");
    return false;
  }
  memcpy(v + n, a->argv[ch], a->len[ch]);
  memcpy(v + n + a->len[ch], tail, (size_t)tail_len);
  if (!ks_hset(wk, x->t, v, (size_t)n + a->len[ch] + (size_t)tail_len)) {
    sim_violation(x->w, V_CRASH, "a waiters hash longer than the model's");
    return false;
  }
  if (!mutant(x->w, MODEL_QUEUE_NO_TTL) &&
      ks_pttl(x->w, x->m, key_at(x, x->q, KT_ZSET, false)) < lease) {
    ks_pexpire(x->w, x->m, key_at(x, x->q, KT_ZSET, false), lease);
    ks_pexpire(x->w, x->m, key_at(x, x->wk, KT_HASH, false), lease);
  }
  check_queue(x->w, x->m, key_at(x, x->q, KT_ZSET, false));
  check_queue(x->w, x->m, key_at(x, x->wk, KT_HASH, false));
  return true;
}

static void queue_script(world *w, master *m, const sim_args *a, int keys,
                         sim_reply *out) {
  int arg = 3 + keys; /* ARGV[1] */
  queue_ctx x = {w, m, a, 3, 4, 5, arg, NULL, master_now_ms(w, m), 0, 0};
  bool r = arg_is(a, arg, "r"), t = arg_is(a, arg, "t"),
       aside = arg_is(a, arg, "a");
  if (keys != 3 || !(r || t || aside) || !is_token(a, arg + 1) ||
      (!r && a->argc != arg + 8)) {
    reply_error(w, out, "ERR the model's queue script: bad arguments");
    return;
  }
  x.t = a->argv[arg + 1];
  bool wrong;
  if (r && key_at(&x, x.q, KT_ZSET, false) == NULL) {
    /* no queue: compare-and-delete */
    sim_key *k = get_string(w, m, a, x.k, &wrong);
    if (k != NULL && (holds(k, x.t) || mutant(w, MODEL_RELEASE_NO_COMPARE))) {
      ks_del(k);
      reply_int(w, out, 1);
    } else {
      reply_int(w, out, 0);
    }
    return;
  }
  if (r) {
    drop(&x, x.t);
    sim_key *k = get_string(w, m, a, x.k, &wrong);
    if (!holds(k, x.t) && !(k != NULL && mutant(w, MODEL_RELEASE_NO_COMPARE))) {
      reply_int(w, out, 0);
      return;
    }
    pass(&x);
    reply_int(w, out, 1 + x.handed + 4 * x.dead);
    return;
  }
  long long ttl, arrival, lease, win;
  if (!arg_int(a, arg + 2, &ttl) || !arg_int(a, arg + 3, &arrival) ||
      !arg_int(a, arg + 4, &lease) || !arg_int(a, arg + 5, &win)) {
    reply_error(w, out, "ERR the model's queue script: bad numbers");
    return;
  }
  bool handed = arg_is(a, arg + 7, "1"); /* ARGV[8] */
  sim_key *k = get_string(w, m, a, x.k, &wrong);
  bool ours = holds(k, x.t);
  if (aside) {
    if (ours) {
      pass(&x);
    }
    enqueue(&x, ttl, arrival, lease, win, handed);
    reply_int(w, out, x.handed + 4 * x.dead);
    return;
  }
  if (ours) {
    drop(&x, x.t);
    ks_pexpire(w, m, k, ttl);
    if (k->used) {
      check_write(w, m, k);
    }
    reply_status(w, out, "OK");
    return;
  }
  bool was_free = k == NULL;
  if (!enqueue(&x, ttl, arrival, lease, win, handed)) {
    return;
  }
  if (was_free) {
    waiter h;
    if (head(&x, NULL, &h)) {
      if (memcmp(h.token, x.t, HRL_TOKEN_LEN) == 0) {
        drop(&x, x.t);
        set_key(&x, x.t, ttl);
        reply_status(w, out, "OK");
        return;
      }
      give(&x, &h);
    }
  }
  reply_int(w, out, ks_pttl(w, m, key_at(&x, x.k, KT_STRING, false)));
}

/* ---- extend, fence, plain release ---- */

static void extend_script(world *w, master *m, const sim_args *a, int keys,
                          sim_reply *out) {
  long long ttl;
  if (keys != 1 || !is_token(a, 4) || !arg_int(a, 5, &ttl)) {
    reply_error(w, out, "ERR the model's extend script: bad arguments");
    return;
  }
  bool wrong;
  sim_key *k = get_string(w, m, a, 3, &wrong);
  if (!holds(k, a->argv[4])) {
    reply_int(w, out, 0);
    return;
  }
  ks_pexpire(w, m, k, ttl);
  if (k->used) {
    check_write(w, m, k);
  }
  reply_int(w, out, 1);
}

static void plain_release_script(world *w, master *m, const sim_args *a,
                                 int keys, sim_reply *out) {
  if (keys != 1 || !is_token(a, 4)) {
    reply_error(w, out, "ERR the model's release script: bad arguments");
    return;
  }
  bool wrong;
  sim_key *k = get_string(w, m, a, 3, &wrong);
  bool del = holds(k, a->argv[4]) ||
             (k != NULL && mutant(w, MODEL_RELEASE_NO_COMPARE));
  if (del) {
    ks_del(k);
  }
  reply_int(w, out, del);
}

/* Raises the counter to the fence while the key holds our token; decimal
 * strings compared by length, then byte by byte. */
static void fence_script(world *w, master *m, const sim_args *a, int keys,
                         sim_reply *out) {
  if (keys != 2 || !is_token(a, 5) || a->argc != 7 || a->len[6] == 0 ||
      a->len[6] >= KEY_STR_MAX) {
    reply_error(w, out, "ERR the model's fence script: bad arguments");
    return;
  }
  bool wrong;
  sim_key *k = get_string(w, m, a, 3, &wrong);
  if (!holds(k, a->argv[5]) && !mutant(w, MODEL_FENCE_NO_TOKEN)) {
    reply_int(w, out, 0);
    return;
  }
  sim_key *c = get_string(w, m, a, 4, &wrong);
  const char *cv = c != NULL ? c->str : "0";
  size_t cl = c != NULL ? c->str_len : 1;
  const char *t = a->argv[6];
  size_t tl = a->len[6];
  if (cl == tl && memcmp(cv, t, tl) == 0) {
    check_counter(w, m, c);
    reply_int(w, out, 1);
    return;
  }
  if (cl > tl || (cl == tl && memcmp(cv, t, tl) > 0)) {
    reply_int(w, out, 0);
    return;
  }
  if (c == NULL &&
      (c = ks_create(w, m, a->argv[4], a->len[4], KT_STRING)) == NULL) {
    return;
  }
  memcpy(c->str, t, tl);
  c->str_len = tl;
  c->expire_ms = -1;
  check_counter(w, m, c);
  reply_int(w, out, 1);
}

/* Each row: the script as the core sends it (resp.h), the digest of the
 * text this row's C was written from, and that C. */
static const struct script {
  const char *sha;
  const char *text;
  const char *modelled;
  script_fn fn;
} scripts[] = {
    {HRL_QUEUE_SHA1, HRL_QUEUE_SCRIPT,
     "355d797da61ba015dee7563c90be63c1a738b4c3", queue_script},
    {HRL_EXTEND_SHA1, HRL_EXTEND_SCRIPT,
     "36e94d1c6e02fcefaa7ee5d79eee614dbac55f10", extend_script},
    {HRL_FENCE_SHA1, HRL_FENCE_SCRIPT,
     "9c38fba8e96eb3c37a8add861f63fed33fe29963", fence_script},
    {HRL_PLAIN_RELEASE_SHA1, HRL_PLAIN_RELEASE_SCRIPT,
     "b70c2384248f88e6b75b9f89241a180f856ad852", plain_release_script},
};

bool scripts_up_to_date(char *err, size_t size) {
  for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
    if (strcmp(scripts[i].sha, scripts[i].modelled) != 0) {
      snprintf(err, size,
               "core/src/proto/resp.h's script %s is not the one "
               "tests/sim/scripts.c models (%s): make its row do what the "
               "new one does, then give it the new digest",
               scripts[i].sha, scripts[i].modelled);
      return false;
    }
  }
  return true;
}

void script_eval(world *w, master *m, const sim_args *a, bool by_sha,
                 sim_reply *out) {
  long long keys;
  if (!arg_int(a, 2, &keys) || keys < 0 || 3 + keys > a->argc) {
    reply_error(w, out,
                "ERR Number of keys can't be greater than number of "
                "args");
    return;
  }
  for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
    const struct script *s = &scripts[i];
    if (!(by_sha ? arg_is(a, 1, s->sha) : arg_is(a, 1, s->text))) {
      continue;
    }
    if (by_sha && !(m->scripts & (1u << i))) {
      reply_error(w, out, "NOSCRIPT No matching script. Please use EVAL.");
      return;
    }
    m->scripts |= 1u << i;
    s->fn(w, m, a, (int)keys, out);
    return;
  }
  if (by_sha) {
    reply_error(w, out, "NOSCRIPT No matching script. Please use EVAL.");
    return;
  }
  sim_violation(w, V_CRASH, "master %d got a script the model lacks", m->id);
}
