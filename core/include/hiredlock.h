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
 * - Times are milliseconds; hrl_now_us() reads the clock validity is
 *   judged by, in microseconds.
 * - No global mutable state. An hrl_client may be shared by threads: its
 *   connections are used under its own mutex, and waits between tries
 *   happen outside it (one waiting thread at a time reads the client's
 *   subscriber connections for all). One hrl_lock must not be used by two
 *   threads at once (an auto-renewed lock's renewals are the core's
 *   business: they never run at the same time as a call of yours on that
 *   lock).
 * - A client must outlive the locks made from it.
 *
 * This header is for programs that take locks. Drivers that move the bytes
 * themselves include <hiredlock/proto.h> (the sans-I/O protocol), and
 * language bindings <hiredlock/binding.h> (the option table).
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
  X(HRL_ESYSTEM, "system error")                                               \
  X(HRL_ELOST, "lost")                                                         \
  X(HRL_EPERM, "permission denied")

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

/** What a lock object holds on its name, fixed when it is made:
 *  hrl_lock_new_with() makes the mutex's, hrl_rwlock_new() a read's or the
 *  write's, hrl_permit_new() a permit's. One name is one of these kinds at
 *  a time: a mutex, a read-write lock, or a semaphore; while one holds it,
 *  an acquire of another kind fails with HRL_EINVAL ("'jobs' is a
 *  semaphore on 127.0.0.1:6379, not a read-write lock (a name is one kind
 *  of lock)"), in every runtime. docs/SAFETY.md says what each promises,
 *  also with N masters. Not a field of hrl_lock_options, whose layout
 *  stays that of earlier releases (a caller built against them keeps
 *  working). */
typedef enum hrl_lock_mode {
  /** The name's mutex (SET NX): the default. */
  HRL_MODE_LOCK,
  /** A read of the name's read-write lock: held beside other reads, never
   *  beside a write. A waiting write stops new reads (docs/SAFETY.md). */
  HRL_MODE_READ,
  /** The write of the name's read-write lock: held alone. */
  HRL_MODE_WRITE,
  /** A permit of the name's counting semaphore: at most `permits` held at
   *  once, each with its own token and TTL (hrl_lock_permit()). */
  HRL_MODE_PERMIT
} hrl_lock_mode;

/** Most permits a semaphore may have. */
#define HRL_PERMITS_MAX 100000

/** A lock's settings. Start from hrl_lock_options_init(), which gives the
 *  client's defaults (hrl_options.lock), and change what you need. Its
 *  layout (and hrl_options', which holds one) only grows at the end, and
 *  not at all within a major version: what a lock holds (a read, a write,
 *  a permit) is an argument of its constructor instead (hrl_rwlock_new,
 *  hrl_permit_new). */
typedef struct hrl_lock_options {
  /** How long the lock lives on the masters. Default 30000; at least
   *  hrl_client_min_ttl_ms(). */
  uint32_t ttl_ms;
  /** A managed lease: while held, the client's renewer (one thread per
   *  client, started on first use) extends the lock to a full TTL about
   *  every third of it, with extend()'s quorum and validity rules. A
   *  renewal answered "not owned", or no renewal confirmed by a quorum
   *  before the validity runs out, makes the lock lost (hrl_lock_lost,
   *  hrl_lock_on_lost). Default false. */
  bool auto_renew;
  /** With auto_renew: the longest hold, from the acquire. Renewal never
   *  extends the lock past it (the last renewal asks for what is left), so
   *  the lock then expires on its own unless released, and is reported
   *  lost ("max_hold reached"). One no longer than ttl_ms is the TTL the
   *  acquire asks for (nothing is renewed); one below
   *  hrl_client_min_ttl_ms() is refused. 0 (the default): no cap. */
  uint32_t max_hold_ms;
  /** Take a fencing token with every acquire (hrl_lock_fence()): a number
   *  strictly greater than the fence of every grant of the name whose
   *  acquire returned before this one began. Default false. Costs an
   *  INCR behind the SET, and a second round only when the masters'
   *  counters drifted apart (docs/SAFETY.md, "Fencing tokens"). */
  bool fenced;
  /** An owner label written beside the lock with every acquire, in the
   *  same round trip (docs/DESIGN.md, section 3), and shown by
   *  hrl_client_inspect(): who holds (or waits for) the lock. 1 to
   *  HRL_OWNER_MAX bytes of text (no control characters) once expanded:
   *  %h is the host name, %p the process id (read at each acquire, so a
   *  forked child says its own), %% a '%'. HRL_OWNER_HOST_PID is the usual
   *  choice. NULL (the default): no label, nothing more is sent. The
   *  string is copied by hrl_lock_new_with (and hrl_client_new, for the
   *  client's default). */
  const char *owner;
  /** Replica-acknowledged writes: a master's vote for an acquire, an
   *  extend (renewals too), a waiter's claim of a hand-off and a fence
   *  raise counts only when `WAIT sync_replicas timeout`, pipelined behind
   *  the write, says that many of its replicas have it, within the
   *  per-master deadline (the time it takes is in the validity). A master
   *  that took the write but not the acknowledgement is cleaned up like
   *  any failed vote ("0 of 1 replicas acknowledged"). So a failover to a
   *  replica that acknowledged loses no granted lock (docs/SAFETY.md). A
   *  master's URL may set its own (?sync_replicas=N), which then wins.
   *  Default 0: no WAIT. */
  uint32_t sync_replicas;
  /** Ask WAITAOF instead of WAIT: the write must also be fsynced to the
   *  master's AOF (and to sync_replicas replicas' AOFs). Redis >= 7.2 or
   *  Valkey >= 8 with appendonly on; a server that cannot refuses the
   *  vote with an error saying so. Default false. */
  bool sync_aof;
} hrl_lock_options;

/** How a rediss:// master's certificate is checked (ssl_cert_reqs). */
typedef enum hrl_cert_reqs {
  /** No check at all: anyone on the path can pose as the master. An
   *  explicit opt-out for tests; never the default. */
  HRL_CERT_NONE,
  /** As HRL_CERT_REQUIRED: a server always presents a certificate, so a
   *  client has nothing to make optional (as in Python's ssl module). */
  HRL_CERT_OPTIONAL,
  /** The certificate must chain to a trusted CA (the default). */
  HRL_CERT_REQUIRED
} hrl_cert_reqs;

/** Client settings. Start from hrl_options_init() and change what you need. */
typedef struct hrl_options {
  /** Time to establish a TCP/unix connection to one master. Default 100. */
  uint32_t connect_timeout_ms;
  /** Per-master reply deadline for one round. Default 50. An acquire or
   *  extend never waits more than ttl/10 (at least 1 ms) for a master, and
   *  an extend (or a lease's renewal) never past the validity it is meant
   *  to keep. */
  uint32_t timeout_ms;
  /** Longest pause between the tries of a waiting acquire when no release
   *  wakes it (a lost notification, a holder that publishes nothing);
   *  releases of hiredlock holders wake waiters at once. Default 200. */
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
  /** The defaults of this client's locks (hrl_lock_options_init()). */
  hrl_lock_options lock;
  /*
   * TLS, for rediss:// masters (named as redis-py names them; a URL's query
   * may set each one for its master: rediss://host?ssl_cert_reqs=none).
   * Paths are copied by hrl_client_new(); NULL means unset.
   */
  /** CA certificates (PEM file) to verify masters with. Default NULL: the
   *  system's store, unless ssl_ca_path is set. */
  const char *ssl_ca_certs;
  /** A directory of CA certificates (c_rehash layout). Default NULL. */
  const char *ssl_ca_path;
  /** A client certificate (PEM) for mutual TLS. Default NULL: none. */
  const char *ssl_certfile;
  /** Its private key (PEM). Default NULL: the key is in ssl_certfile. */
  const char *ssl_keyfile;
  /** Whether the master's certificate is verified. Default
   *  HRL_CERT_REQUIRED; HRL_CERT_NONE turns every check off. */
  hrl_cert_reqs ssl_cert_reqs;
  /** Whether the certificate must name the URL's host (a DNS name or an
   *  IP address). Default true. */
  bool ssl_check_hostname;
  /** An acquire that waited at least this long reports an
   *  HRL_EVENT_SLOW_WAIT event (hrl_client_on_event). Default 1000. */
  uint32_t slow_wait_ms;
  /** A master whose server started less than this long ago gives no vote
   *  (read from INFO server at each new connection, which also tells a
   *  changed run_id): it may have forgotten locks it granted before it
   *  restarted. Set it to the longest TTL any client of these masters
   *  uses. Needs INFO (an ACL user without it is refused with a message
   *  saying so). Default 0: off. */
  uint32_t restart_guard_ms;
} hrl_options;

/** Fills opts with the defaults listed in hrl_options. */
HRL_API void hrl_options_init(hrl_options *opts);

/**
 * Creates a client for n_urls masters (1 to HRL_MASTERS_MAX, distinct).
 * URLs: redis://[[user]:pass@]host[:port][/db],
 * rediss://[[user]:pass@]host[:port][/db][?ssl_option=value&...] (TLS; the
 * options are the ssl_* fields of hrl_options, which they override for
 * that master) and unix://[[user]:pass@]/path[?db=N]. opts may be NULL for
 * the defaults.
 * No connection is made here: masters are connected on first use and
 * reconnected lazily when a connection breaks.
 * On failure *out is NULL and, when detail is not NULL, a message naming
 * the bad argument is written there (HRL_EINVAL, HRL_ENOMEM; HRL_ESYSTEM
 * when the OS random generator fails).
 */
HRL_API hrl_status hrl_client_new(const char *const *urls, size_t n_urls,
                                  const hrl_options *opts, hrl_client **out,
                                  char *detail, size_t detail_size);

/** Stops the client's renewer (joins its thread), closes every connection
 *  and frees the client. Free its locks first. NULL is a no-op. */
HRL_API void hrl_client_free(hrl_client *client);

/** Number of masters. */
HRL_API size_t hrl_client_masters(const hrl_client *client);

/** Masters needed for a decision: N/2 + 1. */
HRL_API size_t hrl_client_quorum(const hrl_client *client);

/**
 * The smallest TTL locks of this client accept, in milliseconds: one that
 * leaves validity after a round at its per-master deadline (a tenth of the
 * TTL) and the drift allowance (drift_factor; 5 ms at the default). A
 * shorter TTL could never be held, so hrl_lock_new() and
 * hrl_lock_extend() refuse it.
 */
HRL_API uint32_t hrl_client_min_ttl_ms(const hrl_client *client);

/**
 * Label of master i ("host:port" or the socket path) for messages; NULL when
 * i is out of range.
 */
HRL_API const char *hrl_client_master_label(const hrl_client *client, size_t i);

/*
 * fork() in a program whose other threads use a client. A thread may be in
 * the middle of a round (connecting, closing a connection) when another one
 * forks; the child would inherit that half-done state. Call these around
 * fork() (from pthread_atfork handlers, or os.register_at_fork, as the
 * Python binding does): prepare waits for a round in progress to end and
 * keeps the next one out until the fork is over.
 *
 *   hrl_client_fork_prepare(c);   pid = fork();
 *   if (pid == 0) hrl_client_after_fork(c); else hrl_client_fork_parent(c);
 *
 * Without them a single-threaded program is still safe: the client notices
 * the new process on its next round and opens its own connections, never
 * writing to its parent's.
 */

/** Before fork(): takes the client's mutex (waits for a round to end). */
HRL_API void hrl_client_fork_prepare(hrl_client *client);

/** In the parent after fork(): releases what hrl_client_fork_prepare took. */
HRL_API void hrl_client_fork_parent(hrl_client *client);

/**
 * In the child after fork(): releases the client's mutex (or, when
 * hrl_client_fork_prepare was not called, makes a new one: the thread that
 * held it does not exist here) and drops the inherited connections without
 * writing to them.
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
 * ttl_ms in [hrl_client_min_ttl_ms(), HRL_TTL_MAX_MS]. No I/O: the lock is
 * not held yet.
 * On failure *out is NULL and detail (when not NULL) names the argument.
 */
HRL_API hrl_status hrl_lock_new(hrl_client *client, const void *name,
                                size_t name_len, uint32_t ttl_ms,
                                hrl_lock **out, char *detail,
                                size_t detail_size);

/** Fills *out with client's defaults for its locks (hrl_options.lock). */
HRL_API void hrl_lock_options_init(const hrl_client *client,
                                   hrl_lock_options *out);

/**
 * hrl_lock_new() with every lock setting: opts NULL means the client's
 * defaults. On failure *out is NULL and detail names the bad setting.
 */
HRL_API hrl_status hrl_lock_new_with(hrl_client *client, const void *name,
                                     size_t name_len,
                                     const hrl_lock_options *opts,
                                     hrl_lock **out, char *detail,
                                     size_t detail_size);

/**
 * A lock object for a read (mode HRL_MODE_READ) or the write
 * (HRL_MODE_WRITE) of the read-write lock `name`: as hrl_lock_new_with()
 * with opts (NULL: the client's defaults), holding that instead. Each object is
 * one hold with its own token and TTL: make one per reader.
 */
HRL_API hrl_status hrl_rwlock_new(hrl_client *client, const void *name,
                                  size_t name_len, hrl_lock_mode mode,
                                  const hrl_lock_options *opts, hrl_lock **out,
                                  char *detail, size_t detail_size);

/**
 * A lock object for a permit of the counting semaphore `name` with
 * `permits` permits (1 to HRL_PERMITS_MAX): as hrl_lock_new_with() with
 * opts (NULL: the client's defaults). Acquiring it takes a permit; make one
 * object per permit held at once. A permit is granted while fewer than
 * `permits` are held; holders that asked with another count keep what
 * they hold (docs/SAFETY.md, "Changing permits").
 */
HRL_API hrl_status hrl_permit_new(hrl_client *client, const void *name,
                                  size_t name_len, uint32_t permits,
                                  const hrl_lock_options *opts, hrl_lock **out,
                                  char *detail, size_t detail_size);

/** Frees the lock object. It does not release a held lock (a lease stops
 *  being renewed and expires with its TTL). Never waits for a renewal in
 *  progress (the renewer frees the object when it is done with it), only
 *  for a loss callback of this lock that another thread is running. NULL
 *  is a no-op. */
HRL_API void hrl_lock_free(hrl_lock *lock);

/**
 * Acquires the lock, waiting until wait_ms has passed: 0 means a single
 * attempt, HRL_WAIT_FOREVER means until it is acquired. A waiting acquire
 * queues on the masters and is woken when the holder releases: the lock is
 * handed to the waiters in the order they arrived (docs/SAFETY.md). Without
 * a hand-off (a holder that crashed or publishes nothing) it tries again
 * when the holder's TTL runs out, or after retry_delay +/- jitter, whichever
 * comes first. No try starts after the wait has passed, so the call returns
 * within wait_ms plus two per-master timeouts (a try and the round that
 * leaves the queue).
 * HRL_OK: held, with a fresh token and hrl_lock_validity_ms() > 0.
 * HRL_ETIMEOUT: others held it until the wait ran out.
 * HRL_ECONNECT / HRL_EAUTH / HRL_EPERM / HRL_ESERVER / HRL_EPROTOCOL: fewer
 *   than a quorum of masters gave a usable answer; returned at once, without
 *   waiting. HRL_EAUTH: the password was refused (or none was given);
 *   HRL_EPERM: the ACL user may not run a command the lock needs, or not on
 *   its keys (NOPERM): the detail names the command and keys refused.
 * HRL_EHELD: this lock object already holds the lock.
 * A failed call never leaves a key behind on a reachable master.
 */
HRL_API hrl_status hrl_lock_acquire(hrl_lock *lock, int64_t wait_ms);

/**
 * Returns true to stop waiting. Called while an acquire waits between its
 * tries, at least every 50 ms.
 */
typedef bool (*hrl_cancel_fn)(void *user_data);

/**
 * hrl_lock_acquire() that also stops with HRL_ECANCELLED when cancel returns
 * true. A cancelled acquire leaves no key or queue entry behind (it passes
 * on a hand-off made for it).
 */
HRL_API hrl_status hrl_lock_acquire_cancellable(hrl_lock *lock, int64_t wait_ms,
                                                hrl_cancel_fn cancel,
                                                void *user_data);

/**
 * Releases the lock on every master by compare-and-delete, or, where
 * waiters are queued, by handing it to the first of them (a waiter that
 * can be woken; docs/DESIGN.md). Whatever the
 * outcome, the hold is over: the lock is not held afterwards.
 * HRL_OK: deleted on a quorum. HRL_ENOTOWNED: fewer than a quorum of the
 * masters that granted the hold (at acquire or the last extend) still had
 * our key (expired, or taken since). A master that never granted it says
 * nothing about it. HRL_ECONNECT and the other transport errors: too few
 * masters confirmed to tell; our keys expire with their TTL, and calling
 * hrl_lock_release() again may finish the job: it keeps the token, counts
 * the masters that confirmed before, and takes "no such key" from a master
 * that got the first release but never answered as that release's doing,
 * never as "not owned".
 * HRL_ENOTHELD: nothing to release (never held, or released); no I/O.
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

/** The settings the lock was made with (hrl_lock_new_with). */
HRL_API void hrl_lock_get_options(const hrl_lock *lock, hrl_lock_options *out);

/** The lock's TTL in milliseconds. */
HRL_API uint32_t hrl_lock_ttl_ms(const hrl_lock *lock);

/**
 * The fencing token of the current hold of a fenced lock: 1 to 2^63 - 1,
 * strictly greater than the fence of every grant of the same name whose
 * acquire returned before this hold's acquire began, whichever client and
 * runtime took it (docs/SAFETY.md). It stays readable until the hold ends
 * (release, an extend that finds the lock lost, the next acquire), also
 * after the validity ran out: pass it with every write and let the
 * resource refuse a fence older than one it has seen. 0 when the lock is
 * not fenced or holds nothing.
 */
HRL_API uint64_t hrl_lock_fence(const hrl_lock *lock);

/**
 * The Redis key of a fenced lock's counter (docs/DESIGN.md, section 3); *len
 * its length. It never expires and hashes to the lock key's Redis Cluster
 * slot. NULL (*len 0) when the lock is not fenced.
 */
HRL_API const void *hrl_lock_fence_key(const hrl_lock *lock, size_t *len);

/**
 * A permit's number while held: 1 to the permits it was granted with, the
 * same on the quorum of masters that granted it, and never that of another
 * permit held at the same time (two jobs may use it as a shard or worker
 * index). 0 when the lock is not a permit or holds nothing.
 */
HRL_API uint32_t hrl_lock_permit(const hrl_lock *lock);

/** The detail of the last failure of this lock ("" when none). */
HRL_API const char *hrl_lock_error(const hrl_lock *lock);

/** Per-master counts of the last acquire, release or extend. */
HRL_API void hrl_lock_counts(const hrl_lock *lock, hrl_counts *out);

/*
 * Managed leases (hrl_lock_options.auto_renew). The renewals of a client's
 * leases run in one thread per client, started by the first acquire of a
 * lease and stopped (joined) by hrl_client_free(). They run the protocol's
 * extend on a private copy of the lock's state, never at the same time as
 * a call of yours on that lock (the one waits for the other, at most one
 * round), so hrl_lock_error() and hrl_lock_counts() stay about your calls.
 * On a lease, hrl_lock_held(), hrl_lock_validity_ms() and hrl_lock_lost()
 * may be called from any thread at any time. A forked child has no renewer
 * until it acquires a lease of its own (or calls extend on one it
 * inherited); the leases it inherited are its parent's to renew.
 */

/**
 * HRL_OK while the lock is not lost; HRL_ELOST once the hold of a lease
 * was lost, with why written to reason (when not NULL): "not owned" (a
 * renewal found the key no longer ours), "expired" or "expired: <the last
 * renewal's failure>" (no renewal was confirmed by a quorum before the
 * validity ran out), "max_hold reached". The same words in every runtime.
 * A lost lock is never reported held; release and extend then return
 * HRL_ELOST (no I/O) until the next acquire starts a new hold.
 */
HRL_API hrl_status hrl_lock_lost(const hrl_lock *lock, char *reason,
                                 size_t reason_size);

/** Called once per lost hold, with the reason hrl_lock_lost() gives. */
typedef void (*hrl_lost_fn)(hrl_lock *lock, const char *reason,
                            void *user_data);

/**
 * Registers fn (NULL: none) to be called when the hold of this lease is
 * lost: from the renewer thread, or from your thread when your own call
 * (release, extend) found the loss first, as that call returns; never with
 * a mutex of the core held. It may call any function on this lock
 * (release, acquire), but must not free the lock or the client, and should
 * return quickly: the client's other renewals wait for it. HRL_EINVAL
 * when the lock is not a lease (auto_renew).
 */
HRL_API hrl_status hrl_lock_on_lost(hrl_lock *lock, hrl_lost_fn fn,
                                    void *user_data);
/**
 * A Lua script for the resource side of fencing, run with EVAL on the Redis
 * that holds the protected data (not on the lock's masters):
 *   EVAL script 1+k fence_key [key...] fence command [arg...]
 * runs `command arg...` only when `fence` (decimal, 1 to 2^63 - 1) is not
 * older than the last fence seen at fence_key, then records it there; the
 * reply is the command's. An older fence gets the error reply
 * "STALEFENCE fence <fence> is older than <last>", and nothing is written.
 * The k keys are those the command touches, declared for Redis Cluster and
 * ACLs (they must share fence_key's slot there: use a hash tag). Python's
 * hiredlock.fenced_write() and Lua's hiredlock.fenced_write() send it.
 */
#define HRL_FENCED_WRITE_SCRIPT                                                \
  "local function older(a,b) if #a~=#b then return #a<#b end "                 \
  "for i=1,#a do local x,y=a:byte(i),b:byte(i) "                               \
  "if x~=y then return x<y end end return false end "                          \
  "local f,last=ARGV[1],redis.call('get',KEYS[1]) "                            \
  "if not f:find('^[1-9]%d*$') or older('9223372036854775807',f) then "        \
  "return redis.error_reply('ERR fence must be a decimal integer from 1 "      \
  "to 9223372036854775807') end "                                              \
  "if last and older(f,last) then return redis.error_reply("                   \
  "'STALEFENCE fence '..f..' is older than '..last) end "                      \
  "local reply=redis.call(unpack(ARGV,2)) "                                    \
  "redis.call('set',KEYS[1],f) "                                               \
  "return reply"

/*
 * Operability (docs/OPERATING.md): who holds a lock and who waits for it
 * (hrl_client_inspect), what happened that an operator wants to know
 * about (events), and how a client's locks fare (hrl_client_stats). The
 * same fields and words in every runtime: the bindings read these.
 */

/** The owner label of the host name and process id ("web-1:4242"). */
#define HRL_OWNER_HOST_PID "%h:%p"
/** Longest owner label, in bytes, once expanded. */
#define HRL_OWNER_MAX 128

/** How much an event matters: the level every runtime logs it at. */
typedef enum hrl_event_level {
  HRL_LEVEL_DEBUG,
  HRL_LEVEL_INFO,
  HRL_LEVEL_WARNING
} hrl_event_level;

/*
 * The events. X(code, name, level): name is what every runtime calls it.
 * None is reported on the fast path (an uncontended acquire and release).
 *   LOST          a lease's hold was lost (detail: why, as
 *                 hrl_lock_lost() says it)
 *   RENEW_FAILED  a lease's renewal failed but the hold is still valid for
 *                 ms (status and detail: the renewal's failure)
 *   MASTER_DOWN   a master stopped answering: a connection failed, reset
 *                 or timed out (detail: how)
 *   MASTER_UP     it answers again, after ms
 *   DEAD_WAITER   a release skipped count queued waiters that were gone
 *                 (their entry's lease ran out) on its way to the next
 *   SLOW_WAIT     an acquire waited ms (at least the slow_wait option)
 *                 before it ended with status
 */
#define HRL_EVENT_LIST(X)                                                      \
  X(HRL_EVENT_LOST, "lost", HRL_LEVEL_WARNING)                                 \
  X(HRL_EVENT_RENEW_FAILED, "renew_failed", HRL_LEVEL_WARNING)                 \
  X(HRL_EVENT_MASTER_DOWN, "master_down", HRL_LEVEL_INFO)                      \
  X(HRL_EVENT_MASTER_UP, "master_up", HRL_LEVEL_INFO)                          \
  X(HRL_EVENT_DEAD_WAITER, "dead_waiter", HRL_LEVEL_INFO)                      \
  X(HRL_EVENT_SLOW_WAIT, "slow_wait", HRL_LEVEL_DEBUG)

typedef enum hrl_event_kind {
#define HRL_EVENT_ENUM_(code, name, level) code,
  HRL_EVENT_LIST(HRL_EVENT_ENUM_)
#undef HRL_EVENT_ENUM_
      HRL_EVENT_COUNT_
} hrl_event_kind;

/** One event. Pointers are valid during the callback only. */
typedef struct hrl_event {
  hrl_event_kind kind;
  hrl_event_level level;
  /** The lock's name (without the key prefix); NULL for a master's. */
  const void *name;
  size_t name_len;
  /** The master's index and label; -1 and NULL when none. */
  int master;
  const char *master_label;
  int64_t ms;         /**< see HRL_EVENT_LIST; 0 when none */
  uint32_t count;     /**< DEAD_WAITER: waiters skipped; else 0 */
  hrl_status status;  /**< RENEW_FAILED, SLOW_WAIT; else HRL_OK */
  const char *detail; /**< why, "" when nothing more to say */
} hrl_event;

/** The event's name ("lost", "master_down", ...); "unknown" otherwise. */
HRL_API const char *hrl_event_name(hrl_event_kind kind);

/**
 * The event's message, the same words in every runtime: "lock 'jobs'
 * lost: not owned", "master 127.0.0.1:6379 unreachable: connection
 * refused", ... Returns buf; always terminated when size > 0.
 */
HRL_API char *hrl_event_format(const hrl_event *ev, char *buf, size_t size);

typedef void (*hrl_event_fn)(const hrl_event *ev, void *user_data);

/**
 * Calls fn (NULL: none) with every event of client's locks and masters,
 * in the thread where it happened (a call of yours, or the renewer), as
 * it happens, possibly with the client's internal mutexes held: fn must
 * not call into the client or its locks, and should return quickly (copy
 * what it needs, or queue it). Set it before other threads use the
 * client.
 */
HRL_API void hrl_client_on_event(hrl_client *client, hrl_event_fn fn,
                                 void *user_data);

/** How many buckets the wait histogram has (one more: longer waits). */
#define HRL_WAIT_BUCKETS 12

/**
 * The upper bound of wait bucket k, in milliseconds: 1, 5, 10, 25, 50,
 * 100, 250, 500, 1000, 2500, 5000, 10000; 0 for k >= HRL_WAIT_BUCKETS.
 */
HRL_API uint32_t hrl_wait_bucket_ms(size_t k);

/** A client's counters since it was made (hrl_client_stats). */
typedef struct hrl_stats {
  uint64_t acquired;  /**< acquires that got the lock */
  uint64_t busy;      /**< acquires that timed out: others held it */
  uint64_t cancelled; /**< acquires cancelled while they waited */
  /** acquires that failed, by status (HRL_ECONNECT, HRL_EAUTH, ...) */
  uint64_t failed[HRL_STATUS_COUNT_];
  uint64_t waited; /**< acquires that queued (their first try refused) */
  /** Acquires by how long they took: bucket k counts those that took at
   *  most hrl_wait_bucket_ms(k) and more than bucket k-1's bound; bucket
   *  HRL_WAIT_BUCKETS the longer ones. */
  uint64_t wait_buckets[HRL_WAIT_BUCKETS + 1];
  uint64_t wait_sum_us;     /**< their total time */
  uint64_t released;        /**< releases confirmed by a quorum */
  uint64_t handoffs;        /**< releases (and leaving waiters) that handed the
                                 lock straight to the next waiter */
  uint64_t dead_waiters;    /**< queue entries skipped: their waiter was gone */
  uint64_t extended;        /**< extends of yours confirmed by a quorum */
  uint64_t renewals;        /**< lease renewals confirmed by a quorum */
  uint64_t renewals_failed; /**< lease renewals that failed (still valid) */
  /** holds lost: leases (HRL_EVENT_LOST), and releases or extends that
   *  found the key not ours any more (HRL_ENOTOWNED) */
  uint64_t losses;
  uint64_t inspections; /**< hrl_client_inspect and HRL_OP_INSPECT runs */
  size_t masters;       /**< entries of master[] in use: N */
  struct {
    uint64_t unreachable; /**< rounds it failed: refused, reset, timed out */
    uint64_t errors; /**< rounds it answered with an error (auth, permission,
                          server, protocol) */
  } master[HRL_MASTERS_MAX];
} hrl_stats;

/**
 * A snapshot of client's counters. Each is read atomically (they are
 * counted from every thread without a lock), so a snapshot taken while
 * other threads work may be a few operations apart between counters.
 */
HRL_API void hrl_client_stats(const hrl_client *client, hrl_stats *out);

/** The queue's first waiters an inspection lists per master. */
#define HRL_INSPECT_WAITERS 16
/** The characters of a token an inspection shows (its first ones). */
#define HRL_SHORT_TOKEN 8

/** A queued waiter, as one master has it. */
typedef struct hrl_waiter_view {
  char token[HRL_SHORT_TOKEN + 1]; /**< its first 8 characters */
  int64_t age_ms;   /**< since it queued (the master's clock less the
                         waiter's arrival: the two hosts' clocks differ) */
  int64_t lease_ms; /**< how long its entry lives without a new try from
                         it; <= 0: it is gone, and skipped */
  char owner[HRL_OWNER_MAX + 1]; /**< its owner label, "" when none */
} hrl_waiter_view;

/** The holds an inspection lists per master and per quorum (of a
 *  read-write lock or a semaphore). */
#define HRL_INSPECT_HOLDS 16

/** What kind of lock a name's key is. */
typedef enum hrl_kind {
  HRL_KIND_NONE,      /**< no key (or none that answered had one) */
  HRL_KIND_MUTEX,     /**< a string: a lock's token */
  HRL_KIND_RWLOCK,    /**< a hash of reads and a write */
  HRL_KIND_SEMAPHORE, /**< a hash of permits */
  HRL_KIND_OTHER      /**< any other type: not a lock */
} hrl_kind;

/** One hold of a read-write lock or semaphore (a read, the write, a
 *  permit). */
typedef struct hrl_hold_view {
  char token[HRL_SHORT_TOKEN + 1]; /**< its first 8 characters */
  /** "read", "write", or the permit's number ("1".."permits"). */
  char hold[12];
  /** How long it lasts, ms: on one master, its expiry less the master's
   *  clock; in the quorum's list, the quorum-th longest of those. */
  int64_t ttl_ms;
  size_t holding; /**< the quorum's list: masters it is on; else 1 */
  char owner[HRL_OWNER_MAX + 1]; /**< its owner label, "" when none */
} hrl_hold_view;

/** What one master has of a lock. */
typedef struct hrl_master_view {
  const char *label; /**< the master ("host:port", a path) */
  /** HRL_OK: it answered; else why not (HRL_ECONNECT, ...), in error. */
  hrl_status status;
  char error[HRL_DETAIL_MAX];
  bool present; /**< the lock key exists */
  /** The first 8 characters of its value (a token), or "(<type>)" when
   *  the key is not a string. */
  char token[HRL_SHORT_TOKEN + 3];
  int64_t pttl_ms;               /**< -1: the key has no TTL, -2: no key */
  uint64_t fence;                /**< the name's fence counter, 0 when none */
  char owner[HRL_OWNER_MAX + 1]; /**< the holder's label, "" when none */
  uint64_t queued; /**< entries in the waiting queue (live or not) */
  size_t listed;   /**< the first of them, in order, in waiters[] */
  hrl_waiter_view waiters[HRL_INSPECT_WAITERS];
  hrl_kind kind;       /**< what its key is */
  size_t holds;        /**< live holds in the hash (expired ones not counted) */
  size_t holds_listed; /**< the first of them, by token, in hold[] */
  hrl_hold_view hold[HRL_INSPECT_HOLDS];
} hrl_master_view;

/** The quorum's view of a lock. */
typedef enum hrl_verdict {
  HRL_VERDICT_FREE,   /**< no token is on a quorum, nor could be */
  HRL_VERDICT_HELD,   /**< one token is on a quorum of masters */
  HRL_VERDICT_UNKNOWN /**< too few masters answered to tell */
} hrl_verdict;

/** A lock as its masters have it (hrl_client_inspect). */
typedef struct hrl_inspection {
  hrl_verdict verdict;
  size_t masters;  /**< N */
  size_t quorum;   /**< N/2 + 1 */
  size_t answered; /**< masters that answered */
  /** The token held on the most masters that answered (held: on a quorum
   *  of them), its first 8 characters; "" when none. */
  char token[HRL_SHORT_TOKEN + 3];
  size_t holding;                /**< masters it is on */
  char owner[HRL_OWNER_MAX + 1]; /**< its owner label, "" when none */
  /** Held: how long it stays on a quorum at best, ms (the quorum-th
   *  longest PTTL); -1 when its keys have no TTL; 0 when not held. */
  int64_t valid_ms;
  uint64_t fence;          /**< the highest fence counter of the masters */
  hrl_master_view *master; /**< masters entries, in the client's order */
  /** What the name is: the kind the most masters that answered have
   *  (HRL_KIND_NONE when none has a key). */
  hrl_kind kind;
  /** A read-write lock's or semaphore's holds on a quorum of masters
   *  (held: at least one), by token; token, holding and valid_ms above
   *  are those of the one on the most masters. */
  size_t holds;
  hrl_hold_view hold[HRL_INSPECT_HOLDS];
} hrl_inspection;

/** "free", "held", "unknown". */
HRL_API const char *hrl_verdict_name(hrl_verdict verdict);

/** "none", "mutex", "read-write lock", "semaphore", "other". */
HRL_API const char *hrl_kind_name(hrl_kind kind);

/**
 * Reads what every master has of the lock `name` (1 to HRL_NAME_MAX bytes,
 * as for hrl_lock_new): its key, token, PTTL, fence counter and owner
 * label, the waiting queue in order (HRL_INSPECT_WAITERS first entries),
 * and the quorum's verdict. One read-only script per master, all at once
 * (each within the client's timeout): no key is written, no lock taken,
 * and a master down only leaves its entry unanswered. HRL_OK with *out
 * set (free it with hrl_inspection_free) whatever the masters said, even
 * when none answered (verdict UNKNOWN); HRL_EINVAL for a bad name,
 * HRL_ENOMEM; detail (when not NULL) says why.
 */
HRL_API hrl_status hrl_client_inspect(hrl_client *client, const void *name,
                                      size_t name_len, hrl_inspection **out,
                                      char *detail, size_t detail_size);

/** Frees an inspection; NULL is a no-op. */
HRL_API void hrl_inspection_free(hrl_inspection *inspection);

/** The clock validity is judged by, in microseconds: CLOCK_BOOTTIME, which
 *  keeps counting while the machine is suspended (as the TTLs on the
 *  masters do) and never jumps with the wall clock. The one to compare
 *  with hrl_lock_validity_ms() and to time a lock's work. */
HRL_API int64_t hrl_now_us(void);

#ifdef __cplusplus
}
#endif

#endif /* HIREDLOCK_H */
