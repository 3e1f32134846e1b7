/* Tokens must be unguessable and unique per hold, so they come straight from
 * the kernel CSPRNG: never rand(), the time or a counter. No pool is kept,
 * so a forked child can never repeat its parent's tokens. */
#define _GNU_SOURCE
#include "random.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

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

hrl_status hrl_random_bytes(void *buf, size_t n) {
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

hrl_status hrl_token_new(char out[HRL_TOKEN_LEN + 1]) {
  static const char hex[] = "0123456789abcdef";
  unsigned char raw[HRL_TOKEN_LEN / 2];
  hrl_status st = hrl_random_bytes(raw, sizeof raw);
  if (st != HRL_OK) {
    out[0] = '\0';
    return st;
  }
  for (size_t i = 0; i < sizeof raw; i++) {
    out[2 * i] = hex[raw[i] >> 4];
    out[2 * i + 1] = hex[raw[i] & 15];
  }
  out[HRL_TOKEN_LEN] = '\0';
  return HRL_OK;
}

uint32_t hrl_random_upto(uint32_t bound) {
  if (bound == 0) {
    return 0;
  }
  uint64_t r;
  if (hrl_random_bytes(&r, sizeof r) != HRL_OK) {
    return 0;
  }
  /* 64 random bits reduced to 33 values at most: the bias is < 2^-31. */
  return (uint32_t)(r % ((uint64_t)bound + 1));
}
