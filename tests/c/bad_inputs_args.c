/* The C bad-input table, part 1 (bad_inputs.h): names, TTLs, timeouts,
 * client options, URLs and out-of-range arguments. Nearly every row fails
 * before any I/O; the few that touch the healthy master say BAD_OK. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bad_inputs.h"

/* hrl_client_new, checking that out is set exactly when it succeeds. */
static bad_outcome new_client(const char *const *urls, size_t n,
                              const hrl_options *o) {
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_client_new(urls, n, o, &c, d, sizeof d);
  bool consistent = (s == HRL_OK) == (c != NULL);
  hrl_client_free(c);
  bad_outcome out = bad_status(s, d);
  if (!consistent) {
    snprintf(out.text, sizeof out.text, "out set wrongly: %s", d);
  }
  return out;
}

static bad_outcome one_url(const char *url) {
  hrl_options o = bad_fast();
  return new_client(&url, 1, &o);
}

static bad_outcome with_opts(hrl_options o) {
  const char *url = bad_ok_url();
  return new_client(&url, 1, &o);
}

static bad_outcome new_lock(const void *name, size_t len, uint32_t ttl) {
  hrl_client *c = bad_client_on(bad_ok_url());
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_lock_new(c, name, len, ttl, &lk, d, sizeof d);
  bool consistent = (s == HRL_OK) == (lk != NULL);
  hrl_lock_free(lk);
  hrl_client_free(c);
  bad_outcome out = bad_status(s, d);
  if (!consistent) {
    snprintf(out.text, sizeof out.text, "out set wrongly: %s", d);
  }
  return out;
}

static hrl_status op_extend_big(hrl_lock *lk) {
  return hrl_lock_extend(lk, 2147483648u);
}
static hrl_status op_extend0(hrl_lock *lk) {
  return hrl_lock_extend(lk, 0);
}
static hrl_status op_wait_m2(hrl_lock *lk) {
  return hrl_lock_acquire(lk, -2);
}
static hrl_status op_wait_big(hrl_lock *lk) {
  return hrl_lock_acquire(lk, (int64_t)HRL_TTL_MAX_MS + 1);
}
static hrl_status op_wait_min(hrl_lock *lk) {
  return hrl_lock_acquire(lk, INT64_MIN);
}
static hrl_status op_begin_bad(hrl_lock *lk) {
  return hrl_proto_begin(lk, (hrl_op_kind)99, 0, hrl_now_us());
}

/* --- names ------------------------------------------------------------ */
static bad_outcome name_null(void) {
  return new_lock(NULL, 5, 5000);
}
static bad_outcome name_null3(void) {
  return new_lock(NULL, 3, 1000);
}
static bad_outcome name_empty(void) {
  return new_lock("", 0, 5000);
}
static bad_outcome name_513(void) {
  char n[HRL_NAME_MAX + 1];
  memset(n, 'x', sizeof n);
  return new_lock(n, sizeof n, 5000);
}
static bad_outcome stored(const char *name, size_t len) {
  hrl_client *c = bad_client_on(bad_ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, name, len, 5000, &lk, NULL, 0);
  hrl_status s = hrl_lock_acquire(lk, 0);
  void *r = bad_inspect();
  long long there = bad_inspect_exists(r, name, len);
  bad_inspect_free(r);
  hrl_lock_release(lk);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return bad_value("%s, key of %zu bytes stored=%lld", hrl_strerror(s), len,
                   there);
}
static bad_outcome name_nul(void) {
  return stored("bad:a\0b", 7);
}
static bad_outcome name_utf8(void) {
  return stored("bad:\xff\xfe", 6);
}
/* A name whose key is another lock's sibling key: refused as a bad name. */
static bad_outcome sibling_name(const char *name) {
  hrl_options o = bad_fast();
  o.key_prefix = "doc:";
  o.key_prefix_len = 4;
  const char *url = bad_ok_url();
  hrl_client *c = NULL;
  hrl_client_new(&url, 1, &o, &c, NULL, 0);
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_lock_new(c, name, strlen(name), 5000, &lk, d, sizeof d);
  bool consistent = (s == HRL_OK) == (lk != NULL);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return consistent ? bad_status(s, d) : bad_value("out set wrongly: %s", d);
}
static bad_outcome name_queue_key(void) {
  return sibling_name("a{doc:a}:queue");
}
static bad_outcome name_fence_key(void) {
  return sibling_name("b{doc:b}:fence");
}
static bad_outcome name_prefix(void) {
  hrl_options o = bad_fast();
  o.key_prefix = "pppppppppp";
  o.key_prefix_len = 10;
  const char *url = bad_ok_url();
  hrl_client *c = NULL;
  hrl_client_new(&url, 1, &o, &c, NULL, 0);
  char n[HRL_NAME_MAX];
  memset(n, 'x', sizeof n);
  hrl_lock *lk = NULL;
  hrl_status s = hrl_lock_new(c, n, sizeof n, 5000, &lk, NULL, 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return bad_status(s, "");
}

/* --- TTLs and timeouts ------------------------------------------------ */
static bad_outcome ttl_0(void) {
  return new_lock("x", 1, 0);
}
static bad_outcome ttl_4(void) {
  return new_lock("x", 1, 4);
}
static bad_outcome ttl_big(void) {
  return new_lock("x", 1, 2147483648u);
}
static bad_outcome ttl_max(void) {
  return new_lock("x", 1, UINT32_MAX);
}
/* A lease whose max_hold is out of range, as a lock setting and as the
 * client's default for its locks; one no round could hold a lock for. */
static bad_outcome max_hold_ms(uint32_t max_hold) {
  hrl_client *c = bad_client_on(bad_ok_url());
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.auto_renew = true;
  lo.max_hold_ms = max_hold;
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_lock_new_with(c, "x", 1, &lo, &lk, d, sizeof d);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return bad_status(s, d);
}
static bad_outcome max_hold_lock(void) {
  return max_hold_ms(2147483648u);
}
static bad_outcome max_hold_tiny(void) {
  return max_hold_ms(3);
}
static bad_outcome on_lost_plain(void) {
  hrl_client *c = bad_client_on(bad_ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "x", 1, 5000, &lk, NULL, 0);
  hrl_status s = hrl_lock_on_lost(lk, NULL, NULL);
  bad_outcome out = bad_status(s, hrl_lock_error(lk));
  hrl_lock_free(lk);
  hrl_client_free(c);
  return out;
}
static bad_outcome ext_big(void) {
  return bad_on_lock(bad_ok_url(), "bad:ext", 1, op_extend_big);
}
static bad_outcome ext_unheld(void) {
  return bad_on_lock(bad_ok_url(), "bad:ext", 0, op_extend0);
}
static bad_outcome secs(const char *what, double s, int64_t min_ms) {
  int64_t ms = 0;
  char d[HRL_DETAIL_MAX] = "";
  return bad_status(
      hrl_seconds_to_ms(what, s, min_ms, HRL_TTL_MAX_MS, &ms, d, sizeof d), d);
}
#define SECS(fn, what, s, min)                                                 \
  static bad_outcome fn(void) {                                                \
    return secs(what, s, min);                                                 \
  }
SECS(sec_nan, "ttl", NAN, 1)
SECS(sec_inf, "ttl", INFINITY, 1)
SECS(sec_ninf, "ttl", -INFINITY, 1)
SECS(sec_neg, "ttl", -1, 1)
SECS(sec_zero, "ttl", 0, 1)
SECS(sec_sub, "ttl", 0.0004, 1)
SECS(sec_over, "ttl", 2147483.648, 1)
SECS(sec_huge, "ttl", 1e300, 1)
SECS(sec_tiny_neg, "ttl", -0.0001, 1)
SECS(sec_big, "ttl", 1e12, 1)
SECS(timeout_nan, "timeout", NAN, 0)
SECS(timeout_neg, "timeout", -0.0001, 0)
static bad_outcome wait_m2(void) {
  return bad_on_lock(bad_ok_url(), "bad:w", 0, op_wait_m2);
}
static bad_outcome wait_big(void) {
  return bad_on_lock(bad_ok_url(), "bad:w", 0, op_wait_big);
}
static bad_outcome wait_min(void) {
  return bad_on_lock(bad_ok_url(), "bad:w", 0, op_wait_min);
}

/* --- client options --------------------------------------------------- */
#define OPT(fn, field, v)                                                      \
  static bad_outcome fn(void) {                                                \
    hrl_options o = bad_fast();                                                \
    o.field = v;                                                               \
    return with_opts(o);                                                       \
  }
OPT(opt_timeout0, timeout_ms, 0)
OPT(opt_connect0, connect_timeout_ms, 0)
OPT(opt_timeout_big, timeout_ms, UINT32_MAX)
OPT(opt_delay_big, retry_delay_ms, 2147483648u)
OPT(opt_drift_half, drift_factor, 0.5)
OPT(opt_drift_neg, drift_factor, -0.1)
OPT(opt_drift_nan, drift_factor, NAN)
OPT(opt_drift_zero, drift_factor, 0.0)
OPT(opt_max_hold_big, lock.max_hold_ms, 2147483648u)
static bad_outcome opt_prefix_null(void) {
  hrl_options o = bad_fast();
  o.key_prefix = NULL;
  o.key_prefix_len = 3;
  return with_opts(o);
}
static bad_outcome prefix_of(size_t len) {
  static char p[HRL_PREFIX_MAX + 1];
  memset(p, 'p', sizeof p);
  hrl_options o = bad_fast();
  o.key_prefix = p;
  o.key_prefix_len = len;
  return with_opts(o);
}
static bad_outcome opt_prefix_long(void) {
  return prefix_of(HRL_PREFIX_MAX + 1);
}
static bad_outcome opt_prefix_max(void) {
  return prefix_of(HRL_PREFIX_MAX);
}

/* --- masters and URLs ------------------------------------------------- */
static bad_outcome cfg_n0(void) {
  const char *u = bad_ok_url();
  return new_client(&u, 0, NULL);
}
static bad_outcome cfg_n64(void) {
  const char *urls[64];
  static char buf[64][32];
  for (int i = 0; i < 64; i++) {
    snprintf(buf[i], sizeof buf[i], "redis://127.0.0.1:%d", 1000 + i);
    urls[i] = buf[i];
  }
  return new_client(urls, 64, NULL);
}
static bad_outcome cfg_urls_null(void) {
  return new_client(NULL, 3, NULL);
}
static bad_outcome pair(const char *a, const char *b) {
  const char *urls[] = {a, b};
  return new_client(urls, 2, NULL);
}
static bad_outcome cfg_dup(void) {
  return pair(bad_ok_url(), bad_ok_url());
}
static bad_outcome cfg_dup_db(void) {
  return pair("redis://127.0.0.1:1", "redis://127.0.0.1:1/2");
}
static bad_outcome cfg_dup_unix(void) {
  return pair("unix:///tmp/a.sock", "unix:///tmp/a.sock?db=1");
}
static bad_outcome cfg_second_bad(void) {
  return pair("redis://127.0.0.1:1", "redis://h:x");
}
static bad_outcome cfg_localhost(void) {
  return pair(bad_ok_url(), bad_env("HRL_BAD_DUP"));
}
static bad_outcome cfg_out_null(void) {
  const char *u = bad_ok_url();
  char d[HRL_DETAIL_MAX] = "";
  return bad_status(hrl_client_new(&u, 1, NULL, NULL, d, sizeof d), d);
}
static bad_outcome cfg_url_null(void) {
  return pair(bad_ok_url(), NULL);
}
#define URL(fn, url)                                                           \
  static bad_outcome fn(void) {                                                \
    return one_url(url);                                                       \
  }
URL(url_empty, "")
URL(url_http, "http://x")
URL(url_port, "redis://h:99999")
URL(url_pass, "redis://:@h")
URL(url_db, "redis://h/x")
URL(url_unix, "unix://")
URL(url_v6, "redis://[::1")
URL(url_pct, "redis://u:%zz@h")

/* --- NULLs, indexes and enums out of range ---------------------------- */
static bad_outcome type_lock_null_client(void) {
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  return bad_status(hrl_lock_new(NULL, "x", 1, 5000, &lk, d, sizeof d), d);
}
static bad_outcome type_lock_null_out(void) {
  hrl_client *c = bad_client_on(bad_ok_url());
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_lock_new(c, "x", 1, 5000, NULL, d, sizeof d);
  hrl_client_free(c);
  return bad_status(s, d);
}
static bad_outcome type_op_enum(void) {
  return bad_on_lock(bad_ok_url(), "bad:e", 0, op_begin_bad);
}
static bad_outcome master_index(const char *const *urls, size_t n, size_t i) {
  hrl_client *c = NULL;
  hrl_client_new(urls, n, NULL, &c, NULL, 0);
  const char *l = hrl_client_master_label(c, i);
  hrl_master_info mi;
  bool info = hrl_client_master_info(c, i, &mi);
  hrl_client_free(c);
  return bad_value("label %s, info %s", l == NULL ? "NULL" : l,
                   info ? "true" : "false");
}
static bad_outcome type_label(void) {
  const char *url = bad_ok_url();
  return master_index(&url, 1, 7);
}
static bad_outcome type_label5(void) {
  const char *five[] = {"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                        "redis://127.0.0.1:3", "unix:///tmp/a.sock",
                        "unix:///tmp/b.sock"};
  return master_index(five, 5, 5);
}
static bad_outcome strerror_of(int s) {
  return bad_value("%s", hrl_strerror((hrl_status)s));
}
static bad_outcome type_strerror(void) {
  return strerror_of(999);
}
static bad_outcome type_strerror_neg(void) {
  return strerror_of(-1);
}

#define NAME_SIZE "name must be 1 to 512 bytes, got "
#define SECONDS "ttl must be between 0.001 and 2147483.647 seconds"
const bad_row bad_rows_args[] = {
    {"name", "name NULL, len 5", name_null, HRL_EINVAL, "got 0", BAD_OK},
    {"name", "name NULL, len 3", name_null3, HRL_EINVAL, "", BAD_OK},
    {"name", "name of 0 bytes", name_empty, HRL_EINVAL, NAME_SIZE "0", BAD_OK},
    {"name", "name of 513 bytes", name_513, HRL_EINVAL, NAME_SIZE "513",
     BAD_OK},
    {"name", "name of 512 bytes + prefix of 10", name_prefix, HRL_OK, "",
     BAD_OK},
    {"name", "name \"a{doc:a}:queue\", key_prefix \"doc:\" (a's queue key)",
     name_queue_key, HRL_EINVAL,
     "name must not make another lock's queue key (key_prefix + name is a "
     "sibling key: docs/DESIGN.md, section 3)",
     BAD_OK},
    {"name", "name \"b{doc:b}:fence\", key_prefix \"doc:\" (b's counter)",
     name_fence_key, HRL_EINVAL, "another lock's fence key", BAD_OK},
    {"name", "name \"a\\0b\" (embedded NUL)", name_nul, BAD_VALUE,
     "ok, key of 7 bytes stored=1", BAD_OK},
    {"name", "name \"\\xff\\xfe\" (invalid UTF-8)", name_utf8, BAD_VALUE,
     "ok, key of 6 bytes stored=1", BAD_OK},
    {"ttl", "ttl_ms 0", ttl_0, HRL_EINVAL,
     "ttl_ms must be between 5 and 2147483647, got 0", BAD_OK},
    {"ttl", "ttl_ms 4 (no room for a round)", ttl_4, HRL_EINVAL,
     "ttl_ms must be between 5 and 2147483647, got 4", BAD_OK},
    {"ttl", "ttl_ms 2^31 (overflow)", ttl_big, HRL_EINVAL, "got 2147483648",
     BAD_OK},
    {"ttl", "ttl_ms UINT32_MAX", ttl_max, HRL_EINVAL, "got 4294967295", BAD_OK},
    {"ttl", "max_hold_ms 2^31 (a lease)", max_hold_lock, HRL_EINVAL,
     "max_hold must be between 0 and 2147483647 ms, got 2147483648", BAD_OK},
    {"ttl", "max_hold_ms 3 (below the smallest TTL)", max_hold_tiny, HRL_EINVAL,
     "max_hold must be 0 (no cap) or at least the smallest TTL, 5 ms; got 3 "
     "ms",
     BAD_OK},
    {"ttl", "on_lost on a lock without auto_renew", on_lost_plain, HRL_EINVAL,
     "on_lost needs a lock made with auto_renew", BAD_OK},
    {"ttl", "extend(2^31)", ext_big, HRL_EINVAL, "got 2147483648", BAD_OK},
    {"ttl", "extend(0), not held", ext_unheld, HRL_ENOTHELD, "", BAD_OK},
    {"ttl", "hrl_seconds_to_ms(NaN)", sec_nan, HRL_EINVAL, "nan", BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(inf)", sec_inf, HRL_EINVAL, "got inf", BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(-inf)", sec_ninf, HRL_EINVAL, "got -inf",
     BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(-1)", sec_neg, HRL_EINVAL, SECONDS ", got -1",
     BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(0)", sec_zero, HRL_EINVAL, SECONDS, BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(0.0004) (sub-ms)", sec_sub, HRL_EINVAL,
     SECONDS ", got 0.0004", BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(2147483.648)", sec_over, HRL_EINVAL, SECONDS,
     BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(1e300)", sec_huge, HRL_EINVAL, SECONDS,
     BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(-0.0001)", sec_tiny_neg, HRL_EINVAL, SECONDS,
     BAD_NONE},
    {"ttl", "hrl_seconds_to_ms(1e12)", sec_big, HRL_EINVAL, "2147483.647",
     BAD_NONE},
    {"timeout", "hrl_seconds_to_ms(\"timeout\", NaN)", timeout_nan, HRL_EINVAL,
     "timeout must be a number of seconds, got nan", BAD_NONE},
    {"timeout", "hrl_seconds_to_ms(\"timeout\", -0.0001)", timeout_neg,
     HRL_EINVAL, "timeout must be", BAD_NONE},
    {"timeout", "acquire wait_ms -2", wait_m2, HRL_EINVAL,
     "wait_ms must be >= 0 or HRL_WAIT_FOREVER, got -2", BAD_OK},
    {"timeout", "acquire wait_ms 2^31", wait_big, HRL_EINVAL,
     "wait_ms must be at most", BAD_OK},
    {"timeout", "acquire wait_ms INT64_MIN", wait_min, HRL_EINVAL, "wait_ms",
     BAD_OK},
    {"timeout", "timeout_ms 0", opt_timeout0, HRL_EINVAL,
     "timeout must be between 1 and", BAD_OK},
    {"timeout", "connect_timeout_ms 0", opt_connect0, HRL_EINVAL,
     "connect_timeout", BAD_OK},
    {"timeout", "timeout_ms UINT32_MAX", opt_timeout_big, HRL_EINVAL,
     "got 4294967295", BAD_OK},
    {"timeout", "retry_delay_ms 2^31", opt_delay_big, HRL_EINVAL, "retry_delay",
     BAD_OK},
    {"config", "0 masters", cfg_n0, HRL_EINVAL,
     "urls must list 1 to 63 masters, got 0", BAD_OK},
    {"config", "64 masters", cfg_n64, HRL_EINVAL, "got 64", BAD_NONE},
    {"config", "urls NULL", cfg_urls_null, HRL_EINVAL, "got 0", BAD_NONE},
    {"config", "a NULL url in the list", cfg_url_null, HRL_EINVAL, "url",
     BAD_OK},
    {"config", "the same master twice", cfg_dup, HRL_EINVAL, "listed twice",
     BAD_OK},
    {"config", "the same master, another database", cfg_dup_db, HRL_EINVAL,
     "listed twice", BAD_NONE},
    {"config", "the same socket, another database", cfg_dup_unix, HRL_EINVAL,
     "listed twice", BAD_NONE},
    {"config", "a bad second url", cfg_second_bad, HRL_EINVAL, "port must be",
     BAD_NONE},
    {"config", "the same master as 127.0.0.1 and localhost", cfg_localhost,
     HRL_OK, "", BAD_OK},
    {"config", "out NULL", cfg_out_null, HRL_EINVAL, "out must not be NULL",
     BAD_OK},
    {"config", "drift_factor 0.5", opt_drift_half, HRL_EINVAL,
     "drift_factor must be in [0, 0.5), got 0.5", BAD_OK},
    {"config", "drift_factor -0.1", opt_drift_neg, HRL_EINVAL, "got -0.1",
     BAD_OK},
    {"config", "drift_factor NaN", opt_drift_nan, HRL_EINVAL, "nan", BAD_OK},
    {"config", "lock.max_hold_ms 2^31 (the locks' default)", opt_max_hold_big,
     HRL_EINVAL, "max_hold must be between 0 and 2147483647 ms", BAD_OK},
    {"config", "drift_factor 0 (the lower bound)", opt_drift_zero, HRL_OK, "",
     BAD_OK},
    {"config", "key_prefix NULL, len 3", opt_prefix_null, HRL_EINVAL,
     "key_prefix is NULL", BAD_OK},
    {"config", "key_prefix of 513 bytes", opt_prefix_long, HRL_EINVAL,
     "at most 512 bytes", BAD_OK},
    {"config", "key_prefix of 512 bytes (the upper bound)", opt_prefix_max,
     HRL_OK, "", BAD_OK},
    {"url", "url \"\"", url_empty, HRL_EINVAL, "url", BAD_NONE},
    {"url", "url \"http://x\"", url_http, HRL_EINVAL,
     "scheme must be redis://, rediss://, unix://, redis+cluster:// or "
     "redis+sentinel://",
     BAD_NONE},
    {"url", "url \"redis://h:99999\"", url_port, HRL_EINVAL, "port", BAD_NONE},
    {"url", "url \"redis://:@h\"", url_pass, HRL_EINVAL, "empty password",
     BAD_NONE},
    {"url", "url \"redis://h/x\"", url_db, HRL_EINVAL, "database", BAD_NONE},
    {"url", "url \"unix://\"", url_unix, HRL_EINVAL, "absolute", BAD_NONE},
    {"url", "url \"redis://[::1\"", url_v6, HRL_EINVAL, "unterminated",
     BAD_NONE},
    {"url", "url \"redis://u:%zz@h\" (bad escape)", url_pct, HRL_EINVAL, "url",
     BAD_NONE},
    {"type", "hrl_lock_new(NULL client)", type_lock_null_client, HRL_EINVAL,
     "must not be NULL", BAD_NONE},
    {"type", "hrl_lock_new(out NULL)", type_lock_null_out, HRL_EINVAL,
     "must not be NULL", BAD_OK},
    {"type", "hrl_proto_begin(op 99)", type_op_enum, HRL_EINVAL,
     "unknown operation 99", BAD_OK},
    {"type", "master index 7 of 1 (label, info)", type_label, BAD_VALUE,
     "label NULL, info false", BAD_OK},
    {"type", "master index 5 of 5 (label, info)", type_label5, BAD_VALUE,
     "label NULL, info false", BAD_NONE},
    {"type", "hrl_strerror(999)", type_strerror, BAD_VALUE, "unknown status",
     BAD_NONE},
    {"type", "hrl_strerror(-1)", type_strerror_neg, BAD_VALUE, "unknown status",
     BAD_NONE},
};
const size_t bad_rows_args_count =
    sizeof bad_rows_args / sizeof bad_rows_args[0];
