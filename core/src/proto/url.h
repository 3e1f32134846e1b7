/* Master addresses: redis://[[user]:pass@]host[:port][/db] and
 * unix://[[user]:pass@]/path[?db=N], parsed once, here. */
#ifndef HRL_URL_H
#define HRL_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "hiredlock.h"

/* Longest unix socket path (sun_path holds 108 bytes with the NUL). */
#define HRL_UNIX_PATH_MAX 107
#define HRL_LABEL_MAX 128

typedef struct hrl_endpoint {
  bool is_unix;
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

#endif
