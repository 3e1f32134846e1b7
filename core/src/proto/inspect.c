/*
 * Inspection (HRL_OP_INSPECT, hrl_client_inspect): what every master has
 * of a lock, read by one read-only script per master in one round, and
 * the quorum's verdict on it. An operation like the others, so that every
 * driver runs it as it runs any round:
 *
 *   begin   -> INSPECT
 *   INSPECT -> the inspect script (EVALSHA; EVAL after NOSCRIPT) to all
 *              N at once, each within the client's timeout  -> INSPECTING
 *   INSPECTING -> the verdict, DONE (HRL_OK whatever the masters said: a
 *              master that did not answer is in its entry)
 *
 * The script only reads (TYPE, GET, PTTL, ZCARD, ZRANGE, ZSCORE, HGET,
 * TIME): it takes no lock, and changes no key, TTL or queue (the tests
 * run it as an ACL user that may not write).
 *
 * The verdict: the token held by the most masters that answered is
 * held when a quorum of masters hold it, valid at best for the quorum-th
 * longest of their PTTLs; free when no token could be on a quorum even
 * if every master that did not answer held it; unknown otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "detail.h"
#include "inspect_script.h"
#include "reply.h"
#include "sentinel.h"
#include "sibling_key.h"
#include "state.h"

#define FENCE_SUFFIX ":fence"
#define OWNER_SUFFIX ":owner:"
/* The longest value kept to tell tokens apart (hiredlock's are 32
 * characters, redis-py's 32 or 36). */
#define VALUE_KEPT 64

/* A master's full value, to find the same token on several masters. */
typedef struct held_value {
  char bytes[VALUE_KEPT];
  size_t len;
  bool string; /* the key holds a string */
} held_value;

/* A master's listed holds' full tokens, to find the same hold on several
 * masters. */
typedef struct hold_tokens {
  char bytes[HRL_INSPECT_HOLDS][VALUE_KEPT];
  size_t len[HRL_INSPECT_HOLDS];
} hold_tokens;

struct hrl_inspect {
  char *cmd; /* EVALSHA form, ASKING room in front; then the EVAL form */
  size_t cmd_len;
  char *eval;
  size_t eval_len;
  size_t room; /* of each, ASKING not counted */
  hrl_inspection *result;
  held_value *values;  /* n of them */
  hold_tokens *tokens; /* n of them */
};

void hrl_inspect_free(struct hrl_inspect *in) {
  if (in == NULL) {
    return;
  }
  if (in->cmd != NULL) {
    free(in->cmd - HRL_ASKING_LEN);
  }
  hrl_inspection_free(in->result);
  free(in);
}

void hrl_inspection_free(hrl_inspection *insp) {
  free(insp); /* one block: the masters' entries follow it */
}

const hrl_inspection *hrl_lock_inspection(const hrl_lock *lk) {
  if (lk->extra == NULL || lk->extra->inspect == NULL ||
      lk->op.kind != HRL_OP_INSPECT || lk->op.phase != HRL_PHASE_DONE) {
    return NULL;
  }
  return lk->extra->inspect->result;
}

hrl_inspection *hrl_inspect_take(hrl_lock *lk) {
  if (hrl_lock_inspection(lk) == NULL) {
    return NULL;
  }
  hrl_inspection *insp = lk->extra->inspect->result;
  lk->extra->inspect->result = NULL;
  return insp;
}

/* RESP "$<len>\r\n<arg>\r\n". */
static size_t put_arg(char *buf, const char *arg, size_t len) {
  int n = snprintf(buf, 24, "$%zu\r\n", len);
  memcpy(buf + n, arg, len);
  memcpy(buf + n + len, "\r\n", 2);
  return (size_t)n + len + 2;
}

/* EVALSHA sha 5 key queue waiters fence owner limit holds (by_sha), or EVAL
 * with the script, into buf; returns the length. */
static size_t put_command(const hrl_lock *lk, char *buf, bool by_sha,
                          const char *fence, size_t fence_len,
                          const char *owner, size_t owner_len) {
  char limit[8], holds[8];
  int limit_len = snprintf(limit, sizeof limit, "%d", HRL_INSPECT_WAITERS);
  int holds_len = snprintf(holds, sizeof holds, "%d", HRL_INSPECT_HOLDS);
  size_t n = 0;
  memcpy(buf, "*10\r\n", 5);
  n += 5;
  if (by_sha) {
    n += put_arg(buf + n, "EVALSHA", 7);
    n += put_arg(buf + n, HRL_INSPECT_SHA1, 40);
  } else {
    n += put_arg(buf + n, "EVAL", 4);
    n += put_arg(buf + n, HRL_INSPECT_SCRIPT, sizeof HRL_INSPECT_SCRIPT - 1);
  }
  n += put_arg(buf + n, "5", 1);
  n += put_arg(buf + n, lk->key, lk->key_len);
  n += put_arg(buf + n, lk->queue, lk->queue_len);
  n += put_arg(buf + n, lk->waiters, lk->waiters_len);
  n += put_arg(buf + n, fence, fence_len);
  n += put_arg(buf + n, owner, owner_len);
  n += put_arg(buf + n, limit, (size_t)limit_len);
  return n + put_arg(buf + n, holds, (size_t)holds_len);
}

/* Both forms of the command, built once per lock (its keys do not
 * change). */
static hrl_status build_commands(hrl_lock *lk, struct hrl_inspect *in) {
  size_t sibling = HRL_SIBLING_KEY_MAX(lk->key_len, sizeof OWNER_SUFFIX - 1);
  char *keys = malloc(2 * sibling);
  if (keys == NULL) {
    return HRL_ENOMEM;
  }
  size_t fence_len = hrl_sibling_key(lk->key, lk->key_len, FENCE_SUFFIX,
                                     sizeof FENCE_SUFFIX - 1, keys);
  char *owner = keys + sibling;
  size_t owner_len = hrl_sibling_key(lk->key, lk->key_len, OWNER_SUFFIX,
                                     sizeof OWNER_SUFFIX - 1, owner);
  in->room = 16 + 10 * 24 + sizeof HRL_INSPECT_SCRIPT + lk->key_len +
             lk->queue_len + lk->waiters_len + 2 * sibling + 16;
  char *block = malloc(2 * (HRL_ASKING_LEN + in->room));
  if (block == NULL) {
    free(keys);
    return HRL_ENOMEM;
  }
  memcpy(block, HRL_ASKING, HRL_ASKING_LEN);
  in->cmd = block + HRL_ASKING_LEN;
  in->eval = in->cmd + in->room + HRL_ASKING_LEN;
  memcpy(in->eval - HRL_ASKING_LEN, HRL_ASKING, HRL_ASKING_LEN);
  in->cmd_len =
      put_command(lk, in->cmd, true, keys, fence_len, owner, owner_len);
  in->eval_len =
      put_command(lk, in->eval, false, keys, fence_len, owner, owner_len);
  free(keys);
  return HRL_OK;
}

hrl_status hrl_inspect_begin(hrl_lock *lk, int64_t now_us) {
  (void)now_us;
  hrl_op *op = &lk->op;
  if (op->phase != HRL_PHASE_IDLE && op->phase != HRL_PHASE_DONE) {
    hrl_detailf(lk->detail, sizeof lk->detail,
                "another operation is running on this lock");
    return HRL_EINVAL;
  }
  if (lk->extra == NULL && (lk->extra = calloc(1, sizeof *lk->extra)) == NULL) {
    hrl_detailf(lk->detail, sizeof lk->detail, "out of memory");
    return HRL_ENOMEM;
  }
  struct hrl_inspect *in = lk->extra->inspect;
  size_t n = lk->cfg->n;
  if (in == NULL) {
    in = calloc(1, sizeof *in + n * (sizeof(held_value) + sizeof(hold_tokens)));
    if (in == NULL || build_commands(lk, in) != HRL_OK) {
      free(in);
      hrl_detailf(lk->detail, sizeof lk->detail, "out of memory");
      return HRL_ENOMEM;
    }
    in->values = (held_value *)(void *)(in + 1);
    in->tokens = (hold_tokens *)(void *)(in->values + n);
    lk->extra->inspect = in;
  }
  hrl_inspection_free(in->result);
  in->result = calloc(1, sizeof *in->result + n * sizeof(hrl_master_view));
  if (in->result == NULL) {
    hrl_detailf(lk->detail, sizeof lk->detail, "out of memory");
    return HRL_ENOMEM;
  }
  hrl_inspection *r = in->result;
  r->master = (hrl_master_view *)(void *)(r + 1);
  r->masters = n;
  r->quorum = lk->cfg->quorum;
  for (size_t i = 0; i < n; i++) {
    r->master[i].label = lk->cfg->masters[i].ep.label;
    r->master[i].status = HRL_ECONNECT;
    r->master[i].pttl_ms = -2;
    in->values[i].len = 0;
    in->values[i].string = false;
  }
  op->kind = HRL_OP_INSPECT;
  op->phase = HRL_PHASE_INSPECT;
  op->attempts = 0;
  op->waiting = false;
  op->result = HRL_OK;
  memset(&op->counts, 0, sizeof op->counts);
  lk->detail[0] = '\0';
  return HRL_OK;
}

/* A new round on every master: the node state round.c resets too. */
static void start_round(hrl_lock *lk, int64_t now_us) {
  hrl_op *op = &lk->op;
  op->round_kind = HRL_ROUND_INSPECT;
  op->round_start_us = now_us;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    hrl_node *node = &op->nodes[i];
    memset(node, 0, sizeof *node);
    node->result = HRL_NODE_PENDING;
    node->set = HRL_NODE_PENDING;
    node->pttl = -1;
    if (lk->cfg->masters[i].cluster != NULL) {
      hrl_cluster_round(lk, i);
    } else if (lk->cfg->masters[i].sentinel != NULL) {
      hrl_sentinel_round(lk, i);
    }
  }
}

static bool same_value(const held_value *a, const held_value *b) {
  return a->string && b->string && a->len == b->len &&
         memcmp(a->bytes, b->bytes, a->len) == 0;
}

static int by_pttl_desc(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  /* -1 (no TTL) lasts longest */
  x = x == -1 ? INT64_MAX : x;
  y = y == -1 ? INT64_MAX : y;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The kind the most masters that answered have (ties: the first). */
static hrl_kind common_kind(const hrl_inspection *r) {
  size_t count[HRL_KIND_OTHER + 1] = {0};
  hrl_kind best = HRL_KIND_NONE;
  for (size_t i = 0; i < r->masters; i++) {
    const hrl_master_view *m = &r->master[i];
    if (m->status == HRL_OK && m->kind != HRL_KIND_NONE &&
        ++count[m->kind] > count[best]) {
      best = m->kind;
    }
  }
  return best;
}

static bool same_hold(const struct hrl_inspect *in, size_t i, size_t a,
                      size_t j, size_t b) {
  const hold_tokens *x = &in->tokens[i], *y = &in->tokens[j];
  return x->len[a] == y->len[b] &&
         memcmp(x->bytes[a], y->bytes[b], x->len[a]) == 0 &&
         strcmp(in->result->master[i].hold[a].hold,
                in->result->master[j].hold[b].hold) == 0;
}

/* The verdict from the most masters holding one token (or one hold): held
 * on a quorum, free when even the masters that did not answer could not
 * make one, unknown otherwise. */
static void set_verdict(hrl_inspection *r, size_t best_count) {
  size_t n = r->masters;
  r->holding = best_count;
  if (best_count >= r->quorum) {
    r->verdict = HRL_VERDICT_HELD;
  } else if (best_count + (n - r->answered) < r->quorum) {
    r->verdict = HRL_VERDICT_FREE;
  } else {
    r->verdict = HRL_VERDICT_UNKNOWN;
  }
}

/* The holds on a quorum of masters (a hold is its token and its class:
 * a permit granted under two numbers is not one hold), each valid at
 * best for the quorum-th longest of their TTLs; and the one on the most
 * masters that answered, the inspection's token, as a mutex's. */
static void judge_holds(struct hrl_inspect *in) {
  hrl_inspection *r = in->result;
  size_t n = r->masters, best_count = 0;
  for (size_t i = 0; i < n; i++) {
    const hrl_master_view *m = &r->master[i];
    if (m->status != HRL_OK || m->kind != r->kind) {
      continue;
    }
    for (size_t a = 0; a < m->holds_listed; a++) {
      bool seen = false;
      for (size_t j = 0; j < i && !seen; j++) {
        for (size_t b = 0; b < r->master[j].holds_listed && !seen; b++) {
          seen = r->master[j].status == HRL_OK &&
                 r->master[j].kind == r->kind && same_hold(in, i, a, j, b);
        }
      }
      if (seen) {
        continue; /* counted from the first master that has it */
      }
      int64_t ttls[HRL_MASTERS_MAX];
      size_t count = 0;
      for (size_t j = i; j < n; j++) {
        const hrl_master_view *o = &r->master[j];
        if (o->status != HRL_OK || o->kind != r->kind) {
          continue;
        }
        for (size_t b = 0; b < o->holds_listed; b++) {
          if (same_hold(in, i, a, j, b)) {
            ttls[count++] = o->hold[b].ttl_ms;
            break;
          }
        }
      }
      qsort(ttls, count, sizeof ttls[0], by_pttl_desc);
      if (count > best_count) {
        best_count = count;
        memcpy(r->token, m->hold[a].token, sizeof m->hold[a].token);
        memcpy(r->owner, m->hold[a].owner, sizeof r->owner);
        r->valid_ms = count >= r->quorum ? ttls[r->quorum - 1] : 0;
      }
      if (count >= r->quorum && r->holds < HRL_INSPECT_HOLDS) {
        hrl_hold_view *h = &r->hold[r->holds++];
        *h = m->hold[a];
        h->ttl_ms = ttls[r->quorum - 1];
        h->holding = count;
      }
    }
  }
  set_verdict(r, best_count);
}

/* The quorum's verdict from the masters' entries. */
static void judge(hrl_lock *lk, struct hrl_inspect *in) {
  hrl_inspection *r = in->result;
  size_t n = r->masters, best = n, best_count = 0;
  (void)lk;
  for (size_t i = 0; i < n; i++) {
    r->answered += r->master[i].status == HRL_OK;
    r->fence = r->master[i].fence > r->fence ? r->master[i].fence : r->fence;
  }
  r->kind = common_kind(r);
  if (r->kind == HRL_KIND_RWLOCK || r->kind == HRL_KIND_SEMAPHORE) {
    judge_holds(in);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const hrl_master_view *m = &r->master[i];
    if (m->status != HRL_OK || !in->values[i].string) {
      continue;
    }
    size_t count = 0;
    for (size_t j = 0; j < n; j++) {
      count += r->master[j].status == HRL_OK &&
               same_value(&in->values[i], &in->values[j]);
    }
    if (count > best_count) {
      best = i;
      best_count = count;
    }
  }
  if (best < n) {
    memcpy(r->token, r->master[best].token, sizeof r->token);
    int64_t pttls[HRL_MASTERS_MAX];
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
      if (r->master[j].status == HRL_OK &&
          same_value(&in->values[best], &in->values[j])) {
        pttls[k++] = r->master[j].pttl_ms;
        if (r->owner[0] == '\0') {
          memcpy(r->owner, r->master[j].owner, sizeof r->owner);
        }
      }
    }
    qsort(pttls, k, sizeof pttls[0], by_pttl_desc);
    if (best_count >= r->quorum) {
      r->valid_ms = pttls[r->quorum - 1];
    }
  }
  set_verdict(r, best_count);
}

hrl_step hrl_inspect_step(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  memset(info, 0, sizeof *info);
  switch (op->phase) {
  case HRL_PHASE_INSPECT:
    start_round(lk, now_us);
    op->phase = HRL_PHASE_INSPECTING;
    info->timeout_ms = lk->cfg->opts.timeout_ms;
    return HRL_STEP_ROUND;
  case HRL_PHASE_INSPECTING: {
    struct hrl_inspect *in = lk->extra->inspect;
    for (size_t i = 0; i < lk->cfg->n; i++) {
      hrl_node *node = &op->nodes[i];
      hrl_master_view *m = &in->result->master[i];
      if (node->result == HRL_NODE_OK) {
        continue;
      }
      if (node->result == HRL_NODE_PENDING) {
        node->result = HRL_NODE_UNREACHABLE;
        hrl_detailf(node->msg, sizeof node->msg, "no reply");
      }
      m->status = node->result == HRL_NODE_AUTH       ? HRL_EAUTH
                  : node->result == HRL_NODE_DENIED   ? HRL_EPERM
                  : node->result == HRL_NODE_SERVER   ? HRL_ESERVER
                  : node->result == HRL_NODE_PROTOCOL ? HRL_EPROTOCOL
                                                      : HRL_ECONNECT;
      hrl_detail_copy_text(m->error, sizeof m->error, node->msg,
                           strlen(node->msg));
    }
    judge(lk, in);
    op->phase = HRL_PHASE_DONE;
    op->result = HRL_OK;
    info->status = HRL_OK;
    return HRL_STEP_DONE;
  }
  default:
    info->status = op->result;
    return HRL_STEP_DONE;
  }
}

static bool to_sentinel(const hrl_lock *lk, size_t i) {
  const hrl_sentinel *s = lk->cfg->masters[i].sentinel;
  return s != NULL && hrl_sentinel_asks(s, lk->op.nodes[i].target);
}

const char *hrl_inspect_command(hrl_lock *lk, size_t i, size_t *len) {
  if (!hrl_proto_in_round(lk, i)) {
    *len = 0;
    return NULL;
  }
  hrl_node *node = &lk->op.nodes[i];
  if (to_sentinel(lk, i)) {
    const hrl_sentinel *s = lk->cfg->masters[i].sentinel;
    *len = s->query_len;
    return s->query;
  }
  const struct hrl_inspect *in = lk->extra->inspect;
  const char *cmd = node->eval_sent ? in->eval : in->cmd;
  size_t cmd_len = node->eval_sent ? in->eval_len : in->cmd_len;
  node->sent = true;
  node->asking_ack = node->asking;
  if (node->asking) {
    *len = HRL_ASKING_LEN + cmd_len;
    return cmd - HRL_ASKING_LEN;
  }
  *len = cmd_len;
  return cmd;
}

int hrl_inspect_command_replies(const hrl_lock *lk, size_t i) {
  if (!hrl_proto_in_round(lk, i)) {
    return 0;
  }
  return 1 + (!to_sentinel(lk, i) && lk->op.nodes[i].asking ? 1 : 0);
}

/* The script's fields, one at a time. */
typedef struct fields {
  const char *p, *end;
} fields;

static bool next_field(fields *f, const char **out, size_t *len) {
  size_t n = 0;
  const char *p = f->p;
  while (p < f->end && *p >= '0' && *p <= '9' && n < ((size_t)1 << 40)) {
    n = n * 10 + (size_t)(*p++ - '0');
  }
  if (p == f->p || p >= f->end || *p != ':' || (size_t)(f->end - p - 1) < n) {
    return false;
  }
  *out = p + 1;
  *len = n;
  f->p = p + 1 + n;
  return true;
}

static bool parse_int(const char *s, size_t len, int64_t *out) {
  char buf[32];
  if (len == 0 || len >= sizeof buf) {
    return false;
  }
  memcpy(buf, s, len);
  buf[len] = '\0';
  char *end;
  double v = strtod(buf, &end); /* scores may come as 1.7e15 */
  if (*end != '\0' || v != v) {
    return false;
  }
  *out = (int64_t)v;
  return true;
}

/* Text for a table: printable ASCII and UTF-8 kept, control bytes '?'. */
static void copy_text(char *dst, size_t size, const char *s, size_t len) {
  size_t n = len < size - 1 ? len : size - 1;
  for (size_t k = 0; k < n; k++) {
    unsigned char c = (unsigned char)s[k];
    dst[k] = c < 0x20 || c == 0x7f ? '?' : (char)c;
  }
  dst[n] = '\0';
}

static void short_token(char *dst, size_t size, const char *s, size_t len) {
  copy_text(dst, size < HRL_SHORT_TOKEN + 1 ? size : HRL_SHORT_TOKEN + 1, s,
            len);
}

/* Fills master i's entry from the script's answer; false when it is not
 * one. */
static bool parse_answer(hrl_lock *lk, size_t i, const char *s, size_t len) {
  struct hrl_inspect *in = lk->extra->inspect;
  hrl_master_view *m = &in->result->master[i];
  held_value *v = &in->values[i];
  fields f = {s, s + len};
  const char *x[7];
  size_t n[7];
  for (int k = 0; k < 7; k++) {
    if (!next_field(&f, &x[k], &n[k])) {
      return false;
    }
  }
  const char *kc, *hc;
  size_t kc_len, hc_len;
  int64_t now = 0, pttl = 0, queued = 0, fence = 0, holds = 0;
  if (!parse_int(x[0], n[0], &now) || !parse_int(x[3], n[3], &pttl) ||
      !parse_int(x[6], n[6], &queued) || !next_field(&f, &kc, &kc_len) ||
      !next_field(&f, &hc, &hc_len) || !parse_int(hc, hc_len, &holds) ||
      holds < 0) {
    return false;
  }
  m->present = !(n[1] == 4 && memcmp(x[1], "none", 4) == 0);
  v->string = n[1] == 6 && memcmp(x[1], "string", 6) == 0;
  bool hash = n[1] == 4 && memcmp(x[1], "hash", 4) == 0;
  bool rw = kc_len == 1 && (kc[0] == 'r' || kc[0] == 'w');
  bool permit = kc_len > 0 && kc[0] >= '0' && kc[0] <= '9';
  m->kind = !m->present      ? HRL_KIND_NONE
            : v->string      ? HRL_KIND_MUTEX
            : hash && rw     ? HRL_KIND_RWLOCK
            : hash && permit ? HRL_KIND_SEMAPHORE
                             : HRL_KIND_OTHER;
  m->holds = (size_t)holds;
  m->holds_listed = 0;
  while (m->holds_listed < m->holds && m->holds_listed < HRL_INSPECT_HOLDS) {
    const char *h[4];
    size_t hn[4];
    for (int k = 0; k < 4; k++) {
      if (!next_field(&f, &h[k], &hn[k])) {
        return false;
      }
    }
    size_t at = m->holds_listed++;
    hrl_hold_view *hv = &m->hold[at];
    int64_t expiry = 0;
    short_token(hv->token, sizeof hv->token, h[0], hn[0]);
    in->tokens[i].len[at] = hn[0] < VALUE_KEPT ? hn[0] : VALUE_KEPT;
    memcpy(in->tokens[i].bytes[at], h[0], in->tokens[i].len[at]);
    if (hn[1] == 1 && h[1][0] == 'r') {
      memcpy(hv->hold, "read", 5);
    } else if (hn[1] == 1 && h[1][0] == 'w') {
      memcpy(hv->hold, "write", 6);
    } else {
      copy_text(hv->hold, sizeof hv->hold, h[1], hn[1]);
    }
    hv->ttl_ms = parse_int(h[2], hn[2], &expiry) ? expiry - now : 0;
    hv->holding = 1;
    copy_text(hv->owner, sizeof hv->owner, h[3], hn[3]);
  }
  if (v->string) {
    short_token(m->token, sizeof m->token, x[2], n[2]);
    v->len = n[2] < VALUE_KEPT ? n[2] : VALUE_KEPT;
    memcpy(v->bytes, x[2], v->len);
  } else if (m->present) {
    char type[16];
    copy_text(type, sizeof type, x[1], n[1]);
    hrl_detailf(m->token, sizeof m->token, "(%s)", type);
  }
  m->pttl_ms = pttl;
  if (n[4] > 0 && parse_int(x[4], n[4], &fence) && fence > 0) {
    m->fence = (uint64_t)fence;
  }
  copy_text(m->owner, sizeof m->owner, x[5], n[5]);
  m->queued = queued > 0 ? (uint64_t)queued : 0;
  m->listed = 0;
  while (f.p < f.end && m->listed < HRL_INSPECT_WAITERS) {
    const char *w[4];
    size_t wn[4];
    for (int k = 0; k < 4; k++) {
      if (!next_field(&f, &w[k], &wn[k])) {
        return false;
      }
    }
    hrl_waiter_view *wv = &m->waiters[m->listed++];
    int64_t arrival_us = 0, expiry = 0;
    short_token(wv->token, sizeof wv->token, w[0], wn[0]);
    wv->age_ms =
        parse_int(w[1], wn[1], &arrival_us) ? now - arrival_us / 1000 : 0;
    /* The entry: "<expiry> <window> <channel>"; none: it is gone. */
    const char *sp = memchr(w[2], ' ', wn[2]);
    wv->lease_ms = sp != NULL && parse_int(w[2], (size_t)(sp - w[2]), &expiry)
                       ? expiry - now
                       : 0;
    copy_text(wv->owner, sizeof wv->owner, w[3], wn[3]);
  }
  m->status = HRL_OK;
  return true;
}

hrl_node_result hrl_inspect_reply(hrl_lock *lk, size_t i,
                                  const hrl_reply *reply) {
  if (!hrl_proto_in_round(lk, i)) {
    return HRL_NODE_PROTOCOL;
  }
  hrl_node *node = &lk->op.nodes[i];
  hrl_master_cfg *mc = &lk->cfg->masters[i];
  mc->late = false;
  if (node->result != HRL_NODE_PENDING) {
    return node->result;
  }
  if (mc->cluster != NULL || mc->sentinel != NULL) {
    hrl_node_result c = mc->cluster != NULL ? hrl_cluster_reply(lk, i, reply)
                                            : hrl_sentinel_reply(lk, i, reply);
    if (c != HRL_NODE_OK) {
      return c;
    }
  }
  if (hrl_reply_is_error(reply, "NOSCRIPT") && !node->eval_sent) {
    node->eval_sent = true;
    return HRL_NODE_RESEND;
  }
  if (reply->type == HRL_REPLY_STRING &&
      parse_answer(lk, i, reply->str, reply->len)) {
    node->result = HRL_NODE_OK;
    return node->result;
  }
  if (reply->type == HRL_REPLY_ERROR) {
    bool noscript;
    int64_t pttl;
    /* Errors read as any script's: NOPERM a permission refusal, NOAUTH
     * and WRONGPASS auth, the rest server errors. */
    node->result = hrl_reply_classify(HRL_ROUND_EXTEND, reply, &noscript, &pttl,
                                      node->msg, sizeof node->msg);
    if (node->result == HRL_NODE_REFUSED || node->result == HRL_NODE_RESEND) {
      node->result = HRL_NODE_SERVER; /* WRONGTYPE, NOSCRIPT to EVAL */
    }
    return node->result;
  }
  hrl_detailf(node->msg, sizeof node->msg,
              "unexpected reply to the inspect script");
  node->result = HRL_NODE_PROTOCOL;
  return node->result;
}

hrl_node_result hrl_inspect_fail(hrl_lock *lk, size_t i, hrl_node_result why,
                                 const char *message) {
  if (!hrl_proto_in_round(lk, i)) {
    return HRL_NODE_PROTOCOL;
  }
  hrl_node *node = &lk->op.nodes[i];
  if (node->result != HRL_NODE_PENDING) {
    return node->result;
  }
  bool failure = why == HRL_NODE_UNREACHABLE || why == HRL_NODE_AUTH ||
                 why == HRL_NODE_DENIED || why == HRL_NODE_SERVER ||
                 why == HRL_NODE_PROTOCOL;
  node->result = failure ? why : HRL_NODE_PROTOCOL;
  message = message != NULL ? message : "failed";
  hrl_detail_copy_text(node->msg, sizeof node->msg, message, strlen(message));
  if (lk->cfg->masters[i].cluster != NULL) {
    return hrl_cluster_failed(lk, i);
  }
  if (lk->cfg->masters[i].sentinel != NULL) {
    return hrl_sentinel_failed(lk, i);
  }
  return node->result;
}
