/*
 * The protocol's only reads of the world outside its arguments: every
 * other input (the clock it judges validity by, the replies) is passed in
 * by the driver. The simulator links core/src/proto without clock.c and
 * random.c and answers these instead, from the client whose call is
 * running (seam_enter): its wall clock (a waiter's arrival), its tokens
 * and its jitter, all from the seed; and getpid() (below). A read with no
 * client entered is one the simulation does not know about: it aborts.
 * tests/sim/seams.sh (ctest sim_seams) checks that the protocol's objects
 * call no clock or entropy source of the system.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/random.h"
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

hrl_status hrl_random_bytes(void *buf, size_t n) {
  client *c = current("randomness");
  unsigned char *p = buf;
  for (size_t i = 0; i < n; i++) {
    p[i] = (unsigned char)sim_rng_next(&c->rng);
  }
  return HRL_OK;
}

hrl_status hrl_token_new(char out[HRL_TOKEN_LEN + 1]) {
  static const char hex[] = "0123456789abcdef";
  client *c = current("a token");
  for (int half = 0; half < 2; half++) {
    uint64_t r = sim_rng_next(&c->rng);
    for (int k = 0; k < 16; k++) {
      out[half * 16 + k] = hex[(r >> (4 * k)) & 15];
    }
  }
  out[HRL_TOKEN_LEN] = '\0';
  return HRL_OK;
}

uint32_t hrl_random_upto(uint32_t bound) {
  client *c = current("jitter");
  return bound == 0 ? 0
                    : (uint32_t)(sim_rng_next(&c->rng) % ((uint64_t)bound + 1));
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
