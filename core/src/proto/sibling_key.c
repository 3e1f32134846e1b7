/* Keys that live beside a lock key K, in its Redis Cluster slot: the
 * waiting queue's (":queue", ":waiters") and a fenced lock's counter
 * (":fence"). Redis Cluster (and the proxies that follow its rule) runs a
 * script only when all its keys share a slot, and the scripts touch K and
 * its siblings. A key's slot is CRC16 of its hash tag: the bytes between
 * its first '{' and the first '}' after it, when there are any; otherwise
 * of the whole key. One rule for every sibling S of K:
 *
 *   S = K' "{" t "}" K'' suffix
 *
 * K' is K up to its first '{' (all of K when it has none), K'' the rest,
 * so S begins like K (a key_prefix, an ACL pattern such as ~locks:*) and
 * K can be read back from S: S's first '{' is the one put there, and t
 * holds no '}', so S's hash tag is exactly t. t is what decides K's slot:
 *
 *   - K's hash tag, when K has one: "a{user1}b" -> "a{user1}{user1}b:fence";
 *   - else K itself, when K holds no '}': "job" -> "job{job}:queue",
 *     "a{b" -> "a{a{b}{b:fence" (a '{' inside a tag is fine);
 *   - else (K has no tag but a '}', "a}b", "x{}y": no tag can be K) 14
 *     characters '0'/'1' whose CRC16 falls in K's slot, found by solving
 *     the CRC's linear equations (below), the same for every client.
 *
 * Two locks never share a sibling, and no lock may have a sibling as its
 * key: hrl_sibling_key_of recognises one, and lock_state.c refuses the
 * name that would make it (else "a{doc:a}:queue" with key_prefix "doc:"
 * would be lock "a"'s queue).
 */
#include "sibling_key.h"

#include <stdbool.h>
#include <string.h>

#define SLOT_MASK 0x3FFF /* 16384 slots: the low 14 bits of the CRC */
#define SYNTH_LEN 14     /* characters of a synthesised tag */

/* CRC16-XMODEM (polynomial 0x1021, initial value 0), Redis Cluster's,
 * continued from crc over len more bytes. */
static uint16_t crc16_more(uint16_t crc, const char *buf, size_t len) {
  for (size_t i = 0; i < len; i++) {
    crc ^= (uint16_t)((uint16_t)(unsigned char)buf[i] << 8);
    for (int b = 0; b < 8; b++) {
      crc = (uint16_t)((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
  }
  return crc;
}

static uint16_t crc16(const char *buf, size_t len) {
  return crc16_more(0, buf, len);
}

/* Finds key's hash tag; false when it has none. */
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

uint16_t hrl_cluster_slot(const char *key, size_t len) {
  size_t start, tag_len;
  if (hash_tag(key, len, &start, &tag_len)) {
    return crc16(key + start, tag_len) & SLOT_MASK;
  }
  return crc16(key, len) & SLOT_MASK;
}

/* The SYNTH_LEN characters '0'/'1' whose CRC16 is in `slot`. With an
 * initial value of 0 the CRC is linear over GF(2) for messages of one
 * length: CRC(m ^ d) = CRC(m) ^ CRC(d). '1' is '0' with bit 0 set, so the
 * tag's CRC is CRC("00...0") xor the CRCs of the unit messages e_k (byte k
 * = 1, the rest 0) for each '1' at k. Gaussian elimination finds which
 * e_k add up to the slot; the 14 low bits of their CRCs are independent
 * (tests/c check every slot), so there is always exactly one answer. */
static void synthesised_tag(uint16_t slot, char *out) {
  char msg[SYNTH_LEN];
  memset(msg, '0', sizeof msg);
  uint16_t want = (uint16_t)((slot ^ crc16(msg, sizeof msg)) & SLOT_MASK);
  uint16_t basis[SYNTH_LEN] = {0}; /* by pivot bit: a reduced CRC */
  uint16_t picks[SYNTH_LEN] = {0}; /* ... and which e_k make it up */
  memset(msg, 0, sizeof msg);
  for (int k = 0; k < SYNTH_LEN; k++) {
    msg[k] = 1;
    uint16_t v = crc16(msg, sizeof msg) & SLOT_MASK;
    uint16_t pick = (uint16_t)(1u << k);
    msg[k] = 0;
    for (int bit = SYNTH_LEN - 1; bit >= 0 && v != 0; bit--) {
      if (!(v & (1u << bit))) {
        continue;
      }
      if (basis[bit] == 0) {
        basis[bit] = v;
        picks[bit] = pick;
        break;
      }
      v ^= basis[bit];
      pick ^= picks[bit];
    }
  }
  uint16_t chosen = 0;
  for (int bit = SYNTH_LEN - 1; bit >= 0; bit--) {
    if (want & (1u << bit)) {
      want ^= basis[bit];
      chosen ^= picks[bit];
    }
  }
  for (int k = 0; k < SYNTH_LEN; k++) {
    out[k] = (chosen & (1u << k)) ? '1' : '0';
  }
}

/* Where t comes from: K's tag (*from, *len), K itself, or a synthesised
 * tag (returns false). */
static bool tag_source(const char *key, size_t len, size_t *from,
                       size_t *tag_len) {
  if (hash_tag(key, len, from, tag_len)) {
    return true;
  }
  if (memchr(key, '}', len) == NULL) {
    *from = 0;
    *tag_len = len;
    return true;
  }
  return false;
}

size_t hrl_sibling_key_len(const char *key, size_t len, size_t suffix_len) {
  size_t from, tag_len;
  if (!tag_source(key, len, &from, &tag_len)) {
    tag_len = SYNTH_LEN;
  }
  return len + 2 + tag_len + suffix_len;
}

size_t hrl_sibling_key(const char *key, size_t len, const char *suffix,
                       size_t suffix_len, char *out) {
  const char *open = memchr(key, '{', len);
  size_t head = open != NULL ? (size_t)(open - key) : len;
  size_t from, tag_len, n = 0;
  bool own = tag_source(key, len, &from, &tag_len);
  memcpy(out, key, head);
  n += head;
  out[n++] = '{';
  if (own) {
    memcpy(out + n, key + from, tag_len);
    n += tag_len;
  } else {
    synthesised_tag(hrl_cluster_slot(key, len), out + n);
    n += SYNTH_LEN;
  }
  out[n++] = '}';
  memcpy(out + n, key + head, len - head);
  n += len - head;
  memcpy(out + n, suffix, suffix_len);
  return n + suffix_len;
}

/* Whether key, with its last suffix_len bytes a sibling suffix, is
 * S(K0, suffix) for some K0. S's first '{' is the one S put there and its
 * tag t runs to the first '}' after it, so K0 can only be what surrounds
 * that "{t}": head (before it) and rest (after it, up to the suffix), and
 * key is S(K0) exactly when K0's first '{' is where S put its own (rest is
 * empty or begins with '{') and t is the tag S takes for K0. */
static bool sibling_for(const char *key, size_t len, size_t suffix_len) {
  size_t m = len - suffix_len;
  const char *open = memchr(key, '{', m);
  if (open == NULL) {
    return false;
  }
  size_t head_len = (size_t)(open - key);
  const char *close = memchr(open + 1, '}', m - head_len - 1);
  if (close == NULL) {
    return false;
  }
  const char *t = open + 1;
  size_t t_len = (size_t)(close - t);
  const char *rest = close + 1;
  size_t rest_len = m - head_len - t_len - 2;
  if (rest_len > 0 && rest[0] != '{') {
    return false;
  }
  size_t from, tag_len;
  if (hash_tag(rest, rest_len, &from, &tag_len)) { /* K0's tag is rest's */
    return t_len == tag_len && memcmp(t, rest + from, tag_len) == 0;
  }
  if (memchr(key, '}', head_len) == NULL &&
      memchr(rest, '}', rest_len) == NULL) { /* t is K0 itself */
    return t_len == head_len + rest_len && memcmp(t, key, head_len) == 0 &&
           memcmp(t + head_len, rest, rest_len) == 0;
  }
  if (t_len != SYNTH_LEN) {
    return false;
  }
  char synth[SYNTH_LEN];
  uint16_t crc = crc16_more(crc16(key, head_len), rest, rest_len);
  synthesised_tag(crc & SLOT_MASK, synth);
  return memcmp(t, synth, SYNTH_LEN) == 0;
}

const char *hrl_sibling_key_of(const char *key, size_t len) {
  static const char *const suffixes[] = {HRL_QUEUE_SUFFIX, HRL_WAITERS_SUFFIX,
                                         HRL_FENCE_SUFFIX};
  for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
    size_t n = strlen(suffixes[k]);
    if (len >= n + 2 && memcmp(key + len - n, suffixes[k], n) == 0 &&
        sibling_for(key, len, n)) {
      return suffixes[k];
    }
  }
  return NULL;
}
