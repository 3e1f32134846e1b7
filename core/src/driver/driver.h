/* The built-in driver: runs the protocol's rounds on every master at once
 * over non-blocking sockets and one poll() loop, with hiredis to connect
 * and to read replies. It owns the client's connections; everything it
 * decides about locks, it asks the protocol (proto/). */
#ifndef HRL_DRIVER_H
#define HRL_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/state.h"

struct redisContext;
struct hrl_tls;
struct hrl_tls_ctx;

/* One connection per master, opened lazily; owner_pid tells a forked child
 * that the socket is its parent's. Once connected, the socket is in
 * blocking mode (every call but one passes MSG_DONTWAIT) so that the last
 * reply of a round can be awaited in recv() itself, bounded by SO_RCVTIMEO
 * (rcvtimeo_ms, 0 while unset). owed counts the replies still due for
 * commands of earlier rounds that timed out: they are read and dropped
 * before the current round's reply. tls is the TLS state of a rediss://
 * master's connection (NULL for plain TCP and unix). See fanout.c. */
typedef struct hrl_conn {
  struct redisContext *ctx;
  struct hrl_tls *tls;
  /* The connection's RESP reader (the one every driver uses: hiredis's
   * reader made and freed an object per reply), made with its first
   * connection and kept, emptied, when the connection closes. */
  hrl_parser *parser;
  pid_t owner_pid;
  bool blocking;
  uint32_t rcvtimeo_ms;
  uint32_t owed;
  /* A connect in progress (and a rediss:// master's TLS handshake after
   * it: handshaking) carries over to later rounds until this deadline
   * (connect_timeout after it began); see connect.c. */
  bool connecting;
  bool handshaking;
  int64_t connect_deadline_us;
  /* The handshake commands (AUTH, SELECT, INFO) of a connection whose
   * round ended before their replies came: they carry over to later
   * rounds like a connect, until connect_deadline_us (0: none out). */
  int handshake_left;
  int handshake_total;
} hrl_conn;

/* A client's connections. */
typedef struct hrl_pool {
  size_t n;
  hrl_conn *conns;
  /* Per master, NULL but for a Redis Cluster or a Sentinel-managed
   * primary: a connection per node it may ask (HRL_NODES_MAX, indexed as
   * hrl_target.node). NULL itself when the client has neither. */
  hrl_conn **node_conns;
  /* Per master, a rediss:// master's TLS context, made at its first
   * connect and shared by masters with the same settings (tls.h). */
  struct hrl_tls_ctx **tls_ctx;
  /* Bytes the kernel zeroes in a forked child (MADV_WIPEONFORK; in the
   * client's entropy page, which owns them): while *fork_canary is
   * non-zero, the connections are this process's own, and a round needs
   * no getpid(). NULL where the kernel cannot: owner_pid and getpid() tell
   * instead. */
  volatile unsigned char *fork_canary;
} hrl_pool;

/* entropy.c: the kernel CSPRNG (getrandom(), else /dev/urandom) read
 * anew (hrl_entropy_fn; ctx unused): all n bytes, or HRL_ESYSTEM. */
hrl_status hrl_os_entropy(void *ctx, void *buf, size_t n);

/* entropy.c: a client's pool of CSPRNG bytes, drawn a batch at a time and
 * handed out once each, in a page a forked child finds empty
 * (MADV_WIPEONFORK), which also holds the client's fork canary. */
typedef struct hrl_entropy_pool hrl_entropy_pool;

/* entropy.c: a new, empty pool; *out stays NULL where the kernel cannot
 * wipe a page on fork (then hrl_pool_entropy reads anew for every
 * request). HRL_ENOMEM when no page could be mapped. */
hrl_status hrl_entropy_pool_new(hrl_entropy_pool **out);

/* entropy.c: unmaps the pool and its canary (NULL: nothing). */
void hrl_entropy_pool_free(hrl_entropy_pool *pool);

/* entropy.c: the fork canary in pool's page (hrl_pool.fork_canary): bytes
 * that are zero until set and zero again in a forked child; NULL without a
 * pool. They live as long as the pool. */
volatile unsigned char *hrl_entropy_pool_canary(hrl_entropy_pool *pool);

/* entropy.c: a client's entropy source (hrl_entropy_fn, ctx: its pool or
 * NULL): n bytes no one else got, from the pool (a new batch when it runs
 * short) or, for requests larger than a quarter batch and without a pool,
 * read anew. Safe from several threads at once. */
hrl_status hrl_pool_entropy(void *ctx, void *buf, size_t n);

/* conn.c: closed connections for cfg's masters, told about a fork by
 * fork_canary (hrl_entropy_pool_canary: it must outlive the pool; NULL:
 * by getpid()); HRL_ENOMEM when out of memory. */
hrl_status hrl_pool_init(hrl_pool *pool, const hrl_config *cfg,
                         volatile unsigned char *fork_canary);

/* conn.c: closes every connection (writing nothing) and frees the pool. */
void hrl_pool_clear(hrl_pool *pool);

/* conn.c: in a forked child, drops the parent's connections unwritten. */
void hrl_pool_after_fork(hrl_pool *pool);

/* conn.c: closes a connection without writing to it. */
void hrl_conn_close(hrl_conn *conn);

/* conn.c: master i's TLS context, made (or shared) at its first use; NULL
 * with msg when its certificates cannot be loaded. */
struct hrl_tls_ctx *hrl_pool_tls_ctx(hrl_pool *pool, const hrl_config *cfg,
                                     size_t i, char *msg, size_t size);

/* fanout.c: runs the current round of lock's operation on every master at
 * once through pool's connections, each master within timeout_ms from
 * now_us (hrl_now_us(), read by the caller just before: the reading its
 * step began the round at). The caller keeps other threads off the pool
 * and the lock's client for the whole round. */
void hrl_driver_round(hrl_pool *pool, hrl_lock *lock, uint32_t timeout_ms,
                      int64_t now_us);

/* sleep.c: sleeps for ms milliseconds, resuming after signals. */
void hrl_sleep_ms(uint32_t ms);

#endif
