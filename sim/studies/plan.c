/*
 * Capacity planning (see include/servesim/studies/plan.h): bisection on the request rate for
 * each allowed configuration, then the cluster size for the target, verified.
 */
#include "servesim/studies/plan.h"

#include "servesim/studies/confidence.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio_int.h"
#include "base/jsonw_int.h"
#include "studies/parallel_int.h"
#include "servesim/cluster/sim.h"
#include "servesim/base/progress.h"
#include "servesim/metrics/contract.h"

typedef struct probe {
    int met;        /* the whole contract holds (sv_contract_check) */
    char broke[64]; /* layered contracts: the budget that broke worst, else "" */
    double attain;  /* share of requests meeting every SLO */
    double by[3];   /* the same for each SLO alone */
    double goodput, cost_mtok, energy_tok;
    double ttft[2], tpot[2]; /* ms at p90 and at the SLO's percentile (latencies only) */
} probe_t;

/* At most this many runner-up plans are named as overlapping the cheapest one. */
#define MAX_OVERLAPS 8

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* p90 and the SLO percentile of TTFT and TPOT over the completed requests (ms). */
static void latencies(const sv_result_t *res, double slo_pct, probe_t *out)
{
    size_t n = res->pool.n, k = 0, m = 0;
    double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
    out->ttft[0] = out->ttft[1] = out->tpot[0] = out->tpot[1] = NAN;
    if (a && b) {
        for (size_t i = 0; i < n; i++) {
            const sv_req_t *r = &res->pool.r[i];
            if (r->state != SV_RQ_DONE) continue;
            a[k++] = sv_req_ttft(r) * 1e3;
            b[m++] = sv_req_tpot(r) * 1e3;
        }
        qsort(a, k, sizeof *a, cmp_dbl);
        qsort(b, m, sizeof *b, cmp_dbl);
        if (k) {
            out->ttft[0] = sv_percentile_sorted(a, k, 90);
            out->ttft[1] = sv_percentile_sorted(a, k, slo_pct);
            out->tpot[0] = sv_percentile_sorted(b, m, 90);
            out->tpot[1] = sv_percentile_sorted(b, m, slo_pct);
        }
    }
    free(a);
    free(b);
}

static int run_probe(const sv_scenario_t *sc, probe_t *out, sv_error_t *err)
{
    sv_result_t *res;
    int rc = sv_sim_run(sc, &res, err);
    if (rc) return rc;
    latencies(res, 100.0 * sc->metrics.attainment, out);
    const sv_summary_t *s = &res->summary;
    double total = (double)(s->completed + s->failed);
    out->attain = total > 0 ? s->good / total : 0.0;
    for (int i = 0; i < 3; i++)
        out->by[i] = total > 0 ? s->good_by[i] / total : 0.0;
    sv_contract_check_t v;
    sv_contract_check(&sc->metrics, s, res->class_summary, &v);
    out->met = v.met;
    snprintf(out->broke, sizeof out->broke, "%s", v.layered ? v.broken : "");
    out->goodput = s->request_goodput;
    out->cost_mtok = res->cost_per_mtok;
    out->energy_tok = res->energy_per_tok;
    sv_result_free(res);
    return 0;
}

static int slo_given(const sv_metrics_cfg_t *c)
{
    int any = !isnan(c->slo_ttft_ms) || !isnan(c->slo_tpot_ms) || !isnan(c->slo_e2el_ms) ||
              c->nbudgets > 0;
    for (int k = 0; k < c->nclasses; k++) {
        const sv_slo_t *s = &c->class_slo[k];
        any |= !isnan(s->ttft_ms) || !isnan(s->tpot_ms) || !isnan(s->e2el_ms) || s->nbudgets > 0;
    }
    return any;
}

int sv_capacity(const sv_scenario_t *base, long requests, double tol, double *rate, char *binding,
                long *probes, sv_error_t *err)
{
    const sv_workload_cfg_t *w = &base->workload;
    if (!slo_given(&base->metrics))
        return sv_errorf(err, SV_EINVAL, "capacity needs SLOs (slo.ttft_ms, tpot_ms or e2el_ms)");
    if (w->max_concurrency > 0)
        return sv_errorf(err, SV_EINVAL,
                         "capacity needs an open-loop workload (a rate or a trace), not a "
                         "max_concurrency loop");
    sv_scenario_t sc = *base;
    sc.workload.profile.kind = SV_PROFILE_NONE; /* probes at a constant mean rate */
    sc.workload.num_requests = requests;
    sc.workload.duration = 0;
    sc.horizon = 0;
    sc.metrics.sample_interval = 1e6; /* no time series needed */
    probe_t pr, fail_pr;
    int rc = 0;
    memset(&fail_pr, 0, sizeof fail_pr);
    *probes = 0;
#define OK(r, res)                                                                                 \
    (sc.workload.rate = (r), sc.workload.trace_rate = w->has_trace ? (r) : 0.0, (*probes)++,       \
     (rc = run_probe(&sc, &(res), err)) == 0 && (res).met)
    double lo, hi, r0 = 1.0;
    if (OK(r0, pr)) {
        lo = r0;
        hi = 2 * r0;
        while (OK(hi, pr)) {
            lo = hi;
            hi *= 2;
            if (hi > 1e7) break;
        }
        if (rc) return rc;
        fail_pr = pr;
    } else {
        if (rc) return rc;
        fail_pr = pr;
        hi = r0;
        lo = r0 / 2;
        while (!OK(lo, pr)) {
            if (rc) return rc;
            fail_pr = pr;
            hi = lo;
            lo /= 2;
            if (lo < 1e-3) {
                *rate = 0.0;
                snprintf(binding, SV_BINDING_MAX, "%s", "none");
                return 0;
            }
        }
    }
    /* Bisection in the log domain: the rate is a scale. */
    while (!rc && hi - lo > tol * lo) {
        double mid = sqrt(lo * hi);
        if (OK(mid, pr))
            lo = mid;
        else if (!rc) {
            hi = mid;
            fail_pr = pr;
        }
    }
#undef OK
    if (rc) return rc;
    *rate = lo;
    static const char *const names[] = {"ttft", "tpot", "e2el"};
    double slo[3] = {base->metrics.slo_ttft_ms, base->metrics.slo_tpot_ms,
                     base->metrics.slo_e2el_ms};
    int b = -1;
    for (int i = 0; i < 3; i++)
        if (!isnan(slo[i]) && (b < 0 || fail_pr.by[i] < fail_pr.by[b])) b = i;
    /* A layered contract names the budget that broke; the per-request part, its SLO. */
    if (fail_pr.broke[0] && !strstr(fail_pr.broke, "attainment"))
        snprintf(binding, SV_BINDING_MAX, "%s", fail_pr.broke);
    else
        snprintf(binding, SV_BINDING_MAX, "%s", b >= 0 ? names[b] : "none");
    return 0;
}

/* ---- candidates --------------------------------------------------------------------------- */

/* A candidate's scenario: the base workload and SLOs on new pools. */
static int candidate(const sv_scenario_t *base, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                     const sv_plan_row_t *row, int units, sv_scenario_t *sc, sv_error_t *err)
{
    *sc = *base;
    const sv_gpu_t *g;
    int rc = sv_catalog_gpu(cat, row->gpu, &g, err);
    if (rc) return rc;
    sv_pool_cfg_t pool = base->pools[0];
    double price =
        strcmp(g->name, pool.gpu.name) == 0 ? pool.gpu.price_per_hour : g->price_per_hour;
    for (int i = 0; i < cfg->nprices; i++) /* plan.price_per_hour_usd */
        if (strcmp(cfg->price_gpu[i], g->name) == 0) price = cfg->price[i];
    pool.gpu = *g;
    pool.gpu.price_per_hour = price;
    pool.autoscale.enabled = 0; /* plan sizes fixed clusters */
    pool.perf.tp = row->tp;
    pool.engine.max_num_seqs = row->max_num_seqs;
    if (pool.engine.scheduler == SV_SCHED_VLLM &&
        pool.engine.max_num_batched_tokens < row->max_num_seqs)
        pool.engine.max_num_batched_tokens = pool.perf.max_batched_tokens = row->max_num_seqs;
    sc->route = SV_ROUTE_LEAST_OUTSTANDING;
    if (!row->disagg) {
        sc->npools = 1;
        sc->disaggregated = 0;
        sc->pools[0] = pool;
        sc->pools[0].role = SV_ROLE_COLOCATED;
        sc->pools[0].replicas = units;
        snprintf(sc->pools[0].name, SV_NAME_MAX, "%s", "serve");
        return sv_scenario_validate(sc, err);
    }
    sc->npools = 2;
    sc->disaggregated = 1;
    sc->pools[0] = pool;
    sc->pools[0].role = SV_ROLE_PREFILL;
    sc->pools[0].replicas = row->p * units;
    snprintf(sc->pools[0].name, SV_NAME_MAX, "%s", "prefill");
    sc->pools[1] = pool;
    sc->pools[1].role = SV_ROLE_DECODE;
    sc->pools[1].replicas = row->d * units;
    snprintf(sc->pools[1].name, SV_NAME_MAX, "%s", "decode");
    if (!base->disaggregated) { /* the scenario's defaults: InfiniBand, DistServe's TTFT */
        if ((rc = sv_kvlink_defaults("infiniband", &pool.gpu, &sc->link))) return rc;
        sc->decode_route = SV_ROUTE_LEAST_OUTSTANDING;
    }
    return sv_scenario_validate(sc, err);
}

static void evaluate(const sv_scenario_t *base, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                     sv_plan_row_t *row)
{
    const sv_plan_cfg_t *p = cfg;
    sv_error_t err;
    sv_scenario_t sc;
    char binding[SV_BINDING_MAX] = "";
    row->unit_gpus = (row->disagg ? row->p + row->d : 1) * row->tp;
    int rc = candidate(base, cfg, cat, row, 1, &sc, &err);
    if (!rc)
        rc = sv_capacity(&sc, p->probe_requests, p->tolerance, &row->unit_capacity, binding,
                         &row->probes, &err);
    if (rc) {
        snprintf(row->error, sizeof row->error, "%s", err.msg);
        return;
    }
    snprintf(row->binding, sizeof row->binding, "%s", binding);
    if (row->unit_capacity <= 0) {
        snprintf(row->error, sizeof row->error, "misses the SLOs even under a very light load");
        return;
    }
    row->goodput_per_gpu = row->unit_capacity / row->unit_gpus;
    double target = p->target_rate * p->peak_factor;
    int units = (int)ceil(target / row->unit_capacity * (1 - 1e-12));
    if (units < 1) units = 1;
    for (int tries = 0; tries < 16; tries++, units++) {
        if (units * row->unit_gpus > p->max_gpus) {
            snprintf(row->error, sizeof row->error, "needs more than max_gpus (%d) for %.3g req/s",
                     p->max_gpus, target);
            return;
        }
        if ((rc = candidate(base, cfg, cat, row, units, &sc, &err))) break;
        long n = p->probe_requests * units;
        sc.workload.num_requests = n > 200000 ? 200000 : n;
        sc.workload.duration = 0;
        sc.workload.rate = target;
        sc.workload.trace_rate = sc.workload.has_trace ? target : 0.0;
        sc.workload.profile.kind = SV_PROFILE_NONE;
        sc.horizon = 0;
        sc.metrics.sample_interval = 1e6;
        probe_t pr;
        row->probes++;
        if ((rc = run_probe(&sc, &pr, &err))) break;
        if (pr.met) {
            row->ok = 1;
            row->units = units;
            row->gpus = units * row->unit_gpus;
            row->attain_at_target = pr.attain;
            row->goodput_at_target = pr.goodput;
            row->cost_hour = row->gpus * sc.pools[0].gpu.price_per_hour;
            row->cost_mtok = pr.cost_mtok;
            row->energy_tok = pr.energy_tok;
            row->ttft_p90 = pr.ttft[0];
            row->tpot_p90 = pr.tpot[0];
            row->ttft_slo_pct = pr.ttft[1];
            row->tpot_slo_pct = pr.tpot[1];
            return;
        }
    }
    snprintf(row->error, sizeof row->error, "%s",
             rc ? err.msg : "the cluster at the target rate kept missing the SLOs");
}

/* Candidates run in worker processes (studies/parallel_int.h), one row each. */
typedef struct plan_ctx {
    const sv_scenario_t *sc;
    const sv_plan_cfg_t *cfg;
    const sv_catalog_t *cat;
    sv_progress_t *progress;
} plan_ctx_t;

static void work_row(long i, void *out, void *ctx)
{
    const plan_ctx_t *c = ctx;
    (void)i;
    evaluate(c->sc, c->cfg, c->cat, out);
}

static void died_row(long i, void *out, void *ctx)
{
    sv_plan_row_t *row = out;
    (void)i;
    (void)ctx;
    row->ok = 0;
    snprintf(row->error, sizeof row->error, "the worker process died");
}

static void progress_row(long finished, long total, void *ctx)
{
    const plan_ctx_t *c = ctx;
    sv_progress_update(c->progress, "servesim plan: %ld/%ld configurations", finished, total);
}

int sv_plan_run(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                int jobs, sv_plan_row_t **rows, int *nrows, FILE *progress, sv_error_t *err)
{
    const sv_plan_cfg_t *p = cfg;
    *rows = NULL;
    *nrows = 0;
    if (!p->given) return sv_errorf(err, SV_EINVAL, "%s: no plan: map in the scenario", sc->path);
    if (sc->npools != 1 || sc->disaggregated)
        return sv_errorf(
            err, SV_EINVAL,
            "%s: plan starts from a scenario with one colocated pool (hardware/engine); "
            "it builds the pools itself",
            sc->path);
    /* What every capacity probe needs, checked once instead of failing every row. */
    if (!slo_given(&sc->metrics))
        return sv_errorf(err, SV_EINVAL,
                         "%s: plan needs SLOs to size against (slo.ttft_ms, tpot_ms or e2el_ms)",
                         sc->path);
    if (sc->workload.max_concurrency > 0)
        return sv_errorf(err, SV_EINVAL,
                         "%s: plan needs an open-loop workload (workload.rate or a trace), not a "
                         "max_concurrency loop",
                         sc->path);
    int cap = p->ngpus * p->ntps * (p->nmns ? p->nmns : 1) *
              (p->colocated + p->disaggregated * p->nratios);
    sv_plan_row_t *r = calloc((size_t)cap + 1, sizeof *r);
    if (!r) return sv_errorf(err, SV_ENOMEM, "out of memory");
    int n = 0;
    for (int g = 0; g < p->ngpus; g++)
        for (int t = 0; t < p->ntps; t++)
            for (int m = 0; m < (p->nmns ? p->nmns : 1); m++) {
                long mns = p->nmns ? p->max_num_seqs[m] : sc->pools[0].engine.max_num_seqs;
                for (int k = -1; k < (p->disaggregated ? p->nratios : 0); k++) {
                    if (k < 0 && !p->colocated) continue;
                    sv_plan_row_t *row = &r[n++];
                    snprintf(row->gpu, sizeof row->gpu, "%s", p->gpus[g]);
                    row->tp = p->tps[t];
                    const sv_gpu_t *gp;
                    int gcal = sv_catalog_gpu(cat, p->gpus[g], &gp, NULL) ? SV_CAL_DATASHEET
                                                                          : (int)gp->calibration;
                    int ecal = sc->pools[0].perf.engine[0] ? sc->pools[0].perf.engine_calibration
                                                           : SV_CAL_DATASHEET;
                    row->calibration = gcal > ecal ? gcal : ecal;
                    row->band_pct = sv_band_throughput_pct[row->calibration];
                    row->max_num_seqs = mns;
                    if (k >= 0) {
                        row->disagg = 1;
                        row->p = p->ratios[k][0];
                        row->d = p->ratios[k][1];
                    }
                }
            }
    sv_progress_t pr;
    sv_progress_start(&pr, progress);
    plan_ctx_t ctx = {sc, cfg, cat, &pr};
    sv__pmap_t m = {.n = n,
                    .first = 0,
                    .stride = 1,
                    .jobs = jobs,
                    .size = sizeof *r,
                    .results = r,
                    .work = work_row,
                    .died = died_row,
                    .progress = progress_row,
                    .ctx = &ctx};
    int rc = sv__parallel_map(&m, err);
    sv_progress_end(&pr);
    if (rc) {
        free(r);
        return rc;
    }
    *rows = r;
    *nrows = n;
    return 0;
}

/* ---- output --------------------------------------------------------------------------------- */

static int cmp_rows(const void *a, const void *b)
{
    const sv_plan_row_t *x = a, *y = b;
    if (x->ok != y->ok) return y->ok - x->ok;
    if (!x->ok) return 0;
    if (x->cost_hour != y->cost_hour) return x->cost_hour < y->cost_hour ? -1 : 1;
    if (x->gpus != y->gpus) return x->gpus - y->gpus;
    return (x->unit_capacity < y->unit_capacity) - (x->unit_capacity > y->unit_capacity);
}

static void config_name(const sv_plan_row_t *r, char *buf, size_t n)
{
    if (r->disagg)
        snprintf(buf, n, "%s TP%d %d:%d P:D seqs %ld", r->gpu, r->tp, r->p, r->d, r->max_num_seqs);
    else
        snprintf(buf, n, "%s TP%d colocated seqs %ld", r->gpu, r->tp, r->max_num_seqs);
}

/*
 * Cost per hour of a row if its unit capacity were off by its band, [low, high]: the
 * units needed for the target rate at capacity x (1 + band) and x (1 - band), whole units.
 */
static void cost_range(const sv_plan_row_t *r, double target, double *lo, double *hi)
{
    double b = r->band_pct / 100.0, per_unit = r->units > 0 ? r->cost_hour / r->units : 0.0;
    if (!(r->unit_capacity > 0) || !(target > 0)) {
        *lo = *hi = r->cost_hour;
        return;
    }
    *lo = per_unit * fmax(1.0, ceil(target / (r->unit_capacity * (1.0 + b)) - 1e-9));
    *hi = b < 1.0 ? per_unit * fmax(1.0, ceil(target / (r->unit_capacity * (1.0 - b)) - 1e-9))
                  : INFINITY;
    if (*lo > r->cost_hour) *lo = r->cost_hour;
    if (*hi < r->cost_hour) *hi = r->cost_hour;
}

/*
 * Candidates ranked after the winner whose cost range overlaps the winner's: the ranking
 * between them is within the model's error (ranked rows come first, by cost).
 */
static int overlapping(const sv_plan_row_t *rows, int nrows, double target, int *idx, int max)
{
    int n = 0;
    if (nrows < 1 || !rows[0].ok) return 0;
    double lo0, hi0;
    cost_range(&rows[0], target, &lo0, &hi0);
    for (int i = 1; i < nrows && rows[i].ok && n < max; i++) {
        double lo, hi;
        cost_range(&rows[i], target, &lo, &hi);
        if (lo <= hi0) idx[n++] = i;
    }
    return n;
}

static void print_warnings(FILE *t, const sv_plan_row_t *rows, int nrows, double target)
{
    if (nrows < 1 || !rows[0].ok) return;
    char name[96];
    int idx[MAX_OVERLAPS];
    int n = overlapping(rows, nrows, target, idx, MAX_OVERLAPS);
    double lo0, hi0;
    cost_range(&rows[0], target, &lo0, &hi0);
    config_name(&rows[0], name, sizeof name);
    fprintf(t, "\nconfidence: error bands from servesim validate per calibration status, holding "
               "%.0f%% of left-out validation points (docs/cost-model.md); a capacity off by its "
               "band needs more or fewer units\n",
            sv_band_coverage_pct);
    if (n > 0) {
        fprintf(t,
                "warning: the ranking of the top candidates is within their error bands: %s "
                "($%.2f-%.2f/hour) overlaps",
                name, lo0, hi0);
        for (int k = 0; k < n; k++) {
            char other[96];
            config_name(&rows[idx[k]], other, sizeof other);
            fprintf(t, "%s rank %d %s", k ? "," : "", idx[k] + 1, other);
        }
        fprintf(t, "\n");
    }
    if (rows[0].calibration == SV_CAL_DATASHEET)
        fprintf(t,
                "warning: the winner, %s, rests on datasheet-only figures (no measurement of "
                "this GPU or engine): +-%.0f%%\n",
                name, rows[0].band_pct);
}

int sv_plan_write(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, sv_plan_row_t *rows, int nrows,
                  const char *outdir, FILE *t, sv_error_t *err)
{
    /* Stable ranking: insertion sort keeps the enumeration order among equals. */
    for (int i = 1; i < nrows; i++) {
        sv_plan_row_t x = rows[i];
        int j = i;
        while (j > 0 && cmp_rows(&rows[j - 1], &x) > 0) {
            rows[j] = rows[j - 1];
            j--;
        }
        rows[j] = x;
    }
    const sv_metrics_cfg_t *m = &sc->metrics;
    if (t) {
        fprintf(t, "Plan for %.4g req/s of '%s'", cfg->target_rate * cfg->peak_factor, sc->name);
        if (cfg->peak_factor != 1)
            fprintf(t, " (%.4g x peak factor %.4g)", cfg->target_rate, cfg->peak_factor);
        fprintf(t, ", %s, with",
                sc->workload.has_trace ? "the trace's own arrivals rescaled to that mean rate"
                : sc->workload.burstiness == 1 ? "Poisson arrivals"
                                               : "gamma arrivals");
        if (!isnan(m->slo_ttft_ms)) fprintf(t, " TTFT <= %g ms", m->slo_ttft_ms);
        if (!isnan(m->slo_tpot_ms)) fprintf(t, " TPOT <= %g ms", m->slo_tpot_ms);
        if (!isnan(m->slo_e2el_ms)) fprintf(t, " E2EL <= %g ms", m->slo_e2el_ms);
        int per = !isnan(m->slo_ttft_ms) || !isnan(m->slo_tpot_ms) || !isnan(m->slo_e2el_ms);
        if (per) fprintf(t, " for %.0f%% of requests", 100.0 * m->attainment);
        for (int b = 0; b < m->nbudgets; b++)
            fprintf(t, "%s %s p%g <= %g ms",
                    b     ? ","
                    : per ? ", and"
                          : "",
                    sv_slo_metric_name(m->budgets[b].metric), m->budgets[b].pct, m->budgets[b].ms);
        if (m->nclasses > 0) fprintf(t, "%s each request class's own SLO", per ? ", and" : "");
        fputs("\n\n", t);
        char h1[24], h2[24];
        snprintf(h1, sizeof h1, "TTFT p%g", 100.0 * m->attainment);
        snprintf(h2, sizeof h2, "TPOT p%g", 100.0 * m->attainment);
        int bw = 7; /* the binding column: as wide as its longest value ("chat: ttft p99") */
        for (int i = 0; i < nrows; i++)
            if (rows[i].ok && (int)strlen(rows[i].binding) > bw) bw = (int)strlen(rows[i].binding);
        fprintf(t, "%4s  %-38s %5s %10s %9s %9s %7s %11s %*s %7s %9s %9s", "rank", "configuration",
                "GPUs", "unit req/s", "$/hour", "$/M tok", "J/tok", "goodput/GPU", bw, "binding",
                "SLO %", "TTFT p90", "TPOT p90");
        if (m->attainment != 0.9) fprintf(t, " %9s %9s", h1, h2);
        fprintf(t, "  %s\n", "confidence");
        for (int i = 0; i < nrows; i++) {
            const sv_plan_row_t *r = &rows[i];
            char name[96];
            config_name(r, name, sizeof name);
            if (!r->ok) {
                fprintf(t, "%4s  %-38s %s\n", "-", name, r->error);
                continue;
            }
            fprintf(t, "%4d  %-38s %5d %10.2f %9.2f %9.3f %7.3f %11.3f %*s %7.1f %9.1f %9.2f",
                    i + 1, name, r->gpus, r->unit_capacity, r->cost_hour, r->cost_mtok,
                    r->energy_tok, r->goodput_per_gpu, bw, r->binding, 100.0 * r->attain_at_target,
                    r->ttft_p90, r->tpot_p90);
            if (m->attainment != 0.9) fprintf(t, " %9.1f %9.2f", r->ttft_slo_pct, r->tpot_slo_pct);
            fprintf(t, "  +-%.0f%% %s\n", r->band_pct,
                    sv_calibration_name((sv_calibration_t)r->calibration));
        }
        print_warnings(t, rows, nrows, cfg->target_rate);
    }
    if (!outdir) return 0;
    if (mkdir(outdir, 0755) && errno != EEXIST)
        return sv_errorf(err, SV_EIO, "%s: cannot create: %s", outdir, strerror(errno));
    char path[1200];
    snprintf(path, sizeof path, "%s/plan.csv", outdir);
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    fputs("rank,gpu,tp,serving,prefill,decode,max_num_seqs,gpus,units,unit_capacity,"
          "goodput_per_gpu,cost_per_hour_usd,cost_per_million_output_tokens_usd,"
          "energy_per_output_token_j,attainment_at_target,goodput_at_target,binding,probes,error\n",
          f);
    char b1[40], b2[40], b3[40], b4[40], b5[40], b6[40], b7[40];
    for (int i = 0; i < nrows; i++) {
        const sv_plan_row_t *r = &rows[i];
        fprintf(f, "%d,%s,%d,%s,%d,%d,%ld,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%ld,\"%s\"\n",
                r->ok ? i + 1 : 0, r->gpu, r->tp, r->disagg ? "disaggregated" : "colocated", r->p,
                r->d, r->max_num_seqs, r->gpus, r->units, sv__fmt_double(r->unit_capacity, b1),
                sv__fmt_double(r->goodput_per_gpu, b2), sv__fmt_double(r->cost_hour, b3),
                sv__fmt_double(r->cost_mtok, b4), sv__fmt_double(r->energy_tok, b5),
                sv__fmt_double(r->attain_at_target, b6), sv__fmt_double(r->goodput_at_target, b7),
                r->binding, r->probes, r->error);
    }
    if (sv__close_out(f, path, err)) return SV_EIO;
    snprintf(path, sizeof path, "%s/plan.json", outdir);
    f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    sv_jw_t w;
    sv__jw_init(&w, f);
    sv__jw_obj(&w, NULL);
    sv__jw_str(&w, "scenario", sc->name);
    sv__jw_num(&w, "target_rate", cfg->target_rate);
    sv__jw_num(&w, "attainment", m->attainment);
    sv__jw_num(&w, "slo_ttft_ms", m->slo_ttft_ms);
    sv__jw_num(&w, "slo_tpot_ms", m->slo_tpot_ms);
    sv__jw_num(&w, "slo_e2el_ms", m->slo_e2el_ms);
    sv__jw_arr(&w, "configurations");
    for (int i = 0; i < nrows; i++) {
        const sv_plan_row_t *r = &rows[i];
        char name[96];
        config_name(r, name, sizeof name);
        sv__jw_obj(&w, NULL);
        sv__jw_int(&w, "rank", r->ok ? i + 1 : 0);
        sv__jw_str(&w, "configuration", name);
        sv__jw_str(&w, "gpu", r->gpu);
        sv__jw_int(&w, "tp", r->tp);
        sv__jw_str(&w, "serving", r->disagg ? "disaggregated" : "colocated");
        sv__jw_int(&w, "prefill_replicas_per_unit", r->p);
        sv__jw_int(&w, "decode_replicas_per_unit", r->d);
        sv__jw_int(&w, "max_num_seqs", r->max_num_seqs);
        if (r->ok) {
            sv__jw_int(&w, "gpus", r->gpus);
            sv__jw_int(&w, "units", r->units);
            sv__jw_num(&w, "unit_capacity", r->unit_capacity);
            sv__jw_num(&w, "goodput_per_gpu", r->goodput_per_gpu);
            sv__jw_num(&w, "cost_per_hour_usd", r->cost_hour);
            sv__jw_num(&w, "cost_per_million_output_tokens_usd", r->cost_mtok);
            sv__jw_num(&w, "energy_per_output_token_j", r->energy_tok);
            sv__jw_num(&w, "attainment_at_target", r->attain_at_target);
            sv__jw_str(&w, "binding_slo", r->binding);
            sv__jw_num(&w, "ttft_p90_ms", r->ttft_p90);
            sv__jw_num(&w, "tpot_p90_ms", r->tpot_p90);
            sv__jw_num(&w, "ttft_slo_percentile_ms", r->ttft_slo_pct);
            sv__jw_num(&w, "tpot_slo_percentile_ms", r->tpot_slo_pct);
        } else {
            sv__jw_str(&w, "error", r->error);
        }
        sv__jw_int(&w, "probes", r->probes);
        sv__jw_str(&w, "calibration", sv_calibration_name((sv_calibration_t)r->calibration));
        sv__jw_num(&w, "throughput_error_band_pct", r->band_pct);
        if (r->ok) {
            double lo, hi;
            cost_range(r, cfg->target_rate, &lo, &hi);
            sv__jw_num(&w, "cost_per_hour_low_usd", lo);
            sv__jw_num(&w, "cost_per_hour_high_usd", hi);
        }
        sv__jw_end_obj(&w);
    }
    sv__jw_end_arr(&w);
    sv__jw_arr(&w, "warnings");
    int idx[MAX_OVERLAPS], n = overlapping(rows, nrows, cfg->target_rate, idx, MAX_OVERLAPS);
    if (n > 0) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "the top %d candidates' cost ranges overlap within their error bands", n + 1);
        sv__jw_str(&w, NULL, msg);
    }
    if (nrows > 0 && rows[0].ok && rows[0].calibration == SV_CAL_DATASHEET)
        sv__jw_str(&w, NULL, "the winner rests on datasheet-only figures");
    sv__jw_end_arr(&w);
    sv__jw_end_obj(&w);
    fputc('\n', f);
    if (sv__close_out(f, path, err)) return SV_EIO;
    return 0;
}
