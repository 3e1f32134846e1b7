/*
 * _core.Subscriber(client, i): a subscriber connection's stream to master
 * i (hrl_subscriber), for the asyncio driver's listener. Quick calls
 * without I/O: they keep the GIL.
 *
 *   subscriber.open()              -> (host, port, path, label, handshake):
 *                                     where a new connection goes (host
 *                                     None for a unix path; handshake
 *                                     False: a sentinel to ask)
 *   Subscriber(client, i).start()  -> bytes a new connection writes first
 *   subscriber.feed(data)          -> (notice, bytes | None): NOTICE_MORE
 *                                     (read on), NOTICE_SEND (write them),
 *                                     NOTICE_READY, NOTICE_HANDOFF (the
 *                                     token), NOTICE_CLOSE (why),
 *                                     NOTICE_REDIRECT (where: open again at
 *                                     once); feed(b"") gives the next
 *                                     notice of what was fed
 */
#include "hrlpy.h"

#include "hiredlock/proto.h"

typedef struct hrlpy_subscriber {
  PyObject ob_base;
  PyObject *client; /* keeps the client alive */
  hrl_subscriber *sub;
} hrlpy_subscriber;

static PyObject *subscriber_new(PyTypeObject *type, PyObject *args,
                                PyObject *kwds) {
  PyObject *client;
  Py_ssize_t i;
  if (kwds != NULL && PyDict_GET_SIZE(kwds) > 0) {
    return PyErr_Format(PyExc_TypeError, "Subscriber(client, i)");
  }
  if (!PyArg_ParseTuple(args, "On:Subscriber", &client, &i)) {
    return NULL;
  }
  hrlpy_state *st = hrlpy_state_of_type(type);
  if (st == NULL) {
    return NULL;
  }
  if (!PyObject_TypeCheck(client, st->client_type)) {
    return PyErr_Format(PyExc_TypeError, "expected a hiredlock Client");
  }
  hrl_client *c = ((hrlpy_client *)client)->client;
  if (i < 0 || (size_t)i >= hrl_client_masters(c)) {
    return PyErr_Format(PyExc_IndexError, "no master %zd", i);
  }
  hrlpy_subscriber *self = (hrlpy_subscriber *)type->tp_alloc(type, 0);
  if (self == NULL) {
    return NULL;
  }
  self->client = Py_NewRef(client);
  self->sub = hrl_subscriber_new(c, (size_t)i);
  if (self->sub == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

static void subscriber_dealloc(PyObject *op) {
  PyTypeObject *type = Py_TYPE(op);
  hrlpy_subscriber *self = (hrlpy_subscriber *)op;
  hrl_subscriber_free(self->sub);
  Py_CLEAR(self->client);
  type->tp_free(op);
  Py_DECREF(type);
}

static PyObject *subscriber_open(PyObject *op, PyObject *unused) {
  (void)unused;
  hrl_target t;
  hrl_subscriber_open(((hrlpy_subscriber *)op)->sub, &t);
  return Py_BuildValue("(zizsO)", t.host, t.port, t.path, t.label,
                       t.handshake ? Py_True : Py_False);
}

static PyObject *subscriber_start(PyObject *op, PyObject *unused) {
  (void)unused;
  size_t len;
  const char *bytes = hrl_subscriber_start(((hrlpy_subscriber *)op)->sub, &len);
  return PyBytes_FromStringAndSize(bytes, (Py_ssize_t)len);
}

static PyObject *subscriber_feed(PyObject *op, PyObject *arg) {
  Py_buffer data;
  if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) {
    return NULL;
  }
  const char *out;
  size_t len;
  hrl_notice n = hrl_subscriber_feed(((hrlpy_subscriber *)op)->sub, data.buf,
                                     (size_t)data.len, &out, &len);
  PyBuffer_Release(&data);
  if (out == NULL) {
    return Py_BuildValue("(iO)", (int)n, Py_None);
  }
  return Py_BuildValue("(iy#)", (int)n, out, (Py_ssize_t)len);
}

static PyMethodDef subscriber_methods[] = {
    {"open", subscriber_open, METH_NOARGS,
     "open() -> (host, port, path, label, handshake) of a new connection"},
    {"start", subscriber_start, METH_NOARGS,
     "start() -> bytes a new connection writes first"},
    {"feed", subscriber_feed, METH_O,
     "feed(data) -> (notice, bytes or None); feed(b'') for the next"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot subscriber_slots[] = {
    {Py_tp_doc, "Subscriber(client, i)\n\nA subscriber connection's stream to "
                "master i, for the asyncio driver (hrl_subscriber)."},
    {Py_tp_new, subscriber_new},
    {Py_tp_dealloc, subscriber_dealloc},
    {Py_tp_methods, subscriber_methods},
    {0, NULL},
};

PyType_Spec hrlpy_subscriber_spec = {
    .name = "hiredlock._core.Subscriber",
    .basicsize = sizeof(hrlpy_subscriber),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = subscriber_slots,
};

int hrlpy_subscriber_constants(PyObject *module) {
  static const struct {
    const char *name;
    hrl_notice value;
  } notices[] = {{"NOTICE_MORE", HRL_NOTICE_MORE},
                 {"NOTICE_SEND", HRL_NOTICE_SEND},
                 {"NOTICE_READY", HRL_NOTICE_READY},
                 {"NOTICE_HANDOFF", HRL_NOTICE_HANDOFF},
                 {"NOTICE_CLOSE", HRL_NOTICE_CLOSE},
                 {"NOTICE_REDIRECT", HRL_NOTICE_REDIRECT}};
  for (size_t k = 0; k < sizeof notices / sizeof notices[0]; k++) {
    if (PyModule_AddIntConstant(module, notices[k].name, notices[k].value) <
        0) {
      return -1;
    }
  }
  return 0;
}
