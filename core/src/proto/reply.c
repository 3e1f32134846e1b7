/* Reply meanings, one table for every transport:
 *   acquire  +OK -> ok          nil -> refused (someone holds the name)
 *   release  :1 + 2h + 4d -> ok (h: handed on to a waiter; d: gone waiters
 *                                skipped)
 *            :0  -> refused (the key is not ours)
 *   extend   :1  -> ok          :0  -> refused (the key is not ours)
 *   fence    :1  -> ok          :0  -> refused (the key is not ours, or the
 *            counter is above the fence)
 *   try      +OK -> ok (held)   :n  -> refused, the key's PTTL is n ms
 *   aside    :n  -> ok (it ran; its answer decides nothing)
 *   fenced acquire / fenced try: the SET's (try's) reply as above, then
 *            the INCR's: :<counter> (1 to 2^63 - 1) -> ok with that counter
 *            when the first said OK; an error -> its meaning (after a first
 *            command that took)
 *   a WAIT behind the write (sync_replicas): :n -> ok when n >= the
 *            replicas asked for, else a failure of the vote ("0 of 1
 *            replicas acknowledged") although the write took; WAITAOF
 *            (sync_aof): [local, replicas], local >= 1 too; an error ->
 *            its meaning ("unknown command": this server lacks WAITAOF)
 *   scripts  -NOSCRIPT -> send again with EVAL
 *            -WRONGTYPE -> refused (the key exists and is not a lock of ours)
 *   any      -NOAUTH / -WRONGPASS -> auth; -NOPERM -> denied, and so is a
 *            script's command the ACL user may not run (Redis 7.0 says "ERR
 *            The user executing the script can't run this command ...");
 *            other errors -> server
 *            anything else -> protocol error
 */
#include "reply.h"

#include <string.h>

#include "detail.h"

static bool has_prefix(const hrl_reply *r, const char *prefix) {
  size_t n = strlen(prefix);
  return r->len >= n && memcmp(r->str, prefix, n) == 0 &&
         (r->len == n || r->str[n] == ' ');
}

bool hrl_reply_is_error(const hrl_reply *r, const char *code) {
  return r->type == HRL_REPLY_ERROR && has_prefix(r, code);
}

/* Whether the text of r contains word. */
static bool contains(const hrl_reply *r, const char *word) {
  size_t n = strlen(word);
  for (size_t i = 0; i + n <= r->len; i++) {
    if (memcmp(r->str + i, word, n) == 0) {
      return true;
    }
  }
  return false;
}

static hrl_node_result classify_error(const hrl_reply *r, char *message,
                                      size_t size) {
  hrl_detail_copy_text(message, size, r->str, r->len);
  if (has_prefix(r, "NOAUTH") || has_prefix(r, "WRONGPASS")) {
    return HRL_NODE_AUTH;
  }
  if (has_prefix(r, "NOPERM") ||
      (has_prefix(r, "ERR") && contains(r, "can't run this command"))) {
    return HRL_NODE_DENIED; /* a lasting refusal, but not of the password */
  }
  return HRL_NODE_SERVER;
}

static hrl_node_result unexpected(const char *what, char *message,
                                  size_t size) {
  hrl_detailf(message, size, "unexpected reply to %s", what);
  return HRL_NODE_PROTOCOL;
}

hrl_node_result hrl_reply_counter(hrl_node_result set, const hrl_reply *r,
                                  uint64_t *counter, char *message,
                                  size_t size) {
  if (r->type == HRL_REPLY_INTEGER && r->integer >= 1) {
    *counter = (uint64_t)r->integer;
    return set;
  }
  if (set != HRL_NODE_OK) {
    return set; /* the SET said no (or failed): the INCR changes nothing */
  }
  if (r->type == HRL_REPLY_ERROR) {
    return classify_error(r, message, size);
  }
  return unexpected("INCR", message, size);
}

/* A WAITAOF reply: [local fsyncs, replica fsyncs], two integers. */
static bool waitaof_counts(const hrl_reply *r, long long *local,
                           long long *replicas) {
  if (r->type != HRL_REPLY_ARRAY || r->elements != 2 ||
      r->element[0].type != HRL_REPLY_INTEGER ||
      r->element[1].type != HRL_REPLY_INTEGER) {
    return false;
  }
  *local = r->element[0].integer;
  *replicas = r->element[1].integer;
  return true;
}

hrl_node_result hrl_reply_wait(hrl_node_result set, const hrl_reply *r,
                               uint32_t want, bool aof, bool *unacked,
                               char *message, size_t size) {
  *unacked = false;
  if (set != HRL_NODE_OK) {
    return set; /* the write did not take: what replicas have is moot */
  }
  long long local = 1, got = -1;
  if (!aof && r->type == HRL_REPLY_INTEGER) {
    got = r->integer;
  } else if (aof && waitaof_counts(r, &local, &got)) {
    if (local < 1) {
      *unacked = true;
      hrl_detailf(message, size, "not fsynced to the AOF in time (WAITAOF)");
      return HRL_NODE_SERVER;
    }
  } else if (r->type == HRL_REPLY_ERROR) {
    if (aof && contains(r, "unknown command")) {
      hrl_detailf(message, size,
                  "sync_aof needs WAITAOF (Redis >= 7.2, Valkey >= 8), "
                  "which this server lacks");
      return HRL_NODE_SERVER;
    }
    return classify_error(r, message, size);
  } else {
    return unexpected(aof ? "WAITAOF" : "WAIT", message, size);
  }
  if (got >= (long long)want) {
    return HRL_NODE_OK;
  }
  *unacked = true;
  hrl_detailf(message, size, "%lld of %u replicas acknowledged%s", got,
              (unsigned)want, aof ? " (WAITAOF)" : "");
  return HRL_NODE_SERVER;
}

static bool is_ok(const hrl_reply *r) {
  return r->type == HRL_REPLY_STATUS && r->len == 2 &&
         memcmp(r->str, "OK", 2) == 0;
}

/* What a script's reply of the expected type means, or PENDING. */
static hrl_node_result script_answer(hrl_round_kind kind, const hrl_reply *r,
                                     int64_t *pttl) {
  bool integer = r->type == HRL_REPLY_INTEGER;
  switch (kind) {
  case HRL_ROUND_TRY:
  case HRL_ROUND_FENCED_TRY:
    if (is_ok(r)) {
      return HRL_NODE_OK;
    }
    if (integer && r->integer >= -2) {
      *pttl = r->integer; /* -1: no TTL, -2: gone meanwhile */
      return HRL_NODE_REFUSED;
    }
    return HRL_NODE_PENDING;
  case HRL_ROUND_ASIDE:
    return integer ? HRL_NODE_OK : HRL_NODE_PENDING;
  case HRL_ROUND_RELEASE:
    /* The queue script's release: 1 + 2 (it handed the key on) + 4 x the
     * gone waiters it skipped, 0 when the key was not ours. */
    if (integer && r->integer >= 0) {
      return (r->integer & 1) ? HRL_NODE_OK : HRL_NODE_REFUSED;
    }
    return HRL_NODE_PENDING;
  default:
    if (integer && (r->integer == 0 || r->integer == 1)) {
      return r->integer == 1 ? HRL_NODE_OK : HRL_NODE_REFUSED;
    }
    return HRL_NODE_PENDING;
  }
}

static const char *script_name(hrl_round_kind kind) {
  switch (kind) {
  case HRL_ROUND_EXTEND:
    return "the extend script";
  case HRL_ROUND_FENCE:
    return "the fence script";
  case HRL_ROUND_TRY:
  case HRL_ROUND_FENCED_TRY:
  case HRL_ROUND_ASIDE:
    return "the queue script";
  default:
    return "the release script";
  }
}

hrl_node_result hrl_reply_classify(hrl_round_kind kind, const hrl_reply *r,
                                   bool *noscript, int64_t *pttl, char *message,
                                   size_t size) {
  *noscript = false;
  if (kind == HRL_ROUND_SET || kind == HRL_ROUND_FENCED_ACQUIRE) {
    if (is_ok(r)) {
      return HRL_NODE_OK;
    }
    if (r->type == HRL_REPLY_NIL) {
      return HRL_NODE_REFUSED;
    }
    if (r->type == HRL_REPLY_ERROR) {
      return classify_error(r, message, size);
    }
    return unexpected("SET", message, size);
  }
  hrl_node_result answer = script_answer(kind, r, pttl);
  if (answer != HRL_NODE_PENDING) {
    return answer;
  }
  if (r->type == HRL_REPLY_ERROR) {
    if (has_prefix(r, "NOSCRIPT")) {
      *noscript = true;
      return HRL_NODE_RESEND;
    }
    if (has_prefix(r, "WRONGTYPE")) {
      hrl_detail_copy_text(message, size, r->str, r->len);
      return HRL_NODE_REFUSED;
    }
    return classify_error(r, message, size);
  }
  return unexpected(script_name(kind), message, size);
}

hrl_node_result hrl_reply_classify_handshake(bool is_auth, const hrl_reply *r,
                                             char *message, size_t size) {
  if (r->type == HRL_REPLY_STATUS && r->len == 2 &&
      memcmp(r->str, "OK", 2) == 0) {
    return HRL_NODE_OK;
  }
  if (r->type != HRL_REPLY_ERROR) {
    return unexpected(is_auth ? "AUTH" : "SELECT", message, size);
  }
  /* Any AUTH refusal ("WRONGPASS ...", "ERR AUTH <password> called without
   * any password configured") is an authentication failure; a SELECT
   * refusal ("ERR DB index is out of range") is a server error, unless it
   * is NOAUTH, or NOPERM (said to be SELECT's: the round's command, which
   * a permission refusal's detail names otherwise, was never sent). */
  hrl_node_result r2 = classify_error(r, message, size);
  if (is_auth) {
    return HRL_NODE_AUTH;
  }
  if (r2 == HRL_NODE_DENIED) {
    char text[HRL_DETAIL_MAX];
    hrl_detail_copy_text(text, sizeof text, r->str, r->len);
    hrl_detailf(message, size, "%s %s", HRL_SELECT_REFUSED, text);
  }
  return r2;
}
