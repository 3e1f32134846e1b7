/* The core's sans-I/O protocol on the handles, for drivers that move the
 * bytes themselves (the OpenResty cosocket driver): the driver loop of
 * hiredlock/proto.h, with masters numbered from 1. What a user passes is in
 * seconds and checked here, as everywhere (begin's timeout and ttl); what
 * the protocol hands the driver (round timeouts, sleeps) is in milliseconds,
 * as in the C API. The algorithm stays in the core; these methods only
 * convert.
 *
 *   client:lock(name, opts)        -> lock (not held), timeout (seconds)
 *   lock:client()                  -> the client handle
 *   lock:begin("acquire", timeout) | lock:begin("release")
 *     | lock:begin("extend", [ttl]) | lock:begin("inspect")
 *                                  -> true | nil, err (inspect: then
 *                                     lock:inspection(), bindings/lua/ops.c)
 *   lock:step()                    -> "round", timeout_ms | "wait", ms
 *                                     | "done", true | "done", nil, err
 *   lock:waiter()                  -> the token hand-offs to this waiting
 *                                     acquire carry | nil
 *   lock:notified(i)               master i handed the lock to it
 *   lock:wake()                    try again now (a subscription came up)
 *   lock:command(i)                -> bytes to send to master i, and how
 *                                     many replies they produce (2 after
 *                                     a cluster's ASK: ASKING first; 2 for
 *                                     a fenced acquire's or try's SET/try
 *                                     and INCR)
 *   lock:reply(i, kind, value)     -> "ok" | "refused" | ... | "resend"
 *                                     | "redirect" (a cluster: send the
 *                                     command to lock:target(i)) |
 *                                     "more" (read the next reply)
 *   lock:target(i)                 -> host, port, label, path, handshake:
 *                                     where master i's command goes (a
 *                                     cluster's node, a sentinel to ask:
 *                                     handshake false)
 *   lock:fail(i, why, message)     -> "redirect" (a cluster: send to
 *                                     lock:target(i)) | the master's result
 *   lock:missed(i, message)        -> bytes to send too | nil
 *   client:handshake(i)            -> bytes ("" when none), replies
 *   client:handshake_reply(i, k, kind, value) -> result, message
 *   client:master_info(i)          -> {host, port | path, db, label,
 *                                      connect_timeout_ms, tls and the
 *                                      ssl_* settings of a rediss:// one}
 *
 * Managed leases (auto_renew), the renewal loop of hiredlock/proto.h:
 *   lock:renew_due()               -> seconds on core.now()'s clock | nil
 *   lock:renew_begin()             -> "round", twin | "lost", reason
 *                                     | "wait" | "none"
 *     (twin: a lock handle to run as any operation, begun already)
 *   lock:renew_end()               -> "renewed" | "lost", reason
 *                                     | "failed", err | "cancelled"
 */
#include <string.h>

#include "hrlua.h"

static size_t check_master(lua_State *L, int arg, const hrl_client *c) {
  lua_Integer i = luaL_checkinteger(L, arg);
  luaL_argcheck(L, i >= 1 && (size_t)i <= hrl_client_masters(c), arg,
                "no such master");
  return (size_t)(i - 1);
}

static int lock_begin(lua_State *L) {
  static const char *const ops[] = {"acquire", "release", "extend", "inspect",
                                    NULL};
  static const hrl_op_kind kinds[] = {HRL_OP_ACQUIRE, HRL_OP_RELEASE,
                                      HRL_OP_EXTEND, HRL_OP_INSPECT};
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  hrl_op_kind op = kinds[luaL_checkoption(L, 2, NULL, ops)];
  int64_t arg_ms = 0;
  /* The argument is the user's first argument of the operation of that
   * name (acquire's timeout, extend's ttl), and errors say so. */
  if (op == HRL_OP_ACQUIRE) {
    static const hrlua_arg timeout_arg = {3, "acquire", 1};
    arg_ms = hrlua_check_seconds(L, &timeout_arg, "timeout", 0, HRL_TTL_MAX_MS,
                                 HRLUA_DEFAULT_WAIT_MS);
  } else if (op == HRL_OP_EXTEND) {
    arg_ms = hrlua_check_extend_ttl(L, 3, lk->owner->client);
  }
  hrl_status st = hrl_proto_begin(lk->lock, op, arg_ms, hrl_now_us());
  return hrlua_push_status(L, st, hrl_lock_error(lk->lock));
}

/* A connection's target as a driver reads it: host, port (nil, nil for a
 * unix socket), label, path (nil for TCP), whether a handshake is due. */
int hrlua_push_target(lua_State *L, const hrl_target *t) {
  if (t->host != NULL) {
    lua_pushstring(L, t->host);
    lua_pushinteger(L, t->port);
  } else {
    lua_pushnil(L);
    lua_pushnil(L);
  }
  lua_pushstring(L, t->label);
  if (t->path != NULL) {
    lua_pushstring(L, t->path);
  } else {
    lua_pushnil(L);
  }
  lua_pushboolean(L, t->handshake);
  return 5;
}

static int lock_step(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  hrl_step_info info;
  switch (hrl_proto_step(lk->lock, hrl_now_us(), &info)) {
  case HRL_STEP_ROUND:
    lua_pushliteral(L, "round");
    lua_pushinteger(L, (lua_Integer)info.timeout_ms);
    return 2;
  case HRL_STEP_WAIT:
    lua_pushliteral(L, "wait");
    lua_pushinteger(L, (lua_Integer)info.wait_ms);
    return 2;
  case HRL_STEP_DONE:
  default:
    lua_pushliteral(L, "done");
    return 1 + hrlua_push_status(L, info.status, hrl_lock_error(lk->lock));
  }
}

static int lock_command(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  size_t i = check_master(L, 2, lk->owner->client);
  size_t len = 0;
  const char *cmd = hrl_proto_command(lk->lock, i, &len);
  if (cmd == NULL) {
    return luaL_error(L, "no round is out: call step() first");
  }
  lua_pushlstring(L, cmd, len);
  lua_pushinteger(L, hrl_proto_command_replies(lk->lock, i));
  return 2;
}

/* lock:target(i) -> host, port, label, path, handshake: where master i's
 * command goes in this round, the master, a cluster's node or a sentinel
 * (host and port nil for a unix socket, path nil for TCP), and whether a
 * new connection there sends client:handshake(i) first (not to a
 * sentinel). */
static int lock_target(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  size_t i = check_master(L, 2, lk->owner->client);
  hrl_target t;
  hrl_proto_target(lk->lock, i, &t);
  return hrlua_push_target(L, &t);
}

static int lock_reply(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  size_t i = check_master(L, 2, lk->owner->client);
  hrl_reply reply, elems[HRL_REPLY_ELEMENTS_MAX];
  hrlua_check_reply(L, 3, &reply, elems);
  lua_pushstring(L,
                 hrlua_node_result_name(hrl_proto_reply(lk->lock, i, &reply)));
  return 1;
}

static int lock_fail(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  size_t i = check_master(L, 2, lk->owner->client);
  hrl_node_result why = hrlua_check_node_result(L, 3);
  lua_pushstring(L, hrlua_node_result_name(hrl_proto_fail(
                        lk->lock, i, why, luaL_optstring(L, 4, NULL))));
  return 1;
}

/* lock:missed(i, message) -> bytes | nil: master i missed the round's
 * deadline (hrl_proto_missed); the bytes, when any, are to be sent behind
 * its unanswered command (hrl_proto_late_command). */
static int lock_missed(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  size_t i = check_master(L, 2, lk->owner->client);
  hrl_proto_missed(lk->lock, i, luaL_optstring(L, 3, NULL));
  size_t len = 0;
  const char *late = hrl_proto_late_command(lk->lock, i, &len);
  if (late == NULL) {
    lua_pushnil(L);
  } else {
    lua_pushlstring(L, late, len);
  }
  return 1;
}

/* lock:skippable(i) -> boolean: the round need not wait for master i any
 * more (hrl_proto_skippable: settled, and i known to be late). */
static int lock_skippable(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  size_t i = check_master(L, 2, lk->owner->client);
  lua_pushboolean(L, hrl_proto_skippable(lk->lock, i));
  return 1;
}

static int lock_waiter(lua_State *L) {
  const char *token = hrl_proto_waiter(hrlua_check_lock_io(L, 1)->lock);
  if (token == NULL) {
    lua_pushnil(L);
  } else {
    lua_pushlstring(L, token, HRL_TOKEN_LEN);
  }
  return 1;
}

static int lock_notified(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  hrl_proto_notified(lk->lock, check_master(L, 2, lk->owner->client));
  return 0;
}

static int lock_wake(lua_State *L) {
  hrl_proto_wake(hrlua_check_lock_io(L, 1)->lock);
  return 0;
}

static int lock_renew_due(lua_State *L) {
  int64_t due = hrl_proto_renew_due(hrlua_check_lock(L, 1)->lock);
  if (due == INT64_MAX) {
    lua_pushnil(L);
  } else {
    lua_pushnumber(L, (lua_Number)due / 1e6);
  }
  return 1;
}

/* Pushes a handle on the twin of the lease at index 1: a lock handle like
 * any other for the driver loop, whose uservalue {client, lease} keeps the
 * lease (which owns the twin) alive. */
static void push_twin(lua_State *L, hrl_lock *twin) {
  hrlua_lock *lease = hrlua_check_lock(L, 1);
  hrlua_lock *t = hrlua_newuserdata(L, sizeof *t);
  t->tag = &hrlua_lock_key;
  t->lock = twin;
  t->owner = lease->owner;
  t->mode = lease->mode;
  t->borrowed = true;
  t->anchored = false;
  t->hold = 0;
  luaL_getmetatable(L, HRLUA_LOCK_MT);
  lua_setmetatable(L, -2);
  lua_createtable(L, 2, 0);
  hrlua_getuservalue(L, 1); /* the lease's anchor: {client} */
  lua_rawgeti(L, -1, 1);
  lua_rawseti(L, -3, 1);
  lua_pop(L, 1);
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, 2);
  hrlua_setuservalue(L, -2);
}

static int lock_renew_begin(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  hrl_lock *twin = NULL;
  switch (hrl_proto_renew_begin(lk->lock, hrl_now_us(), &twin)) {
  case HRL_RENEW_ROUND:
    lua_pushliteral(L, "round");
    push_twin(L, twin);
    return 2;
  case HRL_RENEW_LOST: {
    char reason[HRL_DETAIL_MAX];
    hrl_lock_lost(lk->lock, reason, sizeof reason);
    lua_pushliteral(L, "lost");
    lua_pushstring(L, reason);
    return 2;
  }
  case HRL_RENEW_WAIT:
    lua_pushliteral(L, "wait");
    return 1;
  case HRL_RENEW_NONE:
  default:
    lua_pushliteral(L, "none");
    return 1;
  }
}

static int lock_renew_end(lua_State *L) {
  hrlua_lock *lk = hrlua_check_lock_io(L, 1);
  hrl_status st = hrl_proto_renew_end(lk->lock, hrl_now_us());
  char msg[HRL_DETAIL_MAX + 64];
  switch (st) {
  case HRL_OK:
    lua_pushliteral(L, "renewed");
    return 1;
  case HRL_ECANCELLED:
    lua_pushliteral(L, "cancelled");
    return 1;
  case HRL_ELOST:
    hrl_lock_lost(lk->lock, msg, sizeof msg);
    lua_pushliteral(L, "lost");
    lua_pushstring(L, msg);
    return 2;
  default:
    lua_pushliteral(L, "failed");
    lua_pushstring(L, hrl_format_error(st, "", msg, sizeof msg));
    return 2;
  }
}

static int lock_client(lua_State *L) {
  hrlua_check_lock(L, 1);
  hrlua_getuservalue(L, 1); /* the anchor: {client} */
  lua_rawgeti(L, -1, 1);
  return 1;
}

/* client:channel() -> the channel this process's waiters hear their
 * hand-offs on. */
static int client_channel(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  size_t len;
  const char *channel = hrl_client_channel(c->client, &len);
  if (channel == NULL) {
    return luaL_error(L, "%s", hrl_strerror(HRL_ESYSTEM));
  }
  lua_pushlstring(L, channel, len);
  return 1;
}

static int client_handshake(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  size_t i = check_master(L, 2, c->client);
  size_t len = 0;
  int replies = 0;
  const char *bytes = hrl_proto_handshake(c->client, i, &len, &replies);
  lua_pushlstring(L, bytes != NULL ? bytes : "", len);
  lua_pushinteger(L, replies);
  return 2;
}

static int client_handshake_reply(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  size_t i = check_master(L, 2, c->client);
  lua_Integer k = luaL_checkinteger(L, 3);
  hrl_reply reply, elems[HRL_REPLY_ELEMENTS_MAX];
  hrlua_check_reply(L, 4, &reply, elems);
  char msg[HRL_DETAIL_MAX];
  msg[0] = '\0';
  hrl_node_result r = hrl_proto_handshake_reply(c->client, i, (int)(k - 1),
                                                &reply, msg, sizeof msg);
  lua_pushstring(L, hrlua_node_result_name(r));
  lua_pushstring(L, msg);
  return 2;
}

/* A rediss:// master's TLS settings into the table on top: tls = true and
 * the ssl_* options, named as the client options (paths absent when
 * unset, ssl_cert_reqs by name). */
static void push_tls(lua_State *L, const hrl_tls_settings *t) {
  const struct {
    const char *name, *value;
  } paths[] = {{"ssl_ca_certs", t->ca_certs},
               {"ssl_ca_path", t->ca_path},
               {"ssl_certfile", t->certfile},
               {"ssl_keyfile", t->keyfile}};
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "tls");
  for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
    if (paths[k].value != NULL) {
      lua_pushstring(L, paths[k].value);
      lua_setfield(L, -2, paths[k].name);
    }
  }
  const hrl_option *reqs = hrl_option_find("ssl_cert_reqs");
  lua_pushstring(L, reqs->choices[t->cert_reqs]);
  lua_setfield(L, -2, "ssl_cert_reqs");
  lua_pushboolean(L, t->check_hostname);
  lua_setfield(L, -2, "ssl_check_hostname");
}

/* client:master_info(i) -> where master i is, for drivers that open their
 * own connections: {host = "127.0.0.1", port = 6379} for TCP (an IPv6 host
 * without brackets) or {path = "/run/redis.sock"} for unix, and for both
 * db (0 when the handshake selects none), label (for messages),
 * connect_timeout_ms and timeout_ms (the client's connect_timeout and
 * timeout); for a rediss:// one
 * tls = true and its ssl_* settings. Credentials are not here: the
 * handshake bytes carry them. */
static int client_master_info(lua_State *L) {
  hrlua_client *c = hrlua_check_client(L, 1);
  size_t i = check_master(L, 2, c->client);
  hrl_master_info info;
  if (!hrl_client_master_info(c->client, i, &info)) {
    return luaL_argerror(L, 2, "no such master");
  }
  lua_createtable(L, 0, 5);
  if (info.path != NULL) {
    lua_pushstring(L, info.path);
    lua_setfield(L, -2, "path");
  } else {
    lua_pushstring(L, info.host);
    lua_setfield(L, -2, "host");
    lua_pushinteger(L, (lua_Integer)info.port);
    lua_setfield(L, -2, "port");
  }
  lua_pushinteger(L, (lua_Integer)info.db);
  lua_setfield(L, -2, "db");
  lua_pushstring(L, hrl_client_master_label(c->client, i));
  lua_setfield(L, -2, "label");
  lua_pushinteger(L, (lua_Integer)c->connect_timeout_ms);
  lua_setfield(L, -2, "connect_timeout_ms");
  lua_pushinteger(L, (lua_Integer)c->timeout_ms);
  lua_setfield(L, -2, "timeout_ms");
  if (info.tls) {
    push_tls(L, &info.tls_settings);
  }
  if (info.cluster || info.sentinel) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, info.cluster ? "cluster" : "sentinel");
  }
  lua_pushboolean(L, info.asks_server);
  lua_setfield(L, -2, "asks_server");
  return 1;
}

/* core.now() -> seconds of the protocol's clock (hrl_now_us: CLOCK_BOOTTIME).
 */
static int core_now(lua_State *L) {
  lua_pushnumber(L, (lua_Number)hrl_now_us() / 1e6);
  return 1;
}

void hrlua_open_proto(lua_State *L) {
  static const luaL_Reg lock_methods[] = {{"begin", lock_begin},
                                          {"step", lock_step},
                                          {"command", lock_command},
                                          {"reply", lock_reply},
                                          {"fail", lock_fail},
                                          {"missed", lock_missed},
                                          {"skippable", lock_skippable},
                                          {"client", lock_client},
                                          {"target", lock_target},
                                          {"renew_due", lock_renew_due},
                                          {"renew_begin", lock_renew_begin},
                                          {"renew_end", lock_renew_end},
                                          {"waiter", lock_waiter},
                                          {"notified", lock_notified},
                                          {"wake", lock_wake},
                                          {NULL, NULL}};
  static const luaL_Reg client_methods[] = {
      {"channel", client_channel},
      {"handshake", client_handshake},
      {"handshake_reply", client_handshake_reply},
      {"master_info", client_master_info},
      {NULL, NULL}};
  hrlua_add_methods(L, HRLUA_LOCK_MT, lock_methods);
  hrlua_add_methods(L, HRLUA_CLIENT_MT, client_methods);
  lua_pushcfunction(L, core_now);
  lua_setfield(L, -2, "now");
}
