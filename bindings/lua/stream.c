/* core.stream(): one command connection's part of the protocol
 * (hrl_stream), for drivers that move the bytes themselves: replies owed
 * by earlier rounds dropped in order, NOSCRIPT resends, the full script
 * behind a late release, commands held back from a connection that owes
 * too much. The cosocket driver keeps one per connection it keeps.
 *   stream:start(lock, i)        -> bytes to write | nil (held back:
 *                                   master i is done for the round, keep
 *                                   the connection)
 *   stream:feed(lock, i, bytes)  -> "more" | "send", bytes | "done"
 *                                   | "close" (master i failed, recorded)
 *   stream:expire(lock, i, why)  -> "done" | "close", and bytes to write
 *                                   too (the late command) or nil
 *   stream:drain(bytes)          -> true | false (out of step: close)
 *   stream:replied()             -> whether a reply came in this round
 *   stream:owed()                -> replies still owed by earlier rounds
 * The handshake is the driver's (it goes alone, before the first round);
 * start never sends one. */
#include "hrlua.h"

typedef struct hrlua_stream {
  hrl_stream *stream;
} hrlua_stream;

static const char *const action_names[] = {"more", "send", "done", "close"};

static hrlua_stream *check_stream(lua_State *L, int idx) {
  hrlua_stream *s = luaL_checkudata(L, idx, HRLUA_STREAM_MT);
  if (s->stream == NULL) {
    luaL_argerror(L, idx, "the stream was closed (finalized)");
  }
  return s;
}

/* The lock at 2 and its master number at 3 (from 1). */
static hrlua_lock *check_lock_master(lua_State *L, size_t *i) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 2);
  lua_Integer n = luaL_checkinteger(L, 3);
  luaL_argcheck(L, n >= 1 && (size_t)n <= hrl_client_masters(lk->owner->client),
                3, "no such master");
  *i = (size_t)(n - 1);
  return lk;
}

/* Pushes an action and, when not NULL, the bytes that go with it. */
static int push_action(lua_State *L, hrl_stream_action a, const char *out,
                       size_t out_len) {
  lua_pushstring(L, action_names[a]);
  if (out == NULL) {
    return 1;
  }
  lua_pushlstring(L, out, out_len);
  return 2;
}

static int stream_new(lua_State *L) {
  hrlua_stream *s = hrlua_newuserdata(L, sizeof *s);
  s->stream = NULL;
  luaL_getmetatable(L, HRLUA_STREAM_MT);
  lua_setmetatable(L, -2);
  s->stream = hrl_stream_new();
  if (s->stream == NULL) {
    return luaL_error(L, "%s", hrl_strerror(HRL_ENOMEM));
  }
  return 1;
}

static int stream_start(lua_State *L) {
  hrlua_stream *s = check_stream(L, 1);
  size_t i;
  hrlua_lock *lk = check_lock_master(L, &i);
  size_t len = 0;
  const char *bytes = hrl_stream_start(s->stream, lk->lock, i, false, &len);
  if (bytes == NULL && hrl_proto_command_replies(lk->lock, i) == 0) {
    return luaL_error(L, "no round is out: call step() first");
  }
  if (bytes == NULL) { /* held back: master i is done for the round */
    lua_pushnil(L);
  } else {
    lua_pushlstring(L, bytes, len);
  }
  return 1;
}

static int stream_feed(lua_State *L) {
  hrlua_stream *s = check_stream(L, 1);
  size_t i;
  hrlua_lock *lk = check_lock_master(L, &i);
  size_t len;
  const char *data = luaL_checklstring(L, 4, &len);
  const char *out = NULL;
  size_t out_len = 0;
  hrl_stream_action a =
      hrl_stream_feed(s->stream, lk->lock, i, data, len, &out, &out_len);
  return push_action(L, a, out, out_len);
}

static int stream_expire(lua_State *L) {
  hrlua_stream *s = check_stream(L, 1);
  size_t i;
  hrlua_lock *lk = check_lock_master(L, &i);
  const char *why = luaL_checkstring(L, 4);
  const char *out = NULL;
  size_t out_len = 0;
  hrl_stream_action a =
      hrl_stream_expire(s->stream, lk->lock, i, why, &out, &out_len);
  return push_action(L, a, out, out_len);
}

/* stream:skip(lock, i) -> action: the round stops waiting for master i
 * (lock:skippable(i)); "done" keeps the connection, owing the reply. */
static int stream_skip(lua_State *L) {
  hrlua_stream *s = check_stream(L, 1);
  size_t i;
  hrlua_lock *lk = check_lock_master(L, &i);
  return push_action(L, hrl_stream_skip(s->stream, lk->lock, i), NULL, 0);
}

static int stream_drain(lua_State *L) {
  hrlua_stream *s = check_stream(L, 1);
  size_t len;
  const char *data = luaL_checklstring(L, 2, &len);
  lua_pushboolean(L, hrl_stream_drain(s->stream, data, len));
  return 1;
}

static int stream_replied(lua_State *L) {
  lua_pushboolean(L, hrl_stream_replied(check_stream(L, 1)->stream));
  return 1;
}

static int stream_owed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)hrl_stream_owed(check_stream(L, 1)->stream));
  return 1;
}

static int stream_gc(lua_State *L) {
  hrlua_stream *s = luaL_checkudata(L, 1, HRLUA_STREAM_MT);
  hrl_stream_free(s->stream);
  s->stream = NULL;
  return 0;
}

static int stream_tostring(lua_State *L) {
  hrlua_stream *s = luaL_checkudata(L, 1, HRLUA_STREAM_MT);
  lua_pushstring(L, s->stream != NULL ? "hiredlock.core.stream"
                                      : "hiredlock.core.stream (closed)");
  return 1;
}

void hrlua_open_stream(lua_State *L) {
  static const luaL_Reg meta[] = {
      {"__gc", stream_gc}, {"__tostring", stream_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"start", stream_start},   {"feed", stream_feed},
      {"expire", stream_expire}, {"skip", stream_skip},
      {"drain", stream_drain},   {"replied", stream_replied},
      {"owed", stream_owed},     {NULL, NULL}};
  luaL_newmetatable(L, HRLUA_STREAM_MT);
  hrlua_setfuncs(L, meta, 0);
  lua_newtable(L);
  hrlua_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, stream_new);
  lua_setfield(L, -2, "stream");
}
