/*
 * A waiting acquire: what a blocking acquire does once its first attempt
 * (SET NX PX) was refused by a quorum, so that a release wakes it and the
 * lock changes hands in arrival order (docs/DESIGN.md, sections 2 to 4).
 *
 *   start   -> TRY round: the queue script, mode t, to all N      -> TRYING
 *              (claims a hand-off made for our token, SETs a free key when
 *              we are the first live waiter, else (re)enqueues us and
 *              answers the holder's PTTL)
 *   TRYING  -> ok >= quorum and validity > 0: held, DONE
 *              fewer than a quorum answered, a master refused us for
 *              good (auth, server, protocol) or no wait left: LEAVE, then
 *              that error; only for want of connections: as refused (a
 *              restarted master is back before the deadline: we keep our
 *              place), and that error at the deadline unless a later try
 *              got a quorum of answers
 *              no wait left: LEAVE, then timeout
 *              a master may hold our token (won too few): ASIDE round
 *              (mode a: passes it on to the next waiter, keeps us queued)
 *                                                                 -> ASIDE
 *              else                                               -> WAITING
 *   ASIDE   -> no wait left: LEAVE, then timeout; else            -> WAITING
 *   WAITING -> HRL_STEP_WAIT, then, once a quorum of masters handed the
 *              lock to us (hrl_proto_notified), or one did and `timeout`
 *              (the per-master deadline) passed without the others: held
 *              at once (DONE, no round) when its first try dates those
 *              hand-offs (take_handed), else TRY again; also TRY when
 *              a subscriber came up (hrl_proto_wake), or the
 *              holder's TTL ran out on a quorum (the PTTLs of the try), or
 *              retry_delay +/- jitter passed: the cap for a hand-off whose
 *              message was lost or a holder that publishes nothing.
 *              No wait left, or cancelled: LEAVE
 *   LEAVE   -> the release round (mode r: drops our entry, passes on a
 *              hand-off made for us)                              -> LEAVING
 *   LEAVING -> DONE, with the result decided before the round.
 *
 * The token stays the same from the first attempt to the last try: the
 * queue entries and hand-offs are made for it. So does the arrival (wall
 * clock when it first queues), the score of our entry on every master,
 * which orders the queue the same way everywhere.
 */
#include <string.h>
#include <unistd.h>

#include "detail.h"
#include "mutant.h"
#include "random.h"
#include "state.h"

#define US_PER_MS 1000
/* The shortest lease of a queue entry: room for a waiter's gap between
 * tries on a loaded machine, whatever the options say. */
#define LEASE_MIN_MS 2000

/* A live waiter tries again within retry_delay + jitter (the cap), plus a
 * notification's gather (timeout) and its try round (timeout). */
static int64_t gap_ms(const hrl_options *o) {
  return (int64_t)o->retry_delay_ms + o->retry_jitter_ms +
         2 * (int64_t)o->timeout_ms;
}

uint32_t hrl_lease_ms(const hrl_options *o) {
  /* Three such gaps before an entry lapses: a try lost now and then does
   * not drop a live waiter from the queue. */
  int64_t lease = 3 * gap_ms(o);
  if (lease < LEASE_MIN_MS) {
    lease = LEASE_MIN_MS;
  }
  return lease > HRL_TTL_MAX_MS ? HRL_TTL_MAX_MS : (uint32_t)lease;
}

uint32_t hrl_window_ms(const hrl_options *o) {
  /* One gap: a live waiter claims a hand-off made for it within that even
   * when the message is lost. Not the lease: a waiter that died, or gave
   * up while a master was unreachable (so its entry stayed there), blocks
   * the lock for this long each time a release reaches it. A waiter whose
   * hand-off lapsed keeps its arrival, so its next try puts it first in
   * line again. */
  int64_t window = gap_ms(o);
  return window > HRL_TTL_MAX_MS ? HRL_TTL_MAX_MS : (uint32_t)window;
}

void hrl_config_set_channel(hrl_config *cfg, const char *id) {
  size_t prefix_len = cfg->opts.key_prefix_len;
  size_t infix_len = sizeof HRL_CHANNEL_INFIX - 1;
  memcpy(cfg->channel, cfg->prefix, prefix_len);
  memcpy(cfg->channel + prefix_len, HRL_CHANNEL_INFIX, infix_len);
  memcpy(cfg->channel + prefix_len + infix_len, id, HRL_TOKEN_LEN);
  cfg->channel_len = prefix_len + infix_len + HRL_TOKEN_LEN;
  cfg->channel[cfg->channel_len] = '\0';
  cfg->channel_pid = getpid();
}

hrl_status hrl_config_make_channel(hrl_config *cfg) {
  char id[HRL_TOKEN_LEN + 1];
  if (hrl_token_new(cfg, id) != HRL_OK) {
    return HRL_ESYSTEM;
  }
  hrl_config_set_channel(cfg, id);
  return HRL_OK;
}

const char *hrl_config_channel(hrl_config *cfg, size_t *len) {
  /* A forked child hears its own hand-offs, not its parent's (the fork
   * hooks make it anew too; this covers a child forked without them). */
  if (cfg->channel_pid != getpid() && hrl_config_make_channel(cfg) != HRL_OK) {
    *len = 0;
    return NULL;
  }
  *len = cfg->channel_len;
  return cfg->channel;
}

/* Leaves the queue (drops our entry, passes on a hand-off made for us),
 * then ends with status. */
static hrl_step leave(hrl_lock *lk, hrl_status status, int64_t now_us,
                      hrl_step_info *info) {
  lk->op.leave_status = status;
  lk->op.phase = HRL_PHASE_LEAVING;
  return hrl_round_step(lk, HRL_ROUND_RELEASE, lk->cfg->opts.timeout_ms, now_us,
                        info);
}

static uint64_t key_hash(const hrl_lock *lk) {
  uint64_t h = 14695981039346656037ULL; /* FNV-1a */
  for (size_t i = 0; i < lk->key_len; i++) {
    h = (h ^ (unsigned char)lk->key[i]) * 1099511628211ULL;
  }
  return h != 0 ? h : 1; /* 0 marks a free slot */
}

/* After the leave round: a master it did not reach (or whose answer we
 * cannot read) may keep our entry for the lease. Into a free slot, else
 * the one that lapses first. */
static void remember_entry(hrl_lock *lk, hrl_tally t, int64_t now_us) {
  hrl_config *c = lk->cfg;
  lk->op.rejoined = false; /* decided here */
  if (t.ok + t.refused == c->n || lk->op.token_in_flight) {
    /* Left everywhere; or a command of this token may still run (this
     * leave itself, unanswered): a later acquire holding that token would
     * have its key deleted or passed on by it. The entry then lapses with
     * its lease (or the late leave drops it), as a vanished waiter's does. */
    return;
  }
  /* The last try refreshed the entry's lease; the leave began after it. */
  hrl_wait_keep(lk, now_us + (int64_t)c->lease_ms * US_PER_MS);
}

void hrl_wait_keep(hrl_lock *lk, int64_t until_us) {
  hrl_config *c = lk->cfg;
  hrl_rejoin *slot = &c->rejoin[0];
  for (size_t i = 0; i < HRL_REJOIN_SLOTS; i++) {
    hrl_rejoin *r = &c->rejoin[i];
    if (r->key_hash == 0) {
      slot = r;
      break;
    }
    slot = r->until_us < slot->until_us ? r : slot;
  }
  c->rejoins += slot->key_hash == 0;
  slot->key_hash = key_hash(lk);
  memcpy(slot->token, lk->op.token, sizeof slot->token);
  slot->arrival_us = lk->op.arrival_us;
  slot->until_us = until_us;
  slot->pid = getpid();
}

void hrl_wait_rejoin(hrl_lock *lk, int64_t now_us) {
  hrl_op *op = &lk->op;
  hrl_config *c = lk->cfg;
  op->token[0] = '\0';
  op->arrival_us = 0;
  op->rejoined = false;
  op->token_in_flight = false; /* a fresh token, or one saved clean */
  op->queued_us = 0;
  op->clean = c->n < 64 ? ((uint64_t)1 << c->n) - 1 : ~(uint64_t)0;
  if (c->rejoins == 0) {
    return; /* the common case: no getpid() on every acquire */
  }
  uint64_t h = key_hash(lk);
  pid_t me = getpid();
  for (size_t i = 0; i < HRL_REJOIN_SLOTS; i++) {
    hrl_rejoin *r = &c->rejoin[i];
    if (r->key_hash == 0) {
      continue;
    }
    bool lapsed = r->until_us <= now_us || r->pid != me;
    if (lapsed || r->key_hash == h) {
      if (!lapsed) {
        /* Taken, so two acquires never carry one token. Its old place
         * too: that entry may still be there, until its lease ends. So may
         * hand-offs made for it, and rounds of the acquire that left it:
         * no hand-off to it is taken without a claim. */
        memcpy(op->token, r->token, sizeof op->token);
        op->arrival_us = r->arrival_us;
        op->rejoined = true;
        op->rejoin_until_us = r->until_us;
        op->clean = 0;
      }
      r->key_hash = 0;
      c->rejoins--;
      if (!lapsed) {
        return;
      }
    }
  }
}

static hrl_step start_try(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  size_t len;
  if (hrl_config_channel(lk->cfg, &len) == NULL) {
    hrl_detailf(lk->detail, sizeof lk->detail,
                "the OS random generator failed");
    return leave(lk, HRL_ESYSTEM, now_us, info);
  }
  if (op->queued_us == 0) {
    op->queued_us = now_us; /* our token can be handed nothing before */
  }
  op->attempts++;
  op->notified = 0;
  op->notified_at_us = 0;
  op->woken = false;
  op->phase = HRL_PHASE_TRYING;
  /* A fenced lock's try reads the counter behind it (INCR): a try that
   * wins is fenced as the first attempt would have been (redlock.c). */
  return hrl_round_step(
      lk, hrl_fence_pipelined(lk) ? HRL_ROUND_FENCED_TRY : HRL_ROUND_TRY,
      hrl_ttl_bound_timeout(lk->cfg, op->ttl_ms), now_us, info);
}

hrl_step hrl_wait_start(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  /* Its place in every master's queue: read here, not at begin, so an
   * acquire that never waits costs no clock read for it. */
  if (lk->op.arrival_us == 0) {
    lk->op.arrival_us = hrl_wall_us();
  }
  lk->op.waiting = true;
  lk->op.unanswered = HRL_OK;
  lk->op.held = 0;
  lk->op.no_ttl = 0;
  return start_try(lk, now_us, info);
}

hrl_step hrl_wait_unanswered(hrl_lock *lk, hrl_tally t, bool hold,
                             int64_t now_us, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  if (op->arrival_us == 0) {
    op->arrival_us = hrl_wall_us();
  }
  op->waiting = true;
  op->unanswered = HRL_OK;
  op->held = 0;
  op->no_ttl = 0;
  op->notified = 0;
  op->notified_at_us = 0;
  op->woken = false;
  return hrl_wait_not_won(lk, t, hold, now_us, info);
}

/* retry_delay +/- retry_jitter, in microseconds. */
static int64_t cap_us(const hrl_config *c) {
  uint32_t jitter = c->opts.retry_jitter_ms;
  int64_t ms =
      (int64_t)c->opts.retry_delay_ms - jitter +
      hrl_random_upto(c, jitter <= UINT32_MAX / 2 ? 2 * jitter : UINT32_MAX);
  return (ms > 0 ? ms : 0) * US_PER_MS;
}

/* When to try again without a hand-off: once the holder's keys expired on
 * a quorum (the quorum-th smallest PTTL of the try; a master that said OK
 * counts as free, one that did not answer as never), or after the cap. A
 * holder set its keys in one round, so they expire within about a round
 * of each other: waiting for the last of them within a per-master timeout
 * of the quorum-th costs milliseconds and gets the lock on every master
 * (more than a bare quorum survives masters failing during the hold). */
static void schedule_retry(hrl_lock *lk, int64_t now_us) {
  const hrl_config *c = lk->cfg;
  const hrl_op *op = &lk->op;
  int64_t free_in[HRL_MASTERS_MAX] = {0};
  for (size_t i = 0; i < c->n; i++) {
    const hrl_node *node = &op->nodes[i];
    int64_t v = INT64_MAX;
    if (node->result == HRL_NODE_OK) {
      v = 0;
    } else if (node->result == HRL_NODE_REFUSED && node->pttl >= 0) {
      v = node->pttl;
    }
    size_t j = i; /* insertion sort: N is small */
    for (; j > 0 && free_in[j - 1] > v; j--) {
      free_in[j] = free_in[j - 1];
    }
    free_in[j] = v;
  }
  int64_t q = free_in[c->quorum - 1];
  for (size_t k = c->quorum; q != INT64_MAX && k < c->n; k++) {
    if (free_in[k] <= q + (int64_t)c->opts.timeout_ms) {
      q = free_in[k];
    }
  }
  int64_t retry_at = now_us + cap_us(c);
  if (q != INT64_MAX) {
    /* PTTLs were read during the round: the keys expire no earlier than
     * its start plus them (and a millisecond of rounding). */
    int64_t expiry = op->round_start_us + (q + 1) * US_PER_MS;
    retry_at = expiry < retry_at ? expiry : retry_at;
  }
  lk->op.retry_at_us = retry_at;
}

/* Which masters the try found held by someone else (op->held), and which
 * of them hold a key that never expires (op->no_ttl: no TTL, or not a
 * string at all), which the detail names: if the wait times out, no wait
 * would have outlasted those, only what wrote them can free them (a plain
 * SET over the lock's name, or a holder that took it without a TTL). */
static void note_holders(hrl_lock *lk) {
  const hrl_config *c = lk->cfg;
  hrl_op *op = &lk->op;
  op->held = 0;
  op->no_ttl = 0;
  lk->detail[0] = '\0';
  for (size_t i = 0; i < c->n; i++) {
    const hrl_node *node = &op->nodes[i];
    if (node->result != HRL_NODE_REFUSED) {
      continue;
    }
    bool never =
        node->pttl == HRL_PTTL_NONE || strncmp(node->msg, "WRONGTYPE", 9) == 0;
    if (node->pttl >= 0 || never) {
      op->held |= (uint64_t)1 << i;
    }
    if (never) {
      op->no_ttl |= (uint64_t)1 << i;
      hrl_detail_append(
          lk->detail, sizeof lk->detail, "%s%s: %s",
          lk->detail[0] != '\0' ? "; " : "", c->masters[i].ep.label,
          node->pttl == HRL_PTTL_NONE ? "the key has no TTL" : node->msg);
    }
  }
  if (op->no_ttl != 0) {
    hrl_detail_append(lk->detail, sizeof lk->detail,
                      " (it never expires: only what wrote it can free it)");
  }
}

/* Whether a master may hold our token after the try: it said OK (claimed
 * or set), or we cannot tell (no answer, nonsense; a fenced try's error may
 * be its INCR's, after a try that took). */
static bool may_hold(const hrl_lock *lk) {
  bool fenced = lk->op.round_kind == HRL_ROUND_FENCED_TRY;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    hrl_node_result r = lk->op.nodes[i].result;
    if (r == HRL_NODE_OK || r == HRL_NODE_UNREACHABLE ||
        r == HRL_NODE_PROTOCOL || (fenced && r != HRL_NODE_REFUSED) ||
        (lk->op.nodes[i].took && !HRL_MUTANT(UNACKED_UNTAKEN))) {
      return true;
    }
  }
  return false;
}

static hrl_step wait_or_try(hrl_lock *lk, int64_t now_us, hrl_step_info *info);

/* After a try: the masters where it was not a plain refusal leave
 * op->clean for the rest of the acquire. An OK took a key holding our
 * token (a hand-off whose message may come yet, stale); no answer, or an
 * error, leaves the script's run there unknown (it may run late, after a
 * hand-off); a plain try (SET NX, a migrating slot) queued nothing. */
static void note_refusals(hrl_lock *lk) {
  hrl_op *op = &lk->op;
  for (size_t i = 0; i < lk->cfg->n; i++) {
    const hrl_node *node = &op->nodes[i];
    bool refused = node->result == HRL_NODE_REFUSED &&
                   node->pttl >= HRL_PTTL_NONE && !node->plain &&
                   !node->migrating && !node->took;
    if (!refused) {
      op->clean &= ~((uint64_t)1 << i);
    }
  }
}

static hrl_step judge_try(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  hrl_hold_settle(lk); /* a semaphore's: one permit */
  hrl_tally t = hrl_round_tally(lk);
  note_refusals(lk);
  hrl_round_record(lk, t);
  hrl_step step;
  if (hrl_attempt_granted(lk, t, now_us, info, &step)) {
    return step; /* held, or a fenced try's fence round */
  }
  return hrl_wait_not_won(lk, t, may_hold(lk), now_us, info);
}

/* Won too few: keeping them would let waiters that each hold a few masters
 * wait for each other forever. */
static hrl_step step_aside(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  if (lk->op.queued_us == 0) {
    lk->op.queued_us = now_us; /* it queues us too */
  }
  /* It passes on a key holding our token, whose message may come later:
   * no master's hand-off is taken without a claim after it. */
  lk->op.clean = 0;
  lk->op.phase = HRL_PHASE_ASIDE;
  return hrl_round_step(lk, HRL_ROUND_ASIDE, lk->cfg->opts.timeout_ms, now_us,
                        info);
}

/* Whether a TLS failure (the drivers' "TLS: ..." messages) will last: a
 * certificate refused, a CA file missing, a handshake the server refuses.
 * Not a server that closed the connection (it may be restarting), nor a
 * handshake that timed out ("connect timeout ... (TLS handshake)"). */
static bool tls_refusal(const hrl_node *node) {
  static const char closed[] = "TLS: server closed the connection";
  return node->result == HRL_NODE_UNREACHABLE &&
         strncmp(node->msg, "TLS: ", 5) == 0 &&
         strncmp(node->msg, closed, sizeof closed - 1) != 0;
}

/* Whether a master's failure in the try will last: a refused AUTH, a
 * permission refused, a protocol error, a refused TLS handshake, a server
 * error other than those a server gives while it starts or fails over
 * (LOADING, BUSY, MASTERDOWN, CLUSTERDOWN), its replicas lag
 * (sync_replicas), it is kept out since its restart (restart_guard:
 * "started 3 s ago ...") or that a cluster slot's migration caused
 * (round.c: migrating). */
bool hrl_wait_lasting_failure(const hrl_lock *lk) {
  static const char *const passing[] = {"LOADING",     "BUSY",    "MASTERDOWN",
                                        "CLUSTERDOWN", "started", "restarted"};
  for (size_t i = 0; i < lk->cfg->n; i++) {
    const hrl_node *node = &lk->op.nodes[i];
    if (node->result == HRL_NODE_AUTH || node->result == HRL_NODE_DENIED ||
        node->result == HRL_NODE_PROTOCOL || tls_refusal(node)) {
      return true;
    }
    if (node->result != HRL_NODE_SERVER || node->unacked || node->migrating) {
      continue;
    }
    bool passes = false;
    for (size_t k = 0; k < sizeof passing / sizeof passing[0]; k++) {
      size_t len = strlen(passing[k]);
      passes |= strncmp(node->msg, passing[k], len) == 0 &&
                (node->msg[len] == ' ' || node->msg[len] == '\0');
    }
    if (!passes) {
      return true;
    }
  }
  return false;
}

hrl_step hrl_wait_not_won(hrl_lock *lk, hrl_tally t, bool hold, int64_t now_us,
                          hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  if (c->same_server[0] != '\0') {
    return leave(lk, HRL_EINVAL, now_us, info); /* hrl_op_finish says why */
  }
  if (t.ok + t.refused < c->quorum) {
    memcpy(hrl_op_decided(lk), op->nodes, c->n * sizeof *op->nodes);
    hrl_status st = hrl_unreachable_status(lk, hrl_op_decided(lk),
                                           t.ok + t.refused, "answered");
    /* A refusal that lasts (authentication, a server's or a protocol
     * error) ends the wait now. Masters out of reach (restarting, paused,
     * a connection reset) may be back before the deadline: the waiter
     * keeps its entries and its place and tries again; leaving now could
     * not reach them either, and would leave dead entries behind that
     * every release is handed to. */
    if (hrl_wait_lasting_failure(lk) || now_us >= op->deadline_us) {
      return leave(lk, st, now_us, info);
    }
    op->unanswered = st;
  } else if (op->unanswered != HRL_OK) {
    op->unanswered = HRL_OK;
    lk->detail[0] = '\0';
  }
  if (t.ok + t.refused >= c->quorum) {
    note_holders(lk);
  }
  if (now_us >= op->deadline_us) {
    return leave(lk, HRL_ETIMEOUT, now_us, info);
  }
  schedule_retry(lk, now_us);
  if (op->unanswered != HRL_OK) {
    /* Not at once, whatever the cap or a hand-off: a refused connection
     * fails in microseconds, and trying it in a loop would only burn the
     * CPU (take_handed). */
    int64_t floor = now_us + (int64_t)c->opts.timeout_ms * US_PER_MS;
    op->retry_at_us = op->retry_at_us > floor ? op->retry_at_us : floor;
  }
  return hold && !HRL_MUTANT(NO_ASIDE) ? step_aside(lk, now_us, info)
                                       : wait_or_try(lk, now_us, info);
}

static int popcount64(uint64_t v) {
  int n = 0;
  for (; v != 0; v &= v - 1) {
    n++;
  }
  return n;
}

bool hrl_wait_handed_ttl(const hrl_lock *lk) {
  const hrl_config *c = lk->cfg;
  /* A mutex only: a read-write lock's or a semaphore's hold runs this
   * state machine with its own scripts (hold.c), whose hand-offs keep the
   * window and publish whoever listens. Not a fenced lock (its fence
   * comes from the try's INCR); not where a
   * grant must wait for replicas (the hand-off's SET did not), nor while
   * restarted masters are kept out (the try's connection is what sees a
   * restart); not on a cluster, whose nodes hear the hand-offs made on
   * other nodes (a subscriber is on one of them: PUBSUB NUMSUB there
   * would say none, and every hand-off would wait for the cap). */
  if (hrl_lock_is_hold(lk) || lk->fence_key != NULL || c->clusters > 0 ||
      c->opts.restart_guard_ms > 0 || lk->opts.sync_aof) {
    return false;
  }
  for (size_t i = 0; i < c->n; i++) {
    if (hrl_round_wait_replicas(lk, i) > 0) {
      return false;
    }
  }
  return true;
}

/* A quorum of masters handed the lock to us (or some did, and the others'
 * per-master deadline passed). Held at once, without a claim round, when
 * a quorum of them are clean (op->clean: every queue round we sent there
 * was answered with a refusal) and the validity counted from the first
 * queue round (op->queued_us) is no less than a claim round could leave
 * (ttl - its longest round - drift). Why that instant, not the last
 * refusal nor the message: docs/SAFETY.md, "Hand-off without a claim".
 * Otherwise the try claims them, as it always did. */
/* Waits until next (a hand-off or a wake-up may come first). */
static hrl_step park(hrl_lock *lk, int64_t next, int64_t now_us,
                     hrl_step_info *info) {
  int64_t ms = (next - now_us + US_PER_MS - 1) / US_PER_MS;
  lk->op.phase = HRL_PHASE_WAITING;
  info->wait_ms = ms > HRL_TTL_MAX_MS ? HRL_TTL_MAX_MS : (uint32_t)ms;
  return HRL_STEP_WAIT;
}

static hrl_step take_handed(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  uint64_t clean = op->notified & op->clean;
  int64_t since = op->queued_us;
  if (HRL_MUTANT(HANDOFF_AT_MESSAGE)) {
    since = now_us; /* as if the key were set as the message came */
  } else if (HRL_MUTANT(HANDOFF_AT_LAST_TRY)) {
    since = op->round_start_us; /* the last refusal's round */
  }
  int64_t longest = (int64_t)hrl_ttl_bound_timeout(c, op->ttl_ms) * US_PER_MS;
  if (hrl_wait_handed_ttl(lk) && c->same_server[0] == '\0' && since != 0 &&
      (size_t)popcount64(clean) >= c->quorum && now_us - since <= longest) {
    return hrl_grant_handed(lk, clean, since, info);
  }
  int64_t floor = op->round_start_us + (int64_t)c->opts.timeout_ms * US_PER_MS;
  if (op->unanswered != HRL_OK && now_us < floor) {
    /* The last try lacked answers for want of connections: a hand-off's
     * try too waits until a timeout after the last round (that try, or the
     * step aside behind it) began, as the timer does (hrl_wait_not_won).
     * Trying at each message could not reach that master either, and the
     * step aside behind each such try would pass the key on to the next
     * waiter, whose own message and step aside would pass it back: two
     * waiters of one client behind a connection that owes too many
     * replies kept it owing for good, every command but those steps aside
     * held back, the name free and nobody able to take it
     * (tests/sim/regress/aside-chain.txt). */
    return park(lk, floor < op->deadline_us ? floor : op->deadline_us, now_us,
                info);
  }
  return start_try(lk, now_us, info);
}

static hrl_step wait_or_try(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  const hrl_config *c = lk->cfg;
  if (now_us >= op->deadline_us) {
    return leave(lk, op->unanswered != HRL_OK ? op->unanswered : HRL_ETIMEOUT,
                 now_us, info);
  }
  size_t handed = (size_t)popcount64(op->notified);
  if (handed >= c->quorum) {
    return take_handed(lk, now_us, info);
  }
  if (op->woken || now_us >= op->retry_at_us) {
    return start_try(lk, now_us, info);
  }
  int64_t next =
      op->retry_at_us < op->deadline_us ? op->retry_at_us : op->deadline_us;
  /* A hand-off from a master the last try found held by someone else:
   * that holder let go there, and its release reaches the others at about
   * the same time. A hand-off only from masters that were not held then
   * (free, or ours) is another waiter passing on what it could not use (a
   * holder missing on some masters leaves them to the waiters): while
   * more than n - quorum masters are still held, it cannot make a quorum,
   * and trying would only win it, pass it on again and wake the next,
   * back and forth for the whole hold. Such a waiter stays parked until
   * the holder's expiry, the cap, or a hand-off that may win. */
  bool released = (op->notified & op->held) != 0;
  size_t still_held = (size_t)popcount64(op->held & ~op->notified);
  if (handed > 0 && (released || still_held <= c->n - c->quorum)) {
    /* The holder's release reaches every master at about the same time:
     * give the others their per-master deadline to say so too, rather
     * than try while they still hold it for the holder. */
    if (op->notified_at_us == 0) {
      op->notified_at_us = now_us;
    }
    int64_t gathered = op->notified_at_us + (int64_t)c->opts.timeout_ms * 1000;
    if (now_us >= gathered) {
      return take_handed(lk, now_us, info);
    }
    next = gathered < next ? gathered : next;
  }
  return park(lk, next, now_us, info);
}

hrl_step hrl_wait_step(hrl_lock *lk, int64_t now_us, hrl_step_info *info) {
  hrl_op *op = &lk->op;
  switch (op->phase) {
  case HRL_PHASE_TRYING:
    return judge_try(lk, now_us, info);
  case HRL_PHASE_ASIDE:
    hrl_round_tally(lk);
    return wait_or_try(lk, now_us, info);
  case HRL_PHASE_LEAVE:
    return leave(lk, op->leave_status, now_us, info);
  case HRL_PHASE_LEAVING:
    remember_entry(lk, hrl_round_tally(lk), now_us);
    return hrl_op_finish(lk, op->leave_status, info);
  case HRL_PHASE_WAITING:
  default:
    return wait_or_try(lk, now_us, info);
  }
}

void hrl_wait_cancel(hrl_lock *lk) {
  lk->op.leave_status = HRL_ECANCELLED;
  lk->op.phase = HRL_PHASE_LEAVE;
}

/* Whether lock's acquire is waiting: its hand-offs are worth hearing. */
static bool hearing(const hrl_lock *lk) {
  switch (lk->op.phase) {
  case HRL_PHASE_TRYING:
  case HRL_PHASE_ASIDE:
  case HRL_PHASE_WAITING:
    return true;
  default:
    return false;
  }
}

void hrl_proto_notified(hrl_lock *lk, size_t i) {
  if (hearing(lk) && i < lk->cfg->n) {
    lk->op.notified |= (uint64_t)1 << i;
  }
}

void hrl_proto_wake(hrl_lock *lk) {
  if (hearing(lk)) {
    lk->op.woken = true;
  }
}

const char *hrl_proto_waiter(const hrl_lock *lk) {
  const hrl_op *op = &lk->op;
  bool running = op->phase != HRL_PHASE_IDLE && op->phase != HRL_PHASE_DONE;
  return op->kind == HRL_OP_ACQUIRE && op->waiting && running ? op->token
                                                              : NULL;
}
