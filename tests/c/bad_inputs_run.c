/* Running the C bad-input table (bad_inputs.h): helpers for the rows, and
 * the loop that checks each row and writes its outcome. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bad_inputs.h"

const char *bad_env(const char *name) {
  const char *v = getenv(name);
  if (v == NULL) {
    fprintf(stderr, "bad_inputs: %s is not set\n", name);
    exit(2);
  }
  return v;
}

const char *bad_ok_url(void) {
  return bad_env("HRL_BAD_OK");
}

bad_outcome bad_status(hrl_status s, const char *detail) {
  bad_outcome o = {s, false, ""};
  snprintf(o.text, sizeof o.text, "%s", detail != NULL ? detail : "");
  return o;
}

bad_outcome bad_value(const char *fmt, ...) {
  bad_outcome o = {HRL_OK, true, ""};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o.text, sizeof o.text, fmt, ap);
  va_end(ap);
  return o;
}

hrl_options bad_fast(void) {
  hrl_options o;
  hrl_options_init(&o);
  o.timeout_ms = 500;
  o.connect_timeout_ms = 500;
  return o;
}

hrl_client *bad_client_on(const char *url) {
  hrl_options o = bad_fast();
  hrl_client *c = NULL;
  if (hrl_client_new(&url, 1, &o, &c, NULL, 0) != HRL_OK) {
    fprintf(stderr, "bad_inputs: cannot make a client for %s\n", url);
    exit(2);
  }
  return c;
}

bad_outcome bad_on_lock(const char *url, const char *name, int pre,
                        hrl_status (*op)(hrl_lock *)) {
  hrl_client *c = bad_client_on(url);
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
  bad_outcome o = bad_status(s, hrl_lock_error(lk));
  if (hrl_lock_held(lk)) {
    hrl_lock_release(lk);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return o;
}

void *bad_inspect(void) {
  redisContext *r = redisConnectUnix(bad_env("HRL_BAD_OK_SOCK"));
  if (r == NULL || r->err) {
    fprintf(stderr, "bad_inputs: no inspection connection\n");
    exit(2);
  }
  return r;
}

void bad_inspect_cmd(void *r, const char *fmt, const char *key) {
  freeReplyObject(redisCommand(r, fmt, key));
}

long long bad_inspect_exists(void *r, const void *key, size_t len) {
  redisReply *rep = redisCommand(r, "EXISTS %b", key, len);
  long long there = rep != NULL ? rep->integer : -1;
  freeReplyObject(rep);
  return there;
}

void bad_inspect_free(void *r) {
  redisFree(r);
}

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

/* Checks one row; writes what was wanted and what came into want, got. */
static bool check_row(const bad_row *r, char *want, size_t wsize, char *got,
                      size_t gsize) {
  bad_outcome o = r->fn();
  bool ok;
  if (r->want == BAD_VALUE) {
    ok = o.is_value && strstr(o.text, r->frag) != NULL;
    snprintf(want, wsize, "returns: %s", r->frag);
  } else {
    ok = !o.is_value && o.status == r->want && strstr(o.text, r->frag);
    snprintf(want, wsize, "%s%s%s", hrl_strerror(r->want),
             r->frag[0] ? ": " : "", r->frag);
  }
  if (o.is_value) {
    snprintf(got, gsize, "returns: %s", o.text);
  } else {
    hrl_format_error(o.status, o.text, got, gsize);
  }
  return ok;
}

int bad_inputs_run(bad_need max_need, FILE *json) {
  const struct {
    const bad_row *rows;
    size_t n;
  } parts[] = {{bad_rows_args, bad_rows_args_count},
               {bad_rows_state, bad_rows_state_count},
               {bad_rows_deploy, bad_rows_deploy_count}};
  size_t run = 0, bad = 0;
  if (json != NULL) {
    fprintf(json, "{\"runtime\": \"c\", \"rows\": [");
  }
  for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
    for (size_t i = 0; i < parts[p].n; i++) {
      const bad_row *r = &parts[p].rows[i];
      if (r->need > max_need) {
        continue;
      }
      char want[600], got[HRL_DETAIL_MAX + 128];
      bool ok = check_row(r, want, sizeof want, got, sizeof got);
      if (!ok) {
        bad++;
        printf("bad inputs (c): NOT as expected: %s: want %s, got %s\n",
               r->input, want, got);
      }
      if (json != NULL) {
        fprintf(json, "%s\n  {\"category\": ", run ? "," : "");
        json_str(json, r->category);
        fprintf(json, ", \"input\": ");
        json_str(json, r->input);
        fprintf(json, ", \"expected\": ");
        json_str(json, want);
        fprintf(json, ", \"got\": ");
        json_str(json, got);
        fprintf(json, ", \"as_expected\": %s}", ok ? "true" : "false");
      }
      run++;
    }
  }
  if (json != NULL) {
    fprintf(json, "\n]}\n");
  }
  printf("bad inputs (c): %zu of %zu as expected\n", run - bad, run);
  return (int)bad;
}
