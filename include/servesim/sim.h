/*
 * The simulator: one run of a scenario. It owns the event queue and drives the client
 * (arrivals, the max_concurrency semaphore, timeouts), the router and the replicas,
 * feeds metrics, and leaves a result for the report.
 *
 * Event order at equal times is insertion order (engine.h), so a run is a pure
 * function of the scenario and its seed.
 *
 * Ownership: sv_sim_run() returns a result the caller frees with sv_result_free(); the
 * result borrows the scenario, which must outlive it.
 */
#ifndef SERVESIM_SIM_H
#define SERVESIM_SIM_H

#include "servesim/error.h"
#include "servesim/metrics.h"
#include "servesim/perf.h"
#include "servesim/replica.h"
#include "servesim/request.h"
#include "servesim/scenario.h"

typedef struct sv_result {
    const sv_scenario_t *sc;
    sv_perf_t perf;
    sv_memplan_t mem;
    long max_model_len;
    sv_reqpool_t pool;
    sv_metrics_t *metrics;
    sv_summary_t summary;
    int replicas;
    sv_replica_stats_t *rstats; /* one per replica */
    long kv_blocks;             /* per replica */
    double kv_usage_p50, kv_usage_p99, kv_usage_max; /* over time-series samples, 0..1 */
    long preemptions;
    double busy_share;      /* mean over replicas of busy time / duration */
    double gpus;            /* replicas x tp */
    double cost_usd;        /* gpus x price x duration */
    double energy_j;        /* idle power all along + dynamic power while busy */
    double cost_per_mtok;   /* USD per million output tokens */
    double energy_per_tok;  /* J per output token */
    long events;
} sv_result_t;

int sv_sim_run(const sv_scenario_t *sc, sv_result_t **out, sv_error_t *err);
void sv_result_free(sv_result_t *res);

#endif
