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

void hrlua_push_fence_string(lua_State *L, uint64_t fence) {
  /* By hand, not snprintf: a fenced acquire of LuaJIT's facade pushes it
   * every time, and "%llu" costs more than the rest of the push. */
  char digits[20];
  size_t at = sizeof digits;
  do {
    digits[--at] = (char)('0' + fence % 10);
    fence /= 10;
  } while (fence != 0);
  lua_pushlstring(L, digits + at, sizeof digits - at);
}

static const char *const node_result_names[] = {
    [HRL_NODE_PENDING] = "pending",   [HRL_NODE_OK] = "ok",
    [HRL_NODE_REFUSED] = "refused",   [HRL_NODE_UNREACHABLE] = "unreachable",
    [HRL_NODE_AUTH] = "auth",         [HRL_NODE_SERVER] = "server",
    [HRL_NODE_PROTOCOL] = "protocol", [HRL_NODE_RESEND] = "resend",
    [HRL_NODE_REDIRECT] = "redirect", [HRL_NODE_MORE] = "more",
    [HRL_NODE_DENIED] = "denied",
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
    [HRL_REPLY_ARRAY] = "array",
};

#define REPLY_KIND_COUNT (sizeof reply_kinds / sizeof reply_kinds[0])

/* One reply's value: text, a number, false for nil (in an array). */
static void push_value(lua_State *L, const hrl_reply *reply) {
  switch (reply->type) {
  case HRL_REPLY_STATUS:
  case HRL_REPLY_ERROR:
  case HRL_REPLY_STRING:
    lua_pushlstring(L, reply->str, reply->len);
    break;
  case HRL_REPLY_INTEGER:
    if (!integer_fits(reply->integer)) {
      /* A number would round it (a fence counter past 2^53): the digits
       * go through unchanged, and hrlua_check_reply reads them back. */
      char digits[24];
      snprintf(digits, sizeof digits, "%lld", reply->integer);
      lua_pushstring(L, digits);
      break;
    }
    lua_pushinteger(L, (lua_Integer)reply->integer);
    break;
  default:
    lua_pushboolean(L, 0);
    break;
  }
}

int hrlua_push_reply(lua_State *L, const hrl_reply *reply) {
  lua_pushstring(L, (size_t)reply->type < REPLY_KIND_COUNT
                        ? reply_kinds[reply->type]
                        : "other");
  switch (reply->type) {
  case HRL_REPLY_STATUS:
  case HRL_REPLY_ERROR:
  case HRL_REPLY_STRING:
  case HRL_REPLY_INTEGER:
    push_value(L, reply);
    return 2;
  case HRL_REPLY_ARRAY: /* {items}: text, numbers, false for nil */
    lua_createtable(L, (int)reply->elements, 0);
    for (size_t k = 0; k < reply->elements; k++) {
      push_value(L, &reply->element[k]);
      lua_rawseti(L, -2, (int)k + 1);
    }
    return 2;
  default:
    return 1;
  }
}

void hrlua_check_reply(lua_State *L, int arg, hrl_reply *out,
                       hrl_reply *elems) {
  const char *kind = luaL_checkstring(L, arg);
  size_t k = 0;
  while (k < REPLY_KIND_COUNT && strcmp(kind, reply_kinds[k]) != 0) {
    k++;
  }
  if (k == REPLY_KIND_COUNT) {
    luaL_argerror(L, arg, lua_pushfstring(L, "unknown reply kind '%s'", kind));
  }
  memset(out, 0, sizeof *out);
  out->type = (hrl_reply_type)k;
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
  case HRL_REPLY_ARRAY: {
    /* The items stay referenced by the table for the call. */
    luaL_checktype(L, arg + 1, LUA_TTABLE);
    size_t n = hrlua_rawlen(L, arg + 1);
    luaL_argcheck(L, n <= HRL_REPLY_ELEMENTS_MAX, arg + 1, "array too long");
    for (size_t e = 0; e < n; e++) {
      memset(&elems[e], 0, sizeof elems[e]);
      lua_rawgeti(L, arg + 1, (int)e + 1);
      if (lua_type(L, -1) == LUA_TSTRING) {
        elems[e].type = HRL_REPLY_STRING;
        elems[e].str = lua_tolstring(L, -1, &elems[e].len);
      } else if (lua_type(L, -1) == LUA_TNUMBER) {
        elems[e].type = HRL_REPLY_INTEGER;
        elems[e].integer = (long long)lua_tointeger(L, -1);
      } else {
        elems[e].type = HRL_REPLY_NIL;
      }
      lua_pop(L, 1);
    }
    out->elements = n;
    out->element = elems;
    break;
  }
  default:
    break;
  }
}
