/*
 * hrl-sim: runs seeded worlds against the real protocol code.
 *
 *   hrl-sim --seeds 1-10000 [--jobs 2]   a slice of seeds; on a violation:
 *                                        its seed, a shrunk scenario file
 *                                        and that scenario's trace
 *   hrl-sim --seed S [--trace]           one world
 *   hrl-sim --replay FILE [--trace]      a scenario file, exactly
 *   hrl-sim --regress FILE...            scenario files that must pass
 *   hrl-sim --mutants MAX[,RARE] [--jobs 2]  every mutant (hrl-sim-mutants
 *                                        has the core's), each until a seed
 *                                        in 1..MAX catches it (1..RARE for
 *                                        those without a bound: mutants.c)
 *   --mutant NAME                        run with that mutant
 *   --json FILE                          figures for tests/reliability/
 *                                        report.py
 *   --failures DIR                       where shrunk scenarios go
 *                                        (default build/sim-failures)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "world.h"

/* CPU seconds of this process and its finished children (the worker
 * processes). */
static double children_cpu(void) {
  double s = 0;
  int who[2] = {RUSAGE_SELF, RUSAGE_CHILDREN};
  for (int k = 0; k < 2; k++) {
    struct rusage ru;
    getrusage(who[k], &ru);
    s += (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  }
  return s;
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- a slice of seeds, over several processes ---- */

typedef struct slice_result {
  uint64_t schedules, events, violations, grants, fenced_grants;
  uint64_t writes_refused;
  int64_t max_mutex_wait;
  uint64_t max_mutex_seed;
  double max_free_part;
  uint64_t max_free_seed;
  uint64_t count[V_KINDS];
  uint64_t first_seed[V_KINDS];
  sim_coverage cov;
} slice_result;

static void run_slice(uint64_t from, uint64_t to, int job, int jobs,
                      const sim_options *o, slice_result *out) {
  static sim_scenario sc;
  memset(out, 0, sizeof *out);
  for (uint64_t seed = from + (uint64_t)job; seed <= to;
       seed += (uint64_t)jobs) {
    sim_result res;
    sim_scenario_generate(&sc, seed);
    char why[256];
    if (sim_scenario_assumed(&sc, why, sizeof why)) {
      sim_run(&sc, o, &res);
    } else { /* the generator's fault, not the core's: no world to run */
      memset(&res, 0, sizeof res);
      res.violation = V_CRASH;
      snprintf(res.what, sizeof res.what, "outside the model: %s", why);
    }
    out->schedules++;
    out->events += res.events;
    out->grants += res.grants;
    out->fenced_grants += res.fenced_grants;
    out->writes_refused += res.writes_refused;
    if (res.max_free_part > out->max_free_part) {
      out->max_free_part = res.max_free_part;
      out->max_free_seed = seed;
    }
    if (res.max_mutex_wait > out->max_mutex_wait) {
      out->max_mutex_wait = res.max_mutex_wait;
      out->max_mutex_seed = seed;
    }
    if (res.violation != V_NONE) {
      if (o->list) {
        int driver = o->driver > 0 ? o->driver - 1 : sc.driver;
        char line[700];
        int n =
            snprintf(line, sizeof line,
                     "violation seed %" PRIu64 " %s (%s driver, N=%d): %s\n",
                     seed, sim_violation_name(res.violation),
                     driver == DRIVER_SERIAL   ? "serial"
                     : driver == DRIVER_POOLED ? "pooled"
                                               : "shared",
                     sc.masters, res.what);
        if (write(1, line, (size_t)n) < 0) {
          /* the count below still says it */
        }
      }
      out->violations++;
      if (out->count[res.violation]++ == 0) {
        out->first_seed[res.violation] = seed;
      }
    }
  }
  out->cov = *cov_current();
}

static void merge(slice_result *into, const slice_result *r) {
  into->schedules += r->schedules;
  into->events += r->events;
  into->violations += r->violations;
  into->grants += r->grants;
  into->fenced_grants += r->fenced_grants;
  into->writes_refused += r->writes_refused;
  if (r->max_free_part > into->max_free_part) {
    into->max_free_part = r->max_free_part;
    into->max_free_seed = r->max_free_seed;
  }
  if (r->max_mutex_wait > into->max_mutex_wait) {
    into->max_mutex_wait = r->max_mutex_wait;
    into->max_mutex_seed = r->max_mutex_seed;
  }
  for (int k = 0; k < V_KINDS; k++) {
    if (r->count[k] > 0 &&
        (into->count[k] == 0 || r->first_seed[k] < into->first_seed[k])) {
      into->first_seed[k] = r->first_seed[k];
    }
    into->count[k] += r->count[k];
  }
  cov_merge(&into->cov, &r->cov);
}

/* Runs seeds from..to on `jobs` processes; false when one failed. */
static bool run_parallel(uint64_t from, uint64_t to, int jobs,
                         const sim_options *o, slice_result *total) {
  memset(total, 0, sizeof *total);
  if (jobs == 1) { /* in this process: what valgrind and ASan look at */
    run_slice(from, to, 0, 1, o, total);
    return true;
  }
  int fds[64];
  pid_t pids[64];
  for (int j = 0; j < jobs; j++) {
    int p[2];
    if (pipe(p) != 0) {
      return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
      return false;
    }
    if (pid == 0) {
      close(p[0]);
      static slice_result r;
      run_slice(from, to, j, jobs, o, &r);
      _exit(write_all(p[1], &r, sizeof r) ? 0 : 1);
    }
    close(p[1]);
    fds[j] = p[0];
    pids[j] = pid;
  }
  bool ok = true;
  for (int j = 0; j < jobs; j++) {
    static slice_result r;
    ok &= read_all(fds[j], &r, sizeof r);
    close(fds[j]);
    int status;
    waitpid(pids[j], &status, 0);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) {
      merge(total, &r);
    }
  }
  return ok;
}

/* ---- a violation: shrink, save, replay with its trace ---- */

static void report_failure(uint64_t seed, const sim_options *base,
                           const char *dir, int budget) {
  static sim_scenario sc;
  sim_options o = *base;
  o.trace = false;
  sim_result res;
  sim_scenario_generate(&sc, seed);
  char why[256];
  if (!sim_scenario_assumed(&sc, why, sizeof why)) {
    printf("seed %" PRIu64 ": crash: outside the model: %s\n", seed, why);
    return;
  }
  if (o.driver > 0) {
    sc.driver = o.driver - 1; /* written into the scenario file */
    o.driver = 0;
  }
  sim_run(&sc, &o, &res);
  printf("seed %" PRIu64 ": %s: %s\n", seed, sim_violation_name(res.violation),
         res.what);
  if (res.violation == V_NONE) {
    printf("  (it does not fail in a process of its own: not replayable)\n");
    return;
  }
  int before = sc.sessions + sc.faults;
  int runs = sim_shrink(&sc, &o, res.violation, budget);
  mkdir(dir, 0777);
  char path[512];
  snprintf(path, sizeof path, "%s/seed-%" PRIu64 ".txt", dir, seed);
  if (!sim_scenario_write(&sc, path)) {
    printf("  cannot write %s\n", path);
    return;
  }
  printf("  shrunk from %d to %d sessions and faults in %d runs: %s\n", before,
         sc.sessions + sc.faults, runs, path);
  printf("  replay: hrl-sim%s --replay %s --trace\n",
         hrl_sim_mutant || o.model_mutant ? " --mutant ..." : "", path);
  printf("--- scenario ---\n");
  sim_scenario_write(&sc, "-");
  printf("--- trace ---\n");
  o.trace = true;
  sim_run(&sc, &o, &res);
  printf("--- end: %s: %s ---\n", sim_violation_name(res.violation), res.what);
}

/* ---- the command line ---- */

static int usage(void) {
  fprintf(stderr,
          "usage: hrl-sim --seeds A-B | --seed S | --replay FILE | "
          "--regress FILE... | --mutants MAX[,RARE]\n"
          "       [--jobs N] [--mutant NAME] [--driver serial|pooled|shared] "
          "[--trace] [--list]\n"
          "       [--json FILE] [--failures DIR] [--shrink-budget N] "
          "[--missing]\n");
  return 2;
}

int main(int argc, char **argv) {
  char why[256];
  if (!scripts_up_to_date(why, sizeof why)) {
    fprintf(stderr, "hrl-sim: %s\n", why);
    return 2;
  }
  sim_options o = {0};
  uint64_t from = 0, to = 0, mutant_max = 0, rare_max = 0;
  const char *replay = NULL, *json_path = NULL;
  const char *failures = "build/sim-failures";
  int jobs = 1, budget = 2000, regress_first = 0;
  bool missing = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--seeds") == 0 && v != NULL) {
      if (sscanf(v, "%" SCNu64 "-%" SCNu64, &from, &to) != 2 || from > to) {
        return usage();
      }
      i++;
    } else if (strcmp(a, "--seed") == 0 && v != NULL) {
      from = to = strtoull(v, NULL, 10);
      i++;
    } else if (strcmp(a, "--replay") == 0 && v != NULL) {
      replay = v;
      i++;
    } else if (strcmp(a, "--mutants") == 0 && v != NULL) {
      char *rest;
      mutant_max = strtoull(v, &rest, 10);
      rare_max = *rest == ',' ? strtoull(rest + 1, NULL, 10) : mutant_max;
      i++;
    } else if (strcmp(a, "--mutant") == 0 && v != NULL) {
      if (!select_mutant(v, &o)) {
        return 2;
      }
      i++;
    } else if (strcmp(a, "--jobs") == 0 && v != NULL) {
      jobs = atoi(v);
      jobs = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
      i++;
    } else if (strcmp(a, "--json") == 0 && v != NULL) {
      json_path = v;
      i++;
    } else if (strcmp(a, "--failures") == 0 && v != NULL) {
      failures = v;
      i++;
    } else if (strcmp(a, "--shrink-budget") == 0 && v != NULL) {
      budget = atoi(v);
      i++;
    } else if (strcmp(a, "--trace") == 0) {
      o.trace = true;
    } else if (strcmp(a, "--driver") == 0 && v != NULL) {
      static const char *const names[DRIVER_KINDS] = {"serial", "pooled",
                                                      "shared"};
      o.driver = -1;
      for (int k = 0; k < DRIVER_KINDS; k++) {
        if (strcmp(v, names[k]) == 0) {
          o.driver = k;
        }
      }
      if (o.driver < 0) {
        return usage();
      }
      o.driver++; /* 0: as the scenario says */
      i++;
    } else if (strcmp(a, "--list") == 0) {
      o.list = true;
    } else if (strcmp(a, "--missing") == 0) {
      missing = true;
    } else if (strcmp(a, "--regress") == 0) {
      regress_first = i + 1;
      break;
    } else {
      return usage();
    }
  }
  if (regress_first > 0) {
    int failed = 0, n = 0;
    for (int i = regress_first; i < argc; i++, n++) {
      static sim_scenario sc;
      sim_result res;
      char err[256];
      if (!sim_scenario_read(&sc, argv[i], err, sizeof err)) {
        printf("%s\n", err);
        failed++;
        continue;
      }
      sim_run(&sc, &o, &res);
      bool ok = (int)res.violation == sc.expect;
      printf("%s %s%s%s%s\n", ok ? "ok  " : "FAIL", argv[i],
             sc.expect != V_NONE ? " (a known finding: " : "",
             sc.expect != V_NONE ? sim_violation_name(sc.expect) : "",
             sc.expect != V_NONE ? ")" : "");
      if (!ok) {
        printf("     got %s%s%s\n", sim_violation_name(res.violation),
               res.violation != V_NONE ? ": " : "", res.what);
      }
      failed += !ok;
    }
    printf("regressions: %d of %d pass\n", n - failed, n);
    return failed > 0;
  }
  if (replay != NULL) {
    static sim_scenario sc;
    sim_result res;
    char err[256];
    if (!sim_scenario_read(&sc, replay, err, sizeof err)) {
      fprintf(stderr, "hrl-sim: %s\n", err);
      return 2;
    }
    sim_run(&sc, &o, &res);
    printf("replay %s: %s%s%s (%" PRIu64 " events, %.1f ms simulated)\n",
           replay, sim_violation_name(res.violation), res.violation ? ": " : "",
           res.what, res.events, (double)res.end_us / 1000.0);
    return res.violation != V_NONE;
  }
  FILE *json = NULL;
  if (json_path != NULL && (json = fopen(json_path, "w")) == NULL) {
    fprintf(stderr, "hrl-sim: cannot write %s\n", json_path);
    return 2;
  }
  if (json != NULL) {
    fprintf(json, "{\n");
  }
  int rc = 0;
  if (mutant_max > 0) {
    rc = run_mutants(mutant_max, rare_max, jobs, json);
  }
  if (to > 0) {
    if (from == to && o.trace) {
      static sim_scenario sc;
      sim_result res;
      sim_scenario_generate(&sc, from);
      sim_run(&sc, &o, &res);
      printf("seed %" PRIu64 ": %s%s%s\n", from,
             sim_violation_name(res.violation), res.violation ? ": " : "",
             res.what);
      return res.violation != V_NONE;
    }
    double t0 = seconds_now(), cpu0 = children_cpu();
    slice_result total;
    if (!run_parallel(from, to, jobs, &o, &total)) {
      fprintf(stderr, "hrl-sim: a worker process failed\n");
      return 2;
    }
    double took = seconds_now() - t0, cpu = children_cpu() - cpu0;
    int reached, listed;
    cov_report(&total.cov, &reached, &listed, missing, stdout);
    printf("longest a name stayed free while a live waiter waited: %.0f %% "
           "of the liveness bound, seed %" PRIu64 "\n",
           100.0 * total.max_free_part, total.max_free_seed);
    printf("longest wait of a holder's release, extend or renewal for its "
           "client's mutex (serial driver): %.1f ms, seed %" PRIu64 "\n",
           (double)total.max_mutex_wait / 1000.0, total.max_mutex_seed);
    for (int k = 0; k < V_KINDS; k++) {
      if (total.count[k] > 0) {
        printf("  %" PRIu64 " x %s, first at seed %" PRIu64 "\n",
               total.count[k], sim_violation_name(k), total.first_seed[k]);
      }
    }
    printf("sim: %" PRIu64 " schedules (seeds %" PRIu64 "-%" PRIu64
           "), %" PRIu64 " violations, %.0f schedules/s on %d jobs "
           "(%.1f s; %.0f a CPU second; %.0f events a schedule, %" PRIu64
           " grants); coverage %d of %d protocol states\n",
           total.schedules, from, to, total.violations,
           (double)total.schedules / took, jobs, took,
           (double)total.schedules / (cpu > 0 ? cpu : took),
           (double)total.events / (double)total.schedules, total.grants,
           reached, listed);
    if (json != NULL) {
      fprintf(json,
              "  \"schedules\": %" PRIu64 ", \"seeds\": \"%" PRIu64 "-%" PRIu64
              "\", \"seconds\": %.1f, \"per_second\": %.0f, "
              "\"cpu_seconds\": %.1f, \"per_cpu_second\": %.0f, "
              "\"jobs\": %d,\n  \"violations\": %" PRIu64
              ", \"grants\": %" PRIu64 ", \"fenced_grants\": %" PRIu64
              ", \"events_per_schedule\": %.1f,\n  \"coverage\": "
              "{\"reached\": %d, \"listed\": %d},\n"
              "  \"max_mutex_wait_ms\": %.1f, \"max_mutex_wait_seed\": %" PRIu64
              ", \"max_free_part\": %.3f, \"max_free_seed\": %" PRIu64 ",\n",
              total.schedules, from, to, took, (double)total.schedules / took,
              cpu, (double)total.schedules / (cpu > 0 ? cpu : took), jobs,
              total.violations, total.grants, total.fenced_grants,
              (double)total.events / (double)total.schedules, reached, listed,
              (double)total.max_mutex_wait / 1000.0, total.max_mutex_seed,
              total.max_free_part, total.max_free_seed);
    }
    for (int k = 0; k < V_KINDS && !o.list; k++) {
      if (total.count[k] > 0) {
        report_failure(total.first_seed[k], &o, failures, budget);
        rc = 1;
        break; /* one shrunk trace is enough to start from */
      }
    }
  }
  if (json != NULL) {
    fprintf(json, "  \"format\": 1\n}\n");
    fclose(json);
  }
  if (to == 0 && mutant_max == 0) {
    return usage();
  }
  return rc;
}
