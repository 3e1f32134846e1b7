/* luaopen_hiredlock_core: the C module `hiredlock.core` that the Lua facade
 * (lua/hiredlock/init.lua) wraps. One open function per file registers its
 * part; the version comes from the C header, so it is written once. */
#include "hrlua.h"

int luaopen_hiredlock_core(lua_State *L) {
  lua_newtable(L);
  hrlua_open_client(L);
  hrlua_open_lock(L);
  hrlua_open_acquire(L);
  hrlua_open_facade(L);
  hrlua_open_proto(L);
  hrlua_open_parser(L);
  hrlua_open_subscriber(L);
  hrlua_open_stream(L);
  hrlua_open_ops(L);
  lua_pushliteral(L, HIREDLOCK_VERSION);
  lua_setfield(L, -2, "VERSION");
  lua_pushliteral(L, "hiredlock.core " HIREDLOCK_VERSION);
  lua_setfield(L, -2, "_VERSION");
  lua_pushinteger(L, HRL_NAME_MAX);
  lua_setfield(L, -2, "NAME_MAX");
  lua_pushinteger(L, HRL_TOKEN_LEN);
  lua_setfield(L, -2, "TOKEN_LEN");
  lua_pushliteral(L, HRL_FENCED_WRITE_SCRIPT);
  lua_setfield(L, -2, "FENCED_WRITE_SCRIPT");
  return 1;
}
