/*
 * The core's sans-I/O protocol for Python drivers (hiredlock.asyncio): a
 * Lock's operation begun and stepped, and _core.Stream, one connection's
 * rules (hrl_stream). The driver in Python only opens connections, moves
 * bytes and waits; what to send, what a reply means, quorum, validity,
 * cleanup, retries, late masters and owed replies are the core's. Every
 * call is quick and does no I/O, so they keep the GIL.
 *
 *   lock._wait_ms(blocking, timeout)   -> the wait in ms (-1: forever),
 *                                         checked as the sync acquire does
 *   lock._begin_acquire(wait_ms) / _begin_release() / _begin_extend(ttl)
 *                                      -> None, or raises as the sync call
 *   lock._begin_acquire_if_free(blocking, timeout)
 *                                      -> wait_ms, the acquire begun; None
 *                                         when this object holds the lock
 *                                         (nothing begun); or raises as
 *                                         the sync acquire
 *   lock._step()                       -> ("round", timeout_ms)
 *                                         | ("wait", ms) | ("done", None)
 *                                         or raises the operation's error
 *   lock._waiter()                     -> the token (str) hand-offs to this
 *                                         waiting acquire carry, or None
 *   lock._notified(i)                  master i handed the lock to it
 *   lock._wake()                       try again now (subscription up)
 *   lock._fail(i, message)             master i unreachable (I/O error)
 *   lock._missed(i, message)           master i missed the deadline before
 *                                      its command went out (connecting)
 *   lock._skippable(i)                 -> bool (hrl_proto_skippable)
 *   lock._cancel()                     ends an acquire between attempts
 *   lock._renew_in()                   -> seconds until the lease's next
 *                                         renewal is due | None
 *   lock._renew_begin()                -> ("round", twin) | ("lost", why)
 *                                         | ("wait", None) | ("none", None):
 *                                         run twin's extend to its end, then
 *   lock._renew_end()                  -> ("renewed" | "cancelled", None)
 *                                         | ("failed" | "lost", why)
 *   Stream().start(lock, i, fresh)     -> bytes | None (held back: the
 *                                         connection owes too much)
 *   stream.drain(data)                 -> bool: late replies between rounds
 *   stream.feed(lock, i, data)         -> (action, bytes | None)
 *   stream.expire(lock, i, message)    -> (action, bytes | None)
 *   stream.skip(lock, i)               -> action
 *   stream.replied                     -> bool
 *   stream.owed                        -> int: replies of earlier rounds'
 *                                         commands still to come
 * Actions are the ints STREAM_MORE, STREAM_SEND, STREAM_DONE, STREAM_CLOSE.
 */
#include "hrlpy.h"

#include <string.h>

#include "hiredlock/proto.h"

/* The status of a begin that failed, raised as the sync call would. */
static PyObject *begun(hrlpy_lock *self, hrl_status st) {
  if (st != HRL_OK) {
    return hrlpy_raise_status(self->state, st, hrl_lock_error(self->lock));
  }
  Py_RETURN_NONE;
}

PyObject *hrlpy_wait_of(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
  (void)op;
  if (nargs != 2) {
    return PyErr_Format(PyExc_TypeError, "_wait_ms(blocking, timeout)");
  }
  int blocking = PyObject_IsTrue(args[0]);
  int64_t wait_ms;
  if (blocking < 0 || hrlpy_wait_ms(args[1], blocking, &wait_ms) < 0) {
    return NULL;
  }
  return PyLong_FromLongLong(wait_ms);
}

PyObject *hrlpy_begin_acquire(PyObject *op, PyObject *arg) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  long long wait_ms = PyLong_AsLongLong(arg);
  if (wait_ms == -1 && PyErr_Occurred()) {
    return NULL;
  }
  return begun(
      self, hrl_proto_begin(self->lock, HRL_OP_ACQUIRE, wait_ms, hrl_now_us()));
}

/* The usual asyncio acquire's three calls in one (_wait_ms(), locked(),
 * _begin_acquire()): each binding call is a share of the cycle, and
 * locked() copies the whole view where only held is asked. */
PyObject *hrlpy_begin_acquire_if_free(PyObject *op, PyObject *const *args,
                                      Py_ssize_t nargs) {
  if (nargs != 2) {
    return PyErr_Format(PyExc_TypeError,
                        "_begin_acquire_if_free(blocking, timeout)");
  }
  hrlpy_lock *self = (hrlpy_lock *)op;
  int blocking = PyObject_IsTrue(args[0]);
  int64_t wait_ms;
  if (blocking < 0 || hrlpy_wait_ms(args[1], blocking, &wait_ms) < 0) {
    return NULL;
  }
  if (hrlpy_gate_held(self)) {
    Py_RETURN_NONE;
  }
  hrl_status st =
      hrl_proto_begin(self->lock, HRL_OP_ACQUIRE, wait_ms, hrl_now_us());
  if (st != HRL_OK) {
    return begun(self, st);
  }
  return PyLong_FromLongLong(wait_ms);
}

PyObject *hrlpy_begin_release(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_lock *self = (hrlpy_lock *)op;
  return begun(self,
               hrl_proto_begin(self->lock, HRL_OP_RELEASE, 0, hrl_now_us()));
}

PyObject *hrlpy_begin_extend(PyObject *op, PyObject *ttl) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  int64_t ttl_ms = 0; /* the lock's own TTL */
  if (ttl != Py_None && hrlpy_ttl_ms(ttl, self->client->client, &ttl_ms) < 0) {
    return NULL;
  }
  return begun(
      self, hrl_proto_begin(self->lock, HRL_OP_EXTEND, ttl_ms, hrl_now_us()));
}

/* (first, second) as a 2-tuple, taking both references (no Py_BuildValue:
 * a call per step and per reply); either NULL (a failed conversion) gives
 * NULL, with the other released. */
static PyObject *pair_of(PyObject *first, PyObject *second) {
  PyObject *pair = first == NULL || second == NULL ? NULL : PyTuple_New(2);
  if (pair == NULL) {
    Py_XDECREF(first);
    Py_XDECREF(second);
    return NULL;
  }
  PyTuple_SET_ITEM(pair, 0, first);
  PyTuple_SET_ITEM(pair, 1, second);
  return pair;
}

int hrlpy_proto_init(hrlpy_state *st) {
  st->step_round = PyUnicode_InternFromString("round");
  st->step_wait = PyUnicode_InternFromString("wait");
  PyObject *done = PyUnicode_InternFromString("done");
  if (st->step_round == NULL || st->step_wait == NULL || done == NULL) {
    Py_XDECREF(done);
    return -1;
  }
  st->step_done_true = pair_of(Py_NewRef(done), Py_NewRef(Py_True));
  st->step_done_false = pair_of(done, Py_NewRef(Py_False));
  return st->step_done_true == NULL || st->step_done_false == NULL ? -1 : 0;
}

/* (kind, value): kind one of the state's interned kinds (borrowed), value
 * a new reference (stolen). */
static PyObject *kind_and(PyObject *kind, PyObject *value) {
  if (value == NULL) {
    return NULL;
  }
  return pair_of(Py_NewRef(kind), value);
}

PyObject *hrlpy_step(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_lock *self = (hrlpy_lock *)op;
  hrlpy_state *st = self->state;
  hrl_step_info info;
  switch (hrl_proto_step(self->lock, hrl_now_us(), &info)) {
  case HRL_STEP_ROUND:
    return kind_and(st->step_round, PyLong_FromUnsignedLong(info.timeout_ms));
  case HRL_STEP_WAIT:
    return kind_and(st->step_wait, PyLong_FromUnsignedLong(info.wait_ms));
  case HRL_STEP_DONE:
  default:
    if (info.status == HRL_OK) {
      return Py_NewRef(st->step_done_true);
    }
    if (info.status == HRL_ETIMEOUT) {
      return Py_NewRef(st->step_done_false);
    }
    return hrlpy_raise_status(self->state, info.status,
                              hrl_lock_error(self->lock));
  }
}

/* A master index given by the driver. */
static int master_index(hrlpy_lock *self, PyObject *obj, size_t *i) {
  Py_ssize_t v = PyLong_AsSsize_t(obj);
  if (v == -1 && PyErr_Occurred()) {
    return -1;
  }
  if (v < 0 || (size_t)v >= hrl_client_masters(self->client->client)) {
    PyErr_Format(PyExc_IndexError, "no master %zd", v);
    return -1;
  }
  *i = (size_t)v;
  return 0;
}

/* The (i, message: str) arguments of _fail and _missed (named in how). */
static int master_and_message(hrlpy_lock *self, PyObject *const *args,
                              Py_ssize_t nargs, const char *how, size_t *i,
                              const char **msg) {
  if (nargs != 2 || !PyUnicode_Check(args[1])) {
    PyErr_Format(PyExc_TypeError, "%s(i, message: str)", how);
    return -1;
  }
  if (master_index(self, args[0], i) < 0) {
    return -1;
  }
  *msg = PyUnicode_AsUTF8(args[1]);
  return *msg == NULL ? -1 : 0;
}

PyObject *hrlpy_fail(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  size_t i;
  const char *msg;
  if (master_and_message(self, args, nargs, "_fail", &i, &msg) < 0) {
    return NULL;
  }
  hrl_proto_fail(self->lock, i, HRL_NODE_UNREACHABLE, msg);
  Py_RETURN_NONE;
}

PyObject *hrlpy_cancel(PyObject *op, PyObject *unused) {
  (void)unused;
  hrl_proto_cancel(((hrlpy_lock *)op)->lock);
  Py_RETURN_NONE;
}

PyObject *hrlpy_missed(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  size_t i;
  const char *msg;
  if (master_and_message(self, args, nargs, "_missed", &i, &msg) < 0) {
    return NULL;
  }
  hrl_proto_missed(self->lock, i, msg);
  Py_RETURN_NONE;
}

PyObject *hrlpy_waiter(PyObject *op, PyObject *unused) {
  (void)unused;
  const char *token = hrl_proto_waiter(((hrlpy_lock *)op)->lock);
  if (token == NULL) {
    Py_RETURN_NONE;
  }
  return PyUnicode_FromStringAndSize(token, HRL_TOKEN_LEN);
}

PyObject *hrlpy_notified(PyObject *op, PyObject *arg) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  size_t i;
  if (master_index(self, arg, &i) < 0) {
    return NULL;
  }
  hrl_proto_notified(self->lock, i);
  Py_RETURN_NONE;
}

PyObject *hrlpy_wake(PyObject *op, PyObject *unused) {
  (void)unused;
  hrl_proto_wake(((hrlpy_lock *)op)->lock);
  Py_RETURN_NONE;
}

PyObject *hrlpy_skippable(PyObject *op, PyObject *arg) {
  hrlpy_lock *self = (hrlpy_lock *)op;
  size_t i;
  if (master_index(self, arg, &i) < 0) {
    return NULL;
  }
  return PyBool_FromLong(hrl_proto_skippable(self->lock, i));
}

/* --- leases: the renewals a Python driver runs (hrl_proto_renew_*) ------ */

PyObject *hrlpy_renew_in(PyObject *op, PyObject *unused) {
  (void)unused;
  int64_t due = hrl_proto_renew_due(((hrlpy_lock *)op)->lock);
  if (due == INT64_MAX) {
    Py_RETURN_NONE;
  }
  int64_t in_us = due - hrl_now_us();
  return PyFloat_FromDouble(in_us > 0 ? (double)in_us / 1e6 : 0.0);
}

/* A Lock object over the lease's twin, for the driver loop. */
static PyObject *twin_of(hrlpy_lock *lease, hrl_lock *twin) {
  PyTypeObject *type = lease->state->lock_type;
  hrlpy_lock *t = (hrlpy_lock *)type->tp_alloc(type, 0);
  if (t == NULL) {
    return NULL;
  }
  t->state = lease->state;
  t->lock = twin;
  t->client = (hrlpy_client *)Py_NewRef(lease->client);
  t->name = Py_NewRef(lease->name);
  t->lease_of = Py_NewRef(lease);
  t->lease = true;
  return (PyObject *)t;
}

static PyObject *lost_pair(hrlpy_lock *self) {
  char reason[HRL_DETAIL_MAX];
  hrl_lock_lost(self->lock, reason, sizeof reason);
  return Py_BuildValue("(ss)", "lost", reason);
}

PyObject *hrlpy_renew_begin(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_lock *self = (hrlpy_lock *)op;
  hrl_lock *twin = NULL;
  switch (hrl_proto_renew_begin(self->lock, hrl_now_us(), &twin)) {
  case HRL_RENEW_ROUND: {
    PyObject *t = twin_of(self, twin);
    return t == NULL ? NULL : Py_BuildValue("(sN)", "round", t);
  }
  case HRL_RENEW_LOST:
    return lost_pair(self);
  case HRL_RENEW_WAIT:
    return Py_BuildValue("(sO)", "wait", Py_None);
  case HRL_RENEW_NONE:
  default:
    return Py_BuildValue("(sO)", "none", Py_None);
  }
}

PyObject *hrlpy_renew_end(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_lock *self = (hrlpy_lock *)op;
  switch (hrl_proto_renew_end(self->lock, hrl_now_us())) {
  case HRL_OK:
    return Py_BuildValue("(sO)", "renewed", Py_None);
  case HRL_ELOST:
    return lost_pair(self);
  case HRL_ECANCELLED:
    return Py_BuildValue("(sO)", "cancelled", Py_None);
  default:
    return Py_BuildValue("(ss)", "failed", hrl_lock_error(self->lock));
  }
}

/* --- _core.Stream ------------------------------------------------------ */

typedef struct hrlpy_stream {
  PyObject ob_base;
  hrlpy_state *state;
  hrl_stream *stream;
} hrlpy_stream;

static PyObject *stream_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
  if (PyTuple_GET_SIZE(args) != 0 || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
    return PyErr_Format(PyExc_TypeError, "Stream() takes no arguments");
  }
  hrlpy_state *st = hrlpy_state_of_type(type);
  if (st == NULL) {
    return NULL;
  }
  hrlpy_stream *self = (hrlpy_stream *)type->tp_alloc(type, 0);
  if (self == NULL) {
    return NULL;
  }
  self->state = st;
  self->stream = hrl_stream_new();
  if (self->stream == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

static void stream_dealloc(PyObject *op) {
  PyTypeObject *type = Py_TYPE(op);
  hrl_stream_free(((hrlpy_stream *)op)->stream);
  type->tp_free(op);
  Py_DECREF(type);
}

/* The lock and master index arguments every stream method starts with. */
static int lock_and_index(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                          Py_ssize_t want, hrlpy_lock **lock, size_t *i) {
  if (nargs != want) {
    PyErr_Format(PyExc_TypeError, "expected %zd arguments, got %zd", want,
                 nargs);
    return -1;
  }
  if (!PyObject_TypeCheck(args[0], ((hrlpy_stream *)op)->state->lock_type)) {
    PyErr_Format(PyExc_TypeError, "expected a hiredlock Lock, not %.100s",
                 Py_TYPE(args[0])->tp_name);
    return -1;
  }
  *lock = (hrlpy_lock *)args[0];
  return master_index(*lock, args[1], i);
}

static PyObject *bytes_or_none(const char *bytes, size_t len) {
  if (bytes == NULL) {
    Py_RETURN_NONE;
  }
  return PyBytes_FromStringAndSize(bytes, (Py_ssize_t)len);
}

static PyObject *action_and_bytes(hrl_stream_action a, const char *bytes,
                                  size_t len) {
  PyObject *out = bytes_or_none(bytes, len);
  if (out == NULL) {
    return NULL;
  }
  return pair_of(PyLong_FromLong((long)a), out);
}

static PyObject *stream_start(PyObject *op, PyObject *const *args,
                              Py_ssize_t nargs) {
  hrlpy_lock *lock;
  size_t i;
  if (lock_and_index(op, args, nargs, 3, &lock, &i) < 0) {
    return NULL;
  }
  int fresh = PyObject_IsTrue(args[2]);
  if (fresh < 0) {
    return NULL;
  }
  size_t len = 0;
  const char *bytes = hrl_stream_start(((hrlpy_stream *)op)->stream, lock->lock,
                                       i, fresh, &len);
  if (bytes == NULL && hrl_proto_command_replies(lock->lock, i) == 0) {
    return PyErr_Format(PyExc_RuntimeError, "no round is out");
  }
  return bytes_or_none(bytes, len); /* None: held back, master i is done */
}

/* Stream.drain(data) -> bool: late replies that came between rounds. */
static PyObject *stream_drain(PyObject *op, PyObject *arg) {
  Py_buffer data;
  if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) {
    return NULL;
  }
  bool ok = hrl_stream_drain(((hrlpy_stream *)op)->stream, data.buf,
                             (size_t)data.len);
  PyBuffer_Release(&data);
  return PyBool_FromLong(ok);
}

static PyObject *stream_feed(PyObject *op, PyObject *const *args,
                             Py_ssize_t nargs) {
  hrlpy_lock *lock;
  size_t i;
  if (lock_and_index(op, args, nargs, 3, &lock, &i) < 0) {
    return NULL;
  }
  Py_buffer data;
  if (PyObject_GetBuffer(args[2], &data, PyBUF_SIMPLE) < 0) {
    return NULL;
  }
  const char *out = NULL;
  size_t out_len = 0;
  hrl_stream_action a =
      hrl_stream_feed(((hrlpy_stream *)op)->stream, lock->lock, i, data.buf,
                      (size_t)data.len, &out, &out_len);
  PyBuffer_Release(&data);
  return action_and_bytes(a, out, out_len);
}

static PyObject *stream_expire(PyObject *op, PyObject *const *args,
                               Py_ssize_t nargs) {
  hrlpy_lock *lock;
  size_t i;
  if (lock_and_index(op, args, nargs, 3, &lock, &i) < 0) {
    return NULL;
  }
  const char *msg = PyUnicode_Check(args[2]) ? PyUnicode_AsUTF8(args[2]) : NULL;
  if (msg == NULL) {
    return PyErr_Occurred()
               ? NULL
               : PyErr_Format(PyExc_TypeError, "message must be str");
  }
  const char *out = NULL;
  size_t out_len = 0;
  hrl_stream_action a = hrl_stream_expire(((hrlpy_stream *)op)->stream,
                                          lock->lock, i, msg, &out, &out_len);
  return action_and_bytes(a, out, out_len);
}

static PyObject *stream_skip(PyObject *op, PyObject *const *args,
                             Py_ssize_t nargs) {
  hrlpy_lock *lock;
  size_t i;
  if (lock_and_index(op, args, nargs, 2, &lock, &i) < 0) {
    return NULL;
  }
  return PyLong_FromLong(
      (long)hrl_stream_skip(((hrlpy_stream *)op)->stream, lock->lock, i));
}

static PyObject *stream_replied(PyObject *op, void *closure) {
  (void)closure;
  return PyBool_FromLong(hrl_stream_replied(((hrlpy_stream *)op)->stream));
}

static PyObject *stream_owed(PyObject *op, void *closure) {
  (void)closure;
  return PyLong_FromUnsignedLong(
      (unsigned long)hrl_stream_owed(((hrlpy_stream *)op)->stream));
}

static PyMethodDef stream_methods[] = {
    {"start", (PyCFunction)(void (*)(void))stream_start, METH_FASTCALL,
     "start(lock, i, fresh) -> bytes to write for master i's part of the "
     "round, or None when held back (master i is done for the round)"},
    {"drain", stream_drain, METH_O,
     "drain(data) -> bool: late replies that came between rounds, dropped; "
     "False: close the connection"},
    {"feed", (PyCFunction)(void (*)(void))stream_feed, METH_FASTCALL,
     "feed(lock, i, data) -> (action, bytes to write or None)"},
    {"expire", (PyCFunction)(void (*)(void))stream_expire, METH_FASTCALL,
     "expire(lock, i, message) -> (action, bytes to write or None)"},
    {"skip", (PyCFunction)(void (*)(void))stream_skip, METH_FASTCALL,
     "skip(lock, i) -> action: stop waiting for a late master"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"replied", stream_replied, NULL,
     "Whether any reply arrived on the stream in this round.", NULL},
    {"owed", stream_owed, NULL,
     "Replies to earlier rounds' commands still to come (the connection "
     "missed a deadline and was kept).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot stream_slots[] = {
    {Py_tp_doc, "Stream()\n\nOne connection's part of the protocol, for the "
                "asyncio driver (hrl_stream)."},
    {Py_tp_new, stream_new},
    {Py_tp_dealloc, stream_dealloc},
    {Py_tp_methods, stream_methods},
    {Py_tp_getset, stream_getset},
    {0, NULL},
};

PyType_Spec hrlpy_stream_spec = {
    .name = "hiredlock._core.Stream",
    .basicsize = sizeof(hrlpy_stream),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = stream_slots,
};

int hrlpy_proto_constants(PyObject *module) {
  return PyModule_AddIntConstant(module, "STREAM_MORE", HRL_STREAM_MORE) < 0 ||
                 PyModule_AddIntConstant(module, "STREAM_SEND",
                                         HRL_STREAM_SEND) < 0 ||
                 PyModule_AddIntConstant(module, "STREAM_DONE",
                                         HRL_STREAM_DONE) < 0 ||
                 PyModule_AddIntConstant(module, "STREAM_CLOSE",
                                         HRL_STREAM_CLOSE) < 0
             ? -1
             : 0;
}
