/* libFuzzer: the Redlock state machine fed hostile replies. The input
 * drives everything: the number of masters, the TTL, the clock, which
 * masters fail, the RESP bytes each master "sends" (parsed with the core's
 * reader, so framing and meaning are both under attack), fenced locks
 * (their fence round) and plain ones, and, while an acquire waits, which
 * masters hand it the lock, wakes and cancels. Invariants: the machine
 * always ends, a held lock always has validity left and a 32-hex token, a
 * fenced one a fence and a plain one none, per-master counts add up to N,
 * and a wait is never longer than the caller's. Half the inputs make the
 * lock a managed lease and mix renewals (on its twin) in: a lost lease is
 * never held, and a renewal's outcome is one of those documented. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hiredlock/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct input {
  const uint8_t *p;
  size_t left;
} input;

static uint8_t take(input *in) {
  if (in->left == 0) {
    return 0;
  }
  in->left--;
  return *in->p++;
}

static const char *const urls[] = {"redis://127.0.0.1:1", "redis://127.0.0.1:2",
                                   "redis://127.0.0.1:3", "redis://127.0.0.1:4",
                                   "redis://127.0.0.1:5"};

/* Feeds master i up to `chunk` bytes of the input as its reply stream. */
static void answer(hrl_lock *lk, size_t i, input *in, hrl_parser *p) {
  size_t chunk = take(in) % 48;
  chunk = chunk < in->left ? chunk : in->left;
  if (hrl_parser_feed(p, (const char *)in->p, chunk) != HRL_OK) {
    hrl_proto_fail(lk, i, HRL_NODE_PROTOCOL, "bad stream");
    return;
  }
  in->p += chunk;
  in->left -= chunk;
  for (int k = 0; k < 6; k++) {
    hrl_reply r;
    int rc = hrl_parser_next(p, &r);
    if (rc < 0) {
      hrl_proto_fail(lk, i, HRL_NODE_PROTOCOL, "bad stream");
      return;
    }
    if (rc == 0) {
      hrl_proto_fail(lk, i, HRL_NODE_UNREACHABLE, "timeout");
      return;
    }
    size_t len = 0;
    if (hrl_proto_command(lk, i, &len) == NULL || len == 0) {
      __builtin_trap(); /* every master of a round has a command */
    }
    hrl_node_result res = hrl_proto_reply(lk, i, &r);
    if (res != HRL_NODE_RESEND && res != HRL_NODE_MORE) {
      return;
    }
  }
}

/* Runs the operation begun on lk to its end; `size` bounds its rounds. */
static void run(hrl_lock *lk, size_t n, input *in, hrl_parser **parsers,
                int64_t *now, size_t size, bool acquire, bool fenced,
                uint32_t wait_ms) {
  for (int steps = 0;; steps++) {
    /* Every round eats input, and once it is gone every master fails and
     * a waiter tries again at most every per-master timeout (50 ms) until
     * its wait is over: it must end. */
    if ((size_t)steps > 4 + 2 * size + 3 * (wait_ms / 50 + 2)) {
      __builtin_trap();
    }
    hrl_step_info s;
    hrl_step step = hrl_proto_step(lk, *now, &s);
    if (step == HRL_STEP_DONE) {
      hrl_counts cnt;
      hrl_lock_counts(lk, &cnt);
      if (cnt.ok + cnt.refused + cnt.unreachable + cnt.failed != n) {
        __builtin_trap(); /* every master is accounted for */
      }
      if (s.status == HRL_OK && acquire &&
          (cnt.ok < cnt.quorum ||
           strlen(hrl_lock_token(lk)) != HRL_TOKEN_LEN)) {
        __builtin_trap(); /* held means a quorum said yes */
      }
      if (s.status == HRL_OK && acquire &&
          (hrl_lock_fence(lk) != 0) != fenced) {
        __builtin_trap(); /* a fenced hold has a fence, a plain one not */
      }
      return;
    }
    if (step == HRL_STEP_WAIT) {
      if (hrl_proto_waiter(lk) == NULL || s.wait_ms > wait_ms + 1) {
        __builtin_trap(); /* a waiter, never waiting past its wait */
      }
      uint8_t what = take(in);
      if (what & 1) {
        hrl_proto_notified(lk, what % n);
      }
      if (what & 2) {
        hrl_proto_wake(lk);
      }
      if (what & 4) {
        hrl_proto_cancel(lk);
      }
      bool whole = (what & 8) || in->left == 0; /* no input: time passes */
      *now += whole ? (int64_t)s.wait_ms * 1000 + 1 : take(in) * 100;
      continue;
    }
    for (size_t i = 0; i < n; i++) {
      answer(lk, i, in, parsers[i]);
    }
    *now += take(in) * 100;
  }
}

/* One renewal of the lease as a driver runs it. */
static void renew(hrl_lock *lk, size_t n, input *in, hrl_parser **parsers,
                  int64_t *now, size_t size) {
  hrl_lock *twin = NULL;
  hrl_renew what = hrl_proto_renew_begin(lk, *now, &twin);
  if ((what == HRL_RENEW_ROUND) != (twin != NULL)) {
    __builtin_trap(); /* a twin for a round, and only then */
  }
  if (what == HRL_RENEW_ROUND) {
    run(twin, n, in, parsers, now, size, false, false, 0);
    hrl_status st = hrl_proto_renew_end(lk, *now);
    if (st == HRL_EINVAL || st == HRL_EHELD || st == HRL_ENOTOWNED) {
      __builtin_trap(); /* not an outcome renew_end gives */
    }
  }
  if (hrl_lock_lost(lk, NULL, 0) == HRL_ELOST && hrl_lock_held(lk)) {
    __builtin_trap(); /* a lost lease is never held */
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  uint8_t first = take(&in);
  size_t n = (size_t)(first % 5) + 1;
  bool lease = (first & 0x80) != 0;
  uint32_t ttl = (uint32_t)take(&in) * 100 + 5; /* 5 ms: the smallest */
  hrl_options o;
  hrl_options_init(&o);
  o.retry_jitter_ms = take(&in);
  o.lock.ttl_ms = ttl;
  o.lock.fenced = take(&in) & 1;
  hrl_client *c = NULL;
  hrl_lock *lk = NULL;
  if (hrl_client_new(urls, n, &o, &c, NULL, 0) != HRL_OK) {
    __builtin_trap();
  }
  hrl_lock_options lo;
  hrl_lock_options_init(c, &lo);
  lo.ttl_ms = ttl;
  lo.auto_renew = lease;
  lo.max_hold_ms = lease ? (uint32_t)take(&in) * 50 : 0;
  if (hrl_lock_new_with(c, "fuzz", 4, &lo, &lk, NULL, 0) != HRL_OK) {
    __builtin_trap();
  }
  hrl_parser *parsers[5] = {0};
  for (size_t i = 0; i < n; i++) {
    parsers[i] = hrl_parser_new();
  }
  int64_t now = hrl_now_us();
  for (int op = 0; op < 4 && in.left > 0; op++) {
    uint8_t which = take(&in) % (lease ? 4 : 3);
    if (which == 3) {
      renew(lk, n, &in, parsers, &now, size);
      continue;
    }
    hrl_op_kind kind = (hrl_op_kind)which;
    uint32_t wait_ms = take(&in) * 10u;
    if (hrl_proto_begin(lk, kind, wait_ms, now) != HRL_OK) {
      continue;
    }
    run(lk, n, &in, parsers, &now, size, kind == HRL_OP_ACQUIRE, o.lock.fenced,
        wait_ms);
  }
  for (size_t i = 0; i < n; i++) {
    hrl_parser_free(parsers[i]);
  }
  hrl_lock_free(lk);
  hrl_client_free(c);
  return 0;
}
