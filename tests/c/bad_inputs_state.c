/* The C bad-input table, part 2 (bad_inputs.h): the protocol fed what it
 * should not get, calls in the wrong state, servers that answer with
 * errors, networks that fail. BAD_ENV rows need the servers of
 * tests/reliability/hrlrel/badenv.py. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bad_inputs.h"

static hrl_status op_acquire0(hrl_lock *lk) {
  return hrl_lock_acquire(lk, 0);
}
static hrl_status op_acquire200(hrl_lock *lk) {
  return hrl_lock_acquire(lk, 200);
}
static hrl_status op_release(hrl_lock *lk) {
  return hrl_lock_release(lk);
}
static hrl_status op_extend_released(hrl_lock *lk) {
  return hrl_lock_extend(lk, 0);
}
static hrl_status op_begin_twice(hrl_lock *lk) {
  hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us());
  hrl_step_info si;
  hrl_proto_step(lk, hrl_now_us(), &si); /* a round is out */
  return hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us());
}

/* --- the protocol ----------------------------------------------------- */
static bad_outcome type_parser(void) {
  hrl_parser *p = hrl_parser_new();
  hrl_status s = hrl_parser_feed(p, "?garbage\r\n", 10);
  hrl_reply r;
  int next = s == HRL_OK ? hrl_parser_next(p, &r) : -9;
  hrl_parser_free(p);
  return bad_value("feed %s, next %d", hrl_strerror(s), next);
}
static bad_outcome type_reply_index(void) {
  hrl_client *c = bad_client_on(bad_ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "bad:i", 5, 5000, &lk, NULL, 0);
  hrl_proto_begin(lk, HRL_OP_ACQUIRE, 0, hrl_now_us());
  hrl_step_info si;
  hrl_proto_step(lk, hrl_now_us(), &si);
  hrl_reply ok = {.type = HRL_REPLY_STATUS, .str = "OK", .len = 2};
  hrl_node_result r = hrl_proto_reply(lk, 5, &ok);
  size_t len = 99;
  const char *cmd_out = hrl_proto_command(lk, 5, &len);
  hrl_proto_fail(lk, 5, HRL_NODE_UNREACHABLE, NULL);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return bad_value("reply to master 5 of 1: %s, command %s/%zu",
                   r == HRL_NODE_PROTOCOL ? "protocol" : "other",
                   cmd_out == NULL ? "NULL" : "set", len);
}

/* --- states ----------------------------------------------------------- */
static bad_outcome state_release_unheld(void) {
  return bad_on_lock(bad_ok_url(), "bad:s", 0, op_release);
}
static bad_outcome state_release_twice(void) {
  return bad_on_lock(bad_ok_url(), "bad:s", 2, op_release);
}
static bad_outcome state_extend_after(void) {
  return bad_on_lock(bad_ok_url(), "bad:s", 2, op_extend_released);
}
static bad_outcome state_acquire_held(void) {
  return bad_on_lock(bad_ok_url(), "bad:s", 1, op_acquire0);
}
static bad_outcome state_begin_twice(void) {
  return bad_on_lock(bad_ok_url(), "bad:s", 0, op_begin_twice);
}
static bad_outcome state_free_null(void) {
  hrl_lock_free(NULL);
  hrl_client_free(NULL);
  return bad_value("no-op");
}
static bad_outcome state_fork(void) {
  hrl_client *c = bad_client_on(bad_ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "bad:fork", 8, 5000, &lk, NULL, 0);
  hrl_lock_acquire(lk, 0); /* the parent's connection is open */
  hrl_lock_release(lk);
  pid_t pid = fork();
  if (pid == 0) {
    int code =
        hrl_lock_acquire(lk, 0) == HRL_OK && hrl_lock_release(lk) == HRL_OK ? 0
                                                                            : 1;
    hrl_lock_free(lk); /* a leak checker follows the child too */
    hrl_client_free(c);
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  hrl_status again = hrl_lock_acquire(lk, 0); /* the parent's still works */
  hrl_lock_release(lk);
  hrl_lock_free(lk);
  hrl_client_free(c);
  return bad_value("child: %s, parent after: %s",
                   WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok"
                                                                 : "failed",
                   hrl_strerror(again));
}
static bad_outcome state_after_fork_call(void) {
  hrl_client *c = bad_client_on(bad_ok_url());
  hrl_lock *lk = NULL;
  hrl_lock_new(c, "bad:fork2", 9, 5000, &lk, NULL, 0);
  hrl_lock_acquire(lk, 0);
  hrl_lock_release(lk);
  pid_t pid = fork();
  if (pid == 0) {
    hrl_client_after_fork(c);
    int code = hrl_lock_acquire(lk, 0) == HRL_OK ? 0 : 1;
    hrl_lock_free(lk);
    hrl_client_free(c);
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  hrl_lock_free(lk);
  hrl_client_free(c);
  /* The child exited holding it: the key stays until its TTL. */
  void *r = bad_inspect();
  bad_inspect_cmd(r, "DEL %s", "bad:fork2");
  bad_inspect_free(r);
  return bad_value("child after hrl_client_after_fork: %s",
                   WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok"
                                                                 : "failed");
}

/* --- servers and networks --------------------------------------------- */
static bad_outcome srv(const char *var) {
  return bad_on_lock(bad_env(var), "bad:srv", 0, op_acquire200);
}
#define SRV(fn, var)                                                           \
  static bad_outcome fn(void) {                                                \
    return srv(var);                                                           \
  }
SRV(srv_oom, "HRL_BAD_OOM")
SRV(srv_ro, "HRL_BAD_RO")
SRV(srv_busy, "HRL_BAD_BUSY")
SRV(srv_loading, "HRL_BAD_LOADING")
SRV(srv_noauth, "HRL_BAD_NOAUTH")
SRV(srv_wrongpass, "HRL_BAD_WRONGPASS")
SRV(net_refused, "HRL_BAD_REFUSED")
SRV(net_reset, "HRL_BAD_RESET")
SRV(net_nosock, "HRL_BAD_MISSING_SOCK")
static bad_outcome srv_wrongtype_acq(void) {
  void *r = bad_inspect();
  bad_inspect_cmd(r, "DEL %s", "bad:list");
  bad_inspect_cmd(r, "LPUSH %s x", "bad:list");
  bad_outcome o = bad_on_lock(bad_ok_url(), "bad:list", 0, op_acquire0);
  bad_inspect_cmd(r, "DEL %s", "bad:list");
  bad_inspect_free(r);
  return o;
}
static hrl_status op_listify_release(hrl_lock *lk) {
  void *r = bad_inspect();
  bad_inspect_cmd(r, "DEL %s", "bad:list2");
  bad_inspect_cmd(r, "LPUSH %s x", "bad:list2");
  hrl_status s = hrl_lock_release(lk);
  bad_inspect_cmd(r, "DEL %s", "bad:list2");
  bad_inspect_free(r);
  return s;
}
static bad_outcome srv_wrongtype_rel(void) {
  return bad_on_lock(bad_ok_url(), "bad:list2", 1, op_listify_release);
}

const bad_row bad_rows_state[] = {
    {"type", "RESP garbage to the parser", type_parser, BAD_VALUE, "next -1",
     BAD_NONE},
    {"type", "reply for master index 5 of 1", type_reply_index, BAD_VALUE,
     "protocol, command NULL/0", BAD_OK},
    {"state", "release, never acquired", state_release_unheld, HRL_ENOTHELD, "",
     BAD_OK},
    {"state", "release twice", state_release_twice, HRL_ENOTHELD, "", BAD_OK},
    {"state", "extend after release", state_extend_after, HRL_ENOTHELD, "",
     BAD_OK},
    {"state", "acquire on a held lock object", state_acquire_held, HRL_EHELD,
     "", BAD_OK},
    {"state", "hrl_proto_begin while a round is out", state_begin_twice,
     HRL_EINVAL, "another operation is running", BAD_OK},
    {"state", "hrl_lock_free(NULL), hrl_client_free(NULL)", state_free_null,
     BAD_VALUE, "no-op", BAD_NONE},
    {"state", "calls in a fork() child (inherited client)", state_fork,
     BAD_VALUE, "child: ok, parent after: ok", BAD_OK},
    {"state", "hrl_client_after_fork() then acquire in the child",
     state_after_fork_call, BAD_VALUE, "child after hrl_client_after_fork: ok",
     BAD_OK},
    {"server", "OOM (maxmemory 1)", srv_oom, HRL_ESERVER,
     "0 of 1 masters answered (1 needed)", BAD_ENV},
    {"server", "READONLY (a replica)", srv_ro, HRL_ESERVER, "READONLY",
     BAD_ENV},
    {"server", "BUSY (a script runs)", srv_busy, HRL_ESERVER, "BUSY", BAD_ENV},
    {"server", "LOADING (scripted reply)", srv_loading, HRL_ESERVER, "LOADING",
     BAD_ENV},
    {"server", "NOAUTH (no password given)", srv_noauth, HRL_EAUTH, "NOAUTH",
     BAD_ENV},
    {"server", "WRONGPASS", srv_wrongpass, HRL_EAUTH, "WRONGPASS", BAD_ENV},
    {"server", "WRONGTYPE: the name holds a list (acquire)", srv_wrongtype_acq,
     HRL_ETIMEOUT, "", BAD_OK},
    {"server", "WRONGTYPE: the key became a list (release)", srv_wrongtype_rel,
     HRL_ENOTOWNED, "", BAD_OK},
    {"network", "connection refused", net_refused, HRL_ECONNECT,
     "connection refused", BAD_ENV},
    {"network", "connection reset", net_reset, HRL_ECONNECT, "reset", BAD_ENV},
    {"network", "unix socket that does not exist", net_nosock, HRL_ECONNECT,
     "no such file or directory", BAD_ENV},
};
const size_t bad_rows_state_count =
    sizeof bad_rows_state / sizeof bad_rows_state[0];
