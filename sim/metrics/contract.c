/*
 * Contracts (see include/servesim/metrics/contract.h): per budget met or missed with its
 * value and margin, and the verdict of the whole contract with the budget that broke
 * worst, so a knee or a capacity can say which budget it ran into.
 */
#include "servesim/metrics/contract.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *sv_slo_metric_name(int k)
{
    static const char *const names[SV_K_COUNT] = {"ttft", "tpot", "itl", "e2el"};
    return k >= 0 && k < SV_K_COUNT ? names[k] : "?";
}

void sv_slo_check(const sv_slo_t *slo, const sv_summary_t *s, sv_slo_check_t *out)
{
    memset(out, 0, sizeof *out);
    out->met = 1;
    long total = s->completed + s->failed;
    out->per_request = !isnan(slo->ttft_ms) || !isnan(slo->tpot_ms) || !isnan(slo->e2el_ms);
    out->attained = NAN;
    out->attained_met = 1;
    if (out->per_request) {
        out->attained = total > 0 ? (double)s->good / (double)total : 0.0;
        out->attained_met = out->attained >= slo->attainment;
        if (!out->attained_met) {
            out->met = 0;
            out->worst = (slo->attainment - out->attained) / slo->attainment;
            snprintf(out->broken, sizeof out->broken, "attainment");
        }
    }
    double failed = total > 0 ? (double)s->failed / (double)total : 0.0;
    out->nbudgets = slo->nbudgets;
    for (int i = 0; i < slo->nbudgets; i++) {
        sv_budget_check_t *b = &out->budget[i];
        b->b = slo->budget[i];
        b->value = s->budget_ms[i];
        b->margin = b->b.ms - b->value;
        b->met = b->value <= b->b.ms && failed <= 1.0 - b->b.pct / 100.0;
        if (b->met) continue;
        out->met = 0;
        /* how far past the budget, relative; failures past the room count as the worst */
        double short_by = b->value <= b->b.ms ? INFINITY : (b->value - b->b.ms) / b->b.ms;
        if (!out->broken[0] || short_by > out->worst) {
            out->worst = short_by;
            snprintf(out->broken, sizeof out->broken, "%s p%g", sv_slo_metric_name(b->b.metric),
                     b->b.pct);
        }
    }
}

void sv_contract_slo(const sv_metrics_cfg_t *c, int cls, sv_slo_t *out)
{
    sv_metrics_slo(c, cls, out);
    if (cls < 0 && c->nclasses > 0) out->ttft_ms = out->tpot_ms = out->e2el_ms = NAN;
}

void sv_contract_check(const sv_metrics_cfg_t *c, const sv_summary_t *all, const sv_summary_t *cls,
                       sv_contract_check_t *out)
{
    memset(out, 0, sizeof *out);
    out->met = 1;
    sv_slo_t slo;
    sv_slo_check_t k;
    double worst = -1;
    for (int i = -1; i < (cls ? c->nclasses : 0); i++) {
        sv_contract_slo(c, i, &slo);
        if (slo.nbudgets == 0 && isnan(slo.ttft_ms) && isnan(slo.tpot_ms) && isnan(slo.e2el_ms))
            continue;
        out->given |=
            slo.nbudgets > 0 || !isnan(slo.ttft_ms) || !isnan(slo.tpot_ms) || !isnan(slo.e2el_ms);
        out->layered |= slo.nbudgets > 0 || c->nclasses > 0;
        sv_slo_check(&slo, i < 0 ? all : &cls[i], &k);
        if (k.met) continue;
        out->met = 0;
        if (k.worst > worst) {
            worst = k.worst;
            if (i < 0)
                snprintf(out->broken, sizeof out->broken, "%s", k.broken);
            else
                snprintf(out->broken, sizeof out->broken, "%s: %s", c->class_name[i], k.broken);
        }
    }
}
