/*
 * The contract part of a run's report (see sim/report/contract_int.h): the one verdict of
 * sv_contract_check, each budget's value and margin, and the classes side by side.
 */
#include "report/contract_int.h"

#include <math.h>
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

static void budget_lines(FILE *f, const char *who, const sv_slo_t *slo, const sv_summary_t *s)
{
    sv_slo_check_t k;
    sv_slo_check(slo, s, &k);
    char name[96];
    if (k.per_request) {
        snprintf(name, sizeof name, "%s: per-request attainment %%", who);
        fprintf(f, "%-30s %10.2f %10.2f %+10.2f  %s\n", name, 100.0 * k.attained,
                100.0 * slo->attainment, 100.0 * (k.attained - slo->attainment),
                k.attained_met ? "met" : "MISSED");
    }
    for (int i = 0; i < k.nbudgets; i++) {
        const sv_budget_check_t *b = &k.budget[i];
        snprintf(name, sizeof name, "%s: %s p%g ms", who, sv_slo_metric_name(b->b.metric),
                 b->b.pct);
        fprintf(f, "%-30s %10.2f %10.2f %+10.2f  %s\n", name, b->value, b->b.ms, b->margin,
                b->met ? "met" : "MISSED");
    }
}

void sv__report_contract_text(const sv_result_t *res, FILE *f)
{
    if (!layered(res)) return;
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    const sv_workload_cfg_t *w = &res->sc->workload;
    fprintf(f, "%s\n", "================ servesim: contract ================");
    fprintf(f, "%-30s %10s %10s %10s  %s\n", "budget", "value", "budget", "margin", "");
    sv_slo_t slo;
    sv_contract_slo(c, -1, &slo);
    if (c->nbudgets > 0 || c->nclasses == 0) budget_lines(f, "all", &slo, &res->summary);
    for (int k = 0; k < c->nclasses && res->class_summary; k++) {
        sv_metrics_slo(c, k, &slo);
        budget_lines(f, c->class_name[k], &slo, &res->class_summary[k]);
    }
    sv_contract_check_t v;
    sv_contract_check(c, &res->summary, res->class_summary, &v);
    fprintf(f, "%-40s %s%s%s\n", "Contract:", v.met ? "met" : "missed",
            v.met ? "" : ", worst broken: ", v.met ? "" : v.broken);
    if (c->nclasses == 0 || !res->class_summary) return;
    fprintf(f, "%s\n", "----------------- request classes ------------------");
    fprintf(f, "%-12s %5s %4s %7s %6s %8s %9s %10s %10s %10s %8s  %s\n", "class", "share", "prio",
            "done", "failed", "req/s", "tok/s", "p99 TTFT", "p99 TPOT", "p99 E2EL", "SLO %",
            "contract");
    for (int k = 0; k <= c->nclasses; k++) {
        const sv_summary_t *s = k < c->nclasses ? &res->class_summary[k] : &res->summary;
        long total = s->completed + s->failed;
        sv_slo_check_t ck;
        if (k < c->nclasses) {
            sv_metrics_slo(c, k, &slo);
            sv_slo_check(&slo, s, &ck);
        }
        char share[16], prio[16];
        snprintf(share, sizeof share, "%.2f", k < c->nclasses ? w->classes[k].share : 1.0);
        snprintf(prio, sizeof prio, "%d", k < c->nclasses ? (int)w->classes[k].priority : 0);
        char att[16] = "-";
        if (!isnan(s->request_goodput))
            snprintf(att, sizeof att, "%.2f",
                     total > 0 ? 100.0 * (double)s->good / (double)total : 0.0);
        fprintf(f, "%-12.12s %5s %4s %7ld %6ld %8.2f %9.1f %10.2f %10.2f %10.2f %8s  %s\n",
                k < c->nclasses ? c->class_name[k] : "all", share, k < c->nclasses ? prio : "-",
                s->completed, s->failed, s->request_throughput, s->output_throughput,
                p99(s, &s->ttft), p99(s, &s->tpot), p99(s, &s->e2el), att,
                k == c->nclasses ? (v.met ? "met" : "missed")
                : ck.met         ? "met"
                                 : ck.broken);
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
