/*
 * Capacity planning: the cheapest clusters that serve a target request rate of a
 * scenario's workload within its SLOs (at `slo.attainment`).
 *
 * The scenario's `plan:` map lists the configurations allowed: GPU types, TP degrees,
 * max_num_seqs values, colocated and/or disaggregated serving with prefill:decode unit
 * ratios, and a GPU budget. For each candidate the planner finds the capacity of one unit
 * (a replica, or p prefill + d decode replicas) by bisection on the request rate, every
 * probe a simulation with the same seed (common random numbers across candidates); then
 * the units needed for the target, checked by simulating the whole cluster at the target
 * rate and adding units until it meets the SLOs. Candidates are ranked by cost per hour.
 *
 * Arrival patterns: with a trace workload every probe replays the trace's own arrivals
 * rescaled to the probed mean rate (its burstiness kept), so the capacity holds on the
 * real pattern; otherwise probes are the workload's gamma/Poisson process (a rate
 * profile's shape is dropped: the plan sizes for target_rate x plan.peak_factor, e.g. the
 * profile's peak).
 *
 * Ownership: sv_plan_run() returns a row array the caller frees with free().
 */
#ifndef SERVESIM_PLAN_H
#define SERVESIM_PLAN_H

#include <stdio.h>

#include "servesim/cost/catalog.h"
#include "servesim/base/error.h"
#include "servesim/cluster/scenario.h"
#include "servesim/studies/sections.h"

#define SV_BINDING_MAX 64 /* bytes of a binding SLO name */

typedef struct sv_plan_row {
    char gpu[SV_NAME_MAX];
    int tp;
    int disagg, p, d; /* disaggregated unit: p prefill + d decode replicas */
    long max_num_seqs;
    int ok; /* 0: infeasible or failed; error says why (whole: never cut) */
    char error[SV_ERRMSG_MAX];
    double unit_capacity; /* req/s one unit sustains within the SLOs */
    int unit_gpus;
    int units, gpus;         /* for the target rate */
    double attain_at_target; /* of the whole cluster at the target rate */
    double goodput_at_target;
    double cost_hour, cost_mtok, energy_tok;
    /* latency of the whole cluster at the target rate, ms: p90 and the SLO's percentile
     * (100 x slo.attainment) of TTFT and TPOT */
    double ttft_p90, tpot_p90, ttft_slo_pct, tpot_slo_pct;
    double goodput_per_gpu;       /* unit capacity / unit GPUs (DistServe's metric) */
    char binding[SV_BINDING_MAX]; /* ttft, tpot or e2el: the SLO that fails first past
                                     capacity; a layered contract's broken budget ("ttft
                                     p99", "chat: ttft p99") */
    long probes;                  /* simulations run */
    int calibration;              /* sv_calibration_t: the weaker of the GPU's and the profile's */
    double band_pct; /* expected throughput error at that status (sv_band_throughput_pct) */
} sv_plan_row_t;

/*
 * The highest rate at which `base` (its pools as given) meets its SLOs for at least
 * slo.attainment of `requests` requests, found by bracketing and bisection to relative
 * tolerance tol. binding (>= SV_BINDING_MAX bytes) names the SLO least met just past it
 * (or the percentile budget that broke, for a layered contract). 0 when even
 * a very light load misses the SLOs (*rate = 0).
 */
int sv_capacity(const sv_scenario_t *base, long requests, double tol, double *rate, char *binding,
                long *probes, sv_error_t *err);

int sv_plan_run(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                int jobs, sv_plan_row_t **rows, int *nrows, FILE *progress, sv_error_t *err);

/* Rank (by cost per hour, infeasible last), print the table, write plan.csv and plan.json
 * into outdir (NULL: print only). */
int sv_plan_write(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, sv_plan_row_t *rows, int nrows,
                  const char *outdir, FILE *table, sv_error_t *err);

#endif
