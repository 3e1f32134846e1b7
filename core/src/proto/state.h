/* The protocol's state: a client's configuration (its masters and options,
 * and which masters are late) and the lock object with the operation in
 * progress. No I/O here: drivers and the public API build on it. */
#ifndef HRL_PROTO_STATE_H
#define HRL_PROTO_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "hiredlock.h"
#include "hiredlock/proto.h"
#include "observe.h"
#include "resp.h"
#include "url.h"

/* A master's message in a round: "timeout after 50 ms", "READONLY ...". */
#define HRL_NODE_MSG_MAX 96
/* A server's run_id (INFO server): 40 hex characters. */
#define HRL_RUN_ID_LEN 40
/* "ASKING" as RESP, the bytes a lock's commands keep room for in front. */
#define HRL_ASKING "*1\r\n$6\r\nASKING\r\n"
#define HRL_ASKING_LEN (sizeof HRL_ASKING - 1)

struct hrl_cluster;
struct hrl_sentinel;

typedef struct hrl_master_cfg {
  hrl_endpoint ep;
  hrl_tls_settings tls; /* ep.tls: the URL's settings, else the client's */
  char *handshake;      /* AUTH / SELECT commands for a new connection, or NULL,
                           then INFO server when the client needs to know the
                           server (info_reply) */
  size_t handshake_len;
  int handshake_replies;
  /* Which handshake reply is INFO's (-1: none are), and the length of the
   * bytes before it: a subscriber connection sends only those. */
  int info_reply;
  size_t handshake_plain_len;
  /* The run_id the last INFO of this master's server said ("" before
   * one): two masters that are one server, and a restart, show there. */
  char run_id[HRL_RUN_ID_LEN + 1];
  /* Missed a round's deadline and has not answered a command since: once a
   * round's outcome is settled, it is not waited for (hrl_proto_skippable).
   * Shared by the client's locks, so guarded like the connections. */
  bool late;
  /* redis+cluster://: its nodes and slot map (cluster.h), shared and
   * guarded like `late`; NULL for any other master. */
  struct hrl_cluster *cluster;
  /* redis+sentinel://: its sentinels and primary (sentinel.h), likewise. */
  struct hrl_sentinel *sentinel;
} hrl_master_cfg;

/* The channel a client's waiters hear their hand-offs on: the key prefix,
 * "hiredlock:wake:" and 32 random hex characters (waiting.c). */
#define HRL_CHANNEL_INFIX "hiredlock:wake:"
#define HRL_CHANNEL_MAX                                                        \
  (HRL_PREFIX_MAX + sizeof HRL_CHANNEL_INFIX - 1 + HRL_TOKEN_LEN)

/* A managed lease's protocol state (lease.c). */
typedef struct hrl_renewal {
  struct hrl_lock *twin; /* renewals run on it: their op, detail and counts
                            stay out of the lock's own */
  uint64_t hold_gen;     /* changes whenever a hold starts or ends */
  uint64_t twin_gen;     /* the hold the twin's renewal was begun for */
  bool twin_capped;      /* that renewal asked only for what max_hold left */
  bool renew_final;      /* renewal stopped at max_hold: expiry is next */
  bool lost;             /* the hold was lost (never reported held) */
  int64_t hold_start_us; /* the acquire's round start: max_hold counts here */
  int64_t retry_at_us;   /* after a failed renewal, the next try; 0: none */
  /* Two extends of one hold out at once (the renewal's and the holder's)
   * race on every master, and the one a master runs last sets the key's
   * expiry there: each may count only on the least of both. twin_floor_us
   * is the least the renewal out leaves the keys (its start + TTL - drift);
   * holder_floor_us the same for a holder's extend begun while that
   * renewal was out (holder_raced). */
  int64_t twin_floor_us;
  int64_t holder_floor_us;
  bool holder_raced;
  /* The holder's extend out asked only for what max_hold left, not for
   * holder_asked_ms, which stays the lock's TTL (its next acquire's). */
  bool holder_capped;
  uint32_t holder_asked_ms;
  /* The TTL the hold's validity counts on since its last confirmed
   * extend, when an extend it still owes a reply cut it below what that
   * extend asked (hrl_extend_counted_ttl), else 0: the next renewal is
   * due a third of it later, as it would be for a lock of that TTL. */
  uint32_t counted_ttl_ms;
  /* Once lost, why; before, what "expired" would say (the last failed
   * renewal), "" when nothing failed. */
  char lost_reason[HRL_DETAIL_MAX];
} hrl_renewal;

/* A queue entry a waiting acquire could not leave (a master out of reach
 * at the end): alive there for the lease (until until_us). The client's
 * next acquire of that key carries the same token and arrival, so it
 * refreshes that entry (or claims a hand-off made for it) instead of
 * leaving a dead one behind that releases are handed to (waiting.c). */
#define HRL_REJOIN_SLOTS 8
typedef struct hrl_rejoin {
  uint64_t key_hash; /* of the lock key; 0: a free slot */
  char token[HRL_TOKEN_LEN + 1];
  int64_t arrival_us;
  int64_t until_us;
  pid_t pid; /* the process that queued it: a forked child never takes it */
} hrl_rejoin;

/* Where a client's random bytes come from (its tokens, its channel, the
 * jitter of its waits): fills all n bytes of buf, or fails with
 * HRL_ESYSTEM. The driver gives it when the client is made (the built-in
 * one: hrl_os_entropy, the kernel CSPRNG); the protocol reads no device
 * itself. ctx is the driver's (hrl_config.entropy_ctx). */
typedef hrl_status (*hrl_entropy_fn)(void *ctx, void *buf, size_t n);

/* What a client was made with: validated options and parsed masters. */
typedef struct hrl_config {
  hrl_options opts; /* key_prefix points into prefix below, the ssl_* paths
                       into ssl_paths */
  char *prefix;
  char
      *ssl_paths[4]; /* copies of ssl_ca_certs, _ca_path, _certfile, _keyfile */
  size_t n;
  size_t quorum;
  size_t clusters;     /* how many masters are Redis Clusters */
  size_t sentinels;    /* how many are Sentinel-managed primaries */
  uint32_t min_ttl_ms; /* the smallest TTL a round leaves validity in */
  /* How long a waiter's queue entry lives without a new try from it, and
   * how long a hand-off stays reserved for it (waiting.c). */
  uint32_t lease_ms;
  uint32_t window_ms;
  hrl_master_cfg *masters;
  hrl_entropy_fn entropy;
  void *entropy_ctx;
  /* Set once two masters turned out to be one server (the same run_id):
   * what every acquire and extend of the client then fails with. */
  char same_server[HRL_DETAIL_MAX];
  /* This process's channel, made on the first wait (and anew in a forked
   * child: channel_pid is the process it was made in). */
  char channel[HRL_CHANNEL_MAX + 1];
  size_t channel_len;
  pid_t channel_pid;
  /* Entries left behind; steps of one client never run at once (every
   * driver runs them under the client's mutex or on one thread). */
  hrl_rejoin rejoin[HRL_REJOIN_SLOTS];
  size_t rejoins;   /* slots in use */
  hrl_observer obs; /* counters, events, masters down (observe.h) */
} hrl_config;

/* hrl_node.pttl: a key without a TTL (Redis's PTTL -1), and no PTTL read
 * (not a try, an error, a migrating slot; Redis's -2 for a key gone). */
#define HRL_PTTL_NONE (-1)
#define HRL_PTTL_UNKNOWN (-2)

/* A master's state in the current round. */
typedef struct hrl_node {
  hrl_node_result result;
  hrl_round_kind kind; /* of the round its result is from (a message's) */
  bool eval_sent;      /* NOSCRIPT came back once: the full script was sent */
  bool sent;           /* the driver took the command */
  bool missed;         /* ... and it went unanswered: it may run there yet */
  /* A fenced acquire's (or try's) two replies: what its SET (try) said,
   * and the counter its INCR returned; resend: the try said NOSCRIPT, so
   * both go again in full once the INCR's reply is in; redirected: its
   * first reply was a redirect (a cluster's MOVED or ASK, a primary gone),
   * to act on once the INCR's reply has been read too. */
  uint8_t replies;
  bool resend;
  bool redirected;
  /* The queue script answered TRYAGAIN (a migrating cluster slot): a
   * release or step aside goes again as the plain release, a try as the
   * plain try (round.c); migrating: the slot's migration kept this master
   * from answering the round (its result says what it is, never a lasting
   * refusal: a waiter goes on waiting). */
  bool plain;
  bool migrating;
  hrl_node_result set;
  uint64_t counter;
  /* A refused try: the key's PTTL in ms, as the queue script read it:
   * HRL_PTTL_NONE when the key has no TTL (not a lock's key: every lock
   * key expires), HRL_PTTL_UNKNOWN when nothing was read. */
  int64_t pttl;
  /* sync_replicas: the write took (its first reply said OK), and the WAIT
   * behind it said too few replicas have it (took and unacked: the vote
   * does not count, and the master may hold our token). */
  bool took, unacked;
  /* A cluster or sentinel master: the node asked (hrl_proto_target),
   * redirects followed, sentinels asked, and whether the command goes
   * behind an ASKING (asking) whose OK is still to come (asking_ack). */
  bool asking, asking_ack;
  uint8_t redirects, asked;
  uint16_t target;
  /* A semaphore's attempt or try: the permit the master granted (hold.c). */
  uint32_t permit;
  /* Unlike the rest, kept from round to round for the whole hold (reset
   * when an acquire begins): the least TTL of an extend of the hold
   * (the holder's or a renewal's) sent here and never answered, 0 when
   * none. It may run here yet, after any later extend, on a connection
   * no order holds to: the key then expires no sooner than that later
   * extend's start + this TTL (redlock.c, judge_script). */
  uint32_t owed_px;
  char msg[HRL_NODE_MSG_MAX];
} hrl_node;

typedef enum hrl_phase {
  HRL_PHASE_IDLE,      /* no operation running */
  HRL_PHASE_ATTEMPT,   /* next step starts an acquire attempt */
  HRL_PHASE_ACQUIRING, /* an acquire round is out */
  HRL_PHASE_FENCING,   /* the fence round of a fenced attempt is out */
  HRL_PHASE_CLEANUP,   /* a failed attempt's release round is out */
  HRL_PHASE_SCRIPT,    /* next step sends the release / extend round */
  HRL_PHASE_SCRIPTING, /* a release / extend round is out */
  /* A waiting acquire (waiting.c): */
  HRL_PHASE_TRYING,  /* a try round is out */
  HRL_PHASE_ASIDE,   /* the round stepping aside after a failed try is out */
  HRL_PHASE_WAITING, /* between tries: for a hand-off or a timer */
  HRL_PHASE_LEAVE,   /* next step sends the round that leaves the queue */
  HRL_PHASE_LEAVING, /* ... which is out; the result is decided */
  /* An inspection (inspect.c): */
  HRL_PHASE_INSPECT,    /* next step sends the read-only script */
  HRL_PHASE_INSPECTING, /* ... which is out */
  HRL_PHASE_DONE
} hrl_phase;

/* One acquire, release or extend in progress (see redlock.c). */
typedef struct hrl_op {
  hrl_op_kind kind;
  hrl_round_kind round_kind; /* what the round out now sends */
  hrl_phase phase;
  hrl_status result;
  int64_t deadline_us;    /* acquire: no attempt starts after this */
  int64_t round_start_us; /* start of the acquire / script round */
  /* A fenced attempt's fence round: the validity its first round left
   * (until when the hold would be valid) and the fence it writes back. */
  int64_t attempt_until_us;
  /* When the attempt's first round started: a lease's hold counts from
   * there (max_hold), also after a fence round. */
  int64_t attempt_start_us;
  uint64_t fence;
  uint32_t ttl_ms; /* acquire: the lock's; extend: the new one */
  uint32_t attempts;
  /* A waiting acquire (waiting.c): */
  bool waiting;  /* it has (or may have) a queue entry */
  bool woken;    /* try again at once (a subscriber came up) */
  bool rejoined; /* an earlier acquire's entry (rejoin_until_us) */
  /* A command carrying this attempt's token went out and was never
   * answered (a missed deadline, a reply out of step; not a connection
   * reset, which loses what was queued): it may still run, on a
   * connection no later command of another lock object waits behind. Such a
   * token is never saved for a later acquire to take up (hrl_wait_keep's
   * callers): a late release, step aside or leave of it would end that
   * acquire's hold (tests/sim/regress/rejoin-late-release.txt). */
  bool token_in_flight;
  hrl_status leave_status; /* LEAVE, LEAVING: the result after the round */
  int64_t arrival_us;      /* wall clock at begin: its place in the queues */
  int64_t retry_at_us;     /* the next try without a hand-off (PTTL, cap) */
  uint64_t notified;       /* masters that handed it the lock since the try */
  int64_t notified_at_us;  /* when the first of them was seen */
  /* The last try got too few answers, only for want of connections: what
   * the acquire reports at its deadline unless a later try does better
   * (HRL_OK: nothing of the kind). */
  hrl_status unanswered;
  /* A semaphore's acquire: the permit its tries ask for (the one most
   * masters granted the last time; 0: any). */
  uint32_t hint;
  /* rejoined (above): its token and arrival are those of an entry an
   * earlier acquire left behind (hrl_wait_rejoin), not yet known to be
   * gone; that entry lives until rejoin_until_us at most (its lease from
   * the leave that missed a master): an acquire that does not reach the
   * queue puts it back with that time, never a later one. */
  int64_t rejoin_until_us;
  /* Masters whose last try found the key held by someone else (refused
   * with its PTTL, or a key without one): while more than n - quorum of
   * them still hold it (and did not hand it to us since), a hand-off from
   * a few masters cannot win, and the waiter stays parked until the
   * retry time (the holder's expiry, or the cap). */
  uint64_t held;
  /* Masters whose last try found a key that never expires (no TTL, or not
   * a string: WRONGTYPE): said at the deadline, since only its writer can
   * free it. */
  uint64_t no_ttl;
  /* A hand-off taken without a claim (waiting.c, docs/SAFETY.md): when
   * the acquire's first queue round (a try or a step aside) started, 0
   * before one, and the masters where every queue round it sent so far was
   * answered, and refused (the key was not its token): a hand-off heard of
   * from one of those was made after queued_us and is still ours. */
  int64_t queued_us;
  uint64_t clean;
  char token[HRL_TOKEN_LEN + 1]; /* the token this round carries */
  /* command_cache.c: the kinds of command this lock formatted once (the
   * second time, it keeps their bytes); in the padding after token. */
  uint8_t cmd_seen;
  hrl_counts counts;
  /* 2n entries: the round out now, then (hrl_op_decided) the attempt
   * being judged (its cleanup round is out), or the first round of a
   * fenced attempt while its fence round is out. */
  hrl_node *nodes;
  char *cmd;      /* EVALSHA or SET form */
  char *cmd_eval; /* EVAL form, after NOSCRIPT; allocated on first use */
  /* After a cluster's TRYAGAIN (round.c): the plain release, or in a
   * try round the plain try; in the same allocation as cmd_eval. */
  char *cmd_plain;
  /* Their lengths (a few kB at most: resp.c's capacities), 32 bits like
   * the key's (hrl_lock). */
  uint32_t cmd_len;
  uint32_t cmd_eval_len;
  uint32_t cmd_plain_len;
  /* sync_replicas: the WAIT (or WAITAOF) written behind cmd and cmd_eval
   * (wait_len bytes, 0: none), for the masters that wait for wait_replicas
   * replicas; one whose URL asks for another count gets its bytes in
   * spare->own[i] (n buffers, allocated on first use). wait_ms: WAIT's
   * timeout, within the round's per-master deadline. */
  uint32_t wait_len;
  uint32_t wait_replicas;
  uint32_t wait_ms;
  /* Buffers most locks never need, allocated on first use: those per-master
   * WAITs, and the commands a lock reuses (command_cache.h). One pointer
   * for both: the lock object must stay within glibc's per-thread cache
   * (lock_state.c). */
  struct hrl_op_spare *spare;
} hrl_op;

struct hrl_lock {
  hrl_config *cfg;
  hrl_client *client; /* the owner, for the API layer; never read here */
  char *key;          /* prefix + name */
  char *queue;        /* the waiting queue's keys (sibling_key.c) */
  char *waiters;
  char *fence_key; /* a fenced lock's counter (fence_key.c), else NULL */
  /* Their lengths (a key is at most HRL_PREFIX_MAX + HRL_NAME_MAX bytes,
   * a sibling key about twice that): 16 bits (lock_state.c checks they
   * fit), so that the lock object stays within glibc's per-thread cache
   * (lock_state.c). */
  uint16_t key_len;
  uint16_t prefix_len;
  uint16_t queue_len;
  uint16_t waiters_len;
  uint16_t fence_key_len;
  uint16_t slot;         /* the key's cluster hash slot */
  uint32_t ttl_ms;       /* the TTL now (extend may change it) */
  hrl_lock_options opts; /* as made; opts.ttl_ms is the TTL it was made with */
  /* The fields from here to released are ordered so that no padding falls
   * between them (the size check in test_ops_proto). */
  bool held;
  /* A release that reached fewer than a quorum: the hold is over, but a
   * retry of the release may finish it; released has a bit for each master
   * that confirmed (deleted our key) in an earlier call. */
  bool release_pending;
  bool may_wait; /* hrl_round_may_wait, as made */
  char token[HRL_TOKEN_LEN + 1];
  char detail[HRL_DETAIL_MAX];
  uint32_t permit; /* a semaphore's hold: its permit (hold.c) */
  /* What it holds (hold.c): the mutex (HRL_MODE_LOCK, zero), a read, the
   * write, or a permit of a semaphore of `permits`; set once, when made. */
  hrl_lock_mode mode;
  uint32_t permits;
  uint64_t released;
  /* Masters that got that release but never answered: it may still run
   * there (a stopped master wakes up), so a "no key" from them later is
   * no news either. */
  uint64_t release_unsure;
  uint64_t granted; /* bit i: master i holds (held) our token, as far as we
                       know: its OK to the acquire or the last extend */
  /* Bit i: master i may hold a key with the token of the lock's acquire
   * (the one running, or the hold it got): it said OK to a SET or try of
   * that token, or got one and never answered. A release, step aside or
   * leave it answered clears it. Such a master must get those rounds even
   * where a driver holds commands back from a connection that owes too
   * many replies (hrl_round_must_reach): there they go behind the SET. */
  uint64_t token_at;
  int64_t valid_until_us;
  uint64_t fence; /* the fence of the hold (fenced locks), while held */
  hrl_op op;
  /* A managed lease's state (opts.auto_renew, see lease.c), NULL for any
   * other lock: most locks never need it, and the size of a lock object
   * matters to the bindings that make one per acquisition (lock_state.c). */
  struct hrl_renewal *renewal;
  struct hrl_lease *lease; /* the API layer's schedule entry; never read
                              here */
  hrl_lock_obs obs;        /* what observe.c counts of it */
  hrl_lock_extra *extra;   /* an owner label's, an inspection's state */
};

/* The attempt being judged: the n entries behind the round out now (one
 * allocation, lock_state.c), found from nodes rather than kept as a
 * pointer of its own, so that the lock object stays within glibc's
 * per-thread cache. */
static inline hrl_node *hrl_op_decided(const hrl_lock *lk) {
  return lk->op.nodes + lk->cfg->n;
}

/* config.c: parses the URLs and checks the options into cfg (zeroed by the
 * caller), whose random bytes come from entropy (with ctx); on failure cfg
 * holds nothing to free and detail says why. */
hrl_status hrl_config_init(hrl_config *cfg, const char *const *urls, size_t n,
                           const hrl_options *opts, hrl_entropy_fn entropy,
                           void *entropy_ctx, char *detail, size_t detail_size);
void hrl_config_clear(hrl_config *cfg);

/* config.c: hrl_proto_handshake() and hrl_proto_handshake_reply() on the
 * configuration (see hiredlock/proto.h). The reply to INFO (when the
 * handshake asks it) records the server's run_id, refuses a master that is
 * another master's server (cfg->same_server says which) or that started
 * less than restart_guard ago. */
const char *hrl_config_handshake(const hrl_config *cfg, size_t i, size_t *len,
                                 int *replies);
hrl_node_result hrl_config_handshake_reply(hrl_config *cfg, size_t i, int k,
                                           const hrl_reply *reply,
                                           char *message, size_t message_size);
/* server_info.c: the reply to a handshake's INFO server from master i's
 * server: HRL_NODE_OK, or why the master gives no vote (see there). */
hrl_node_result hrl_server_info(hrl_config *cfg, size_t i,
                                const hrl_reply *reply, char *message,
                                size_t message_size);
/* config.c: the handshake of a subscriber connection: AUTH and SELECT
 * only (no INFO: what it says is the command connections' business). */
const char *hrl_config_handshake_plain(const hrl_config *cfg, size_t i,
                                       size_t *len, int *replies);

/* options.c: checks every field of opts against the option table. */
hrl_status hrl_options_check(const hrl_options *opts, char *detail,
                             size_t detail_size);

/* options.c: checks a lock's settings against the option table (all but
 * the TTL, whose bounds are the client's: hrl_lock_create checks it). */
hrl_status hrl_lock_options_check(const hrl_lock_options *lock_opts,
                                  char *detail, size_t detail_size);

/* lock_state.c: a lock object on cfg with settings lo, owned by client
 * (no I/O). */
hrl_status hrl_lock_create(hrl_config *cfg, hrl_client *client,
                           const void *name, size_t name_len,
                           const hrl_lock_options *lo, hrl_lock **out,
                           char *detail, size_t detail_size);
void hrl_lock_destroy(hrl_lock *lock);

/* redlock.c: the smallest TTL with room for a round (see there). */
uint32_t hrl_min_ttl_ms(const hrl_config *cfg);

/* clock.c: the wall clock (CLOCK_REALTIME) in microseconds: a waiter's
 * arrival, the one clock every host has in common. */
int64_t hrl_wall_us(void);

/* redlock.c: whether lock is held with validity left at now_us. */
bool hrl_lock_held_at(const hrl_lock *lock, int64_t now_us);

/* Whether a round of lock's operation is out and i is one of its masters. */
static inline bool hrl_proto_in_round(const hrl_lock *lk, size_t i) {
  hrl_phase ph = lk->op.phase;
  return i < lk->cfg->n &&
         (ph == HRL_PHASE_ACQUIRING || ph == HRL_PHASE_FENCING ||
          ph == HRL_PHASE_CLEANUP || ph == HRL_PHASE_SCRIPTING ||
          ph == HRL_PHASE_TRYING || ph == HRL_PHASE_ASIDE ||
          ph == HRL_PHASE_LEAVING || ph == HRL_PHASE_INSPECTING);
}

/* Whether lock is a hold of a read-write lock or a semaphore (hold.c),
 * whose rounds send its scripts, not the mutex's. */
static inline bool hrl_lock_is_hold(const hrl_lock *lk) {
  return lk->mode != HRL_MODE_LOCK;
}

/* Whether lock's acquire and tries pipeline an INCR of its fence counter
 * behind their command (a fenced mutex; a hold's scripts count inside). */
static inline bool hrl_fence_pipelined(const hrl_lock *lk) {
  return lk->fence_key != NULL && !hrl_lock_is_hold(lk);
}

/* hold.c: what master i's reply to the round's command means
 * (hrl_reply_classify for a mutex; a hold's grant also sets the node's
 * permit and counter). */
hrl_node_result hrl_hold_classify(hrl_lock *lock, hrl_node *node,
                                  const hrl_reply *reply, bool *noscript);

/* hold.c: before a semaphore's attempt or try is judged: the permit most
 * masters granted is the one it holds, if any; a master that granted
 * another counts as refused, holding our token (took): it is cleaned up
 * with the rest. No-op for any other lock. */
void hrl_hold_settle(hrl_lock *lock);

/* hold.c: the votes of the round out now that count for one outcome: the
 * masters that said OK, or for a semaphore's those that granted the same
 * permit (the most granted): a round is decided (hrl_proto_settled) when
 * they make a quorum, or never can. */
size_t hrl_hold_votes(const hrl_lock *lock);

/* hold.c: whether a master of nodes (a round's) refused the lock because
 * its name is a lock of another kind (the scripts' HRLKIND error): the
 * lock's detail then says so, for HRL_EINVAL. */
bool hrl_kind_refused(hrl_lock *lock, const hrl_node *nodes);

/* hold.c: makes lock (just created, idle) a hold of that mode (checked:
 * hrl_lock_mode_check), its lease's twin too. */
void hrl_hold_set(hrl_lock *lock, hrl_lock_mode mode, uint32_t permits);
/* The protocol's own calls behind the public hrl_proto_* ones, which
 * seam.c makes of them (adding owner labels, inspections, counters and
 * events): redlock.c's begin and step, round.c's reply, fail and missed,
 * target.c's command bytes, lease.c's end of a renewal. */
hrl_status hrl_redlock_begin(hrl_lock *lock, hrl_op_kind op, int64_t arg_ms,
                             int64_t now_us);
hrl_step hrl_redlock_step(hrl_lock *lock, int64_t now_us, hrl_step_info *info);
hrl_node_result hrl_node_reply(hrl_lock *lock, size_t i,
                               const hrl_reply *reply);
hrl_node_result hrl_node_fail(hrl_lock *lock, size_t i, hrl_node_result why,
                              const char *message);
void hrl_node_missed(hrl_lock *lock, size_t i, const char *message);
const char *hrl_node_command(hrl_lock *lock, size_t i, size_t *len);
int hrl_node_command_replies(const hrl_lock *lock, size_t i);
const char *hrl_node_late_command(const hrl_lock *lock, size_t i, size_t *len);
hrl_status hrl_lease_renew_end(hrl_lock *lock, int64_t now_us);

/* redlock.c: the least an extend begun at start_us with ttl_ms leaves the
 * keys on a master that runs it, by the client's clock (start + TTL -
 * drift): what a quorum's validity counts from. */
int64_t hrl_validity_floor_us(const hrl_config *c, int64_t start_us,
                              uint32_t ttl_ms);

/* redlock.c: the TTL the validity of lock's extend round counts on, by
 * the masters that said OK and the extends they still owe a reply
 * (hrl_node.owed_px); 0 when fewer than a quorum said OK. */
uint32_t hrl_extend_counted_ttl(const hrl_lock *lock);

/* lease.c: the holder's extend of a lease begins at now_us asking for
 * ttl_ms (notes whether it races a renewal out), and was judged (its
 * validity then counts on no more than that renewal leaves). */
void hrl_lease_extend_begun(hrl_lock *lock, int64_t now_us, uint32_t ttl_ms);
void hrl_lease_extend_judged(hrl_lock *lock, bool confirmed);

/* lease.c: the TTL the holder's extend of a lease at now_us may ask for:
 * *ttl_ms, or what max_hold leaves of the hold when that is less (as a
 * renewal's). HRL_ELOST ("max_hold reached", in detail) when nothing is
 * left: the validity already reaches the cap. HRL_OK for any other lock. */
hrl_status hrl_lease_extend_cap(hrl_lock *lock, int64_t now_us,
                                uint32_t *ttl_ms);

/* redlock.c: ends an acquire that is sleeping between attempts. */
void hrl_proto_cancel(hrl_lock *lock);

/* lease.c: whether lock is a managed lease (auto_renew, with its twin). */
bool hrl_lease_is(const hrl_lock *lock);

/* lease.c: a lease whose validity ran out unrenewed is lost: marks it so.
 * Returns whether the lock is lost (now or before). */
bool hrl_lease_check_expiry(hrl_lock *lock, int64_t now_us);

/* lease.c: marks the hold lost for reason (not held from now on). */
void hrl_lease_mark_lost(hrl_lock *lock, const char *reason);

/* lease.c: why the hold was lost ("" when it was not, or not a lease). */
const char *hrl_lease_lost_reason(const hrl_lock *lock);

/* lease.c: the acquire whose round started at start_us got the lock. */
void hrl_lease_held_since(hrl_lock *lock, int64_t start_us);

/* lease.c: the state and twin of an auto_renew lock (lock_state.c). */
hrl_status hrl_lease_state_new(hrl_lock *lock, char *detail,
                               size_t detail_size);
void hrl_lease_state_free(hrl_lock *lock);

/* lease.c: a new hold (acquire) or its end (release) at the caller's
 * request: no renewal begun before may change it. starting: the hold
 * starts (its loss and renewal state are reset). */
void hrl_lease_new_hold(hrl_lock *lock, bool starting);

/* lease.c: hrl_lock_lost() on the protocol's state at now_us. */
hrl_status hrl_lease_lost_at(const hrl_lock *lock, int64_t now_us, char *reason,
                             size_t reason_size);

/* What a lease's accessors report. The API layer copies it under its
 * renewer's mutex whenever a call of the holder's or a renewal ends
 * (api/renewer.c), so that they may read it from any thread, even while
 * the holder's own call changes the lock. */
typedef struct hrl_lease_view {
  bool held;
  bool lost;
  int64_t valid_until_us;
  char reason[HRL_DETAIL_MAX]; /* why it was lost, or what expiry will say */
} hrl_lease_view;

/* lease.c: the view of lock now. */
void hrl_lease_view_of(const hrl_lock *lock, hrl_lease_view *out);

/* lease.c: held, and lost, as the view tells them at now_us. */
bool hrl_lease_view_held(const hrl_lease_view *view, int64_t now_us);
hrl_status hrl_lease_view_lost(const hrl_lease_view *view, int64_t now_us,
                               char *reason, size_t reason_size);

/* round.c: starts a round of that kind on every master, each with
 * timeout_ms to answer (the EVAL form of a release or extend at once for
 * masters known to be late). */
void hrl_round_start(hrl_lock *lock, hrl_round_kind kind, uint32_t timeout_ms,
                     int64_t now_us);

/* round.c: how many replicas master i's vote in this round waits for
 * (its URL's sync_replicas, else the lock's), and whether it waits at
 * all: the rounds whose writes make a grant (acquire, extend, a waiter's
 * try, the fence round), when sync_replicas or sync_aof asks. */
uint32_t hrl_round_wait_replicas(const hrl_lock *lock, size_t i);
bool hrl_round_waits(const hrl_lock *lock, size_t i);
/* round.c: whether any round of a lock made with lo on cfg's masters may
 * wait (its sync_aof, its sync_replicas or a master's URL's): its command
 * buffer then needs room for the WAIT (lock_state.c). */
bool hrl_round_may_wait(const hrl_config *cfg, const hrl_lock_options *lo);

/* round.c: the replies of master i's late command (hrl_proto_late_command:
 * the script alone, behind an ASKING after an ASK). */
int hrl_round_late_replies(const hrl_lock *lock, size_t i);

/* round.c: after a round, which masters may hold the token now
 * (lock->token_at), and whether a command of it may still run
 * (op.token_in_flight). */
void hrl_round_note_token(hrl_lock *lock);

/* round.c: whether the round's command must go to master i even on a
 * connection that owes too many replies: a release, step aside or leave,
 * and master i may hold our token (lock->token_at). */
bool hrl_round_must_reach(const hrl_lock *lock, size_t i);

/* round.c: the round's command is not sent to master i, whose connection
 * owes too many replies (a driver's cap): it counts as unreachable, with
 * that message, and nothing of the round can run there. */
void hrl_round_withhold(hrl_lock *lock, size_t i, const char *message);

/* round.c: whether the round out now belongs to an acquire attempt (its
 * SET, a waiter's try, or the fence round): a release may follow it on the
 * same connections, which must then stay open behind it. */
bool hrl_round_of_attempt(const hrl_lock *lock);

/* round.c: whether a round of that kind is a script whose late run still
 * matters (a late master gets it whole, as EVAL): a release or extend, a
 * waiter's try or step aside. */
bool hrl_round_runs_late(hrl_round_kind kind);

/* cluster.c: a cluster master's part of hrl_proto_reply, before the reply
 * is classified: HRL_NODE_REDIRECT (MOVED, ASK: follow it), a failure
 * (node->result set), HRL_NODE_MORE (ASKING's OK: read on) or, when the
 * reply is none of these, HRL_NODE_OK (classify it as usual). */
hrl_node_result hrl_cluster_reply(hrl_lock *lock, size_t i,
                                  const hrl_reply *reply);

/* cluster.c: the node a cluster master's command goes to first in a new
 * round. */
void hrl_cluster_round(hrl_lock *lock, size_t i);

/* sentinel.c: as the three above, for a Sentinel-managed primary: the
 * first target of a round (the primary, or a sentinel to ask), a reply
 * (the sentinel's answer, or READONLY from a deposed primary), a failure
 * (another sentinel; the primary asked for again). */
void hrl_sentinel_round(hrl_lock *lock, size_t i);
hrl_node_result hrl_sentinel_reply(hrl_lock *lock, size_t i,
                                   const hrl_reply *reply);
hrl_node_result hrl_sentinel_failed(hrl_lock *lock, size_t i);

/* cluster.c: a cluster master failed at its node (its node's result and
 * message set): the message names the node, and an unreachable node's
 * slots are forgotten. Returns HRL_NODE_REDIRECT when another node is to
 * be asked instead (the command had not gone out: nothing can have run),
 * else the node's result. */
hrl_node_result hrl_cluster_failed(hrl_lock *lock, size_t i);

/* redlock.c, for waiting.c: the round's machinery and verdicts. */
typedef struct hrl_tally {
  uint32_t ok, refused, unreachable, failed;
} hrl_tally;
/* hrl_round_start, and the ROUND step with that per-master timeout. */
hrl_step hrl_round_step(hrl_lock *lock, hrl_round_kind kind,
                        uint32_t timeout_ms, int64_t now_us,
                        hrl_step_info *info);
/* Counts the round's results (a master never reported on: unreachable). */
hrl_tally hrl_round_tally(hrl_lock *lock);
/* Records a judged round's counts as the operation's (hrl_lock_counts). */
void hrl_round_record(hrl_lock *lock, hrl_tally t);
hrl_step hrl_op_finish(hrl_lock *lock, hrl_status status, hrl_step_info *info);
/* An attempt round (SET, fenced acquire, try) that a quorum granted with
 * validity left: the lock is held (or, fenced, the fence round goes out
 * when needed); *step is the next step. False, with nothing done, when the
 * round did not win. */
bool hrl_attempt_granted(hrl_lock *lock, hrl_tally t, int64_t now_us,
                         hrl_step_info *info, hrl_step *step);
/* The detail and status of too few usable answers (nodes: the round's). */
hrl_status hrl_unreachable_status(hrl_lock *lock, const hrl_node *nodes,
                                  size_t count, const char *what);
uint32_t hrl_ttl_bound_timeout(const hrl_config *cfg, uint32_t ttl_ms);

/* waiting.c: a waiting acquire's steps after its first attempt was refused
 * by a quorum (start), and in the phases of its own. */
hrl_step hrl_wait_start(hrl_lock *lock, int64_t now_us, hrl_step_info *info);
hrl_step hrl_wait_step(hrl_lock *lock, int64_t now_us, hrl_step_info *info);
/* waiting.c: a waiter's attempt that did not win (a try, or the fence
 * round after it), counted in t: leave the queue (too few answered, no
 * wait left), else wait for the next try, stepping aside first when a
 * master may hold our token (may_hold). */
hrl_step hrl_wait_not_won(hrl_lock *lock, hrl_tally t, bool may_hold,
                          int64_t now_us, hrl_step_info *info);
/* waiting.c: hrl_proto_cancel between tries: leave the queue, then end. */
void hrl_wait_cancel(hrl_lock *lock);
/* waiting.c: the client's channel (made anew in a new process), or NULL
 * when the OS random generator failed. */
const char *hrl_config_channel(hrl_config *cfg, size_t *len);
/* waiting.c: into lock->op, the token and arrival of a queue entry an
 * earlier acquire of the key on this client left behind, when there is one
 * (it is taken: no other acquire gets it); else an empty token. */
void hrl_wait_rejoin(hrl_lock *lock, int64_t now_us);
/* waiting.c: keeps lock->op's token and arrival for the next acquire of
 * the key on this client, until until_us: its entry may be left on some
 * master until then (its lease). */
void hrl_wait_keep(hrl_lock *lock, int64_t until_us);
/* waiting.c: an acquire's first attempt got too few answers, only for want
 * of connections (none refused it for good), with time left to wait: it
 * waits in line as a waiter whose try got too few answers does (tries
 * again after the cap, at least a per-master timeout later, and reports
 * that error at its deadline unless a later try got a quorum of
 * answers), stepping aside first when a master may hold its token. */
hrl_step hrl_wait_unanswered(hrl_lock *lock, hrl_tally t, bool may_hold,
                             int64_t now_us, hrl_step_info *info);
/* waiting.c: whether lock's waiter takes a hand-off it hears of without a
 * claim round (the queue script's "handed" argument; see there). */
bool hrl_wait_handed_ttl(const hrl_lock *lock);
/* redlock.c: a waiter holds the lock without a round: masters (a quorum)
 * handed it, each no earlier than start_us (waiting.c). */
hrl_step hrl_grant_handed(hrl_lock *lock, uint64_t masters, int64_t start_us,
                          hrl_step_info *info);
/* waiting.c: whether a master's failure in the round will last (see
 * there): a refused AUTH, a protocol error, a server error other than
 * those of a server starting or failing over. */
bool hrl_wait_lasting_failure(const hrl_lock *lock);

/* waiting.c: the lease of a client's waiters' queue entries, and the
 * window of a hand-off made for one of them, from its options. */
uint32_t hrl_lease_ms(const hrl_options *opts);
uint32_t hrl_window_ms(const hrl_options *opts);
/* waiting.c: makes this process's channel (HRL_ESYSTEM: no randomness);
 * sets it from the HRL_TOKEN_LEN characters of id (another client's, when
 * two share one subscriber). */
hrl_status hrl_config_make_channel(hrl_config *cfg);
void hrl_config_set_channel(hrl_config *cfg, const char *id);

/* subscriber.c: hrl_subscriber_new() on the configuration. */
hrl_subscriber *hrl_subscriber_create(hrl_config *cfg, size_t i);
/* subscriber.c: hrl_client_share_channel() and
 * hrl_client_subscriber_key() on the configurations. */
bool hrl_config_share_channel(hrl_config *cfg, hrl_config *from);
size_t hrl_config_subscriber_key(hrl_config *cfg, size_t i, char *buf,
                                 size_t size);

#endif
