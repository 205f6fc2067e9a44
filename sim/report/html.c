/*
 * HTML reports with inline SVG charts (see include/servesim/report/html.h).
 */
#include "servesim/report/html.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio_int.h"
#include "report/contract_int.h"
#include "report/html_int.h"
#include "report/report_int.h"
#include "servesim/cluster/finance.h"
#include "servesim/metrics/contract.h"
#include "servesim/report/config.h"
#include "servesim/report/report.h"
#include "servesim/studies/confidence.h"
#include "base/svg_int.h"

#define esc sv__xml_escape

/* The run and plan pages' own style, after the shared one (report/html_int.h). */
static const char *const PAGE_CSS =
    "table.cfg td{color:#333}table.cfg{align-self:flex-start}\nul.warn li{color:#8a4b00}\n";

static void row2(FILE *f, const char *k, const char *fmt, double v)
{
    fprintf(f, "<tr><th class=\"l\">%s</th><td>", k);
    fprintf(f, fmt, v);
    fputs("</td></tr>\n", f);
}

/* A latency CDF with its SLO (NAN: none) as a vertical line, on the page. */
static void cdf_chart(sv__page_t *p, const char *name, const char *title, const char *xlabel,
                      const char *series, const double *x, const double *y, int n, double slo,
                      double xmax)
{
    sv__cdf_chart(sv__chart_begin(p, name), title, xlabel, series, x, y, n, slo, xmax);
    sv__chart_end(p);
}

/* The grouped sections: "pools.NAME" and "classes.NAME", each group drawn as one table with
 * a column per member, headed by its word ("pool", "class"). The prefix's length, or 0. */
static size_t group_of(const char *section, const char **word)
{
    if (strncmp(section, "pools.", 6) == 0) return *word = "pool", 6;
    if (strncmp(section, "classes.", 8) == 0) return *word = "class", 8;
    return 0;
}

/* The configuration block: one small table per section, side by side; the pools' (and the
 * request classes') sections as one table with a column per pool, so that they read across. */
static void config_block(FILE *h, const sv_run_config_t *c)
{
    fputs("<h2>Configuration</h2>\n<div class=\"charts\">\n", h);
    const char *cur = NULL;
    for (int i = 0; i < c->n; i++) {
        const sv_cfg_row_t *r = &c->rows[i];
        const char *word;
        size_t gl = group_of(r->section, &word);
        if (gl > 0) {
            if (cur) fputs("</table>\n", h);
            cur = NULL;
            int j = i; /* the group's rows are [i, j) */
            while (j < c->n && strncmp(c->rows[j].section, r->section, gl) == 0)
                j++;
            const char *pools[SV_MAX_POOLS + SV_MAX_CLASSES];
            int np = 0;
            for (int k = i; k < j; k++)
                if (np == 0 || strcmp(pools[np - 1], c->rows[k].section) != 0) {
                    if (np == SV_MAX_POOLS + SV_MAX_CLASSES) break;
                    pools[np++] = c->rows[k].section;
                }
            fputs("<table class=\"cfg\">\n<tr><th class=\"l\">", h);
            fprintf(h, "%.*s</th>", (int)gl - 1, r->section);
            for (int q = 0; q < np; q++) {
                fprintf(h, "<th class=\"l\">%s ", word);
                esc(h, pools[q] + gl);
                fputs("</th>", h);
            }
            fputs("</tr>\n", h);
            /* each key once, in the order first seen; a pool without it gets an empty cell */
            for (int k = i; k < j; k++) {
                int seen = 0;
                for (int e = i; e < k && !seen; e++)
                    seen = strcmp(c->rows[e].key, c->rows[k].key) == 0;
                if (seen) continue;
                fputs("<tr><td class=\"l\">", h);
                esc(h, c->rows[k].label);
                fputs("</td>", h);
                for (int q = 0; q < np; q++) {
                    fputs("<td class=\"l\">", h);
                    for (int e = i; e < j; e++)
                        if (strcmp(c->rows[e].section, pools[q]) == 0 &&
                            strcmp(c->rows[e].key, c->rows[k].key) == 0) {
                            esc(h, c->rows[e].text);
                            break;
                        }
                    fputs("</td>", h);
                }
                fputs("</tr>\n", h);
            }
            fputs("</table>\n", h);
            i = j - 1;
            continue;
        }
        if (!cur || strcmp(cur, r->section) != 0) {
            if (cur) fputs("</table>\n", h);
            cur = r->section;
            fputs("<table class=\"cfg\">\n<tr><th class=\"l\" colspan=\"2\">", h);
            esc(h, *cur ? cur : "run");
            fputs("</th></tr>\n", h);
        }
        fputs("<tr><td class=\"l\">", h);
        esc(h, r->label);
        fputs("</td><td class=\"l\">", h);
        esc(h, r->text);
        fputs("</td></tr>\n", h);
    }
    if (cur) fputs("</table>\n", h);
    fputs("</div>\n", h);
}

/* A row whose value is text. */
static void rowt(FILE *f, const char *k, const char *v)
{
    fprintf(f, "<tr><th class=\"l\">%s</th><td class=\"l\">", k);
    esc(f, v);
    fputs("</td></tr>\n", f);
}

/* One metric's mean, median and configured percentiles, as vllm bench serve prints them. */
static void metric_rows(FILE *h, const sv_metrics_cfg_t *mc, const char *name, const sv_stat_t *st)
{
    char lab[64], pw[32];
    snprintf(lab, sizeof lab, "Mean %s (ms)", name);
    row2(h, lab, "%.2f", st->mean);
    snprintf(lab, sizeof lab, "Median %s (ms)", name);
    row2(h, lab, "%.2f", st->median);
    /* The configured percentiles, in order: stat.pct[i] is metrics.percentiles[i]. */
    for (int i = 0; i < mc->npercentiles; i++) {
        sv_report_pct_word(mc->percentiles[i], pw, sizeof pw);
        snprintf(lab, sizeof lab, "P%s %s (ms)", pw, name);
        row2(h, lab, "%.2f", st->pct[i]);
    }
}

/* The terminal's two blocks side by side: vllm bench serve's result, then servesim's. */
static void summary_tables(FILE *h, const sv_result_t *res)
{
    const sv_scenario_t *sc = res->sc;
    const sv_summary_t *s = &res->summary;
    const sv_workload_cfg_t *w = &sc->workload;
    const sv_metrics_cfg_t *mc = &sc->metrics;
    int slo = !isnan(mc->slo_ttft_ms) || !isnan(mc->slo_tpot_ms) || !isnan(mc->slo_e2el_ms);
    int p99 = 0;
    for (int i = 0; i < s->npcts; i++)
        if (s->pcts[i] == 99.0) p99 = i;
    char buf[256];
    fputs("<h2>Summary</h2>\n<div class=\"charts\">\n<table>\n"
          "<tr><th class=\"l\" colspan=\"2\">Serving benchmark result "
          "(as vllm bench serve)</th></tr>\n",
          h);
    row2(h, "Successful requests", "%.0f", (double)s->completed);
    row2(h, "Failed requests", "%.0f", (double)s->failed);
    /* as the terminal: a sessions run states its session rate or concurrency in its own
     * section */
    if (w->max_concurrency > 0 && !(sc->sessions.given && isinf(w->rate)))
        row2(h, "Maximum request concurrency", "%.0f", (double)w->max_concurrency);
    if (!w->has_trace && !isinf(w->rate) && !sc->sessions.given)
        row2(h, "Request rate configured (RPS)", "%.2f", w->rate);
    row2(h, "Benchmark duration (s)", "%.2f", s->duration);
    row2(h, "Total input tokens", "%.0f", (double)s->total_input);
    row2(h, "Total generated tokens", "%.0f", (double)s->total_output);
    row2(h, "Request throughput (req/s)", "%.2f", s->request_throughput);
    if (slo) row2(h, "Request goodput (req/s)", "%.2f", s->request_goodput);
    row2(h, "Output token throughput (tok/s)", "%.2f", s->output_throughput);
    row2(h, "Peak output token throughput (tok/s)", "%.2f", s->max_output_tokens_per_s);
    row2(h, "Peak concurrent requests", "%.0f", (double)s->max_concurrent_requests);
    row2(h, "Total token throughput (tok/s)", "%.2f", s->total_token_throughput);
    if (mc->selected & SV_M_TTFT) metric_rows(h, mc, "TTFT", &s->ttft);
    if (mc->selected & SV_M_TPOT) metric_rows(h, mc, "TPOT", &s->tpot);
    if (mc->selected & SV_M_ITL) metric_rows(h, mc, "ITL", &s->itl);
    if (mc->selected & SV_M_E2EL) metric_rows(h, mc, "E2EL", &s->e2el);
    fputs("</table>\n<table>\n<tr><th class=\"l\" colspan=\"2\">servesim: inside the "
          "server</th></tr>\n",
          h);
    if (sc->disaggregated)
        snprintf(buf, sizeof buf, "disaggregated, %s link %.0f GB/s/GPU", sc->link.kind,
                 sc->link.bw_per_gpu / 1e9);
    else
        snprintf(buf, sizeof buf, "colocated, %s", sv_route_names[sc->route]);
    rowt(h, "Serving", buf);
    if (sc->network.enabled) {
        sv__report_network_text(&sc->network, buf, sizeof buf);
        rowt(h, "Client-server round trip", buf);
    }
    int scaled = 0; /* an autoscaled pool counts the GPUs up at its peak */
    for (int p = 0; p < res->npools; p++)
        scaled |= res->pools[p].cfg->autoscale.enabled;
    row2(h, scaled ? "GPUs (at the peak)" : "GPUs", "%.0f", res->gpus);
    row2(h, "Mean queue time (ms)", "%.2f", s->queue.mean);
    row2(h, "P99 queue time (ms)", "%.2f", s->queue.pct[p99]);
    row2(h, "Mean prefill time (ms)", "%.2f", s->prefill.mean);
    if (sc->disaggregated) {
        row2(h, "Mean KV transfer wait (ms)", "%.2f", s->xfer_wait.mean);
        row2(h, "P99 KV transfer wait (ms)", "%.2f", s->xfer_wait.pct[p99]);
        row2(h, "Mean KV transfer (ms)", "%.2f", s->xfer.mean);
        row2(h, "Mean decode queue (ms)", "%.2f", s->decode_queue.mean);
    }
    row2(h, "Mean decode time (ms)", "%.2f", s->decode.mean);
    row2(h, "KV cache usage p50 (%)", "%.2f", 100.0 * res->kv_usage_p50);
    row2(h, "KV cache usage p99 (%)", "%.2f", 100.0 * res->kv_usage_p99);
    row2(h, "Preemptions", "%.0f", (double)res->preemptions);
    if (res->prefix_queries > 0) {
        row2(h, "Prefix cache hit rate (%)", "%.2f",
             100.0 * res->prefix_hits / res->prefix_queries);
        row2(h, "Prefix cache hits (tokens)", "%.0f", res->prefix_hits);
    }
    for (int i = 1; i < SV_FAIL_COUNT; i++) {
        if (!s->failed_by[i]) continue;
        snprintf(buf, sizeof buf, "Failed (%s)", sv_fail_name(i));
        row2(h, buf, "%.0f", (double)s->failed_by[i]);
    }
    if (slo && s->completed + s->failed > 0)
        row2(h, "SLO attainment (%)", "%.2f",
             100.0 * (double)s->good / (double)(s->completed + s->failed));
    if (slo && res->gpus > 0)
        row2(h, "Goodput per GPU (req/s)", "%.2f", s->request_goodput / res->gpus);
    row2(h, "GPU busy (%)", "%.2f", 100.0 * res->busy_share);
    row2(h, "Cost per 1M output tokens ($)", "%.3f", res->cost_per_mtok);
    row2(h, "Energy per output token (J)", "%.3f", res->energy_per_tok);
    for (int q = 0; q < res->npools; q++) {
        sv_confidence_t c;
        char lab[256], text[512];
        sv_confidence_of(&res->pools[q].perf, &c);
        snprintf(buf, sizeof buf, "Confidence%s%s", res->npools > 1 ? ", " : "",
                 res->npools > 1 ? res->pools[q].cfg->name : "");
        snprintf(text, sizeof text, "%s (GPU %s %s, engine %s %s)",
                 sv_confidence_label(&c, lab, sizeof lab), c.gpu, sv_calibration_name(c.gpu_cal),
                 c.engine[0] ? c.engine : "none", sv_calibration_name(c.engine_cal));
        rowt(h, buf, text);
    }
    fputs("</table>\n</div>\n", h);
}

/* The terminal's per-pool sections (clusters and disaggregated runs) and autoscaler
 * sections, as one table with a column per pool. */
static void pool_tables(FILE *h, const sv_result_t *res)
{
    const sv_scenario_t *sc = res->sc;
    int scaled = 0, P = res->npools;
    for (int q = 0; q < P; q++)
        scaled |= res->pools[q].cfg->autoscale.enabled;
    if (P < 2 && !sc->disaggregated && !scaled) return;
    double T = res->summary.duration;
    char buf[160];
    fputs("<h2>Pools</h2>\n<table>\n<tr><th class=\"l\"></th>", h);
    for (int q = 0; q < P; q++) {
        fputs("<th>pool ", h);
        esc(h, res->pools[q].cfg->name);
        fprintf(h, " (%s)</th>", sv_role_name(res->pools[q].cfg->role));
    }
    fputs("</tr>\n", h);
    /* one row: the label, then each pool's value (NAN: an empty cell) */
    enum { R_REPLICAS, R_BUSY, R_KV99, R_BATCH, R_PREEMPT, R_STALL, R_SENT, R_LINK, R_COST };
    static const char *const labels[] = {"Replicas",
                                         "GPU busy (%)",
                                         "KV cache usage p99 (%)",
                                         "Mean decode batch (sequences)",
                                         "Preemptions",
                                         "Stalled, no KV room (%)",
                                         "KV sent (GB)",
                                         "KV link busy (%)",
                                         "Cost ($/h)"};
    int npre = 0;
    for (int q = 0; q < P; q++)
        npre += res->pools[q].cfg->role == SV_ROLE_PREFILL;
    for (int row = R_REPLICAS; row <= R_COST; row++) {
        /* rows no pool has a value for are left out */
        if ((row == R_STALL || row == R_SENT || row == R_LINK) && npre == 0) continue;
        if (row == R_BATCH && npre == P) continue;
        /* an autoscaled pool's GPUs are those up at its peak */
        fprintf(h, "<tr><th class=\"l\">%s</th>",
                row == R_COST && scaled ? "Cost at the peak ($/h)" : labels[row]);
        for (int q = 0; q < P; q++) {
            const sv_pool_result_t *pp = &res->pools[q];
            const sv_pool_cfg_t *pc = pp->cfg;
            double Tq = T * pp->count, v = NAN;
            int pre = pc->role == SV_ROLE_PREFILL;
            switch (row) {
            case R_REPLICAS:
                snprintf(buf, sizeof buf, "%d x %s TP%d, %s", pp->count, pc->gpu.name,
                         pp->perf.set.tp, sv_sched_name(pc->engine.scheduler));
                fputs("<td>", h);
                esc(h, buf);
                fputs("</td>", h);
                continue;
            case R_BUSY:
                v = 100.0 * pp->busy_share;
                break;
            case R_KV99:
                v = 100.0 * pp->kv_usage_p99;
                break;
            case R_BATCH:
                v = pre ? NAN : pp->mean_decode_batch;
                break;
            case R_PREEMPT:
                v = (double)pp->preemptions;
                break;
            case R_STALL:
                v = pre ? (Tq > 0 ? 100.0 * pp->stall_s / Tq : 0.0) : NAN;
                break;
            case R_SENT:
                v = pre ? pp->link_bytes / 1e9 : NAN;
                break;
            case R_LINK:
                v = pre ? (Tq > 0 ? 100.0 * pp->link_busy_s / Tq : 0.0) : NAN;
                break;
            default:
                v = pp->gpus * pc->gpu.price_per_hour;
                break;
            }
            if (isnan(v))
                fputs("<td></td>", h);
            else
                fprintf(h, row == R_PREEMPT ? "<td>%.0f</td>" : "<td>%.2f</td>", v);
        }
        fputs("</tr>\n", h);
    }
    if (scaled) {
        static const char *const alab[] = {"Replicas up (mean, peak, max)", "Scale events",
                                           "GPU-hours", "Cost ($)"};
        for (int row = 0; row < 4; row++) {
            fprintf(h, "<tr><th class=\"l\">%s</th>", alab[row]);
            for (int q = 0; q < P; q++) {
                const sv_pool_result_t *pp = &res->pools[q];
                if (!pp->cfg->autoscale.enabled) {
                    fputs("<td></td>", h);
                    continue;
                }
                if (row == 0)
                    snprintf(buf, sizeof buf, "%.2f mean, %d peak, %d max", pp->mean_up,
                             pp->peak_up, pp->count);
                else if (row == 1)
                    snprintf(buf, sizeof buf, "%ld up, %ld down", pp->scale_ups, pp->scale_downs);
                else
                    snprintf(buf, sizeof buf, "%.2f", row == 2 ? pp->gpu_hours : pp->cost_usd);
                fprintf(h, "<td>%s</td>", buf);
            }
            fputs("</tr>\n", h);
        }
    }
    fputs("</table>\n", h);
}

/* Lines of a section (built by the functions the terminal prints with) as a table. */
static void lines_table(FILE *h, const char *head, const sv__line_t *l, int n)
{
    fputs("<table style=\"align-self:flex-start\">\n", h);
    if (head) {
        fputs("<tr><th class=\"l\" colspan=\"2\">", h);
        esc(h, head);
        fputs("</th></tr>\n", h);
    }
    for (int i = 0; i < n; i++)
        rowt(h, l[i].label, l[i].text);
    fputs("</table>\n", h);
}

/* Sessions and agentic tasks (workload.sessions): the terminal's session lines and its
 * per-call-index table, the task latency against the per-call latency, and TTFT by call
 * index. */
static void sessions_section(sv__page_t *p, const sv_result_t *res)
{
    sv__line_t l[SV__MAX_LINES];
    int n = sv__report_session_lines(res, l);
    if (n == 0) return;
    FILE *h = p->html;
    const sv_session_summary_t *ss = &res->session_sum;
    char c[SV__TURN_COLS][32];
    fputs("<h2>Sessions (", h);
    esc(h, sv__report_session_kind(res->sc));
    fputs(")</h2>\n<div class=\"charts\">\n", h);
    lines_table(h, NULL, l, n);
    fputs("<table style=\"align-self:flex-start\">\n<tr>", h);
    for (int k = 0; k < SV__TURN_COLS; k++)
        fprintf(h, "<th%s>%s%s</th>", k == 0 ? " class=\"l\"" : "", sv__turn_heads[k],
                k >= 3 && k <= 5 ? " (ms)" : "");
    fputs("</tr>\n", h);
    for (int i = 0; i < ss->nturn; i++) {
        sv__report_turn_cells(res, i, c);
        fprintf(h, "<tr><td class=\"l\">%s</td>", c[0]);
        for (int k = 1; k < SV__TURN_COLS; k++)
            fprintf(h, "<td>%s</td>", c[k]);
        fputs("</tr>\n", h);
    }
    fputs("</table>\n</div>\n<div class=\"charts\">\n", h);
    /* task (first call sent to last call ended) against call latency, at P50, P90, P99 */
    static const char *const pn[] = {"P50", "P90", "P99"};
    double px[3] = {1, 2, 3}, task[3] = {ss->duration_p50, ss->duration_p90, ss->duration_p99};
    double call[3] = {ss->call_p50, ss->call_p90, ss->call_p99};
    sv_svg_chart_t ch;
    memset(&ch, 0, sizeof ch);
    ch.title = "A whole session (task) against one call: latency percentiles";
    ch.xlabel = "percentile";
    ch.ylabel = "latency (s)";
    ch.ymin_zero = 1;
    ch.xcat = pn;
    ch.nxcat = 3;
    ch.s[ch.ns++] = (sv_svg_series_t){.name = "task: first call sent to last call ended",
                                      .x = px,
                                      .y = task,
                                      .n = 3,
                                      .points = 1,
                                      .lines = 1};
    ch.s[ch.ns++] = (sv_svg_series_t){
        .name = "one call (E2EL)", .x = px, .y = call, .n = 3, .points = 1, .lines = 1};
    sv__svg_chart(sv__chart_begin(p, "session-latency"), &ch, 620, 360);
    sv__chart_end(p);
    double ix[SV_MAX_TURN_ROWS], t50[SV_MAX_TURN_ROWS], t99[SV_MAX_TURN_ROWS];
    int m = 0;
    for (int i = 0; i < ss->nturn; i++)
        if (ss->turn[i].completed > 0)
            ix[m] = i + 1, t50[m] = ss->turn[i].ttft_p50_ms, t99[m++] = ss->turn[i].ttft_p99_ms;
    memset(&ch, 0, sizeof ch);
    ch.title = ss->nturn == SV_MAX_TURN_ROWS ? "TTFT by call index (the last: every later call)"
                                             : "TTFT by call index";
    ch.xlabel = "call index in its session";
    ch.ylabel = "TTFT (ms)";
    ch.ymin_zero = 1;
    ch.s[ch.ns++] =
        (sv_svg_series_t){.name = "TTFT p50", .x = ix, .y = t50, .n = m, .points = 1, .lines = 1};
    ch.s[ch.ns++] =
        (sv_svg_series_t){.name = "TTFT p99", .x = ix, .y = t99, .n = m, .points = 1, .lines = 1};
    sv__svg_chart(sv__chart_begin(p, "session-calls"), &ch, 620, 360);
    sv__chart_end(p);
    fputs("</div>\n", h);
}

/* Cost and energy at the wall (a `cost` map): the terminal's finance lines, and where the
 * energy at the wall goes. */
static void finance_section(sv__page_t *p, const sv_result_t *res)
{
    sv__line_t l[SV__MAX_LINES];
    int n = sv__report_finance_lines(res, l);
    if (n == 0) return;
    FILE *h = p->html;
    sv_finance_t x;
    sv_finance_of(res, &x);
    fputs("<h2>Cost and energy (finance)</h2>\n<div class=\"charts\">\n", h);
    lines_table(h, NULL, l, n);
    const char *names[] = {"GPUs", "hosts", "facility (PUE)", "at the wall"};
    double v[] = {x.gpu_energy_j / 3600.0, x.host_energy_j / 3600.0,
                  (x.wall_energy_j - x.it_energy_j) / 3600.0, x.wall_energy_j / 3600.0};
    sv__svg_bars(sv__chart_begin(p, "energy"), "Energy: the GPUs, their hosts, the facility",
                 "energy (Wh)", names, v, 4, 620, 360);
    sv__chart_end(p);
    fputs("</div>\n", h);
}

/* A verdict cell: "met", or the miss in red. */
static void verdict_cell(FILE *h, int met, const char *text)
{
    fputs(met ? "<td class=\"l\">" : "<td class=\"l\" style=\"color:#d62728\">", h);
    esc(h, text);
    fputs("</td>", h);
}

/* The contract (percentile budgets or request classes): the verdict, every budget with its
 * value and margin, the per-class table, and each budget's value as a share of it. */
static void contract_section(sv__page_t *p, const sv_result_t *res)
{
    sv__budget_row_t *b = malloc(SV__MAX_BUDGET_ROWS * sizeof *b);
    sv__class_row_t *cr = malloc((SV_MAX_CLASSES + 1) * sizeof *cr);
    int n = b ? sv__contract_budget_rows(res, b) : 0;
    if (!b || !cr || (n == 0 && res->sc->metrics.nclasses == 0)) goto out;
    FILE *h = p->html;
    const sv_metrics_cfg_t *mc = &res->sc->metrics;
    sv_contract_check_t v;
    sv_contract_check(mc, &res->summary, res->class_summary, &v);
    fputs("<h2>Contract</h2>\n<p>Contract: ", h);
    if (v.met) {
        fputs("<b>met</b>", h);
    } else {
        fputs("<b style=\"color:#d62728\">missed</b>, worst broken: ", h);
        esc(h, v.broken);
    }
    fputs("</p>\n<div class=\"charts\">\n<table style=\"align-self:flex-start\">\n"
          "<tr><th class=\"l\">class</th>"
          "<th class=\"l\">budget</th><th>value</th><th>budget</th><th>margin</th>"
          "<th class=\"l\"></th></tr>\n",
          h);
    for (int i = 0; i < n; i++) {
        fputs("<tr><td class=\"l\">", h);
        esc(h, b[i].who);
        fputs("</td><td class=\"l\">", h);
        esc(h, b[i].what);
        fprintf(h, "</td><td>%.2f</td><td>%.2f</td><td>%+.2f</td>", b[i].value, b[i].limit,
                b[i].margin);
        verdict_cell(h, b[i].met, b[i].met ? "met" : "MISSED");
        fputs("</tr>\n", h);
    }
    fputs("</table>\n", h);
    /* each latency budget's value as a share of the budget, one column per class, one
     * series per kind of budget (metric and percentile) */
    const char *who[SV_MAX_CLASSES + 1];
    int nw = 0, nk = 0, kind[SV_SVG_MAX_SERIES][2];
    for (int i = 0; i < n; i++) {
        if (nw == 0 || strcmp(who[nw - 1], b[i].who) != 0) who[nw++] = b[i].who;
        int k = 0;
        while (k < nk && !(kind[k][0] == b[i].metric && b[i].pct == kind[k][1] / 1000.0))
            k++;
        if (!b[i].attainment && k == nk && nk < SV_SVG_MAX_SERIES) {
            kind[nk][0] = b[i].metric;
            kind[nk++][1] = (int)lround(b[i].pct * 1000.0);
        }
    }
    double *bx = malloc((size_t)(n + 1) * sizeof *bx), *by = malloc((size_t)(n + 1) * sizeof *by);
    char kn[SV_SVG_MAX_SERIES][32];
    if (nk > 0 && bx && by) {
        sv_svg_chart_t c;
        memset(&c, 0, sizeof c);
        c.title = "Each percentile budget: its value as a share of the budget";
        c.xlabel = "class";
        c.ylabel = "value / budget (%)";
        c.ymin_zero = 1;
        c.logy = 1;
        c.xcat = who;
        c.nxcat = nw;
        c.hline[c.nh] = 100.0;
        c.hlabel[c.nh++] = "the budget: above it, missed";
        int m = 0;
        double w = nk > 1 ? 0.5 / (nk - 1) : 0;
        if (w > 0.12) w = 0.12;
        for (int k = 0; k < nk; k++) {
            int m0 = m;
            for (int i = 0; i < n; i++) {
                if (b[i].attainment || b[i].metric != kind[k][0] ||
                    (int)lround(b[i].pct * 1000.0) != kind[k][1] || !(b[i].limit > 0))
                    continue;
                int j = 0;
                while (strcmp(who[j], b[i].who) != 0)
                    j++;
                bx[m] = j + 1 + (k - (nk - 1) / 2.0) * w;
                by[m++] = 100.0 * b[i].value / b[i].limit;
            }
            snprintf(kn[k], sizeof kn[k], "%s p%g", sv_slo_metric_name(kind[k][0]),
                     kind[k][1] / 1000.0);
            c.s[c.ns++] = (sv_svg_series_t){
                .name = kn[k], .x = bx + m0, .y = by + m0, .n = m - m0, .points = 1};
        }
        c.legend_right = 1;
        c.legend_title = "budget";
        sv__svg_chart(sv__chart_begin(p, "contract-budgets"), &c, 780, 360);
        sv__chart_end(p);
    }
    free(bx);
    free(by);
    fputs("</div>\n", h);
    int nc = sv__contract_class_rows(res, cr);
    if (nc > 0) {
        fputs("<h2>Request classes</h2>\n<table>\n<tr>", h);
        for (int k = 0; k < SV__CLASS_COLS; k++)
            fprintf(h, "<th%s>%s%s</th>", k == 0 || k == SV__CLASS_COLS - 1 ? " class=\"l\"" : "",
                    sv__class_heads[k], k >= 7 && k <= 9 ? " (ms)" : "");
        fputs("</tr>\n", h);
        for (int r = 0; r < nc; r++) {
            fputs("<tr><td class=\"l\">", h);
            esc(h, cr[r].cell[0]);
            fputs("</td>", h);
            for (int k = 1; k < SV__CLASS_COLS - 1; k++)
                fprintf(h, "<td>%s</td>", cr[r].cell[k]);
            verdict_cell(h, cr[r].met, cr[r].cell[SV__CLASS_COLS - 1]);
            fputs("</tr>\n", h);
        }
        fputs("</table>\n", h);
    }
out:
    free(b);
    free(cr);
}

static int cmp_iv(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The first index of sorted t[0..n) with t[i] >= v (n if none). */
static int lower_bound(const double *t, int n, double v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t[mid] >= v)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Disaggregated runs, on the time grid tx[0..n): the KV links' utilisation over each
 * interval (tx[k-1], tx[k]] (share of the time a link moved bytes: a transfer past its
 * fixed latency, the links' union of transfers, mean over the prefill replicas' links), and
 * at each instant the requests whose KV waits pinned on a prefill replica for decode room
 * and those whose KV is on a link. */
static void kv_link_charts(sv__page_t *p, const sv_result_t *res, const double *tx, int n,
                           double r_time)
{
    const sv_scenario_t *sc = res->sc;
    int R = res->replicas, npre = 0;
    for (int i = 0; i < R; i++)
        npre += res->pools[res->rpool[i]].cfg->role == SV_ROLE_PREFILL;
    size_t N = res->pool.n;
    double *iv = malloc((N + 1) * 2 * sizeof *iv); /* (start, end) per transfer of one link */
    double *busy = calloc((size_t)n, sizeof *busy), *util = calloc((size_t)n, sizeof *util);
    double *wait = calloc((size_t)n + 1, sizeof *wait),
           *moving = calloc((size_t)n + 1, sizeof *moving);
    if (!iv || !busy || !util || !wait || !moving || npre == 0) goto out;
    for (int l = 0; l < R; l++) {
        if (res->pools[res->rpool[l]].cfg->role != SV_ROLE_PREFILL) continue;
        size_t m = 0;
        for (size_t i = 0; i < N; i++) {
            const sv_req_t *r = &res->pool.r[i];
            if (r->xfer_start < 0 || r->prefill_replica != l) continue;
            double end = r->xfer_end >= 0 ? r->xfer_end : r->end;
            double start = r->xfer_start + sc->link.latency;
            if (end > start) iv[2 * m] = start, iv[2 * m + 1] = end, m++;
        }
        qsort(iv, m, 2 * sizeof *iv, cmp_iv);
        for (size_t i = 0; i < m;) { /* merge into the union, then spread it over the bins */
            double a = iv[2 * i], b = iv[2 * i + 1];
            for (i++; i < m && iv[2 * i] <= b; i++)
                if (iv[2 * i + 1] > b) b = iv[2 * i + 1];
            int j = lower_bound(tx, n, a); /* bin j is (tx[j - 1], tx[j]] */
            for (j = j > 0 ? j : 1; j < n && tx[j - 1] < b; j++) {
                double lo = a > tx[j - 1] ? a : tx[j - 1], hi = b < tx[j] ? b : tx[j];
                if (hi > lo) busy[j] += hi - lo;
            }
        }
    }
    for (int j = 1; j < n; j++)
        util[j] = tx[j] > tx[j - 1] ? 100.0 * busy[j] / ((tx[j] - tx[j - 1]) * npre) : 0.0;
    util[0] = 0.0;
    for (size_t i = 0; i < N; i++) { /* counts at the instants, by difference arrays */
        const sv_req_t *r = &res->pool.r[i];
        if (r->prefill_end < 0) continue;
        double until =
            r->xfer_start >= 0 ? r->xfer_start : (r->state == SV_RQ_FAILED ? r->end : -1);
        if (until > r->prefill_end) {
            wait[lower_bound(tx, n, r->prefill_end)] += 1;
            wait[lower_bound(tx, n, until)] -= 1;
        }
        if (r->xfer_start >= 0) {
            double e = r->xfer_end >= 0 ? r->xfer_end : r->end;
            moving[lower_bound(tx, n, r->xfer_start)] += 1;
            moving[lower_bound(tx, n, e)] -= 1;
        }
    }
    for (int j = 1; j < n; j++)
        wait[j] += wait[j - 1], moving[j] += moving[j - 1];
    fputs("<h2>KV transfers over time</h2>\n<div class=\"charts\">\n", p->html);
    sv_svg_chart_t c;
    char nm[96];
    memset(&c, 0, sizeof c);
    c.title = "KV link utilisation";
    c.xlabel = "simulated time (s)";
    c.xmin_zero = 1;
    c.ylabel = "time the links move bytes (%)";
    c.ymin_zero = 1;
    snprintf(nm, sizeof nm, "mean of the %d prefill replicas' links", npre);
    c.s[c.ns++] = (sv_svg_series_t){.name = nm, .x = tx + 1, .y = util + 1, .n = n - 1, .lines = 1};
    sv__svg_chart_reach(sv__chart_begin(p, "kv-link"), &c, 620, 360, r_time, NAN);
    sv__chart_end(p);
    memset(&c, 0, sizeof c);
    c.title = "Prefilled requests waiting for decode room, and on the links";
    c.xlabel = "simulated time (s)";
    c.xmin_zero = 1;
    c.ylabel = "requests";
    c.ymin_zero = 1;
    c.s[c.ns++] = (sv_svg_series_t){
        .name = "KV pinned on a prefill replica, waiting", .x = tx, .y = wait, .n = n, .lines = 1};
    c.s[c.ns++] =
        (sv_svg_series_t){.name = "KV on a link", .x = tx, .y = moving, .n = n, .lines = 1};
    sv__svg_chart_reach(sv__chart_begin(p, "kv-wait"), &c, 620, 360, r_time, NAN);
    sv__chart_end(p);
    fputs("</div>\n", p->html);
out:
    free(iv);
    free(busy);
    free(util);
    free(wait);
    free(moving);
}

int sv_html_run(const sv_result_t *res, const char *path, sv_error_t *err)
{
    return sv_html_run_axes(res, NULL, NULL, path, err);
}

/* The charts' stated reach (NAN: their data's), from --axes-from. */
typedef struct reach {
    double ttft, tpot, phase, time, req, kv;
} reach_t;

/* TTFT and TPOT CDFs with their SLO lines, and where a request's time goes. */
static void latency_section(sv__page_t *p, const sv_result_t *res, const reach_t *rr)
{
    const sv_scenario_t *sc = res->sc;
    const sv_summary_t *s = &res->summary;
    int n = (int)res->pool.n, m = 0, mt = 0;
    double *tt = malloc((size_t)(n + 1) * sizeof *tt), *tp = malloc((size_t)(n + 1) * sizeof *tp);
    double cx[400], cy[400], dx[400], dy[400];
    if (!tt || !tp) {
        free(tt);
        free(tp);
        if (!p->rc) p->rc = sv_errorf(p->err, SV_ENOMEM, "out of memory drawing the latencies");
        return;
    }
    for (int i = 0; i < n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        if (r->state != SV_RQ_DONE) continue;
        tt[m++] = sv_req_ttft(r);
        if (r->output > 1) tp[mt++] = sv_req_tpot(r);
    }
    int nc = sv__cdf(tt, m, cx, cy, 400), nd = sv__cdf(tp, mt, dx, dy, 400);
    free(tt);
    free(tp);
    FILE *h = p->html;
    fputs("<h2>Latency</h2>\n<div class=\"charts\">\n", h);
    cdf_chart(p, "ttft-cdf", "TTFT: share of requests answered within x",
              "time to first token (ms)", "TTFT CDF", cx, cy, nc, sc->metrics.slo_ttft_ms,
              rr->ttft);
    cdf_chart(p, "tpot-cdf", "TPOT: share of requests with time per output token within x",
              "time per output token (ms)", "TPOT CDF", dx, dy, nd, sc->metrics.slo_tpot_ms,
              rr->tpot);
    const char *names[6] = {"queue", "prefill", "decode"};
    double vals[6] = {s->queue.mean, s->prefill.mean, s->decode.mean};
    int nb = 3;
    if (sc->disaggregated) {
        names[2] = "KV wait";
        names[3] = "KV transfer";
        names[4] = "decode queue";
        names[5] = "decode";
        vals[2] = s->xfer_wait.mean;
        vals[3] = s->xfer.mean;
        vals[4] = s->decode_queue.mean;
        vals[5] = s->decode.mean;
        nb = 6;
    }
    sv__svg_bars_reach(sv__chart_begin(p, "breakdown"), "Where a request's time goes (mean)",
                       "time (ms)", names, vals, nb, 620, 360, rr->phase);
    sv__chart_end(p);
    fputs("</div>\n", h);
}

/* The time grid the time-series charts share: every step-th sample instant, k of them. */
typedef struct grid {
    double *tx;
    int k, np, step;
} grid_t;

/* Per sample instant: KV usage, queue depth and running batch per pool, and the KV links
 * of a split. Fills g (the caller frees g->tx). */
static void series_section(sv__page_t *p, const sv_result_t *res, const reach_t *rr, grid_t *g)
{
    size_t ns;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &ns);
    int R = res->replicas, T = (int)(ns / (size_t)(R ? R : 1)), step = T > 1500 ? T / 1500 + 1 : 1;
    int np = T / step + 1, k = 0, P = res->npools;
    double *tx = malloc((size_t)np * sizeof *tx);
    double *wq = malloc((size_t)np * SV_MAX_POOLS * sizeof *wq);
    double *run = malloc((size_t)np * SV_MAX_POOLS * sizeof *run);
    double *kv = malloc((size_t)np * SV_MAX_POOLS * sizeof *kv);
    *g = (grid_t){tx, 0, np, step};
    if (!tx || !wq || !run || !kv) {
        if (!p->rc) p->rc = sv_errorf(p->err, SV_ENOMEM, "out of memory drawing the time series");
        free(wq);
        free(run);
        free(kv);
        return;
    }
    for (int t = 0; t < T; t += step, k++) {
        const sv_sample_t *row = &sm[(size_t)t * R];
        tx[k] = row[0].t;
        for (int q = 0; q < P; q++)
            kv[q * np + k] = wq[q * np + k] = run[q * np + k] = 0;
        int nup[SV_MAX_POOLS] = {0};
        for (int i = 0; i < R; i++) {
            int q = res->rpool[i];
            wq[q * np + k] += row[i].waiting;
            run[q * np + k] += row[i].running;
            nup[q] += row[i].up;
            kv[q * np + k] += row[i].up ? 100.0 * row[i].kv_usage : 0.0;
        }
        for (int q = 0; q < P; q++) /* the mean over the replicas up */
            kv[q * np + k] = nup[q] ? kv[q * np + k] / nup[q] : 0.0;
    }
    g->k = k;
    FILE *h = p->html;
    fputs("<h2>Inside the server over time</h2>\n<div class=\"charts\">\n", h);
    sv_svg_chart_t c;
    memset(&c, 0, sizeof c);
    c.title = "KV cache usage";
    c.xlabel = "simulated time (s)";
    c.xmin_zero = 1;
    c.ylabel = "KV blocks in use (%)";
    c.ymin_zero = 1;
    char pn[SV_MAX_POOLS][2][96];
    for (int q = 0; q < P && c.ns < SV_SVG_MAX_SERIES; q++) {
        snprintf(pn[q][0], sizeof pn[q][0], "pool %s (mean of the replicas up)",
                 res->pools[q].cfg->name);
        c.s[c.ns++] =
            (sv_svg_series_t){.name = pn[q][0], .x = tx, .y = kv + q * np, .n = k, .lines = 1};
    }
    sv__svg_chart_reach(sv__chart_begin(p, "kv-usage"), &c, 620, 360, rr->time, rr->kv);
    sv__chart_end(p);
    memset(&c, 0, sizeof c);
    c.title = P > 1 ? "Requests waiting and running, per pool"
                    : "Requests waiting and running (all replicas)";
    c.xlabel = "simulated time (s)";
    c.xmin_zero = 1;
    c.ylabel = "requests";
    c.ymin_zero = 1;
    for (int q = 0; q < P && c.ns + 1 < SV_SVG_MAX_SERIES; q++) {
        const char *nm = res->pools[q].cfg->name;
        if (P > 1) {
            snprintf(pn[q][0], sizeof pn[q][0], "waiting, pool %s", nm);
            snprintf(pn[q][1], sizeof pn[q][1], "running, pool %s", nm);
        } else {
            snprintf(pn[q][0], sizeof pn[q][0], "waiting (queue depth)");
            snprintf(pn[q][1], sizeof pn[q][1], "running (batch size)");
        }
        c.s[c.ns++] =
            (sv_svg_series_t){.name = pn[q][0], .x = tx, .y = wq + q * np, .n = k, .lines = 1};
        c.s[c.ns++] =
            (sv_svg_series_t){.name = pn[q][1], .x = tx, .y = run + q * np, .n = k, .lines = 1};
    }
    sv__svg_chart_reach(sv__chart_begin(p, "queue-batch"), &c, 620, 360, rr->time, rr->req);
    sv__chart_end(p);
    fputs("</div>\n", h);
    if (res->sc->disaggregated && k > 1) kv_link_charts(p, res, tx, k, rr->time);
    free(wq);
    free(run);
    free(kv);
}

/* Load, fleet and attainment over time on the grid of the time series, for runs whose load
 * or fleet changes (autoscaled pools, a rate profile, a trace). */
static void fleet_section(sv__page_t *p, const sv_result_t *res, const reach_t *rr, grid_t *g)
{
    const sv_scenario_t *sc = res->sc;
    int scaled = 0;
    for (int q = 0; q < res->npools; q++)
        scaled |= res->pools[q].cfg->autoscale.enabled;
    if (g->k <= 1 ||
        !(scaled || sc->workload.profile.kind != SV_PROFILE_NONE || sc->workload.has_trace))
        return;
    sv_cluster_series_t cs;
    if (sv_report_cluster_series(res, &cs, p->err)) {
        if (!p->rc) p->rc = SV_ENOMEM;
        return;
    }
    int np = g->np, step = g->step;
    double *tx = g->tx;
    double *ar = calloc((size_t)np, sizeof *ar),
           *up = calloc((size_t)np * SV_MAX_POOLS, sizeof *up);
    double *at = calloc((size_t)np, sizeof *at), *ax = calloc((size_t)np, sizeof *ax);
    int nm = 0;
    if (!ar || !up || !at || !ax) {
        if (!p->rc) p->rc = sv_errorf(p->err, SV_ENOMEM, "out of memory drawing the fleet");
    } else {
        for (size_t t = 0; t < cs.n && nm < np; t += (size_t)step, nm++) {
            /* the arrival rate and attainment over the step's samples */
            double n_arr = 0, dt = 0, good = 0, cnt = 0;
            for (size_t u = t; u < t + (size_t)step && u < cs.n; u++) {
                double d = u > 0 ? cs.t[u] - cs.t[u - 1] : 0;
                n_arr += cs.arrival_rate[u] * d;
                dt += d;
                if (!isnan(cs.attainment[u])) {
                    good += cs.attainment[u] * cs.arrival_rate[u] * d;
                    cnt += cs.arrival_rate[u] * d;
                }
            }
            tx[nm] = cs.t[t];
            ar[nm] = dt > 0 ? n_arr / dt : 0;
            for (int q = 0; q < res->npools; q++)
                up[q * np + nm] = cs.up[(size_t)q * (cs.n + 1) + t];
            at[nm] = cnt > 0 ? 100.0 * good / cnt : NAN;
        }
        int na = 0;
        for (int i = 0; i < nm; i++)
            if (!isnan(at[i])) ax[na] = tx[i], at[na++] = at[i];
        FILE *h = p->html;
        fputs("<h2>Load and fleet over time</h2>\n<div class=\"charts\">\n", h);
        sv_svg_chart_t c;
        memset(&c, 0, sizeof c);
        c.title = "Arrival rate";
        c.xlabel = "simulated time (s)";
        c.xmin_zero = 1;
        c.ylabel = "requests per second";
        c.ymin_zero = 1;
        c.s[c.ns++] = (sv_svg_series_t){.name = "arrivals", .x = tx, .y = ar, .n = nm, .lines = 1};
        sv__svg_chart_reach(sv__chart_begin(p, "arrival-rate"), &c, 620, 360, rr->time, NAN);
        sv__chart_end(p);
        memset(&c, 0, sizeof c);
        c.title = "Replicas up (starting, active or draining)";
        c.xlabel = "simulated time (s)";
        c.xmin_zero = 1;
        c.ylabel = "replicas";
        c.ymin_zero = 1;
        char un[SV_MAX_POOLS][96];
        for (int q = 0; q < res->npools && c.ns < SV_SVG_MAX_SERIES; q++) {
            snprintf(un[q], sizeof un[q], "pool %s", res->pools[q].cfg->name);
            c.s[c.ns++] =
                (sv_svg_series_t){.name = un[q], .x = tx, .y = up + q * np, .n = nm, .lines = 1};
        }
        sv__svg_chart_reach(sv__chart_begin(p, "replicas-up"), &c, 620, 360, rr->time, NAN);
        sv__chart_end(p);
        if (na > 0) {
            memset(&c, 0, sizeof c);
            c.title = "SLO attainment of the requests arriving in each interval";
            c.xlabel = "simulated time (s)";
            c.xmin_zero = 1;
            c.ylabel = "attainment (%)";
            c.ymin_zero = 1;
            c.s[c.ns++] =
                (sv_svg_series_t){.name = "attainment", .x = ax, .y = at, .n = na, .lines = 1};
            c.hline[c.nh] = 100.0 * sc->metrics.attainment;
            c.hlabel[c.nh++] = "target";
            sv__svg_chart_reach(sv__chart_begin(p, "attainment"), &c, 620, 360, rr->time, NAN);
            sv__chart_end(p);
        }
        fputs("</div>\n", h);
    }
    free(ar);
    free(up);
    free(at);
    free(ax);
    sv_cluster_series_free(&cs);
}

int sv_html_run_axes(const sv_result_t *res, const sv_run_axes_t *axes, const char *note,
                     const char *path, sv_error_t *err)
{
    const sv_run_axes_t *rx = axes;
    reach_t rr = {NAN, NAN, NAN, NAN, NAN, NAN};
    if (rx)
        rr =
            (reach_t){rx->ttft_ms, rx->tpot_ms, rx->phase_ms, rx->time_s, rx->requests, rx->kv_pct};
    char title[256];
    snprintf(title, sizeof title, "servesim run: %s", res->sc->name);
    sv__page_t p;
    int rc = sv__page_open(&p, path, title, PAGE_CSS, err);
    if (rc) return rc;
    FILE *h = p.html;
    sv_run_config_t cfg;
    if ((rc = sv_run_config(res, &cfg, err))) {
        fclose(h);
        return rc;
    }
    config_block(h, &cfg);
    sv_run_config_free(&cfg);
    summary_tables(h, res);
    pool_tables(h, res);
    sessions_section(&p, res);
    finance_section(&p, res);
    contract_section(&p, res);
    if (rx) {
        fputs("<p class=\"note\">Shared axes", h);
        if (note) {
            fputs(" (this run and ", h);
            esc(h, note);
            fputs(")", h);
        }
        fprintf(h,
                ": the charts reach at least TTFT %.4g ms, TPOT %.4g ms, mean phase %.4g ms, "
                "time %.4g s, %.4g requests, KV usage %.4g%%.</p>\n",
                rx->ttft_ms, rx->tpot_ms, rx->phase_ms, rx->time_s, rx->requests, rx->kv_pct);
    }
    latency_section(&p, res, &rr);
    /* One time axis for every chart over time: from 0 to the last sample (or the shared
     * reach of --axes-from, when longer), whatever instants each chart's own data cover. */
    size_t nsm;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &nsm);
    if (nsm > 0 && !(rr.time >= sm[nsm - 1].t)) rr.time = sm[nsm - 1].t;
    grid_t g;
    series_section(&p, res, &rr, &g);
    fleet_section(&p, res, &rr, &g);
    free(g.tx);
    return sv__page_close(&p);
}

/* ---- plan ---------------------------------------------------------------------------------- */

/* The plan's configuration name, in words (a layout after it: "..., 256 seqs, EP8 DPA8"). */
static void plan_name(const sv_plan_row_t *r, char *name, size_t n)
{
    const char *sep = r->layout_name[0] ? ", " : "", *l = r->layout_name;
    if (r->disagg && (strcmp(r->gpu, r->dgpu) != 0 || r->tp != r->dtp))
        snprintf(name, n, "prefill %d x %s TP%d, decode %d x %s TP%d, %ld seqs%s%s", r->p, r->gpu,
                 r->tp, r->d, r->dgpu, r->dtp, r->max_num_seqs, sep, l);
    else if (r->disagg)
        snprintf(name, n, "%s TP%d, %d:%d prefill:decode, %ld seqs%s%s", r->gpu, r->tp, r->p, r->d,
                 r->max_num_seqs, sep, l);
    else
        snprintf(name, n, "%s TP%d colocated, %ld seqs%s%s", r->gpu, r->tp, r->max_num_seqs, sep,
                 l);
}

/* What the plan assumed: the same facts the terminal prints above its table. */
static void plan_facts(FILE *h, const sv_scenario_t *sc, const sv_plan_cfg_t *cfg,
                       const sv_plan_facts_t *fa)
{
    fputs("<h2>What was planned</h2>\n<table class=\"cfg\">\n", h);
    fprintf(h, "<tr><th class=\"l\">target</th><td class=\"l\">%.4g req/s", fa->target);
    if (cfg->peak_factor != 1)
        fprintf(h, " (%.4g x peak factor %.4g)", cfg->target_rate, cfg->peak_factor);
    if (cfg->profile_peak) fputs(" (the rate profile's peak)", h);
    fputs("</td></tr>\n<tr><th class=\"l\">contract</th><td class=\"l\">", h);
    esc(h, fa->contract);
    fputs("</td></tr>\n<tr><th class=\"l\">arrivals</th><td class=\"l\">", h);
    esc(h, fa->arrivals);
    fputs("</td></tr>\n<tr><th class=\"l\">model</th><td class=\"l\">", h);
    esc(h, fa->model);
    fprintf(h,
            "</td></tr>\n<tr><th class=\"l\">weights, KV cache</th><td class=\"l\">%s, %s</td>"
            "</tr>\n<tr><th class=\"l\">engine profile</th><td class=\"l\">",
            fa->weights, fa->kv);
    esc(h, fa->engine[0] ? fa->engine : "none");
    if (fa->kv_link[0]) {
        fputs("</td></tr>\n<tr><th class=\"l\">KV link</th><td class=\"l\">", h);
        esc(h, fa->kv_link);
    }
    fputs("</td></tr>\n<tr><th class=\"l\">cost</th><td class=\"l\">", h);
    fputs(sc->finance.enabled ? "the scenario's cost map (wall energy with PUE, energy price, GPU "
                                "rental or purchase)"
                              : "GPU rental at the prices below; GPU energy only (no cost map)",
          h);
    fputs("</td></tr>\n</table>\n", h);
    if (fa->nwarnings > 0) {
        fputs("<h2>Warnings</h2>\n<ul class=\"warn\">\n", h);
        for (int k = 0; k < fa->nwarnings; k++) {
            fputs("<li>", h);
            esc(h, fa->warnings[k]);
            fputs("</li>\n", h);
        }
        fputs("</ul>\n", h);
    }
}

/* The cheapest fleets over the scenario's whole load. */
static void plan_day(FILE *h, const sv_plan_row_t *rows, int n, const sv_plan_facts_t *fa)
{
    int any = 0;
    for (int i = 0; i < n && rows[i].ok; i++)
        any |= rows[i].day.done;
    if (!any) return;
    fputs("<h2>The scenario's whole load</h2>\n<p class=\"note\">The cheapest fleets serving the "
          "workload as the scenario writes it (its rate profile, or its rate and length), beside "
          "the cost per hour at the peak.</p>\n<table>\n<tr><th>rank</th><th class=\"l\">fleet"
          "</th><th>hours</th><th>GPU-hours</th><th>total $</th><th>peak $/hour</th>"
          "<th>kWh at the wall</th><th>$/M tok</th><th>J/tok (wall)</th><th>GPU busy %</th>",
          h);
    fprintf(h, "<th>%s</th></tr>\n", fa->attain_label);
    for (int i = 0; i < n && rows[i].ok; i++) {
        const sv_plan_row_t *r = &rows[i];
        const sv_plan_day_t *d = &r->day;
        char name[96];
        if (!d->done) continue;
        plan_name(r, name, sizeof name);
        fprintf(h, "<tr><td>%d</td><td class=\"l\">", i + 1);
        esc(h, name);
        fprintf(h,
                ", fixed</td><td>%.2f</td><td>%.1f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td>"
                "<td>%.3f</td><td>%.3f</td><td>%.1f</td><td>%.1f</td></tr>\n",
                d->hours, d->gpu_hours, d->total_usd, r->cost_hour, d->wall_kwh, d->usd_per_mtok,
                d->wall_j_per_tok, 100 * d->busy_share, 100 * d->attainment);
        if (d->autoscaled)
            fprintf(h,
                    "<tr><td></td><td class=\"l\">autoscaled up to it: %.2f replicas mean, %d "
                    "peak</td><td></td><td>%.1f</td><td>%.2f</td><td></td><td>%.2f</td>"
                    "<td>%.3f</td><td></td><td></td><td>%.1f</td></tr>\n",
                    d->as_mean_replicas, d->as_peak_replicas, d->as_gpu_hours, d->as_total_usd,
                    d->as_wall_kwh, d->as_usd_per_mtok, 100 * d->as_attainment);
    }
    fputs("</table>\n", h);
}

/* The best row of each serving mode side by side, with the colocated-versus-disaggregated sentence;
   nothing when the plan did not search both modes. */
static void plan_versus(FILE *h, const sv_plan_row_t *rows, const sv_plan_facts_t *fa)
{
    if (!fa->versus[0]) return;
    fputs("<h2>Colocated or disaggregated</h2>\n<table>\n<tr><th class=\"l\">serving</th>"
          "<th>rank</th><th class=\"l\">configuration</th><th>GPUs</th><th>$/hour</th>"
          "<th>goodput/GPU</th></tr>\n",
          h);
    int bi[2] = {fa->best_colocated, fa->best_disaggregated};
    for (int k = 0; k < 2; k++) {
        fprintf(h, "<tr><td class=\"l\">%s</td>", k ? "disaggregated" : "colocated");
        if (bi[k] < 0) {
            fputs("<td></td><td class=\"l\" colspan=\"4\">none feasible</td></tr>\n", h);
            continue;
        }
        const sv_plan_row_t *r = &rows[bi[k]];
        char name[96];
        plan_name(r, name, sizeof name);
        fprintf(h, "<td>%d</td><td class=\"l\">", bi[k] + 1);
        esc(h, name);
        fprintf(h, "</td><td>%d</td><td>%.2f</td><td>%.3f</td></tr>\n", r->gpus, r->cost_hour,
                r->goodput_per_gpu);
    }
    fputs("</table>\n<p class=\"note\">", h);
    esc(h, fa->versus);
    fputs("</p>\n", h);
}

/* The configurations table's heading row, its budget columns named after br (the first ranked row
   with all nb budgets). */
static void plan_table_head(FILE *h, const sv_plan_facts_t *fa, const sv_plan_row_t *br, int nb)
{
    fputs("<h2>Configurations</h2>\n<table>\n<tr><th>rank</th><th class=\"l\">configuration</th>"
          "<th>GPUs</th><th>unit req/s</th><th>$/hour</th><th>$/hour if off by the band</th>"
          "<th>$/hour at low-high price</th><th>$/M tok</th><th>J/tok</th><th>goodput/GPU</th>"
          "<th class=\"l\">binding SLO</th>",
          h);
    fprintf(h, "<th>%s</th>", fa->attain_label);
    if (fa->per_request) fputs("<th>TTFT p90 ms</th><th>TPOT p90 ms</th>", h);
    for (int b = 0; b < nb && br; b++) {
        fputs("<th>", h);
        esc(h, br->budget[b].name);
        fprintf(h, " ms (&le; %g)</th>", br->budget[b].budget_ms);
    }
    fputs("<th class=\"l\">confidence</th></tr>\n", h);
}

/* One configuration's table row (rank i + 1): its sizing, costs and budgets, or its error across
   the ncols columns. */
static void plan_table_row(FILE *h, const sv_plan_row_t *r, int i, const sv_plan_facts_t *fa,
                           int nb, int ncols)
{
    char name[96];
    plan_name(r, name, sizeof name);
    if (!r->ok) {
        fputs("<tr><td>-</td><td class=\"l\">", h);
        esc(h, name);
        fprintf(h, "</td><td class=\"l\" colspan=\"%d\">", ncols - 2);
        esc(h, r->error);
        fputs("</td></tr>\n", h);
        return;
    }
    double lo, hi;
    sv_plan_band_cost(r, fa->target, &lo, &hi);
    fprintf(h, "<tr><td>%d</td><td class=\"l\">", i + 1);
    esc(h, name);
    fprintf(h,
            "</td><td>%d</td><td>%.2f</td><td>%.2f</td><td>%.2f-%.2f</td><td>%.2f-%.2f</td>"
            "<td>%.3f</td><td>%.3f</td><td>%.2f</td><td class=\"l\">%s</td><td>%.1f</td>",
            r->gpus, r->unit_capacity, r->cost_hour, lo, hi, sv_plan_cost_at(r, -1),
            sv_plan_cost_at(r, 1), r->cost_mtok, r->energy_tok, r->goodput_per_gpu, r->binding,
            100 * r->attain_at_target);
    if (fa->per_request) fprintf(h, "<td>%.1f</td><td>%.2f</td>", r->ttft_p90, r->tpot_p90);
    for (int b = 0; b < nb; b++)
        fprintf(h, "<td>%.1f</td>", b < r->nbudgets ? r->budget[b].value_ms : NAN);
    fprintf(h, "<td class=\"l\">&plusmn;%.0f%% %s</td></tr>\n", r->band_pct,
            sv_calibration_name((sv_calibration_t)r->calibration));
}

/* The cost-against-capacity scatter's points: one series per GPU type (or split), in the order
   they first appear; lb holds the rank labels. Owns its arrays (plan_scatter_free). */
typedef struct plan_scatter {
    int ng;
    char gname[SV_SVG_MAX_SERIES][SV_NAME_MAX];
    double *gx[SV_SVG_MAX_SERIES], *gy[SV_SVG_MAX_SERIES];
    const char **gl[SV_SVG_MAX_SERIES];
    int gn[SV_SVG_MAX_SERIES];
    char (*lb)[16];
} plan_scatter_t;

/* Adds feasible row r (rank i + 1 of n) to its GPU type's series, making the series if new. */
static void plan_scatter_add(plan_scatter_t *sp, const sv_plan_row_t *r, int i, int n)
{
    char series[SV_NAME_MAX]; /* the GPU type, or a split's two */
    if (r->disagg && strcmp(r->gpu, r->dgpu) != 0)
        snprintf(series, sizeof series, "%s + %s split", r->gpu, r->dgpu);
    else if (r->disagg)
        snprintf(series, sizeof series, "%s split", r->gpu);
    else
        snprintf(series, sizeof series, "%s", r->gpu);
    int g = 0;
    while (g < sp->ng && strcmp(sp->gname[g], series) != 0)
        g++;
    if (g == sp->ng && sp->ng < SV_SVG_MAX_SERIES) {
        snprintf(sp->gname[sp->ng], sizeof sp->gname[sp->ng], "%s", series);
        sp->gx[sp->ng] = calloc((size_t)n + 1, sizeof **sp->gx);
        sp->gy[sp->ng] = calloc((size_t)n + 1, sizeof **sp->gy);
        sp->gl[sp->ng] = calloc((size_t)n + 1, sizeof **sp->gl);
        sp->ng++;
    }
    if (g < sp->ng && sp->gx[g] && sp->gy[g] && sp->gl[g] && sp->lb) {
        sp->gx[g][sp->gn[g]] = r->units * r->unit_capacity;
        sp->gy[g][sp->gn[g]] = r->cost_hour;
        snprintf(sp->lb[i], sizeof sp->lb[i], "#%d", i + 1);
        sp->gl[g][sp->gn[g]] = i < 5 ? sp->lb[i] : NULL; /* rank labels on the five cheapest */
        sp->gn[g]++;
    }
}

/* Frees the scatter's series and labels. */
static void plan_scatter_free(plan_scatter_t *sp)
{
    for (int g = 0; g < sp->ng; g++) {
        free(sp->gx[g]);
        free(sp->gy[g]);
        free(sp->gl[g]);
    }
    free(sp->lb);
}

/* The "Cost against capacity" section: the scatter with the target rate marked. */
static void plan_scatter_chart(sv__page_t *p, const plan_scatter_t *sp, const sv_plan_facts_t *fa)
{
    FILE *h = p->html;
    fputs("<h2>Cost against capacity</h2>\n<p class=\"note\">One colour per GPU type (a "
          "disaggregated unit's: prefill + decode); the five "
          "cheapest carry their rank. Lower and further right is better.</p>\n"
          "<div class=\"charts\">\n",
          h);
    sv_svg_chart_t c;
    memset(&c, 0, sizeof c);
    c.title = "Each feasible cluster: what it costs and how much it sustains within the SLOs";
    c.xlabel = "capacity within the SLOs (req/s)";
    c.ylabel = "cost (USD per hour)";
    c.ymin_zero = 1;
    c.legend_right = 1;
    c.legend_title = "GPU";
    for (int g = 0; g < sp->ng; g++)
        c.s[c.ns++] = (sv_svg_series_t){.name = sp->gname[g],
                                        .x = sp->gx[g],
                                        .y = sp->gy[g],
                                        .n = sp->gn[g],
                                        .points = 1,
                                        .labels = sp->gl[g],
                                        .color = g + 1};
    char tl[64];
    snprintf(tl, sizeof tl, "target %.4g req/s", fa->target);
    c.vline[c.nv] = fa->target;
    c.vlabel[c.nv++] = tl;
    sv__svg_chart(sv__chart_begin(p, "cost-capacity"), &c, 1000, 480);
    sv__chart_end(p);
    fputs("</div>\n", h);
}

int sv_html_plan(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_plan_row_t *rows,
                 int n, const char *path, sv_error_t *err)
{
    sv_plan_facts_t fa;
    sv_plan_facts(sc, cfg, rows, n, &fa);
    char title[256];
    snprintf(title, sizeof title, "servesim plan: %.4g req/s of %s", fa.target, sc->name);
    sv__page_t p;
    int rc = sv__page_open(&p, path, title, PAGE_CSS, err);
    if (rc) return rc;
    FILE *h = p.html;
    fputs("<p>Every ranked configuration below serves the target rate within ", h);
    esc(h, fa.contract);
    fputs(", cheapest first.</p>\n", h);
    plan_facts(h, sc, cfg, &fa);
    plan_versus(h, rows, &fa);
    int nb = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].ok && rows[i].nbudgets > nb) nb = rows[i].nbudgets;
    const sv_plan_row_t *br = NULL;
    for (int i = 0; i < n && !br; i++)
        if (rows[i].ok && rows[i].nbudgets == nb) br = &rows[i];
    plan_table_head(h, &fa, br, nb);
    int ncols = 13 + (fa.per_request ? 2 : 0) + nb;
    plan_scatter_t sp = {0};
    sp.lb = calloc((size_t)n + 1, sizeof *sp.lb);
    for (int i = 0; i < n; i++) {
        plan_table_row(h, &rows[i], i, &fa, nb, ncols);
        if (rows[i].ok) plan_scatter_add(&sp, &rows[i], i, n);
    }
    fputs("</table>\n", h);
    fputs("<p class=\"note\">confidence: error bands from servesim validate per calibration "
          "status; a capacity off by its band needs more or fewer units. The price range is the "
          "catalog's public on-demand range per GPU-hour (price_low_usd, price_high_usd).</p>\n",
          h);
    plan_day(h, rows, n, &fa);
    plan_scatter_chart(&p, &sp, &fa);
    plan_scatter_free(&sp);
    return sv__page_close(&p);
}
