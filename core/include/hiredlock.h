/*
 * hiredlock: distributed locks on Redis (Redlock), done once in C.
 *
 * One client talks to N independent Redis masters (N = 1 is the plain
 * single-instance lock). A lock is acquired when a quorum (N/2 + 1) of the
 * masters accepted `SET key token NX PX ttl` and the time spent leaves a
 * positive validity: validity = ttl - elapsed - (ttl * drift_factor + 2 ms).
 * Release and extend are atomic compare scripts, so a lock is only ever
 * released or extended by the holder of its 128-bit random token.
 *
 * Conventions:
 * - Every fallible call returns an hrl_status; HRL_OK is 0. hrl_strerror()
 *   gives the short text of a status; a handle keeps the detail of its last
 *   failure (hrl_lock_error()). The same texts are used by the Python and
 *   Lua bindings, so an error reads the same in every runtime.
 * - Times are milliseconds, except the sans-I/O protocol's clock readings,
 *   which are microseconds of CLOCK_MONOTONIC (hrl_now_us()).
 * - No global mutable state. An hrl_client may be shared by threads: its
 *   connections are used under its own mutex, and waits between retries
 *   happen outside it. One hrl_lock must not be used by two threads at once.
 * - A client must outlive the locks made from it.
 */
#ifndef HIREDLOCK_H
#define HIREDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only the functions below are exported from the shared library. */
#if defined(HRL_BUILDING) && defined(__GNUC__)
#define HRL_API __attribute__((visibility("default")))
#else
#define HRL_API
#endif

#define HIREDLOCK_VERSION_MAJOR 0
#define HIREDLOCK_VERSION_MINOR 1
#define HIREDLOCK_VERSION_PATCH 0
#define HIREDLOCK_VERSION "0.1.0"

/** Longest lock name, in bytes, not counting the client's key prefix. */
#define HRL_NAME_MAX 512
/** Longest key prefix, in bytes. */
#define HRL_PREFIX_MAX 512
/** Longest TTL (and wait) on the wire: 2^31 - 1 milliseconds. */
#define HRL_TTL_MAX_MS 2147483647
/** Most masters one client can hold. */
#define HRL_MASTERS_MAX 63
/** A token is 32 lowercase hex characters (128 random bits). */
#define HRL_TOKEN_LEN 32
/** Size of every detail buffer; details are truncated to fit. */
#define HRL_DETAIL_MAX 512
/** hrl_lock_acquire() wait that means "until acquired". */
#define HRL_WAIT_FOREVER (-1)

/*
 * The one message table. X(code, text): the text is what users see in every
 * runtime, followed by ": detail" when the failure has a detail.
 */
#define HRL_STATUS_LIST(X)                                                     \
  X(HRL_OK, "ok")                                                              \
  X(HRL_EINVAL, "invalid argument")                                            \
  X(HRL_ENOMEM, "out of memory")                                               \
  X(HRL_ETIMEOUT, "timeout")                                                   \
  X(HRL_ENOTOWNED, "not owned")                                                \
  X(HRL_ENOTHELD, "not held")                                                  \
  X(HRL_EHELD, "already held")                                                 \
  X(HRL_ECONNECT, "connection failed")                                         \
  X(HRL_EAUTH, "authentication failed")                                        \
  X(HRL_ESERVER, "server error")                                               \
  X(HRL_EPROTOCOL, "protocol error")                                           \
  X(HRL_ECANCELLED, "cancelled")                                               \
  X(HRL_ESYSTEM, "system error")

typedef enum hrl_status {
#define HRL_STATUS_ENUM_(code, text) code,
  HRL_STATUS_LIST(HRL_STATUS_ENUM_)
#undef HRL_STATUS_ENUM_
      HRL_STATUS_COUNT_
} hrl_status;

/**
 * The short, lowercase text of a status ("timeout", "not owned", ...).
 * Never NULL; an unknown code gives "unknown status".
 */
HRL_API const char *hrl_strerror(hrl_status status);

/**
 * Formats the user-facing message of a failure into buf: the status text,
 * then ": detail" when detail is non-empty. Returns buf. Always terminated
 * when size > 0.
 */
HRL_API char *hrl_format_error(hrl_status status, const char *detail, char *buf,
                               size_t size);

typedef struct hrl_client hrl_client;
typedef struct hrl_lock hrl_lock;

/** Client settings. Start from hrl_options_init() and change what you need. */
typedef struct hrl_options {
  /** Time to establish a TCP/unix connection to one master. Default 100. */
  uint32_t connect_timeout_ms;
  /** Per-master reply deadline for one round. Default 50. An acquire or
   *  extend never waits more than ttl/10 (at least 1 ms) for a master. */
  uint32_t timeout_ms;
  /** Pause between acquire attempts. Default 200. */
  uint32_t retry_delay_ms;
  /** Random +/- spread added to each pause. Default 100. */
  uint32_t retry_jitter_ms;
  /** Clock drift allowance as a fraction of the TTL, in [0, 0.5).
   *  Default 0.01. 2 ms are always added on top. */
  double drift_factor;
  /** Bytes put in front of every lock name to form the Redis key; may hold
   *  any bytes. Default empty. The client keeps its own copy. */
  const char *key_prefix;
  size_t key_prefix_len;
} hrl_options;

/** Fills opts with the defaults listed in hrl_options. */
HRL_API void hrl_options_init(hrl_options *opts);

/**
 * Creates a client for n_urls masters (1 to HRL_MASTERS_MAX, distinct).
 * URLs: redis://[[user]:pass@]host[:port][/db] and
 * unix://[[user]:pass@]/path[?db=N]. opts may be NULL for the defaults.
 * No connection is made here: masters are connected on first use and
 * reconnected lazily when a connection breaks.
 * On failure *out is NULL and, when detail is not NULL, a message naming
 * the bad argument is written there (HRL_EINVAL, HRL_ENOMEM).
 */
HRL_API hrl_status hrl_client_new(const char *const *urls, size_t n_urls,
                                  const hrl_options *opts, hrl_client **out,
                                  char *detail, size_t detail_size);

/** Closes every connection and frees the client. NULL is a no-op. */
HRL_API void hrl_client_free(hrl_client *client);

/** Number of masters. */
HRL_API size_t hrl_client_masters(const hrl_client *client);

/** Masters needed for a decision: N/2 + 1. */
HRL_API size_t hrl_client_quorum(const hrl_client *client);

/**
 * Label of master i ("host:port" or the socket path) for messages; NULL when
 * i is out of range.
 */
HRL_API const char *hrl_client_master_label(const hrl_client *client, size_t i);

/** Where master i is, for transports that open their own connections. */
typedef struct hrl_master_info {
  const char *host; /**< TCP host (IPv6 without brackets), NULL for unix */
  int port;         /**< TCP port, 0 for unix */
  const char *path; /**< unix socket path, NULL for TCP */
  long db;          /**< database selected by the handshake (0: none) */
} hrl_master_info;

/**
 * Fills *out for master i; false when i is out of range. The strings live
 * as long as the client. Credentials are not exposed: the handshake bytes
 * (hrl_proto_handshake) carry them.
 */
HRL_API bool hrl_client_master_info(const hrl_client *client, size_t i,
                                    hrl_master_info *out);

/**
 * Call in the child after fork() when another thread of the parent may have
 * been inside the client at the time: resets the client's mutex and drops
 * the inherited connections without writing to them. Without this call the
 * client still notices the new process id on its next round and reconnects.
 */
HRL_API void hrl_client_after_fork(hrl_client *client);

/** Per-master outcome counts of a lock's last operation. */
typedef struct hrl_counts {
  uint32_t masters;     /**< N */
  uint32_t quorum;      /**< N/2 + 1 */
  uint32_t ok;          /**< acquired / released / extended */
  uint32_t refused;     /**< held by another token, or not ours any more */
  uint32_t unreachable; /**< connect failure, I/O error, timeout, or late
                         (not waited for once a quorum said OK) */
  uint32_t failed;      /**< error replies: READONLY, OOM, NOAUTH, ... */
  uint32_t attempts;    /**< acquire attempts made by the last operation */
} hrl_counts;

/**
 * Creates a lock object for name (1 to HRL_NAME_MAX bytes, binary safe) with
 * ttl_ms in [1, HRL_TTL_MAX_MS]. No I/O: the lock is not held yet.
 * On failure *out is NULL and detail (when not NULL) names the argument.
 */
HRL_API hrl_status hrl_lock_new(hrl_client *client, const void *name,
                                size_t name_len, uint32_t ttl_ms,
                                hrl_lock **out, char *detail,
                                size_t detail_size);

/** Frees the lock object. It does not release a held lock. NULL is a no-op. */
HRL_API void hrl_lock_free(hrl_lock *lock);

/**
 * Acquires the lock, retrying (after retry_delay +/- jitter) until wait_ms
 * has passed: 0 means a single attempt, HRL_WAIT_FOREVER means until it is
 * acquired. No attempt starts after the wait has passed, so the call returns
 * within wait_ms plus two per-master timeouts (an attempt and the release of
 * a failed attempt).
 * HRL_OK: held, with a fresh token and hrl_lock_validity_ms() > 0.
 * HRL_ETIMEOUT: others held it until the wait ran out.
 * HRL_ECONNECT / HRL_EAUTH / HRL_ESERVER / HRL_EPROTOCOL: fewer than a quorum
 *   of masters gave a usable answer; returned at once, without waiting.
 * HRL_EHELD: this lock object already holds the lock.
 * A failed call never leaves a key behind on a reachable master.
 */
HRL_API hrl_status hrl_lock_acquire(hrl_lock *lock, int64_t wait_ms);

/**
 * Returns true to stop waiting. Called between acquire attempts, at least
 * every 50 ms while waiting.
 */
typedef bool (*hrl_cancel_fn)(void *user_data);

/**
 * hrl_lock_acquire() that also stops with HRL_ECANCELLED when cancel returns
 * true. A cancelled acquire leaves no key behind.
 */
HRL_API hrl_status hrl_lock_acquire_cancellable(hrl_lock *lock, int64_t wait_ms,
                                                hrl_cancel_fn cancel,
                                                void *user_data);

/**
 * Releases the lock on every master by compare-and-delete.
 * HRL_OK: deleted on a quorum. HRL_ENOTOWNED: fewer than a quorum of the
 * masters that granted the hold (at acquire or the last extend) still had
 * our key (expired, or taken since); the lock is then not held. A master
 * that never granted it says nothing about it. HRL_ECONNECT and the other
 * transport errors: neither could be told; the lock stays held locally so
 * release can be retried, and it expires anyway.
 * HRL_ENOTHELD: this object does not hold the lock (no I/O is done).
 */
HRL_API hrl_status hrl_lock_release(hrl_lock *lock);

/**
 * Resets the lock's TTL on every master to ttl_ms (0: the lock's own TTL) by
 * compare-and-PEXPIRE. HRL_OK when a quorum extended it with a positive new
 * validity (also the lock's TTL becomes ttl_ms). HRL_ENOTOWNED: the lock was
 * lost and is no longer held. Transport errors leave the previous validity.
 */
HRL_API hrl_status hrl_lock_extend(hrl_lock *lock, uint32_t ttl_ms);

/** True while this object holds the lock and its validity has not run out. */
HRL_API bool hrl_lock_held(const hrl_lock *lock);

/** Milliseconds of validity left (0 when not held or expired). */
HRL_API int64_t hrl_lock_validity_ms(const hrl_lock *lock);

/** The token of the current or last hold: 32 hex chars, or "" if never held. */
HRL_API const char *hrl_lock_token(const hrl_lock *lock);

/** The lock's name, without the key prefix; *len receives its length. */
HRL_API const void *hrl_lock_name(const hrl_lock *lock, size_t *len);

/** The Redis key: key prefix followed by the name; *len its length. */
HRL_API const void *hrl_lock_key(const hrl_lock *lock, size_t *len);

/** The lock's TTL in milliseconds. */
HRL_API uint32_t hrl_lock_ttl_ms(const hrl_lock *lock);

/** The detail of the last failure of this lock ("" when none). */
HRL_API const char *hrl_lock_error(const hrl_lock *lock);

/** Per-master counts of the last acquire, release or extend. */
HRL_API void hrl_lock_counts(const hrl_lock *lock, hrl_counts *out);

/*
 * Argument conversion shared by the bindings, so every runtime accepts the
 * same values and rejects the others with the same message. `what` names the
 * argument in the message ("ttl", "timeout", ...).
 *
 * hrl_seconds_to_ms: finite seconds in [min_ms/1000, max_ms/1000], rounded
 * to the nearest millisecond; a positive value that rounds below min_ms is
 * rejected too. NaN, infinities and out-of-range values give HRL_EINVAL.
 */
HRL_API hrl_status hrl_seconds_to_ms(const char *what, double seconds,
                                     int64_t min_ms, int64_t max_ms,
                                     int64_t *out_ms, char *detail,
                                     size_t detail_size);

/** CLOCK_MONOTONIC in microseconds: the clock of the sans-I/O protocol. */
HRL_API int64_t hrl_now_us(void);

/*
 * ---------------------------------------------------------------------------
 * Sans-I/O protocol: for transports other than the built-in hiredis driver
 * (the OpenResty cosocket driver). The algorithm (commands, reply meaning,
 * quorum, validity, drift, cleanup, retry and jitter) lives here; the
 * transport only moves bytes and sleeps. A driver runs one operation so:
 *
 *   hrl_proto_begin(lock, HRL_OP_ACQUIRE, wait_ms, hrl_now_us());
 *   for (;;) {
 *     hrl_step_info s;
 *     hrl_step step = hrl_proto_step(lock, hrl_now_us(), &s);
 *     if (step == HRL_STEP_DONE) return s.status;
 *     if (step == HRL_STEP_SLEEP) { sleep(s.sleep_ms); continue; }
 *     // HRL_STEP_ROUND: for every master i at once, within s.timeout_ms:
 *     //   connect if needed (then send hrl_proto_handshake() on a new
 *     //   connection and check its replies with hrl_proto_handshake_reply),
 *     //   send hrl_proto_command(lock, i), feed each reply to
 *     //   hrl_proto_reply(lock, i, reply): HRL_NODE_RESEND means send
 *     //   hrl_proto_command(lock, i) again and read one more reply.
 *     //   A master that fails or times out: hrl_proto_fail(lock, i, ...),
 *     //   and close that connection (a late reply may still arrive on it).
 *   }
 * ---------------------------------------------------------------------------
 */
typedef enum hrl_op_kind {
  HRL_OP_ACQUIRE,
  HRL_OP_RELEASE,
  HRL_OP_EXTEND
} hrl_op_kind;

typedef enum hrl_step {
  HRL_STEP_ROUND,
  HRL_STEP_SLEEP,
  HRL_STEP_DONE
} hrl_step;

typedef struct hrl_step_info {
  uint32_t timeout_ms; /**< ROUND: each master's reply deadline */
  uint32_t sleep_ms;   /**< SLEEP: pause before the next step */
  hrl_status status;   /**< DONE: the operation's result */
} hrl_step_info;

/** What a master did in a round (also the `why` of hrl_proto_fail). */
typedef enum hrl_node_result {
  HRL_NODE_PENDING = 0,
  HRL_NODE_OK,          /**< acquired / released / extended */
  HRL_NODE_REFUSED,     /**< held by another token / not ours */
  HRL_NODE_UNREACHABLE, /**< connect failure, I/O error, timeout */
  HRL_NODE_AUTH,        /**< AUTH refused, NOAUTH, NOPERM */
  HRL_NODE_SERVER,      /**< other error replies: READONLY, OOM, ... */
  HRL_NODE_PROTOCOL,    /**< a reply that makes no sense for the command */
  HRL_NODE_RESEND       /**< hrl_proto_reply only: send the command again */
} hrl_node_result;

typedef enum hrl_reply_type {
  HRL_REPLY_STATUS,
  HRL_REPLY_ERROR,
  HRL_REPLY_INTEGER,
  HRL_REPLY_NIL,
  HRL_REPLY_STRING,
  HRL_REPLY_OTHER /**< arrays and RESP3 types: never expected */
} hrl_reply_type;

/** A view of one reply; str/len for STATUS, ERROR and STRING. */
typedef struct hrl_reply {
  hrl_reply_type type;
  long long integer;
  const char *str;
  size_t len;
} hrl_reply;

/**
 * Starts an operation on lock. arg_ms: ACQUIRE the wait (as in
 * hrl_lock_acquire), EXTEND the new TTL (0: the lock's), RELEASE ignored.
 * Returns HRL_EHELD / HRL_ENOTHELD / HRL_EINVAL when the operation cannot
 * start; the lock's state is then unchanged.
 */
HRL_API hrl_status hrl_proto_begin(hrl_lock *lock, hrl_op_kind op,
                                   int64_t arg_ms, int64_t now_us);

/** Decides what comes next; see the driver loop above. */
HRL_API hrl_step hrl_proto_step(hrl_lock *lock, int64_t now_us,
                                hrl_step_info *info);

/** Bytes (RESP) to send to master i in the current round; *len their size. */
HRL_API const char *hrl_proto_command(const hrl_lock *lock, size_t i,
                                      size_t *len);

/**
 * Feeds master i's reply to the current round's command. Returns the
 * master's result, or HRL_NODE_RESEND (NOSCRIPT: the script is sent again in
 * full with EVAL). Replies after a master's result are ignored.
 */
HRL_API hrl_node_result hrl_proto_reply(hrl_lock *lock, size_t i,
                                        const hrl_reply *reply);

/** Records that master i failed in this round; message may be NULL. */
HRL_API void hrl_proto_fail(hrl_lock *lock, size_t i, hrl_node_result why,
                            const char *message);

/**
 * True once the current round's outcome can no longer change: a quorum of
 * masters said OK (to an acquire, release or extend), or the round is the
 * release that cleans up after a failed attempt, whose replies decide
 * nothing. A driver may then stop waiting for masters it knows to be late
 * (they missed a deadline in an earlier round and have not answered since)
 * and report them with hrl_proto_fail; masters not known to be late should
 * still be waited for, so that a healthy round's counts stay exact.
 */
HRL_API bool hrl_proto_settled(const hrl_lock *lock);

/**
 * The commands a new connection to master i needs first (AUTH, SELECT),
 * pipelined; *len their size (0 when none) and *replies how many replies
 * they produce. The bytes live as long as the client.
 */
HRL_API const char *hrl_proto_handshake(const hrl_client *client, size_t i,
                                        size_t *len, int *replies);

/**
 * Checks reply number k (0-based) to master i's handshake: HRL_NODE_OK, or
 * HRL_NODE_AUTH / HRL_NODE_SERVER / HRL_NODE_PROTOCOL with a message written
 * to message (when not NULL).
 */
HRL_API hrl_node_result hrl_proto_handshake_reply(const hrl_client *client,
                                                  size_t i, int k,
                                                  const hrl_reply *reply,
                                                  char *message,
                                                  size_t message_size);

/** Incremental RESP reader for byte-stream transports. */
typedef struct hrl_parser hrl_parser;

/** A new reader, or NULL when out of memory. */
HRL_API hrl_parser *hrl_parser_new(void);
HRL_API void hrl_parser_free(hrl_parser *parser);

/** Appends received bytes. HRL_ENOMEM or HRL_EPROTOCOL on failure. */
HRL_API hrl_status hrl_parser_feed(hrl_parser *parser, const char *buf,
                                   size_t len);

/**
 * Takes the next complete reply: 1 and *out filled (valid until the next
 * call on this parser), 0 when more bytes are needed, -1 on a protocol error
 * (the stream is then unusable: close the connection).
 */
HRL_API int hrl_parser_next(hrl_parser *parser, hrl_reply *out);

#ifdef __cplusplus
}
#endif

#endif /* HIREDLOCK_H */
