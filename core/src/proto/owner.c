/*
 * Owner labels (the `owner` option, docs/DESIGN.md section 3): who holds a
 * lock, or waits for it, written beside it in the same round trip as the
 * acquire and shown by inspections. The lock key's value stays the token,
 * so the wire format of a lock without a label, and redis-py's view of
 * one with a label, are unchanged.
 *
 * The label of a hold lives in a key of its own, keyed by its token:
 * S(K, ":owner:" token), a sibling of the lock key K (sibling_key.c). An
 * acquire cannot write a shared key without a script (a refused SET NX
 * would overwrite the holder's label), but a key of its own token it may
 * write blindly, pipelined behind the command:
 *
 *   acquire, fenced acquire,
 *   a waiter's try (fenced or not)  SET S(K,":owner:"token) label PX ttl
 *   extend (and renewals)           PEXPIRE S(K,":owner:"token) ttl
 *   release (a waiter's leave, the
 *   cleanup of a failed attempt)    DEL S(K,":owner:"token)
 *
 * An inspection reads the label of the token the key holds. A refused
 * attempt's label expires with its TTL. Its reply is read last (seam.c
 * keeps the command's decision back until then) and means nothing: a
 * label that could not be written leaves a hold without one.
 */
#ifndef _GNU_SOURCE /* tests/sim defines it for all it builds */
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detail.h"
#include "resp.h"
#include "sentinel.h"
#include "sibling_key.h"
#include "state.h"

#define OWNER_SUFFIX ":owner:"
#define OWNER_SUFFIX_LEN (sizeof OWNER_SUFFIX - 1)
/* The label's command: "*5\r\n$3\r\nSET\r\n", its key, the label, "PX" and
 * a number, each framed in at most 16 bytes. */
#define TAIL_ROOM(key_len) (64 + (key_len) + HRL_OWNER_MAX + 5 * 16)

struct hrl_owner {
  char *text; /* the option's text (%h, %p not expanded) */
  size_t text_len;
  char *key; /* S(K, ":owner:"), then room for a token */
  size_t prefix_len;
  char label[HRL_OWNER_MAX + 1]; /* expanded for label_pid */
  size_t label_len;
  pid_t label_pid;
  /* Per master: the bytes handed out (command, then the label's), and
   * what the seam needs to read the label's reply last. */
  char **bytes;
  size_t *room;
  bool *carry;    /* the bytes handed out last carry the label's command */
  bool *awaiting; /* the command was decided: the label's reply is next */
  hrl_node_result *decided;
};

hrl_status hrl_owner_check(const char *text, size_t len, char *detail,
                           size_t size) {
  if (len == 0 || len > HRL_OWNER_MAX) {
    hrl_detailf(detail, size, "owner must be 1 to %d bytes, got %zu",
                HRL_OWNER_MAX, len);
    return HRL_EINVAL;
  }
  for (size_t k = 0; k < len; k++) {
    unsigned char c = (unsigned char)text[k];
    if (c < 0x20 || c == 0x7f) {
      hrl_detailf(detail, size,
                  "owner must not contain control characters (byte %zu)", k);
      return HRL_EINVAL;
    }
    if (c == '%') {
      char next = k + 1 < len ? text[k + 1] : '\0';
      if (next != 'h' && next != 'p' && next != '%') {
        hrl_detailf(detail, size,
                    "owner: %% must be followed by h (host), p (pid) or %%");
        return HRL_EINVAL;
      }
      k++;
    }
  }
  return HRL_OK;
}

void hrl_owner_free(struct hrl_owner *o) {
  if (o == NULL) {
    return;
  }
  if (o->bytes != NULL) {
    for (size_t i = 0; o->room != NULL && o->room[i] != (size_t)-1; i++) {
      free(o->bytes[i]);
    }
  }
  free(o->bytes);
  free(o->text);
  free(o->key);
  free(o);
}

/* The owner state of lk; the arrays are one block, n + 1 entries of room
 * (the last, (size_t)-1, ends the list for hrl_owner_free). */
static hrl_status owner_new(hrl_lock *lk, char *detail, size_t size) {
  const char *text = lk->opts.owner;
  size_t len = strlen(text);
  hrl_status st = hrl_owner_check(text, len, detail, size);
  if (st != HRL_OK) {
    return st;
  }
  size_t n = lk->cfg->n;
  struct hrl_owner *o = calloc(1, sizeof *o);
  size_t key_room =
      HRL_SIBLING_KEY_MAX(lk->key_len, OWNER_SUFFIX_LEN) + HRL_TOKEN_LEN;
  size_t arrays =
      n * (sizeof(char *) + sizeof(bool) * 2 + sizeof(hrl_node_result)) +
      (n + 1) * sizeof(size_t);
  if (o != NULL) {
    o->text = malloc(len + 1);
    o->key = malloc(key_room);
    o->bytes = calloc(1, arrays);
  }
  if (o == NULL || o->text == NULL || o->key == NULL || o->bytes == NULL) {
    hrl_owner_free(o);
    hrl_detailf(detail, size, "out of memory");
    return HRL_ENOMEM;
  }
  /* The block: bytes[n], room[n + 1], decided[n], carry[n], awaiting[n]. */
  o->room = (size_t *)(void *)(o->bytes + n);
  o->decided = (hrl_node_result *)(void *)(o->room + n + 1);
  o->carry = (bool *)(void *)(o->decided + n);
  o->awaiting = o->carry + n;
  o->room[n] = (size_t)-1;
  memcpy(o->text, text, len + 1);
  o->text_len = len;
  o->prefix_len = hrl_sibling_key(lk->key, lk->key_len, OWNER_SUFFIX,
                                  OWNER_SUFFIX_LEN, o->key);
  lk->extra->owner = o;
  lk->opts.owner = o->text; /* a lease's twin copies it from here */
  return HRL_OK;
}

hrl_status hrl_lock_extra_init(hrl_lock *lk, char *detail, size_t size) {
  lk->extra = calloc(1, sizeof *lk->extra);
  if (lk->extra == NULL) {
    hrl_detailf(detail, size, "out of memory");
    return HRL_ENOMEM;
  }
  return lk->opts.owner != NULL ? owner_new(lk, detail, size) : HRL_OK;
}

void hrl_lock_extra_free(hrl_lock *lk) {
  if (lk->extra == NULL) {
    return;
  }
  hrl_owner_free(lk->extra->owner);
  hrl_inspect_free(lk->extra->inspect);
  free(lk->extra);
  lk->extra = NULL;
}

/* The label, %h and %p expanded for this process (a forked child says its
 * own pid), cut at HRL_OWNER_MAX bytes. */
static void expand(struct hrl_owner *o) {
  pid_t pid = getpid();
  if (o->label_len > 0 && o->label_pid == pid) {
    return;
  }
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0) {
    strcpy(host, "?");
  }
  char pid_text[24];
  hrl_detailf(pid_text, sizeof pid_text, "%ld", (long)pid);
  size_t n = 0;
  for (size_t k = 0; k < o->text_len && n < HRL_OWNER_MAX; k++) {
    const char *part = NULL;
    if (o->text[k] == '%' && k + 1 < o->text_len) {
      char c = o->text[++k];
      part = c == 'h' ? host : c == 'p' ? pid_text : "%";
    }
    if (part == NULL) {
      o->label[n++] = o->text[k];
      continue;
    }
    size_t len = strlen(part);
    len = len < HRL_OWNER_MAX - n ? len : HRL_OWNER_MAX - n;
    memcpy(o->label + n, part, len);
    n += len;
  }
  o->label[n] = '\0';
  o->label_len = n;
  o->label_pid = pid;
}

#define PUT_LITERAL(buf, lit)                                                  \
  (memcpy((buf), (lit), sizeof(lit) - 1), sizeof(lit) - 1)

/* The label's command for the round out now into buf; 0 when the round
 * carries none. */
static size_t put_tail(hrl_lock *lk, struct hrl_owner *o, char *buf) {
  const hrl_op *op = &lk->op;
  memcpy(o->key + o->prefix_len, op->token, HRL_TOKEN_LEN);
  size_t key_len = o->prefix_len + HRL_TOKEN_LEN;
  size_t n = 0;
  switch (op->round_kind) {
  case HRL_ROUND_SET:
  case HRL_ROUND_FENCED_ACQUIRE:
  case HRL_ROUND_TRY:
  case HRL_ROUND_FENCED_TRY:
    expand(o);
    n = PUT_LITERAL(buf, "*5\r\n$3\r\nSET\r\n");
    n += hrl_resp_arg(buf + n, o->key, key_len);
    n += hrl_resp_arg(buf + n, o->label, o->label_len);
    n += PUT_LITERAL(buf + n, "$2\r\nPX\r\n");
    return n + hrl_resp_number(buf + n, op->ttl_ms);
  case HRL_ROUND_EXTEND:
    n = PUT_LITERAL(buf, "*3\r\n$7\r\nPEXPIRE\r\n");
    n += hrl_resp_arg(buf + n, o->key, key_len);
    return n + hrl_resp_number(buf + n, op->ttl_ms);
  case HRL_ROUND_RELEASE:
    n = PUT_LITERAL(buf, "*2\r\n$3\r\nDEL\r\n");
    return n + hrl_resp_arg(buf + n, o->key, key_len);
  default:
    return 0; /* a step aside, the fence round, an inspection */
  }
}

/* Whether master i's command goes to a sentinel, as a question. */
static bool asks_sentinel(const hrl_lock *lk, size_t i) {
  const hrl_sentinel *s = lk->cfg->masters[i].sentinel;
  return s != NULL && hrl_sentinel_asks(s, lk->op.nodes[i].target);
}

const char *hrl_owner_command(hrl_lock *lk, size_t i, const char *bytes,
                              size_t *len) {
  struct hrl_owner *o = lk->extra != NULL ? lk->extra->owner : NULL;
  if (o == NULL || bytes == NULL || i >= lk->cfg->n) {
    return bytes;
  }
  o->carry[i] = false;
  o->awaiting[i] = false;
  if (asks_sentinel(lk, i)) {
    return bytes;
  }
  size_t need = *len + TAIL_ROOM(o->prefix_len + HRL_TOKEN_LEN);
  if (o->room[i] < need) {
    char *grown = realloc(o->bytes[i], need);
    if (grown == NULL) {
      return bytes; /* no label this time: the lock goes on without */
    }
    o->bytes[i] = grown;
    o->room[i] = need;
  }
  size_t tail = put_tail(lk, o, o->bytes[i] + *len);
  if (tail == 0) {
    return bytes;
  }
  memcpy(o->bytes[i], bytes, *len);
  *len += tail;
  o->carry[i] = true;
  return o->bytes[i];
}

int hrl_owner_replies(const hrl_lock *lk, size_t i) {
  const struct hrl_owner *o = lk->extra != NULL ? lk->extra->owner : NULL;
  return o != NULL && i < lk->cfg->n && o->carry[i] ? 1 : 0;
}

bool hrl_owner_takes(hrl_lock *lk, size_t i, hrl_node_result *decided) {
  struct hrl_owner *o = lk->extra != NULL ? lk->extra->owner : NULL;
  if (o == NULL || i >= lk->cfg->n || !o->awaiting[i]) {
    return false;
  }
  o->awaiting[i] = false;
  o->carry[i] = false;
  *decided = o->decided[i];
  return true;
}

hrl_node_result hrl_owner_decided(hrl_lock *lk, size_t i, hrl_node_result d) {
  struct hrl_owner *o = lk->extra != NULL ? lk->extra->owner : NULL;
  if (o == NULL || i >= lk->cfg->n || !o->carry[i] || d == HRL_NODE_MORE) {
    return d;
  }
  if (d == HRL_NODE_PROTOCOL) {
    o->carry[i] = false; /* out of step: the connection is closed */
    return d;
  }
  o->awaiting[i] = true;
  o->decided[i] = d;
  return HRL_NODE_MORE;
}

void hrl_owner_forget(hrl_lock *lk, size_t i) {
  struct hrl_owner *o = lk->extra != NULL ? lk->extra->owner : NULL;
  if (o != NULL && i < lk->cfg->n) {
    o->carry[i] = false;
    o->awaiting[i] = false;
  }
}
