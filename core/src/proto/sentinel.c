/* A Sentinel-managed primary as one Redlock master (sentinel.h). */
#include "sentinel.h"

#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "resp.h"
#include "state.h"

hrl_sentinel *hrl_sentinel_new(const hrl_endpoint *ep) {
  hrl_sentinel *s = calloc(1, sizeof *s);
  if (s == NULL) {
    return NULL;
  }
  s->primary = -1;
  s->service = ep->service;
  s->n_sentinels = ep->n_seeds;
  const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", ep->service};
  size_t lens[3] = {8, 23, strlen(ep->service)};
  s->query = hrl_resp_format(3, argv, lens, &s->query_len);
  if (s->query == NULL || !hrl_nodes_add_seeds(&s->nodes, ep)) {
    hrl_sentinel_free(s);
    return NULL;
  }
  return s;
}

void hrl_sentinel_free(hrl_sentinel *s) {
  if (s != NULL) {
    hrl_nodes_clear(&s->nodes);
    free(s->query);
    free(s);
  }
}

/* ------------------------------------------------------------ a round */

void hrl_sentinel_round(hrl_lock *lk, size_t i) {
  const hrl_sentinel *s = lk->cfg->masters[i].sentinel;
  hrl_node *node = &lk->op.nodes[i];
  node->target = (uint16_t)(s->primary >= 0 ? (size_t)s->primary : s->next);
  node->asked = s->primary >= 0 ? 0 : 1;
}

/* The command goes to the next sentinel instead (the one asked did not
 * answer usefully, or the primary is to be asked for again), while
 * sentinels are left to ask in this round: HRL_NODE_REDIRECT, else the
 * failure node->result already holds. */
static hrl_node_result ask_next(hrl_sentinel *s, hrl_node *node) {
  if (node->asked >= s->n_sentinels || node->redirects >= HRL_REDIRECTS_MAX) {
    return node->result;
  }
  if (hrl_sentinel_asks(s, node->target)) {
    s->next = (node->target + 1) % s->n_sentinels;
  }
  node->target = (uint16_t)s->next;
  node->asked++;
  node->redirects++;
  node->sent = false;
  node->result = HRL_NODE_PENDING;
  return HRL_NODE_REDIRECT;
}

static hrl_node_result failed(hrl_sentinel *s, hrl_node *node,
                              hrl_node_result why) {
  node->result = why;
  return ask_next(s, node);
}

bool hrl_sentinel_answer(const hrl_sentinel *s, size_t sentinel,
                         const hrl_reply *r, const char **host,
                         size_t *host_len, int *port, char *msg, size_t size) {
  const char *label = s->nodes.at[sentinel].label;
  if (r->type == HRL_REPLY_ARRAY && r->elements == 2 &&
      r->element[0].type == HRL_REPLY_STRING &&
      r->element[1].type == HRL_REPLY_STRING) {
    long p = 0;
    const hrl_reply *digits = &r->element[1];
    for (size_t k = 0; k < digits->len; k++) {
      p = digits->str[k] >= '0' && digits->str[k] <= '9' && p < 65536
              ? p * 10 + (digits->str[k] - '0')
              : 70000;
    }
    if (p < 1 || p > 65535 || r->element[0].len == 0) {
      hrl_detailf(msg, size,
                  "sentinel %s: a primary address that cannot be taken", label);
      return false;
    }
    *host = r->element[0].str;
    *host_len = r->element[0].len;
    *port = (int)p;
    return true;
  }
  if (r->type == HRL_REPLY_ERROR) {
    char text[HRL_NODE_MSG_MAX];
    hrl_detail_copy_text(text, sizeof text, r->str, r->len);
    hrl_detailf(msg, size, "sentinel %s: %s", label, text);
  } else {
    hrl_detailf(msg, size, "sentinel %s: no primary known for service %s",
                label, s->service);
  }
  return false;
}

/* A sentinel's answer: the primary, or a failure that sends the question
 * to the next sentinel. */
static hrl_node_result sentinel_answer(hrl_sentinel *s, hrl_node *node,
                                       const hrl_reply *r) {
  const char *host;
  size_t host_len;
  int port;
  if (!hrl_sentinel_answer(s, node->target, r, &host, &host_len, &port,
                           node->msg, sizeof node->msg)) {
    /* An address it named that cannot be taken is nonsense; anything else
     * (an error, no primary) the sentinel's word. */
    bool named = r->type == HRL_REPLY_ARRAY && r->elements == 2 &&
                 r->element[0].type == HRL_REPLY_STRING &&
                 r->element[1].type == HRL_REPLY_STRING;
    return failed(s, node, named ? HRL_NODE_PROTOCOL : HRL_NODE_SERVER);
  }
  int k = hrl_nodes_add(&s->nodes, host, host_len, port);
  if (k < 0) {
    hrl_detailf(node->msg, sizeof node->msg,
                "sentinel %s: a primary address that cannot be taken",
                s->nodes.at[node->target].label);
    return failed(s, node, HRL_NODE_PROTOCOL);
  }
  s->next = node->target; /* it answered: ask it first next time */
  s->primary = k;
  node->target = (uint16_t)k;
  node->redirects++;
  node->sent = false;
  return HRL_NODE_REDIRECT;
}

hrl_node_result hrl_sentinel_reply(hrl_lock *lk, size_t i,
                                   const hrl_reply *reply) {
  hrl_sentinel *s = lk->cfg->masters[i].sentinel;
  hrl_node *node = &lk->op.nodes[i];
  if (hrl_sentinel_asks(s, node->target)) {
    return sentinel_answer(s, node, reply);
  }
  /* A replica refuses writes: the primary moved (a failover), and the
   * command did not run there. Ask the sentinels where it went. */
  if (reply->type == HRL_REPLY_ERROR && reply->len >= 8 &&
      memcmp(reply->str, "READONLY", 8) == 0) {
    s->primary = -1;
    hrl_detailf(node->msg, sizeof node->msg, "primary %s: %.*s",
                s->nodes.at[node->target].label,
                (int)(reply->len < 60 ? reply->len : 60), reply->str);
    return failed(s, node, HRL_NODE_SERVER);
  }
  return HRL_NODE_OK;
}

hrl_node_result hrl_sentinel_failed(hrl_lock *lk, size_t i) {
  hrl_sentinel *s = lk->cfg->masters[i].sentinel;
  hrl_node *node = &lk->op.nodes[i];
  bool asking = hrl_sentinel_asks(s, node->target);
  char text[HRL_DETAIL_MAX];
  hrl_detailf(text, sizeof text, "%s %s: %s", asking ? "sentinel" : "primary",
              s->nodes.at[node->target].label, node->msg);
  hrl_detailf(node->msg, sizeof node->msg, "%s", text);
  if (node->result != HRL_NODE_UNREACHABLE) {
    return node->result;
  }
  /* Ask the sentinels again, in this round or the next; but a command out
   * and unanswered (a paused primary) keeps its primary, so that a release
   * queued after a SET goes behind it on the same connection. */
  if (!asking && !(node->missed && node->sent)) {
    s->primary = -1;
  }
  /* A question to a sentinel may go to another one; the command itself
   * only when it never went out (a timeout may hide a SET that ran). */
  if (node->missed || (!asking && node->sent)) {
    return node->result;
  }
  return ask_next(s, node);
}
