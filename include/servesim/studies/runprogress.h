/*
 * Progress of one long `servesim run` on stderr, like sweep's and plan's: the simulated
 * time reached, its share of the time the workload should take (its duration, or its
 * requests at its rate) and an estimate of the wall time left. Silent for the first
 * SV_RUN_PROGRESS_AFTER_S seconds, so short runs print nothing. It observes the run
 * through the simulator's step hook (cluster/sim.h), chaining to other hooks (a tracer),
 * and changes nothing in the result.
 *
 * Ownership: the caller owns the struct and the FILE; nothing is allocated.
 */
#ifndef SERVESIM_RUNPROGRESS_H
#define SERVESIM_RUNPROGRESS_H

#include <stdio.h>

#include "servesim/base/progress.h"
#include "servesim/cluster/sim.h"

#define SV_RUN_PROGRESS_AFTER_S 2.0 /* wall seconds before the first line */

typedef struct sv_run_progress {
    sv_progress_t p;
    sv_sim_hooks_t hooks;       /* pass these to sv_sim_run_hooked */
    const sv_sim_hooks_t *next; /* called after this (NULL: none) */
    double t0, expect_s;        /* wall start; simulated seconds expected (0: unknown) */
    double last;                /* wall time of the last update */
    long steps;
    int shown;
} sv_run_progress_t;

/* Start observing a run of sc (f NULL: silent), chaining to next (or NULL). */
void sv_run_progress_start(sv_run_progress_t *rp, const sv_scenario_t *sc,
                           const sv_sim_hooks_t *next, FILE *f);
/* End the progress line (if any was shown). */
void sv_run_progress_end(sv_run_progress_t *rp);

#endif
