/* Bounded formatting of detail messages into caller buffers. */
#ifndef HRL_DETAIL_H
#define HRL_DETAIL_H

#include <stddef.h>

/* snprintf into buf when buf is not NULL; a message never overflows its
 * buffer, it is cut short instead. */
void hrl_detailf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends to an already terminated message, cut short when full. */
void hrl_detail_append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copies at most len bytes of text, replacing control bytes with '?' and
 * lowering the first letter, so server and OS messages read like ours. */
void hrl_detail_copy_text(char *buf, size_t size, const char *text, size_t len);

#endif
