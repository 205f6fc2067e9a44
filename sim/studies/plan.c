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

#include "servesim/base/numeric.h"
#include "base/fileio_int.h"
#include "base/jsonw_int.h"
#include "studies/parallel_int.h"
#include "servesim/cluster/sim.h"
#include "servesim/base/progress.h"
#include "servesim/metrics/contract.h"

typedef struct probe {
    int met;        /* the whole contract holds (sv_contract_check) */
    char broke[64]; /* layered contracts: the budget that broke worst, else "" */
    double attain;  /* share of requests meeting every SLO (plan_row_t.attain_at_target) */
    double by[3];   /* the same for each SLO alone */
    double goodput, cost_mtok, energy_tok;
    double ttft[2], tpot[2]; /* ms at p90 and at the SLO's percentile (latencies only) */
    sv_plan_budget_t budget[SV_PLAN_MAX_BUDGETS];
    int nbudgets;
} probe_t;

/* At most this many runner-up plans are named as overlapping the cheapest one. */
#define MAX_OVERLAPS 8

/* The contract has per-request thresholds (top level or a class's): attainment is theirs. */
static int per_request(const sv_metrics_cfg_t *c)
{
    int any = !isnan(c->slo_ttft_ms) || !isnan(c->slo_tpot_ms) || !isnan(c->slo_e2el_ms);
    for (int k = 0; k < c->nclasses; k++) {
        const sv_slo_t *s = &c->class_slo[k];
        any |= !isnan(s->ttft_ms) || !isnan(s->tpot_ms) || !isnan(s->e2el_ms);
    }
    return any;
}

/*
 * For a contract of budgets only: does request r lie within the bound of its SLO's
 * highest-percentile budget of each per-request metric (TTFT, TPOT, E2EL; ITL is a pool of
 * gaps, not a per-request value)? A p99 TTFT of 2000 ms holds when 99% are within 2000 ms.
 */
static int within_bounds(const sv_slo_t *slo, const sv_req_t *r)
{
    double bound[SV_K_COUNT], pct[SV_K_COUNT];
    for (int k = 0; k < SV_K_COUNT; k++)
        bound[k] = NAN, pct[k] = -1;
    for (int b = 0; b < slo->nbudgets; b++) {
        const sv_budget_t *x = &slo->budget[b];
        if (x->pct > pct[x->metric]) pct[x->metric] = x->pct, bound[x->metric] = x->ms;
    }
    double v[SV_K_COUNT] = {sv_req_ttft(r) * 1e3, sv_req_tpot(r) * 1e3, NAN, sv_req_e2el(r) * 1e3};
    for (int k = 0; k < SV_K_COUNT; k++)
        if (k != SV_K_ITL && !isnan(bound[k]) && v[k] > bound[k]) return 0;
    return 1;
}

/* p90 and the SLO percentile of TTFT and TPOT over the completed requests (ms); for a
 * budget-only contract, the share (and rate) of requests within the budgets' bounds. */
static void latencies(const sv_result_t *res, const sv_metrics_cfg_t *mc, probe_t *out)
{
    size_t n = res->pool.n, k = 0, m = 0;
    long inside = 0;
    double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
    double slo_pct = 100.0 * mc->attainment;
    sv_slo_t slo[SV_MAX_CLASSES + 1];
    int ncls = mc->nclasses > 0 ? mc->nclasses : 1;
    for (int c = 0; c < ncls; c++)
        sv_contract_slo(mc, mc->nclasses > 0 ? c : -1, &slo[c]);
    out->ttft[0] = out->ttft[1] = out->tpot[0] = out->tpot[1] = NAN;
    if (a && b) {
        for (size_t i = 0; i < n; i++) {
            const sv_req_t *r = &res->pool.r[i];
            if (r->state != SV_RQ_DONE) continue;
            a[k++] = sv_req_ttft(r) * 1e3;
            b[m++] = sv_req_tpot(r) * 1e3;
            inside += within_bounds(&slo[r->cls < ncls ? r->cls : 0], r);
        }
        qsort(a, k, sizeof *a, sv_cmp_double);
        qsort(b, m, sizeof *b, sv_cmp_double);
        if (k) {
            out->ttft[0] = sv_percentile_sorted(a, k, 90);
            out->ttft[1] = sv_percentile_sorted(a, k, slo_pct);
            out->tpot[0] = sv_percentile_sorted(b, m, 90);
            out->tpot[1] = sv_percentile_sorted(b, m, slo_pct);
        }
    }
    free(a);
    free(b);
    const sv_summary_t *s = &res->summary;
    double total = (double)(s->completed + s->failed);
    if (!per_request(mc)) {
        out->attain = total > 0 ? (double)inside / total : 0.0;
        out->goodput = s->duration > 0 ? (double)inside / s->duration : 0.0;
    }
}

/* Each percentile budget of the contract (the top level's, then each class's), judged. */
static void budgets(const sv_metrics_cfg_t *mc, const sv_result_t *res, probe_t *out)
{
    out->nbudgets = 0;
    for (int c = -1; c < mc->nclasses; c++) {
        sv_slo_t slo;
        sv_slo_check_t chk;
        const sv_summary_t *s = c < 0 ? &res->summary : &res->class_summary[c];
        if (c >= 0 && !res->class_summary) break;
        sv_contract_slo(mc, c, &slo);
        sv_slo_check(&slo, s, &chk);
        for (int b = 0; b < chk.nbudgets && out->nbudgets < SV_PLAN_MAX_BUDGETS; b++) {
            sv_plan_budget_t *x = &out->budget[out->nbudgets++];
            snprintf(x->name, sizeof x->name, "%s%s%s p%g", c < 0 ? "" : mc->class_name[c],
                     c < 0 ? "" : ": ", sv_slo_metric_name(chk.budget[b].b.metric),
                     chk.budget[b].b.pct);
            x->budget_ms = chk.budget[b].b.ms;
            x->value_ms = chk.budget[b].value;
            x->met = chk.budget[b].met;
        }
    }
}

/* A finished run judged against its scenario's contract. */
static void judge(const sv_scenario_t *sc, const sv_result_t *res, probe_t *out)
{
    const sv_summary_t *s = &res->summary;
    double total = (double)(s->completed + s->failed);
    out->attain = total > 0 ? s->good / total : 0.0;
    out->goodput = s->request_goodput;
    for (int i = 0; i < 3; i++)
        out->by[i] = total > 0 ? s->good_by[i] / total : 0.0;
    latencies(res, &sc->metrics, out);
    budgets(&sc->metrics, res, out);
    sv_contract_check_t v;
    sv_contract_check(&sc->metrics, s, res->class_summary, &v);
    out->met = v.met;
    snprintf(out->broke, sizeof out->broke, "%s", v.layered ? v.broken : "");
    out->cost_mtok = res->cost_per_mtok;
    out->energy_tok = res->energy_per_tok;
}

static int run_probe(const sv_scenario_t *sc, probe_t *out, sv_error_t *err)
{
    sv_result_t *res;
    int rc = sv_sim_run(sc, &res, err);
    if (rc) return rc;
    judge(sc, res, out);
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

/*
 * The price a candidate pays per GPU-hour (plan.price_per_hour_usd, else the scenario's own
 * for its GPU, else the catalog's) and its public range (the catalog's price_low_usd and
 * price_high_usd, widened to hold the price used; the price alone when the catalog has none).
 */
static void row_price(const sv_scenario_t *base, const sv_plan_cfg_t *cfg, const sv_gpu_t *g,
                      double *price, double *lo, double *hi)
{
    *price = g->price_per_hour;
    for (int i = base->npools - 1; i >= 0; i--)
        if (strcmp(g->name, base->pools[i].gpu.name) == 0)
            *price = base->pools[i].gpu.price_per_hour;
    for (int i = 0; i < cfg->nprices; i++) /* plan.price_per_hour_usd */
        if (strcmp(cfg->price_gpu[i], g->name) == 0) *price = cfg->price[i];
    *lo = g->price_low > 0 ? fmin(g->price_low, *price) : *price;
    *hi = g->price_high > 0 ? fmax(g->price_high, *price) : *price;
}

/* The scenario's pool a phase starts from: its own role's in a disaggregated scenario. */
static const sv_pool_cfg_t *base_pool(const sv_scenario_t *base, sv_role_t role)
{
    for (int i = 0; i < base->npools; i++)
        if (base->pools[i].role == role) return &base->pools[i];
    return &base->pools[0];
}

/* One phase's pool: GPU `gname` at TP `tp` with the row's max_num_seqs, from `from`. */
static int phase_pool(const sv_scenario_t *base, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                      const sv_pool_cfg_t *from, const char *gname, int tp, long mns,
                      sv_pool_cfg_t *pool, sv_error_t *err)
{
    const sv_gpu_t *g;
    int rc = sv_catalog_gpu(cat, gname, &g, err);
    if (rc) return rc;
    *pool = *from;
    double price, lo, hi;
    row_price(base, cfg, g, &price, &lo, &hi);
    pool->gpu = *g;
    pool->gpu.price_per_hour = price;
    pool->autoscale.enabled = 0; /* plan sizes fixed clusters */
    pool->perf.tp = tp;
    pool->engine.max_num_seqs = mns;
    if (pool->engine.scheduler == SV_SCHED_VLLM && pool->engine.max_num_batched_tokens < mns)
        pool->engine.max_num_batched_tokens = pool->perf.max_batched_tokens = mns;
    return 0;
}

/* Row's plan.layout settings on a phase's pool (ph 0 colocated, 1 prefill, 2 decode): the
 * keys for both phases, then the phase's own (checked when plan.layouts was read). */
static int apply_layout(const sv_plan_cfg_t *cfg, const sv_plan_row_t *row, sv_pool_cfg_t *pool,
                        int ph, sv_error_t *err)
{
    int n = sv_plan_layout_apply(&cfg->layouts[row->layout], ph, &pool->perf, err);
    if (n <= 0) return n;
    sv_pool_hardware_changed(pool);
    return sv_spec_check(&pool->perf, err);
}

/* A candidate's scenario: the base workload and SLOs on new pools, with the row's layout. */
static int candidate(const sv_scenario_t *base, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                     const sv_plan_row_t *row, int units, sv_scenario_t *sc, sv_error_t *err)
{
    *sc = *base;
    sv_pool_cfg_t pool, dpool;
    int rc = phase_pool(base, cfg, cat, base_pool(base, SV_ROLE_PREFILL), row->gpu, row->tp,
                        row->max_num_seqs, &pool, err);
    if (!rc) rc = apply_layout(cfg, row, &pool, row->disagg ? 1 : 0, err);
    if (rc) return rc;
    sc->route = SV_ROUTE_LEAST_OUTSTANDING;
    if (!row->disagg) {
        sc->npools = 1;
        sc->disaggregated = 0;
        sc->disaggregation_given = 0; /* a disaggregated scenario's colocated candidate */
        sc->pools[0] = pool;
        sc->pools[0].role = SV_ROLE_COLOCATED;
        sc->pools[0].replicas = units;
        snprintf(sc->pools[0].name, SV_NAME_MAX, "%s", "serve");
        return sv_scenario_validate(sc, err);
    }
    if ((rc = phase_pool(base, cfg, cat, base_pool(base, SV_ROLE_DECODE), row->dgpu, row->dtp,
                         row->max_num_seqs, &dpool, err)) ||
        (rc = apply_layout(cfg, row, &dpool, 2, err)))
        return rc;
    sc->npools = 2;
    sc->disaggregated = 1;
    sc->pools[0] = pool;
    sc->pools[0].role = SV_ROLE_PREFILL;
    sc->pools[0].replicas = row->p * units;
    snprintf(sc->pools[0].name, SV_NAME_MAX, "%s", "prefill");
    sc->pools[1] = dpool;
    sc->pools[1].role = SV_ROLE_DECODE;
    sc->pools[1].replicas = row->d * units;
    snprintf(sc->pools[1].name, SV_NAME_MAX, "%s", "decode");
    if (!base->disaggregated) { /* the scenario's defaults: InfiniBand, DistServe's TTFT */
        if ((rc = sv_kvlink_defaults("infiniband", &pool.gpu, &sc->link))) return rc;
        sc->decode_route = SV_ROUTE_LEAST_OUTSTANDING;
    }
    return sv_scenario_validate(sc, err);
}

/* Cost per hour of a candidate's pools. */
static double pools_cost(const sv_scenario_t *sc)
{
    double c = 0;
    for (int i = 0; i < sc->npools; i++)
        c += sc->pools[i].replicas * sc->pools[i].perf.tp * sc->pools[i].gpu.price_per_hour;
    return c;
}

double sv_plan_cost_at(const sv_plan_row_t *r, int which)
{
    double pp = which < 0 ? r->price_low : which > 0 ? r->price_high : r->price;
    double dp = which < 0 ? r->dprice_low : which > 0 ? r->dprice_high : r->dprice;
    if (!r->disagg) return r->gpus * pp;
    return r->units * (r->p * r->tp * pp + r->d * r->dtp * dp);
}

static void evaluate(const sv_scenario_t *base, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                     sv_plan_row_t *row)
{
    const sv_plan_cfg_t *p = cfg;
    sv_error_t err;
    sv_scenario_t sc;
    char binding[SV_BINDING_MAX] = "";
    row->unit_gpus = row->disagg ? row->p * row->tp + row->d * row->dtp : row->tp;
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
            row->cost_hour = pools_cost(&sc);
            row->cost_mtok = pr.cost_mtok;
            row->energy_tok = pr.energy_tok;
            row->ttft_p90 = pr.ttft[0];
            row->tpot_p90 = pr.tpot[0];
            row->ttft_slo_pct = pr.ttft[1];
            row->tpot_slo_pct = pr.tpot[1];
            row->contract_met = pr.met;
            row->nbudgets = pr.nbudgets;
            memcpy(row->budget, pr.budget, sizeof pr.budget);
            return;
        }
    }
    snprintf(row->error, sizeof row->error, "%s",
             rc ? err.msg : "the cluster at the target rate kept missing the SLOs");
}

/* ---- the day: the scenario's whole load on a planned fleet -------------------------------- */

/* Energy and money of one finished run, with the scenario's `cost` map (PUE 1, no energy
 * price, the rental price when it has none). */
static void finance(const sv_result_t *res, sv_finance_t *f)
{
    sv_finance_cfg_t fc = res->sc->finance;
    if (!fc.enabled) {
        memset(&fc, 0, sizeof fc);
        fc.pue = 1.0;
        fc.gpus_per_server = 8;
        fc.utilisation = 1.0;
    }
    sv_finance_compute(&fc, res->energy_j, res->gpu_hours, res->cost_usd,
                       (double)res->summary.total_output, res->summary.duration, res->busy_share,
                       f);
}

/*
 * A ranked row's fleet over the scenario's own workload as written (its rate profile, its
 * duration or request count: the day), fixed at the planned size; and, when the scenario
 * has an autoscaler, the same fleet as the autoscaler's maximum (colocated rows).
 */
static void day_of(const sv_scenario_t *base, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                   sv_plan_row_t *row)
{
    sv_plan_day_t *d = &row->day;
    sv_scenario_t sc;
    sv_error_t err;
    sv_result_t *res = NULL;
    probe_t pr;
    sv_finance_t f;
    memset(d, 0, sizeof *d);
    int rc = candidate(base, cfg, cat, row, row->units, &sc, &err);
    if (!rc) rc = sv_sim_run(&sc, &res, &err);
    if (rc) {
        snprintf(d->error, sizeof d->error, "%s", err.msg);
        return;
    }
    judge(&sc, res, &pr);
    finance(res, &f);
    d->done = 1;
    d->hours = res->summary.duration / 3600.0;
    d->requests = (double)(res->summary.completed + res->summary.failed);
    d->output_tokens = (double)res->summary.total_output;
    d->attainment = pr.attain;
    d->gpu_hours = f.gpu_hours;
    d->gpu_usd = f.gpu_usd;
    d->energy_usd = f.energy_usd;
    d->total_usd = f.total_usd;
    d->wall_kwh = f.wall_energy_j / 3.6e6;
    d->usd_per_mtok = f.total_usd_per_mtok;
    d->wall_j_per_tok = f.wall_j_per_tok;
    d->busy_share = res->busy_share;
    sv_result_free(res);
    const sv_autoscale_cfg_t *a = &base->pools[0].autoscale;
    if (!a->enabled || row->disagg) return;
    sc.pools[0].autoscale = *a;
    sc.pools[0].autoscale.max = row->units;
    if (sc.pools[0].autoscale.min > row->units) sc.pools[0].autoscale.min = row->units;
    if (sc.pools[0].autoscale.initial > row->units) sc.pools[0].autoscale.initial = row->units;
    if (sc.pools[0].autoscale.initial < sc.pools[0].autoscale.min)
        sc.pools[0].autoscale.initial = sc.pools[0].autoscale.min;
    if (sv_scenario_validate(&sc, &err) || sv_sim_run(&sc, &res, &err)) {
        snprintf(d->error, sizeof d->error, "autoscaled: %s", err.msg);
        return;
    }
    judge(&sc, res, &pr);
    finance(res, &f);
    d->autoscaled = 1;
    d->as_gpu_hours = f.gpu_hours;
    d->as_total_usd = f.total_usd;
    d->as_wall_kwh = f.wall_energy_j / 3.6e6;
    d->as_usd_per_mtok = f.total_usd_per_mtok;
    d->as_attainment = pr.attain;
    d->as_mean_replicas = res->pools[0].mean_up;
    d->as_peak_replicas = res->pools[0].peak_up;
    sv_result_free(res);
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

static void work_day(long i, void *out, void *ctx)
{
    const plan_ctx_t *c = ctx;
    (void)i;
    day_of(c->sc, c->cfg, c->cat, out);
}

static void died_day(long i, void *out, void *ctx)
{
    sv_plan_row_t *row = out;
    (void)i;
    (void)ctx;
    snprintf(row->day.error, sizeof row->day.error, "the worker process died");
}

static void progress_day(long finished, long total, void *ctx)
{
    const plan_ctx_t *c = ctx;
    sv_progress_update(c->progress, "servesim plan: the whole load on the cheapest plans %ld/%ld",
                       finished, total);
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

static int cmp_rows(const void *a, const void *b)
{
    const sv_plan_row_t *x = a, *y = b;
    if (x->ok != y->ok) return y->ok - x->ok;
    if (!x->ok) return 0;
    if (x->cost_hour != y->cost_hour) return x->cost_hour < y->cost_hour ? -1 : 1;
    if (x->gpus != y->gpus) return x->gpus - y->gpus;
    return (x->unit_capacity < y->unit_capacity) - (x->unit_capacity > y->unit_capacity);
}

/* Stable ranking: insertion sort keeps the enumeration order among equals. */
static void rank(sv_plan_row_t *rows, int nrows)
{
    for (int i = 1; i < nrows; i++) {
        sv_plan_row_t x = rows[i];
        int j = i;
        while (j > 0 && cmp_rows(&rows[j - 1], &x) > 0) {
            rows[j] = rows[j - 1];
            j--;
        }
        rows[j] = x;
    }
}

/* A row's prices and calibration: the weaker of its GPUs' and the engine profile's. */
static void row_facts(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                      sv_plan_row_t *row)
{
    const sv_gpu_t *gp = NULL, *dp = NULL;
    int gcal = sv_catalog_gpu(cat, row->gpu, &gp, NULL) ? SV_CAL_DATASHEET : (int)gp->calibration;
    int dcal = sv_catalog_gpu(cat, row->dgpu, &dp, NULL) ? SV_CAL_DATASHEET : (int)dp->calibration;
    if (row->disagg && dcal > gcal) gcal = dcal;
    int ecal =
        sc->pools[0].perf.engine[0] ? sc->pools[0].perf.engine_calibration : SV_CAL_DATASHEET;
    row->calibration = gcal > ecal ? gcal : ecal;
    row->band_class = sv_band_class_of(&sc->model);
    row->band_pct = sv_band_pct(row->band_class, row->calibration, SV_BAND_THROUGHPUT, NULL);
    if (gp) row_price(sc, cfg, gp, &row->price, &row->price_low, &row->price_high);
    if (dp) row_price(sc, cfg, dp, &row->dprice, &row->dprice_low, &row->dprice_high);
}

int sv_plan_run(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                int jobs, sv_plan_row_t **rows, int *nrows, FILE *progress, sv_error_t *err)
{
    const sv_plan_cfg_t *p = cfg;
    *rows = NULL;
    *nrows = 0;
    if (!p->given) return sv_errorf(err, SV_EINVAL, "%s: no plan: map in the scenario", sc->path);
    if (sc->disaggregated ? sc->npools != 2 : sc->npools != 1)
        return sv_errorf(err, SV_EINVAL,
                         "%s: plan starts from a scenario with one colocated pool "
                         "(hardware/engine) or one prefill and one decode pool; it builds the "
                         "pools itself",
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
    /* Colocated rows, then disaggregated ones: per GPU, TP, layout and max_num_seqs of the
     * prefill phase, each decode placement (the same one unless plan.prefill/plan.decode split
     * them), each ratio. */
    int nm = p->nmns ? p->nmns : 1;
    int nplace = p->split ? p->nphase_gpus[1] * p->nphase_tps[1] : 1;
    int npre = p->split ? p->nphase_gpus[0] * p->nphase_tps[0] : p->ngpus * p->ntps;
    int nl = p->nlayouts > 0 ? p->nlayouts : 1;
    int cap = (p->ngpus * p->ntps * nm * p->colocated +
               npre * nm * nplace * p->nratios * p->disaggregated) *
              nl;
    sv_plan_row_t *r = calloc((size_t)cap + 1, sizeof *r);
    if (!r) return sv_errorf(err, SV_ENOMEM, "out of memory");
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0 ? !p->colocated : !p->disaggregated) continue;
        int split = pass == 1 && p->split;
        int ng = split ? p->nphase_gpus[0] : p->ngpus, nt = split ? p->nphase_tps[0] : p->ntps;
        for (int g = 0; g < ng; g++)
            for (int t = 0; t < nt; t++)
                for (int l = 0; l < nl; l++) {
                    /* a layout with keys for one phase only: disaggregated rows alone */
                    if (pass == 0 && p->nlayouts > 0 && p->layouts[l].phased) continue;
                    for (int m = 0; m < nm; m++)
                        for (int q = 0; q < (split ? nplace : 1); q++)
                            for (int k = 0; k < (pass ? p->nratios : 1); k++) {
                                sv_plan_row_t *row = &r[n++];
                                snprintf(row->gpu, sizeof row->gpu, "%s",
                                         split ? p->phase_gpus[0][g] : p->gpus[g]);
                                row->tp = split ? p->phase_tps[0][t] : p->tps[t];
                                row->layout = p->nlayouts > 0 ? l : 0;
                                snprintf(row->layout_name, sizeof row->layout_name, "%s",
                                         p->nlayouts > 0 ? p->layouts[l].name : "");
                                if (split) {
                                    snprintf(row->dgpu, sizeof row->dgpu, "%s",
                                             p->phase_gpus[1][q / p->nphase_tps[1]]);
                                    row->dtp = p->phase_tps[1][q % p->nphase_tps[1]];
                                } else {
                                    snprintf(row->dgpu, sizeof row->dgpu, "%s", row->gpu);
                                    row->dtp = row->tp;
                                }
                                row->max_num_seqs =
                                    p->nmns ? p->max_num_seqs[m] : sc->pools[0].engine.max_num_seqs;
                                if (pass) {
                                    row->disagg = 1;
                                    row->p = p->ratios[k][0];
                                    row->d = p->ratios[k][1];
                                }
                                row_facts(sc, cfg, cat, row);
                            }
                }
    }
    if (n == 0) {
        free(r);
        return sv_errorf(err, SV_EINVAL,
                         "%s: plan: no configuration to try: every plan.layouts entry has keys "
                         "for one phase (prefill, decode), which only disaggregated units take; "
                         "add disaggregated to plan.serving",
                         sc->path);
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
    if (!rc) {
        rank(r, n);
        long k = 0;
        while (k < n && k < SV_PLAN_DAY_ROWS && r[k].ok)
            k++;
        m.n = k;
        m.work = work_day;
        m.died = died_day;
        m.progress = progress_day;
        if (k > 0) rc = sv__parallel_map(&m, err);
    }
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

void sv_plan_config_name(const sv_plan_row_t *r, char *buf, size_t n)
{
    const char *sp = r->layout_name[0] ? " " : "", *l = r->layout_name;
    if (r->disagg && (strcmp(r->gpu, r->dgpu) != 0 || r->tp != r->dtp))
        snprintf(buf, n, "%s TP%d%s%s %d:%d %s TP%d seqs %ld", r->gpu, r->tp, sp, l, r->p, r->d,
                 r->dgpu, r->dtp, r->max_num_seqs);
    else if (r->disagg)
        snprintf(buf, n, "%s TP%d%s%s %d:%d P:D seqs %ld", r->gpu, r->tp, sp, l, r->p, r->d,
                 r->max_num_seqs);
    else
        snprintf(buf, n, "%s TP%d%s%s colocated seqs %ld", r->gpu, r->tp, sp, l, r->max_num_seqs);
}

/* The rate sized for: target_rate x peak_factor. */
static double sized_rate(const sv_plan_cfg_t *cfg)
{
    return cfg->target_rate * cfg->peak_factor;
}

/*
 * Cost per hour of a row if its unit capacity were off by its band, [low, high]: the
 * units needed for the target rate at capacity x (1 + band) and x (1 - band), whole units.
 */
void sv_plan_band_cost(const sv_plan_row_t *r, double target, double *lo, double *hi)
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
    sv_plan_band_cost(&rows[0], target, &lo0, &hi0);
    for (int i = 1; i < nrows && rows[i].ok && n < max; i++) {
        double lo, hi;
        sv_plan_band_cost(&rows[i], target, &lo, &hi);
        if (lo <= hi0) idx[n++] = i;
    }
    return n;
}

/* Two rows on the same GPU types (each phase's, for a disaggregated row). */
static int same_gpus(const sv_plan_row_t *a, const sv_plan_row_t *b)
{
    const char *ad = a->disagg ? a->dgpu : a->gpu, *bd = b->disagg ? b->dgpu : b->gpu;
    return strcmp(a->gpu, b->gpu) == 0 && strcmp(ad, bd) == 0;
}

/* A row on one GPU type throughout. */
static int one_gpu(const sv_plan_row_t *r)
{
    return !r->disagg || strcmp(r->gpu, r->dgpu) == 0;
}

/* A row that beats the winner somewhere inside the GPUs' price ranges. */
static int price_flips(const sv_plan_row_t *rows, int i)
{
    const sv_plan_row_t *w = &rows[0], *r = &rows[i];
    return i > 0 && w->ok && r->ok && !same_gpus(w, r) &&
           sv_plan_cost_at(r, -1) < sv_plan_cost_at(w, 1);
}

static int band_overlaps(const sv_plan_row_t *rows, int nrows, double target, int i)
{
    int idx[MAX_OVERLAPS], n = overlapping(rows, nrows, target, idx, MAX_OVERLAPS);
    for (int k = 0; k < n; k++)
        if (idx[k] == i) return 1;
    return 0;
}

/* The budgets' names as the rows carry them (sv_plan_budget_t.name), from the contract. */
static int budget_names(const sv_metrics_cfg_t *mc, char (*names)[48], sv_budget_t *b)
{
    int n = 0;
    for (int c = -1; c < mc->nclasses; c++) {
        sv_slo_t slo;
        sv_contract_slo(mc, c, &slo);
        for (int k = 0; k < slo.nbudgets && n < SV_PLAN_MAX_BUDGETS; k++, n++) {
            snprintf(names[n], 48, "%s%s%s p%g", c < 0 ? "" : mc->class_name[c], c < 0 ? "" : ": ",
                     sv_slo_metric_name(slo.budget[k].metric), slo.budget[k].pct);
            if (b) b[n] = slo.budget[k];
        }
    }
    return n;
}

/* "TTFT <= 500 ms TPOT <= 50 ms for 90% of requests" and "TTFT p99 <= 2000 ms" parts. */
static size_t slo_text(char *buf, size_t cap, size_t n, const sv_slo_t *slo, double attainment)
{
    const char *up[SV_K_COUNT] = {"TTFT", "TPOT", "ITL", "E2EL"};
    double thr[3] = {slo->ttft_ms, slo->tpot_ms, slo->e2el_ms};
    const char *tn[3] = {"TTFT", "TPOT", "E2EL"};
    int any = 0;
#define ADD(...)                                                                                   \
    (n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__), n = n < cap ? n : cap)
    for (int k = 0; k < 3; k++)
        if (!isnan(thr[k])) ADD("%s%s <= %g ms", any++ ? " " : "", tn[k], thr[k]);
    if (any) ADD(" for %.0f%% of requests", 100.0 * attainment);
    for (int b = 0; b < slo->nbudgets; b++)
        ADD("%s%s p%g <= %g ms", any++ ? ", " : "", up[slo->budget[b].metric], slo->budget[b].pct,
            slo->budget[b].ms);
#undef ADD
    return n;
}

/* The contract as written: the top level, then each class's own. */
static void contract_text(const sv_metrics_cfg_t *mc, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    sv_slo_t top = {.ttft_ms = mc->slo_ttft_ms,
                    .tpot_ms = mc->slo_tpot_ms,
                    .e2el_ms = mc->slo_e2el_ms,
                    .nbudgets = mc->nbudgets};
    memcpy(top.budget, mc->budgets, sizeof top.budget);
    if (mc->nclasses == 0 || mc->nbudgets > 0) n = slo_text(buf, cap, n, &top, mc->attainment);
    for (int c = 0; c < mc->nclasses && n + 1 < cap; c++) {
        n += (size_t)snprintf(buf + n, cap - n, "%sclass %s: ", n ? "; " : "", mc->class_name[c]);
        if (n >= cap) break;
        n = slo_text(buf, cap, n, &mc->class_slo[c],
                     mc->class_slo[c].attainment > 0 ? mc->class_slo[c].attainment
                                                     : mc->attainment);
    }
}

#define WARN(f, ...)                                                                               \
    do {                                                                                           \
        if ((f)->nwarnings < SV_PLAN_MAX_WARN)                                                     \
            snprintf((f)->warnings[(f)->nwarnings++], sizeof(f)->warnings[0], __VA_ARGS__);        \
    } while (0)

/* The "colocated_versus_disaggregated" sentence: the best row of each serving mode and how much
   cheaper the better one is, or which mode has no feasible row. */
static void facts_versus(const sv_plan_row_t *rows, sv_plan_facts_t *f)
{
    char name[96], other[96];
    int c = f->best_colocated, d = f->best_disaggregated;
    if (c >= 0) sv_plan_config_name(&rows[c], name, sizeof name);
    if (d >= 0) sv_plan_config_name(&rows[d], other, sizeof other);
    if (c >= 0 && d >= 0) {
        const sv_plan_row_t *x = &rows[c], *y = &rows[d];
        snprintf(f->versus, sizeof f->versus,
                 "best colocated: rank %d %s, %d GPUs, $%.2f/hour, goodput %.3f req/s per "
                 "GPU; best disaggregated: rank %d %s, %d GPUs, $%.2f/hour, goodput %.3f "
                 "req/s per GPU; %s is %.1f%% cheaper",
                 c + 1, name, x->gpus, x->cost_hour, x->goodput_per_gpu, d + 1, other, y->gpus,
                 y->cost_hour, y->goodput_per_gpu, c < d ? "colocated" : "disaggregated",
                 100.0 * fabs(x->cost_hour - y->cost_hour) / fmax(x->cost_hour, y->cost_hour));
    } else if (c >= 0 || d >= 0) {
        snprintf(f->versus, sizeof f->versus,
                 "best %s: rank %d %s; no %s configuration is "
                 "feasible",
                 c >= 0 ? "colocated" : "disaggregated", (c >= 0 ? c : d) + 1,
                 c >= 0 ? name : other, c >= 0 ? "disaggregated" : "colocated");
    } else {
        snprintf(f->versus, sizeof f->versus,
                 "no colocated and no disaggregated configuration is feasible");
    }
}

/* The warning that row i, a runner-up, beats the winner somewhere inside the two price ranges,
   with the break-even prices. */
static void facts_price_flip(const sv_plan_row_t *rows, int i, sv_plan_facts_t *f)
{
    char name[96], other[96];
    sv_plan_config_name(&rows[0], name, sizeof name);
    const sv_plan_row_t *r = &rows[i], *x = &rows[0];
    sv_plan_config_name(r, other, sizeof other);
    double be_w = r->cost_hour / x->gpus; /* the winner's price at which r ties */
    double be_r = x->cost_hour / r->gpus; /* r's price at which it ties the winner */
    char when[200], at_price[40] = "its GPUs' catalog prices";
    if (one_gpu(r)) snprintf(at_price, sizeof at_price, "$%.2f/GPU-hour", r->price);
    if (!one_gpu(r) || !one_gpu(x)) /* a mixed fleet: no single break-even price */
        snprintf(when, sizeof when,
                 "at the low ends of its GPUs' price ranges ($%.2f/hour) against the "
                 "winner's high ends ($%.2f/hour)",
                 sv_plan_cost_at(r, -1), sv_plan_cost_at(x, 1));
    else if (be_w < x->price_high && be_r > r->price_low)
        snprintf(when, sizeof when,
                 "when %s costs over $%.2f/GPU-hour (its range reaches $%.2f) or %s under "
                 "$%.2f (its range starts at $%.2f)",
                 x->gpu, be_w, x->price_high, r->gpu, be_r, r->price_low);
    else if (be_w < x->price_high)
        snprintf(when, sizeof when, "when %s costs over $%.2f/GPU-hour (its range reaches $%.2f)",
                 x->gpu, be_w, x->price_high);
    else if (be_r > r->price_low)
        snprintf(when, sizeof when,
                 "when %s costs under $%.2f/GPU-hour (its range starts at $%.2f)", r->gpu, be_r,
                 r->price_low);
    else
        snprintf(when, sizeof when,
                 "when %s costs near its high price ($%.2f) and %s near its low ($%.2f)", x->gpu,
                 x->price_high, r->gpu, r->price_low);
    WARN(f,
         "the ranking changes inside the price ranges: rank %d %s ($%.2f/hour at %s) "
         "beats the winner %s ($%.2f/hour) %s",
         i + 1, other, r->cost_hour, at_price, name, x->cost_hour, when);
}

/* The warnings about the winner (rows[0], when feasible): rows whose error bands overlap its cost,
   datasheet-only figures, and runners-up that beat it inside the price ranges. */
static void facts_winner(const sv_plan_row_t *rows, int nrows, sv_plan_facts_t *f)
{
    if (nrows <= 0 || !rows[0].ok) return;
    char name[96], other[96];
    int idx[MAX_OVERLAPS], n = overlapping(rows, nrows, f->target, idx, MAX_OVERLAPS);
    double lo0, hi0;
    sv_plan_band_cost(&rows[0], f->target, &lo0, &hi0);
    sv_plan_config_name(&rows[0], name, sizeof name);
    if (n > 0) {
        char list[320] = "";
        size_t m = 0;
        for (int k = 0; k < n && m < sizeof list; k++) {
            sv_plan_config_name(&rows[idx[k]], other, sizeof other);
            m += (size_t)snprintf(list + m, sizeof list - m, "%s rank %d %s", k ? "," : "",
                                  idx[k] + 1, other);
        }
        WARN(f,
             "the ranking of the top candidates is within their error bands: %s "
             "($%.2f-%.2f/hour) overlaps%s",
             name, lo0, hi0, list);
    }
    if (rows[0].calibration == SV_CAL_DATASHEET)
        WARN(f,
             "the winner, %s, rests on datasheet-only figures (no measurement of this GPU "
             "or engine): +-%.0f%%",
             name, rows[0].band_pct);
    int shown = 0;
    for (int i = 1; i < nrows && rows[i].ok && shown < 3; i++) {
        int seen = 0; /* one line per GPU type: its cheapest row */
        for (int j = 1; j < i; j++)
            seen |= same_gpus(&rows[j], &rows[i]);
        if (seen || !price_flips(rows, i)) continue;
        shown++;
        facts_price_flip(rows, i, f);
    }
}

/* The warnings about the workload: arrivals smoother than real traffic, and a rate profile the
   capacity search does not probe. */
static void facts_workload(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, sv_plan_facts_t *f)
{
    const sv_workload_cfg_t *w = &sc->workload;
    if (!w->has_trace && w->burstiness >= 1)
        WARN(f,
             "arrivals are %s, smoother than real traffic: on the Azure conversation trace "
             "the same mean rate needed 29%% more GPUs (36 against 28, docs/planning.md); plan on "
             "a trace (workload.trace) or with workload.burstiness < 1",
             w->burstiness == 1 ? "Poisson" : "gamma with burstiness >= 1");
    if (w->profile.kind != SV_PROFILE_NONE && !cfg->profile_peak) {
        double peak = sv_profile_peak(&w->profile);
        WARN(f,
             "the workload's rate_profile is not probed: the capacity search runs at a "
             "constant %.4g req/s, while the profile peaks at %.4g req/s; plan.size_for: peak "
             "sizes for its peak (the day below replays the profile itself)",
             f->target, peak);
    }
}

void sv_plan_facts(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_plan_row_t *rows,
                   int nrows, sv_plan_facts_t *f)
{
    memset(f, 0, sizeof *f);
    const sv_workload_cfg_t *w = &sc->workload;
    const sv_pool_cfg_t *pool = &sc->pools[0];
    f->target = sized_rate(cfg);
    f->layouts = cfg->layouts_given;
    snprintf(f->model, sizeof f->model, "%s", sc->model.name);
    snprintf(f->weights, sizeof f->weights, "%s", sv_dtype_name(pool->perf.weight_dtype));
    snprintf(f->kv, sizeof f->kv, "%s", sv_dtype_name(pool->perf.kv_dtype));
    snprintf(f->engine, sizeof f->engine, "%s", pool->perf.engine);
    snprintf(f->arrivals, sizeof f->arrivals, "%s",
             w->has_trace           ? "the trace's own arrivals rescaled to that mean rate"
             : w->burstiness == 1   ? "Poisson arrivals"
             : isinf(w->burstiness) ? "constant gaps"
                                    : "gamma arrivals");
    if (!w->has_trace && w->burstiness != 1 && !isinf(w->burstiness)) {
        size_t n = strlen(f->arrivals);
        snprintf(f->arrivals + n, sizeof f->arrivals - n, " (burstiness %g)", w->burstiness);
    }
    contract_text(&sc->metrics, f->contract, sizeof f->contract);
    f->per_request = per_request(&sc->metrics);
    f->attain_label = f->per_request ? "SLO %" : "in bounds %";
    f->best_colocated = f->best_disaggregated = -1;
    if (cfg->disaggregated && sc->disaggregated)
        snprintf(f->kv_link, sizeof f->kv_link,
                 "the scenario's %s link, %.4g GB/s per prefill GPU, %.4g us per transfer",
                 sc->link.kind, sc->link.bw_per_gpu / 1e9, sc->link.latency * 1e6);
    else if (cfg->disaggregated)
        snprintf(f->kv_link, sizeof f->kv_link,
                 "InfiniBand at the prefill GPU's figures (disaggregation.kv_link's defaults)");
    for (int i = 0; i < nrows && rows[i].ok; i++) {
        int *b = rows[i].disagg ? &f->best_disaggregated : &f->best_colocated;
        if (*b < 0) *b = i;
    }
    if (cfg->colocated && cfg->disaggregated) facts_versus(rows, f);
    facts_winner(rows, nrows, f);
    facts_workload(sc, cfg, f);
}
#undef WARN

/* A CSV field: quoted, quotes doubled. */
static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* "chat: ttft p99" -> "chat_ttft_p99" (a column name). */
static void column_name(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++) {
        if (*s == ':') continue;
        out[k++] = (*s == ' ' || *s == '.') ? '_' : *s;
    }
    out[k] = '\0';
}

/* The table's heading: the load, the arrivals and contract, the model and engine, the KV link and
   the colocated-versus-disaggregated sentence. */
static void table_heading(FILE *t, const sv_scenario_t *sc, const sv_plan_cfg_t *cfg,
                          const sv_plan_facts_t *f)
{
    fprintf(t, "Plan for %.4g req/s of '%s'", f->target, sc->name);
    if (cfg->peak_factor != 1)
        fprintf(t, " (%.4g x peak factor %.4g)", cfg->target_rate, cfg->peak_factor);
    fprintf(t, ", %s, with %s\n", f->arrivals, f->contract);
    fprintf(t, "model %s, weights %s, KV cache %s, engine profile %s%s\n\n", f->model, f->weights,
            f->kv, f->engine[0] ? f->engine : "none",
            f->per_request ? ""
                           : "; in bounds %: requests within every budget's bound (its "
                             "highest percentile's, per metric)");
    if (f->kv_link[0]) fprintf(t, "disaggregated units send the KV cache over %s\n", f->kv_link);
    if (f->versus[0]) fprintf(t, "%s\n\n", f->versus);
}

/* The configuration column's width: 38, or the longest name's. */
static int name_width(const sv_plan_row_t *rows, int nrows)
{
    int w = 38;
    for (int i = 0; i < nrows; i++) {
        char name[96];
        sv_plan_config_name(&rows[i], name, sizeof name);
        if ((int)strlen(name) > w) w = (int)strlen(name);
    }
    return w;
}

/* The ranking: one line per configuration (sizing, cost, binding SLO, attainment, percentiles,
   each budget's value, confidence), then the budgets' bounds; aw is the attainment column's width.
 */
static void table_ranking(FILE *t, const sv_metrics_cfg_t *m, const sv_plan_row_t *rows, int nrows,
                          const sv_plan_facts_t *f, int aw)
{
    char bn[SV_PLAN_MAX_BUDGETS][48];
    int nb = budget_names(m, bn, NULL);
    char h1[24], h2[24];
    snprintf(h1, sizeof h1, "TTFT p%g", 100.0 * m->attainment);
    snprintf(h2, sizeof h2, "TPOT p%g", 100.0 * m->attainment);
    int nw = name_width(rows, nrows);
    int bw = 7; /* the binding column: as wide as its longest value ("chat: ttft p99") */
    for (int i = 0; i < nrows; i++)
        if (rows[i].ok && (int)strlen(rows[i].binding) > bw) bw = (int)strlen(rows[i].binding);
    fprintf(t, "%4s  %-*s %5s %10s %9s %9s %7s %11s %*s %*s", "rank", nw, "configuration", "GPUs",
            "unit req/s", "$/hour", "$/M tok", "J/tok", "goodput/GPU", bw, "binding", aw,
            f->attain_label);
    if (f->per_request) {
        fprintf(t, " %9s %9s", "TTFT p90", "TPOT p90");
        if (m->attainment != 0.9) fprintf(t, " %9s %9s", h1, h2);
    }
    for (int b = 0; b < nb; b++)
        fprintf(t, " %*s", (int)(strlen(bn[b]) > 9 ? strlen(bn[b]) : 9), bn[b]);
    fprintf(t, "  %s\n", "confidence");
    for (int i = 0; i < nrows; i++) {
        const sv_plan_row_t *r = &rows[i];
        char name[96];
        sv_plan_config_name(r, name, sizeof name);
        if (!r->ok) {
            fprintf(t, "%4s  %-*s %s\n", "-", nw, name, r->error);
            continue;
        }
        fprintf(t, "%4d  %-*s %5d %10.2f %9.2f %9.3f %7.3f %11.3f %*s %*.1f", i + 1, nw, name, r->gpus,
                r->unit_capacity, r->cost_hour, r->cost_mtok, r->energy_tok, r->goodput_per_gpu, bw,
                r->binding, aw, 100.0 * r->attain_at_target);
        if (f->per_request) {
            fprintf(t, " %9.1f %9.2f", r->ttft_p90, r->tpot_p90);
            if (m->attainment != 0.9) fprintf(t, " %9.1f %9.2f", r->ttft_slo_pct, r->tpot_slo_pct);
        }
        for (int b = 0; b < nb; b++)
            fprintf(t, " %*.1f", (int)(strlen(bn[b]) > 9 ? strlen(bn[b]) : 9),
                    b < r->nbudgets ? r->budget[b].value_ms : NAN);
        fprintf(t, "  +-%.0f%% %s%s%s\n", r->band_pct,
                sv_calibration_name((sv_calibration_t)r->calibration),
                r->band_class == SV_BAND_DENSE ? "" : ", ",
                r->band_class == SV_BAND_DENSE ? "" : sv_band_class_name(r->band_class));
    }
    if (nb > 0) {
        fprintf(t, "budgets (ms):");
        for (int b = 0; b < nb; b++) {
            sv_budget_t bud[SV_PLAN_MAX_BUDGETS];
            budget_names(m, bn, bud);
            fprintf(t, "%s %s <= %g", b ? "," : "", bn[b], bud[b].ms);
        }
        fprintf(t, "; each ranked row meets every one at the target rate\n");
    }
}

/* Cost ranges: each ranked row's cost per hour at its GPUs' low, catalog and high prices and with
   the capacity off by its error band; nothing when no row is feasible. */
static void table_cost_ranges(FILE *t, const sv_plan_row_t *rows, int nrows,
                              const sv_plan_facts_t *f)
{
    int any = 0;
    for (int i = 0; i < nrows; i++)
        any |= rows[i].ok;
    if (!any) return;
    int nw = name_width(rows, nrows);
    fprintf(t, "\ncost per hour (USD) at each GPU's low, catalog and high price (catalog "
               "price_low_usd/price_high_usd), and with the capacity off by its error band\n");
    fprintf(t, "%4s  %-*s %15s %9s %9s %9s %17s\n", "rank", nw, "configuration", "$/GPU-hour", "low",
            "catalog", "high", "band low-high");
    for (int i = 0; i < nrows && rows[i].ok; i++) {
        const sv_plan_row_t *r = &rows[i];
        char name[96], pr[40], band[40];
        double lo, hi;
        sv_plan_config_name(r, name, sizeof name);
        sv_plan_band_cost(r, f->target, &lo, &hi);
        if (r->disagg && strcmp(r->gpu, r->dgpu) != 0)
            snprintf(pr, sizeof pr, "%.2f-%.2f+%.2f-%.2f", r->price_low, r->price_high,
                     r->dprice_low, r->dprice_high);
        else
            snprintf(pr, sizeof pr, "%.2f-%.2f", r->price_low, r->price_high);
        snprintf(band, sizeof band, "%.2f-%.2f", lo, hi);
        fprintf(t, "%4d  %-*s %15s %9.2f %9.2f %9.2f %17s\n", i + 1, nw, name, pr,
                sv_plan_cost_at(r, -1), r->cost_hour, sv_plan_cost_at(r, 1), band);
    }
}

/* The day: each ranked row's whole-load totals beside its peak cost, and the autoscaled totals
   when there are; aw is the attainment column's width. */
static void table_day(FILE *t, const sv_scenario_t *sc, const sv_plan_row_t *rows, int nrows,
                      const sv_plan_facts_t *f, int aw)
{
    int nw = name_width(rows, nrows);
    for (int i = 0; i < nrows && rows[i].ok; i++) {
        const sv_plan_row_t *r = &rows[i];
        const sv_plan_day_t *d = &r->day;
        char name[96];
        sv_plan_config_name(r, name, sizeof name);
        if (i == 0) {
            fprintf(t,
                    "\nthe scenario's whole load on the cheapest fleets (%s; %s), beside the "
                    "peak:\n",
                    sc->workload.profile.kind != SV_PROFILE_NONE ? "its rate profile"
                                                                 : "its rate and length",
                    sc->finance.enabled ? "the cost map: wall energy with PUE, energy price, GPU "
                                          "rental or purchase"
                                        : "no cost map: GPU energy, rental price");
            fprintf(t, "%4s  %-*s %7s %9s %10s %10s %10s %9s %9s %7s %*s\n", "rank",
                    nw, "configuration", "hours", "GPU-h", "$ total", "peak $/h", "kWh wall", "$/M tok",
                    "J/tok", "busy %", aw, f->attain_label);
        }
        if (!d->done) {
            if (d->error[0]) fprintf(t, "%4d  %-*s %s\n", i + 1, nw, name, d->error);
            continue;
        }
        fprintf(t, "%4d  %-*s %7.2f %9.1f %10.2f %10.2f %10.2f %9.3f %9.3f %7.1f %*.1f\n", i + 1,
                nw, name, d->hours, d->gpu_hours, d->total_usd, r->cost_hour, d->wall_kwh,
                d->usd_per_mtok, d->wall_j_per_tok, 100.0 * d->busy_share, aw,
                100.0 * d->attainment);
        if (d->autoscaled)
            fprintf(t,
                    "%4s  %-*s %7s %9.1f %10.2f %10s %10.2f %9.3f %9s %7s %*.1f  replicas %.2f "
                    "mean, %d peak\n",
                    "", nw, "  autoscaled up to it", "", d->as_gpu_hours, d->as_total_usd, "",
                    d->as_wall_kwh, d->as_usd_per_mtok, "", "", aw, 100.0 * d->as_attainment,
                    d->as_mean_replicas, d->as_peak_replicas);
        else if (d->error[0])
            fprintf(t, "%4s  %-*s %s\n", "", nw, "  autoscaled up to it", d->error);
    }
}

static void print_table(FILE *t, const sv_scenario_t *sc, const sv_plan_cfg_t *cfg,
                        const sv_plan_row_t *rows, int nrows, const sv_plan_facts_t *f)
{
    int aw = (int)strlen(f->attain_label);
    if (aw < 7) aw = 7;
    table_heading(t, sc, cfg, f);
    table_ranking(t, &sc->metrics, rows, nrows, f, aw);
    table_cost_ranges(t, rows, nrows, f);
    table_day(t, sc, rows, nrows, f, aw);
    if (nrows > 0 && rows[0].ok) {
        fprintf(t,
                "\nconfidence: error bands from servesim validate per calibration status, holding "
                "%.0f%% of left-out validation points (docs/cost-model.md); a capacity off by its "
                "band needs more or fewer units\n",
                sv_band_coverage_pct);
        int k = rows[0].band_class;
        const sv_band_cell_t *from;
        double tt = sv_band_pct(k, SV_CAL_TRANSFERRED, SV_BAND_THROUGHPUT, &from),
               tl = sv_band_pct(k, SV_CAL_TRANSFERRED, SV_BAND_LATENCY, NULL);
        if (k != SV_BAND_DENSE && from)
            fprintf(t,
                    "confidence: a %s model (routed experts or MLA) has its class's bands: "
                    "transferred +-%.0f%% throughput, +-%.0f%% latency from the "
                    "leave-one-family-out residuals of %s; datasheet only +-%.0f%%, +-%.0f%% "
                    "(assumed)\n",
                    sv_band_class_name(k), tt, tl, from->evidence,
                    sv_band_pct(k, SV_CAL_DATASHEET, SV_BAND_THROUGHPUT, NULL),
                    sv_band_pct(k, SV_CAL_DATASHEET, SV_BAND_LATENCY, NULL));
    }
    for (int k = 0; k < f->nwarnings; k++)
        fprintf(t, "warning: %s\n", f->warnings[k]);
}

static int write_csv(const char *path, const sv_scenario_t *sc, const sv_plan_row_t *rows,
                     int nrows, const sv_plan_facts_t *fa, sv_error_t *err)
{
    const sv_metrics_cfg_t *m = &sc->metrics;
    char bn[SV_PLAN_MAX_BUDGETS][48], col[48];
    sv_budget_t bud[SV_PLAN_MAX_BUDGETS];
    int nb = budget_names(m, bn, bud);
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    fputs("rank,gpu,tp,serving,prefill,decode,decode_gpu,decode_tp,best_of_serving,"
          "max_num_seqs,gpus,units,unit_capacity,"
          "goodput_per_gpu,cost_per_hour_usd,cost_per_million_output_tokens_usd,"
          "energy_per_output_token_j,attainment_at_target,goodput_at_target,attainment_basis,"
          "contract_met,ttft_p90_ms,tpot_p90_ms",
          f);
    if (fa->per_request)
        fprintf(f, ",ttft_p%g_ms,tpot_p%g_ms", 100.0 * m->attainment, 100.0 * m->attainment);
    for (int b = 0; b < nb; b++) {
        column_name(bn[b], col, sizeof col);
        fprintf(f, ",%s_ms,%s_budget_ms", col, col);
    }
    fputs(",binding,calibration,throughput_error_band_pct,cost_per_hour_band_low_usd,"
          "cost_per_hour_band_high_usd,price_per_gpu_hour_usd,price_low_usd,price_high_usd,"
          "cost_per_hour_at_price_low_usd,cost_per_hour_at_price_high_usd,"
          "overlaps_winner_in_band,beats_winner_in_price_range,day_hours,day_gpu_hours,"
          "day_total_usd,day_wall_kwh,day_usd_per_million_output_tokens,"
          "day_wall_j_per_output_token,day_attainment,day_autoscaled_gpu_hours,"
          "day_autoscaled_total_usd,day_autoscaled_wall_kwh,model,weight_dtype,kv_cache_dtype,"
          "arrivals,contract,kv_link,decode_price_per_gpu_hour_usd,probes,error",
          f);
    fputs(fa->layouts ? ",layout\n" : "\n", f);
    char b[24][40];
    for (int i = 0; i < nrows; i++) {
        const sv_plan_row_t *r = &rows[i];
        const sv_plan_day_t *d = &r->day;
        double lo = NAN, hi = NAN;
        if (r->ok) sv_plan_band_cost(r, fa->target, &lo, &hi);
        fprintf(f, "%d,%s,%d,%s,%d,%d,%s,%d,%d,%ld,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%d,%s,%s",
                r->ok ? i + 1 : 0, r->gpu, r->tp, r->disagg ? "disaggregated" : "colocated", r->p,
                r->d, r->dgpu, r->dtp, i == fa->best_colocated || i == fa->best_disaggregated,
                r->max_num_seqs, r->gpus, r->units, sv__fmt_double(r->unit_capacity, b[0]),
                sv__fmt_double(r->goodput_per_gpu, b[1]), sv__fmt_double(r->cost_hour, b[2]),
                sv__fmt_double(r->cost_mtok, b[3]), sv__fmt_double(r->energy_tok, b[4]),
                sv__fmt_double(r->ok ? r->attain_at_target : NAN, b[5]),
                sv__fmt_double(r->ok ? r->goodput_at_target : NAN, b[6]),
                fa->per_request ? "per_request" : "budget_bounds", r->ok && r->contract_met,
                sv__fmt_double(r->ok ? r->ttft_p90 : NAN, b[7]),
                sv__fmt_double(r->ok ? r->tpot_p90 : NAN, b[8]));
        if (fa->per_request)
            fprintf(f, ",%s,%s", sv__fmt_double(r->ok ? r->ttft_slo_pct : NAN, b[0]),
                    sv__fmt_double(r->ok ? r->tpot_slo_pct : NAN, b[1]));
        for (int k = 0; k < nb; k++)
            fprintf(f, ",%s,%s",
                    sv__fmt_double(r->ok && k < r->nbudgets ? r->budget[k].value_ms : NAN, b[0]),
                    sv__fmt_double(bud[k].ms, b[1]));
        fprintf(f, ",%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%d", r->binding,
                sv_calibration_name((sv_calibration_t)r->calibration),
                sv__fmt_double(r->band_pct, b[0]), sv__fmt_double(lo, b[1]),
                sv__fmt_double(hi, b[2]), sv__fmt_double(r->price, b[3]),
                sv__fmt_double(r->price_low, b[4]), sv__fmt_double(r->price_high, b[5]),
                sv__fmt_double(r->ok ? sv_plan_cost_at(r, -1) : NAN, b[6]),
                sv__fmt_double(r->ok ? sv_plan_cost_at(r, 1) : NAN, b[7]),
                band_overlaps(rows, nrows, fa->target, i), price_flips(rows, i));
        double na = NAN;
        fprintf(f, ",%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,",
                sv__fmt_double(d->done ? d->hours : na, b[0]),
                sv__fmt_double(d->done ? d->gpu_hours : na, b[1]),
                sv__fmt_double(d->done ? d->total_usd : na, b[2]),
                sv__fmt_double(d->done ? d->wall_kwh : na, b[3]),
                sv__fmt_double(d->done ? d->usd_per_mtok : na, b[4]),
                sv__fmt_double(d->done ? d->wall_j_per_tok : na, b[5]),
                sv__fmt_double(d->done ? d->attainment : na, b[6]),
                sv__fmt_double(d->autoscaled ? d->as_gpu_hours : na, b[7]),
                sv__fmt_double(d->autoscaled ? d->as_total_usd : na, b[8]),
                sv__fmt_double(d->autoscaled ? d->as_wall_kwh : na, b[9]), fa->model, fa->weights,
                fa->kv);
        csv_str(f, fa->arrivals);
        fputc(',', f);
        csv_str(f, fa->contract);
        fputc(',', f);
        csv_str(f, r->disagg ? fa->kv_link : "");
        fprintf(f, ",%s,%ld,", sv__fmt_double(r->dprice, b[0]), r->probes);
        csv_str(f, r->error);
        if (fa->layouts) {
            fputc(',', f);
            csv_str(f, r->layout_name);
        }
        fputc('\n', f);
    }
    return sv__close_out(f, path, err) ? SV_EIO : 0;
}

static void jw_bool(sv_jw_t *w, const char *key, int v)
{
    sv__jw_key(w, key);
    fputs(v ? "true" : "false", w->f);
}

/* Writes plan.json's "contract" object: the SLO text, its attainment basis, every budget and the
   request classes. */
static void json_contract(sv_jw_t *w, const sv_metrics_cfg_t *m, const sv_plan_facts_t *fa)
{
    char bn[SV_PLAN_MAX_BUDGETS][48];
    sv_budget_t bud[SV_PLAN_MAX_BUDGETS];
    int nb = budget_names(m, bn, bud);
    sv__jw_obj(w, "contract");
    sv__jw_str(w, "text", fa->contract);
    sv__jw_str(w, "attainment_basis", fa->per_request ? "per_request" : "budget_bounds");
    sv__jw_arr(w, "budgets");
    for (int b = 0; b < nb; b++) {
        sv__jw_obj(w, NULL);
        sv__jw_str(w, "name", bn[b]);
        sv__jw_str(w, "metric", sv_slo_metric_name(bud[b].metric));
        sv__jw_num(w, "percentile", bud[b].pct);
        sv__jw_num(w, "budget_ms", bud[b].ms);
        sv__jw_end_obj(w);
    }
    sv__jw_end_arr(w);
    sv__jw_arr(w, "classes");
    for (int c = 0; c < m->nclasses; c++)
        sv__jw_str(w, NULL, m->class_name[c]);
    sv__jw_end_arr(w);
    sv__jw_end_obj(w);
}

/* Writes a feasible row's sizing results: GPUs, cost, energy, the contract check at the target and
   each budget's value and margin. */
static void json_row_result(sv_jw_t *w, const sv_metrics_cfg_t *m, const sv_plan_row_t *r,
                            const sv_plan_facts_t *fa)
{
    sv__jw_int(w, "gpus", r->gpus);
    sv__jw_int(w, "units", r->units);
    sv__jw_num(w, "unit_capacity", r->unit_capacity);
    sv__jw_num(w, "goodput_per_gpu", r->goodput_per_gpu);
    sv__jw_num(w, "cost_per_hour_usd", r->cost_hour);
    sv__jw_num(w, "cost_per_million_output_tokens_usd", r->cost_mtok);
    sv__jw_num(w, "energy_per_output_token_j", r->energy_tok);
    jw_bool(w, "contract_met", r->contract_met);
    sv__jw_num(w, "attainment_at_target", r->attain_at_target);
    sv__jw_num(w, "goodput_at_target", r->goodput_at_target);
    sv__jw_str(w, "binding_slo", r->binding);
    sv__jw_num(w, "ttft_p90_ms", r->ttft_p90);
    sv__jw_num(w, "tpot_p90_ms", r->tpot_p90);
    if (fa->per_request) {
        sv__jw_num(w, "slo_percentile", 100.0 * m->attainment);
        sv__jw_num(w, "ttft_slo_percentile_ms", r->ttft_slo_pct);
        sv__jw_num(w, "tpot_slo_percentile_ms", r->tpot_slo_pct);
    }
    sv__jw_arr(w, "budgets");
    for (int b = 0; b < r->nbudgets; b++) {
        sv__jw_obj(w, NULL);
        sv__jw_str(w, "name", r->budget[b].name);
        sv__jw_num(w, "budget_ms", r->budget[b].budget_ms);
        sv__jw_num(w, "value_ms", r->budget[b].value_ms);
        sv__jw_num(w, "margin_ms", r->budget[b].budget_ms - r->budget[b].value_ms);
        jw_bool(w, "met", r->budget[b].met);
        sv__jw_end_obj(w);
    }
    sv__jw_end_arr(w);
}

/* Writes a row's "day" object (the simulated day's totals and, when autoscaled, the autoscaled
   totals), or nothing when the row has no day. */
static void json_row_day(sv_jw_t *w, const sv_plan_day_t *d)
{
    if (!d->done && !d->error[0]) return;
    sv__jw_obj(w, "day");
    if (d->done) {
        sv__jw_num(w, "hours", d->hours);
        sv__jw_num(w, "requests", d->requests);
        sv__jw_num(w, "output_tokens", d->output_tokens);
        sv__jw_num(w, "attainment", d->attainment);
        sv__jw_num(w, "gpu_hours", d->gpu_hours);
        sv__jw_num(w, "gpu_usd", d->gpu_usd);
        sv__jw_num(w, "energy_usd", d->energy_usd);
        sv__jw_num(w, "total_usd", d->total_usd);
        sv__jw_num(w, "wall_kwh", d->wall_kwh);
        sv__jw_num(w, "usd_per_million_output_tokens", d->usd_per_mtok);
        sv__jw_num(w, "wall_j_per_output_token", d->wall_j_per_tok);
        sv__jw_num(w, "gpu_busy_share", d->busy_share);
    }
    if (d->autoscaled) {
        sv__jw_obj(w, "autoscaled");
        sv__jw_num(w, "gpu_hours", d->as_gpu_hours);
        sv__jw_num(w, "total_usd", d->as_total_usd);
        sv__jw_num(w, "wall_kwh", d->as_wall_kwh);
        sv__jw_num(w, "usd_per_million_output_tokens", d->as_usd_per_mtok);
        sv__jw_num(w, "attainment", d->as_attainment);
        sv__jw_num(w, "mean_replicas", d->as_mean_replicas);
        sv__jw_int(w, "peak_replicas", d->as_peak_replicas);
        sv__jw_end_obj(w);
    }
    if (d->error[0]) sv__jw_str(w, "error", d->error);
    sv__jw_end_obj(w);
}

/* Writes one element of plan.json's "configurations" array: row i's placement, its results or
   error, calibration and price band, and its day. */
static void json_row(sv_jw_t *w, const sv_metrics_cfg_t *m, const sv_plan_row_t *rows, int nrows,
                     int i, const sv_plan_facts_t *fa)
{
    const sv_plan_row_t *r = &rows[i];
    char name[96];
    sv_plan_config_name(r, name, sizeof name);
    sv__jw_obj(w, NULL);
    sv__jw_int(w, "rank", r->ok ? i + 1 : 0);
    sv__jw_str(w, "configuration", name);
    sv__jw_str(w, "gpu", r->gpu);
    sv__jw_int(w, "tp", r->tp);
    sv__jw_str(w, "serving", r->disagg ? "disaggregated" : "colocated");
    sv__jw_int(w, "prefill_replicas_per_unit", r->p);
    sv__jw_int(w, "decode_replicas_per_unit", r->d);
    sv__jw_str(w, "decode_gpu", r->dgpu);
    sv__jw_int(w, "decode_tp", r->dtp);
    sv__jw_num(w, "decode_price_per_gpu_hour_usd", r->dprice);
    sv__jw_num(w, "decode_price_low_usd", r->dprice_low);
    sv__jw_num(w, "decode_price_high_usd", r->dprice_high);
    sv__jw_int(w, "max_num_seqs", r->max_num_seqs);
    if (fa->layouts) sv__jw_str(w, "layout", r->layout_name);
    if (r->ok)
        json_row_result(w, m, r, fa);
    else
        sv__jw_str(w, "error", r->error);
    sv__jw_int(w, "probes", r->probes);
    sv__jw_str(w, "calibration", sv_calibration_name((sv_calibration_t)r->calibration));
    sv__jw_str(w, "model_class", sv_band_class_name(r->band_class));
    sv__jw_num(w, "throughput_error_band_pct", r->band_pct);
    sv__jw_num(w, "price_per_gpu_hour_usd", r->price);
    sv__jw_num(w, "price_low_usd", r->price_low);
    sv__jw_num(w, "price_high_usd", r->price_high);
    if (r->ok) {
        double lo, hi;
        sv_plan_band_cost(r, fa->target, &lo, &hi);
        sv__jw_num(w, "cost_per_hour_low_usd", lo);
        sv__jw_num(w, "cost_per_hour_high_usd", hi);
        sv__jw_num(w, "cost_per_hour_at_price_low_usd", sv_plan_cost_at(r, -1));
        sv__jw_num(w, "cost_per_hour_at_price_high_usd", sv_plan_cost_at(r, 1));
        jw_bool(w, "overlaps_winner_in_band", band_overlaps(rows, nrows, fa->target, i));
        jw_bool(w, "beats_winner_in_price_range", price_flips(rows, i));
    }
    json_row_day(w, &r->day);
    sv__jw_end_obj(w);
}

/* Writes "best_colocated" and "best_disaggregated": each the best row of its serving mode, or null.
 */
static void json_best(sv_jw_t *w, const sv_plan_row_t *rows, const sv_plan_facts_t *fa)
{
    const char *bk[2] = {"best_colocated", "best_disaggregated"};
    int bi[2] = {fa->best_colocated, fa->best_disaggregated};
    for (int k = 0; k < 2; k++) {
        if (bi[k] < 0) {
            sv__jw_key(w, bk[k]);
            fputs("null", w->f);
            continue;
        }
        const sv_plan_row_t *r = &rows[bi[k]];
        char name[96];
        sv_plan_config_name(r, name, sizeof name);
        sv__jw_obj(w, bk[k]);
        sv__jw_int(w, "rank", bi[k] + 1);
        sv__jw_str(w, "configuration", name);
        sv__jw_int(w, "gpus", r->gpus);
        sv__jw_num(w, "cost_per_hour_usd", r->cost_hour);
        sv__jw_num(w, "goodput_per_gpu", r->goodput_per_gpu);
        sv__jw_end_obj(w);
    }
}

static int write_json(const char *path, const sv_scenario_t *sc, const sv_plan_cfg_t *cfg,
                      const sv_plan_row_t *rows, int nrows, const sv_plan_facts_t *fa,
                      sv_error_t *err)
{
    const sv_metrics_cfg_t *m = &sc->metrics;
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    sv_jw_t w;
    sv__jw_init(&w, f);
    sv__jw_obj(&w, NULL);
    sv__jw_str(&w, "scenario", sc->name);
    sv__jw_str(&w, "model", fa->model);
    sv__jw_str(&w, "weight_dtype", fa->weights);
    sv__jw_str(&w, "kv_cache_dtype", fa->kv);
    sv__jw_str(&w, "engine_profile", fa->engine);
    sv__jw_str(&w, "arrivals", fa->arrivals);
    sv__jw_num(&w, "target_rate", cfg->target_rate);
    sv__jw_num(&w, "peak_factor", cfg->peak_factor);
    sv__jw_num(&w, "sized_for_rate", fa->target);
    sv__jw_num(&w, "attainment", m->attainment);
    sv__jw_num(&w, "slo_ttft_ms", m->slo_ttft_ms);
    sv__jw_num(&w, "slo_tpot_ms", m->slo_tpot_ms);
    sv__jw_num(&w, "slo_e2el_ms", m->slo_e2el_ms);
    json_contract(&w, m, fa);
    sv__jw_arr(&w, "configurations");
    for (int i = 0; i < nrows; i++)
        json_row(&w, m, rows, nrows, i, fa);
    sv__jw_end_arr(&w);
    json_best(&w, rows, fa);
    sv__jw_str(&w, "colocated_versus_disaggregated", fa->versus);
    sv__jw_str(&w, "kv_link", fa->kv_link);
    sv__jw_arr(&w, "warnings");
    for (int k = 0; k < fa->nwarnings; k++)
        sv__jw_str(&w, NULL, fa->warnings[k]);
    sv__jw_end_arr(&w);
    sv__jw_end_obj(&w);
    fputc('\n', f);
    return sv__close_out(f, path, err) ? SV_EIO : 0;
}

int sv_plan_write(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, sv_plan_row_t *rows, int nrows,
                  const char *outdir, FILE *t, sv_error_t *err)
{
    rank(rows, nrows);
    sv_plan_facts_t fa;
    sv_plan_facts(sc, cfg, rows, nrows, &fa);
    if (t) print_table(t, sc, cfg, rows, nrows, &fa);
    if (!outdir) return 0;
    if (mkdir(outdir, 0755) && errno != EEXIST)
        return sv_errorf(err, SV_EIO, "%s: cannot create: %s", outdir, strerror(errno));
    char path[1200];
    snprintf(path, sizeof path, "%s/plan.csv", outdir);
    int rc = write_csv(path, sc, rows, nrows, &fa, err);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/plan.json", outdir);
    return write_json(path, sc, cfg, rows, nrows, &fa, err);
}
