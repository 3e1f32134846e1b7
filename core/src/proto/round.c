/* One round of the protocol as a driver sees it: the command for each
 * master, what its reply means, its failures and missed deadlines, and
 * when a late master need not be waited for (hiredlock/proto.h). The
 * decisions between rounds are redlock.c's. */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "reply.h"
#include "sibling_key.h"
#include "state.h"

static bool is_try(hrl_round_kind kind) {
  return kind == HRL_ROUND_TRY || kind == HRL_ROUND_FENCED_TRY ||
         kind == HRL_ROUND_ASIDE;
}

static hrl_command_args command_args(hrl_lock *lk) {
  const hrl_op *op = &lk->op;
  hrl_command_args a = {
      lk->key,
      lk->key_len,
      lk->queue,
      lk->queue_len,
      lk->waiters,
      lk->waiters_len,
      lk->fence_key,
      lk->fence_key_len,
      op->token,
      op->round_kind == HRL_ROUND_FENCE ? op->fence : op->ttl_ms,
      op->arrival_us,
      lk->cfg->lease_ms,
      NULL,
      0};
  if (is_try(op->round_kind)) {
    a.channel = hrl_config_channel(lk->cfg, &a.channel_len);
  }
  return a;
}

/* The EVAL form of the round's script command, built once per round into
 * a buffer allocated on first use (few locks ever need one: the scripts
 * are cached on the masters). False when out of memory. */
static bool build_eval(hrl_lock *lk) {
  hrl_op *op = &lk->op;
  if (op->cmd_eval == NULL) {
    op->cmd_eval = malloc(hrl_resp_eval_capacity(
        lk->key_len, HRL_SIBLING_KEY_MAX(lk->key_len, HRL_SIBLING_SUFFIX_MAX),
        lk->cfg->channel_len + 1));
    if (op->cmd_eval == NULL) {
      return false;
    }
  }
  if (op->cmd_eval_len == 0) {
    hrl_command_args a = command_args(lk);
    op->cmd_eval_len =
        hrl_resp_command(op->cmd_eval, op->round_kind, false, &a);
  }
  return true;
}

/* A script whose late run still matters: a release or extend, a waiter's
 * try or step aside (it passes on what it holds). Not the fence round (of
 * no use late) nor a fenced try (a pipeline: its INCR would owe a reply
 * more than a late command's one). */
static bool runs_late(hrl_round_kind kind) {
  return kind == HRL_ROUND_RELEASE || kind == HRL_ROUND_EXTEND ||
         kind == HRL_ROUND_TRY || kind == HRL_ROUND_ASIDE;
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
    op->nodes[i].pttl = -1;
    op->nodes[i].replies = 0;
    op->nodes[i].resend = false;
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
   * the full script at once (when memory allows: else the digest, and the
   * script runs wherever it is cached). */
  for (size_t i = 0; i < lk->cfg->n; i++) {
    if (lk->cfg->masters[i].late && build_eval(lk)) {
      op->nodes[i].eval_sent = true;
    }
  }
}

bool hrl_round_of_attempt(const hrl_lock *lk) {
  hrl_round_kind k = lk->op.round_kind;
  return k == HRL_ROUND_SET || k == HRL_ROUND_FENCED_ACQUIRE ||
         k == HRL_ROUND_FENCE || k == HRL_ROUND_TRY ||
         k == HRL_ROUND_FENCED_TRY;
}

static bool in_round(const hrl_lock *lk, size_t i) {
  switch (lk->op.phase) {
  case HRL_PHASE_ACQUIRING:
  case HRL_PHASE_FENCING:
  case HRL_PHASE_CLEANUP:
  case HRL_PHASE_SCRIPTING:
  case HRL_PHASE_TRYING:
  case HRL_PHASE_ASIDE:
  case HRL_PHASE_LEAVING:
    return i < lk->cfg->n;
  default:
    return false;
  }
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
  /* The EVAL form of a fenced try is a pipeline too. */
  return hrl_resp_replies(lk->op.round_kind);
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
  bool pipeline = hrl_resp_replies(op->round_kind) == 2;
  bool noscript;
  if (pipeline && node->replies++ == 1) {
    if (!node->resend) {
      node->result = hrl_reply_counter(node->set, reply, &node->counter,
                                       node->msg, sizeof node->msg);
      return node->result;
    }
    /* The try said NOSCRIPT, and its INCR ran before anything of ours
     * was there: both go again, the try in full (the counter must be read
     * after the try). */
    node->replies = 0;
    node->resend = false;
    noscript = true;
  } else {
    hrl_node_result r =
        hrl_reply_classify(op->round_kind, reply, &noscript, &node->pttl,
                           node->msg, sizeof node->msg);
    if (pipeline) {
      node->set = r; /* the INCR's reply comes next */
      node->resend = noscript;
      return HRL_NODE_MORE;
    }
    if (!noscript) {
      node->result = r;
      return r;
    }
  }
  if (node->eval_sent || !build_eval(lk)) {
    hrl_detailf(node->msg, sizeof node->msg,
                node->eval_sent ? "NOSCRIPT in reply to EVAL"
                                : "out of memory");
    node->result = HRL_NODE_PROTOCOL;
    return node->result;
  }
  node->eval_sent = true;
  return HRL_NODE_RESEND;
}

bool hrl_proto_settled(const hrl_lock *lk) {
  const hrl_op *op = &lk->op;
  switch (op->phase) {
  case HRL_PHASE_CLEANUP:
  case HRL_PHASE_ASIDE:
  case HRL_PHASE_LEAVING:
    return true; /* rounds whose replies decide nothing */
  case HRL_PHASE_ACQUIRING:
  case HRL_PHASE_FENCING:
  case HRL_PHASE_TRYING:
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
    build_eval(lk); /* for hrl_proto_late_command (none without memory) */
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
