/* Bad inputs, C: the one table of every bad input the C API is checked
 * against, and how it is run. Two consumers:
 *   tests/c/test_bad_inputs.c       (ctest) every row that needs no server
 *                                   or one healthy master
 *   tests/reliability/c/bad_inputs.c  every row, the BAD_ENV ones against
 *                                   the misbehaving servers of
 *                                   tests/reliability/hrlrel/badenv.py,
 *                                   written as JSON for docs/RELIABILITY.md
 * The rows call the public API only (hiredlock.h). C has no wrong types, so
 * its rows add NULL pointers, out-of-range indexes and enums. Rows read
 * their servers from HRL_BAD_OK, HRL_BAD_OK_SOCK, HRL_BAD_DUP and, for
 * BAD_ENV rows, the other HRL_BAD_* variables. */
#ifndef HRL_BAD_INPUTS_H
#define HRL_BAD_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hiredlock/binding.h"
#include "hiredlock/proto.h"

/* What a row needs, in that order. */
typedef enum bad_need { BAD_NONE, BAD_OK, BAD_ENV } bad_need;

/* want = BAD_VALUE: the row returns a value (text) containing frag. */
#define BAD_VALUE HRL_STATUS_COUNT_

typedef struct bad_outcome {
  hrl_status status;
  bool is_value; /* text is a returned value, not a detail */
  char text[HRL_DETAIL_MAX + 64];
} bad_outcome;

typedef struct bad_row {
  const char *category, *input;
  bad_outcome (*fn)(void);
  hrl_status want;  /* or BAD_VALUE */
  const char *frag; /* in the message (or the value) */
  bad_need need;
} bad_row;

/* The table, in three parts: arguments (bad_inputs_args.c), states,
 * servers and networks (bad_inputs_state.c), and TLS, cluster and sentinel
 * options and URLs (bad_inputs_deploy.c). */
extern const bad_row bad_rows_args[], bad_rows_state[], bad_rows_deploy[];
extern const size_t bad_rows_args_count, bad_rows_state_count,
    bad_rows_deploy_count;

/* Helpers for the rows (bad_inputs_run.c). */
const char *bad_env(const char *name);
const char *bad_ok_url(void); /* HRL_BAD_OK, the healthy master */
bad_outcome bad_status(hrl_status s, const char *detail);
bad_outcome bad_value(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
hrl_options bad_fast(void);
hrl_client *bad_client_on(const char *url);
/* Runs op on a fresh lock of name on url (TTL 5 s), after pre steps that
 * acquire and release in turn; the outcome is op's status and message. */
bad_outcome bad_on_lock(const char *url, const char *name, int pre,
                        hrl_status (*op)(hrl_lock *));
/* An inspection connection to the healthy master (its unix socket); a
 * redisContext *, kept opaque so that rows need no hiredis header. */
void *bad_inspect(void);
/* Runs a command with one key argument on it and frees the reply. */
void bad_inspect_cmd(void *r, const char *fmt, const char *key);
/* EXISTS of a binary key on it; -1 when there is no reply. */
long long bad_inspect_exists(void *r, const void *key, size_t len);
void bad_inspect_free(void *r);

/* Runs every row whose need is at most max_need; prints a line per row not
 * as expected and one summary line ("bad inputs (c): N of M as expected");
 * writes the outcomes as JSON to json when it is not NULL. Returns the
 * number of rows not as expected. */
int bad_inputs_run(bad_need max_need, FILE *json);

#endif
