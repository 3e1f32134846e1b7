/* Client handles: core.new(urls, options). A client holds N masters and
 * their connections; it makes no connection until a lock needs one. */
#include <math.h>
#include <string.h>

#include "hrlua.h"

const char hrlua_client_key = 'c';

hrlua_client *hrlua_check_client(lua_State *L, int idx) {
  hrlua_client *c =
      hrlua_checkudata(L, idx, HRLUA_CLIENT_MT, &hrlua_client_key);
  if (c->client == NULL) {
    luaL_argerror(L, idx, "the client was closed (finalized)");
  }
  return c;
}

/* Fills o from the options table at arg, by the core's option table: each
 * value is converted by its option's kind and checked by the core, which
 * names the option when the value is out of range. */
static void read_options(lua_State *L, const hrlua_arg *arg, hrl_options *o) {
  hrl_options_init(o);
  if (!hrlua_check_options(L, arg, hrlua_client_option, NULL)) {
    return;
  }
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  for (size_t i = 0; i < count; i++) {
    const hrl_option *opt = &table[i];
    if (!hrlua_client_option(opt)) {
      continue;
    }
    /* A string stays referenced by the options table during the call; the
     * core keeps its own copy. */
    lua_getfield(L, arg->idx, opt->name);
    double number;
    const char *bytes;
    size_t len;
    char detail[HRL_DETAIL_MAX];
    if (hrlua_option_value(L, -1, arg, opt, &number, &bytes, &len) &&
        hrl_options_set(o, opt, number, bytes, len, detail, sizeof detail) !=
            HRL_OK) {
      hrlua_argerror(L, arg, detail);
    }
    lua_pop(L, 1);
  }
}

/* The URL string at idx; one with an embedded NUL is refused, since the
 * core would only see the part before it (Python refuses it the same way). */
static const char *url_at(lua_State *L, int idx, const hrlua_arg *arg,
                          size_t i) {
  size_t len;
  const char *url = lua_tolstring(L, idx, &len);
  if (strlen(url) != len) {
    hrlua_argerror(
        L, arg,
        lua_pushfstring(L, "urls[%d] contains a NUL character", (int)i + 1));
  }
  return url;
}

/* The URL list at arg as C strings: one string, or a list of strings. The
 * array lives in a userdata pushed on the stack (collected with it). */
static const char **read_urls(lua_State *L, const hrlua_arg *arg, size_t *n) {
  if (lua_type(L, arg->idx) == LUA_TSTRING) {
    const char **list = lua_newuserdata(L, sizeof *list);
    list[0] = url_at(L, arg->idx, arg, 0);
    *n = 1;
    return list;
  }
  if (lua_type(L, arg->idx) != LUA_TTABLE) {
    hrlua_argerror(L, arg,
                   lua_pushfstring(L,
                                   "urls must be a URL string or a list of "
                                   "them, got %s",
                                   luaL_typename(L, arg->idx)));
  }
  *n = hrlua_rawlen(L, arg->idx);
  const char **list = lua_newuserdata(L, (*n > 0 ? *n : 1) * sizeof *list);
  for (size_t i = 0; i < *n; i++) {
    lua_rawgeti(L, arg->idx, (int)i + 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      hrlua_argerror(L, arg,
                     lua_pushfstring(L, "urls[%d] must be a URL string, got %s",
                                     (int)i + 1, luaL_typename(L, -1)));
    }
    /* The table keeps the string alive for the whole call. */
    list[i] = url_at(L, -1, arg, i);
    lua_pop(L, 1);
  }
  return list;
}

/* core.new(urls, options) -> client handle. */
static int client_new(lua_State *L) {
  static const hrlua_arg urls_arg = {1, "new", 1}, options_arg = {2, "new", 2};
  hrl_options o;
  size_t n = 0;
  lua_settop(L, 2);
  const char **urls = read_urls(L, &urls_arg, &n);
  read_options(L, &options_arg, &o);
  /* The handle exists before the client, so a failing allocation cannot
   * leak the client; __gc handles a NULL client. */
  hrlua_client *c = hrlua_newuserdata(L, sizeof *c);
  c->tag = &hrlua_client_key;
  c->client = NULL;
  c->connect_timeout_ms = o.connect_timeout_ms;
  c->timeout_ms = o.timeout_ms;
  c->ttl_s = 0;
  c->ttl_ms = 0; /* none converted yet (see hrlua.h) */
  c->wait_s = NAN;
  c->wait_ms = 0;
  c->ttl_default_ms = (uint32_t)hrlua_ttl_option()->def;
  luaL_getmetatable(L, HRLUA_CLIENT_MT);
  lua_setmetatable(L, -2);
  int self = lua_gettop(L);
  lua_createtable(L, 1, 0); /* the anchor shared with the locks */
  lua_pushvalue(L, self);
  lua_rawseti(L, -2, 1);
  hrlua_setuservalue(L, self);

  char detail[HRL_DETAIL_MAX];
  hrl_status st =
      hrl_client_new(urls, n, &o, &c->client, detail, sizeof detail);
  if (st == HRL_EINVAL) {
    /* The options were checked as they were read: the URLs are wrong. */
    return hrlua_argerror(L, &urls_arg, detail);
  }
  if (st != HRL_OK) {
    return luaL_error(L, "%s", hrl_strerror(st));
  }
  hrlua_events_attach(L, c->client);
  return 1;
}

static int client_gc(lua_State *L) {
  hrlua_client *c = luaL_checkudata(L, 1, HRLUA_CLIENT_MT);
  hrl_client_free(c->client);
  c->client = NULL;
  return 0;
}

/* handle:closed() -> true once the handle was finalized. A finalized
 * client can still be reached for one collection cycle (from an object
 * finalized with it, e.g. a lock held when both were dropped), and a weak
 * registry keeps it that long: hiredlock.prometheus() skips it by this. */
static int client_closed(lua_State *L) {
  hrlua_client *c = luaL_checkudata(L, 1, HRLUA_CLIENT_MT);
  lua_pushboolean(L, c->client == NULL);
  return 1;
}

static int client_tostring(lua_State *L) {
  hrlua_client *c = luaL_checkudata(L, 1, HRLUA_CLIENT_MT);
  if (c->client == NULL) {
    lua_pushliteral(L, "hiredlock.core.client (closed)");
    return 1;
  }
  size_t n = hrl_client_masters(c->client);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "hiredlock.core.client (%d master%s:", (int)n,
                  n == 1 ? "" : "s");
  luaL_addvalue(&b);
  for (size_t i = 0; i < n; i++) {
    luaL_addchar(&b, ' ');
    luaL_addstring(&b, hrl_client_master_label(c->client, i));
  }
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return 1;
}

static int client_masters(lua_State *L) {
  lua_pushinteger(
      L, (lua_Integer)hrl_client_masters(hrlua_check_client(L, 1)->client));
  return 1;
}

static int client_quorum(lua_State *L) {
  lua_pushinteger(
      L, (lua_Integer)hrl_client_quorum(hrlua_check_client(L, 1)->client));
  return 1;
}

/* client:master_label(i) -> "host:port" or the socket path of master i
 * (1-based), for messages. */
static int client_master_label(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  lua_Integer i = luaL_checkinteger(L, 2);
  const char *label =
      i >= 1 ? hrl_client_master_label(c->client, (size_t)(i - 1)) : NULL;
  luaL_argcheck(L, label != NULL, 2, "no such master");
  lua_pushstring(L, label);
  return 1;
}

void hrlua_add_methods(lua_State *L, const char *tname, const luaL_Reg *l) {
  luaL_getmetatable(L, tname);
  lua_getfield(L, -1, "__index");
  hrlua_setfuncs(L, l, 0);
  lua_pop(L, 2);
}

void hrlua_open_client(lua_State *L) {
  static const luaL_Reg meta[] = {
      {"__gc", client_gc}, {"__tostring", client_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"masters", client_masters},
                                     {"quorum", client_quorum},
                                     {"master_label", client_master_label},
                                     {"closed", client_closed},
                                     {NULL, NULL}};
  hrlua_newmetatable(L, HRLUA_CLIENT_MT, &hrlua_client_key);
  hrlua_setfuncs(L, meta, 0);
  lua_newtable(L);
  hrlua_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, client_new);
  lua_setfield(L, -2, "new");
}
