/* Tokens and retry jitter from the client's entropy source
 * (hrl_config.entropy): the driver's CSPRNG, given to the client when it
 * is made. No I/O here. */
#ifndef HRL_RANDOM_H
#define HRL_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

/* A fresh token from cfg's entropy: HRL_TOKEN_LEN lowercase hex chars and
 * a terminating NUL; HRL_ESYSTEM (out empty) when the source failed. */
hrl_status hrl_token_new(const hrl_config *cfg, char out[HRL_TOKEN_LEN + 1]);

/* A uniform value in [0, bound]; 0 when bound is 0 or randomness failed
 * (jitter then degrades to none, which is safe). */
uint32_t hrl_random_upto(const hrl_config *cfg, uint32_t bound);

#endif
