/* TLS (rediss://) against real TLS servers from the launcher (--tls,
 * --mtls, --tls-wrong-host): what works, every way a certificate can be
 * wrong (each a clear error naming the master, and no key left), the
 * options' spellings (client options, URL query), the handshake within the
 * connect timeout, and a kept TLS connection across fork(). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"

/* fixture_tls_file's path, kept (it returns a static buffer). */
typedef struct path {
  char s[512];
} path;

static path tls_file(const fixture *fx, const char *name) {
  path p;
  snprintf(p.s, sizeof p.s, "%s", fixture_tls_file(fx, name));
  return p;
}

/* Tolerant deadlines: 2 CPUs are shared by many servers, and under
 * valgrind a TLS handshake's crypto takes seconds (hence also the 60 s
 * TTLs below: an acquire waits for a master a tenth of the TTL at most). */
static hrl_options tolerant(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.connect_timeout_ms = 10000;
  o.timeout_ms = 3000;
  o.retry_delay_ms = 10;
  o.retry_jitter_ms = 5;
  return o;
}

/* One acquire (single attempt) of name on c: its status, its message into
 * err; released when held. */
static hrl_status cycle(hrl_client *c, const char *name, char *err,
                        size_t size) {
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, name, strlen(name), 60000, &lk, NULL, 0),
               HRL_OK);
  hrl_status st = hrl_lock_acquire(lk, 0);
  hrl_format_error(st, hrl_lock_error(lk), err, size);
  if (st == HRL_OK) {
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  }
  hrl_lock_free(lk);
  return st;
}

/* A failed acquire on url, fx's first TLS master: ECONNECT, a message
 * naming the master (as the URL does) and containing why, and no key left
 * there. */
static void check_refused(fixture *fx, const hrl_options *o, const char *url,
                          const char *name, const char *why) {
  hrl_client *c = check_client(&url, 1, o);
  char err[HRL_DETAIL_MAX + 64];
  CHECK_STATUS(cycle(c, name, err, sizeof err), HRL_ECONNECT);
  char label[64];
  snprintf(label, sizeof label, "%s: ", hrl_client_master_label(c, 0));
  CHECK_CONTAINS(err, label);
  CHECK_CONTAINS(err, why);
  CHECK_INT(fixture_count_key(fx, name, strlen(name)), 0);
  hrl_client_free(c);
}

static void test_server_certificate(void) {
  fixture fx;
  fixture_start(&fx, 2, "--tls");
  hrl_options o = tolerant();
  path ca = tls_file(&fx, "ca.crt"), other_ca = tls_file(&fx, "other-ca.crt");
  o.ssl_ca_certs = ca.s;
  hrl_client *c = check_client(fx.tls_urls, 2, &o);
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, "tls:works", 9, 60000, &lk, NULL, 0), HRL_OK);
  for (int k = 0; k < 20; k++) { /* a kept connection, cycle after cycle */
    CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
    CHECK_INT(fixture_count_key(&fx, "tls:works", 9), 2);
    char value[64];
    fixture_get(&fx, 1, "tls:works", 9, value, sizeof value);
    CHECK_STR(value, hrl_lock_token(lk));
    CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
    CHECK_INT(fixture_count_key(&fx, "tls:works", 9), 0);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);

  /* The same from the URL alone, as localhost (a name: SNI, DNS SAN). */
  char url[1024];
  snprintf(url, sizeof url, "rediss://localhost:%d?ssl_ca_certs=%s",
           fx.tls_port[0], ca.s);
  hrl_options plain = tolerant();
  const char *u = url;
  c = check_client(&u, 1, &plain);
  char err[HRL_DETAIL_MAX + 64];
  CHECK_STATUS(cycle(c, "tls:url", err, sizeof err), HRL_OK);
  hrl_client_free(c);

  /* Verification is on by default, against the system's CAs, which do not
   * know the fixture's. */
  check_refused(&fx, &plain, fx.tls_urls[0], "tls:system",
                "certificate verify failed");
  /* The wrong CA. */
  o.ssl_ca_certs = other_ca.s;
  check_refused(&fx, &o, fx.tls_urls[0], "tls:other-ca",
                "certificate verify failed");
  /* A CA file that is not there is named. */
  o.ssl_ca_certs = "/nonexistent/ca.pem";
  check_refused(&fx, &o, fx.tls_urls[0], "tls:nofile",
                "ssl_ca_certs /nonexistent/ca.pem: No such file");
  /* The explicit opt-out: no check at all. */
  o.ssl_ca_certs = NULL;
  o.ssl_cert_reqs = HRL_CERT_NONE;
  c = check_client(fx.tls_urls, 1, &o);
  CHECK_STATUS(cycle(c, "tls:none", err, sizeof err), HRL_OK);
  hrl_client_free(c);
  fixture_stop(&fx);
}

static void test_host_name(void) {
  fixture fx;
  fixture_start(&fx, 1, "--tls --tls-wrong-host");
  hrl_options o = tolerant();
  path ca = tls_file(&fx, "ca.crt");
  o.ssl_ca_certs = ca.s;
  check_refused(&fx, &o, fx.tls_urls[0], "tls:host",
                "certificate verify failed: IP address mismatch");
  char url[1024];
  snprintf(url, sizeof url, "rediss://localhost:%d", fx.tls_port[0]);
  check_refused(&fx, &o, url, "tls:host", "hostname mismatch");
  /* The chain is good: only the name is wrong, and the name check can be
   * turned off alone, by option or in the URL. */
  char err[HRL_DETAIL_MAX + 64];
  o.ssl_check_hostname = false;
  hrl_client *c = check_client(fx.tls_urls, 1, &o);
  CHECK_STATUS(cycle(c, "tls:nocheck", err, sizeof err), HRL_OK);
  hrl_client_free(c);
  o.ssl_check_hostname = true;
  snprintf(url, sizeof url, "%s?ssl_check_hostname=false", fx.tls_urls[0]);
  const char *u = url;
  c = check_client(&u, 1, &o);
  CHECK_STATUS(cycle(c, "tls:nocheck", err, sizeof err), HRL_OK);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* Every TLS setting is per master: one master's opt-out of the host name
 * check (its URL's ssl_check_hostname=false) leaves the other's check on,
 * whichever of them connects first, and the other's opt-in does not force
 * the check on the first. Both certificates name wrong.invalid only (one
 * CA): a master whose check is on must be refused, with no key left. */
static void test_settings_are_per_master(void) {
  fixture fx;
  fixture_start(&fx, 2, "--tls --tls-wrong-host");
  hrl_options o = tolerant();
  path ca = tls_file(&fx, "ca.crt");
  o.ssl_ca_certs = ca.s;
  char lax[512];
  for (int lax_first = 1; lax_first >= 0; lax_first--) {
    int lax_i = lax_first ? 0 : 1, strict_i = 1 - lax_i;
    snprintf(lax, sizeof lax, "%s?ssl_check_hostname=false",
             fx.tls_urls[lax_i]);
    const char *urls[2];
    urls[lax_i] = lax;
    urls[strict_i] = fx.tls_urls[strict_i];
    hrl_client *c = check_client(urls, 2, &o);
    hrl_lock *lk = NULL;
    CHECK_STATUS(hrl_lock_new(c, "tls:per-master", 14, 60000, &lk, NULL, 0),
                 HRL_OK);
    hrl_status st = hrl_lock_acquire(lk, 0);
    CHECK_STATUS(st, HRL_ECONNECT); /* 1 of 2 answered */
    if (st == HRL_OK) {
      hrl_lock_release(lk);
    }
    char want[128];
    snprintf(want, sizeof want,
             "%s: TLS: certificate verify failed: "
             "IP address mismatch",
             hrl_client_master_label(c, (size_t)strict_i));
    CHECK_CONTAINS(hrl_lock_error(lk), want);
    snprintf(want, sizeof want,
             "%s: ", hrl_client_master_label(c, (size_t)lax_i));
    CHECK(strstr(hrl_lock_error(lk), want) == NULL); /* the lax one is fine */
    CHECK_INT(fixture_count_key(&fx, "tls:per-master", 14), 0);
    hrl_lock_free(lk);
    hrl_client_free(c);
  }
  fixture_stop(&fx);
}

static void test_client_certificate(void) {
  fixture fx;
  fixture_start(&fx, 1, "--mtls");
  hrl_options o = tolerant();
  path ca = tls_file(&fx, "ca.crt");
  o.ssl_ca_certs = ca.s;
  char cert[512], key[512];
  snprintf(cert, sizeof cert, "%s", fixture_tls_file(&fx, "client.crt"));
  snprintf(key, sizeof key, "%s", fixture_tls_file(&fx, "client.key"));
  /* None: the server refuses after our side of the handshake (TLS 1.3),
   * before it reads anything. */
  check_refused(&fx, &o, fx.tls_urls[0], "mtls:none", "TLS: ");
  /* One signed by a CA the server does not trust. */
  char other_cert[512], other_key[512];
  snprintf(other_cert, sizeof other_cert, "%s",
           fixture_tls_file(&fx, "other-client.crt"));
  snprintf(other_key, sizeof other_key, "%s",
           fixture_tls_file(&fx, "other-client.key"));
  o.ssl_certfile = other_cert;
  o.ssl_keyfile = other_key;
  check_refused(&fx, &o, fx.tls_urls[0], "mtls:other", "TLS: ");
  /* A key that is not the certificate's. */
  o.ssl_certfile = cert;
  o.ssl_keyfile = other_key;
  check_refused(&fx, &o, fx.tls_urls[0], "mtls:mismatch", "ssl_keyfile");
  /* The right one works, by option and by URL. */
  char err[HRL_DETAIL_MAX + 64];
  o.ssl_keyfile = key;
  hrl_client *c = check_client(fx.tls_urls, 1, &o);
  CHECK_STATUS(cycle(c, "mtls:ok", err, sizeof err), HRL_OK);
  hrl_client_free(c);
  char url[2048];
  snprintf(url, sizeof url,
           "rediss://127.0.0.1:%d?ssl_ca_certs=%s/ca.crt&ssl_certfile=%s"
           "&ssl_keyfile=%s",
           fx.tls_port[0], fx.tls_dir, cert, key);
  hrl_options plain = tolerant();
  const char *u = url;
  c = check_client(&u, 1, &plain);
  CHECK_STATUS(cycle(c, "mtls:url", err, sizeof err), HRL_OK);
  hrl_client_free(c);
  /* A key file without a certificate is refused up front. */
  plain.ssl_keyfile = key;
  hrl_client *none = NULL;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_client_new(fx.tls_urls, 1, &plain, &none, d, sizeof d),
               HRL_EINVAL);
  CHECK_CONTAINS(d, "ssl_keyfile is given without ssl_certfile");
  fixture_stop(&fx);
}

/* The wrong protocol either way round, and a server that never answers the
 * handshake: each fails within its deadline, with no key left. */
static void test_wrong_ports_and_deadline(void) {
  fixture fx;
  fixture_start(&fx, 1, "--tls");
  hrl_options o = tolerant();
  path ca = tls_file(&fx, "ca.crt");
  o.ssl_ca_certs = ca.s;
  char url[256];
  snprintf(url, sizeof url, "rediss://127.0.0.1:%d", fx.port[0]);
  {
    const char *u = url;
    hrl_client *c = check_client(&u, 1, &o);
    char err[HRL_DETAIL_MAX + 64];
    CHECK_STATUS(cycle(c, "tls:plainport", err, sizeof err), HRL_ECONNECT);
    CHECK_CONTAINS(err, "(TLS handshake)");
    hrl_client_free(c);
  }
  snprintf(url, sizeof url, "redis://127.0.0.1:%d", fx.tls_port[0]);
  const char *u = url;
  hrl_client *c = check_client(&u, 1, &o);
  char err[HRL_DETAIL_MAX + 64];
  CHECK_STATUS(cycle(c, "tls:tlsport", err, sizeof err), HRL_ECONNECT);
  hrl_client_free(c);
  CHECK_INT(fixture_count_key(&fx, "tls:tlsport", 11), 0);

  /* A stopped server accepts the TCP connection (its backlog) but never
   * answers the ClientHello: the handshake ends with the connect timeout. */
  o.connect_timeout_ms = 300;
  o.timeout_ms = 100;
  c = check_client(fx.tls_urls, 1, &o);
  fixture_ctl(&fx, "pause", 1, NULL);
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, "tls:slow", 8, 10000, &lk, NULL, 0), HRL_OK);
  int64_t t0 = hrl_now_us();
  hrl_status st = HRL_OK;
  for (int k = 0; k < 10 && hrl_now_us() - t0 < 2000000; k++) {
    st = hrl_lock_acquire(lk, 0); /* each round waits 100 ms at most */
    if (strstr(hrl_lock_error(lk), "connect timeout") != NULL) {
      break;
    }
  }
  int64_t took_ms = (hrl_now_us() - t0) / 1000;
  CHECK_STATUS(st, HRL_ECONNECT);
  CHECK_CONTAINS(hrl_lock_error(lk),
                 "connect timeout after 300 ms (TLS handshake)");
  CHECK(took_ms >= 250 && took_ms < 1500);
  fixture_ctl(&fx, "resume", 1, NULL);
  hrl_lock_free(lk);
  hrl_client_free(c);
  o = tolerant();
  o.ssl_ca_certs = ca.s;
  c = check_client(fx.tls_urls, 1, &o);
  CHECK_STATUS(cycle(c, "tls:slow", err, sizeof err), HRL_OK);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* The server's count of connections it accepted. */
static long long connections_received(fixture *fx) {
  redisReply *r = fixture_cmd(fx, 1, "INFO stats");
  long long n = -1;
  const char *at = r != NULL && r->str != NULL
                       ? strstr(r->str, "total_connections_received:")
                       : NULL;
  if (at != NULL) {
    n = atoll(at + strlen("total_connections_received:"));
  }
  freeReplyObject(r);
  return n;
}

/* A forked child must never write to its parent's TLS connection: one TLS
 * record from the child (a command, or a close_notify) would end the
 * parent's session on the server, whose state the child only copied. The
 * child opens a connection of its own, and the parent keeps using its
 * connection: the server sees one new connection, the child's. */
static void test_fork_keeps_the_parents_stream(void) {
  fixture fx;
  fixture_start(&fx, 1, "--tls");
  hrl_options o = tolerant();
  path ca = tls_file(&fx, "ca.crt");
  o.ssl_ca_certs = ca.s;
  hrl_client *c = check_client(fx.tls_urls, 1, &o);
  char err[HRL_DETAIL_MAX + 64];
  CHECK_STATUS(cycle(c, "tls:fork", err, sizeof err), HRL_OK);
  long long before = connections_received(&fx);
  pid_t pid = fork();
  if (pid == 0) {
    fixture_forget(&fx);
    hrl_client_after_fork(c);
    int bad = 0;
    for (int k = 0; k < 5; k++) {
      bad += cycle(c, "tls:child", err, sizeof err) != HRL_OK;
    }
    hrl_client_free(c);
    _exit(bad);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_INT(connections_received(&fx), before + 1); /* the child's own */
  for (int k = 0; k < 5; k++) {
    CHECK_STATUS(cycle(c, "tls:fork", err, sizeof err), HRL_OK);
  }
  CHECK_INT(connections_received(&fx), before + 1);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* Redlock over TLS and plain masters at once: each keeps its transport. */
static void test_mixed_masters(void) {
  fixture fx;
  fixture_start(&fx, 3, "--tls");
  hrl_options o = tolerant();
  path ca = tls_file(&fx, "ca.crt");
  o.ssl_ca_certs = ca.s;
  const char *urls[3] = {fx.tls_urls[0], fx.urls[1], fx.tls_urls[2]};
  hrl_client *c = check_client(urls, 3, &o);
  hrl_master_info info;
  CHECK(hrl_client_master_info(c, 0, &info));
  CHECK(info.tls && info.tls_settings.check_hostname);
  CHECK(info.tls_settings.cert_reqs == HRL_CERT_REQUIRED);
  CHECK_STR(info.tls_settings.ca_certs, ca.s);
  CHECK(hrl_client_master_info(c, 1, &info));
  CHECK(!info.tls && info.tls_settings.ca_certs == NULL);
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, "tls:mixed", 9, 60000, &lk, NULL, 0), HRL_OK);
  CHECK_STATUS(hrl_lock_acquire(lk, 0), HRL_OK);
  hrl_counts n;
  hrl_lock_counts(lk, &n);
  CHECK_INT(n.ok, 3);
  CHECK_INT(fixture_count_key(&fx, "tls:mixed", 9), 3);
  CHECK_STATUS(hrl_lock_release(lk), HRL_OK);
  CHECK_INT(fixture_count_key(&fx, "tls:mixed", 9), 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  fixture_stop(&fx);
}

/* The URL's settings win over the client's, for its master only. */
static void test_url_overrides_options(void) {
  hrl_options o;
  hrl_options_init(&o);
  CHECK(o.ssl_cert_reqs == HRL_CERT_REQUIRED && o.ssl_check_hostname);
  CHECK(o.ssl_ca_certs == NULL && o.ssl_certfile == NULL);
  char ca[] = "/client/ca.pem";
  o.ssl_ca_certs = ca;
  o.ssl_certfile = "/client/cert.pem";
  const char *urls[] = {"rediss://a:1?ssl_ca_certs=/url/ca.pem&ssl_cert_reqs="
                        "none&ssl_check_hostname=no",
                        "rediss://b:2"};
  hrl_client *c = check_client(urls, 2, &o);
  memcpy(ca, "/changed/", 9); /* the client keeps its own copy */
  hrl_master_info a, b;
  CHECK(hrl_client_master_info(c, 0, &a) && hrl_client_master_info(c, 1, &b));
  CHECK_STR(a.tls_settings.ca_certs, "/url/ca.pem");
  CHECK_STR(a.tls_settings.certfile, "/client/cert.pem");
  CHECK(a.tls_settings.cert_reqs == HRL_CERT_NONE);
  CHECK(!a.tls_settings.check_hostname);
  CHECK_STR(b.tls_settings.ca_certs, "/client/ca.pem");
  CHECK(b.tls_settings.cert_reqs == HRL_CERT_REQUIRED);
  CHECK(b.tls_settings.check_hostname);
  hrl_client_free(c);
}

int main(void) {
  RUN(test_url_overrides_options);
  RUN(test_server_certificate);
  RUN(test_host_name);
  RUN(test_settings_are_per_master);
  RUN(test_client_certificate);
  RUN(test_wrong_ports_and_deadline);
  RUN(test_fork_keeps_the_parents_stream);
  RUN(test_mixed_masters);
  return finish_tests("test_tls");
}
