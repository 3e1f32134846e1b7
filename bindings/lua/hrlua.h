/* Shared declarations of the Lua binding `hiredlock.core`: the handle types,
 * the argument checks and the per-file open functions. The binding only
 * converts arguments and results; every rule lives in the C core. */
#ifndef HRLUA_H
#define HRLUA_H

#include <stdint.h>

#include "compat.h"
#include "hiredlock.h"

#define HRLUA_CLIENT_MT "hiredlock.core.client"
#define HRLUA_LOCK_MT "hiredlock.core.lock"
#define HRLUA_PARSER_MT "hiredlock.core.parser"

/* Defaults of client:acquire() (DESIGN.md section 5), in milliseconds. */
#define HRLUA_DEFAULT_TTL_MS 30000
#define HRLUA_DEFAULT_WAIT_MS 5000

/* A client handle. Its uservalue is its anchor table {client userdata}; a
 * lock shares that anchor as its own uservalue, so a client cannot be
 * collected while one of its locks is alive (the core requires a client to
 * outlive its locks). client is NULL once the handle was finalized.
 * connect_timeout_ms is the client's option, kept for drivers that open
 * their own connections (client:master_info). */
typedef struct hrlua_client {
  hrl_client *client;
  uint32_t connect_timeout_ms;
} hrlua_client;

/* A lock handle; owner stays valid as long as the lock (see above). lock is
 * NULL once the handle was finalized. */
typedef struct hrlua_lock {
  hrl_lock *lock;
  hrlua_client *owner;
} hrlua_lock;

/* client.c: the live client handle at idx; raises when it is not one or was
 * finalized. */
hrlua_client *hrlua_check_client(lua_State *L, int idx);

/* lock.c: the live lock handle at idx; raises when it is not one or was
 * finalized. */
hrlua_lock *hrlua_check_lock(lua_State *L, int idx);

/* lock.c: a lock handle that can talk to the masters: also raises when its
 * client was finalized. */
hrlua_lock *hrlua_check_lock_io(lua_State *L, int idx);

/* lock.c: pushes a new lock handle for name on the client handle at
 * client_idx; name_arg names the argument in errors about the name. */
hrlua_lock *hrlua_push_lock(lua_State *L, int client_idx, int name_arg,
                            const char *name, size_t len, int64_t ttl_ms);

/* args.c: luaL_argerror's message without luaL_error's position prefix.
 * Calls reach the module through the facade and a driver, so the position
 * would name a line of ours, not the caller's; the plain message reads the
 * same from every driver (plain Lua and OpenResty). Never returns. */
int hrlua_argerror(lua_State *L, int arg, const char *extramsg);

/* args.c: argument checks. They raise through hrlua_argerror with the core's
 * message, so every runtime rejects the same values with the same words. */

/* The string at arg (strings only: numbers are not names). */
const char *hrlua_check_name(lua_State *L, int arg, size_t *len);

/* Seconds at arg as milliseconds in [min_ms, max_ms]; def_ms when nil or
 * absent and def_ms >= 0. */
int64_t hrlua_check_seconds(lua_State *L, int arg, const char *what,
                            int64_t min_ms, int64_t max_ms, int64_t def_ms);

/* Checks that arg is nil, absent or a table whose keys are all in known
 * (NULL terminated); returns whether it is a table. */
int hrlua_check_options(lua_State *L, int arg, const char *const known[]);

/* options[name] of the options table at arg as seconds, like
 * hrlua_check_seconds; *ms is left alone when the option is absent. */
void hrlua_opt_seconds(lua_State *L, int arg, const char *name, int64_t min_ms,
                       int64_t max_ms, int64_t *ms);

/* result.c: pushes `true`, or `nil, message` built by hrl_format_error;
 * returns the number of values pushed. */
int hrlua_push_status(lua_State *L, hrl_status status, const char *detail);

/* result.c: names of the per-master results ("ok", "refused", ...). */
const char *hrlua_node_result_name(hrl_node_result r);
hrl_node_result hrlua_check_node_result(lua_State *L, int arg);

/* result.c: a reply as Lua sees it: a kind ("status", "error", "integer",
 * "nil", "string", "other") and, for all but nil and other, a value. */
int hrlua_push_reply(lua_State *L, const hrl_reply *reply);

/* result.c: reads the kind at arg and the value at arg + 1 into *out;
 * out->str points into the Lua string, valid while it is on the stack. */
void hrlua_check_reply(lua_State *L, int arg, hrl_reply *out);

/* Each file registers its part of the module: metatables and methods. The
 * module table is on top of the stack. */
void hrlua_open_client(lua_State *L);
void hrlua_open_lock(lua_State *L);
void hrlua_open_proto(lua_State *L);
void hrlua_open_parser(lua_State *L);

/* Registers the methods of l into the method table (__index) of the
 * metatable tname. */
void hrlua_add_methods(lua_State *L, const char *tname, const luaL_Reg *l);

int luaopen_hiredlock_core(lua_State *L);

#endif
