/* The handles behind the opaque types, shared by the core's files. */
#ifndef HRL_INTERNAL_H
#define HRL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hiredlock.h"
#include "url.h"

/* A master's message in a round: "timeout after 50 ms", "READONLY ...". */
#define HRL_NODE_MSG_MAX 96

struct redisContext;

/* One connection per master, opened lazily; owner_pid tells a forked child
 * that the socket is its parent's. Once connected, the socket is in
 * blocking mode (every call but one passes MSG_DONTWAIT) so that the last
 * reply of a round can be awaited in recv() itself, bounded by SO_RCVTIMEO
 * (rcvtimeo_ms, 0 while unset). owed counts the replies still due for
 * commands of earlier rounds that timed out: they are read and dropped
 * before the current round's reply. See fanout.c. */
typedef struct hrl_conn {
  struct redisContext *ctx;
  pid_t owner_pid;
  bool blocking;
  uint32_t rcvtimeo_ms;
  uint32_t owed;
  /* A connect in progress carries over to later rounds until this
   * deadline (connect_timeout after it began); see fanout.c. */
  bool connecting;
  int64_t connect_deadline_us;
} hrl_conn;

typedef struct hrl_master {
  hrl_endpoint ep;
  char *handshake; /* AUTH / SELECT commands for a new connection, or NULL */
  size_t handshake_len;
  int handshake_replies;
  hrl_conn conn;
  /* Missed a round's deadline and has not answered a command since: once a
   * round's outcome is settled, it is not waited for (see fanout.c). */
  bool late;
} hrl_master;

struct hrl_client {
  hrl_options opts; /* key_prefix points into prefix below */
  char *prefix;
  size_t n;
  size_t quorum;
  hrl_master *masters;
  pthread_mutex_t mu; /* held while a round uses the connections */
  /* A page the kernel zeroes in a forked child (MADV_WIPEONFORK): while
   * *fork_canary is non-zero, the connections are this process's own, and
   * a round needs no getpid(). NULL where the kernel cannot: owner_pid and
   * getpid() tell instead. */
  volatile unsigned char *fork_canary;
};

/* A master's state in the current round. */
typedef struct hrl_node {
  hrl_node_result result;
  bool eval_sent; /* NOSCRIPT came back once: the full script was sent */
  char msg[HRL_NODE_MSG_MAX];
} hrl_node;

typedef enum hrl_phase {
  HRL_PHASE_IDLE,      /* no operation running */
  HRL_PHASE_ATTEMPT,   /* next step starts an acquire attempt */
  HRL_PHASE_ACQUIRING, /* an acquire round is out */
  HRL_PHASE_CLEANUP,   /* a failed attempt's release round is out */
  HRL_PHASE_SCRIPT,    /* next step sends the release / extend round */
  HRL_PHASE_SCRIPTING, /* a release / extend round is out */
  HRL_PHASE_DONE
} hrl_phase;

/* One acquire, release or extend in progress (see redlock.c). */
typedef struct hrl_op {
  hrl_op_kind kind;
  hrl_op_kind round_kind; /* what the round out now sends */
  hrl_phase phase;
  hrl_status result;
  int64_t deadline_us;    /* acquire: no attempt starts after this */
  int64_t round_start_us; /* start of the acquire / script round */
  uint32_t ttl_ms;        /* acquire: the lock's; extend: the new one */
  uint32_t attempts;
  char token[HRL_TOKEN_LEN + 1]; /* the token this round carries */
  hrl_node *nodes;               /* n entries: the round out now */
  hrl_node *decided;             /* n entries: the attempt being judged */
  char *cmd;                     /* EVALSHA or SET form */
  size_t cmd_len;
  char *cmd_eval; /* EVAL form, after NOSCRIPT */
  size_t cmd_eval_len;
  hrl_counts counts;
} hrl_op;

struct hrl_lock {
  hrl_client *client;
  char *key; /* prefix + name */
  size_t key_len;
  size_t prefix_len;
  uint32_t ttl_ms;
  bool held;
  uint64_t granted; /* bit i: master i holds (held) our token, as far as we
                       know: its OK to the acquire or the last extend */
  int64_t valid_until_us;
  char token[HRL_TOKEN_LEN + 1];
  char detail[HRL_DETAIL_MAX];
  hrl_op op;
};

/* redlock.c: ends an acquire that is sleeping between attempts. */
void hrl_proto_cancel(hrl_lock *lock);

/* fanout.c: runs the current round of lock's operation on every master at
 * once through the client's connections; the caller holds client->mu. */
void hrl_fanout_round(hrl_client *client, hrl_lock *lock, uint32_t timeout_ms);

/* fanout.c: closes master's connection without writing to it. */
void hrl_conn_close(hrl_conn *conn);

/* client.c: the fork canary's page (NULL when unsupported), and its end. */
volatile unsigned char *hrl_fork_canary_new(void);
void hrl_fork_canary_free(volatile unsigned char *canary);

#endif
