/* A Redis Cluster as one Redlock master (cluster.h): nodes, slots and
 * redirects. The slot map is learned from MOVED alone, one slot at a time:
 * a lock's name maps to one slot, which costs one redirect the first time
 * and none after, and nothing here needs a second kind of request
 * (CLUSTER SLOTS) from the drivers. */
#include "cluster.h"

#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "state.h"

hrl_cluster *hrl_cluster_new(const hrl_endpoint *ep) {
  hrl_cluster *c = calloc(1, sizeof *c);
  if (c != NULL && !hrl_nodes_add_seeds(&c->nodes, ep)) {
    hrl_cluster_free(c);
    return NULL;
  }
  return c;
}

void hrl_cluster_free(hrl_cluster *c) {
  if (c != NULL) {
    hrl_nodes_clear(&c->nodes);
    free(c);
  }
}

size_t hrl_cluster_target(const hrl_cluster *c, uint16_t slot) {
  uint8_t owner = c->owner[slot];
  return owner != 0 ? (size_t)owner - 1 : c->guess;
}

void hrl_cluster_node_failed(hrl_cluster *c, size_t node) {
  uint8_t mark = (uint8_t)(node + 1);
  for (size_t s = 0; s < HRL_CLUSTER_SLOTS; s++) {
    if (c->owner[s] == mark) {
      c->owner[s] = 0;
    }
  }
  if (c->guess == node) {
    c->guess = (node + 1) % c->nodes.n;
  }
}

static bool starts_with(const hrl_reply *r, const char *word) {
  size_t n = strlen(word);
  return r->len > n && memcmp(r->str, word, n) == 0 && r->str[n] == ' ';
}

int hrl_cluster_redirect(hrl_cluster *c, size_t from, uint16_t slot,
                         const hrl_reply *reply, size_t *node, char *message,
                         size_t size) {
  if (reply->type != HRL_REPLY_ERROR) {
    return 0;
  }
  bool moved = starts_with(reply, "MOVED");
  if (!moved && !starts_with(reply, "ASK")) {
    return 0;
  }
  /* "MOVED <slot> <host>:<port>": the host may be empty (the node that
   * answered) or an IPv6 address; the port follows the last colon. */
  const char *p = reply->str + (moved ? 6 : 4);
  const char *end = reply->str + reply->len;
  const char *space = memchr(p, ' ', (size_t)(end - p));
  const char *colon = NULL;
  for (const char *q = end; space != NULL && q > space; q--) {
    if (q[-1] == ':') {
      colon = q - 1;
      break;
    }
  }
  long port = 0;
  for (const char *q = colon != NULL ? colon + 1 : end; q < end; q++) {
    port =
        *q >= '0' && *q <= '9' && port < 65536 ? port * 10 + (*q - '0') : 70000;
  }
  if (colon == NULL || colon + 1 == end || port < 1 || port > 65535) {
    hrl_detail_copy_text(message, size, reply->str, reply->len);
    return -1;
  }
  const char *host = space + 1;
  size_t host_len = (size_t)(colon - host);
  if (host_len == 0 || (host_len == 1 && host[0] == '?')) {
    host = c->nodes.at[from].host;
    host_len = strlen(host);
  }
  int k = hrl_nodes_add(&c->nodes, host, host_len, (int)port);
  if (k < 0) {
    hrl_detailf(message, size, "more than %d cluster nodes", HRL_NODES_MAX);
    return -1;
  }
  *node = (size_t)k;
  if (moved) {
    c->owner[slot] = (uint8_t)(k + 1);
    c->guess = (size_t)k; /* alive and serving: a fair first guess */
  }
  return moved ? 1 : 2;
}

/* ------------------------------------------------------------ a round */

void hrl_cluster_round(hrl_lock *lk, size_t i) {
  lk->op.nodes[i].target =
      (uint16_t)hrl_cluster_target(lk->cfg->masters[i].cluster, lk->slot);
}

static hrl_node_result failed(hrl_node *node, hrl_node_result why) {
  node->result = why;
  return why;
}

hrl_node_result hrl_cluster_reply(hrl_lock *lk, size_t i,
                                  const hrl_reply *reply) {
  hrl_node *node = &lk->op.nodes[i];
  hrl_cluster *c = lk->cfg->masters[i].cluster;
  if (node->asking_ack) {
    node->asking_ack = false;
    if (reply->type == HRL_REPLY_STATUS && reply->len == 2 &&
        memcmp(reply->str, "OK", 2) == 0) {
      return HRL_NODE_MORE; /* ASKING's OK; the command's reply is next */
    }
    /* ASKING refused (an ACL without it): the command behind it got its
     * own refusal, still unread; the caller classifies this one. */
    return HRL_NODE_OK;
  }
  size_t to = 0;
  int kind = hrl_cluster_redirect(c, node->target, lk->slot, reply, &to,
                                  node->msg, sizeof node->msg);
  if (kind == 0) {
    return HRL_NODE_OK;
  }
  if (kind < 0) {
    return failed(node, HRL_NODE_PROTOCOL);
  }
  if (++node->redirects > HRL_REDIRECTS_MAX) {
    hrl_detailf(node->msg, sizeof node->msg,
                "more than %d redirects for slot %u", HRL_REDIRECTS_MAX,
                (unsigned)lk->slot);
    return failed(node, HRL_NODE_SERVER);
  }
  node->target = (uint16_t)to;
  node->asking = kind == 2; /* an ASK is good for the next command only */
  node->sent = false;       /* MOVED and ASK: it did not run there */
  return HRL_NODE_REDIRECT;
}

hrl_node_result hrl_cluster_failed(hrl_lock *lk, size_t i) {
  hrl_cluster *c = lk->cfg->masters[i].cluster;
  hrl_node *node = &lk->op.nodes[i];
  size_t failed_node = node->target;
  char text[HRL_DETAIL_MAX];
  hrl_detailf(text, sizeof text, "node %s: %s", c->nodes.at[failed_node].label,
              node->msg);
  hrl_detailf(node->msg, sizeof node->msg, "%s", text);
  if (node->result != HRL_NODE_UNREACHABLE) {
    return node->result;
  }
  /* A command out and unanswered (a paused node) stays where it is: the
   * next rounds go there too, behind it, so that a release queued after a
   * SET runs after it. Otherwise the node is forgotten. */
  if (!(node->missed && node->sent)) {
    hrl_cluster_node_failed(c, failed_node);
  }
  /* Nothing went out to it (a refused connect): another node answers, or
   * says who serves the slot now (a failover, a node gone). A command that
   * went out, or timed out, may have run: never resent elsewhere. */
  if (node->sent || node->missed || c->nodes.n < 2 ||
      node->redirects >= HRL_REDIRECTS_MAX) {
    return node->result;
  }
  size_t next = hrl_cluster_target(c, lk->slot);
  node->target =
      (uint16_t)(next != failed_node ? next : (next + 1) % c->nodes.n);
  node->redirects++;
  node->asking = false;
  node->result = HRL_NODE_PENDING;
  return HRL_NODE_REDIRECT;
}
