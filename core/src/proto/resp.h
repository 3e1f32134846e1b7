/* The wire format: RESP commands for acquire, release, extend, the waiting
 * queue's rounds, the fenced rounds and the connection handshake
 * (docs/DESIGN.md, section 3). */
#ifndef HRL_RESP_H
#define HRL_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hiredlock/proto.h"

/* The scripts, byte for byte as every runtime sends them, and their SHA1
 * digests (checked against SCRIPT LOAD by the tests). */
#define HRL_EXTEND_SCRIPT                                                      \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"pexpire\",KEYS[1],ARGV[2]) else return 0 end"
#define HRL_EXTEND_SHA1 "36e94d1c6e02fcefaa7ee5d79eee614dbac55f10"
/* The fence round (only when fewer than a quorum of the masters that
 * granted an attempt returned its fence): while KEYS[1] holds our token,
 * raise the counter to the fence ARGV[2] and say 1; 0 when the key is not
 * ours, or when the counter is above the fence (the fence would not be the
 * greatest). Exact for any 64-bit value: decimal strings compared by
 * length, then byte by byte (Lua's < on strings follows the server's
 * locale). */
#define HRL_FENCE_SCRIPT                                                       \
  "if redis.call(\"get\",KEYS[1]) ~= ARGV[1] then return 0 end "               \
  "local c,t=redis.call(\"get\",KEYS[2]) or \"0\",ARGV[2] "                    \
  "if c==t then return 1 end "                                                 \
  "if #c>#t then return 0 end "                                                \
  "if #c==#t then for i=1,#t do local x,y=c:byte(i),t:byte(i) "                \
  "if x~=y then if x>y then return 0 end break end end end "                   \
  "redis.call(\"set\",KEYS[2],t) return 1"
#define HRL_FENCE_SHA1 "9c38fba8e96eb3c37a8add861f63fed33fe29963"
/* The queue script: the release, and a waiter's rounds, on the lock key
 * KEYS[1], its queue KEYS[2] (a sorted set: waiter token -> arrival) and
 * its waiters KEYS[3] (a hash: token -> "expiry window channel", expiry in
 * the master's milliseconds, window: how long a hand-off stays reserved
 * for that waiter). ARGV[1] is the mode:
 *   r token: release (also a waiter leaving): drop the token's entry; when
 *     the key holds the token, hand it to the first live waiter (below) or
 *     delete it. 1 when the key was ours, else 0. Without a queue:
 *     compare-and-delete, nothing more.
 *   t token ttl arrival lease window channel handed: a waiter's try: claim
 *     a key that holds the token (PEXPIRE ttl); SET a free key when the
 *     token is the first live waiter (else hand it to that one); otherwise
 *     (re)enqueue. +OK when the token holds the key now, else the key's
 *     PTTL. handed "1": the waiter takes a hand-off it hears of without a
 *     claim (waiting.c), so its entry ends in "\t" ttl.
 *   a (same arguments): a waiter steps aside after a try that won too few
 *     masters: a key holding its token goes to the next live waiter (or
 *     is deleted), and the token stays queued. 0.
 * A hand-off to waiter h: SET key h PX window and PUBLISH channel h; for
 * an entry that ends in "\t" ttl, SET key h PX ttl and PUBLISH only when
 * its channel has a subscriber on this server (PUBSUB NUMSUB; an ACL that
 * refuses NUMSUB counts as one), else SET key h PX window and no message:
 * a waiter that hears of such a hand-off knows the key is its own for the
 * whole ttl from the SET (docs/SAFETY.md, "Hand-off without a claim"),
 * and one whose process is gone holds it no longer than the window. An
 * older script reading such an entry publishes on a channel nobody hears
 * (the "\t" ttl stays in it): its hand-off lapses after the window, or
 * the waiter's next try claims it.
 * t and a on a key that is a hash (a read-write lock's or a semaphore's,
 * hold_script.h) change nothing and answer the error "HRLKIND hold" (a
 * name is one kind of lock at a time); on another type, GET's WRONGTYPE.
 * Told apart by GET's and HGET's errors: a lock user's ACL has no TYPE. */
#define HRL_QUEUE_SCRIPT                                                       \
  "local k,q,w,m,t=KEYS[1],KEYS[2],KEYS[3],ARGV[1],ARGV[2]\n"                  \
  "if m==\"r\" and redis.call(\"exists\",q)==0 then\n"                         \
  "if redis.call(\"get\",k)==t then return redis.call(\"del\",k) end\n"        \
  "return 0\n"                                                                 \
  "end\n"                                                                      \
  "local c=redis.call(\"time\")\n"                                             \
  "local now=tonumber(c[1])*1000+math.floor(tonumber(c[2])/1000)\n"            \
  "local dead,handed=0,0\n"                                                    \
  "local function drop(h) redis.call(\"zrem\",q,h) redis.call(\"hdel\",w,h) "  \
  "end\n"                                                                      \
  "local function head(skip)\n"                                                \
  "local i=0\n"                                                                \
  "while true do\n"                                                            \
  "local h=redis.call(\"zrange\",q,i,i)[1]\n"                                  \
  "if not h then return nil end\n"                                             \
  "if h==skip then i=i+1 else\n"                                               \
  "local e,x,ch=string.match(redis.call(\"hget\",w,h) or \"\",\"^(%d+) (%d+) " \
  "(.+)$\")\n"                                                                 \
  "if e and tonumber(e)>now then return h,x,ch end\n"                          \
  "drop(h) dead=dead+1\n"                                                      \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "local function give(h,x,ch)\n"                                              \
  "local c,l=string.match(ch,\"^(.+)\\t(%d+)$\")\n"                            \
  "local n=c and redis.pcall(\"pubsub\",\"numsub\",c)\n"                       \
  "local heard=n and (n.err~=nil or n[2]>0)\n"                                 \
  "redis.call(\"set\",k,h,\"px\",heard and l or x)\n"                          \
  "drop(h)\n"                                                                  \
  "if heard or not c then redis.call(\"publish\",c or ch,h) end\n"             \
  "end\n"                                                                      \
  "local function pass()\n"                                                    \
  "local h,x,ch=head(t)\n"                                                     \
  "if h then give(h,x,ch) handed=2 else redis.call(\"del\",k) end\n"           \
  "end\n"                                                                      \
  "if m==\"r\" then\n"                                                         \
  "drop(t)\n"                                                                  \
  "if redis.call(\"get\",k)~=t then return 0 end\n"                            \
  "pass()\n"                                                                   \
  "return 1+handed+4*dead\n"                                                   \
  "end\n"                                                                      \
  "local "                                                                     \
  "ttl,lease,win=tonumber(ARGV[3]),tonumber(ARGV[5]),tonumber(ARGV[6])\n"      \
  "local function enqueue()\n"                                                 \
  "redis.call(\"zadd\",q,ARGV[4],t)\n"                                         \
  "redis.call(\"hset\",w,t,string.format(\"%d %d "                             \
  "\",now+lease,math.min(ttl,win))..ARGV[7].."                                 \
  "(ARGV[8]==\"1\" and \"\\t\"..ARGV[3] or \"\"))\n"                           \
  "if redis.call(\"pttl\",q)<lease then\n"                                     \
  "redis.call(\"pexpire\",q,lease)\n"                                          \
  "redis.call(\"pexpire\",w,lease)\n"                                          \
  "end\n"                                                                      \
  "end\n"                                                                      \
  "local v=redis.pcall(\"get\",k)\n"                                           \
  "if type(v)==\"table\" then\n"                                               \
  "if type(redis.pcall(\"hget\",k,\"-\"))~=\"table\" then\n"                   \
  "return redis.error_reply(\"HRLKIND hold\")\n"                               \
  "end\n"                                                                      \
  "return v\n"                                                                 \
  "end\n"                                                                      \
  "if m==\"a\" then\n"                                                         \
  "if v==t then pass() end\n"                                                  \
  "enqueue()\n"                                                                \
  "return handed+4*dead\n"                                                     \
  "end\n"                                                                      \
  "if v==t then\n"                                                             \
  "drop(t)\n"                                                                  \
  "redis.call(\"pexpire\",k,ttl)\n"                                            \
  "return {ok=\"OK\"}\n"                                                       \
  "end\n"                                                                      \
  "enqueue()\n"                                                                \
  "if not v then\n"                                                            \
  "local h,x,ch=head(nil)\n"                                                   \
  "if h==t then\n"                                                             \
  "drop(t)\n"                                                                  \
  "redis.call(\"set\",k,t,\"px\",ttl)\n"                                       \
  "return {ok=\"OK\"}\n"                                                       \
  "end\n"                                                                      \
  "give(h,x,ch)\n"                                                             \
  "end\n"                                                                      \
  "return redis.call(\"pttl\",k)\n"
#define HRL_QUEUE_SHA1 "355d797da61ba015dee7563c90be63c1a738b4c3"

/* A release on the lock key alone: compare-and-delete. Only where a Redis
 * Cluster's slot is migrating and the queue script's three keys are not
 * all on one node (TRYAGAIN): it drops a key that holds the token, leaves
 * the queue as it is (an entry lapses with its lease; a waiter finds the
 * key free on its next try). Always sent in full (EVAL). */
#define HRL_PLAIN_RELEASE_SCRIPT                                               \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"del\",KEYS[1]) else return 0 end"
#define HRL_PLAIN_RELEASE_SHA1 "b70c2384248f88e6b75b9f89241a180f856ad852"

/* What a round sends. */
typedef enum hrl_round_kind {
  HRL_ROUND_SET, /* SET key token NX PX ttl: an acquire's first attempt */
  HRL_ROUND_FENCED_ACQUIRE, /* SET NX PX, then INCR counter: two replies */
  HRL_ROUND_FENCE,          /* the fence script (fenced, when needed) */
  HRL_ROUND_RELEASE,        /* the queue script, mode r: release, or leave */
  HRL_ROUND_EXTEND,         /* the extend script */
  HRL_ROUND_TRY,            /* the queue script, mode t: a waiter's try */
  HRL_ROUND_FENCED_TRY,     /* a try, then INCR counter: two replies */
  HRL_ROUND_ASIDE,          /* the queue script, mode a: a waiter steps aside */
  HRL_ROUND_INSPECT         /* the read-only inspect script (inspect.c) */
} hrl_round_kind;

/* The arguments of a lock command. */
typedef struct hrl_command_args {
  const char *key;
  size_t key_len;
  const char *queue; /* the queue's keys (sibling_key.h) */
  size_t queue_len;
  const char *waiters;
  size_t waiters_len;
  const char *fence_key; /* the fenced rounds only */
  size_t fence_key_len;
  const char *token; /* HRL_TOKEN_LEN characters */
  /* SET, fenced acquire, extend, try, aside: the TTL in ms; fence: the
   * fence. */
  uint64_t number;
  /* try, aside: the waiter's arrival (wall clock, microseconds), how long
   * its entry lives without a new try, how long a hand-off stays reserved
   * for it, and its client's channel */
  int64_t arrival_us;
  uint32_t lease_ms;
  uint32_t window_ms;
  const char *channel;
  size_t channel_len;
  /* A hold of a read-write lock or semaphore (hold.c; HRL_MODE_LOCK: the
   * mutex's commands above): its mode, its semaphore's permits, and the
   * permit its round asks for (a try: the one to prefer; extend, fence:
   * the one it holds; 0: any). */
  hrl_lock_mode mode;
  uint32_t permits;
  uint32_t permit;
  /* a mutex's try, aside: the waiter takes a hand-off without a claim
   * (ARGV[8]) */
  bool handed_ttl;
} hrl_command_args;

/* EVAL <plain release script> 1 key token into buf (room: the EVAL form's
 * capacity); returns its length. */
size_t hrl_resp_plain_release(char *buf, const hrl_command_args *a);

/* A waiter's plain try, on the lock key alone (a migrating cluster slot
 * holds up the queue script): the acquire's SET key token NX PX ttl, and
 * INCR counter behind it when fenced, into buf (room: the EVAL form's
 * capacity); returns its length. */
size_t hrl_resp_plain_try(char *buf, bool fenced, const hrl_command_args *a);

/* Room needed for a command in EVALSHA form (the SET, the scripts by their
 * digest, and the INCR behind a fenced acquire or try) about a key of
 * key_len bytes, sibling keys (queue, waiters, counter) of sibling_len
 * bytes each at most, and a channel of channel_len bytes; with room for
 * the WAIT behind it (hrl_resp_wait) when wait. */
size_t hrl_resp_command_capacity(size_t key_len, size_t sibling_len,
                                 size_t channel_len, bool wait);

/* The same for any form (EVAL: the scripts in full), WAIT included. */
size_t hrl_resp_eval_capacity(size_t key_len, size_t sibling_len,
                              size_t channel_len);

/* Formats the command of a round into buf (which must hold the capacity
 * above for its form); a script by its SHA1 (EVALSHA) when by_sha, in full
 * (EVAL) otherwise. A fenced acquire or try is two commands, pipelined
 * (hrl_resp_replies). Returns the length written. */
size_t hrl_resp_command(char *buf, hrl_round_kind kind, bool by_sha,
                        const hrl_command_args *a);

/* How many replies the command of a round of that kind produces (a WAIT
 * behind it not counted). */
int hrl_resp_replies(hrl_round_kind kind);

/* The longest WAIT or WAITAOF hrl_resp_wait writes. */
#define HRL_RESP_WAIT_MAX 64

/* Writes `WAIT replicas timeout_ms` (aof: `WAITAOF 1 replicas
 * timeout_ms`) into buf, the command pipelined behind a write whose vote
 * counts only once replicas have it; returns its length. timeout_ms must
 * not be 0 (WAIT would block for ever). */
size_t hrl_resp_wait(char *buf, uint32_t replicas, bool aof,
                     uint32_t timeout_ms);

/* hold.c: the command of a round of a read-write lock's or semaphore's
 * hold (a->mode is not HRL_MODE_LOCK) into buf, as hrl_resp_command; and
 * its plain release after a cluster's TRYAGAIN (HDEL key token). */
size_t hrl_hold_command(char *buf, hrl_round_kind kind, bool by_sha,
                        const hrl_command_args *a);
size_t hrl_hold_plain_release(char *buf, const hrl_command_args *a);

/* The RESP pieces the commands are made of, for hold.c: one argument, a
 * number as one, and a script's head (argc, then EVALSHA sha1 or EVAL
 * source); each returns the length written. */
size_t hrl_resp_arg(char *buf, const char *arg, size_t len);
size_t hrl_resp_number(char *buf, uint64_t v);
/* v's decimal digits alone (at most 20), no stdio; the length written. */
size_t hrl_resp_uint(char *buf, uint64_t v);
size_t hrl_resp_script(char *buf, int argc, bool by_sha, const char *source,
                       size_t len, const char *sha1);

/* Formats argc arguments as one RESP command into a new malloc'd buffer;
 * NULL when out of memory. */
char *hrl_resp_format(int argc, const char *const *argv, const size_t *lens,
                      size_t *out_len);

#endif
