/*
 * fork() support. The core already notices a new process id and never
 * writes to its parent's sockets; this hook also resets what the parent's
 * other threads may have left locked: each client's mutex (the core's
 * hrl_client_after_fork) and each Lock object's gate. A Lock that another
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
  hrl_lock *fresh = NULL;
  if (hrl_lock_new(self->client->client, name, len, hrl_lock_ttl_ms(self->lock),
                   &fresh, NULL, 0) == HRL_OK) {
    hrl_lock_free(self->lock);
    self->lock = fresh;
  }
}

PyObject *hrlpy_after_fork_in_child(PyObject *module, PyObject *unused) {
  (void)unused;
  hrlpy_state *st = PyModule_GetState(module);
  for (hrlpy_link *l = st->clients.next; l != &st->clients; l = l->next) {
    hrl_client_after_fork(CONTAINER(l, hrlpy_client)->client);
  }
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
  PyObject *hook = PyObject_GetAttrString(module, "_after_fork_in_child");
  PyObject *kwargs =
      hook == NULL ? NULL : Py_BuildValue("{sO}", "after_in_child", hook);
  PyObject *empty = PyTuple_New(0);
  PyObject *res = kwargs != NULL && empty != NULL
                      ? PyObject_Call(reg, empty, kwargs)
                      : NULL;
  Py_XDECREF(empty);
  Py_XDECREF(kwargs);
  Py_XDECREF(hook);
  Py_DECREF(reg);
  if (res == NULL) {
    return -1;
  }
  Py_DECREF(res);
  return 0;
}
