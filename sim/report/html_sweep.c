/*
 * The HTML report of a sweep (see include/servesim/report/html.h): the summary of every
 * curve (knee or where the SLOs are first met, with grid-edge warnings), the table, charts
 * against the x axis with one curve per combination of the other keys and a legend, and the
 * latency-throughput charts (p50 and p99 against the achieved throughput, SLO lines, knees
 * ringed). Axes turn logarithmic by themselves where values span 30x or more (svg_int.h).
 *
 * Kept apart from html.c (runs and plans) with its own small page writer.
 */
#include "servesim/report/html.h"

#include <errno.h>
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio_int.h"
#include "report/html_int.h"
#include "base/svg_int.h"

#define esc sv__xml_escape

/* Curves charted at most (two series each: p50 and p99, or throughput and goodput). */
#define MAX_CHART_CURVES (SV_SVG_MAX_SERIES / 2)

/* The sweep page's own style, after the shared one (report/html_int.h). */
static const char *const PAGE_CSS =
    "pre.summary{background:#f7f7f7;padding:10px;font-size:13px;white-space:pre-wrap}\n";

/* The x coordinate of every row: the first key's value when every value is a number (and
 * positions is 0: zipped x keys are one axis of tuples), else the position of the value
 * along the grid (1, 2, ...). */
static int x_of_rows(const sv_row_t *rows, long n, int positions, double *x)
{
    int numeric = !positions;
    for (long i = 0; i < n && numeric; i++) {
        char *end;
        x[i] = strtod(rows[i].vals[0], &end);
        numeric = end != rows[i].vals[0] && *end == '\0' && isfinite(x[i]);
    }
    if (numeric) return 1;
    /* positions: the order of first appearance */
    for (long i = 0; i < n; i++) {
        x[i] = 0;
        for (long j = 0; j < i && x[i] == 0; j++)
            if (strcmp(rows[j].vals[0], rows[i].vals[0]) == 0) x[i] = x[j];
        if (x[i] == 0) {
            double mx = 0;
            for (long j = 0; j < i; j++)
                mx = fmax(mx, x[j]);
            x[i] = mx + 1;
        }
    }
    return 0;
}

/* Legend text of a curve: the values of its keys ("static" or "2, 6"). */
static void curve_name(char *buf, size_t n, const sv_curves_t *cv, int c, int nkeys,
                       const sv_row_t *rows, const char *suffix)
{
    size_t l = 0;
    buf[0] = '\0';
    const sv_row_t *f = &rows[cv->c[c].first];
    for (int k = cv->nx; k < nkeys && l < n; k++) {
        snprintf(buf + l, n - l, "%s%s", k > cv->nx ? " / " : "", f->vals[k]);
        l = strlen(buf);
    }
    if (nkeys <= cv->nx)
        snprintf(buf, n, "%s", suffix[0] ? suffix + 2 : "all points");
    else if (l < n)
        snprintf(buf + l, n - l, "%s", suffix);
}

/* What a chart plots per curve: one or two metrics (the second dashed). */
typedef struct spec {
    const char *name, *title, *ylabel;
    int col1, col2; /* SV_COL_*; col2 < 0: one series per curve */
    const char *suf1, *suf2;
    int latency; /* x: achieved request throughput instead of the x key */
    double hline;
    const char *hlabel;
    int logy, percent, zero_nan;
} spec_t;

typedef struct ctx {
    sv__page_t *p;
    char (*keys)[128];
    int nkeys;
    const sv_row_t *rows;
    const sv_curves_t *cv;
    const double *x;         /* per row */
    int numeric;             /* x is the first key's value (else grid positions) */
    const char *const *xcat; /* names of the grid positions (numeric == 0) */
    int nxcat;
    const char *xlabel, *legend_title;
    int ncharted;
} ctx_t;

static void draw(ctx_t *cx, const spec_t *sp)
{
    const sv_curves_t *cv = cx->cv;
    sv_svg_chart_t c;
    memset(&c, 0, sizeof c);
    c.title = sp->title;
    c.xlabel = sp->latency ? "achieved throughput (requests per second)" : cx->xlabel;
    c.ylabel = sp->ylabel;
    c.ymin_zero = 1;
    c.logy = sp->logy;
    c.logx = sp->latency || cx->numeric;
    c.legend_right = 1;
    if (!sp->latency) {
        c.xcat = cx->xcat;
        c.nxcat = cx->nxcat;
    }
    c.legend_title = cx->legend_title;
    int per = sp->col2 >= 0 ? 2 : 1;
    double *xs[SV_SVG_MAX_SERIES] = {0}, *ys[SV_SVG_MAX_SERIES] = {0};
    char names[SV_SVG_MAX_SERIES][96];
    for (int c0 = 0; c0 < cx->ncharted; c0++) {
        const sv_curve_t *cu = &cv->c[c0];
        int mark = cv->is_load ? cu->knee : cu->met;
        for (int s = 0; s < per; s++) {
            int col = s == 0 ? sp->col1 : sp->col2;
            double *X = malloc((size_t)cu->n * sizeof *X), *Y = malloc((size_t)cu->n * sizeof *Y);
            int k = c.ns;
            xs[k] = X;
            ys[k] = Y;
            if (!X || !Y) continue;
            for (int j = 0; j < cu->n; j++) {
                const sv_row_t *r = &cx->rows[cu->members[j]];
                double v = r->ok ? r->m[col] : NAN;
                if (sp->zero_nan && r->ok && isnan(v)) v = 0;
                X[j] = sp->latency ? (r->ok ? r->m[SV_COL_REQ_TPUT] : NAN) : cx->x[cu->members[j]];
                Y[j] = sp->percent ? 100 * v : v;
            }
            curve_name(names[k], sizeof names[k], cv, c0, cx->nkeys, cx->rows,
                       s == 0 ? sp->suf1 : sp->suf2);
            /* the second series of a pair is the dashed one: p50 under p99, goodput under
             * throughput; the knee is ringed on the first */
            c.s[c.ns++] = (sv_svg_series_t){.name = names[k],
                                            .x = X,
                                            .y = Y,
                                            .n = cu->n,
                                            .lines = 1,
                                            .points = 1,
                                            .color = c0 + 1,
                                            .dash = s == 1,
                                            .mark = s == 0 && mark >= 0 ? mark + 1 : 0,
                                            /* one curve: say what the ring is;
                                             * several: the note does (labels would pile up) */
                                            .mark_label = cx->ncharted > 1 ? NULL
                                                          : cv->is_load    ? "knee"
                                                                           : "SLOs met"};
        }
    }
    if (!isnan(sp->hline)) {
        c.hline[c.nh] = sp->hline;
        c.hlabel[c.nh++] = sp->hlabel;
    }
    sv__svg_chart(sv__chart_begin(cx->p, sp->name), &c, 660, 380);
    sv__chart_end(cx->p);
    for (int k = 0; k < c.ns; k++) {
        free(xs[k]);
        free(ys[k]);
    }
}

static void cell(FILE *h, double v)
{
    char b[32];
    fprintf(h, "<td>%s</td>", sv_fmt_num(v, b));
}

/* One row per leaf of the configuration JSON, named by its dotted path. */
static void config_rows(FILE *h, const cJSON *j, const char *prefix)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, j)
    {
        char name[256];
        snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "",
                 it->string ? it->string : "");
        if (cJSON_IsObject(it)) {
            config_rows(h, it, name);
            continue;
        }
        char *v = cJSON_IsString(it) ? NULL : cJSON_PrintUnformatted(it);
        fputs("<tr><th class=\"l\">", h);
        esc(h, name);
        fputs("</th><td class=\"l\">", h);
        esc(h, v ? v : it->valuestring ? it->valuestring : "");
        fputs("</td></tr>\n", h);
        free(v);
    }
}

static void config_block(FILE *h, const char *config, char keys[][128], int nkeys)
{
    cJSON *j = config ? cJSON_Parse(config) : NULL;
    if (!j) return;
    fputs("<h2>Configuration</h2>\n<p class=\"note\">What every point shares, as the first point "
          "ran it (its result JSON's servesim.config); the swept keys (",
          h);
    for (int k = 0; k < nkeys; k++) {
        if (k) fputs(", ", h);
        esc(h, keys[k]);
    }
    fputs(") take each point's own values.</p>\n<table class=\"cfg\">\n", h);
    config_rows(h, j, "");
    fputs("</table>\n", h);
    cJSON_Delete(j);
}

int sv_html_sweep(const char *title, char keys[][128], int nkeys, const sv_row_t *rows, long n,
                  const char *load, const char *path, sv_error_t *err)
{
    return sv_html_sweep_cfg(title, keys, nkeys, rows, n, load, NULL, path, err);
}

/* The "Summary" section: every curve's summary, as the terminal prints it. */
static void sweep_summary(FILE *h, const sv_curves_t *cv, char keys[][128], int nkeys,
                          const sv_row_t *rows)
{
    char *sum = malloc(8192);
    fputs("<h2>Summary</h2>\n<pre class=\"summary\">", h);
    for (int c = 0; sum && c < cv->n; c++) {
        sv_curve_summary(cv, c, keys, nkeys, rows, sum, 8192);
        esc(h, sum);
        if (c + 1 < cv->n) fputc('\n', h);
    }
    fputs("</pre>\n", h);
    free(sum);
}

/* The "Points" table: each point's swept values and its throughput, goodput, attainment, latency
   percentiles and cost, or its error. */
static void sweep_points(FILE *h, char keys[][128], int nkeys, const sv_row_t *rows, long n)
{
    fputs("<h2>Points</h2>\n<table>\n<tr>", h);
    for (int k = 0; k < nkeys; k++) {
        fputs("<th class=\"l\">", h);
        esc(h, keys[k]);
        fputs("</th>", h);
    }
    fputs("<th>req/s</th><th>tok/s</th><th>goodput</th><th>goodput/GPU</th><th>SLO %</th>"
          "<th>p50 TTFT ms</th><th>p99 TTFT ms</th><th>p50 TPOT ms</th><th>p99 TPOT ms</th>"
          "<th>$/M tok</th></tr>\n",
          h);
    for (long i = 0; i < n; i++) {
        const sv_row_t *r = &rows[i];
        fputs("<tr>", h);
        for (int k = 0; k < nkeys; k++) {
            fputs("<td class=\"l\">", h);
            esc(h, r->vals[k]);
            fputs("</td>", h);
        }
        if (!r->ok) {
            fputs("<td class=\"l\" colspan=\"10\">", h);
            esc(h, r->error);
            fputs("</td></tr>\n", h);
            continue;
        }
        const double *m = r->m;
        cell(h, m[SV_COL_REQ_TPUT]);
        cell(h, m[SV_COL_OUT_TPUT]);
        cell(h, isnan(m[SV_COL_GOODPUT]) ? 0 : m[SV_COL_GOODPUT]);
        cell(h, isnan(m[SV_COL_GOODPUT_GPU]) ? 0 : m[SV_COL_GOODPUT_GPU]);
        cell(h, 100 * m[SV_COL_ATTAIN]);
        cell(h, m[SV_COL_TTFT_P50]);
        cell(h, m[SV_COL_TTFT_P99]);
        cell(h, m[SV_COL_TPOT_P50]);
        cell(h, m[SV_COL_TPOT_P99]);
        cell(h, m[SV_COL_COST_MTOK]);
        fputs("</tr>\n", h);
    }
    fputs("</table>\n", h);
}

/* The heading and note of the charts against the swept keys: how the curves are grouped (lt names
   the grouping keys) and what the rings and dashed lines mark. */
static void sweep_charts_note(FILE *h, const ctx_t *cx, const char *lt)
{
    const sv_curves_t *cv = cx->cv;
    fputs("<h2 id=\"charts\">Against ", h);
    esc(h, cx->xlabel);
    fputs("</h2>\n<p class=\"note\">", h);
    if (cx->nkeys > cv->nx) {
        fprintf(h, "One curve per combination of ");
        esc(h, lt);
        fprintf(h, " (%d curve%s", cv->n, cv->n == 1 ? "" : "s");
        if (cx->ncharted < cv->n)
            fprintf(h, "; the first %d are charted, the table and sweep.csv hold all",
                    cx->ncharted);
        fputs("). ", h);
    }
    if (!cx->numeric) fputs("The x axis is the grid's values in the order given. ", h);
    fputs(cv->is_load ? "Rings mark each curve's knee: the highest load meeting the SLOs."
                      : "Rings mark where each curve first meets the SLOs.",
          h);
    fputs(" Dashed lines: the second metric of a pair (goodput, p50).</p>\n", h);
}

/* The charts against the swept keys: throughput and goodput, TTFT, TPOT and, with SLOs,
   attainment, each with its SLO or target line (sl_ttft, sl_tpot, tl label them). */
static void sweep_metric_charts(FILE *h, ctx_t *cx, double slo_ttft, double slo_tpot, double target,
                                const char *sl_ttft, const char *sl_tpot, const char *tl)
{
    fputs("<div class=\"charts\">\n", h);
    const spec_t specs[] = {
        {"throughput", "Throughput (solid) and goodput (dashed: requests within the SLOs)",
         "requests per second", SV_COL_REQ_TPUT, SV_COL_GOODPUT, ": throughput", ": goodput", 0,
         NAN, NULL, 0, 0, 1},
        {"ttft", "Time to first token: p99 (solid) and p50 (dashed)", "TTFT (ms)", SV_COL_TTFT_P99,
         SV_COL_TTFT_P50, ": p99", ": p50", 0, slo_ttft, sl_ttft, 1, 0, 0},
        {"tpot", "Time per output token: p99 (solid) and p50 (dashed)", "TPOT (ms)",
         SV_COL_TPOT_P99, SV_COL_TPOT_P50, ": p99", ": p50", 0, slo_tpot, sl_tpot, 1, 0, 0},
        {"attainment", "SLO attainment: share of requests meeting every SLO",
         "requests within the SLOs (%)", SV_COL_ATTAIN, -1, "", NULL, 0, 100 * target, tl, 0, 1, 0},
    };
    for (int i = 0; i < 4 && cx->x; i++)
        if (i < 3 || cx->cv->slo) draw(cx, &specs[i]);
    fputs("</div>\n", h);
}

/* The "Latency against throughput" section: TTFT and TPOT placed at each point's achieved
   throughput. */
static void sweep_latency_charts(FILE *h, ctx_t *cx, double slo_ttft, double slo_tpot,
                                 const char *sl_ttft, const char *sl_tpot)
{
    fputs("<h2 id=\"latency\">Latency against throughput</h2>\n<p class=\"note\">Each "
          "point is one "
          "point of the sweep, placed at the throughput it achieved. Below the knee latency "
          "barely moves as throughput grows; past it throughput stops growing and latency "
          "climbs.</p>\n<div class=\"charts\">\n",
          h);
    const spec_t lat[] = {
        {"latency-ttft", "TTFT against achieved throughput: p99 (solid), p50 (dashed)", "TTFT (ms)",
         SV_COL_TTFT_P99, SV_COL_TTFT_P50, ": p99", ": p50", 1, slo_ttft, sl_ttft, 1, 0, 0},
        {"latency-tpot", "TPOT against achieved throughput: p99 (solid), p50 (dashed)", "TPOT (ms)",
         SV_COL_TPOT_P99, SV_COL_TPOT_P50, ": p99", ": p50", 1, slo_tpot, sl_tpot, 1, 0, 0},
    };
    for (int i = 0; i < 2 && cx->x; i++)
        draw(cx, &lat[i]);
    fputs("</div>\n", h);
}

int sv_html_sweep_cfg(const char *title, char keys[][128], int nkeys, const sv_row_t *rows, long n,
                      const char *load, const char *config, const char *path, sv_error_t *err)
{
    sv_curves_t cv;
    int rc = sv_sweep_curves(keys, nkeys, rows, n, load, &cv, err);
    if (rc) return rc;
    sv__page_t p;
    if ((rc = sv__page_open(&p, path, title, PAGE_CSS, err))) {
        sv_curves_free(&cv);
        return rc;
    }
    FILE *h = p.html;
    sweep_summary(h, &cv, keys, nkeys, rows);
    config_block(h, config, keys, nkeys);

    sweep_points(h, keys, nkeys, rows, n);

    double *x = calloc((size_t)n + 1, sizeof *x);
    char xl[600] = "", lt[600] = "", sl[2][64] = {"", ""}, tl[64];
    int numeric = x ? x_of_rows(rows, n, cv.nx > 1, x) : 0;
    for (int k = 0; k < cv.nx && k < nkeys; k++) {
        size_t l = strlen(xl);
        snprintf(xl + l, sizeof xl - l, "%s%s", k ? " / " : "", keys[k]);
    }
    /* names of the grid positions: the x keys' values ("2 / 2" for zipped keys) */
    long npos = 0;
    for (long i = 0; x && i < n; i++)
        if (x[i] > npos) npos = (long)x[i];
    char(*pos)[160] = !numeric && npos > 0 ? calloc((size_t)npos, sizeof *pos) : NULL;
    const char **posp = pos ? calloc((size_t)npos, sizeof *posp) : NULL;
    for (long i = 0; posp && i < n; i++) {
        char *b = pos[(long)x[i] - 1];
        posp[(long)x[i] - 1] = b;
        if (b[0]) continue;
        for (int k = 0; k < cv.nx; k++) {
            size_t l = strlen(b);
            snprintf(b + l, sizeof pos[0] - l, "%s%s", k ? " / " : "", rows[i].vals[k]);
        }
    }
    for (int k = cv.nx; k < nkeys; k++) {
        size_t l = strlen(lt);
        snprintf(lt + l, sizeof lt - l, "%s%s", k > cv.nx ? " / " : "", keys[k]);
    }
    double slo_ttft = n ? rows[0].m[SV_COL_SLO_TTFT] : NAN,
           slo_tpot = n ? rows[0].m[SV_COL_SLO_TPOT] : NAN;
    double target = n ? rows[0].m[SV_COL_ATTAIN_TARGET] : 0.9;
    if (isnan(target)) target = 0.9;
    snprintf(tl, sizeof tl, "target %g%%", 100 * target);
    if (!isnan(slo_ttft)) snprintf(sl[0], sizeof sl[0], "SLO %g ms", slo_ttft);
    if (!isnan(slo_tpot)) snprintf(sl[1], sizeof sl[1], "SLO %g ms", slo_tpot);
    ctx_t cx = {
        &p,  keys, nkeys, rows, &cv, x, numeric, posp, posp ? (int)npos : 0, xl, lt[0] ? lt : NULL,
        cv.n};
    if (cx.ncharted > MAX_CHART_CURVES) cx.ncharted = MAX_CHART_CURVES;

    sweep_charts_note(h, &cx, lt);
    sweep_metric_charts(h, &cx, slo_ttft, slo_tpot, target, sl[0], sl[1], tl);
    sweep_latency_charts(h, &cx, slo_ttft, slo_tpot, sl[0], sl[1]);
    free(x);
    free(pos);
    free(posp);
    sv_curves_free(&cv);
    return sv__page_close(&p);
}
