/* Unit tests without Redis: URL parsing (url.h), tokens (random.h), the
 * message table, and what valid options, names and seconds become. The bad
 * inputs of the public API are in the C bad-input table (bad_inputs.h, run
 * by test_bad_inputs and by the reliability suite). */
#include <math.h>
#include <stdlib.h>

#include "api/api.h"
#include "check.h"
#include "proto/cluster.h"
#include "proto/random.h"
#include "proto/url.h"

static void test_message_table(void) {
  CHECK_STR(hrl_strerror(HRL_OK), "ok");
  CHECK_STR(hrl_strerror(HRL_ETIMEOUT), "timeout");
  CHECK_STR(hrl_strerror(HRL_ENOTOWNED), "not owned");
  CHECK_STR(hrl_strerror(HRL_ECONNECT), "connection failed");
  for (int s = 0; s < HRL_STATUS_COUNT_; s++) {
    const char *t = hrl_strerror((hrl_status)s);
    CHECK(t[0] >= 'a' && t[0] <= 'z'); /* short lowercase texts */
  }
  char buf[64];
  CHECK_STR(hrl_format_error(HRL_ETIMEOUT, "", buf, sizeof buf), "timeout");
  CHECK_STR(hrl_format_error(HRL_ETIMEOUT, NULL, buf, sizeof buf), "timeout");
  CHECK_STR(hrl_format_error(HRL_EINVAL, "ttl bad", buf, sizeof buf),
            "invalid argument: ttl bad");
  char tiny[8];
  CHECK_STR(hrl_format_error(HRL_EINVAL, "long detail", tiny, sizeof tiny),
            "invalid");
}

static hrl_status parse(const char *url, hrl_endpoint *ep, char *detail) {
  memset(ep, 0, sizeof *ep);
  detail[0] = '\0';
  return hrl_url_parse(url, ep, detail, HRL_DETAIL_MAX);
}

/* A master's label is "host:port" ("[host]:port" for IPv6), cut to
 * HRL_LABEL_MAX as snprintf cuts: checked against snprintf for hosts
 * around that length and ports of every digit count. */
static void test_url_labels(void) {
  static const int ports[] = {1, 80, 6379, 65535};
  for (size_t len = 1; len < HRL_LABEL_MAX + 8; len += len < 8 ? 1 : 7) {
    for (int v6 = 0; v6 < 2; v6++) {
      for (size_t k = 0; k < sizeof ports / sizeof ports[0]; k++) {
        char host[HRL_LABEL_MAX + 8], url[2 * HRL_LABEL_MAX];
        char want[HRL_LABEL_MAX], d[HRL_DETAIL_MAX];
        memset(host, v6 ? ':' : 'h', len);
        host[len] = '\0';
        host[0] = 'a';
        snprintf(url, sizeof url, "redis://%s%s%s:%d", v6 ? "[" : "", host,
                 v6 ? "]" : "", ports[k]);
        /* snprintf's cut, without its truncation warning */
        char whole[2 * HRL_LABEL_MAX];
        snprintf(whole, sizeof whole, "%s%s%s:%d", v6 ? "[" : "", host,
                 v6 ? "]" : "", ports[k]);
        snprintf(want, sizeof want, "%.*s", (int)sizeof want - 1, whole);
        hrl_endpoint ep;
        CHECK_STATUS(parse(url, &ep, d), HRL_OK);
        CHECK_STR(ep.label, want);
        hrl_endpoint_clear(&ep);
      }
    }
  }
}

static void test_url_good(void) {
  hrl_endpoint ep;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(parse("redis://127.0.0.1", &ep, d), HRL_OK);
  CHECK_STR(ep.host, "127.0.0.1");
  CHECK_INT(ep.port, 6379);
  CHECK_INT(ep.db, 0);
  CHECK(ep.user == NULL && ep.pass == NULL && !ep.is_unix);
  CHECK_STR(ep.label, "127.0.0.1:6379");
  hrl_endpoint_clear(&ep);

  CHECK_STATUS(parse("redis://user:p%40ss%3Aw@localhost:7000/3", &ep, d),
               HRL_OK);
  CHECK_STR(ep.user, "user");
  CHECK_STR(ep.pass, "p@ss:w");
  CHECK_STR(ep.host, "localhost");
  CHECK_INT(ep.port, 7000);
  CHECK_INT(ep.db, 3);
  hrl_endpoint_clear(&ep);

  CHECK_STATUS(parse("redis://:secret@[::1]:6380/", &ep, d), HRL_OK);
  CHECK(ep.user == NULL);
  CHECK_STR(ep.pass, "secret");
  CHECK_STR(ep.host, "::1");
  CHECK_STR(ep.label, "[::1]:6380");
  hrl_endpoint_clear(&ep);

  CHECK_STATUS(parse("REDIS://H:1", &ep, d), HRL_OK);
  CHECK(!ep.has_sync_replicas);
  hrl_endpoint_clear(&ep);

  /* A master's own sync_replicas, in every scheme's query. */
  const char *const synced[] = {"redis://h:1/2?sync_replicas=2",
                                "rediss://h?ssl_cert_reqs=none&"
                                "sync_replicas=2",
                                "unix:///tmp/s?db=1&sync_replicas=2",
                                "redis+cluster://a:1/?sync_replicas=2",
                                "redis+sentinel://a:1/svc/3?sync_replicas=2"};
  for (size_t k = 0; k < sizeof synced / sizeof synced[0]; k++) {
    CHECK_STATUS(parse(synced[k], &ep, d), HRL_OK);
    CHECK(ep.has_sync_replicas);
    CHECK_INT(ep.sync_replicas, 2);
    hrl_endpoint_clear(&ep);
  }
  CHECK_STATUS(parse("unix:///tmp/s?sync_replicas=0&db=4", &ep, d), HRL_OK);
  CHECK_INT(ep.db, 4);
  CHECK(ep.has_sync_replicas && ep.sync_replicas == 0);
  hrl_endpoint_clear(&ep);

  CHECK_STATUS(parse("unix:///tmp/redis.sock", &ep, d), HRL_OK);
  CHECK(ep.is_unix);
  CHECK_STR(ep.path, "/tmp/redis.sock");
  CHECK_STR(ep.label, "/tmp/redis.sock");
  hrl_endpoint_clear(&ep);

  CHECK_STATUS(parse("rediss://u:pw@redis.example:6380/2", &ep, d), HRL_OK);
  CHECK(ep.tls);
  CHECK_STR(ep.host, "redis.example");
  CHECK_INT(ep.port, 6380);
  CHECK_INT(ep.db, 2);
  CHECK_STR(ep.label, "redis.example:6380");
  CHECK(ep.tls_query.ca_certs == NULL && !ep.tls_query.has_cert_reqs);
  hrl_endpoint_clear(&ep);

  /* The query: the TLS options of this master, percent-decoded. */
  CHECK_STATUS(parse("REDISS://h?ssl_ca_certs=/etc/my%20ca.pem&ssl_ca_path=/d"
                     "&ssl_certfile=/c&ssl_keyfile=/k&ssl_cert_reqs=optional"
                     "&ssl_check_hostname=False",
                     &ep, d),
               HRL_OK);
  CHECK(ep.tls && ep.db == 0 && ep.port == 6379);
  CHECK_STR(ep.tls_query.ca_certs, "/etc/my ca.pem");
  CHECK_STR(ep.tls_query.ca_path, "/d");
  CHECK_STR(ep.tls_query.certfile, "/c");
  CHECK_STR(ep.tls_query.keyfile, "/k");
  CHECK(ep.tls_query.has_cert_reqs &&
        ep.tls_query.cert_reqs == HRL_CERT_OPTIONAL);
  CHECK(ep.tls_query.has_check_hostname && !ep.tls_query.check_hostname);
  hrl_endpoint_clear(&ep);

  CHECK_STATUS(parse("rediss://[::1]:7000/0?ssl_cert_reqs=none", &ep, d),
               HRL_OK);
  CHECK_STR(ep.host, "::1");
  CHECK(ep.tls_query.cert_reqs == HRL_CERT_NONE);
  hrl_endpoint_clear(&ep);

  CHECK_STATUS(parse("redis://h", &ep, d), HRL_OK);
  CHECK(!ep.tls);
  hrl_endpoint_clear(&ep);

  /* A cluster by its seeds; the credentials are every node's. */
  CHECK_STATUS(
      parse("redis+cluster://u:p%40w@10.0.0.1:7000,[::1]:7001,h/", &ep, d),
      HRL_OK);
  CHECK(ep.cluster && !ep.tls && ep.n_seeds == 3);
  CHECK_STR(ep.user, "u");
  CHECK_STR(ep.pass, "p@w");
  CHECK_STR(ep.host, "10.0.0.1");
  CHECK_INT(ep.port, 7000);
  CHECK_STR(ep.seeds[1].host, "::1");
  CHECK_STR(ep.seeds[1].label, "[::1]:7001");
  CHECK_INT(ep.seeds[2].port, 6379);
  CHECK_STR(ep.label, "cluster 10.0.0.1:7000,[::1]:7001,h:6379");
  hrl_endpoint_clear(&ep);

  /* A Sentinel-managed primary by its sentinels (port 26379 by default). */
  CHECK_STATUS(parse("redis+sentinel://:pw@s1,s2:26380/my-svc/3", &ep, d),
               HRL_OK);
  CHECK(!ep.cluster && ep.n_seeds == 2);
  CHECK_STR(ep.service, "my-svc");
  CHECK_STR(ep.pass, "pw");
  CHECK_INT(ep.db, 3);
  CHECK_INT(ep.seeds[0].port, 26379);
  CHECK_INT(ep.seeds[1].port, 26380);
  CHECK_STR(ep.label, "my-svc (sentinel s1:26379,s2:26380)");
  hrl_endpoint_clear(&ep);

  CHECK_STATUS(parse("unix://u:pw@/run/r.sock?db=12", &ep, d), HRL_OK);
  CHECK_STR(ep.user, "u");
  CHECK_STR(ep.pass, "pw");
  CHECK_STR(ep.path, "/run/r.sock");
  CHECK_INT(ep.db, 12);
  hrl_endpoint_clear(&ep);
}

static void test_url_bad(void) {
  static const struct {
    const char *url;
    const char *why;
  } cases[] = {
      {"", "must not be empty"},
      {"http://x", "scheme must be redis://, rediss://, unix://, "
                   "redis+cluster:// or redis+sentinel://"},
      {"redis://x?ssl_cert_reqs=none", "TLS options (ssl_*) need a rediss://"},
      {"rediss://x?", "empty query"},
      {"rediss://x?ssl_ca_certs", "name=value pairs"},
      {"rediss://x?ssl_ca_certs=", "name=value pairs"},
      {"rediss://x?=a", "name=value pairs"},
      {"rediss://x?ssl_ca_certs=a&", "empty query after '&'"},
      {"rediss://x?timeout=1", "unknown TLS option 'timeout'"},
      {"rediss://x?ssl_verify=1", "unknown TLS option 'ssl_verify'"},
      {"rediss://x?ssl_cert_reqs=maybe",
       "ssl_cert_reqs must be one of none, optional, required, got 'maybe'"},
      {"rediss://x?ssl_check_hostname=perhaps",
       "ssl_check_hostname must be true or false, got 'perhaps'"},
      {"rediss://x?ssl_ca_certs=a&ssl_ca_certs=b",
       "ssl_ca_certs is given twice"},
      {"rediss://x?ssl_ca_certs=%zz", "bad %-escape in the query"},
      {"rediss://x?ssl_ca_certs=a%00b", "bad %-escape in the query"},
      {"rediss://x?ssl_cert_reqs=none#frag", "unexpected fragment"},
      {"rediss://x/1x?ssl_cert_reqs=none", "database must be a number"},
      {"redis://", "missing host"},
      {"redis://:6379", "missing host"},
      {"redis://h:0", "port must be a number from 1 to 65535"},
      {"redis://h:65536", "port must be"},
      {"redis://h:12ab", "port must be"},
      {"redis://h:", "port must be"},
      {"redis://h/abc", "database must be a number"},
      {"redis://h/-1", "database must be a number"},
      {"redis://h?x=1", "unknown option 'x' in the query"},
      {"redis://h h", "%-escaped"},
      {"redis://h\x01", "%-escaped"},
      {"redis://user@h", "missing ':'"},
      {"redis://:@h", "empty password"},
      {"redis://:p%zz@h", "bad %-escape"},
      {"redis://:p%00@h", "bad %-escape"},
      {"redis://:p%4@h", "bad %-escape"},
      {"redis://[::1", "unterminated ["},
      {"redis://[::1]x", "unexpected text after ]"},
      {"redis://h$st", "bad character in the host"},
      {"unix://", "must be absolute"},
      {"unix://relative/path", "must be absolute"},
      {"unix:///", "missing unix socket path"},
      {"unix:///tmp/s?database=1", "(known: db, sync_replicas)"},
      {"unix:///tmp/s?db=x", "db must be a number"},
      {"unix://garbage/tmp/s", "must be absolute"},
      {"unix://u:p@x/tmp/s", "unexpected text before the path"},
      {"redis+cluster://", "missing host"},
      {"redis+cluster://a:1,", "missing host"},
      {"redis+cluster://a:1,a:1", "an address is listed twice"},
      {"redis+cluster://a:1/2", "a cluster has no databases (only /0)"},
      {"redis+cluster://a:1?ssl_cert_reqs=none", "need a rediss://"},
      {"redis+cluster://a:99999", "port must be"},
      {"redis+cluster://u@a", "missing ':'"},
      {"rediss+cluster://a:1", "TLS to a Redis Cluster"},
      {"redis+sentinel://a:1", "the service name must follow the sentinels"},
      {"redis+sentinel://a:1//x", "the service name must follow"},
      {"redis+sentinel://a:1/s?x=1", "unknown option 'x'"},
      {"redis+sentinel://a:1/s.b:c", "bad character in the service name"},
      {"redis+sentinel://a:1/s/x", "database must be a number after the "
                                   "service"},
      {"redis+sentinel://a:1/s/1?x", "name=value pairs"},
      {"redis://h?sync_replicas=101", "sync_replicas must be a whole number "
                                      "from 0 to 100"},
      {"redis://h?sync_replicas=1&sync_replicas=2", "given twice"},
      {"redis://h?sync_replicas=-1", "sync_replicas must be"},
      {"redis+cluster://a:1,a:2,a:3,a:4,a:5,a:6,a:7,a:8,a:9,a:10,a:11,a:12,"
       "a:13,a:14,a:15,a:16,a:17",
       "at most 16 addresses, got 17"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hrl_endpoint ep;
    char d[HRL_DETAIL_MAX];
    hrl_status st = parse(cases[i].url, &ep, d);
    if (st != HRL_EINVAL || strstr(d, cases[i].why) == NULL) {
      fprintf(stderr, "url \"%s\": got %s \"%s\", want \"%s\"\n", cases[i].url,
              hrl_strerror(st), d, cases[i].why);
      check_failures++;
    }
    CHECK(ep.host == NULL && ep.pass == NULL && ep.user == NULL);
    hrl_endpoint_clear(&ep);
  }
  char long_path[200] = "unix:///";
  memset(long_path + 8, 'a', 150);
  long_path[158] = '\0';
  hrl_endpoint ep;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(parse(long_path, &ep, d), HRL_EINVAL);
  CHECK_CONTAINS(d, "longer than 107 bytes");
  CHECK_STATUS(hrl_url_parse(NULL, &ep, d, sizeof d), HRL_EINVAL);
}

static void test_url_messages_hide_passwords(void) {
  hrl_endpoint ep;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(parse("redis://u:hunter2@h:99999", &ep, d), HRL_EINVAL);
  CHECK(strstr(d, "hunter2") == NULL);
  CHECK_CONTAINS(d, "redis://u:***@h:99999");
  char shown[128];
  hrl_url_redact("redis://h:1/2", shown, sizeof shown);
  CHECK_STR(shown, "redis://h:1/2");
  /* The parser's split: the last '@' of the authority. */
  hrl_url_redact("redis://:p4ss@w0rdQ@h:1", shown, sizeof shown);
  CHECK_STR(shown, "redis://:***@h:1");
  /* An unescaped '/' in the password: the parser stops there (and fails
   * on the port), the message hides everything up to the '@'. */
  hrl_url_redact("redis://app:Tr0ub4dor/3xyz@h", shown, sizeof shown);
  CHECK_STR(shown, "redis://app:***@h");
  hrl_url_redact("redis+cluster://app:Tr0ub4dor/3xyz@a,b", shown, sizeof shown);
  CHECK_STR(shown, "redis+cluster://app:***@a,b");
  hrl_url_redact("redis://secret@h", shown, sizeof shown); /* no ':' */
  CHECK_STR(shown, "redis://***@h");
  /* A password holding any character a URL gives meaning to, in every
   * scheme, with and without a user: whatever the parser makes of it,
   * no part of it is in the message (550 URLs the parser refuses; 100 of
   * them showed some of it before). */
  static const char *const schemes[] = {"redis://", "rediss://", "unix://",
                                        "redis+cluster://",
                                        "redis+sentinel://"};
  static const char *const tails[] = {"127.0.0.1:99999", "127.0.0.1:1/x/y",
                                      "/tmp/s.sock?db=x", "a:1,b:2/svc/x",
                                      "h?ssl_nope=1"};
  const char *specials = "@/?#:,;%[] ";
  int checked = 0;
  for (size_t k = 0; k < sizeof schemes / sizeof schemes[0]; k++) {
    for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
      for (const char *c = specials; *c != '\0'; c++) {
        for (int user = 0; user < 2; user++) {
          char url[256];
          snprintf(url, sizeof url, "%s%s:Alpha%cBravo@%s", schemes[k],
                   user ? "app" : "", *c, tails[t]);
          if (parse(url, &ep, d) == HRL_OK) {
            hrl_endpoint_clear(&ep);
            continue;
          }
          hrl_url_redact(url, shown, sizeof shown);
          if (strstr(d, "Alpha") != NULL || strstr(d, "Bravo") != NULL ||
              strstr(shown, "Alpha") != NULL ||
              strstr(shown, "Bravo") != NULL) {
            fprintf(stderr, "%s: %s\n", url, d);
            check_failures++;
          }
          checked++;
        }
      }
    }
  }
  CHECK(checked > 400);
}

static hrl_status make_client(const char *const *urls, size_t n,
                              const hrl_options *o, char *d) {
  hrl_client *c = NULL;
  d[0] = '\0';
  hrl_status st = hrl_client_new(urls, n, o, &c, d, HRL_DETAIL_MAX);
  CHECK((st == HRL_OK) == (c != NULL));
  hrl_client_free(c);
  return st;
}

/* The slot of a key, as Redis computes it (cluster-spec: CRC16 XMODEM,
 * hash tags). */
static void test_cluster_slots(void) {
  CHECK_INT(hrl_cluster_slot("123456789", 9), 0x31C3); /* the spec's vector */
  CHECK_INT(hrl_cluster_slot("", 0), 0);
  uint16_t user = hrl_cluster_slot("user1000", 8);
  CHECK_INT(hrl_cluster_slot("{user1000}.following", 20), user);
  CHECK_INT(hrl_cluster_slot("{user1000}.followers", 20), user);
  /* "{}" is no tag: the whole key; only the first "{...}" counts. */
  CHECK_INT(hrl_cluster_slot("foo{}{bar}", 10),
            hrl_cluster_slot("foo{}{bar}", 10));
  CHECK(hrl_cluster_slot("foo{}{bar}", 10) != hrl_cluster_slot("bar", 3));
  CHECK_INT(hrl_cluster_slot("foo{{bar}}zap", 13), hrl_cluster_slot("{bar", 4));
  CHECK_INT(hrl_cluster_slot("foo{bar}{zap}", 13), hrl_cluster_slot("bar", 3));
  CHECK_INT(hrl_cluster_slot("x{y", 3), hrl_cluster_slot("x{y", 3));
  for (int k = 0; k < 1000; k++) {
    char key[16];
    int n = snprintf(key, sizeof key, "k%d", k);
    CHECK(hrl_cluster_slot(key, (size_t)n) < HRL_CLUSTER_SLOTS);
  }
}

static void test_client_config(void) {
  char d[HRL_DETAIL_MAX];
  const char *one[] = {"redis://127.0.0.1:1"};
  const char *five[] = {"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                        "redis://127.0.0.1:3", "unix:///tmp/a.sock",
                        "unix:///tmp/b.sock"};
  CHECK_STATUS(make_client(one, 1, NULL, d), HRL_OK);
  CHECK_STATUS(make_client(five, 5, NULL, d), HRL_OK);

  hrl_options o;
  hrl_options_init(&o);
  CHECK_INT(o.timeout_ms, 50);
  CHECK_INT(o.connect_timeout_ms, 100);
  CHECK_INT(o.retry_delay_ms, 200);
  CHECK_INT(o.retry_jitter_ms, 100);
  CHECK(o.drift_factor == 0.01);

  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(five, 5, NULL, &c, NULL, 0), HRL_OK);
  CHECK_INT(hrl_client_masters(c), 5);
  CHECK_INT(hrl_client_quorum(c), 3);
  CHECK_STR(hrl_client_master_label(c, 3), "/tmp/a.sock");
  hrl_master_info info;
  CHECK(hrl_client_master_info(c, 1, &info));
  CHECK_STR(info.host, "127.0.0.1");
  CHECK_INT(info.port, 2);
  CHECK(info.path == NULL);
  CHECK(hrl_client_master_info(c, 4, &info));
  CHECK(info.host == NULL && info.port == 0);
  CHECK_STR(info.path, "/tmp/b.sock");
  hrl_client_free(c);
}

static void test_lock_fields(void) {
  const char *one[] = {"redis://127.0.0.1:1"};
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_client_new(one, 1, NULL, &c, d, sizeof d), HRL_OK);
  hrl_lock *lk = NULL;
  /* A name is binary safe and its full 512 bytes are accepted. */
  char name[HRL_NAME_MAX];
  memset(name, 'n', sizeof name);
  name[3] = '\0';
  CHECK_STATUS(hrl_lock_new(c, name, HRL_NAME_MAX, 1000, &lk, d, sizeof d),
               HRL_OK);
  size_t len = 0;
  CHECK(memcmp(hrl_lock_name(lk, &len), name, HRL_NAME_MAX) == 0);
  CHECK_INT(len, HRL_NAME_MAX);
  CHECK_STR(hrl_lock_token(lk), "");
  CHECK(!hrl_lock_held(lk));
  CHECK_INT(hrl_lock_validity_ms(lk), 0);
  CHECK_INT(hrl_lock_ttl_ms(lk), 1000);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

static void test_seconds_conversion(void) {
  int64_t ms = -1;
  char d[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_seconds_to_ms("ttl", 30, 1, HRL_TTL_MAX_MS, &ms, d, 99),
               HRL_OK);
  CHECK_INT(ms, 30000);
  CHECK_STATUS(hrl_seconds_to_ms("ttl", 0.0015, 1, HRL_TTL_MAX_MS, &ms, d, 99),
               HRL_OK);
  CHECK_INT(ms, 2);
  CHECK_STATUS(hrl_seconds_to_ms("ttl", 0.0006, 1, HRL_TTL_MAX_MS, &ms, d, 99),
               HRL_OK);
  CHECK_INT(ms, 1);
  CHECK_STATUS(
      hrl_seconds_to_ms("ttl", 2147483.647, 1, HRL_TTL_MAX_MS, &ms, d, 99),
      HRL_OK);
  CHECK_INT(ms, HRL_TTL_MAX_MS);
  CHECK_STATUS(
      hrl_seconds_to_ms("timeout", 0, 0, HRL_TTL_MAX_MS, &ms, d, sizeof d),
      HRL_OK);
  CHECK_INT(ms, 0);
}

static bool is_token(const char *t) {
  if (strlen(t) != HRL_TOKEN_LEN) {
    return false;
  }
  for (const char *p = t; *p; p++) {
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) {
      return false;
    }
  }
  return true;
}

static int cmp_tokens(const void *a, const void *b) {
  return strcmp((const char *)a, (const char *)b);
}

/* An entropy source that hands out 0, 1, 2, ... 255, 0, ... */
static hrl_status counting_entropy(void *ctx, void *buf, size_t n) {
  unsigned *next = ctx;
  for (size_t i = 0; i < n; i++) {
    ((unsigned char *)buf)[i] = (unsigned char)(*next)++;
  }
  return HRL_OK;
}

/* Every byte value becomes its two lowercase hex digits, in order. */
static void test_token_hex_digits(void) {
  unsigned next = 0;
  const hrl_config cfg = {.entropy = counting_entropy, .entropy_ctx = &next};
  for (unsigned t = 0; t < 256 / (HRL_TOKEN_LEN / 2); t++) {
    char token[HRL_TOKEN_LEN + 1], want[HRL_TOKEN_LEN + 1];
    memset(token, 'x', sizeof token);
    CHECK_STATUS(hrl_token_new(&cfg, token), HRL_OK);
    for (unsigned i = 0; i < HRL_TOKEN_LEN / 2; i++) {
      snprintf(want + 2 * i, 3, "%02x", t * (HRL_TOKEN_LEN / 2) + i);
    }
    CHECK_STR(token, want);
  }
}

static void test_tokens(void) {
  enum { N = 20000 };
  const hrl_config os = {.entropy = hrl_os_entropy};
  char(*tokens)[HRL_TOKEN_LEN + 1] = malloc(N * sizeof *tokens);
  CHECK(tokens != NULL);
  int ones = 0;
  for (int i = 0; i < N; i++) {
    CHECK_STATUS(hrl_token_new(&os, tokens[i]), HRL_OK);
    for (const char *p = tokens[i]; *p; p++) {
      int v = *p <= '9' ? *p - '0' : *p - 'a' + 10;
      ones += __builtin_popcount((unsigned)v);
    }
  }
  for (int i = 0; i < N; i++) {
    CHECK(is_token(tokens[i]));
  }
  qsort(tokens, N, sizeof *tokens, cmp_tokens);
  int dups = 0;
  for (int i = 1; i < N; i++) {
    dups += strcmp(tokens[i - 1], tokens[i]) == 0;
  }
  CHECK_INT(dups, 0);
  /* 128 bits per token: the share of one bits stays near a half. */
  double share = (double)ones / (N * 128.0);
  CHECK(share > 0.49 && share < 0.51);
  free(tokens);
  uint32_t hit_low = 0, hit_high = 0;
  for (int i = 0; i < 2000; i++) {
    uint32_t v = hrl_random_upto(&os, 10);
    CHECK(v <= 10);
    hit_low |= v == 0;
    hit_high |= v == 10;
  }
  CHECK(hit_low && hit_high);
  CHECK_INT(hrl_random_upto(&os, 0), 0);
}

/* A fake entropy source: counts its calls, gives bytes 0, 1, 2, ... or
 * fails. */
typedef struct fake_entropy {
  int calls;
  bool fail;
  unsigned char next;
} fake_entropy;

static hrl_status fake_bytes(void *ctx, void *buf, size_t n) {
  fake_entropy *f = ctx;
  f->calls++;
  if (f->fail) {
    return HRL_ESYSTEM;
  }
  for (size_t i = 0; i < n; i++) {
    ((unsigned char *)buf)[i] = f->next++;
  }
  return HRL_OK;
}

/* The protocol's randomness is the client's entropy source, never a device
 * of its own: tokens are its bytes in hex, and an acquire whose source
 * fails says so and sends nothing. */
static void test_entropy_is_the_clients(void) {
  static const char *const one[] = {"redis://127.0.0.1:1"};
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(one, 1, NULL, &c, NULL, 0), HRL_OK);
  CHECK(c->cfg.entropy == hrl_pool_entropy);
  fake_entropy f = {0, false, 0};
  c->cfg.entropy = fake_bytes;
  c->cfg.entropy_ctx = &f;
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, "res", 3, 1000, &lk, NULL, 0), HRL_OK);
  int64_t now = hrl_now_us();
  hrl_step_info s;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, now), HRL_OK);
  CHECK_INT(hrl_proto_step(lk, now, &s), HRL_STEP_ROUND);
  CHECK_INT(f.calls, 1);
  size_t len;
  const char *cmd = hrl_proto_command(lk, 0, &len);
  CHECK(memmem(cmd, len, "000102030405060708090a0b0c0d0e0f", 32) != NULL);
  hrl_proto_reply(lk, 0, &(hrl_reply){.type = HRL_REPLY_NIL});
  CHECK_INT(hrl_proto_step(lk, now, &s), HRL_STEP_DONE);
  f.fail = true;
  CHECK_STATUS(hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, now), HRL_OK);
  CHECK_INT(hrl_proto_step(lk, now, &s), HRL_STEP_DONE);
  CHECK_STATUS(s.status, HRL_ESYSTEM);
  CHECK_STR(hrl_lock_error(lk), "the OS random generator failed");
  CHECK_INT(f.calls, 2);
  hrl_lock_free(lk);
  hrl_client_free(c);
}

/* The smallest TTL a client accepts: one that leaves validity after a
 * round at its per-master deadline (a tenth of the TTL) and the drift
 * allowance. It grows with drift_factor. */
static void test_smallest_ttl(void) {
  const char *one[] = {"redis://127.0.0.1:1"};
  char d[HRL_DETAIL_MAX];
  hrl_client *c = NULL;
  CHECK_STATUS(hrl_client_new(one, 1, NULL, &c, d, sizeof d), HRL_OK);
  CHECK_INT(hrl_client_min_ttl_ms(c), 5);
  hrl_lock *lk = NULL;
  CHECK_STATUS(hrl_lock_new(c, "x", 1, 5, &lk, d, sizeof d), HRL_OK);
  hrl_lock_free(lk);
  int64_t ms = 0;
  CHECK_STATUS(hrl_client_ttl_seconds(c, 0.005, &ms, d, sizeof d), HRL_OK);
  CHECK_INT(ms, 5);
  /* A lock's settings start from the client's defaults. */
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  CHECK_INT(lo.ttl_ms, 30000);
  CHECK_STATUS(hrl_lock_new_with(c, "x", 1, NULL, &lk, d, sizeof d), HRL_OK);
  CHECK_INT(hrl_lock_ttl_ms(lk), 30000);
  hrl_lock_free(lk);
  lo.ttl_ms = 4;
  CHECK_STATUS(hrl_lock_new_with(c, "x", 1, &lo, &lk, d, sizeof d), HRL_EINVAL);
  CHECK_STR(d, "ttl_ms must be between 5 and 2147483647, got 4");
  hrl_client_free(c);
  hrl_options o;
  hrl_options_init(&o);
  o.drift_factor = 0.49;
  CHECK_STATUS(hrl_client_new(one, 1, &o, &c, d, sizeof d), HRL_OK);
  CHECK_INT(hrl_client_min_ttl_ms(c), 8);
  hrl_client_free(c);
}

int main(void) {
  RUN(test_smallest_ttl);
  RUN(test_message_table);
  RUN(test_url_good);
  RUN(test_url_labels);
  RUN(test_url_bad);
  RUN(test_url_messages_hide_passwords);
  RUN(test_client_config);
  RUN(test_cluster_slots);
  RUN(test_lock_fields);
  RUN(test_seconds_conversion);
  RUN(test_tokens);
  RUN(test_token_hex_digits);
  RUN(test_entropy_is_the_clients);
  return finish_tests("test_inputs");
}
