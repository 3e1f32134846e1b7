/* The README's C quick start as a program: built against the installed
 * library with pkg-config by the c-install suite, so the README stays true.
 * Usage: quickstart URL... */
#include <err.h>
#include <stdio.h>

#include <hiredlock.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    errx(2, "usage: quickstart redis://host:port ...");
  }
  hrl_client *client;
  char detail[HRL_DETAIL_MAX];
  if (hrl_client_new((const char *const *)argv + 1, (size_t)argc - 1, NULL,
                     &client, detail, sizeof detail) != HRL_OK) {
    errx(1, "%s", detail); /* bad URL, duplicate master... */
  }
  hrl_lock *lock;
  hrl_lock_new(client, "reports:nightly", 15, 30000 /* ttl ms */, &lock, NULL,
               0);
  hrl_status st = hrl_lock_acquire(lock, 5000 /* wait ms, 0 = one attempt */);
  if (st == HRL_OK) {
    printf("held for %lld ms more, token %s\n",
           (long long)hrl_lock_validity_ms(lock), hrl_lock_token(lock));
    st = hrl_lock_release(lock);
    printf("released: %s\n", hrl_strerror(st));
  } else {
    char msg[HRL_DETAIL_MAX + 64];
    fprintf(stderr, "%s\n",
            hrl_format_error(st, hrl_lock_error(lock), msg, sizeof msg));
  }
  hrl_lock_free(lock);
  hrl_client_free(client);
  return st == HRL_OK ? 0 : 1;
}
