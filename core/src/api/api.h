/* The public API's handle: a client is its configuration (the protocol's),
 * its connections (the built-in driver's), the mutex that keeps two
 * threads' rounds off them at once, the room where its blocking acquires
 * wait for their hand-offs (with its own mutex), and the renewer of its
 * leases. */
#ifndef HRL_API_H
#define HRL_API_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "driver/driver.h"
#include "driver/waitroom.h"
#include "proto/state.h"

/* A lease's entry in its client's renewal schedule (renewer.c). Every
 * field is guarded by the renewer's mutex. */
typedef struct hrl_lease {
  hrl_lock *lock;
  struct hrl_lease *prev, *next; /* in the schedule while listed */
  bool listed;
  bool user_busy;    /* a call of the holder's runs on the lock */
  bool renewing;     /* the renewer runs a renewal of it */
  bool calling_back; /* on_lost runs, in callback_thread */
  bool free_pending; /* freed meanwhile: the renewer frees it when done */
  bool notified;     /* the loss of this hold was reported */
  pthread_t callback_thread;
  int64_t due_us; /* hrl_proto_renew_due, as of the last change */
  hrl_lost_fn on_lost;
  void *on_lost_ud;
  /* What the accessors report, from the end of the last call or renewal;
   * published once the blocking calls ran on the lock (a driver of its own
   * runs the lock in one thread: the accessors read the lock itself). */
  bool published;
  hrl_lease_view view;
} hrl_lease;

/* One thread per client renews its leases (renewer.c). */
typedef struct hrl_renewer {
  pthread_mutex_t mu;  /* never held across I/O or a callback */
  pthread_cond_t wake; /* to the thread: the schedule changed, or stop */
  pthread_cond_t idle; /* to callers: a renewal or callback ended */
  pthread_t thread;
  bool running; /* the thread was started (in this process, unless forked) */
  bool stop;
  pid_t pid; /* where it was started, when there is no fork canary */
  hrl_lease *first;
} hrl_renewer;

struct hrl_client {
  hrl_config cfg;
  hrl_pool pool;
  /* Whose turn it is at the connections (turns.c): turns holds the
   * TURN_TAKEN bit while a step or a round uses them, plus TURN_WAITER for
   * each caller waiting for one (a turn nobody waits for is taken and
   * given with one atomic operation, no mutex); urgent counts the holders'
   * calls waiting, which go before any acquire. mu guards urgent and the
   * waits, for a few instructions at a time. */
  pthread_mutex_t mu;
  pthread_cond_t turn;
  atomic_uint turns;
  unsigned urgent;
  bool fork_prepared; /* the turn (and mu) are held by the fork hooks */
  hrl_waitroom room;  /* never locked with mu held, nor mu with it */
  hrl_renewer renewer;
  hrl_entropy_pool *entropy; /* cfg.entropy_ctx's: tokens' bytes in batches */
  struct hrl_event_queue *events; /* ops.c: queued events, for bindings */
};

/* ops.c: frees the event queue (hrl_client_queue_events); in a forked
 * child, makes its mutex anew. */
void hrl_events_free(hrl_client *client);
void hrl_events_after_fork(hrl_client *client);

/* lock.c: runs lock's begun operation to its end with the built-in driver.
 * begun_us: the clock reading it was begun at (hrl_now_us(), just before),
 * which its first step reuses when the turn is free at once. Steps and
 * rounds take a turn at the client's connections; waits do not. */
hrl_status hrl_api_run(hrl_lock *lock, int64_t begun_us, hrl_cancel_fn cancel,
                       void *user_data);

/* turns.c: the client's turns (mu, turn, turns, urgent), none taken;
 * HRL_ESYSTEM when a mutex or condition cannot be made. */
hrl_status hrl_turns_init(hrl_client *client);
void hrl_turns_clear(hrl_client *client);
/* turns.c: in a forked child whose parent's threads may have held them
 * (no fork hooks ran): made anew, none taken. */
void hrl_turns_remake(hrl_client *client);
/* turns.c: waits for a turn at the connections and takes it. urgent: a
 * holder's call (release, extend, a renewal), which goes before every
 * acquire waiting for one. true when the turn was free at once (no other
 * caller held it or waited: no time went by waiting). */
bool hrl_turn_take(hrl_client *client, bool urgent);
void hrl_turn_give(hrl_client *client);
/* turns.c: whether another caller waits for the turn this one holds. */
bool hrl_turn_wanted(hrl_client *client);

/* renewer.c: the client's renewer, not started yet. */
hrl_status hrl_renewer_init(hrl_renewer *r);
/* renewer.c: stops (joins) the thread and frees the renewer. */
void hrl_renewer_clear(hrl_client *client);
/* renewer.c: the fork hooks' part (see hrl_client_fork_prepare). */
void hrl_renewer_fork_prepare(hrl_client *client);
void hrl_renewer_fork_parent(hrl_client *client);
void hrl_renewer_after_fork(hrl_client *client);
/* renewer.c: in a forked child that did not run the fork hooks, whose
 * parent ran a renewer: forgets that thread and re-makes the mutexes it
 * may have held (the client's too). Cheap when no renewer ever ran. */
void hrl_renewer_check_fork(hrl_client *client);

/* renewer.c: gives an auto_renew lock its schedule entry. HRL_ENOMEM. */
hrl_status hrl_lease_attach(hrl_lock *lock);
/* renewer.c: frees a lease's lock (now, or when the renewer is done). */
void hrl_lease_free(hrl_lock *lock);
/* renewer.c: around a call of the holder's on a lease: enter waits for a
 * renewal of it to end and keeps the next out; for a call that may start
 * a hold (acquire) it starts the renewer thread, HRL_ESYSTEM when it
 * cannot. leave schedules what the call left and reports a loss it found. */
hrl_status hrl_lease_enter(hrl_lock *lock, bool starts_hold);
void hrl_lease_leave(hrl_lock *lock);
/* renewer.c: what a lease's accessors report, from any thread. */
void hrl_lease_read(const hrl_lock *lock, hrl_lease_view *out);
/* renewer.c: hrl_lock_on_lost on a lease. */
void hrl_lease_set_on_lost(hrl_lock *lock, hrl_lost_fn fn, void *user_data);

#endif
