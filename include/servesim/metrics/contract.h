/*
 * Contracts: judging a run against the SLOs as people write them (docs/contracts.md).
 * An SLO (sv_slo_t, metrics.h) holds per-request thresholds (vLLM's --goodput: the share
 * of requests meeting every one must reach the attainment target) and percentile budgets
 * ("p99 TTFT <= 4000 ms"). This is the one definition of "the contract holds" that the
 * report, sweep's knee and plan's capacity search use.
 *
 * A budget's value is the percentile over the completed requests (vLLM's definition,
 * the number the summary prints); it is also missed when more requests failed than the
 * percentile leaves room for (a failed request never met any budget).
 *
 * Ownership: plain caller-owned structs.
 */
#ifndef SERVESIM_CONTRACT_H
#define SERVESIM_CONTRACT_H

#include "servesim/metrics/metrics.h"

/* "ttft", "tpot", "itl", "e2el" */
const char *sv_slo_metric_name(int k);

typedef struct sv_budget_check {
    sv_budget_t b;
    double value;  /* ms, the percentile over completed requests */
    double margin; /* ms, budget - value: negative when missed on latency */
    int met;
} sv_budget_check_t;

/* One SLO against one summary. */
typedef struct sv_slo_check {
    int per_request;  /* the SLO has per-request thresholds */
    double attained;  /* share of requests meeting them (NAN without) */
    int attained_met; /* attained >= target (1 without thresholds) */
    sv_budget_check_t budget[SV_MAX_BUDGETS];
    int nbudgets;
    int met;         /* everything above holds */
    char broken[48]; /* the worst-missed part ("ttft p99", "attainment"), "" when met */
    double worst;    /* its relative shortfall (0 when met) */
} sv_slo_check_t;

void sv_slo_check(const sv_slo_t *slo, const sv_summary_t *s, sv_slo_check_t *out);

/* The SLO judged for class cls, or for the whole workload (cls < 0): with classes, the
 * whole is judged by the top-level budgets only (its per-request thresholds are the
 * classes' defaults, judged per class). */
void sv_contract_slo(const sv_metrics_cfg_t *c, int cls, sv_slo_t *out);

/* The whole contract: the top-level SLO on the whole summary and each class's SLO on its
 * own summary (cls: nclasses summaries, or NULL). */
typedef struct sv_contract_check {
    int given;   /* any SLO at all */
    int layered; /* percentile budgets or classes: the output names what broke */
    int met;
    char broken[64]; /* the worst-missed budget, prefixed by its class ("chat: ttft p99") */
} sv_contract_check_t;

void sv_contract_check(const sv_metrics_cfg_t *c, const sv_summary_t *all, const sv_summary_t *cls,
                       sv_contract_check_t *out);

#endif
