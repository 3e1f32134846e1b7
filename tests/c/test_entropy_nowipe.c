/* The fallback of a kernel without MADV_WIPEONFORK (Linux < 4.14): this
 * program's madvise() refuses it, as such a kernel does (EINVAL), and
 * passes every other advice on. A client then has no wipe-on-fork page:
 * no entropy pool (every token read anew) and no fork canary (getpid()
 * tells a forked child its connections are its parent's), and it still
 * works, and a forked child still never repeats a token of its parent. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/api.h"
#include "check.h"
#include "driver/driver.h"
#include "proto/random.h"

static int wipeonfork_refused;

/* Defined here, it is the one the core's calls in this program reach. */
int madvise(void *addr, size_t len, int advice) {
  if (advice == MADV_WIPEONFORK) {
    wipeonfork_refused++;
    errno = EINVAL;
    return -1;
  }
  return (int)syscall(SYS_madvise, addr, len, advice);
}

enum { DRAWS = 64 };

static void test_no_page_without_wipeonfork(void) {
  hrl_entropy_pool *pool = (hrl_entropy_pool *)&pool; /* not NULL */
  CHECK_STATUS(hrl_entropy_pool_new(&pool), HRL_OK);
  CHECK(pool == NULL);
  CHECK(wipeonfork_refused > 0); /* the kernel was asked */
  CHECK(hrl_entropy_pool_canary(pool) == NULL);
  hrl_entropy_pool_free(pool);
}

/* A client made on such a kernel: no pool, no canary; its tokens are
 * fresh, and a forked child's differ from its parent's. */
static void test_client_falls_back(void) {
  const char *url = "redis://127.0.0.1:1";
  hrl_client *c = NULL;
  char detail[HRL_DETAIL_MAX];
  CHECK_STATUS(hrl_client_new(&url, 1, NULL, &c, detail, sizeof detail),
               HRL_OK);
  if (c == NULL) {
    return;
  }
  CHECK(c->entropy == NULL);
  CHECK(c->pool.fork_canary == NULL); /* a round asks getpid() instead */
  char mine[DRAWS][HRL_TOKEN_LEN + 1];
  for (int i = 0; i < DRAWS; i++) {
    CHECK_STATUS(hrl_token_new(&c->cfg, mine[i]), HRL_OK);
  }
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    char child[DRAWS][HRL_TOKEN_LEN + 1];
    int ok = 1;
    for (int i = 0; i < DRAWS; i++) {
      ok &= hrl_token_new(&c->cfg, child[i]) == HRL_OK;
    }
    _exit(ok && write(fds[1], child, sizeof child) == (ssize_t)sizeof child
              ? 0
              : 1);
  }
  close(fds[1]);
  char child[DRAWS][HRL_TOKEN_LEN + 1];
  size_t got = read_all(fds[0], child, sizeof child);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_INT(got, sizeof child);
  size_t same = 0;
  for (int i = 0; i < DRAWS; i++) {
    for (int j = 0; j < DRAWS; j++) {
      same += strcmp(mine[i], child[j]) == 0;
      same += j > i && strcmp(mine[i], mine[j]) == 0;
    }
  }
  CHECK_INT(same, 0);
  hrl_client_free(c);
}

int main(void) {
  RUN(test_no_page_without_wipeonfork);
  RUN(test_client_falls_back);
  return finish_tests("test_entropy_nowipe");
}
