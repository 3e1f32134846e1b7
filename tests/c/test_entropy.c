/* The built-in driver's token bytes (driver/entropy.c): drawn in batches
 * per client, each byte handed out once, and a forked child never hands
 * out a byte its parent does, whenever it forks, also while the parent's
 * batch still has bytes left. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "driver/driver.h"

enum { TOKEN = 16, DRAWS = 500 }; /* 500 tokens: several batches */

typedef unsigned char token[TOKEN];

static int by_bytes(const void *a, const void *b) {
  return memcmp(a, b, TOKEN);
}

/* How many of the n tokens equal another one of them. */
static size_t repeats(token *t, size_t n) {
  qsort(t, n, sizeof *t, by_bytes);
  size_t dup = 0;
  for (size_t i = 1; i < n; i++) {
    dup += memcmp(t[i], t[i - 1], TOKEN) == 0;
  }
  return dup;
}

static void draw(hrl_entropy_pool *pool, token *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    CHECK_STATUS(hrl_pool_entropy(pool, t[i], TOKEN), HRL_OK);
  }
}

static void test_tokens_never_repeat_across_batches(void) {
  hrl_entropy_pool *pool = NULL;
  CHECK_STATUS(hrl_entropy_pool_new(&pool), HRL_OK);
  CHECK(pool != NULL); /* Linux >= 4.14: MADV_WIPEONFORK */
  token *t = calloc(DRAWS, sizeof *t);
  draw(pool, t, DRAWS);
  /* Jitter draws of 8 bytes in between shift the batch boundaries. */
  uint64_t r;
  CHECK_STATUS(hrl_pool_entropy(pool, &r, sizeof r), HRL_OK);
  CHECK_INT(repeats(t, DRAWS), 0);
  /* Not the zero bytes a handed-out (wiped) part of the pool holds. */
  static const token zero;
  CHECK(memcmp(t[0], zero, TOKEN) != 0 && memcmp(t[DRAWS - 1], zero, TOKEN));
  free(t);
  hrl_entropy_pool_free(pool);
}

/* The parent draws `before` tokens, forks; both draw DRAWS more; the
 * child's come back through a pipe. None of the child's may be one of the
 * parent's, before or after the fork. */
static void fork_after(size_t before) {
  hrl_entropy_pool *pool = NULL;
  CHECK_STATUS(hrl_entropy_pool_new(&pool), HRL_OK);
  token *parent = calloc(before + DRAWS, sizeof *parent);
  token *all = calloc(before + 2 * DRAWS, sizeof *all);
  draw(pool, parent, before);
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    token *mine = calloc(DRAWS, sizeof *mine);
    draw(pool, mine, DRAWS);
    size_t len = DRAWS * sizeof *mine;
    _exit(write(fds[1], mine, len) == (ssize_t)len && check_failures == 0 ? 0
                                                                          : 1);
  }
  close(fds[1]);
  draw(pool, parent + before, DRAWS);
  size_t want = DRAWS * sizeof(token);
  size_t got = read_all(fds[0], all + before + DRAWS, want);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_INT(got, want);
  memcpy(all, parent, (before + DRAWS) * sizeof *all);
  CHECK_INT(repeats(all, before + 2 * DRAWS), 0);
  free(parent);
  free(all);
  hrl_entropy_pool_free(pool);
}

static void test_forked_child_never_repeats_parent_tokens(void) {
  fork_after(0);  /* the pool still empty */
  fork_after(1);  /* a batch just drawn: most of it left */
  fork_after(63); /* one token left in the batch */
  fork_after(64); /* the batch used up */
}

static void test_without_a_pool_every_request_is_read(void) {
  token t[2];
  CHECK_STATUS(hrl_pool_entropy(NULL, t[0], TOKEN), HRL_OK);
  CHECK_STATUS(hrl_pool_entropy(NULL, t[1], TOKEN), HRL_OK);
  CHECK(memcmp(t[0], t[1], TOKEN) != 0);
  /* More than a pool hands out at once: read directly. */
  hrl_entropy_pool *pool = NULL;
  CHECK_STATUS(hrl_entropy_pool_new(&pool), HRL_OK);
  unsigned char big[4096];
  memset(big, 0, sizeof big);
  CHECK_STATUS(hrl_pool_entropy(pool, big, sizeof big), HRL_OK);
  size_t zeros = 0;
  for (size_t i = 0; i < sizeof big; i++) {
    zeros += big[i] == 0;
  }
  CHECK(zeros < 100); /* about 16 expected */
  hrl_entropy_pool_free(pool);
}

/* The client's fork canary lives in the pool's page: handing bytes out
 * never touches it, and a forked child finds it down (zero) like the pool
 * empty, while the parent's stays up. */
static void test_canary_shares_the_wiped_page(void) {
  hrl_entropy_pool *pool = NULL;
  CHECK_STATUS(hrl_entropy_pool_new(&pool), HRL_OK);
  volatile unsigned char *canary = hrl_entropy_pool_canary(pool);
  CHECK(canary != NULL);
  CHECK_INT(canary[0], 0); /* a new client's: not raised yet */
  canary[0] = 1;
  canary[1] = 1;
  token *t = calloc(DRAWS, sizeof *t);
  draw(pool, t, DRAWS); /* batches drawn and wiped beside it */
  CHECK_INT(canary[0], 1);
  CHECK_INT(canary[1], 1);
  pid_t pid = fork();
  if (pid == 0) {
    _exit(canary[0] == 0 && canary[1] == 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_INT(canary[0], 1);
  free(t);
  hrl_entropy_pool_free(pool);
  CHECK(hrl_entropy_pool_canary(NULL) == NULL);
}

int main(void) {
  RUN(test_tokens_never_repeat_across_batches);
  RUN(test_canary_shares_the_wiped_page);
  RUN(test_forked_child_never_repeats_parent_tokens);
  RUN(test_without_a_pool_every_request_is_read);
  return finish_tests("test_entropy");
}
