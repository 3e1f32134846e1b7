/* Seconds (Python, Lua) to wire milliseconds, checked once for every
 * runtime so they accept and reject the same values with the same text. */
#include <math.h>

#include "detail.h"
#include "hiredlock/binding.h"

hrl_status hrl_seconds_to_ms(const char *what, double seconds, int64_t min_ms,
                             int64_t max_ms, int64_t *out_ms, char *detail,
                             size_t detail_size) {
  if (isnan(seconds)) {
    hrl_detailf(detail, detail_size, "%s must be a number of seconds, got nan",
                what);
    return HRL_EINVAL;
  }
  /* Range-check before rounding so huge values never reach llround(); a
   * value that only rounds into range (0.0004 s for a 1 ms minimum) is out. */
  double ms = seconds * 1000.0;
  bool in_range = seconds >= 0.0 && ms <= (double)max_ms + 0.5 &&
                  ms >= (double)min_ms - 0.5;
  int64_t rounded = in_range ? (int64_t)llround(ms) : 0;
  if (!in_range || rounded < min_ms || rounded > max_ms) {
    hrl_detailf(detail, detail_size,
                "%s must be between %.3f and %.3f seconds, got %g", what,
                (double)min_ms / 1000.0, (double)max_ms / 1000.0, seconds);
    return HRL_EINVAL;
  }
  *out_ms = rounded;
  return HRL_OK;
}
