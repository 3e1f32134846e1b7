/* A minimal test harness: CHECK records a failure and carries on, so one
 * run shows every broken expectation; main() returns non-zero on any. */
#ifndef HRL_CHECK_H
#define HRL_CHECK_H

#include <stdio.h>
#include <string.h>

#include "hiredlock/binding.h"
#include "hiredlock/proto.h"

extern int check_failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

#define CHECK_INT(a, b)                                                        \
  do {                                                                         \
    long long a_ = (long long)(a), b_ = (long long)(b);                        \
    if (a_ != b_) {                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n",        \
              __FILE__, __LINE__, #a, #b, a_, b_);                             \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

#define CHECK_STR(a, b)                                                        \
  do {                                                                         \
    const char *a_ = (a), *b_ = (b);                                           \
    if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) {                     \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n",    \
              __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",                  \
              b_ ? b_ : "(null)");                                             \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

/* Status check that shows both texts on failure. */
#define CHECK_STATUS(expr, want)                                               \
  do {                                                                         \
    hrl_status got_ = (expr), want_ = (want);                                  \
    if (got_ != want_) {                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s is \"%s\", want \"%s\"\n",      \
              __FILE__, __LINE__, #expr, hrl_strerror(got_),                   \
              hrl_strerror(want_));                                            \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

#define CHECK_CONTAINS(haystack, needle)                                       \
  do {                                                                         \
    const char *h_ = (haystack), *n_ = (needle);                               \
    if (h_ == NULL || strstr(h_, n_) == NULL) {                                \
      fprintf(stderr, "%s:%d: CHECK failed: \"%s\" contains \"%s\"\n",         \
              __FILE__, __LINE__, h_ ? h_ : "(null)", n_);                     \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

/* Replies as a driver would feed them to the protocol. */
hrl_reply status_reply(const char *s);
hrl_reply error_reply(const char *s);
hrl_reply int_reply(long long v);
hrl_reply nil_reply(void);

/* Feeds master i of lk's round an OK, or an integer. */
void reply_ok(hrl_lock *lk, size_t i);
void reply_int(hrl_lock *lk, size_t i, long long v);

/* How long the calling thread has spent runnable but waiting for a CPU
 * (the run delay of /proc/thread-self/schedstat), in microseconds: what
 * the machine's load took from a span timed on this thread, on the
 * kernel's own count. A timing check allows it on top of its bound. 0
 * where the kernel does not say (the bound is then the bare one). */
int64_t check_run_delay_us(void);

/* Options with room for a loaded machine: 1 s connects, 0.5 s replies,
 * and quick retries (10 +/- 5 ms). */
hrl_options check_tolerant_options(void);

/* A client on urls with o (NULL: the defaults); a failure is checked and
 * its detail printed. */
hrl_client *check_client(const char *const *urls, size_t n,
                         const hrl_options *o);

/* A lock on name with a 30 s TTL, checked. */
hrl_lock *check_lock(hrl_client *c, const char *name);

/* Reads len bytes from fd (a forked child's pipe), fewer only at its end
 * or an error; returns how many it read. */
size_t read_all(int fd, void *buf, size_t len);

typedef void (*test_fn)(void);

/* Runs one test and prints its outcome line. */
void run_test(const char *name, test_fn fn);

/* Prints "<suite>: N tests, M failed checks" and returns the exit code. */
int finish_tests(const char *suite);

#define RUN(fn) run_test(#fn, fn)

#endif
