/*
 * hiredlock._core.Client: the masters and the settings shared by locks.
 *
 * The core's client is thread-safe (its rounds run under its own mutex, and
 * waits between attempts happen outside it), so one Client serves every
 * thread. Connections are opened on first use; after fork() the child drops
 * the inherited ones without writing to them (fork.c).
 */
#include "hrlpy.h"

#include <string.h>

/* urls: one str, or a sequence of str, as C strings into *items (borrowed
 * from the list kept in *seq). */
static int url_list(PyObject *urls, PyObject **seq, const char **items,
                    size_t *n) {
  if (PyBytes_Check(urls) || PyByteArray_Check(urls)) {
    PyErr_Format(PyExc_TypeError,
                 "urls must be a str or a sequence of str, not %.100s",
                 Py_TYPE(urls)->tp_name);
    return -1;
  }
  *seq = PyUnicode_Check(urls)
             ? PyTuple_Pack(1, urls)
             : PySequence_Fast(urls, "urls must be a str or a sequence of str");
  if (*seq == NULL) {
    return -1;
  }
  Py_ssize_t count = PySequence_Fast_GET_SIZE(*seq);
  if (count == 0 || count > HRL_MASTERS_MAX) {
    hrlpy_raise_invalid("urls must list 1 to %d masters, got %zd",
                        HRL_MASTERS_MAX, count);
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(*seq, i);
    if (!PyUnicode_Check(item)) {
      PyErr_Format(PyExc_TypeError, "urls[%zd] must be str, not %.100s", i,
                   Py_TYPE(item)->tp_name);
      return -1;
    }
    Py_ssize_t len;
    items[i] = PyUnicode_AsUTF8AndSize(item, &len);
    if (items[i] == NULL) {
      return -1;
    }
    if ((size_t)len != strlen(items[i])) {
      hrlpy_raise_invalid("urls[%zd] contains a NUL character", i);
      return -1;
    }
  }
  *n = (size_t)count;
  return 0;
}

/* A seconds option into a millisecond field of hrl_options. */
static int ms_option(PyObject *obj, const char *what, int64_t min_ms,
                     uint32_t *field) {
  int64_t ms;
  if (obj == NULL) {
    return 0;
  }
  if (hrlpy_seconds_to_ms(obj, what, min_ms, HRL_TTL_MAX_MS, &ms) < 0) {
    return -1;
  }
  *field = (uint32_t)ms;
  return 0;
}

static int parse_options(PyObject *const *opt, hrl_options *o) {
  hrl_options_init(o);
  if (ms_option(opt[0], "connect_timeout", 1, &o->connect_timeout_ms) < 0 ||
      ms_option(opt[1], "timeout", 1, &o->timeout_ms) < 0 ||
      ms_option(opt[2], "retry_delay", 0, &o->retry_delay_ms) < 0 ||
      ms_option(opt[3], "retry_jitter", 0, &o->retry_jitter_ms) < 0) {
    return -1;
  }
  if (opt[4] != NULL &&
      hrlpy_number(opt[4], "drift_factor", &o->drift_factor) < 0) {
    return -1;
  }
  if (opt[5] != NULL) {
    const char *prefix;
    Py_ssize_t len;
    if (hrlpy_bytes_view(opt[5], "key_prefix", &prefix, &len) < 0) {
      return -1;
    }
    o->key_prefix = prefix;
    o->key_prefix_len = (size_t)len;
  }
  return 0;
}

static PyObject *master_labels(const hrl_client *c) {
  size_t n = hrl_client_masters(c);
  PyObject *labels = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; labels != NULL && i < n; i++) {
    PyObject *label = PyUnicode_DecodeUTF8(
        hrl_client_master_label(c, i),
        (Py_ssize_t)strlen(hrl_client_master_label(c, i)), "replace");
    if (label == NULL) {
      Py_CLEAR(labels);
      break;
    }
    PyTuple_SET_ITEM(labels, (Py_ssize_t)i, label);
  }
  return labels;
}

static PyObject *client_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
  static char *kwlist[] = {
      "urls",         "connect_timeout", "timeout",    "retry_delay",
      "retry_jitter", "drift_factor",    "key_prefix", NULL};
  PyObject *urls, *opt[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOOOOO:Client", kwlist,
                                   &urls, &opt[0], &opt[1], &opt[2], &opt[3],
                                   &opt[4], &opt[5])) {
    return NULL;
  }
  hrlpy_state *st = hrlpy_state_of_type(type);
  if (st == NULL) {
    return NULL;
  }
  PyObject *seq = NULL;
  const char *items[HRL_MASTERS_MAX];
  size_t n = 0;
  hrl_options o;
  if (url_list(urls, &seq, items, &n) < 0 || parse_options(opt, &o) < 0) {
    Py_XDECREF(seq);
    return NULL;
  }
  hrl_client *c = NULL;
  char detail[HRL_DETAIL_MAX];
  hrl_status rc = hrl_client_new(items, n, &o, &c, detail, sizeof detail);
  Py_DECREF(seq);
  if (rc != HRL_OK) {
    return hrlpy_raise_status(st, rc, detail);
  }
  hrlpy_client *self = (hrlpy_client *)type->tp_alloc(type, 0);
  if (self == NULL) {
    hrl_client_free(c);
    return NULL;
  }
  self->state = st;
  self->client = c;
  self->masters = master_labels(c);
  if (self->masters == NULL) {
    Py_DECREF(self);
    return NULL;
  }
  hrlpy_link_add(&st->clients, &self->link);
  return (PyObject *)self;
}

static int client_traverse(PyObject *op, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(op));
  Py_VISIT(((hrlpy_client *)op)->masters);
  return 0;
}

static void client_dealloc(PyObject *op) {
  hrlpy_client *self = (hrlpy_client *)op;
  PyTypeObject *type = Py_TYPE(op);
  PyObject_GC_UnTrack(op);
  if (self->link.next != NULL) {
    hrlpy_link_remove(&self->link);
  }
  hrl_client_free(self->client); /* closes the sockets, sends nothing */
  Py_CLEAR(self->masters);
  type->tp_free(op);
  Py_DECREF(type);
}

static PyObject *get_masters(PyObject *op, void *closure) {
  (void)closure;
  return Py_NewRef(((hrlpy_client *)op)->masters);
}

static PyObject *get_quorum(PyObject *op, void *closure) {
  (void)closure;
  return PyLong_FromSize_t(hrl_client_quorum(((hrlpy_client *)op)->client));
}

static PyGetSetDef client_getset[] = {
    {"masters", get_masters, NULL,
     "The masters, as 'host:port' or socket path (no credentials).", NULL},
    {"quorum", get_quorum, NULL, "Masters needed for a decision: N/2 + 1.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot client_slots[] = {
    {Py_tp_doc,
     "Client(urls, *, connect_timeout=0.1, timeout=0.05, retry_delay=0.2,\n"
     "       retry_jitter=0.1, drift_factor=0.01, key_prefix='')\n\n"
     "The Redis masters locks are taken on (N = 1: a single instance)."},
    {Py_tp_new, client_new},
    {Py_tp_dealloc, client_dealloc},
    {Py_tp_traverse, client_traverse},
    {Py_tp_getset, client_getset},
    {0, NULL},
};

PyType_Spec hrlpy_client_spec = {
    .name = "hiredlock._core.Client",
    .basicsize = sizeof(hrlpy_client),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = client_slots,
};
