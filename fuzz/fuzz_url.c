/* libFuzzer: URL and option parsing. The input is split at the first 0xff
 * byte: before it, up to 3 URLs separated by '\n'; after it, raw option
 * fields. Every rejection must come with a message; every client made must
 * free cleanly (LeakSanitizer). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hiredlock/binding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *sep = memchr(data, 0xff, size);
  size_t url_len = sep != NULL ? (size_t)(sep - data) : size;
  char *text = malloc(url_len + 1);
  if (text == NULL) {
    return 0;
  }
  memcpy(text, data, url_len);
  text[url_len] = '\0';
  const char *urls[3];
  size_t n = 0;
  char *save = NULL;
  for (char *u = strtok_r(text, "\n", &save); u != NULL && n < 3;
       u = strtok_r(NULL, "\n", &save)) {
    urls[n++] = u;
  }
  hrl_options o;
  hrl_options_init(&o);
  if (sep != NULL) {
    const uint8_t *opt = sep + 1;
    size_t left = size - url_len - 1;
    uint32_t fields[4] = {0, 0, 0, 0};
    memcpy(fields, opt, left < sizeof fields ? left : sizeof fields);
    o.connect_timeout_ms = fields[0];
    o.timeout_ms = fields[1];
    o.retry_delay_ms = fields[2];
    o.retry_jitter_ms = fields[3];
    double drift = 0;
    if (left >= sizeof fields + sizeof drift) {
      memcpy(&drift, opt + sizeof fields, sizeof drift);
      o.drift_factor = drift;
    }
    int64_t ms;
    char d[HRL_DETAIL_MAX];
    d[0] = '\0';
    if (hrl_seconds_to_ms("ttl", drift, 1, HRL_TTL_MAX_MS, &ms, d, sizeof d) ==
        HRL_OK) {
      if (ms < 1 || ms > HRL_TTL_MAX_MS) {
        __builtin_trap();
      }
    } else if (d[0] == '\0') {
      __builtin_trap(); /* a rejection always says why */
    }
  }
  hrl_client *c = NULL;
  char detail[HRL_DETAIL_MAX];
  detail[0] = '\0';
  hrl_status st = hrl_client_new(urls, n, &o, &c, detail, sizeof detail);
  if (st == HRL_OK) {
    for (size_t i = 0; i < hrl_client_masters(c); i++) {
      if (hrl_client_master_label(c, i)[0] == '\0') {
        __builtin_trap();
      }
    }
    hrl_client_free(c);
  } else if (c != NULL || detail[0] == '\0') {
    __builtin_trap();
  }
  free(text);
  return 0;
}
