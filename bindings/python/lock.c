/*
 * hiredlock._core.Lock: one named lock on a Client's masters.
 *
 * acquire() follows threading.Lock: blocking=False is one attempt, timeout
 * bounds the wait, -1 waits forever; it returns a bool and raises only for
 * failures (no quorum reachable, bad arguments). The GIL is released around
 * exactly the blocking core call; a long acquire runs signal handlers every
 * 50 ms through the core's cancel callback, so Ctrl-C stops it and leaves no
 * key behind, and so does a Ctrl-C that came while the lock was being
 * taken (released before the KeyboardInterrupt goes on). __enter__ is C
 * too, so that `with` has no instruction between the acquire and the block
 * where a signal could strand the lock.
 */
#include "hrlpy.h"

#include <string.h>

void hrlpy_lock_watch(hrlpy_lock *self) {
  if (self->on_lost != NULL) {
    hrl_lock_on_lost(self->lock, hrlpy_lost_post, self);
    self->watched = true;
  }
}

static int lock_traverse(PyObject *op, visitproc visit, void *arg) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  Py_VISIT(Py_TYPE(op));
  Py_VISIT(self->client);
  Py_VISIT(self->name);
  Py_VISIT(self->on_lost);
  Py_VISIT(self->lease_of);
  return 0;
}

static int lock_clear(PyObject *op) {
  Py_CLEAR(((hrlpy_lock *)op)->on_lost);
  return 0;
}

static void lock_dealloc(PyObject *op) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  PyTypeObject *type = Py_TYPE(op);
  PyObject_GC_UnTrack(op);
  if (self->link.next != NULL) {
    hrlpy_link_remove(&self->link);
  }
  /* A held lock is not released here: no network I/O in a finalizer. Its
   * key expires after the TTL (a lease is no longer renewed). The client
   * outlives the lock (we hold it). Once the core's lock is freed, no loss
   * callback can post this object again: take it off the queue after. */
  if (self->lease_of != NULL) { /* a twin: the lease owns its hrl_lock */
    Py_CLEAR(self->lease_of);
    Py_CLEAR(self->client);
    Py_CLEAR(self->name);
    type->tp_free(op);
    Py_DECREF(type);
    return;
  }
  hrl_lock_free(self->lock);
  if (self->watched) { /* only a watched lock can be on the lost queue */
    hrlpy_lost_forget(self);
  }
  hrlpy_gate_destroy(self);
  Py_CLEAR(self->client);
  Py_CLEAR(self->name);
  Py_CLEAR(self->on_lost);
  type->tp_free(op);
  Py_DECREF(type);
}

/* A core call whose length its reply deadlines bound (an attempt without
 * a wait, a release, an extend) keeps the GIL when the calling thread is
 * the only one that can want it (hrlpy_only_thread(), decided as the
 * operation enters the gate): releasing and retaking it was the largest
 * cost the binding added to a cycle (about 700 instructions per cycle
 * through the GIL's mutex and condition variable), and nobody could have
 * used it meanwhile. A thread appearing during the call (a C thread's
 * first PyGILState_Ensure) waits for it, as it would for any Python code;
 * a wait (acquire with a timeout) always releases it, since its length is
 * the caller's. */
#define BOUNDED_CALL(keep_gil, call)                                           \
  do {                                                                         \
    if (keep_gil) {                                                            \
      call;                                                                    \
    } else {                                                                   \
      Py_BEGIN_ALLOW_THREADS;                                                  \
      call;                                                                    \
      Py_END_ALLOW_THREADS;                                                    \
    }                                                                          \
  } while (0)

/* The core's cancel callback: while an acquire waits (at least every
 * 50 ms), take the GIL for a moment and run the signal handlers. */
static bool cancel_on_signal(void *unused) {
  (void)unused;
  PyGILState_STATE gil = PyGILState_Ensure();
  bool stop = PyErr_CheckSignals() < 0;
  PyGILState_Release(gil);
  return stop;
}

/* Ends a failed operation, raising with the core's message (copied
 * before the gate opens: another thread may start on the object at once). */
static PyObject *finish(hrlpy_lock *self, hrl_status status) {
  char detail[HRL_DETAIL_MAX];
  const char *d = hrl_lock_error(self->lock);
  size_t n = strnlen(d, sizeof detail - 1);
  memcpy(detail, d, n);
  detail[n] = '\0';
  hrlpy_gate_leave(self);
  hrlpy_raise_status(self->state, status, detail);
  hrlpy_events_flush(self->client);
  return NULL;
}

/* on_lost callbacks run in a thread of their own, started the first time
 * a lock that has one is held. Failing to start it is reported, not
 * raised: the lock is held, and lost and check() still tell. */
static void start_dispatcher(hrlpy_lock *self) {
  PyObject *module = PyType_GetModule(self->state->lock_type);
  if (module == NULL || hrlpy_lost_start(self->state, module) < 0) {
    PyErr_WriteUnraisable((PyObject *)self);
  }
}

/* The acquire got the lock, but a signal handler raised meanwhile (Ctrl-C
 * during its first round, or just before its hand-off): returning True
 * would let the KeyboardInterrupt be raised at the caller's next
 * instruction, before a `with` block's __exit__ could run, and the key
 * would stay for its whole TTL. The lock is released first, then the
 * exception goes on: an interrupted acquire leaves no key. */
static bool interrupted(hrlpy_lock *self) {
  if (PyErr_CheckSignals() == 0) {
    return false;
  }
  hrlpy_gate_snap(self); /* others may read the accessors meanwhile */
  Py_BEGIN_ALLOW_THREADS;
  hrl_lock_release(self->lock); /* what it finds, the exception says */
  Py_END_ALLOW_THREADS;
  return true;
}

/* Acquires with the parsed arguments: Py_True, Py_False (others held it
 * for the whole wait; the core's detail says more), or NULL with an
 * exception. */
static PyObject *acquire_with(hrlpy_lock *self, int64_t wait_ms) {
  /* Without a wait, any deadline already past will do: no clock read. */
  int64_t deadline = wait_ms == HRL_WAIT_FOREVER ? INT64_MAX
                     : wait_ms == 0              ? INT64_MIN
                                    : hrl_now_us() + wait_ms * 1000;
  bool keep_gil = wait_ms == 0 && hrlpy_only_thread();
  int gate = hrlpy_gate_enter(self, HRLPY_ACQUIRING, deadline, &keep_gil);
  if (gate == HRLPY_GATE_ERROR) {
    return NULL;
  }
  if (gate != HRLPY_GATE_ENTERED) {
    Py_RETURN_FALSE;
  }
  if (wait_ms > 0) {
    /* Time spent waiting for this object counts against the timeout. */
    int64_t left = deadline - hrl_now_us();
    wait_ms = left > 0 ? (left + 999) / 1000 : 0;
  }
  hrl_status status;
  if (wait_ms == 0) {
    BOUNDED_CALL(keep_gil, status = hrl_lock_acquire(self->lock, 0));
  } else {
    Py_BEGIN_ALLOW_THREADS;
    status = hrl_lock_acquire_cancellable(self->lock, wait_ms, cancel_on_signal,
                                          NULL);
    Py_END_ALLOW_THREADS;
  }
  if (status == HRL_OK && interrupted(self)) {
    hrlpy_gate_leave(self);
    return NULL;
  }
  if (status == HRL_OK || status == HRL_ETIMEOUT) {
    hrlpy_gate_leave(self);
    if (status == HRL_OK && self->on_lost != NULL) {
      start_dispatcher(self);
    } else if (status == HRL_OK && self->lease && !self->state->lost.started) {
      /* A lease's renewals report events in the renewer thread: the
       * dispatcher logs them. */
      start_dispatcher(self);
    }
    hrlpy_events_flush(self->client);
    return Py_NewRef(status == HRL_OK ? Py_True : Py_False);
  }
  return finish(self, status);
}

static PyObject *lock_acquire(PyObject *op, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  bool blocking = true;
  int64_t wait_ms = HRL_WAIT_FOREVER;
  if (nargs == 1 && kwnames == NULL && args[0] == Py_False) {
    /* acquire(False), the one-attempt idiom: no argument parsing. */
    return acquire_with(self, 0);
  }
  if (nargs != 0 || kwnames != NULL) {
    static const char *const names[] = {"blocking", "timeout", NULL};
    PyObject *a[2];
    if (hrlpy_parse_args("acquire", names, 2, args, nargs, kwnames, a) < 0) {
      return NULL;
    }
    int b = a[0] == NULL ? 1 : PyObject_IsTrue(a[0]);
    if (b < 0) {
      return NULL;
    }
    blocking = b;
    if (hrlpy_wait_ms(a[1], blocking, &wait_ms) < 0) {
      return NULL;
    }
  }
  return acquire_with(self, wait_ms);
}

/* NotAcquired for a `with` block whose wait ran out: "timeout: lock 'x'
 * not acquired (5 s)", and what the core saw, when it says more (a key
 * that never expires). */
static PyObject *not_acquired(hrlpy_lock *self) {
  char wait[64] = "one attempt";
  if (self->with_blocking) {
    double seconds = self->with_wait_ms == HRL_WAIT_FOREVER
                         ? -1.0
                         : (double)self->with_wait_ms / 1000.0;
    char *g = PyOS_double_to_string(seconds, 'g', 6, 0, NULL);
    if (g == NULL) {
      return NULL;
    }
    snprintf(wait, sizeof wait, "%s s", g);
    PyMem_Free(g);
  }
  const char *detail = hrl_lock_error(self->lock);
  PyObject *msg = PyUnicode_FromFormat(
      "%s: lock %R not acquired (%s)%s%s", hrl_strerror(HRL_ETIMEOUT),
      self->name, wait, detail[0] != '\0' ? ": " : "", detail);
  if (msg == NULL) {
    return NULL;
  }
  PyErr_SetObject(self->state->not_acquired, msg);
  Py_DECREF(msg);
  return NULL;
}

/* with lock: acquire with the object's timeout and blocking, in one C call
 * (as threading.Lock's __enter__): the `with` statement calls it with no
 * instruction in between where a signal could be raised after the lock
 * was taken and before the block (and its __exit__) begins. */
static PyObject *lock_enter(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_lock *self = (hrlpy_lock *)op;
  int64_t wait_ms = self->with_blocking ? self->with_wait_ms : 0;
  PyObject *got = acquire_with(self, wait_ms);
  if (got == NULL) {
    return NULL;
  }
  bool held = got == Py_True;
  Py_DECREF(got);
  return held ? Py_NewRef(op) : not_acquired(self);
}

static PyObject *lock_release(PyObject *op, PyObject *unused);

/* __exit__(exc_type, exc, tb): the release, in C as __enter__ is: a
 * Python __exit__ was a frame and a method call per `with` block. When the
 * release fails with an Exception, the object's _exit_failed(exc, failure)
 * (hiredlock.Lock's: the policy of _lock.exit_error, shared with asyncio)
 * decides what the block raises; without one, the failure goes on. */
static PyObject *lock_exit(PyObject *op, PyObject *const *args,
                           Py_ssize_t nargs) {
  if (nargs != 3) {
    return PyErr_Format(PyExc_TypeError,
                        "__exit__() takes exactly 3 arguments (%zd given)",
                        nargs);
  }
  PyObject *done = lock_release(op, NULL);
  if (done != NULL || !PyErr_ExceptionMatches(PyExc_Exception)) {
    return done;
  }
  PyObject *type, *failure, *tb;
  PyErr_Fetch(&type, &failure, &tb);
  PyErr_NormalizeException(&type, &failure, &tb);
  if (tb != NULL) {
    PyException_SetTraceback(failure, tb);
  }
  PyObject *policy = PyObject_GetAttrString(op, "_exit_failed");
  if (policy == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
      Py_XDECREF(type);
      Py_XDECREF(failure);
      Py_XDECREF(tb);
      return NULL;
    }
    PyErr_Clear();
    PyErr_Restore(type, failure, tb);
    return NULL;
  }
  PyObject *result =
      PyObject_CallFunctionObjArgs(policy, args[1], failure, NULL);
  Py_DECREF(policy);
  Py_XDECREF(type);
  Py_XDECREF(failure);
  Py_XDECREF(tb);
  return result;
}

/* _not_acquired() -> the NotAcquired a `with` block raises now (for
 * hiredlock.asyncio's async with). */
static PyObject *lock_not_acquired(PyObject *op, PyObject *unused) {
  (void)unused;
  not_acquired((hrlpy_lock *)op);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return value;
}

/* Release and extend wait only for another release or extend in flight;
 * during another thread's acquire this object holds nothing. */
static int enter_held_op(hrlpy_lock *self, hrlpy_busy op, bool *keep_gil) {
  *keep_gil = hrlpy_only_thread();
  int gate = hrlpy_gate_enter(self, op, INT64_MAX, keep_gil);
  if (gate == HRLPY_GATE_NOT_HELD) {
    hrlpy_raise_status(self->state, HRL_ENOTHELD, "");
    return -1;
  }
  return gate == HRLPY_GATE_ENTERED ? 0 : -1;
}

static PyObject *lock_release(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_lock *self = (hrlpy_lock *)op;
  bool keep_gil;
  if (enter_held_op(self, HRLPY_RELEASING, &keep_gil) < 0) {
    return NULL;
  }
  hrl_status status;
  BOUNDED_CALL(keep_gil, status = hrl_lock_release(self->lock));
  if (status != HRL_OK) {
    return finish(self, status);
  }
  hrlpy_gate_leave(self);
  hrlpy_events_flush(self->client);
  Py_RETURN_NONE;
}

static PyObject *lock_extend(PyObject *op, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  static const char *const names[] = {"ttl", NULL};
  PyObject *a[1];
  if (hrlpy_parse_args("extend", names, 1, args, nargs, kwnames, a) < 0) {
    return NULL;
  }
  int64_t ttl_ms = 0; /* the lock's own TTL */
  if (a[0] != NULL && a[0] != Py_None &&
      hrlpy_ttl_ms(a[0], self->client->client, &ttl_ms) < 0) {
    return NULL;
  }
  bool keep_gil;
  if (enter_held_op(self, HRLPY_EXTENDING, &keep_gil) < 0) {
    return NULL;
  }
  hrl_status status;
  BOUNDED_CALL(keep_gil,
               status = hrl_lock_extend(self->lock, (uint32_t)ttl_ms));
  if (status != HRL_OK) {
    return finish(self, status);
  }
  hrlpy_gate_leave(self);
  hrlpy_events_flush(self->client);
  Py_RETURN_NONE;
}

/* check() -> None, or LockLost("lost: <reason>"). */
static PyObject *lock_check(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_view v;
  hrlpy_gate_view((hrlpy_lock *)op, &v);
  if (v.lost) {
    return hrlpy_raise_status(((hrlpy_lock *)op)->state, HRL_ELOST,
                              v.lost_reason);
  }
  Py_RETURN_NONE;
}

static PyObject *get_lost(PyObject *op, void *closure) {
  (void)closure;
  hrlpy_view v;
  hrlpy_gate_view((hrlpy_lock *)op, &v);
  return PyBool_FromLong(v.lost);
}

static PyObject *get_auto_renew(PyObject *op, void *closure) {
  (void)closure;
  hrl_lock_options lo;
  hrl_lock_get_options(((hrlpy_lock *)op)->lock, &lo);
  return PyBool_FromLong(lo.auto_renew);
}

static PyObject *get_on_lost(PyObject *op, void *closure) {
  (void)closure;
  PyObject *cb = ((hrlpy_lock *)op)->on_lost;
  return Py_NewRef(cb != NULL ? cb : Py_None);
}

static PyObject *lock_locked(PyObject *op, PyObject *unused) {
  (void)unused;
  return PyBool_FromLong(hrlpy_gate_held((hrlpy_lock *)op));
}

static PyObject *get_validity(PyObject *op, void *closure) {
  (void)closure;
  hrlpy_view v;
  hrlpy_gate_view((hrlpy_lock *)op, &v);
  return PyFloat_FromDouble((double)v.validity_ms / 1000.0);
}

static PyObject *get_token(PyObject *op, void *closure) {
  (void)closure;
  hrlpy_view v;
  hrlpy_gate_view((hrlpy_lock *)op, &v);
  if (v.token[0] == '\0') {
    Py_RETURN_NONE;
  }
  return PyUnicode_FromStringAndSize(v.token, (Py_ssize_t)strlen(v.token));
}

static PyObject *get_fence(PyObject *op, void *closure) {
  (void)closure;
  hrlpy_view v;
  hrlpy_gate_view((hrlpy_lock *)op, &v);
  if (v.fence == 0) {
    Py_RETURN_NONE;
  }
  return PyLong_FromUnsignedLongLong((unsigned long long)v.fence);
}

static PyObject *get_permit(PyObject *op, void *closure) {
  (void)closure;
  hrlpy_view v;
  hrlpy_gate_view((hrlpy_lock *)op, &v);
  if (v.permit == 0) {
    Py_RETURN_NONE;
  }
  return PyLong_FromUnsignedLong(v.permit);
}

static PyObject *get_mode(PyObject *op, void *closure) {
  (void)closure;
  return PyUnicode_FromString(hrl_lock_mode_name(((hrlpy_lock *)op)->mode));
}

static PyObject *get_permits(PyObject *op, void *closure) {
  (void)closure;
  uint32_t permits = ((hrlpy_lock *)op)->permits;
  if (permits == 0) {
    Py_RETURN_NONE;
  }
  return PyLong_FromUnsignedLong(permits);
}

static PyObject *get_fence_key(PyObject *op, void *closure) {
  (void)closure;
  size_t len;
  const void *key = hrl_lock_fence_key(((hrlpy_lock *)op)->lock, &len);
  if (key == NULL) {
    Py_RETURN_NONE;
  }
  return PyBytes_FromStringAndSize(key, (Py_ssize_t)len);
}

static PyObject *get_ttl(PyObject *op, void *closure) {
  (void)closure;
  hrlpy_view v;
  hrlpy_gate_view((hrlpy_lock *)op, &v);
  return PyFloat_FromDouble((double)v.ttl_ms / 1000.0);
}

static PyObject *get_name(PyObject *op, void *closure) {
  (void)closure;
  return Py_NewRef(((hrlpy_lock *)op)->name);
}

static PyObject *get_key(PyObject *op, void *closure) {
  (void)closure;
  size_t len;
  const void *key = hrl_lock_key(((hrlpy_lock *)op)->lock, &len);
  return PyBytes_FromStringAndSize(key, (Py_ssize_t)len);
}

static PyObject *get_client(PyObject *op, void *closure) {
  (void)closure;
  return Py_NewRef((PyObject *)((hrlpy_lock *)op)->client);
}

static PyObject *get_timeout(PyObject *op, void *closure) {
  (void)closure;
  int64_t ms = ((hrlpy_lock *)op)->with_wait_ms;
  if (!((hrlpy_lock *)op)->with_blocking || ms == HRL_WAIT_FOREVER) {
    return PyFloat_FromDouble(-1.0);
  }
  return PyFloat_FromDouble((double)ms / 1000.0);
}

static PyObject *get_blocking(PyObject *op, void *closure) {
  (void)closure;
  return PyBool_FromLong(((hrlpy_lock *)op)->with_blocking);
}

static PyMethodDef lock_methods[] = {
    {"acquire", (PyCFunction)(void (*)(void))lock_acquire,
     METH_FASTCALL | METH_KEYWORDS,
     "acquire(blocking=True, timeout=-1) -> bool\n\n"
     "Acquire the lock, as threading.Lock.acquire() does: blocking=False\n"
     "makes one attempt, timeout (seconds) bounds the wait, -1 waits\n"
     "forever. Returns True when held, False when others held it for the\n"
     "whole wait. Raises hiredlock.ConnectionError when no quorum of\n"
     "masters can be reached."},
    {"release", lock_release, METH_NOARGS,
     "release() -> None\n\n"
     "Release the lock on every master (compare-and-delete). Raises\n"
     "NotOwned when it expired or was taken, or was not held."},
    {"extend", (PyCFunction)(void (*)(void))lock_extend,
     METH_FASTCALL | METH_KEYWORDS,
     "extend(ttl=None) -> None\n\n"
     "Reset the lock's TTL on every master to ttl seconds (default: the\n"
     "lock's ttl). Raises NotOwned when the lock was lost."},
    {"__enter__", lock_enter, METH_NOARGS,
     "__enter__() -> self\n\n"
     "Acquire with the lock's timeout and blocking; raise NotAcquired\n"
     "when others held it for the whole wait."},
    {"__exit__", (PyCFunction)(void (*)(void))lock_exit, METH_FASTCALL,
     "__exit__(exc_type, exc, tb) -> None\n\n"
     "Release the lock; a release that fails raises, unless the block\n"
     "raised already (then the block's exception gets a note)."},
    {"_not_acquired", lock_not_acquired, METH_NOARGS, NULL},
    {"_make", (PyCFunction)(void (*)(void))hrlpy_lock_make,
     METH_FASTCALL | METH_CLASS, NULL},
    {"locked", lock_locked, METH_NOARGS,
     "locked() -> bool\n\n"
     "True while this object holds the lock with validity left. No I/O."},
    /* The sans-I/O protocol, for hiredlock.asyncio (proto.c). */
    {"_wait_ms", (PyCFunction)(void (*)(void))hrlpy_wait_of, METH_FASTCALL,
     NULL},
    {"_begin_acquire", hrlpy_begin_acquire, METH_O, NULL},
    {"_begin_acquire_if_free",
     (PyCFunction)(void (*)(void))hrlpy_begin_acquire_if_free, METH_FASTCALL,
     NULL},
    {"_begin_release", hrlpy_begin_release, METH_NOARGS, NULL},
    {"_begin_extend", hrlpy_begin_extend, METH_O, NULL},
    {"_step", hrlpy_step, METH_NOARGS, NULL},
    {"_fail", (PyCFunction)(void (*)(void))hrlpy_fail, METH_FASTCALL, NULL},
    {"_missed", (PyCFunction)(void (*)(void))hrlpy_missed, METH_FASTCALL, NULL},
    {"_skippable", hrlpy_skippable, METH_O, NULL},
    {"_cancel", hrlpy_cancel, METH_NOARGS, NULL},
    {"_waiter", hrlpy_waiter, METH_NOARGS, NULL},
    {"_notified", hrlpy_notified, METH_O, NULL},
    {"_wake", hrlpy_wake, METH_NOARGS, NULL},
    {"_renew_in", hrlpy_renew_in, METH_NOARGS, NULL},
    {"_renew_begin", hrlpy_renew_begin, METH_NOARGS, NULL},
    {"_renew_end", hrlpy_renew_end, METH_NOARGS, NULL},
    {"_begin_inspect", hrlpy_begin_inspect, METH_NOARGS, NULL},
    {"_inspection", hrlpy_lock_inspection, METH_NOARGS, NULL},
    {"check", lock_check, METH_NOARGS,
     "check() -> None\n\n"
     "Raise LockLost (\"lost: <reason>\") when the hold of this\n"
     "auto-renewed lock was lost; return None otherwise. No I/O."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef lock_getset[] = {
    {"validity", get_validity, NULL,
     "Seconds of validity left (float; 0.0 when not held).", NULL},
    {"token", get_token, NULL,
     "Token of the current or last hold (32 hex chars), None before the "
     "first acquire.",
     NULL},
    {"fence", get_fence, NULL,
     "The fencing token of the current hold of a fenced lock (int), None\n"
     "when the lock is not fenced or holds nothing. Greater than the fence\n"
     "of every grant whose acquire returned before this one began; it stays\n"
     "until the hold ends (release), also past the validity: pass it with\n"
     "every write, and let the resource refuse older ones.",
     NULL},
    {"fence_key", get_fence_key, NULL,
     "The Redis key of a fenced lock's counter (bytes), None when the lock\n"
     "is not fenced. It never expires.",
     NULL},
    {"permit", get_permit, NULL,
     "A semaphore's permit: its number (1 to permits) while held, never\n"
     "that of another permit held at the same time; None otherwise.",
     NULL},
    {"mode", get_mode, NULL,
     "What the object holds: \"lock\" (the mutex), \"read\" or \"write\"\n"
     "(of a read-write lock), \"permit\" (of a semaphore).",
     NULL},
    {"permits", get_permits, NULL,
     "A permit's semaphore's permits (int), None for any other mode.", NULL},
    {"ttl", get_ttl, NULL, "The lock's TTL in seconds (float).", NULL},
    {"name", get_name, NULL, "The lock's name, as given (str or bytes).", NULL},
    {"key", get_key, NULL, "The Redis key: the client's prefix + name.", NULL},
    {"client", get_client, NULL, "The Client this lock uses.", NULL},
    {"timeout", get_timeout, NULL,
     "How long a `with` block waits for the lock (-1.0: forever).", NULL},
    {"blocking", get_blocking, NULL,
     "Whether a `with` block waits at all (False: one attempt).", NULL},
    {"lost", get_lost, NULL,
     "True once the hold of this auto-renewed lock was lost (until the "
     "next acquire).",
     NULL},
    {"auto_renew", get_auto_renew, NULL,
     "Whether the lock is renewed while held (a managed lease).", NULL},
    {"on_lost", get_on_lost, NULL,
     "The callable run with this Lock when its hold is lost, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot lock_slots[] = {
    {Py_tp_doc,
     "Lock(client, name, ttl=30, *, timeout=-1, blocking=True,\n"
     "     auto_renew=None, max_hold=None, on_lost=None, fenced=None,\n"
     "     mode=\"lock\", permits=None)\n\n"
     "A named lock on client's masters; not held until acquired.\n"
     "fenced=True takes a fencing token (fence) with every acquire;\n"
     "None: the client's default. mode \"read\" or \"write\": a hold of\n"
     "the read-write lock name; \"permit\": a permit of the semaphore\n"
     "name with `permits` permits."},
    {Py_tp_new, hrlpy_lock_new},
    {Py_tp_dealloc, lock_dealloc},
    {Py_tp_traverse, lock_traverse},
    {Py_tp_clear, lock_clear},
    {Py_tp_methods, lock_methods},
    {Py_tp_getset, lock_getset},
    {0, NULL},
};

PyType_Spec hrlpy_lock_spec = {
    .name = "hiredlock._core.Lock",
    .basicsize = sizeof(hrlpy_lock),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = lock_slots,
};
