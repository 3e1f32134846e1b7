/* The driver's pause between acquire attempts. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <time.h>

#include "driver.h"

void hrl_sleep_ms(uint32_t ms) {
  struct timespec left = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}
