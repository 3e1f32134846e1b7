/* The clock validity is judged by: monotonic, immune to wall-clock jumps. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "hiredlock.h"

int64_t hrl_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
