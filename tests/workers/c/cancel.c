/* Reliability case 7, the C side: acquires that are stopped early, over and
 * over, on a lock that others keep busy. Half the calls end by their own
 * deadline (wait_ms of 0 to 300 ms), half by a cancel callback that says
 * stop after a random 0 to 300 ms.
 *   client [connect_timeout=S] [timeout=S] [retry_delay=S] [retry_jitter=S]
 *   cancel seconds=S name=NAME
 * "cancel" answers {"ready": true}, then the outcome counts as one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

typedef struct cancel_at {
  int64_t at_us;
  int calls;
} cancel_at;

static bool stop_now(void *ud) {
  cancel_at *c = ud;
  c->calls++;
  return hrl_now_us() >= c->at_us;
}

/* Seconds as hiredlock.Client takes them, into an option in ms. */
static void ms_option(const char *line, const char *key, uint32_t *ms) {
  char v[32];
  if (option(line, key, v, sizeof v)) {
    *ms = (uint32_t)(atof(v) * 1000 + 0.5);
  }
}

void client_command(hrl_options *o, const char *line) {
  hrl_options_init(o);
  ms_option(line, "connect_timeout", &o->connect_timeout_ms);
  ms_option(line, "timeout", &o->timeout_ms);
  ms_option(line, "retry_delay", &o->retry_delay_ms);
  ms_option(line, "retry_jitter", &o->retry_jitter_ms);
  answer("{\"client\": true}");
}

void cancel_command(const char *const *urls, size_t n_urls,
                    const hrl_options *o, const char *line) {
  char secs[32], name[256];
  if (!option(line, "seconds", secs, sizeof secs) ||
      !option(line, "name", name, sizeof name)) {
    answer("{\"error\": \"cancel needs seconds= and name=\"}");
    return;
  }
  hrl_client *c = NULL;
  char detail[HRL_DETAIL_MAX];
  if (hrl_client_new(urls, n_urls, o, &c, detail, sizeof detail) != HRL_OK) {
    die(detail);
  }
  srand((unsigned)hrl_now_us());
  long counts[HRL_STATUS_COUNT_] = {0};
  long cancelled_calls = 0, deadline_calls = 0, release_failed = 0;
  int64_t end = hrl_now_us() + (int64_t)(atof(secs) * 1e6);
  answer("{\"ready\": true}");
  while (hrl_now_us() < end) {
    hrl_lock *lk = NULL;
    if (hrl_lock_new(c, name, strlen(name), 2000, &lk, detail, sizeof detail) !=
        HRL_OK) {
      die(detail);
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
  answer("}");
}
