/* The RESP reader's internal side (its public one is in hiredlock/proto.h). */
#ifndef HRL_PARSER_H
#define HRL_PARSER_H

#include "hiredlock/proto.h"

/* Takes arrays of at most max_elements elements from now on (a subscriber
 * connection's pushes): a header comes as HRL_REPLY_OTHER with the count
 * in .integer, its elements as the next replies. Lock commands' readers
 * never do: an array is no answer to them. */
void hrl_parser_accept_arrays(hrl_parser *parser, long long max_elements);

#endif
