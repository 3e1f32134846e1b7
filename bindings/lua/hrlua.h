/* Shared declarations of the Lua binding `hiredlock.core`: the handle types,
 * the argument checks and the per-file open functions. The binding only
 * converts arguments and results; every rule lives in the C core. */
#ifndef HRLUA_H
#define HRLUA_H

#include <stdbool.h>
#include <stdint.h>

#include "compat.h"
#include "hiredlock/binding.h"
#include "hiredlock/proto.h"

#define HRLUA_CLIENT_MT "hiredlock.core.client"
#define HRLUA_LOCK_MT "hiredlock.core.lock"
#define HRLUA_PARSER_MT "hiredlock.core.parser"
#define HRLUA_SUBSCRIBER_MT "hiredlock.core.subscriber"
#define HRLUA_STREAM_MT "hiredlock.core.stream"

/* How long client:acquire() keeps trying by default: Lua's convention
 * (lua-resty-lock's), where Python's acquire() waits until acquired. The
 * other defaults are the core's option table's. */
#define HRLUA_DEFAULT_WAIT_MS 5000

/* An argument as the user wrote it: its stack index here, and the function
 * and position to name when it is wrong ("bad argument #2 to 'acquire'").
 * Each entry point states these for the call the user made, so no message
 * depends on how the call reached us. */
typedef struct hrlua_arg {
  int idx;
  const char *func;
  int pos;
} hrlua_arg;

/* A client handle. Its uservalue is its anchor table {client userdata}; a
 * lock shares that anchor as its own uservalue, so a client cannot be
 * collected while one of its locks is alive (the core requires a client to
 * outlive its locks). client is NULL once the handle was finalized.
 * connect_timeout_ms and timeout_ms are the client's options, kept for
 * drivers that open their own connections (client:master_info). */
typedef struct hrlua_client {
  const void *tag; /* &hrlua_client_key: see hrlua_tagged */
  hrl_client *client;
  uint32_t connect_timeout_ms;
  uint32_t timeout_ms;
  /* The last ttl and timeout in seconds an acquire's options gave, each
   * with the milliseconds the core made of it (only an accepted value is
   * kept; ttl_ms 0: none yet, wait_s NaN: none yet). A loop passes the
   * same values every time: the conversion, a pure function of the value
   * and the client's bounds, runs once (acquire.c). */
  double ttl_s;
  uint32_t ttl_ms;
  double wait_s;
  int64_t wait_ms;
  /* The ttl option's default (the core's option table), for an acquire
   * that gives none: read once here, not searched for per acquire. */
  uint32_t ttl_default_ms;
} hrlua_client;

/* A lock handle; owner stays valid as long as the lock (see above). lock is
 * NULL once the handle was finalized. */
typedef struct hrlua_lock {
  const void *tag; /* &hrlua_lock_key: see hrlua_tagged */
  hrl_lock *lock;
  hrlua_client *owner;
  /* A lease's renewal twin (proto.c, renew_begin): the lock belongs to the
   * lease's own handle, which this one keeps alive; never freed here. */
  bool borrowed;
  /* What it holds: a plain lock (HRL_MODE_LOCK), the only kind the
   * facade's acquire takes again as a spare (facade.c). */
  hrl_lock_mode mode;
  /* The facade's lock objects (object.c): anchored, the handle's uservalue
   * is its own anchor table, which the objects share; hold counts the
   * objects given the handle and their releases, so an object whose number
   * is not the handle's is over (released), and an odd number means an
   * object holds it (no acquire may take it: hrlua_spare_fits). */
  bool anchored;
  uint32_t hold;
} hrlua_lock;

/* The registry keys of the client and lock metatables (their addresses;
 * see hrlua_newmetatable), defined in client.c and lock.c. */
extern const char hrlua_client_key;
extern const char hrlua_lock_key;

/* The full userdata at idx when it is size bytes and its first field is
 * tag, else NULL: the type test of the facade's cycle (facade.c,
 * object.c), which checks a handle or object two or three times a cycle.
 * The tag is the address of the type's registry key, which only the
 * type's constructor writes; no other userdata can carry it (Lua code
 * cannot write a userdata's bytes), and a light userdata or a smaller one
 * fails on its size before its bytes are read. About a third of the
 * metatable test's instructions (lua_getmetatable and lua_rawequal);
 * anything it refuses goes to the full check (hrlua_check_client, ...),
 * whose words are unchanged. */
static inline void *hrlua_tagged(lua_State *L, int idx, const void *tag,
                                 size_t size) {
  void *p = lua_touserdata(L, idx);
  if (p == NULL || hrlua_rawlen(L, idx) != size ||
      *(const void *const *)p != tag) {
    return NULL;
  }
  return p;
}

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
 * client_idx, holding what mode says (permits: a permit's semaphore's;
 * checked already); errors about the name point at name_arg. */
hrlua_lock *hrlua_push_lock(lua_State *L, int client_idx,
                            const hrlua_arg *name_arg, const char *name,
                            size_t len, const hrl_lock_options *lo,
                            hrl_lock_mode mode, uint32_t permits);

/* lock.c: pushes a new husk for lk on the client handle at client_idx: a
 * handle of lk's name and TTL that never holds anything, so it answers as
 * a released handle does (the facade and the lock object cache it). */
void hrlua_push_husk(lua_State *L, int client_idx, const hrlua_lock *lk);

/* acquire.c: client:acquire(name, opts)'s arguments (name at stack 2,
 * opts at 3) for client (checked by the caller), checked, with acquire's
 * words whichever entry point the user's acquire reached. */
typedef struct hrlua_acquire_args {
  hrlua_client *client;
  const char *name;
  size_t len;
  hrl_lock_options lo;
  int64_t wait_ms;
  hrl_lock_mode mode;
  uint32_t permits;
} hrlua_acquire_args;

void hrlua_check_acquire_args(lua_State *L, hrlua_client *client,
                              hrlua_acquire_args *a);

/* facade.c: a lock handle's release for LuaJIT's FFI (see there). */
int hrlua_ffi_release(void *ud);

/* acquire.c: the core's ttl option (its default and bounds). */
const hrl_option *hrlua_ttl_option(void);

/* acquire.c: whether the spare handle sp (one holding nothing) can take the
 * acquire a in place of a new handle: made by a's client for the same name
 * with the same settings, a plain lock, not a lease's. */
bool hrlua_spare_fits(const hrlua_lock *sp, const hrlua_acquire_args *a);

/* acquire.c: acquires lock with the blocking driver, waiting up to wait_ms;
 * an interrupt (Ctrl-C) of the standalone interpreter cancels the wait,
 * and one that came while the lock was taken releases it again
 * (HRL_ECANCELLED). */
hrl_status hrlua_acquire(lua_State *L, hrl_lock *lock, int64_t wait_ms);

/* args.c: argument checks. They raise with the core's message, naming the
 * user's function and argument (hrlua_arg), so every runtime rejects the
 * same values with the same words. */

/* Raises "bad argument #<pos> to '<func>' (<msg>)" without a position
 * prefix: the position luaL_error adds would name a line of the facade or
 * a driver, not the caller's. Never returns. */
int hrlua_argerror(lua_State *L, const hrlua_arg *arg, const char *msg);

/* The string at arg (strings only: numbers are not names). */
const char *hrlua_check_name(lua_State *L, const hrlua_arg *arg, size_t *len);

/* Seconds at arg as milliseconds in [min_ms, max_ms], the message naming
 * `what`; def_ms when nil or absent and def_ms >= 0. */
int64_t hrlua_check_seconds(lua_State *L, const hrlua_arg *arg,
                            const char *what, int64_t min_ms, int64_t max_ms,
                            int64_t def_ms);

/* A lock's TTL at arg, in seconds, as milliseconds within what client
 * accepts (hrl_client_ttl_seconds); def_ms when nil or absent and
 * def_ms >= 0. */
int64_t hrlua_check_ttl(lua_State *L, const hrlua_arg *arg,
                        const hrl_client *client, int64_t def_ms);

/* extend([ttl])'s argument at stack index idx for a lock of client: the
 * new TTL in milliseconds, 0 (the lock's own) when nil or absent. Errors
 * name argument #1 of 'extend', whichever driver checks it. */
int64_t hrlua_check_extend_ttl(lua_State *L, int idx, const hrl_client *client);

/* Which options of the core's table a call takes. */
typedef bool (*hrlua_accept_fn)(const hrl_option *opt);
/* new(): the client's own, and the defaults of its locks. */
bool hrlua_client_option(const hrl_option *opt);
/* acquire(): the lock options. */
bool hrlua_lock_option(const hrl_option *opt);

/* Checks that arg is nil, absent or a table whose keys are all options of
 * the core's table that accept() takes, or in extra (NULL terminated, may
 * be NULL); returns whether it is a table. */
int hrlua_check_options(lua_State *L, const hrlua_arg *arg,
                        hrlua_accept_fn accept, const char *const extra[]);

/* The value at idx for option opt, converted by its kind (seconds, number,
 * string, boolean) for hrl_options_set / hrl_lock_options_set; raises
 * naming arg on a wrong type. false when it is nil (not given). */
bool hrlua_option_value(lua_State *L, int idx, const hrlua_arg *arg,
                        const hrl_option *opt, double *number,
                        const char **bytes, size_t *len);

/* Whether a value of Lua type `type` is one hrlua_option_value converts
 * for opt without raising (it may still be out of opt's range). */
bool hrlua_option_type_ok(const hrl_option *opt, int type);

/* options[name] of the options table at arg as seconds, like
 * hrlua_check_seconds; *ms is left alone when the option is absent. */
void hrlua_opt_seconds(lua_State *L, const hrlua_arg *arg, const char *name,
                       int64_t min_ms, int64_t max_ms, int64_t *ms);

/* result.c: pushes `true`, or `nil, message` built by hrl_format_error;
 * returns the number of values pushed. */
int hrlua_push_status(lua_State *L, hrl_status status, const char *detail);
/* result.c: pushes fence (1 to 2^64 - 1) as its exact decimal string. */
void hrlua_push_fence_string(lua_State *L, uint64_t fence);

/* result.c: names of the per-master results ("ok", "refused", ...). */
const char *hrlua_node_result_name(hrl_node_result r);
hrl_node_result hrlua_check_node_result(lua_State *L, int arg);

/* result.c: a reply as Lua sees it: a kind ("status", "error", "integer",
 * "nil", "string", "other") and, for all but nil and other, a value. */
int hrlua_push_reply(lua_State *L, const hrl_reply *reply);
/* proto.c: pushes a connection's target (host, port, label, path,
 * handshake) for a driver; returns 5. */
int hrlua_push_target(lua_State *L, const hrl_target *t);

/* result.c: reads the kind at arg and the value at arg + 1 into *out;
 * out->str points into the Lua string, valid while it is on the stack. An
 * "array" (a table of strings, numbers, false for nil) puts its items in
 * elems, HRL_REPLY_ELEMENTS_MAX of them at most. */
void hrlua_check_reply(lua_State *L, int arg, hrl_reply *out, hrl_reply *elems);

/* Each file registers its part of the module: metatables and methods. The
 * module table is on top of the stack. */
void hrlua_open_client(lua_State *L);
void hrlua_open_lock(lua_State *L);
/* acquire.c: client:acquire and client:lock. */
void hrlua_open_acquire(lua_State *L);
/* facade.c: core.facade(), the facade's acquire and release with the
 * blocking driver. */
void hrlua_open_facade(lua_State *L);
void hrlua_open_proto(lua_State *L);
void hrlua_open_parser(lua_State *L);
void hrlua_open_subscriber(lua_State *L);
void hrlua_open_stream(lua_State *L);
/* ops.c: inspect, stats and events on the handles (after client and
 * lock), and a new client's event queue. */
void hrlua_open_ops(lua_State *L);
void hrlua_events_attach(lua_State *L, hrl_client *client);

/* object.c: the facade's lock object with the blocking driver, one
 * userdata per acquire (see the top of object.c). */

/* Pushes the objects' metatable for the facade's Lock table at lock_idx,
 * the blocking driver's table at blocking_idx, release_through and deliver
 * (as core.facade takes them) at through_idx and deliver_idx. */
void hrlua_object_metatable(lua_State *L, int lock_idx, int blocking_idx,
                            int through_idx, int deliver_idx);

/* Gives the handle lk at handle_idx, which the facade just made for the
 * client table at client_idx, its own anchor (once). */
void hrlua_object_anchor(lua_State *L, hrlua_lock *lk, int handle_idx,
                         int client_idx);

/* Pushes a new object for the hold the anchored handle lk at handle_idx
 * just started (a's options), with the metatable at mt_idx. */
void hrlua_object_push(lua_State *L, hrlua_lock *lk, int handle_idx, int mt_idx,
                       const hrlua_acquire_args *a);

/* Registers the methods of l into the method table (__index) of the
 * metatable tname. */
void hrlua_add_methods(lua_State *L, const char *tname, const luaL_Reg *l);

/* The module's one exported symbol (rock.mk hides every other). */
__attribute__((visibility("default"))) int luaopen_hiredlock_core(lua_State *L);

#endif
