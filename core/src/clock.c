/* The monotonic clock: immune to wall-clock jumps, as validity needs. */
#define _POSIX_C_SOURCE 200809L
#include "clock.h"

#include <errno.h>
#include <time.h>

#include "hiredlock.h"

int64_t hrl_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void hrl_sleep_ms(uint32_t ms) {
  struct timespec left = {.tv_sec = ms / 1000,
                          .tv_nsec = (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}
