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

int main(void) {
  RUN(test_parser_fragments);
  RUN(test_parser_arrays);
  RUN(test_parser_hostile);
  return finish_tests("test_parser");
}
