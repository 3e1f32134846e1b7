/* The clock validity is judged by. A lock's TTL runs on the masters while
 * this machine is suspended, so the clock must count that time too:
 * CLOCK_BOOTTIME does (and, like CLOCK_MONOTONIC, never jumps with the
 * wall clock); CLOCK_MONOTONIC stops during suspend and would report
 * validity that was used up long ago. CLOCK_MONOTONIC only where the
 * kernel has no CLOCK_BOOTTIME. */
#define _GNU_SOURCE
#include <time.h>

#include "state.h"

int64_t hrl_now_us(void) {
  struct timespec ts;
#ifdef CLOCK_BOOTTIME
  if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
#endif
  {
    clock_gettime(CLOCK_MONOTONIC, &ts);
  }
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t hrl_wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
