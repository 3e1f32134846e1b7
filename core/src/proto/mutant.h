/*
 * Seeded faults for the simulator (tests/sim; docs/RELIABILITY.md,
 * "Simulation"): each plants one bug the simulator's invariants must
 * catch, to show that they can fail. HRL_MUTANT(X) is the constant 0 in
 * every build but the simulator's mutant build (-DHRL_SIM_MUTANTS), so a
 * normal build compiles none of them; there it is true when the run
 * asked for fault X (hrl_sim_mutant is the simulator's, set per run).
 */
#ifndef HRL_MUTANT_H
#define HRL_MUTANT_H

enum hrl_mutant {
  HRL_MUTANT_NONE,
  HRL_MUTANT_NO_DRIFT,        /* validity without the drift term */
  HRL_MUTANT_QUORUM_LOW,      /* quorum N/2 instead of N/2 + 1 (N > 1) */
  HRL_MUTANT_NO_VALIDITY,     /* granted without checking validity is left */
  HRL_MUTANT_NO_FENCE_ROUND,  /* fence = max of the INCRs, no fence round */
  HRL_MUTANT_EXTEND_FROM_END, /* an extend's validity from the round's end */
  HRL_MUTANT_NO_CLEANUP,      /* a failed attempt sends no release */
  HRL_MUTANT_NO_ASIDE,        /* a waiter keeps what a lost try won */
  HRL_MUTANT_UNACKED_UNTAKEN, /* a write its WAIT found short taken for none */
  HRL_MUTANT_HANDOFF_AT_MESSAGE,  /* a hand-off dated from its message */
  HRL_MUTANT_HANDOFF_AT_LAST_TRY, /* ... from the last refusal's round */
  HRL_MUTANT_NO_OWED_CAP, /* an unanswered extend's TTL not kept as a cap */
  HRL_MUTANT_COUNT
};

#ifdef HRL_SIM_MUTANTS
extern int hrl_sim_mutant;
#define HRL_MUTANT(x) (hrl_sim_mutant == HRL_MUTANT_##x)
#else
#define HRL_MUTANT(x) 0
#endif

#endif
