/* Lock handles and the blocking driver: lock:acquire(), lock:release(),
 * lock:extend() run the core's own hiredis fan-out and block the calling
 * Lua state (plain Lua; OpenResty uses the sans-I/O methods of proto.c).
 * client:acquire() and the acquire options are acquire.c's.
 *
 * A lock handle keeps its client alive through the shared anchor table (see
 * hrlua.h). Finalizing a handle frees the C lock but never does network I/O:
 * a lock dropped while held is left to expire with its TTL. */
#include <string.h>

#include "hrlua.h"

const char hrlua_lock_key = 'l';

hrlua_lock *hrlua_check_lock(lua_State *L, int idx) {
  hrlua_lock *lk = hrlua_checkudata(L, idx, HRLUA_LOCK_MT, &hrlua_lock_key);
  if (lk->lock == NULL) {
    luaL_argerror(L, idx, "the lock was closed (finalized)");
  }
  return lk;
}

hrlua_lock *hrlua_check_lock_io(lua_State *L, int idx) {
  hrlua_lock *lk = hrlua_check_lock(L, idx);
  if (lk->owner->client == NULL) {
    luaL_argerror(L, idx, "the lock's client was closed (finalized)");
  }
  return lk;
}

hrlua_lock *hrlua_push_lock(lua_State *L, int client_idx,
                            const hrlua_arg *name_arg, const char *name,
                            size_t len, const hrl_lock_options *lo,
                            hrl_lock_mode mode, uint32_t permits) {
  hrlua_client *c = hrlua_check_client(L, client_idx);
  hrlua_lock *lk = hrlua_newuserdata(L, sizeof *lk);
  lk->tag = &hrlua_lock_key;
  lk->lock = NULL;
  lk->owner = c;
  lk->borrowed = false;
  lk->anchored = false;
  lk->hold = 0;
  lk->mode = mode;
  luaL_getmetatable(L, HRLUA_LOCK_MT);
  lua_setmetatable(L, -2);
  int self = lua_gettop(L);
  hrlua_getuservalue(L, client_idx);
  hrlua_setuservalue(L, self);
  char detail[HRL_DETAIL_MAX];
  hrl_status st = hrl_lock_new_mode(c->client, name, len, lo, mode, permits,
                                    &lk->lock, detail, sizeof detail);
  if (st == HRL_EINVAL) {
    /* The TTL was checked already: the name is what the core refused. */
    hrlua_argerror(L, name_arg, detail);
  } else if (st != HRL_OK) {
    luaL_error(L, "%s", hrl_strerror(st));
  }
  return lk;
}

void hrlua_push_husk(lua_State *L, int client_idx, const hrlua_lock *lk) {
  static const hrlua_arg name_arg = {2, "acquire", 1};
  hrl_lock_options lo;
  hrl_lock_options_init(lk->owner->client, &lo);
  lo.ttl_ms = hrl_lock_ttl_ms(lk->lock);
  lo.auto_renew = false;
  size_t len;
  const char *name = hrl_lock_name(lk->lock, &len);
  hrlua_push_lock(L, client_idx, &name_arg, name, len, &lo, HRL_MODE_LOCK, 0);
}

/* lock:acquire([timeout]) -> true | nil, err: takes the lock again with the
 * same handle (a fresh token). */
static int lock_acquire(lua_State *L) {
  static const hrlua_arg timeout_arg = {2, "acquire", 1};
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  int64_t wait_ms = hrlua_check_seconds(L, &timeout_arg, "timeout", 0,
                                        HRL_TTL_MAX_MS, HRLUA_DEFAULT_WAIT_MS);
  hrl_status st = hrlua_acquire(L, lk->lock, wait_ms);
  return hrlua_push_status(L, st, hrl_lock_error(lk->lock));
}

/* lock:release() -> true | nil, err ("not owned", "not held", ...). */
static int lock_release(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  hrl_status st = hrl_lock_release(lk->lock);
  return hrlua_push_status(L, st, hrl_lock_error(lk->lock));
}

/* lock:extend([ttl]) -> true | nil, err. The new TTL replaces what is left;
 * without ttl, the lock's own TTL. */
static int lock_extend(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  int64_t ttl_ms = hrlua_check_extend_ttl(L, 2, lk->owner->client);
  hrl_status st = hrl_lock_extend(lk->lock, (uint32_t)ttl_ms);
  return hrlua_push_status(L, st, hrl_lock_error(lk->lock));
}

static int lock_held(lua_State *L) {
  lua_pushboolean(L, hrl_lock_held(hrlua_check_lock(L, 1)->lock));
  return 1;
}

/* Seconds of validity left; 0 when not held. */
static int lock_validity(lua_State *L) {
  int64_t ms = hrl_lock_validity_ms(hrlua_check_lock(L, 1)->lock);
  lua_pushnumber(L, (lua_Number)ms / 1000.0);
  return 1;
}

static int lock_token(lua_State *L) {
  lua_pushstring(L, hrl_lock_token(hrlua_check_lock(L, 1)->lock));
  return 1;
}

/* The fence of the current hold (hrl_lock_fence) as a number, nil when
 * none: an integer in Lua 5.4; in 5.1 and LuaJIT a double, exact up to
 * 2^53 (fence_string() is exact for every fence). */
static int lock_fence(lua_State *L) {
  uint64_t fence = hrl_lock_fence(hrlua_check_lock(L, 1)->lock);
  if (fence == 0) {
    lua_pushnil(L);
  } else {
    lua_pushinteger(L, (lua_Integer)fence);
  }
  return 1;
}

/* The fence as a decimal string, nil when none: exact in every Lua. */
static int lock_fence_string(lua_State *L) {
  uint64_t fence = hrl_lock_fence(hrlua_check_lock(L, 1)->lock);
  if (fence == 0) {
    lua_pushnil(L);
    return 1;
  }
  hrlua_push_fence_string(L, fence);
  return 1;
}

/* A held permit's number (1 to its semaphore's permits), nil otherwise. */
static int lock_permit(lua_State *L) {
  uint32_t permit = hrl_lock_permit(hrlua_check_lock(L, 1)->lock);
  if (permit == 0) {
    lua_pushnil(L);
  } else {
    lua_pushinteger(L, (lua_Integer)permit);
  }
  return 1;
}

/* The key of a fenced lock's counter, nil when the lock is not fenced. */
static int lock_fence_key(lua_State *L) {
  size_t len;
  const char *key = hrl_lock_fence_key(hrlua_check_lock(L, 1)->lock, &len);
  if (key == NULL) {
    lua_pushnil(L);
  } else {
    lua_pushlstring(L, key, len);
  }
  return 1;
}

static int lock_name(lua_State *L) {
  size_t len;
  const char *name = hrl_lock_name(hrlua_check_lock(L, 1)->lock, &len);
  lua_pushlstring(L, name, len);
  return 1;
}

static int lock_key(lua_State *L) {
  size_t len;
  const char *key = hrl_lock_key(hrlua_check_lock(L, 1)->lock, &len);
  lua_pushlstring(L, key, len);
  return 1;
}

static int lock_ttl(lua_State *L) {
  uint32_t ms = hrl_lock_ttl_ms(hrlua_check_lock(L, 1)->lock);
  lua_pushnumber(L, (lua_Number)ms / 1000.0);
  return 1;
}

/* The detail of the last failure ("" when none). */
static int lock_error(lua_State *L) {
  lua_pushstring(L, hrl_lock_error(hrlua_check_lock(L, 1)->lock));
  return 1;
}

/* Per-master outcome counts of the last acquire, release or extend. */
static int lock_counts(lua_State *L) {
  hrl_counts n;
  hrl_lock_counts(hrlua_check_lock_io(L, 1)->lock, &n);
  lua_createtable(L, 0, 7);
  const struct {
    const char *name;
    uint32_t value;
  } fields[] = {{"masters", n.masters},
                {"quorum", n.quorum},
                {"ok", n.ok},
                {"refused", n.refused},
                {"unreachable", n.unreachable},
                {"failed", n.failed},
                {"attempts", n.attempts}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    lua_pushinteger(L, (lua_Integer)fields[i].value);
    lua_setfield(L, -2, fields[i].name);
  }
  return 1;
}

/* lock:lost() -> true, reason | false: whether the hold of this lease was
 * lost ("not owned", "expired...", "max_hold reached"). No I/O. */
static int lock_lost(lua_State *L) {
  char reason[HRL_DETAIL_MAX];
  if (hrl_lock_lost(hrlua_check_lock(L, 1)->lock, reason, sizeof reason) ==
      HRL_ELOST) {
    lua_pushboolean(L, 1);
    lua_pushstring(L, reason);
    return 2;
  }
  lua_pushboolean(L, 0);
  return 1;
}

/* lock:check() -> true | nil, "lost: <reason>". No I/O. */
static int lock_check(lua_State *L) {
  char reason[HRL_DETAIL_MAX];
  hrl_status st =
      hrl_lock_lost(hrlua_check_lock(L, 1)->lock, reason, sizeof reason);
  return hrlua_push_status(L, st, reason);
}

static int lock_gc(lua_State *L) {
  hrlua_lock *lk = luaL_checkudata(L, 1, HRLUA_LOCK_MT);
  if (!lk->borrowed) {
    /* A held lease is not released: it stops being renewed and expires
     * with its TTL; the core frees it after a renewal still out. */
    hrl_lock_free(lk->lock);
  }
  lk->lock = NULL;
  return 0;
}

static int lock_tostring(lua_State *L) {
  hrlua_lock *lk = luaL_checkudata(L, 1, HRLUA_LOCK_MT);
  if (lk->lock == NULL) {
    lua_pushliteral(L, "hiredlock.core.lock (closed)");
    return 1;
  }
  size_t len;
  const char *name = hrl_lock_name(lk->lock, &len);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "hiredlock.core.lock \"");
  luaL_addlstring(&b, name, len);
  luaL_addstring(&b, "\" (");
  if (hrl_lock_held(lk->lock)) {
    lua_pushfstring(L, "held, %f s left",
                    (lua_Number)hrl_lock_validity_ms(lk->lock) / 1000.0);
    luaL_addvalue(&b);
  } else {
    luaL_addstring(&b, "not held");
  }
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return 1;
}

void hrlua_open_lock(lua_State *L) {
  static const luaL_Reg meta[] = {
      {"__gc", lock_gc}, {"__tostring", lock_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"acquire", lock_acquire},
                                     {"release", lock_release},
                                     {"extend", lock_extend},
                                     {"held", lock_held},
                                     {"validity", lock_validity},
                                     {"token", lock_token},
                                     {"fence", lock_fence},
                                     {"fence_string", lock_fence_string},
                                     {"fence_key", lock_fence_key},
                                     {"permit", lock_permit},
                                     {"name", lock_name},
                                     {"key", lock_key},
                                     {"ttl", lock_ttl},
                                     {"error", lock_error},
                                     {"counts", lock_counts},
                                     {"lost", lock_lost},
                                     {"check", lock_check},
                                     {NULL, NULL}};
  hrlua_newmetatable(L, HRLUA_LOCK_MT, &hrlua_lock_key);
  hrlua_setfuncs(L, meta, 0);
  lua_newtable(L);
  hrlua_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}
