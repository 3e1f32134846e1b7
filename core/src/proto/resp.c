/* RESP command formatting, written out by hand: the commands are few and
 * fixed, and building them into one buffer per lock costs no allocation. */
#include "resp.h"

#include <stdlib.h>
#include <string.h>

/* The longest script (they are string literals: sizeof counts the NUL). */
#define SCRIPT_LEN_MAX (sizeof HRL_FENCE_SCRIPT)
_Static_assert(sizeof HRL_RELEASE_SCRIPT <= SCRIPT_LEN_MAX &&
                   sizeof HRL_EXTEND_SCRIPT <= SCRIPT_LEN_MAX,
               "SCRIPT_LEN_MAX must be the longest script");

size_t hrl_resp_command_capacity(size_t key_len, size_t fence_key_len) {
  /* Two array headers and up to eight arguments (SET's six and INCR's
   * two, or a script's seven), each with "$<len>\r\n...\r\n" framing (at
   * most 16 bytes), the longest script, the key, the counter key, a token
   * and a number. */
  return 2 * 16 + 8 * 16 + SCRIPT_LEN_MAX + key_len + fence_key_len +
         HRL_TOKEN_LEN + 20;
}

/* Decimal digits of v; returns how many were written. The commands are
 * formatted on every round of every lock cycle, so no stdio here: sprintf
 * alone was most of the core's own instructions per cycle. */
static size_t put_uint(char *buf, uint64_t v) {
  char tmp[20];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (size_t i = 0; i < n; i++) {
    buf[i] = tmp[n - 1 - i];
  }
  return n;
}

/* "*<argc>\r\n" */
static size_t put_count(char *buf, int argc) {
  buf[0] = '*';
  size_t n = 1 + put_uint(buf + 1, (uint64_t)argc);
  memcpy(buf + n, "\r\n", 2);
  return n + 2;
}

/* "$<len>\r\n<arg>\r\n" */
static size_t put_arg(char *buf, const char *arg, size_t len) {
  buf[0] = '$';
  size_t n = 1 + put_uint(buf + 1, len);
  memcpy(buf + n, "\r\n", 2);
  n += 2;
  memcpy(buf + n, arg, len);
  memcpy(buf + n + len, "\r\n", 2);
  return n + len + 2;
}

/* A string literal as one argument. */
#define PUT_LITERAL(buf, lit) put_arg((buf), (lit), sizeof(lit) - 1)

static size_t put_number(char *buf, uint64_t v) {
  char digits[20];
  return put_arg(buf, digits, put_uint(digits, v));
}

static size_t put_set(char *buf, const hrl_command_args *a) {
  size_t n = 0;
  memcpy(buf, "*6\r\n$3\r\nSET\r\n", 13);
  n += 13;
  n += put_arg(buf + n, a->key, a->key_len);
  n += put_arg(buf + n, a->token, HRL_TOKEN_LEN);
  memcpy(buf + n, "$2\r\nNX\r\n$2\r\nPX\r\n", 16);
  n += 16;
  return n + put_number(buf + n, a->number);
}

/* A fenced acquire: the SET, and INCR of the counter behind it in the same
 * write. No script: at N = 1 a script's own cost on the server was a tenth
 * of a lock cycle, two plain commands cost a third of that. The INCR runs
 * whether the SET took or not: a counter may only grow, never has to grow
 * by one (docs/SAFETY.md). */
static size_t put_fenced_acquire(char *buf, const hrl_command_args *a) {
  size_t n = put_set(buf, a);
  memcpy(buf + n, "*2\r\n$4\r\nINCR\r\n", 14);
  n += 14;
  return n + put_arg(buf + n, a->fence_key, a->fence_key_len);
}

int hrl_resp_replies(hrl_round_kind kind) {
  return kind == HRL_ROUND_FENCED_ACQUIRE ? 2 : 1;
}

/* A script's source and digest. */
typedef struct script {
  const char *source;
  size_t len;
  const char *sha1;
} script;

#define SCRIPT(name)                                                           \
  { name##_SCRIPT, sizeof name##_SCRIPT - 1, name##_SHA1 }

size_t hrl_resp_command(char *buf, hrl_round_kind kind, bool by_sha,
                        const hrl_command_args *a) {
  static const script release = SCRIPT(HRL_RELEASE),
                      extend = SCRIPT(HRL_EXTEND), fence = SCRIPT(HRL_FENCE);
  const script *s = &fence;
  bool two_keys = true, number = true; /* the counter key, a number last */
  switch (kind) {
  case HRL_ROUND_SET:
    return put_set(buf, a);
  case HRL_ROUND_FENCED_ACQUIRE:
    return put_fenced_acquire(buf, a);
  case HRL_ROUND_RELEASE:
    s = &release;
    two_keys = number = false;
    break;
  case HRL_ROUND_EXTEND:
    s = &extend;
    two_keys = false;
    break;
  case HRL_ROUND_FENCE:
    break;
  }
  /* EVAL script numkeys key [counter-key] token [number] */
  size_t n = put_count(buf, 5 + two_keys + number);
  if (by_sha) {
    n += PUT_LITERAL(buf + n, "EVALSHA");
    n += put_arg(buf + n, s->sha1, 40);
  } else {
    n += PUT_LITERAL(buf + n, "EVAL");
    n += put_arg(buf + n, s->source, s->len);
  }
  n += two_keys ? PUT_LITERAL(buf + n, "2") : PUT_LITERAL(buf + n, "1");
  n += put_arg(buf + n, a->key, a->key_len);
  if (two_keys) {
    n += put_arg(buf + n, a->fence_key, a->fence_key_len);
  }
  n += put_arg(buf + n, a->token, HRL_TOKEN_LEN);
  if (number) {
    n += put_number(buf + n, a->number);
  }
  return n;
}

char *hrl_resp_format(int argc, const char *const *argv, const size_t *lens,
                      size_t *out_len) {
  size_t cap = 16;
  for (int i = 0; i < argc; i++) {
    cap += lens[i] + 24;
  }
  char *buf = malloc(cap);
  if (buf == NULL) {
    return NULL;
  }
  size_t n = put_count(buf, argc);
  for (int i = 0; i < argc; i++) {
    n += put_arg(buf + n, argv[i], lens[i]);
  }
  *out_len = n;
  return buf;
}
