/* The built-in driver's entropy source, given to every client made by
 * hrl_client_new (hrl_config.entropy): the kernel CSPRNG, read anew for
 * each request. No pool is kept, so a forked child can never repeat its
 * parent's tokens. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include "driver.h"

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
