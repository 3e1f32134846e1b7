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

#include "hiredlock/proto.h"

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

/* Options a Client takes: its own, and the defaults of its locks. */
static bool client_option(const hrl_option *opt) {
  return opt->scope == HRL_SCOPE_CLIENT || opt->scope == HRL_SCOPE_LOCK_DEFAULT;
}

/* The keyword arguments as client options: every key must name one (else a
 * TypeError, before any value is looked at, as CPython's own calls do);
 * values are taken in the table's order, converted by their kind and
 * checked by the core, which names the option when one is out of range.
 * kwds may be NULL; it is the caller's own copy, which may be changed. */
static int parse_options(PyObject *kwds, hrl_options *opts) {
  hrl_options_init(opts);
  if (kwds == NULL) {
    return 0;
  }
  if (hrlpy_check_option_keys(kwds, "Client", client_option) < 0) {
    return -1;
  }
  size_t count;
  const hrl_option *table = hrl_options_table(&count);
  for (size_t i = 0; i < count; i++) {
    PyObject *value = client_option(&table[i])
                          ? PyDict_GetItemString(kwds, table[i].name)
                          : NULL;
    if (value == NULL) {
      continue;
    }
    if (table[i].kind == HRL_OPTION_LABEL && value == Py_None) {
      continue; /* no label, as when not given */
    }
    if (table[i].kind == HRL_OPTION_STRING) {
      /* None leaves a path unset; an os.PathLike gives its str, kept alive
       * in kwds (the caller's copy) until hrl_client_new() copied it. */
      if (value == Py_None) {
        continue;
      }
      if (!PyUnicode_Check(value) &&
          PyObject_HasAttrString(value, "__fspath__")) {
        PyObject *path = PyOS_FSPath(value);
        int stored =
            path == NULL ? -1 : PyDict_SetItemString(kwds, table[i].name, path);
        Py_XDECREF(path);
        if (stored < 0) {
          return -1;
        }
        value = PyDict_GetItemString(kwds, table[i].name);
      }
    }
    double number;
    const char *bytes;
    Py_ssize_t len;
    char detail[HRL_DETAIL_MAX];
    if (hrlpy_option_value(value, &table[i], &number, &bytes, &len) < 0) {
      return -1;
    }
    if (hrl_options_set(opts, &table[i], number, bytes, (size_t)len, detail,
                        sizeof detail) != HRL_OK) {
      hrlpy_raise_invalid("%s", detail);
      return -1;
    }
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

/* A client on urls with the options (a dict, or NULL for none). */
static PyObject *client_make(PyTypeObject *type, PyObject *urls,
                             PyObject *options) {
  hrlpy_state *st = hrlpy_state_of_type(type);
  if (st == NULL) {
    return NULL;
  }
  PyObject *seq = NULL;
  const char *items[HRL_MASTERS_MAX];
  size_t n = 0;
  hrl_options o;
  if (url_list(urls, &seq, items, &n) < 0 || parse_options(options, &o) < 0) {
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
  if (self->masters == NULL || hrlpy_events_attach(self) < 0) {
    Py_DECREF(self);
    return NULL;
  }
  hrlpy_link_add(&st->clients, &self->link);
  return (PyObject *)self;
}

static PyObject *client_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
  /* Client(urls, **options): the options are the core's table's. */
  PyObject *urls = NULL, *options = NULL;
  if (PyTuple_GET_SIZE(args) > 1) {
    return PyErr_Format(PyExc_TypeError,
                        "Client() takes 1 positional argument but %zd were "
                        "given",
                        PyTuple_GET_SIZE(args));
  }
  if (kwds != NULL && PyDict_GET_SIZE(kwds) > 0) {
    options = PyDict_Copy(kwds);
    if (options == NULL) {
      return NULL;
    }
    urls = PyDict_GetItemString(options, "urls");
    if (urls != NULL) {
      Py_INCREF(urls);
      PyDict_DelItemString(options, "urls");
    }
  }
  if (PyTuple_GET_SIZE(args) == 1) {
    if (urls != NULL) {
      Py_DECREF(urls);
      Py_XDECREF(options);
      return PyErr_Format(PyExc_TypeError,
                          "Client() got multiple values for argument 'urls'");
    }
    urls = Py_NewRef(PyTuple_GET_ITEM(args, 0));
  }
  if (urls == NULL) {
    Py_XDECREF(options);
    return PyErr_Format(PyExc_TypeError,
                        "Client() missing required argument 'urls'");
  }
  PyObject *client = client_make(type, urls, options);
  Py_DECREF(urls);
  Py_XDECREF(options);
  return client;
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

/* The TLS settings of a rediss:// master as a dict, for a driver that
 * shakes hands itself (Python's ssl module): ca_certs, ca_path, certfile,
 * keyfile (str or None), cert_reqs ("none", "optional", "required") and
 * check_hostname (bool). */
static PyObject *tls_settings_dict(const hrl_tls_settings *t) {
  static const char *const reqs[] = {"none", "optional", "required"};
  return Py_BuildValue("{s:z,s:z,s:z,s:z,s:s,s:O}", "ca_certs", t->ca_certs,
                       "ca_path", t->ca_path, "certfile", t->certfile,
                       "keyfile", t->keyfile, "cert_reqs",
                       reqs[(int)t->cert_reqs % 3], "check_hostname",
                       t->check_hostname ? Py_True : Py_False);
}

/* _master_info(i) -> (host, port, path, tls): where master i is, for
 * drivers that open their own connections (hiredlock.asyncio): host and
 * port for TCP (path None), path for unix sockets (host None, port 0);
 * tls None, or a rediss:// master's settings (tls_settings_dict).
 * ValueError for the deployments such a driver does not speak yet (a
 * cluster, a sentinel-managed primary): a clear refusal, not a plain
 * connection to the wrong place. */
static PyObject *client_master_info(PyObject *op, PyObject *arg) {
  const hrl_client *c = ((hrlpy_client *)op)->client;
  Py_ssize_t i = PyLong_AsSsize_t(arg);
  hrl_master_info info;
  if (i == -1 && PyErr_Occurred()) {
    return NULL;
  }
  if (i < 0 || !hrl_client_master_info(c, (size_t)i, &info)) {
    return PyErr_Format(PyExc_IndexError, "no master %zd", i);
  }
  const char *scheme = info.cluster    ? "redis+cluster://"
                       : info.sentinel ? "redis+sentinel://"
                                       : NULL;
  if (scheme != NULL) {
    return PyErr_Format(PyExc_ValueError,
                        "invalid argument: urls: hiredlock.asyncio does not "
                        "support %s masters yet (hiredlock.Client does)",
                        scheme);
  }
  PyObject *tls =
      info.tls ? tls_settings_dict(&info.tls_settings) : Py_NewRef(Py_None);
  if (tls == NULL) {
    return NULL;
  }
  return Py_BuildValue("(zizN)", info.host, info.port, info.path, tls);
}

/* _tls_check(i) -> str | None: why master i's TLS settings do not load
 * (a CA file missing, a certificate without its key), in the C driver's
 * words, or None: for a driver that loads them with Python's ssl module,
 * whose errors read otherwise ("Unknown error 524297"). */
static PyObject *client_tls_check(PyObject *op, PyObject *arg) {
  const hrl_client *c = ((hrlpy_client *)op)->client;
  Py_ssize_t i = PyLong_AsSsize_t(arg);
  if (i == -1 && PyErr_Occurred()) {
    return NULL;
  }
  if (i < 0 || (size_t)i >= hrl_client_masters(c)) {
    return PyErr_Format(PyExc_IndexError, "no master %zd", i);
  }
  char msg[HRL_DETAIL_MAX];
  bool ok;
  Py_BEGIN_ALLOW_THREADS;
  ok = hrl_client_tls_check(c, (size_t)i, msg, sizeof msg); /* file reads */
  Py_END_ALLOW_THREADS;
  if (ok) {
    Py_RETURN_NONE;
  }
  return PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
}

/* _channel -> bytes: the channel this process's waiters hear their
 * hand-offs on. */
static PyObject *get_channel(PyObject *op, void *closure) {
  (void)closure;
  size_t len;
  const char *channel = hrl_client_channel(((hrlpy_client *)op)->client, &len);
  if (channel == NULL) {
    return hrlpy_raise_status(((hrlpy_client *)op)->state, HRL_ESYSTEM,
                              "the OS random generator failed");
  }
  return PyBytes_FromStringAndSize(channel, (Py_ssize_t)len);
}

/* _share_channel(other) -> bool: this client's waiters hear their
 * hand-offs on other's channel (hrl_client_share_channel), so that one
 * subscriber connection per master serves both (hiredlock.asyncio: the
 * clients of one event loop). */
static PyObject *client_share_channel(PyObject *op, PyObject *other) {
  hrlpy_client *self = (hrlpy_client *)op;
  if (!PyObject_TypeCheck(other, Py_TYPE(op))) {
    return PyErr_Format(PyExc_TypeError, "expected a hiredlock Client");
  }
  return PyBool_FromLong(
      hrl_client_share_channel(self->client, ((hrlpy_client *)other)->client));
}

/* _subscriber_key(i) -> bytes: what identifies master i's subscriber
 * connection (hrl_client_subscriber_key; it holds the credentials: keep
 * it in memory only). */
static PyObject *client_subscriber_key(PyObject *op, PyObject *arg) {
  hrl_client *c = ((hrlpy_client *)op)->client;
  Py_ssize_t i = PyLong_AsSsize_t(arg);
  if (i == -1 && PyErr_Occurred()) {
    return NULL;
  }
  size_t len = i < 0 ? 0 : hrl_client_subscriber_key(c, (size_t)i, NULL, 0);
  if (len == 0) {
    return PyErr_Format(PyExc_IndexError, "no master %zd", i);
  }
  PyObject *key = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
  if (key != NULL) {
    hrl_client_subscriber_key(c, (size_t)i, PyBytes_AS_STRING(key), len);
  }
  return key;
}

static PyMethodDef client_methods[] = {
    {"_master_info", client_master_info, METH_O, NULL},
    {"_share_channel", client_share_channel, METH_O, NULL},
    {"_subscriber_key", client_subscriber_key, METH_O, NULL},
    {"_tls_check", client_tls_check, METH_O, NULL},
    {"inspect", hrlpy_client_inspect, METH_O,
     "inspect(name) -> dict\n\n"
     "What every master has of the lock name (read only: no lock taken,\n"
     "no key written): its token, TTL, fence counter, owner label and\n"
     "waiting queue, and the quorum's verdict (docs/OPERATING.md)."},
    {"stats", hrlpy_client_stats, METH_NOARGS,
     "stats() -> dict\n\n"
     "The client's counters since it was made (docs/OPERATING.md)."},
    {"_lock", (PyCFunction)(void (*)(void))hrlpy_client_lock,
     METH_FASTCALL | METH_KEYWORDS,
     "lock(name, ttl=30, *, timeout=-1, blocking=True, auto_renew=None,\n"
     "     max_hold=None, on_lost=None, fenced=None, sync_replicas=None,\n"
     "     sync_aof=None, owner=None) -> Lock\n\n"
     "A Lock on name (str or bytes), not yet held.\n\n"
     "ttl is how long the lock lives in Redis, in seconds. timeout and\n"
     "blocking bound the wait of a with block (-1: forever; blocking=False:\n"
     "one attempt). auto_renew makes it a managed lease, renewed while held\n"
     "(at most max_hold seconds; 0: no cap), and on_lost(lock) is called\n"
     "when its hold is lost; fenced=True takes a fencing token with every\n"
     "acquire (Lock.fence). sync_replicas=N: a master's vote for an acquire\n"
     "or extend counts only once N of its replicas have the write (WAIT),\n"
     "and with sync_aof=True once it is fsynced to the AOF (WAITAOF). owner\n"
     "writes a label beside the lock with every acquire, shown by inspect()\n"
     "and `hiredlock status` (True: this host and process id; \"%h\" and\n"
     "\"%p\" in a label are those too). None takes the client's defaults."},
    {"_take_events", hrlpy_client_take_events, METH_NOARGS, NULL},
    {"_flush_events", hrlpy_client_flush_events, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef client_getset[] = {
    {"masters", get_masters, NULL,
     "The masters, as 'host:port' or socket path (no credentials).", NULL},
    {"quorum", get_quorum, NULL, "Masters needed for a decision: N/2 + 1.",
     NULL},
    {"_channel", get_channel, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot client_slots[] = {
    {Py_tp_doc,
     "Client(urls, **options)\n\n"
     "The Redis masters locks are taken on (N = 1: a single instance);\n"
     "the options are those of hiredlock.OPTIONS."},
    {Py_tp_new, client_new},
    {Py_tp_dealloc, client_dealloc},
    {Py_tp_traverse, client_traverse},
    {Py_tp_getset, client_getset},
    {Py_tp_methods, client_methods},
    {0, NULL},
};

PyType_Spec hrlpy_client_spec = {
    .name = "hiredlock._core.Client",
    .basicsize = sizeof(hrlpy_client),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = client_slots,
};
