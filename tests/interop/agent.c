/* A lock holder the interop tests drive over stdin/stdout, one command per
 * line, one answer per line; the C twin of agent.lua (same protocol). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hiredlock.h"
#include "hiredlock/binding.h"

/* Decodes hex text in place; returns the byte count. */
static size_t unhex(char *s) {
  size_t n = 0;
  for (size_t i = 0; s[i] != '\0' && s[i + 1] != '\0'; i += 2) {
    unsigned v = 0;
    sscanf(s + i, "%2x", &v);
    s[n++] = (char)v;
  }
  return n;
}

static void reply(hrl_status st, hrl_lock *lk, const char *ok_extra) {
  if (st == HRL_OK) {
    printf("ok%s%s\n", ok_extra ? " " : "", ok_extra ? ok_extra : "");
  } else {
    char msg[HRL_DETAIL_MAX + 64];
    printf("err %s\n",
           hrl_format_error(st, lk ? hrl_lock_error(lk) : "", msg, sizeof msg));
  }
  fflush(stdout);
}

int main(void) {
  hrl_client *client = NULL;
  hrl_lock *lock = NULL;
  char line[8192];
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    char *save = NULL;
    char *cmd = strtok_r(line, " ", &save);
    char *a = strtok_r(NULL, " ", &save);
    char *b = strtok_r(NULL, " ", &save);
    char *c = strtok_r(NULL, " ", &save);
    char *d = strtok_r(NULL, " ", &save);
    char *e = strtok_r(NULL, " ", &save);
    if (cmd == NULL) {
      continue;
    }
    if (strcmp(cmd, "new") == 0 && a != NULL && b != NULL) {
      const char *urls[HRL_MASTERS_MAX];
      size_t n = 0;
      for (char *u = strtok_r(b, ",", &save); u && n < HRL_MASTERS_MAX;
           u = strtok_r(NULL, ",", &save)) {
        urls[n++] = strdup(u);
      }
      hrl_options o;
      hrl_options_init(&o);
      /* Exclusion is tested, not a 50 ms reply under load. */
      o.timeout_ms = 500;
      if (c != NULL) { /* a patient waiter's retry_delay, in seconds */
        o.retry_delay_ms = (uint32_t)(atof(c) * 1000 + 0.5);
      }
      size_t plen = strcmp(a, "-") == 0 ? 0 : unhex(a);
      o.key_prefix = a;
      o.key_prefix_len = plen;
      char detail[HRL_DETAIL_MAX];
      hrl_status st =
          hrl_client_new(urls, n, &o, &client, detail, sizeof detail);
      for (size_t i = 0; i < n; i++) {
        free((void *)urls[i]);
      }
      if (st != HRL_OK) {
        printf("err %s\n", detail);
        fflush(stdout);
        continue;
      }
      reply(st, NULL, NULL);
    } else if (((strcmp(cmd, "acquire") == 0 || strcmp(cmd, "fenced") == 0) &&
                a && b && c) ||
               (strcmp(cmd, "lease") == 0 && a && b)) {
      hrl_lock_free(lock);
      lock = NULL;
      size_t len = unhex(a);
      hrl_lock_options lo;
      hrl_lock_options_init(client, &lo);
      lo.ttl_ms = (uint32_t)(atof(b) * 1000 + 0.5);
      lo.auto_renew = strcmp(cmd, "lease") == 0;
      char detail[HRL_DETAIL_MAX];
      lo.fenced = strcmp(cmd, "fenced") == 0;
      hrl_status st =
          hrl_lock_new_with(client, a, len, &lo, &lock, detail, sizeof detail);
      if (st == HRL_OK) {
        st = hrl_lock_acquire(lock,
                              c != NULL ? (int64_t)(atof(c) * 1000 + 0.5) : 0);
      }
      char extra[HRL_TOKEN_LEN + 32];
      if (st == HRL_OK) {
        snprintf(extra, sizeof extra, lo.fenced ? "%s %llu" : "%s",
                 hrl_lock_token(lock),
                 (unsigned long long)hrl_lock_fence(lock));
      }
      reply(st, lock, st == HRL_OK ? extra : NULL);
    } else if (strcmp(cmd, "hold") == 0 && a && b && c && d && e) {
      /* hold <mode> <permits> <name-hex> <ttl> <timeout> */
      hrl_lock_free(lock);
      lock = NULL;
      size_t len = unhex(c);
      hrl_lock_options lo;
      hrl_lock_options_init(client, &lo);
      lo.ttl_ms = (uint32_t)(atof(d) * 1000 + 0.5);
      hrl_lock_mode mode = HRL_MODE_LOCK;
      char detail[HRL_DETAIL_MAX] = "";
      hrl_status st =
          hrl_lock_mode_parse(a, strlen(a), &mode, detail, sizeof detail);
      if (st == HRL_OK) {
        st = hrl_lock_new_mode(client, c, len, &lo, mode, (uint32_t)atoi(b),
                               &lock, detail, sizeof detail);
      }
      if (st == HRL_OK) {
        st = hrl_lock_acquire(lock, (int64_t)(atof(e) * 1000 + 0.5));
      }
      char extra[HRL_TOKEN_LEN + 32];
      if (st == HRL_OK) {
        snprintf(extra, sizeof extra, "%s %u", hrl_lock_token(lock),
                 (unsigned)hrl_lock_permit(lock));
      }
      if (st != HRL_OK && lock == NULL) {
        char msg[HRL_DETAIL_MAX + 64];
        printf("err %s\n", hrl_format_error(st, detail, msg, sizeof msg));
        fflush(stdout);
        continue;
      }
      reply(st, lock, st == HRL_OK ? extra : NULL);
    } else if (strcmp(cmd, "check") == 0 && lock) {
      char reason[HRL_DETAIL_MAX];
      hrl_status st = hrl_lock_lost(lock, reason, sizeof reason);
      if (st == HRL_OK) {
        reply(st, lock, NULL);
      } else {
        char msg[HRL_DETAIL_MAX + 64];
        printf("err %s\n", hrl_format_error(st, reason, msg, sizeof msg));
        fflush(stdout);
      }
    } else if (strcmp(cmd, "release") == 0 && lock) {
      reply(hrl_lock_release(lock), lock, NULL);
    } else if (strcmp(cmd, "extend") == 0 && lock && a) {
      reply(hrl_lock_extend(lock, (uint32_t)(atof(a) * 1000 + 0.5)), lock,
            NULL);
    } else if (strcmp(cmd, "quit") == 0) {
      break;
    } else {
      printf("err unknown command %s\n", cmd);
      fflush(stdout);
    }
  }
  hrl_lock_free(lock);
  hrl_client_free(client);
  return 0;
}
