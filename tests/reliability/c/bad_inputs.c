/* Bad inputs, C: one table, one row per bad input, each checked for the
 * status (and message) it must give; the observed outcome of every row is
 * written as JSON for the table in docs/RELIABILITY.md. C has no wrong
 * types, so its rows add NULL pointers, out-of-range indexes and enums.
 *   bad_inputs OUT.json   (HRL_BAD_* servers:
 * tests/reliability/hrlrel/badenv.py)
 */
#define _GNU_SOURCE
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hiredlock/binding.h"
#include "hiredlock/proto.h"

typedef struct outcome {
  hrl_status status;
  bool is_value; /* text is a returned value, not a detail */
  char text[HRL_DETAIL_MAX + 64];
} outcome;

typedef outcome (*row_fn)(void);

typedef struct row {
  const char *category, *input;
  row_fn fn;
  hrl_status want;
  const char *frag; /* in the message (or the value) */
} row;

static const char *env(const char *name) {
  const char *v = getenv(name);
  if (v == NULL) {
    fprintf(stderr, "bad_inputs: %s is not set\n", name);
    exit(2);
  }
  return v;
}

static outcome st(hrl_status s, const char *detail) {
  outcome o = {s, false, ""};
  snprintf(o.text, sizeof o.text, "%s", detail != NULL ? detail : "");
  return o;
}

static outcome value(const char *fmt, ...) {
  outcome o = {HRL_OK, true, ""};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o.text, sizeof o.text, fmt, ap);
  va_end(ap);
  return o;
}

static hrl_options fast(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.timeout_ms = 500;
  o.connect_timeout_ms = 500;
  return o;
}

static outcome new_client(const char *const *urls, size_t n,
                          const hrl_options *o) {
  hrl_client *c = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_client_new(urls, n, o, &c, d, sizeof d);
  hrl_client_free(c);
  return st(s, d);
}

static outcome one_url(const char *url) {
  hrl_options o = fast();
  return new_client(&url, 1, &o);
}

static outcome with_opts(hrl_options o) {
  const char *url = env("HRL_BAD_OK");
  return new_client(&url, 1, &o);
}

static hrl_client *client_on(const char *url) {
  hrl_options o = fast();
  hrl_client *c = NULL;
  if (hrl_client_new(&url, 1, &o, &c, NULL, 0) != HRL_OK) {
    fprintf(stderr, "bad_inputs: cannot make a client for %s\n", url);
    exit(2);
  }
  return c;
}

static outcome new_lock(const void *name, size_t len, uint32_t ttl) {
  hrl_client *c = client_on(env("HRL_BAD_OK"));
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_lock_new(c, name, len, ttl, &lk, d, sizeof d);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return st(s, d);
}

/* Runs op on a fresh lock of name on url; acquire first when pre_acquire. */
typedef hrl_status (*lock_op)(hrl_lock *);

static outcome on_lock(const char *url, const char *name, int pre, lock_op op) {
  hrl_client *c = client_on(url);
  hrl_lock *lk = NULL;
  hrl_lock_new(c, name, strlen(name), 5000, &lk, NULL, 0);
  for (int i = 0; i < pre; i++) {
    hrl_status s = i % 2 == 0 ? hrl_lock_acquire(lk, 0) : hrl_lock_release(lk);
    if (s != HRL_OK) {
      fprintf(stderr, "bad_inputs: setup of %s failed: %s\n", name,
              hrl_strerror(s));
    }
  }
  hrl_status s = op(lk);
  outcome o = st(s, hrl_lock_error(lk));
  if (hrl_lock_held(lk)) {
    hrl_lock_release(lk);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return o;
}

static hrl_status op_acquire0(hrl_lock *lk) {
  return hrl_lock_acquire(lk, 0);
}
static hrl_status op_acquire200(hrl_lock *lk) {
  return hrl_lock_acquire(lk, 200);
}
static hrl_status op_release(hrl_lock *lk) {
  return hrl_lock_release(lk);
}
static hrl_status op_extend0(hrl_lock *lk) {
  return hrl_lock_extend(lk, 0);
}
static hrl_status op_extend_big(hrl_lock *lk) {
  return hrl_lock_extend(lk, 2147483648u);
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
static hrl_status op_begin_twice(hrl_lock *lk) {
  hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us());
  hrl_step_info si;
  hrl_proto_step(lk, hrl_now_us(), &si); /* a round is out */
  return hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us());
}

static const char *ok_url(void) {
  return env("HRL_BAD_OK");
}

static outcome srv(const char *var) {
  return on_lock(env(var), "bad:srv", 0, op_acquire200);
}

static redisContext *inspect(void) {
  redisContext *r = redisConnectUnix(env("HRL_BAD_OK_SOCK"));
  if (r == NULL || r->err) {
    fprintf(stderr, "bad_inputs: no inspection connection\n");
    exit(2);
  }
  return r;
}

static void cmd(redisContext *r, const char *fmt, const char *key) {
  freeReplyObject(redisCommand(r, fmt, key));
}

/* --- the rows --------------------------------------------------------- */
static outcome name_null(void) {
  return new_lock(NULL, 5, 5000);
}
static outcome name_empty(void) {
  return new_lock("x", 0, 5000);
}
static outcome name_513(void) {
  char n[513];
  memset(n, 'x', sizeof n);
  return new_lock(n, sizeof n, 5000);
}
static outcome stored(const char *name, size_t len) {
  hrl_client *c = client_on(ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, name, len, 5000, &lk, NULL, 0);
  hrl_status s = hrl_lock_acquire(lk, 0);
  redisContext *r = inspect();
  redisReply *rep = redisCommand(r, "EXISTS %b", name, len);
  long long there = rep != NULL ? rep->integer : -1;
  freeReplyObject(rep);
  redisFree(r);
  hrl_lock_release(lk);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return value("%s, key of %zu bytes stored=%lld", hrl_strerror(s), len, there);
}
static outcome name_nul(void) {
  return stored("bad:a\0b", 7);
}
static outcome name_utf8(void) {
  return stored("bad:\xff\xfe", 6);
}
static outcome name_prefix(void) {
  hrl_options o = fast();
  o.key_prefix = "pppppppppp";
  o.key_prefix_len = 10;
  const char *url = ok_url();
  hrl_client *c = NULL;
  hrl_client_new(&url, 1, &o, &c, NULL, 0);
  char n[512];
  memset(n, 'x', sizeof n);
  hrl_lock *lk = NULL;
  hrl_status s = hrl_lock_new(c, n, sizeof n, 5000, &lk, NULL, 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return st(s, "");
}
static outcome ttl_0(void) {
  return new_lock("x", 1, 0);
}
static outcome ttl_big(void) {
  return new_lock("x", 1, 2147483648u);
}
static outcome ttl_max(void) {
  return new_lock("x", 1, UINT32_MAX);
}
static outcome ext_big(void) {
  return on_lock(ok_url(), "bad:ext", 1, op_extend_big);
}
static outcome secs(double s, int64_t min_ms) {
  int64_t ms = 0;
  char d[HRL_DETAIL_MAX] = "";
  hrl_status r =
      hrl_seconds_to_ms("ttl", s, min_ms, HRL_TTL_MAX_MS, &ms, d, sizeof d);
  return st(r, d);
}
static outcome sec_nan(void) {
  return secs(NAN, 1);
}
static outcome sec_inf(void) {
  return secs(INFINITY, 1);
}
static outcome sec_ninf(void) {
  return secs(-INFINITY, 1);
}
static outcome sec_neg(void) {
  return secs(-1, 1);
}
static outcome sec_sub(void) {
  return secs(0.0004, 1);
}
static outcome sec_big(void) {
  return secs(1e12, 1);
}
static outcome wait_m2(void) {
  return on_lock(ok_url(), "bad:w", 0, op_wait_m2);
}
static outcome wait_big(void) {
  return on_lock(ok_url(), "bad:w", 0, op_wait_big);
}
static outcome wait_min(void) {
  return on_lock(ok_url(), "bad:w", 0, op_wait_min);
}
static outcome opt_timeout0(void) {
  hrl_options o = fast();
  o.timeout_ms = 0;
  return with_opts(o);
}
static outcome opt_connect0(void) {
  hrl_options o = fast();
  o.connect_timeout_ms = 0;
  return with_opts(o);
}
static outcome opt_timeout_big(void) {
  hrl_options o = fast();
  o.timeout_ms = UINT32_MAX;
  return with_opts(o);
}
static outcome opt_delay_big(void) {
  hrl_options o = fast();
  o.retry_delay_ms = 2147483648u;
  return with_opts(o);
}
static outcome opt_drift_half(void) {
  hrl_options o = fast();
  o.drift_factor = 0.5;
  return with_opts(o);
}
static outcome opt_drift_neg(void) {
  hrl_options o = fast();
  o.drift_factor = -0.1;
  return with_opts(o);
}
static outcome opt_drift_nan(void) {
  hrl_options o = fast();
  o.drift_factor = NAN;
  return with_opts(o);
}
static outcome opt_prefix_null(void) {
  hrl_options o = fast();
  o.key_prefix = NULL;
  o.key_prefix_len = 3;
  return with_opts(o);
}
static outcome opt_prefix_long(void) {
  static char p[513];
  memset(p, 'p', sizeof p);
  hrl_options o = fast();
  o.key_prefix = p;
  o.key_prefix_len = sizeof p;
  return with_opts(o);
}
static outcome cfg_n0(void) {
  const char *u = ok_url();
  return new_client(&u, 0, NULL);
}
static outcome cfg_n64(void) {
  const char *urls[64];
  static char buf[64][32];
  for (int i = 0; i < 64; i++) {
    snprintf(buf[i], sizeof buf[i], "redis://127.0.0.1:%d", 1000 + i);
    urls[i] = buf[i];
  }
  return new_client(urls, 64, NULL);
}
static outcome cfg_urls_null(void) {
  return new_client(NULL, 3, NULL);
}
static outcome cfg_dup(void) {
  const char *urls[] = {ok_url(), ok_url()};
  return new_client(urls, 2, NULL);
}
static outcome cfg_localhost(void) {
  const char *urls[] = {ok_url(), env("HRL_BAD_DUP")};
  return new_client(urls, 2, NULL);
}
static outcome cfg_out_null(void) {
  const char *u = ok_url();
  char d[HRL_DETAIL_MAX] = "";
  return st(hrl_client_new(&u, 1, NULL, NULL, d, sizeof d), d);
}
static outcome cfg_url_null(void) {
  const char *urls[] = {ok_url(), NULL};
  return new_client(urls, 2, NULL);
}
static outcome url_empty(void) {
  return one_url("");
}
static outcome url_http(void) {
  return one_url("http://x");
}
static outcome url_port(void) {
  return one_url("redis://h:99999");
}
static outcome url_pass(void) {
  return one_url("redis://:@h");
}
static outcome url_db(void) {
  return one_url("redis://h/x");
}
static outcome url_unix(void) {
  return one_url("unix://");
}
static outcome url_v6(void) {
  return one_url("redis://[::1");
}
static outcome url_pct(void) {
  return one_url("redis://u:%zz@h");
}
static outcome type_lock_null_client(void) {
  hrl_lock *lk = NULL;
  char d[HRL_DETAIL_MAX] = "";
  return st(hrl_lock_new(NULL, "x", 1, 5000, &lk, d, sizeof d), d);
}
static outcome type_lock_null_out(void) {
  hrl_client *c = client_on(ok_url());
  char d[HRL_DETAIL_MAX] = "";
  hrl_status s = hrl_lock_new(c, "x", 1, 5000, NULL, d, sizeof d);
  hrl_client_free(c);
  return st(s, d);
}
static outcome type_op_enum(void) {
  return on_lock(ok_url(), "bad:e", 0, op_begin_bad);
}
static outcome type_label(void) {
  hrl_client *c = client_on(ok_url());
  const char *l = hrl_client_master_label(c, 7);
  hrl_master_info mi;
  bool info = hrl_client_master_info(c, 7, &mi);
  hrl_client_free(c);
  return value("label %s, info %s", l == NULL ? "NULL" : l,
               info ? "true" : "false");
}
static outcome type_strerror(void) {
  return value("%s", hrl_strerror((hrl_status)999));
}
static outcome type_parser(void) {
  hrl_parser *p = hrl_parser_new();
  hrl_status s = hrl_parser_feed(p, "?garbage\r\n", 10);
  hrl_reply r;
  int next = s == HRL_OK ? hrl_parser_next(p, &r) : -9;
  hrl_parser_free(p);
  return value("feed %s, next %d", hrl_strerror(s), next);
}
static outcome type_reply_index(void) {
  hrl_client *c = client_on(ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "bad:i", 5, 5000, &lk, NULL, 0);
  hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us());
  hrl_step_info si;
  hrl_proto_step(lk, hrl_now_us(), &si);
  hrl_reply ok = {HRL_REPLY_STATUS, 0, "OK", 2};
  hrl_node_result r = hrl_proto_reply(lk, 5, &ok);
  size_t len = 99;
  const char *cmd_out = hrl_proto_command(lk, 5, &len);
  hrl_proto_fail(lk, 5, HRL_NODE_UNREACHABLE, NULL);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return value("reply to master 5 of 1: %s, command %s/%zu",
               r == HRL_NODE_PROTOCOL ? "protocol" : "other",
               cmd_out == NULL ? "NULL" : "set", len);
}
static outcome state_release_unheld(void) {
  return on_lock(ok_url(), "bad:s", 0, op_release);
}
static outcome state_release_twice(void) {
  return on_lock(ok_url(), "bad:s", 2, op_release);
}
static outcome state_extend_after(void) {
  return on_lock(ok_url(), "bad:s", 2, op_extend0);
}
static outcome state_acquire_held(void) {
  return on_lock(ok_url(), "bad:s", 1, op_acquire0);
}
static outcome state_begin_twice(void) {
  return on_lock(ok_url(), "bad:s", 0, op_begin_twice);
}
static outcome state_free_null(void) {
  hrl_lock_free(NULL);
  hrl_client_free(NULL);
  return value("no-op");
}
static outcome state_fork(void) {
  hrl_client *c = client_on(ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "bad:fork", 8, 5000, &lk, NULL, 0);
  hrl_lock_acquire(lk, 0); /* the parent's connection is open */
  hrl_lock_release(lk);
  pid_t pid = fork();
  if (pid == 0) {
    int code =
        hrl_lock_acquire(lk, 0) == HRL_OK && hrl_lock_release(lk) == HRL_OK ? 0
                                                                            : 1;
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  hrl_status again = hrl_lock_acquire(lk, 0); /* the parent's still works */
  hrl_lock_release(lk);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return value("child: %s, parent after: %s",
               WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed",
               hrl_strerror(again));
}
static outcome state_after_fork_call(void) {
  hrl_client *c = client_on(ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "bad:fork2", 9, 5000, &lk, NULL, 0);
  hrl_lock_acquire(lk, 0);
  hrl_lock_release(lk);
  pid_t pid = fork();
  if (pid == 0) {
    hrl_client_after_fork(c);
    _exit(hrl_lock_acquire(lk, 0) == HRL_OK ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  /* The child exited holding it: the key stays until its TTL. */
  redisContext *r = inspect();
  cmd(r, "DEL %s", "bad:fork2");
  redisFree(r);
  return value("child after hrl_client_after_fork: %s",
               WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
}
static outcome srv_oom(void) {
  return srv("HRL_BAD_OOM");
}
static outcome srv_ro(void) {
  return srv("HRL_BAD_RO");
}
static outcome srv_busy(void) {
  return srv("HRL_BAD_BUSY");
}
static outcome srv_loading(void) {
  return srv("HRL_BAD_LOADING");
}
static outcome srv_noauth(void) {
  return srv("HRL_BAD_NOAUTH");
}
static outcome srv_wrongpass(void) {
  return srv("HRL_BAD_WRONGPASS");
}
static outcome srv_wrongtype_acq(void) {
  redisContext *r = inspect();
  cmd(r, "DEL %s", "bad:list");
  cmd(r, "LPUSH %s x", "bad:list");
  redisFree(r);
  return on_lock(ok_url(), "bad:list", 0, op_acquire0);
}
static hrl_status op_listify_release(hrl_lock *lk) {
  redisContext *r = inspect();
  cmd(r, "DEL %s", "bad:list2");
  cmd(r, "LPUSH %s x", "bad:list2");
  redisFree(r);
  return hrl_lock_release(lk);
}
static outcome srv_wrongtype_rel(void) {
  redisContext *r = inspect();
  cmd(r, "DEL %s", "bad:list2");
  redisFree(r);
  return on_lock(ok_url(), "bad:list2", 1, op_listify_release);
}
static outcome net_refused(void) {
  return srv("HRL_BAD_REFUSED");
}
static outcome net_reset(void) {
  return srv("HRL_BAD_RESET");
}
static outcome net_nosock(void) {
  return srv("HRL_BAD_MISSING_SOCK");
}

#define VALUE HRL_STATUS_COUNT_ /* want: a value containing frag */

static const row rows[] = {
    {"name", "name NULL, len 5", name_null, HRL_EINVAL, "got 0"},
    {"name", "name of 0 bytes", name_empty, HRL_EINVAL,
     "name must be 1 to 512 bytes, got 0"},
    {"name", "name of 513 bytes", name_513, HRL_EINVAL, "got 513"},
    {"name", "name of 512 bytes + prefix of 10", name_prefix, HRL_OK, ""},
    {"name", "name \"a\\0b\" (embedded NUL)", name_nul, VALUE,
     "ok, key of 7 bytes stored=1"},
    {"name", "name \"\\xff\\xfe\" (invalid UTF-8)", name_utf8, VALUE,
     "ok, key of 6 bytes stored=1"},
    {"ttl", "ttl_ms 0", ttl_0, HRL_EINVAL, "ttl_ms must be between 5 and"},
    {"ttl", "ttl_ms 2^31 (overflow)", ttl_big, HRL_EINVAL, "got 2147483648"},
    {"ttl", "ttl_ms UINT32_MAX", ttl_max, HRL_EINVAL, "got 4294967295"},
    {"ttl", "extend(2^31)", ext_big, HRL_EINVAL, "got 2147483648"},
    {"ttl", "hrl_seconds_to_ms(NaN)", sec_nan, HRL_EINVAL, "nan"},
    {"ttl", "hrl_seconds_to_ms(inf)", sec_inf, HRL_EINVAL, "got inf"},
    {"ttl", "hrl_seconds_to_ms(-inf)", sec_ninf, HRL_EINVAL, "got -inf"},
    {"ttl", "hrl_seconds_to_ms(-1)", sec_neg, HRL_EINVAL, "got -1"},
    {"ttl", "hrl_seconds_to_ms(0.0004) (sub-ms)", sec_sub, HRL_EINVAL,
     "got 0.0004"},
    {"ttl", "hrl_seconds_to_ms(1e12)", sec_big, HRL_EINVAL, "2147483.647"},
    {"timeout", "acquire wait_ms -2", wait_m2, HRL_EINVAL,
     "wait_ms must be >= 0 or HRL_WAIT_FOREVER, got -2"},
    {"timeout", "acquire wait_ms 2^31", wait_big, HRL_EINVAL,
     "wait_ms must be at most"},
    {"timeout", "acquire wait_ms INT64_MIN", wait_min, HRL_EINVAL, "wait_ms"},
    {"timeout", "timeout_ms 0", opt_timeout0, HRL_EINVAL, "timeout must be"},
    {"timeout", "connect_timeout_ms 0", opt_connect0, HRL_EINVAL,
     "connect_timeout"},
    {"timeout", "timeout_ms UINT32_MAX", opt_timeout_big, HRL_EINVAL,
     "got 4294967295"},
    {"timeout", "retry_delay_ms 2^31", opt_delay_big, HRL_EINVAL,
     "retry_delay"},
    {"config", "0 masters", cfg_n0, HRL_EINVAL, "1 to 63 masters, got 0"},
    {"config", "64 masters", cfg_n64, HRL_EINVAL, "got 64"},
    {"config", "urls NULL", cfg_urls_null, HRL_EINVAL, "got 0"},
    {"config", "a NULL url in the list", cfg_url_null, HRL_EINVAL, "url"},
    {"config", "the same master twice", cfg_dup, HRL_EINVAL, "listed twice"},
    {"config", "the same master as 127.0.0.1 and localhost", cfg_localhost,
     HRL_OK, ""},
    {"config", "out NULL", cfg_out_null, HRL_EINVAL, "out must not be NULL"},
    {"config", "drift_factor 0.5", opt_drift_half, HRL_EINVAL,
     "drift_factor must be in [0, 0.5)"},
    {"config", "drift_factor -0.1", opt_drift_neg, HRL_EINVAL, "got -0.1"},
    {"config", "drift_factor NaN", opt_drift_nan, HRL_EINVAL, "nan"},
    {"config", "key_prefix NULL, len 3", opt_prefix_null, HRL_EINVAL,
     "key_prefix is NULL"},
    {"config", "key_prefix of 513 bytes", opt_prefix_long, HRL_EINVAL,
     "at most 512 bytes"},
    {"url", "url \"\"", url_empty, HRL_EINVAL, "url"},
    {"url", "url \"http://x\"", url_http, HRL_EINVAL,
     "scheme must be redis:// or unix://"},
    {"url", "url \"redis://h:99999\"", url_port, HRL_EINVAL, "port"},
    {"url", "url \"redis://:@h\"", url_pass, HRL_EINVAL, "empty password"},
    {"url", "url \"redis://h/x\"", url_db, HRL_EINVAL, "database"},
    {"url", "url \"unix://\"", url_unix, HRL_EINVAL, "absolute"},
    {"url", "url \"redis://[::1\"", url_v6, HRL_EINVAL, "unterminated"},
    {"url", "url \"redis://u:%zz@h\" (bad escape)", url_pct, HRL_EINVAL, "url"},
    {"type", "hrl_lock_new(NULL client)", type_lock_null_client, HRL_EINVAL,
     "must not be NULL"},
    {"type", "hrl_lock_new(out NULL)", type_lock_null_out, HRL_EINVAL,
     "must not be NULL"},
    {"type", "hrl_proto_begin(op 99)", type_op_enum, HRL_EINVAL,
     "unknown operation 99"},
    {"type", "master index 7 of 1 (label, info)", type_label, VALUE,
     "label NULL, info false"},
    {"type", "hrl_strerror(999)", type_strerror, VALUE, "unknown status"},
    {"type", "RESP garbage to the parser", type_parser, VALUE, "next -1"},
    {"type", "reply for master index 5 of 1", type_reply_index, VALUE,
     "protocol, command NULL/0"},
    {"state", "release, never acquired", state_release_unheld, HRL_ENOTHELD,
     ""},
    {"state", "release twice", state_release_twice, HRL_ENOTHELD, ""},
    {"state", "extend after release", state_extend_after, HRL_ENOTHELD, ""},
    {"state", "acquire on a held lock object", state_acquire_held, HRL_EHELD,
     ""},
    {"state", "hrl_proto_begin while a round is out", state_begin_twice,
     HRL_EINVAL, "another operation is running"},
    {"state", "hrl_lock_free(NULL), hrl_client_free(NULL)", state_free_null,
     VALUE, "no-op"},
    {"state", "calls in a fork() child (inherited client)", state_fork, VALUE,
     "child: ok, parent after: ok"},
    {"state", "hrl_client_after_fork() then acquire in the child",
     state_after_fork_call, VALUE, "child after hrl_client_after_fork: ok"},
    {"server", "OOM (maxmemory 1)", srv_oom, HRL_ESERVER,
     "0 of 1 masters answered (1 needed)"},
    {"server", "READONLY (a replica)", srv_ro, HRL_ESERVER, "READONLY"},
    {"server", "BUSY (a script runs)", srv_busy, HRL_ESERVER, "BUSY"},
    {"server", "LOADING (scripted reply)", srv_loading, HRL_ESERVER, "LOADING"},
    {"server", "NOAUTH (no password given)", srv_noauth, HRL_EAUTH, "NOAUTH"},
    {"server", "WRONGPASS", srv_wrongpass, HRL_EAUTH, "WRONGPASS"},
    {"server", "WRONGTYPE: the name holds a list (acquire)", srv_wrongtype_acq,
     HRL_ETIMEOUT, ""},
    {"server", "WRONGTYPE: the key became a list (release)", srv_wrongtype_rel,
     HRL_ENOTOWNED, ""},
    {"network", "connection refused", net_refused, HRL_ECONNECT,
     "connection refused"},
    {"network", "connection reset", net_reset, HRL_ECONNECT, "reset"},
    {"network", "unix socket that does not exist", net_nosock, HRL_ECONNECT,
     "no such file or directory"},
};

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x80) {
      fprintf(f, "\\u%04x", ch);
    } else {
      fputc(ch, f);
    }
  }
  fputc('"', f);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bad_inputs OUT.json\n");
    return 2;
  }
  FILE *out = fopen(argv[1], "w");
  if (out == NULL) {
    perror(argv[1]);
    return 2;
  }
  size_t n = sizeof rows / sizeof rows[0], bad = 0;
  fprintf(out, "{\"runtime\": \"c\", \"rows\": [\n");
  for (size_t i = 0; i < n; i++) {
    const row *r = &rows[i];
    outcome o = r->fn();
    bool ok;
    char want[600], got[HRL_DETAIL_MAX + 128];
    if (r->want == VALUE) {
      ok = o.is_value && strstr(o.text, r->frag) != NULL;
      snprintf(want, sizeof want, "returns: %s", r->frag);
    } else {
      ok = !o.is_value && o.status == r->want && strstr(o.text, r->frag);
      snprintf(want, sizeof want, "%s%s%s", hrl_strerror(r->want),
               r->frag[0] ? ": " : "", r->frag);
    }
    if (o.is_value) {
      snprintf(got, sizeof got, "returns: %s", o.text);
    } else {
      hrl_format_error(o.status, o.text, got, sizeof got);
    }
    if (!ok) {
      bad++;
      printf("bad inputs (c): NOT as expected: %s: want %s, got %s\n", r->input,
             want, got);
    }
    fprintf(out, "  {\"category\": ");
    json_str(out, r->category);
    fprintf(out, ", \"input\": ");
    json_str(out, r->input);
    fprintf(out, ", \"expected\": ");
    json_str(out, want);
    fprintf(out, ", \"got\": ");
    json_str(out, got);
    fprintf(out, ", \"as_expected\": %s}%s\n", ok ? "true" : "false",
            i + 1 < n ? "," : "");
  }
  fprintf(out, "]}\n");
  fclose(out);
  printf("bad inputs (c): %zu of %zu as expected\n", n - bad, n);
  return bad == 0 ? 0 : 1;
}
