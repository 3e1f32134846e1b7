/*
 * The Redlock algorithm as a sans-I/O state machine (docs/DESIGN.md).
 * Transports move bytes and wait; every decision is made here, once, for
 * every driver alike.
 *
 * Acquire:
 *   ATTEMPT    -> new token, SET NX PX to all N at once     -> ACQUIRING
 *                 (a fenced lock: INCR of the name's counter behind it)
 *   ACQUIRING  -> ok >= quorum and validity > 0: held, DONE
 *                 (fenced: the fence T is the greatest counter the masters
 *                 that said OK returned; when fewer than a quorum of them
 *                 returned T, T goes to all N in the fence round, which
 *                 raises the counter to T where our key is -> FENCING)
 *                 a quorum answered and wait is left: the waiting acquire
 *                 of waiting.c (queue, hand-offs) takes over
 *                 else, when any master may hold the token: release round
 *                 to all N (also those that failed or timed out) -> CLEANUP
 *   FENCING    -> a quorum accepted T, validity > 0: held with fence T, DONE
 *                 else the attempt failed: as a refused ACQUIRING (a
 *                 waiter's: as its refused try, see waiting.c)
 *   CLEANUP    -> fewer than a quorum answered: a transport error, DONE
 *                 else a timeout, DONE
 *   A waiter's try (waiting.c) is judged as an attempt: held, or fenced
 *   (FENCING), or back to waiting.c.
 *   validity = ttl - elapsed - (ttl * drift_factor + 2 ms); a lock whose
 *   validity is <= 0 is never reported held.
 * docs/SAFETY.md proves the fences strictly increasing.
 * Release / extend:
 *   SCRIPT -> release (the queue script: hands the lock to the first
 *             waiter) or extend script (EVALSHA, EVAL on NOSCRIPT) to all
 *             N                                               -> SCRIPTING
 *   SCRIPTING -> ok >= quorum (extend: and new validity > 0): OK
 *                a quorum answered: not owned, the lock is no longer held
 *                otherwise a transport error; the lock keeps what it knew.
 */
#include <string.h>

#include "detail.h"
#include "mutant.h"
#include "random.h"
#include "state.h"

#define US_PER_MS 1000

static int64_t drift_us(const hrl_config *c, uint32_t ttl_ms) {
  if (HRL_MUTANT(NO_DRIFT)) {
    return 0;
  }
  return (int64_t)((double)ttl_ms * c->opts.drift_factor * US_PER_MS) +
         2 * US_PER_MS;
}

int64_t hrl_validity_floor_us(const hrl_config *c, int64_t start_us,
                              uint32_t ttl_ms) {
  return start_us + (int64_t)ttl_ms * US_PER_MS - drift_us(c, ttl_ms);
}

/* A master is never waited on longer than a tenth of the TTL it is asked to
 * hold, so slow masters cannot eat the validity. */
uint32_t hrl_ttl_bound_timeout(const hrl_config *c, uint32_t ttl_ms) {
  uint32_t cap = ttl_ms / 10 > 0 ? ttl_ms / 10 : 1;
  return c->opts.timeout_ms < cap ? c->opts.timeout_ms : cap;
}

/* An extend round (a renewal's, or the holder's) ends when the validity it
 * is meant to keep does: a confirmation that came later could not keep it
 * (a lease is lost by then), and the loss must be known no later than
 * `validity` said, before another client can take the lock (its keys live
 * drift longer). At least 1 ms; a lock with no validity left (a plain
 * lock: a lease is lost by then) asks with the usual timeout, as nothing
 * it learns can come late. */
static uint32_t extend_timeout(const hrl_lock *lk, uint32_t ttl_ms,
                               int64_t now_us) {
  uint32_t timeout = hrl_ttl_bound_timeout(lk->cfg, ttl_ms);
  int64_t left_ms = (lk->valid_until_us - now_us) / US_PER_MS;
  if (!lk->held || lk->valid_until_us <= now_us) {
    return timeout;
  }
  if (left_ms < 1) {
    left_ms = 1;
  }
  return left_ms < (int64_t)timeout ? (uint32_t)left_ms : timeout;
}

hrl_step hrl_op_finish(hrl_lock *lk, hrl_status status, hrl_step_info *info) {
  if (lk->cfg->same_server[0] != '\0' && lk->op.kind != HRL_OP_RELEASE &&
      status != HRL_OK) {
    /* Two masters turned out to be one server in this operation's rounds:
     * that, not what the rounds found, is the error. */
    status = HRL_EINVAL;
    hrl_detailf(lk->detail, sizeof lk->detail, "%s", lk->cfg->same_server);
  }
  if (lk->op.rejoined && status != HRL_OK && !lk->op.token_in_flight &&
      lk->op.rejoin_until_us > lk->op.round_start_us) {
    /* An acquire that took up an entry left behind and failed before it
     * could leave it (its first round): the next one takes it up, until
     * that entry's lease ends. Never later: this acquire did not queue, so
     * nothing refreshed the entry, and a client that polls must not keep
     * an old place in line for good (it would go ahead of waiters that
     * came after it left). Only while every command of the token was
     * answered: its cleanup release, unanswered, may still run, and it
     * would delete the key of the acquire that took the token up
     * (tests/sim/regress/rejoin-late-release.txt). */
    hrl_wait_keep(lk, lk->op.rejoin_until_us);
  }
  lk->op.rejoined = false;
  lk->op.phase = HRL_PHASE_DONE;
  lk->op.result = status;
  info->status = status;
  return HRL_STEP_DONE;
}

hrl_step hrl_round_step(hrl_lock *lk, hrl_round_kind kind, uint32_t timeout_ms,
                        int64_t now_us, hrl_step_info *info) {
  hrl_round_start(lk, kind, timeout_ms, now_us);
  info->timeout_ms = timeout_ms;
  return HRL_STEP_ROUND;
}

/* Counts a round's results; a master the transport never reported on
 * counts as unreachable. */
static hrl_tally count_nodes(hrl_node *nodes, size_t n) {
  hrl_tally t = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    if (nodes[i].result == HRL_NODE_PENDING) {
      nodes[i].result = HRL_NODE_UNREACHABLE;
      hrl_detailf(nodes[i].msg, sizeof nodes[i].msg, "no reply");
    }
    switch (nodes[i].result) {
    case HRL_NODE_OK:
      t.ok++;
      break;
    case HRL_NODE_REFUSED:
      t.refused++;
      break;
    case HRL_NODE_UNREACHABLE:
      t.unreachable++;
      break;
    default:
      t.failed++;
      break;
    }
  }
  return t;
}

/* The masters that said OK this round, one bit each. */
static uint64_t ok_mask(const hrl_node *nodes, size_t n) {
  uint64_t mask = 0;
  for (size_t i = 0; i < n; i++) {
    if (nodes[i].result == HRL_NODE_OK) {
      mask |= (uint64_t)1 << i;
    }
  }
  return mask;
}

hrl_tally hrl_round_tally(hrl_lock *lk) {
  return count_nodes(lk->op.nodes, lk->cfg->n);
}

void hrl_round_record(hrl_lock *lk, hrl_tally t) {
  hrl_counts *c = &lk->op.counts;
  c->masters = (uint32_t)lk->cfg->n;
  c->quorum = (uint32_t)lk->cfg->quorum;
  c->ok = t.ok;
  c->refused = t.refused;
  c->unreachable = t.unreachable;
  c->failed = t.failed;
  c->attempts = lk->op.attempts;
}

static hrl_step fail_unreachable(hrl_lock *lk, const hrl_node *nodes,
                                 size_t count, const char *what,
                                 hrl_step_info *info) {
  return hrl_op_finish(lk, hrl_unreachable_status(lk, nodes, count, what),
                       info);
}

/* Answers (ok or refused) among an attempt's results; with_unacked: also
 * masters that took the write whose replicas did not acknowledge it in
 * time (sync_replicas), which a wait may see catch up. */
static size_t count_answers(const hrl_lock *lk, const hrl_node *nodes,
                            bool with_unacked) {
  size_t n = 0;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    n += nodes[i].result == HRL_NODE_OK ||
         nodes[i].result == HRL_NODE_REFUSED ||
         (with_unacked && nodes[i].unacked);
  }
  return n;
}

static size_t answered(const hrl_lock *lk, const hrl_node *nodes) {
  return count_answers(lk, nodes, false);
}

/* After a failed attempt (and its cleanup), with no wait left or too few
 * answers: fail fast, or time out. */
static hrl_step decide_retry(hrl_lock *lk, hrl_step_info *info) {
  size_t n = answered(lk, hrl_op_decided(lk));
  if (n < lk->cfg->quorum) {
    /* No amount of waiting fixes unreachable masters within a caller's
     * patience for one lock: say so now instead of spinning. */
    return fail_unreachable(lk, hrl_op_decided(lk), n, "answered", info);
  }
  return hrl_op_finish(lk, HRL_ETIMEOUT, info);
}

static hrl_step start_attempt(hrl_lock *lk, int64_t now_us,
                              hrl_step_info *info) {
  hrl_op *op = &lk->op;
  hrl_wait_rejoin(lk, now_us);
  if (op->token[0] == '\0' && hrl_token_new(lk->cfg, op->token) != HRL_OK) {
    hrl_detailf(lk->detail, sizeof lk->detail,
                "the OS random generator failed");
    return hrl_op_finish(lk, HRL_ESYSTEM, info);
  }
  op->attempts++;
  op->phase = HRL_PHASE_ACQUIRING;
  return hrl_round_step(
      lk, hrl_fence_pipelined(lk) ? HRL_ROUND_FENCED_ACQUIRE : HRL_ROUND_SET,
      hrl_ttl_bound_timeout(lk->cfg, op->ttl_ms), now_us, info);
}

/* The attempt holds the lock (the masters that said OK to its last round
 * granted it), valid until op->attempt_until_us. */
static hrl_step grant(hrl_lock *lk, uint64_t fence, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  lk->held = true;
  hrl_lease_held_since(lk, op->attempt_start_us);
  lk->granted = ok_mask(op->nodes, lk->cfg->n);
  memcpy(lk->token, op->token, sizeof lk->token);
  lk->valid_until_us = op->attempt_until_us;
  lk->fence = fence;
  return hrl_op_finish(lk, HRL_OK, info);
}

hrl_step hrl_grant_handed(hrl_lock *lk, uint64_t masters, int64_t start_us,
                          hrl_step_info *info) {
  hrl_op *op = &lk->op;
  hrl_counts *c = &op->counts;
  c->ok = 0;
  for (uint64_t m = masters; m != 0; m &= m - 1) {
    c->ok++;
  }
  c->refused = c->unreachable = c->failed = 0;
  lk->held = true;
  hrl_lease_held_since(lk, start_us);
  lk->granted = masters;
  /* Every master that handed it holds our token, in the quorum or not. */
  lk->token_at |= op->notified;
  memcpy(lk->token, op->token, sizeof lk->token);
  op->attempt_start_us = start_us;
  op->attempt_until_us = start_us + (int64_t)op->ttl_ms * US_PER_MS -
                         drift_us(lk->cfg, op->ttl_ms);
  lk->valid_until_us = op->attempt_until_us;
  lk->fence = 0;
  return hrl_op_finish(lk, HRL_OK, info);
}

/* The attempt did not get the lock. A waiter's goes back to waiting.c.
 * Refused by a quorum with time to wait: queue up (waiting.c); its first
 * try claims what this attempt got, so no cleanup here. Otherwise its
 * results are what the outcome is decided on, and when any master may hold
 * its token, the release goes to all N first. */
static hrl_step end_attempt(hrl_lock *lk, bool may_hold, int64_t now_us,
                            hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  if (op->waiting) {
    return hrl_wait_not_won(lk, hrl_round_tally(lk), may_hold, now_us, info);
  }
  if (now_us < op->deadline_us && c->same_server[0] == '\0') {
    /* Masters whose replicas lag (a failover under way, a replica
     * restarting) are worth waiting for: the wait tries again, and says
     * why at its deadline. */
    if (count_answers(lk, op->nodes, true) >= c->quorum) {
      return hrl_wait_start(lk, now_us, info);
    }
    /* Too few answers, for want of connections only (a master stalled,
     * restarting, a connection reset): within the caller's wait, as a
     * queued waiter would, try again until the deadline and report the
     * error there. A refusal that lasts (authentication, another server
     * or protocol error) fails now. */
    if (!hrl_wait_lasting_failure(lk)) {
      return hrl_wait_unanswered(lk, hrl_round_tally(lk), may_hold, now_us,
                                 info);
    }
  }
  memcpy(hrl_op_decided(lk), op->nodes, c->n * sizeof *op->nodes);
  if (!may_hold || HRL_MUTANT(NO_CLEANUP)) {
    return decide_retry(lk, info);
  }
  op->phase = HRL_PHASE_CLEANUP;
  return hrl_round_step(lk, HRL_ROUND_RELEASE, c->opts.timeout_ms, now_us,
                        info);
}

/* A fenced attempt that a quorum granted: its fence is the greatest
 * counter they returned. The masters whose counter is that fence hold it
 * already (their INCR wrote it); when they are fewer than a quorum, the
 * fence goes to all N, to be raised to where our key is, within the
 * validity the first round left (the fence round). */
static hrl_step fence_attempt(hrl_lock *lk, int64_t now_us,
                              hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  uint64_t fence = 0;
  size_t at_fence = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (op->nodes[i].result == HRL_NODE_OK && op->nodes[i].counter > fence) {
      fence = op->nodes[i].counter;
    }
  }
  for (size_t i = 0; i < c->n; i++) {
    at_fence +=
        op->nodes[i].result == HRL_NODE_OK && op->nodes[i].counter == fence;
  }
  if (at_fence >= c->quorum || HRL_MUTANT(NO_FENCE_ROUND)) {
    return grant(lk, fence, info);
  }
  int64_t left_ms = (op->attempt_until_us - now_us) / US_PER_MS;
  if (left_ms < 1) {
    return end_attempt(lk, true, now_us, info);
  }
  uint32_t timeout_ms = hrl_ttl_bound_timeout(c, op->ttl_ms);
  if ((int64_t)timeout_ms > left_ms) {
    timeout_ms = (uint32_t)left_ms;
  }
  op->fence = fence;
  memcpy(hrl_op_decided(lk), op->nodes, c->n * sizeof *op->nodes);
  op->phase = HRL_PHASE_FENCING;
  return hrl_round_step(lk, HRL_ROUND_FENCE, timeout_ms, now_us, info);
}

bool hrl_attempt_granted(hrl_lock *lk, hrl_tally t, int64_t now_us,
                         hrl_step_info *info, hrl_step *step) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  op->attempt_start_us = op->round_start_us;
  op->attempt_until_us =
      hrl_validity_floor_us(c, op->round_start_us, op->ttl_ms);
  if (t.ok < c->quorum ||
      (op->attempt_until_us <= now_us && !HRL_MUTANT(NO_VALIDITY)) ||
      c->same_server[0] != '\0') {
    return false;
  }
  /* A hold's scripts read its counter themselves (hold.c). */
  bool fenced = lk->fence_key != NULL;
  *step = fenced ? fence_attempt(lk, now_us, info) : grant(lk, 0, info);
  return true;
}

static hrl_step judge_attempt(hrl_lock *lk, int64_t now_us,
                              hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  hrl_hold_settle(lk); /* a semaphore's: one permit */
  hrl_tally t = count_nodes(op->nodes, c->n);
  hrl_round_record(lk, t);
  hrl_step step;
  if (hrl_attempt_granted(lk, t, now_us, info, &step)) {
    return step;
  }
  bool fenced = op->round_kind == HRL_ROUND_FENCED_ACQUIRE;
  /* A master that refused or rejected the SET cannot hold our fresh token;
   * any other may (a timeout can hide a SET that was applied). A fenced
   * acquire's error may be its INCR's, after a SET that took (a counter
   * that is not a number, or at 2^63 - 1): there, only a refusal says our
   * token is not there. A token taken up from a saved place in line is not
   * fresh: a release may have handed the key to it, and that key refuses
   * our SET (found by tests/sim, tests/sim/regress/rejoin-handoff.txt). */
  bool may_hold = op->rejoined;
  for (size_t i = 0; i < c->n; i++) {
    hrl_node_result r = op->nodes[i].result;
    may_hold |= r == HRL_NODE_OK || r == HRL_NODE_UNREACHABLE ||
                r == HRL_NODE_PROTOCOL || (fenced && r != HRL_NODE_REFUSED) ||
                (op->nodes[i].took && !HRL_MUTANT(UNACKED_UNTAKEN));
  }
  return end_attempt(lk, may_hold, now_us, info);
}

/* After the fence round: held when a quorum raised its counter to the fence
 * while our key was there, within the validity of the first round. The
 * counts then say what each master did in the end: accepted the fence, or
 * why not (in the first round when it failed there). Otherwise the attempt
 * failed and is cleaned up like any other (a quorum said OK to the first
 * round: our token is out there). */
static hrl_step judge_fence(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  for (size_t i = 0; i < c->n; i++) {
    if (op->nodes[i].result != HRL_NODE_OK &&
        hrl_op_decided(lk)[i].result != HRL_NODE_OK) {
      op->nodes[i] = hrl_op_decided(lk)[i];
    }
  }
  hrl_tally t = count_nodes(op->nodes, c->n);
  hrl_round_record(lk, t);
  if (t.ok >= c->quorum && op->attempt_until_us > now_us) {
    return grant(lk, op->fence, info);
  }
  return end_attempt(lk, true, now_us, info);
}

/* Whether the lock is provably lost: fewer than a quorum of the masters
 * that granted the hold can still hold it (the others said the key is not
 * ours any more). A master that never granted it says nothing about it. */
static bool lost_on_granting_masters(const hrl_lock *lk) {
  const hrl_config *c = lk->cfg;
  size_t granting = 0, refused = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (lk->granted & ((uint64_t)1 << i)) {
      granting++;
      refused += lk->op.nodes[i].result == HRL_NODE_REFUSED;
    }
  }
  return granting < c->quorum || refused > granting - c->quorum;
}

/* A release ends the hold whatever it finds: once it was asked for, the
 * lock is not ours to use, even when too few masters confirmed (another
 * client may hold it as soon as our keys expire). What a retry needs stays:
 * the token, which masters deleted our key already, and which got the
 * release but never answered (it may run there yet). Their "no key" to the
 * retry is the earlier call's doing, counted as the confirmation it is and
 * never read as "not owned". */
static hrl_step judge_release(hrl_lock *lk, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  uint64_t unsure = 0;
  for (size_t i = 0; i < c->n; i++) {
    hrl_node *node = &op->nodes[i];
    uint64_t bit = (uint64_t)1 << i;
    bool earlier = (lk->released & bit) || ((lk->release_unsure & bit) &&
                                            node->result == HRL_NODE_REFUSED);
    if (earlier && node->result != HRL_NODE_OK) {
      node->result = HRL_NODE_OK;
      hrl_detailf(node->msg, sizeof node->msg, "released by an earlier call");
    }
    bool no_answer = node->result == HRL_NODE_PENDING ||
                     node->result == HRL_NODE_UNREACHABLE;
    if (no_answer &&
        ((node->sent && node->missed) || (lk->release_unsure & bit))) {
      unsure |= bit;
    }
  }
  hrl_tally t = count_nodes(op->nodes, c->n);
  hrl_round_record(lk, t);
  lk->held = false;
  lk->release_pending = false;
  if (t.ok >= c->quorum) {
    return hrl_op_finish(lk, HRL_OK, info);
  }
  if (lost_on_granting_masters(lk)) {
    return hrl_op_finish(lk, HRL_ENOTOWNED, info);
  }
  lk->release_pending = true;
  lk->released = ok_mask(op->nodes, c->n);
  lk->release_unsure = unsure;
  return fail_unreachable(lk, op->nodes, t.ok, "confirmed", info);
}

/* The TTL the validity of the extend round out counts on: the least TTL
 * that may run last on a quorum of the masters that said OK. A master
 * that never answered an earlier extend of the hold (owed_px) may run it
 * after this one, at any time from this round's start: there the key
 * lives no longer than this start + that TTL (a renewal and the holder's
 * extend one after the other on two connections; docs/SAFETY.md,
 * "Managed leases"). The validity (start + TTL - drift) grows with the
 * TTL, so the quorum-th greatest TTL gives the quorum-th latest expiry. 0
 * when fewer than a quorum said OK. */
uint32_t hrl_extend_counted_ttl(const hrl_lock *lk) {
  const hrl_config *c = lk->cfg;
  uint32_t ttl = lk->op.ttl_ms, best = 0;
  for (size_t i = 0; i < c->n; i++) {
    const hrl_node *node = &lk->op.nodes[i];
    if (node->result != HRL_NODE_OK) {
      continue;
    }
    uint32_t px =
        node->owed_px != 0 && node->owed_px < ttl && !HRL_MUTANT(NO_OWED_CAP)
            ? node->owed_px
            : ttl;
    size_t at_least = 0; /* masters that keep it at least that long */
    for (size_t j = 0; j < c->n; j++) {
      const hrl_node *other = &lk->op.nodes[j];
      at_least += other->result == HRL_NODE_OK &&
                  (other->owed_px == 0 || other->owed_px >= px ||
                   HRL_MUTANT(NO_OWED_CAP));
    }
    if (at_least >= c->quorum && px > best) {
      best = px;
    }
  }
  return best;
}

/* The masters this extend round was sent to that never answered (a
 * missed deadline, a reply out of step; not a reset, which loses what
 * was queued): it may run there yet, so each keeps the least such TTL
 * for the rest of the hold. Before the round is tallied (which counts a
 * master it heard nothing from as unreachable). */
static void note_owed_extends(hrl_lock *lk) {
  for (size_t i = 0; i < lk->cfg->n; i++) {
    hrl_node *node = &lk->op.nodes[i];
    bool owed =
        node->sent && (node->missed || node->result == HRL_NODE_PENDING ||
                       node->result == HRL_NODE_PROTOCOL);
    if (owed && (node->owed_px == 0 || lk->op.ttl_ms < node->owed_px)) {
      node->owed_px = lk->op.ttl_ms;
    }
  }
}

static hrl_step judge_script(hrl_lock *lk, int64_t now_us,
                             hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  if (op->kind == HRL_OP_RELEASE) {
    return judge_release(lk, info);
  }
  note_owed_extends(lk);
  hrl_tally t = count_nodes(op->nodes, c->n);
  hrl_round_record(lk, t);
  int64_t start_us = HRL_MUTANT(EXTEND_FROM_END) ? now_us : op->round_start_us;
  int64_t new_until = hrl_validity_floor_us(c, start_us, op->ttl_ms);
  if (hrl_lease_check_expiry(lk, now_us)) {
    /* A lease whose validity ran out during the round was lost then,
     * whatever the masters say now (see lease.c). */
    const char *why = hrl_lease_lost_reason(lk);
    hrl_detail_copy_text(lk->detail, sizeof lk->detail, why, strlen(why));
    return hrl_op_finish(lk, HRL_ELOST, info);
  }
  if (t.ok >= c->quorum) {
    new_until = hrl_validity_floor_us(c, start_us, hrl_extend_counted_ttl(lk));
  }
  if (t.ok >= c->quorum && new_until > now_us && c->same_server[0] == '\0') {
    lk->valid_until_us = new_until;
    lk->ttl_ms = op->ttl_ms;
    lk->granted = ok_mask(op->nodes, c->n);
    /* A renewal raced it: the least of both. */
    hrl_lease_extend_judged(lk, true);
    return hrl_op_finish(lk, HRL_OK, info);
  }
  if ((t.ok >= c->quorum && c->same_server[0] == '\0') ||
      lost_on_granting_masters(lk)) {
    /* Lost, or extended so slowly that no validity is left to promise. */
    lk->held = false;
    if (hrl_lease_is(lk)) {
      hrl_lease_mark_lost(lk, hrl_strerror(HRL_ENOTOWNED));
    }
    return hrl_op_finish(lk, HRL_ENOTOWNED, info);
  }
  /* Masters that timed out may have applied the new TTL: when it is shorter
   * than what was left, only the shorter bound is safe to keep. */
  new_until = hrl_validity_floor_us(c, start_us, op->ttl_ms);
  if (new_until < lk->valid_until_us) {
    lk->valid_until_us = new_until;
  }
  hrl_lease_extend_judged(lk, false);
  return fail_unreachable(lk, op->nodes, t.ok, "confirmed", info);
}

hrl_status hrl_redlock_begin(hrl_lock *lk, hrl_op_kind kind, int64_t arg_ms,
                             int64_t now_us) {
  hrl_op *op = &lk->op;
  if (op->phase != HRL_PHASE_IDLE && op->phase != HRL_PHASE_DONE) {
    hrl_detailf(lk->detail, sizeof lk->detail,
                "another operation is running on this lock");
    return HRL_EINVAL;
  }
  if (lk->cfg->same_server[0] != '\0' && kind != HRL_OP_RELEASE) {
    /* Known since an earlier round: no vote of these masters is worth
     * anything until the client is made with independent ones. */
    hrl_detailf(lk->detail, sizeof lk->detail, "%s", lk->cfg->same_server);
    return HRL_EINVAL;
  }
  switch (kind) {
  case HRL_OP_ACQUIRE:
    if (hrl_lock_held_at(lk, now_us)) {
      lk->detail[0] = '\0';
      return HRL_EHELD;
    }
    if (arg_ms < 0 && arg_ms != HRL_WAIT_FOREVER) {
      hrl_detailf(lk->detail, sizeof lk->detail,
                  "wait_ms must be >= 0 or HRL_WAIT_FOREVER, got %lld",
                  (long long)arg_ms);
      return HRL_EINVAL;
    }
    if (arg_ms > HRL_TTL_MAX_MS) {
      hrl_detailf(lk->detail, sizeof lk->detail,
                  "wait_ms must be at most %d, got %lld", HRL_TTL_MAX_MS,
                  (long long)arg_ms);
      return HRL_EINVAL;
    }
    lk->held = false;
    lk->fence = 0;
    lk->permit = 0;
    op->hint = 0;
    lk->token_at = 0; /* a new token */
    lk->release_pending = false;
    lk->released = 0;
    lk->release_unsure = 0;
    for (size_t i = 0; i < lk->cfg->n; i++) {
      op->nodes[i].owed_px = 0; /* a new token: no extend of it is out */
    }
    hrl_lease_new_hold(lk, true);
    op->deadline_us =
        arg_ms == HRL_WAIT_FOREVER ? INT64_MAX : now_us + arg_ms * US_PER_MS;
    op->ttl_ms = lk->ttl_ms;
    if (hrl_lease_is(lk) && lk->opts.max_hold_ms > 0 &&
        lk->opts.max_hold_ms < op->ttl_ms) {
      /* The keys must not outlive max_hold: ask for no more. */
      op->ttl_ms = lk->opts.max_hold_ms;
    }
    op->phase = HRL_PHASE_ATTEMPT;
    break;
  case HRL_OP_RELEASE:
  case HRL_OP_EXTEND:
    /* A lost lease says so, with why, until a new hold starts: nothing is
     * sent (its keys are someone else's, or expire on their own). */
    if (hrl_lease_check_expiry(lk, now_us)) {
      const char *why = hrl_lease_lost_reason(lk);
      hrl_detail_copy_text(lk->detail, sizeof lk->detail, why, strlen(why));
      return HRL_ELOST;
    }
    /* A release that did not finish may be retried; nothing else may run
     * on a hold that is over. */
    if (!lk->held && !(kind == HRL_OP_RELEASE && lk->release_pending)) {
      lk->detail[0] = '\0';
      return HRL_ENOTHELD;
    }
    if (kind == HRL_OP_EXTEND &&
        (arg_ms < 0 || (arg_ms > 0 && arg_ms < lk->cfg->min_ttl_ms) ||
         arg_ms > HRL_TTL_MAX_MS)) {
      hrl_detailf(lk->detail, sizeof lk->detail,
                  "ttl_ms must be between %u and %d (0: the lock's), got %lld",
                  (unsigned)lk->cfg->min_ttl_ms, HRL_TTL_MAX_MS,
                  (long long)arg_ms);
      return HRL_EINVAL;
    }
    op->ttl_ms = arg_ms > 0 ? (uint32_t)arg_ms : lk->ttl_ms;
    if (kind == HRL_OP_EXTEND) {
      /* A lease's extend is cut to what max_hold leaves, as a renewal. */
      hrl_status capped = hrl_lease_extend_cap(lk, now_us, &op->ttl_ms);
      if (capped != HRL_OK) {
        return capped;
      }
      hrl_lease_extend_begun(lk, now_us, op->ttl_ms);
    }
    memcpy(op->token, lk->token, sizeof op->token);
    op->phase = HRL_PHASE_SCRIPT;
    if (kind == HRL_OP_RELEASE) {
      hrl_lease_new_hold(lk, false); /* no renewal out may touch it now */
    }
    break;
  default:
    hrl_detailf(lk->detail, sizeof lk->detail, "unknown operation %d",
                (int)kind);
    return HRL_EINVAL;
  }
  op->kind = kind;
  op->attempts = 0;
  op->waiting = false;
  op->result = HRL_OK;
  memset(&op->counts, 0, sizeof op->counts);
  lk->detail[0] = '\0';
  return HRL_OK;
}

hrl_step hrl_redlock_step(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  memset(info, 0, sizeof *info);
  if (hrl_proto_in_round(lk, 0)) {
    hrl_round_note_token(lk); /* a round was out: judged below */
  }
  switch (op->phase) {
  case HRL_PHASE_ATTEMPT:
    return start_attempt(lk, now_us, info);
  case HRL_PHASE_ACQUIRING:
    return judge_attempt(lk, now_us, info);
  case HRL_PHASE_FENCING:
    return judge_fence(lk, now_us, info);
  case HRL_PHASE_CLEANUP:
    count_nodes(op->nodes, lk->cfg->n);
    return decide_retry(lk, info);
  case HRL_PHASE_SCRIPT:
    op->phase = HRL_PHASE_SCRIPTING;
    return hrl_round_step(
        lk, op->kind == HRL_OP_EXTEND ? HRL_ROUND_EXTEND : HRL_ROUND_RELEASE,
        op->kind == HRL_OP_EXTEND ? extend_timeout(lk, op->ttl_ms, now_us)
                                  : lk->cfg->opts.timeout_ms,
        now_us, info);
  case HRL_PHASE_SCRIPTING:
    return judge_script(lk, now_us, info);
  case HRL_PHASE_TRYING:
  case HRL_PHASE_ASIDE:
  case HRL_PHASE_WAITING:
  case HRL_PHASE_LEAVE:
  case HRL_PHASE_LEAVING:
    return hrl_wait_step(lk, now_us, info);
  case HRL_PHASE_DONE:
    info->status = op->result;
    return HRL_STEP_DONE;
  case HRL_PHASE_IDLE:
  default:
    hrl_detailf(lk->detail, sizeof lk->detail, "no operation was begun");
    info->status = HRL_EINVAL;
    return HRL_STEP_DONE;
  }
}

void hrl_proto_cancel(hrl_lock *lk) {
  if (lk->op.phase == HRL_PHASE_ATTEMPT) {
    hrl_step_info ignored;
    hrl_op_finish(lk, HRL_ECANCELLED, &ignored);
  } else if (lk->op.phase == HRL_PHASE_WAITING) {
    hrl_wait_cancel(lk);
  }
}

uint32_t hrl_min_ttl_ms(const hrl_config *c) {
  /* The smallest TTL that leaves a millisecond of validity after a round
   * that used its whole per-master deadline (a tenth of the TTL, at least
   * 1 ms) and the drift allowance: below it no attempt could ever be valid,
   * so an acquire would only time out (or spin forever). A handful of
   * milliseconds for any drift_factor in [0, 0.5). */
  for (uint32_t ttl = 1; ttl < 1000; ttl++) {
    uint32_t round_ms = ttl / 10 > 0 ? ttl / 10 : 1;
    int64_t left_us = ((int64_t)ttl - round_ms) * US_PER_MS - drift_us(c, ttl);
    if (left_us >= US_PER_MS) {
      return ttl;
    }
  }
  return 1000;
}

bool hrl_lock_held_at(const hrl_lock *lk, int64_t now_us) {
  return lk->held && lk->valid_until_us > now_us;
}
