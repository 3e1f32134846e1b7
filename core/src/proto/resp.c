/* RESP command formatting, written out by hand: the commands are few and
 * fixed, and building them into one buffer per lock costs no allocation. */
#include "resp.h"

#include <stdlib.h>
#include <string.h>

#include "hold_script.h"

/* Framing of one argument: "$<len>\r\n" and "\r\n", at most 16 bytes. */
#define FRAMING 16
/* Most arguments of a command (a try: EVALSHA sha 3 k q w t token ttl
 * arrival lease window channel handed, and INCR counter behind a fenced
 * one; a hold's try: EVALSHA sha 4 k q w c n token ttl arrival lease
 * window channel class slot), the most numbers in one (a hold's try: six)
 * and the longest number (a 64-bit value). */
#define ARGS_MAX 16
#define NUMBERS_MAX 6
#define NUMBER_MAX 20

static size_t capacity(size_t key_len, size_t sibling_len, size_t channel_len,
                       size_t script_len, bool wait) {
  /* two array headers: a fenced acquire or try is two commands; and the
   * WAIT (or WAITAOF) that may follow them */
  return 2 * 16 + ARGS_MAX * FRAMING + script_len + key_len + 3 * sibling_len +
         HRL_TOKEN_LEN + NUMBERS_MAX * NUMBER_MAX + channel_len +
         (wait ? HRL_RESP_WAIT_MAX : 0);
}

size_t hrl_resp_command_capacity(size_t key_len, size_t sibling_len,
                                 size_t channel_len, bool wait) {
  return capacity(key_len, sibling_len, channel_len, 40, wait); /* a SHA1 */
}

size_t hrl_resp_eval_capacity(size_t key_len, size_t sibling_len,
                              size_t channel_len) {
  size_t longest = sizeof HRL_QUEUE_SCRIPT;
  longest =
      sizeof HRL_EXTEND_SCRIPT > longest ? sizeof HRL_EXTEND_SCRIPT : longest;
  longest =
      sizeof HRL_FENCE_SCRIPT > longest ? sizeof HRL_FENCE_SCRIPT : longest;
  longest = sizeof HRL_RW_SCRIPT > longest ? sizeof HRL_RW_SCRIPT : longest;
  longest = sizeof HRL_SEM_SCRIPT > longest ? sizeof HRL_SEM_SCRIPT : longest;
  return capacity(key_len, sibling_len, channel_len, longest, true);
}

/* Decimal digits of v; returns how many were written. The commands are
 * formatted on every round of every lock cycle, so no stdio here: sprintf
 * alone was most of the core's own instructions per cycle. Most numbers
 * are lengths of one or two digits: those take no division loop. */
static size_t put_uint(char *buf, uint64_t v) {
  if (v < 10) {
    buf[0] = (char)('0' + v);
    return 1;
  }
  if (v < 100) {
    buf[0] = (char)('0' + v / 10);
    buf[1] = (char)('0' + v % 10);
    return 2;
  }
  size_t n = 3;
  for (uint64_t rest = v / 1000; rest != 0; rest /= 10) {
    n++;
  }
  for (size_t i = n; i-- > 0; v /= 10) {
    buf[i] = (char)('0' + v % 10);
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

/* Bytes known when compiling (a string literal: an argument already
 * framed, or a run of them), copied with no length to work out. */
#define PUT_BYTES(buf, lit)                                                    \
  (memcpy((buf), (lit), sizeof(lit) - 1), sizeof(lit) - 1)
/* A string literal as one argument. */
#define PUT_LITERAL(buf, lit) put_arg((buf), (lit), sizeof(lit) - 1)
/* "$32\r\n" is 5 bytes, the token 32, "\r\n" 2: each copy of a fixed
 * size, so the compiler moves them inline. */
#define TOKEN_FRAME "$32\r\n"
_Static_assert(HRL_TOKEN_LEN == 32, "TOKEN_FRAME frames a 32-byte token");

static size_t put_token(char *buf, const char *token) {
  size_t n = PUT_BYTES(buf, TOKEN_FRAME);
  memcpy(buf + n, token, HRL_TOKEN_LEN);
  memcpy(buf + n + HRL_TOKEN_LEN, "\r\n", 2);
  return n + HRL_TOKEN_LEN + 2;
}

static size_t put_number(char *buf, uint64_t v) {
  char digits[NUMBER_MAX];
  return put_arg(buf, digits, put_uint(digits, v));
}

static size_t put_set(char *buf, const hrl_command_args *a) {
  size_t n = 0;
  memcpy(buf, "*6\r\n$3\r\nSET\r\n", 13);
  n += 13;
  n += put_arg(buf + n, a->key, a->key_len);
  n += put_token(buf + n, a->token);
  n += PUT_BYTES(buf + n, "$2\r\nNX\r\n$2\r\nPX\r\n");
  return n + put_number(buf + n, a->number);
}

/* INCR counter, pipelined behind a fenced acquire's SET or a fenced try.
 * No script: at N = 1 a script's own cost on the server was a tenth of a
 * lock cycle, a plain command a third of that. The INCR runs whether the
 * first command took or not: a counter may only grow, never has to grow by
 * one (docs/SAFETY.md). */
static size_t put_incr(char *buf, const hrl_command_args *a) {
  memcpy(buf, "*2\r\n$4\r\nINCR\r\n", 14);
  return 14 + put_arg(buf + 14, a->fence_key, a->fence_key_len);
}

size_t hrl_resp_wait(char *buf, uint32_t replicas, bool aof,
                     uint32_t timeout_ms) {
  static const char waitaof[] = "*4\r\n$7\r\nWAITAOF\r\n$1\r\n1\r\n";
  static const char wait[] = "*3\r\n$4\r\nWAIT\r\n";
  size_t n = aof ? sizeof waitaof - 1 : sizeof wait - 1;
  memcpy(buf, aof ? waitaof : wait, n);
  n += put_number(buf + n, replicas);
  return n + put_number(buf + n, timeout_ms);
}

int hrl_resp_replies(hrl_round_kind kind) {
  return kind == HRL_ROUND_FENCED_ACQUIRE || kind == HRL_ROUND_FENCED_TRY ? 2
                                                                          : 1;
}

/* EVALSHA sha (or EVAL script): the script's first arguments. framed_sha
 * is "$7\r\nEVALSHA\r\n$40\r\n<sha1>\r\n", SHA_FRAMED_LEN bytes. */
#define EVALSHA_FRAME "$7\r\nEVALSHA\r\n$40\r\n"
#define SHA_FRAMED_LEN (sizeof EVALSHA_FRAME - 1 + 40 + 2)

static size_t put_script(char *buf, int argc, bool by_sha, const char *source,
                         size_t len, const char *framed_sha) {
  size_t n = put_count(buf, argc);
  if (by_sha) {
    memcpy(buf + n, framed_sha, SHA_FRAMED_LEN);
    return n + SHA_FRAMED_LEN;
  }
  n += PUT_LITERAL(buf + n, "EVAL");
  return n + put_arg(buf + n, source, len);
}

#define PUT_SCRIPT(buf, argc, by_sha, name)                                    \
  put_script((buf), (argc), (by_sha), name##_SCRIPT, sizeof name##_SCRIPT - 1, \
             EVALSHA_FRAME name##_SHA1 "\r\n")

/* EVALSHA sha 1 key token ttl */
static size_t put_extend(char *buf, bool by_sha, const hrl_command_args *a) {
  size_t n = PUT_SCRIPT(buf, 6, by_sha, HRL_EXTEND);
  n += PUT_LITERAL(buf + n, "1");
  n += put_arg(buf + n, a->key, a->key_len);
  n += put_token(buf + n, a->token);
  return n + put_number(buf + n, a->number);
}

size_t hrl_resp_plain_release(char *buf, const hrl_command_args *a) {
  if (a->mode != HRL_MODE_LOCK) {
    return hrl_hold_plain_release(buf, a);
  }
  size_t n = PUT_SCRIPT(buf, 5, false, HRL_PLAIN_RELEASE);
  n += PUT_LITERAL(buf + n, "1");
  n += put_arg(buf + n, a->key, a->key_len);
  return n + put_token(buf + n, a->token);
}

size_t hrl_resp_plain_try(char *buf, bool fenced, const hrl_command_args *a) {
  size_t n = put_set(buf, a);
  return fenced ? n + put_incr(buf + n, a) : n;
}

/* EVALSHA sha 2 key counter token fence */
static size_t put_fence(char *buf, bool by_sha, const hrl_command_args *a) {
  size_t n = PUT_SCRIPT(buf, 7, by_sha, HRL_FENCE);
  n += PUT_LITERAL(buf + n, "2");
  n += put_arg(buf + n, a->key, a->key_len);
  n += put_arg(buf + n, a->fence_key, a->fence_key_len);
  n += put_token(buf + n, a->token);
  return n + put_number(buf + n, a->number);
}

/* EVALSHA sha 3 key queue waiters mode token
 *   [ttl arrival lease window channel handed] */
static size_t put_queue(char *buf, const char *mode, bool by_sha,
                        const hrl_command_args *a) {
  bool waiter = mode[0] != 'r';
  size_t n = PUT_SCRIPT(buf, waiter ? 14 : 8, by_sha, HRL_QUEUE);
  n += PUT_BYTES(buf + n, "$1\r\n3\r\n");
  n += put_arg(buf + n, a->key, a->key_len);
  n += put_arg(buf + n, a->queue, a->queue_len);
  n += put_arg(buf + n, a->waiters, a->waiters_len);
  n += put_arg(buf + n, mode, 1);
  n += put_token(buf + n, a->token);
  if (waiter) {
    n += put_number(buf + n, a->number);
    n += put_number(buf + n, (uint64_t)(a->arrival_us > 0 ? a->arrival_us : 0));
    n += put_number(buf + n, a->lease_ms);
    n += put_number(buf + n, a->window_ms);
    n += put_arg(buf + n, a->channel, a->channel_len);
    n += put_arg(buf + n, a->handed_ttl ? "1" : "0", 1);
  }
  return n;
}

size_t hrl_resp_command(char *buf, hrl_round_kind kind, bool by_sha,
                        const hrl_command_args *a) {
  if (a->mode != HRL_MODE_LOCK) {
    return hrl_hold_command(buf, kind, by_sha, a);
  }
  switch (kind) {
  case HRL_ROUND_SET:
    return put_set(buf, a);
  case HRL_ROUND_FENCED_ACQUIRE: {
    size_t n = put_set(buf, a);
    return n + put_incr(buf + n, a);
  }
  case HRL_ROUND_FENCE:
    return put_fence(buf, by_sha, a);
  case HRL_ROUND_EXTEND:
    return put_extend(buf, by_sha, a);
  case HRL_ROUND_TRY:
    return put_queue(buf, "t", by_sha, a);
  case HRL_ROUND_FENCED_TRY: {
    size_t n = put_queue(buf, "t", by_sha, a);
    return n + put_incr(buf + n, a);
  }
  case HRL_ROUND_ASIDE:
    return put_queue(buf, "a", by_sha, a);
  case HRL_ROUND_RELEASE:
  default:
    return put_queue(buf, "r", by_sha, a);
  }
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

size_t hrl_resp_arg(char *buf, const char *arg, size_t len) {
  return put_arg(buf, arg, len);
}

size_t hrl_resp_number(char *buf, uint64_t v) {
  return put_number(buf, v);
}

size_t hrl_resp_uint(char *buf, uint64_t v) {
  return put_uint(buf, v);
}

size_t hrl_resp_script(char *buf, int argc, bool by_sha, const char *source,
                       size_t len, const char *sha1) {
  if (!by_sha) {
    return put_script(buf, argc, false, source, len, NULL);
  }
  size_t n = put_count(buf, argc);
  n += PUT_BYTES(buf + n, EVALSHA_FRAME);
  memcpy(buf + n, sha1, 40);
  memcpy(buf + n + 40, "\r\n", 2);
  return n + 42;
}
