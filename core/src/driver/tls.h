/* TLS for the built-in driver (rediss:// masters), with OpenSSL, over the
 * connection's own non-blocking socket: the handshake is stepped by the
 * round's poll() loop like a connect, and reads and writes go through
 * send()/recv() as on a plain connection (MSG_NOSIGNAL, MSG_DONTWAIT but
 * for the round's one blocking read), so deadlines, SIGPIPE and the
 * blocking last read behave the same. No OpenSSL type leaks out of here:
 * the protocol (proto/) never sees TLS at all. */
#ifndef HRL_DRIVER_TLS_H
#define HRL_DRIVER_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "hiredlock/proto.h"

/* A master's TLS settings made ready: CAs loaded, client certificate and
 * key checked. Reference-counted: masters whose settings are all equal
 * share one (it applies its settings to every connection made from it). */
typedef struct hrl_tls_ctx hrl_tls_ctx;

/* TLS on one connection. */
typedef struct hrl_tls hrl_tls;

/* A context for settings s, or NULL with msg saying what could not be
 * loaded ("ssl_ca_certs /x: no such file or directory"). */
hrl_tls_ctx *hrl_tls_ctx_new(const hrl_tls_settings *s, char *msg, size_t size);

/* Another reference to ctx. */
hrl_tls_ctx *hrl_tls_ctx_ref(hrl_tls_ctx *ctx);

/* Drops a reference; NULL is a no-op. */
void hrl_tls_ctx_unref(hrl_tls_ctx *ctx);

/* Whether ctx was made for settings equal to s in every field (masters
 * share a context only then). */
bool hrl_tls_ctx_fits(const hrl_tls_ctx *ctx, const hrl_tls_settings *s);

/* TLS over the connected socket fd to host (sent as SNI when it is a name;
 * the certificate is checked against it when the settings say so); NULL
 * with msg when out of memory. */
hrl_tls *hrl_tls_new(hrl_tls_ctx *ctx, int fd, const char *host, char *msg,
                     size_t size);

/* Frees the connection's TLS state, writing nothing (no close_notify): a
 * forked child may drop its parent's connections this way. NULL: no-op. */
void hrl_tls_free(hrl_tls *tls);

/* Steps the handshake: 1 when done, 0 when it waits for the socket
 * (*events: POLLIN or POLLOUT), -1 on failure with msg ("TLS: certificate
 * verify failed: hostname mismatch"). */
int hrl_tls_handshake(hrl_tls *tls, short *events, char *msg, size_t size);

/* As send() and recv() on the socket: the bytes moved, 0 (recv) when the
 * server closed the stream, -1 with errno EAGAIN when the socket must be
 * waited for first (hrl_tls_want says how), or -1 with another errno on
 * failure (hrl_tls_error says what). recv's flags: MSG_DONTWAIT, or 0 to
 * block (up to the socket's SO_RCVTIMEO). */
ssize_t hrl_tls_send(hrl_tls *tls, const char *buf, size_t len);
ssize_t hrl_tls_recv(hrl_tls *tls, char *buf, size_t len, int flags);

/* After EAGAIN: what to poll for (POLLIN or POLLOUT). */
short hrl_tls_want(const hrl_tls *tls);

/* Whether bytes are already buffered (decrypted, or read ahead), which
 * poll() cannot see. */
bool hrl_tls_pending(const hrl_tls *tls);

/* After a failed send or recv: why, in words ("TLS: tlsv13 alert
 * certificate required"). */
const char *hrl_tls_error(const hrl_tls *tls);

#endif
