/*
 * A master's data: a handful of keys (per lock name: the key, its queue,
 * its waiters, its fence counter), each a string, a sorted set or a hash,
 * with an expiry in the master's milliseconds. As in Redis, a key is gone
 * once the master's clock passes its expiry (`now > expire`, looked at
 * lazily on every access), an empty sorted set or hash is no key, and a
 * sorted set orders by (score, member). Scores are kept as integers (the
 * waiters' arrivals in microseconds; Redis keeps doubles, exact below
 * 2^53, about 285 years of microseconds). Members and fields are tokens.
 */
#include <string.h>

#include "world.h"

sim_key *ks_get(world *w, master *m, const char *name, size_t len) {
  for (int i = 0; i < KEYS_MAX; i++) {
    sim_key *k = &m->keys[i];
    if (k->used && k->name_len == len && memcmp(k->name, name, len) == 0) {
      if (k->expire_ms >= 0 && master_now_ms(w, m) > k->expire_ms) {
        k->used = false;
        return NULL;
      }
      return k;
    }
  }
  return NULL;
}

sim_key *ks_create(world *w, master *m, const char *name, size_t len,
                   key_type type) {
  if (len > KEY_NAME_MAX) {
    sim_violation(w, V_CRASH, "key name of %zu bytes: beyond the model", len);
    return NULL;
  }
  for (int i = 0; i < KEYS_MAX; i++) {
    sim_key *k = &m->keys[i];
    if (k->used && k->expire_ms >= 0 && master_now_ms(w, m) > k->expire_ms) {
      k->used = false;
    }
    if (!k->used) {
      k->used = true;
      memcpy(k->name, name, len);
      k->name_len = len;
      k->type = type;
      k->expire_ms = -1;
      k->str_len = 0;
      k->count = 0;
      return k;
    }
  }
  sim_violation(w, V_CRASH, "master %d holds more keys than the model", m->id);
  return NULL;
}

void ks_del(sim_key *k) {
  k->used = false;
}

int64_t ks_pttl(world *w, master *m, const sim_key *k) {
  if (k == NULL) {
    return -2;
  }
  if (k->expire_ms < 0) {
    return -1;
  }
  int64_t left = k->expire_ms - master_now_ms(w, m);
  return left > 0 ? left : 0;
}

void ks_pexpire(world *w, master *m, sim_key *k, int64_t ms) {
  if (ms <= 0) {
    ks_del(k); /* Redis deletes a key given a past expiry */
    return;
  }
  k->expire_ms = master_now_ms(w, m) + ms;
}

static int zcmp(const zmember *a, int64_t score, const char *member) {
  if (a->score != score) {
    return a->score < score ? -1 : 1;
  }
  return memcmp(a->member, member, HRL_TOKEN_LEN);
}

bool ks_zrem(sim_key *k, const char *member) {
  for (int i = 0; i < k->count; i++) {
    if (memcmp(k->z[i].member, member, HRL_TOKEN_LEN) == 0) {
      memmove(&k->z[i], &k->z[i + 1],
              (size_t)(k->count - i - 1) * sizeof k->z[0]);
      k->count--;
      if (k->count == 0) {
        ks_del(k);
      }
      return true;
    }
  }
  return false;
}

bool ks_zadd(sim_key *k, const char *member, int64_t score) {
  for (int i = 0; i < k->count; i++) {
    if (memcmp(k->z[i].member, member, HRL_TOKEN_LEN) == 0) {
      memmove(&k->z[i], &k->z[i + 1],
              (size_t)(k->count - i - 1) * sizeof k->z[0]);
      k->count--;
      break;
    }
  }
  if (k->count == COLL_MAX) {
    return false;
  }
  int at = 0;
  while (at < k->count && zcmp(&k->z[at], score, member) < 0) {
    at++;
  }
  memmove(&k->z[at + 1], &k->z[at], (size_t)(k->count - at) * sizeof k->z[0]);
  memcpy(k->z[at].member, member, HRL_TOKEN_LEN);
  k->z[at].score = score;
  k->count++;
  return true;
}

const zmember *ks_zat(const sim_key *k, int i) {
  return k != NULL && i >= 0 && i < k->count ? &k->z[i] : NULL;
}

const hfield *ks_hget(const sim_key *k, const char *field) {
  for (int i = 0; k != NULL && i < k->count; i++) {
    if (memcmp(k->h[i].field, field, HRL_TOKEN_LEN) == 0) {
      return &k->h[i];
    }
  }
  return NULL;
}

bool ks_hset(sim_key *k, const char *field, const char *value, size_t len) {
  if (len > HASH_VALUE_MAX) {
    return false;
  }
  hfield *f = (hfield *)ks_hget(k, field);
  if (f == NULL) {
    if (k->count == COLL_MAX) {
      return false;
    }
    f = &k->h[k->count++];
    memcpy(f->field, field, HRL_TOKEN_LEN);
  }
  memcpy(f->value, value, len);
  f->value_len = len;
  return true;
}

bool ks_hdel(sim_key *k, const char *field) {
  for (int i = 0; i < k->count; i++) {
    if (memcmp(k->h[i].field, field, HRL_TOKEN_LEN) == 0) {
      k->h[i] = k->h[k->count - 1];
      k->count--;
      if (k->count == 0) {
        ks_del(k);
      }
      return true;
    }
  }
  return false;
}
