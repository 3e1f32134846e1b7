/* Tokens must be unguessable and unique per hold, so every one is made of
 * fresh bytes from the client's entropy source (hrl_config.entropy: the
 * kernel CSPRNG, as the driver reads it), never rand(), the time or a
 * counter. The protocol reads no device itself: it has no I/O. */
#include "random.h"

#include <string.h>

/* Every byte's two hex digits ("00" "01" ... "ff"): one 2-byte copy per
 * byte of the token instead of two nibble look-ups. */
#define HEX_ROW(h)                                                             \
  h "0" h "1" h "2" h "3" h "4" h "5" h "6" h "7" h "8" h "9" h "a" h "b" h    \
    "c" h "d" h "e" h "f"
static const char hex_pairs[] = HEX_ROW("0") HEX_ROW("1") HEX_ROW("2")
    HEX_ROW("3") HEX_ROW("4") HEX_ROW("5") HEX_ROW("6") HEX_ROW("7")
        HEX_ROW("8") HEX_ROW("9") HEX_ROW("a") HEX_ROW("b") HEX_ROW("c")
            HEX_ROW("d") HEX_ROW("e") HEX_ROW("f");
_Static_assert(sizeof hex_pairs == 2 * 256 + 1, "two digits per byte value");

hrl_status hrl_token_new(const hrl_config *cfg, char out[HRL_TOKEN_LEN + 1]) {
  unsigned char raw[HRL_TOKEN_LEN / 2];
  if (cfg->entropy(cfg->entropy_ctx, raw, sizeof raw) != HRL_OK) {
    out[0] = '\0';
    return HRL_ESYSTEM;
  }
  for (size_t i = 0; i < sizeof raw; i++) {
    memcpy(out + 2 * i, hex_pairs + 2 * raw[i], 2);
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
