/* The exception hierarchy and the one table from core status to exception.
 * Messages are the core's (hrl_format_error), so Python reads like Lua. */
#include "hrlpy.h"

#include <stdarg.h>
#include <stdio.h>

static PyObject *new_error(PyObject *module, const char *name, const char *doc,
                           PyObject *bases) {
  char qualified[64];
  snprintf(qualified, sizeof qualified, "hiredlock.%s", name);
  PyObject *cls = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
  if (cls == NULL) {
    return NULL;
  }
  Py_INCREF(cls); /* one reference for the module, one for the state */
  if (PyModule_AddObject(module, name, cls) < 0) {
    Py_DECREF(cls);
    Py_DECREF(cls);
    return NULL;
  }
  return cls;
}

int hrlpy_errors_init(PyObject *module, hrlpy_state *st) {
  st->lock_error =
      new_error(module, "LockError",
                "Base class of every runtime failure hiredlock reports.",
                PyExc_Exception);
  if (st->lock_error == NULL) {
    return -1;
  }
  PyObject *bases = PyTuple_Pack(2, st->lock_error, PyExc_TimeoutError);
  if (bases == NULL) {
    return -1;
  }
  st->not_acquired =
      new_error(module, "NotAcquired",
                "The lock could not be acquired in time (a `with` block or a "
                "synchronized function).",
                bases);
  Py_DECREF(bases);
  if (st->not_acquired == NULL) {
    return -1;
  }
  st->not_owned = new_error(module, "NotOwned",
                            "release() or extend() found the lock no longer "
                            "ours: it expired, was taken, or was never held.",
                            st->lock_error);
  if (st->not_owned == NULL) {
    return -1;
  }
  st->lock_lost = new_error(
      module, "LockLost",
      "The hold of an auto-renewed lock was lost: a renewal found the key no "
      "longer ours, no renewal got through before the validity ran out, or "
      "max_hold was reached. A NotOwned, so code that handles NotOwned "
      "handles it too.",
      st->not_owned);
  if (st->lock_lost == NULL) {
    return -1;
  }
  bases = PyTuple_Pack(2, st->lock_error, PyExc_ConnectionError);
  if (bases == NULL) {
    return -1;
  }
  st->connection_error = new_error(
      module, "ConnectionError",
      "Fewer than a quorum of masters could be reached or authenticated.",
      bases);
  Py_DECREF(bases);
  if (st->connection_error == NULL) {
    return -1;
  }
  bases = PyTuple_Pack(2, st->lock_error, PyExc_PermissionError);
  if (bases == NULL) {
    return -1;
  }
  st->permission_denied = new_error(
      module, "PermissionDenied",
      "The masters' ACL refused a command the lock needs, or its keys "
      "(NOPERM): the message names the command and keys. Retrying does not "
      "help; the ACL rules must change (docs/DEPLOYMENTS.md, ACL users).",
      bases);
  Py_DECREF(bases);
  return st->permission_denied == NULL ? -1 : 0;
}

PyObject *hrlpy_raise_status(hrlpy_state *st, hrl_status status,
                             const char *detail) {
  char msg[HRL_DETAIL_MAX + 64];
  hrl_format_error(status, detail, msg, sizeof msg);
  PyObject *cls;
  switch (status) {
  case HRL_EINVAL:
    cls = PyExc_ValueError;
    break;
  case HRL_ENOMEM:
    return PyErr_NoMemory();
  case HRL_ETIMEOUT:
    cls = st->not_acquired;
    break;
  case HRL_ENOTOWNED:
  case HRL_ENOTHELD:
    cls = st->not_owned;
    break;
  case HRL_ELOST:
    cls = st->lock_lost;
    break;
  case HRL_ECONNECT:
  case HRL_EAUTH:
    cls = st->connection_error;
    break;
  case HRL_EPERM:
    cls = st->permission_denied;
    break;
  case HRL_ECANCELLED:
    /* The cancel callback stopped because a signal handler raised: that
     * exception (KeyboardInterrupt) is already set and is the one to see. */
    if (PyErr_Occurred()) {
      return NULL;
    }
    cls = st->lock_error;
    break;
  default: /* ESERVER, EPROTOCOL, EHELD, ESYSTEM */
    cls = st->lock_error;
    break;
  }
  /* The module state is cleared only at interpreter teardown. */
  PyErr_SetString(cls != NULL ? cls : PyExc_RuntimeError, msg);
  return NULL;
}

PyObject *hrlpy_raise_invalid(const char *fmt, ...) {
  char detail[HRL_DETAIL_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  char msg[HRL_DETAIL_MAX + 64];
  hrl_format_error(HRL_EINVAL, detail, msg, sizeof msg);
  PyErr_SetString(PyExc_ValueError, msg);
  return NULL;
}
