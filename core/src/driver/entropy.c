/* The built-in driver's entropy: the kernel CSPRNG (getrandom(), else
 * /dev/urandom), given to every client made by hrl_client_new
 * (hrl_config.entropy), in batches: a client draws ENTROPY_BATCH bytes at a
 * time into a pool of its own and hands each byte out once, so that most
 * tokens cost no system call. The pool lives in a page the kernel wipes in
 * a forked child (MADV_WIPEONFORK): the child finds it empty and draws its
 * own batch, and can never repeat a byte its parent hands out. The same
 * page holds the client's fork canary (conn.c, renewer.c): one mapping and
 * one madvise() per client serve both, instead of a page each. A kernel
 * without MADV_WIPEONFORK (Linux < 4.14) gets no page: no pool (every
 * request is read anew, as it was before batches) and no canary (getpid()
 * tells a child instead). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "driver.h"

#define ENTROPY_PAGE 4096
/* 64 tokens of 16 bytes a batch. */
#define ENTROPY_BATCH 1024

/* The client's wipe-on-fork page: the fork canary, then the pool. All zero
 * in a forked child: canary down, pool not busy, no bytes left. */
struct hrl_entropy_pool {
  /* The fork canary's bytes (hrl_entropy_pool_canary), in a cache line of
   * their own: a round reads them, other threads take the pool's lock. */
  _Alignas(64) unsigned char canary[64];
  /* A spin lock (several threads may take locks on one client): held only
   * while bytes are copied out or a batch drawn. */
  atomic_uint busy;
  /* Bytes not handed out yet, the last ones of bytes[]. */
  uint32_t left;
  unsigned char bytes[ENTROPY_BATCH];
};

_Static_assert(sizeof(hrl_entropy_pool) <= ENTROPY_PAGE,
               "the canary and the entropy pool fit their page");

static hrl_status read_urandom(unsigned char *buf, size_t n) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return HRL_ESYSTEM;
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) {
      continue;
    }
    if (r <= 0) {
      close(fd);
      return HRL_ESYSTEM;
    }
    got += (size_t)r;
  }
  close(fd);
  return HRL_OK;
}

hrl_status hrl_os_entropy(void *ctx, void *buf, size_t n) {
  (void)ctx;
  unsigned char *p = buf;
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(p + got, n - got, 0);
    if (r < 0 && errno == EINTR) {
      continue;
    }
    if (r < 0) {
      /* ENOSYS (old kernel) or a seccomp filter: use the device instead. */
      return read_urandom(p, n);
    }
    got += (size_t)r;
  }
  return HRL_OK;
}

hrl_status hrl_entropy_pool_new(hrl_entropy_pool **out) {
  *out = NULL;
#ifdef MADV_WIPEONFORK
  void *p = mmap(NULL, ENTROPY_PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return HRL_ENOMEM;
  }
  if (madvise(p, ENTROPY_PAGE, MADV_WIPEONFORK) != 0) {
    /* Linux < 4.14: no pool (a read per request), no canary (getpid()) */
    munmap(p, ENTROPY_PAGE);
    return HRL_OK;
  }
  *out = p; /* zero-filled: canary down, not busy, empty */
#endif
  return HRL_OK;
}

void hrl_entropy_pool_free(hrl_entropy_pool *pool) {
  if (pool != NULL) {
    munmap(pool, ENTROPY_PAGE); /* the bytes left go with the page */
  }
}

volatile unsigned char *hrl_entropy_pool_canary(hrl_entropy_pool *pool) {
  return pool != NULL ? pool->canary : NULL;
}

hrl_status hrl_pool_entropy(void *ctx, void *buf, size_t n) {
  hrl_entropy_pool *pool = ctx;
  if (pool == NULL || n > ENTROPY_BATCH / 4) {
    return hrl_os_entropy(NULL, buf, n);
  }
  while (atomic_exchange_explicit(&pool->busy, 1, memory_order_acquire)) {
    sched_yield();
  }
  hrl_status st = HRL_OK;
  if (pool->left < n) {
    /* The few bytes left are dropped (wiped by the draw), never used. */
    pool->left = 0;
    st = hrl_os_entropy(NULL, pool->bytes, ENTROPY_BATCH);
    if (st == HRL_OK) {
      pool->left = ENTROPY_BATCH;
    }
  }
  if (st == HRL_OK) {
    unsigned char *from = pool->bytes + (ENTROPY_BATCH - pool->left);
    memcpy(buf, from, n);
    /* Handed out: gone from the pool, so no later reader (a core dump
     * included) finds a token that was used. */
    memset(from, 0, n);
    pool->left -= (uint32_t)n;
  }
  atomic_store_explicit(&pool->busy, 0, memory_order_release);
  return st;
}
