/* Unit tests of a subscriber connection's stream without Redis (the
 * handshake, SUBSCRIBE, the pushes it hears, what closes it, where it
 * connects: a Sentinel-managed primary's asks a sentinel first), of the
 * channels clients subscribe to, and of what lets clients share one. */
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

/* Opens the next connection of sub and checks where it goes. */
static void check_open(hrl_subscriber *sub, const char *label, int port,
                       bool handshake) {
  hrl_target to;
  hrl_subscriber_open(sub, &to);
  CHECK_STR(to.label, label);
  CHECK_INT(to.port, port);
  CHECK(to.handshake == handshake);
  CHECK(to.path == NULL && to.host != NULL);
}

static void test_a_sentinel_names_the_primary_first(void) {
  const char *url = "redis+sentinel://:pw@127.0.0.1:26001,127.0.0.1:26002/svc";
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(&url, 1, NULL, &c, NULL, 0), HRL_OK);
  hrl_subscriber *sub = hrl_subscriber_new(c, 0);
  const char *question =
      "*3\r\n$8\r\nSENTINEL\r\n$23\r\nget-master-addr-by-name"
      "\r\n$3\r\nsvc\r\n";
  size_t len;
  const char *out;
  /* The first sentinel, asked without a handshake. */
  check_open(sub, "127.0.0.1:26001", 26001, false);
  const char *bytes = hrl_subscriber_start(sub, &len);
  CHECK(len == strlen(question) && memcmp(bytes, question, len) == 0);
  /* It knows no such service: closed, the next connection asks the next
   * one; one that cannot be reached, the one after (round robin). */
  CHECK_INT(feed(sub, "*-1\r\n", &out, &len), HRL_NOTICE_CLOSE);
  CHECK_CONTAINS(out,
                 "sentinel 127.0.0.1:26001: no primary known for service svc");
  check_open(sub, "127.0.0.1:26002", 26002, false);
  check_open(sub, "127.0.0.1:26001", 26001, false);
  hrl_subscriber_start(sub, &len);
  CHECK_INT(feed(sub, "-ERR no\r\n", &out, &len), HRL_NOTICE_CLOSE);
  CHECK_CONTAINS(out, "sentinel 127.0.0.1:26001: ERR no");
  check_open(sub, "127.0.0.1:26002", 26002, false);
  hrl_subscriber_start(sub, &len);
  CHECK_INT(feed(sub, "*2\r\n$9\r\n127.0.0.1\r\n$6\r\n700000\r\n", &out, &len),
            HRL_NOTICE_CLOSE);
  CHECK_CONTAINS(out, "a primary address that cannot be taken");
  /* An answer: to the primary at once, with the handshake, then SUBSCRIBE;
   * whatever else the sentinel sent is not read. */
  check_open(sub, "127.0.0.1:26001", 26001, false);
  hrl_subscriber_start(sub, &len);
  CHECK_INT(
      feed(sub, "*2\r\n$8\r\n10.0.0.7\r\n$4\r\n6390\r\n+junk\r\n", &out, &len),
      HRL_NOTICE_REDIRECT);
  CHECK(len == 13 && memcmp(out, "10.0.0.7:6390", 13) == 0);
  check_open(sub, "10.0.0.7:6390", 6390, true);
  bytes = hrl_subscriber_start(sub, &len);
  CHECK(memmem(bytes, len, "AUTH", 4) != NULL);
  CHECK_INT(feed(sub, "+OK\r\n", &out, &len), HRL_NOTICE_SEND);
  CHECK(memmem(out, len, "SUBSCRIBE", 9) != NULL);
  /* That connection ended (a failover closed it): the next one asks again,
   * the sentinel that answered first. */
  check_open(sub, "127.0.0.1:26001", 26001, false);
  hrl_subscriber_start(sub, &len);
  CHECK_INT(feed(sub, "*2\r\n$6\r\n::1%lo\r\n$4\r\n6391\r\n", &out, &len),
            HRL_NOTICE_REDIRECT);
  check_open(sub, "[::1%lo]:6391", 6391, true);
  hrl_subscriber_free(sub);
  hrl_client_free(c);

  /* A plain master: always the master, with its handshake. */
  url = "unix:///tmp/x.sock";
  CHECK_STATUS(hrl_client_new(&url, 1, NULL, &c, NULL, 0), HRL_OK);
  sub = hrl_subscriber_new(c, 0);
  for (int k = 0; k < 2; k++) {
    hrl_target to;
    hrl_subscriber_open(sub, &to);
    CHECK(to.host == NULL && to.path != NULL && to.handshake);
    CHECK_STR(to.path, "/tmp/x.sock");
  }
  hrl_subscriber_free(sub);
  hrl_client_free(c);
}

/* master i's subscriber key of c, as a string of its bytes. */
static size_t key_of(hrl_client *c, size_t i, char *buf, size_t size) {
  size_t n = hrl_client_subscriber_key(c, i, NULL, 0);
  CHECK(n > 0 && n <= size);
  CHECK_INT(hrl_client_subscriber_key(c, i, buf, size), n);
  char small[8];
  CHECK_INT(hrl_client_subscriber_key(c, i, small, sizeof small), n);
  CHECK(memcmp(small, buf, sizeof small) == 0);
  return n;
}

static void test_clients_share_a_channel_and_subscriber(void) {
  hrl_options o;
  hrl_options_init(&o);
  const char *urls[] = {"redis://127.0.0.1:1", "redis://:pw@127.0.0.1:2/3"};
  hrl_client *a = NULL, *b = NULL, *d = NULL, *e = NULL;
  CHECK_STATUS(hrl_client_new(urls, 2, &o, &a, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_client_new(urls, 2, &o, &b, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_client_new(urls + 1, 1, &o, &d, NULL, 0), HRL_OK);
  o.key_prefix = "app:";
  o.key_prefix_len = 4;
  CHECK_STATUS(hrl_client_new(urls, 2, &o, &e, NULL, 0), HRL_OK);
  char ka[2][512], kb[2][512], kd[512], ke[512];
  size_t la0 = key_of(a, 0, ka[0], sizeof ka[0]);
  size_t la1 = key_of(a, 1, ka[1], sizeof ka[1]);
  size_t lb0 = key_of(b, 0, kb[0], sizeof kb[0]);
  /* Clients of their own channels: their subscribers are their own. */
  CHECK(la0 != la1 || memcmp(ka[0], ka[1], la0) != 0);
  CHECK(la0 != lb0 || memcmp(ka[0], kb[0], la0) != 0);
  /* b hears on a's channel now: the same keys for the same masters. */
  CHECK(hrl_client_share_channel(b, a));
  CHECK(hrl_client_share_channel(b, a)); /* again: shared already */
  CHECK(hrl_client_share_channel(d, a));
  CHECK(hrl_client_share_channel(e, a));
  size_t la, lb, le;
  const char *ca = hrl_client_channel(a, &la);
  const char *cb = hrl_client_channel(b, &lb);
  const char *ce = hrl_client_channel(e, &le);
  CHECK(la == lb && memcmp(ca, cb, la) == 0);
  CHECK(le == la + 4 && memcmp(ce, "app:", 4) == 0 &&
        memcmp(ce + 4, ca, la) == 0); /* its own prefix, a's id */
  for (size_t i = 0; i < 2; i++) {
    size_t n = key_of(a, i, ka[i], sizeof ka[i]);
    CHECK_INT(key_of(b, i, kb[i], sizeof kb[i]), n);
    CHECK(memcmp(ka[i], kb[i], n) == 0);
  }
  /* The same master at another index: the same key; another prefix (so
   * another channel): another key. */
  size_t ld = key_of(d, 0, kd, sizeof kd);
  la1 = key_of(a, 1, ka[1], sizeof ka[1]);
  CHECK(ld == la1 && memcmp(kd, ka[1], ld) == 0);
  size_t lke = key_of(e, 1, ke, sizeof ke);
  CHECK(lke != la1 || memcmp(ke, ka[1], lke) != 0);
  /* Sharing with itself changes nothing. */
  hrl_client *f = NULL;
  CHECK_STATUS(hrl_client_new(urls, 2, NULL, &f, NULL, 0), HRL_OK);
  size_t lf;
  char before[128];
  const char *cf = hrl_client_channel(f, &lf);
  memcpy(before, cf, lf);
  CHECK(hrl_client_share_channel(f, f));
  cf = hrl_client_channel(f, &lf);
  CHECK(memcmp(before, cf, lf) == 0);
  CHECK_INT(hrl_client_subscriber_key(f, 2, NULL, 0), 0); /* no master 3 */
  hrl_client_free(a);
  hrl_client_free(b);
  hrl_client_free(d);
  hrl_client_free(e);
  hrl_client_free(f);
}

static void test_the_key_tells_tls_settings_and_handshakes_apart(void) {
  const char *urls[] = {
      "rediss://127.0.0.1:1",
      "rediss://127.0.0.1:1?ssl_cert_reqs=none",
      "redis://127.0.0.1:1",
      "redis://u:pw@127.0.0.1:1",
      "redis://127.0.0.1:1/4",
      "redis+sentinel://127.0.0.1:26001/a",
      "redis+sentinel://127.0.0.1:26001/b",
  };
  enum { N = sizeof urls / sizeof urls[0] };
  hrl_client *c[N];
  char key[N][600];
  size_t len[N];
  for (size_t k = 0; k < N; k++) {
    c[k] = NULL;
    CHECK_STATUS(hrl_client_new(&urls[k], 1, NULL, &c[k], NULL, 0), HRL_OK);
    if (k > 0) {
      CHECK(hrl_client_share_channel(c[k], c[0]));
    }
    len[k] = key_of(c[k], 0, key[k], sizeof key[k]);
    for (size_t j = 0; j < k; j++) {
      CHECK(len[j] != len[k] || memcmp(key[j], key[k], len[k]) != 0);
    }
  }
  for (size_t k = 0; k < N; k++) {
    hrl_client_free(c[k]);
  }
}

int main(void) {
  RUN(test_subscriber_stream);
  RUN(test_channels_differ_by_client_and_prefix);
  RUN(test_a_sentinel_names_the_primary_first);
  RUN(test_clients_share_a_channel_and_subscriber);
  RUN(test_the_key_tells_tls_settings_and_handshakes_apart);
  return finish_tests("test_subscriber_proto");
}
