/* libFuzzer: the RESP reader fed hostile bytes in hostile fragments.
 * The first input byte picks the fragment size, so splits inside numbers,
 * CRLFs and bulk payloads are all explored. Checks that every reply handed
 * out lies inside what was fed and that an error is final. */
#include <stdint.h>
#include <string.h>

#include "hiredlock/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) {
    return 0;
  }
  size_t step = (size_t)(data[0] % 17) + 1;
  data++;
  size--;
  hrl_parser *p = hrl_parser_new();
  if (p == NULL) {
    return 0;
  }
  bool broken = false;
  for (size_t off = 0; off < size && !broken; off += step) {
    size_t n = size - off < step ? size - off : step;
    hrl_status st = hrl_parser_feed(p, (const char *)data + off, n);
    if (st != HRL_OK) {
      broken = true;
      break;
    }
    for (;;) {
      hrl_reply r;
      int rc = hrl_parser_next(p, &r);
      if (rc == 0) {
        break;
      }
      if (rc < 0) {
        broken = true;
        break;
      }
      if (r.str != NULL) {
        /* Touch every byte: ASan catches a view outside the buffer. */
        volatile unsigned sum = 0;
        for (size_t i = 0; i < r.len; i++) {
          sum += (unsigned char)r.str[i];
        }
        (void)sum;
      }
      if (r.type > HRL_REPLY_ARRAY) {
        __builtin_trap();
      }
      for (size_t k = 0; r.type == HRL_REPLY_ARRAY && k < r.elements; k++) {
        const hrl_reply *e = &r.element[k];
        if (e->type == HRL_REPLY_ARRAY || e->type > HRL_REPLY_ARRAY) {
          __builtin_trap(); /* a flat array's items are never arrays */
        }
        volatile unsigned sum = 0;
        for (size_t i = 0; e->str != NULL && i < e->len; i++) {
          sum += (unsigned char)e->str[i];
        }
        (void)sum;
      }
    }
  }
  if (broken) {
    hrl_reply r;
    if (hrl_parser_next(p, &r) != -1) {
      __builtin_trap(); /* an error must be final */
    }
  }
  hrl_parser_free(p);
  return 0;
}
