/*
 * hiredlock._core: module definition, state and initialisation.
 * Multi-phase init: the types and exception classes are created per module
 * object and kept in its state.
 */
#include "hrlpy.h"

static struct PyModuleDef core_module;

hrlpy_state *hrlpy_state_of_type(PyTypeObject *type) {
#if PY_VERSION_HEX >= 0x030B0000
  PyObject *module = PyType_GetModuleByDef(type, &core_module);
  return module == NULL ? NULL : PyModule_GetState(module);
#else
  /* PyType_GetModuleByDef arrived in 3.11: walk the MRO the same way. */
  PyObject *mro = type->tp_mro;
  for (Py_ssize_t i = 0; mro != NULL && i < PyTuple_GET_SIZE(mro); i++) {
    PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
    if (!PyType_HasFeature(base, Py_TPFLAGS_HEAPTYPE)) {
      continue;
    }
    PyObject *module = ((PyHeapTypeObject *)base)->ht_module;
    if (module != NULL && PyModule_GetDef(module) == &core_module) {
      return PyModule_GetState(module);
    }
  }
  PyErr_Format(PyExc_TypeError, "%.100s is not a hiredlock._core type",
               type->tp_name);
  return NULL;
#endif
}

/* An option's default as Python users give it: seconds for a duration,
 * "" for bytes, None for an unset string, a bool, or a choice's name. */
static PyObject *default_of(const hrl_option *opt) {
  switch (opt->kind) {
  case HRL_OPTION_BYTES:
    return PyUnicode_FromString("");
  case HRL_OPTION_DURATION:
    return PyFloat_FromDouble(opt->def / 1000.0);
  case HRL_OPTION_STRING:
  case HRL_OPTION_LABEL:
    return Py_NewRef(Py_None);
  case HRL_OPTION_FLAG:
    return PyBool_FromLong(opt->def != 0);
  case HRL_OPTION_CHOICE:
    return PyUnicode_FromString(opt->choices[(int)opt->def]);
  case HRL_OPTION_COUNT:
    return PyLong_FromLong((long)opt->def);
  case HRL_OPTION_NUMBER:
    break;
  }
  return PyFloat_FromDouble(opt->def);
}

/* OPTIONS: every option of the core's table and its default, in the units
 * Python users give it (seconds for durations), so the facade and the docs
 * read the defaults from the one table. */
static int add_options(PyObject *module) {
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  PyObject *options = PyDict_New();
  for (size_t i = 0; options != NULL && i < count; i++) {
    PyObject *def = default_of(&table[i]);
    if (def == NULL || PyDict_SetItemString(options, table[i].name, def) < 0) {
      Py_XDECREF(def);
      Py_CLEAR(options);
      break;
    }
    Py_DECREF(def);
  }
  if (options == NULL) {
    return -1;
  }
  if (PyModule_AddObject(module, "OPTIONS", options) < 0) { /* steals */
    Py_DECREF(options);
    return -1;
  }
  return 0;
}

static int core_exec(PyObject *module) {
  hrlpy_state *st = PyModule_GetState(module);
  st->ttl = hrl_option_find("ttl");
  if (hrlpy_make_options_init(st) < 0) {
    return -1;
  }
  hrlpy_link_init(&st->clients);
  hrlpy_link_init(&st->locks);
  if (hrlpy_lost_init(&st->lost) < 0) {
    PyErr_SetString(PyExc_OSError, "cannot create the on_lost queue");
    return -1;
  }
  st->client_type = (PyTypeObject *)PyType_FromModuleAndSpec(
      module, &hrlpy_client_spec, NULL);
  if (st->client_type == NULL ||
      PyModule_AddType(module, st->client_type) < 0) {
    return -1;
  }
  st->lock_type =
      (PyTypeObject *)PyType_FromModuleAndSpec(module, &hrlpy_lock_spec, NULL);
  if (st->lock_type == NULL || PyModule_AddType(module, st->lock_type) < 0) {
    return -1;
  }
  st->stream_type = (PyTypeObject *)PyType_FromModuleAndSpec(
      module, &hrlpy_stream_spec, NULL);
  if (st->stream_type == NULL ||
      PyModule_AddType(module, st->stream_type) < 0 ||
      hrlpy_proto_constants(module) < 0) {
    return -1;
  }
  st->subscriber_type = (PyTypeObject *)PyType_FromModuleAndSpec(
      module, &hrlpy_subscriber_spec, NULL);
  if (st->subscriber_type == NULL ||
      PyModule_AddType(module, st->subscriber_type) < 0 ||
      hrlpy_subscriber_constants(module) < 0) {
    return -1;
  }
  if (hrlpy_errors_init(module, st) < 0 ||
      PyModule_AddStringConstant(module, "__version__", HIREDLOCK_VERSION) <
          0 ||
      PyModule_AddIntConstant(module, "NAME_MAX", HRL_NAME_MAX) < 0 ||
      PyModule_AddIntConstant(module, "MASTERS_MAX", HRL_MASTERS_MAX) < 0 ||
      PyModule_AddStringConstant(module, "FENCED_WRITE_SCRIPT",
                                 HRL_FENCED_WRITE_SCRIPT) < 0 ||
      add_options(module) < 0 || hrlpy_proto_init(st) < 0) {
    return -1;
  }
  return hrlpy_fork_register(module);
}

static int core_traverse(PyObject *module, visitproc visit, void *arg) {
  hrlpy_state *st = PyModule_GetState(module);
  Py_VISIT(st->client_type);
  Py_VISIT(st->lock_type);
  Py_VISIT(st->stream_type);
  Py_VISIT(st->subscriber_type);
  Py_VISIT(st->lock_error);
  Py_VISIT(st->not_acquired);
  Py_VISIT(st->not_owned);
  Py_VISIT(st->lock_lost);
  Py_VISIT(st->connection_error);
  Py_VISIT(st->permission_denied);
  Py_VISIT(st->event_sink);
  Py_VISIT(st->lock_class);
  Py_VISIT(st->step_round);
  Py_VISIT(st->step_wait);
  Py_VISIT(st->step_done_true);
  Py_VISIT(st->step_done_false);
  return 0;
}

static int core_clear(PyObject *module) {
  hrlpy_state *st = PyModule_GetState(module);
  Py_CLEAR(st->client_type);
  Py_CLEAR(st->lock_type);
  Py_CLEAR(st->stream_type);
  Py_CLEAR(st->subscriber_type);
  Py_CLEAR(st->lock_error);
  Py_CLEAR(st->not_acquired);
  Py_CLEAR(st->not_owned);
  Py_CLEAR(st->lock_lost);
  Py_CLEAR(st->connection_error);
  Py_CLEAR(st->permission_denied);
  Py_CLEAR(st->event_sink);
  Py_CLEAR(st->lock_class);
  Py_CLEAR(st->step_round);
  Py_CLEAR(st->step_wait);
  Py_CLEAR(st->step_done_true);
  Py_CLEAR(st->step_done_false);
  return 0;
}

static void core_free(void *module) {
  core_clear((PyObject *)module);
  hrlpy_lost_close(&((hrlpy_state *)PyModule_GetState(module))->lost);
}

static PyMethodDef core_functions[] = {
    {"_before_fork", hrlpy_before_fork, METH_NOARGS,
     "Keep every client out of a round while the process forks (registered "
     "with os.register_at_fork)."},
    {"_after_fork_in_parent", hrlpy_after_fork_in_parent, METH_NOARGS,
     "Let the clients run rounds again in the parent after a fork."},
    {"_dispatch_lost", hrlpy_dispatch_lost, METH_NOARGS,
     "Run on_lost callbacks as losses are found (the body of the "
     "hiredlock-on-lost daemon thread)."},
    {"_set_event_sink", hrlpy_set_event_sink, METH_O,
     "Set the callable events are handed to, emit(client) (hiredlock._events "
     "sets it: it logs them)."},
    {"_set_lock_class", hrlpy_set_lock_class, METH_O,
     "Set the class Client.lock makes (hiredlock._lock sets hiredlock.Lock)."},
    {"_after_fork_in_child", hrlpy_after_fork_in_child, METH_NOARGS,
     "Reset every client and lock in a forked child (registered with "
     "os.register_at_fork)."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, core_exec},
    {0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hiredlock._core",
    .m_doc = "The C core of hiredlock; use the hiredlock package instead.",
    .m_size = sizeof(hrlpy_state),
    .m_methods = core_functions,
    .m_slots = core_slots,
    .m_traverse = core_traverse,
    .m_clear = core_clear,
    .m_free = core_free,
};

PyMODINIT_FUNC PyInit__core(void) {
  return PyModuleDef_Init(&core_module);
}
