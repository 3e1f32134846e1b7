/* core.subscriber(client, i): the stream of a subscriber connection to
 * master i (hrl_subscriber), for drivers that move the bytes themselves:
 *   sub:start()       -> bytes a new connection writes first
 *   sub:feed(bytes)   -> kind, value: "more" (read on) | "send", bytes
 *                        | "ready" | "handoff", token | "close", why;
 *                        sub:feed("") gives the next notice of what was fed
 * The handle keeps its client alive (it shares the client's anchor). */
#include "hrlua.h"

typedef struct hrlua_subscriber {
  hrl_subscriber *sub;
} hrlua_subscriber;

static hrlua_subscriber *check_sub(lua_State *L, int idx) {
  hrlua_subscriber *s = luaL_checkudata(L, idx, HRLUA_SUBSCRIBER_MT);
  if (s->sub == NULL) {
    luaL_argerror(L, idx, "the subscriber was closed (finalized)");
  }
  return s;
}

static int subscriber_new(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  lua_Integer i = luaL_checkinteger(L, 2);
  luaL_argcheck(L, i >= 1 && (size_t)i <= hrl_client_masters(c->client), 2,
                "no such master");
  hrlua_subscriber *s = hrlua_newuserdata(L, sizeof *s);
  s->sub = NULL;
  luaL_getmetatable(L, HRLUA_SUBSCRIBER_MT);
  lua_setmetatable(L, -2);
  hrlua_getuservalue(L, 1); /* the client's anchor */
  hrlua_setuservalue(L, -2);
  s->sub = hrl_subscriber_new(c->client, (size_t)(i - 1));
  if (s->sub == NULL) {
    return luaL_error(L, "%s", hrl_strerror(HRL_ENOMEM));
  }
  return 1;
}

static int subscriber_start(lua_State *L) {
  size_t len;
  const char *bytes = hrl_subscriber_start(check_sub(L, 1)->sub, &len);
  lua_pushlstring(L, bytes, len);
  return 1;
}

static int subscriber_feed(lua_State *L) {
  static const char *const names[] = {"more", "send", "ready", "handoff",
                                      "close"};
  hrlua_subscriber *s = check_sub(L, 1);
  size_t len;
  const char *bytes = luaL_optlstring(L, 2, "", &len);
  const char *out;
  size_t out_len;
  hrl_notice n = hrl_subscriber_feed(s->sub, bytes, len, &out, &out_len);
  lua_pushstring(L, names[n]);
  if (out == NULL) {
    return 1;
  }
  lua_pushlstring(L, out, out_len);
  return 2;
}

static int subscriber_gc(lua_State *L) {
  hrlua_subscriber *s = luaL_checkudata(L, 1, HRLUA_SUBSCRIBER_MT);
  hrl_subscriber_free(s->sub);
  s->sub = NULL;
  return 0;
}

void hrlua_open_subscriber(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", subscriber_gc}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"start", subscriber_start}, {"feed", subscriber_feed}, {NULL, NULL}};
  luaL_newmetatable(L, HRLUA_SUBSCRIBER_MT);
  hrlua_setfuncs(L, meta, 0);
  lua_newtable(L);
  hrlua_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, subscriber_new);
  lua_setfield(L, -2, "subscriber");
}
