/* The C bad-input table, part 3 (bad_inputs.h): what real deployments add,
 * TLS options and rediss:// URLs with their query, and Redis Cluster URLs.
 * Every row fails before any I/O but those marked BAD_OK (TLS spoken to the
 * healthy plain master) and the one that loads a CA file that is not there.
 * Static names carry a dep_ prefix: tests/reliability/c/bad_inputs.c includes
 * every part in one file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "bad_inputs.h"

static bad_outcome dep_client(const char *url, const hrl_options *o) {
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_client_new(&url, 1, o, &c, d, sizeof d);
  bool consistent = (s == HRL_OK) == (c != NULL);
  hrl_client_free(c);
  bad_outcome out = bad_status(s, d);
  if (!consistent) {
    snprintf(out.text, sizeof out.text, "out set wrongly: %s", d);
  }
  return out;
}

/* One acquire (a single attempt) on url with options o. */
static bad_outcome dep_acquire(const char *url, const hrl_options *o) {
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX] = "";
  if (hrl_client_new(&url, 1, o, &c, d, sizeof d) != HRL_OK) {
    return bad_status(HRL_EINVAL, d);
  }
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "bad:tls", 7, 5000, &lk, NULL, 0);
  hrl_status s = hrl_lock_acquire(lk, 0);
  bad_outcome out = bad_status(s, hrl_lock_error(lk));
  if (s == HRL_OK) {
    hrl_lock_release(lk);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return out;
}

#define DEP_URL(fn, url)                                                       \
  static bad_outcome fn(void) {                                                \
    hrl_options o = bad_fast();                                                \
    return dep_client(url, &o);                                                \
  }
DEP_URL(dep_url_reqs, "rediss://h?ssl_cert_reqs=maybe")
DEP_URL(dep_url_unknown, "rediss://h?ssl_verify=1")
DEP_URL(dep_url_plain, "redis://h?ssl_cert_reqs=none")
DEP_URL(dep_url_flag, "rediss://h?ssl_check_hostname=perhaps")
DEP_URL(dep_url_twice, "rediss://h?ssl_ca_certs=a&ssl_ca_certs=b")
DEP_URL(dep_url_empty, "rediss://h?ssl_ca_certs=")
DEP_URL(dep_url_amp, "rediss://h?ssl_ca_certs=a&")
DEP_URL(dep_url_nul, "rediss://h?ssl_certfile=a%00b")
DEP_URL(dep_url_good, "rediss://:pw@h:6380/2?ssl_cert_reqs=none")
DEP_URL(dep_cl_twice, "redis+cluster://h:1,h:1")
DEP_URL(dep_cl_db, "redis+cluster://h:1/2")
DEP_URL(dep_cl_tls, "rediss+cluster://h:1")
DEP_URL(dep_cl_empty, "redis+cluster://")
DEP_URL(dep_cl_trailing, "redis+cluster://h:1,")
DEP_URL(dep_cl_many, "redis+cluster://h:1,h:2,h:3,h:4,h:5,h:6,h:7,h:8,h:9,"
                     "h:10,h:11,h:12,h:13,h:14,h:15,h:16,h:17")
DEP_URL(dep_cl_good, "redis+cluster://:pw@h:1,[::1]:2,h")

DEP_URL(dep_st_none, "redis+sentinel://h:1")
DEP_URL(dep_st_empty, "redis+sentinel://h:1/")
DEP_URL(dep_st_char, "redis+sentinel://h:1/a$b")
DEP_URL(dep_st_db, "redis+sentinel://h:1/svc/x")
DEP_URL(dep_st_tls, "rediss+sentinel://h:1/svc")
DEP_URL(dep_st_long,
        "redis+sentinel://h:1/"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaa")
DEP_URL(dep_st_good, "redis+sentinel://:pw@h,h:26380/svc/2")

/* Two sentinel URLs asking one sentinel about one service. */
static bad_outcome dep_st_twice(void) {
  const char *urls[] = {"redis+sentinel://a:1,b:2/svc",
                        "redis+sentinel://b:2/svc"};
  hrl_options o = bad_fast();
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_client_new(urls, 2, &o, &c, d, sizeof d);
  hrl_client_free(c);
  return bad_status(s, d);
}

/* A cluster and a standalone master naming the same server. */
static bad_outcome dep_cl_overlap(void) {
  const char *urls[] = {"redis+cluster://h:1,h:2", "redis://h:2"};
  hrl_options o = bad_fast();
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_client_new(urls, 2, &o, &c, d, sizeof d);
  hrl_client_free(c);
  return bad_status(s, d);
}

static bad_outcome dep_reqs_range(void) {
  hrl_options o = bad_fast();
  o.ssl_cert_reqs = (hrl_cert_reqs)7;
  return dep_client("rediss://h", &o);
}
static bad_outcome dep_ca_empty(void) {
  hrl_options o = bad_fast();
  o.ssl_ca_certs = "";
  return dep_client("rediss://h", &o);
}
static bad_outcome dep_ca_long(void) {
  static char path[4098];
  memset(path, 'a', sizeof path - 1);
  path[sizeof path - 1] = '\0';
  hrl_options o = bad_fast();
  o.ssl_ca_certs = path;
  return dep_client("rediss://h", &o);
}
static bad_outcome dep_key_alone(void) {
  hrl_options o = bad_fast();
  o.ssl_keyfile = "/k.pem";
  return dep_client("rediss://h", &o);
}
static bad_outcome dep_key_alone_plain(void) {
  hrl_options o = bad_fast(); /* TLS options of no rediss:// master */
  o.ssl_keyfile = "/k.pem";
  return dep_client("redis://h", &o);
}

/* Through the option table, as the bindings give them. */
static bad_outcome dep_set(const char *name, const char *text, size_t len) {
  hrl_options o = bad_fast();
  char d[HRL_DETAIL_MAX] = "";
  return bad_status(
      hrl_options_set(&o, hrl_option_find(name), 0, text, len, d, sizeof d), d);
}
static bad_outcome dep_set_reqs(void) {
  return dep_set("ssl_cert_reqs", "REQUIRED", 8);
}
static bad_outcome dep_set_reqs_null(void) {
  return dep_set("ssl_cert_reqs", NULL, 0);
}
static bad_outcome dep_set_nul(void) {
  return dep_set("ssl_ca_certs", "a\0b", 3);
}
static bad_outcome dep_set_lock(void) {
  hrl_lock_options lo = {.ttl_ms = 5000};
  char d[HRL_DETAIL_MAX] = "";
  return bad_status(hrl_lock_options_set(&lo, hrl_option_find("ssl_ca_certs"),
                                         0, d, sizeof d),
                    d);
}

/* A CA file that is not there: named when the master is first used. */
static bad_outcome dep_ca_missing(void) {
  hrl_options o = bad_fast();
  o.ssl_ca_certs = "/nonexistent/ca.pem";
  return dep_acquire("rediss://127.0.0.1:1", &o);
}
/* TLS to a server that speaks plain RESP: it waits for a command line the
 * ClientHello never ends, and the handshake times out. */
static bad_outcome dep_tls_to_plain(void) {
  const char *ok = bad_ok_url(); /* redis://127.0.0.1:PORT */
  char url[256];
  snprintf(url, sizeof url, "rediss://%s?ssl_cert_reqs=none",
           ok + strlen("redis://"));
  hrl_options o = bad_fast();
  o.connect_timeout_ms = 300;
  o.timeout_ms = 300;
  return dep_acquire(url, &o);
}

const bad_row bad_rows_deploy[] = {
    {"tls", "url rediss://h?ssl_cert_reqs=maybe", dep_url_reqs, HRL_EINVAL,
     "ssl_cert_reqs must be one of none, optional, required, got 'maybe'",
     BAD_NONE},
    {"tls", "url rediss://h?ssl_verify=1 (not an option)", dep_url_unknown,
     HRL_EINVAL, "unknown TLS option 'ssl_verify'", BAD_NONE},
    {"tls", "url redis://h?ssl_cert_reqs=none (not TLS)", dep_url_plain,
     HRL_EINVAL, "TLS options (ssl_*) need a rediss:// url", BAD_NONE},
    {"tls", "url rediss://h?ssl_check_hostname=perhaps", dep_url_flag,
     HRL_EINVAL, "ssl_check_hostname must be true or false, got 'perhaps'",
     BAD_NONE},
    {"tls", "url with ssl_ca_certs twice", dep_url_twice, HRL_EINVAL,
     "ssl_ca_certs is given twice", BAD_NONE},
    {"tls", "url rediss://h?ssl_ca_certs= (empty)", dep_url_empty, HRL_EINVAL,
     "name=value pairs", BAD_NONE},
    {"tls", "url rediss://h?ssl_ca_certs=a& (trailing &)", dep_url_amp,
     HRL_EINVAL, "empty query after '&'", BAD_NONE},
    {"tls", "url with a %00 in ssl_certfile", dep_url_nul, HRL_EINVAL,
     "bad %-escape in the query", BAD_NONE},
    {"tls", "url rediss://:pw@h:6380/2?ssl_cert_reqs=none is taken",
     dep_url_good, HRL_OK, "", BAD_NONE},
    {"tls", "ssl_cert_reqs 7", dep_reqs_range, HRL_EINVAL,
     "ssl_cert_reqs must be one of none, optional, required, got 7", BAD_NONE},
    {"tls", "ssl_ca_certs \"\"", dep_ca_empty, HRL_EINVAL,
     "ssl_ca_certs must be 1 to 4096 bytes, got 0", BAD_NONE},
    {"tls", "ssl_ca_certs of 4097 bytes", dep_ca_long, HRL_EINVAL,
     "ssl_ca_certs must be 1 to 4096 bytes, got 4097", BAD_NONE},
    {"tls", "ssl_keyfile without ssl_certfile", dep_key_alone, HRL_EINVAL,
     "ssl_keyfile is given without ssl_certfile", BAD_NONE},
    {"tls", "ssl_keyfile without ssl_certfile, no rediss:// master",
     dep_key_alone_plain, HRL_OK, "", BAD_NONE},
    {"tls", "option ssl_cert_reqs \"REQUIRED\" (names are lowercase)",
     dep_set_reqs, HRL_EINVAL, "got 'REQUIRED'", BAD_NONE},
    {"tls", "option ssl_cert_reqs NULL", dep_set_reqs_null, HRL_EINVAL,
     "ssl_cert_reqs must be one of none, optional, required, got NULL",
     BAD_NONE},
    {"tls", "option ssl_ca_certs with a NUL byte", dep_set_nul, HRL_EINVAL,
     "ssl_ca_certs must not contain a NUL byte", BAD_NONE},
    {"tls", "ssl_ca_certs as a lock option", dep_set_lock, HRL_EINVAL,
     "ssl_ca_certs is not a lock option", BAD_NONE},
    {"tls", "ssl_ca_certs that is not there", dep_ca_missing, HRL_ECONNECT,
     "TLS: ssl_ca_certs /nonexistent/ca.pem: No such file or directory",
     BAD_NONE},
    {"tls", "rediss:// to a plain master", dep_tls_to_plain, HRL_ECONNECT,
     "(TLS handshake)", BAD_OK},
    {"cluster", "url redis+cluster://h:1,h:1", dep_cl_twice, HRL_EINVAL,
     "an address is listed twice", BAD_NONE},
    {"cluster", "url redis+cluster://h:1/2", dep_cl_db, HRL_EINVAL,
     "a cluster has no databases (only /0)", BAD_NONE},
    {"cluster", "url rediss+cluster://h:1", dep_cl_tls, HRL_EINVAL,
     "TLS to a Redis Cluster or through Sentinel (rediss+cluster://, "
     "rediss+sentinel://) is not supported",
     BAD_NONE},
    {"cluster", "url redis+cluster://", dep_cl_empty, HRL_EINVAL,
     "missing host", BAD_NONE},
    {"cluster", "url redis+cluster://h:1, (trailing comma)", dep_cl_trailing,
     HRL_EINVAL, "missing host", BAD_NONE},
    {"cluster", "url with 17 seeds", dep_cl_many, HRL_EINVAL,
     "at most 16 addresses, got 17", BAD_NONE},
    {"cluster", "url redis+cluster://:pw@h:1,[::1]:2,h is taken", dep_cl_good,
     HRL_OK, "", BAD_NONE},
    {"cluster", "a cluster and a master naming one server", dep_cl_overlap,
     HRL_EINVAL, "is listed twice; Redlock needs independent masters",
     BAD_NONE},
    {"sentinel", "url redis+sentinel://h:1 (no service)", dep_st_none,
     HRL_EINVAL, "the service name must follow the sentinels", BAD_NONE},
    {"sentinel", "url redis+sentinel://h:1/ (empty service)", dep_st_empty,
     HRL_EINVAL, "the service name must follow the sentinels", BAD_NONE},
    {"sentinel", "url redis+sentinel://h:1/a$b", dep_st_char, HRL_EINVAL,
     "bad character in the service name", BAD_NONE},
    {"sentinel", "url redis+sentinel://h:1/svc/x", dep_st_db, HRL_EINVAL,
     "database must be a number after the service", BAD_NONE},
    {"sentinel", "url rediss+sentinel://h:1/svc", dep_st_tls, HRL_EINVAL,
     "is not supported", BAD_NONE},
    {"sentinel", "a service name of 65 bytes", dep_st_long, HRL_EINVAL,
     "service name longer than 64 bytes", BAD_NONE},
    {"sentinel", "url redis+sentinel://:pw@h,h:26380/svc/2 is taken",
     dep_st_good, HRL_OK, "", BAD_NONE},
    {"sentinel", "two urls asking one sentinel about one service", dep_st_twice,
     HRL_EINVAL, "is listed twice", BAD_NONE},
};
const size_t bad_rows_deploy_count =
    sizeof bad_rows_deploy / sizeof bad_rows_deploy[0];
