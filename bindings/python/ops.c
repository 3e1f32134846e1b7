/*
 * What operators get, for Python (docs/OPERATING.md): Client.inspect(),
 * Client.stats(), the events of a client, and an inspection for a driver
 * of its own (Lock._begin_inspect, Lock._inspection). Only conversions:
 * the fields, words and verdicts are the core's.
 *
 * Events: the core keeps a client's events in a queue (they happen in the
 * renewer thread, or under the client's mutex, where Python cannot run).
 * They are handed to hiredlock._events (the sink it registers with
 * _set_event_sink, which logs them) by the thread that made a call, as it
 * returns, and by the hiredlock-on-lost daemon thread, which the queue
 * wakes when a renewal reports one (lost.c).
 */
#include "hrlpy.h"

#include <math.h>
#include <string.h>

#include "hiredlock/proto.h"

/* How many events a client keeps until they are taken. */
#define EVENT_QUEUE 256

/* The core's `posted`: wakes the dispatcher thread (no GIL here). */
static void events_posted(void *ud) {
  hrlpy_lost_queue *q = ud;
  if (!q->ready) {
    return;
  }
  pthread_mutex_lock(&q->mu);
  q->events = true;
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
}

int hrlpy_events_attach(hrlpy_client *self) {
  if (hrl_client_queue_events(self->client, EVENT_QUEUE, events_posted,
                              &self->state->lost) != HRL_OK) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

void hrlpy_events_flush(hrlpy_client *self) {
  PyObject *sink = self->state->event_sink;
  if (sink == NULL || !hrl_client_events_pending(self->client)) {
    return;
  }
  PyObject *exc_type, *exc, *tb;
  PyErr_Fetch(&exc_type, &exc, &tb); /* a call's own exception goes on */
  Py_INCREF(sink);
  PyObject *res = PyObject_CallOneArg(sink, (PyObject *)self);
  if (res == NULL) {
    PyErr_WriteUnraisable(sink);
  }
  Py_XDECREF(res);
  Py_DECREF(sink);
  PyErr_Restore(exc_type, exc, tb);
}

PyObject *hrlpy_set_event_sink(PyObject *module, PyObject *sink) {
  hrlpy_state *st = PyModule_GetState(module);
  if (sink != Py_None && !PyCallable_Check(sink)) {
    return PyErr_Format(PyExc_TypeError, "the sink must be callable");
  }
  Py_XSETREF(st->event_sink, sink == Py_None ? NULL : Py_NewRef(sink));
  Py_RETURN_NONE;
}

static PyObject *text_or_none(const char *s) {
  if (s == NULL || s[0] == '\0') {
    Py_RETURN_NONE;
  }
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

static const char *level_name(hrl_event_level level) {
  return level == HRL_LEVEL_WARNING ? "warning"
         : level == HRL_LEVEL_INFO  ? "info"
                                    : "debug";
}

/* One event as a dict: kind, level, message, name (bytes, None for a
 * master's), master (label), ms, count, status ("" when ok), detail. */
static PyObject *event_dict(const hrl_event *ev) {
  char message[2 * HRL_DETAIL_MAX];
  hrl_event_format(ev, message, sizeof message);
  PyObject *name =
      ev->name != NULL
          ? PyBytes_FromStringAndSize(ev->name, (Py_ssize_t)ev->name_len)
          : Py_NewRef(Py_None);
  if (name == NULL) {
    return NULL;
  }
  return Py_BuildValue(
      "{s:s,s:s,s:N,s:N,s:N,s:L,s:k,s:s,s:N}", "kind", hrl_event_name(ev->kind),
      "level", level_name(ev->level), "message",
      PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace"),
      "name", name, "master", text_or_none(ev->master_label), "ms",
      (long long)ev->ms, "count", (unsigned long)ev->count, "status",
      ev->status == HRL_OK ? "" : hrl_strerror(ev->status), "detail",
      text_or_none(ev->detail));
}

PyObject *hrlpy_client_take_events(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_client *self = (hrlpy_client *)op;
  PyObject *list = PyList_New(0);
  hrl_event_record batch[16];
  uint64_t dropped_total = 0;
  for (;;) {
    uint64_t dropped = 0;
    size_t n = hrl_client_take_events(self->client, batch, 16, &dropped);
    dropped_total += dropped;
    for (size_t k = 0; list != NULL && k < n; k++) {
      PyObject *d = event_dict(&batch[k].ev);
      if (d == NULL || PyList_Append(list, d) < 0) {
        Py_CLEAR(list);
      }
      Py_XDECREF(d);
    }
    if (n < 16 || list == NULL) {
      break;
    }
  }
  if (list == NULL) {
    return NULL;
  }
  return Py_BuildValue("(NK)", list, (unsigned long long)dropped_total);
}

PyObject *hrlpy_client_flush_events(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_events_flush((hrlpy_client *)op);
  Py_RETURN_NONE;
}

/* --- stats ------------------------------------------------------------ */

static int set_u64(PyObject *d, const char *key, uint64_t v) {
  PyObject *o = PyLong_FromUnsignedLongLong((unsigned long long)v);
  int rc = o == NULL ? -1 : PyDict_SetItemString(d, key, o);
  Py_XDECREF(o);
  return rc;
}

static int set_obj(PyObject *d, const char *key, PyObject *o) {
  int rc = o == NULL ? -1 : PyDict_SetItemString(d, key, o);
  Py_XDECREF(o);
  return rc;
}

static PyObject *stats_dict(const hrlpy_client *self, const hrl_stats *s) {
  PyObject *d = PyDict_New();
  PyObject *failed = PyDict_New();
  PyObject *bounds = PyList_New(HRL_WAIT_BUCKETS);
  PyObject *buckets = PyList_New(HRL_WAIT_BUCKETS + 1);
  PyObject *masters = PyList_New((Py_ssize_t)s->masters);
  if (d == NULL || failed == NULL || bounds == NULL || buckets == NULL ||
      masters == NULL) {
    goto fail;
  }
  for (int st = 1; st < HRL_STATUS_COUNT_; st++) {
    if (s->failed[st] > 0 &&
        set_u64(failed, hrl_strerror((hrl_status)st), s->failed[st]) < 0) {
      goto fail;
    }
  }
  for (size_t k = 0; k <= HRL_WAIT_BUCKETS; k++) {
    if (k < HRL_WAIT_BUCKETS) {
      PyList_SET_ITEM(bounds, (Py_ssize_t)k,
                      PyFloat_FromDouble(hrl_wait_bucket_ms(k) / 1000.0));
    }
    PyList_SET_ITEM(buckets, (Py_ssize_t)k,
                    PyLong_FromUnsignedLongLong(s->wait_buckets[k]));
  }
  for (size_t i = 0; i < s->masters; i++) {
    PyObject *m = Py_BuildValue(
        "{s:O,s:K,s:K}", "master",
        PyTuple_GET_ITEM(self->masters, (Py_ssize_t)i), "unreachable",
        (unsigned long long)s->master[i].unreachable, "errors",
        (unsigned long long)s->master[i].errors);
    if (m == NULL) {
      goto fail;
    }
    PyList_SET_ITEM(masters, (Py_ssize_t)i, m);
  }
  if (set_u64(d, "acquired", s->acquired) < 0 ||
      set_u64(d, "busy", s->busy) < 0 ||
      set_u64(d, "cancelled", s->cancelled) < 0 ||
      set_obj(d, "failed", Py_NewRef(failed)) < 0 ||
      set_u64(d, "waited", s->waited) < 0 ||
      set_obj(d, "wait_bounds", Py_NewRef(bounds)) < 0 ||
      set_obj(d, "wait_buckets", Py_NewRef(buckets)) < 0 ||
      set_obj(d, "wait_sum", PyFloat_FromDouble((double)s->wait_sum_us / 1e6)) <
          0 ||
      set_u64(d, "released", s->released) < 0 ||
      set_u64(d, "handoffs", s->handoffs) < 0 ||
      set_u64(d, "dead_waiters", s->dead_waiters) < 0 ||
      set_u64(d, "extended", s->extended) < 0 ||
      set_u64(d, "renewals", s->renewals) < 0 ||
      set_u64(d, "renewals_failed", s->renewals_failed) < 0 ||
      set_u64(d, "losses", s->losses) < 0 ||
      set_u64(d, "inspections", s->inspections) < 0 ||
      set_obj(d, "masters", Py_NewRef(masters)) < 0) {
    goto fail;
  }
  Py_DECREF(failed);
  Py_DECREF(bounds);
  Py_DECREF(buckets);
  Py_DECREF(masters);
  return d;
fail:
  Py_XDECREF(d);
  Py_XDECREF(failed);
  Py_XDECREF(bounds);
  Py_XDECREF(buckets);
  Py_XDECREF(masters);
  return NULL;
}

PyObject *hrlpy_client_stats(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_client *self = (hrlpy_client *)op;
  hrl_stats s;
  hrl_client_stats(self->client, &s);
  return stats_dict(self, &s);
}

/* --- inspections ------------------------------------------------------ */

/* ms as seconds; special values (-1: no TTL, -2: no key) kept apart. */
static PyObject *seconds(int64_t ms) {
  return PyFloat_FromDouble((double)ms / 1000.0);
}

static PyObject *waiter_dict(const hrl_waiter_view *w) {
  return Py_BuildValue("{s:s,s:N,s:N,s:N}", "token", w->token, "age",
                       seconds(w->age_ms), "lease", seconds(w->lease_ms),
                       "owner", text_or_none(w->owner));
}

/* The key's TTL in seconds: None when there is no key, -1.0 when it has
 * no TTL. */
static PyObject *ttl_of(int64_t pttl_ms) {
  if (pttl_ms == -2) {
    Py_RETURN_NONE;
  }
  return pttl_ms == -1 ? PyFloat_FromDouble(-1.0) : seconds(pttl_ms);
}

static PyObject *fence_of(uint64_t fence) {
  if (fence == 0) {
    Py_RETURN_NONE;
  }
  return PyLong_FromUnsignedLongLong((unsigned long long)fence);
}

/* A hold (a read, the write, a permit): per master (quorum false) or on
 * the quorum, with the masters it is on. */
static PyObject *hold_dict(const hrl_hold_view *h, bool quorum) {
  if (!quorum) {
    return Py_BuildValue("{s:s,s:s,s:N,s:N}", "token", h->token, "hold",
                         h->hold, "ttl", seconds(h->ttl_ms), "owner",
                         text_or_none(h->owner));
  }
  return Py_BuildValue("{s:s,s:s,s:N,s:n,s:N}", "token", h->token, "hold",
                       h->hold, "ttl", seconds(h->ttl_ms), "holding",
                       (Py_ssize_t)h->holding, "owner", text_or_none(h->owner));
}

static PyObject *holds_list(const hrl_hold_view *h, size_t n, bool quorum) {
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t k = 0; list != NULL && k < n; k++) {
    PyObject *d = hold_dict(&h[k], quorum);
    if (d == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)k, d);
  }
  return list;
}

static PyObject *master_dict(const hrl_master_view *m) {
  PyObject *holds = holds_list(m->hold, m->holds_listed, false);
  if (holds == NULL) {
    return NULL;
  }
  PyObject *waiters = PyList_New((Py_ssize_t)m->listed);
  for (size_t k = 0; waiters != NULL && k < m->listed; k++) {
    PyObject *w = waiter_dict(&m->waiters[k]);
    if (w == NULL) {
      Py_CLEAR(waiters);
      break;
    }
    PyList_SET_ITEM(waiters, (Py_ssize_t)k, w);
  }
  if (waiters == NULL) {
    Py_DECREF(holds);
    return NULL;
  }
  char error[2 * HRL_DETAIL_MAX] = "";
  if (m->status != HRL_OK) {
    hrl_format_error(m->status, m->error, error, sizeof error);
  }
  return Py_BuildValue(
      "{s:s,s:O,s:N,s:O,s:N,s:N,s:N,s:N,s:K,s:N,s:s,s:n,s:N}", "master",
      m->label, "ok", m->status == HRL_OK ? Py_True : Py_False, "error",
      text_or_none(error), "present", m->present ? Py_True : Py_False, "token",
      text_or_none(m->token), "ttl",
      m->status == HRL_OK ? ttl_of(m->pttl_ms) : Py_NewRef(Py_None), "fence",
      fence_of(m->fence), "owner", text_or_none(m->owner), "queued",
      (unsigned long long)m->queued, "waiters", waiters, "kind",
      hrl_kind_name(m->kind), "hold_count", (Py_ssize_t)m->holds, "holds",
      holds);
}

PyObject *hrlpy_inspection_dict(const hrl_inspection *r, PyObject *name) {
  PyObject *masters = PyList_New((Py_ssize_t)r->masters);
  for (size_t i = 0; masters != NULL && i < r->masters; i++) {
    PyObject *m = master_dict(&r->master[i]);
    if (m == NULL) {
      Py_CLEAR(masters);
      break;
    }
    PyList_SET_ITEM(masters, (Py_ssize_t)i, m);
  }
  PyObject *holds =
      masters == NULL ? NULL : holds_list(r->hold, r->holds, true);
  if (holds == NULL) {
    Py_XDECREF(masters);
    return NULL;
  }
  PyObject *validity = r->verdict != HRL_VERDICT_HELD ? Py_NewRef(Py_None)
                       : r->valid_ms < 0 ? PyFloat_FromDouble(INFINITY)
                                         : seconds(r->valid_ms);
  return Py_BuildValue(
      "{s:O,s:s,s:O,s:N,s:N,s:N,s:N,s:n,s:n,s:n,s:N,s:s,s:N}", "name", name,
      "state", hrl_verdict_name(r->verdict), "held",
      r->verdict == HRL_VERDICT_HELD ? Py_True : Py_False, "token",
      text_or_none(r->token), "owner", text_or_none(r->owner), "validity",
      validity, "fence", fence_of(r->fence), "quorum", (Py_ssize_t)r->quorum,
      "answered", (Py_ssize_t)r->answered, "holding", (Py_ssize_t)r->holding,
      "masters", masters, "kind", hrl_kind_name(r->kind), "holds", holds);
}

PyObject *hrlpy_client_inspect(PyObject *op, PyObject *name) {
  hrlpy_client *self = (hrlpy_client *)op;
  const char *data;
  Py_ssize_t len;
  if (hrlpy_bytes_view(name, "name", &data, &len) < 0) {
    return NULL;
  }
  hrl_inspection *r = NULL;
  char detail[HRL_DETAIL_MAX] = "";
  hrl_status st;
  Py_INCREF(name); /* its bytes are read without the GIL */
  Py_BEGIN_ALLOW_THREADS;
  st = hrl_client_inspect(self->client, data, (size_t)len, &r, detail,
                          sizeof detail);
  Py_END_ALLOW_THREADS;
  PyObject *out = st == HRL_OK ? hrlpy_inspection_dict(r, name)
                               : hrlpy_raise_status(self->state, st, detail);
  Py_DECREF(name);
  hrl_inspection_free(r);
  hrlpy_events_flush(self);
  return out;
}

PyObject *hrlpy_begin_inspect(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_lock *self = (hrlpy_lock *)op;
  hrl_status st = hrl_proto_begin(self->lock, HRL_OP_INSPECT, 0, hrl_now_us());
  if (st != HRL_OK) {
    return hrlpy_raise_status(self->state, st, hrl_lock_error(self->lock));
  }
  Py_RETURN_NONE;
}

PyObject *hrlpy_lock_inspection(PyObject *op, PyObject *unused) {
  (void)unused;
  hrlpy_lock *self = (hrlpy_lock *)op;
  const hrl_inspection *r = hrl_lock_inspection(self->lock);
  if (r == NULL) {
    Py_RETURN_NONE;
  }
  return hrlpy_inspection_dict(r, self->name);
}
