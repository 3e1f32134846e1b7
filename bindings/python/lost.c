/*
 * on_lost callbacks. The core calls a lease's loss callback from its
 * renewer thread, which must never take the GIL: a thread that waits for
 * it while the interpreter shuts down is ended or hangs there, and the
 * renewer would then never be joined. So the core's callback only posts
 * the Lock to a queue (a mutex held for a few instructions), and a Python
 * daemon thread, "hiredlock-on-lost", started on first need, runs the
 * Python callbacks with the GIL held, never inside a lock of the core. A
 * callback that raises is reported with sys.unraisablehook and the next
 * one runs. At shutdown the daemon thread is left where Python leaves
 * daemon threads; it holds no lock of ours while it waits for the GIL.
 */
#include "hrlpy.h"

#include <string.h>

static bool queue_empty(const hrlpy_lost_queue *q) {
  return q->pending.next == &q->pending;
}

int hrlpy_lost_init(hrlpy_lost_queue *q) {
  hrlpy_link_init(&q->pending);
  q->closed = false;
  q->waiting = false;
  q->events = false;
  q->started = false;
  if (pthread_mutex_init(&q->mu, NULL) != 0) {
    return -1;
  }
  if (pthread_cond_init(&q->cv, NULL) != 0) {
    pthread_mutex_destroy(&q->mu);
    return -1;
  }
  q->ready = true;
  return 0;
}

void hrlpy_lost_close(hrlpy_lost_queue *q) {
  if (!q->ready) {
    return;
  }
  /* Wait for the dispatcher to leave the queue (it never needs the GIL to
   * do so) before the queue goes away with the module. */
  pthread_mutex_lock(&q->mu);
  q->closed = true;
  pthread_cond_broadcast(&q->cv);
  while (q->waiting) {
    pthread_cond_wait(&q->cv, &q->mu);
  }
  pthread_mutex_unlock(&q->mu);
  pthread_cond_destroy(&q->cv);
  pthread_mutex_destroy(&q->mu);
  q->ready = false;
}

void hrlpy_lost_after_fork(hrlpy_lost_queue *q) {
  if (!q->ready) {
    return;
  }
  /* The parent's dispatcher (and whoever held the mutex) is not here. */
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->cv, NULL);
  q->waiting = false;
  q->started = false;
}

/* The core's callback, in the renewer thread (or the holder's, when its
 * own call found the loss): no GIL, no Python. */
void hrlpy_lost_post(hrl_lock *lock, const char *reason, void *user_data) {
  (void)lock;
  (void)reason;
  hrlpy_lock *self = user_data;
  hrlpy_lost_queue *q = &self->state->lost;
  pthread_mutex_lock(&q->mu);
  if (self->lost_link.next == NULL) {
    /* Appended: callbacks run in the order the losses were found. */
    hrlpy_link_add(q->pending.prev, &self->lost_link);
  }
  pthread_cond_broadcast(&q->cv);
  pthread_mutex_unlock(&q->mu);
}

void hrlpy_lost_forget(hrlpy_lock *self) {
  hrlpy_lost_queue *q = &self->state->lost;
  if (!q->ready) {
    return;
  }
  pthread_mutex_lock(&q->mu);
  if (self->lost_link.next != NULL) {
    hrlpy_link_remove(&self->lost_link);
  }
  pthread_mutex_unlock(&q->mu);
}

int hrlpy_lost_start(hrlpy_state *st, PyObject *module) {
  if (st->lost.started) {
    return 0;
  }
  PyObject *threading = PyImport_ImportModule("threading");
  if (threading == NULL) {
    return -1;
  }
  PyObject *target = PyObject_GetAttrString(module, "_dispatch_lost");
  PyObject *thread_cls = PyObject_GetAttrString(threading, "Thread");
  PyObject *kwargs =
      target == NULL || thread_cls == NULL
          ? NULL
          : Py_BuildValue("{sOsssO}", "target", target, "name",
                          "hiredlock-on-lost", "daemon", Py_True);
  PyObject *empty = PyTuple_New(0);
  PyObject *thread = kwargs != NULL && empty != NULL
                         ? PyObject_Call(thread_cls, empty, kwargs)
                         : NULL;
  PyObject *res =
      thread != NULL ? PyObject_CallMethod(thread, "start", NULL) : NULL;
  Py_XDECREF(res);
  Py_XDECREF(thread);
  Py_XDECREF(empty);
  Py_XDECREF(kwargs);
  Py_XDECREF(thread_cls);
  Py_XDECREF(target);
  Py_DECREF(threading);
  if (res == NULL) {
    return -1;
  }
  st->lost.started = true;
  return 0;
}

/* With the GIL: the first Lock waiting for its callback, as a new
 * reference, or NULL. A Lock being freed takes itself off the queue with
 * the GIL held too, so one found here is alive. */
static hrlpy_lock *take_first(hrlpy_lost_queue *q) {
  pthread_mutex_lock(&q->mu);
  hrlpy_lock *self = NULL;
  if (!queue_empty(q)) {
    hrlpy_link *l = q->pending.next;
    hrlpy_link_remove(l);
    self = (hrlpy_lock *)((char *)l - offsetof(hrlpy_lock, lost_link));
    Py_INCREF(self);
  }
  pthread_mutex_unlock(&q->mu);
  return self;
}

/* With the GIL: every live client's queued events to the sink. The
 * clients with events are listed (held) first: the sink runs Python,
 * which may make or drop clients meanwhile. */
static void flush_all(hrlpy_state *st) {
  PyObject *pending = PyList_New(0);
  if (pending == NULL) {
    PyErr_WriteUnraisable(NULL);
    return;
  }
  for (hrlpy_link *l = st->clients.next; l != &st->clients; l = l->next) {
    hrlpy_client *c =
        (hrlpy_client *)((char *)l - offsetof(hrlpy_client, link));
    if (hrl_client_events_pending(c->client) &&
        PyList_Append(pending, (PyObject *)c) < 0) {
      PyErr_WriteUnraisable(NULL);
      break;
    }
  }
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(pending); k++) {
    hrlpy_events_flush((hrlpy_client *)PyList_GET_ITEM(pending, k));
  }
  Py_DECREF(pending);
}

/* _dispatch_lost(): the dispatcher thread's body; returns when the module
 * goes away. */
PyObject *hrlpy_dispatch_lost(PyObject *module, PyObject *unused) {
  (void)unused;
  hrlpy_state *st = PyModule_GetState(module);
  hrlpy_lost_queue *q = &st->lost;
  for (;;) {
    bool closed, events;
    Py_BEGIN_ALLOW_THREADS;
    pthread_mutex_lock(&q->mu);
    q->waiting = true;
    while (!q->closed && queue_empty(q) && !q->events) {
      pthread_cond_wait(&q->cv, &q->mu);
    }
    closed = q->closed;
    events = q->events;
    q->events = false;
    q->waiting = false;
    pthread_cond_broadcast(&q->cv); /* a closer may wait for this */
    pthread_mutex_unlock(&q->mu);
    Py_END_ALLOW_THREADS;
    if (closed) {
      Py_RETURN_NONE;
    }
    if (events) {
      flush_all(st);
    }
    hrlpy_lock *self = take_first(q);
    if (self == NULL) {
      continue;
    }
    PyObject *callback =
        self->on_lost != NULL ? Py_NewRef(self->on_lost) : NULL;
    if (callback != NULL) {
      PyObject *res = PyObject_CallOneArg(callback, (PyObject *)self);
      if (res == NULL) {
        PyErr_WriteUnraisable(callback);
      }
      Py_XDECREF(res);
      Py_DECREF(callback);
    }
    Py_DECREF(self);
  }
}
