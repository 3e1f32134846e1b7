/* The counter key of a fenced lock (core/src/proto/sibling_key.c), without
 * Redis: its documented form, its Redis Cluster slot (always the lock
 * key's), that it can be read back to the lock key (two locks never share
 * a counter), and the synthesised tags of keys that hold a '}' but no
 * hash tag, for every one of the 16384 slots. */
#include <stdlib.h>

#include "check.h"
#include "proto/sibling_key.h"

#define FENCE_SUFFIX_LEN (sizeof HRL_FENCE_SUFFIX - 1)
#define HRL_FENCE_KEY_MAX(len) HRL_SIBLING_KEY_MAX(len, FENCE_SUFFIX_LEN)

#define SLOTS 16384

/* Known slots, from the Redis Cluster specification and CLUSTER KEYSLOT. */
static void test_cluster_slot(void) {
  CHECK_INT(hrl_cluster_slot("123456789", 9), 0x31C3 & 0x3FFF);
  CHECK_INT(hrl_cluster_slot("somekey", 7), 11058);
  CHECK_INT(hrl_cluster_slot("foo{hash_tag}", 13), 2515);
  CHECK_INT(hrl_cluster_slot("hash_tag", 8), 2515);
  /* Only the first '{' and the first '}' after it count; "{}" means the
   * whole key. */
  CHECK_INT(hrl_cluster_slot("{user1000}.following", 20),
            hrl_cluster_slot("user1000", 8));
  CHECK_INT(hrl_cluster_slot("foo{}{bar}", 10),
            hrl_cluster_slot("foo{}{bar}", 10));
  CHECK(hrl_cluster_slot("foo{}{bar}", 10) != hrl_cluster_slot("bar", 3));
  CHECK_INT(hrl_cluster_slot("foo{{bar}}zap", 13), hrl_cluster_slot("{bar", 4));
}

static void fence_key_of(const char *key, size_t len, char *out,
                         size_t *out_len) {
  *out_len = hrl_sibling_key(key, len, HRL_FENCE_SUFFIX, FENCE_SUFFIX_LEN, out);
  CHECK_INT(*out_len, hrl_sibling_key_len(key, len, FENCE_SUFFIX_LEN));
  CHECK(*out_len <= HRL_FENCE_KEY_MAX(len));
  CHECK_INT(hrl_cluster_slot(out, *out_len), hrl_cluster_slot(key, len));
}

static void expect_key(const char *key, const char *want) {
  char out[256];
  size_t n;
  fence_key_of(key, strlen(key), out, &n);
  out[n] = '\0';
  CHECK_STR(out, want);
}

/* The forms docs/DESIGN.md shows. */
static void test_documented_forms(void) {
  expect_key("job", "job{job}:fence");
  expect_key("locks:job", "locks:job{locks:job}:fence");
  expect_key("a{user1}b", "a{user1}{user1}b:fence");
  expect_key("{user1}", "{user1}{user1}:fence");
  expect_key("a{b", "a{a{b}{b:fence");
  /* A '}' and no hash tag: a synthesised tag of 14 '0'/'1'. */
  char out[256];
  size_t n;
  fence_key_of("a}b", 3, out, &n);
  CHECK_INT(n, 3 + 2 + 14 + 6);
  CHECK(memcmp(out, "a}b{", 4) == 0 && memcmp(out + 18, "}:fence", 7) == 0);
  CHECK(strspn(out + 4, "01") == 14);
  fence_key_of("x{}y", 4, out, &n);
  CHECK(memcmp(out, "x{", 2) == 0 && memcmp(out + 16, "}{}y:fence", 10) == 0);
}

/* Reads the lock key back from a counter key; false when c is not of the
 * documented form. */
static bool decode(const char *c, size_t n, char *key, size_t *len) {
  size_t suffix = sizeof HRL_FENCE_SUFFIX - 1;
  if (n < suffix + 2 || memcmp(c + n - suffix, HRL_FENCE_SUFFIX, suffix) != 0) {
    return false;
  }
  n -= suffix;
  const char *open = memchr(c, '{', n);
  if (open == NULL) {
    return false;
  }
  size_t head = (size_t)(open - c);
  const char *close = memchr(open + 1, '}', n - head - 1);
  if (close == NULL || close == open + 1) {
    return false;
  }
  size_t tail = (size_t)(close - c) + 1;
  memcpy(key, c, head);
  memcpy(key + head, c + tail, n - tail);
  *len = head + n - tail;
  return true;
}

/* Random keys over a small alphabet heavy in braces: the slot is always
 * the lock key's, the key comes back out of the counter key, and the
 * counter key begins like the lock key up to its first '{'. */
static void test_random_keys(void) {
  static const char alphabet[] = "{}{}{}ab:\0x";
  srand(12345);
  int synthesised = 0;
  for (int round = 0; round < 200000; round++) {
    char key[24], out[HRL_FENCE_KEY_MAX(24)], back[64];
    size_t len = 1 + (size_t)rand() % sizeof key;
    for (size_t i = 0; i < len; i++) {
      key[i] = alphabet[rand() % (int)(sizeof alphabet - 1)];
    }
    size_t n, back_len = 0;
    fence_key_of(key, len, out, &n);
    if (!decode(out, n, back, &back_len) || back_len != len ||
        memcmp(back, key, len) != 0) {
      CHECK(!"the lock key comes back out of its counter key");
      break;
    }
    const char *open = memchr(key, '{', len);
    size_t head = open != NULL ? (size_t)(open - key) : len;
    CHECK(memcmp(out, key, head) == 0 && out[head] == '{');
    synthesised += n == len + 2 + 14 + 6 && strspn(out + head + 1, "01") == 14;
  }
  CHECK(synthesised > 1000); /* the hard case was exercised */
}

/* Keys "}<i>" have no hash tag and a '}', so their counter keys carry a
 * synthesised tag: enough of them reach every slot, and each lands in its
 * key's slot with a tag of '0'/'1' only. */
static void test_every_slot_synthesised(void) {
  static bool seen[SLOTS];
  int covered = 0;
  for (unsigned i = 0; covered < SLOTS && i < 4000000; i++) {
    char key[16], out[64];
    int len = snprintf(key, sizeof key, "}%u", i);
    uint16_t slot = hrl_cluster_slot(key, (size_t)len);
    if (seen[slot]) {
      continue;
    }
    seen[slot] = true;
    covered++;
    size_t n;
    fence_key_of(key, (size_t)len, out, &n);
    CHECK(n == (size_t)len + 2 + 14 + 6 && out[len] == '{' &&
          strspn(out + len + 1, "01") == 14);
  }
  CHECK_INT(covered, SLOTS);
}

int main(void) {
  RUN(test_cluster_slot);
  RUN(test_documented_forms);
  RUN(test_random_keys);
  RUN(test_every_slot_synthesised);
  return finish_tests("test_fence_key");
}
