/*
 * Internal: the contract part of a run's report (docs/contracts.md): every percentile
 * budget met or missed with its value and margin, and the per-class table. Printed and
 * written only for layered contracts (percentile budgets) or request classes, so the
 * output of a scenario with neither is unchanged.
 *
 * Ownership: writes into the caller's stream or JSON writer; keeps nothing.
 */
#ifndef SERVESIM_CONTRACT_INT_H
#define SERVESIM_CONTRACT_INT_H

#include <stdio.h>

#include "base/jsonw_int.h"
#include "servesim/cluster/sim.h"

/* The terminal section ("servesim: contract"), nothing when not layered. */
void sv__report_contract_text(const sv_result_t *res, FILE *f);
/* One line of the contract: a per-request attainment (values in %) or a percentile budget
 * (values in ms) of the whole workload (cls -1, who "all") or of class cls. */
typedef struct sv__budget_row {
    char who[SV_CLASS_NAME];
    char what[48]; /* "per-request attainment %", "ttft p99 ms" */
    int cls;
    int attainment; /* 1: the per-request attainment line */
    int metric;     /* SV_K_* (-1 for the attainment line) */
    double pct;
    double value, limit, margin; /* margin = limit - value (value - limit for attainment) */
    int met;
} sv__budget_row_t;
#define SV__MAX_BUDGET_ROWS ((SV_MAX_CLASSES + 1) * (SV_MAX_BUDGETS + 1))
/* Every budget line, in the terminal's order; their count (0 when not layered). */
int sv__contract_budget_rows(const sv_result_t *res, sv__budget_row_t *out);

/* The per-class table: a row per class, then "all"; each cell as the terminal prints it
 * (class, share, prio, done, failed, req/s, tok/s, p99 TTFT, p99 TPOT, p99 E2EL, SLO %,
 * contract), and the p99s as numbers for charts. Row count, 0 without classes. */
#define SV__CLASS_COLS 12
#define SV__CLASS_CELL 64
typedef struct sv__class_row {
    char cell[SV__CLASS_COLS][SV__CLASS_CELL];
    double ttft_p99, tpot_p99, e2el_p99;
    int met;
} sv__class_row_t;
extern const char *const sv__class_heads[SV__CLASS_COLS];
int sv__contract_class_rows(const sv_result_t *res, sv__class_row_t *out);

/* "contract" and "classes" keys inside the servesim object, nothing when not layered. */
void sv__report_contract_json(sv_jw_t *w, const sv_result_t *res);

#endif
