/* The commands a lock sends again and again, kept as bytes: of a lock's
 * acquire (SET key token NX PX ttl, and INCR counter behind it when
 * fenced), its release (the queue script, mode r) and its extend, only the
 * token changes from one hold to the next (the TTL rarely). A round copies
 * the kept bytes and writes its token in, instead of formatting the key,
 * its sibling keys, the script's digest and the numbers again: that was a
 * fifth of the core's instructions in a lock cycle. The bytes are resp.c's
 * own output, so the wire format is unchanged (docs/DESIGN.md, section 3).
 *
 * A lock keeps a command only from its second round of that kind: a lock
 * made per acquisition (the bindings' per-request use) allocates nothing
 * more and formats as before. Without memory for the bytes the round
 * formats its command, as the first did. */
#ifndef HRL_COMMAND_CACHE_H
#define HRL_COMMAND_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

/* One kept command: its bytes (in hrl_op_spare.cached), their length (0:
 * none kept), where its token is, and the kind and number (the TTL) it was
 * formatted for. */
typedef struct hrl_cmd_slot {
  uint32_t len;
  uint32_t token_at;
  uint64_t number;
  hrl_round_kind kind;
} hrl_cmd_slot;

/* The acquire (plain or fenced), the release, the extend. */
#define HRL_CMD_SLOTS 3

/* hrl_op.spare: the buffers few locks need, allocated on first use and
 * freed with the lock (hrl_op_spare_free). */
typedef struct hrl_op_spare {
  char **own;   /* target.c: n per-master WAIT buffers, or NULL */
  char *cached; /* HRL_CMD_SLOTS buffers of slot_cap bytes, or NULL */
  size_t slot_cap;
  hrl_cmd_slot slot[HRL_CMD_SLOTS];
} hrl_op_spare;

/* The lock's spare buffers, allocated (zeroed) when it has none; NULL when
 * out of memory. */
hrl_op_spare *hrl_op_spare_of(hrl_lock *lock);
void hrl_op_spare_free(hrl_lock *lock);

/* The EVALSHA (or SET) form of the command of the round of that kind that
 * lock->op describes (round.c: hrl_round_start) into lock->op.cmd; returns
 * its length. */
size_t hrl_round_command(hrl_lock *lock, hrl_round_kind kind);

/* round.c: the arguments of the command of the round lock->op describes. */
hrl_command_args hrl_round_args(hrl_lock *lock);

#endif
