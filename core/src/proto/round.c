/* One round of the protocol as a driver sees it: the command for each
 * master, what its reply means, its failures and missed deadlines, and
 * when a late master need not be waited for (hiredlock/proto.h). The
 * decisions between rounds are redlock.c's. */
#include <string.h>

#include "detail.h"
#include "reply.h"
#include "state.h"

static hrl_command_args command_args(const hrl_lock *lk) {
  const hrl_op *op = &lk->op;
  hrl_command_args a = {
      lk->key,
      lk->key_len,
      lk->fence_key,
      lk->fence_key_len,
      op->token,
      op->round_kind == HRL_ROUND_FENCE ? op->fence : op->ttl_ms};
  return a;
}

/* The EVAL form of the round's script command, built once per round. */
static void build_eval(hrl_lock *lk) {
  hrl_op *op = &lk->op;
  if (op->cmd_eval_len == 0) {
    hrl_command_args a = command_args(lk);
    op->cmd_eval_len =
        hrl_resp_command(op->cmd_eval, op->round_kind, false, &a);
  }
}

/* A release or extend: a script whose late run still matters. */
static bool runs_late(hrl_round_kind kind) {
  return kind == HRL_ROUND_RELEASE || kind == HRL_ROUND_EXTEND;
}

void hrl_round_start(hrl_lock *lk, hrl_round_kind kind, int64_t now_us) {
  hrl_op *op = &lk->op;
  op->round_kind = kind;
  op->round_start_us = now_us;
  op->cmd_eval_len = 0;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    op->nodes[i].result = HRL_NODE_PENDING;
    op->nodes[i].eval_sent = false;
    op->nodes[i].sent = false;
    op->nodes[i].missed = false;
    op->nodes[i].replies = 0;
    op->nodes[i].set = HRL_NODE_PENDING;
    op->nodes[i].counter = 0;
    op->nodes[i].msg[0] = '\0';
  }
  hrl_command_args a = command_args(lk);
  op->cmd_len = hrl_resp_command(op->cmd, kind, true, &a);
  if (!runs_late(kind)) {
    return;
  }
  /* A late master answers after the round has stopped listening, so a
   * NOSCRIPT from it (its script cache flushed while it was away) would
   * go unread and the release or extend would never run there: it gets
   * the full script at once. */
  for (size_t i = 0; i < lk->cfg->n; i++) {
    if (lk->cfg->masters[i].late) {
      build_eval(lk);
      op->nodes[i].eval_sent = true;
    }
  }
}

bool hrl_round_of_attempt(const hrl_lock *lk) {
  hrl_round_kind k = lk->op.round_kind;
  return k == HRL_ROUND_SET || k == HRL_ROUND_FENCED_ACQUIRE ||
         k == HRL_ROUND_FENCE;
}

static bool in_round(const hrl_lock *lk, size_t i) {
  hrl_phase ph = lk->op.phase;
  return i < lk->cfg->n &&
         (ph == HRL_PHASE_ACQUIRING || ph == HRL_PHASE_FENCING ||
          ph == HRL_PHASE_CLEANUP || ph == HRL_PHASE_SCRIPTING);
}

const char *hrl_proto_command(hrl_lock *lk, size_t i, size_t *len) {
  if (!in_round(lk, i)) {
    *len = 0;
    return NULL;
  }
  hrl_op *op = &lk->op;
  op->nodes[i].sent = true;
  if (op->nodes[i].eval_sent) {
    *len = op->cmd_eval_len;
    return op->cmd_eval;
  }
  *len = op->cmd_len;
  return op->cmd;
}

int hrl_proto_command_replies(const hrl_lock *lk, size_t i) {
  if (!in_round(lk, i)) {
    return 0;
  }
  return lk->op.nodes[i].eval_sent ? 1 : hrl_resp_replies(lk->op.round_kind);
}

hrl_node_result hrl_proto_reply(hrl_lock *lk, size_t i,
                                const hrl_reply *reply) {
  if (!in_round(lk, i)) {
    return HRL_NODE_PROTOCOL;
  }
  hrl_op *op = &lk->op;
  hrl_node *node = &op->nodes[i];
  lk->cfg->masters[i].late = false; /* it answers this round's command */
  if (node->result != HRL_NODE_PENDING) {
    return node->result;
  }
  if (op->round_kind == HRL_ROUND_FENCED_ACQUIRE && node->replies++ == 1) {
    node->result = hrl_reply_counter(node->set, reply, &node->counter,
                                     node->msg, sizeof node->msg);
    return node->result;
  }
  bool noscript;
  hrl_node_result r = hrl_reply_classify(op->round_kind, reply, &noscript,
                                         node->msg, sizeof node->msg);
  if (op->round_kind == HRL_ROUND_FENCED_ACQUIRE) {
    node->set = r; /* the INCR's reply comes next */
    return HRL_NODE_MORE;
  }
  if (noscript) {
    if (node->eval_sent) {
      hrl_detailf(node->msg, sizeof node->msg, "NOSCRIPT in reply to EVAL");
      node->result = HRL_NODE_PROTOCOL;
      return node->result;
    }
    build_eval(lk);
    node->eval_sent = true;
    return HRL_NODE_RESEND;
  }
  node->result = r;
  return r;
}

bool hrl_proto_settled(const hrl_lock *lk) {
  const hrl_op *op = &lk->op;
  switch (op->phase) {
  case HRL_PHASE_CLEANUP:
    return true;
  case HRL_PHASE_ACQUIRING:
  case HRL_PHASE_FENCING:
  case HRL_PHASE_SCRIPTING: {
    size_t ok = 0;
    for (size_t i = 0; i < lk->cfg->n; i++) {
      ok += op->nodes[i].result == HRL_NODE_OK;
    }
    return ok >= lk->cfg->quorum;
  }
  default:
    return false;
  }
}

void hrl_proto_fail(hrl_lock *lk, size_t i, hrl_node_result why,
                    const char *message) {
  if (!in_round(lk, i) || lk->op.nodes[i].result != HRL_NODE_PENDING) {
    return;
  }
  hrl_node *node = &lk->op.nodes[i];
  bool is_failure = why == HRL_NODE_UNREACHABLE || why == HRL_NODE_AUTH ||
                    why == HRL_NODE_SERVER || why == HRL_NODE_PROTOCOL;
  node->result = is_failure ? why : HRL_NODE_PROTOCOL;
  if (message == NULL) {
    message = "failed";
  }
  hrl_detail_copy_text(node->msg, sizeof node->msg, message, strlen(message));
}

void hrl_proto_missed(hrl_lock *lk, size_t i, const char *message) {
  if (!in_round(lk, i)) {
    return;
  }
  lk->cfg->masters[i].late = true;
  lk->op.nodes[i].missed = true;
  if (runs_late(lk->op.round_kind)) {
    build_eval(lk); /* for hrl_proto_late_command */
  }
  hrl_proto_fail(lk, i, HRL_NODE_UNREACHABLE, message);
}

const char *hrl_proto_late_command(const hrl_lock *lk, size_t i, size_t *len) {
  const hrl_op *op = &lk->op;
  if (!in_round(lk, i) || !runs_late(op->round_kind) ||
      op->nodes[i].eval_sent || op->cmd_eval_len == 0) {
    *len = 0;
    return NULL;
  }
  *len = op->cmd_eval_len;
  return op->cmd_eval;
}

bool hrl_proto_skippable(const hrl_lock *lk, size_t i) {
  return in_round(lk, i) && lk->op.nodes[i].result == HRL_NODE_PENDING &&
         lk->cfg->masters[i].late && hrl_proto_settled(lk);
}
