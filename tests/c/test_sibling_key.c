/* The waiting queue's keys (proto/sibling_key.c): their names, and that
 * they hash to the lock key's Redis Cluster slot whatever the key holds. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "proto/sibling_key.h"

/* Redis Cluster's slot, computed here independently of the core: a
 * table-driven CRC16-XMODEM over the key's hash tag (cluster.c's
 * keyHashSlot in Redis). */
static uint16_t table[256];

static void make_table(void) {
  for (int i = 0; i < 256; i++) {
    uint16_t crc = (uint16_t)(i << 8);
    for (int b = 0; b < 8; b++) {
      crc = (uint16_t)((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    table[i] = crc;
  }
}

static uint16_t slot(const char *key, size_t len) {
  size_t s = 0, e = len;
  for (s = 0; s < len && key[s] != '{'; s++) {
  }
  if (s < len) {
    for (e = s + 1; e < len && key[e] != '}'; e++) {
    }
    if (e < len && e != s + 1) {
      key += s + 1;
      len = e - s - 1;
    }
  }
  uint16_t crc = 0;
  for (size_t i = 0; i < len; i++) {
    crc = (uint16_t)((crc << 8) ^ table[((crc >> 8) ^ (uint8_t)key[i]) & 255]);
  }
  return crc & 16383;
}

static void check_sibling(const char *key, size_t len, const char *want) {
  char out[HRL_SIBLING_KEY_MAX(64, 6)];
  size_t n = hrl_sibling_key(key, len, ":queue", 6, out);
  CHECK(n <= sizeof out);
  if (want != NULL) {
    CHECK(n == strlen(want) && memcmp(out, want, n) == 0);
  }
  CHECK_INT(slot(out, n), slot(key, len));
  CHECK(n >= len && memcmp(out, key, 1) == 0); /* begins like the key */
}

static void test_names(void) {
  check_sibling("job", 3, "job{job}:queue");
  check_sibling("app:job", 7, "app:job{app:job}:queue");
  check_sibling("a{u1}b", 6, "a{u1}{u1}b:queue");
  check_sibling("a{b", 3, "a{a{b}{b:queue");
  check_sibling("{x}", 3, "{x}{x}:queue");
  /* No tag but a '}': 14 characters '0'/'1' in the key's slot. */
  char out[64];
  size_t n = hrl_sibling_key("a}b", 3, ":queue", 6, out);
  CHECK_INT(n, 3 + 2 + 14 + 6);
  CHECK(memcmp(out, "a}b{", 4) == 0 && memcmp(out + 18, "}:queue", 7) == 0);
  for (size_t i = 4; i < 18; i++) {
    CHECK(out[i] == '0' || out[i] == '1');
  }
  check_sibling("x{}y", 4, NULL);
  check_sibling("}", 1, NULL);
  check_sibling("a\0}", 3, NULL);
}

static void test_slots_of_many_keys(void) {
  /* Random keys over a small alphabet rich in braces: every shape of tag,
   * none and broken. */
  static const char alphabet[] = "{}ab:\0";
  srand(7);
  for (int k = 0; k < 20000; k++) {
    char key[24];
    size_t len = 1 + (size_t)rand() % 20;
    for (size_t i = 0; i < len; i++) {
      key[i] = alphabet[rand() % 6];
    }
    check_sibling(key, len, NULL);
  }
}

/* A key of up to 8 characters over "a{}" as a number: base 4, 'a' 1,
 * '{' 2, '}' 3 (so no two keys share one). */
#define SHORT_MAX 8
static const char short_alphabet[] = "a{}";

static size_t short_code(const char *key, size_t len) {
  size_t code = 0;
  for (size_t i = 0; i < len; i++) {
    code = code * 4 + 1 +
           (size_t)(strchr(short_alphabet, key[i]) - short_alphabet);
  }
  return code;
}

/* The keys of length len over "a{}", one at a time: false after the last. */
static bool next_short(char *key, size_t len) {
  for (size_t i = len; i-- > 0;) {
    const char *at = strchr(short_alphabet, key[i]);
    if (at[1] != '\0') {
      key[i] = at[1];
      return true;
    }
    key[i] = short_alphabet[0];
  }
  return false;
}

/* hrl_sibling_key_of against brute force: every key of up to 8 characters
 * over "a{}" followed by a suffix is refused exactly when some K0 (of up to
 * 6 characters: its sibling is longer by 2 at least) has it as a sibling.
 * The siblings of every such K0 (and those with a synthesised tag, whose
 * tag is '0's and '1's) are found; a tag off by one character is not. */
static void test_which_keys_are_siblings(void) {
  size_t codes = 1;
  for (int i = 0; i <= SHORT_MAX; i++) {
    codes *= 4;
  }
  unsigned char *is_sibling = calloc(codes, 1);
  CHECK(is_sibling != NULL);
  static const char *const suffixes[] = {":queue", ":waiters", ":fence"};
  char k0[SHORT_MAX], out[HRL_SIBLING_KEY_MAX(SHORT_MAX, 8)];
  long siblings = 0, refused = 0, synthesised = 0;
  for (size_t len = 0; len + 2 <= SHORT_MAX; len++) {
    memset(k0, 'a', len);
    do {
      for (int s = 0; s < 3; s++) {
        size_t slen = strlen(suffixes[s]);
        size_t n = hrl_sibling_key(k0, len, suffixes[s], slen, out);
        const char *got = hrl_sibling_key_of(out, n);
        CHECK(got != NULL && strcmp(got, suffixes[s]) == 0);
        size_t w = n - slen;
        bool synth = memchr(out, '0', w) != NULL || memchr(out, '1', w) != NULL;
        if (synth) {
          /* One character of the tag flipped: another slot's, no sibling. */
          char *tag = memchr(out, '{', w) + 1;
          tag[3] = tag[3] == '0' ? '1' : '0';
          CHECK(hrl_sibling_key_of(out, n) == NULL);
          synthesised++;
        } else if (w <= SHORT_MAX) {
          is_sibling[short_code(out, w)] = 1;
        }
      }
    } while (next_short(k0, len));
  }
  char key[SHORT_MAX + 8];
  for (size_t len = 0; len <= SHORT_MAX; len++) {
    memset(key, 'a', len);
    do {
      bool want = is_sibling[short_code(key, len)];
      for (int s = 0; s < 3; s++) {
        size_t slen = strlen(suffixes[s]);
        memcpy(key + len, suffixes[s], slen);
        bool got = hrl_sibling_key_of(key, len + slen) != NULL;
        if (got != want) {
          fprintf(stderr, "%.*s: sibling %d, refused %d\n", (int)(len + slen),
                  key, want, got);
          check_failures++;
        }
        siblings += want;
        refused += got;
      }
    } while (next_short(key, len));
  }
  /* Not a sibling: no suffix, or another one. */
  CHECK(hrl_sibling_key_of("job{job}", 8) == NULL);
  CHECK(hrl_sibling_key_of("job{job}:lock", 13) == NULL);
  CHECK(hrl_sibling_key_of("job{jo}:queue", 13) == NULL);
  CHECK(hrl_sibling_key_of(":queue", 6) == NULL);
  /* The issue's: lock "a{doc:a}:queue" with key_prefix "doc:". */
  CHECK_STR(hrl_sibling_key_of("doc:a{doc:a}:queue", 18), ":queue");
  CHECK_STR(hrl_sibling_key_of("doc:b{doc:b}:fence", 18), ":fence");
  CHECK_STR(hrl_sibling_key_of("a{u1}{u1}b:waiters", 18), ":waiters");
  CHECK(siblings > 150 && synthesised > 1000); /* 207 and 1866 */
  CHECK_INT(refused, siblings);
  free(is_sibling);
}

int main(void) {
  make_table();
  RUN(test_names);
  RUN(test_slots_of_many_keys);
  RUN(test_which_keys_are_siblings);
  return finish_tests("test_sibling_key");
}
