/* Results as Lua returns them: `true`, or `nil, "short lowercase message"`
 * from the core's one message table (hrl_format_error), the very text
 * Python puts in its exceptions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrlua.h"

int hrlua_push_status(lua_State *L, hrl_status status, const char *detail) {
  if (status == HRL_OK) {
    lua_pushboolean(L, 1);
    return 1;
  }
  char msg[HRL_DETAIL_MAX + 64];
  lua_pushnil(L);
  lua_pushstring(L, hrl_format_error(status, detail, msg, sizeof msg));
  return 2;
}

static const char *const node_result_names[] = {
    [HRL_NODE_PENDING] = "pending",   [HRL_NODE_OK] = "ok",
    [HRL_NODE_REFUSED] = "refused",   [HRL_NODE_UNREACHABLE] = "unreachable",
    [HRL_NODE_AUTH] = "auth",         [HRL_NODE_SERVER] = "server",
    [HRL_NODE_PROTOCOL] = "protocol", [HRL_NODE_RESEND] = "resend",
    [HRL_NODE_MORE] = "more",
};

#define NODE_RESULT_COUNT                                                      \
  (sizeof node_result_names / sizeof node_result_names[0])

const char *hrlua_node_result_name(hrl_node_result r) {
  return (size_t)r < NODE_RESULT_COUNT ? node_result_names[r] : "protocol";
}

hrl_node_result hrlua_check_node_result(lua_State *L, int arg) {
  const char *name = luaL_checkstring(L, arg);
  for (size_t i = 0; i < NODE_RESULT_COUNT; i++) {
    if (strcmp(name, node_result_names[i]) == 0) {
      return (hrl_node_result)i;
    }
  }
  luaL_argerror(L, arg, lua_pushfstring(L, "unknown result '%s'", name));
  return HRL_NODE_PROTOCOL;
}

/* Whether a Lua number holds v exactly: always with 64-bit integers (Lua
 * 5.3+); within +/- 2^53 with doubles (5.1, LuaJIT). */
static bool integer_fits(long long v) {
#if LUA_VERSION_NUM >= 503
  if (sizeof(lua_Integer) >= sizeof v) {
    return true;
  }
#endif
  const long long exact = 9007199254740992LL; /* 2^53 */
  return v >= -exact && v <= exact;
}

/* An integer reply given as its decimal digits (hrlua_push_reply's form
 * for one a number would round). */
static long long check_digits(lua_State *L, int idx) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (len == 0 || end != s + len || errno != 0) {
    luaL_argerror(L, idx, "an integer reply must be a decimal integer");
  }
  return v;
}

static const char *const reply_kinds[] = {
    [HRL_REPLY_STATUS] = "status",   [HRL_REPLY_ERROR] = "error",
    [HRL_REPLY_INTEGER] = "integer", [HRL_REPLY_NIL] = "nil",
    [HRL_REPLY_STRING] = "string",   [HRL_REPLY_OTHER] = "other",
};

#define REPLY_KIND_COUNT (sizeof reply_kinds / sizeof reply_kinds[0])

int hrlua_push_reply(lua_State *L, const hrl_reply *reply) {
  lua_pushstring(L, (size_t)reply->type < REPLY_KIND_COUNT
                        ? reply_kinds[reply->type]
                        : "other");
  switch (reply->type) {
  case HRL_REPLY_STATUS:
  case HRL_REPLY_ERROR:
  case HRL_REPLY_STRING:
    lua_pushlstring(L, reply->str, reply->len);
    return 2;
  case HRL_REPLY_INTEGER:
    if (!integer_fits(reply->integer)) {
      /* A number would round it (a fence counter past 2^53): the digits
       * go through unchanged, and hrlua_check_reply reads them back. */
      char digits[24];
      snprintf(digits, sizeof digits, "%lld", reply->integer);
      lua_pushstring(L, digits);
      return 2;
    }
    lua_pushinteger(L, (lua_Integer)reply->integer);
    return 2;
  default:
    return 1;
  }
}

void hrlua_check_reply(lua_State *L, int arg, hrl_reply *out) {
  const char *kind = luaL_checkstring(L, arg);
  size_t k = 0;
  while (k < REPLY_KIND_COUNT && strcmp(kind, reply_kinds[k]) != 0) {
    k++;
  }
  if (k == REPLY_KIND_COUNT) {
    luaL_argerror(L, arg, lua_pushfstring(L, "unknown reply kind '%s'", kind));
  }
  out->type = (hrl_reply_type)k;
  out->integer = 0;
  out->str = NULL;
  out->len = 0;
  switch (out->type) {
  case HRL_REPLY_STATUS:
  case HRL_REPLY_ERROR:
  case HRL_REPLY_STRING:
    out->str = luaL_checklstring(L, arg + 1, &out->len);
    break;
  case HRL_REPLY_INTEGER:
    out->integer = lua_type(L, arg + 1) == LUA_TSTRING
                       ? check_digits(L, arg + 1)
                       : (long long)luaL_checkinteger(L, arg + 1);
    break;
  default:
    break;
  }
}
