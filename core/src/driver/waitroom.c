/*
 * Where a client's blocking acquires wait for their hand-offs.
 *
 * A waiting acquire registers its token (hrl_waitroom_enter) before the
 * round that queues it on the masters, so a hand-off made during that round
 * is not missed: the message waits in the subscriber socket, or, once read,
 * in the waiter's record, until the waiter looks. There is no thread of our
 * own: of the threads waiting on a client, one at a time reads the
 * subscriber connections (the poller) and passes every hand-off to the
 * waiter it is for, waking that thread; the others sleep on their own
 * condition variable. When the poller's wait ends, it wakes the others so
 * one of them takes over. A single-threaded program thus reads its
 * hand-off in the very thread that waits for it (no extra wake-up on the
 * hand-off's path), and a program that never waits opens no subscriber
 * connection.
 *
 * Waits are cut in slices of at most 50 ms when there is a cancel callback
 * (the Python binding runs its signal handlers there), and nothing spins:
 * between slices a thread is in poll() or on its condition variable.
 */
#define _GNU_SOURCE
#include "waitroom.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"

/* Longest wait without a call to the cancel callback. */
#define SLICE_US 50000

hrl_status hrl_waitroom_init(hrl_waitroom *room, size_t n) {
  memset(room, 0, sizeof *room);
  room->subs = calloc(n, sizeof *room->subs);
  if (room->subs == NULL) {
    return HRL_ENOMEM;
  }
  if (pthread_mutex_init(&room->mu, NULL) != 0) {
    free(room->subs);
    room->subs = NULL;
    return HRL_ESYSTEM;
  }
  room->n = n;
  return HRL_OK;
}

void hrl_waitroom_clear(hrl_waitroom *room) {
  if (room->subs == NULL) {
    return;
  }
  hrl_listen_close(room->subs, room->n);
  free(room->subs);
  room->subs = NULL;
  pthread_mutex_destroy(&room->mu);
}

void hrl_waitroom_fork_prepare(hrl_waitroom *room) {
  pthread_mutex_lock(&room->mu);
  room->fork_prepared = true;
}

void hrl_waitroom_fork_parent(hrl_waitroom *room) {
  if (room->fork_prepared) {
    room->fork_prepared = false;
    pthread_mutex_unlock(&room->mu);
  }
}

void hrl_waitroom_after_fork(hrl_waitroom *room) {
  /* Only the forking thread exists here: the other waiters (and a poller)
   * are gone with their threads. */
  if (room->fork_prepared) {
    room->fork_prepared = false;
    pthread_mutex_unlock(&room->mu);
  } else {
    pthread_mutex_init(&room->mu, NULL);
  }
  room->waiters = NULL;
  room->polling = false;
  hrl_listen_close(room->subs, room->n);
}

bool hrl_waitroom_enter(hrl_waitroom *room, hrl_waiter *w, const char *token) {
  pthread_condattr_t attr;
  if (pthread_condattr_init(&attr) != 0) {
    return false;
  }
  int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0) {
    rc = pthread_cond_init(&w->cv, &attr);
  }
  pthread_condattr_destroy(&attr);
  if (rc != 0) {
    return false;
  }
  memcpy(w->token, token, HRL_TOKEN_LEN);
  w->notified = 0;
  w->woken = false;
  pthread_mutex_lock(&room->mu);
  w->next = room->waiters;
  room->waiters = w;
  pthread_mutex_unlock(&room->mu);
  return true;
}

void hrl_waitroom_leave(hrl_waitroom *room, hrl_waiter *w) {
  pthread_mutex_lock(&room->mu);
  for (hrl_waiter **p = &room->waiters; *p != NULL; p = &(*p)->next) {
    if (*p == w) {
      *p = w->next;
      break;
    }
  }
  pthread_mutex_unlock(&room->mu);
  pthread_cond_destroy(&w->cv);
}

/* The poller's report (hrl_notice_fn): a hand-off goes to the waiter with
 * its token (none: an old hand-off, or another process's), a subscription
 * that came up wakes every waiter. */
static void tell(void *ud, size_t i, const char *token) {
  hrl_waitroom *room = ud;
  pthread_mutex_lock(&room->mu);
  for (hrl_waiter *w = room->waiters; w != NULL; w = w->next) {
    if (token == NULL) {
      w->woken = true;
    } else if (memcmp(w->token, token, HRL_TOKEN_LEN) == 0) {
      w->notified |= (uint64_t)1 << i;
    } else {
      continue;
    }
    pthread_cond_signal(&w->cv);
  }
  pthread_mutex_unlock(&room->mu);
}

/* With mu held: sleeps on w's condition variable until until_us (on the
 * core's clock, converted to a span on CLOCK_MONOTONIC). */
static void sleep_until(hrl_waitroom *room, hrl_waiter *w, int64_t until_us) {
  int64_t span_us = until_us - hrl_now_us();
  if (span_us <= 0) {
    return;
  }
  if (w == NULL) { /* not registered: nothing can wake it early */
    pthread_mutex_unlock(&room->mu);
    hrl_sleep_ms((uint32_t)((span_us + 999) / 1000));
    pthread_mutex_lock(&room->mu);
    return;
  }
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t at = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + span_us;
  ts.tv_sec = (time_t)(at / 1000000);
  ts.tv_nsec = (long)(at % 1000000) * 1000;
  pthread_cond_timedwait(&w->cv, &room->mu, &ts);
}

/* With mu held: reads the subscriber connections until until_us or a
 * notice, as the poller. It keeps the role from one slice to the next
 * (mu is held in between), so no other thread takes it meanwhile. */
static void poll_for_all(hrl_waitroom *room, hrl_client *client,
                         const hrl_config *cfg, int64_t until_us) {
  room->polling = true;
  pthread_mutex_unlock(&room->mu);
  hrl_listen(room->subs, room->n, client, cfg, until_us, tell, room);
  pthread_mutex_lock(&room->mu);
  room->polling = false;
}

/* With mu held: the poller's wait ends; the other waiters wake, and the
 * first to look takes over. */
static void hand_over(hrl_waitroom *room) {
  for (hrl_waiter *o = room->waiters; o != NULL; o = o->next) {
    pthread_cond_signal(&o->cv);
  }
}

bool hrl_waitroom_wait(hrl_waitroom *room, hrl_client *client, hrl_waiter *w,
                       hrl_lock *lock, uint32_t ms, hrl_wait_cancel_fn cancel,
                       void *ud) {
  int64_t now = hrl_now_us();
  int64_t until = now + (int64_t)ms * 1000;
  int64_t next_check = now; /* at once, then every slice */
  bool go_on = true, polled = false;
  pthread_mutex_lock(&room->mu);
  for (;;) {
    if (w != NULL && (w->notified != 0 || w->woken)) {
      break;
    }
    now = hrl_now_us();
    if (now >= until) {
      break;
    }
    if (cancel != NULL && now >= next_check) {
      pthread_mutex_unlock(&room->mu); /* the callback may take long */
      go_on = !cancel(ud);
      pthread_mutex_lock(&room->mu);
      if (!go_on) {
        break;
      }
      next_check = hrl_now_us() + SLICE_US;
      continue;
    }
    int64_t slice_end =
        cancel != NULL && next_check < until ? next_check : until;
    if (w != NULL && !room->polling) {
      poll_for_all(room, client, lock->cfg, slice_end);
      polled = true;
    } else {
      sleep_until(room, w, slice_end);
    }
  }
  if (polled) {
    hand_over(room);
  }
  if (w != NULL) {
    for (size_t i = 0; i < room->n; i++) {
      if (w->notified & ((uint64_t)1 << i)) {
        hrl_proto_notified(lock, i);
      }
    }
    if (w->woken) {
      hrl_proto_wake(lock);
    }
    w->notified = 0;
    w->woken = false;
  }
  pthread_mutex_unlock(&room->mu);
  return go_on;
}
