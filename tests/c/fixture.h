/* C side of the shared Redis fixture launcher (tests/fixtures/redis-fixture):
 * starts private servers, injects faults, and inspects keys directly. */
#ifndef HRL_FIXTURE_H
#define HRL_FIXTURE_H

#include <hiredis/hiredis.h>
#include <stdbool.h>

#include "hiredlock.h"

typedef struct fixture {
  char dir[256];
  int n;
  char password[64];
  char url[HRL_MASTERS_MAX][256];
  char unix_url[HRL_MASTERS_MAX][256];
  const char *urls[HRL_MASTERS_MAX]; /* pointers into url, for hrl_client_new */
  const char *unix_urls[HRL_MASTERS_MAX];
  int port[HRL_MASTERS_MAX];
  redisContext *inspect[HRL_MASTERS_MAX]; /* cached inspection connections */
  /* --tls / --mtls: rediss:// URLs, their ports, the certificates' dir */
  char tls_url[HRL_MASTERS_MAX][256];
  const char *tls_urls[HRL_MASTERS_MAX];
  int tls_port[HRL_MASTERS_MAX];
  char tls_dir[256];
  char cluster_url[1024];  /* --cluster: redis+cluster://seeds */
  char sentinel_url[1024]; /* --sentinels K: redis+sentinel://.../hrl */
  int sentinel_port[HRL_MASTERS_MAX];
  int sentinels;
  /* --replicas R: the replicas' URLs (r1..rN*R), R per master */
  char replica_url[HRL_MASTERS_MAX][256];
  const char *replica_urls[HRL_MASTERS_MAX];
  int replicas;
} fixture;

/* Starts n servers; options are extra launcher flags ("--password pw").
 * Aborts the test program when the launcher fails: nothing can be tested. */
void fixture_start(fixture *f, int n, const char *options);

/* Runs `redis-fixture VERB DIR ARGS` (args: one string of words, may be
 * NULL) and writes its first line of output to out; false when it failed.
 * For the verbs that print (slot, primary, failover, url). */
bool fixture_run(fixture *f, const char *verb, const char *args, char *out,
                 size_t size);

/* The path of a file of the --tls certificates' dir ("ca.crt", ...), in a
 * static buffer (the next call overwrites it). */
const char *fixture_tls_file(const fixture *f, const char *name);

/* Runs a command on a node named as the launcher names it ("r1", "s1",
 * "2") through redis-cli; its first line of output into out (may be
 * NULL). False when redis-cli failed. */
bool fixture_cli(fixture *f, const char *node, const char *args, char *out,
                 size_t size);

/* Stops the servers and removes their directory.  Aborts the test program
 * when the launcher reports a failure (a delayed restart that failed). */
void fixture_stop(fixture *f);

/* Drops the inspection connections without stopping anything: for a
 * forked child that exits. */
void fixture_forget(fixture *f);

/* kill / pause / resume / restart node (1-based); extra may be NULL.
 * Aborts the test program when the launcher fails (a restart whose port
 * another process took, a node that would not die): the test cannot go on
 * against a node in an unknown state.  Returns true otherwise. */
bool fixture_ctl(fixture *f, const char *verb, int node, const char *extra);

/* Runs a command on node (1-based) through its unix socket; NULL when the
 * node is down. The caller frees the reply. */
redisReply *fixture_cmd(fixture *f, int node, const char *fmt, ...);

/* Integer reply of a command, or -999 when there is none. */
long long fixture_int(fixture *f, int node, const char *fmt, ...);

/* The string value of key on node ("" when missing) into out. */
void fixture_get(fixture *f, int node, const void *key, size_t len, char *out,
                 size_t size);

/* Number of nodes (1..n) on which key exists. */
int fixture_count_key(fixture *f, const void *key, size_t len);

/* Creates a client on the fixture's TCP URLs with the given options. */
hrl_client *fixture_client(fixture *f, const hrl_options *opts);

#endif
