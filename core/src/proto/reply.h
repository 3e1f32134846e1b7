/* What a Redis reply means for each lock command (sans-I/O). */
#ifndef HRL_REPLY_H
#define HRL_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "hiredlock/proto.h"

/* Meaning of a reply to SET NX PX (acquire) or to the release / extend
 * script. *noscript is set when the script must be sent again with EVAL.
 * message receives the server's text for failures. */
hrl_node_result hrl_reply_classify(hrl_op_kind op, const hrl_reply *reply,
                                   bool *noscript, char *message,
                                   size_t message_size);

/* Meaning of the reply to a new connection's AUTH (is_auth) or SELECT. */
hrl_node_result hrl_reply_classify_handshake(bool is_auth, const hrl_reply *r,
                                             char *message, size_t size);

#endif
