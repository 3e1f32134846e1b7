/* Case 7, the C side: acquires that are stopped early, over and over, on a
 * lock that others keep busy. Half the calls end by their own deadline
 * (wait_ms of 0 to 300 ms), half by a cancel callback that says stop after
 * a random 0 to 300 ms. Prints the outcome counts as one JSON line.
 *   canceller SECONDS LOCK URL...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hiredlock.h"

typedef struct cancel_at {
  int64_t at_us;
  int calls;
} cancel_at;

static bool stop_now(void *ud) {
  cancel_at *c = ud;
  c->calls++;
  return hrl_now_us() >= c->at_us;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: canceller SECONDS LOCK URL...\n");
    return 2;
  }
  double seconds = atof(argv[1]);
  const char *name = argv[2];
  hrl_options o;
  hrl_options_init(&o);
  o.timeout_ms = 200;
  o.connect_timeout_ms = 500;
  o.retry_delay_ms = 20;
  o.retry_jitter_ms = 10;
  hrl_client *c = NULL;
  char detail[HRL_DETAIL_MAX];
  if (hrl_client_new((const char *const *)argv + 3, (size_t)(argc - 3), &o, &c,
                     detail, sizeof detail) != HRL_OK) {
    fprintf(stderr, "canceller: %s\n", detail);
    return 1;
  }
  srand((unsigned)hrl_now_us());
  long counts[HRL_STATUS_COUNT_] = {0};
  long cancelled_calls = 0, deadline_calls = 0, release_failed = 0;
  int64_t end = hrl_now_us() + (int64_t)(seconds * 1e6);
  while (hrl_now_us() < end) {
    hrl_lock *lk = NULL;
    if (hrl_lock_new(c, name, strlen(name), 2000, &lk, detail, sizeof detail) !=
        HRL_OK) {
      fprintf(stderr, "canceller: %s\n", detail);
      return 1;
    }
    hrl_status st;
    if (rand() % 2 == 0) {
      cancel_at ca = {hrl_now_us() + (rand() % 300) * 1000, 0};
      st = hrl_lock_acquire_cancellable(lk, 5000, stop_now, &ca);
      cancelled_calls++;
    } else {
      st = hrl_lock_acquire(lk, rand() % 300);
      deadline_calls++;
    }
    counts[st]++;
    if (st == HRL_OK && hrl_lock_release(lk) != HRL_OK) {
      release_failed++;
    }
    hrl_lock_free(lk);
  }
  hrl_client_free(c);
  printf("{\"cancel_callback_calls\": %ld, \"deadline_calls\": %ld, "
         "\"release_failed\": %ld",
         cancelled_calls, deadline_calls, release_failed);
  for (int s = 0; s < HRL_STATUS_COUNT_; s++) {
    if (counts[s] > 0) {
      printf(", \"%s\": %ld", hrl_strerror((hrl_status)s), counts[s]);
    }
  }
  printf("}\n");
  return 0;
}
