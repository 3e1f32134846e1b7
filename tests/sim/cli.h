/* What main.c and mutants.c share: the mutants, and the pipes the
 * worker processes report through. */
#ifndef HRL_SIM_CLI_H
#define HRL_SIM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* The core's mutant in force (seam.c). */
extern int hrl_sim_mutant;

/* Runs with mutant `name` (false, with a message, when there is none or
 * this binary lacks it). */
bool select_mutant(const char *name, sim_options *o);

/* Hunts every mutant over seeds 1..max on `jobs` processes, prints a
 * line each and a summary, and the JSON rows when json is not NULL; 0
 * when every observable mutant was caught and no other was. */
int run_mutants(uint64_t max, uint64_t rare_max, int jobs, FILE *json);

/* Whole writes and reads on a pipe. */
bool write_all(int fd, const void *p, size_t n);
bool read_all(int fd, void *p, size_t n);

#endif
