/* The wire format: RESP commands for acquire, release, extend, the fenced
 * rounds and the connection handshake (docs/DESIGN.md, section 3). */
#ifndef HRL_RESP_H
#define HRL_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hiredlock/proto.h"

/* The scripts, byte for byte as every runtime sends them, and their SHA1
 * digests (checked against SCRIPT LOAD by the tests). */
#define HRL_RELEASE_SCRIPT                                                     \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"del\",KEYS[1]) else return 0 end"
#define HRL_RELEASE_SHA1 "b70c2384248f88e6b75b9f89241a180f856ad852"
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

/* What a round sends. */
typedef enum hrl_round_kind {
  HRL_ROUND_SET,            /* SET key token NX PX ttl: an acquire */
  HRL_ROUND_FENCED_ACQUIRE, /* SET NX PX, then INCR counter: two replies */
  HRL_ROUND_FENCE,          /* the fence script (fenced, when needed) */
  HRL_ROUND_RELEASE,        /* the release script */
  HRL_ROUND_EXTEND          /* the extend script */
} hrl_round_kind;

/* The arguments of a lock command. */
typedef struct hrl_command_args {
  const char *key;
  size_t key_len;
  const char *fence_key; /* the fenced rounds only */
  size_t fence_key_len;
  const char *token; /* HRL_TOKEN_LEN characters */
  /* SET, fenced acquire, extend: the TTL in ms; fence: the fence. */
  uint64_t number;
} hrl_command_args;

/* Room needed for any command about a key of key_len bytes and a counter
 * key of fence_key_len bytes (0 for an unfenced lock). */
size_t hrl_resp_command_capacity(size_t key_len, size_t fence_key_len);

/* Formats the command of a round into buf (which must hold
 * hrl_resp_command_capacity bytes); a script by its SHA1 (EVALSHA) when
 * by_sha, in full (EVAL) otherwise. A fenced acquire is two commands,
 * pipelined (hrl_resp_replies). Returns the length written. */
size_t hrl_resp_command(char *buf, hrl_round_kind kind, bool by_sha,
                        const hrl_command_args *a);

/* How many replies the command of a round of that kind produces. */
int hrl_resp_replies(hrl_round_kind kind);

/* Formats argc arguments as one RESP command into a new malloc'd buffer;
 * NULL when out of memory. */
char *hrl_resp_format(int argc, const char *const *argv, const size_t *lens,
                      size_t *out_len);

#endif
