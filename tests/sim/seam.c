/*
 * The protocol's only reads of the world outside its arguments: every
 * other input (the clock it judges validity by, the replies, its entropy:
 * sim_entropy below, given as each client's hrl_config.entropy) is passed
 * in by the driver. The simulator links core/src/proto without clock.c
 * and answers its wall clock instead, from the client whose call is
 * running (seam_enter): a waiter's arrival, from the seed; and getpid()
 * (below). A read with no client entered is one the simulation does not
 * know about: it aborts.
 * tests/sim/seams.sh (ctest sim_seams) checks that the protocol's objects
 * call no clock or entropy source of the system.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "world.h"

static world *seam_world;
static client *seam_client;

void seam_enter(world *w, client *c) {
  seam_world = w;
  seam_client = c;
}

void seam_leave(void) {
  seam_client = NULL;
}

static client *current(const char *what) {
  if (seam_client == NULL) {
    fprintf(stderr, "hrl-sim: the protocol read %s outside a client's call\n",
            what);
    abort();
  }
  return seam_client;
}

int64_t hrl_wall_us(void) {
  client *c = current("the wall clock");
  return c->wall_us + client_now(seam_world, c) - c->offset_us;
}

/* The clients' entropy (hrl_config.entropy, ctx: the client): from the
 * client's stream of the seed. A token's 16 bytes read as two draws'
 * nibbles, low first, and any other 8 bytes (a jitter's) as one draw: the
 * simulator's tokens and jitters as they were before the protocol took its
 * entropy from the driver, so a seed's world stayed the same. */
hrl_status sim_entropy(void *ctx, void *buf, size_t n) {
  client *c = ctx;
  unsigned char *p = buf;
  if (n == HRL_TOKEN_LEN / 2) {
    for (size_t half = 0; half < 2; half++) {
      uint64_t r = sim_rng_next(&c->rng);
      for (size_t b = 0; b < 8; b++) {
        p[half * 8 + b] = (unsigned char)(((r >> (8 * b)) & 15) << 4 |
                                          ((r >> (8 * b + 4)) & 15));
      }
    }
    return HRL_OK;
  }
  for (size_t i = 0; i < n; i += 8) {
    uint64_t r = sim_rng_next(&c->rng);
    memcpy(p + i, &r, n - i < 8 ? n - i : 8);
  }
  return HRL_OK;
}

/* The protocol's process identity (a forked child makes its own channel
 * and never takes its parent's saved places): the simulated clients never
 * fork, and a constant spares a system call per try. */
pid_t getpid(void) {
  return 4242;
}

/* The core's mutant in force (core/src/proto/mutant.h; only
 * hrl-sim-mutants' core reads it): set by mutants.c. */
int hrl_sim_mutant;
