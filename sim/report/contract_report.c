/*
 * The contract part of a run's report (see sim/report/contract_int.h): the one verdict of
 * sv_contract_check, each budget's value and margin, and the classes side by side.
 */
#include "report/contract_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "servesim/metrics/contract.h"

static int layered(const sv_result_t *res)
{
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    return c->nbudgets > 0 || c->nclasses > 0;
}

/* p99 of a summary's standard list (50, 90, 95, 99 are always there). */
static double p99(const sv_summary_t *s, const sv_stat_t *st)
{
    for (int i = 0; i < s->npcts; i++)
        if (s->pcts[i] == 99.0) return st->pct[i];
    return NAN;
}

/* The budget rows of one SLO judged on one summary, appended at out[n]; the new count. */
static int budget_rows(const char *who, int cls, const sv_slo_t *slo, const sv_summary_t *s,
                       sv__budget_row_t *out, int n)
{
    sv_slo_check_t k;
    sv_slo_check(slo, s, &k);
    if (k.per_request) {
        sv__budget_row_t *r = &out[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->who, sizeof r->who, "%s", who);
        snprintf(r->what, sizeof r->what, "per-request attainment %%");
        r->cls = cls;
        r->attainment = 1;
        r->metric = -1;
        r->value = 100.0 * k.attained;
        r->limit = 100.0 * slo->attainment;
        r->margin = 100.0 * (k.attained - slo->attainment);
        r->met = k.attained_met;
    }
    for (int i = 0; i < k.nbudgets; i++) {
        const sv_budget_check_t *b = &k.budget[i];
        sv__budget_row_t *r = &out[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->who, sizeof r->who, "%s", who);
        snprintf(r->what, sizeof r->what, "%s p%g ms", sv_slo_metric_name(b->b.metric), b->b.pct);
        r->cls = cls;
        r->metric = b->b.metric;
        r->pct = b->b.pct;
        r->value = b->value;
        r->limit = b->b.ms;
        r->margin = b->margin;
        r->met = b->met;
    }
    return n;
}

int sv__contract_budget_rows(const sv_result_t *res, sv__budget_row_t *out)
{
    if (!layered(res)) return 0;
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    sv_slo_t slo;
    int n = 0;
    sv_contract_slo(c, -1, &slo);
    if (c->nbudgets > 0 || c->nclasses == 0)
        n = budget_rows("all", -1, &slo, &res->summary, out, n);
    for (int k = 0; k < c->nclasses && res->class_summary; k++) {
        sv_metrics_slo(c, k, &slo);
        n = budget_rows(c->class_name[k], k, &slo, &res->class_summary[k], out, n);
    }
    return n;
}

const char *const sv__class_heads[SV__CLASS_COLS] = {"class",    "share",    "prio",  "done",
                                                     "failed",   "req/s",    "tok/s", "p99 TTFT",
                                                     "p99 TPOT", "p99 E2EL", "SLO %", "contract"};

int sv__contract_class_rows(const sv_result_t *res, sv__class_row_t *out)
{
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    const sv_workload_cfg_t *w = &res->sc->workload;
    if (!layered(res) || c->nclasses == 0 || !res->class_summary) return 0;
    sv_contract_check_t v;
    sv_contract_check(c, &res->summary, res->class_summary, &v);
    for (int k = 0; k <= c->nclasses; k++) {
        const sv_summary_t *s = k < c->nclasses ? &res->class_summary[k] : &res->summary;
        char(*x)[SV__CLASS_CELL] = out[k].cell;
        long total = s->completed + s->failed;
        sv_slo_check_t ck;
        sv_slo_t slo;
        if (k < c->nclasses) {
            sv_metrics_slo(c, k, &slo);
            sv_slo_check(&slo, s, &ck);
        }
        out[k].ttft_p99 = p99(s, &s->ttft);
        out[k].tpot_p99 = p99(s, &s->tpot);
        out[k].e2el_p99 = p99(s, &s->e2el);
        snprintf(x[0], SV__CLASS_CELL, "%s", k < c->nclasses ? c->class_name[k] : "all");
        snprintf(x[1], SV__CLASS_CELL, "%.2f", k < c->nclasses ? w->classes[k].share : 1.0);
        if (k < c->nclasses)
            snprintf(x[2], SV__CLASS_CELL, "%d", (int)w->classes[k].priority);
        else
            snprintf(x[2], SV__CLASS_CELL, "-");
        snprintf(x[3], SV__CLASS_CELL, "%ld", s->completed);
        snprintf(x[4], SV__CLASS_CELL, "%ld", s->failed);
        snprintf(x[5], SV__CLASS_CELL, "%.2f", s->request_throughput);
        snprintf(x[6], SV__CLASS_CELL, "%.1f", s->output_throughput);
        snprintf(x[7], SV__CLASS_CELL, "%.2f", out[k].ttft_p99);
        snprintf(x[8], SV__CLASS_CELL, "%.2f", out[k].tpot_p99);
        snprintf(x[9], SV__CLASS_CELL, "%.2f", out[k].e2el_p99);
        if (!isnan(s->request_goodput))
            snprintf(x[10], SV__CLASS_CELL, "%.2f",
                     total > 0 ? 100.0 * (double)s->good / (double)total : 0.0);
        else
            snprintf(x[10], SV__CLASS_CELL, "-");
        out[k].met = k == c->nclasses ? v.met : ck.met;
        snprintf(x[11], SV__CLASS_CELL, "%s",
                 k == c->nclasses ? (v.met ? "met" : "missed")
                 : ck.met         ? "met"
                                  : ck.broken);
    }
    return c->nclasses + 1;
}

void sv__report_contract_text(const sv_result_t *res, FILE *f)
{
    if (!layered(res)) return;
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    sv__budget_row_t rows[SV__MAX_BUDGET_ROWS];
    fprintf(f, "%s\n", "================ servesim: contract ================");
    fprintf(f, "%-30s %10s %10s %10s  %s\n", "budget", "value", "budget", "margin", "");
    int n = sv__contract_budget_rows(res, rows);
    for (int i = 0; i < n; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s: %s", rows[i].who, rows[i].what);
        fprintf(f, "%-30s %10.2f %10.2f %+10.2f  %s\n", name, rows[i].value, rows[i].limit,
                rows[i].margin, rows[i].met ? "met" : "MISSED");
    }
    sv_contract_check_t v;
    sv_contract_check(c, &res->summary, res->class_summary, &v);
    fprintf(f, "%-40s %s%s%s\n", "Contract:", v.met ? "met" : "missed",
            v.met ? "" : ", worst broken: ", v.met ? "" : v.broken);
    sv__class_row_t cr[SV_MAX_CLASSES + 1];
    int nc = sv__contract_class_rows(res, cr);
    if (nc == 0) return;
    const char *const *H = sv__class_heads;
    fprintf(f, "%s\n", "----------------- request classes ------------------");
    fprintf(f, "%-12s %5s %4s %7s %6s %8s %9s %10s %10s %10s %8s  %s\n", H[0], H[1], H[2], H[3],
            H[4], H[5], H[6], H[7], H[8], H[9], H[10], H[11]);
    for (int k = 0; k < nc; k++) {
        char(*x)[SV__CLASS_CELL] = cr[k].cell;
        fprintf(f, "%-12.12s %5s %4s %7s %6s %8s %9s %10s %10s %10s %8s  %s\n", x[0], x[1], x[2],
                x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11]);
    }
}

static void slo_json(sv_jw_t *w, const sv_slo_t *slo, const sv_summary_t *s)
{
    sv_slo_check_t k;
    sv_slo_check(slo, s, &k);
    sv__jw_obj(w, "slo");
    sv__jw_int(w, "met", k.met);
    if (k.per_request) {
        sv__jw_obj(w, "per_request");
        sv__jw_num(w, "ttft_ms", slo->ttft_ms);
        sv__jw_num(w, "tpot_ms", slo->tpot_ms);
        sv__jw_num(w, "e2el_ms", slo->e2el_ms);
        sv__jw_num(w, "attainment", k.attained);
        sv__jw_num(w, "target", slo->attainment);
        sv__jw_int(w, "met", k.attained_met);
        sv__jw_end_obj(w);
    }
    sv__jw_arr(w, "budgets");
    for (int i = 0; i < k.nbudgets; i++) {
        const sv_budget_check_t *b = &k.budget[i];
        sv__jw_obj(w, NULL);
        sv__jw_str(w, "metric", sv_slo_metric_name(b->b.metric));
        sv__jw_num(w, "percentile", b->b.pct);
        sv__jw_num(w, "budget_ms", b->b.ms);
        sv__jw_num(w, "value_ms", b->value);
        sv__jw_num(w, "margin_ms", b->margin);
        sv__jw_int(w, "met", b->met);
        sv__jw_end_obj(w);
    }
    sv__jw_end_arr(w);
    if (k.met)
        sv__jw_null(w, "broken");
    else
        sv__jw_str(w, "broken", k.broken);
    sv__jw_end_obj(w);
}

static void summary_json(sv_jw_t *w, const sv_summary_t *s)
{
    long total = s->completed + s->failed;
    sv__jw_int(w, "completed", s->completed);
    sv__jw_int(w, "failed", s->failed);
    sv__jw_int(w, "total_input_tokens", s->total_input);
    sv__jw_int(w, "total_output_tokens", s->total_output);
    sv__jw_num(w, "request_throughput", s->request_throughput);
    sv__jw_num(w, "output_throughput", s->output_throughput);
    if (isnan(s->request_goodput))
        sv__jw_null(w, "request_goodput");
    else
        sv__jw_num(w, "request_goodput", s->request_goodput);
    if (isnan(s->request_goodput)) /* no per-request thresholds */
        sv__jw_null(w, "slo_attainment");
    else
        sv__jw_num(w, "slo_attainment", total > 0 ? (double)s->good / (double)total : 0.0);
    const char *names[4] = {"ttft", "tpot", "itl", "e2el"};
    const sv_stat_t *st[4] = {&s->ttft, &s->tpot, &s->itl, &s->e2el};
    char key[64];
    for (int m = 0; m < 4; m++) {
        snprintf(key, sizeof key, "mean_%s_ms", names[m]);
        sv__jw_num(w, key, st[m]->mean);
        snprintf(key, sizeof key, "median_%s_ms", names[m]);
        sv__jw_num(w, key, st[m]->median);
        snprintf(key, sizeof key, "p99_%s_ms", names[m]);
        sv__jw_num(w, key, p99(s, st[m]));
    }
}

void sv__report_contract_json(sv_jw_t *w, const sv_result_t *res)
{
    if (!layered(res)) return;
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    sv_contract_check_t v;
    sv_contract_check(c, &res->summary, res->class_summary, &v);
    sv__jw_obj(w, "contract");
    sv__jw_int(w, "met", v.met);
    if (v.met)
        sv__jw_null(w, "broken");
    else
        sv__jw_str(w, "broken", v.broken);
    sv_slo_t slo;
    sv_contract_slo(c, -1, &slo);
    slo_json(w, &slo, &res->summary);
    sv__jw_end_obj(w);
    if (c->nclasses == 0 || !res->class_summary) return;
    sv__jw_arr(w, "classes");
    for (int k = 0; k < c->nclasses; k++) {
        sv__jw_obj(w, NULL);
        sv__jw_str(w, "name", c->class_name[k]);
        sv__jw_num(w, "share", res->sc->workload.classes[k].share);
        sv__jw_int(w, "priority", res->sc->workload.classes[k].priority);
        summary_json(w, &res->class_summary[k]);
        sv_metrics_slo(c, k, &slo);
        slo_json(w, &slo, &res->class_summary[k]);
        sv__jw_end_obj(w);
    }
    sv__jw_end_arr(w);
}
