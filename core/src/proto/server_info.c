/*
 * Who is behind a master: the INFO server a new connection's handshake
 * asks (docs/DESIGN.md, section 3) when the client has several masters or
 * a restart_guard. Its run_id tells two masters that are one server under
 * two names (refused: that server would carry two votes, and the one
 * failure N masters promise to survive would take the quorum with it),
 * and with its uptime a server that restarted: one up for less than
 * restart_guard gives no vote, since it may have forgotten locks it
 * granted before (the delayed restart Redlock asks operators for, done by
 * the client). An ACL user without INFO: the check of one server under two
 * names falls back to the URLs (config.c); a restart_guard cannot be kept
 * without it, and the master is refused, saying so.
 */
#include <stdlib.h>
#include <string.h>

#include "detail.h"
#include "reply.h"
#include "state.h"

/* The value of "name:value" on a line of INFO's text, into out (size
 * bytes, terminated); false when the field is missing or too long. */
static bool info_field(const hrl_reply *r, const char *name, char *out,
                       size_t size) {
  size_t n = strlen(name);
  const char *p = r->str, *end = r->str + r->len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *line_end = eol != NULL ? eol : end;
    if (line_end > p && line_end[-1] == '\r') {
      line_end--;
    }
    if ((size_t)(line_end - p) > n && memcmp(p, name, n) == 0 && p[n] == ':') {
      size_t len = (size_t)(line_end - p) - n - 1;
      if (len + 1 > size) {
        return false;
      }
      memcpy(out, p + n + 1, len);
      out[len] = '\0';
      return true;
    }
    p = eol != NULL ? eol + 1 : end;
  }
  return false;
}

/* INFO refused (an ACL user without +info, a server that renamed it). */
static hrl_node_result info_refused(const hrl_config *cfg, const hrl_reply *r,
                                    char *msg, size_t size) {
  if (cfg->opts.restart_guard_ms == 0) {
    return HRL_NODE_OK; /* the URLs were compared: all we can do */
  }
  char text[HRL_NODE_MSG_MAX];
  hrl_detail_copy_text(text, sizeof text, r->str, r->len);
  hrl_detailf(msg, size, "restart_guard needs INFO: %s", text);
  return hrl_reply_is_error(r, "NOPERM") ? HRL_NODE_AUTH : HRL_NODE_SERVER;
}

/* Whether master i is the server of another master j (the same run_id):
 * then cfg->same_server says which, for every later acquire and extend. */
static bool same_server(hrl_config *cfg, size_t i, const char *run_id,
                        char *msg, size_t size) {
  for (size_t j = 0; j < cfg->n; j++) {
    if (j == i || strcmp(cfg->masters[j].run_id, run_id) != 0) {
      continue;
    }
    const char *a = cfg->masters[j < i ? j : i].ep.label;
    const char *b = cfg->masters[j < i ? i : j].ep.label;
    hrl_detailf(cfg->same_server, sizeof cfg->same_server,
                "masters %s and %s are one server (run_id %.12s...): "
                "Redlock needs independent masters",
                a, b, run_id);
    hrl_detailf(msg, size, "the same server as %s (run_id %.12s...)",
                cfg->masters[j].ep.label, run_id);
    return true;
  }
  return false;
}

hrl_node_result hrl_server_info(hrl_config *cfg, size_t i, const hrl_reply *r,
                                char *msg, size_t size) {
  hrl_master_cfg *m = &cfg->masters[i];
  if (r->type == HRL_REPLY_ERROR) {
    return info_refused(cfg, r, msg, size);
  }
  if (r->type != HRL_REPLY_STRING) {
    hrl_detailf(msg, size, "unexpected reply to INFO");
    return HRL_NODE_PROTOCOL;
  }
  char run_id[HRL_RUN_ID_LEN + 2], uptime[24];
  bool changed = false;
  if (info_field(r, "run_id", run_id, sizeof run_id) &&
      strlen(run_id) == HRL_RUN_ID_LEN) {
    if (same_server(cfg, i, run_id, msg, size)) {
      return HRL_NODE_SERVER;
    }
    /* A cluster's or a Sentinel's master moves between servers: a new
     * run_id there is another server, not a restart. */
    changed = m->run_id[0] != '\0' && strcmp(m->run_id, run_id) != 0 &&
              m->cluster == NULL && m->sentinel == NULL;
    memcpy(m->run_id, run_id, HRL_RUN_ID_LEN + 1);
  }
  uint32_t guard_ms = cfg->opts.restart_guard_ms;
  if (guard_ms == 0) {
    return HRL_NODE_OK;
  }
  char *end = NULL;
  long long up = -1;
  if (info_field(r, "uptime_in_seconds", uptime, sizeof uptime)) {
    up = strtoll(uptime, &end, 10);
  }
  if (up < 0 || end == NULL || *end != '\0') {
    hrl_detailf(msg, size, "restart_guard needs INFO's uptime_in_seconds");
    return HRL_NODE_PROTOCOL;
  }
  if (up * 1000 >= (long long)guard_ms) {
    return HRL_NODE_OK;
  }
  hrl_detailf(msg, size, "%s %lld s ago%s, under restart_guard (%g s): no vote",
              changed ? "restarted" : "started", up,
              changed ? " (new run_id)" : "", guard_ms / 1000.0);
  return HRL_NODE_SERVER;
}
