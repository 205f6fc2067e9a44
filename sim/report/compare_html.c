/*
 * The HTML page of `servesim compare --report`: the comparison table, the distribution
 * tests, and for TTFT, TPOT, ITL and E2EL one chart overlaying the two empirical CDFs on a
 * shared axis. Self-contained: inline CSS and SVG (sim/base/svg_int.h), no script, no link.
 */
#include "servesim/studies/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/base/numeric.h"
#include "base/svg_int.h"

#define CDF_POINTS 400

/* Value at quantile q (0..1) of v (n values), by sorting a copy; NAN when empty. */
static double quantile(const double *v, size_t n, double q)
{
    if (n == 0) return NAN;
    double *s = malloc(n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, sv_cmp_double);
    double r = s[(size_t)(q * (double)(n - 1))];
    free(s);
    return r;
}

/* The empirical CDF of v (n values, seconds) at up to CDF_POINTS points no further right
 * than cut (seconds): x in ms, y in %. Returns the number of points, or -1 out of memory. */
static int ecdf(const double *v, size_t n, double cut, double *x, double *y)
{
    if (n == 0) return 0;
    double *s = malloc(n * sizeof *s);
    if (!s) return -1;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, sv_cmp_double);
    size_t shown = n;
    while (shown > 1 && s[shown - 1] > cut)
        shown--;
    int m = shown < CDF_POINTS ? (int)shown : CDF_POINTS;
    for (int i = 0; i < m; i++) {
        size_t k = m > 1 ? (size_t)((double)i / (m - 1) * (double)(shown - 1)) : 0;
        x[i] = s[k] * 1e3;
        y[i] = 100.0 * (double)(k + 1) / (double)n;
    }
    free(s);
    return m;
}

static void cell_num(FILE *f, int present, double v, const char *absent)
{
    if (present)
        fprintf(f, "<td>%.2f</td>", v);
    else
        fprintf(f, "<td class=\"miss\">%s</td>", absent);
}

static void table(FILE *f, const sv_compare_t *c, double tol)
{
    fputs("<h2>Metrics</h2>\n<table><tr><th class=\"l\">metric</th><th>REAL</th><th>SIM</th>"
          "<th>error (SIM &minus; REAL) / REAL</th></tr>\n",
          f);
    for (int m = 0; m < SV_CM_COUNT; m++) {
        const sv_compare_row_t *r = &c->rows[m];
        fputs("<tr><td class=\"l\">", f);
        sv__xml_escape(f, sv_compare_metric_label(m));
        fputs("</td>", f);
        cell_num(f, r->in_real, r->real, "not in REAL");
        cell_num(f, r->in_sim, r->sim, "not in SIM");
        if (isnan(r->err))
            fputs("<td class=\"miss\">-</td>", f);
        else if (isinf(r->err))
            fputs("<td class=\"bad\">inf (REAL is 0)</td>", f);
        else
            fprintf(f, "<td class=\"%s\">%+.2f%%</td>",
                    isnan(tol)           ? ""
                    : fabs(r->err) > tol ? "bad"
                                         : "ok",
                    fabs(r->err) < 5e-5 ? 0.0 : 100.0 * r->err);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<h2>Distributions (two-sample Kolmogorov-Smirnov)</h2>\n"
          "<table><tr><th class=\"l\">metric</th><th>n REAL</th><th>n SIM</th><th>D</th>"
          "<th>p-value</th></tr>\n",
          f);
    for (int l = 0; l < SV_LM_COUNT; l++) {
        const sv_compare_ks_t *k = &c->ks[l];
        fprintf(f, "<tr><td class=\"l\">%s</td>", sv_compare_latency_name(l));
        if (!c->real->sample[l] || !c->sim->sample[l]) {
            fprintf(f, "<td class=\"miss\">%s</td><td class=\"miss\">%s</td><td>-</td><td>-</td>",
                    c->real->sample[l] ? "" : "not in REAL", c->sim->sample[l] ? "" : "not in SIM");
        } else {
            fprintf(f, "<td>%zu</td><td>%zu</td>", k->n_real, k->n_sim);
            if (isnan(k->d))
                fputs("<td>-</td><td>-</td>", f);
            else
                fprintf(f, "<td>%.4f</td><td>%.4f</td>", k->d, k->p);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

int sv_compare_html(const sv_compare_t *c, double tol, const char *path, sv_error_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    double *buf = malloc(4 * CDF_POINTS * sizeof *buf);
    if (!buf) {
        fclose(f);
        return sv_errorf(err, SV_ENOMEM, "out of memory writing %s", path);
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>servesim compare</title>\n<style>\n"
          "body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
          "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
          "table{border-collapse:collapse;font-size:13px}\n"
          "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\n"
          "th{background:#f3f3f3}td.l,th.l{text-align:left}\n"
          "td.miss{color:#888;font-style:italic}td.bad{color:#b00;font-weight:bold}\n"
          "td.ok{color:#060}\n.charts{display:flex;flex-wrap:wrap;gap:16px}\n"
          ".note{color:#555;font-size:13px}\n"
          "</style></head><body>\n<h1>servesim compare</h1>\n<p class=\"note\">REAL: ",
          f);
    sv__xml_escape(f, c->real->path);
    fprintf(f, " (%s)<br>SIM: ", sv_bench_format_name(c->real->format));
    sv__xml_escape(f, c->sim->path);
    fprintf(f,
            " (%s)<br>Metrics as vllm bench serve defines them; GenAI-Perf's "
            "inter_token_latency is read as TPOT and inter_chunk_latency as ITL.</p>\n",
            sv_bench_format_name(c->sim->format));
    if (c->worst >= 0) {
        fprintf(f, "<p><b>Worst |error|: ");
        if (isinf(c->worst_err))
            fputs("inf", f);
        else
            fprintf(f, "%.2f%%", 100.0 * c->worst_err);
        fputs(" (", f);
        sv__xml_escape(f, sv_compare_metric_label(c->worst));
        fputs(")", f);
        if (!isnan(tol)) {
            int past = sv_compare_past(c, tol);
            if (past)
                fprintf(f, "; %d past the tolerance of %g%%", past, 100.0 * tol);
            else
                fprintf(f, "; within the tolerance of %g%%", 100.0 * tol);
        }
        fputs("</b></p>\n", f);
    }
    table(f, c, tol);
    fputs("<h2>Empirical CDFs of the per-request values (successful requests)</h2>\n"
          "<div class=\"charts\">\n",
          f);
    static const char *const titles[SV_LM_COUNT] = {
        "TTFT: share of requests within x", "TPOT: share of requests within x",
        "ITL: share of gaps within x", "E2EL: share of requests within x"};
    static const char *const xl[SV_LM_COUNT] = {
        "time to first token (ms)", "time per output token (ms)", "inter-token latency (ms)",
        "end-to-end latency (ms)"};
    int nchart = 0;
    for (int l = 0; l < SV_LM_COUNT; l++) {
        const double *a = c->real->sample[l], *b = c->sim->sample[l];
        if (!a && !b) continue;
        double *rx = buf, *ry = buf + CDF_POINTS, *sx = buf + 2 * CDF_POINTS,
               *sy = buf + 3 * CDF_POINTS;
        /* ITL pools every gap: a few long ones (a prefill in the batch) would squeeze the
         * body of the curve against the axis, so its axis stops at the larger p95. */
        double cut = INFINITY;
        char title[128];
        snprintf(title, sizeof title, "%s", titles[l]);
        if (l == SV_LM_ITL) {
            double qa = a ? quantile(a, c->real->nsample[l], 0.95) : NAN;
            double qb = b ? quantile(b, c->sim->nsample[l], 0.95) : NAN;
            cut = isnan(qa) ? qb : isnan(qb) ? qa : qa > qb ? qa : qb;
            snprintf(title, sizeof title, "%s (axis cut at p95, %.1f ms)", titles[l], cut * 1e3);
        }
        int nr = a ? ecdf(a, c->real->nsample[l], cut, rx, ry) : 0;
        int ns = b ? ecdf(b, c->sim->nsample[l], cut, sx, sy) : 0;
        if (nr < 0 || ns < 0) {
            free(buf);
            fclose(f);
            return sv_errorf(err, SV_ENOMEM, "out of memory writing %s", path);
        }
        sv_svg_chart_t ch;
        memset(&ch, 0, sizeof ch);
        ch.title = title;
        ch.xlabel = xl[l];
        ch.ylabel = "share (%)";
        ch.ymin_zero = 1;
        char nreal[64], nsim[64];
        snprintf(nreal, sizeof nreal, "REAL (%zu)", a ? c->real->nsample[l] : (size_t)0);
        snprintf(nsim, sizeof nsim, "SIM (%zu)", b ? c->sim->nsample[l] : (size_t)0);
        ch.s[ch.ns++] = (sv_svg_series_t){.name = nreal, .x = rx, .y = ry, .n = nr, .lines = 1};
        ch.s[ch.ns++] = (sv_svg_series_t){.name = nsim, .x = sx, .y = sy, .n = ns, .lines = 1};
        fputs("<div>", f);
        sv__svg_chart(f, &ch, 540, 340);
        fputs("</div>\n", f);
        nchart++;
    }
    if (!nchart)
        fputs("<p class=\"note\">Neither file holds per-request lists (vLLM writes them with "
              "--save-detailed, servesim with --detailed).</p>\n",
              f);
    fputs("</div>\n", f);
    fputs("<p class=\"note\">Written by servesim compare.</p>\n</body></html>\n", f);
    free(buf);
    int bad = ferror(f);
    if (fclose(f) || bad) return sv_errorf(err, SV_EIO, "%s: write error", path);
    return 0;
}
