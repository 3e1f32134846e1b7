/*
 * The holds that share a name: the reads and the write of a read-write
 * lock, the permits of a counting semaphore (hrl_lock_options.mode). Each
 * is a lock object like the mutex, and runs the mutex's state machine
 * unchanged (redlock.c, waiting.c, lease.c: quorum, validity, cleanup, the
 * waiting queue and its hand-offs, leases, fences): only what its rounds
 * send and what the replies mean differ, and both are here.
 *
 *   the mutex's round     a hold's command (hold_script.h)
 *   SET (first attempt)   mode n: granted when the queue leaves room
 *   TRY                   mode t: claim a hand-off, or queue and be served
 *   ASIDE                 mode a: give back, stay queued
 *   RELEASE (and leave)   mode r: give back, serve the queue
 *   EXTEND                mode e, on the hash alone
 *   FENCE                 mode f: raise the counter where the token holds
 *
 * A fenced hold's counter is read inside the script (a write's and a
 * permit's INCR, a read's GET), so its acquire is one command, never the
 * mutex's pipeline of SET and INCR. A semaphore's grant names a permit
 * (1..permits): a hold is a permit held on a quorum of masters, and two
 * holds never share one (each master's hash has one holder per permit),
 * so the Redlock argument for one key bounds them: at most `permits` held
 * at once, also with N masters (docs/SAFETY.md). Masters may grant a try
 * different permits; hrl_hold_settle keeps the one most granted.
 */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "hiredlock/binding.h"
#include "hold_script.h"
#include "reply.h"
#include "state.h"

static const char *const mode_names[] = {"lock", "read", "write", "permit"};
#define MODES (sizeof mode_names / sizeof mode_names[0])

const char *hrl_lock_mode_name(hrl_lock_mode mode) {
  return (unsigned)mode < MODES ? mode_names[mode] : "?";
}

hrl_status hrl_lock_mode_parse(const char *name, size_t len, hrl_lock_mode *out,
                               char *detail, size_t detail_size) {
  for (size_t m = 0; name != NULL && m < MODES; m++) {
    if (strlen(mode_names[m]) == len && memcmp(mode_names[m], name, len) == 0) {
      *out = (hrl_lock_mode)m;
      return HRL_OK;
    }
  }
  hrl_detailf(detail, detail_size,
              "mode must be one of lock, read, write, permit, got '%.*s'",
              (int)(len < 40 ? len : 40), name != NULL ? name : "");
  return HRL_EINVAL;
}

static hrl_status bad_permits(double permits, char *detail, size_t size) {
  hrl_detailf(detail, size,
              "permits must be a whole number from 1 to %d, got %g",
              HRL_PERMITS_MAX, permits);
  return HRL_EINVAL;
}

hrl_status hrl_lock_permits_parse(double permits, uint32_t *out, char *detail,
                                  size_t detail_size) {
  if (!(permits >= 1 && permits <= HRL_PERMITS_MAX) ||
      permits != (double)(uint32_t)permits) {
    return bad_permits(permits, detail, detail_size);
  }
  *out = (uint32_t)permits;
  return HRL_OK;
}

hrl_status hrl_lock_mode_check(hrl_lock_mode mode, uint32_t permits,
                               char *detail, size_t size) {
  if ((unsigned)mode >= MODES) {
    hrl_detailf(detail, size,
                "mode must be one of lock, read, write, permit, got %d",
                (int)mode);
    return HRL_EINVAL;
  }
  if (mode == HRL_MODE_PERMIT && (permits < 1 || permits > HRL_PERMITS_MAX)) {
    return bad_permits(permits, detail, size);
  }
  if (mode != HRL_MODE_PERMIT && permits != 0) {
    hrl_detailf(detail, size,
                "permits is for a semaphore's permit (mode permit), not "
                "mode %s",
                hrl_lock_mode_name(mode));
    return HRL_EINVAL;
  }
  return HRL_OK;
}

void hrl_hold_set(hrl_lock *lk, hrl_lock_mode mode, uint32_t permits) {
  lk->mode = mode;
  lk->permits = permits;
  if (lk->renewal != NULL) {
    /* the twin renews this hold: its extend is the hold's script */
    lk->renewal->twin->mode = mode;
    lk->renewal->twin->permits = permits;
  }
}

/* The hold's script: its head (argc, EVALSHA digest or EVAL text). */
static size_t put_script(char *buf, int argc, bool by_sha,
                         const hrl_command_args *a) {
  if (a->mode == HRL_MODE_PERMIT) {
    return hrl_resp_script(buf, argc, by_sha, HRL_SEM_SCRIPT,
                           sizeof HRL_SEM_SCRIPT - 1, HRL_SEM_SHA1);
  }
  return hrl_resp_script(buf, argc, by_sha, HRL_RW_SCRIPT,
                         sizeof HRL_RW_SCRIPT - 1, HRL_RW_SHA1);
}

#define PUT_LITERAL(buf, lit) hrl_resp_arg((buf), (lit), sizeof(lit) - 1)

/* The class a hold asks for: "r", "w", or its semaphore's permits. */
static size_t put_class(char *buf, const hrl_command_args *a) {
  if (a->mode == HRL_MODE_PERMIT) {
    return hrl_resp_number(buf, a->permits);
  }
  return a->mode == HRL_MODE_WRITE ? PUT_LITERAL(buf, "w")
                                   : PUT_LITERAL(buf, "r");
}

/* k q w [c]: the hash, the queue's keys and a fenced hold's counter. */
static size_t put_keys(char *buf, const hrl_command_args *a, bool counter) {
  size_t n = hrl_resp_arg(buf, a->key, a->key_len);
  n += hrl_resp_arg(buf + n, a->queue, a->queue_len);
  n += hrl_resp_arg(buf + n, a->waiters, a->waiters_len);
  if (counter) {
    n += hrl_resp_arg(buf + n, a->fence_key, a->fence_key_len);
  }
  return n;
}

/* EVALSHA sha 3|4 k q w [c] n|t|a token ttl arrival lease window channel
 * class permit */
static size_t put_attempt(char *buf, const char *mode, bool by_sha,
                          const hrl_command_args *a) {
  bool counter = a->fence_key != NULL && mode[0] != 'a';
  size_t n = put_script(buf, counter ? 16 : 15, by_sha, a);
  n += counter ? PUT_LITERAL(buf + n, "4") : PUT_LITERAL(buf + n, "3");
  n += put_keys(buf + n, a, counter);
  n += hrl_resp_arg(buf + n, mode, 1);
  n += hrl_resp_arg(buf + n, a->token, HRL_TOKEN_LEN);
  n += hrl_resp_number(buf + n, a->number);
  n += hrl_resp_number(buf + n,
                       (uint64_t)(a->arrival_us > 0 ? a->arrival_us : 0));
  n += hrl_resp_number(buf + n, a->lease_ms);
  n += hrl_resp_number(buf + n, a->window_ms);
  n += hrl_resp_arg(buf + n, a->channel != NULL ? a->channel : "",
                    a->channel != NULL ? a->channel_len : 0);
  n += put_class(buf + n, a);
  return n + hrl_resp_number(buf + n, a->permit);
}

size_t hrl_hold_command(char *buf, hrl_round_kind kind, bool by_sha,
                        const hrl_command_args *a) {
  size_t n;
  switch (kind) {
  case HRL_ROUND_TRY:
  case HRL_ROUND_FENCED_TRY:
    return put_attempt(buf, "t", by_sha, a);
  case HRL_ROUND_ASIDE:
    return put_attempt(buf, "a", by_sha, a);
  case HRL_ROUND_EXTEND: /* EVALSHA sha 1 k e token ttl permit */
    n = put_script(buf, 8, by_sha, a);
    n += PUT_LITERAL(buf + n, "1");
    n += hrl_resp_arg(buf + n, a->key, a->key_len);
    n += PUT_LITERAL(buf + n, "e");
    n += hrl_resp_arg(buf + n, a->token, HRL_TOKEN_LEN);
    n += hrl_resp_number(buf + n, a->number);
    return n + hrl_resp_number(buf + n, a->permit);
  case HRL_ROUND_FENCE: /* EVALSHA sha 4 k q w c f token fence permit */
    n = put_script(buf, 11, by_sha, a);
    n += PUT_LITERAL(buf + n, "4");
    n += put_keys(buf + n, a, true);
    n += PUT_LITERAL(buf + n, "f");
    n += hrl_resp_arg(buf + n, a->token, HRL_TOKEN_LEN);
    n += hrl_resp_number(buf + n, a->number);
    return n + hrl_resp_number(buf + n, a->permit);
  case HRL_ROUND_RELEASE: /* EVALSHA sha 3 k q w r token */
    n = put_script(buf, 8, by_sha, a);
    n += PUT_LITERAL(buf + n, "3");
    n += put_keys(buf + n, a, false);
    n += PUT_LITERAL(buf + n, "r");
    return n + hrl_resp_arg(buf + n, a->token, HRL_TOKEN_LEN);
  case HRL_ROUND_SET:
  case HRL_ROUND_FENCED_ACQUIRE:
  default:
    return put_attempt(buf, "n", by_sha, a);
  }
}

size_t hrl_hold_plain_release(char *buf, const hrl_command_args *a) {
  static const char hdel[] = "*3\r\n$4\r\nHDEL\r\n";
  memcpy(buf, hdel, sizeof hdel - 1);
  size_t n = sizeof hdel - 1;
  n += hrl_resp_arg(buf + n, a->key, a->key_len);
  return n + hrl_resp_arg(buf + n, a->token, HRL_TOKEN_LEN);
}

/* A decimal counter of 1 to 20 digits, at most 2^63 - 1. */
static bool parse_counter(const hrl_reply *r, uint64_t *out) {
  if (r->type != HRL_REPLY_STRING || r->len < 1 || r->len > 19) {
    return false;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < r->len; i++) {
    if (r->str[i] < '0' || r->str[i] > '9') {
      return false;
    }
    v = v * 10 + (uint64_t)(r->str[i] - '0');
  }
  *out = v;
  return v <= INT64_MAX;
}

/* A grant: {permit, fence}. The permit is 0 for a read-write lock, 1 to
 * its permits for a semaphore; the fence is "0" unfenced, else the
 * counter (1 to 2^63 - 1). */
static hrl_node_result grant_of(const hrl_lock *lk, hrl_node *node,
                                const hrl_reply *r) {
  uint64_t counter = 0;
  bool permit_ok = false;
  if (r->elements == 2 && r->element[0].type == HRL_REPLY_INTEGER) {
    long long p = r->element[0].integer;
    permit_ok = lk->mode == HRL_MODE_PERMIT
                    ? p >= 1 && p <= (long long)HRL_PERMITS_MAX
                    : p == 0;
  }
  if (!permit_ok || !parse_counter(&r->element[1], &counter) ||
      (lk->fence_key != NULL && counter == 0)) {
    hrl_detailf(node->msg, sizeof node->msg,
                "unexpected reply to the %s script",
                lk->mode == HRL_MODE_PERMIT ? "semaphore" : "read-write lock");
    return HRL_NODE_PROTOCOL;
  }
  node->permit = (uint32_t)r->element[0].integer;
  node->counter = counter;
  return HRL_NODE_OK;
}

hrl_node_result hrl_hold_classify(hrl_lock *lk, hrl_node *node,
                                  const hrl_reply *reply, bool *noscript) {
  hrl_round_kind kind = lk->op.round_kind;
  if (hrl_lock_is_hold(lk) &&
      (kind == HRL_ROUND_SET || kind == HRL_ROUND_TRY)) {
    if (reply->type == HRL_REPLY_ARRAY) {
      *noscript = false;
      return grant_of(lk, node, reply);
    }
    kind = HRL_ROUND_TRY; /* a refusal (the wait's PTTL) or an error */
  }
  return hrl_reply_classify(kind, reply, noscript, &node->pttl, node->msg,
                            sizeof node->msg);
}

/* How many masters granted permit p in this round. */
static size_t granted_permit(const hrl_lock *lk, uint32_t p) {
  size_t count = 0;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    count +=
        lk->op.nodes[i].result == HRL_NODE_OK && lk->op.nodes[i].permit == p;
  }
  return count;
}

size_t hrl_hold_votes(const hrl_lock *lk) {
  size_t best = 0;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    const hrl_node *node = &lk->op.nodes[i];
    if (lk->mode != HRL_MODE_PERMIT) {
      best += node->result == HRL_NODE_OK;
    } else if (node->result == HRL_NODE_OK) {
      size_t count = granted_permit(lk, node->permit);
      best = count > best ? count : best;
    }
  }
  return best;
}

void hrl_hold_settle(hrl_lock *lk) {
  if (lk->mode != HRL_MODE_PERMIT) {
    return;
  }
  hrl_op *op = &lk->op;
  uint32_t best = 0;
  size_t best_count = 0;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    const hrl_node *node = &op->nodes[i];
    if (node->result != HRL_NODE_OK || node->permit == best) {
      continue;
    }
    /* The most granted; of those, the one asked for, then the lowest. */
    size_t count = granted_permit(lk, node->permit);
    bool better = count > best_count ||
                  (count == best_count && best != op->hint &&
                   (node->permit == op->hint || node->permit < best));
    if (better) {
      best = node->permit;
      best_count = count;
    }
  }
  for (size_t i = 0; i < lk->cfg->n; i++) {
    hrl_node *node = &op->nodes[i];
    if (node->result == HRL_NODE_OK && node->permit != best) {
      /* Our token holds another permit there: not a vote for this one,
       * and given back with the rest (step aside, cleanup, release). */
      hrl_detailf(node->msg, sizeof node->msg,
                  "granted permit %u where the others granted %u",
                  (unsigned)node->permit, (unsigned)best);
      node->result = HRL_NODE_REFUSED;
      node->took = true;
    }
  }
  lk->permit = best;
  if (best != 0) {
    op->hint = best;
  }
}

/* A kind's words: the scripts' ("lock", "rwlock", "semaphore"; the queue
 * script's "hold": a hash) or a lock's mode. */
static const char *kind_words(const char *kind, size_t len) {
  if (len == 6 && memcmp(kind, "rwlock", 6) == 0) {
    return "read-write lock";
  }
  if (len == 9 && memcmp(kind, "semaphore", 9) == 0) {
    return "semaphore";
  }
  if (len == 4 && memcmp(kind, "hold", 4) == 0) {
    return "read-write lock or semaphore"; /* the queue script's words */
  }
  return len == 4 && memcmp(kind, "lock", 4) == 0 ? "lock" : NULL;
}

static const char *mode_kind(hrl_lock_mode mode) {
  switch (mode) {
  case HRL_MODE_READ:
  case HRL_MODE_WRITE:
    return "read-write lock";
  case HRL_MODE_PERMIT:
    return "semaphore";
  default:
    return "lock";
  }
}

#define KIND_PREFIX "HRLKIND "

bool hrl_kind_refused(hrl_lock *lk, const hrl_node *nodes) {
  for (size_t i = 0; i < lk->cfg->n; i++) {
    const hrl_node *node = &nodes[i];
    size_t plen = sizeof KIND_PREFIX - 1;
    if (node->result != HRL_NODE_SERVER ||
        strncmp(node->msg, KIND_PREFIX, plen) != 0) {
      continue;
    }
    const char *held = kind_words(node->msg + plen, strlen(node->msg + plen));
    if (held == NULL) {
      continue; /* not ours: a server error like any other */
    }
    /* The name as given (control bytes as '?', a long one cut short). */
    char name[64];
    size_t len = lk->key_len - lk->prefix_len, n = 0;
    for (; n < len && n + 1 < sizeof name; n++) {
      unsigned char ch = (unsigned char)lk->key[lk->prefix_len + n];
      name[n] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    name[n] = '\0';
    hrl_detailf(lk->detail, sizeof lk->detail,
                "'%s%s' is a %s on %s, not a %s (a name is one kind of lock)",
                name, n < len ? "..." : "", held, lk->cfg->masters[i].ep.label,
                mode_kind(lk->mode));
    return true;
  }
  return false;
}
