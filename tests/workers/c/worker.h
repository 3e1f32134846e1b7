/* The C worker (tests/workers/README.md): one long-lived process driven
 * over the line protocol by the benchmark and the reliability cases. This
 * header ties its parts together: worker.c (the command loop and the
 * hiredlock cycles), floor.c (the raw hiredis floor) and cancel.c
 * (reliability case 7). */
#ifndef HRL_WORKER_H
#define HRL_WORKER_H

#include <hiredis/hiredis.h>
#include <stdbool.h>

#include "hiredlock.h"

#define MASTERS_MAX 7
#define TTL_MS 30000

/* Writes one answer line and flushes it (the reader waits for it). */
void answer(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Exits with a message on stderr: the harness sees the worker gone. */
void die(const char *what) __attribute__((noreturn));

/* The value of option key in a command line of key=value words, copied
 * into out; false when it is absent. */
bool option(const char *line, const char *key, char *out, size_t size);

/* floor.c: the raw round trips every lock cycle needs, nothing else. */
void floor_init(void);
void floor_free(void);
redisContext *floor_connect(const char *url);
/* One floor cycle on n connections; returns the SET's latency (us). */
double floor_cycle(redisContext **c, int n);
/* raw-exact: the same loop with hiredlock's own N = 1 commands, on a
 * connection of its own with the queue script loaded. */
redisContext *exact_connect(const char *url);
double exact_cycle(redisContext *c);

/* cancel.c: "client" sets the options the cancel command's client uses;
 * "cancel" runs acquires stopped early, by deadline or cancel callback. */
void client_command(hrl_options *o, const char *line);
void cancel_command(const char *const *urls, size_t n_urls,
                    const hrl_options *o, const char *line);

#endif
