/* Unit tests of the RESP reader without Redis: replies split anywhere,
 * a Sentinel's flat arrays, and hostile input it must refuse. */
#include <stdlib.h>

#include "check.h"
#include "proto/resp.h"

static int next_of(hrl_parser *p, hrl_reply *r) {
  return hrl_parser_next(p, r);
}

static void test_parser_fragments(void) {
  const char stream[] = "+OK\r\n$-1\r\n:1\r\n:-42\r\n-NOSCRIPT No matching\r\n"
                        "$5\r\nab\r\nc\r\n*-1\r\n$0\r\n\r\n";
  /* Every split of the stream into two parts gives the same replies. */
  for (size_t cut = 0; cut <= sizeof stream - 1; cut++) {
    hrl_parser *p = hrl_parser_new();
    hrl_reply r;
    int got = 0;
    CHECK_STATUS(hrl_parser_feed(p, stream, cut), HRL_OK);
    while (next_of(p, &r) == 1) {
      got++;
    }
    CHECK_STATUS(hrl_parser_feed(p, stream + cut, sizeof stream - 1 - cut),
                 HRL_OK);
    int rc;
    while ((rc = next_of(p, &r)) == 1) {
      got++;
    }
    CHECK_INT(rc, 0);
    CHECK_INT(got, 8);
    hrl_parser_free(p);
  }
  hrl_parser *p = hrl_parser_new();
  hrl_reply r;
  for (const char *c = stream; *c; c++) {
    CHECK_STATUS(hrl_parser_feed(p, c, 1), HRL_OK);
    if (next_of(p, &r) == 1) {
      if (r.type == HRL_REPLY_STRING && r.len == 5) {
        CHECK(memcmp(r.str, "ab\r\nc", 5) == 0);
      }
      if (r.type == HRL_REPLY_INTEGER && r.integer < 0) {
        CHECK_INT(r.integer, -42);
      }
    }
  }
  hrl_parser_free(p);
}

/* A Sentinel's answer: a flat array, whole or not yet, nil as *-1. */
static void test_parser_arrays(void) {
  const char *wire = "*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n*-1\r\n*0\r\n";
  size_t whole = strlen(wire);
  hrl_parser *p = hrl_parser_new();
  hrl_reply r;
  for (size_t k = 0; k < 28; k++) { /* byte by byte: nothing before the end */
    CHECK_STATUS(hrl_parser_feed(p, wire + k, 1), HRL_OK);
    CHECK_INT(hrl_parser_next(p, &r), 0);
  }
  CHECK_STATUS(hrl_parser_feed(p, wire + 28, whole - 28), HRL_OK);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK(r.type == HRL_REPLY_ARRAY && r.elements == 2);
  CHECK(r.element[0].type == HRL_REPLY_STRING && r.element[0].len == 9 &&
        memcmp(r.element[0].str, "127.0.0.1", 9) == 0);
  CHECK(r.element[1].type == HRL_REPLY_STRING && r.element[1].len == 4);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK(r.type == HRL_REPLY_NIL);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK(r.type == HRL_REPLY_ARRAY && r.elements == 0);
  CHECK_INT(hrl_parser_next(p, &r), 0);
  hrl_parser_free(p);
}

static void test_parser_hostile(void) {
  static const char *const bad[] = {
      "*1\r\n*1\r\n:1\r\n",        /* nested arrays are never our replies */
      "*9\r\n",                    /* nor long ones */
      "$99999999999\r\n",          /* huge bulk */
      "$-2\r\n",                   /* negative length */
      ":12x\r\n",                  /* bad integer */
      ":99999999999999999999\r\n", /* overflow */
      "$3\r\nabcd\r\n",            /* bulk without its CRLF */
      "?\r\n",                     /* unknown type */
      "#t\r\n",                    /* RESP3 boolean */
      "+O\rK\r\n",                 /* CR inside a line */
      ":\r\n",                     /* empty integer */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hrl_parser *p = hrl_parser_new();
    hrl_reply r;
    CHECK_STATUS(hrl_parser_feed(p, bad[i], strlen(bad[i])), HRL_OK);
    int rc = hrl_parser_next(p, &r);
    if (rc != -1) {
      fprintf(stderr, "hostile input %zu accepted: %d\n", i, rc);
      check_failures++;
    }
    /* Broken stays broken. */
    CHECK_INT(hrl_parser_next(p, &r), -1);
    CHECK_STATUS(hrl_parser_feed(p, "+OK\r\n", 5), HRL_EPROTOCOL);
    hrl_parser_free(p);
  }
  /* An endless line without CRLF is cut off rather than buffered forever. */
  hrl_parser *p = hrl_parser_new();
  char junk[4096];
  memset(junk, 'x', sizeof junk);
  junk[0] = '+';
  hrl_status st = HRL_OK;
  hrl_reply r;
  int rc = 0;
  for (int i = 0; i < 64 && st == HRL_OK && rc == 0; i++) {
    st = hrl_parser_feed(p, junk, sizeof junk);
    rc = st == HRL_OK ? hrl_parser_next(p, &r) : -1;
  }
  CHECK(rc == -1 || st == HRL_EPROTOCOL);
  hrl_parser_free(p);
}

/* Reads wire, one reply, into a reply filled with junk first. */
static int read_one(const char *wire, hrl_reply *r, hrl_parser **out) {
  hrl_parser *p = hrl_parser_new();
  memset(r, 0xAA, sizeof *r);
  CHECK_STATUS(hrl_parser_feed(p, wire, strlen(wire)), HRL_OK);
  int rc = hrl_parser_next(p, r);
  *out = p;
  return rc;
}

/* The replies of a lock cycle (+OK, $-1, a one-digit integer) have a
 * quicker way through the reader: every field of what it hands out is
 * what the general reader makes of them (and of their near misses), and
 * the bytes after one are read as before. */
static void test_parser_common_replies(void) {
  static const struct {
    const char *wire;
    hrl_reply_type type;
    const char *str;
    long long integer;
  } want[] = {
      {"+OK\r\n", HRL_REPLY_STATUS, "OK", 0},
      {"+OKAY\r\n", HRL_REPLY_STATUS, "OKAY", 0},
      {"+O\r\n", HRL_REPLY_STATUS, "O", 0},
      {"$-1\r\n", HRL_REPLY_NIL, NULL, 0},
      {":0\r\n", HRL_REPLY_INTEGER, NULL, 0},
      {":1\r\n", HRL_REPLY_INTEGER, NULL, 1},
      {":9\r\n", HRL_REPLY_INTEGER, NULL, 9},
      {":10\r\n", HRL_REPLY_INTEGER, NULL, 10},
      {":-1\r\n", HRL_REPLY_INTEGER, NULL, -1},
      {":+1\r\n", HRL_REPLY_INTEGER, NULL, 1},
      {"$2\r\nOK\r\n", HRL_REPLY_STRING, "OK", 0},
  };
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    hrl_parser *p;
    hrl_reply r;
    CHECK_INT(read_one(want[k].wire, &r, &p), 1);
    CHECK_INT(r.type, want[k].type);
    CHECK_INT(r.integer, want[k].integer);
    CHECK_INT(r.elements, 0);
    CHECK(r.element == NULL);
    if (want[k].str != NULL) {
      CHECK(r.len == strlen(want[k].str) &&
            memcmp(r.str, want[k].str, r.len) == 0);
    } else {
      CHECK(r.str == NULL && r.len == 0);
    }
    CHECK_INT(hrl_parser_next(p, &r), 0); /* all of it read */
    hrl_parser_free(p);
  }
  /* Near misses: incomplete (more bytes needed), or malformed. */
  static const char *const more[] = {"+OK\r", ":1\r", "$-1\r", ":1\n\r"};
  for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
    hrl_parser *p;
    hrl_reply r;
    CHECK_INT(read_one(more[k], &r, &p), 0);
    hrl_parser_free(p);
  }
  static const char *const bad[] = {"$-1\r\r\n", ":1\r\r\n", ":x\r\n",
                                    "$-2\r\n"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    hrl_parser *p;
    hrl_reply r;
    CHECK_INT(read_one(bad[k], &r, &p), -1);
    hrl_parser_free(p);
  }
  /* A pipeline's replies in one read, the common and others mixed. */
  hrl_parser *p;
  hrl_reply r;
  CHECK_INT(read_one("+OK\r\n:7\r\n$-1\r\n:12\r\n-ERR x\r\n+OK\r\n", &r, &p),
            1);
  CHECK_INT(r.type, HRL_REPLY_STATUS);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK(r.type == HRL_REPLY_INTEGER && r.integer == 7);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK_INT(r.type, HRL_REPLY_NIL);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK(r.type == HRL_REPLY_INTEGER && r.integer == 12);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK(r.type == HRL_REPLY_ERROR && r.len == 5);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK(r.type == HRL_REPLY_STATUS && r.len == 2);
  CHECK_INT(hrl_parser_next(p, &r), 0);
  /* and the next read after all was read starts afresh */
  CHECK_STATUS(hrl_parser_feed(p, ":3\r\n", 4), HRL_OK);
  CHECK_INT(hrl_parser_next(p, &r), 1);
  CHECK(r.type == HRL_REPLY_INTEGER && r.integer == 3);
  hrl_parser_free(p);
}

int main(void) {
  RUN(test_parser_fragments);
  RUN(test_parser_common_replies);
  RUN(test_parser_arrays);
  RUN(test_parser_hostile);
  return finish_tests("test_parser");
}
