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
 */
#include "api.h"

hrl_status hrl_turns_init(hrl_client *c) {
  if (pthread_mutex_init(&c->mu, NULL) != 0) {
    return HRL_ESYSTEM;
  }
  if (pthread_cond_init(&c->turn, NULL) != 0) {
    pthread_mutex_destroy(&c->mu);
    return HRL_ESYSTEM;
  }
  c->taken = false;
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
  c->taken = false;
  c->urgent = 0;
}

void hrl_turn_take(hrl_client *c, bool urgent) {
  pthread_mutex_lock(&c->mu);
  c->urgent += urgent;
  while (c->taken || (!urgent && c->urgent > 0)) {
    pthread_cond_wait(&c->turn, &c->mu);
  }
  c->urgent -= urgent;
  c->taken = true;
  pthread_mutex_unlock(&c->mu);
}

void hrl_turn_give(hrl_client *c) {
  pthread_mutex_lock(&c->mu);
  c->taken = false;
  pthread_cond_broadcast(&c->turn);
  pthread_mutex_unlock(&c->mu);
}
