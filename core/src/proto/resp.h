/* The wire format: RESP commands for acquire, release, extend and the
 * connection handshake (docs/DESIGN.md, section 3). */
#ifndef HRL_RESP_H
#define HRL_RESP_H

#include <stddef.h>
#include <stdint.h>

#include "hiredlock/proto.h"

/* The compare scripts, byte for byte as every runtime sends them, and their
 * SHA1 digests (checked against SCRIPT LOAD by the tests). */
#define HRL_RELEASE_SCRIPT                                                     \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"del\",KEYS[1]) else return 0 end"
#define HRL_RELEASE_SHA1 "b70c2384248f88e6b75b9f89241a180f856ad852"
#define HRL_EXTEND_SCRIPT                                                      \
  "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return "                     \
  "redis.call(\"pexpire\",KEYS[1],ARGV[2]) else return 0 end"
#define HRL_EXTEND_SHA1 "36e94d1c6e02fcefaa7ee5d79eee614dbac55f10"

/* Room needed for any command about a key of key_len bytes. */
size_t hrl_resp_command_capacity(size_t key_len);

/* SET key token NX PX ttl. Returns the length written (buf must hold
 * hrl_resp_command_capacity(key_len) bytes). */
size_t hrl_resp_acquire(char *buf, const char *key, size_t key_len,
                        const char *token, uint32_t ttl_ms);

/* EVALSHA (by_sha) or EVAL of the release or extend script; ttl_ms is used
 * by extend only. */
size_t hrl_resp_script(char *buf, hrl_op_kind op, int by_sha, const char *key,
                       size_t key_len, const char *token, uint32_t ttl_ms);

/* Formats argc arguments as one RESP command into a new malloc'd buffer;
 * NULL when out of memory. */
char *hrl_resp_format(int argc, const char *const *argv, const size_t *lens,
                      size_t *out_len);

#endif
