/* Tokens must be unguessable and unique per hold, so every one is made of
 * fresh bytes from the client's entropy source (hrl_config.entropy: the
 * kernel CSPRNG, as the driver reads it), never rand(), the time or a
 * counter. The protocol reads no device itself: it has no I/O. */
#include "random.h"

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Four bytes as eight lowercase hex digits, eight at a time in one 64-bit
 * word: a token is made for every acquire, and a table look-up per byte
 * was a tenth of the core's own instructions in a lock cycle. The word's
 * lowest byte is stored first (little-endian), so digit 2k is byte k's
 * high nibble, 2k + 1 its low one. */
static void hex4(char *out, const unsigned char *in) {
  uint64_t x = (uint64_t)in[0] | (uint64_t)in[1] << 8 | (uint64_t)in[2] << 16 |
               (uint64_t)in[3] << 24;
  x = (x | x << 16) & 0x0000FFFF0000FFFFu; /* b0 b1 . . b2 b3 . . */
  x = (x | x << 8) & 0x00FF00FF00FF00FFu;  /* b0 . b1 . b2 . b3 . */
  x = (x >> 4 & 0x000F000F000F000Fu) | (x & 0x000F000F000F000Fu) << 8;
  /* 1 in each byte whose nibble is 10 or more: those become 'a'..'f' */
  uint64_t letters = (x + 0x0606060606060606u) >> 4 & 0x0101010101010101u;
  x += 0x3030303030303030u + letters * ('a' - '0' - 10);
  memcpy(out, &x, 8);
}

static void hex_of(char *out, const unsigned char *in, size_t n) {
  for (size_t i = 0; i < n; i += 4) {
    hex4(out + 2 * i, in + i);
  }
}
#else
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

static void hex_of(char *out, const unsigned char *in, size_t n) {
  for (size_t i = 0; i < n; i++) {
    memcpy(out + 2 * i, hex_pairs + 2 * in[i], 2);
  }
}
#endif
_Static_assert(HRL_TOKEN_LEN % 8 == 0, "hex_of takes four bytes at a time");

hrl_status hrl_token_new(const hrl_config *cfg, char out[HRL_TOKEN_LEN + 1]) {
  unsigned char raw[HRL_TOKEN_LEN / 2];
  if (cfg->entropy(cfg->entropy_ctx, raw, sizeof raw) != HRL_OK) {
    out[0] = '\0';
    return HRL_ESYSTEM;
  }
  hex_of(out, raw, sizeof raw);
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
