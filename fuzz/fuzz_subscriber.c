/* libFuzzer: a subscriber connection's stream (hrl_subscriber) fed hostile
 * bytes in fuzzer-chosen pieces, after a handshake or none, or first to a
 * sentinel asked where the primary is (the first byte picks).
 * Invariants: SEND only once per connection, for the SUBSCRIBE, after
 * every handshake reply; a hand-off is exactly HRL_TOKEN_LEN lowercase hex
 * characters; CLOSE says why; REDIRECT names where, "host:port", and the
 * next connection goes there with the handshake; nothing is read outside
 * what was fed. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "hiredlock/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(const char *p, size_t n) {
  volatile unsigned sum = 0;
  for (size_t i = 0; i < n; i++) {
    sum += (unsigned char)p[i];
  }
  (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) {
    return 0;
  }
  static const char *const urls[] = {
      "redis://127.0.0.1:1", "redis://u:p@127.0.0.1:1/3",
      "redis+sentinel://:p@127.0.0.1:1,127.0.0.1:2/svc"};
  const char *url = urls[data[0] % 3];
  size_t step = (size_t)(data[1] % 23) + 1;
  data += 2;
  size -= 2;
  hrl_client *c = NULL;
  if (hrl_client_new(&url, 1, NULL, &c, NULL, 0) != HRL_OK) {
    __builtin_trap();
  }
  hrl_subscriber *s = hrl_subscriber_new(c, 0);
  hrl_target to;
  hrl_subscriber_open(s, &to);
  touch(to.label, strlen(to.label));
  size_t len;
  const char *start = hrl_subscriber_start(s, &len);
  touch(start, len);
  int sends = 0;
  bool closed = false;
  for (size_t off = 0; off < size && !closed; off += step) {
    size_t n = size - off < step ? size - off : step;
    const char *out;
    size_t out_len;
    for (hrl_notice k = hrl_subscriber_feed(s, (const char *)data + off, n,
                                            &out, &out_len);
         k != HRL_NOTICE_MORE && !closed;
         k = hrl_subscriber_feed(s, NULL, 0, &out, &out_len)) {
      touch(out, out_len);
      switch (k) {
      case HRL_NOTICE_SEND:
        if (++sends > 1 || memmem(out, out_len, "SUBSCRIBE", 9) == NULL) {
          __builtin_trap();
        }
        break;
      case HRL_NOTICE_HANDOFF:
        if (out_len != HRL_TOKEN_LEN) {
          __builtin_trap();
        }
        for (size_t i = 0; i < out_len; i++) {
          if (!((out[i] >= '0' && out[i] <= '9') ||
                (out[i] >= 'a' && out[i] <= 'f'))) {
            __builtin_trap();
          }
        }
        break;
      case HRL_NOTICE_CLOSE:
        if (out_len == 0 || out[out_len] != '\0') {
          __builtin_trap(); /* a message, terminated */
        }
        closed = true;
        break;
      case HRL_NOTICE_REDIRECT:
        if (out_len == 0 || out[out_len] != '\0' ||
            memchr(out, ':', out_len) == NULL) {
          __builtin_trap();
        }
        hrl_subscriber_open(s, &to); /* the primary, with the handshake */
        if (!to.handshake || strcmp(to.label, out) != 0) {
          __builtin_trap();
        }
        start = hrl_subscriber_start(s, &len);
        touch(start, len);
        sends = 0;
        break;
      default:
        break;
      }
    }
  }
  hrl_subscriber_free(s);
  hrl_client_free(c);
  return 0;
}
