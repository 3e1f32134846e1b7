/* The running world of one simulation: its event queue, masters,
 * connections and clients (sim.h lists the files). Time is global
 * microseconds from 0; each client and master reads it through its own
 * clock (an offset and a rate within the drift allowance). */
#ifndef HRL_SIM_WORLD_H
#define HRL_SIM_WORLD_H

#include <stdio.h>

#include "proto/state.h"
#include "sim.h"

/* ---- events ---- */

typedef enum ev_kind {
  EV_HEAD,       /* the first chunk of a connection's direction is due */
  EV_SYN,        /* a connect reaches the master's host */
  EV_OPENED,     /* the client learns its connect's outcome */
  EV_RESET_SEEN, /* the client learns its connection was reset */
  EV_RUNNER,     /* a runner's round deadline or wait ends */
  EV_LANE,       /* a lane's next action */
  EV_RENEW,      /* a lease's renewal is due */
  EV_SUB_RETRY,  /* a subscriber reconnects */
  EV_FAULT,      /* a scenario fault begins (b = 0) or ends (b = 1) */
  EV_STORE,      /* a fenced write reaches the store */
  EV_MUTEX,      /* a serial client's mutex goes to the next runner */
  EV_LIVENESS    /* a look at whether waiters progress */
} ev_kind;

typedef struct sim_event {
  int64_t at;
  uint64_t seq;
  ev_kind kind;
  int a, b;
  int64_t c;
} sim_event;

/* ---- connections (net.c) ---- */

typedef struct chunk {
  struct chunk *next;
  int64_t at; /* when it is due at the other end */
  uint32_t len;
  char data[];
} chunk;

typedef struct conn_dir {
  chunk *head, *tail;
  int64_t last_at; /* when the last chunk queued is due: order is kept */
  bool scheduled;  /* an EV_HEAD is out for the head */
} conn_dir;

enum { TO_MASTER, TO_CLIENT };

typedef enum conn_role { ROLE_LOCK, ROLE_SUB } conn_role;

typedef struct conn {
  int client, master;
  conn_role role;
  /* client side */
  bool open;          /* established */
  bool client_closed; /* the client closed it: replies go nowhere */
  bool broken;        /* reset or refused: nothing more either way */
  bool idle;          /* in the client's pool */
  int owner;          /* DRIVER_POOLED: the runner whose replies it owes */
  int runner, node;   /* the runner using it now (-1: none) */
  hrl_stream *stream; /* lock connections */
  char *rbuf;         /* bytes that came while nobody read */
  size_t rlen, rcap;
  bool fresh; /* no command sent yet: the handshake goes first */
  /* master side */
  bool accepted;   /* the master serves it (its incarnation `epoch`) */
  int epoch;       /* the master's incarnation that accepted it */
  bool subscribed; /* pub/sub mode, on `channel` */
  /* blocked by a WAIT until then (global us): reads nothing meanwhile */
  int64_t blocked_until;
  char channel[HRL_CHANNEL_MAX + 1];
  size_t channel_len;
  conn_dir dir[2];
} conn;

/* ---- masters (master.c, keyspace.c, commands.c, scripts.c) ---- */

typedef enum key_type { KT_STRING, KT_ZSET, KT_HASH } key_type;

typedef struct zmember {
  char member[HRL_TOKEN_LEN];
  int64_t score;
} zmember;

#define HASH_VALUE_MAX 192
typedef struct hfield {
  char field[HRL_TOKEN_LEN];
  char value[HASH_VALUE_MAX];
  size_t value_len;
} hfield;

#define KEY_NAME_MAX 96
#define KEY_STR_MAX 48
#define COLL_MAX 32
typedef struct sim_key {
  bool used;
  char name[KEY_NAME_MAX];
  size_t name_len;
  key_type type;
  int64_t expire_ms; /* master ms after which it is gone; -1: never */
  char str[KEY_STR_MAX];
  size_t str_len;
  int count; /* zset or hash entries */
  zmember z[COLL_MAX];
  hfield h[COLL_MAX];
} sim_key;

#define KEYS_MAX (4 * SIM_NAMES_MAX + 2)
typedef struct master {
  int id;
  bool up, paused;
  int epoch; /* incarnation: connections of an earlier one are dead */
  double rate;
  int64_t offset_us;
  unsigned scripts;   /* bit per script (scripts.c) in its cache */
  const char *error;  /* FAULT_ERRORS: what every command gets, or NULL */
  int lagging;        /* FAULT_REPLICA_LAG: replicas acknowledging nothing */
  int64_t started_ms; /* its clock when it (re)started: INFO's uptime */
  sim_key keys[KEYS_MAX];
} master;

/* ---- clients (runner.c, listener.c, workload.c) ---- */

typedef enum runner_state { R_IDLE, R_ROUND, R_WAIT, R_DONE } runner_state;
typedef enum node_state { X_OFF, X_CONNECTING, X_ACTIVE, X_DONE } node_state;

/* One operation on one lock, run as a driver runs it. */
typedef struct runner {
  int id;
  int client, lane;
  bool renewal; /* runs a lease's twin */
  hrl_lock *lk;
  runner_state st;
  uint64_t gen; /* a timer of an earlier round or wait is stale */
  int64_t deadline;
  int pending;
  node_state node[SIM_MASTERS_MAX];
  int conn[SIM_MASTERS_MAX];
  bool cancel;        /* cancellation asked for: applied between tries */
  bool want_step;     /* waits for its client's mutex (serial driver) */
  int64_t queued_at;  /* since when */
  int64_t mutex_wait; /* this call's time waiting for the mutex */
  hrl_op_kind kind;
  hrl_status result;
  int64_t began;
  /* what each master was sent of this operation's releases */
  unsigned released_to; /* bit per master: a release round's command */
} runner;

typedef enum lane_state {
  L_IDLE,      /* between sessions */
  L_ACQUIRING, /* the acquire runs */
  L_HOLDING,   /* held: writes, extends, then release */
  L_EXTENDING,
  L_RELEASING,
  L_GONE /* vanished (a dead waiter or holder): does nothing more */
} lane_state;

typedef struct lane {
  int client, id;
  lane_state st;
  uint64_t gen;
  int session; /* index in the scenario, -1 */
  int next;    /* next session of this lane to look at */
  hrl_lock *lk;
  runner run;   /* the holder's calls */
  runner renew; /* a lease's renewals (on its twin) */
  bool renew_out;
  hrl_lock *renew_lk; /* the lease whose renewal is out */
  uint64_t renew_gen;
  int64_t held_since; /* global */
  int64_t hold_until; /* global: release then */
  int writes_left, extends_left;
  int64_t call_start;
  bool release_retried;
  /* belief: what the holder was told */
  bool believes;
  int64_t valid_until; /* global */
  uint64_t grant_seq;
  uint64_t fence;
  char token[HRL_TOKEN_LEN + 1];
} lane;

typedef struct sub_conn {
  int conn; /* -1: none */
  hrl_subscriber *s;
  int failures;
  bool retry_out;
  bool ready;
} sub_conn;

#define POOL_MAX 16
typedef struct client {
  int id;
  hrl_config cfg;
  bool cfg_ok;
  double rate;
  int64_t offset_us, wall_us;
  bool paused;
  int64_t paused_until;
  sim_rng rng; /* tokens, jitter */
  int pool[SIM_MASTERS_MAX][POOL_MAX];
  int pooled[SIM_MASTERS_MAX];
  sub_conn sub[SIM_MASTERS_MAX];
  /* serial driver: the runner holding the client's mutex (-1: none) and
   * those waiting for it, in order */
  int mutex_owner;
  int mutex_queue[SIM_LANES_MAX * 2];
  int mutex_waiting;
  bool listening;
  lane lanes[SIM_LANES_MAX];
} client;

/* ---- the store fenced writes go to (one resource per name) ---- */
typedef struct store {
  uint64_t last_fence;
  uint64_t newest_attempt; /* grant_seq of the newest hold that wrote */
} store;

/* A fenced write on its way to the store. */
typedef struct fenced_write {
  int name;
  uint64_t fence, grant_seq;
  int client, lane;
} fenced_write;

/* ---- tokens: whose each one is ---- */
typedef struct token_info {
  uint32_t gen; /* used in the world of that generation */
  char token[HRL_TOKEN_LEN];
  int client, lane;
  uint32_t ttl_ms;
  bool failed; /* its call failed or was cancelled */
  /* The least and greatest value each master's fence counter of the name
   * took while the name's key there held this token (check_counter; 0:
   * none): a fenced grant's witnesses. */
  uint64_t counted_lo[SIM_MASTERS_MAX], counted_hi[SIM_MASTERS_MAX];
} token_info;

/* ---- the world ---- */

typedef struct world {
  const sim_scenario *sc;
  const sim_options *opts;
  sim_result *res;
  int64_t now;
  uint64_t seq;
  uint64_t events;
  sim_rng net_rng;
  int n;
  client clients[SIM_CLIENTS_MAX];
  runner *runners[SIM_CLIENTS_MAX * SIM_LANES_MAX * 2];
  int nrunners;
  /* fault state */
  int64_t cut_until[SIM_CLIENTS_MAX][SIM_MASTERS_MAX];
  int64_t slow_until[SIM_CLIENTS_MAX][SIM_MASTERS_MAX];
  int64_t slow_extra[SIM_CLIENTS_MAX][SIM_MASTERS_MAX];
  int64_t master_paused_until[SIM_MASTERS_MAX];
  int64_t calm_since; /* no fault active since (liveness) */
  int active_faults;
  uint64_t grant_seq;
  uint64_t last_fence[SIM_NAMES_MAX];
  store stores[SIM_NAMES_MAX];
  int64_t free_since[SIM_NAMES_MAX]; /* liveness: -1 when not free */
  int lanes_done, lanes_total;
  bool stop;
  FILE *trace;
  /* Kept from world to world (world_reset clears what comes before):
   * allocations, and what is too big to clear each time. */
  sim_event *heap;
  size_t heap_len, heap_cap;
  conn *conns;
  int nconns, conns_cap;
  fenced_write *writes;
  int nwrites, writes_cap;
  uint32_t token_gen; /* a token entry is this world's when its gen is */
  token_info tokens[SIM_TOKENS_MAX];
  master masters[SIM_MASTERS_MAX]; /* master_init clears what it uses */
} world;

/* world.c */
void ev_push(world *w, int64_t at, ev_kind kind, int a, int b, int64_t c);
void sim_trace(world *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define TRACE(w, ...)                                                          \
  do {                                                                         \
    if ((w)->trace != NULL)                                                    \
      sim_trace((w), __VA_ARGS__);                                             \
  } while (0)
void sim_violation(world *w, sim_violation_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void *arena_alloc(world *w, size_t size);

/* clocks */
int64_t client_now(const world *w, const client *c);
/* The first global time at which the client's clock reads local_us. */
int64_t client_to_global(const world *w, const client *c, int64_t local_us);
int64_t master_now_ms(const world *w, const master *m);

/* seam.c: the clients' entropy (hrl_config.entropy; ctx: the client) */
hrl_status sim_entropy(void *ctx, void *buf, size_t n);
/* seam.c: whose clock the protocol reads now */
void seam_enter(world *w, client *c);
void seam_leave(void);

/* net.c */
int conn_open(world *w, int client_id, int master_id, conn_role role);
void conn_send(world *w, int id, int dir, const char *data, size_t len);
/* The same, sent at `from` (>= now) instead of now. */
void conn_send_from(world *w, int id, int dir, const char *data, size_t len,
                    int64_t from);
/* Bytes the master took but has not run (behind a WAIT that blocks): back
 * at the head of the connection, due at `at`. */
void conn_unread(world *w, int id, const char *data, size_t len, int64_t at);
void conn_close(world *w, int id); /* by the client */
void conn_reset(world *w, int id); /* RST: both sides lose what is queued */
void net_head_due(world *w, int id, int dir);
void net_syn(world *w, int id);
void net_opened(world *w, int id);
void net_reset_seen(world *w, int id);
int64_t net_delay(world *w, int client_id, int master_id);

/* master.c */
void master_init(world *w, master *m, int id);
void master_receive(world *w, int conn_id, const char *data, size_t len);
void master_closed_conn(world *w, int conn_id);
void master_fault(world *w, const sim_fault *f, bool end);

/* keyspace.c */
sim_key *ks_get(world *w, master *m, const char *name, size_t len);
sim_key *ks_create(world *w, master *m, const char *name, size_t len,
                   key_type type);
void ks_del(sim_key *k);
int64_t ks_pttl(world *w, master *m, const sim_key *k);
void ks_pexpire(world *w, master *m, sim_key *k, int64_t ms);
bool ks_zadd(sim_key *k, const char *member, int64_t score);
bool ks_zrem(sim_key *k, const char *member);
const zmember *ks_zat(const sim_key *k, int i);
bool ks_hset(sim_key *k, const char *field, const char *value, size_t len);
const hfield *ks_hget(const sim_key *k, const char *field);
bool ks_hdel(sim_key *k, const char *field);

/* commands.c: a command's argv, and the reply it writes */
#define ARGS_MAX 16
typedef struct sim_args {
  int argc;
  const char *argv[ARGS_MAX];
  size_t len[ARGS_MAX];
} sim_args;

typedef struct sim_reply {
  char *buf;
  size_t len, cap;
} sim_reply;

void reply_raw(world *w, sim_reply *r, const char *data, size_t len);
void reply_status(world *w, sim_reply *r, const char *s);
void reply_error(world *w, sim_reply *r, const char *s);
void reply_int(world *w, sim_reply *r, long long v);
void reply_bulk(world *w, sim_reply *r, const char *s, size_t len);
void reply_nil(world *w, sim_reply *r);
void command_run(world *w, master *m, conn *c, const sim_args *a,
                 sim_reply *out);
bool arg_is(const sim_args *a, int i, const char *s);
bool arg_int(const sim_args *a, int i, long long *out);
/* PUBSUB NUMSUB ch on master m: its connections subscribed to ch. */
long long master_numsub(const world *w, const master *m, const char *ch,
                        size_t ch_len);
void master_publish(world *w, master *m, const char *ch, size_t ch_len,
                    const char *msg, size_t msg_len, sim_reply *count_out);

/* scripts.c: EVAL and EVALSHA of the core's scripts; and false (with
 * why) when those are not the scripts the model was written from. */
bool scripts_up_to_date(char *err, size_t size);
void script_eval(world *w, master *m, const sim_args *a, bool by_sha,
                 sim_reply *out);

/* runner.c */
void runner_init(world *w, runner *r, int client_id, int lane_id, bool renewal);
void runner_begin(world *w, runner *r, hrl_lock *lk, hrl_op_kind kind,
                  int64_t arg_ms);
void runner_abandon(world *w, runner *r); /* its thread is gone */
void runner_timer(world *w, runner *r, uint64_t gen);
void runner_cancel(world *w, runner *r);
void runner_conn_bytes(world *w, int conn_id);
void runner_conn_broken(world *w, int conn_id);
void runner_notify_opened(world *w, int conn_id, bool ok);
void runner_wake(world *w, runner *r); /* a hand-off or a subscriber */
void runner_mutex_next(world *w, int client_id);
runner *runner_by_waiter(world *w, int client_id, const char *token);

/* listener.c */
void listener_start(world *w, client *c);
void listener_bytes(world *w, int conn_id);
void listener_broken(world *w, int conn_id);
void listener_opened(world *w, int conn_id, bool ok);
void listener_retry(world *w, int client_id, int master_id);

/* workload.c */
void workload_start(world *w);
void lane_event(world *w, int client_id, int lane_id, uint64_t gen);
void lane_op_done(world *w, runner *r);
void lane_renew_due(world *w, int client_id, int lane_id, uint64_t gen);
void store_arrive(world *w, int client_id, int lane_id, int64_t packed);
void client_pause(world *w, int client_id, int64_t dur);

/* check.c */
void check_grant(world *w, lane *l, bool new_hold);
void check_write(world *w, master *m, sim_key *k);
void check_counter(world *w, master *m, const sim_key *counter);
void check_queue(world *w, master *m, sim_key *k);
void check_call_failed(world *w, lane *l, runner *r, const char *token);
void check_liveness(world *w);
void check_deadline(world *w, lane *l, runner *r, int64_t bound_ms);
void check_mutex_wait(world *w, runner *r);
token_info *token_find(world *w, const char *token);
token_info *token_add(world *w, const char *token, int client_id, int lane_id,
                      uint32_t ttl_ms);

#endif
