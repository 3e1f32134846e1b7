/* The random streams: splitmix64, one stream per (seed, what, which), so
 * that each client, master and connection draws from its own and a
 * shrunk scenario keeps the others' draws. */
#include "sim.h"

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void sim_rng_init(sim_rng *r, uint64_t seed, uint64_t what, uint64_t which) {
  r->s = mix(mix(seed ^ 0x6a09e667f3bcc908ULL) + what * 0x9e3779b97f4a7c15ULL +
             which);
}

uint64_t sim_rng_next(sim_rng *r) {
  r->s += 0x9e3779b97f4a7c15ULL;
  return mix(r->s);
}

int64_t sim_rng_range(sim_rng *r, int64_t lo, int64_t hi) {
  if (hi <= lo) {
    return lo;
  }
  uint64_t span = (uint64_t)(hi - lo) + 1;
  return lo + (int64_t)(sim_rng_next(r) % span);
}

bool sim_rng_chance(sim_rng *r, unsigned percent) {
  return sim_rng_next(r) % 100 < percent;
}

double sim_rng_unit(sim_rng *r) {
  return (double)(sim_rng_next(r) >> 11) / 9007199254740992.0;
}
