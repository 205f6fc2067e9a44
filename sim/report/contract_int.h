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
/* "contract" and "classes" keys inside the servesim object, nothing when not layered. */
void sv__report_contract_json(sv_jw_t *w, const sv_result_t *res);

#endif
