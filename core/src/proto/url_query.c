/* A URL's query: its master's own settings, spelled as the client
 * options (and as redis-py's URLs spell them):
 *   rediss://host:6380/0?ssl_ca_certs=/etc/ca.pem&ssl_cert_reqs=required
 *   redis+sentinel://s1,s2/svc?sync_replicas=1
 * The TLS options need a rediss:// URL; sync_replicas (how many replicas
 * must acknowledge a vote's write) is taken by every scheme; db by a unix
 * one (unix:///path?db=N). Values are percent-decoded and checked by the
 * option table, so a value is refused with the same words as the client
 * option. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "detail.h"
#include "hiredlock/binding.h"
#include "url.h"

#define QUERY_NAMES                                                            \
  "ssl_ca_certs, ssl_ca_path, ssl_certfile, ssl_keyfile, ssl_cert_reqs, "      \
  "ssl_check_hostname"

/* The string field of tls an option names, or NULL for the others. */
static char **string_field(hrl_url_tls *tls, const char *name) {
  if (strcmp(name, "ssl_ca_certs") == 0) {
    return &tls->ca_certs;
  }
  if (strcmp(name, "ssl_ca_path") == 0) {
    return &tls->ca_path;
  }
  if (strcmp(name, "ssl_certfile") == 0) {
    return &tls->certfile;
  }
  if (strcmp(name, "ssl_keyfile") == 0) {
    return &tls->keyfile;
  }
  return NULL;
}

/* redis-py's spellings of a boolean in a URL: true/false, yes/no, 1/0. */
static int parse_flag(const char *v) {
  static const char *const yes[] = {"1", "true", "yes", "on", NULL};
  static const char *const no[] = {"0", "false", "no", "off", NULL};
  for (int i = 0; yes[i] != NULL; i++) {
    if (strcasecmp(v, yes[i]) == 0) {
      return 1;
    }
    if (strcasecmp(v, no[i]) == 0) {
      return 0;
    }
  }
  return -1;
}

/* One name=value pair (both decoded); HRL_OK or a failure naming it. */
static hrl_status set_one(const char *url, hrl_url_tls *tls, const char *name,
                          char *value, char *detail, size_t size) {
  const hrl_option *opt = hrl_option_find(name);
  char why[HRL_DETAIL_MAX];
  if (opt == NULL || strncmp(name, "ssl_", 4) != 0) {
    hrl_detailf(why, sizeof why, "unknown TLS option '%.40s' (known: %s)", name,
                QUERY_NAMES);
    free(value);
    return hrl_url_fail(url, detail, size, why);
  }
  hrl_options scratch;
  hrl_options_init(&scratch);
  double number = 0;
  if (opt->kind == HRL_OPTION_FLAG) {
    int flag = parse_flag(value);
    if (flag < 0) {
      hrl_detailf(why, sizeof why, "%s must be true or false, got '%.40s'",
                  name, value);
      free(value);
      return hrl_url_fail(url, detail, size, why);
    }
    number = flag;
  }
  if (hrl_options_set(&scratch, opt, number, value, strlen(value), why,
                      sizeof why) != HRL_OK) {
    free(value);
    return hrl_url_fail(url, detail, size, why);
  }
  char **field = string_field(tls, name);
  bool twice = field != NULL                  ? *field != NULL
               : opt->kind == HRL_OPTION_FLAG ? tls->has_check_hostname
                                              : tls->has_cert_reqs;
  if (twice) {
    hrl_detailf(why, sizeof why, "%s is given twice", name);
    free(value);
    return hrl_url_fail(url, detail, size, why);
  }
  if (field != NULL) {
    *field = value; /* kept: the endpoint owns it */
    return HRL_OK;
  }
  if (opt->kind == HRL_OPTION_FLAG) {
    tls->has_check_hostname = true;
    tls->check_hostname = scratch.ssl_check_hostname;
  } else {
    tls->has_cert_reqs = true;
    tls->cert_reqs = scratch.ssl_cert_reqs;
  }
  free(value);
  return HRL_OK;
}

/* sync_replicas=N: the master's own count (the option's bounds). */
static hrl_status set_sync_replicas(const char *url, hrl_endpoint *ep,
                                    char *value, char *detail, size_t size) {
  const hrl_option *opt = hrl_option_find("sync_replicas");
  char why[HRL_DETAIL_MAX];
  long n = 0;
  bool ok =
      hrl_url_number(value, strlen(value), (long)opt->min, (long)opt->max, &n);
  free(value);
  if (!ok) {
    hrl_detailf(why, sizeof why,
                "sync_replicas must be a whole number from %.0f to %.0f",
                opt->min, opt->max);
    return hrl_url_fail(url, detail, size, why);
  }
  if (ep->has_sync_replicas) {
    return hrl_url_fail(url, detail, size, "sync_replicas is given twice");
  }
  ep->has_sync_replicas = true;
  ep->sync_replicas = (uint32_t)n;
  return HRL_OK;
}

/* db=N, in a unix:// URL's query. */
static hrl_status set_db(const char *url, hrl_endpoint *ep, char *value,
                         char *detail, size_t size) {
  long db = 0;
  bool ok = hrl_url_number(value, strlen(value), 0, 2147483647L, &db);
  free(value);
  if (!ok) {
    return hrl_url_fail(url, detail, size, "db must be a number (?db=N)");
  }
  ep->db = db;
  return HRL_OK;
}

/* One name=value pair of the query (both decoded; value is taken). */
static hrl_status set_pair(const char *url, hrl_endpoint *ep, unsigned what,
                           const char *name, char *value, char *detail,
                           size_t size) {
  if (strcmp(name, "sync_replicas") == 0) {
    return set_sync_replicas(url, ep, value, detail, size);
  }
  if ((what & HRL_QUERY_DB) != 0 && strcmp(name, "db") == 0) {
    return set_db(url, ep, value, detail, size);
  }
  if ((what & HRL_QUERY_TLS) != 0) {
    return set_one(url, &ep->tls_query, name, value, detail, size);
  }
  free(value);
  if (strncmp(name, "ssl_", 4) == 0) {
    return hrl_url_fail(url, detail, size,
                        "TLS options (ssl_*) need a rediss:// url");
  }
  char why[HRL_DETAIL_MAX];
  hrl_detailf(
      why, sizeof why, "unknown option '%.40s' in the query (known: %s)", name,
      (what & HRL_QUERY_DB) != 0 ? "db, sync_replicas" : "sync_replicas");
  return hrl_url_fail(url, detail, size, why);
}

hrl_status hrl_url_query(const char *url, const char *query, hrl_endpoint *ep,
                         unsigned what, char *detail, size_t size) {
  const char *p = query;
  if (*p == '\0') {
    return hrl_url_fail(url, detail, size, "empty query after '?'");
  }
  while (*p != '\0') {
    size_t pair_len = strcspn(p, "&#");
    if (p[pair_len] == '#') {
      return hrl_url_fail(url, detail, size, "unexpected fragment");
    }
    const char *eq = memchr(p, '=', pair_len);
    if (eq == NULL || eq == p || eq + 1 == p + pair_len) {
      return hrl_url_fail(url, detail, size,
                          "the query must be name=value pairs joined by &");
    }
    bool bad = false;
    char *name = hrl_url_decode(p, (size_t)(eq - p), &bad);
    char *value = hrl_url_decode(eq + 1, (size_t)(p + pair_len - eq - 1), &bad);
    if (name == NULL || value == NULL) {
      free(name);
      free(value);
      hrl_detailf(detail, size, "out of memory parsing a url");
      return HRL_ENOMEM;
    }
    hrl_status st =
        bad ? hrl_url_fail(url, detail, size, "bad %-escape in the query")
            : set_pair(url, ep, what, name, value, detail, size);
    if (bad) {
      free(value);
    }
    free(name);
    if (st != HRL_OK) {
      return st;
    }
    p += pair_len;
    if (*p == '&') {
      p++;
      if (*p == '\0') {
        return hrl_url_fail(url, detail, size, "empty query after '&'");
      }
    }
  }
  return HRL_OK;
}

void hrl_url_tls_clear(hrl_url_tls *tls) {
  free(tls->ca_certs);
  free(tls->ca_path);
  free(tls->certfile);
  free(tls->keyfile);
  memset(tls, 0, sizeof *tls);
}
