/*
 * How a hiredlock._core.Lock is made: Lock(...) with keywords, Lock._make
 * (every argument by position, for hiredlock.lock()) and Client._lock
 * (Client.lock itself, in C: a `with client.lock(name):` makes a Lock per
 * block, and a Python frame with ten keyword defaults cost more than the
 * Lock). All three check and convert their arguments the same way, with
 * the same messages, through lock_build; the options themselves are the
 * core's table.
 */
#include "hrlpy.h"

#include <string.h>

/* Options a Lock takes by keyword besides its own arguments: the lock
 * options of the core's table (the TTL is an argument of its own). */
static bool lock_option(const hrl_option *opt) {
  return (opt->scope == HRL_SCOPE_LOCK ||
          opt->scope == HRL_SCOPE_LOCK_DEFAULT) &&
         strcmp(opt->name, "ttl") != 0;
}

/* Splits kwds into the arguments Lock() parses itself and the lock options
 * (new references in *own and *options, either may be NULL). */
static int split_kwds(PyObject *kwds, PyObject **own, PyObject **options) {
  static const char *const names[] = {"client",   "name",    "ttl",  "timeout",
                                      "blocking", "on_lost", "mode", "permits"};
  *own = NULL;
  *options = NULL;
  if (kwds == NULL || PyDict_GET_SIZE(kwds) == 0) {
    return 0;
  }
  *own = PyDict_New();
  *options = PyDict_Copy(kwds);
  if (*own == NULL || *options == NULL) {
    return -1;
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    PyObject *v = PyDict_GetItemString(*options, names[i]);
    if (v != NULL && (PyDict_SetItemString(*own, names[i], v) < 0 ||
                      PyDict_DelItemString(*options, names[i]) < 0)) {
      return -1;
    }
  }
  return 0;
}

/* The most options the core's table may hold: the lock options given are
 * gathered by their index in it. */
#define OPTIONS_MAX 64

/* One lock option's Python value (None: the client's default) into lo,
 * converted and checked by the core's table. */
static int apply_lock_option(PyObject *value, const hrl_option *opt,
                             hrl_lock_options *lo) {
  if (value == NULL || value == Py_None) {
    return 0;
  }
  double number;
  const char *bytes;
  Py_ssize_t len;
  char detail[HRL_DETAIL_MAX];
  if (hrlpy_option_value(value, opt, &number, &bytes, &len) < 0) {
    return -1;
  }
  hrl_status st =
      opt->kind == HRL_OPTION_LABEL
          ? hrl_lock_options_set_text(lo, opt, bytes, (size_t)len, detail,
                                      sizeof detail)
          : hrl_lock_options_set(lo, opt, number, detail, sizeof detail);
  if (st != HRL_OK) {
    hrlpy_raise_invalid("%s", detail);
    return -1;
  }
  return 0;
}

/* The lock options given into lo, in the table's order (the first wrong
 * one is reported): values[k] is for the table's entry index[k], NULL or
 * None for the client's default; index ascends. */
static int apply_lock_options(const uint8_t *index, PyObject *const *values,
                              size_t n, hrl_lock_options *lo) {
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  for (size_t k = 0; k < n; k++) {
    if (apply_lock_option(values[k], &table[index[k]], lo) < 0) {
      return -1;
    }
  }
  return 0;
}

/* The lock options of a keyword dict into values (by table index). */
static int gather_lock_options(PyObject *options, PyObject **values) {
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  if (count > OPTIONS_MAX) {
    PyErr_SetString(PyExc_SystemError, "hiredlock: option table too large");
    return -1;
  }
  if (options == NULL) {
    return 0;
  }
  if (hrlpy_check_option_keys(options, "Lock", lock_option) < 0) {
    return -1;
  }
  for (size_t i = 0; i < count; i++) {
    values[i] = lock_option(&table[i])
                    ? PyDict_GetItemString(options, table[i].name)
                    : NULL;
  }
  return 0;
}

/* mode ("lock", "read", "write", "permit") and permits (an int, for a
 * permit alone) into *mode_out and *permits_out, checked by the core. */
static int parse_mode(PyObject *mode, PyObject *permits,
                      hrl_lock_mode *mode_out, uint32_t *permits_out) {
  char detail[HRL_DETAIL_MAX];
  *mode_out = HRL_MODE_LOCK;
  *permits_out = 0;
  if (mode != NULL && mode != Py_None) {
    if (!PyUnicode_Check(mode)) {
      PyErr_Format(PyExc_TypeError, "mode must be str, not %.100s",
                   Py_TYPE(mode)->tp_name);
      return -1;
    }
    Py_ssize_t len;
    const char *text = PyUnicode_AsUTF8AndSize(mode, &len);
    if (text == NULL) {
      return -1;
    }
    if (hrl_lock_mode_parse(text, (size_t)len, mode_out, detail,
                            sizeof detail) != HRL_OK) {
      hrlpy_raise_invalid("%s", detail);
      return -1;
    }
  }
  if (permits != NULL && permits != Py_None) {
    if (!PyLong_Check(permits) || PyBool_Check(permits)) {
      PyErr_Format(PyExc_TypeError, "permits must be int, not %.100s",
                   Py_TYPE(permits)->tp_name);
      return -1;
    }
    double n = PyLong_AsDouble(permits);
    if (n == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      n = -1.0; /* too large for a double: out of range all the same */
    }
    if (hrl_lock_permits_parse(n, permits_out, detail, sizeof detail) !=
        HRL_OK) {
      hrlpy_raise_invalid("%s", detail);
      return -1;
    }
  }
  if (hrl_lock_mode_check(*mode_out, *permits_out, detail, sizeof detail) !=
      HRL_OK) {
    hrlpy_raise_invalid("%s", detail);
    return -1;
  }
  return 0;
}

/* A Lock's own arguments (those not in the core's option table). */
typedef struct lock_args {
  PyObject *client, *name, *ttl, *timeout, *on_lost, *mode, *permits;
  int blocking;
} lock_args;

/* Makes the Lock of type from its arguments and its lock options
 * (values[k] for the core table's entry index[k], as apply_lock_options
 * takes them). */
static PyObject *lock_build(PyTypeObject *type, const lock_args *a,
                            const uint8_t *index, PyObject *const *values,
                            size_t n) {
  hrl_lock_mode lock_mode = HRL_MODE_LOCK;
  uint32_t lock_permits = 0;
  PyObject *on_lost = a->on_lost;
  if (on_lost != Py_None && !PyCallable_Check(on_lost)) {
    return PyErr_Format(PyExc_TypeError,
                        "on_lost must be callable or None, not %.100s",
                        Py_TYPE(on_lost)->tp_name);
  }
  hrlpy_state *st = hrlpy_state_of_type(type);
  if (st == NULL) {
    return NULL;
  }
  PyObject *client = a->client;
  if (!PyObject_TypeCheck(client, st->client_type)) {
    return PyErr_Format(PyExc_TypeError,
                        "client must be a hiredlock.Client, not %.100s",
                        Py_TYPE(client)->tp_name);
  }
  hrl_client *core_client = ((hrlpy_client *)client)->client;
  const char *data;
  Py_ssize_t len;
  if (hrlpy_bytes_view(a->name, "name", &data, &len) < 0) {
    return NULL;
  }
  hrl_lock_options lo;
  hrl_lock_options_init(core_client, &lo);
  lo.ttl_ms = (uint32_t)st->ttl->def;
  int64_t ttl_ms, wait_ms;
  if (a->ttl != NULL) {
    if (hrlpy_ttl_ms(a->ttl, core_client, &ttl_ms) < 0) {
      return NULL;
    }
    lo.ttl_ms = (uint32_t)ttl_ms;
  }
  if (hrlpy_wait_ms(a->timeout, a->blocking, &wait_ms) < 0 ||
      apply_lock_options(index, values, n, &lo) < 0 ||
      parse_mode(a->mode, a->permits, &lock_mode, &lock_permits) < 0) {
    return NULL;
  }
  if (on_lost != Py_None && !lo.auto_renew) {
    return hrlpy_raise_invalid("on_lost needs auto_renew=True");
  }
  hrlpy_lock *self = (hrlpy_lock *)type->tp_alloc(type, 0);
  if (self == NULL) {
    return NULL;
  }
  self->state = st;
  self->with_wait_ms = wait_ms;
  self->with_blocking = a->blocking;
  if (hrlpy_gate_init(self) < 0) {
    Py_DECREF(self);
    return NULL;
  }
  char detail[HRL_DETAIL_MAX];
  hrl_status rc =
      hrl_lock_new_mode(core_client, data, (size_t)len, &lo, lock_mode,
                        lock_permits, &self->lock, detail, sizeof detail);
  if (rc != HRL_OK) {
    Py_DECREF(self);
    return hrlpy_raise_status(st, rc, detail);
  }
  self->client = (hrlpy_client *)Py_NewRef(client);
  self->name = Py_NewRef(a->name);
  self->ttl_ms = lo.ttl_ms;
  self->lease = lo.auto_renew;
  self->mode = lock_mode;
  self->permits = lock_permits;
  if (on_lost != Py_None) {
    self->on_lost = Py_NewRef(on_lost);
    hrlpy_lock_watch(self);
  }
  hrlpy_link_add(&st->locks, &self->link);
  return (PyObject *)self;
}

static PyObject *lock_make(PyTypeObject *type, PyObject *args, PyObject *kwds,
                           PyObject *options) {
  static char *kwlist[] = {"client",  "name", "ttl",     "timeout", "blocking",
                           "on_lost", "mode", "permits", NULL};
  lock_args a = {.on_lost = Py_None, .blocking = 1};
  if (!PyArg_ParseTupleAndKeywords(
          args, kwds, "OO|O$OpOOO:Lock", kwlist, &a.client, &a.name, &a.ttl,
          &a.timeout, &a.blocking, &a.on_lost, &a.mode, &a.permits)) {
    return NULL;
  }
  PyObject *values[OPTIONS_MAX] = {NULL};
  if (gather_lock_options(options, values) < 0) {
    return NULL;
  }
  size_t count;
  hrl_options_table(&count);
  uint8_t index[OPTIONS_MAX];
  for (size_t i = 0; i < count; i++) {
    index[i] = (uint8_t)i;
  }
  return lock_build(type, &a, index, values, count);
}

/* The options Client.lock and Lock._make take besides client, name, ttl,
 * timeout, blocking and on_lost, in their order; their indices in the
 * core's table are looked up once, at import (hrlpy_make_options_init). */
static const char *const make_options[HRLPY_MAKE_OPTIONS] = {
    "auto_renew", "max_hold", "sync_replicas", "sync_aof", "fenced", "owner",
};

int hrlpy_make_options_init(hrlpy_state *st) {
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  for (size_t i = 0; i < HRLPY_MAKE_OPTIONS; i++) {
    const hrl_option *opt = hrl_option_find(make_options[i]);
    if (opt == NULL || (size_t)(opt - table) >= count ||
        (size_t)(opt - table) >= OPTIONS_MAX) {
      PyErr_Format(PyExc_SystemError, "hiredlock: no option %s",
                   make_options[i]);
      return -1;
    }
    st->make_index[i] = (uint8_t)(opt - table);
    st->make_arg[i] = (uint8_t)i;
  }
  /* Sorted by table index (a handful: insertion sort), so that they are
   * applied, and the first wrong one reported, in the table's order as
   * Lock() does. */
  for (size_t i = 1; i < HRLPY_MAKE_OPTIONS; i++) {
    for (size_t j = i; j > 0 && st->make_index[j - 1] > st->make_index[j];
         j--) {
      uint8_t t = st->make_index[j];
      st->make_index[j] = st->make_index[j - 1];
      st->make_index[j - 1] = t;
      t = st->make_arg[j];
      st->make_arg[j] = st->make_arg[j - 1];
      st->make_arg[j - 1] = t;
    }
  }
  return 0;
}

/* The Lock of type from client and the arguments after it, in _make's
 * order (name, ttl, timeout, blocking, on_lost, then make_options); NULL
 * is an argument not given (None is "the client's default" for the
 * options). */
static PyObject *make_from(PyTypeObject *type, hrlpy_state *st,
                           PyObject *client, PyObject *const *args) {
  lock_args a = {.client = client,
                 .name = args[0],
                 .ttl = args[1],
                 .timeout = args[2],
                 .on_lost = args[4] != NULL ? args[4] : Py_None,
                 .blocking = 1};
  if (args[3] != NULL) {
    a.blocking = PyObject_IsTrue(args[3]);
    if (a.blocking < 0) {
      return NULL;
    }
  }
  PyObject *values[HRLPY_MAKE_OPTIONS];
  for (size_t k = 0; k < HRLPY_MAKE_OPTIONS; k++) {
    values[k] = args[5 + st->make_arg[k]];
  }
  return lock_build(type, &a, st->make_index, values, HRLPY_MAKE_OPTIONS);
}

/* Lock._make(client, name, ttl, timeout, blocking, on_lost, auto_renew,
 * max_hold, sync_replicas, sync_aof, fenced, owner), a classmethod: what
 * hiredlock.lock() calls, every argument by position. The keyword call of
 * Lock() builds and splits dicts of the keywords first (most of a cycle's
 * cost); here nothing is built and an option left None costs one
 * comparison. The same checks and messages as Lock(). */
PyObject *hrlpy_lock_make(PyObject *cls, PyObject *const *args,
                          Py_ssize_t nargs) {
  if (nargs != 6 + (Py_ssize_t)HRLPY_MAKE_OPTIONS) {
    return PyErr_Format(PyExc_TypeError,
                        "_make() takes exactly %d arguments (%zd given)",
                        (int)(6 + HRLPY_MAKE_OPTIONS), nargs);
  }
  hrlpy_state *st = hrlpy_state_of_type((PyTypeObject *)cls);
  if (st == NULL) {
    return NULL;
  }
  return make_from((PyTypeObject *)cls, st, args[0], args + 1);
}

/* Client.lock(name, ttl=30, *, timeout=-1, blocking=True, on_lost=None,
 * auto_renew=None, max_hold=None, sync_replicas=None, sync_aof=None,
 * fenced=None, owner=None): a hiredlock.Lock (the class _set_lock_class
 * registered; _core.Lock until then). */
PyObject *hrlpy_client_lock(PyObject *op, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"name",     "ttl",           "timeout",
                                      "blocking", "on_lost",       "auto_renew",
                                      "max_hold", "sync_replicas", "sync_aof",
                                      "fenced",   "owner",         NULL};
  PyObject *a[5 + HRLPY_MAKE_OPTIONS];
  if (hrlpy_parse_args("lock", names, 2, args, nargs, kwnames, a) < 0) {
    return NULL;
  }
  if (a[0] == NULL) {
    return PyErr_Format(PyExc_TypeError,
                        "lock() missing 1 required positional argument: "
                        "'name'");
  }
  hrlpy_state *st = ((hrlpy_client *)op)->state;
  PyTypeObject *type =
      st->lock_class != NULL ? (PyTypeObject *)st->lock_class : st->lock_type;
  return make_from(type, st, op, a);
}

PyObject *hrlpy_set_lock_class(PyObject *module, PyObject *cls) {
  hrlpy_state *st = PyModule_GetState(module);
  if (!PyType_Check(cls) ||
      !PyType_IsSubtype((PyTypeObject *)cls, st->lock_type)) {
    return PyErr_Format(PyExc_TypeError,
                        "the lock class must be a subclass of _core.Lock");
  }
  Py_XSETREF(st->lock_class, Py_NewRef(cls));
  Py_RETURN_NONE;
}

/* Lock(client, name, ttl=30, *, timeout=-1, blocking=True, **options):
 * the options are the lock options of the core's table. */
PyObject *hrlpy_lock_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  PyObject *own = NULL, *options = NULL;
  PyObject *self = NULL;
  if (split_kwds(kwds, &own, &options) == 0) {
    self = lock_make(type, args, own, options);
  }
  Py_XDECREF(own);
  Py_XDECREF(options);
  return self;
}
