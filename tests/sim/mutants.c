/* The mutants: each plants one bug, in the core (core/src/proto/mutant.h,
 * compiled into hrl-sim-mutants only) or in the modelled scripts
 * (scripts.c), and the hunt looks for the first seed whose world fails an
 * invariant that the shipped code passes (main.c's --mutants). Also the
 * pipes the worker processes report through. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "proto/mutant.h"

typedef struct mutant_def {
  const char *name;
  int core; /* enum hrl_mutant, or 0 */
  sim_model_mutant model;
  const char *what;
  /* false: only a rare schedule shows it (tests/sim/MODEL.md, "What it
   * found"), so no bound of seeds is promised: a seed that catches it
   * counts, none within the bound is no failure */
  bool observable;
} mutant_def;

static const mutant_def mutants[] = {
    {"no-drift", HRL_MUTANT_NO_DRIFT, MODEL_MUTANT_NONE,
     "validity without the drift term", true},
    {"quorum-low", HRL_MUTANT_QUORUM_LOW, MODEL_MUTANT_NONE,
     "quorum N/2 instead of N/2 + 1", true},
    {"no-validity-check", HRL_MUTANT_NO_VALIDITY, MODEL_MUTANT_NONE,
     "a quorum grants even with no validity left", true},
    {"no-fence-round", HRL_MUTANT_NO_FENCE_ROUND, MODEL_MUTANT_NONE,
     "fence = the greatest INCR, no fence round", true},
    {"extend-from-end", HRL_MUTANT_EXTEND_FROM_END, MODEL_MUTANT_NONE,
     "an extend's validity counted from its round's end", true},
    {"no-cleanup", HRL_MUTANT_NO_CLEANUP, MODEL_MUTANT_NONE,
     "a failed attempt sends no release", true},
    {"no-aside", HRL_MUTANT_NO_ASIDE, MODEL_MUTANT_NONE,
     "a waiter keeps the masters a lost try won", true},
    {"unacked-untaken", HRL_MUTANT_UNACKED_UNTAKEN, MODEL_MUTANT_NONE,
     "a write whose WAIT found too few replicas is taken for one that did "
     "not take: no release",
     true},
    {"release-no-compare", 0, MODEL_RELEASE_NO_COMPARE,
     "the release scripts delete the key without comparing the token", true},
    {"fence-no-token", 0, MODEL_FENCE_NO_TOKEN,
     "the fence script raises the counter without our key", true},
    {"queue-no-ttl", 0, MODEL_QUEUE_NO_TTL,
     "the queue script gives the queue keys no TTL", true},
    {"handoff-at-message", HRL_MUTANT_HANDOFF_AT_MESSAGE, MODEL_MUTANT_NONE,
     "a hand-off taken without a claim is dated from its message", true},
    {"handoff-at-last-try", HRL_MUTANT_HANDOFF_AT_LAST_TRY, MODEL_MUTANT_NONE,
     "a hand-off taken without a claim is dated from the last refusal, "
     "not the first queue round",
     true},
    {"no-owed-cap", HRL_MUTANT_NO_OWED_CAP, MODEL_MUTANT_NONE,
     "an extend that went unanswered on a master does not cap the later "
     "extends of the hold there",
     false},
    {"handoff-px-window", 0, MODEL_HANDOFF_PX_WINDOW,
     "the queue script hands a listening waiter the window, not its ttl", true},
};
#define MUTANTS (int)(sizeof mutants / sizeof mutants[0])

bool select_mutant(const char *name, sim_options *o) {
  for (int i = 0; i < MUTANTS; i++) {
    if (strcmp(mutants[i].name, name) == 0) {
#ifndef HRL_SIM_MUTANTS
      if (mutants[i].core != 0) {
        fprintf(stderr,
                "hrl-sim: %s is a mutant of the core: run hrl-sim-mutants\n",
                name);
        return false;
      }
#endif
      hrl_sim_mutant = mutants[i].core;
      o->model_mutant = mutants[i].model;
      return true;
    }
  }
  fprintf(stderr, "hrl-sim: no mutant %s\n", name);
  return false;
}

bool write_all(int fd, const void *p, size_t n) {
  const char *b = p;
  while (n > 0) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR) {
      continue;
    }
    if (k <= 0) {
      return false;
    }
    b += k;
    n -= (size_t)k;
  }
  return true;
}

bool read_all(int fd, void *p, size_t n) {
  char *b = p;
  while (n > 0) {
    ssize_t k = read(fd, b, n);
    if (k < 0 && errno == EINTR) {
      continue;
    }
    if (k <= 0) {
      return false;
    }
    b += k;
    n -= (size_t)k;
  }
  return true;
}

/* ---- mutants ---- */

typedef struct mutant_result {
  uint64_t seed; /* 0: not caught */
  uint64_t tried;
  int kind;
} mutant_result;

/* The first seed in 1..max on which mutant m fails an invariant and the
 * core as shipped does not (a seed that fails either way proves nothing
 * about the mutant). */
static void hunt(int m, uint64_t max, mutant_result *out) {
  static sim_scenario sc;
  sim_options o = {0}, shipped = {0};
  memset(out, 0, sizeof *out);
  for (uint64_t seed = 1; seed <= max; seed++) {
    sim_result res;
    sim_scenario_generate(&sc, seed);
    select_mutant(mutants[m].name, &o);
    sim_run(&sc, &o, &res);
    out->tried++;
    if (res.violation == V_NONE) {
      continue;
    }
    hrl_sim_mutant = 0;
    sim_result control;
    sim_run(&sc, &shipped, &control);
    if (control.violation == V_NONE) {
      out->seed = seed;
      out->kind = res.violation;
      return;
    }
  }
}

/* Starts mutant m's hunt in a child that reports through a pipe; its
 * read end, or -1. */
static int hunt_child(int m, uint64_t max, pid_t *pid) {
  int p[2];
  if (pipe(p) != 0) {
    return -1;
  }
  *pid = fork();
  if (*pid == 0) {
    close(p[0]);
    mutant_result r;
    hunt(m, max, &r);
    _exit(write_all(p[1], &r, sizeof r) ? 0 : 1);
  }
  close(p[1]);
  if (*pid < 0) {
    close(p[0]);
    return -1;
  }
  return p[0];
}

int run_mutants(uint64_t max, uint64_t rare_max, int jobs, FILE *json) {
  mutant_result results[MUTANTS];
  int caught = 0, runnable = 0;
  /* Up to `jobs` hunts at once, the next starting as soon as one ends: a
   * long hunt does not hold up the others. */
  int fd[MUTANTS];
  pid_t pid[MUTANTS];
  int next = 0, running = 0;
  while (next < MUTANTS || running > 0) {
    while (running < jobs && next < MUTANTS) {
      int m = next++;
      results[m] = (mutant_result){0, 0, -1};
#ifndef HRL_SIM_MUTANTS
      if (mutants[m].core != 0) {
        continue; /* the core's: hrl-sim-mutants only */
      }
#endif
      fd[m] = hunt_child(m, mutants[m].observable ? max : rare_max, &pid[m]);
      if (fd[m] < 0) {
        return 2;
      }
      results[m].kind = -2; /* to read */
      running++;
    }
    if (running == 0) {
      continue;
    }
    pid_t done = waitpid(-1, NULL, 0);
    for (int m = 0; m < MUTANTS; m++) {
      if (results[m].kind != -2 || (done >= 0 && pid[m] != done)) {
        continue;
      }
      if (!read_all(fd[m], &results[m], sizeof results[m])) {
        results[m] = (mutant_result){0, 1, 0}; /* a hunt that died */
      }
      close(fd[m]);
      running--;
      break;
    }
  }
  if (json != NULL) {
    fprintf(json, "  \"mutants\": [\n");
  }
  for (int m = 0; m < MUTANTS; m++) {
    mutant_result *r = &results[m];
    if (r->kind == -1 && r->tried == 0) {
      printf("mutant %-20s (the core's: hrl-sim-mutants only)\n",
             mutants[m].name);
      continue;
    }
    if (!mutants[m].observable && r->seed == 0) {
      /* Not counted: the schedule that shows it is rare (MODEL.md). */
      printf("mutant %-20s not caught in %" PRIu64
             " schedules (a rare schedule, no bound): %s\n",
             mutants[m].name, r->tried, mutants[m].what);
    } else if (r->seed != 0) {
      runnable++;
      caught++;
      printf("mutant %-20s caught by seed %" PRIu64 " (%s) after %" PRIu64
             " schedules: %s\n",
             mutants[m].name, r->seed, sim_violation_name(r->kind), r->tried,
             mutants[m].what);
    } else {
      runnable++;
      printf("mutant %-20s NOT CAUGHT in %" PRIu64 " schedules: %s\n",
             mutants[m].name, r->tried, mutants[m].what);
    }
    if (json != NULL) {
      fprintf(json,
              "    {\"name\": \"%s\", \"what\": \"%s\", \"core\": %s, "
              "\"observable\": %s, "
              "\"seed\": %" PRIu64 ", \"tried\": %" PRIu64
              ", \"violation\": \"%s\"}%s\n",
              mutants[m].name, mutants[m].what,
              mutants[m].core ? "true" : "false",
              mutants[m].observable ? "true" : "false", r->seed, r->tried,
              r->seed ? sim_violation_name(r->kind) : "",
              m + 1 < MUTANTS ? "," : "");
    }
  }
  if (json != NULL) {
    fprintf(json, "  ],\n");
  }
  printf("mutants: %d of %d caught within %" PRIu64 " seeds each\n", caught,
         runnable, max);
  return caught == runnable ? 0 : 1;
}
