/* The facade's cycle with the blocking driver (plain Lua):
 *
 *   core.facade(Lock, blocking, acquire_through, release_through, deliver)
 *     -> acquire, release
 *
 * lua/hiredlock/init.lua makes its Client.acquire and Lock.release with
 * this, once. Both are C closures over the facade's own tables: acquire
 * (client, name, opts) takes the client's spare handle of the name
 * (client._spares[name]: the one the name's last acquire made) when no
 * lock object holds it and it was made with the same settings
 * (hrlua_spare_fits), else makes one (the name's spare from then on),
 * acquires on it and returns the lock object, one userdata whose members
 * are made when read and whose release frees the handle for the next
 * acquire (object.c).
 * release(lock) is Lock.release, for the tables of the other drivers
 * (init.lua's new_lock): with the blocking driver (the client's driver
 * switched back) it does what the object's release does, and leaves the
 * table the client's husk, a handle that never held anything. A client or
 * a lock of any other driver
 * (client._driver is not `blocking`) goes to acquire_through(client, name,
 * opts) or release_through(lock), Lua; after a call that left the client
 * events, deliver(client handle) hands them to the client's on_event.
 *
 * Why in C: a cycle's Lua steps (fields read and written, the spare's
 * lookup, the lock object's construction, a call through a handle's
 * metatable) cost as much as the C core's whole cycle in Lua 5.1 and 5.4;
 * done here, with the keys kept as upvalues (no string to intern per
 * call), they cost about a third. What they do is unchanged; the rules
 * stay in the core. */

#include "hrlua.h"

/* The closures' upvalues: the facade's values, then the keys they read and
 * write (interned once, here). */
enum {
  UP_LOCK_MT = 1,
  UP_BLOCKING,
  UP_ACQUIRE_THROUGH,
  UP_RELEASE_THROUGH,
  UP_DELIVER,
  UP_OBJECT_MT, /* the lock objects' (object.c) */
  K_DRIVER,
  K_HANDLE,
  K_SPARES,
  K_CLIENT,
  K_HUSK,
  K_NAME,
  UP_COUNT = K_NAME
};

static const char *const key_names[] = {"_driver", "_handle", "_spares",
                                        "_client", "_husk",   "name"};

static const hrlua_arg name_arg = {2, "acquire", 1};

/* Pushes t[key] (t at an absolute index), without metamethods. */
static void get_key(lua_State *L, int t, int key) {
  lua_pushvalue(L, lua_upvalueindex(key));
  lua_rawget(L, t);
}

/* t[key] = the value on top (popped), without metamethods. */
static void set_key(lua_State *L, int t, int key) {
  lua_pushvalue(L, lua_upvalueindex(key));
  lua_insert(L, -2);
  lua_rawset(L, t);
}

/* The lock handle at idx, or NULL (hrlua_tagged). */
static hrlua_lock *lock_at(lua_State *L, int idx) {
  return hrlua_tagged(L, idx, &hrlua_lock_key, sizeof(hrlua_lock));
}

/* The live client handle at idx; otherwise hrlua_check_client raises. */
static hrlua_client *check_client(lua_State *L, int idx) {
  hrlua_client *c =
      hrlua_tagged(L, idx, &hrlua_client_key, sizeof(hrlua_client));
  return c != NULL && c->client != NULL ? c : hrlua_check_client(L, idx);
}

/* The lock handle at idx that can talk to the masters; otherwise
 * hrlua_check_lock_io raises. */
static hrlua_lock *check_lock_io(lua_State *L, int idx) {
  hrlua_lock *lk = lock_at(L, idx);
  return lk != NULL && lk->lock != NULL && lk->owner->client != NULL
             ? lk
             : hrlua_check_lock_io(L, idx);
}

/* deliver(the client handle at idx): the client's events to on_event. */
static void deliver(lua_State *L, int client_idx) {
  lua_pushvalue(L, lua_upvalueindex(UP_DELIVER));
  lua_pushvalue(L, client_idx);
  lua_call(L, 1, 0);
}

/* Whether the table at idx goes through the blocking driver (its field at
 * key, _driver or _client._driver, is it); otherwise the call is passed to
 * the Lua function at upvalue `through` with the n arguments from 1, and
 * its results are what the caller returns (*results). */
static bool blocking(lua_State *L, int driver_idx, int through, int n,
                     int *results) {
  if (lua_rawequal(L, driver_idx, lua_upvalueindex(UP_BLOCKING))) {
    return true;
  }
  lua_settop(L, n);
  lua_pushvalue(L, lua_upvalueindex(through));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET);
  *results = lua_gettop(L);
  return false;
}

/* acquire(client, name, opts) -> lock | nil, err. Stack: 1 client, 2 name,
 * 3 opts, 4 the client handle, 5 the spares, 6 the spare, 7 the handle. */
static int facade_acquire(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 3);
  get_key(L, 1, K_DRIVER);
  int results;
  if (!blocking(L, 4, UP_ACQUIRE_THROUGH, 3, &results)) {
    return results;
  }
  lua_settop(L, 3);
  get_key(L, 1, K_HANDLE);
  hrlua_acquire_args a;
  hrlua_check_acquire_args(L, check_client(L, 4), &a);
  get_key(L, 1, K_SPARES);
  bool spares = lua_type(L, 5) == LUA_TTABLE;
  hrlua_lock *lk = NULL;
  if (spares) {
    lua_pushvalue(L, 2);
    lua_rawget(L, 5);
    hrlua_lock *sp = lock_at(L, 6);
    if (sp != NULL && sp->anchored && hrlua_spare_fits(sp, &a)) {
      lk = sp;
    }
  } else {
    lua_pushnil(L);
  }
  /* Whether the handle is the name's spare: it stays listed while held
   * (hrlua_spare_fits passes over a handle an object holds), so a cycle of
   * acquire and release on one name writes the spares no more. */
  bool listed = lk != NULL;
  if (listed) {
    lua_pushvalue(L, 6);
  } else {
    lk = hrlua_push_lock(L, 4, &name_arg, a.name, a.len, &a.lo, a.mode,
                         a.permits);
    hrlua_object_anchor(L, lk, 7, 1);
  }
  hrl_status st = hrlua_acquire(L, lk->lock, a.wait_ms);
  /* A new handle of a plain lock is the name's spare from now on, and a
   * failed acquire's of any kind, for the next try; never a lease's, whose
   * renewer may still be on it after its release. */
  if (spares && !listed && !a.lo.auto_renew &&
      (st != HRL_OK || a.mode == HRL_MODE_LOCK)) {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 7);
    lua_rawset(L, 5);
  }
  if (st != HRL_OK) {
    int n = hrlua_push_status(L, st, hrl_lock_error(lk->lock));
    deliver(L, 4);
    return n;
  }
  hrlua_object_push(L, lk, 7, lua_upvalueindex(UP_OBJECT_MT), &a);
  if (hrl_client_events_pending(a.client->client)) {
    deliver(L, 4);
  }
  return 1;
}

/* Pushes the client's husk (stack: 1 lock, 2 client, 4 the lock's handle
 * lk), made on first use: a handle of the client that never holds
 * anything, so it answers as a released handle does. */
static void push_husk(lua_State *L, const hrlua_lock *lk) {
  get_key(L, 2, K_HUSK);
  if (!lua_isnil(L, -1)) {
    return;
  }
  lua_pop(L, 1);
  get_key(L, 2, K_HANDLE);
  int client_idx = lua_gettop(L);
  hrlua_push_husk(L, client_idx, lk);
  lua_remove(L, client_idx);
  lua_pushvalue(L, -1);
  set_key(L, 2, K_HUSK);
}

/* release(lock) -> true | nil, err. Stack: 1 lock, 2 client, 3 driver,
 * 4 the lock's handle. */
static int facade_release(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  get_key(L, 1, K_CLIENT);
  if (lua_type(L, 2) != LUA_TTABLE) {
    return luaL_argerror(L, 1, "not a hiredlock lock (no client)");
  }
  get_key(L, 2, K_DRIVER);
  int results;
  if (!blocking(L, 3, UP_RELEASE_THROUGH, 1, &results)) {
    return results;
  }
  get_key(L, 1, K_HANDLE);
  hrlua_lock *lk = check_lock_io(L, 4);
  hrl_status st = hrl_lock_release(lk->lock);
  bool queued = hrl_client_events_pending(lk->owner->client);
  /* A lease (its object's _lease) is the handle's own option: read there,
   * without a field lookup. */
  hrl_lock_options held;
  hrl_lock_get_options(lk->lock, &held);
  bool lease = held.auto_renew;
  if (st == HRL_OK && !lease) {
    /* The hold is over and this object can start no other (it has no
     * acquire): its handle goes back to the client for the next acquire
     * of the name, and the object keeps the husk, which answers all it is
     * asked from now on as its own handle would (release and extend:
     * "not held"; held: false; validity: 0; lost: false), with no way to
     * reach the next hold. */
    push_husk(L, lk);
    set_key(L, 1, K_HANDLE);
    get_key(L, 1, K_NAME); /* a field the caller may have changed */
    get_key(L, 2, K_SPARES);
    /* nil and NaN are no keys */
    if (!lua_isnil(L, -2) && lua_rawequal(L, -2, -2) &&
        lua_type(L, -1) == LUA_TTABLE) {
      lua_pushvalue(L, -2);
      lua_pushvalue(L, 4);
      lua_rawset(L, -3);
    }
    lua_pop(L, 2);
  }
  int n = hrlua_push_status(L, st, hrl_lock_error(lk->lock));
  if (queued) {
    get_key(L, 2, K_HANDLE);
    deliver(L, lua_gettop(L));
    lua_pop(L, 1);
  }
  return n;
}

/* core.acquire_on(client, name, opts, spare)
 *   -> lock handle, token [, queued [, fence, fence_string, lease]]
 *    | nil, err [, the handle, holding nothing]
 * The same acquire on the core handles alone, for LuaJIT's facade (see the
 * top of the file): acquire's checks and words, on spare (a handle of this
 * client holding nothing, nil when none) when it fits, else on a new
 * handle; what the lock object keeps, and whether the client has events
 * queued (true; nil or false when not). */
static int acquire_on(lua_State *L) {
  hrlua_acquire_args a;
  hrlua_check_acquire_args(L, check_client(L, 1), &a);
  lua_settop(L, 4);
  /* Anything but a lock handle is no spare: a new handle is made. */
  hrlua_lock *sp = lock_at(L, 4);
  hrlua_lock *lk = NULL;
  if (sp != NULL && hrlua_spare_fits(sp, &a)) {
    lk = sp;
    lua_pushvalue(L, 4);
  } else {
    lk = hrlua_push_lock(L, 1, &name_arg, a.name, a.len, &a.lo, a.mode,
                         a.permits);
  }
  int self = lua_gettop(L);
  hrl_status st = hrlua_acquire(L, lk->lock, a.wait_ms);
  if (st != HRL_OK) {
    int n = hrlua_push_status(L, st, hrl_lock_error(lk->lock));
    if (a.lo.auto_renew) {
      return n; /* never a spare */
    }
    lua_pushvalue(L, self);
    return n + 1;
  }
  lua_pushlstring(L, hrl_lock_token(lk->lock), HRL_TOKEN_LEN);
  bool queued = hrl_client_events_pending(a.client->client);
  if (!a.lo.fenced && !a.lo.auto_renew) {
    if (!queued) {
      return 2;
    }
    lua_pushboolean(L, 1);
    return 3;
  }
  lua_pushboolean(L, queued);
  /* A fence is read now, while held: the handle forgets it after. */
  uint64_t fence = hrl_lock_fence(lk->lock);
  if (fence == 0) {
    lua_pushnil(L);
    lua_pushnil(L);
  } else {
    lua_pushinteger(L, (lua_Integer)fence);
    hrlua_push_fence_string(L, fence);
  }
  lua_pushboolean(L, a.lo.auto_renew);
  return 6;
}

/* core.release_on(lock handle) -> release()'s results, then whether the
 * lock's client has events queued: true, nil, true | nil, err, true when it
 * has (LuaJIT's facade's release with the blocking driver). */
static int release_on(lua_State *L) {
  hrlua_lock *lk = check_lock_io(L, 1);
  hrl_status st = hrl_lock_release(lk->lock);
  int n = hrlua_push_status(L, st, hrl_lock_error(lk->lock));
  if (!hrl_client_events_pending(lk->owner->client)) {
    return n;
  }
  if (n == 1) {
    lua_pushnil(L);
  }
  lua_pushboolean(L, 1);
  return 3;
}

/* LuaJIT's facade calls this through the FFI (core.ffi_release, its
 * address): a compiled trace calls it in place, where a call of release_on
 * (a lua_CFunction, which the JIT cannot compile) leaves the trace for the
 * interpreter and starts another after it (340 instructions a cycle).
 * ud is a lock handle (the caller checked its metatable). Its release's
 * status, plus 256 when the client has events queued; -1, with nothing
 * done, when the handle or its client was finalized: release_on then
 * raises what the method raises. */
int hrlua_ffi_release(void *ud) {
  hrlua_lock *lk = ud;
  if (lk == NULL || lk->tag != &hrlua_lock_key || lk->lock == NULL ||
      lk->owner->client == NULL) {
    return -1;
  }
  hrl_status st = hrl_lock_release(lk->lock);
  return (int)st + (hrl_client_events_pending(lk->owner->client) ? 256 : 0);
}

/* core.release_status(lock handle, code) -> release_on's results for the
 * code hrlua_ffi_release returned (no I/O): true, nil, true | nil, err,
 * true when the client has events queued. */
static int release_status(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock(L, 1);
  int code = (int)luaL_checkinteger(L, 2);
  int n =
      hrlua_push_status(L, (hrl_status)(code & 255), hrl_lock_error(lk->lock));
  if ((code & 256) == 0) {
    return n;
  }
  if (n == 1) {
    lua_pushnil(L);
  }
  lua_pushboolean(L, 1);
  return 3;
}

/* core.facade(Lock, blocking, acquire_through, release_through, deliver)
 * -> acquire, release: see the top of the file. */
static int facade_make(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  luaL_checktype(L, 4, LUA_TFUNCTION);
  luaL_checktype(L, 5, LUA_TFUNCTION);
  lua_settop(L, 5);
  hrlua_object_metatable(L, UP_LOCK_MT, UP_BLOCKING, UP_RELEASE_THROUGH,
                         UP_DELIVER);
  for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
    lua_pushstring(L, key_names[i]);
  }
  for (int i = 1; i <= UP_COUNT; i++) {
    lua_pushvalue(L, i);
  }
  lua_pushcclosure(L, facade_acquire, UP_COUNT);
  for (int i = 1; i <= UP_COUNT; i++) {
    lua_pushvalue(L, i);
  }
  lua_pushcclosure(L, facade_release, UP_COUNT);
  return 2;
}

void hrlua_open_facade(lua_State *L) {
  lua_pushcfunction(L, facade_make);
  lua_setfield(L, -2, "facade");
  lua_pushcfunction(L, acquire_on);
  lua_setfield(L, -2, "acquire_on");
  lua_pushcfunction(L, release_on);
  lua_setfield(L, -2, "release_on");
  lua_pushcfunction(L, release_status);
  lua_setfield(L, -2, "release_status");
  /* For LuaJIT's FFI: hrlua_ffi_release's address, and the lock handles'
   * metatable, which tells the caller a value is one. */
  lua_pushlightuserdata(L, (void *)hrlua_ffi_release);
  lua_setfield(L, -2, "ffi_release");
  lua_pushlightuserdata(L, (void *)&hrlua_lock_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_setfield(L, -2, "lock_metatable");
}
