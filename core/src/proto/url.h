/* Master addresses: redis://[[user]:pass@]host[:port][/db],
 * rediss://[[user]:pass@]host[:port][/db][?ssl_option=value&...] (TLS) and
 * unix://[[user]:pass@]/path[?db=N], parsed once, here. */
#ifndef HRL_URL_H
#define HRL_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "hiredlock.h"

/* Longest unix socket path (sun_path holds 108 bytes with the NUL). */
#define HRL_UNIX_PATH_MAX 107
#define HRL_LABEL_MAX 128

/* A rediss:// URL's TLS settings (its query), each overriding the client's
 * option of that name for its master: NULL / has_* false when not given. */
typedef struct hrl_url_tls {
  char *ca_certs, *ca_path, *certfile, *keyfile;
  bool has_cert_reqs, has_check_hostname;
  hrl_cert_reqs cert_reqs;
  bool check_hostname;
} hrl_url_tls;

typedef struct hrl_endpoint {
  bool is_unix;
  bool tls; /* rediss:// */
  hrl_url_tls tls_query;
  char *host; /* TCP: host name or address, without IPv6 brackets */
  int port;   /* TCP: 1..65535, default 6379 */
  char *path; /* unix: absolute socket path */
  char *user; /* NULL: no ACL user */
  char *pass; /* NULL: no AUTH */
  long db;    /* 0: no SELECT */
  char label[HRL_LABEL_MAX]; /* "host:port" or the path, for messages */
} hrl_endpoint;

/* Parses url into ep (which the caller zeroes first). On failure, ep holds
 * nothing to free and detail names the URL with its password hidden. */
hrl_status hrl_url_parse(const char *url, hrl_endpoint *ep, char *detail,
                         size_t detail_size);

/* Frees what hrl_url_parse allocated; the struct itself is the caller's. */
void hrl_endpoint_clear(hrl_endpoint *ep);

/* True when a and b name the same server (so they are not independent). */
bool hrl_endpoint_same_server(const hrl_endpoint *a, const hrl_endpoint *b);

/* The URL as given, with the password replaced by "***", for messages. */
void hrl_url_redact(const char *url, char *out, size_t size);

/* url.c: HRL_EINVAL with detail "url \"<redacted url>\": why". */
hrl_status hrl_url_fail(const char *url, char *detail, size_t size,
                        const char *why);

/* url.c: s[0..n) percent-decoded into a new string; *bad is set on a
 * malformed escape or a decoded NUL. NULL when out of memory. */
char *hrl_url_decode(const char *s, size_t n, bool *bad);

/* url_tls.c: parses a rediss:// URL's query (after the '?') into
 * ep->tls_query; on failure detail says which setting of url is wrong. */
hrl_status hrl_url_tls_query(const char *url, const char *query,
                             hrl_endpoint *ep, char *detail, size_t size);

/* url_tls.c: frees what hrl_url_tls_query allocated. */
void hrl_url_tls_clear(hrl_url_tls *tls);

#endif
