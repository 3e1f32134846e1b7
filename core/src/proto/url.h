/* Master addresses (each may end in ?sync_replicas=N, see url_query.c):
 * redis://[[user]:pass@]host[:port][/db],
 * rediss://[[user]:pass@]host[:port][/db][?ssl_option=value&...] (TLS),
 * unix://[[user]:pass@]/path[?db=N] and
 * redis+cluster://[[user]:pass@]host[:port][,host[:port]...] (a Redis
 * Cluster, by its seed nodes) and
 * redis+sentinel://[[user]:pass@]host[:port][,host[:port]...]/service[/db]
 * (a Sentinel-managed primary, by its sentinels), parsed once, here. */
#ifndef HRL_URL_H
#define HRL_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hiredlock.h"

/* Longest unix socket path (sun_path holds 108 bytes with the NUL). */
#define HRL_UNIX_PATH_MAX 107
#define HRL_LABEL_MAX 128
/* Most addresses one URL lists (a cluster's seeds). */
#define HRL_SEEDS_MAX 16

/* A rediss:// URL's TLS settings (its query), each overriding the client's
 * option of that name for its master: NULL / has_* false when not given. */
typedef struct hrl_url_tls {
  char *ca_certs, *ca_path, *certfile, *keyfile;
  bool has_cert_reqs, has_check_hostname;
  hrl_cert_reqs cert_reqs;
  bool check_hostname;
} hrl_url_tls;

/* One address of a URL that lists several. */
typedef struct hrl_seed {
  char *host;
  int port;
  char label[HRL_LABEL_MAX]; /* "host:port" */
} hrl_seed;

typedef struct hrl_endpoint {
  bool is_unix;
  bool tls; /* rediss:// */
  hrl_url_tls tls_query;
  /* redis+cluster://: the seed nodes, the first also in host and port;
   * redis+sentinel://: the sentinels (the first also in host and port)
   * and the service */
  bool cluster;
  size_t n_seeds;
  hrl_seed *seeds;
  char *service;
  char *host; /* TCP: host name or address, without IPv6 brackets */
  int port;   /* TCP: 1..65535, default 6379 */
  char *path; /* unix: absolute socket path */
  char *user; /* NULL: no ACL user */
  char *pass; /* NULL: no AUTH */
  long db;    /* 0: no SELECT */
  /* ?sync_replicas=N: this master's own count, over the lock's */
  bool has_sync_replicas;
  uint32_t sync_replicas;
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

/* The URL as given, with the password replaced by "***", for messages:
 * what the parser takes for one (after the first ':' up to the last '@'
 * of the authority), or anything up to an '@' past the authority (a
 * password with an unescaped '/', '?' or '#' the parser did not take). */
void hrl_url_redact(const char *url, char *out, size_t size);

/* url.c: a decimal in [min, max] from s[0..n) into *out. */
bool hrl_url_number(const char *s, size_t n, long min, long max, long *out);

/* url.c: splits "[user]:pass@" off the authority p..end into ep's user and
 * pass. Returns the rest, or NULL after setting *st and detail. */
const char *hrl_url_credentials(const char *url, const char *p, const char *end,
                                hrl_endpoint *ep, char *detail, size_t size,
                                hrl_status *st);

/* url.c: "host[:port]" or "[v6][:port]" from p..end: a new string in
 * *host, the port (default_port when absent) and "host:port" into label. */
hrl_status hrl_url_hostport(const char *url, const char *p, const char *end,
                            int default_port, char **host, int *port,
                            char *label, size_t label_size, char *detail,
                            size_t size);

/* url.c: HRL_EINVAL with detail "url \"<redacted url>\": why". */
hrl_status hrl_url_fail(const char *url, char *detail, size_t size,
                        const char *why);

/* url.c: s[0..n) percent-decoded into a new string; *bad is set on a
 * malformed escape or a decoded NUL. NULL when out of memory. */
char *hrl_url_decode(const char *s, size_t n, bool *bad);

/* url_seeds.c: parses what follows "redis+cluster://" into ep. */
hrl_status hrl_url_parse_cluster(const char *url, const char *p,
                                 hrl_endpoint *ep, char *detail, size_t size);

/* url_seeds.c: parses what follows "redis+sentinel://" into ep. */
hrl_status hrl_url_parse_sentinel(const char *url, const char *p,
                                  hrl_endpoint *ep, char *detail, size_t size);

/* url_seeds.c: frees ep's seeds and service. */
void hrl_url_seeds_clear(hrl_endpoint *ep);

/* url_query.c: parses a URL's query (after the '?') into ep: sync_replicas
 * always, the TLS options (into ep->tls_query) when what has
 * HRL_QUERY_TLS, db when it has HRL_QUERY_DB; on failure detail says which
 * setting of url is wrong. */
#define HRL_QUERY_TLS 1u
#define HRL_QUERY_DB 2u
hrl_status hrl_url_query(const char *url, const char *query, hrl_endpoint *ep,
                         unsigned what, char *detail, size_t size);

/* url_query.c: frees what hrl_url_query allocated in ep->tls_query. */
void hrl_url_tls_clear(hrl_url_tls *tls);

#endif
