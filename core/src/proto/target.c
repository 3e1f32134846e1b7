/* What a driver sends for master i and where: the round's command (SET
 * or the script, EVAL after NOSCRIPT, behind an ASKING after a cluster's
 * ASK, the WAIT of sync_replicas behind it), the full script a late master
 * also gets, and the master, or the node of a cluster, the command goes
 * to. */
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "command_cache.h"
#include "sentinel.h"
#include "sibling_key.h"
#include "state.h"

/* Whether master i's command goes to a sentinel, as a question, in this
 * round. */
static bool to_sentinel(const hrl_lock *lk, size_t i) {
  const hrl_sentinel *s = lk->cfg->masters[i].sentinel;
  return s != NULL && hrl_sentinel_asks(s, lk->op.nodes[i].target);
}

/* The command bytes, behind the ASKING a cluster's ASK calls for (the
 * buffers keep room for it in front). */
static const char *command_bytes(const hrl_node *node, const char *cmd,
                                 size_t cmd_len, size_t *len) {
  if (node->asking) {
    *len = HRL_ASKING_LEN + cmd_len;
    return cmd - HRL_ASKING_LEN;
  }
  *len = cmd_len;
  return cmd;
}

/* Master i's command when its WAIT is not the round's (its URL asks for
 * another count): the command, then its own WAIT, in a buffer of its own
 * (with room for an ASKING in front), made on first use. NULL when out of
 * memory. */
static const char *own_bytes(hrl_lock *lk, size_t i, const char *cmd,
                             size_t cmd_len) {
  hrl_op *op = &lk->op;
  hrl_op_spare *sp = hrl_op_spare_of(lk);
  if (sp == NULL) {
    return NULL;
  }
  if (sp->own == NULL &&
      (sp->own = calloc(lk->cfg->n, sizeof *sp->own)) == NULL) {
    return NULL;
  }
  if (sp->own[i] == NULL) {
    size_t cap = HRL_ASKING_LEN +
                 hrl_resp_eval_capacity(
                     lk->key_len,
                     HRL_SIBLING_KEY_MAX(lk->key_len, HRL_SIBLING_SUFFIX_MAX),
                     lk->cfg->channel_len + 1);
    if ((sp->own[i] = malloc(cap)) == NULL) {
      return NULL;
    }
    memcpy(sp->own[i], HRL_ASKING, HRL_ASKING_LEN);
  }
  char *buf = sp->own[i] + HRL_ASKING_LEN;
  memmove(buf, cmd, cmd_len);
  hrl_resp_wait(buf + cmd_len, hrl_round_wait_replicas(lk, i),
                lk->opts.sync_aof, op->wait_ms);
  return buf;
}

const char *hrl_node_command(hrl_lock *lk, size_t i, size_t *len) {
  if (!hrl_proto_in_round(lk, i)) {
    *len = 0;
    return NULL;
  }
  hrl_op *op = &lk->op;
  hrl_node *node = &op->nodes[i];
  if (lk->cfg->sentinels > 0 && to_sentinel(lk, i)) {
    const hrl_sentinel *s = lk->cfg->masters[i].sentinel;
    *len = s->query_len; /* the question, not the command: nothing sent */
    return s->query;
  }
  node->sent = true;
  node->asking_ack = node->asking;
  /* The plain form after a TRYAGAIN (a release's never waits; a try's
   * waits as its script would), else the script by digest or in full. */
  const char *cmd = node->plain       ? op->cmd_plain
                    : node->eval_sent ? op->cmd_eval
                                      : op->cmd;
  size_t cmd_len = node->plain       ? op->cmd_plain_len
                   : node->eval_sent ? op->cmd_eval_len
                                     : op->cmd_len;
  if (op->wait_len == 0 || !hrl_round_waits(lk, i)) {
    return command_bytes(node, cmd, cmd_len, len);
  }
  if (hrl_round_wait_replicas(lk, i) == op->wait_replicas) {
    /* The round's WAIT follows the command in its buffer. */
    return command_bytes(node, cmd, cmd_len + op->wait_len, len);
  }
  const char *own = own_bytes(lk, i, cmd, cmd_len);
  if (own == NULL) {
    node->sent = false;
    hrl_proto_fail(lk, i, HRL_NODE_PROTOCOL, "out of memory");
    *len = 0;
    return NULL;
  }
  return command_bytes(node, own, cmd_len + op->wait_len, len);
}

int hrl_node_command_replies(const hrl_lock *lk, size_t i) {
  if (!hrl_proto_in_round(lk, i)) {
    return 0;
  }
  if (to_sentinel(lk, i)) {
    return 1; /* the question */
  }
  /* The EVAL form of a fenced try is a pipeline too, and a WAIT follows
   * the command of a vote that waits for replicas. */
  return hrl_resp_replies(lk->op.round_kind) +
         (lk->op.nodes[i].asking ? 1 : 0) + (hrl_round_waits(lk, i) ? 1 : 0);
}

const char *hrl_node_late_command(const hrl_lock *lk, size_t i, size_t *len) {
  const hrl_op *op = &lk->op;
  if (!hrl_proto_in_round(lk, i) || !hrl_round_runs_late(op->round_kind) ||
      op->nodes[i].eval_sent || op->cmd_eval_len == 0 || to_sentinel(lk, i)) {
    *len = 0;
    return NULL;
  }
  return command_bytes(&op->nodes[i], op->cmd_eval, op->cmd_eval_len, len);
}

void hrl_proto_target(const hrl_lock *lk, size_t i, hrl_target *out) {
  memset(out, 0, sizeof *out);
  if (i >= lk->cfg->n) {
    return;
  }
  const hrl_master_cfg *m = &lk->cfg->masters[i];
  const hrl_nodes *nodes = m->cluster != NULL    ? &m->cluster->nodes
                           : m->sentinel != NULL ? &m->sentinel->nodes
                                                 : NULL;
  out->handshake = !to_sentinel(lk, i);
  if (nodes != NULL) {
    const hrl_server *node = &nodes->at[lk->op.nodes[i].target];
    out->host = node->host;
    out->port = node->port;
    out->node = lk->op.nodes[i].target;
    out->label = node->label;
    return;
  }
  out->host = m->ep.is_unix ? NULL : m->ep.host;
  out->port = m->ep.is_unix ? 0 : m->ep.port;
  out->path = m->ep.is_unix ? m->ep.path : NULL;
  out->label = m->ep.label;
}
