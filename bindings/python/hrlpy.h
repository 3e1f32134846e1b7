/*
 * hiredlock._core: the CPython glue over libhiredlock, shared declarations.
 *
 * The extension only converts arguments and statuses; every decision about
 * locks is the core's. Types are heap types created from specs, and all the
 * module's objects (types, exception classes, the lists of live handles used
 * after fork()) live in the module state: there is no static mutable state.
 */
#ifndef HRLPY_H
#define HRLPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hiredlock/binding.h"

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *hrlpy_new_ref(PyObject *obj) {
  Py_INCREF(obj);
  return obj;
}
#define Py_NewRef(obj) hrlpy_new_ref((PyObject *)(obj))
#endif

/* A node of an intrusive circular list with a sentinel in the module state;
 * guarded by the GIL. */
typedef struct hrlpy_link {
  struct hrlpy_link *prev;
  struct hrlpy_link *next;
} hrlpy_link;

/* Locks whose hold was lost, waiting for their on_lost callback (lost.c).
 * pending is guarded by mu, not by the GIL: the core's renewer posts here
 * without the GIL. */
typedef struct hrlpy_lost_queue {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* an entry was posted, or the dispatcher left */
  hrlpy_link pending;
  bool ready;   /* mu and cv were initialised */
  bool closed;  /* the module goes away: the dispatcher returns */
  bool waiting; /* the dispatcher waits inside the queue */
  bool events;  /* a client queued an event since the dispatcher looked */
  bool started; /* a dispatcher thread runs in this process (GIL) */
} hrlpy_lost_queue;

/* The options Client.lock and Lock._make take after their own arguments
 * (lock_new.c). */
#define HRLPY_MAKE_OPTIONS 6

typedef struct hrlpy_state {
  PyTypeObject *client_type;
  PyTypeObject *lock_type;
  PyTypeObject *stream_type;
  PyTypeObject *subscriber_type;
  PyObject *lock_error;        /* hiredlock.LockError(Exception) */
  PyObject *not_acquired;      /* NotAcquired(LockError, TimeoutError) */
  PyObject *not_owned;         /* NotOwned(LockError) */
  PyObject *lock_lost;         /* LockLost(NotOwned) */
  PyObject *connection_error;  /* ConnectionError(LockError, ConnectionError) */
  PyObject *permission_denied; /* PermissionDenied(LockError,
                                  PermissionError) */
  const hrl_option *ttl;       /* the lock option "ttl": its default */
  hrlpy_link clients;          /* live Client objects, for after_fork */
  hrlpy_link locks;            /* live Lock objects, for after_fork */
  hrlpy_lost_queue lost;       /* on_lost callbacks to run (lost.c) */
  PyObject *event_sink;        /* hiredlock._events' emit(client) (ops.c) */
  PyObject *lock_class;        /* what Client._lock makes: hiredlock.Lock */
  /* The options Lock._make takes (lock_new.c), in the core table's order:
   * their index in it, and their place among _make's options. */
  uint8_t make_index[HRLPY_MAKE_OPTIONS];
  uint8_t make_arg[HRLPY_MAKE_OPTIONS];
  /* What Lock._step() returns, made once (proto.c): the kinds "round" and
   * "wait" interned, and the two ends ("done", True) and ("done", False)
   * whole. Two steps per operation; fresh strings and a tuple for each
   * were a tenth of the asyncio driver's own work per cycle. */
  PyObject *step_round;
  PyObject *step_wait;
  PyObject *step_done_true;
  PyObject *step_done_false;
} hrlpy_state;

typedef struct hrlpy_client {
  PyObject ob_base;
  hrlpy_link link;
  hrlpy_state *state;
  hrl_client *client;
  PyObject *masters; /* tuple of master labels (no credentials) */
} hrlpy_client;

/* What is running on a Lock object right now (see gate.c). */
typedef enum hrlpy_busy {
  HRLPY_IDLE,
  HRLPY_ACQUIRING,
  HRLPY_RELEASING,
  HRLPY_EXTENDING
} hrlpy_busy;

typedef struct hrlpy_lock {
  PyObject ob_base;
  hrlpy_link link;
  hrlpy_state *state;
  hrlpy_client *client; /* strong: a client outlives its locks */
  PyObject *name;       /* the name as given, str or bytes */
  hrl_lock *lock;
  PyObject *on_lost;    /* called with the Lock when a lease is lost */
  hrlpy_link lost_link; /* in the state's lost queue (lost.c), under its mu */
  bool watched;         /* the core posts its loss (hrlpy_lock_watch) */
  int64_t with_wait_ms; /* the wait of a `with` block, HRL_WAIT_FOREVER */
  bool with_blocking;
  bool gate_ready; /* mu and cv were initialised */
  /* Made with auto_renew (a lease, which its renewer may find lost), or a
   * lease's twin: the snapshots ask whether it is lost. */
  bool lease;
  /* The gate: one operation at a time on the hrl_lock, which is not
   * thread-safe. mu is only ever held for a few instructions, never across
   * network I/O and never while waiting for the GIL. */
  pthread_mutex_t mu;
  pthread_cond_t cv; /* CLOCK_MONOTONIC; signalled when busy clears */
  hrlpy_busy busy;
  unsigned waiters;
  /* What the accessors report while an operation is running (under mu),
   * if snapped: an operation that keeps the GIL takes no snapshot. */
  bool snapped;
  bool held;
  int64_t valid_until_us;
  uint32_t ttl_ms;
  uint64_t fence;
  uint32_t permit; /* a semaphore's permit: its number while held */
  char token[HRL_TOKEN_LEN + 1];
  bool lost;
  char lost_reason[HRL_DETAIL_MAX];
  /* What the object holds (a mutex, a read, a write, a permit of a
   * semaphore of `permits`), set when it is made. */
  hrl_lock_mode mode;
  uint32_t permits;
  /* A twin (proto.c): the Lock object a Python driver runs a lease's
   * renewal on. It borrows the lease's twin hrl_lock and keeps the lease
   * (which owns it) alive; NULL on every other Lock. */
  PyObject *lease_of;
} hrlpy_lock;

/* module.c */
PyMODINIT_FUNC PyInit__core(void);
hrlpy_state *hrlpy_state_of_type(PyTypeObject *type);

/* errors.c: exception classes and the status -> exception table. */
int hrlpy_errors_init(PyObject *module, hrlpy_state *st);
/* Raises the exception for a failed status with the core's message (the
 * status text, then ": detail"). Returns NULL. */
PyObject *hrlpy_raise_status(hrlpy_state *st, hrl_status status,
                             const char *detail);
/* ValueError("invalid argument: <formatted detail>"), as the core words it. */
PyObject *hrlpy_raise_invalid(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* args.c: METH_FASTCALL | METH_KEYWORDS argument matching. names lists the
 * parameters (NULL terminated); the first n_positional may be passed by
 * position. Fills out[] with borrowed references (NULL when not given).
 * Returns 0, or -1 with a TypeError naming the function and argument. */
int hrlpy_parse_args(const char *func, const char *const *names,
                     Py_ssize_t n_positional, PyObject *const *args,
                     Py_ssize_t nargs, PyObject *kwnames, PyObject **out);

/* convert.c */
/* A number of seconds (int or float, not bool) as a double; TypeError
 * naming `what` otherwise. Returns 0 or -1. Huge ints become +/-inf so the
 * range check reports them. */
int hrlpy_seconds(PyObject *obj, const char *what, double *out);
/* The same for a plain number (drift_factor). */
int hrlpy_number(PyObject *obj, const char *what, double *out);
/* A lock's TTL in seconds as milliseconds, within what client accepts
 * (hrl_client_ttl_seconds). Returns 0 or -1 (TypeError, ValueError). */
int hrlpy_ttl_ms(PyObject *obj, const hrl_client *client, int64_t *out_ms);
/* An option's Python value converted by its kind (seconds, number, bytes,
 * bool) for hrl_options_set / hrl_lock_options_set. Returns 0 or -1
 * (TypeError naming the option). */
int hrlpy_option_value(PyObject *value, const hrl_option *opt, double *number,
                       const char **bytes, Py_ssize_t *len);
/* Every key of kwds (may be NULL) must name an option accept() takes; else
 * "<func>() got an unexpected keyword argument '<key>'". 0 or -1. */
int hrlpy_check_option_keys(PyObject *kwds, const char *func,
                            bool (*accept)(const hrl_option *opt));
/* str (UTF-8) or bytes: a view of the bytes, valid while obj lives. */
int hrlpy_bytes_view(PyObject *obj, const char *what, const char **data,
                     Py_ssize_t *len);
/* Parses a `timeout` argument with threading.Lock's rules into a wait for
 * hrl_lock_acquire: -1 waits forever, blocking=False allows only -1 and
 * means one attempt. timeout may be NULL (not given). */
int hrlpy_wait_ms(PyObject *timeout, bool blocking, int64_t *wait_ms);

/* client.c / lock.c */
extern PyType_Spec hrlpy_client_spec;
extern PyType_Spec hrlpy_lock_spec;
/* lock_new.c: making a Lock (Lock(), Lock._make, Client._lock). */
int hrlpy_make_options_init(hrlpy_state *st);
PyObject *hrlpy_lock_new(PyTypeObject *type, PyObject *args, PyObject *kwds);
PyObject *hrlpy_lock_make(PyObject *cls, PyObject *const *args,
                          Py_ssize_t nargs);
PyObject *hrlpy_client_lock(PyObject *op, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrlpy_set_lock_class(PyObject *module, PyObject *cls);
/* lock.c: has the core call on_lost (if any) when self's hold is lost. */
void hrlpy_lock_watch(hrlpy_lock *self);

/* gate.c: one operation at a time on a Lock object. */
int hrlpy_gate_init(hrlpy_lock *self);
void hrlpy_gate_destroy(hrlpy_lock *self);
/* Outcomes of hrlpy_gate_enter. */
enum {
  HRLPY_GATE_ERROR = -1,   /* a signal handler raised: exception set */
  HRLPY_GATE_BUSY = 0,     /* not free before the deadline */
  HRLPY_GATE_ENTERED = 1,  /* self->busy is op: run it, then leave */
  HRLPY_GATE_NOT_HELD = 2, /* release/extend while an acquire runs */
};
/* Whether the calling thread is the only one that can want the GIL: one
 * interpreter with one thread state (a threading.Thread, an executor's
 * worker, the on_lost dispatcher, a C thread that called
 * PyGILState_Ensure once: each has one of its own). */
bool hrlpy_only_thread(void);
/* Waits (GIL released, signals checked) until op may run on self or
 * deadline_us (hrl_now_us clock; <= now for "do not wait") passes.
 * *keep_gil: true when the caller would keep the GIL from here until its
 * core call ended (hrlpy_only_thread() and no wait); set false when it
 * cannot (the gate was busy), and then the call must release it. */
int hrlpy_gate_enter(hrlpy_lock *self, hrlpy_busy op, int64_t deadline_us,
                     bool *keep_gil);
/* Takes the snapshot an operation entered with the GIL kept did not,
 * before it releases the GIL after all (an interrupted acquire). */
void hrlpy_gate_snap(hrlpy_lock *self);
/* Ends the operation: refreshes the snapshot and wakes waiters. */
void hrlpy_gate_leave(hrlpy_lock *self);
/* Makes the gate usable in a forked child (the parent's other threads,
 * which may have held it, do not exist there). Returns what was running:
 * anything but HRLPY_IDLE means the hrl_lock was left mid-operation. */
hrlpy_busy hrlpy_gate_after_fork(hrlpy_lock *self);
/* The state accessors report: the core's when no operation runs, else the
 * snapshot taken when the last one ended. token gets HRL_TOKEN_LEN + 1. */
typedef struct hrlpy_view {
  bool held;
  int64_t validity_ms;
  uint32_t ttl_ms;
  uint64_t fence;  /* 0: none */
  uint32_t permit; /* 0: none */
  char token[HRL_TOKEN_LEN + 1];
  bool lost;
  char lost_reason[HRL_DETAIL_MAX];
} hrlpy_view;
void hrlpy_gate_view(hrlpy_lock *self, hrlpy_view *out);
/* locked()'s answer alone (hrlpy_view.held), without the view's copies. */
bool hrlpy_gate_held(hrlpy_lock *self);

/* proto.c: the sans-I/O protocol for Python drivers (see there): Lock
 * methods, the Stream type and the module's STREAM_* constants. */
PyObject *hrlpy_wait_of(PyObject *op, PyObject *const *args, Py_ssize_t nargs);
PyObject *hrlpy_begin_acquire(PyObject *op, PyObject *arg);
PyObject *hrlpy_begin_acquire_if_free(PyObject *op, PyObject *const *args,
                                      Py_ssize_t nargs);
PyObject *hrlpy_begin_release(PyObject *op, PyObject *unused);
PyObject *hrlpy_begin_extend(PyObject *op, PyObject *ttl);
PyObject *hrlpy_step(PyObject *op, PyObject *unused);
PyObject *hrlpy_fail(PyObject *op, PyObject *const *args, Py_ssize_t nargs);
PyObject *hrlpy_missed(PyObject *op, PyObject *const *args, Py_ssize_t nargs);
PyObject *hrlpy_skippable(PyObject *op, PyObject *arg);
PyObject *hrlpy_cancel(PyObject *op, PyObject *unused);
PyObject *hrlpy_waiter(PyObject *op, PyObject *unused);
PyObject *hrlpy_notified(PyObject *op, PyObject *arg);
PyObject *hrlpy_wake(PyObject *op, PyObject *unused);
PyObject *hrlpy_renew_in(PyObject *op, PyObject *unused);
PyObject *hrlpy_renew_begin(PyObject *op, PyObject *unused);
PyObject *hrlpy_renew_end(PyObject *op, PyObject *unused);
extern PyType_Spec hrlpy_stream_spec;
int hrlpy_proto_constants(PyObject *module);
/* Lock._step()'s kinds and ends, made once into the state (proto.c). */
int hrlpy_proto_init(hrlpy_state *st);
/* lost.c: the on_lost queue and its dispatcher thread. */
int hrlpy_lost_init(hrlpy_lost_queue *q);
void hrlpy_lost_close(hrlpy_lost_queue *q);
void hrlpy_lost_after_fork(hrlpy_lost_queue *q);
/* The core's hrl_lost_fn: posts the Lock (user_data) to its queue. */
void hrlpy_lost_post(hrl_lock *lock, const char *reason, void *user_data);
/* Takes a Lock off the queue (it is being freed). GIL held. */
void hrlpy_lost_forget(hrlpy_lock *self);
/* Starts the dispatcher thread unless it runs. GIL held; 0 or -1. */
int hrlpy_lost_start(hrlpy_state *st, PyObject *module);
/* _dispatch_lost(): the dispatcher thread's body. */
PyObject *hrlpy_dispatch_lost(PyObject *module, PyObject *unused);

/* ops.c: inspections, counters and events (see there). */
int hrlpy_events_attach(hrlpy_client *self);
/* Hands self's queued events to the sink, if any (GIL held). */
void hrlpy_events_flush(hrlpy_client *self);
PyObject *hrlpy_set_event_sink(PyObject *module, PyObject *sink);
PyObject *hrlpy_client_take_events(PyObject *op, PyObject *unused);
PyObject *hrlpy_client_flush_events(PyObject *op, PyObject *unused);
PyObject *hrlpy_client_stats(PyObject *op, PyObject *unused);
PyObject *hrlpy_client_inspect(PyObject *op, PyObject *name);
PyObject *hrlpy_inspection_dict(const hrl_inspection *r, PyObject *name);
PyObject *hrlpy_begin_inspect(PyObject *op, PyObject *unused);
PyObject *hrlpy_lock_inspection(PyObject *op, PyObject *unused);

/* subscriber.c: the Subscriber type (a subscriber connection's stream) and
 * the module's NOTICE_* constants. */
extern PyType_Spec hrlpy_subscriber_spec;
int hrlpy_subscriber_constants(PyObject *module);

/* fork.c: the lists of live handles and the after-fork reset. */
void hrlpy_link_init(hrlpy_link *head);
void hrlpy_link_add(hrlpy_link *head, hrlpy_link *node);
void hrlpy_link_remove(hrlpy_link *node);
/* Module functions: os.register_at_fork(before=..., after_in_parent=...,
 * after_in_child=...) calls them. */
PyObject *hrlpy_before_fork(PyObject *module, PyObject *unused);
PyObject *hrlpy_after_fork_in_parent(PyObject *module, PyObject *unused);
PyObject *hrlpy_after_fork_in_child(PyObject *module, PyObject *unused);
int hrlpy_fork_register(PyObject *module);

#endif
