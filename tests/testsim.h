/*
 * Helpers for tests that run whole simulations: a scenario written from text and run,
 * and the accounting every run must satisfy (every request ended, counts adding up, no KV
 * block or owed token left on any replica).
 */
#ifndef SERVESIM_TESTSIM_H
#define SERVESIM_TESTSIM_H

#include <math.h>
#include <unistd.h>

#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "testutil.h"

/* Load scenario text (with overrides) from a temporary file. */
static inline int tu_load_yaml(const sv_catalog_t *cat, const char *yaml, const char **sets,
                               int nsets, sv_scenario_t **sc, sv_error_t *err)
{
    char path[] = "/tmp/sv_test_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    ck_assert(write(fd, yaml, strlen(yaml)) == (ssize_t)strlen(yaml));
    close(fd);
    int rc = sv_scenario_load(path, sets, nsets, cat, sc, err);
    unlink(path);
    return rc;
}

/* Load and run; both must succeed. */
/* For a test that drives a replica by hand (sv_replica_new): the scenario text's first
 * pool's cost model, in *perf, and a metrics sink for one replica; the caller frees *m and
 * *sc. */
static inline void tu_replica_parts(const sv_catalog_t *cat, const char *yaml, sv_scenario_t **sc,
                                    sv_perf_t *perf, sv_metrics_t **m)
{
    sv_error_t err;
    ck_assert_msg(tu_load_yaml(cat, yaml, NULL, 0, sc, &err) == 0, "scenario: %s", err.msg);
    ck_assert_msg(sv_perf_init(perf, &(*sc)->pools[0].gpu, &(*sc)->model, &(*sc)->pools[0].perf,
                               &err) == 0,
                  "cost model: %s", err.msg);
    *m = sv_metrics_new(&(*sc)->metrics, 1);
}

static inline sv_result_t *tu_run_yaml(const sv_catalog_t *cat, const char *yaml, const char **sets,
                                       int nsets, sv_scenario_t **sc)
{
    sv_error_t err;
    ck_assert_msg(tu_load_yaml(cat, yaml, sets, nsets, sc, &err) == 0, "scenario: %s", err.msg);
    sv_result_t *res;
    ck_assert_msg(sv_sim_run(*sc, &res, &err) == 0, "run: %s", err.msg);
    return res;
}

/* Load and run under --check (the per-step recounts); both must succeed. */
static inline sv_result_t *tu_run_checked(const sv_catalog_t *cat, const char *yaml,
                                          sv_scenario_t **sc)
{
    sv_error_t err;
    ck_assert_msg(tu_load_yaml(cat, yaml, NULL, 0, sc, &err) == 0, "scenario: %s", err.msg);
    (*sc)->check = 1;
    sv_result_t *res;
    ck_assert_msg(sv_sim_run(*sc, &res, &err) == 0, "run: %s", err.msg);
    return res;
}

/* The time a replica takes for a step the cost model prices at c: c->total, or with async
 * scheduling max(GPU part, CPU part), the engine's per-step and per-sequence cost being the
 * CPU's, which overlaps the GPU's work (sim/engine/replica.c, sv_replica_start_step). */
static inline double tu_step_s(const sv_step_cost_t *c, int async)
{
    double cpu = c->eng_step + c->eng_seq;
    return async ? fmax(c->total - cpu, cpu) : c->total;
}

static inline void tu_done(sv_scenario_t *sc, sv_result_t *res)
{
    sv_result_free(res);
    sv_scenario_free(sc);
}

static inline void tu_check_accounting(const sv_result_t *res)
{
    const sv_summary_t *s = &res->summary;
    ck_assert_int_eq(s->completed + s->failed, (long)res->pool.n);
    long by = 0;
    for (int i = 1; i < SV_FAIL_COUNT; i++)
        by += s->failed_by[i];
    ck_assert_int_eq(by, s->failed);
    ck_assert_int_eq(s->failed_by[SV_FAIL_NONE], 0);
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        ck_assert(r->state == SV_RQ_DONE || r->state == SV_RQ_FAILED);
        if (r->state == SV_RQ_FAILED) ck_assert(r->fail != SV_FAIL_NONE);
        if (r->state == SV_RQ_DONE) {
            ck_assert(r->scheduled >= r->start && r->first_token > r->scheduled);
            ck_assert(r->last_token >= r->first_token && r->end == r->last_token);
        }
    }
    for (int i = 0; i < res->replicas; i++) {
        const sv_replica_stats_t *st = &res->rstats[i];
        ck_assert(st->peak_blocks_used <= res->pools[res->rpool[i]].mem.kv_blocks);
        ck_assert_msg(st->blocks_free_end == st->blocks_total,
                      "replica %d (pool %d): %ld of %ld blocks free at the end", i, res->rpool[i],
                      st->blocks_free_end, st->blocks_total);
        ck_assert_int_eq(st->owed_end, 0);
    }
}

#endif
