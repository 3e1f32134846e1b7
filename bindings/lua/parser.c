/* core.parser(): the core's bounded RESP reader for byte-stream drivers.
 *   parser:feed(bytes) -> true | nil, err
 *   parser:next()      -> kind, value | nil (more bytes needed)
 *                         | nil, "protocol error" (close the connection)
 */
#include "hrlua.h"

typedef struct hrlua_parser {
  hrl_parser *parser;
} hrlua_parser;

static hrlua_parser *check_parser(lua_State *L, int idx) {
  hrlua_parser *p = luaL_checkudata(L, idx, HRLUA_PARSER_MT);
  if (p->parser == NULL) {
    luaL_argerror(L, idx, "the parser was closed (finalized)");
  }
  return p;
}

static int parser_new(lua_State *L) {
  hrlua_parser *p = hrlua_newuserdata(L, sizeof *p);
  p->parser = NULL;
  luaL_getmetatable(L, HRLUA_PARSER_MT);
  lua_setmetatable(L, -2);
  p->parser = hrl_parser_new();
  if (p->parser == NULL) {
    return luaL_error(L, "%s", hrl_strerror(HRL_ENOMEM));
  }
  return 1;
}

static int parser_feed(lua_State *L) {
  hrlua_parser *p = check_parser(L, 1);
  size_t len;
  const char *bytes = luaL_checklstring(L, 2, &len);
  return hrlua_push_status(L, hrl_parser_feed(p->parser, bytes, len), NULL);
}

static int parser_next(lua_State *L) {
  hrlua_parser *p = check_parser(L, 1);
  hrl_reply reply;
  int got = hrl_parser_next(p->parser, &reply);
  if (got > 0) {
    return hrlua_push_reply(L, &reply);
  }
  lua_pushnil(L);
  if (got == 0) {
    return 1;
  }
  lua_pushstring(L, hrl_strerror(HRL_EPROTOCOL));
  return 2;
}

static int parser_gc(lua_State *L) {
  hrlua_parser *p = luaL_checkudata(L, 1, HRLUA_PARSER_MT);
  hrl_parser_free(p->parser);
  p->parser = NULL;
  return 0;
}

static int parser_tostring(lua_State *L) {
  hrlua_parser *p = luaL_checkudata(L, 1, HRLUA_PARSER_MT);
  lua_pushstring(L, p->parser != NULL ? "hiredlock.core.parser"
                                      : "hiredlock.core.parser (closed)");
  return 1;
}

void hrlua_open_parser(lua_State *L) {
  static const luaL_Reg meta[] = {
      {"__gc", parser_gc}, {"__tostring", parser_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"feed", parser_feed}, {"next", parser_next}, {NULL, NULL}};
  luaL_newmetatable(L, HRLUA_PARSER_MT);
  hrlua_setfuncs(L, meta, 0);
  lua_newtable(L);
  hrlua_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, parser_new);
  lua_setfield(L, -2, "parser");
}
