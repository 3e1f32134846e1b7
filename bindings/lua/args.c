/* Argument checks shared by the methods. Wrong types and values raise
 * through hrlua_argerror (programmer errors, luasocket's ltn013 style); the
 * range rules and their messages come from the core (hrl_seconds_to_ms,
 * hrl_lock_new, hrl_client_new), so Lua and Python read the same. Types are
 * strict: a number is not a name and "5" is not a number of seconds. */
#include <string.h>

#include "hrlua.h"

int hrlua_argerror(lua_State *L, int arg, const char *extramsg) {
  lua_Debug ar;
  const char *name = "?";
  if (lua_getstack(L, 0, &ar)) {
    lua_getinfo(L, "n", &ar);
    if (ar.namewhat != NULL && strcmp(ar.namewhat, "method") == 0) {
      arg--; /* self is not an argument the caller wrote */
    }
    if (ar.name != NULL) {
      name = ar.name;
    }
  }
  if (arg == 0) {
    lua_pushfstring(L, "calling '%s' on bad self (%s)", name, extramsg);
  } else {
    lua_pushfstring(L, "bad argument #%d to '%s' (%s)", arg, name, extramsg);
  }
  return lua_error(L);
}

const char *hrlua_check_name(lua_State *L, int arg, size_t *len) {
  if (lua_type(L, arg) != LUA_TSTRING) {
    hrlua_argerror(L, arg,
                   lua_pushfstring(L, "name must be a string, got %s",
                                   luaL_typename(L, arg)));
  }
  return lua_tolstring(L, arg, len);
}

/* The number at idx as milliseconds; errors name argument arg. */
static int64_t seconds_at(lua_State *L, int idx, int arg, const char *what,
                          int64_t min_ms, int64_t max_ms) {
  if (lua_type(L, idx) != LUA_TNUMBER) {
    hrlua_argerror(L, arg,
                   lua_pushfstring(L, "%s must be a number of seconds, got %s",
                                   what, luaL_typename(L, idx)));
  }
  int64_t ms = 0;
  char detail[HRL_DETAIL_MAX];
  if (hrl_seconds_to_ms(what, (double)lua_tonumber(L, idx), min_ms, max_ms, &ms,
                        detail, sizeof detail) != HRL_OK) {
    hrlua_argerror(L, arg, detail);
  }
  return ms;
}

int64_t hrlua_check_seconds(lua_State *L, int arg, const char *what,
                            int64_t min_ms, int64_t max_ms, int64_t def_ms) {
  if (lua_isnoneornil(L, arg) && def_ms >= 0) {
    return def_ms;
  }
  return seconds_at(L, arg, arg, what, min_ms, max_ms);
}

/* "ttl, timeout" for messages about unknown options. */
static const char *known_list(lua_State *L, const char *const known[]) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; known[i] != NULL; i++) {
    if (i > 0) {
      luaL_addstring(&b, ", ");
    }
    luaL_addstring(&b, known[i]);
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

static int is_known(const char *key, const char *const known[]) {
  for (int i = 0; known[i] != NULL; i++) {
    if (strcmp(key, known[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

int hrlua_check_options(lua_State *L, int arg, const char *const known[]) {
  if (lua_isnoneornil(L, arg)) {
    return 0;
  }
  if (lua_type(L, arg) != LUA_TTABLE) {
    hrlua_argerror(L, arg,
                   lua_pushfstring(L, "options must be a table, got %s",
                                   luaL_typename(L, arg)));
  }
  lua_pushnil(L);
  while (lua_next(L, arg) != 0) {
    lua_pop(L, 1); /* the value */
    if (lua_type(L, -1) != LUA_TSTRING) {
      const char *type = luaL_typename(L, -1);
      const char *list = known_list(L, known);
      hrlua_argerror(L, arg,
                     lua_pushfstring(L, "unknown option: a %s key (known: %s)",
                                     type, list));
    }
    const char *key = lua_tostring(L, -1);
    if (strlen(key) != hrlua_rawlen(L, -1) || !is_known(key, known)) {
      const char *list = known_list(L, known);
      hrlua_argerror(
          L, arg,
          lua_pushfstring(L, "unknown option '%s' (known: %s)", key, list));
    }
  }
  return 1;
}

void hrlua_opt_seconds(lua_State *L, int arg, const char *name, int64_t min_ms,
                       int64_t max_ms, int64_t *ms) {
  if (lua_isnoneornil(L, arg)) {
    return;
  }
  lua_getfield(L, arg, name);
  if (!lua_isnil(L, -1)) {
    *ms = seconds_at(L, lua_gettop(L), arg, name, min_ms, max_ms);
  }
  lua_pop(L, 1);
}
