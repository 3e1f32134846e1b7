/* A sibling S of a lock key K (a waiting queue: "K:queue") must hash to
 * K's Redis Cluster slot. A key's slot is CRC16 of its hash tag, the bytes
 * between its first '{' and the first '}' after it (when not empty), or of
 * the whole key. So
 *
 *   S = K' "{" t "}" K'' suffix
 *
 * where K' is K up to its first '{' (all of K when it has none) and K'' the
 * rest: S begins like K (a key_prefix, an ACL pattern such as ~locks:*),
 * and its hash tag is exactly t, chosen to decide K's slot:
 *
 *   - K's own hash tag when it has one: "a{u1}b" -> "a{u1}{u1}b:queue";
 *   - else K itself when K holds no '}': "job" -> "job{job}:queue";
 *   - else (no tag but a '}': "a}b", "x{}y") the 14 characters '0'/'1'
 *     whose CRC16 falls in K's slot: exactly one such string exists (the
 *     14 low bits of the CRCs of the unit strings are independent), so
 *     every client finds the same one.
 *
 * The fenced locks' counter key follows the same rule (issue 15); this is
 * the one function to share. */
#include "sibling_key.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define SLOT_MASK 0x3FFF /* 16384 slots: the low 14 bits of the CRC */
#define SYNTH_LEN 14     /* characters of a synthesised tag */

/* CRC16-XMODEM (polynomial 0x1021, initial value 0): Redis Cluster's. */
static uint16_t crc16(const char *buf, size_t len) {
  uint16_t crc = 0;
  for (size_t i = 0; i < len; i++) {
    crc ^= (uint16_t)((uint16_t)(unsigned char)buf[i] << 8);
    for (int b = 0; b < 8; b++) {
      crc = (uint16_t)((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
  }
  return crc;
}

/* Finds key's hash tag: false when it has none. */
static bool hash_tag(const char *key, size_t len, size_t *start,
                     size_t *tag_len) {
  const char *open = memchr(key, '{', len);
  if (open == NULL) {
    return false;
  }
  size_t s = (size_t)(open - key) + 1;
  const char *close = memchr(key + s, '}', len - s);
  if (close == NULL || close == key + s) {
    return false; /* no '}' after the '{', or "{}": the whole key counts */
  }
  *start = s;
  *tag_len = (size_t)(close - key) - s;
  return true;
}

/* The '0'/'1' string of SYNTH_LEN characters whose CRC16 is in slot. With
 * an initial value of 0 the CRC is linear over GF(2) for strings of one
 * length, and '1' is '0' with bit 0 set: the CRC of a string is that of
 * "00..0" xor the CRCs of the unit strings e_k (byte k = 1, the others 0)
 * for each '1' at k. Walking all 2^14 strings in Gray-code order changes
 * one character per step, one xor each. */
static void synthesised_tag(uint16_t slot, char *out) {
  char msg[SYNTH_LEN];
  uint16_t unit[SYNTH_LEN];
  memset(msg, 0, sizeof msg);
  for (int k = 0; k < SYNTH_LEN; k++) {
    msg[k] = 1;
    unit[k] = crc16(msg, sizeof msg);
    msg[k] = 0;
  }
  memset(out, '0', SYNTH_LEN);
  uint16_t crc = crc16(out, SYNTH_LEN);
  for (uint32_t g = 1; (crc & SLOT_MASK) != slot && g < (1u << SYNTH_LEN);
       g++) {
    int k = __builtin_ctz(g);
    crc ^= unit[k];
    out[k] = out[k] == '0' ? '1' : '0';
  }
}

size_t hrl_sibling_key(const char *key, size_t len, const char *suffix,
                       size_t suffix_len, char *out) {
  const char *open = memchr(key, '{', len);
  size_t head = open != NULL ? (size_t)(open - key) : len;
  size_t from = 0, tag_len = len, n = head;
  memcpy(out, key, head);
  out[n++] = '{';
  if (hash_tag(key, len, &from, &tag_len) || memchr(key, '}', len) == NULL) {
    memcpy(out + n, key + from, tag_len);
    n += tag_len;
  } else {
    synthesised_tag(crc16(key, len) & SLOT_MASK, out + n);
    n += SYNTH_LEN;
  }
  out[n++] = '}';
  memcpy(out + n, key + head, len - head);
  n += len - head;
  memcpy(out + n, suffix, suffix_len);
  return n + suffix_len;
}
