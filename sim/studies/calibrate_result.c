/*
 * `servesim calibrate result`: fit a few settings to one real benchmark result by
 * replaying it. Each trial loads the scenario with the caller's --set overrides and the
 * trial values (so every key goes through the scenario loader and its range checks),
 * replaces the workload by the result's requests at their send times (replay.h), runs the
 * simulation and scores it against the result: the sum over the mean and median TTFT, TPOT
 * and ITL that the file holds of the squared log of simulated / measured. The search is
 * the coordinate golden-section search `calibrate runs` uses (calibrate_int.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "servesim/cluster/sim.h"
#include "servesim/studies/calibrate.h"
#include "servesim/studies/replay.h"
#include "studies/calibrate_int.h"

/* The keys `calibrate result` fits, each with the range it searches (inside the range
 * the scenario loader accepts) and what it moves. */
static const struct {
    const char *key;
    double lo, hi;
} result_keys[] = {
    {"hardware.memory_efficiency", 0.2, 1.0},  /* decode steps read weights and KV: TPOT, ITL */
    {"hardware.compute_efficiency", 0.1, 1.0}, /* prefill: TTFT */
    {"hardware.iteration_overhead_ms", 0.0, 20.0}, /* every step: TPOT, ITL, TTFT */
    {"hardware.seq_overhead_us", 0.0, 200.0},      /* every sequence of a step */
    {"engine.api_server_ms", 0.0, 500.0},          /* the server before the first step: TTFT */
};
#define N_RESULT_KEYS (sizeof result_keys / sizeof result_keys[0])

typedef struct res_ctx {
    const char *scenario;
    const char *const *sets;
    int nsets, nkeys;
    const char *keys[SV_FIT_MAX_PARAMS];
    const sv_catalog_t *cat;
    const sv_bench_t *real;
    double sim[SV_CM_COUNT]; /* the last trial's metrics, in compare's order and units */
    long replayed;
    sv_error_t *err;
    int rc;
} res_ctx_t;

/* compare's metric m (SV_CM_LAT_FIRST + 4 * latency + statistic) from a summary. */
static double summary_metric(const sv_summary_t *s, int m)
{
    if (m == SV_CM_REQ_TPUT) return s->request_throughput;
    if (m == SV_CM_OUT_TPUT) return s->output_throughput;
    if (m == SV_CM_TOTAL_TPUT) return s->total_token_throughput;
    int l = (m - SV_CM_LAT_FIRST) / 4, st = (m - SV_CM_LAT_FIRST) % 4;
    const sv_stat_t *v = l == SV_LM_TTFT ? &s->ttft : l == SV_LM_TPOT ? &s->tpot
                                                    : l == SV_LM_ITL  ? &s->itl
                                                                      : &s->e2el;
    return st == 0 ? v->mean : st == 1 ? v->median : NAN; /* p90/p99: not fitted */
}

/* Whether metric m is one the fit scores: the mean or median of TTFT, TPOT or ITL. */
static int scored(int m)
{
    if (m < SV_CM_LAT_FIRST) return 0;
    int l = (m - SV_CM_LAT_FIRST) / 4, st = (m - SV_CM_LAT_FIRST) % 4;
    return l != SV_LM_E2EL && st <= 1;
}

/* Simulate the replay at x; fills c->sim. */
static int trial(res_ctx_t *c, const double *x)
{
    char buf[SV_FIT_MAX_PARAMS][128];
    const char *sets[256 + SV_FIT_MAX_PARAMS];
    int n = 0;
    for (int i = 0; i < c->nsets && n < 256; i++)
        sets[n++] = c->sets[i];
    for (int k = 0; k < c->nkeys; k++) {
        snprintf(buf[k], sizeof buf[k], "%s=%.17g", c->keys[k], x[k]);
        sets[n++] = buf[k];
    }
    sv_scenario_t *sc = NULL;
    sv_result_t *res = NULL;
    long skipped = 0;
    int rc = sv_scenario_load(c->scenario, sets, n, c->cat, &sc, c->err);
    if (!rc) rc = sv_replay_apply(sc, c->real, &skipped, c->err);
    if (!rc) rc = sv_sim_run(sc, &res, c->err);
    if (!rc) {
        for (int m = 0; m < SV_CM_COUNT; m++)
            c->sim[m] = summary_metric(&res->summary, m);
        c->replayed = (long)res->pool.n;
    }
    sv_result_free(res);
    sv_scenario_free(sc);
    return rc;
}

static double res_cost(void *ctx, const double *x)
{
    res_ctx_t *c = ctx;
    if (c->rc || (c->rc = trial(c, x))) return NAN;
    double ss = 0;
    for (int m = 0; m < SV_CM_COUNT; m++)
        if (scored(m) && c->real->has[m] && c->real->value[m] > 0 && c->sim[m] > 0) {
            double e = log(c->sim[m] / c->real->value[m]);
            ss += e * e;
        }
    return ss;
}

int sv_calibrate_result(const char *scenario, const char *const *sets, int nsets,
                        const sv_catalog_t *cat, const sv_bench_t *real,
                        const char *const *keys, int nkeys, const sv_fit_opts_t *o,
                        sv_result_fit_t *out, sv_error_t *err)
{
    memset(out, 0, sizeof *out);
    if (nkeys < 1 || nkeys > SV_FIT_MAX_PARAMS)
        return sv_errorf(err, SV_EINVAL, "calibrate result: --fit takes 1 to %d keys",
                         SV_FIT_MAX_PARAMS);
    res_ctx_t c = {.scenario = scenario, .sets = sets, .nsets = nsets, .cat = cat,
                   .real = real, .err = err};
    double x[SV_FIT_MAX_PARAMS];
    for (int k = 0; k < nkeys; k++) {
        size_t j = 0;
        while (j < N_RESULT_KEYS && strcmp(keys[k], result_keys[j].key))
            j++;
        if (j == N_RESULT_KEYS)
            return sv_errorf(err, SV_ENOKEY,
                             "calibrate result: --fit %s: expected hardware.memory_efficiency, "
                             "hardware.compute_efficiency, hardware.iteration_overhead_ms, "
                             "hardware.seq_overhead_us or engine.api_server_ms",
                             keys[k]);
        c.keys[k] = out->fit.names[k] = keys[k];
        out->lo[k] = result_keys[j].lo, out->hi[k] = result_keys[j].hi;
        x[k] = 0.5 * (out->lo[k] + out->hi[k]);
    }
    for (int m = 0; m < SV_CM_COUNT; m++) {
        out->has[m] = real->has[m];
        out->real[m] = real->value[m];
        out->scored[m] = scored(m) && real->has[m] && real->value[m] > 0;
        out->fit.n += out->scored[m];
    }
    if (out->fit.n == 0)
        return sv_errorf(err, SV_EINVAL,
                         "%s: calibrate result: the file holds none of the mean and median "
                         "TTFT, TPOT and ITL the fit compares",
                         real->path);
    int rc = trial(&c, x); /* nkeys still 0: the scenario as it is */
    if (rc) return rc;
    memcpy(out->before, c.sim, sizeof c.sim);
    c.nkeys = nkeys;
    int sweeps = o && o->max_iter < 4 ? o->max_iter : 4;
    int it = sv__golden_descent(res_cost, &c, nkeys, out->lo, out->hi, x, sweeps);
    if (c.rc) return c.rc;
    if ((rc = trial(&c, x))) return rc;
    memcpy(out->after, c.sim, sizeof c.sim);
    out->replayed = c.replayed;
    out->fit.what = "result";
    out->fit.np = nkeys;
    out->fit.iterations = it;
    double sum = 0;
    for (int m = 0; m < SV_CM_COUNT; m++)
        if (out->scored[m]) {
            double ape = 100.0 * fabs(out->after[m] / out->real[m] - 1.0);
            sum += ape;
            if (ape > out->fit.max_ape) out->fit.max_ape = ape;
        }
    out->fit.mape = sum / out->fit.n;
    for (int k = 0; k < nkeys; k++) {
        out->fit.value[k] = x[k];
        out->fit.ci95[k] = NAN;
        double w = 1e-3 * (out->hi[k] - out->lo[k]);
        out->fit.status[k] =
            x[k] - out->lo[k] < w || out->hi[k] - x[k] < w ? SV_FIT_AT_BOUND : SV_FIT_OK;
    }
    return 0;
}

void sv_result_fit_print(const sv_result_fit_t *r, FILE *f)
{
    fprintf(f, "%-28s %12s  %s\n", "key", "fitted", "searched");
    for (int k = 0; k < r->fit.np; k++)
        fprintf(f, "%-28s %12.5g  [%g, %g]%s\n", r->fit.names[k], r->fit.value[k], r->lo[k],
                r->hi[k],
                r->fit.status[k] == SV_FIT_AT_BOUND ? "  at the bound: the run pushes past it"
                                                    : "");
    fprintf(f, "\n%-32s %10s %10s %9s %10s %9s\n", "metric", "REAL", "before", "error", "after",
            "error");
    for (int m = 0; m < SV_CM_COUNT; m++) {
        if (!r->has[m] || !(r->real[m] > 0) || isnan(r->before[m])) continue;
        fprintf(f, "%-32s %10.2f %10.2f %+8.2f%% %10.2f %+8.2f%%%s\n",
                sv_compare_metric_label(m), r->real[m], r->before[m],
                100.0 * (r->before[m] / r->real[m] - 1.0), r->after[m],
                100.0 * (r->after[m] / r->real[m] - 1.0), r->scored[m] ? "  (fitted)" : "");
    }
    fprintf(f, "\n%ld metrics fitted, %d passes, MAPE of the fitted metrics %.2f%%, worst %.2f%%\n",
            r->fit.n, r->fit.iterations, r->fit.mape, r->fit.max_ape);
}
