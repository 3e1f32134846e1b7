/* The option table: every option's name, unit, bounds and default, once.
 * hrl_options_init() fills the defaults from it, hrl_client_new() checks a
 * C caller's settings against it, and the bindings read it to take options
 * from their users, so a value is accepted or refused, with the same words,
 * in every runtime. */
#define _POSIX_C_SOURCE 200809L
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
/* The longest path a string option takes (Linux's PATH_MAX). */
#define PATH_BYTES 4096
/* The most replicas a vote may wait for (WAIT's count). */
#define SYNC_REPLICAS_MAX 100

/* A choice is stored in its enum field as an int. */
_Static_assert(sizeof(hrl_cert_reqs) == sizeof(int), "enum stored as int");
static const char *const cert_reqs_choices[] = {"none", "optional", "required",
                                                NULL};

/* X(name, kind, scope, min, max, max_open, default, field, doc, choices):
 * for a string, min and max bound its length; for a choice, default is the
 * index of the default choice. */
#define OPTION_LIST(X)                                                         \
  X("connect_timeout", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 1, MAX_MS,       \
    false, 100, FIELD(connect_timeout_ms),                                     \
    "time to connect to one master (and shake hands over TLS)", NULL)          \
  X("timeout", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 1, MAX_MS, false, 50,    \
    FIELD(timeout_ms),                                                         \
    "per-master reply deadline of one round (never more than ttl/10)", NULL)   \
  X("retry_delay", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 0, MAX_MS, false,    \
    200, FIELD(retry_delay_ms), "pause between acquire attempts", NULL)        \
  X("retry_jitter", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 0, MAX_MS, false,   \
    100, FIELD(retry_jitter_ms), "random +/- spread added to each pause",      \
    NULL)                                                                      \
  X("drift_factor", HRL_OPTION_NUMBER, HRL_SCOPE_CLIENT, 0, 0.5, true, 0.01,   \
    FIELD(drift_factor),                                                       \
    "clock drift allowance as a fraction of the TTL (2 ms are added)", NULL)   \
  X("key_prefix", HRL_OPTION_BYTES, HRL_SCOPE_CLIENT, 0, HRL_PREFIX_MAX,       \
    false, 0, FIELD(key_prefix), "bytes put in front of every lock name",      \
    NULL)                                                                      \
  X("ttl", HRL_OPTION_DURATION, HRL_SCOPE_LOCK, 1, MAX_MS, false, 30000,       \
    LOCK_FIELD(ttl_ms), "how long a lock lives on the masters", NULL)          \
  X("auto_renew", HRL_OPTION_FLAG, HRL_SCOPE_LOCK_DEFAULT, 0, 1, false, 0,     \
    LOCK_FIELD(auto_renew),                                                    \
    "while held, renew the lock about every third of its TTL", NULL)           \
  X("max_hold", HRL_OPTION_DURATION, HRL_SCOPE_LOCK_DEFAULT, 0, MAX_MS, false, \
    0, LOCK_FIELD(max_hold_ms),                                                \
    "with auto_renew: never renew past this long after the acquire (0: no "    \
    "cap)",                                                                    \
    NULL)                                                                      \
  X("fenced", HRL_OPTION_FLAG, HRL_SCOPE_LOCK_DEFAULT, 0, 1, false, 0,         \
    LOCK_FIELD(fenced), "take a fencing token with every acquire", NULL)       \
  X("owner", HRL_OPTION_LABEL, HRL_SCOPE_LOCK_DEFAULT, 1, HRL_OWNER_MAX,       \
    false, 0, LOCK_FIELD(owner),                                               \
    "a label written beside the lock with every acquire, shown by inspect "    \
    "(true: host:pid; %h host, %p pid)",                                       \
    NULL)                                                                      \
  X("slow_wait", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 0, MAX_MS, false,      \
    1000, FIELD(slow_wait_ms),                                                 \
    "report an acquire that waited at least this long (event slow_wait)",      \
    NULL)                                                                      \
  X("sync_replicas", HRL_OPTION_COUNT, HRL_SCOPE_LOCK_DEFAULT, 0,              \
    SYNC_REPLICAS_MAX, false, 0, LOCK_FIELD(sync_replicas),                    \
    "a master's vote counts once this many of its replicas have the write "    \
    "(WAIT; 0: off)",                                                          \
    NULL)                                                                      \
  X("sync_aof", HRL_OPTION_FLAG, HRL_SCOPE_LOCK_DEFAULT, 0, 1, false, 0,       \
    LOCK_FIELD(sync_aof),                                                      \
    "... and once the write is fsynced to the AOF (WAITAOF: Redis >= 7.2, "    \
    "Valkey >= 8)",                                                            \
    NULL)                                                                      \
  X("restart_guard", HRL_OPTION_DURATION, HRL_SCOPE_CLIENT, 0, MAX_MS, false,  \
    0, FIELD(restart_guard_ms),                                                \
    "a master whose server started less than this long ago gives no vote "     \
    "(0: off)",                                                                \
    NULL)                                                                      \
  X("ssl_ca_certs", HRL_OPTION_STRING, HRL_SCOPE_CLIENT, 1, PATH_BYTES, false, \
    0, FIELD(ssl_ca_certs),                                                    \
    "rediss://: CA certificates (PEM file) to verify masters with "            \
    "(default: the system's)",                                                 \
    NULL)                                                                      \
  X("ssl_ca_path", HRL_OPTION_STRING, HRL_SCOPE_CLIENT, 1, PATH_BYTES, false,  \
    0, FIELD(ssl_ca_path),                                                     \
    "rediss://: a directory of CA certificates (c_rehash layout)", NULL)       \
  X("ssl_certfile", HRL_OPTION_STRING, HRL_SCOPE_CLIENT, 1, PATH_BYTES, false, \
    0, FIELD(ssl_certfile),                                                    \
    "rediss://: client certificate (PEM) for mutual TLS", NULL)                \
  X("ssl_keyfile", HRL_OPTION_STRING, HRL_SCOPE_CLIENT, 1, PATH_BYTES, false,  \
    0, FIELD(ssl_keyfile),                                                     \
    "rediss://: the client certificate's key (default: in ssl_certfile)",      \
    NULL)                                                                      \
  X("ssl_cert_reqs", HRL_OPTION_CHOICE, HRL_SCOPE_CLIENT, 0, 2, false,         \
    HRL_CERT_REQUIRED, FIELD(ssl_cert_reqs),                                   \
    "rediss://: verify masters' certificates (none turns every check off)",    \
    cert_reqs_choices)                                                         \
  X("ssl_check_hostname", HRL_OPTION_FLAG, HRL_SCOPE_CLIENT, 0, 1, false, 1,   \
    FIELD(ssl_check_hostname),                                                 \
    "rediss://: a master's certificate must name the URL's host", NULL)

static const hrl_option table[] = {
#define AS_OPTION_(name, kind, scope, min, max, open, def, field, doc, ch)     \
  {name, kind, scope, min, max, open, def, doc, ch},
    OPTION_LIST(AS_OPTION_)
#undef AS_OPTION_
};

static const size_t fields[] = {
#define AS_FIELD_(name, kind, scope, min, max, open, def, field, doc, ch) field,
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

int hrl_option_choice(const hrl_option *opt, const char *name, size_t len) {
  if (opt == NULL || opt->kind != HRL_OPTION_CHOICE || name == NULL) {
    return -1;
  }
  for (int i = 0; opt->choices[i] != NULL; i++) {
    if (strlen(opt->choices[i]) == len &&
        memcmp(opt->choices[i], name, len) == 0) {
      return i;
    }
  }
  return -1;
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

/* Stores a checked value into the field (duration ms, number, flag,
 * choice index; a string's default, which is NULL). */
static void store(void *base, size_t field, hrl_option_kind kind, double v) {
  switch (kind) {
  case HRL_OPTION_DURATION:
  case HRL_OPTION_COUNT:
    *(uint32_t *)field_at(base, field) = (uint32_t)v;
    break;
  case HRL_OPTION_NUMBER:
    *(double *)field_at(base, field) = v;
    break;
  case HRL_OPTION_FLAG:
    *(bool *)field_at(base, field) = v != 0;
    break;
  case HRL_OPTION_CHOICE:
    *(int *)field_at(base, field) = (int)v;
    break;
  case HRL_OPTION_STRING:
  case HRL_OPTION_LABEL:
    *(const char **)field_at(base, field) = NULL;
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

/* A count: a whole number within the option's bounds. */
static hrl_status check_count(const hrl_option *opt, double v, char *detail,
                              size_t size) {
  if (!(v >= opt->min && v <= opt->max) || v != floor(v)) {
    hrl_detailf(detail, size,
                "%s must be a whole number from %.0f to %.0f, "
                "got %g",
                opt->name, opt->min, opt->max, v);
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
  case HRL_OPTION_COUNT:
    st = check_count(opt, number, detail, size);
    *out = number;
    break;
  case HRL_OPTION_FLAG:
  case HRL_OPTION_BYTES:
  case HRL_OPTION_STRING:
  case HRL_OPTION_CHOICE:
  case HRL_OPTION_LABEL:
    *out = number;
    break;
  }
  return st;
}

/* A label option's text (owner): NULL for none. */
static hrl_status check_label(const char *text, size_t len, char *detail,
                              size_t size) {
  if (text == NULL) {
    return HRL_OK;
  }
  if (strnlen(text, len + 1) != len) {
    hrl_detailf(detail, size, "owner must not contain a NUL byte");
    return HRL_EINVAL;
  }
  return hrl_owner_check(text, len, detail, size);
}

/* A string option's value: text of min to max bytes without a NUL. */
static hrl_status check_string(const hrl_option *opt, const char *s, size_t len,
                               char *detail, size_t size) {
  if (s == NULL) {
    return HRL_OK; /* unset */
  }
  if (strnlen(s, len + 1) != len) {
    hrl_detailf(detail, size, "%s must not contain a NUL byte", opt->name);
    return HRL_EINVAL;
  }
  if ((double)len < opt->min || (double)len > opt->max) {
    hrl_detailf(detail, size, "%s must be %.0f to %.0f bytes, got %zu",
                opt->name, opt->min, opt->max, len);
    return HRL_EINVAL;
  }
  return HRL_OK;
}

/* "none, optional, required" for messages about a choice. */
static void choice_list(const hrl_option *opt, char *out, size_t size) {
  out[0] = '\0';
  for (int i = 0; opt->choices[i] != NULL; i++) {
    hrl_detail_append(out, size, "%s%s", i > 0 ? ", " : "", opt->choices[i]);
  }
}

static hrl_status bad_choice(const hrl_option *opt, const char *got,
                             char *detail, size_t size) {
  char list[128];
  choice_list(opt, list, sizeof list);
  hrl_detailf(detail, size, "%s must be one of %s, got %s", opt->name, list,
              got);
  return HRL_EINVAL;
}

/* Stores a string, bytes or choice given by name into o. */
static hrl_status set_text(hrl_options *o, const hrl_option *opt, size_t field,
                           const char *text, size_t len, char *detail,
                           size_t size) {
  hrl_status st = HRL_OK;
  if (opt->kind == HRL_OPTION_BYTES) {
    st = check_bytes(opt, text, len, detail, size);
    if (st == HRL_OK) {
      o->key_prefix = text != NULL ? text : "";
      o->key_prefix_len = len;
    }
  } else if (opt->kind == HRL_OPTION_STRING) {
    st = check_string(opt, text, len, detail, size);
    if (st == HRL_OK) {
      *(const char **)field_at(o, field) = text;
    }
  } else if (opt->kind == HRL_OPTION_LABEL) {
    st = check_label(text, len, detail, size);
    if (st == HRL_OK) {
      *(const char **)field_at(o, field) = text;
    }
  } else {
    int index = hrl_option_choice(opt, text, len);
    if (index < 0) {
      char got[64];
      hrl_detailf(got, sizeof got, "'%.*s'", (int)(len < 40 ? len : 40),
                  text != NULL ? text : "");
      return bad_choice(opt, text != NULL ? got : "NULL", detail, size);
    }
    store(o, field, opt->kind, index);
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
  if (opt->kind == HRL_OPTION_BYTES || opt->kind == HRL_OPTION_STRING ||
      opt->kind == HRL_OPTION_CHOICE || opt->kind == HRL_OPTION_LABEL) {
    return set_text(o, opt, field, bytes, len, detail, size);
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
  if (field != NO_FIELD && opt->kind == HRL_OPTION_LABEL) {
    hrl_detailf(detail, size, "%s takes text (hrl_lock_options_set_text)",
                opt->name);
    return HRL_EINVAL;
  }
  if (field == NO_FIELD || !is_lock_option(opt) ||
      opt->kind == HRL_OPTION_BYTES || opt->kind == HRL_OPTION_STRING ||
      opt->kind == HRL_OPTION_CHOICE) {
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

hrl_status hrl_lock_options_set_text(hrl_lock_options *lo,
                                     const hrl_option *opt, const char *text,
                                     size_t len, char *detail, size_t size) {
  size_t field = field_of(opt);
  if (field == NO_FIELD || !is_lock_option(opt) ||
      opt->kind != HRL_OPTION_LABEL) {
    hrl_detailf(detail, size, "%s is not a lock option taking text",
                opt != NULL ? opt->name : "(null)");
    return HRL_EINVAL;
  }
  hrl_status st = check_label(text, len, detail, size);
  if (st == HRL_OK) {
    *(const char **)field_at(lo, field - offsetof(hrl_options, lock)) = text;
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
  case HRL_OPTION_COUNT:
    return check_count(opt, *(const uint32_t *)const_field_at(base, field),
                       detail, size);
  case HRL_OPTION_STRING: {
    const char *text = *(const char *const *)const_field_at(base, field);
    return check_string(opt, text,
                        text != NULL ? strnlen(text, PATH_BYTES + 1) : 0,
                        detail, size);
  }
  case HRL_OPTION_CHOICE: {
    int v = *(const int *)const_field_at(base, field);
    if (v < opt->min || v > opt->max) {
      char got[24];
      hrl_detailf(got, sizeof got, "%d", v);
      return bad_choice(opt, got, detail, size);
    }
    return HRL_OK;
  }
  case HRL_OPTION_LABEL: {
    const char *text = *(const char *const *)const_field_at(base, field);
    return check_label(text,
                       text != NULL ? strnlen(text, HRL_OWNER_MAX + 1) : 0,
                       detail, size);
  }
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
        fields[i] == LOCK_FIELD(ttl_ms)) {
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
