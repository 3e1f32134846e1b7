/* URL parsing. Every rejection says what is wrong with which URL, never
 * showing its password. User and password are percent-decoded. */
#define _POSIX_C_SOURCE 200809L
#include "url.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "detail.h"
#include "resp.h"

#define URL_MAX 4096

static char *dup_range(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (p != NULL) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  c = (char)tolower((unsigned char)c);
  return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

/* Percent-decodes s[0..n) into a new string. *bad is set on a malformed
 * escape or a decoded NUL (an AUTH argument cannot carry one). */
char *hrl_url_decode(const char *s, size_t n, bool *bad) {
  char *out = malloc(n + 1);
  if (out == NULL) {
    return NULL;
  }
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '%') {
      out[o++] = s[i];
      continue;
    }
    int hi = i + 2 < n ? hex_value(s[i + 1]) : -1;
    int lo = i + 2 < n ? hex_value(s[i + 2]) : -1;
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
      *bad = true;
      break;
    }
    out[o++] = (char)(hi * 16 + lo);
    i += 2;
  }
  out[o] = '\0';
  return out;
}

/* The last c in [p, end), or NULL. */
static const char *last_of(const char *p, const char *end, char c) {
  const char *at = NULL;
  for (; p < end; p++) {
    if (*p == c) {
      at = p;
    }
  }
  return at;
}

void hrl_url_redact(const char *url, char *out, size_t size) {
  const char *scheme_end = strstr(url, "://");
  const char *auth = scheme_end != NULL ? scheme_end + 3 : url;
  /* The parser's split (hrl_url_credentials): the authority ends at the
   * first '/', '?' or '#', its credentials at its last '@'. */
  const char *auth_end = auth + strcspn(auth, "/?#");
  const char *at = last_of(auth, auth_end, '@');
  /* An '@' past that: a password holding an unescaped '/', '?' or '#',
   * which the parser cut short and fails on. Hidden up to that '@' too,
   * whatever the URL meant (at worst a query's path is hidden with it). */
  const char *later = last_of(auth_end, auth_end + strlen(auth_end), '@');
  if (later != NULL) {
    at = later;
  }
  if (at == NULL) {
    hrl_detailf(out, size, "%s", url);
    return;
  }
  const char *colon = memchr(auth, ':', (size_t)(at - auth));
  const char *keep = colon != NULL ? colon + 1 : auth; /* the user name */
  hrl_detailf(out, size, "%.*s***%s", (int)(keep - url), url, at);
}

hrl_status hrl_url_fail(const char *url, char *detail, size_t size,
                        const char *why) {
  char shown[256];
  hrl_url_redact(url, shown, sizeof shown);
  hrl_detailf(detail, size, "url \"%s\": %s", shown, why);
  return HRL_EINVAL;
}

/* Parses a decimal in [min, max] from s[0..n). */
bool hrl_url_number(const char *s, size_t n, long min, long max, long *out) {
  if (n == 0 || n > 10) {
    return false;
  }
  long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') {
      return false;
    }
    v = v * 10 + (s[i] - '0');
  }
  if (v < min || v > max) {
    return false;
  }
  *out = v;
  return true;
}

const char *hrl_url_credentials(const char *url, const char *p, const char *end,
                                hrl_endpoint *ep, char *detail, size_t size,
                                hrl_status *st) {
  const char *at = last_of(p, end, '@'); /* hrl_url_redact splits alike */
  if (at == NULL) {
    return p;
  }
  const char *colon = memchr(p, ':', (size_t)(at - p));
  if (colon == NULL) {
    *st = hrl_url_fail(url, detail, size,
                       "credentials must be [user]:password@ (missing ':')");
    return NULL;
  }
  bool bad = false;
  if (colon > p) {
    ep->user = hrl_url_decode(p, (size_t)(colon - p), &bad);
  }
  ep->pass = hrl_url_decode(colon + 1, (size_t)(at - colon - 1), &bad);
  if ((colon > p && ep->user == NULL) || ep->pass == NULL) {
    *st = HRL_ENOMEM;
    hrl_detailf(detail, size, "out of memory parsing a url");
    return NULL;
  }
  if (bad) {
    *st = hrl_url_fail(url, detail, size, "bad %-escape in the credentials");
    return NULL;
  }
  if (ep->pass[0] == '\0') {
    *st = hrl_url_fail(url, detail, size, "empty password");
    return NULL;
  }
  return at + 1;
}

/* Appends len bytes of s to label (n bytes used of size), cut as snprintf
 * cuts; returns the bytes used. */
static size_t put_cut(char *label, size_t size, size_t n, const char *s,
                      size_t len) {
  size_t room = n + 1 < size ? size - 1 - n : 0;
  size_t k = len < room ? len : room;
  memcpy(label + n, s, k);
  return n + k;
}

/* label = "host:port", or "[host]:port" for an IPv6 address, cut to size
 * as snprintf would cut it: no stdio, since bindings make a client per
 * request and that snprintf was ~1,500 instructions of each. */
static void put_label(char *label, size_t size, bool bracketed,
                      const char *host, size_t host_len, int port) {
  if (size == 0) {
    return;
  }
  char port_text[24] = ":";
  size_t d = 1 + hrl_resp_uint(port_text + 1, (uint64_t)port); /* 1 to 65535 */
  size_t n = 0;
  if (bracketed) {
    n = put_cut(label, size, n, "[", 1);
  }
  n = put_cut(label, size, n, host, host_len);
  if (bracketed) {
    n = put_cut(label, size, n, "]", 1);
  }
  n = put_cut(label, size, n, port_text, d);
  label[n] = '\0';
}

hrl_status hrl_url_hostport(const char *url, const char *p, const char *end,
                            int default_port, char **host_out, int *port_out,
                            char *label, size_t label_size, char *detail,
                            size_t size) {
  const char *host = p;
  const char *host_end;
  const char *port_start = NULL;
  if (*p == '[') {
    const char *close = memchr(p, ']', (size_t)(end - p));
    if (close == NULL) {
      return hrl_url_fail(url, detail, size, "unterminated [ in the host");
    }
    host = p + 1;
    host_end = close;
    if (close + 1 < end) {
      if (close[1] != ':') {
        return hrl_url_fail(url, detail, size, "unexpected text after ]");
      }
      port_start = close + 2;
    }
  } else {
    const char *colon = memchr(p, ':', (size_t)(end - p));
    host_end = colon != NULL ? colon : end;
    port_start = colon != NULL ? colon + 1 : NULL;
  }
  if (host_end == host) {
    return hrl_url_fail(url, detail, size, "missing host");
  }
  for (const char *q = host; q < host_end; q++) {
    unsigned char c = (unsigned char)*q;
    if (!(isalnum(c) || c == '.' || c == '-' || c == '_' ||
          (c == ':' && *p == '['))) {
      return hrl_url_fail(url, detail, size, "bad character in the host");
    }
  }
  long port = default_port;
  if (port_start != NULL &&
      !hrl_url_number(port_start, (size_t)(end - port_start), 1, 65535,
                      &port)) {
    return hrl_url_fail(url, detail, size,
                        "port must be a number from 1 to 65535");
  }
  *host_out = dup_range(host, (size_t)(host_end - host));
  if (*host_out == NULL) {
    hrl_detailf(detail, size, "out of memory parsing a url");
    return HRL_ENOMEM;
  }
  *port_out = (int)port;
  put_label(label, label_size, *p == '[', host, (size_t)(host_end - host),
            *port_out);
  return HRL_OK;
}

/* What follows the authority of a redis:// or rediss:// URL: [/db] and,
 * for TLS, [?ssl options]. */
static hrl_status parse_tail(const char *url, const char *tail, bool tls,
                             hrl_endpoint *ep, char *detail, size_t size) {
  long db = 0;
  if (*tail == '/') {
    const char *db_start = tail + 1;
    size_t db_len = strcspn(db_start, "?#");
    if (db_len > 0 && !hrl_url_number(db_start, db_len, 0, 2147483647L, &db)) {
      return hrl_url_fail(
          url, detail, size,
          "database must be a number after the host (/0 to /N)");
    }
    tail = db_start + db_len;
  }
  if (*tail == '?') {
    hrl_status st =
        hrl_url_query(url, tail + 1, ep, tls ? HRL_QUERY_TLS : 0, detail, size);
    if (st != HRL_OK) {
      return st;
    }
  } else if (*tail != '\0') {
    return hrl_url_fail(url, detail, size, "unexpected query or fragment");
  }
  ep->db = db;
  return HRL_OK;
}

static hrl_status parse_tcp(const char *url, const char *p, bool tls,
                            hrl_endpoint *ep, char *detail, size_t size) {
  hrl_status st = HRL_OK;
  const char *end = p + strcspn(p, "/?#");
  p = hrl_url_credentials(url, p, end, ep, detail, size, &st);
  if (p == NULL) {
    return st;
  }
  st = hrl_url_hostport(url, p, end, 6379, &ep->host, &ep->port, ep->label,
                        sizeof ep->label, detail, size);
  if (st != HRL_OK) {
    return st;
  }
  ep->tls = tls;
  return parse_tail(url, end, tls, ep, detail, size);
}

static hrl_status parse_unix(const char *url, const char *p, hrl_endpoint *ep,
                             char *detail, size_t size) {
  hrl_status st = HRL_OK;
  const char *slash = strchr(p, '/');
  if (slash == NULL) {
    return hrl_url_fail(url, detail, size, "unix socket path must be absolute");
  }
  if (slash > p && memchr(p, '@', (size_t)(slash - p)) == NULL) {
    return hrl_url_fail(url, detail, size,
                        "unix socket path must be absolute (unix:///path)");
  }
  if (slash > p) {
    if (hrl_url_credentials(url, p, slash, ep, detail, size, &st) != slash) {
      return st != HRL_OK ? st
                          : hrl_url_fail(url, detail, size,
                                         "unexpected text before the path");
    }
  }
  const char *query = strchr(slash, '?');
  size_t path_len = query != NULL ? (size_t)(query - slash) : strlen(slash);
  if (path_len > HRL_UNIX_PATH_MAX) {
    return hrl_url_fail(url, detail, size,
                        "unix socket path longer than 107 bytes");
  }
  if (path_len < 2) {
    return hrl_url_fail(url, detail, size, "missing unix socket path");
  }
  if (query != NULL) {
    hrl_status qst =
        hrl_url_query(url, query + 1, ep, HRL_QUERY_DB, detail, size);
    if (qst != HRL_OK) {
      return qst;
    }
  }
  ep->is_unix = true;
  ep->path = dup_range(slash, path_len);
  if (ep->path == NULL) {
    hrl_detailf(detail, size, "out of memory parsing a url");
    return HRL_ENOMEM;
  }
  hrl_detailf(ep->label, sizeof ep->label, "%s", ep->path);
  return HRL_OK;
}

hrl_status hrl_url_parse(const char *url, hrl_endpoint *ep, char *detail,
                         size_t detail_size) {
  if (url == NULL) {
    hrl_detailf(detail, detail_size, "url must not be NULL");
    return HRL_EINVAL;
  }
  size_t len = strnlen(url, URL_MAX + 1);
  if (len == 0) {
    hrl_detailf(detail, detail_size, "url must not be empty");
    return HRL_EINVAL;
  }
  if (len > URL_MAX) {
    hrl_detailf(detail, detail_size, "url longer than %d bytes", URL_MAX);
    return HRL_EINVAL;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)url[i];
    if (c <= 0x20 || c >= 0x7f) {
      return hrl_url_fail(
          url, detail, detail_size,
          "spaces, control and non-ASCII bytes must be %-escaped");
    }
  }
  hrl_status st;
  if (strncasecmp(url, "redis://", 8) == 0) {
    st = parse_tcp(url, url + 8, false, ep, detail, detail_size);
  } else if (strncasecmp(url, "rediss://", 9) == 0) {
    st = parse_tcp(url, url + 9, true, ep, detail, detail_size);
  } else if (strncasecmp(url, "unix://", 7) == 0) {
    st = parse_unix(url, url + 7, ep, detail, detail_size);
  } else if (strncasecmp(url, "redis+cluster://", 16) == 0) {
    st = hrl_url_parse_cluster(url, url + 16, ep, detail, detail_size);
  } else if (strncasecmp(url, "redis+sentinel://", 17) == 0) {
    st = hrl_url_parse_sentinel(url, url + 17, ep, detail, detail_size);
  } else if (strncasecmp(url, "rediss+cluster://", 17) == 0 ||
             strncasecmp(url, "rediss+sentinel://", 18) == 0) {
    st = hrl_url_fail(url, detail, detail_size,
                      "TLS to a Redis Cluster or through Sentinel "
                      "(rediss+cluster://, rediss+sentinel://) is not "
                      "supported");
  } else {
    st = hrl_url_fail(url, detail, detail_size,
                      "scheme must be redis://, rediss://, unix://, "
                      "redis+cluster:// or redis+sentinel://");
  }
  if (st != HRL_OK) {
    hrl_endpoint_clear(ep);
  }
  return st;
}

void hrl_endpoint_clear(hrl_endpoint *ep) {
  hrl_url_tls_clear(&ep->tls_query);
  hrl_url_seeds_clear(ep);
  free(ep->host);
  free(ep->path);
  free(ep->user);
  if (ep->pass != NULL) {
    /* Do not leave the password in freed memory. */
    volatile char *v = ep->pass;
    while (*v != '\0') {
      *v++ = '\0';
    }
  }
  free(ep->pass);
  memset(ep, 0, sizeof *ep);
}

/* The TCP addresses an endpoint names: a cluster's seeds, or its one. */
static size_t addresses(const hrl_endpoint *ep, const char **hosts,
                        int *ports) {
  if (ep->n_seeds == 0) {
    hosts[0] = ep->host;
    ports[0] = ep->port;
    return 1;
  }
  for (size_t k = 0; k < ep->n_seeds; k++) {
    hosts[k] = ep->seeds[k].host;
    ports[k] = ep->seeds[k].port;
  }
  return ep->n_seeds;
}

bool hrl_endpoint_same_server(const hrl_endpoint *a, const hrl_endpoint *b) {
  if (a->is_unix != b->is_unix) {
    return false;
  }
  /* Sentinels name the primary of a service: two URLs name the same one
   * when they ask a sentinel in common about the same service; what any
   * other URL names cannot be compared with it before it is asked. */
  if (a->service != NULL || b->service != NULL) {
    if (a->service == NULL || b->service == NULL ||
        strcmp(a->service, b->service) != 0) {
      return false;
    }
  }
  if (a->is_unix) {
    return strcmp(a->path, b->path) == 0;
  }
  const char *ha[HRL_SEEDS_MAX], *hb[HRL_SEEDS_MAX];
  int pa[HRL_SEEDS_MAX], pb[HRL_SEEDS_MAX];
  size_t na = addresses(a, ha, pa), nb = addresses(b, hb, pb);
  for (size_t i = 0; i < na; i++) {
    for (size_t j = 0; j < nb; j++) {
      if (pa[i] == pb[j] && strcasecmp(ha[i], hb[j]) == 0) {
        return true;
      }
    }
  }
  return false;
}
