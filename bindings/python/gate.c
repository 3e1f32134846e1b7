/*
 * The gate of a Lock object: an hrl_lock is not thread-safe, so at most one
 * operation runs on it at a time, and acquire() on a held object waits the
 * way threading.Lock.acquire() does on a locked lock: until it is released
 * (by any thread) or, because this lock has a TTL, until its validity runs
 * out. Waits release the GIL and run signal handlers every 50 ms, so Ctrl-C
 * interrupts them. The mutex is held only for a few instructions, never
 * across network I/O and never while waiting for the GIL.
 */
#include "hrlpy.h"

#include <string.h>
#include <time.h>

/* Longest wait without a look at pending signals. */
#define SIGNAL_POLL_US 50000

static int init_sync(hrlpy_lock *self) {
  pthread_condattr_t attr;
  if (pthread_condattr_init(&attr) != 0) {
    return -1;
  }
  int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0) {
    rc = pthread_cond_init(&self->cv, &attr);
  }
  pthread_condattr_destroy(&attr);
  if (rc != 0) {
    return -1;
  }
  if (pthread_mutex_init(&self->mu, NULL) != 0) {
    pthread_cond_destroy(&self->cv);
    return -1;
  }
  self->waiters = 0;
  return 0;
}

int hrlpy_gate_init(hrlpy_lock *self) {
  self->busy = HRLPY_IDLE;
  self->snapped = false;
  if (init_sync(self) < 0) {
    PyErr_SetString(PyExc_OSError, "cannot create a mutex for the lock");
    return -1;
  }
  self->gate_ready = true;
  return 0;
}

void hrlpy_gate_destroy(hrlpy_lock *self) {
  if (self->gate_ready) {
    pthread_cond_destroy(&self->cv);
    pthread_mutex_destroy(&self->mu);
    self->gate_ready = false;
  }
}

hrlpy_busy hrlpy_gate_after_fork(hrlpy_lock *self) {
  hrlpy_busy was = self->busy;
  if (self->gate_ready) {
    /* The parent's threads are gone: their hold on mu and their waits with
     * them. Re-creating is the only way out of a mutex left locked. */
    init_sync(self);
  }
  self->busy = HRLPY_IDLE;
  return was;
}

/* Copies the core's state for the accessors to read while an operation
 * runs. validity_ms is truncated and read after now, so the snapshot never
 * overstates it; a hold with less than a millisecond left is no longer
 * held for the accessors (they would find none of it left either). Two
 * clock reads, every operation does two snapshots: only a lease can be
 * lost, so a plain lock's lost is not asked (hrl_lock_lost reads the
 * clock). */
static void snapshot(hrlpy_lock *self) {
  const hrl_lock *lk = self->lock;
  self->snapped = true;
  int64_t now = hrl_now_us();
  int64_t validity_ms = hrl_lock_validity_ms(lk);
  self->held = validity_ms > 0;
  self->valid_until_us = self->held ? now + validity_ms * 1000 : 0;
  self->ttl_ms = hrl_lock_ttl_ms(lk);
  self->fence = hrl_lock_fence(lk);
  self->permit = hrl_lock_permit(lk);
  const char *token = hrl_lock_token(lk);
  size_t n = strlen(token);
  n = n > HRL_TOKEN_LEN ? HRL_TOKEN_LEN : n;
  memcpy(self->token, token, n);
  self->token[n] = '\0';
  if (!self->lease) {
    self->lost = false;
    self->lost_reason[0] = '\0';
    return;
  }
  self->lost = hrl_lock_lost(lk, self->lost_reason, sizeof self->lost_reason) ==
               HRL_ELOST;
}

void hrlpy_gate_view(hrlpy_lock *self, hrlpy_view *out) {
  pthread_mutex_lock(&self->mu);
  if (self->busy == HRLPY_IDLE || !self->snapped) {
    /* Not snapped: the operation was entered with the GIL kept, so an
     * accessor runs only after its core call (in a signal handler run
     * before it leaves, or a thread that handler started): the core is
     * quiet, read it. */
    snapshot(self);
  }
  int64_t left = self->valid_until_us - hrl_now_us();
  out->held = self->held && left > 0;
  out->validity_ms = out->held ? left / 1000 : 0;
  out->ttl_ms = self->ttl_ms;
  out->fence = self->fence;
  out->permit = self->permit;
  memcpy(out->token, self->token, sizeof out->token);
  out->lost = self->lost;
  memcpy(out->lost_reason, self->lost_reason, sizeof out->lost_reason);
  pthread_mutex_unlock(&self->mu);
}

bool hrlpy_gate_held(hrlpy_lock *self) {
  pthread_mutex_lock(&self->mu);
  bool held;
  if (self->busy == HRLPY_IDLE || !self->snapped) {
    /* The core is quiet (hrlpy_gate_view): asked, without the copies a
     * snapshot makes for the other accessors. */
    held = hrl_lock_validity_ms(self->lock) > 0;
  } else {
    held = self->held && self->valid_until_us - hrl_now_us() > 0;
  }
  pthread_mutex_unlock(&self->mu);
  return held;
}

bool hrlpy_only_thread(void) {
  PyInterpreterState *interp = PyInterpreterState_Head();
  if (PyInterpreterState_Next(interp) != NULL) {
    return false;
  }
  PyThreadState *head = PyInterpreterState_ThreadHead(interp);
  return head != NULL && PyThreadState_Next(head) == NULL;
}

/* Whether op may start on self now (mu held, or no other thread). */
static int admit(hrlpy_lock *self, hrlpy_busy op) {
  if (op == HRLPY_ACQUIRING) {
    if (self->busy != HRLPY_IDLE || hrl_lock_held(self->lock)) {
      return HRLPY_GATE_BUSY;
    }
  } else {
    if (self->busy == HRLPY_ACQUIRING) {
      /* The core drops the hold when an acquire starts: nothing is held. */
      return HRLPY_GATE_NOT_HELD;
    }
    if (self->busy != HRLPY_IDLE) {
      return HRLPY_GATE_BUSY;
    }
  }
  return HRLPY_GATE_ENTERED;
}

/* With mu held: claims the lock object for op when it is free. */
static int try_enter(hrlpy_lock *self, hrlpy_busy op) {
  int r = admit(self, op);
  if (r != HRLPY_GATE_ENTERED) {
    return r;
  }
  /* What the accessors report while op runs: the state as it starts (a
   * renewal may have changed it since the last operation ended). */
  snapshot(self);
  self->busy = op;
  return HRLPY_GATE_ENTERED;
}

/* With mu held: when to look again. A held, idle object frees itself when
 * its validity runs out (milliseconds are truncated: add one). */
static int64_t wake_time(hrlpy_lock *self, hrlpy_busy op, int64_t now,
                         int64_t deadline, int64_t next_check) {
  int64_t wake = deadline < next_check ? deadline : next_check;
  if (op == HRLPY_ACQUIRING && self->busy == HRLPY_IDLE) {
    int64_t expiry = now + (hrl_lock_validity_ms(self->lock) + 1) * 1000;
    wake = expiry < wake ? expiry : wake;
  }
  return wake;
}

/* wake_us is on the core's clock (CLOCK_BOOTTIME), which a condition
 * variable cannot wait on: the wait is converted to CLOCK_MONOTONIC as a
 * span from now. */
static void wait_until(hrlpy_lock *self, int64_t wake_us) {
  int64_t span_us = wake_us - hrl_now_us();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t until_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 +
                     (span_us > 0 ? span_us : 0);
  ts.tv_sec = (time_t)(until_us / 1000000);
  ts.tv_nsec = (long)(until_us % 1000000) * 1000;
  pthread_cond_timedwait(&self->cv, &self->mu, &ts);
}

int hrlpy_gate_enter(hrlpy_lock *self, hrlpy_busy op, int64_t deadline_us,
                     bool *keep_gil) {
  if (*keep_gil) {
    /* This thread's state is the interpreter's only one, and the caller
     * keeps the GIL until the operation's core call is over: no other
     * thread can hold mu or wait on cv (a waiter has a thread state of its
     * own), and no accessor can run before that call ends, so neither the
     * mutex nor a snapshot is needed (the accessors snapshot the core
     * themselves when they find none: hrlpy_gate_view). Each was a
     * quarter of what the binding added to a cycle. */
    int r = admit(self, op);
    if (r == HRLPY_GATE_ENTERED) {
      self->snapped = false;
      self->busy = op;
    }
    if (r != HRLPY_GATE_BUSY) {
      return r;
    }
    *keep_gil = false; /* it may wait: the slow way, GIL released */
  }
  pthread_mutex_lock(&self->mu);
  int r = try_enter(self, op);
  if (r != HRLPY_GATE_BUSY || deadline_us <= hrl_now_us()) {
    pthread_mutex_unlock(&self->mu);
    return r;
  }
  PyThreadState *ts = PyEval_SaveThread();
  self->waiters++;
  int64_t next_check = hrl_now_us() + SIGNAL_POLL_US;
  for (;;) {
    int64_t now = hrl_now_us();
    if (now >= deadline_us) {
      r = HRLPY_GATE_BUSY;
      break;
    }
    if (now >= next_check) {
      /* Never wait for the GIL with mu held: a GIL holder may want mu. */
      pthread_mutex_unlock(&self->mu);
      PyEval_RestoreThread(ts);
      int failed = PyErr_CheckSignals() < 0;
      ts = PyEval_SaveThread();
      pthread_mutex_lock(&self->mu);
      if (failed) {
        r = HRLPY_GATE_ERROR;
        break;
      }
      next_check = hrl_now_us() + SIGNAL_POLL_US;
    } else {
      wait_until(self, wake_time(self, op, now, deadline_us, next_check));
    }
    r = try_enter(self, op);
    if (r != HRLPY_GATE_BUSY) {
      break;
    }
  }
  self->waiters--;
  pthread_mutex_unlock(&self->mu);
  PyEval_RestoreThread(ts);
  return r;
}

void hrlpy_gate_snap(hrlpy_lock *self) {
  pthread_mutex_lock(&self->mu);
  if (!self->snapped) {
    snapshot(self);
  }
  pthread_mutex_unlock(&self->mu);
}

/* No snapshot here: the accessors of an idle object read the core
 * (hrlpy_gate_view), and the next operation takes its own as it starts.
 * Alone in the interpreter, nobody waits (a waiter is a thread state of
 * its own) and nobody holds mu: no mutex either. */
void hrlpy_gate_leave(hrlpy_lock *self) {
  if (hrlpy_only_thread()) {
    self->busy = HRLPY_IDLE;
    return;
  }
  pthread_mutex_lock(&self->mu);
  self->busy = HRLPY_IDLE;
  if (self->waiters > 0) {
    pthread_cond_broadcast(&self->cv);
  }
  pthread_mutex_unlock(&self->mu);
}
