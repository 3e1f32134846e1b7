/* Runs the shared launcher with popen(): the same script every suite uses,
 * with --owner so a crashed test still has its servers reaped. */

#include "fixture.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *launcher(void) {
  const char *env = getenv("HRL_FIXTURE");
  return env != NULL && env[0] != '\0' ? env : HRL_FIXTURE_SCRIPT;
}

/* Copies src into dst, cut short to fit. */
static void copy_str(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  n = n < size ? n : size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void split_list(char *list, char sep, char dst[][256], size_t width,
                       int max, int *count) {
  int k = 0;
  for (char *tok = strtok(list, (char[]){sep, '\0'}); tok && k < max;
       tok = strtok(NULL, (char[]){sep, '\0'})) {
    copy_str(dst[k], width, tok);
    k++;
  }
  *count = k;
}

void fixture_start(fixture *f, int n, const char *options) {
  memset(f, 0, sizeof *f);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s start -n %d --owner %d %s", launcher(), n,
           (int)getpid(), options != NULL ? options : "");
  const char *pw = options != NULL ? strstr(options, "--password ") : NULL;
  if (pw != NULL) {
    sscanf(pw + 11, "%63s", f->password);
  }
  FILE *p = popen(cmd, "r");
  if (p == NULL) {
    perror("popen");
    abort();
  }
  char line[8192];
  static char items[HRL_MASTERS_MAX][256];
  int count = 0;
  while (fgets(line, sizeof line, p) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    char *eq = strchr(line, '=');
    if (eq == NULL) {
      continue;
    }
    *eq = '\0';
    char *val = eq + 1;
    if (val[0] == '"') {
      val++;
      val[strcspn(val, "\"")] = '\0';
    }
    if (strcmp(line, "HRL_FIXTURE_DIR") == 0) {
      copy_str(f->dir, sizeof f->dir, val);
    } else if (strcmp(line, "HRL_FIXTURE_URLS") == 0) {
      split_list(val, ',', items, 256, HRL_MASTERS_MAX, &count);
      for (int i = 0; i < count; i++) {
        copy_str(f->url[i], sizeof f->url[i], items[i]);
        f->urls[i] = f->url[i];
      }
    } else if (strcmp(line, "HRL_FIXTURE_UNIX_URLS") == 0) {
      split_list(val, ',', items, 256, HRL_MASTERS_MAX, &count);
      for (int i = 0; i < count; i++) {
        copy_str(f->unix_url[i], sizeof f->unix_url[i], items[i]);
        f->unix_urls[i] = f->unix_url[i];
      }
    } else if (strcmp(line, "HRL_FIXTURE_PORTS") == 0) {
      split_list(val, ' ', items, 256, HRL_MASTERS_MAX, &count);
      for (int i = 0; i < count; i++) {
        f->port[i] = atoi(items[i]);
      }
    } else if (strcmp(line, "HRL_FIXTURE_N") == 0) {
      f->n = atoi(val);
    } else if (strcmp(line, "HRL_FIXTURE_TLS_URLS") == 0) {
      split_list(val, ',', items, 256, HRL_MASTERS_MAX, &count);
      for (int i = 0; i < count; i++) {
        copy_str(f->tls_url[i], sizeof f->tls_url[i], items[i]);
        f->tls_urls[i] = f->tls_url[i];
      }
    } else if (strcmp(line, "HRL_FIXTURE_TLS_PORTS") == 0) {
      split_list(val, ' ', items, 256, HRL_MASTERS_MAX, &count);
      for (int i = 0; i < count; i++) {
        f->tls_port[i] = atoi(items[i]);
      }
    } else if (strcmp(line, "HRL_FIXTURE_TLS_DIR") == 0) {
      copy_str(f->tls_dir, sizeof f->tls_dir, val);
    } else if (strcmp(line, "HRL_FIXTURE_CLUSTER_URL") == 0) {
      copy_str(f->cluster_url, sizeof f->cluster_url, val);
    } else if (strcmp(line, "HRL_FIXTURE_SENTINEL_URL") == 0) {
      copy_str(f->sentinel_url, sizeof f->sentinel_url, val);
    } else if (strcmp(line, "HRL_FIXTURE_SENTINEL_PORTS") == 0) {
      split_list(val, ' ', items, 256, HRL_MASTERS_MAX, &count);
      for (int i = 0; i < count; i++) {
        f->sentinel_port[i] = atoi(items[i]);
      }
      f->sentinels = count;
    } else if (strcmp(line, "HRL_FIXTURE_REPLICA_URLS") == 0) {
      split_list(val, ',', f->replica_url, 256, HRL_MASTERS_MAX, &count);
      for (int i = 0; i < count; i++) {
        f->replica_urls[i] = f->replica_url[i];
      }
      f->replicas = count;
    }
  }
  int rc = pclose(p);
  if (rc != 0 || f->dir[0] == '\0' || f->n != n || f->urls[n - 1] == NULL) {
    fprintf(stderr, "fixture: `%s` failed (status %d)\n", cmd, rc);
    abort();
  }
}

void fixture_forget(fixture *f) {
  for (int i = 0; i < f->n; i++) {
    if (f->inspect[i] != NULL) {
      redisFree(f->inspect[i]);
      f->inspect[i] = NULL;
    }
  }
}

void fixture_stop(fixture *f) {
  fixture_forget(f);
  if (f->dir[0] == '\0') {
    return;
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s stop %s", launcher(), f->dir);
  f->dir[0] = '\0';
  if (system(cmd) != 0) {
    /* Everything is stopped; the launcher said what went wrong before
     * (a delayed restart that failed): the test must not pass. */
    fprintf(stderr, "fixture: `%s` failed\n", cmd);
    abort();
  }
}

bool fixture_ctl(fixture *f, const char *verb, int node, const char *extra) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s %s %s %d %s", launcher(), verb, f->dir, node,
           extra != NULL ? extra : "");
  if (f->inspect[node - 1] != NULL) {
    redisFree(f->inspect[node - 1]);
    f->inspect[node - 1] = NULL;
  }
  int rc = system(cmd);
  if (rc != 0) {
    /* A node left in an unknown state (or another server on its port, as
     * the launcher's message above says) leaves nothing to test: carrying
     * on would count it as a fault and test that server instead. */
    fprintf(stderr, "fixture: `%s` failed (status %d): %s of node %d failed\n",
            cmd, rc, verb, node);
    abort();
  }
  return true;
}

bool fixture_run(fixture *f, const char *verb, const char *args, char *out,
                 size_t size) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s %s %s", launcher(), verb, f->dir,
           args != NULL ? args : "");
  FILE *p = popen(cmd, "r");
  if (p == NULL) {
    perror("popen");
    return false;
  }
  char line[1024] = "";
  if (fgets(line, sizeof line, p) == NULL) {
    line[0] = '\0';
  }
  while (fgetc(p) != EOF) {
  }
  int rc = pclose(p);
  line[strcspn(line, "\n")] = '\0';
  if (out != NULL && size > 0) {
    copy_str(out, size, line);
  }
  if (rc != 0) {
    fprintf(stderr, "fixture: `%s` failed (status %d)\n", cmd, rc);
  }
  return rc == 0;
}

bool fixture_cli(fixture *f, const char *node, const char *args, char *out,
                 size_t size) {
  char words[512];
  snprintf(words, sizeof words, "%s %s", node, args);
  return fixture_run(f, "cli", words, out, size);
}

const char *fixture_tls_file(const fixture *f, const char *name) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", f->tls_dir, name);
  return path;
}

static redisContext *inspector(fixture *f, int node) {
  redisContext **slot = &f->inspect[node - 1];
  if (*slot != NULL && (*slot)->err == 0) {
    return *slot;
  }
  if (*slot != NULL) {
    redisFree(*slot);
  }
  char path[256];
  snprintf(path, sizeof path, "%s", f->unix_url[node - 1] + strlen("unix://"));
  struct timeval tv = {1, 0};
  *slot = redisConnectUnixWithTimeout(path, tv);
  if (*slot == NULL || (*slot)->err != 0) {
    if (*slot != NULL) {
      redisFree(*slot);
    }
    *slot = NULL;
    return NULL;
  }
  redisSetTimeout(*slot, tv);
  if (f->password[0] != '\0') {
    redisReply *r = redisCommand(*slot, "AUTH %s", f->password);
    freeReplyObject(r);
  }
  return *slot;
}

static redisReply *vcmd(fixture *f, int node, const char *fmt, va_list ap) {
  redisContext *c = inspector(f, node);
  if (c == NULL) {
    return NULL;
  }
  redisReply *r = redisvCommand(c, fmt, ap);
  if (r == NULL) {
    redisFree(c);
    f->inspect[node - 1] = NULL;
  }
  return r;
}

redisReply *fixture_cmd(fixture *f, int node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = vcmd(f, node, fmt, ap);
  va_end(ap);
  return r;
}

long long fixture_int(fixture *f, int node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  redisReply *r = vcmd(f, node, fmt, ap);
  va_end(ap);
  long long v = r != NULL && r->type == REDIS_REPLY_INTEGER ? r->integer : -999;
  freeReplyObject(r);
  return v;
}

void fixture_get(fixture *f, int node, const void *key, size_t len, char *out,
                 size_t size) {
  redisReply *r = fixture_cmd(f, node, "GET %b", key, len);
  snprintf(out, size, "%s",
           r != NULL && r->type == REDIS_REPLY_STRING ? r->str : "");
  freeReplyObject(r);
}

int fixture_count_key(fixture *f, const void *key, size_t len) {
  int count = 0;
  for (int i = 1; i <= f->n; i++) {
    count += fixture_int(f, i, "EXISTS %b", key, len) == 1;
  }
  return count;
}

hrl_client *fixture_client(fixture *f, const hrl_options *opts) {
  hrl_client *c = NULL;
  char detail[HRL_DETAIL_MAX];
  if (hrl_client_new(f->urls, (size_t)f->n, opts, &c, detail, sizeof detail) !=
      HRL_OK) {
    fprintf(stderr, "fixture_client: %s\n", detail);
    abort();
  }
  return c;
}
