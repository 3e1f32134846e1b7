/* One round of the protocol as a driver sees it: the command for each
 * master, what its reply means, its failures and missed deadlines, and
 * when a late master need not be waited for (hiredlock/proto.h). The
 * decisions between rounds are redlock.c's. */
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "command_cache.h"
#include "detail.h"
#include "reply.h"
#include "sentinel.h"
#include "sibling_key.h"
#include "state.h"

static bool is_try(hrl_round_kind kind) {
  return kind == HRL_ROUND_TRY || kind == HRL_ROUND_FENCED_TRY ||
         kind == HRL_ROUND_ASIDE;
}

/* The rounds in which a waiter tries to take the lock. */
static bool takes(hrl_round_kind kind) {
  return kind == HRL_ROUND_TRY || kind == HRL_ROUND_FENCED_TRY;
}

/* A hold's round that would take (its first attempt, a try: hold.c). It
 * has no plain form: a hold's keys are the hash and its queue, and no one
 * command may take a read, a write or a permit on the hash alone. */
static bool hold_takes(const hrl_lock *lk) {
  hrl_round_kind kind = lk->op.round_kind;
  return hrl_lock_is_hold(lk) && (takes(kind) || kind == HRL_ROUND_SET);
}

/* The rounds that send the queue script (three keys), or a hold's script
 * with its queue's keys (hold.c): a migrating slot may split them. */
static bool is_queue_round(const hrl_lock *lk, hrl_round_kind kind) {
  return is_try(kind) || kind == HRL_ROUND_RELEASE ||
         (hrl_lock_is_hold(lk) && kind == HRL_ROUND_SET);
}

hrl_command_args hrl_round_args(hrl_lock *lk) {
  const hrl_op *op = &lk->op;
  hrl_command_args a = {
      lk->key, lk->key_len, lk->queue, lk->queue_len, lk->waiters,
      lk->waiters_len, lk->fence_key, lk->fence_key_len, op->token,
      op->round_kind == HRL_ROUND_FENCE ? op->fence : op->ttl_ms,
      op->arrival_us, lk->cfg->lease_ms, lk->cfg->window_ms, NULL, 0, lk->mode,
      lk->permits,
      /* a hold's extend and fence round name the permit
       * it holds, its tries the one it would rather get */
      op->round_kind == HRL_ROUND_EXTEND || op->round_kind == HRL_ROUND_FENCE
          ? lk->permit
          : op->hint,
      false};
  if (is_try(op->round_kind)) {
    a.channel = hrl_config_channel(lk->cfg, &a.channel_len);
    a.handed_ttl = hrl_wait_handed_ttl(lk);
  }
  return a;
}

/* The buffers for the EVAL form of the round's script command and for the
 * plain release, allocated together on first use (few locks ever need
 * them: the scripts are cached on the masters, slots rarely migrate).
 * False when out of memory. */
static bool eval_buffers(hrl_lock *lk) {
  hrl_op *op = &lk->op;
  if (op->cmd_eval != NULL) {
    return true;
  }
  /* Room for an ASKING in front of each, as the lock's command buffer has
   * (a cluster's ASK sends the two at once). */
  size_t cap =
      HRL_ASKING_LEN +
      hrl_resp_eval_capacity(
          lk->key_len, HRL_SIBLING_KEY_MAX(lk->key_len, HRL_SIBLING_SUFFIX_MAX),
          lk->cfg->channel_len + 1);
  char *buf = malloc(2 * cap);
  if (buf == NULL) {
    return false;
  }
  memcpy(buf, HRL_ASKING, HRL_ASKING_LEN);
  memcpy(buf + cap, HRL_ASKING, HRL_ASKING_LEN);
  op->cmd_eval = buf + HRL_ASKING_LEN;
  op->cmd_plain = buf + cap + HRL_ASKING_LEN;
  return true;
}

/* The plain form of the round's command, for a migrating cluster slot
 * (TRYAGAIN: the queue script's keys are not all on one node): the plain
 * try on the lock key (and counter) alone, with the round's WAIT behind it
 * as behind cmd, or the plain release (a release or step aside: never
 * waits), built once per round. False when out of memory. */
static bool plain_command(hrl_lock *lk) {
  hrl_op *op = &lk->op;
  if (!eval_buffers(lk)) {
    return false;
  }
  if (op->cmd_plain_len == 0) {
    hrl_command_args a = hrl_round_args(lk);
    op->cmd_plain_len =
        takes(op->round_kind)
            ? hrl_resp_plain_try(op->cmd_plain,
                                 op->round_kind == HRL_ROUND_FENCED_TRY, &a)
            : hrl_resp_plain_release(op->cmd_plain, &a);
    memcpy(op->cmd_plain + op->cmd_plain_len, op->cmd + op->cmd_len,
           op->wait_len);
  }
  return true;
}

/* The EVAL form of the round's script command, built once per round, with
 * the round's WAIT behind it as behind cmd. */
static bool build_eval(hrl_lock *lk) {
  hrl_op *op = &lk->op;
  if (!eval_buffers(lk)) {
    return false;
  }
  if (op->cmd_eval_len == 0) {
    hrl_command_args a = hrl_round_args(lk);
    op->cmd_eval_len =
        hrl_resp_command(op->cmd_eval, op->round_kind, false, &a);
    memcpy(op->cmd_eval + op->cmd_eval_len, op->cmd + op->cmd_len,
           op->wait_len);
  }
  return true;
}

/* The rounds whose writes make a grant: a vote for them counts only once
 * replicas have the write (sync_replicas). Not a release, a waiter's step
 * aside or leave (losing one only delays the next holder until the TTL). */
static bool grants(hrl_round_kind kind) {
  return kind == HRL_ROUND_SET || kind == HRL_ROUND_FENCED_ACQUIRE ||
         kind == HRL_ROUND_FENCE || kind == HRL_ROUND_EXTEND ||
         kind == HRL_ROUND_TRY || kind == HRL_ROUND_FENCED_TRY;
}

uint32_t hrl_round_wait_replicas(const hrl_lock *lk, size_t i) {
  const hrl_endpoint *ep = &lk->cfg->masters[i].ep;
  return ep->has_sync_replicas ? ep->sync_replicas : lk->opts.sync_replicas;
}

bool hrl_round_waits(const hrl_lock *lk, size_t i) {
  return lk->may_wait && grants(lk->op.round_kind) &&
         (lk->opts.sync_aof || hrl_round_wait_replicas(lk, i) > 0);
}

bool hrl_round_may_wait(const hrl_config *cfg, const hrl_lock_options *lo) {
  if (lo->sync_aof) {
    return true;
  }
  for (size_t i = 0; i < cfg->n; i++) {
    const hrl_endpoint *ep = &cfg->masters[i].ep;
    if ((ep->has_sync_replicas ? ep->sync_replicas : lo->sync_replicas) > 0) {
      return true;
    }
  }
  return false;
}

/* How long WAIT may block on the server: half of the per-master deadline
 * less a fifth of it (1 ms at least) for the replies to come back, so that
 * a master whose replicas are slow answers "too few" rather than nothing,
 * also when a NOSCRIPT makes the script and its WAIT go twice. At least
 * 1 ms: WAIT 0 would block for ever. */
static uint32_t wait_timeout_ms(uint32_t deadline_ms) {
  uint32_t margin = deadline_ms / 5 > 1 ? deadline_ms / 5 : 1;
  uint32_t half = deadline_ms > margin ? (deadline_ms - margin) / 2 : 0;
  return half > 1 ? half : 1;
}

/* The WAIT behind the round's command, for the first master that waits;
 * a master that waits for another count gets its own bytes
 * (hrl_proto_command). */
static void start_wait(hrl_lock *lk, uint32_t timeout_ms) {
  hrl_op *op = &lk->op;
  op->wait_len = 0;
  op->wait_ms = wait_timeout_ms(timeout_ms);
  for (size_t i = 0; lk->may_wait && i < lk->cfg->n; i++) {
    if (hrl_round_waits(lk, i)) {
      op->wait_replicas = hrl_round_wait_replicas(lk, i);
      op->wait_len = hrl_resp_wait(op->cmd + op->cmd_len, op->wait_replicas,
                                   lk->opts.sync_aof, op->wait_ms);
      return;
    }
  }
}

/* Replies the pipeline of master i produces in this round (an ASKING in
 * front not counted): the command's, and its WAIT's. */
static int pipeline_len(const hrl_lock *lk, size_t i) {
  return hrl_resp_replies(lk->op.round_kind) + (hrl_round_waits(lk, i) ? 1 : 0);
}

int hrl_round_late_replies(const hrl_lock *lk, size_t i) {
  return 1 + (lk->op.nodes[i].asking ? 1 : 0);
}

/* A script whose late run still matters: a release or extend, a waiter's
 * try or step aside (it passes on what it holds). Not the fence round (of
 * no use late) nor a fenced try (a pipeline: its INCR would owe a reply
 * more than a late command's one). */
bool hrl_round_runs_late(hrl_round_kind kind) {
  return kind == HRL_ROUND_RELEASE || kind == HRL_ROUND_EXTEND ||
         kind == HRL_ROUND_TRY || kind == HRL_ROUND_ASIDE;
}

void hrl_round_start(hrl_lock *lk, hrl_round_kind kind, uint32_t timeout_ms,
                     int64_t now_us) {
  hrl_op *op = &lk->op;
  op->round_kind = kind;
  op->round_start_us = now_us;
  op->cmd_eval_len = 0;
  op->cmd_plain_len = 0;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    op->nodes[i].result = HRL_NODE_PENDING;
    op->nodes[i].kind = kind;
    op->nodes[i].eval_sent = false;
    op->nodes[i].sent = false;
    op->nodes[i].missed = false;
    op->nodes[i].pttl = HRL_PTTL_UNKNOWN;
    op->nodes[i].replies = 0;
    op->nodes[i].resend = false;
    op->nodes[i].set = HRL_NODE_PENDING;
    op->nodes[i].counter = 0;
    op->nodes[i].took = false;
    op->nodes[i].unacked = false;
    op->nodes[i].redirected = false;
    op->nodes[i].plain = false;
    op->nodes[i].migrating = false;
    op->nodes[i].msg[0] = '\0';
    op->nodes[i].asking = false;
    op->nodes[i].asking_ack = false;
    op->nodes[i].redirects = 0;
    op->nodes[i].asked = 0;
    op->nodes[i].target = 0;
    op->nodes[i].permit = 0;
    if (lk->cfg->masters[i].cluster != NULL) {
      hrl_cluster_round(lk, i);
    } else if (lk->cfg->masters[i].sentinel != NULL) {
      hrl_sentinel_round(lk, i);
    }
  }
  op->cmd_len = (uint32_t)hrl_round_command(lk, kind);
  start_wait(lk, timeout_ms);
  if (!hrl_round_runs_late(kind)) {
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

void hrl_round_note_token(hrl_lock *lk) {
  const hrl_op *op = &lk->op;
  hrl_round_kind k = op->round_kind;
  bool sets = k == HRL_ROUND_SET || k == HRL_ROUND_FENCED_ACQUIRE ||
              k == HRL_ROUND_TRY || k == HRL_ROUND_FENCED_TRY;
  bool drops = k == HRL_ROUND_RELEASE || k == HRL_ROUND_ASIDE;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    const hrl_node *node = &op->nodes[i];
    uint64_t bit = (uint64_t)1 << i;
    bool answered =
        node->result == HRL_NODE_OK || node->result == HRL_NODE_REFUSED;
    /* An error reply (auth, server) ran nothing; a reply out of step or
     * none at all may hide a command that ran. */
    bool unsure = node->sent && (node->result == HRL_NODE_PENDING ||
                                 node->result == HRL_NODE_UNREACHABLE ||
                                 node->result == HRL_NODE_PROTOCOL);
    /* Sent, and neither answered nor ended with its connection (a reset
     * or a refused connect loses what was queued): a late or out-of-step
     * reply, a missed deadline (the connection kept, or closed with a FIN
     * that lets a paused server run it yet). */
    lk->op.token_in_flight |=
        node->sent && (node->missed || node->result == HRL_NODE_PENDING ||
                       node->result == HRL_NODE_PROTOCOL);
    if (sets && (node->result == HRL_NODE_OK || unsure)) {
      lk->token_at |= bit;
    } else if (drops && answered) {
      lk->token_at &= ~bit;
    }
  }
}

bool hrl_round_must_reach(const hrl_lock *lk, size_t i) {
  hrl_round_kind k = lk->op.round_kind;
  return i < lk->cfg->n && (k == HRL_ROUND_RELEASE || k == HRL_ROUND_ASIDE) &&
         (lk->token_at & ((uint64_t)1 << i)) != 0;
}

void hrl_round_withhold(hrl_lock *lk, size_t i, const char *message) {
  if (!hrl_proto_in_round(lk, i) ||
      lk->op.nodes[i].result != HRL_NODE_PENDING) {
    return;
  }
  hrl_node *node = &lk->op.nodes[i];
  node->result = HRL_NODE_UNREACHABLE;
  hrl_detail_copy_text(node->msg, sizeof node->msg, message, strlen(message));
}

bool hrl_round_of_attempt(const hrl_lock *lk) {
  hrl_round_kind k = lk->op.round_kind;
  return k == HRL_ROUND_SET || k == HRL_ROUND_FENCED_ACQUIRE ||
         k == HRL_ROUND_FENCE || k == HRL_ROUND_TRY ||
         k == HRL_ROUND_FENCED_TRY;
}

/* The last reply of a pipeline (a fenced acquire's or try's INCR, a WAIT)
 * whose first reply was a redirect: the others were read and dropped (the
 * INCR ran nowhere, or at a node the slot is leaving: fences may skip
 * numbers). A MOVED (or a primary gone) sends the pipeline again to the new
 * node. An ASK (the slot is migrating) is not followed: ASKING covers one
 * command, and the counter may be on either node until the migration ends.
 * The master refuses this attempt (the SET did not run): a waiter waits,
 * and a try after the migration gets the fence from wherever the counter
 * is then. */
static hrl_node_result pipeline_redirect(hrl_lock *lk, size_t i) {
  hrl_node *node = &lk->op.nodes[i];
  node->redirected = false;
  node->replies = 0;
  node->resend = false;
  node->took = false;
  if (node->asking) {
    node->asking = false;
    hrl_detailf(node->msg, sizeof node->msg,
                "slot %u is migrating: a fenced acquire waits for its end",
                (unsigned)lk->slot);
    node->pttl = HRL_PTTL_UNKNOWN;
    node->migrating = true;
    node->result = HRL_NODE_REFUSED;
    return node->result;
  }
  return HRL_NODE_REDIRECT;
}

/* A fenced acquire's (or try's) INCR redirected after its first command
 * was answered on this node: the counter left between the two (a
 * migration's MIGRATE, or its end). Not followed: the pipeline would go
 * again to the other node, and its SET run there too (the key on two
 * nodes, in the way of the migration). The counter is not read: a SET that
 * took holds our key here without a fence (failed: its cleanup releases
 * it), else the master answered as its SET did. */
static hrl_node_result counter_redirected(hrl_lock *lk, hrl_node *node,
                                          const hrl_reply *reply) {
  hrl_detailf(node->msg, sizeof node->msg,
              "slot %u is migrating: the counter moved (%.*s)",
              (unsigned)lk->slot, (int)(reply->len < 60 ? reply->len : 60),
              reply->str);
  node->pttl = HRL_PTTL_UNKNOWN;
  node->migrating = true;
  node->result = node->set == HRL_NODE_OK ? HRL_NODE_SERVER : node->set;
  return node->result;
}

/* A cluster node's TRYAGAIN: the slot is migrating and the queue script's
 * keys (lock, queue, waiters) are not all on this node. The plain form
 * goes again instead, on the lock key alone, which a migration does not
 * hold up (one key follows ASK): a release or step aside as the plain
 * release, a try as the plain try (SET NX PX: the waiter takes a free key,
 * outside the queue, until the migration ends). */
static hrl_node_result queue_tryagain(hrl_lock *lk, hrl_node *node) {
  if (node->plain || hold_takes(lk) || !plain_command(lk)) {
    /* a try (a hold's first attempt too) waits for its next */
    bool refuse = takes(lk->op.round_kind) || hold_takes(lk);
    node->pttl = HRL_PTTL_UNKNOWN;
    node->migrating = refuse;
    node->result = refuse ? HRL_NODE_REFUSED : HRL_NODE_SERVER;
    return node->result;
  }
  node->plain = true;
  return HRL_NODE_RESEND;
}

static bool is_redirect(const hrl_reply *reply) {
  return hrl_reply_is_error(reply, "MOVED") || hrl_reply_is_error(reply, "ASK");
}

hrl_node_result hrl_node_reply(hrl_lock *lk, size_t i, const hrl_reply *reply) {
  if (!hrl_proto_in_round(lk, i)) {
    return HRL_NODE_PROTOCOL;
  }
  hrl_op *op = &lk->op;
  hrl_node *node = &op->nodes[i];
  lk->cfg->masters[i].late = false; /* it answers this round's command */
  if (node->result != HRL_NODE_PENDING) {
    return node->result;
  }
  int total = pipeline_len(lk, i);
  if (node->redirected) {
    /* The rest of a pipeline whose first command was redirected. */
    return ++node->replies < total ? HRL_NODE_MORE : pipeline_redirect(lk, i);
  }
  bool pipeline = total > 1;
  /* A pipeline's later reply, after a first that was not a redirect: the
   * first command ran on this node, so no redirect now may send the
   * pipeline elsewhere (counter_redirected). */
  bool after_answer = pipeline && node->replies >= 1;
  hrl_master_cfg *m = &lk->cfg->masters[i];
  if (m->sentinel != NULL || (m->cluster != NULL && !after_answer)) {
    bool to_sentinel =
        m->sentinel != NULL && hrl_sentinel_asks(m->sentinel, node->target);
    hrl_node_result c = m->cluster != NULL ? hrl_cluster_reply(lk, i, reply)
                                           : hrl_sentinel_reply(lk, i, reply);
    if (c == HRL_NODE_REDIRECT && !to_sentinel && pipeline &&
        node->replies == 0) {
      /* The first reply; the INCR's is still to come, from the same node,
       * before the pipeline may go elsewhere. */
      node->replies = 1;
      node->redirected = true;
      return HRL_NODE_MORE;
    }
    if (c != HRL_NODE_OK) {
      return c;
    }
  }
  if (is_queue_round(lk, op->round_kind) && node->replies == 0 &&
      !node->plain && hrl_reply_is_error(reply, "TRYAGAIN")) {
    hrl_detailf(node->msg, sizeof node->msg, "slot %u is migrating (TRYAGAIN)",
                (unsigned)lk->slot);
    if (!pipeline) {
      return queue_tryagain(lk, node);
    }
    /* A fenced try, or a try with its WAIT behind: the INCR's (the
     * WAIT's) reply comes next, then the plain try goes (SET and INCR: the
     * counter read after the SET; the WAIT again behind); without memory
     * for it, refused. A hold's take has no plain form: refused, it
     * waits for the migration's end. */
    node->replies = 1;
    node->pttl = HRL_PTTL_UNKNOWN;
    node->set = HRL_NODE_REFUSED;
    node->plain = !hold_takes(lk) && plain_command(lk);
    node->migrating = hold_takes(lk);
    node->resend = node->plain;
    return HRL_NODE_MORE;
  }
  bool noscript = false;
  int k = pipeline ? node->replies++ : 0; /* which reply of the pipeline */
  if (k == 0) {
    /* A plain try's first reply is its SET's; a hold's replies are
     * hold.c's to read. */
    hrl_round_kind kind =
        node->plain && takes(op->round_kind) ? HRL_ROUND_SET : op->round_kind;
    hrl_node_result r =
        hrl_lock_is_hold(lk)
            ? hrl_hold_classify(lk, node, reply, &noscript)
            : hrl_reply_classify(kind, reply, &noscript, &node->pttl, node->msg,
                                 sizeof node->msg);
    if (pipeline) {
      node->set = r; /* the INCR's, then the WAIT's reply come next */
      node->took = r == HRL_NODE_OK;
      node->resend = noscript;
      return HRL_NODE_MORE;
    }
    if (!noscript) {
      node->result = r;
      return r;
    }
  } else if (k < total - 1 || !hrl_round_waits(lk, i)) {
    /* A fenced acquire's or try's INCR. */
    if (!node->resend) {
      if (m->cluster != NULL && is_redirect(reply)) {
        return counter_redirected(lk, node, reply);
      }
      node->set = hrl_reply_counter(node->set, reply, &node->counter, node->msg,
                                    sizeof node->msg);
    }
    if (k < total - 1) {
      return HRL_NODE_MORE;
    }
    if (!node->resend) {
      node->result = node->set;
      return node->result;
    }
  } else if (!node->resend) {
    /* The WAIT: the vote counts once replicas have the write. */
    node->result = hrl_reply_wait(
        node->set, reply, hrl_round_wait_replicas(lk, i), lk->opts.sync_aof,
        &node->unacked, node->msg, sizeof node->msg);
    return node->result;
  }
  if (pipeline) {
    /* The script said NOSCRIPT (or TRYAGAIN), and what followed it in the
     * pipeline ran before anything of ours was there (a fenced try's INCR,
     * the WAIT): all of it goes again, the script in full (the counter
     * must be read after the try), or after a TRYAGAIN the plain try. */
    node->replies = 0;
    node->resend = false;
    node->took = false;
    if (node->plain) {
      return HRL_NODE_RESEND;
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
    /* Decided either way: a quorum said OK, or so many masters said
     * something else (refused, failed, missed) that the masters still out
     * could no longer make one. A refused try would otherwise wait out the
     * per-master timeout for a master that stopped answering, on every try
     * of every waiter, while it holds the client's connections. */
    size_t pending = 0;
    for (size_t i = 0; i < lk->cfg->n; i++) {
      pending += op->nodes[i].result == HRL_NODE_PENDING;
    }
    /* A semaphore's votes count for one permit (hold.c). */
    size_t ok = hrl_hold_votes(lk);
    return ok >= lk->cfg->quorum || ok + pending < lk->cfg->quorum;
  }
  default:
    return false;
  }
}

hrl_node_result hrl_node_fail(hrl_lock *lk, size_t i, hrl_node_result why,
                              const char *message) {
  if (!hrl_proto_in_round(lk, i)) {
    return HRL_NODE_PROTOCOL;
  }
  if (lk->op.nodes[i].result != HRL_NODE_PENDING) {
    return lk->op.nodes[i].result;
  }
  hrl_node *node = &lk->op.nodes[i];
  bool is_failure = why == HRL_NODE_UNREACHABLE || why == HRL_NODE_AUTH ||
                    why == HRL_NODE_DENIED || why == HRL_NODE_SERVER ||
                    why == HRL_NODE_PROTOCOL;
  node->result = is_failure ? why : HRL_NODE_PROTOCOL;
  if (message == NULL) {
    message = "failed";
  }
  hrl_detail_copy_text(node->msg, sizeof node->msg, message, strlen(message));
  node->redirected = false; /* a pipeline cut short: it went nowhere new */
  if (lk->cfg->masters[i].cluster != NULL) {
    return hrl_cluster_failed(lk, i);
  }
  if (lk->cfg->masters[i].sentinel != NULL) {
    return hrl_sentinel_failed(lk, i);
  }
  return node->result;
}

void hrl_node_missed(hrl_lock *lk, size_t i, const char *message) {
  if (!hrl_proto_in_round(lk, i)) {
    return;
  }
  lk->cfg->masters[i].late = true;
  lk->op.nodes[i].missed = true;
  if (hrl_round_runs_late(lk->op.round_kind)) {
    build_eval(lk); /* for hrl_proto_late_command (none without memory) */
  }
  hrl_node_fail(lk, i, HRL_NODE_UNREACHABLE, message);
}

bool hrl_proto_skippable(const hrl_lock *lk, size_t i) {
  return hrl_proto_in_round(lk, i) &&
         lk->op.nodes[i].result == HRL_NODE_PENDING &&
         lk->cfg->masters[i].late && hrl_proto_settled(lk);
}
