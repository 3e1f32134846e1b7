/* The built-in driver's waiting: a client's subscriber connections (one
 * per master, listen.c) and the threads whose acquires wait for a hand-off
 * (waitroom.c). No thread of its own: a waiting thread reads the
 * subscriber sockets itself, one at a time, for all of them. */
#ifndef HRL_WAITROOM_H
#define HRL_WAITROOM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/state.h"

struct redisContext;
struct hrl_tls;
struct hrl_tls_ctx;

/* One subscriber connection (listen.c). */
typedef enum hrl_sub_state {
  HRL_SUB_DOWN,       /* closed; opened again at retry_at_us */
  HRL_SUB_CONNECTING, /* connect in progress */
  HRL_SUB_HANDSHAKE,  /* a rediss:// master's TLS handshake in progress */
  HRL_SUB_OPEN,       /* handshake / SUBSCRIBE sent, not confirmed yet */
  HRL_SUB_READY       /* subscribed: hand-offs arrive */
} hrl_sub_state;

typedef struct hrl_sub {
  hrl_sub_state state;
  struct redisContext *ctx;
  struct hrl_tls *tls;         /* a rediss:// master's, once connected */
  struct hrl_tls_ctx *tls_ctx; /* made at its first connect */
  short tls_want;              /* TLS waits for POLLIN or POLLOUT */
  hrl_subscriber *stream;
  pid_t owner_pid;
  int64_t deadline_us; /* CONNECTING, OPEN: give up at */
  int64_t retry_at_us; /* DOWN: reconnect at */
  uint32_t failures;   /* in a row, for the back-off */
  bool buffered;       /* notices may wait in the stream's buffer */
  const char *out;     /* bytes still to write */
  size_t out_len;
} hrl_sub;

/* What the subscriber connections told: a hand-off of master i to token,
 * or (token NULL) master i's subscription came up. */
typedef void (*hrl_notice_fn)(void *ud, size_t i, const char *token);

/* listen.c: reads the subscriber connections (opening those that are down
 * and due) until until_us or until one of them told something, which goes
 * to fn. client's masters, n of them. */
void hrl_listen(hrl_sub *subs, size_t n, hrl_client *client,
                const hrl_config *cfg, int64_t until_us, hrl_notice_fn fn,
                void *ud);

/* listen.c: closes every subscriber connection without writing to it. */
void hrl_listen_close(hrl_sub *subs, size_t n);

/* A lock's acquire waiting for its hand-offs (on the waiting thread's
 * stack), from the round that queued it until it is done. */
typedef struct hrl_waiter {
  struct hrl_waiter *next;
  char token[HRL_TOKEN_LEN];
  uint64_t notified; /* masters that handed it the lock, not yet told */
  bool woken;        /* a subscription came up: try again */
  pthread_cond_t cv;
} hrl_waiter;

typedef struct hrl_waitroom {
  pthread_mutex_t mu; /* guards the fields below but subs */
  hrl_waiter *waiters;
  /* A thread is reading the subscriber connections (only it touches
   * subs, without mu); the others wait on their condition variable. */
  bool polling;
  bool fork_prepared;
  size_t n;
  hrl_sub *subs;
} hrl_waitroom;

/* waitroom.c: an empty room for n masters; HRL_ENOMEM or HRL_ESYSTEM. */
hrl_status hrl_waitroom_init(hrl_waitroom *room, size_t n);

/* waitroom.c: closes the subscriber connections and frees the room. */
void hrl_waitroom_clear(hrl_waitroom *room);

/* waitroom.c: around fork() (hrl_client_fork_*): the child drops its
 * parent's waiters and subscriber connections, unwritten. */
void hrl_waitroom_fork_prepare(hrl_waitroom *room);
void hrl_waitroom_fork_parent(hrl_waitroom *room);
void hrl_waitroom_after_fork(hrl_waitroom *room);

/* waitroom.c: w waits for the hand-offs of token from now on (the lock's
 * hrl_proto_waiter, before the round that queues it); false when out of
 * resources (it then waits on its timers only). */
bool hrl_waitroom_enter(hrl_waitroom *room, hrl_waiter *w, const char *token);
void hrl_waitroom_leave(hrl_waitroom *room, hrl_waiter *w);

/* Returns true to stop waiting (hrl_cancel_fn). */
typedef bool (*hrl_wait_cancel_fn)(void *user_data);

/* waitroom.c: waits up to ms for a hand-off to w (or for a subscription to
 * come up), calling cancel (when not NULL) at least every 50 ms, and tells
 * lock what came. w may be NULL (not registered): then it only waits.
 * False when cancel asked to stop. */
bool hrl_waitroom_wait(hrl_waitroom *room, hrl_client *client, hrl_waiter *w,
                       hrl_lock *lock, uint32_t ms, hrl_wait_cancel_fn cancel,
                       void *user_data);

#endif
