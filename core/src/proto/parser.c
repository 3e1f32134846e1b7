/* An incremental RESP reader for byte-stream transports (the OpenResty
 * cosocket driver). A lock command gets one small reply: a status, an error,
 * an integer, a bulk string or nil. Anything else -- arrays, RESP3 types,
 * oversized frames, malformed numbers -- is a protocol error, so a hostile
 * or confused server can never make it allocate much or lose sync silently.
 * A subscriber connection's reader (subscriber.c) takes small arrays too:
 * their header comes as one reply (HRL_REPLY_OTHER, integer: the count),
 * their elements as the replies after it.
 *
 * Rules: bytes are appended by hrl_parser_feed(); hrl_parser_next() consumes
 * exactly one complete reply from the front or reports that more bytes are
 * needed; after a protocol error every call fails until the parser is freed.
 */
#include <stdlib.h>
#include <string.h>

#include "parser.h"

/* A reply line or bulk longer than this is not one of ours. */
#define FRAME_MAX (64 * 1024)

struct hrl_parser {
  char *buf;
  size_t len; /* bytes held */
  size_t pos; /* start of the unconsumed bytes */
  size_t cap;
  bool broken;
  long long max_array; /* longest array header taken; 0: none */
};

hrl_parser *hrl_parser_new(void) {
  return calloc(1, sizeof(hrl_parser));
}

void hrl_parser_free(hrl_parser *p) {
  if (p != NULL) {
    free(p->buf);
    free(p);
  }
}

void hrl_parser_accept_arrays(hrl_parser *p, long long max_elements) {
  p->max_array = max_elements;
}

void hrl_parser_reset(hrl_parser *p) {
  p->len = 0;
  p->pos = 0;
  p->broken = false;
}

hrl_status hrl_parser_feed(hrl_parser *p, const char *data, size_t n) {
  if (p->broken) {
    return HRL_EPROTOCOL;
  }
  if (p->pos > 0) {
    /* Drop consumed bytes; they belong to replies already handed out. */
    memmove(p->buf, p->buf + p->pos, p->len - p->pos);
    p->len -= p->pos;
    p->pos = 0;
  }
  if (p->len + n > 2 * FRAME_MAX + 64) {
    p->broken = true;
    return HRL_EPROTOCOL;
  }
  if (p->len + n > p->cap) {
    size_t cap = p->cap != 0 ? p->cap : 256;
    while (cap < p->len + n) {
      cap *= 2;
    }
    char *grown = realloc(p->buf, cap);
    if (grown == NULL) {
      return HRL_ENOMEM;
    }
    p->buf = grown;
    p->cap = cap;
  }
  if (n > 0) {
    memcpy(p->buf + p->len, data, n);
    p->len += n;
  }
  return HRL_OK;
}

/* Finds "\r\n" in [from, len); returns its offset or -1. */
static long find_crlf(const hrl_parser *p, size_t from) {
  for (size_t i = from; i + 1 < p->len; i++) {
    if (p->buf[i] == '\r' && p->buf[i + 1] == '\n') {
      return (long)i;
    }
  }
  return -1;
}

/* Parses a signed decimal that fits in long long. */
static bool parse_integer(const char *s, size_t n, long long *out) {
  size_t i = 0;
  bool neg = false;
  if (n > 0 && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == n || n - i > 19) {
    return false;
  }
  unsigned long long v = 0;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') {
      return false;
    }
    v = v * 10 + (unsigned long long)(s[i] - '0');
  }
  if (v > (unsigned long long)9223372036854775807LL + (neg ? 1 : 0)) {
    return false;
  }
  *out = neg ? (long long)(0 - v) : (long long)v;
  return true;
}

static int broken(hrl_parser *p) {
  p->broken = true;
  return -1;
}

int hrl_parser_next(hrl_parser *p, hrl_reply *out) {
  if (p->broken) {
    return -1;
  }
  if (p->pos >= p->len) {
    return 0;
  }
  long eol = find_crlf(p, p->pos);
  if (eol < 0) {
    return p->len - p->pos > FRAME_MAX ? broken(p) : 0;
  }
  char kind = p->buf[p->pos];
  const char *line = p->buf + p->pos + 1;
  size_t line_len = (size_t)eol - p->pos - 1;
  if (line_len > FRAME_MAX || memchr(line, '\r', line_len) != NULL) {
    return broken(p);
  }
  size_t next = (size_t)eol + 2;
  memset(out, 0, sizeof *out);
  switch (kind) {
  case '+':
  case '-':
    out->type = kind == '+' ? HRL_REPLY_STATUS : HRL_REPLY_ERROR;
    out->str = line;
    out->len = line_len;
    break;
  case ':':
    if (!parse_integer(line, line_len, &out->integer)) {
      return broken(p);
    }
    out->type = HRL_REPLY_INTEGER;
    break;
  case '$': {
    long long blen;
    if (!parse_integer(line, line_len, &blen) || blen < -1 ||
        blen > FRAME_MAX) {
      return broken(p);
    }
    if (blen == -1) {
      out->type = HRL_REPLY_NIL;
      break;
    }
    if (p->len < next + (size_t)blen + 2) {
      return 0;
    }
    if (p->buf[next + (size_t)blen] != '\r' ||
        p->buf[next + (size_t)blen + 1] != '\n') {
      return broken(p);
    }
    out->type = HRL_REPLY_STRING;
    out->str = p->buf + next;
    out->len = (size_t)blen;
    next += (size_t)blen + 2;
    break;
  }
  case '*': {
    long long count;
    if (!parse_integer(line, line_len, &count) || count < -1) {
      return broken(p);
    }
    if (count == -1) {
      out->type = HRL_REPLY_NIL;
      break;
    }
    if (p->max_array == 0 || count > p->max_array) {
      /* A real array is never an answer to our commands. */
      return broken(p);
    }
    out->type = HRL_REPLY_OTHER;
    out->integer = count;
    break;
  }
  default:
    return broken(p);
  }
  p->pos = next;
  return 1;
}
