/* Lua 5.1 / LuaJIT shims for the 5.2+ API used by the module (see compat.h).
 * Only the uservalue needs care: 5.1 keeps it as the userdata's environment,
 * which must be a table, so every uservalue here is a table. */
#include "compat.h"

size_t hrlua_rawlen(lua_State *L, int idx) {
#if LUA_VERSION_NUM < 502
  return lua_objlen(L, idx);
#else
  return (size_t)lua_rawlen(L, idx);
#endif
}

void hrlua_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
#if LUA_VERSION_NUM < 502
  luaL_checkstack(L, nup + 1, "too many upvalues");
  for (; l->name != NULL; l++) {
    for (int i = 0; i < nup; i++) {
      lua_pushvalue(L, -nup);
    }
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
#else
  luaL_setfuncs(L, l, nup);
#endif
}

void *hrlua_testudata(lua_State *L, int idx, const char *tname) {
#if LUA_VERSION_NUM < 502
  void *p = lua_touserdata(L, idx);
  if (p == NULL || !lua_getmetatable(L, idx)) {
    return NULL;
  }
  luaL_getmetatable(L, tname);
  int same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same ? p : NULL;
#else
  return luaL_testudata(L, idx, tname);
#endif
}

void hrlua_newmetatable(lua_State *L, const char *tname, const void *key) {
  luaL_newmetatable(L, tname);
  lua_pushlightuserdata(L, (void *)key);
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

void *hrlua_checkudata(lua_State *L, int idx, const char *tname,
                       const void *key) {
  void *p = lua_touserdata(L, idx);
  if (p != NULL && lua_getmetatable(L, idx)) {
    lua_pushlightuserdata(L, (void *)key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (same) {
      return p;
    }
  }
  return luaL_checkudata(L, idx, tname); /* raises */
}

void *hrlua_newuserdata(lua_State *L, size_t size) {
#if LUA_VERSION_NUM >= 504
  return lua_newuserdatauv(L, size, 1);
#else
  return lua_newuserdata(L, size);
#endif
}

void hrlua_setuservalue(lua_State *L, int idx) {
#if LUA_VERSION_NUM >= 504
  lua_setiuservalue(L, idx, 1);
#elif LUA_VERSION_NUM >= 502
  lua_setuservalue(L, idx);
#else
  lua_setfenv(L, idx);
#endif
}

void hrlua_getuservalue(lua_State *L, int idx) {
#if LUA_VERSION_NUM >= 504
  lua_getiuservalue(L, idx, 1);
#elif LUA_VERSION_NUM >= 502
  lua_getuservalue(L, idx);
#else
  lua_getfenv(L, idx);
#endif
}
