/* Tokens must be unguessable and unique per hold, so every one is made of
 * fresh bytes from the client's entropy source (hrl_config.entropy: the
 * kernel CSPRNG, as the driver reads it), never rand(), the time or a
 * counter. The protocol reads no device itself: it has no I/O. */
#include "random.h"

hrl_status hrl_token_new(const hrl_config *cfg, char out[HRL_TOKEN_LEN + 1]) {
  static const char hex[] = "0123456789abcdef";
  unsigned char raw[HRL_TOKEN_LEN / 2];
  if (cfg->entropy(cfg->entropy_ctx, raw, sizeof raw) != HRL_OK) {
    out[0] = '\0';
    return HRL_ESYSTEM;
  }
  for (size_t i = 0; i < sizeof raw; i++) {
    out[2 * i] = hex[raw[i] >> 4];
    out[2 * i + 1] = hex[raw[i] & 15];
  }
  out[HRL_TOKEN_LEN] = '\0';
  return HRL_OK;
}

uint32_t hrl_random_upto(const hrl_config *cfg, uint32_t bound) {
  if (bound == 0) {
    return 0;
  }
  uint64_t r;
  if (cfg->entropy(cfg->entropy_ctx, &r, sizeof r) != HRL_OK) {
    return 0;
  }
  /* 64 random bits reduced to 33 values at most: the bias is < 2^-31. */
  return (uint32_t)(r % ((uint64_t)bound + 1));
}
