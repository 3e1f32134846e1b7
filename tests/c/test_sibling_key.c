/* The waiting queue's keys (proto/sibling_key.c): their names, and that
 * they hash to the lock key's Redis Cluster slot whatever the key holds. */
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

int main(void) {
  make_table();
  RUN(test_names);
  RUN(test_slots_of_many_keys);
  return finish_tests("test_sibling_key");
}
