/* RESP command formatting, written out by hand: the commands are few and
 * fixed, and building them into one buffer per lock costs no allocation. */
#include "resp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCRIPT_LEN_MAX (sizeof HRL_EXTEND_SCRIPT)

size_t hrl_resp_command_capacity(size_t key_len) {
  /* Six arguments, each with "$<len>\r\n...\r\n" framing (at most 16 bytes
   * of framing), the longest script, the key, a token and a number. */
  return 16 + 6 * 16 + SCRIPT_LEN_MAX + key_len + HRL_TOKEN_LEN + 16;
}

static size_t put_arg(char *buf, const char *arg, size_t len) {
  int n = sprintf(buf, "$%zu\r\n", len);
  memcpy(buf + n, arg, len);
  memcpy(buf + n + len, "\r\n", 2);
  return (size_t)n + len + 2;
}

static size_t put_str(char *buf, const char *arg) {
  return put_arg(buf, arg, strlen(arg));
}

size_t hrl_resp_acquire(char *buf, const char *key, size_t key_len,
                        const char *token, uint32_t ttl_ms) {
  char ttl[16];
  snprintf(ttl, sizeof ttl, "%u", (unsigned)ttl_ms);
  size_t n = 0;
  memcpy(buf, "*6\r\n$3\r\nSET\r\n", 13);
  n += 13;
  n += put_arg(buf + n, key, key_len);
  n += put_arg(buf + n, token, HRL_TOKEN_LEN);
  memcpy(buf + n, "$2\r\nNX\r\n$2\r\nPX\r\n", 16);
  n += 16;
  n += put_str(buf + n, ttl);
  return n;
}

size_t hrl_resp_script(char *buf, hrl_op_kind op, int by_sha, const char *key,
                       size_t key_len, const char *token, uint32_t ttl_ms) {
  int extend = op == HRL_OP_EXTEND;
  size_t n = (size_t)sprintf(buf, "*%d\r\n", extend ? 6 : 5);
  n += put_str(buf + n, by_sha ? "EVALSHA" : "EVAL");
  if (by_sha) {
    n += put_str(buf + n, extend ? HRL_EXTEND_SHA1 : HRL_RELEASE_SHA1);
  } else {
    n += put_str(buf + n, extend ? HRL_EXTEND_SCRIPT : HRL_RELEASE_SCRIPT);
  }
  n += put_str(buf + n, "1");
  n += put_arg(buf + n, key, key_len);
  n += put_arg(buf + n, token, HRL_TOKEN_LEN);
  if (extend) {
    char ttl[16];
    snprintf(ttl, sizeof ttl, "%u", (unsigned)ttl_ms);
    n += put_str(buf + n, ttl);
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
  size_t n = (size_t)sprintf(buf, "*%d\r\n", argc);
  for (int i = 0; i < argc; i++) {
    n += put_arg(buf + n, argv[i], lens[i]);
  }
  *out_len = n;
  return buf;
}
