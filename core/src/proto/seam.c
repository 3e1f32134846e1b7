/*
 * The public calls of the sans-I/O protocol (hiredlock/proto.h), which
 * every driver makes: each runs the protocol's own call (redlock.c,
 * round.c, target.c, lease.c) or, for an inspection, inspect.c's, and
 * around it what an operator needs (observe.h): an owner label's command
 * behind the round's (owner.c), whose reply is read last, so the driver
 * sees the command's decision only once every reply of its bytes is in;
 * and the counters and events of observe.c. A driver needs nothing new:
 * more bytes, one more reply counted, "more" until the last.
 */
#include "state.h"

/* The operation begun last is an inspection (begin sets the kind only
 * when it begins one: a refused begin is followed by no step). */
static inline bool inspecting(const hrl_lock *lk) {
  return lk->op.kind == HRL_OP_INSPECT;
}

hrl_status hrl_proto_begin(hrl_lock *lk, hrl_op_kind kind, int64_t arg_ms,
                           int64_t now_us) {
  hrl_status st = kind == HRL_OP_INSPECT
                      ? hrl_inspect_begin(lk, now_us)
                      : hrl_redlock_begin(lk, kind, arg_ms, now_us);
  if (st == HRL_OK) {
    hrl_observe_begin(lk, now_us);
  }
  return st;
}

hrl_step hrl_proto_step(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  bool done_before = lk->op.phase == HRL_PHASE_DONE;
  lk->obs.now_us = now_us; /* the replies and failures until the next */
  if (lk->obs.handed || lk->obs.dead != 0) {
    hrl_observe_round(lk); /* the round that ends said it handed off */
  }
  hrl_step step = inspecting(lk) ? hrl_inspect_step(lk, now_us, info)
                                 : hrl_redlock_step(lk, now_us, info);
  if (step == HRL_STEP_ROUND) {
    for (size_t i = 0; lk->extra != NULL && i < lk->cfg->n; i++) {
      hrl_owner_forget(lk, i);
    }
  } else if (step == HRL_STEP_DONE && !done_before) {
    hrl_observe_done(lk, info->status, now_us);
  }
  return step;
}

const char *hrl_proto_command(hrl_lock *lk, size_t i, size_t *len) {
  if (inspecting(lk)) {
    return hrl_inspect_command(lk, i, len);
  }
  const char *bytes = hrl_node_command(lk, i, len);
  return lk->extra != NULL ? hrl_owner_command(lk, i, bytes, len) : bytes;
}

int hrl_proto_command_replies(const hrl_lock *lk, size_t i) {
  if (inspecting(lk)) {
    return hrl_inspect_command_replies(lk, i);
  }
  return hrl_node_command_replies(lk, i) +
         (lk->extra != NULL ? hrl_owner_replies(lk, i) : 0);
}

const char *hrl_proto_late_command(const hrl_lock *lk, size_t i, size_t *len) {
  if (inspecting(lk)) {
    *len = 0;
    return NULL;
  }
  return hrl_node_late_command(lk, i, len);
}

/* Whether master i's reply has anything for observe.c: the master was
 * down, the reply is a failure, or a release's answer says more than 1.
 * The fast path (an OK or a 1 from a master that is up) stops here. */
static inline bool worth_observing(const hrl_lock *lk, size_t i,
                                   const hrl_reply *reply,
                                   hrl_node_result before, hrl_node_result r) {
  if (i >= lk->cfg->n) {
    return false;
  }
  if (lk->cfg->obs.down_since_us[i] != 0) {
    return true;
  }
  if (reply->type == HRL_REPLY_INTEGER && reply->integer >= 2) {
    return true; /* a release's or step aside's hand-offs (observe.c) */
  }
  return before == HRL_NODE_PENDING &&
         (r == HRL_NODE_AUTH || r == HRL_NODE_DENIED || r == HRL_NODE_SERVER ||
          r == HRL_NODE_PROTOCOL);
}

hrl_node_result hrl_proto_reply(hrl_lock *lk, size_t i,
                                const hrl_reply *reply) {
  hrl_node_result decided;
  if (lk->extra != NULL && hrl_owner_takes(lk, i, &decided)) {
    return decided; /* the label's reply: the command's decision now */
  }
  hrl_node_result before =
      hrl_proto_in_round(lk, i) ? lk->op.nodes[i].result : HRL_NODE_OK;
  hrl_node_result r = inspecting(lk) ? hrl_inspect_reply(lk, i, reply)
                                     : hrl_node_reply(lk, i, reply);
  if (worth_observing(lk, i, reply, before, r)) {
    hrl_observe_reply(lk, i, reply, before, r);
  }
  return lk->extra != NULL ? hrl_owner_decided(lk, i, r) : r;
}

hrl_node_result hrl_proto_fail(hrl_lock *lk, size_t i, hrl_node_result why,
                               const char *message) {
  hrl_node_result before =
      hrl_proto_in_round(lk, i) ? lk->op.nodes[i].result : HRL_NODE_OK;
  if (lk->extra != NULL) {
    hrl_owner_forget(lk, i);
  }
  hrl_node_result r = inspecting(lk) ? hrl_inspect_fail(lk, i, why, message)
                                     : hrl_node_fail(lk, i, why, message);
  hrl_observe_fail(lk, i, before, why, message);
  return r;
}

void hrl_proto_missed(hrl_lock *lk, size_t i, const char *message) {
  hrl_node_result before =
      hrl_proto_in_round(lk, i) ? lk->op.nodes[i].result : HRL_NODE_OK;
  if (lk->extra != NULL) {
    hrl_owner_forget(lk, i);
  }
  if (inspecting(lk)) {
    if (hrl_proto_in_round(lk, i)) {
      lk->cfg->masters[i].late = true;
      lk->op.nodes[i].missed = true;
      hrl_inspect_fail(lk, i, HRL_NODE_UNREACHABLE, message);
    }
  } else {
    hrl_node_missed(lk, i, message);
  }
  hrl_observe_fail(lk, i, before, HRL_NODE_UNREACHABLE, message);
}

hrl_status hrl_proto_renew_end(hrl_lock *lk, int64_t now_us) {
  hrl_status st = hrl_lease_renew_end(lk, now_us);
  hrl_observe_renewal(lk, st, now_us);
  return st;
}
