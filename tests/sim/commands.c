/*
 * The commands a modelled master serves: one table, name -> handler, with
 * what each does (docs/RELIABILITY.md, "Simulation", says where it is
 * simpler than Redis). A command the core starts sending is one row here.
 *
 *   SET key value [NX] [PX ms]   +OK, or nil when NX finds the key
 *   GET key, DEL key, EXISTS key, PTTL key, PEXPIRE key ms
 *   INCR key                     the integer after; an error past 2^63-1
 *                                or on a value that is not an integer
 *   PUBLISH channel message      to this master's subscribers; the count
 *   SUBSCRIBE channel            the connection turns to pub/sub
 *   EVALSHA sha n keys... args...  a known script in the cache, else
 *                                NOSCRIPT; EVAL script ...: by its text,
 *                                which it adds to the cache (scripts.c)
 *   AUTH [user] password, SELECT db: +OK (every client of a world gives
 *                                the same ones)
 *   INFO server                  its run_id (new at every start) and uptime
 *   WAIT n ms                    the count of its replicas that are not
 *                                lagging, at once when n or more, else
 *                                after ms (the connection blocks)
 *   WAITAOF 1 n ms               [1, that count]: the master's own AOF is
 *                                always fsynced (appendfsync always)
 *   PING                         +PONG
 * A wrong number of arguments, an unknown command or a command on a
 * subscribed connection get Redis's errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "world.h"

/* ---- replies ---- */

/* v in decimal into b (room for 21 bytes); its length. */
static size_t decimal(char *b, long long v) {
  char tmp[24];
  size_t n = 0;
  unsigned long long u =
      v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u > 0);
  size_t len = 0;
  if (v < 0) {
    b[len++] = '-';
  }
  while (n > 0) {
    b[len++] = tmp[--n];
  }
  return len;
}

/* A RESP header: the type byte, a number, CRLF. */
static void header(world *w, sim_reply *r, char type, long long v) {
  char b[32];
  b[0] = type;
  size_t n = 1 + decimal(b + 1, v);
  b[n++] = '\r';
  b[n++] = '\n';
  reply_raw(w, r, b, n);
}

void reply_raw(world *w, sim_reply *r, const char *data, size_t len) {
  if (r->len + len > r->cap) {
    sim_violation(w, V_CRASH, "a reply longer than the model's buffer");
    return;
  }
  memcpy(r->buf + r->len, data, len);
  r->len += len;
}

void reply_status(world *w, sim_reply *r, const char *s) {
  char b[128];
  int n = snprintf(b, sizeof b, "+%s\r\n", s);
  reply_raw(w, r, b, (size_t)n);
}

void reply_error(world *w, sim_reply *r, const char *s) {
  char b[256];
  int n = snprintf(b, sizeof b, "-%s\r\n", s);
  reply_raw(w, r, b, (size_t)n);
}

void reply_int(world *w, sim_reply *r, long long v) {
  header(w, r, ':', v);
}

void reply_bulk(world *w, sim_reply *r, const char *s, size_t len) {
  header(w, r, '$', (long long)len);
  reply_raw(w, r, s, len);
  reply_raw(w, r, "\r\n", 2);
}

void reply_nil(world *w, sim_reply *r) {
  reply_raw(w, r, "$-1\r\n", 5);
}

/* ---- arguments ---- */

bool arg_is(const sim_args *a, int i, const char *s) {
  size_t n = strlen(s);
  return i < a->argc && a->len[i] == n && strncasecmp(a->argv[i], s, n) == 0;
}

bool arg_int(const sim_args *a, int i, long long *out) {
  if (i >= a->argc || a->len[i] == 0 || a->len[i] > 19) {
    return false;
  }
  const char *p = a->argv[i], *end = p + a->len[i];
  bool neg = *p == '-';
  p += neg;
  if (p == end) {
    return false;
  }
  long long v = 0;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9') {
      return false;
    }
    v = v * 10 + (*p - '0');
  }
  *out = neg ? -v : v;
  return true;
}

/* ---- the commands ---- */

static sim_key *string_key(world *w, master *m, const sim_args *a, int i,
                           sim_reply *out, bool *wrong) {
  sim_key *k = ks_get(w, m, a->argv[i], a->len[i]);
  *wrong = k != NULL && k->type != KT_STRING;
  if (*wrong) {
    reply_error(w, out,
                "WRONGTYPE Operation against a key holding the wrong kind of "
                "value");
  }
  return k;
}

static void cmd_set(world *w, master *m, conn *c, const sim_args *a,
                    sim_reply *out) {
  (void)c;
  bool nx = false;
  long long px = -1;
  for (int i = 3; i < a->argc; i++) {
    if (arg_is(a, i, "NX")) {
      nx = true;
    } else if (arg_is(a, i, "PX") && arg_int(a, i + 1, &px) && px > 0) {
      i++;
    } else {
      reply_error(w, out, "ERR syntax error");
      return;
    }
  }
  sim_key *k = ks_get(w, m, a->argv[1], a->len[1]);
  if (nx && k != NULL) {
    reply_nil(w, out);
    return;
  }
  if (k != NULL) {
    ks_del(k);
  }
  if (a->len[2] > KEY_STR_MAX) {
    sim_violation(w, V_CRASH, "a value of %zu bytes: beyond the model",
                  a->len[2]);
    return;
  }
  k = ks_create(w, m, a->argv[1], a->len[1], KT_STRING);
  if (k == NULL) {
    return;
  }
  memcpy(k->str, a->argv[2], a->len[2]);
  k->str_len = a->len[2];
  if (px > 0) {
    ks_pexpire(w, m, k, px);
  }
  check_write(w, m, k);
  reply_status(w, out, "OK");
}

static void cmd_get(world *w, master *m, conn *c, const sim_args *a,
                    sim_reply *out) {
  (void)c;
  bool wrong;
  sim_key *k = string_key(w, m, a, 1, out, &wrong);
  if (wrong) {
    return;
  }
  if (k == NULL) {
    reply_nil(w, out);
  } else {
    reply_bulk(w, out, k->str, k->str_len);
  }
}

static void cmd_del(world *w, master *m, conn *c, const sim_args *a,
                    sim_reply *out) {
  (void)c;
  sim_key *k = ks_get(w, m, a->argv[1], a->len[1]);
  if (k != NULL) {
    ks_del(k);
  }
  reply_int(w, out, k != NULL);
}

static void cmd_exists(world *w, master *m, conn *c, const sim_args *a,
                       sim_reply *out) {
  (void)c;
  reply_int(w, out, ks_get(w, m, a->argv[1], a->len[1]) != NULL);
}

static void cmd_pttl(world *w, master *m, conn *c, const sim_args *a,
                     sim_reply *out) {
  (void)c;
  reply_int(w, out, ks_pttl(w, m, ks_get(w, m, a->argv[1], a->len[1])));
}

static void cmd_pexpire(world *w, master *m, conn *c, const sim_args *a,
                        sim_reply *out) {
  (void)c;
  long long ms;
  if (!arg_int(a, 2, &ms)) {
    reply_error(w, out, "ERR value is not an integer or out of range");
    return;
  }
  sim_key *k = ks_get(w, m, a->argv[1], a->len[1]);
  if (k != NULL) {
    ks_pexpire(w, m, k, ms);
    if (k->used) {
      check_write(w, m, k);
    }
  }
  reply_int(w, out, k != NULL);
}

static void cmd_incr(world *w, master *m, conn *c, const sim_args *a,
                     sim_reply *out) {
  (void)c;
  bool wrong;
  sim_key *k = string_key(w, m, a, 1, out, &wrong);
  if (wrong) {
    return;
  }
  long long v = 0;
  if (k != NULL) {
    sim_args one = {1, {k->str}, {k->str_len}};
    if (!arg_int(&one, 0, &v)) {
      reply_error(w, out, "ERR value is not an integer or out of range");
      return;
    }
  } else if ((k = ks_create(w, m, a->argv[1], a->len[1], KT_STRING)) == NULL) {
    return;
  }
  if (v == INT64_MAX) {
    reply_error(w, out, "ERR increment or decrement would overflow");
    return;
  }
  v++;
  k->str_len = decimal(k->str, v);
  check_counter(w, m, k);
  reply_int(w, out, v);
}

void master_publish(world *w, master *m, const char *ch, size_t ch_len,
                    const char *msg, size_t msg_len, sim_reply *count_out) {
  char push[512];
  int n =
      snprintf(push, sizeof push, "*3\r\n$7\r\nmessage\r\n$%zu\r\n", ch_len);
  if ((size_t)n + ch_len + msg_len + 32 > sizeof push) {
    sim_violation(w, V_CRASH, "a message longer than the model's buffer");
    return;
  }
  memcpy(push + n, ch, ch_len);
  n += (int)ch_len;
  n += snprintf(push + n, sizeof push - (size_t)n, "\r\n$%zu\r\n", msg_len);
  memcpy(push + n, msg, msg_len);
  n += (int)msg_len;
  memcpy(push + n, "\r\n", 2);
  n += 2;
  long long count = 0;
  for (int i = 0; i < w->nconns; i++) {
    conn *s = &w->conns[i];
    if (s->master == m->id && s->accepted && s->epoch == m->epoch &&
        s->subscribed && s->channel_len == ch_len &&
        memcmp(s->channel, ch, ch_len) == 0) {
      conn_send(w, i, TO_CLIENT, push, (size_t)n);
      count++;
    }
  }
  TRACE(w, "master %d publishes %.*s to %lld subscriber(s)", m->id,
        (int)msg_len, msg, count);
  if (count_out != NULL) {
    reply_int(w, count_out, count);
  }
}

long long master_numsub(const world *w, const master *m, const char *ch,
                        size_t ch_len) {
  long long count = 0;
  for (int i = 0; i < w->nconns; i++) {
    const conn *s = &w->conns[i];
    count += s->master == m->id && s->accepted && s->epoch == m->epoch &&
             s->subscribed && s->channel_len == ch_len &&
             memcmp(s->channel, ch, ch_len) == 0;
  }
  return count;
}

static void cmd_publish(world *w, master *m, conn *c, const sim_args *a,
                        sim_reply *out) {
  (void)c;
  master_publish(w, m, a->argv[1], a->len[1], a->argv[2], a->len[2], out);
}

static void cmd_subscribe(world *w, master *m, conn *c, const sim_args *a,
                          sim_reply *out) {
  (void)m;
  if (a->argc != 2 || a->len[1] > HRL_CHANNEL_MAX) {
    reply_error(w, out, "ERR the model subscribes to one channel");
    return;
  }
  c->subscribed = true;
  memcpy(c->channel, a->argv[1], a->len[1]);
  c->channel_len = a->len[1];
  static const char head[] = "*3\r\n$9\r\nsubscribe\r\n";
  reply_raw(w, out, head, sizeof head - 1);
  reply_bulk(w, out, a->argv[1], a->len[1]);
  reply_int(w, out, 1);
}

static void cmd_evalsha(world *w, master *m, conn *c, const sim_args *a,
                        sim_reply *out) {
  (void)c;
  script_eval(w, m, a, true, out);
}

static void cmd_eval(world *w, master *m, conn *c, const sim_args *a,
                     sim_reply *out) {
  (void)c;
  script_eval(w, m, a, false, out);
}

/* INFO server: who the master is (its run_id, new at every start) and how
 * long it has been up; what the handshake asks when a client has several
 * masters or a restart_guard (core/src/proto/server_info.c). */
static void cmd_info(world *w, master *m, conn *c, const sim_args *a,
                     sim_reply *out) {
  (void)c, (void)a;
  sim_rng r;
  sim_rng_init(&r, w->sc->seed, 4,
               (uint64_t)m->id * 1000003u + (uint64_t)m->epoch);
  char text[256];
  int n =
      snprintf(text, sizeof text, "# Server\r\nredis_version:7.2.4\r\nrun_id:");
  for (int k = 0; k < 40; k++) {
    text[n++] = "0123456789abcdef"[sim_rng_next(&r) & 15];
  }
  n += snprintf(text + n, sizeof text - (size_t)n,
                "\r\ntcp_port:%d\r\nuptime_in_seconds:%lld\r\n", 7000 + m->id,
                (long long)((master_now_ms(w, m) - m->started_ms) / 1000));
  reply_bulk(w, out, text, (size_t)n);
}

/* The replicas that have every write of the master: all of them but those
 * that lag. A WAIT asking for more blocks its connection for its timeout
 * (on the master's clock), then says how many it got; commands behind it
 * on that connection run after (master_receive). */
static bool wait_common(world *w, master *m, conn *c, const sim_args *a,
                        int first, sim_reply *out, long long *acked) {
  long long want, ms;
  if (!arg_int(a, first, &want) || !arg_int(a, first + 1, &ms) || want < 0 ||
      ms < 0) {
    reply_error(w, out, "ERR value is out of range, must be positive");
    return false;
  }
  if (ms == 0) {
    /* Blocks for ever: the core must never send it. */
    sim_violation(w, V_CRASH, "master %d got a WAIT without a timeout", m->id);
    return false;
  }
  long long lag = m->lagging < w->sc->replicas ? m->lagging : w->sc->replicas;
  *acked = w->sc->replicas - lag;
  if (*acked < want) {
    c->blocked_until = w->now + (int64_t)((double)ms * 1000.0 / m->rate) + 1;
  }
  return true;
}

static void cmd_wait(world *w, master *m, conn *c, const sim_args *a,
                     sim_reply *out) {
  long long acked;
  if (wait_common(w, m, c, a, 1, out, &acked)) {
    reply_int(w, out, acked);
  }
}

static void cmd_waitaof(world *w, master *m, conn *c, const sim_args *a,
                        sim_reply *out) {
  long long local, acked;
  if (!arg_int(a, 1, &local) || local < 0 || local > 1) {
    reply_error(w, out, "ERR value is out of range, must be positive");
    return;
  }
  if (wait_common(w, m, c, a, 2, out, &acked)) {
    reply_raw(w, out, "*2\r\n", 4);
    reply_int(w, out, 1);
    reply_int(w, out, acked);
  }
}

static void cmd_ok(world *w, master *m, conn *c, const sim_args *a,
                   sim_reply *out) {
  (void)m, (void)c, (void)a;
  reply_status(w, out, "OK");
}

static void cmd_ping(world *w, master *m, conn *c, const sim_args *a,
                     sim_reply *out) {
  (void)m, (void)c, (void)a;
  reply_status(w, out, "PONG");
}

typedef void (*cmd_fn)(world *, master *, conn *, const sim_args *,
                       sim_reply *);

static const struct command {
  const char *name;
  int argc_min, argc_max;
  bool in_pubsub; /* allowed on a subscribed connection */
  cmd_fn fn;
} commands[] = {
    /* the most frequent first: a command is looked up by its name */
    {"EVALSHA", 3, ARGS_MAX, false, cmd_evalsha},
    {"SET", 3, 8, false, cmd_set},
    {"INCR", 2, 2, false, cmd_incr},
    {"GET", 2, 2, false, cmd_get},
    {"DEL", 2, 2, false, cmd_del},
    {"EXISTS", 2, 2, false, cmd_exists},
    {"PTTL", 2, 2, false, cmd_pttl},
    {"PEXPIRE", 3, 3, false, cmd_pexpire},
    {"PUBLISH", 3, 3, false, cmd_publish},
    {"SUBSCRIBE", 2, 2, true, cmd_subscribe},
    {"EVAL", 3, ARGS_MAX, false, cmd_eval},
    {"AUTH", 2, 3, false, cmd_ok},
    {"SELECT", 2, 2, false, cmd_ok},
    {"PING", 1, 2, true, cmd_ping},
    {"INFO", 1, 2, false, cmd_info},
    {"WAIT", 3, 3, false, cmd_wait},
    {"WAITAOF", 4, 4, false, cmd_waitaof},
};

void command_run(world *w, master *m, conn *c, const sim_args *a,
                 sim_reply *out) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    const struct command *cmd = &commands[i];
    if (!arg_is(a, 0, cmd->name)) {
      continue;
    }
    if (a->argc < cmd->argc_min || a->argc > cmd->argc_max) {
      char e[96];
      snprintf(e, sizeof e, "ERR wrong number of arguments for '%s' command",
               cmd->name);
      reply_error(w, out, e);
    } else if (c->subscribed && !cmd->in_pubsub) {
      reply_error(w, out,
                  "ERR Can't execute this command: only (P|S)SUBSCRIBE / "
                  "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
                  "this context");
    } else {
      cmd->fn(w, m, c, a, out);
    }
    return;
  }
  sim_violation(w, V_CRASH, "master %d got a command the model lacks: %.*s",
                m->id, (int)(a->argc > 0 ? a->len[0] : 0),
                a->argc > 0 ? a->argv[0] : "");
}
