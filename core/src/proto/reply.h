/* What a Redis reply means for each lock command (sans-I/O). */
#ifndef HRL_REPLY_H
#define HRL_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include "hiredlock/proto.h"
#include "resp.h"

/* How a handshake's SELECT refused by the ACL (NOPERM) begins its
 * message: the round's command was never sent, so a permission refusal's
 * detail names SELECT instead of it. */
#define HRL_SELECT_REFUSED "SELECT refused:"

/* Whether r is an error whose code (its first word) is code. */
bool hrl_reply_is_error(const hrl_reply *r, const char *code);

/* Meaning of a reply to the command of a round of that kind (a fenced
 * acquire or try: of its first command). *noscript is set when the script
 * must be sent again with EVAL; a try refused by a held
 * key sets *pttl to the key's PTTL in ms (-1: it has none). message
 * receives the server's text for failures. */
hrl_node_result hrl_reply_classify(hrl_round_kind kind, const hrl_reply *reply,
                                   bool *noscript, int64_t *pttl, char *message,
                                   size_t message_size);

/* Meaning of a fenced acquire's (or try's) INCR reply, after its SET (or
 * try) said `set`: that meaning, unless it took and the INCR failed. *counter
 * receives the counter (1 to 2^63 - 1) when the INCR gave one. */
hrl_node_result hrl_reply_counter(hrl_node_result set, const hrl_reply *reply,
                                  uint64_t *counter, char *message,
                                  size_t message_size);

/* Meaning of the reply to the WAIT (aof: WAITAOF) behind a write that
 * said `set`: that meaning, unless it took and fewer than `want` replicas
 * (or, aof, not the master's own AOF) acknowledged it in time: then
 * HRL_NODE_SERVER with *unacked set and the message saying so. */
hrl_node_result hrl_reply_wait(hrl_node_result set, const hrl_reply *reply,
                               uint32_t want, bool aof, bool *unacked,
                               char *message, size_t message_size);

/* Meaning of the reply to a new connection's AUTH (is_auth) or SELECT. */
hrl_node_result hrl_reply_classify_handshake(bool is_auth, const hrl_reply *r,
                                             char *message, size_t size);

#endif
