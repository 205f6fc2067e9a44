/*
 * A one-replica rig for tests that drive a replica step by step, as the simulator does: a
 * scenario's model and GPU (Llama-3.1-8B on an H100) for the cost model, a replica of the
 * given blocks and settings, and requests of given lengths, priorities and start times
 * (none submitted). Used by test_v1sched.c and test_contract.c.
 *
 * Ownership: tu_rig_new fills caller storage; tu_rig_free frees what it made.
 */
#ifndef SERVESIM_TESTRIG_H
#define SERVESIM_TESTRIG_H

#include <string.h>

#include "servesim/engine/replica.h"
#include "servesim/metrics/metrics.h"
#include "testsim.h"

typedef struct rig {
    sv_scenario_t *sc;
    sv_perf_t perf;
    sv_metrics_t *m;
    sv_reqpool_t pool;
    sv_replica_t *r;
} rig_t;

/* The replica's settings; budget 0 keeps the GPU's default token budget. */
typedef struct rigcfg {
    long kv_blocks, seqs, budget, threshold;
    int priority, caching;
    int sglang, ignore_eos; /* the sglang scheduler (overlap loop off), engine.ignore_eos */
    int overlap;            /* ... with its overlap loop on (engine.overlap_schedule) */
} rigcfg_t;

/* A replica (16-token blocks) as c says, and n requests of the given input and output
 * tokens, priorities and start times (NULL: 0), none submitted yet. */
static inline void tu_rig_new(rig_t *g, const sv_catalog_t *cat, const rigcfg_t *c, int n,
                              const int *input, const int *output, const int *prio,
                              const double *start)
{
    sv_error_t err;
    memset(g, 0, sizeof *g);
    /* Synchronous steps, a request visible when submitted: the hand counts of the rig's
     * tests follow vLLM's Scheduler.schedule step by step; async scheduling's one-step lag
     * and the API server's path (on by default for the vllm profile) are test_vllm.c's. */
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {async_scheduling: false, api_server_ms: 0}\n"
                                  "workload: {num_requests: 1, input: 100, output: 10}\n",
                                  NULL, 0, &g->sc, &err),
                     0);
    ck_assert_int_eq(
        sv_perf_init(&g->perf, &g->sc->pools[0].gpu, &g->sc->model, &g->sc->pools[0].perf, &err),
        0);
    g->m = sv_metrics_new(&g->sc->metrics, 1);
    sv_engine_cfg_t e = g->sc->pools[0].engine;
    ck_assert_int_eq(e.block_size, 16);
    e.max_model_len = 4096;
    e.prefix_caching = c->caching;
    e.max_num_seqs = c->seqs;
    e.priority_policy = c->priority;
    if (c->budget > 0) e.max_num_batched_tokens = c->budget;
    e.long_prefill_threshold = c->threshold;
    if (c->sglang) {
        e.scheduler = SV_SCHED_SGLANG;
        e.overlap_schedule = c->overlap;
        e.ignore_eos = c->ignore_eos;
    }
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(sv_reqpool_add(&g->pool), i);
        g->pool.r[i].input = input[i];
        g->pool.r[i].output = output[i];
        g->pool.r[i].priority = prio ? prio[i] : 0;
        g->pool.r[i].arrival = g->pool.r[i].start = start ? start[i] : 0.0;
    }
    ck_assert_int_eq(sv_replica_new(0, &g->perf, c->kv_blocks, &e, &g->pool, g->m, &g->r, &err),
                     0);
}

/* Steps until nothing is left (or max steps); returns the time. */
static inline double tu_rig_steps(rig_t *g, double t, int max)
{
    for (int k = 0; k < max; k++) {
        double d = sv_replica_start_step(g->r, t);
        if (d <= 0) break;
        t += d;
        ck_assert_int_eq(sv_replica_end_step(g->r, t), 0);
    }
    return t;
}

static inline void tu_rig_free(rig_t *g)
{
    sv_replica_free(g->r);
    sv_metrics_free(g->m);
    sv_reqpool_free(&g->pool);
    sv_scenario_free(g->sc);
}

#endif
