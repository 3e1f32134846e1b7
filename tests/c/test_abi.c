/* The public structs' layout stays that of the release before read-write
 * locks and semaphores: a program built against that hiredlock.h (its
 * hrl_lock_options and hrl_options, copied below as v1_*) keeps working
 * with this library. What a lock holds is an argument of its constructor
 * (hrl_rwlock_new, hrl_permit_new), never a field a caller's older struct
 * lacks: were it one, hrl_lock_options_init would write past the caller's
 * struct, and a constructor read garbage behind it. No Redis needed. */
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "hiredlock/binding.h"

/* hiredlock.h's hrl_lock_options of the release before #33. */
typedef struct v1_lock_options {
  uint32_t ttl_ms;
  bool auto_renew;
  uint32_t max_hold_ms;
  bool fenced;
  const char *owner;
  uint32_t sync_replicas;
  bool sync_aof;
} v1_lock_options;

/* ... and its hrl_options. */
typedef struct v1_options {
  uint32_t connect_timeout_ms;
  uint32_t timeout_ms;
  uint32_t retry_delay_ms;
  uint32_t retry_jitter_ms;
  double drift_factor;
  const char *key_prefix;
  size_t key_prefix_len;
  v1_lock_options lock;
  const char *ssl_ca_certs;
  const char *ssl_ca_path;
  const char *ssl_certfile;
  const char *ssl_keyfile;
  hrl_cert_reqs ssl_cert_reqs;
  bool ssl_check_hostname;
  uint32_t slow_wait_ms;
  uint32_t restart_guard_ms;
} v1_options;

#define SAME_FIELD(now, old, field)                                            \
  CHECK_INT(offsetof(now, field), offsetof(old, field))

static void test_the_layouts_are_the_older_ones(void) {
  CHECK_INT(sizeof(hrl_lock_options), sizeof(v1_lock_options));
  SAME_FIELD(hrl_lock_options, v1_lock_options, ttl_ms);
  SAME_FIELD(hrl_lock_options, v1_lock_options, auto_renew);
  SAME_FIELD(hrl_lock_options, v1_lock_options, max_hold_ms);
  SAME_FIELD(hrl_lock_options, v1_lock_options, fenced);
  SAME_FIELD(hrl_lock_options, v1_lock_options, owner);
  SAME_FIELD(hrl_lock_options, v1_lock_options, sync_replicas);
  SAME_FIELD(hrl_lock_options, v1_lock_options, sync_aof);
  CHECK_INT(sizeof(hrl_options), sizeof(v1_options));
  SAME_FIELD(hrl_options, v1_options, lock);
  SAME_FIELD(hrl_options, v1_options, ssl_ca_certs);
  SAME_FIELD(hrl_options, v1_options, ssl_check_hostname);
  SAME_FIELD(hrl_options, v1_options, restart_guard_ms);
}

/* An older caller's struct with bytes of its own right behind it. */
typedef struct guarded {
  v1_lock_options lo;
  unsigned char canary[64];
} guarded;

static bool canary_intact(const guarded *g) {
  for (size_t i = 0; i < sizeof g->canary; i++) {
    if (g->canary[i] != 0xA5) {
      return false;
    }
  }
  return true;
}

static void test_an_older_caller_makes_every_kind_of_lock(void) {
  const char *urls[] = {"redis://127.0.0.1:1"}; /* never connected */
  v1_options o1;
  memset(&o1, 0xA5, sizeof o1);
  hrl_options_init((hrl_options *)(void *)&o1);
  hrl_client *c = check_client(urls, 1, (hrl_options *)(void *)&o1);
  guarded g;
  memset(g.canary, 0xA5, sizeof g.canary);
  hrl_lock_options_init(c, (hrl_lock_options *)(void *)&g.lo);
  CHECK(canary_intact(&g));
  g.lo.ttl_ms = 12000;
  g.lo.fenced = true;
  const hrl_lock_options *lo = (const hrl_lock_options *)(const void *)&g.lo;
  char detail[HRL_DETAIL_MAX] = "";
  hrl_lock *m = NULL, *r = NULL, *p = NULL;
  CHECK_STATUS(hrl_lock_new_with(c, "abi", 3, lo, &m, detail, sizeof detail),
               HRL_OK);
  CHECK_STATUS(hrl_rwlock_new(c, "abi:rw", 6, HRL_MODE_READ, lo, &r, detail,
                              sizeof detail),
               HRL_OK);
  CHECK_STATUS(
      hrl_permit_new(c, "abi:sem", 7, 3, lo, &p, detail, sizeof detail),
      HRL_OK);
  CHECK_STR(detail, "");
  CHECK_INT(hrl_lock_ttl_ms(m), 12000);
  CHECK_INT(hrl_lock_ttl_ms(r), 12000);
  CHECK_INT(hrl_lock_ttl_ms(p), 12000);
  CHECK(hrl_lock_fence_key(r, &(size_t){0}) != NULL);
  CHECK(canary_intact(&g));
  hrl_lock_free(m);
  hrl_lock_free(r);
  hrl_lock_free(p);
  hrl_client_free(c);
}

int main(void) {
  RUN(test_the_layouts_are_the_older_ones);
  RUN(test_an_older_caller_makes_every_kind_of_lock);
  return finish_tests("test_abi");
}
