/*
 * hrl-sim: a deterministic simulation of the real protocol code
 * (core/src/proto) against modelled masters, network and clocks, one
 * world per seed (docs/RELIABILITY.md, "Simulation", lists what the model
 * assumes). Everything a run does follows from its scenario (scenario.c:
 * made from the seed, or read back from a file) and the seed's random
 * streams; there is no socket, no thread and no real clock.
 *
 *   world.c      the event loop and the world's life
 *   rng.c        the random streams
 *   seam.c       the protocol's only reads of the outside world (the wall
 *                clock, tokens, jitter), answered from the simulation
 *   net.c        connections: ordered bytes per direction, delays,
 *                partitions, resets
 *   master.c     a modelled Redis master: its life (pause, restart) and
 *                how it serves a connection; keyspace.c its data,
 *                commands.c its command table, scripts.c the scripts
 *   runner.c     a driver: steps one lock operation through its rounds
 *   listener.c   a client's subscriber connections
 *   workload.c   clients, their lanes and sessions, fenced writes, leases
 *   check.c      the invariants
 *   coverage.c   which protocol states a run reached
 *   scenario.c   scenarios: made from a seed, written, read, shrunk
 *   mutants.c    the seeded bugs, and the hunt for a seed that catches each
 *   main.c       the command line
 */
#ifndef HRL_SIM_H
#define HRL_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hiredlock.h"
#include "hiredlock/proto.h"

#define SIM_MASTERS_MAX 5
#define SIM_CLIENTS_MAX 6
#define SIM_LANES_MAX 3
#define SIM_NAMES_MAX 3
#define SIM_SESSIONS_MAX 64
#define SIM_FAULTS_MAX 32
#define SIM_TOKENS_MAX 2048

/* ---- random streams (rng.c) ---- */

typedef struct sim_rng {
  uint64_t s;
} sim_rng;

/* A stream of its own for each (seed, what, which): removing one client's
 * sessions does not change another's draws. */
void sim_rng_init(sim_rng *r, uint64_t seed, uint64_t what, uint64_t which);
uint64_t sim_rng_next(sim_rng *r);
/* Uniform in [lo, hi]. */
int64_t sim_rng_range(sim_rng *r, int64_t lo, int64_t hi);
/* True with probability percent / 100. */
bool sim_rng_chance(sim_rng *r, unsigned percent);
double sim_rng_unit(sim_rng *r);

/* ---- scenarios (scenario.c) ---- */

/* One acquire-to-release of a lane: when it starts, on which name, and
 * what the holder does. */
typedef struct sim_session {
  int client, lane;
  int64_t at_us; /* global time it may start (after the lane's previous) */
  int name;
  int64_t wait_ms; /* acquire's wait: 0 = try once */
  uint32_t ttl_ms;
  bool fenced;
  bool lease;           /* auto_renew */
  uint32_t max_hold_ms; /* a lease's cap, 0: none */
  int64_t hold_ms;      /* how long the holder keeps it before release */
  int extends;          /* explicit extends during the hold */
  /* The TTL they ask for, 0: the lock's (a scenario's extend_ttl=). */
  uint32_t extend_ttl_ms;
  int writes;        /* fenced writes during the hold */
  int64_t stall_ms;  /* the client freezes that long before a write */
  int64_t cancel_ms; /* cancel the acquire after this (-1: never) */
  bool abandon;      /* never released (the holder's process is gone) */
  bool vanish;       /* the lane stops while waiting (a dead waiter) */
} sim_session;

typedef enum sim_fault_kind {
  FAULT_MASTER_PAUSE,   /* SIGSTOP for dur */
  FAULT_MASTER_RESTART, /* down for dur, back with its data (AOF always) */
  FAULT_MASTER_WIPE,    /* down for dur >= the longest TTL, back empty but
                           for its fence counters (restored, as SAFETY.md
                           tells operators to) */
  FAULT_SCRIPT_FLUSH,   /* SCRIPT FLUSH */
  FAULT_PARTITION,      /* client <-> master cut for dur (TCP retransmits) */
  FAULT_RESET,          /* the client's connections to master reset */
  FAULT_SLOW,           /* client <-> master: + extra_us per message */
  FAULT_CLIENT_PAUSE,   /* the client process frozen for dur */
  FAULT_ERRORS,         /* the master answers every command with an error:
                           LOADING (extra_us = 0, passes) or OOM (lasts) */
  FAULT_REPLICA_LAG,    /* extra_us of the master's replicas acknowledge
                           nothing for dur (a replica restarting, a slow
                           link to it): only in worlds with sync_replicas
                           or sync_aof, drawn apart from the others */
  FAULT_KINDS
} sim_fault_kind;

typedef struct sim_fault {
  sim_fault_kind kind;
  int64_t at_us, dur_us, extra_us;
  int client, master;
} sim_fault;

typedef struct sim_scenario {
  uint64_t seed;
  int expect; /* sim_violation_kind a replay must end with (V_NONE: none) */
  int masters, clients, lanes, names;
  /* the clients' options (every client of a world uses the same) */
  uint32_t timeout_ms, connect_timeout_ms, retry_delay_ms, retry_jitter_ms;
  double drift_factor;
  bool handshake; /* URLs with a password and a database */
  /* Each master's replicas (0 to 2), and the clients' sync_replicas
   * (WAIT behind every write that grants) and sync_aof (WAITAOF). */
  int replicas, sync_replicas;
  bool sync_aof;
  /* The clients' restart_guard (0: off, as every generated world has it;
   * set in regression scenarios of masters restarted empty too soon). */
  uint32_t restart_guard_ms;
  /* How the clients' driver shares its connections (sim_driver). */
  int driver;
  /* clocks: rates within the drift allowance, offsets anywhere */
  double client_rate[SIM_CLIENTS_MAX], master_rate[SIM_MASTERS_MAX];
  int64_t client_offset_us[SIM_CLIENTS_MAX], client_wall_us[SIM_CLIENTS_MAX];
  int64_t master_offset_us[SIM_MASTERS_MAX];
  int64_t net_min_us, net_max_us; /* one-way delay of a message */
  int sessions;
  sim_session session[SIM_SESSIONS_MAX];
  int faults;
  sim_fault fault[SIM_FAULTS_MAX];
} sim_scenario;

void sim_scenario_generate(sim_scenario *sc, uint64_t seed);
/* Whether a scenario stays within the model's assumptions (MODEL.md): no
 * master restarts empty sooner than the longest TTL, unless the clients'
 * restart_guard covers that TTL. Every generated one must; a scenario
 * file may not (a regression of what happens outside them). Else false
 * and why. */
bool sim_scenario_assumed(const sim_scenario *sc, char *why, size_t size);
/* Text form (one line per item); returns false on a malformed file. */
bool sim_scenario_write(const sim_scenario *sc, const char *path);
bool sim_scenario_read(sim_scenario *sc, const char *path, char *err,
                       size_t err_size);

/* The driver's shape. */
typedef enum sim_driver {
  /* one connection per master per client, and a client's steps and rounds
   * one at a time: the built-in driver (the client's mutex) */
  DRIVER_SERIAL,
  /* rounds of a client's locks at once over a pool of connections; a
   * connection that owes replies stays with the lock whose commands it
   * owes them for, until they are in */
  DRIVER_POOLED,
  /* the same, but any idle connection serves any lock, owed replies or
   * not: what the asyncio and cosocket drivers do today (a lock's late
   * command can then run after its next round's, docs/RELIABILITY.md) */
  DRIVER_SHARED,
  DRIVER_KINDS
} sim_driver;

/* ---- outcomes ---- */

typedef enum sim_violation_kind {
  V_NONE,
  V_EXCLUSION,   /* two holders within their validity at one instant */
  V_FENCE_ORDER, /* a grant's fence not above the previous grant's */
  V_STALE_WRITE, /* the fenced store took a write from an older hold */
  /* a fenced grant without a quorum of masters whose counter was its
   * fence while their key held its token */
  V_FENCE_QUORUM,
  V_KEY_TTL,     /* a lock key without a TTL, or longer than its call's */
  V_LEFT_BEHIND, /* a failed call's key on a master never sent a release */
  V_QUEUE_TTL,   /* a queue key without a TTL, or longer than the lease */
  V_LIVENESS,    /* the lock stayed free while a waiter waited */
  V_DEADLINE,    /* a call returned long after its deadline */
  V_STUCK,       /* the world did not finish */
  V_CRASH,       /* the model met something it cannot serve */
  V_KINDS
} sim_violation_kind;

const char *sim_violation_name(sim_violation_kind k);

typedef struct sim_result {
  sim_violation_kind violation;
  char what[512];
  int64_t at_us;
  uint64_t events;
  uint64_t grants, fenced_grants, writes_accepted, writes_refused;
  int64_t end_us;
  /* longest a holder's call or renewal waited behind other rounds */
  int64_t max_mutex_wait;
  /* longest the name stayed free while a live waiter waited, as a part of
   * the liveness bound (1: a violation) */
  double max_free_part;
} sim_result;

/* Which built-in faults the model itself carries (the scripts' mutants,
 * scripts.c); the core's are compiled in (core/src/proto/mutant.h). */
typedef enum sim_model_mutant {
  MODEL_MUTANT_NONE,
  MODEL_RELEASE_NO_COMPARE, /* the queue script's release deletes any key */
  MODEL_FENCE_NO_TOKEN,     /* the fence script raises without our key */
  MODEL_QUEUE_NO_TTL,       /* the queue keys get no PEXPIRE */
  MODEL_HANDOFF_PX_WINDOW   /* a hand-off heard of gets PX window, not ttl */
} sim_model_mutant;

typedef struct sim_options {
  bool trace; /* print every event */
  bool list;  /* print every violation's seed (no shrinking) */
  int driver; /* 1 + sim_driver: every world's driver; 0: the seed's */
  sim_model_mutant model_mutant;
} sim_options;

/* Runs one world to its end (world.c). */
void sim_run(const sim_scenario *sc, const sim_options *opts, sim_result *out);

/* Shrinks a failing scenario: fewer sessions and faults, same kind of
 * violation (scenario.c). Returns the number of runs it took. */
int sim_shrink(sim_scenario *sc, const sim_options *opts,
               sim_violation_kind kind, int budget);

/* ---- coverage (coverage.c) ---- */

typedef enum cov_kind {
  COV_STEP,   /* phase before, step, phase after */
  COV_REPLY,  /* round kind, hrl_proto_reply result */
  COV_FAIL,   /* round kind, failure recorded (fail, missed, skip) */
  COV_DONE,   /* operation kind, status */
  COV_RENEW,  /* hrl_proto_renew_begin outcome, or renew_end status */
  COV_NOTICE, /* subscriber notice */
  COV_STREAM, /* stream action */
  COV_KINDS
} cov_kind;

#define COV_BITS 32768
/* COV_REPLY's result for a write that took with too few replicas behind
 * it (above every hrl_node_result) */
#define COV_UNACKED 40
typedef struct sim_coverage {
  uint64_t bits[COV_BITS / 64];
} sim_coverage;

void cov_hit(cov_kind kind, int a, int b, int c);
sim_coverage *cov_current(void);
void cov_merge(sim_coverage *into, const sim_coverage *from);
/* Prints the report; returns what it reached of the listed universe. */
void cov_report(const sim_coverage *cov, int *reached, int *listed,
                bool list_missing, void *file);

#endif
