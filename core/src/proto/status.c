/* The one message table: every runtime shows these texts. */
#include "hiredlock.h"

#include <stdarg.h>
#include <stdio.h>

#include "detail.h"

static const char *const status_text[] = {
#define HRL_STATUS_TEXT_(code, text) [code] = text,
    HRL_STATUS_LIST(HRL_STATUS_TEXT_)
#undef HRL_STATUS_TEXT_
};

const char *hrl_strerror(hrl_status status) {
  if ((unsigned)status >= (unsigned)HRL_STATUS_COUNT_) {
    return "unknown status";
  }
  return status_text[status];
}

char *hrl_format_error(hrl_status status, const char *detail, char *buf,
                       size_t size) {
  if (detail != NULL && detail[0] != '\0') {
    hrl_detailf(buf, size, "%s: %s", hrl_strerror(status), detail);
  } else {
    hrl_detailf(buf, size, "%s", hrl_strerror(status));
  }
  return buf;
}

void hrl_detailf(char *buf, size_t size, const char *fmt, ...) {
  if (buf == NULL || size == 0) {
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  if (n < 0) {
    buf[0] = '\0';
  }
}

void hrl_detail_append(char *buf, size_t size, const char *fmt, ...) {
  if (buf == NULL || size == 0) {
    return;
  }
  size_t used = 0;
  while (used < size && buf[used] != '\0') {
    used++;
  }
  if (used + 1 >= size) {
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + used, size - used, fmt, ap);
  va_end(ap);
  if (n < 0) {
    buf[used] = '\0';
  }
}

void hrl_detail_copy_text(char *buf, size_t size, const char *text,
                          size_t len) {
  if (buf == NULL || size == 0) {
    return;
  }
  size_t n = 0;
  for (; n < len && n + 1 < size && text[n] != '\0'; n++) {
    unsigned char ch = (unsigned char)text[n];
    buf[n] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
  }
  buf[n] = '\0';
  /* "Connection refused" -> "connection refused", but keep "READONLY ...". */
  if (n >= 2 && buf[0] >= 'A' && buf[0] <= 'Z' && buf[1] >= 'a' &&
      buf[1] <= 'z') {
    buf[0] = (char)(buf[0] - 'A' + 'a');
  }
}
