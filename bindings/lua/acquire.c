/* Acquiring with the blocking driver, and the acquire options:
 *
 *   client:acquire(name, opts)        -> lock handle | nil, err
 *   client:lock(name, opts)           -> lock handle (not held), timeout
 *
 * and, for the facade's acquire (facade.c), the same checks and words
 * (hrlua_check_acquire_args) and whether a released lock's handle can take
 * an acquire in place of a new one (hrlua_spare_fits). */
#include <stdio.h>
#include <string.h>

#include "hrlua.h"

/* Acquire's options: the lock options of the core's table, the wait, and
 * what the lock holds (mode "lock", "read", "write" or "permit"; permits,
 * a permit's semaphore's). */
static const char *const wait_option[] = {"timeout", "mode", "permits", NULL};

/* Ctrl-C in the standalone interpreters (lua, luajit) installs a hook from
 * the signal handler, to raise "interrupted!" at the next instruction: on
 * calls, returns and every instruction (count 1). A wait that sees such a
 * hook appear stops with "cancelled" (the core checks at least every 50 ms
 * and leaves no key behind), so the interrupt is not held up for the
 * caller's whole timeout. Other hooks (a sampling profiler's) do not stop
 * it. */
typedef struct wait_ctx {
  lua_State *L;
  lua_Hook hook;
} wait_ctx;

static bool interrupted(void *ud) {
  const wait_ctx *w = ud;
  const int mask = LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT;
  return lua_gethook(w->L) != w->hook &&
         (lua_gethookmask(w->L) & mask) == mask && lua_gethookcount(w->L) == 1;
}

/* An interrupt that came while the acquire took the lock (its first round,
 * or the try after a hand-off) would be raised at the caller's next
 * instruction, the lock handle lost with the key held for its TTL: the
 * lock is released first, and the acquire says "cancelled". */
hrl_status hrlua_acquire(lua_State *L, hrl_lock *lock, int64_t wait_ms) {
  wait_ctx w = {L, lua_gethook(L)};
  hrl_status st = hrl_lock_acquire_cancellable(lock, wait_ms, interrupted, &w);
  if (st == HRL_OK && interrupted(&w)) {
    hrl_lock_release(lock);
    return HRL_ECANCELLED;
  }
  return st;
}

/* The ttl option, whose bounds are the client's (hrl_client_ttl_seconds):
 * for the careful reading only (its default is in every hrlua_client,
 * ttl_default_ms, read without a search). */
const hrl_option *hrlua_ttl_option(void) {
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  for (size_t i = 0; i < count; i++) {
    if (table[i].name[0] == 't' && strcmp(table[i].name, "ttl") == 0) {
      return &table[i];
    }
  }
  return NULL;
}

/* The option named key (len bytes) in the core's table, or NULL:
 * hrl_option_find, with a look at the first byte before each comparison
 * (this runs for every key of every acquire's options). */
static const hrl_option *find_option(const char *key, size_t len) {
  if (strlen(key) != len) {
    return NULL; /* an embedded NUL: no option's name */
  }
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  for (size_t i = 0; i < count; i++) {
    if (table[i].name[0] == key[0] && strcmp(table[i].name, key) == 0) {
      return &table[i];
    }
  }
  return NULL;
}

/* Whether a and b are the same number, bit for bit (NaN is never kept:
 * the core refuses it). */
static bool same_number(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0;
}

/* One option of the table at the top of the stack (key at -2, value at -1)
 * into lo or *wait_ms, without raising: false when the key is not one
 * acquire takes or its value is refused. *ttl_seen tells whether the key
 * was ttl (whose option entry is then looked up only when it is needed:
 * never for a ttl that is a number the client accepts). */
static bool take_option(lua_State *L, hrlua_client *client,
                        hrl_lock_options *lo, int64_t *wait_ms,
                        bool *ttl_seen) {
  if (lua_type(L, -2) != LUA_TSTRING) {
    return false;
  }
  size_t len;
  const char *key = lua_tolstring(L, -2, &len);
  int type = lua_type(L, -1);
  char detail[HRL_DETAIL_MAX];
  int64_t ms = 0;
  /* The keys of almost every call first, without a search: ttl (a
   * duration, hrlua_option_type_ok's number) and the wait. */
  if (len == 3 && memcmp(key, "ttl", 3) == 0) {
    *ttl_seen = true;
    if (type != LUA_TNUMBER) {
      return false;
    }
    double seconds = (double)lua_tonumber(L, -1);
    if (client->ttl_ms == 0 || !same_number(seconds, client->ttl_s)) {
      if (hrl_client_ttl_seconds(client->client, seconds, &ms, detail,
                                 sizeof detail) != HRL_OK) {
        return false;
      }
      client->ttl_s = seconds;
      client->ttl_ms = (uint32_t)ms;
    }
    lo->ttl_ms = client->ttl_ms;
    return true;
  }
  /* fenced = true: a flag, taken as hrl_lock_options_set takes it; any
   * other type is left to the search below, which refuses it. */
  if (len == 6 && memcmp(key, "fenced", 6) == 0 && type == LUA_TBOOLEAN) {
    lo->fenced = lua_toboolean(L, -1) != 0;
    return true;
  }
  if (len == 7 && memcmp(key, "timeout", 7) == 0) {
    if (type != LUA_TNUMBER) {
      return false;
    }
    double seconds = (double)lua_tonumber(L, -1);
    if (!same_number(seconds, client->wait_s)) {
      if (hrl_seconds_to_ms(key, seconds, 0, HRL_TTL_MAX_MS, &ms, detail,
                            sizeof detail) != HRL_OK) {
        return false;
      }
      client->wait_s = seconds;
      client->wait_ms = ms;
    }
    *wait_ms = client->wait_ms;
    return true;
  }
  const hrl_option *opt = find_option(key, len);
  if (opt == NULL || !hrlua_lock_option(opt)) {
    /* The wait: hrlua_check_seconds's rule, as the careful reading. */
    return len == strlen(wait_option[0]) && strcmp(key, wait_option[0]) == 0 &&
           type == LUA_TNUMBER &&
           hrl_seconds_to_ms(key, (double)lua_tonumber(L, -1), 0,
                             HRL_TTL_MAX_MS, wait_ms, detail,
                             sizeof detail) == HRL_OK;
  }
  if (!hrlua_option_type_ok(opt, type)) {
    return false;
  }
  /* The type is right: this converts without raising. */
  static const hrlua_arg unused = {0, "acquire", 2};
  double number;
  const char *bytes;
  size_t blen;
  hrlua_option_value(L, -1, &unused, opt, &number, &bytes, &blen);
  /* A string value stays referenced by the options table, the caller's. */
  return (opt->kind == HRL_OPTION_LABEL
              ? hrl_lock_options_set_text(lo, opt, bytes, blen, detail,
                                          sizeof detail)
              : hrl_lock_options_set(lo, opt, number, detail, sizeof detail)) ==
         HRL_OK;
}

/* The options table at idx in one pass over its keys: true when it has no
 * metatable (whose __index the careful reading would consult), every key
 * is an option acquire takes and every value is accepted. Each option is
 * read on its own, so such a table gives what the careful reading gives;
 * any other table is left to it, which raises the documented error (the
 * first unknown key, else the first bad value in the option table's
 * order). A cycle's options cost two table steps this way, where the
 * careful reading looks up every option acquire knows. */
static bool read_options_fast(lua_State *L, int idx, hrlua_client *client,
                              hrl_lock_options *lo, int64_t *wait_ms) {
  if (lua_getmetatable(L, idx)) {
    lua_pop(L, 1);
    return false;
  }
  int top = lua_gettop(L);
  bool ttl_seen = false;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (!take_option(L, client, lo, wait_ms, &ttl_seen)) {
      lua_settop(L, top);
      return false;
    }
    lua_pop(L, 1); /* the value; the key stays for lua_next */
  }
  if (!ttl_seen) {
    lo->ttl_ms = client->ttl_default_ms;
  }
  return true;
}

/* The mode and permits options at arg into *mode and *permits, with the
 * core's words. */
static void read_mode(lua_State *L, const hrlua_arg *arg, hrl_lock_mode *mode,
                      uint32_t *permits) {
  char detail[HRL_DETAIL_MAX];
  lua_getfield(L, arg->idx, "mode");
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      hrlua_argerror(L, arg,
                     lua_pushfstring(L, "mode must be a string, got %s",
                                     luaL_typename(L, -1)));
    }
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    if (hrl_lock_mode_parse(text, len, mode, detail, sizeof detail) != HRL_OK) {
      hrlua_argerror(L, arg, detail);
    }
  }
  lua_pop(L, 1);
  lua_getfield(L, arg->idx, "permits");
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TNUMBER) {
      hrlua_argerror(L, arg,
                     lua_pushfstring(L, "permits must be a number, got %s",
                                     luaL_typename(L, -1)));
    }
    if (hrl_lock_permits_parse((double)lua_tonumber(L, -1), permits, detail,
                               sizeof detail) != HRL_OK) {
      hrlua_argerror(L, arg, detail);
    }
  }
  lua_pop(L, 1);
  if (hrl_lock_mode_check(*mode, *permits, detail, sizeof detail) != HRL_OK) {
    hrlua_argerror(L, arg, detail);
  }
}

/* Reads the acquire options at arg, for a lock of client: the lock options
 * of the core's table (ttl checked against the client's bounds), the wait
 * (timeout) and what the lock holds (mode, permits). Raises on anything
 * wrong, naming arg. The one-pass reading takes no mode or permits: a
 * table with them is read the careful way. */
static void read_acquire_options(lua_State *L, const hrlua_arg *arg,
                                 hrlua_client *hc, hrl_lock_options *lo,
                                 int64_t *wait_ms, hrl_lock_mode *mode,
                                 uint32_t *permits) {
  const hrl_client *client = hc->client;
  *mode = HRL_MODE_LOCK;
  *permits = 0;
  hrl_lock_options_init(client, lo);
  *wait_ms = HRLUA_DEFAULT_WAIT_MS;
  int type = lua_type(L, arg->idx);
  if (type == LUA_TTABLE && read_options_fast(L, arg->idx, hc, lo, wait_ms)) {
    return;
  }
  lo->ttl_ms = hc->ttl_default_ms;
  if (type == LUA_TNONE || type == LUA_TNIL) {
    return; /* no options: nothing to read */
  }
  /* The careful reading, from the defaults again. */
  hrl_lock_options_init(client, lo);
  lo->ttl_ms = hc->ttl_default_ms;
  *wait_ms = HRLUA_DEFAULT_WAIT_MS;
  hrlua_check_options(L, arg, hrlua_lock_option, wait_option);
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  for (size_t i = 0; i < count; i++) {
    const hrl_option *opt = &table[i];
    if (!hrlua_lock_option(opt)) {
      continue;
    }
    lua_getfield(L, arg->idx, opt->name);
    if (strcmp(opt->name, "ttl") == 0) {
      hrlua_arg ttl_arg = {lua_gettop(L), arg->func, arg->pos};
      lo->ttl_ms = (uint32_t)hrlua_check_ttl(L, &ttl_arg, client, lo->ttl_ms);
    } else {
      double number;
      const char *bytes;
      size_t len;
      char detail[HRL_DETAIL_MAX];
      if (hrlua_option_value(L, -1, arg, opt, &number, &bytes, &len) &&
          (opt->kind == HRL_OPTION_LABEL
               ? hrl_lock_options_set_text(lo, opt, bytes, len, detail,
                                           sizeof detail)
               : hrl_lock_options_set(lo, opt, number, detail,
                                      sizeof detail)) != HRL_OK) {
        hrlua_argerror(L, arg, detail);
      }
    }
    lua_pop(L, 1);
  }
  hrlua_opt_seconds(L, arg, "timeout", 0, HRL_TTL_MAX_MS, wait_ms);
  read_mode(L, arg, mode, permits);
}

static const hrlua_arg name_arg = {2, "acquire", 1};
static const hrlua_arg options_arg = {3, "acquire", 2};

void hrlua_check_acquire_args(lua_State *L, hrlua_client *client,
                              hrlua_acquire_args *a) {
  a->client = client;
  a->name = hrlua_check_name(L, &name_arg, &a->len);
  read_acquire_options(L, &options_arg, a->client, &a->lo, &a->wait_ms,
                       &a->mode, &a->permits);
}

/* client:acquire(name, {ttl = 30, timeout = 5}) -> lock | nil, err.
 * timeout is how long to keep retrying: 0 is one attempt. */
static int client_acquire(lua_State *L) {
  hrlua_acquire_args a;
  hrlua_check_acquire_args(L, hrlua_check_client(L, 1), &a);
  lua_settop(L, 3);
  hrlua_lock *lk =
      hrlua_push_lock(L, 1, &name_arg, a.name, a.len, &a.lo, a.mode, a.permits);
  hrl_status st = hrlua_acquire(L, lk->lock, a.wait_ms);
  if (st != HRL_OK) {
    return hrlua_push_status(L, st, hrl_lock_error(lk->lock));
  }
  return 1;
}

/* client:lock(name, {ttl, timeout}) -> lock handle (not held), timeout in
 * seconds: acquire's checks, with acquire's words, without any I/O, for
 * drivers that move the bytes themselves (see proto.c). */
static int client_lock(lua_State *L) {
  hrlua_acquire_args a;
  hrlua_check_acquire_args(L, hrlua_check_client(L, 1), &a);
  lua_settop(L, 3);
  hrlua_push_lock(L, 1, &name_arg, a.name, a.len, &a.lo, a.mode, a.permits);
  lua_pushnumber(L, (lua_Number)a.wait_ms / 1000.0);
  return 2;
}

/* Whether two owner labels (NULL: none) are the same text. */
static bool same_owner(const char *a, const char *b) {
  return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Whether the spare handle sp can take this acquire in place of a new
 * handle: made by this client for the same name with the same settings
 * (its TTL too, which an extend with a TTL changes), a plain lock (not a
 * read, write or permit, nor a lease, whose renewer may still hold it),
 * and holding nothing: no lock object's hold on it (an odd hold number:
 * object.c; the C facade keeps a held handle listed as the name's spare)
 * even once its validity ran out, as the object may still release it, and
 * not held by the core. Every field of hrl_lock_options is compared: a new
 * one must be added here. */
bool hrlua_spare_fits(const hrlua_lock *sp, const hrlua_acquire_args *a) {
  if (sp->lock == NULL || (sp->hold & 1) != 0 || sp->owner != a->client ||
      sp->borrowed || a->lo.auto_renew || sp->mode != HRL_MODE_LOCK ||
      a->mode != HRL_MODE_LOCK) {
    return false;
  }
  size_t len;
  const void *name = hrl_lock_name(sp->lock, &len);
  hrl_lock_options have;
  hrl_lock_get_options(sp->lock, &have);
  const hrl_lock_options *want = &a->lo;
  return len == a->len && memcmp(name, a->name, len) == 0 && !have.auto_renew &&
         have.ttl_ms == want->ttl_ms &&
         hrl_lock_ttl_ms(sp->lock) == want->ttl_ms &&
         have.max_hold_ms == want->max_hold_ms && have.fenced == want->fenced &&
         have.sync_replicas == want->sync_replicas &&
         have.sync_aof == want->sync_aof &&
         same_owner(have.owner, want->owner) && !hrl_lock_held(sp->lock);
}

void hrlua_open_acquire(lua_State *L) {
  static const luaL_Reg client_methods[] = {
      {"acquire", client_acquire}, {"lock", client_lock}, {NULL, NULL}};
  hrlua_add_methods(L, HRLUA_CLIENT_MT, client_methods);
}
