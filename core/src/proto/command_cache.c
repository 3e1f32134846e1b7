/* A lock's commands kept as bytes, with only the token written in per
 * round (command_cache.h). */
#include "command_cache.h"

#include <stdlib.h>
#include <string.h>

#include "sibling_key.h"

hrl_op_spare *hrl_op_spare_of(hrl_lock *lk) {
  if (lk->op.spare == NULL) {
    lk->op.spare = calloc(1, sizeof *lk->op.spare);
  }
  return lk->op.spare;
}

void hrl_op_spare_free(hrl_lock *lk) {
  hrl_op_spare *sp = lk->op.spare;
  if (sp == NULL) {
    return;
  }
  for (size_t i = 0; sp->own != NULL && i < lk->cfg->n; i++) {
    free(sp->own[i]); /* target.c's per-master WAITs */
  }
  free(sp->own);
  free(sp->cached);
  free(sp);
  lk->op.spare = NULL;
}

/* The slot of a round's kind; -1: not kept (a waiter's rounds carry its
 * arrival and the fence round its fence, which change every time). */
static int slot_of(hrl_round_kind kind) {
  switch (kind) {
  case HRL_ROUND_SET:
  case HRL_ROUND_FENCED_ACQUIRE:
    return 0;
  case HRL_ROUND_RELEASE:
    return 1;
  case HRL_ROUND_EXTEND:
    return 2;
  default:
    return -1;
  }
}

/* Formats the round's command into slot s: twice, with two tokens that
 * differ in every byte, so that the token is wherever the two differ (resp.c
 * decides where it goes, not this file), and the bytes are kept only when
 * they differ there and nowhere else. False when they cannot be kept. */
static bool keep(hrl_lock *lk, int s, hrl_round_kind kind, uint64_t number) {
  hrl_op_spare *sp = hrl_op_spare_of(lk);
  if (sp == NULL) {
    return false;
  }
  if (sp->cached == NULL) {
    /* Room for the longest of the three: a fenced acquire's SET and INCR,
     * or the release's three keys. */
    size_t cap = hrl_resp_command_capacity(
        lk->key_len, HRL_SIBLING_KEY_MAX(lk->key_len, HRL_SIBLING_SUFFIX_MAX),
        0, false);
    if ((sp->cached = malloc(HRL_CMD_SLOTS * cap)) == NULL) {
      return false;
    }
    sp->slot_cap = cap;
  }
  hrl_cmd_slot *slot = &sp->slot[s];
  char *bytes = sp->cached + (size_t)s * sp->slot_cap;
  char zeros[HRL_TOKEN_LEN], ones[HRL_TOKEN_LEN];
  memset(zeros, '0', sizeof zeros);
  memset(ones, '1', sizeof ones);
  hrl_command_args a = hrl_round_args(lk);
  a.token = zeros;
  size_t len = hrl_resp_command(bytes, kind, true, &a);
  /* op->cmd as the scratch buffer: the round's command goes there next */
  a.token = ones;
  size_t check = hrl_resp_command(lk->op.cmd, kind, true, &a);
  size_t at = 0;
  while (at < len && at < check && bytes[at] == lk->op.cmd[at]) {
    at++;
  }
  slot->len = 0;
  if (len != check || len > UINT32_MAX || at + HRL_TOKEN_LEN > len ||
      memcmp(bytes + at + HRL_TOKEN_LEN, lk->op.cmd + at + HRL_TOKEN_LEN,
             len - at - HRL_TOKEN_LEN) != 0) {
    return false;
  }
  for (size_t k = 0; k < HRL_TOKEN_LEN; k++) {
    if (bytes[at + k] != '0' || lk->op.cmd[at + k] != '1') {
      return false;
    }
  }
  slot->len = (uint32_t)len;
  slot->token_at = (uint32_t)at;
  slot->number = number;
  slot->kind = kind;
  return true;
}

size_t hrl_round_command(hrl_lock *lk, hrl_round_kind kind) {
  hrl_op *op = &lk->op;
  /* A read-write lock's or semaphore's commands name a permit that may
   * change between rounds (hold.c): formatted every time. */
  int s = lk->mode == HRL_MODE_LOCK ? slot_of(kind) : -1;
  if (s >= 0) {
    uint64_t number = kind == HRL_ROUND_RELEASE ? 0 : op->ttl_ms;
    const hrl_op_spare *sp = op->spare;
    const hrl_cmd_slot *slot = sp != NULL ? &sp->slot[s] : NULL;
    bool kept = slot != NULL && slot->len > 0 && slot->kind == kind &&
                slot->number == number;
    uint8_t bit = (uint8_t)(1u << s);
    if (!kept && (op->cmd_seen & bit) != 0) {
      kept = keep(lk, s, kind, number);
      slot = kept ? &op->spare->slot[s] : NULL;
    }
    op->cmd_seen |= bit;
    if (kept) {
      sp = op->spare; /* keep() may have made it */
      memcpy(op->cmd, sp->cached + (size_t)s * sp->slot_cap, slot->len);
      memcpy(op->cmd + slot->token_at, op->token, HRL_TOKEN_LEN);
      return slot->len;
    }
  }
  hrl_command_args a = hrl_round_args(lk);
  return hrl_resp_command(op->cmd, kind, true, &a);
}
