/*
 * Turns at a client's connections: one step or round at a time uses them
 * (a round reads and writes the client's sockets and its record of late
 * masters), and a holder's call goes first.
 *
 * A round of a waiting acquire (a try, a step aside, the leave) can take
 * as long as the per-master timeout, and a dozen threads waiting through
 * one client each run one every few hundred milliseconds. Were the turn a
 * plain mutex, the release or extend of a lock already held (a renewal of
 * a lease, which must land within its validity) would queue behind all of
 * them, in whatever order the mutex hands it out: with one master paused,
 * a holder's 1 s lease was lost to waiters' rounds. So a holder's call
 * (release, extend, the renewer's extends) is urgent: while one waits, no
 * acquire takes a turn, and it waits at most for the round already out.
 * The mutex is held a few instructions at a time, never across I/O.
 *
 * Most clients have one thread: every step of every cycle takes and gives
 * a turn nobody else wants, and a mutex, a condition and a broadcast for
 * each cost a single-threaded cycle a tenth of its instructions. So the
 * turn is a word (c->turns): TURN_TAKEN while taken, plus TURN_WAITER per
 * caller in the slow path. Taking it from 0 and giving it back to 0 are
 * one compare-and-swap each; anything else (a turn taken, a waiter) goes
 * through the mutex. A waiter counts itself before it looks, under the
 * mutex, so a giver either sees it (and broadcasts under the mutex, which
 * the waiter holds until it waits) or gave the turn before it looked.
 * While a waiter counts, the word is never 0 or TURN_TAKEN alone: neither
 * fast path can run, so the urgent ones' priority is kept.
 */
#include "api.h"

enum { TURN_TAKEN = 1u, TURN_WAITER = 2u };

hrl_status hrl_turns_init(hrl_client *c) {
  if (pthread_mutex_init(&c->mu, NULL) != 0) {
    return HRL_ESYSTEM;
  }
  if (pthread_cond_init(&c->turn, NULL) != 0) {
    pthread_mutex_destroy(&c->mu);
    return HRL_ESYSTEM;
  }
  atomic_init(&c->turns, 0);
  c->urgent = 0;
  return HRL_OK;
}

void hrl_turns_clear(hrl_client *c) {
  pthread_cond_destroy(&c->turn);
  pthread_mutex_destroy(&c->mu);
}

void hrl_turns_remake(hrl_client *c) {
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->turn, NULL);
  atomic_store_explicit(&c->turns, 0, memory_order_relaxed);
  c->urgent = 0;
}

bool hrl_turn_take(hrl_client *c, bool urgent) {
  unsigned s = 0;
  if (atomic_compare_exchange_strong_explicit(&c->turns, &s, TURN_TAKEN,
                                              memory_order_acquire,
                                              memory_order_relaxed)) {
    return true; /* free, and nobody waiting */
  }
  pthread_mutex_lock(&c->mu);
  s = atomic_fetch_add_explicit(&c->turns, TURN_WAITER, memory_order_relaxed) +
      TURN_WAITER;
  c->urgent += urgent;
  for (;;) {
    if ((s & TURN_TAKEN) || (!urgent && c->urgent > 0)) {
      pthread_cond_wait(&c->turn, &c->mu);
      s = atomic_load_explicit(&c->turns, memory_order_relaxed);
    } else if (atomic_compare_exchange_weak_explicit(
                   &c->turns, &s, (s - TURN_WAITER) | TURN_TAKEN,
                   memory_order_acquire, memory_order_relaxed)) {
      break;
    }
  }
  c->urgent -= urgent;
  pthread_mutex_unlock(&c->mu);
  return false;
}

void hrl_turn_give(hrl_client *c) {
  unsigned s = TURN_TAKEN;
  if (atomic_compare_exchange_strong_explicit(
          &c->turns, &s, 0, memory_order_release, memory_order_relaxed)) {
    return; /* nobody waiting */
  }
  pthread_mutex_lock(&c->mu);
  atomic_fetch_and_explicit(&c->turns, ~(unsigned)TURN_TAKEN,
                            memory_order_release);
  pthread_cond_broadcast(&c->turn);
  pthread_mutex_unlock(&c->mu);
}

bool hrl_turn_wanted(hrl_client *c) {
  /* Held by the caller: anything beside TURN_TAKEN is a waiter counted. */
  return atomic_load_explicit(&c->turns, memory_order_relaxed) != TURN_TAKEN;
}
