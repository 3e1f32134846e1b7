/*
 * A modelled master: it serves each connection's commands in the order
 * they arrive, one at a time and at once (no command takes time), and
 * answers each chunk's commands in one chunk. Its faults:
 *   - paused (SIGSTOP): reads nothing; its host still accepts connects;
 *   - restarted with its data (AOF, appendfsync always): down for a while
 *     (connections reset, connects refused), back with every key and
 *     expiry, its script cache empty;
 *   - restarted empty, only after being down at least the longest TTL
 *     (docs/SAFETY.md's condition for exclusion), its fence counters put
 *     back to the greatest any other master holds (SAFETY.md tells
 *     operators to do this before it rejoins); two never overlap;
 *   - SCRIPT FLUSH;
 *   - answering every command with an error for a while: LOADING (a
 *     master starting, which a waiter rides out) or OOM (a refusal that
 *     lasts, which ends a wait);
 *   - replicas that lag (acknowledge nothing) for a while: a WAIT that
 *     asks for more than the others blocks its connection to its timeout
 *     (commands.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

void master_init(world *w, master *m, int id) {
  memset(m, 0, offsetof(master, keys));
  for (int i = 0; i < KEYS_MAX; i++) {
    m->keys[i].used = false;
  }
  m->id = id;
  m->up = true;
  m->rate = w->sc->master_rate[id];
  m->offset_us = w->sc->master_offset_us[id];
  m->started_ms = master_now_ms(w, m) - 3600 * 1000; /* up for an hour */
}

/* A decimal at p (before end), up to CRLF; false when malformed. */
static bool header_num(const char **p, const char *end, long *out) {
  const char *q = *p;
  long v = 0;
  if (q == end || *q < '0' || *q > '9') {
    return false;
  }
  while (q < end && *q >= '0' && *q <= '9' && v < 100000000) {
    v = v * 10 + (*q++ - '0');
  }
  if (q + 2 > end || q[0] != '\r' || q[1] != '\n') {
    return false;
  }
  *p = q + 2;
  *out = v;
  return true;
}

/* One RESP command (an array of bulk strings) from data; its length, 0
 * when malformed. */
static size_t parse_command(const char *data, size_t len, sim_args *a) {
  const char *p = data, *end = data + len;
  long n, l;
  if (p == end || *p++ != '*' || !header_num(&p, end, &n) || n <= 0 ||
      n > ARGS_MAX) {
    return 0;
  }
  a->argc = (int)n;
  for (int i = 0; i < n; i++) {
    if (p >= end || *p++ != '$' || !header_num(&p, end, &l)) {
      return 0;
    }
    if (p + l + 2 > end || p[l] != '\r' || p[l + 1] != '\n') {
      return 0;
    }
    a->argv[i] = p;
    a->len[i] = (size_t)l;
    p += l + 2;
  }
  return (size_t)(p - data);
}

static void trace_command(world *w, const master *m, int id, const sim_args *a,
                          const char *reply, size_t reply_len) {
  char line[400];
  size_t n = 0;
  for (int i = 0; i < a->argc && n < sizeof line - 60; i++) {
    size_t l = a->len[i] > 40 ? 40 : a->len[i];
    n += (size_t)snprintf(line + n, sizeof line - n, " %.*s%s", (int)l,
                          a->argv[i], a->len[i] > l ? "..." : "");
  }
  char r[120];
  size_t rl = 0;
  for (size_t i = 0; i < reply_len && rl < sizeof r - 4; i++) {
    char ch = reply[i];
    rl += (size_t)snprintf(r + rl, sizeof r - rl, "%s",
                           ch == '\r'   ? ""
                           : ch == '\n' ? " "
                                        : (char[]){ch, 0});
  }
  TRACE(w, "master %d conn %d:%s -> %.*s", m->id, id, line, (int)rl, r);
}

void master_receive(world *w, int id, const char *data, size_t len) {
  master *m = &w->masters[w->conns[id].master];
  static char buf[16384];
  sim_reply out = {buf, 0, sizeof buf};
  size_t pos = 0;
  while (pos < len && !w->stop) {
    sim_args a;
    size_t used = parse_command(data + pos, len - pos, &a);
    if (used == 0) {
      sim_violation(w, V_CRASH, "master %d got bytes that are no command",
                    m->id);
      return;
    }
    size_t before = out.len;
    if (m->error != NULL) {
      reply_error(w, &out, m->error);
    } else {
      command_run(w, m, &w->conns[id], &a, &out);
    }
    if (w->trace != NULL) {
      trace_command(w, m, id, &a, out.buf + before, out.len - before);
    }
    pos += used;
    if (w->conns[id].blocked_until > w->now) {
      break; /* a WAIT: the rest of the chunk runs once it returns */
    }
  }
  int64_t blocked = w->conns[id].blocked_until;
  if (blocked > w->now && pos < len && !w->stop) {
    conn_unread(w, id, data + pos, len - pos, blocked);
  }
  if (out.len == 0) {
    return;
  }
  /* A WAIT that blocked answers at its end. */
  int64_t from = blocked > w->now ? blocked : w->now;
  /* Now and then a reply comes in two reads: the readers must cope. */
  size_t cut = out.len;
  if (out.len > 2 && sim_rng_chance(&w->net_rng, 10)) {
    cut = (size_t)sim_rng_range(&w->net_rng, 1, (int64_t)out.len - 1);
  }
  conn_send_from(w, id, TO_CLIENT, out.buf, cut, from);
  conn_send_from(w, id, TO_CLIENT, out.buf + cut, out.len - cut, from);
}

void master_closed_conn(world *w, int id) {
  conn *c = &w->conns[id];
  c->subscribed = false;
  c->channel_len = 0;
}

static void go_down(world *w, master *m) {
  m->up = false;
  m->paused = false;
  m->scripts = 0;
  for (int i = 0; i < w->nconns; i++) {
    conn *c = &w->conns[i];
    if (c->master == m->id && c->accepted && !c->broken) {
      conn_reset(w, i);
    }
  }
}

static bool is_counter(const sim_key *k) {
  return k->name_len > 6 && memcmp(k->name + k->name_len - 6, ":fence", 6) == 0;
}

/* Compares two decimal strings without leading zeros. */
static int decimal_cmp(const char *a, size_t al, const char *b, size_t bl) {
  if (al != bl) {
    return al < bl ? -1 : 1;
  }
  return memcmp(a, b, al);
}

/* After a restart without data: each counter any other master holds, set
 * to the greatest of them. */
static void restore_counters(world *w, master *m) {
  for (int o = 0; o < w->n; o++) {
    master *other = &w->masters[o];
    for (int i = 0; o != m->id && i < KEYS_MAX; i++) {
      sim_key *k = &other->keys[i];
      if (!k->used || k->type != KT_STRING || !is_counter(k)) {
        continue;
      }
      sim_key *mine = ks_get(w, m, k->name, k->name_len);
      if (mine == NULL) {
        mine = ks_create(w, m, k->name, k->name_len, KT_STRING);
        if (mine == NULL) {
          return;
        }
        mine->str_len = 0;
      }
      if (mine->str_len == 0 ||
          decimal_cmp(mine->str, mine->str_len, k->str, k->str_len) < 0) {
        memcpy(mine->str, k->str, k->str_len);
        mine->str_len = k->str_len;
      }
    }
  }
}

void master_fault(world *w, const sim_fault *f, bool end) {
  master *m = &w->masters[f->master];
  switch (f->kind) {
  case FAULT_MASTER_PAUSE:
    if (!end) {
      int64_t until = f->at_us + f->dur_us;
      if (until > w->master_paused_until[m->id]) {
        w->master_paused_until[m->id] = until;
      }
      m->paused = m->up;
    } else if (w->now >= w->master_paused_until[m->id]) {
      m->paused = false;
    }
    break;
  case FAULT_MASTER_RESTART:
  case FAULT_MASTER_WIPE:
    if (!end) {
      go_down(w, m);
      break;
    }
    m->up = true;
    m->epoch++;
    m->scripts = 0;
    m->started_ms = master_now_ms(w, m);
    if (f->kind == FAULT_MASTER_WIPE) {
      for (int i = 0; i < KEYS_MAX; i++) {
        m->keys[i].used = false;
      }
      restore_counters(w, m);
    }
    break;
  case FAULT_ERRORS:
    m->error = end ? NULL
               : f->extra_us == 0
                   ? "LOADING Redis is loading the dataset in memory"
                   : "OOM command not allowed when used memory > 'maxmemory'.";
    break;
  case FAULT_SCRIPT_FLUSH:
    if (!end) {
      m->scripts = 0;
    }
    break;
  case FAULT_REPLICA_LAG:
    m->lagging += end ? -(int)f->extra_us : (int)f->extra_us;
    break;
  default:
    break;
  }
}
