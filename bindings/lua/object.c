/* The facade's lock object with the blocking driver: one userdata per
 * acquire, with no finalizer and nothing else allocated for it.
 *
 * What a plain Lua table per lock cost (its hash part, a 32-character
 * token string interned per acquire, the fields copied in and read back,
 * a husk swapped in at release) was most of the facade's cycle in Lua 5.1
 * and 5.4. The object keeps the hold's own values in its block (the token's
 * bytes, a fence, a permit's number, whether it is a lease) and makes a
 * member's value only when it is read (docs/LUA-API.md, "The lock object",
 * promises the members, not a table). Its uservalue is its handle's anchor,
 * {[A_OWNER] = the client handle (the core's anchor, at 1), [A_HANDLE] =
 * the core lock handle, [A_CLIENT] = the facade's client table, [A_NAME] =
 * the name}, made once per handle and shared by every object the handle
 * serves: it keeps the handle and the client alive as long as the object.
 * Its entries are an array (read by index, where light userdata keys cost
 * a hash lookup each, three or four per cycle).
 *
 * The handle serves the next acquire of its name once released (it stays
 * the client's spare while held: facade.c, hrlua_spare_fits); an
 * object is the handle's current one while their hold numbers match, and
 * once over it answers through the client's husk, as the table did
 * (_handle is the husk: release and extend "not held", held false, ...).
 *
 * Fields a caller sets are the caller's, as on a table: the first one gives
 * the object a table of its own (holding the anchor under a light userdata
 * key no Lua code can write), read before any member, so
 * a field set shadows the member of its name (_handle too: release uses
 * it, and raises when it is no lock handle). The methods are the facade's
 * Lock table's (lua/hiredlock/init.lua), release this file's. */
#include <string.h>

#include "hrlua.h"

/* The anchor's entries. */
enum { A_OWNER = 1, A_HANDLE, A_CLIENT, A_NAME, A_COUNT = A_NAME };

/* The anchor's key in an object's own table: its address. */
static const char key_anchor = 'a';

/* The members made on reading; what else __index finds is the Lock
 * table's. */
enum member {
  M_NAME = 1,
  M_TOKEN,
  M_FENCE,
  M_FENCE_STRING,
  M_PERMIT,
  M_HANDLE,
  M_CLIENT,
  M_LEASE
};
static const char *const member_names[] = {"name",         "token",  "fence",
                                           "fence_string", "permit", "_handle",
                                           "_client",      "_lease"};

/* The objects' tag (hrlua_tagged). */
static const char object_tag = 'O';

typedef struct hrlua_object {
  const void *tag;    /* &object_tag */
  hrlua_lock *handle; /* the anchor's HANDLE */
  uint32_t hold;      /* handle->hold when acquired */
  uint32_t permit;    /* a permit's number, 0 for any other lock */
  uint64_t fence;     /* a fenced hold's fence, 0 when none */
  bool lease;
  bool own_table; /* a caller set a field: the uservalue is its own */
  char token[HRL_TOKEN_LEN];
} hrlua_object;

/* The upvalues of __index and release. */
enum {
  UP_OBJECT_MT = 1,
  UP_MEMBERS, /* member name -> enum member, or release */
  UP_LOCK,    /* the facade's Lock table: the methods */
  UP_LOCK_MT, /* the core lock handles' metatable */
  UP_BLOCKING,
  UP_THROUGH,
  UP_DELIVER,
  K_DRIVER,
  K_HUSK,
  K_HANDLE,
  UP_COUNT = K_HANDLE
};

void hrlua_object_anchor(lua_State *L, hrlua_lock *lk, int handle_idx,
                         int client_idx) {
  if (lk->anchored) {
    return;
  }
  hrlua_getuservalue(L, handle_idx); /* the client's anchor: {client} */
  lua_createtable(L, A_COUNT, 0);
  int anchor = lua_gettop(L);
  lua_rawgeti(L, anchor - 1, 1);
  lua_rawseti(L, anchor, A_OWNER);
  lua_pushvalue(L, handle_idx);
  lua_rawseti(L, anchor, A_HANDLE);
  lua_pushvalue(L, client_idx);
  lua_rawseti(L, anchor, A_CLIENT);
  /* The name as a Lua string, made once: the object's name member. */
  size_t len;
  const char *name = hrl_lock_name(lk->lock, &len);
  lua_pushlstring(L, name, len);
  lua_rawseti(L, anchor, A_NAME);
  hrlua_setuservalue(L, handle_idx);
  lua_pop(L, 1);
  lk->anchored = true;
}

void hrlua_object_push(lua_State *L, hrlua_lock *lk, int handle_idx, int mt_idx,
                       const hrlua_acquire_args *a) {
  hrlua_object *o = hrlua_newuserdata(L, sizeof *o);
  o->tag = &object_tag;
  o->handle = lk;
  o->hold = ++lk->hold;
  o->lease = a->lo.auto_renew;
  o->own_table = false;
  /* Read now, while held: the handle forgets them after. */
  o->fence = a->lo.fenced ? hrl_lock_fence(lk->lock) : 0;
  o->permit = a->mode == HRL_MODE_PERMIT ? hrl_lock_permit(lk->lock) : 0;
  memcpy(o->token, hrl_lock_token(lk->lock), HRL_TOKEN_LEN);
  lua_pushvalue(L, mt_idx);
  lua_setmetatable(L, -2);
  hrlua_getuservalue(L, handle_idx);
  hrlua_setuservalue(L, -2);
}

/* The object at idx, or NULL. */
static hrlua_object *to_object(lua_State *L, int idx) {
  return hrlua_tagged(L, idx, &object_tag, sizeof(hrlua_object));
}

/* Pushes the anchor of the object o at idx (its uservalue, or what its own
 * table holds). */
static void push_anchor(lua_State *L, const hrlua_object *o, int idx) {
  hrlua_getuservalue(L, idx);
  if (o->own_table) {
    lua_pushlightuserdata(L, (void *)&key_anchor);
    lua_rawget(L, -2);
    lua_remove(L, -2);
  }
}

static hrlua_object *check_object(lua_State *L, int idx) {
  hrlua_object *o = to_object(L, idx);
  if (o == NULL) {
    luaL_argerror(L, idx, "hiredlock lock expected");
  }
  return o;
}

/* Pushes the client's husk (a handle of the client that never holds
 * anything, made on first use, kept as client._husk) for lk, the handle
 * of an object (anchor at anchor_idx, client table at client_idx). */
static void push_husk(lua_State *L, const hrlua_lock *lk, int anchor_idx,
                      int client_idx) {
  lua_pushvalue(L, lua_upvalueindex(K_HUSK));
  lua_rawget(L, client_idx);
  if (!lua_isnil(L, -1)) {
    return;
  }
  lua_pop(L, 1);
  lua_rawgeti(L, anchor_idx, A_OWNER);
  int owner = lua_gettop(L);
  hrlua_push_husk(L, owner, lk);
  lua_remove(L, owner);
  lua_pushvalue(L, lua_upvalueindex(K_HUSK));
  lua_pushvalue(L, -2);
  lua_rawset(L, client_idx);
}

/* Pushes the handle the object o at obj_idx answers through (its anchor
 * at anchor_idx, the client table at client_idx): a _handle the caller
 * set, else its own while the hold is its, else the client's husk. */
static void push_handle(lua_State *L, const hrlua_object *o, int obj_idx,
                        int anchor_idx, int client_idx) {
  if (o->own_table) {
    hrlua_getuservalue(L, obj_idx);
    lua_pushvalue(L, lua_upvalueindex(K_HANDLE));
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (!lua_isnil(L, -1)) {
      return;
    }
    lua_pop(L, 1);
  }
  /* A finalized handle (lock NULL), or one whose client was finalized (a
   * husk can no longer be made), answers for itself: "closed". */
  if (o->hold == o->handle->hold || o->handle->lock == NULL ||
      o->handle->owner->client == NULL) {
    lua_rawgeti(L, anchor_idx, A_HANDLE);
  } else {
    push_husk(L, o->handle, anchor_idx, client_idx);
  }
}

/* __index(object, key): a field the caller set, a member, a method. */
static int object_index(lua_State *L) {
  /* Lua calls it with an object only: __metatable keeps the metatable, and
   * with it this function, from Lua code. */
  hrlua_object *o = lua_touserdata(L, 1);
  lua_settop(L, 2);
  if (o->own_table) {
    hrlua_getuservalue(L, 1);
    lua_pushvalue(L, 2);
    lua_rawget(L, 3);
    if (!lua_isnil(L, -1)) {
      return 1;
    }
    lua_settop(L, 2);
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(UP_MEMBERS));
  if (lua_type(L, -1) != LUA_TNUMBER) {
    if (lua_isnil(L, -1)) { /* a method of Lock's, or nothing */
      lua_pushvalue(L, 2);
      lua_rawget(L, lua_upvalueindex(UP_LOCK));
    }
    return 1;
  }
  switch ((enum member)lua_tointeger(L, -1)) {
  case M_NAME: /* the anchor's: the handle may be finalized */
    push_anchor(L, o, 1);
    lua_rawgeti(L, -1, A_NAME);
    return 1;
  case M_TOKEN:
    lua_pushlstring(L, o->token, HRL_TOKEN_LEN);
    return 1;
  case M_FENCE:
    if (o->fence == 0) {
      lua_pushnil(L);
    } else {
      /* An integer in Lua 5.4; a double in 5.1 and LuaJIT, exact to 2^53:
       * fence_string is exact for every fence. */
      lua_pushinteger(L, (lua_Integer)o->fence);
    }
    return 1;
  case M_FENCE_STRING:
    if (o->fence == 0) {
      lua_pushnil(L);
    } else {
      hrlua_push_fence_string(L, o->fence);
    }
    return 1;
  case M_PERMIT:
    if (o->permit == 0) {
      lua_pushnil(L);
    } else {
      lua_pushinteger(L, (lua_Integer)o->permit);
    }
    return 1;
  case M_LEASE:
    if (o->lease) {
      lua_pushboolean(L, 1);
    } else {
      lua_pushnil(L);
    }
    return 1;
  case M_HANDLE:
  case M_CLIENT:
    break;
  }
  bool client = lua_tointeger(L, -1) == M_CLIENT;
  push_anchor(L, o, 1);
  int anchor = lua_gettop(L);
  lua_rawgeti(L, anchor, A_CLIENT);
  if (!client) {
    push_handle(L, o, 1, anchor, anchor + 1);
  }
  return 1;
}

/* __newindex(object, key, value): the caller's field, on the object's own
 * table (made on the first). */
static int object_newindex(lua_State *L) {
  hrlua_object *o = lua_touserdata(L, 1); /* an object (see __index) */
  lua_settop(L, 3);
  hrlua_getuservalue(L, 1);
  if (!o->own_table) {
    lua_createtable(L, 0, 2);
    lua_pushlightuserdata(L, (void *)&key_anchor);
    lua_pushvalue(L, 4);
    lua_rawset(L, -3);
    lua_pushvalue(L, -1);
    hrlua_setuservalue(L, 1);
    o->own_table = true;
  }
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_rawset(L, -3);
  return 0;
}

/* lock:release() -> true | nil, err, with the blocking driver: the core
 * handle's release; once the hold is over (and unless it is a lease, whose
 * renewer may still be on the handle) the handle is free for the next
 * acquire of its name, and the object is over. Stack:
 * 1 object, 2 anchor, 3 client table, 4 driver, 5 handle. */
static int object_release(lua_State *L) {
  hrlua_object *o = check_object(L, 1);
  lua_settop(L, 1);
  push_anchor(L, o, 1);
  lua_rawgeti(L, 2, A_CLIENT);
  lua_pushvalue(L, lua_upvalueindex(K_DRIVER));
  lua_rawget(L, 3);
  if (!lua_rawequal(L, 4, lua_upvalueindex(UP_BLOCKING))) {
    lua_settop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(UP_THROUGH));
    lua_insert(L, 1);
    lua_call(L, 1, LUA_MULTRET);
    return lua_gettop(L);
  }
  push_handle(L, o, 1, 2, 3);
  hrlua_lock *lk = lua_touserdata(L, 5);
  /* The object's own handle needs no type check (the anchor is out of
   * Lua's reach); a _handle the caller set, or the husk, gets one. */
  bool is_handle = lk == o->handle;
  if (!is_handle && lk != NULL && lua_getmetatable(L, 5)) {
    is_handle = lua_rawequal(L, -1, lua_upvalueindex(UP_LOCK_MT));
  }
  lua_settop(L, 5);
  if (!is_handle || lk->lock == NULL || lk->owner->client == NULL) {
    lk = hrlua_check_lock_io(L, 5); /* raises */
  }
  hrl_status st = hrl_lock_release(lk->lock);
  bool queued = hrl_client_events_pending(lk->owner->client);
  if (st == HRL_OK && lk == o->handle && o->hold == lk->hold && !o->lease) {
    /* This object is over: from now on it answers through the client's
     * husk, made when first asked for (push_handle), not here: a cycle
     * that never reads the released object pays no lookup for it. The
     * hold number even again, the handle serves the next acquire of its
     * name from the spares, where the acquire left it (facade.c). */
    lk->hold++;
  }
  int n = hrlua_push_status(L, st, hrl_lock_error(lk->lock));
  if (queued) {
    lua_pushvalue(L, lua_upvalueindex(UP_DELIVER));
    lua_rawgeti(L, 2, A_OWNER);
    lua_call(L, 1, 0);
  }
  return n;
}

void hrlua_object_metatable(lua_State *L, int lock_idx, int blocking_idx,
                            int through_idx, int deliver_idx) {
  lua_createtable(L, 0, 4);
  int mt = lua_gettop(L);
  lua_pushvalue(L, mt);
  lua_createtable(L, 0, 9);
  int members = mt + 2;
  for (size_t i = 0; i < sizeof member_names / sizeof member_names[0]; i++) {
    lua_pushinteger(L, (lua_Integer)i + 1);
    lua_setfield(L, members, member_names[i]);
  }
  lua_pushvalue(L, lock_idx);
  lua_pushlightuserdata(L, (void *)&hrlua_lock_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, blocking_idx);
  lua_pushvalue(L, through_idx);
  lua_pushvalue(L, deliver_idx);
  lua_pushliteral(L, "_driver");
  lua_pushliteral(L, "_husk");
  lua_pushliteral(L, "_handle");
  /* release, then __index, each over the same upvalues */
  for (int i = 0; i < UP_COUNT; i++) {
    lua_pushvalue(L, mt + 1 + i);
  }
  lua_pushcclosure(L, object_release, UP_COUNT);
  lua_setfield(L, members, "release");
  lua_pushcclosure(L, object_index, UP_COUNT);
  lua_setfield(L, mt, "__index");
  lua_pushcfunction(L, object_newindex);
  lua_setfield(L, mt, "__newindex");
  /* getmetatable(lock) is Lock, as for the table of other drivers. */
  lua_pushvalue(L, lock_idx);
  lua_setfield(L, mt, "__metatable");
  /* tostring and <close> are the Lock table's, read through __index. */
  static const char *const from_lock[] = {"__tostring", "__close"};
  for (size_t i = 0; i < 2; i++) {
    lua_getfield(L, lock_idx, from_lock[i]);
    lua_setfield(L, mt, from_lock[i]);
  }
}
