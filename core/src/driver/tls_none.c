/* The driver's TLS in a build without OpenSSL (HRL_NO_TLS; tls.c is the
 * one with it). The sdist, the source rock and the C library build without
 * OpenSSL's headers rather than fail: such a build connects to redis://
 * masters as usual and refuses a rediss:// master when it first connects,
 * with the one message below, the same in every runtime over this driver
 * (C, Python's blocking API, plain Lua). No context is ever made, so the
 * calls on a context or a connection are never reached. */
#ifdef HRL_NO_TLS
#include "tls.h"

#include <errno.h>

#include "proto/detail.h"

/* Within HRL_NODE_MSG_MAX (96), which a master's message is cut to. */
#define HRL_NO_TLS_MSG                                                         \
  "TLS: this hiredlock was built without OpenSSL (no rediss://)"

hrl_tls_ctx *hrl_tls_ctx_new(const hrl_tls_settings *s, char *msg,
                             size_t size) {
  (void)s;
  hrl_detailf(msg, size, "%s", HRL_NO_TLS_MSG);
  return NULL;
}

hrl_tls_ctx *hrl_tls_ctx_ref(hrl_tls_ctx *ctx) {
  return ctx;
}

void hrl_tls_ctx_unref(hrl_tls_ctx *ctx) {
  (void)ctx;
}

bool hrl_tls_ctx_fits(const hrl_tls_ctx *ctx, const hrl_tls_settings *s) {
  (void)ctx;
  (void)s;
  return false;
}

hrl_tls *hrl_tls_new(hrl_tls_ctx *ctx, int fd, const char *host, char *msg,
                     size_t size) {
  (void)ctx;
  (void)fd;
  (void)host;
  hrl_detailf(msg, size, HRL_NO_TLS_MSG);
  return NULL;
}

void hrl_tls_free(hrl_tls *tls) {
  (void)tls;
}

int hrl_tls_handshake(hrl_tls *tls, short *events, char *msg, size_t size) {
  (void)tls;
  (void)events;
  hrl_detailf(msg, size, HRL_NO_TLS_MSG);
  return -1;
}

ssize_t hrl_tls_send(hrl_tls *tls, const char *buf, size_t len) {
  (void)tls;
  (void)buf;
  (void)len;
  errno = ENOTSUP;
  return -1;
}

ssize_t hrl_tls_recv(hrl_tls *tls, char *buf, size_t len, int flags) {
  (void)tls;
  (void)buf;
  (void)len;
  (void)flags;
  errno = ENOTSUP;
  return -1;
}

short hrl_tls_want(const hrl_tls *tls) {
  (void)tls;
  return 0;
}

bool hrl_tls_pending(const hrl_tls *tls) {
  (void)tls;
  return false;
}

const char *hrl_tls_error(const hrl_tls *tls) {
  (void)tls;
  return HRL_NO_TLS_MSG;
}
#endif
