/* core.subscriber(client, i): the stream of a subscriber connection to
 * master i (hrl_subscriber), for drivers that move the bytes themselves:
 *   sub:open()        -> where a new connection goes: host, port, label,
 *                        path, handshake (as lock:target; handshake false:
 *                        a sentinel to ask)
 *   sub:start()       -> bytes a new connection writes first
 *   sub:feed(bytes)   -> kind, value: "more" (read on) | "send", bytes
 *                        | "ready" | "handoff", token | "close", why
 *                        | "redirect", where (open again at once);
 *                        sub:feed("") gives the next notice of what was fed
 * The handle keeps its client alive (it shares the client's anchor).
 * And on a client, for drivers whose subscribers serve several clients:
 *   client:share_channel(other) -> true | false (hrl_client_share_channel)
 *   client:subscriber_key(i)    -> bytes (hrl_client_subscriber_key: it
 *                                  holds credentials, hash it) */
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

static int subscriber_open(lua_State *L) {
  hrl_target t;
  hrl_subscriber_open(check_sub(L, 1)->sub, &t);
  return hrlua_push_target(L, &t);
}

static int subscriber_start(lua_State *L) {
  size_t len;
  const char *bytes = hrl_subscriber_start(check_sub(L, 1)->sub, &len);
  lua_pushlstring(L, bytes, len);
  return 1;
}

static int subscriber_feed(lua_State *L) {
  static const char *const names[] = {"more",    "send",  "ready",
                                      "handoff", "close", "redirect"};
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

static int client_share_channel(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  hrlua_client *from = hrlua_check_client(L, 2);
  lua_pushboolean(L, hrl_client_share_channel(c->client, from->client));
  return 1;
}

static int client_subscriber_key(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  lua_Integer i = luaL_checkinteger(L, 2);
  luaL_argcheck(L, i >= 1 && (size_t)i <= hrl_client_masters(c->client), 2,
                "no such master");
  size_t len = hrl_client_subscriber_key(c->client, (size_t)(i - 1), NULL, 0);
  if (len == 0) {
    return luaL_error(L, "%s", hrl_strerror(HRL_ESYSTEM));
  }
  char *key = lua_newuserdata(L, len); /* the collector frees it */
  hrl_client_subscriber_key(c->client, (size_t)(i - 1), key, len);
  lua_pushlstring(L, key, len);
  return 1;
}

void hrlua_open_subscriber(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", subscriber_gc}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"open", subscriber_open},
                                     {"start", subscriber_start},
                                     {"feed", subscriber_feed},
                                     {NULL, NULL}};
  static const luaL_Reg client_methods[] = {
      {"share_channel", client_share_channel},
      {"subscriber_key", client_subscriber_key},
      {NULL, NULL}};
  hrlua_add_methods(L, HRLUA_CLIENT_MT, client_methods);
  luaL_newmetatable(L, HRLUA_SUBSCRIBER_MT);
  hrlua_setfuncs(L, meta, 0);
  lua_newtable(L);
  hrlua_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, subscriber_new);
  lua_setfield(L, -2, "subscriber");
}
