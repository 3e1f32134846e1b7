/*
 * Which protocol states the runs reached: every step's (phase before,
 * step, phase after), what each master's part of each kind of round came
 * to, how calls ended, the lease's renewal outcomes, the subscriber's
 * notices and the stream's actions. One bit per combination; a report
 * lists what was reached of the states the protocol has (the tables
 * below, read from redlock.c, waiting.c, lease.c, stream.c and
 * subscriber.c) and names what was not.
 */
#include <stdio.h>
#include <string.h>

#include "world.h"

static sim_coverage current;

sim_coverage *cov_current(void) {
  return &current;
}

static int cov_index(int kind, int a, int b, int c) {
  return (((kind * 32 + (a & 31)) * 64 + (b & 63)) * 2 + (c & 1)) % COV_BITS;
}

void cov_hit(cov_kind kind, int a, int b, int c) {
  if (kind == COV_STEP) {
    b = b * 16 + c; /* step, phase after */
    c = 0;
  }
  int i = cov_index((int)kind, a, b, c);
  current.bits[i / 64] |= (uint64_t)1 << (i % 64);
}

void cov_merge(sim_coverage *into, const sim_coverage *from) {
  for (size_t i = 0; i < COV_BITS / 64; i++) {
    into->bits[i] |= from->bits[i];
  }
}

static bool has(const sim_coverage *cov, int kind, int a, int b, int c) {
  if (kind == COV_STEP) {
    b = b * 16 + c;
    c = 0;
  }
  int i = cov_index(kind, a, b, c);
  return (cov->bits[i / 64] >> (i % 64)) & 1;
}

typedef struct cov_item {
  int kind, a, b, c;
  const char *name;
} cov_item;

#define P(x) HRL_PHASE_##x
#define S(x) HRL_STEP_##x
#define STEP(from, step, to)                                                   \
  { COV_STEP, P(from), S(step), P(to), #from " -" #step "-> " #to }
#define RK(x) HRL_ROUND_##x
#define NR(x) HRL_NODE_##x
#define REPLY(k, r)                                                            \
  { COV_REPLY, RK(k), NR(r), 0, #k " " #r }
#define REPLY_EVAL(k, r)                                                       \
  { COV_REPLY, RK(k), NR(r), 1, #k " " #r " after NOSCRIPT" }

#define UNACKED(k)                                                             \
  { COV_REPLY, RK(k), COV_UNACKED, 0, #k " too few replicas (WAIT)" }

static const cov_item universe[] = {
    /* redlock.c: an acquire's attempt */
    STEP(ATTEMPT, ROUND, ACQUIRING),
    STEP(ACQUIRING, DONE, DONE),
    STEP(ACQUIRING, ROUND, FENCING),
    STEP(ACQUIRING, ROUND, CLEANUP),
    STEP(ACQUIRING, ROUND, TRYING),
    STEP(FENCING, DONE, DONE),
    STEP(FENCING, ROUND, CLEANUP),
    STEP(FENCING, ROUND, TRYING),
    STEP(FENCING, ROUND, ASIDE),
    STEP(FENCING, ROUND, LEAVING),
    STEP(CLEANUP, DONE, DONE),
    /* release, extend */
    STEP(SCRIPT, ROUND, SCRIPTING),
    STEP(SCRIPTING, DONE, DONE),
    /* waiting.c */
    STEP(TRYING, DONE, DONE),
    STEP(TRYING, ROUND, FENCING),
    STEP(TRYING, ROUND, ASIDE),
    STEP(TRYING, WAIT, WAITING),
    STEP(TRYING, ROUND, TRYING),
    STEP(TRYING, ROUND, LEAVING),
    STEP(ASIDE, WAIT, WAITING),
    STEP(ASIDE, ROUND, TRYING),
    STEP(ASIDE, ROUND, LEAVING),
    STEP(WAITING, WAIT, WAITING),
    STEP(WAITING, ROUND, TRYING),
    STEP(WAITING, ROUND, LEAVING),
    STEP(WAITING, DONE, DONE), /* a hand-off taken without a claim */
    STEP(LEAVE, ROUND, LEAVING),
    STEP(LEAVING, DONE, DONE),
    /* what a master's part of a round came to */
    REPLY(SET, OK),
    REPLY(SET, REFUSED),
    REPLY(SET, UNREACHABLE),
    REPLY(SET, SERVER),
    REPLY(FENCED_ACQUIRE, OK),
    REPLY(FENCED_ACQUIRE, REFUSED),
    REPLY(FENCED_ACQUIRE, UNREACHABLE),
    REPLY(FENCE, OK),
    REPLY(FENCE, REFUSED),
    REPLY(FENCE, UNREACHABLE),
    REPLY_EVAL(FENCE, OK),
    REPLY(RELEASE, OK),
    REPLY(RELEASE, REFUSED),
    REPLY(RELEASE, UNREACHABLE),
    REPLY(RELEASE, SERVER),
    REPLY_EVAL(RELEASE, OK),
    REPLY(EXTEND, OK),
    REPLY(EXTEND, REFUSED),
    REPLY(EXTEND, UNREACHABLE),
    REPLY_EVAL(EXTEND, OK),
    REPLY(TRY, OK),
    REPLY(TRY, REFUSED),
    REPLY(TRY, UNREACHABLE),
    REPLY(TRY, SERVER),
    REPLY_EVAL(TRY, OK),
    REPLY_EVAL(TRY, REFUSED),
    REPLY(FENCED_TRY, OK),
    REPLY(FENCED_TRY, REFUSED),
    REPLY(FENCED_TRY, UNREACHABLE),
    REPLY_EVAL(FENCED_TRY, REFUSED),
    REPLY(ASIDE, OK),
    REPLY(ASIDE, UNREACHABLE),
    REPLY_EVAL(ASIDE, OK),
    /* a write that took, with too few replicas behind it (sync_replicas,
     * sync_aof: the WAIT's count) */
    UNACKED(SET),
    UNACKED(FENCED_ACQUIRE),
    UNACKED(FENCE),
    UNACKED(EXTEND),
    UNACKED(TRY),
    UNACKED(FENCED_TRY),
    /* failures the driver reported: 0 refused connect, 1 connect timeout,
     * 2 skipped (late), 3 deadline, 4 reset, 5 held back by the stream */
    {COV_FAIL, RK(SET), 0, 0, "SET: connection refused"},
    {COV_FAIL, RK(SET), 1, 0, "SET: connect timeout"},
    {COV_FAIL, RK(SET), 2, 0, "SET: late master skipped"},
    {COV_FAIL, RK(SET), 3, 0, "SET: deadline"},
    {COV_FAIL, RK(SET), 4, 0, "SET: reset"},
    {COV_FAIL, RK(RELEASE), 2, 0, "release: late master skipped"},
    {COV_FAIL, RK(RELEASE), 3, 1, "release: deadline, full script behind"},
    {COV_FAIL, RK(EXTEND), 3, 1, "extend: deadline, full script behind"},
    {COV_FAIL, RK(TRY), 3, 1, "try: deadline, full script behind"},
    {COV_FAIL, RK(FENCED_TRY), 3, 0, "fenced try: deadline"},
    {COV_FAIL, RK(FENCE), 3, 0, "fence round: deadline"},
    {COV_FAIL, RK(SET), 5, 0, "SET: held back (64 replies owed)"},
    {COV_FAIL, RK(TRY), 5, 0, "try: held back (64 replies owed)"},
    {COV_FAIL, RK(EXTEND), 5, 0, "extend: held back (64 replies owed)"},
    {COV_FAIL, RK(RELEASE), 5, 0, "release: held back (64 replies owed)"},
    {COV_FAIL, RK(FENCED_TRY), 5, 0, "fenced try: held back (64 replies owed)"},
    {COV_FAIL, RK(FENCED_ACQUIRE), 5, 0,
     "fenced acquire: held back (64 replies owed)"},
    {COV_FAIL, RK(ASIDE), 5, 0, "aside: held back (64 replies owed)"},
    /* how calls ended */
    {COV_DONE, HRL_OP_ACQUIRE, HRL_OK, 0, "acquire: ok"},
    {COV_DONE, HRL_OP_ACQUIRE, HRL_ETIMEOUT, 0, "acquire: timeout"},
    {COV_DONE, HRL_OP_ACQUIRE, HRL_ECONNECT, 0, "acquire: connection failed"},
    {COV_DONE, HRL_OP_ACQUIRE, HRL_ESERVER, 0, "acquire: server error"},
    {COV_DONE, HRL_OP_ACQUIRE, HRL_ECANCELLED, 0, "acquire: cancelled"},
    {COV_DONE, HRL_OP_RELEASE, HRL_OK, 0, "release: ok"},
    {COV_DONE, HRL_OP_RELEASE, HRL_ENOTOWNED, 0, "release: not owned"},
    {COV_DONE, HRL_OP_RELEASE, HRL_ECONNECT, 0, "release: connection failed"},
    {COV_DONE, HRL_OP_RELEASE, HRL_ELOST, 0, "release: lost"},
    {COV_DONE, HRL_OP_EXTEND, HRL_OK, 0, "extend: ok"},
    {COV_DONE, HRL_OP_EXTEND, HRL_ENOTOWNED, 0, "extend: not owned"},
    {COV_DONE, HRL_OP_EXTEND, HRL_ECONNECT, 0, "extend: connection failed"},
    {COV_DONE, HRL_OP_EXTEND, HRL_ELOST, 0, "extend: lost"},
    {COV_DONE, HRL_OP_EXTEND, HRL_OK, 1, "renewal: ok"},
    {COV_DONE, HRL_OP_EXTEND, HRL_ENOTOWNED, 1, "renewal: not owned"},
    {COV_DONE, HRL_OP_EXTEND, HRL_ECONNECT, 1, "renewal: connection failed"},
    /* lease.c */
    {COV_RENEW, HRL_RENEW_WAIT, 0, 0, "renew_begin: wait"},
    {COV_RENEW, HRL_RENEW_ROUND, 0, 0, "renew_begin: round"},
    {COV_RENEW, HRL_RENEW_LOST, 0, 0, "renew_begin: lost"},
    {COV_RENEW, 10 + HRL_OK, 0, 0, "renew_end: ok"},
    {COV_RENEW, 10 + HRL_ELOST, 0, 0, "renew_end: lost"},
    {COV_RENEW, 10 + HRL_ECANCELLED, 0, 0, "renew_end: hold changed"},
    {COV_RENEW, 10 + HRL_ECONNECT, 0, 0, "renew_end: failed"},
    /* subscriber.c, stream.c */
    {COV_NOTICE, HRL_NOTICE_SEND, 0, 0, "subscriber: send"},
    {COV_NOTICE, HRL_NOTICE_READY, 0, 0, "subscriber: ready"},
    {COV_NOTICE, HRL_NOTICE_HANDOFF, 0, 0, "subscriber: hand-off"},
    {COV_NOTICE, HRL_NOTICE_CLOSE, 0, 0, "subscriber: close"},
    {COV_STREAM, HRL_STREAM_MORE, 0, 0, "stream: more"},
    {COV_STREAM, HRL_STREAM_SEND, 0, 0, "stream: send"},
    {COV_STREAM, HRL_STREAM_DONE, 0, 0, "stream: done"},
    {COV_STREAM, HRL_STREAM_CLOSE, 0, 0, "stream: close"},
};

void cov_report(const sim_coverage *cov, int *reached, int *listed,
                bool list_missing, void *file) {
  FILE *out = file;
  static const char *const titles[COV_KINDS] = {
      "phase transitions", "round results", "driver failures", "call outcomes",
      "lease renewals",    "subscriber",    "stream"};
  int got[COV_KINDS] = {0}, all[COV_KINDS] = {0};
  size_t n = sizeof universe / sizeof universe[0];
  *reached = 0;
  *listed = (int)n;
  for (size_t i = 0; i < n; i++) {
    const cov_item *it = &universe[i];
    all[it->kind]++;
    if (has(cov, it->kind, it->a, it->b, it->c)) {
      got[it->kind]++;
      (*reached)++;
    }
  }
  if (out == NULL) {
    return;
  }
  fprintf(out, "coverage: %d of %d protocol states (", *reached, *listed);
  for (int k = 0; k < COV_KINDS; k++) {
    fprintf(out, "%s%s %d/%d", k ? ", " : "", titles[k], got[k], all[k]);
  }
  fprintf(out, ")\n");
  if (!list_missing) {
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const cov_item *it = &universe[i];
    if (!has(cov, it->kind, it->a, it->b, it->c)) {
      fprintf(out, "  not reached: %s\n", it->name);
    }
  }
}
