/* What an operator sees of a client (docs/OPERATING.md): its counters and
 * events (observe.c), owner labels (owner.c) and inspections (inspect.c),
 * and the seam that brings them to every driver (seam.c): the public
 * hrl_proto_* calls are seam.c's, which run the protocol's own (round.c,
 * target.c, redlock.c) and watch what they decide. Nothing here changes a
 * decision of the protocol. */
#ifndef HRL_PROTO_OBSERVE_H
#define HRL_PROTO_OBSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hiredlock.h"
#include "hiredlock/proto.h"

/* A client's part: counted from every thread with atomic adds (no lock),
 * so the client's own mutexes are never taken for it. */
typedef struct hrl_observer {
  hrl_event_fn on_event; /* set before the client is shared */
  void *on_event_ud;
  hrl_stats stats;
  /* When each master stopped answering (0: it answers). Guarded like the
   * connections (the client's mutex, or the one thread of a driver). */
  int64_t down_since_us[HRL_MASTERS_MAX];
  /* The client's copy of its locks' default owner label (opts.lock.owner
   * points to it), NULL when none. */
  char *owner_default;
} hrl_observer;

/* A lock's part: what its operation in progress needs to be counted. */
typedef struct hrl_lock_obs {
  int64_t begun_us; /* when the operation began */
  /* The clock as the driver gave it last (begin, step): a master's going
   * and coming back are dated by it, to within a round, since a reply or
   * a failure comes without one (the protocol reads no clock itself). */
  int64_t now_us;
  bool renewal;  /* the lock is a lease's twin: its extends renew */
  bool handed;   /* its release round handed the lock to a waiter */
  uint32_t dead; /* ... skipping this many gone waiters */
} hrl_lock_obs;

struct hrl_config;
struct hrl_lock;
struct hrl_owner;
struct hrl_inspect;

/* What only some locks need, allocated for them alone: an owner label's
 * state (owner.c), an inspection's (inspect.c). */
typedef struct hrl_lock_extra {
  struct hrl_owner *owner;
  struct hrl_inspect *inspect;
} hrl_lock_extra;

/* observe.c: the client's copy of its default owner label; HRL_ENOMEM. */
hrl_status hrl_observer_init(struct hrl_config *cfg);
void hrl_observer_clear(struct hrl_config *cfg);

/* observe.c: reports ev to the client's callback (when there is one). */
void hrl_observe_emit(const struct hrl_config *cfg, hrl_event *ev);

/* observe.c: a lock's event (name filled in), and a master's. */
void hrl_observe_lock_event(const struct hrl_lock *lock, hrl_event_kind kind,
                            int64_t ms, hrl_status status, const char *detail);

/* observe.c, for seam.c: an operation began, a round that said it handed
 * the lock on ended (the step after it), the operation ended (status),
 * master i's reply was taken (before: its result before; reply: what it
 * said) or it failed (why); those two are dated by obs.now_us. */
void hrl_observe_begin(struct hrl_lock *lock, int64_t now_us);
void hrl_observe_round(struct hrl_lock *lock);
void hrl_observe_done(struct hrl_lock *lock, hrl_status status, int64_t now_us);
void hrl_observe_reply(struct hrl_lock *lock, size_t i, const hrl_reply *reply,
                       hrl_node_result before, hrl_node_result after);
void hrl_observe_fail(struct hrl_lock *lock, size_t i, hrl_node_result before,
                      hrl_node_result why, const char *message);

/* observe.c, for lease.c: the hold was lost (reason), and a renewal ended
 * with status at now_us (HRL_OK: renewed; HRL_ECANCELLED: nothing to
 * say). */
void hrl_observe_lost(struct hrl_lock *lock, const char *reason);
void hrl_observe_renewal(struct hrl_lock *lock, hrl_status status,
                         int64_t now_us);

/* owner.c: checks an owner label's text (the option's rules); detail says
 * what is wrong. */
hrl_status hrl_owner_check(const char *text, size_t len, char *detail,
                           size_t detail_size);

/* lock_state.c: the extras a new lock's settings call for (an owner
 * label: its copy, opts.owner pointed to it), and freeing them. */
hrl_status hrl_lock_extra_init(struct hrl_lock *lock, char *detail,
                               size_t detail_size);
void hrl_lock_extra_free(struct hrl_lock *lock);

/* owner.c, for seam.c: master i's command bytes with the label's command
 * behind them when the round carries one (else the bytes as given); how
 * many replies that adds (0 or 1); master i's reply, the label's command's
 * answered last (returns what to tell the driver: the protocol's decision
 * kept back until then, or HRL_NODE_MORE); master i failed or was left. */
const char *hrl_owner_command(struct hrl_lock *lock, size_t i,
                              const char *bytes, size_t *len);
int hrl_owner_replies(const struct hrl_lock *lock, size_t i);
bool hrl_owner_takes(struct hrl_lock *lock, size_t i, hrl_node_result *decided);
hrl_node_result hrl_owner_decided(struct hrl_lock *lock, size_t i,
                                  hrl_node_result decision);
void hrl_owner_forget(struct hrl_lock *lock, size_t i);
void hrl_owner_free(struct hrl_owner *owner);

/* inspect.c, for seam.c: the inspect operation's part of each call. */
hrl_status hrl_inspect_begin(struct hrl_lock *lock, int64_t now_us);
hrl_step hrl_inspect_step(struct hrl_lock *lock, int64_t now_us,
                          hrl_step_info *info);
const char *hrl_inspect_command(struct hrl_lock *lock, size_t i, size_t *len);
int hrl_inspect_command_replies(const struct hrl_lock *lock, size_t i);
hrl_node_result hrl_inspect_reply(struct hrl_lock *lock, size_t i,
                                  const hrl_reply *reply);
hrl_node_result hrl_inspect_fail(struct hrl_lock *lock, size_t i,
                                 hrl_node_result why, const char *message);
void hrl_inspect_free(struct hrl_inspect *inspect);
/* inspect.c: takes the finished inspection out of the lock (the caller
 * frees it with hrl_inspection_free); NULL when there is none. */
hrl_inspection *hrl_inspect_take(struct hrl_lock *lock);

#endif
