/* URLs that list several addresses: a Redis Cluster by its seed nodes,
 *   redis+cluster://[[user]:pass@]host[:port][,host[:port]...]
 * (the credentials are every node's; a cluster has no databases), and a
 * Sentinel-managed primary by its sentinels and its service name,
 *   redis+sentinel://[[user]:pass@]host[:port][,host[:port]...]/service[/db]
 * (the credentials and the database are the primary's; a sentinel's port
 * is 26379 unless given). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "url.h"

/* The comma-separated addresses of p..end into ep->seeds (the first also
 * into ep->host, ep->port). */
static hrl_status parse_seeds(const char *url, const char *p, const char *end,
                              int default_port, hrl_endpoint *ep, char *detail,
                              size_t size) {
  size_t count = 1;
  for (const char *q = p; q < end; q++) {
    count += *q == ',';
  }
  if (count > HRL_SEEDS_MAX) {
    char why[64];
    hrl_detailf(why, sizeof why, "at most %d addresses, got %zu", HRL_SEEDS_MAX,
                count);
    return hrl_url_fail(url, detail, size, why);
  }
  ep->seeds = calloc(count, sizeof *ep->seeds);
  if (ep->seeds == NULL) {
    hrl_detailf(detail, size, "out of memory parsing a url");
    return HRL_ENOMEM;
  }
  for (size_t k = 0; k < count; k++) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *item_end = comma != NULL ? comma : end;
    hrl_seed *seed = &ep->seeds[k];
    hrl_status st = hrl_url_hostport(url, p, item_end, default_port,
                                     &seed->host, &seed->port, seed->label,
                                     sizeof seed->label, detail, size);
    if (st != HRL_OK) {
      return st;
    }
    ep->n_seeds = k + 1;
    for (size_t j = 0; j < k; j++) {
      if (strcmp(ep->seeds[j].label, seed->label) == 0) {
        return hrl_url_fail(url, detail, size, "an address is listed twice");
      }
    }
    p = item_end + 1;
  }
  ep->host = strdup(ep->seeds[0].host);
  if (ep->host == NULL) {
    hrl_detailf(detail, size, "out of memory parsing a url");
    return HRL_ENOMEM;
  }
  ep->port = ep->seeds[0].port;
  return HRL_OK;
}

/* The addresses into the label: "<prefix>a:1,b:2<suffix>". */
static void label_of(hrl_endpoint *ep, const char *prefix, const char *suffix) {
  hrl_detailf(ep->label, sizeof ep->label, "%s%s", prefix, ep->seeds[0].label);
  for (size_t k = 1; k < ep->n_seeds; k++) {
    hrl_detail_append(ep->label, sizeof ep->label, ",%s", ep->seeds[k].label);
  }
  hrl_detail_append(ep->label, sizeof ep->label, "%s", suffix);
}

hrl_status hrl_url_parse_cluster(const char *url, const char *p,
                                 hrl_endpoint *ep, char *detail, size_t size) {
  hrl_status st = HRL_OK;
  const char *end = p + strcspn(p, "/?#");
  p = hrl_url_credentials(url, p, end, ep, detail, size, &st);
  if (p == NULL) {
    return st;
  }
  st = parse_seeds(url, p, end, 6379, ep, detail, size);
  if (st != HRL_OK) {
    return st;
  }
  const char *query = strchr(end, '?');
  size_t path_len = query != NULL ? (size_t)(query - end) : strlen(end);
  if (!(path_len == 0 || (path_len == 1 && *end == '/') ||
        (path_len == 2 && memcmp(end, "/0", 2) == 0))) {
    return hrl_url_fail(url, detail, size,
                        *end == '/' ? "a cluster has no databases (only /0)"
                                    : "unexpected query or fragment");
  }
  if (query != NULL &&
      (st = hrl_url_query(url, query + 1, ep, 0, detail, size)) != HRL_OK) {
    return st;
  }
  ep->cluster = true;
  label_of(ep, "cluster ", "");
  return HRL_OK;
}

hrl_status hrl_url_parse_sentinel(const char *url, const char *p,
                                  hrl_endpoint *ep, char *detail, size_t size) {
  hrl_status st = HRL_OK;
  const char *end = p + strcspn(p, "/?#");
  p = hrl_url_credentials(url, p, end, ep, detail, size, &st);
  if (p == NULL) {
    return st;
  }
  st = parse_seeds(url, p, end, 26379, ep, detail, size);
  if (st != HRL_OK) {
    return st;
  }
  if (*end != '/' || end[1] == '\0' || end[1] == '/') {
    return hrl_url_fail(url, detail, size,
                        "the service name must follow the sentinels "
                        "(redis+sentinel://host:port/service)");
  }
  const char *service = end + 1;
  size_t len = strcspn(service, "/?#");
  for (size_t k = 0; k < len; k++) {
    unsigned char c = (unsigned char)service[k];
    if (!(isalnum(c) || c == '.' || c == '-' || c == '_')) {
      return hrl_url_fail(url, detail, size,
                          "bad character in the service name");
    }
  }
  if (len > 64) {
    return hrl_url_fail(url, detail, size, "service name longer than 64 bytes");
  }
  const char *tail = service + len;
  const char *query = strchr(tail, '?');
  size_t tail_len = query != NULL ? (size_t)(query - tail) : strlen(tail);
  if (*tail == '/' && tail_len > 1) {
    long db = 0;
    if (!hrl_url_number(tail + 1, tail_len - 1, 0, 2147483647L, &db)) {
      return hrl_url_fail(url, detail, size,
                          "database must be a number after the service "
                          "(/service/N)");
    }
    ep->db = db;
  } else if (tail_len > 1 || (tail_len == 1 && *tail != '/')) {
    return hrl_url_fail(url, detail, size, "unexpected query or fragment");
  }
  if (query != NULL &&
      (st = hrl_url_query(url, query + 1, ep, 0, detail, size)) != HRL_OK) {
    return st;
  }
  ep->service = malloc(len + 1);
  if (ep->service == NULL) {
    hrl_detailf(detail, size, "out of memory parsing a url");
    return HRL_ENOMEM;
  }
  memcpy(ep->service, service, len);
  ep->service[len] = '\0';
  char prefix[HRL_LABEL_MAX];
  hrl_detailf(prefix, sizeof prefix, "%s (sentinel ", ep->service);
  label_of(ep, prefix, ")");
  return HRL_OK;
}

void hrl_url_seeds_clear(hrl_endpoint *ep) {
  free(ep->service);
  ep->service = NULL;
  for (size_t k = 0; ep->seeds != NULL && k < ep->n_seeds; k++) {
    free(ep->seeds[k].host);
  }
  free(ep->seeds);
  ep->seeds = NULL;
  ep->n_seeds = 0;
}
