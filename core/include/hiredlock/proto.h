/*
 * hiredlock's sans-I/O protocol, for drivers: code that moves the bytes of
 * a lock operation itself (the OpenResty cosocket driver, the asyncio
 * driver) instead of calling hrl_lock_acquire() and friends, which run the
 * built-in poll()/hiredis driver. docs/DESIGN.md describes the seam.
 *
 * The algorithm (commands, reply meaning, quorum, validity, drift, cleanup,
 * retry and jitter, which masters are late) lives behind these calls; a
 * driver only connects, writes what it is given, feeds back what it reads
 * and waits when told to. A driver runs one operation so:
 *
 *   hrl_proto_begin(lock, HRL_OP_ACQUIRE, wait_ms, hrl_now_us());
 *   for (;;) {
 *     hrl_step_info s;
 *     hrl_step step = hrl_proto_step(lock, hrl_now_us(), &s);
 *     if (step == HRL_STEP_DONE) return s.status;
 *     if (step == HRL_STEP_WAIT) {
 *       // up to s.wait_ms, or until a hand-off for hrl_proto_waiter(lock)
 *       // comes on the client's channel (hrl_proto_notified) or a
 *       // subscriber connection comes up (hrl_proto_wake); a driver that
 *       // hears nothing may simply sleep s.wait_ms (waits stay bounded)
 *       continue;
 *     }
 *     // before a ROUND: once hrl_proto_waiter(lock) is not NULL, hand-offs
 *     // for that token are this lock's (register it with the subscriber)
 *     // HRL_STEP_ROUND: for every master i at once, within s.timeout_ms:
 *     //   connect if needed; on a new connection send hrl_proto_handshake()
 *     //   alone and check each reply with hrl_proto_handshake_reply: only
 *     //   when all said OK may the command follow (pipelined behind a
 *     //   refused AUTH or SELECT it would run anyway, in the wrong place).
 *     //   Send hrl_proto_command(lock, i), feed each reply to
 *     //   hrl_proto_reply(lock, i, reply): HRL_NODE_RESEND means send
 *     //   hrl_proto_command(lock, i) again and read one more reply;
 *     //   HRL_NODE_REDIRECT (a Redis Cluster moved the slot) means send it
 *     //   again where hrl_proto_target(lock, i) says; HRL_NODE_MORE
 *     //   means read the next reply (the bytes held several commands: an
 *     //   ASKING, a fenced acquire's SET and INCR). The command of master
 *     //   i goes to hrl_proto_target(lock, i) (a cluster's node) and
 *     //   produces hrl_proto_command_replies(lock, i) replies.
 *     //   A master that fails: hrl_proto_fail(lock, i, ...), and close that
 *     //   connection. One that misses the deadline: hrl_proto_missed(), and
 *     //   send hrl_proto_late_command() too, and close the connection or
 *     //   remember that it owes replies. Once hrl_proto_skippable(lock, i),
 *     //   stop waiting for master i (report it with hrl_proto_missed).
 *   }
 *
 * One operation runs on a lock at a time, and the calls for one client's
 * locks must not run in two threads at once (the built-in driver takes a
 * turn at the client's connections for each step and round): a round
 * updates the client's record of late masters.
 */
#ifndef HIREDLOCK_PROTO_H
#define HIREDLOCK_PROTO_H

#include "hiredlock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hrl_op_kind {
  HRL_OP_ACQUIRE,
  HRL_OP_RELEASE,
  HRL_OP_EXTEND,
  /** Reads what each master has of the lock (read only, no lock taken):
   *  hrl_lock_inspection() once DONE. */
  HRL_OP_INSPECT
} hrl_op_kind;

typedef enum hrl_step {
  HRL_STEP_ROUND,
  HRL_STEP_WAIT, /**< an acquire between tries: wait, then step again */
  HRL_STEP_DONE
} hrl_step;

typedef struct hrl_step_info {
  uint32_t timeout_ms; /**< ROUND: each master's reply deadline */
  uint32_t wait_ms;    /**< WAIT: step again after this at the latest */
  hrl_status status;   /**< DONE: the operation's result */
} hrl_step_info;

/** What a master did in a round (also the `why` of hrl_proto_fail). */
typedef enum hrl_node_result {
  HRL_NODE_PENDING = 0,
  HRL_NODE_OK,          /**< acquired / released / extended */
  HRL_NODE_REFUSED,     /**< held by another token / not ours */
  HRL_NODE_UNREACHABLE, /**< connect failure, I/O error, timeout */
  HRL_NODE_AUTH,        /**< AUTH refused, NOAUTH, WRONGPASS */
  HRL_NODE_SERVER,      /**< other error replies: READONLY, OOM, ... */
  HRL_NODE_PROTOCOL,    /**< a reply that makes no sense for the command */
  HRL_NODE_RESEND,      /**< hrl_proto_reply only: send the command again */
  /** hrl_proto_reply only: a Redis Cluster answered MOVED or ASK: send
   *  the command again (hrl_proto_command) to hrl_proto_target */
  HRL_NODE_REDIRECT,
  /** hrl_proto_reply only: the command's bytes were a pipeline of several
   *  commands (an ASKING in front, a fenced acquire's SET and INCR): read
   *  one more reply. */
  HRL_NODE_MORE,
  /** the ACL user may not run the command, or not on its keys (NOPERM, or a
   *  script's "can't run this command") */
  HRL_NODE_DENIED
} hrl_node_result;

typedef enum hrl_reply_type {
  HRL_REPLY_STATUS,
  HRL_REPLY_ERROR,
  HRL_REPLY_INTEGER,
  HRL_REPLY_NIL,
  HRL_REPLY_STRING,
  HRL_REPLY_OTHER, /**< nested arrays, RESP3 types: never expected */
  /** a flat array (a Sentinel's answer): `elements` items, none an array */
  HRL_REPLY_ARRAY
} hrl_reply_type;

/** Most items of an ARRAY reply a view holds (a Sentinel answers two). */
#define HRL_REPLY_ELEMENTS_MAX 8

/** A view of one reply; str/len for STATUS, ERROR and STRING; for ARRAY
 *  `elements` views in `element`. */
typedef struct hrl_reply {
  hrl_reply_type type;
  long long integer;
  const char *str;
  size_t len;
  size_t elements;
  const struct hrl_reply *element;
} hrl_reply;

/**
 * Starts an operation on lock. arg_ms: ACQUIRE the wait (as in
 * hrl_lock_acquire), EXTEND the new TTL (0: the lock's), RELEASE ignored.
 * Returns HRL_EHELD / HRL_ENOTHELD / HRL_EINVAL when the operation cannot
 * start; the lock's state is then unchanged.
 */
HRL_API hrl_status hrl_proto_begin(hrl_lock *lock, hrl_op_kind op,
                                   int64_t arg_ms, int64_t now_us);

/**
 * The result of the last HRL_OP_INSPECT run on lock to DONE (what
 * hrl_client_inspect() gives); NULL before. It lives until the next
 * inspection of the lock begins or the lock is freed.
 */
HRL_API const hrl_inspection *hrl_lock_inspection(const hrl_lock *lock);

/** Decides what comes next; see the driver loop above. */
HRL_API hrl_step hrl_proto_step(hrl_lock *lock, int64_t now_us,
                                hrl_step_info *info);

/**
 * Bytes (RESP) to send to master i in the current round; *len their size.
 * Taking them records that the command may have reached the master (what
 * a retried release needs to know); NULL when no round is out.
 */
HRL_API const char *hrl_proto_command(hrl_lock *lock, size_t i, size_t *len);

/**
 * How many replies the bytes of hrl_proto_command(lock, i) produce: 1, or 2
 * for a fenced acquire (SET, then INCR of the fence counter, pipelined).
 * What a connection left unanswered owes; 0 when no round is out.
 */
HRL_API int hrl_proto_command_replies(const hrl_lock *lock, size_t i);

/**
 * Feeds master i's reply to the current round's command. Returns the
 * master's result, HRL_NODE_RESEND (NOSCRIPT: the script is sent again in
 * full with EVAL; a cluster's TRYAGAIN: the command is sent again in its
 * plain form, on the lock key alone; either way the same node, and
 * hrl_proto_command_replies replies), HRL_NODE_REDIRECT (a cluster's MOVED or
 * ASK: send the command again to hrl_proto_target, which now names the node to
 * ask), or HRL_NODE_MORE (one more reply of the same command bytes is due: the
 * OK to an ASKING the command began with, or a fenced acquire's SET before its
 * INCR). Replies after a master's result are ignored.
 */
HRL_API hrl_node_result hrl_proto_reply(hrl_lock *lock, size_t i,
                                        const hrl_reply *reply);

/**
 * How many replies the bytes of hrl_proto_command(lock, i) (and of
 * hrl_proto_late_command) produce: 1, or 2 when a cluster's ASK redirect
 * put an ASKING in front of the command. What a driver counts as owed when
 * it leaves them unanswered.
 */
HRL_API int hrl_proto_command_replies(const hrl_lock *lock, size_t i);

/** Where master i's command goes: the master itself, the node of a Redis
 *  Cluster (hrl_master_info.cluster) that serves the lock's slot as far as
 *  the client knows, or for a Sentinel-managed primary
 *  (hrl_master_info.sentinel) the primary, or first a sentinel to ask
 *  where it is (its answer, fed to hrl_proto_reply, is a
 *  HRL_NODE_REDIRECT to the primary). */
typedef struct hrl_target {
  const char *host;  /**< TCP host, NULL for unix */
  int port;          /**< TCP port, 0 for unix */
  const char *path;  /**< unix socket path, NULL for TCP */
  size_t node;       /**< which of master i's nodes (0 but for a cluster
                          or a sentinel master): a driver keeps a
                          connection per node */
  const char *label; /**< "host:port" or the path, for messages */
  /** Whether a new connection to it sends hrl_proto_handshake first:
   *  false for a sentinel, which gets a question (hrl_proto_command is
   *  SENTINEL get-master-addr-by-name) and no AUTH or SELECT. */
  bool handshake;
} hrl_target;

/** Fills *out with where master i's command goes in the current round
 *  (for a cluster: changed by each HRL_NODE_REDIRECT). The strings live as
 *  long as the client. */
HRL_API void hrl_proto_target(const hrl_lock *lock, size_t i, hrl_target *out);

/**
 * Records that master i failed in this round; message may be NULL. Returns
 * the master's result, or HRL_NODE_REDIRECT when master i is a Redis
 * Cluster whose node could not be reached before the command went out and
 * another node may take it: then send the command to hrl_proto_target
 * (the connection that failed is closed all the same).
 */
HRL_API hrl_node_result hrl_proto_fail(hrl_lock *lock, size_t i,
                                       hrl_node_result why,
                                       const char *message);

/**
 * True once the current round's outcome can no longer change: a quorum of
 * masters said OK (to an acquire, try, release or extend), or so many said
 * something else (refused, failed, missed) that the masters still out
 * could no longer make a quorum, or the round is one whose replies decide
 * nothing (a failed attempt's cleanup, a waiter's step aside or leave). A
 * driver may then stop waiting for masters it knows to be late (they
 * missed a deadline in an earlier round and have not answered since) and
 * report them with hrl_proto_missed; masters not known to be late should
 * still be waited for, so that a healthy round's counts stay exact.
 */
HRL_API bool hrl_proto_settled(const hrl_lock *lock);

/**
 * Records that master i missed the current round's deadline, or was left
 * unanswered once skippable: it counts as unreachable (message may be
 * NULL) and is known to be late until it answers a command of a later
 * round (hrl_proto_reply). Use this rather than hrl_proto_fail for a
 * timeout: later rounds can then stop waiting for it once settled
 * (hrl_proto_skippable), and a command of ours it got may still run there,
 * which a retried release needs to know.
 */
HRL_API void hrl_proto_missed(hrl_lock *lock, size_t i, const char *message);

/**
 * After hrl_proto_missed(): bytes to send to master i as well, behind the
 * command it did not answer, when its connection is kept (their reply is
 * then owed too) or is about to be closed with the command unanswered.
 * For a release or extend this is the same command with the full script
 * (EVAL): should the master have lost its script cache, its NOSCRIPT to
 * the EVALSHA is never read, and without this the release would never run
 * there. Running it twice is harmless (compare-and-delete, compare-and-
 * expire). NULL (*len 0) when nothing more is needed.
 */
HRL_API const char *hrl_proto_late_command(const hrl_lock *lock, size_t i,
                                           size_t *len);

/**
 * True when the driver may stop waiting for master i in the current round:
 * the round is settled (hrl_proto_settled) and master i is known to be late
 * (it missed a deadline in an earlier round and has not answered since).
 * Report it with hrl_proto_missed(); its command may still be in flight,
 * so its connection then owes a reply.
 */
HRL_API bool hrl_proto_skippable(const hrl_lock *lock, size_t i);

/**
 * Cancels an acquire that is between tries (its last step was
 * HRL_STEP_WAIT): the next step is a round that leaves the waiting queue
 * (and passes on a hand-off made for this lock), then DONE with
 * HRL_ECANCELLED, so no key or queue entry is left. Before its first round
 * it ends the acquire at once. In any other phase it does nothing: finish
 * the round first (a cancelled driver still completes the round it is in,
 * and releases a lock it got).
 */
HRL_API void hrl_proto_cancel(hrl_lock *lock);

/**
 * The token hand-offs to this lock carry, once its acquire waits in the
 * masters' queues (from the round before its first HRL_STEP_WAIT until
 * DONE); NULL otherwise. A driver registers it with the client's
 * subscriber connections before sending that round, so no hand-off made
 * during it goes unheard, and delivers what comes for it.
 */
HRL_API const char *hrl_proto_waiter(const hrl_lock *lock);

/**
 * Master i handed the lock to this waiter: a message carrying
 * hrl_proto_waiter(lock) came on the client's channel from master i. Call
 * it at any time of the acquire (the next step decides: a try once a
 * quorum of masters did, or one did and the others had a per-master
 * deadline to follow); ignored when the lock is not waiting.
 */
HRL_API void hrl_proto_notified(hrl_lock *lock, size_t i);

/**
 * Try again at once: a subscriber connection of the client came (back)
 * up, so a hand-off may have gone unheard while it was down.
 */
HRL_API void hrl_proto_wake(hrl_lock *lock);

/**
 * The commands a new connection to master i needs first (AUTH, SELECT, and
 * INFO server when the client has several masters or a restart_guard),
 * pipelined; *len their size (0 when none) and *replies how many replies
 * they produce. The bytes live as long as the client.
 */
HRL_API const char *hrl_proto_handshake(const hrl_client *client, size_t i,
                                        size_t *len, int *replies);

/**
 * Checks reply number k (0-based) to master i's handshake: HRL_NODE_OK, or
 * HRL_NODE_AUTH / HRL_NODE_DENIED / HRL_NODE_SERVER / HRL_NODE_PROTOCOL with a
 * message written to message (when not NULL). The reply to INFO records who
 * the server is: a master that is another master's server, or whose server
 * started less than restart_guard ago, is refused (HRL_NODE_SERVER, the
 * message says why), and the connection goes no further. The client's steps
 * run one at a time (see the top of this file), so this may update the
 * client.
 */
HRL_API hrl_node_result hrl_proto_handshake_reply(hrl_client *client, size_t i,
                                                  int k, const hrl_reply *reply,
                                                  char *message,
                                                  size_t message_size);

/*
 * One connection to one master, for drivers that move the bytes: the
 * rules about a byte stream (handshake first, owed replies dropped in
 * order, NOSCRIPT resends, when a connection that missed a deadline may be
 * kept) held here, so that a driver writes no rule of its own. A driver
 * keeps one stream per connection and, in each round:
 *
 *   data that came while no round was out: hrl_stream_drain(s, data, n)
 *     (false: close the connection)
 *   bytes = hrl_stream_start(s, lock, i, new_connection, &len); write them
 *     (NULL: held back from a connection that owes too many replies;
 *     master i is done for this round, keep the connection)
 *   on data: a = hrl_stream_feed(s, lock, i, data, n, &out, &out_len):
 *     HRL_STREAM_MORE   keep reading
 *     HRL_STREAM_SEND   write out, keep reading
 *     HRL_STREAM_DONE   master i has its result; the connection may be kept
 *     HRL_STREAM_CLOSE  master i failed (already recorded); close it
 *   at the deadline: a = hrl_stream_expire(s, lock, i, message, &out, &n):
 *     write out if any, then DONE: keep the connection (it owes replies),
 *     CLOSE: close it
 *   once hrl_proto_skippable(lock, i): a = hrl_stream_skip(s, lock, i),
 *     DONE or CLOSE as above
 *   an I/O error: hrl_proto_fail(lock, i, HRL_NODE_UNREACHABLE, why), close
 *     (a kept connection that broke before any reply in this round,
 *     hrl_stream_replied() false, was closed by the server while idle: the
 *     command never ran, and the driver may retry on a new connection once)
 */
typedef struct hrl_stream hrl_stream;

typedef enum hrl_stream_action {
  HRL_STREAM_MORE,
  HRL_STREAM_SEND,
  HRL_STREAM_DONE,
  HRL_STREAM_CLOSE
} hrl_stream_action;

/** A stream for a new connection, or NULL when out of memory. */
HRL_API hrl_stream *hrl_stream_new(void);
HRL_API void hrl_stream_free(hrl_stream *stream);

/**
 * Starts master i's part of the current round on this stream: the bytes to
 * write (*len their size). fresh: the connection is new (opened for this
 * round, or replacing one): its handshake goes first, alone, when the
 * master's URL asks for one. NULL (*len 0) when no round is out, or when
 * the connection owes so many replies (64) that the command is held back:
 * master i then has its result already (unreachable, nothing sent; keep
 * the connection, and pass what it receives meanwhile to
 * hrl_stream_drain). Only a release (or a waiter's step aside or leave)
 * of a lock whose token that master may hold still goes on it: it must
 * follow that SET on the same connection. "" (*len 0) when the handshake
 * of an earlier round is still unanswered (a round's deadline passed
 * first: hrl_stream_expire kept the connection): nothing to write, read
 * on; the command follows its replies, as for a new connection.
 */
HRL_API const char *hrl_stream_start(hrl_stream *stream, hrl_lock *lock,
                                     size_t i, bool fresh, size_t *len);

/**
 * Bytes that came on the connection while no round of ours was out on it
 * (late replies to earlier rounds' commands): dropped as owed. Pass them
 * here before hrl_stream_start, so that a connection whose master is back
 * is used again. False when they hold more replies than were owed, or are
 * not RESP: close the connection. Replies to a handshake carried over
 * (see hrl_stream_start) are checked here too (false: one was refused).
 */
HRL_API bool hrl_stream_drain(hrl_stream *stream, const char *data, size_t len);

/** Feeds bytes read from the connection; see above for the actions. */
HRL_API hrl_stream_action hrl_stream_feed(hrl_stream *stream, hrl_lock *lock,
                                          size_t i, const char *data,
                                          size_t len, const char **out,
                                          size_t *out_len);

/** The round's deadline passed for master i (message: why, for users).
 *  A handshake still unanswered then is kept (DONE) and goes on in the next
 *  round, if this round began within connect_timeout of the round the
 *  handshake began in (else CLOSE). */
HRL_API hrl_stream_action hrl_stream_expire(hrl_stream *stream, hrl_lock *lock,
                                            size_t i, const char *message,
                                            const char **out, size_t *out_len);

/** The round stops waiting for master i (hrl_proto_skippable). */
HRL_API hrl_stream_action hrl_stream_skip(hrl_stream *stream, hrl_lock *lock,
                                          size_t i);

/** Whether any reply arrived on the stream in this round. */
HRL_API bool hrl_stream_replied(const hrl_stream *stream);

/** Replies the connection still owes for earlier rounds' commands. */
HRL_API uint32_t hrl_stream_owed(const hrl_stream *stream);

/*
 * A subscriber connection to master i: how a client hears the hand-offs of
 * its waiting locks. One per master (not per lock), subscribed to the
 * client's channel (hrl_client_channel); the queue script publishes there
 * the token a released lock was handed to, and the driver passes it to the
 * lock waiting with that token (hrl_proto_notified). A driver keeps the
 * connection open while it has waiters (it opens it on the first wait) and
 * serves every client whose hrl_client_subscriber_key is the same with
 * it (hrl_client_share_channel makes clients of one process share their
 * channel). For each new connection:
 *
 *   s = hrl_subscriber_new(client, i);   (once)
 *   hrl_subscriber_open(s, &where);      connect to where: host and port,
 *                                        or path; TLS for a rediss://
 *                                        master (hrl_master_info.tls)
 *   bytes = hrl_subscriber_start(s, &n); write them; on data:
 *     for (n = hrl_subscriber_feed(s, data, len, &out, &out_len);
 *          n != HRL_NOTICE_MORE;
 *          n = hrl_subscriber_feed(s, NULL, 0, &out, &out_len)):
 *       HRL_NOTICE_SEND     write out (the SUBSCRIBE, after the handshake)
 *       HRL_NOTICE_READY    subscribed: hrl_proto_wake() every waiting lock
 *                           it serves (a hand-off may have been missed)
 *       HRL_NOTICE_HANDOFF  out: the token (HRL_TOKEN_LEN bytes) a lock was
 *                           handed to by master i
 *       HRL_NOTICE_CLOSE    out: why; close (and open again later)
 *       HRL_NOTICE_REDIRECT out: where to; close and open again at once
 *                           (a sentinel named the primary)
 *   on EOF or an error: close, open again later. Waits stay bounded
 *   without it (the holder's TTL, retry_delay), only slower.
 *
 * A Sentinel-managed primary's subscriber asks a sentinel where the
 * primary is (hrl_subscriber_open names the sentinel, with handshake
 * false, and hrl_subscriber_start is the question), then subscribes there;
 * once that connection ends (a failover closes the deposed primary's
 * clients), the next one asks a sentinel again, so it follows failovers.
 * Unanswered sentinels are asked in turn.
 */
typedef struct hrl_subscriber hrl_subscriber;

typedef enum hrl_notice {
  HRL_NOTICE_MORE,
  HRL_NOTICE_SEND,
  HRL_NOTICE_READY,
  HRL_NOTICE_HANDOFF,
  HRL_NOTICE_CLOSE,
  HRL_NOTICE_REDIRECT
} hrl_notice;

/** A subscriber for master i of client, or NULL (out of memory, no such
 *  master, or the OS random generator failed making the channel). */
HRL_API hrl_subscriber *hrl_subscriber_new(hrl_client *client, size_t i);
HRL_API void hrl_subscriber_free(hrl_subscriber *subscriber);

/** A new connection begins: where it goes (host/port or path, the label
 *  for messages; handshake false for a sentinel to ask). Call it before
 *  every connection, also the ones that failed to connect (the next
 *  sentinel is then asked). The strings live until the next call. */
HRL_API void hrl_subscriber_open(hrl_subscriber *subscriber, hrl_target *out);

/** The bytes a new connection writes first (the handshake alone when the
 *  master's URL asks for one, else the SUBSCRIBE; a sentinel's question);
 *  *len their size. */
HRL_API const char *hrl_subscriber_start(hrl_subscriber *subscriber,
                                         size_t *len);

/** Feeds bytes read (none: the next notice from those fed before); see
 *  above. out is valid until the next call. */
HRL_API hrl_notice hrl_subscriber_feed(hrl_subscriber *subscriber,
                                       const char *data, size_t len,
                                       const char **out, size_t *out_len);

/** The channel client's waiters hear their hand-offs on (*len its size),
 *  made anew in a forked child; NULL when the OS random generator failed. */
HRL_API const char *hrl_client_channel(hrl_client *client, size_t *len);

/**
 * Makes client's waiters hear their hand-offs on the channel of `from`
 * (with client's own key prefix), so that one subscriber connection per
 * master serves the waiters of both: for drivers whose subscribers outlive
 * their clients (a client made per request). Call it before client's first
 * wait (a wait in progress goes on hearing the channel it queued with, as
 * long as the driver keeps that subscriber). True when they share it now;
 * false when the OS random generator failed.
 */
HRL_API bool hrl_client_share_channel(hrl_client *client, hrl_client *from);

/**
 * What identifies master i's subscriber connection of client: where it
 * goes, its TLS settings, its handshake and the channel. Clients whose keys
 * are equal may share that connection (and its waiters learn their
 * hand-offs from it). Writes up to size bytes of the key to buf (which
 * may be NULL when size is 0) and returns its full length (0: no such
 * master, or no channel). The key holds the handshake's credentials: keep
 * it in memory, or hash it.
 */
HRL_API size_t hrl_client_subscriber_key(hrl_client *client, size_t i,
                                         char *buf, size_t size);

/*
 * Managed leases (hrl_lock_options.auto_renew) for drivers that run the
 * protocol themselves; the built-in driver's renewer thread does the same.
 * A driver keeps its held leases and, for each, wakes at
 * hrl_proto_renew_due() and calls hrl_proto_renew_begin():
 *
 *   hrl_lock *twin;
 *switch (hrl_proto_renew_begin(lock, hrl_now_us(), &twin)) {
   *case HRL_RENEW_ROUND : // an extend was begun on twin: run it to DONE
                           *run(twin); // with the usual loop, then:
   *if (hrl_proto_renew_end(lock, hrl_now_us()) == HRL_ELOST) tell_holder();
   *break;
   *case HRL_RENEW_LOST : tell_holder();
   break;                        // hrl_lock_lost() says why
   *case HRL_RENEW_WAIT : break; // look again at renew_due
   *case HRL_RENEW_NONE : forget(lock);
   break; // nothing more to renew
   *
 }
 *
 * The twin is the lock's private copy for renewals (its own operation,
 * detail and counts), so a renewal may be out while the holder's own call
 * (release, extend) runs on the lock itself: when the hold changed
 * meanwhile, hrl_proto_renew_end() discards the renewal's outcome.
 */

/** What hrl_proto_renew_begin() found. */
typedef enum hrl_renew {
  HRL_RENEW_NONE,  /**< not a held lease (any more): nothing to renew */
  HRL_RENEW_WAIT,  /**< nothing now: look again at hrl_proto_renew_due() */
  HRL_RENEW_ROUND, /**< an extend was begun on *twin: run it to its end,
                        then call hrl_proto_renew_end() */
  HRL_RENEW_LOST   /**< the hold was found lost just now (its validity ran
                        out unrenewed, or max_hold): tell the holder */
} hrl_renew;

/**
 * When the lease's next renewal (or the check that finds it expired) is
 * due, on the hrl_now_us() clock: about a third of the TTL after the last
 * renewal, sooner after a failed one. INT64_MAX when there is nothing to
 * renew: not a lease, not held, or lost.
 */
HRL_API int64_t hrl_proto_renew_due(const hrl_lock *lock);

/**
 * Begins the lease's renewal at now_us, whenever the driver calls it (it
 * does not wait for hrl_proto_renew_due). See hrl_renew for the outcomes;
 * *twin is set for HRL_RENEW_ROUND only, and lives as long as lock.
 */
HRL_API hrl_renew hrl_proto_renew_begin(hrl_lock *lock, int64_t now_us,
                                        hrl_lock **twin);

/**
 * Takes the outcome of the renewal the twin ran. HRL_OK: renewed.
 * HRL_ELOST: the hold was lost just now ("not owned", or the validity ran
 * out before this renewal was confirmed): tell the holder. HRL_ECANCELLED:
 * the hold changed while the renewal was out (released, taken again): its
 * outcome means nothing. Any other status: the renewal failed (too few
 * masters confirmed); the lock keeps its validity and the next try is at
 * hrl_proto_renew_due().
 */
HRL_API hrl_status hrl_proto_renew_end(hrl_lock *lock, int64_t now_us);

/** Incremental RESP reader for byte-stream transports. */
typedef struct hrl_parser hrl_parser;

/** A new reader, or NULL when out of memory. */
HRL_API hrl_parser *hrl_parser_new(void);
HRL_API void hrl_parser_free(hrl_parser *parser);

/** Forgets every byte fed so far (a new connection). */
HRL_API void hrl_parser_reset(hrl_parser *parser);

/** Appends received bytes. HRL_ENOMEM or HRL_EPROTOCOL on failure. */
HRL_API hrl_status hrl_parser_feed(hrl_parser *parser, const char *buf,
                                   size_t len);

/**
 * Takes the next complete reply: 1 and *out filled (valid until the next
 * call on this parser), 0 when more bytes are needed, -1 on a protocol error
 * (the stream is then unusable: close the connection). Arrays are taken
 * when flat and at most HRL_REPLY_ELEMENTS_MAX long (a Sentinel's answer);
 * anything bigger or nested is a protocol error.
 */
HRL_API int hrl_parser_next(hrl_parser *parser, hrl_reply *out);

/** How to speak TLS to a rediss:// master: the client's ssl_* options,
 *  or its URL's where the URL gives them. Paths are NULL when unset. Each
 *  master's own: a driver that shares TLS state between masters shares it
 *  only between masters whose every field is equal (the built-in driver's
 *  hrl_tls_ctx_fits compares them all: a new field goes there too). */
typedef struct hrl_tls_settings {
  const char *ca_certs; /**< CA file; NULL with ca_path NULL: the system's */
  const char *ca_path;  /**< CA directory */
  const char *certfile; /**< client certificate, for mutual TLS */
  const char *keyfile;  /**< its key (NULL: in certfile) */
  hrl_cert_reqs cert_reqs;
  bool check_hostname; /**< the certificate must name host (DNS or IP) */
} hrl_tls_settings;

/** Where master i is, for transports that open their own connections. */
typedef struct hrl_master_info {
  const char *host; /**< TCP host (IPv6 without brackets), NULL for unix */
  int port;         /**< TCP port, 0 for unix */
  const char *path; /**< unix socket path, NULL for TCP */
  long db;          /**< database selected by the handshake (0: none) */
  /** rediss://: shake hands over TLS (tls_settings) once connected and
   *  before the handshake bytes, within the connect timeout; send host as
   *  SNI when it is a name, and check the certificate against host. */
  bool tls;
  hrl_tls_settings tls_settings;
  /** redis+cluster://: a Redis Cluster, one master of the quorum; host and
   *  port are its first seed, and each round's command goes to the node
   *  hrl_proto_target names. */
  bool cluster;
  /** redis+sentinel://: a Sentinel-managed primary, one master of the
   *  quorum; host and port are its first sentinel, and each round's
   *  command goes where hrl_proto_target says (the primary, or a sentinel
   *  to ask where it is). */
  bool sentinel;
  /** The handshake ends with INFO server, whose answer this client judges
   *  (one server under two names, restart_guard): a driver that pools
   *  connections must not hand one to another client, which would skip
   *  that handshake. */
  bool asks_server;
} hrl_master_info;

/**
 * Fills *out for master i; false when i is out of range. The strings live
 * as long as the client. Credentials are not exposed: the handshake bytes
 * (hrl_proto_handshake) carry them.
 */
HRL_API bool hrl_client_master_info(const hrl_client *client, size_t i,
                                    hrl_master_info *out);

#ifdef __cplusplus
}
#endif

#endif /* HIREDLOCK_PROTO_H */
