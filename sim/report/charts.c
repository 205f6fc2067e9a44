/*
 * Charts as SVG strings (see include/servesim/report/charts.h). The run charts repeat
 * what sv_html_run() draws (sim/report/html.c) with the same definitions and labels;
 * tests/lab_endpoint.sh checks that the lab's and the report's files are the same bytes.
 */
#include "servesim/report/charts.h"

#include "report/html_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/base/numeric.h"
#include "base/svg_int.h"

typedef struct membuf {
    FILE *f;
    char *buf;
    size_t len;
} membuf_t;

static FILE *mb_open(membuf_t *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    return m->f;
}

static char *mb_close(membuf_t *m)
{
    if (fclose(m->f) != 0) {
        free(m->buf);
        return NULL;
    }
    return m->buf;
}

int sv__cdf(double *v, int n, double *x, double *y, int m)
{
    qsort(v, (size_t)n, sizeof *v, sv_cmp_double);
    if (n == 0) return 0;
    if (m > n) m = n;
    for (int i = 0; i < m; i++) {
        int k = m > 1 ? (int)((double)i / (m - 1) * (n - 1)) : 0;
        x[i] = v[k] * 1e3;
        y[i] = 100.0 * (k + 1) / n;
    }
    return m;
}

static char *cdf_chart(const char *title, const char *xlabel, const char *series, const double *x,
                       const double *y, int n, double slo)
{
    membuf_t m;
    if (!mb_open(&m)) return NULL;
    sv__cdf_chart(m.f, title, xlabel, series, x, y, n, slo, NAN);
    return mb_close(&m);
}

static char *run_cdf(const sv_result_t *res, int tpot)
{
    int n = (int)res->pool.n, k = 0;
    double *v = malloc((size_t)(n + 1) * sizeof *v);
    double *x = malloc(400 * sizeof *x), *y = malloc(400 * sizeof *y);
    char *out = NULL;
    if (v && x && y) {
        for (int i = 0; i < n; i++) {
            const sv_req_t *r = &res->pool.r[i];
            if (r->state != SV_RQ_DONE) continue;
            if (!tpot)
                v[k++] = sv_req_ttft(r);
            else if (r->output > 1)
                v[k++] = sv_req_tpot(r);
        }
        int nc = sv__cdf(v, k, x, y, 400);
        const sv_metrics_cfg_t *mc = &res->sc->metrics;
        out = tpot ? cdf_chart("TPOT: share of requests with time per output token within x",
                               "time per output token (ms)", "TPOT CDF", x, y, nc, mc->slo_tpot_ms)
                   : cdf_chart("TTFT: share of requests answered within x",
                               "time to first token (ms)", "TTFT CDF", x, y, nc, mc->slo_ttft_ms);
    }
    free(v);
    free(x);
    free(y);
    return out;
}

static char *run_breakdown(const sv_result_t *res)
{
    const sv_summary_t *s = &res->summary;
    const char *names[6] = {"queue", "prefill", "decode"};
    double vals[6] = {s->queue.mean, s->prefill.mean, s->decode.mean};
    int nb = 3;
    if (res->sc->disaggregated) {
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
    membuf_t m;
    if (!mb_open(&m)) return NULL;
    sv__svg_bars(m.f, "Where a request's time goes (mean)", "time (ms)", names, vals, nb, 620, 360);
    return mb_close(&m);
}

char *sv_chart_run(const sv_result_t *res, const char *name)
{
    if (strcmp(name, "ttft-cdf") == 0) return run_cdf(res, 0);
    if (strcmp(name, "tpot-cdf") == 0) return run_cdf(res, 1);
    if (strcmp(name, "breakdown") == 0) return run_breakdown(res);
    return NULL;
}

char *sv_chart_lines(const sv_chart_spec_t *cs)
{
    sv_svg_chart_t c;
    memset(&c, 0, sizeof c);
    c.title = cs->title;
    c.xlabel = cs->xlabel;
    c.ylabel = cs->ylabel;
    c.ymin_zero = 1;
    c.logx = !cs->linear_x;
    c.logy = 1;         /* log where the values span decades (SV_SVG_LOG_SPAN) */
    c.legend_right = 1; /* the legend beside the plot, never over the data */
    c.xmin_zero = cs->xmax > 0;
    for (int k = 0; k < cs->ns && k < SV_CHART_MAX_SERIES; k++)
        c.s[c.ns++] = (sv_svg_series_t){.name = cs->s[k].name,
                                        .x = cs->s[k].x,
                                        .y = cs->s[k].y,
                                        .n = cs->s[k].n,
                                        .lines = 1,
                                        .points = cs->s[k].points};
    if (!isnan(cs->hline)) {
        c.hline[c.nh] = cs->hline;
        c.hlabel[c.nh++] = cs->hlabel ? cs->hlabel : "";
    }
    if (!isnan(cs->vline)) {
        c.vline[c.nv] = cs->vline;
        c.vlabel[c.nv++] = cs->vlabel ? cs->vlabel : "";
    }
    membuf_t m;
    if (!mb_open(&m)) return NULL;
    sv__svg_chart_reach(m.f, &c, cs->width ? cs->width : 620, cs->height ? cs->height : 360,
                        cs->xmax > 0 ? cs->xmax : NAN, NAN);
    return mb_close(&m);
}

char *sv_chart_bars(const char *title, const char *ylabel, const char *const *names,
                    const double *values, int n)
{
    membuf_t m;
    if (!mb_open(&m)) return NULL;
    sv__svg_bars(m.f, title, ylabel, names, values, n, 620, 360);
    return mb_close(&m);
}
