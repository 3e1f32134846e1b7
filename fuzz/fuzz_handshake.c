/* libFuzzer: the new-connection handshake, the parser surface the other
 * targets leave out. The input is split at the first 0xff byte: before it a
 * URL (so credentials and a database select come from the fuzzer, up to
 * AUTH user pass + SELECT), after it the bytes a hostile server sends back,
 * read with the core's RESP reader in fuzzer-chosen pieces and judged with
 * hrl_proto_handshake_reply. An odd-length URL gets a restart_guard, so the
 * handshake ends with INFO server and the hostile bytes reach its reader
 * (run_id, uptime: proto/server_info.c). Invariants: the handshake is RESP
 * arrays, at most AUTH, SELECT and INFO; every judged reply is OK / AUTH /
 * SERVER / PROTOCOL, its message is terminated inside its buffer, and
 * out-of-range replies and masters are refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hiredlock/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *sep = memchr(data, 0xff, size);
  size_t url_len = sep != NULL ? (size_t)(sep - data) : size;
  char *url = malloc(url_len + 1);
  if (url == NULL) {
    return 0;
  }
  memcpy(url, data, url_len);
  url[url_len] = '\0';
  const char *urls[1] = {url};
  hrl_client *c = NULL;
  hrl_options o;
  hrl_options_init(&o);
  o.restart_guard_ms = url_len % 2 == 1 ? 30000 : 0;
  if (hrl_client_new(urls, 1, &o, &c, NULL, 0) != HRL_OK) {
    free(url);
    return 0;
  }
  size_t hs_len = 0;
  int replies = 0;
  const char *hs = hrl_proto_handshake(c, 0, &hs_len, &replies);
  if (replies < 0 || replies > 3 || (replies > 0) != (hs != NULL && hs_len)) {
    __builtin_trap();
  }
  /* What we send are RESP arrays (AUTH, SELECT, INFO). */
  if (hs_len > 0 && hs[0] != '*') {
    __builtin_trap();
  }
  hrl_reply bad = {.type = HRL_REPLY_STATUS, .str = "OK", .len = 2};
  char msg[64];
  if (hrl_proto_handshake_reply(c, 0, replies, &bad, msg, sizeof msg) !=
          HRL_NODE_PROTOCOL ||
      hrl_proto_handshake_reply(c, 1, 0, &bad, msg, sizeof msg) !=
          HRL_NODE_PROTOCOL) {
    __builtin_trap();
  }
  hrl_parser *p = hrl_parser_new();
  const uint8_t *in = sep != NULL ? sep + 1 : data + size;
  size_t left = sep != NULL ? size - url_len - 1 : 0;
  int k = 0;
  while (p != NULL && left > 0 && k < replies) {
    size_t chunk = (size_t)in[0] % 32;
    in++;
    left--;
    chunk = chunk < left ? chunk : left;
    if (hrl_parser_feed(p, (const char *)in, chunk) != HRL_OK) {
      break;
    }
    in += chunk;
    left -= chunk;
    hrl_reply r;
    int rc = 0;
    while (k < replies && (rc = hrl_parser_next(p, &r)) == 1) {
      memset(msg, 'x', sizeof msg);
      hrl_node_result res =
          hrl_proto_handshake_reply(c, 0, k, &r, msg, sizeof msg);
      if (res != HRL_NODE_OK && res != HRL_NODE_AUTH &&
          res != HRL_NODE_DENIED && res != HRL_NODE_SERVER &&
          res != HRL_NODE_PROTOCOL) {
        __builtin_trap();
      }
      if (res != HRL_NODE_OK && memchr(msg, '\0', sizeof msg) == NULL) {
        __builtin_trap();
      }
      k++;
    }
    if (rc < 0) {
      break;
    }
  }
  hrl_parser_free(p);
  hrl_client_free(c);
  free(url);
  return 0;
}
