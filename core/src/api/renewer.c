/*
 * The renewer: one thread per client that renews its leases (auto_renew
 * locks) as the protocol schedules them (proto/lease.c), sleeping in
 * between. Started by the first acquire of a lease, stopped and joined by
 * hrl_client_free(). It needs nothing but the core: no GIL, no Lua state.
 *
 * Consistency with the holder's own calls on the same lock (docs/DESIGN.md,
 * section 4): every lease has an entry in the schedule, guarded by the
 * renewer's one mutex, which is only ever held for a few instructions,
 * never across I/O or a callback. A call of the holder's (acquire, release,
 * extend) marks the entry busy for its whole length, after waiting for a
 * renewal of that lock to end; the renewer skips busy entries, and marks
 * the entry renewing while its round is out. So a lock's state changes in
 * one thread at a time: a renewal works on the lock's twin and writes its
 * outcome into the lock under the mutex, where the accessors of a lease
 * read it, so no read is torn. After a release or a free, the entry is off
 * the schedule: no renewal is begun for that hold again, and one that was
 * out finds the hold ended (proto/lease.c discards it) or the lock freed
 * (the renewer frees it then). The loss callback runs with no mutex held.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "proto/detail.h"

/* Where the fork canary page (driver/conn.c) says a renewer runs. */
#define CANARY_RENEWER 1

/* A lease the protocol left waiting on something that has not moved (a
 * call of the holder's cut short by a fork) is looked at again after. */
#define STALL_RETRY_US 10000

static int init_cond(pthread_cond_t *cv) {
  pthread_condattr_t attr;
  if (pthread_condattr_init(&attr) != 0) {
    return -1;
  }
  int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0) {
    rc = pthread_cond_init(cv, &attr);
  }
  pthread_condattr_destroy(&attr);
  return rc == 0 ? 0 : -1;
}

hrl_status hrl_renewer_init(hrl_renewer *r) {
  memset(r, 0, sizeof *r);
  if (pthread_mutex_init(&r->mu, NULL) != 0) {
    return HRL_ENOMEM;
  }
  if (init_cond(&r->wake) != 0) {
    pthread_mutex_destroy(&r->mu);
    return HRL_ENOMEM;
  }
  if (init_cond(&r->idle) != 0) {
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->mu);
    return HRL_ENOMEM;
  }
  return HRL_OK;
}

static hrl_renewer *renewer_of(const hrl_lock *lk) {
  return &lk->client->renewer;
}

/* Due times are on the core's clock (CLOCK_BOOTTIME), which a condition
 * variable cannot wait on: the wait is a span from now on CLOCK_MONOTONIC.
 * INT64_MAX waits until signalled. */
static void wait_until(hrl_renewer *r, int64_t wake_us) {
  if (wake_us == INT64_MAX) {
    pthread_cond_wait(&r->wake, &r->mu);
    return;
  }
  int64_t span_us = wake_us - hrl_now_us();
  if (span_us <= 0) {
    return;
  }
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t until_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + span_us;
  ts.tv_sec = (time_t)(until_us / 1000000);
  ts.tv_nsec = (long)(until_us % 1000000) * 1000;
  pthread_cond_timedwait(&r->wake, &r->mu, &ts);
}

static void unlist(hrl_renewer *r, hrl_lease *l) {
  if (!l->listed) {
    return;
  }
  if (l->prev != NULL) {
    l->prev->next = l->next;
  } else {
    r->first = l->next;
  }
  if (l->next != NULL) {
    l->next->prev = l->prev;
  }
  l->prev = l->next = NULL;
  l->listed = false;
}

/* Puts the lease where the protocol says its next renewal is due, or
 * takes it off the schedule. */
static void reschedule(hrl_renewer *r, hrl_lease *l, bool wake_thread) {
  l->due_us = hrl_proto_renew_due(l->lock);
  if (l->due_us == INT64_MAX) {
    unlist(r, l);
    return;
  }
  if (!l->listed) {
    l->next = r->first;
    l->prev = NULL;
    if (r->first != NULL) {
      r->first->prev = l;
    }
    r->first = l;
    l->listed = true;
  }
  if (wake_thread) {
    pthread_cond_signal(&r->wake);
  }
}

/* With the renewer's mutex held, while no call of the holder's runs on
 * the lock: what the accessors will report until the next change. */
static void publish(hrl_lease *l) {
  hrl_lease_view_of(l->lock, &l->view);
  l->published = true;
}

/* Whether the calling thread may go past a running callback of l: it is
 * the thread running it (the callback calls into its own lock). */
static bool in_callback(const hrl_lease *l) {
  return l->calling_back && pthread_equal(l->callback_thread, pthread_self());
}

/* Reports the loss of l's hold once, with r->mu held (released around the
 * callback). */
static void notify(hrl_renewer *r, hrl_lease *l) {
  if (l->notified) {
    return;
  }
  l->notified = true;
  if (l->on_lost == NULL || l->free_pending) {
    return;
  }
  char reason[HRL_DETAIL_MAX];
  hrl_lease_lost_at(l->lock, hrl_now_us(), reason, sizeof reason);
  hrl_lost_fn fn = l->on_lost;
  void *ud = l->on_lost_ud;
  l->calling_back = true;
  l->callback_thread = pthread_self();
  pthread_mutex_unlock(&r->mu);
  fn(l->lock, reason, ud);
  pthread_mutex_lock(&r->mu);
  l->calling_back = false;
  pthread_cond_broadcast(&r->idle);
}

static void destroy(hrl_lease *l) {
  hrl_lock *lk = l->lock;
  free(l);
  lk->lease = NULL;
  hrl_lock_destroy(lk);
}

/* One renewal of l, as the protocol decides it, with r->mu held (released
 * while the round is out). */
static void renew(hrl_renewer *r, hrl_lease *l) {
  hrl_lock *lk = l->lock;
  hrl_lock *twin = NULL;
  l->renewing = true;
  int64_t now = hrl_now_us();
  hrl_renew what = hrl_proto_renew_begin(lk, now, &twin);
  bool lost = what == HRL_RENEW_LOST;
  if (what == HRL_RENEW_ROUND) {
    pthread_mutex_unlock(&r->mu);
    hrl_api_run(twin, now, NULL, NULL);
    pthread_mutex_lock(&r->mu);
    lost = hrl_proto_renew_end(lk, hrl_now_us()) == HRL_ELOST;
  }
  l->renewing = false;
  if (!l->free_pending) {
    publish(l);
    reschedule(r, l, false);
    if (what == HRL_RENEW_WAIT && l->due_us <= hrl_now_us()) {
      l->due_us = hrl_now_us() + STALL_RETRY_US;
    }
    if (lost) {
      notify(r, l);
    }
  }
  if (l->free_pending && !l->calling_back) {
    unlist(r, l);
    destroy(l);
  }
  pthread_cond_broadcast(&r->idle);
}

static void *renewer_main(void *arg) {
  hrl_renewer *r = arg;
  pthread_mutex_lock(&r->mu);
  while (!r->stop) {
    int64_t now = hrl_now_us();
    int64_t next = INT64_MAX;
    hrl_lease *due = NULL;
    for (hrl_lease *l = r->first; l != NULL; l = l->next) {
      if (l->user_busy) {
        continue; /* looked at again when the holder's call ends */
      }
      if (l->due_us <= now) {
        due = l;
        break;
      }
      if (l->due_us < next) {
        next = l->due_us;
      }
    }
    if (due != NULL) {
      renew(r, due);
    } else {
      wait_until(r, next);
    }
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

static void set_running(hrl_renewer *r, bool running) {
  __atomic_store_n(&r->running, running, __ATOMIC_RELEASE);
}

/* With r->mu held: starts the thread unless it runs. Signals are blocked
 * in it: they are for the program's threads (Python's main thread, a
 * command runner's handlers), never for the renewer. */
static int start_thread(hrl_client *c) {
  hrl_renewer *r = &c->renewer;
  if (r->running) {
    return 0;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  r->stop = false;
  int rc = pthread_create(&r->thread, NULL, renewer_main, r);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    return rc;
  }
  r->pid = getpid();
  volatile unsigned char *canary = c->pool.fork_canary;
  if (canary != NULL) {
    __atomic_store_n((unsigned char *)&canary[CANARY_RENEWER], 1,
                     __ATOMIC_RELEASE);
  }
  set_running(r, true);
  return 0;
}

/* In a forked child: there is no renewer thread here. What it was doing
 * is abandoned (the twin's protocol state is reset when a renewal begins
 * again); leases freed meanwhile are freed now; the inherited holds are
 * not renewed here until a call of this process's puts them back on the
 * schedule. remake: the mutexes may be held by threads that do not exist
 * here (no fork hooks ran). */
static void forget_thread(hrl_client *c, bool remake) {
  hrl_renewer *r = &c->renewer;
  if (remake) {
    pthread_mutex_init(&r->mu, NULL);
    hrl_turns_remake(c);
  }
  init_cond(&r->wake);
  init_cond(&r->idle);
  hrl_lease *l = r->first;
  r->first = NULL;
  while (l != NULL) {
    hrl_lease *next = l->next;
    l->prev = l->next = NULL;
    l->listed = l->user_busy = l->renewing = l->calling_back = false;
    if (l->free_pending) {
      destroy(l);
    }
    l = next;
  }
  r->stop = false;
  r->pid = 0;
  set_running(r, false);
}

void hrl_renewer_check_fork(hrl_client *c) {
  hrl_renewer *r = &c->renewer;
  if (!__atomic_load_n(&r->running, __ATOMIC_ACQUIRE)) {
    return;
  }
  volatile unsigned char *canary = c->pool.fork_canary;
  bool forked = canary != NULL
                    ? __atomic_load_n((unsigned char *)&canary[CANARY_RENEWER],
                                      __ATOMIC_ACQUIRE) == 0
                    : r->pid != getpid();
  if (forked) {
    forget_thread(c, true);
  }
}

void hrl_renewer_clear(hrl_client *c) {
  hrl_renewer *r = &c->renewer;
  hrl_renewer_check_fork(c); /* a child never joins its parent's thread */
  pthread_mutex_lock(&r->mu);
  bool running = r->running;
  r->stop = true;
  pthread_cond_signal(&r->wake);
  pthread_mutex_unlock(&r->mu);
  if (running) {
    pthread_join(r->thread, NULL);
  }
  pthread_cond_destroy(&r->idle);
  pthread_cond_destroy(&r->wake);
  pthread_mutex_destroy(&r->mu);
}

void hrl_renewer_fork_prepare(hrl_client *c) {
  pthread_mutex_lock(&c->renewer.mu);
}

void hrl_renewer_fork_parent(hrl_client *c) {
  pthread_mutex_unlock(&c->renewer.mu);
}

void hrl_renewer_after_fork(hrl_client *c) {
  /* This thread holds the renewer's mutex when the hooks ran (prepare),
   * else whoever held it does not exist here either. */
  hrl_renewer *r = &c->renewer;
  if (c->fork_prepared) {
    pthread_mutex_unlock(&r->mu);
  } else {
    pthread_mutex_init(&r->mu, NULL);
  }
  forget_thread(c, false);
  volatile unsigned char *canary = c->pool.fork_canary;
  if (canary != NULL) {
    __atomic_store_n((unsigned char *)&canary[CANARY_RENEWER], 0,
                     __ATOMIC_RELEASE);
  }
}

hrl_status hrl_lease_attach(hrl_lock *lk) {
  hrl_lease *l = calloc(1, sizeof *l);
  if (l == NULL) {
    return HRL_ENOMEM;
  }
  l->lock = lk;
  l->due_us = INT64_MAX;
  lk->lease = l;
  return HRL_OK;
}

void hrl_lease_free(hrl_lock *lk) {
  hrl_renewer *r = renewer_of(lk);
  hrl_renewer_check_fork(lk->client);
  pthread_mutex_lock(&r->mu);
  hrl_lease *l = lk->lease;
  while (l->calling_back && !in_callback(l)) {
    pthread_cond_wait(&r->idle, &r->mu);
  }
  if (l->renewing || l->calling_back) {
    l->free_pending = true; /* the renewer frees it when it is done */
    pthread_mutex_unlock(&r->mu);
    return;
  }
  unlist(r, l);
  pthread_mutex_unlock(&r->mu);
  destroy(l);
}

hrl_status hrl_lease_enter(hrl_lock *lk, bool starts_hold) {
  hrl_renewer *r = renewer_of(lk);
  hrl_lease *l = lk->lease;
  hrl_renewer_check_fork(lk->client);
  pthread_mutex_lock(&r->mu);
  while (l->renewing || (l->calling_back && !in_callback(l))) {
    pthread_cond_wait(&r->idle, &r->mu);
  }
  if (starts_hold) {
    int rc = start_thread(lk->client);
    if (rc != 0) {
      pthread_mutex_unlock(&r->mu);
      hrl_detailf(lk->detail, sizeof lk->detail,
                  "cannot start the renewer thread: %s", strerror(rc));
      return HRL_ESYSTEM;
    }
  }
  l->user_busy = true;
  pthread_mutex_unlock(&r->mu);
  return HRL_OK;
}

void hrl_lease_leave(hrl_lock *lk) {
  hrl_renewer *r = renewer_of(lk);
  hrl_lease *l = lk->lease;
  pthread_mutex_lock(&r->mu);
  l->user_busy = false;
  publish(l);
  bool lost = hrl_lease_lost_reason(lk)[0] != '\0';
  if (!lost) {
    l->notified = false; /* a new hold, or still the same one */
  }
  reschedule(r, l, r->running);
  if (lost) {
    notify(r, l); /* the holder's own call found the loss first */
  }
  pthread_mutex_unlock(&r->mu);
}

void hrl_lease_read(const hrl_lock *lk, hrl_lease_view *out) {
  hrl_renewer *r = renewer_of(lk);
  hrl_renewer_check_fork(lk->client);
  pthread_mutex_lock(&r->mu);
  if (lk->lease->published) {
    *out = lk->lease->view;
  } else {
    hrl_lease_view_of(lk, out);
  }
  pthread_mutex_unlock(&r->mu);
}

void hrl_lease_set_on_lost(hrl_lock *lk, hrl_lost_fn fn, void *ud) {
  hrl_renewer *r = renewer_of(lk);
  hrl_renewer_check_fork(lk->client);
  pthread_mutex_lock(&r->mu);
  lk->lease->on_lost = fn;
  lk->lease->on_lost_ud = ud;
  pthread_mutex_unlock(&r->mu);
}
