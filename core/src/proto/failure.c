/* Why a round did not get enough answers, in words for the caller: the
 * gravest status of its masters' failures (a refused password before a
 * permission refused, before a server error, a protocol error, a transport
 * failure), every master that failed and why, and for a permission
 * refusal the command and keys that were refused: the server does not
 * name them (Redis 7.0: "no permissions to access one of the keys used as
 * arguments"), and the fix is a line of ACL rules. */
#include <string.h>

#include "detail.h"
#include "reply.h"
#include "state.h"

/* Appends a key to a message, quoted, control bytes as '?', a long one
 * cut short. */
static void append_key(char *buf, size_t size, const char *key, size_t len) {
  char text[128];
  hrl_detail_copy_text(text, sizeof text, key, len);
  if (len > 0 && text[0] != '?') {
    text[0] = key[0]; /* as it is: copy_text lowers a capital */
  }
  hrl_detail_append(buf, size, "'%s%s'", text, len >= sizeof text ? "..." : "");
}

/* A permission refusal (NOPERM) says which command, on which keys: the
 * server's message does not (Redis 7.0: "no permissions to access one of
 * the keys used as arguments"), and the fix is a line of ACL rules. */
static void append_refused(hrl_lock *lk, const hrl_node *node) {
  char *d = lk->detail;
  size_t size = sizeof lk->detail;
  if (strncmp(node->msg, HRL_SELECT_REFUSED, strlen(HRL_SELECT_REFUSED)) == 0) {
    return; /* the handshake's: its message names SELECT */
  }
  bool queue = false, fence = false;
  switch (node->kind) {
  case HRL_ROUND_SET:
    hrl_detail_append(d, size, "; refused: SET ");
    break;
  case HRL_ROUND_FENCED_ACQUIRE:
    hrl_detail_append(d, size, "; refused: SET and INCR (fenced) ");
    fence = true;
    break;
  case HRL_ROUND_FENCE:
    hrl_detail_append(d, size, "; refused: the fence script ");
    fence = true;
    break;
  case HRL_ROUND_EXTEND:
    hrl_detail_append(d, size, "; refused: the extend script ");
    break;
  case HRL_ROUND_FENCED_TRY:
    hrl_detail_append(d, size, "; refused: the queue script and INCR ");
    queue = fence = true;
    break;
  default: /* release, try, aside */
    hrl_detail_append(d, size, "; refused: the queue script ");
    queue = true;
    break;
  }
  hrl_detail_append(d, size, "on ");
  append_key(d, size, lk->key, lk->key_len);
  if (queue) {
    hrl_detail_append(d, size, ", ");
    append_key(d, size, lk->queue, lk->queue_len);
    hrl_detail_append(d, size, ", ");
    append_key(d, size, lk->waiters, lk->waiters_len);
  }
  if (fence && lk->fence_key != NULL) {
    hrl_detail_append(d, size, ", ");
    append_key(d, size, lk->fence_key, lk->fence_key_len);
  }
}

/* Too few masters gave a usable answer (acquire) or confirmed (release,
 * extend): the gravest cause, and every master that failed in the detail,
 * so the caller can see what to fix. `what` says what `count` masters did. */
hrl_status hrl_unreachable_status(hrl_lock *lk, const hrl_node *nodes,
                                  size_t count, const char *what) {
  const hrl_config *c = lk->cfg;
  if (hrl_kind_refused(lk, nodes)) {
    return HRL_EINVAL; /* the name is a lock of another kind */
  }
  bool auth = false, server = false, protocol = false;
  const hrl_node *denied = NULL;
  for (size_t i = 0; i < c->n; i++) {
    hrl_node_result r = nodes[i].result;
    auth |= r == HRL_NODE_AUTH;
    server |= r == HRL_NODE_SERVER;
    protocol |= r == HRL_NODE_PROTOCOL;
    if (r == HRL_NODE_DENIED && denied == NULL) {
      denied = &nodes[i];
    }
  }
  hrl_detailf(lk->detail, sizeof lk->detail,
              "%zu of %zu masters %s (%zu needed)", count, c->n, what,
              c->quorum);
  for (size_t i = 0; i < c->n; i++) {
    hrl_node_result r = nodes[i].result;
    if (r != HRL_NODE_OK && r != HRL_NODE_REFUSED) {
      hrl_detail_append(lk->detail, sizeof lk->detail, "; %s: %s",
                        c->masters[i].ep.label, nodes[i].msg);
    }
  }
  if (denied != NULL) {
    append_refused(lk, denied);
  }
  return auth             ? HRL_EAUTH
         : denied != NULL ? HRL_EPERM
         : server         ? HRL_ESERVER
         : protocol       ? HRL_EPROTOCOL
                          : HRL_ECONNECT;
}
