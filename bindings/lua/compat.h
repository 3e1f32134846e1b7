/* The one place where Lua 5.1 (and LuaJIT, which keeps its C API) differs
 * from Lua 5.2+ for this module. Every other file uses only these names and
 * the API common to all versions. */
#ifndef HRLUA_COMPAT_H
#define HRLUA_COMPAT_H

#include <stddef.h>

#include <lauxlib.h>
#include <lua.h>

/* The raw length of the table at idx (lua_objlen in 5.1). */
size_t hrlua_rawlen(lua_State *L, int idx);

/* Registers the functions of l into the table on top of the stack, each
 * with the nup upvalues below it (luaL_setfuncs of 5.2+). */
void hrlua_setfuncs(lua_State *L, const luaL_Reg *l, int nup);

/* The userdata at idx if its metatable is tname's, else NULL (luaL_testudata
 * of 5.2+). */
void *hrlua_testudata(lua_State *L, int idx, const char *tname);

/* luaL_newmetatable(L, tname), the metatable also kept in the registry
 * under the light userdata key, for hrlua_checkudata. */
void hrlua_newmetatable(lua_State *L, const char *tname, const void *key);

/* luaL_checkudata(L, idx, tname) for a type made by hrlua_newmetatable: the
 * metatable found by its key, where Lua 5.1 and LuaJIT would hash tname
 * again at every call (a lock cycle checks three handles). The error is
 * luaL_checkudata's. */
void *hrlua_checkudata(lua_State *L, int idx, const char *tname,
                       const void *key);

/* A new full userdata of size bytes that can hold one Lua table as its
 * uservalue (5.4: one user value slot; 5.1: its environment). */
void *hrlua_newuserdata(lua_State *L, size_t size);

/* Pops a table and makes it the uservalue of the userdata at idx. */
void hrlua_setuservalue(lua_State *L, int idx);

/* Pushes the uservalue (a table, or nil when none was set) of the userdata
 * at idx. */
void hrlua_getuservalue(lua_State *L, int idx);

#endif
