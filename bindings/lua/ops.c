/* What operators get, for Lua (docs/OPERATING.md): inspections, counters
 * and events, in the same fields as every runtime (the core's words;
 * times in seconds, as everywhere in Lua). Only conversions.
 *
 *   client:inspect(name)   -> inspection (the built-in driver, blocking)
 *   lock:inspection()      -> inspection | nil, after lock:begin("inspect")
 *                             ran to its end (a driver of its own)
 *   client:stats()         -> counters
 *   client:events()        -> the events queued since, oldest first | nil
 *                             (nil, with no table made, when there are
 *                             none: the fast path asks after every call)
 */
#include <math.h>
#include <string.h>

#include "hrlua.h"

/* How many events a client keeps until they are taken. */
#define EVENT_QUEUE 256

void hrlua_events_attach(lua_State *L, hrl_client *client) {
  if (hrl_client_queue_events(client, EVENT_QUEUE, NULL, NULL) != HRL_OK) {
    luaL_error(L, "%s", hrl_strerror(HRL_ENOMEM));
  }
}

static void set_number(lua_State *L, const char *key, double v) {
  lua_pushnumber(L, (lua_Number)v);
  lua_setfield(L, -2, key);
}

static void set_count(lua_State *L, const char *key, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v); /* counters stay below 2^53 */
  lua_setfield(L, -2, key);
}

/* Text, when there is any: an absent field reads nil, as None in Python. */
static void set_text(lua_State *L, const char *key, const char *s) {
  if (s != NULL && s[0] != '\0') {
    lua_pushstring(L, s);
    lua_setfield(L, -2, key);
  }
}

static void set_bool(lua_State *L, const char *key, bool v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, key);
}

/* A fence counter: a number (Lua 5.4: an integer), nil when none. */
static void set_fence(lua_State *L, uint64_t fence) {
  if (fence > 0) {
    lua_pushinteger(L, (lua_Integer)fence);
    lua_setfield(L, -2, "fence");
  }
}

/* The holds as a list; quorum: the inspection's (with holding). */
static void push_holds(lua_State *L, const hrl_hold_view *h, size_t n,
                       bool quorum) {
  lua_createtable(L, (int)n, 0);
  for (size_t k = 0; k < n; k++) {
    lua_createtable(L, 0, 5);
    set_text(L, "token", h[k].token);
    set_text(L, "hold", h[k].hold);
    set_number(L, "ttl", h[k].ttl_ms / 1000.0);
    if (quorum) {
      set_count(L, "holding", h[k].holding);
    }
    set_text(L, "owner", h[k].owner);
    lua_rawseti(L, -2, (int)k + 1);
  }
  lua_setfield(L, -2, "holds");
}

static void push_master(lua_State *L, const hrl_master_view *m) {
  lua_createtable(L, 0, 10);
  set_text(L, "master", m->label);
  set_bool(L, "ok", m->status == HRL_OK);
  if (m->status != HRL_OK) {
    char error[2 * HRL_DETAIL_MAX];
    set_text(L, "error",
             hrl_format_error(m->status, m->error, error, sizeof error));
  }
  set_bool(L, "present", m->present);
  set_text(L, "token", m->token);
  if (m->status == HRL_OK && m->pttl_ms != -2) {
    set_number(L, "ttl", m->pttl_ms == -1 ? -1.0 : m->pttl_ms / 1000.0);
  }
  set_fence(L, m->fence);
  set_text(L, "owner", m->owner);
  set_count(L, "queued", m->queued);
  lua_createtable(L, (int)m->listed, 0);
  for (size_t k = 0; k < m->listed; k++) {
    const hrl_waiter_view *w = &m->waiters[k];
    lua_createtable(L, 0, 4);
    set_text(L, "token", w->token);
    set_number(L, "age", w->age_ms / 1000.0);
    set_number(L, "lease", w->lease_ms / 1000.0);
    set_text(L, "owner", w->owner);
    lua_rawseti(L, -2, (int)k + 1);
  }
  lua_setfield(L, -2, "waiters");
  set_text(L, "kind", hrl_kind_name(m->kind));
  set_count(L, "hold_count", m->holds);
  push_holds(L, m->hold, m->holds_listed, false);
}

/* The inspection as a table; name_idx: the name to put in it. */
static void push_inspection(lua_State *L, const hrl_inspection *r,
                            int name_idx) {
  lua_createtable(L, 0, 11);
  lua_pushvalue(L, name_idx);
  lua_setfield(L, -2, "name");
  set_text(L, "state", hrl_verdict_name(r->verdict));
  set_bool(L, "held", r->verdict == HRL_VERDICT_HELD);
  set_text(L, "token", r->token);
  set_text(L, "owner", r->owner);
  if (r->verdict == HRL_VERDICT_HELD) {
    set_number(L, "validity",
               r->valid_ms < 0 ? HUGE_VAL : r->valid_ms / 1000.0);
  }
  set_fence(L, r->fence);
  set_count(L, "quorum", r->quorum);
  set_count(L, "answered", r->answered);
  set_count(L, "holding", r->holding);
  set_text(L, "kind", hrl_kind_name(r->kind));
  push_holds(L, r->hold, r->holds, true);
  lua_createtable(L, (int)r->masters, 0);
  for (size_t i = 0; i < r->masters; i++) {
    push_master(L, &r->master[i]);
    lua_rawseti(L, -2, (int)i + 1);
  }
  lua_setfield(L, -2, "masters");
}

/* client:inspect(name) -> inspection | nil, err */
static int client_inspect(lua_State *L) {
  static const hrlua_arg name_arg = {2, "inspect", 1};
  hrlua_client *c = hrlua_check_client(L, 1);
  size_t len;
  const char *name = hrlua_check_name(L, &name_arg, &len);
  hrl_inspection *r = NULL;
  char detail[HRL_DETAIL_MAX] = "";
  hrl_status st =
      hrl_client_inspect(c->client, name, len, &r, detail, sizeof detail);
  if (st == HRL_EINVAL) {
    return hrlua_argerror(L, &name_arg, detail);
  }
  if (st != HRL_OK) {
    return hrlua_push_status(L, st, detail);
  }
  push_inspection(L, r, 2);
  hrl_inspection_free(r);
  return 1;
}

/* lock:inspection() -> the inspection its begin("inspect") made | nil */
static int lock_inspection(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock(L, 1);
  const hrl_inspection *r = hrl_lock_inspection(lk->lock);
  if (r == NULL) {
    lua_pushnil(L);
    return 1;
  }
  size_t len;
  const void *name = hrl_lock_name(lk->lock, &len);
  lua_pushlstring(L, name, len);
  push_inspection(L, r, lua_gettop(L));
  return 1;
}

/* client:stats() -> counters (docs/OPERATING.md). */
static int client_stats(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  hrl_stats s;
  hrl_client_stats(c->client, &s);
  lua_createtable(L, 0, 17);
  set_count(L, "acquired", s.acquired);
  set_count(L, "busy", s.busy);
  set_count(L, "cancelled", s.cancelled);
  lua_newtable(L);
  for (int st = 1; st < HRL_STATUS_COUNT_; st++) {
    if (s.failed[st] > 0) {
      set_count(L, hrl_strerror((hrl_status)st), s.failed[st]);
    }
  }
  lua_setfield(L, -2, "failed");
  set_count(L, "waited", s.waited);
  lua_createtable(L, HRL_WAIT_BUCKETS, 0);
  for (size_t k = 0; k < HRL_WAIT_BUCKETS; k++) {
    lua_pushnumber(L, hrl_wait_bucket_ms(k) / 1000.0);
    lua_rawseti(L, -2, (int)k + 1);
  }
  lua_setfield(L, -2, "wait_bounds");
  lua_createtable(L, HRL_WAIT_BUCKETS + 1, 0);
  for (size_t k = 0; k <= HRL_WAIT_BUCKETS; k++) {
    lua_pushinteger(L, (lua_Integer)s.wait_buckets[k]);
    lua_rawseti(L, -2, (int)k + 1);
  }
  lua_setfield(L, -2, "wait_buckets");
  set_number(L, "wait_sum", (double)s.wait_sum_us / 1e6);
  set_count(L, "released", s.released);
  set_count(L, "handoffs", s.handoffs);
  set_count(L, "dead_waiters", s.dead_waiters);
  set_count(L, "extended", s.extended);
  set_count(L, "renewals", s.renewals);
  set_count(L, "renewals_failed", s.renewals_failed);
  set_count(L, "losses", s.losses);
  set_count(L, "inspections", s.inspections);
  lua_createtable(L, (int)s.masters, 0);
  for (size_t i = 0; i < s.masters; i++) {
    lua_createtable(L, 0, 3);
    set_text(L, "master", hrl_client_master_label(c->client, i));
    set_count(L, "unreachable", s.master[i].unreachable);
    set_count(L, "errors", s.master[i].errors);
    lua_rawseti(L, -2, (int)i + 1);
  }
  lua_setfield(L, -2, "masters");
  return 1;
}

static const char *level_name(hrl_event_level level) {
  return level == HRL_LEVEL_WARNING ? "warning"
         : level == HRL_LEVEL_INFO  ? "info"
                                    : "debug";
}

static void push_event(lua_State *L, const hrl_event *ev) {
  char message[2 * HRL_DETAIL_MAX];
  lua_createtable(L, 0, 9);
  set_text(L, "kind", hrl_event_name(ev->kind));
  set_text(L, "level", level_name(ev->level));
  set_text(L, "message", hrl_event_format(ev, message, sizeof message));
  if (ev->name != NULL) {
    lua_pushlstring(L, ev->name, ev->name_len);
    lua_setfield(L, -2, "name");
  }
  set_text(L, "master", ev->master_label);
  set_number(L, "ms", (double)ev->ms);
  set_count(L, "count", ev->count);
  set_text(L, "status", ev->status == HRL_OK ? "" : hrl_strerror(ev->status));
  set_text(L, "detail", ev->detail);
}

/* client:events() -> {event...} | nil, dropped */
static int client_events(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  if (!hrl_client_events_pending(c->client)) {
    return 0;
  }
  hrl_event_record batch[8];
  uint64_t dropped_total = 0;
  int n = 0;
  lua_newtable(L);
  for (;;) {
    uint64_t dropped = 0;
    size_t got = hrl_client_take_events(c->client, batch, 8, &dropped);
    dropped_total += dropped;
    for (size_t k = 0; k < got; k++) {
      push_event(L, &batch[k].ev);
      lua_rawseti(L, -2, ++n);
    }
    if (got < 8) {
      break;
    }
  }
  lua_pushinteger(L, (lua_Integer)dropped_total);
  return 2;
}

void hrlua_open_ops(lua_State *L) {
  static const luaL_Reg client_methods[] = {{"inspect", client_inspect},
                                            {"stats", client_stats},
                                            {"events", client_events},
                                            {NULL, NULL}};
  static const luaL_Reg lock_methods[] = {{"inspection", lock_inspection},
                                          {NULL, NULL}};
  hrlua_add_methods(L, HRLUA_CLIENT_MT, client_methods);
  hrlua_add_methods(L, HRLUA_LOCK_MT, lock_methods);
}
