/*
 * fork() support. The core already notices a new process id and never
 * writes to its parent's sockets; these hooks also keep every client out of
 * the middle of a round while the process is copied (the core's fork
 * hooks), and reset what the parent's other threads may have left locked
 * in the child: each Lock object's gate. A Lock that another
 * thread was using at the fork holds nothing in the child, and its core
 * handle, frozen mid-operation, is replaced by a fresh one.
 */
#include "hrlpy.h"

void hrlpy_link_init(hrlpy_link *head) {
  head->prev = head;
  head->next = head;
}

void hrlpy_link_add(hrlpy_link *head, hrlpy_link *node) {
  node->next = head->next;
  node->prev = head;
  head->next->prev = node;
  head->next = node;
}

void hrlpy_link_remove(hrlpy_link *node) {
  node->prev->next = node->next;
  node->next->prev = node->prev;
  node->prev = NULL;
  node->next = NULL;
}

#define CONTAINER(ptr, type) ((type *)((char *)(ptr)-offsetof(type, link)))

static void renew_lock(hrlpy_lock *self) {
  size_t len;
  const void *name = hrl_lock_name(self->lock, &len);
  hrl_lock_options lo;
  hrl_lock_get_options(self->lock, &lo);
  lo.ttl_ms = hrl_lock_ttl_ms(self->lock);
  hrl_lock *fresh = NULL;
  if (hrl_lock_new_with(self->client->client, name, len, &lo, &fresh, NULL,
                        0) == HRL_OK) {
    hrl_lock_free(self->lock);
    self->lock = fresh;
    hrlpy_lock_watch(self);
  }
}

/* os.register_at_fork(before=...): no client may be in the middle of a
 * round while the process is copied. A round in another thread runs
 * without the GIL and needs none to finish, so waiting for it here, GIL
 * held, cannot deadlock. */
PyObject *hrlpy_before_fork(PyObject *module, PyObject *unused) {
  (void)unused;
  hrlpy_state *st = PyModule_GetState(module);
  for (hrlpy_link *l = st->clients.next; l != &st->clients; l = l->next) {
    hrl_client_fork_prepare(CONTAINER(l, hrlpy_client)->client);
  }
  Py_RETURN_NONE;
}

PyObject *hrlpy_after_fork_in_parent(PyObject *module, PyObject *unused) {
  (void)unused;
  hrlpy_state *st = PyModule_GetState(module);
  for (hrlpy_link *l = st->clients.next; l != &st->clients; l = l->next) {
    hrl_client_fork_parent(CONTAINER(l, hrlpy_client)->client);
  }
  Py_RETURN_NONE;
}

PyObject *hrlpy_after_fork_in_child(PyObject *module, PyObject *unused) {
  (void)unused;
  hrlpy_state *st = PyModule_GetState(module);
  for (hrlpy_link *l = st->clients.next; l != &st->clients; l = l->next) {
    hrl_client_after_fork(CONTAINER(l, hrlpy_client)->client);
  }
  hrlpy_lost_after_fork(&st->lost);
  for (hrlpy_link *l = st->locks.next; l != &st->locks; l = l->next) {
    hrlpy_lock *lock = CONTAINER(l, hrlpy_lock);
    if (hrlpy_gate_after_fork(lock) != HRLPY_IDLE) {
      renew_lock(lock);
    }
  }
  Py_RETURN_NONE;
}

int hrlpy_fork_register(PyObject *module) {
  PyObject *os = PyImport_ImportModule("os");
  if (os == NULL) {
    return -1;
  }
  PyObject *reg = PyObject_GetAttrString(os, "register_at_fork");
  Py_DECREF(os);
  if (reg == NULL) {
    return -1;
  }
  PyObject *before = PyObject_GetAttrString(module, "_before_fork");
  PyObject *parent = PyObject_GetAttrString(module, "_after_fork_in_parent");
  PyObject *child = PyObject_GetAttrString(module, "_after_fork_in_child");
  PyObject *kwargs =
      before == NULL || parent == NULL || child == NULL
          ? NULL
          : Py_BuildValue("{sOsOsO}", "before", before, "after_in_parent",
                          parent, "after_in_child", child);
  PyObject *empty = PyTuple_New(0);
  PyObject *res = kwargs != NULL && empty != NULL
                      ? PyObject_Call(reg, empty, kwargs)
                      : NULL;
  Py_XDECREF(empty);
  Py_XDECREF(kwargs);
  Py_XDECREF(before);
  Py_XDECREF(parent);
  Py_XDECREF(child);
  Py_DECREF(reg);
  if (res == NULL) {
    return -1;
  }
  Py_DECREF(res);
  return 0;
}
