/* Unit tests of a subscriber connection's stream without Redis (the
 * handshake, SUBSCRIBE, the pushes it hears, what closes it) and of the
 * channels clients subscribe to. */
#include <stdlib.h>

#include "check.h"
#include "proto/resp.h"

static const char *const one[] = {"redis://127.0.0.1:1"};

/* Feeds bytes to a subscriber; returns the first notice. */
static hrl_notice feed(hrl_subscriber *sub, const char *bytes, const char **out,
                       size_t *len) {
  return hrl_subscriber_feed(sub, bytes, strlen(bytes), out, len);
}

static void test_subscriber_stream(void) {
  const char *url = "redis://user:pw@127.0.0.1:1/2";
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(&url, 1, NULL, &c, NULL, 0), HRL_OK);
  CHECK(hrl_subscriber_new(c, 1) == NULL); /* no master 2 */
  hrl_subscriber *sub = hrl_subscriber_new(c, 0);
  size_t chan_len, len;
  const char *chan = hrl_client_channel(c, &chan_len);
  const char *bytes = hrl_subscriber_start(sub, &len);
  /* The handshake alone first, then the SUBSCRIBE. */
  CHECK(len > 0 && memmem(bytes, len, "AUTH", 4) != NULL);
  CHECK(memmem(bytes, len, "SUBSCRIBE", 9) == NULL);
  const char *out;
  CHECK_INT(feed(sub, "+OK\r\n", &out, &len), HRL_NOTICE_MORE);
  CHECK_INT(feed(sub, "+OK\r\n", &out, &len), HRL_NOTICE_SEND);
  char want[128];
  snprintf(want, sizeof want, "*2\r\n$9\r\nSUBSCRIBE\r\n$%zu\r\n%s\r\n",
           chan_len, chan);
  CHECK(len == strlen(want) && memcmp(out, want, len) == 0);
  char stream[1024];
  const char *tok = "0123456789abcdef0123456789abcdef";
  const char *f32 = "ffffffffffffffffffffffffffffffff";
  snprintf(stream, sizeof stream,
           "*3\r\n$9\r\nsubscribe\r\n$%zu\r\n%s\r\n:1\r\n"
           "*3\r\n$7\r\nmessage\r\n$%zu\r\n%s\r\n$32\r\n%s\r\n"
           "*3\r\n$7\r\nmessage\r\n$5\r\nother\r\n$32\r\n%s\r\n"
           "*3\r\n$7\r\nmessage\r\n$%zu\r\n%s\r\n$5\r\nshort\r\n"
           "*3\r\n$7\r\nmessage\r\n$%zu\r\n%s\r\n$32\r\n%s\r\n",
           chan_len, chan, chan_len, chan, tok, tok, chan_len, chan, chan_len,
           chan, f32);
  /* Whatever the chunks, the same notices: ready, and two hand-offs (the
   * other channel and the bad payload are nothing). */
  size_t total = strlen(stream);
  for (size_t cut = 0; cut <= total; cut += 7) {
    hrl_subscriber_start(sub, &len);
    feed(sub, "+OK\r\n", &out, &len);
    feed(sub, "+OK\r\n", &out, &len);
    int ready = 0, handoffs = 0;
    for (int part = 0; part < 2; part++) {
      const char *from = part == 0 ? stream : stream + cut;
      size_t n = part == 0 ? cut : total - cut;
      for (hrl_notice k = hrl_subscriber_feed(sub, from, n, &out, &len);
           k != HRL_NOTICE_MORE;
           k = hrl_subscriber_feed(sub, NULL, 0, &out, &len)) {
        if (k == HRL_NOTICE_READY) {
          ready++;
        } else if (k == HRL_NOTICE_HANDOFF) {
          CHECK_INT(len, HRL_TOKEN_LEN);
          CHECK(memcmp(out, handoffs == 0 ? tok : f32, HRL_TOKEN_LEN) == 0);
          handoffs++;
        } else {
          CHECK(!"unexpected notice");
        }
      }
    }
    CHECK_INT(ready, 1);
    CHECK_INT(handoffs, 2);
  }
  /* A refused handshake, a refused SUBSCRIBE, nested arrays, garbage:
   * close (and say why). */
  hrl_subscriber_start(sub, &len);
  CHECK_INT(feed(sub, "-WRONGPASS invalid\r\n", &out, &len), HRL_NOTICE_CLOSE);
  CHECK_CONTAINS(out, "WRONGPASS");
  static const char *const bad[] = {
      "-NOPERM this user has no permissions\r\n",
      "*3\r\n*1\r\n",
      ":1\r\n",
      "*9\r\n", /* longer than any push */
      "!junk\r\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hrl_subscriber_start(sub, &len);
    feed(sub, "+OK\r\n", &out, &len);
    CHECK_INT(feed(sub, "+OK\r\n", &out, &len), HRL_NOTICE_SEND);
    CHECK_INT(feed(sub, bad[i], &out, &len), HRL_NOTICE_CLOSE);
    CHECK(out != NULL && len > 0);
  }
  /* A push of another shape is not ours: ignored, the stream goes on. */
  hrl_subscriber_start(sub, &len);
  feed(sub, "+OK\r\n", &out, &len);
  feed(sub, "+OK\r\n", &out, &len);
  CHECK_INT(feed(sub,
                 "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$1\r\nb\r\n$1\r\nc\r\n",
                 &out, &len),
            HRL_NOTICE_MORE);
  hrl_subscriber_free(sub);
  hrl_client_free(c);
  /* Without a handshake the SUBSCRIBE goes first. */
  url = "redis://127.0.0.1:1";
  CHECK_STATUS(hrl_client_new(&url, 1, NULL, &c, NULL, 0), HRL_OK);
  sub = hrl_subscriber_new(c, 0);
  bytes = hrl_subscriber_start(sub, &len);
  CHECK(len > 14 && memcmp(bytes, "*2\r\n$9\r\nSUBSCRIBE\r\n", 19) == 0);
  hrl_subscriber_free(sub);
  hrl_client_free(c);
}

static void test_channels_differ_by_client_and_prefix(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.key_prefix = "app:";
  o.key_prefix_len = 4;
  hrl_client *a = NULL, *b = NULL;
  CHECK_STATUS(hrl_client_new(one, 1, &o, &a, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_client_new(one, 1, &o, &b, NULL, 0), HRL_OK);
  size_t la, lb;
  const char *ca = hrl_client_channel(a, &la);
  const char *cb = hrl_client_channel(b, &lb);
  CHECK(la == 4 + 15 + 32 && memcmp(ca, "app:hiredlock:wake:", 19) == 0);
  CHECK(la == lb && memcmp(ca, cb, la) != 0);
  /* The same in a forked child: its own (the fork hook makes it anew). */
  char before[128];
  memcpy(before, ca, la);
  hrl_client_fork_prepare(a);
  hrl_client_after_fork(a);
  ca = hrl_client_channel(a, &la);
  CHECK(memcmp(before, ca, la) != 0);
  hrl_client_free(a);
  hrl_client_free(b);
}

int main(void) {
  RUN(test_subscriber_stream);
  RUN(test_channels_differ_by_client_and_prefix);
  return finish_tests("test_subscriber_proto");
}
