/* An incremental RESP reader for byte-stream transports (the OpenResty
 * cosocket driver). A lock command gets one small reply: a status, an error,
 * an integer, a bulk string or nil; a Sentinel's answer is a flat array of
 * two of them. Anything else -- nested or long arrays, RESP3 types,
 * oversized frames, malformed numbers -- is a protocol error, so a hostile
 * or confused server can never make it allocate much or lose sync silently.
 *
 * Rules: bytes are appended by hrl_parser_feed(); hrl_parser_next() consumes
 * exactly one complete reply from the front or reports that more bytes are
 * needed; after a protocol error every call fails until the parser is freed.
 */
#include <stdlib.h>
#include <string.h>

#include "hiredlock/proto.h"

/* A reply line or bulk longer than this is not one of ours. */
#define FRAME_MAX (64 * 1024)

struct hrl_parser {
  char *buf;
  size_t len; /* bytes held */
  size_t pos; /* start of the unconsumed bytes */
  size_t cap;
  bool broken;
  hrl_reply elements[HRL_REPLY_ELEMENTS_MAX]; /* the last array's items */
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

void hrl_parser_reset(hrl_parser *p) {
  p->len = 0;
  p->pos = 0;
  p->broken = false;
}

hrl_status hrl_parser_feed(hrl_parser *p, const char *data, size_t n) {
  if (p->broken) {
    return HRL_EPROTOCOL;
  }
  if (p->pos > 0 && p->pos == p->len) {
    /* Every reply read (the usual case: one read, one reply): nothing to
     * move. */
    p->len = 0;
    p->pos = 0;
  } else if (p->pos > 0) {
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

/* One reply that is not an array from p->buf at *at (advanced past it):
 * 1 and *out, 0 when more bytes are needed, -1 when it is malformed or an
 * array (`array`: the count of an array header, for the caller). */
static int scalar_at(hrl_parser *p, size_t *at, hrl_reply *out,
                     long long *array) {
  long eol = find_crlf(p, *at);
  if (eol < 0) {
    return p->len - *at > FRAME_MAX ? -1 : 0;
  }
  char kind = p->buf[*at];
  const char *line = p->buf + *at + 1;
  size_t line_len = (size_t)eol - *at - 1;
  if (line_len > FRAME_MAX || memchr(line, '\r', line_len) != NULL) {
    return -1;
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
      return -1;
    }
    out->type = HRL_REPLY_INTEGER;
    break;
  case '$': {
    long long blen;
    if (!parse_integer(line, line_len, &blen) || blen < -1 ||
        blen > FRAME_MAX) {
      return -1;
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
      return -1;
    }
    out->type = HRL_REPLY_STRING;
    out->str = p->buf + next;
    out->len = (size_t)blen;
    next += (size_t)blen + 2;
    break;
  }
  case '*':
    if (array == NULL || !parse_integer(line, line_len, array) || *array < -1 ||
        *array > HRL_REPLY_ELEMENTS_MAX) {
      return -1; /* nested, or longer than any answer of ours */
    }
    out->type = *array == -1 ? HRL_REPLY_NIL : HRL_REPLY_ARRAY;
    break;
  default:
    return -1;
  }
  *at = next;
  return 1;
}

/* The replies of a lock cycle -- +OK, a nil bulk ($-1) and a one-digit
 * integer (a release's, an extend's) -- read without the general parser
 * below, into the same hrl_reply it makes of them; 0 for anything else,
 * which the general parser reads (or rejects). */
static int common_reply(hrl_parser *p, hrl_reply *out) {
  const char *s = p->buf + p->pos;
  size_t avail = p->len - p->pos;
  if (avail >= 4 && s[0] == ':' && s[1] >= '0' && s[1] <= '9' && s[2] == '\r' &&
      s[3] == '\n') {
    memset(out, 0, sizeof *out);
    out->type = HRL_REPLY_INTEGER;
    out->integer = s[1] - '0';
    p->pos += 4;
    return 1;
  }
  if (avail >= 5 && memcmp(s, "+OK\r\n", 5) == 0) {
    memset(out, 0, sizeof *out);
    out->type = HRL_REPLY_STATUS;
    out->str = s + 1;
    out->len = 2;
    p->pos += 5;
    return 1;
  }
  if (avail >= 5 && memcmp(s, "$-1\r\n", 5) == 0) {
    memset(out, 0, sizeof *out);
    out->type = HRL_REPLY_NIL;
    p->pos += 5;
    return 1;
  }
  return 0;
}

int hrl_parser_next(hrl_parser *p, hrl_reply *out) {
  if (p->broken) {
    return -1;
  }
  if (p->pos >= p->len) {
    return 0;
  }
  if (common_reply(p, out)) {
    return 1;
  }
  size_t at = p->pos;
  long long count = 0;
  int got = scalar_at(p, &at, out, &count);
  if (got <= 0) {
    return got < 0 ? broken(p) : 0;
  }
  if (out->type == HRL_REPLY_ARRAY) {
    for (long long k = 0; k < count; k++) {
      got = scalar_at(p, &at, &p->elements[k], NULL);
      if (got <= 0) {
        return got < 0 ? broken(p) : 0; /* the array whole, or not yet */
      }
    }
    out->elements = (size_t)count;
    out->element = p->elements;
  }
  p->pos = at;
  return 1;
}
