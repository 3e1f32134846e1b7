/* The option table: every option's name, unit, bounds and default, once.
 * hrl_options_init() fills the defaults from it, hrl_client_new() checks a
 * C caller's settings against it, and the bindings read it to take options
 * from their users, so a value is accepted or refused, with the same words,
 * in every runtime. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "detail.h"
#include "hiredlock/binding.h"
#include "state.h"

#define MAX_MS ((double)HRL_TTL_MAX_MS)
/* Where an option lives in hrl_options. A lock option's field is in
 * hrl_options.lock, an hrl_lock_options: the same offset, less that of
 * `lock`, finds it in a lock's own hrl_lock_options. */
#define FIELD(f) offsetof(hrl_options, f)
#define LOCK_FIELD(f) offsetof(hrl_options, lock.f)
#define NO_FIELD ((size_t)-1)

/* X(name, kind, scope, min, max, max_open, default, field, doc) */
#define OPTION_LIST(X)                                                         \
  X("connect_timeout", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 1, MAX_MS,       \
    false, 100, FIELD(connect_timeout_ms), "time to connect to one master")    \
  X("timeout", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 1, MAX_MS, false, 50,    \
    FIELD(timeout_ms),                                                         \
    "per-master reply deadline of one round (never more than ttl/10)")         \
  X("retry_delay", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 0, MAX_MS, false,    \
    200, FIELD(retry_delay_ms), "pause between acquire attempts")              \
  X("retry_jitter", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 0, MAX_MS, false,   \
    100, FIELD(retry_jitter_ms), "random +/- spread added to each pause")      \
  X("drift_factor", HRL_OPTION_NUMBER, HRL_SCOPE_CLIENT, 0, 0.5, true, 0.01,   \
    FIELD(drift_factor),                                                       \
    "clock drift allowance as a fraction of the TTL (2 ms are added)")         \
  X("key_prefix", HRL_OPTION_BYTES, HRL_SCOPE_CLIENT, 0, HRL_PREFIX_MAX,       \
    false, 0, FIELD(key_prefix), "bytes put in front of every lock name")      \
  X("ttl", HRL_OPTION_DURATION, HRL_SCOPE_LOCK, 1, MAX_MS, false, 30000,       \
    LOCK_FIELD(ttl_ms), "how long a lock lives on the masters")                \
  X("auto_renew", HRL_OPTION_FLAG, HRL_SCOPE_LOCK_DEFAULT, 0, 1, false, 0,     \
    LOCK_FIELD(auto_renew),                                                    \
    "while held, renew the lock about every third of its TTL")                 \
  X("max_hold", HRL_OPTION_DURATION, HRL_SCOPE_LOCK_DEFAULT, 0, MAX_MS, false, \
    0, LOCK_FIELD(max_hold_ms),                                                \
    "with auto_renew: never renew past this long after the acquire (0: no "    \
    "cap)")                                                                    \
  X("fenced", HRL_OPTION_FLAG, HRL_SCOPE_LOCK_DEFAULT, 0, 1, false, 0,         \
    LOCK_FIELD(fenced), "take a fencing token with every acquire")

static const hrl_option table[] = {
#define AS_OPTION_(name, kind, scope, min, max, open, def, field, doc)         \
  {name, kind, scope, min, max, open, def, doc},
    OPTION_LIST(AS_OPTION_)
#undef AS_OPTION_
};

static const size_t fields[] = {
#define AS_FIELD_(name, kind, scope, min, max, open, def, field, doc) field,
    OPTION_LIST(AS_FIELD_)
#undef AS_FIELD_
};

#define OPTION_COUNT (sizeof table / sizeof table[0])

const hrl_option *hrl_options_table(size_t *count) {
  *count = OPTION_COUNT;
  return table;
}

const hrl_option *hrl_option_find(const char *name) {
  for (size_t i = 0; name != NULL && i < OPTION_COUNT; i++) {
    if (strcmp(table[i].name, name) == 0) {
      return &table[i];
    }
  }
  return NULL;
}

static size_t field_of(const hrl_option *opt) {
  return opt >= table && opt < table + OPTION_COUNT ? fields[opt - table]
                                                    : NO_FIELD;
}

static bool is_lock_option(const hrl_option *opt) {
  return opt->scope == HRL_SCOPE_LOCK || opt->scope == HRL_SCOPE_LOCK_DEFAULT;
}

/* A field of kind `kind` at `field` bytes into the settings at base. */
static void *field_at(void *base, size_t field) {
  return (char *)base + field;
}

static const void *const_field_at(const void *base, size_t field) {
  return (const char *)base + field;
}

/* Stores a checked value into the field (duration ms, number, flag). */
static void store(void *base, size_t field, hrl_option_kind kind, double v) {
  switch (kind) {
  case HRL_OPTION_DURATION:
    *(uint32_t *)field_at(base, field) = (uint32_t)v;
    break;
  case HRL_OPTION_NUMBER:
    *(double *)field_at(base, field) = v;
    break;
  case HRL_OPTION_FLAG:
    *(bool *)field_at(base, field) = v != 0;
    break;
  case HRL_OPTION_BYTES:
    break;
  }
}

void hrl_options_init(hrl_options *o) {
  memset(o, 0, sizeof *o);
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    if (fields[i] != NO_FIELD) {
      store(o, fields[i], table[i].kind, table[i].def);
    }
  }
  o->key_prefix = "";
  o->key_prefix_len = 0;
}

hrl_status hrl_option_seconds(const hrl_option *opt, double seconds,
                              int64_t *out_ms, char *detail, size_t size) {
  if (opt == NULL || opt->kind != HRL_OPTION_DURATION) {
    hrl_detailf(detail, size, "%s is not a duration",
                opt != NULL ? opt->name : "(null)");
    return HRL_EINVAL;
  }
  return hrl_seconds_to_ms(opt->name, seconds, (int64_t)opt->min,
                           (int64_t)opt->max, out_ms, detail, size);
}

static hrl_status check_number(const hrl_option *opt, double v, char *detail,
                               size_t size) {
  bool ok = v >= opt->min && (opt->max_open ? v < opt->max : v <= opt->max);
  if (!ok) { /* NaN compares false: refused too */
    hrl_detailf(detail, size, "%s must be in [%g, %g%s, got %g", opt->name,
                opt->min, opt->max, opt->max_open ? ")" : "]", v);
    return HRL_EINVAL;
  }
  return HRL_OK;
}

static hrl_status check_bytes(const hrl_option *opt, const char *bytes,
                              size_t len, char *detail, size_t size) {
  if (bytes == NULL && len > 0) {
    hrl_detailf(detail, size, "%s is NULL with a non-zero length", opt->name);
    return HRL_EINVAL;
  }
  if ((double)len > opt->max) {
    hrl_detailf(detail, size, "%s must be at most %.0f bytes, got %zu",
                opt->name, opt->max, len);
    return HRL_EINVAL;
  }
  return HRL_OK;
}

/* A value in the binding's units (seconds for a duration) checked and
 * converted to what its field holds (milliseconds). */
static hrl_status checked_value(const hrl_option *opt, double number,
                                double *out, char *detail, size_t size) {
  int64_t ms = 0;
  hrl_status st = HRL_OK;
  switch (opt->kind) {
  case HRL_OPTION_DURATION:
    st = hrl_option_seconds(opt, number, &ms, detail, size);
    *out = (double)ms;
    break;
  case HRL_OPTION_NUMBER:
    st = check_number(opt, number, detail, size);
    *out = number;
    break;
  case HRL_OPTION_FLAG:
  case HRL_OPTION_BYTES:
    *out = number;
    break;
  }
  return st;
}

hrl_status hrl_options_set(hrl_options *o, const hrl_option *opt, double number,
                           const char *bytes, size_t len, char *detail,
                           size_t size) {
  size_t field = field_of(opt);
  if (field == NO_FIELD || opt->scope == HRL_SCOPE_LOCK) {
    hrl_detailf(detail, size, "%s is not a client option",
                opt != NULL ? opt->name : "(null)");
    return HRL_EINVAL;
  }
  if (opt->kind == HRL_OPTION_BYTES) {
    hrl_status st = check_bytes(opt, bytes, len, detail, size);
    if (st == HRL_OK) {
      o->key_prefix = bytes != NULL ? bytes : "";
      o->key_prefix_len = len;
    }
    return st;
  }
  double v = 0;
  hrl_status st = checked_value(opt, number, &v, detail, size);
  if (st == HRL_OK) {
    store(o, field, opt->kind, v);
  }
  return st;
}

hrl_status hrl_lock_options_set(hrl_lock_options *lo, const hrl_option *opt,
                                double number, char *detail, size_t size) {
  size_t field = field_of(opt);
  if (field == NO_FIELD || !is_lock_option(opt) ||
      opt->kind == HRL_OPTION_BYTES) {
    hrl_detailf(detail, size, "%s is not a lock option",
                opt != NULL ? opt->name : "(null)");
    return HRL_EINVAL;
  }
  double v = 0;
  hrl_status st = checked_value(opt, number, &v, detail, size);
  if (st == HRL_OK) {
    store(lo, field - offsetof(hrl_options, lock), opt->kind, v);
  }
  return st;
}

/* A C caller's milliseconds, with the C unit in the message. */
static hrl_status check_ms(const hrl_option *opt, uint32_t v, char *detail,
                           size_t size) {
  if ((double)v < opt->min || (double)v > opt->max) {
    hrl_detailf(detail, size, "%s must be between %.0f and %.0f ms, got %u",
                opt->name, opt->min, opt->max, (unsigned)v);
    return HRL_EINVAL;
  }
  return HRL_OK;
}

/* Checks one field of settings at base (hrl_options, or a lock's
 * hrl_lock_options with field already shifted). */
static hrl_status check_field(const hrl_option *opt, const void *base,
                              size_t field, char *detail, size_t size) {
  switch (opt->kind) {
  case HRL_OPTION_DURATION:
    return check_ms(opt, *(const uint32_t *)const_field_at(base, field), detail,
                    size);
  case HRL_OPTION_NUMBER:
    return check_number(opt, *(const double *)const_field_at(base, field),
                        detail, size);
  case HRL_OPTION_FLAG:
  case HRL_OPTION_BYTES:
    return HRL_OK;
  }
  return HRL_OK;
}

hrl_status hrl_options_check(const hrl_options *o, char *detail, size_t size) {
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    if (fields[i] == NO_FIELD || table[i].scope == HRL_SCOPE_LOCK) {
      continue; /* a lock-only option's default is the table's */
    }
    hrl_status st = table[i].kind == HRL_OPTION_BYTES
                        ? check_bytes(&table[i], o->key_prefix,
                                      o->key_prefix_len, detail, size)
                        : check_field(&table[i], o, fields[i], detail, size);
    if (st != HRL_OK) {
      return st;
    }
  }
  return HRL_OK;
}

hrl_status hrl_lock_options_check(const hrl_lock_options *lo, char *detail,
                                  size_t size) {
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    if (fields[i] == NO_FIELD || !is_lock_option(&table[i]) ||
        strcmp(table[i].name, "ttl") == 0) {
      continue; /* the TTL's bounds are the client's: hrl_lock_create */
    }
    hrl_status st = check_field(
        &table[i], lo, fields[i] - offsetof(hrl_options, lock), detail, size);
    if (st != HRL_OK) {
      return st;
    }
  }
  return HRL_OK;
}
