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
 * A disaggregated unit's phases may run on different GPU types and TP degrees
 * (plan.prefill / plan.decode lists, searched as a cross product with the ratios), the KV
 * cache crossing the scenario's link (InfiniBand at the prefill GPU's figures when the
 * scenario is colocated). The scenario itself may be colocated or disaggregated: each
 * phase starts from its own pool's engine settings. Every output sets the cheapest
 * colocated plan beside the cheapest disaggregated one.
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

#define SV_BINDING_MAX 64      /* bytes of a binding SLO name */
#define SV_PLAN_MAX_BUDGETS 16 /* budgets judged per row: the top level's and every class's */
#define SV_PLAN_MAX_WARN 12    /* warnings a plan carries (sv_plan_facts_t) */
#define SV_PLAN_DAY_ROWS 3     /* the cheapest rows whose day is simulated */

/* One percentile budget of the contract, judged on the cluster at the target rate. */
typedef struct sv_plan_budget {
    char name[48]; /* "ttft p99", or "chat: ttft p99" for a class's */
    double budget_ms, value_ms;
    int met;
} sv_plan_budget_t;

/* The scenario's whole load served by a row's fleet (the day, for a rate profile over
 * 24 hours): what it costs and draws, fixed and (with an autoscaler map) autoscaled. */
typedef struct sv_plan_day {
    int done; /* simulated (the cheapest SV_PLAN_DAY_ROWS feasible rows) */
    char error[SV_ERRMSG_MAX];
    double hours; /* the load's duration */
    double requests, output_tokens, attainment;
    double gpu_hours, gpu_usd, energy_usd, total_usd, wall_kwh, usd_per_mtok, wall_j_per_tok;
    double busy_share; /* over the replicas up */
    int autoscaled;    /* the autoscaled fleet below was simulated */
    double as_gpu_hours, as_total_usd, as_wall_kwh, as_usd_per_mtok, as_attainment;
    double as_mean_replicas;
    int as_peak_replicas;
} sv_plan_day_t;

typedef struct sv_plan_row {
    char gpu[SV_NAME_MAX];
    int tp;
    int disagg, p, d; /* disaggregated unit: p prefill + d decode replicas */
    /* The decode phase's placement (gpu and tp above are the prefill phase's, or the
     * colocated replica's); equal to gpu/tp unless plan.prefill/plan.decode split them. */
    char dgpu[SV_NAME_MAX];
    int dtp;
    double dprice, dprice_low, dprice_high;
    long max_num_seqs;
    int layout;           /* index into plan.layouts, applied to every pool of the row */
    char layout_name[48]; /* its label ("EP8 DPA8", "MTP3"; "" for the empty layout) */
    int ok;               /* 0: infeasible or failed; error says why (whole: never cut) */
    char error[SV_ERRMSG_MAX];
    double unit_capacity; /* req/s one unit sustains within the SLOs */
    int unit_gpus;
    int units, gpus; /* for the target rate */
    /* Of the whole cluster at the target rate: the share of requests meeting every
     * per-request threshold, or, for a contract of percentile budgets only, the share within
     * every budget's bound (sv_plan_attainment_basis); goodput: those requests per second. */
    double attain_at_target;
    double goodput_at_target;
    int contract_met; /* the verification run meets the whole contract */
    double cost_hour, cost_mtok, energy_tok;
    double price, price_low, price_high; /* USD per GPU-hour: used, and its public range */
    /* latency of the whole cluster at the target rate, ms: p90 and the SLO's percentile
     * (100 x slo.attainment) of TTFT and TPOT */
    double ttft_p90, tpot_p90, ttft_slo_pct, tpot_slo_pct;
    sv_plan_budget_t budget[SV_PLAN_MAX_BUDGETS]; /* each percentile budget, at the target */
    int nbudgets;
    double goodput_per_gpu;       /* unit capacity / unit GPUs (DistServe's metric) */
    char binding[SV_BINDING_MAX]; /* ttft, tpot or e2el: the SLO that fails first past
                                     capacity; a layered contract's broken budget ("ttft
                                     p99", "chat: ttft p99") */
    long probes;                  /* simulations run */
    int calibration;              /* sv_calibration_t: the weaker of the GPU's and the profile's */
    double band_pct; /* expected throughput error at that status and class (sv_band_pct) */
    int band_class;  /* the model's band class: SV_BAND_DENSE or SV_BAND_MOE_MLA */
    sv_plan_day_t day;
} sv_plan_row_t;

/*
 * What every plan output says besides the rows, computed once (sv_plan_facts) so the
 * terminal, plan.csv, plan.json and the HTML page carry the same facts.
 */
typedef struct sv_plan_facts {
    double target; /* req/s sized for: target_rate x peak_factor */
    char model[SV_NAME_MAX];
    char weights[16], kv[16]; /* weight and KV cache dtypes */
    char engine[SV_NAME_MAX]; /* engine profile, "" without */
    char arrivals[200];       /* "Poisson arrivals", "the trace's own arrivals ..." */
    char contract[512];       /* the contract as written: thresholds, budgets, classes */
    int per_request;          /* attainment is of per-request thresholds (else budget bounds) */
    const char *attain_label; /* its column name: "SLO %" or "in bounds %" */
    char warnings[SV_PLAN_MAX_WARN][480];
    int nwarnings;
    /* The cheapest feasible colocated row and the cheapest disaggregated one (row indexes,
     * -1 when the plan has none), and a sentence setting them side by side ("" unless both
     * serving modes were searched). */
    int best_colocated, best_disaggregated;
    char versus[480];
    char kv_link[200]; /* the link a disaggregated unit's KV cache crosses ("" without) */
    int layouts;       /* plan.layouts was given: plan.csv and plan.json name each row's */
} sv_plan_facts_t;
/* The facts of a ranked plan (sv_plan_run ranks it). */
void sv_plan_facts(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_plan_row_t *rows,
                   int nrows, sv_plan_facts_t *out);

/* A row's cost per hour at its GPUs' low (which < 0), used (0) or high (> 0) price; a
 * split row prices each phase's GPUs at their own. */
double sv_plan_cost_at(const sv_plan_row_t *r, int which);

/* "a100-80gb TP1 1:2 P:D seqs 256"; a split row adds its decode placement
 * ("a100-80gb TP1 1:2 h100-sxm TP2 seqs 256"); a row's layout follows the first TP
 * ("h200 TP8 EP8 DPA8 colocated seqs 256"). */
void sv_plan_config_name(const sv_plan_row_t *r, char *buf, size_t n);

/* Cost per hour of a ranked row if its unit capacity were off by its band (whole units). */
void sv_plan_band_cost(const sv_plan_row_t *r, double target, double *lo, double *hi);

/*
 * The highest rate at which `base` (its pools as given) meets its SLOs for at least
 * slo.attainment of `requests` requests, found by bracketing and bisection to relative
 * tolerance tol. binding (>= SV_BINDING_MAX bytes) names the SLO least met just past it
 * (or the percentile budget that broke, for a layered contract). 0 when even
 * a very light load misses the SLOs (*rate = 0).
 */
int sv_capacity(const sv_scenario_t *base, long requests, double tol, double *rate, char *binding,
                long *probes, sv_error_t *err);

/* Evaluate every configuration, rank the rows (by cost per hour, infeasible last), then
 * simulate the scenario's whole load on the cheapest SV_PLAN_DAY_ROWS (row.day). */
int sv_plan_run(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_catalog_t *cat,
                int jobs, sv_plan_row_t **rows, int *nrows, FILE *progress, sv_error_t *err);

/* Rank (stable; a no-op on sv_plan_run's rows), print the table, write plan.csv and
 * plan.json into outdir (NULL: print only). */
int sv_plan_write(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, sv_plan_row_t *rows, int nrows,
                  const char *outdir, FILE *table, sv_error_t *err);

#endif
