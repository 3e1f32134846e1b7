/* TLS with OpenSSL for the built-in driver (see tls.h).
 *
 * The SSL object reads and writes through a BIO of our own over the
 * connection's socket rather than OpenSSL's socket BIO: that one calls
 * send() without MSG_NOSIGNAL (a master that went away would raise SIGPIPE
 * in the host program) and cannot mix the round's one blocking recv() with
 * MSG_DONTWAIT on every other call. The BIO method lives in the context,
 * not in a global, like everything else in the core.
 *
 * Verification is on unless ssl_cert_reqs is "none": the chain must lead
 * to ssl_ca_certs / ssl_ca_path, or to the system's store when neither is
 * given, and with ssl_check_hostname the certificate must name the URL's
 * host (X509_VERIFY_PARAM_set1_host, or _set1_ip_asc for an address).
 *
 * Compiled out under HRL_NO_TLS (a build without OpenSSL): tls_none.c.
 */
#ifndef HRL_NO_TLS
#define _GNU_SOURCE
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/detail.h"

struct hrl_tls_ctx {
  SSL_CTX *ssl_ctx;
  BIO_METHOD *bio_method;
  int refs;
  hrl_tls_settings settings; /* points into the client's configuration */
};

struct hrl_tls {
  SSL *ssl;
  int fd;
  int recv_flags; /* MSG_DONTWAIT, or 0 for the blocking read */
  int io_errno;   /* errno of the socket call that failed */
  short want;     /* after EAGAIN: POLLIN or POLLOUT */
  bool got_data;  /* a reply came in on it */
  char error[96];
};

/* ---------------------------------------------------------------- BIO */

static int bio_write(BIO *bio, const char *buf, int len) {
  hrl_tls *tls = BIO_get_data(bio);
  BIO_clear_retry_flags(bio);
  ssize_t n = send(tls->fd, buf, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) {
    tls->io_errno = errno;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      BIO_set_retry_write(bio);
    }
    return -1;
  }
  return (int)n;
}

static int bio_read(BIO *bio, char *buf, int len) {
  hrl_tls *tls = BIO_get_data(bio);
  BIO_clear_retry_flags(bio);
  ssize_t n = recv(tls->fd, buf, (size_t)len, tls->recv_flags);
  if (n < 0) {
    tls->io_errno = errno;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      BIO_set_retry_read(bio);
    }
    return -1;
  }
  if (n == 0) {
    tls->io_errno = 0; /* end of stream */
  }
  return (int)n;
}

static long bio_ctrl(BIO *bio, int cmd, long num, void *ptr) {
  (void)bio;
  (void)num;
  (void)ptr;
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static BIO_METHOD *bio_method_new(void) {
  BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                               "hiredlock socket");
  if (m != NULL &&
      (!BIO_meth_set_write(m, bio_write) || !BIO_meth_set_read(m, bio_read) ||
       !BIO_meth_set_ctrl(m, bio_ctrl))) {
    BIO_meth_free(m);
    m = NULL;
  }
  return m;
}

/* ---------------------------------------------------------------- errors */

/* SSL_get_error() needs the thread's error queue empty before the call
 * it explains. Every failure here drains it, so it nearly always is;
 * ERR_clear_error() itself walks all 16 slots of the queue (a tenth of a
 * kept connection's TLS cost per command), so it runs only when something
 * (another library in this thread) left an error there. */
static void clear_errors(void) {
  if (ERR_peek_error() != 0) {
    ERR_clear_error();
  }
}

/* The first error OpenSSL queued, in words, and the queue emptied. */
static const char *openssl_reason(char *buf, size_t size) {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) {
    hrl_detailf(buf, size, "unknown error");
  } else if (ERR_SYSTEM_ERROR(e)) {
    hrl_detailf(buf, size, "%s", strerror(ERR_GET_REASON(e)));
  } else {
    const char *reason = ERR_reason_error_string(e);
    hrl_detailf(buf, size, "%s", reason != NULL ? reason : "unknown error");
  }
  return buf;
}

/* "TLS: ssl_ca_certs /x: no such file or directory" into msg. */
static void say(char *msg, size_t size, const char *what, const char *path,
                const char *why) {
  hrl_detailf(msg, size, "TLS: %s%s%s: %s", what, path ? " " : "",
              path ? path : "", why);
}

/* ---------------------------------------------------------------- context */

static bool load_trust(SSL_CTX *c, const hrl_tls_settings *s, char *msg,
                       size_t size) {
  char why[128];
  if (s->cert_reqs == HRL_CERT_NONE) {
    SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL);
    return true;
  }
  SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
  if (s->ca_certs == NULL && s->ca_path == NULL) {
    if (SSL_CTX_set_default_verify_paths(c) != 1) {
      say(msg, size, "the system's CA store", NULL,
          openssl_reason(why, sizeof why));
      return false;
    }
    return true;
  }
  if (SSL_CTX_load_verify_locations(c, s->ca_certs, s->ca_path) != 1) {
    say(msg, size, s->ca_certs ? "ssl_ca_certs" : "ssl_ca_path",
        s->ca_certs ? s->ca_certs : s->ca_path,
        openssl_reason(why, sizeof why));
    return false;
  }
  return true;
}

static bool load_client_cert(SSL_CTX *c, const hrl_tls_settings *s, char *msg,
                             size_t size) {
  char why[128];
  if (s->certfile == NULL) {
    return true;
  }
  const char *key = s->keyfile != NULL ? s->keyfile : s->certfile;
  if (SSL_CTX_use_certificate_chain_file(c, s->certfile) != 1) {
    say(msg, size, "ssl_certfile", s->certfile,
        openssl_reason(why, sizeof why));
    return false;
  }
  if (SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(c) != 1) {
    say(msg, size, s->keyfile ? "ssl_keyfile" : "ssl_certfile (its key)", key,
        openssl_reason(why, sizeof why));
    return false;
  }
  return true;
}

hrl_tls_ctx *hrl_tls_ctx_new(const hrl_tls_settings *s, char *msg,
                             size_t size) {
  ERR_clear_error();
  hrl_tls_ctx *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) {
    hrl_detailf(msg, size, "out of memory");
    return NULL;
  }
  ctx->refs = 1;
  ctx->settings = *s;
  ctx->ssl_ctx = SSL_CTX_new(TLS_client_method());
  ctx->bio_method = bio_method_new();
  if (ctx->ssl_ctx == NULL || ctx->bio_method == NULL) {
    hrl_detailf(msg, size, "out of memory");
    hrl_tls_ctx_unref(ctx);
    return NULL;
  }
  SSL_CTX_set_min_proto_version(ctx->ssl_ctx, TLS1_2_VERSION);
  /* flush() resumes a partial write with what is left of the buffer. */
  SSL_CTX_set_mode(ctx->ssl_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                     SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  /* A record in one recv(), not its header and then its body: a reply
   * costs the one system call it costs on a plain connection. What is
   * read ahead stays in OpenSSL's buffer, which hrl_tls_pending reports. */
  SSL_CTX_set_read_ahead(ctx->ssl_ctx, 1);
  if (!load_trust(ctx->ssl_ctx, s, msg, size) ||
      !load_client_cert(ctx->ssl_ctx, s, msg, size)) {
    hrl_tls_ctx_unref(ctx);
    return NULL;
  }
  return ctx;
}

hrl_tls_ctx *hrl_tls_ctx_ref(hrl_tls_ctx *ctx) {
  ctx->refs++;
  return ctx;
}

void hrl_tls_ctx_unref(hrl_tls_ctx *ctx) {
  if (ctx == NULL || --ctx->refs > 0) {
    return;
  }
  SSL_CTX_free(ctx->ssl_ctx);
  BIO_meth_free(ctx->bio_method);
  free(ctx);
}

static bool same_path(const char *a, const char *b) {
  return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Every setting, the checks on the server (cert_reqs, check_hostname) as
 * much as the files: a context shared by two masters applies its own
 * settings to both, so one master's opt-out must never reach another. */
bool hrl_tls_ctx_fits(const hrl_tls_ctx *ctx, const hrl_tls_settings *s) {
  const hrl_tls_settings *t = &ctx->settings;
  return t->cert_reqs == s->cert_reqs &&
         t->check_hostname == s->check_hostname &&
         same_path(t->ca_certs, s->ca_certs) &&
         same_path(t->ca_path, s->ca_path) &&
         same_path(t->certfile, s->certfile) &&
         same_path(t->keyfile, s->keyfile);
}

/* ---------------------------------------------------------------- connection
 */

static bool is_address(const char *host) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host, buf) == 1 ||
         inet_pton(AF_INET6, host, buf) == 1;
}

hrl_tls *hrl_tls_new(hrl_tls_ctx *ctx, int fd, const char *host, char *msg,
                     size_t size) {
  ERR_clear_error();
  hrl_tls *tls = calloc(1, sizeof *tls);
  BIO *bio = BIO_new(ctx->bio_method);
  SSL *ssl = SSL_new(ctx->ssl_ctx);
  if (tls == NULL || bio == NULL || ssl == NULL) {
    free(tls);
    BIO_free(bio);
    SSL_free(ssl);
    ERR_clear_error();
    hrl_detailf(msg, size, "out of memory");
    return NULL;
  }
  tls->ssl = ssl;
  tls->fd = fd;
  tls->recv_flags = MSG_DONTWAIT;
  BIO_set_data(bio, tls);
  BIO_set_init(bio, 1);
  SSL_set_bio(ssl, bio, bio);
  SSL_set_connect_state(ssl);
  const hrl_tls_settings *s = &ctx->settings;
  bool address = is_address(host);
  bool ok = true;
  if (!address) {
    ok = SSL_set_tlsext_host_name(ssl, host) == 1; /* SNI: names only */
  }
  if (ok && s->cert_reqs != HRL_CERT_NONE && s->check_hostname) {
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param,
                                    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    ok = address ? X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1
                 : X509_VERIFY_PARAM_set1_host(param, host, 0) == 1;
  }
  if (!ok) {
    char why[128];
    say(msg, size, "host", host, openssl_reason(why, sizeof why));
    hrl_tls_free(tls);
    return NULL;
  }
  return tls;
}

void hrl_tls_free(hrl_tls *tls) {
  if (tls != NULL) {
    SSL_free(tls->ssl); /* frees the BIO too; writes nothing */
    free(tls);
  }
}

/* Why an SSL call failed, in tls->error; the errno to report. */
static int failure(hrl_tls *tls, int ret, const char *during) {
  int err = SSL_get_error(tls->ssl, ret);
  char why[128];
  long verify = SSL_get_verify_result(tls->ssl);
  if (err == SSL_ERROR_SSL && verify != X509_V_OK) {
    ERR_clear_error();
    hrl_detailf(tls->error, sizeof tls->error,
                "TLS: certificate verify failed: %s",
                X509_verify_cert_error_string(verify));
    return EPROTO;
  }
  bool closed = err == SSL_ERROR_ZERO_RETURN ||
                (err == SSL_ERROR_SYSCALL &&
                 (tls->io_errno == 0 || tls->io_errno == ECONNRESET));
  if (closed && !tls->got_data && during[0] == '\0') {
    /* With TLS 1.3 the server checks our certificate after our side of
     * the handshake is done, and a refusal (its alert lost to the reset
     * that follows) shows only here. */
    ERR_clear_error();
    hrl_detailf(tls->error, sizeof tls->error,
                "TLS: server closed the connection before any reply "
                "(client certificate refused?)");
    return ECONNRESET;
  }
  if (closed && tls->io_errno == 0) {
    ERR_clear_error();
    hrl_detailf(tls->error, sizeof tls->error,
                "TLS: server closed the connection%s", during);
    return ECONNRESET;
  }
  if (err == SSL_ERROR_SYSCALL) {
    ERR_clear_error();
    hrl_detailf(tls->error, sizeof tls->error, "%s", strerror(tls->io_errno));
    return tls->io_errno;
  }
  hrl_detailf(tls->error, sizeof tls->error, "TLS: %s",
              openssl_reason(why, sizeof why));
  return EPROTO;
}

/* EAGAIN after a call that must wait for the socket, else 0. */
static int would_block(hrl_tls *tls, int ret) {
  switch (SSL_get_error(tls->ssl, ret)) {
  case SSL_ERROR_WANT_READ:
    tls->want = POLLIN;
    return EAGAIN;
  case SSL_ERROR_WANT_WRITE:
    tls->want = POLLOUT;
    return EAGAIN;
  default:
    return 0;
  }
}

int hrl_tls_handshake(hrl_tls *tls, short *events, char *msg, size_t size) {
  clear_errors();
  int ret = SSL_do_handshake(tls->ssl);
  if (ret == 1) {
    return 1;
  }
  if (would_block(tls, ret) != 0) {
    *events = tls->want;
    return 0;
  }
  failure(tls, ret, " during the handshake");
  hrl_detailf(msg, size, "%s", tls->error);
  return -1;
}

ssize_t hrl_tls_send(hrl_tls *tls, const char *buf, size_t len) {
  clear_errors();
  int ret = SSL_write(tls->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
  if (ret > 0) {
    return ret;
  }
  int err = would_block(tls, ret);
  errno = err != 0 ? err : failure(tls, ret, "");
  return -1;
}

ssize_t hrl_tls_recv(hrl_tls *tls, char *buf, size_t len, int flags) {
  clear_errors();
  tls->recv_flags = flags;
  int ret = SSL_read(tls->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
  tls->recv_flags = MSG_DONTWAIT;
  if (ret > 0) {
    tls->got_data = true;
    return ret;
  }
  if (SSL_get_error(tls->ssl, ret) == SSL_ERROR_ZERO_RETURN) {
    return 0; /* close_notify: the end of the stream, as recv() says it */
  }
  int err = would_block(tls, ret);
  errno = err != 0 ? err : failure(tls, ret, "");
  return -1;
}

short hrl_tls_want(const hrl_tls *tls) {
  return tls->want;
}

bool hrl_tls_pending(const hrl_tls *tls) {
  /* Decrypted bytes, or raw ones read ahead: neither shows in poll(). */
  return SSL_has_pending(tls->ssl) == 1;
}

const char *hrl_tls_error(const hrl_tls *tls) {
  return tls->error;
}
#endif
