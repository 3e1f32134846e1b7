/* Argument checks shared by the methods. Wrong types and values raise
 * (programmer errors, luasocket's ltn013 style) with a message that names
 * the function the user called and the argument's place in that call, as
 * the entry point states them (hrlua_arg): never guessed from the stack,
 * so the words are the same whichever driver (plain Lua, OpenResty) made
 * the call. The range rules and their messages come from the core (its
 * option table, hrl_seconds_to_ms, hrl_lock_new, hrl_client_new), so Lua
 * and Python read the same. Types are strict: a number is not a name and
 * "5" is not a number of seconds. */
#include <string.h>

#include "hrlua.h"

int hrlua_argerror(lua_State *L, const hrlua_arg *arg, const char *msg) {
  lua_pushfstring(L, "bad argument #%d to '%s' (%s)", arg->pos, arg->func, msg);
  return lua_error(L);
}

const char *hrlua_check_name(lua_State *L, const hrlua_arg *arg, size_t *len) {
  if (lua_type(L, arg->idx) != LUA_TSTRING) {
    hrlua_argerror(L, arg,
                   lua_pushfstring(L, "name must be a string, got %s",
                                   luaL_typename(L, arg->idx)));
  }
  return lua_tolstring(L, arg->idx, len);
}

/* The number at idx as seconds, for the message about `what`. */
static double seconds_at(lua_State *L, int idx, const hrlua_arg *arg,
                         const char *what) {
  if (lua_type(L, idx) != LUA_TNUMBER) {
    hrlua_argerror(L, arg,
                   lua_pushfstring(L, "%s must be a number of seconds, got %s",
                                   what, luaL_typename(L, idx)));
  }
  return (double)lua_tonumber(L, idx);
}

int64_t hrlua_check_seconds(lua_State *L, const hrlua_arg *arg,
                            const char *what, int64_t min_ms, int64_t max_ms,
                            int64_t def_ms) {
  if (lua_isnoneornil(L, arg->idx) && def_ms >= 0) {
    return def_ms;
  }
  double seconds = seconds_at(L, arg->idx, arg, what);
  int64_t ms = 0;
  char detail[HRL_DETAIL_MAX];
  if (hrl_seconds_to_ms(what, seconds, min_ms, max_ms, &ms, detail,
                        sizeof detail) != HRL_OK) {
    hrlua_argerror(L, arg, detail);
  }
  return ms;
}

int64_t hrlua_check_ttl(lua_State *L, const hrlua_arg *arg,
                        const hrl_client *client, int64_t def_ms) {
  if (lua_isnoneornil(L, arg->idx) && def_ms >= 0) {
    return def_ms;
  }
  double seconds = seconds_at(L, arg->idx, arg, "ttl");
  int64_t ms = 0;
  char detail[HRL_DETAIL_MAX];
  if (hrl_client_ttl_seconds(client, seconds, &ms, detail, sizeof detail) !=
      HRL_OK) {
    hrlua_argerror(L, arg, detail);
  }
  return ms;
}

int64_t hrlua_check_extend_ttl(lua_State *L, int idx,
                               const hrl_client *client) {
  hrlua_arg arg = {idx, "extend", 1};
  /* 0 asks the core for the lock's own TTL; it is never a user value. */
  return hrlua_check_ttl(L, &arg, client, 0);
}

bool hrlua_client_option(const hrl_option *opt) {
  return opt->scope == HRL_SCOPE_CLIENT || opt->scope == HRL_SCOPE_LOCK_DEFAULT;
}

bool hrlua_lock_option(const hrl_option *opt) {
  return opt->scope == HRL_SCOPE_LOCK || opt->scope == HRL_SCOPE_LOCK_DEFAULT;
}

/* Whether key is one of the table's options accept() takes, or in extra. */
static int is_known(const char *key, hrlua_accept_fn accept,
                    const char *const extra[]) {
  const hrl_option *opt = hrl_option_find(key);
  if (opt != NULL && accept(opt)) {
    return 1;
  }
  for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
    if (strcmp(key, extra[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

/* "ttl, timeout" for messages about unknown options: the table's options
 * accept() takes, then extra. */
static const char *known_list(lua_State *L, hrlua_accept_fn accept,
                              const char *const extra[]) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  const char *sep = "";
  for (size_t i = 0; i < count; i++) {
    if (accept(&table[i])) {
      luaL_addstring(&b, sep);
      luaL_addstring(&b, table[i].name);
      sep = ", ";
    }
  }
  for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
    luaL_addstring(&b, sep);
    luaL_addstring(&b, extra[i]);
    sep = ", ";
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

int hrlua_check_options(lua_State *L, const hrlua_arg *arg,
                        hrlua_accept_fn accept, const char *const extra[]) {
  int idx = arg->idx;
  if (lua_isnoneornil(L, idx)) {
    return 0;
  }
  if (lua_type(L, idx) != LUA_TTABLE) {
    hrlua_argerror(L, arg,
                   lua_pushfstring(L, "options must be a table, got %s",
                                   luaL_typename(L, idx)));
  }
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1); /* the value */
    if (lua_type(L, -1) != LUA_TSTRING) {
      const char *type = luaL_typename(L, -1);
      const char *list = known_list(L, accept, extra);
      hrlua_argerror(L, arg,
                     lua_pushfstring(L, "unknown option: a %s key (known: %s)",
                                     type, list));
    }
    const char *key = lua_tostring(L, -1);
    if (strlen(key) != hrlua_rawlen(L, -1) || !is_known(key, accept, extra)) {
      const char *list = known_list(L, accept, extra);
      hrlua_argerror(
          L, arg,
          lua_pushfstring(L, "unknown option '%s' (known: %s)", key, list));
    }
  }
  return 1;
}

void hrlua_opt_seconds(lua_State *L, const hrlua_arg *arg, const char *name,
                       int64_t min_ms, int64_t max_ms, int64_t *ms) {
  if (lua_isnoneornil(L, arg->idx)) {
    return;
  }
  lua_getfield(L, arg->idx, name);
  if (!lua_isnil(L, -1)) {
    hrlua_arg field = {lua_gettop(L), arg->func, arg->pos};
    *ms = hrlua_check_seconds(L, &field, name, min_ms, max_ms, -1);
  }
  lua_pop(L, 1);
}

bool hrlua_option_type_ok(const hrl_option *opt, int type) {
  switch (opt->kind) {
  case HRL_OPTION_BYTES:
  case HRL_OPTION_STRING:
  case HRL_OPTION_CHOICE:
    return type == LUA_TSTRING;
  case HRL_OPTION_LABEL:
    return type == LUA_TSTRING || type == LUA_TBOOLEAN;
  case HRL_OPTION_FLAG:
    return type == LUA_TBOOLEAN;
  case HRL_OPTION_DURATION:
  case HRL_OPTION_NUMBER:
  case HRL_OPTION_COUNT:
    return type == LUA_TNUMBER;
  }
  return false;
}

bool hrlua_option_value(lua_State *L, int idx, const hrlua_arg *arg,
                        const hrl_option *opt, double *number,
                        const char **bytes, size_t *len) {
  *number = 0;
  *bytes = NULL;
  *len = 0;
  if (lua_isnil(L, idx)) {
    return false;
  }
  int type = lua_type(L, idx);
  switch (opt->kind) {
  case HRL_OPTION_BYTES:
  case HRL_OPTION_STRING:
  case HRL_OPTION_CHOICE:
    if (type != LUA_TSTRING) {
      hrlua_argerror(L, arg,
                     lua_pushfstring(L, "%s must be a string, got %s",
                                     opt->name, luaL_typename(L, idx)));
    }
    *bytes = lua_tolstring(L, idx, len);
    break;
  case HRL_OPTION_LABEL: /* owner: a label, true (host:pid) or false */
    if (type == LUA_TBOOLEAN) {
      *bytes = lua_toboolean(L, idx) ? HRL_OWNER_HOST_PID : NULL;
      *len = *bytes != NULL ? strlen(*bytes) : 0;
      break;
    }
    if (type != LUA_TSTRING) {
      hrlua_argerror(L, arg,
                     lua_pushfstring(L,
                                     "%s must be a string or a boolean, got %s",
                                     opt->name, luaL_typename(L, idx)));
    }
    *bytes = lua_tolstring(L, idx, len);
    break;
  case HRL_OPTION_FLAG:
    if (type != LUA_TBOOLEAN) {
      hrlua_argerror(L, arg,
                     lua_pushfstring(L, "%s must be a boolean, got %s",
                                     opt->name, luaL_typename(L, idx)));
    }
    *number = lua_toboolean(L, idx) ? 1 : 0;
    break;
  case HRL_OPTION_DURATION:
  case HRL_OPTION_NUMBER:
  case HRL_OPTION_COUNT:
    if (type != LUA_TNUMBER) {
      hrlua_argerror(
          L, arg,
          lua_pushfstring(L,
                          opt->kind == HRL_OPTION_DURATION
                              ? "%s must be a number of seconds, got %s"
                              : "%s must be a number, got %s",
                          opt->name, luaL_typename(L, idx)));
    }
    *number = (double)lua_tonumber(L, idx);
    break;
  }
  return true;
}
