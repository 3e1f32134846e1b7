/* RESP command formatting, written out by hand: the commands are few and
 * fixed, and building them into one buffer per lock costs no allocation. */
#include "resp.h"

#include <stdlib.h>
#include <string.h>

#define SCRIPT_LEN_MAX (sizeof HRL_EXTEND_SCRIPT)

size_t hrl_resp_command_capacity(size_t key_len) {
  /* Six arguments, each with "$<len>\r\n...\r\n" framing (at most 16 bytes
   * of framing), the longest script, the key, a token and a number. */
  return 16 + 6 * 16 + SCRIPT_LEN_MAX + key_len + HRL_TOKEN_LEN + 16;
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

static size_t put_ttl(char *buf, uint32_t ttl_ms) {
  char ttl[20];
  return put_arg(buf, ttl, put_uint(ttl, ttl_ms));
}

size_t hrl_resp_acquire(char *buf, const char *key, size_t key_len,
                        const char *token, uint32_t ttl_ms) {
  size_t n = 0;
  memcpy(buf, "*6\r\n$3\r\nSET\r\n", 13);
  n += 13;
  n += put_arg(buf + n, key, key_len);
  n += put_arg(buf + n, token, HRL_TOKEN_LEN);
  memcpy(buf + n, "$2\r\nNX\r\n$2\r\nPX\r\n", 16);
  n += 16;
  n += put_ttl(buf + n, ttl_ms);
  return n;
}

size_t hrl_resp_script(char *buf, hrl_op_kind op, int by_sha, const char *key,
                       size_t key_len, const char *token, uint32_t ttl_ms) {
  int extend = op == HRL_OP_EXTEND;
  size_t n = put_count(buf, extend ? 6 : 5);
  if (by_sha) {
    n += PUT_LITERAL(buf + n, "EVALSHA");
    n += extend ? PUT_LITERAL(buf + n, HRL_EXTEND_SHA1)
                : PUT_LITERAL(buf + n, HRL_RELEASE_SHA1);
  } else {
    n += PUT_LITERAL(buf + n, "EVAL");
    n += extend ? PUT_LITERAL(buf + n, HRL_EXTEND_SCRIPT)
                : PUT_LITERAL(buf + n, HRL_RELEASE_SCRIPT);
  }
  n += PUT_LITERAL(buf + n, "1");
  n += put_arg(buf + n, key, key_len);
  n += put_arg(buf + n, token, HRL_TOKEN_LEN);
  if (extend) {
    n += put_ttl(buf + n, ttl_ms);
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
