/* Randomness from the OS CSPRNG: lock tokens and retry jitter. */
#ifndef HRL_RANDOM_H
#define HRL_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "hiredlock.h"

/* Fills buf with n bytes from getrandom(), falling back to /dev/urandom.
 * Never returns partial data: HRL_OK or an error with nothing usable. */
hrl_status hrl_random_bytes(void *buf, size_t n);

/* A fresh token: HRL_TOKEN_LEN lowercase hex chars and a terminating NUL. */
hrl_status hrl_token_new(char out[HRL_TOKEN_LEN + 1]);

/* A uniform value in [0, bound]; 0 when bound is 0 or randomness failed
 * (jitter then degrades to none, which is safe). */
uint32_t hrl_random_upto(uint32_t bound);

#endif
