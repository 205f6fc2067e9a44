/*
 * SVG charts for the HTML reports (see svg_int.h).
 */
#include "base/svg_int.h"

#include <math.h>
#include <string.h>

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                      "#bcbd22", "#17becf", "#393b79", "#637939"};

void sv__xml_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* The <svg> element, a white background and the title at the plot's left edge. */
static void svg_open(FILE *f, int W, int H, double L, const char *title)
{
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
            "font-size=\"12\">\n",
            W, H, W, H);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%g\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", L);
    sv__xml_escape(f, title);
    fputs("</text>\n", f);
}

/* A step of 1, 2 or 5 x 10^k giving about `want` ticks over span. */
static double nice_step(double span, int want)
{
    if (!(span > 0)) return 1.0;
    double raw = span / want, mag = pow(10.0, floor(log10(raw))), r = raw / mag;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

static void tick_text(char *buf, size_t n, double v, double step)
{
    if (fabs(v) < step * 1e-9) v = 0;
    if (step >= 1 && fabs(v) < 1e15)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.*f", step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3, v);
}

/* Log axis ticks: 1, 2, 5 x 10^k (only powers of ten past three decades). */
static double log_tick_next(double t, int decades_only)
{
    double mag = pow(10.0, floor(log10(t) + 1e-9)), r = t / mag;
    if (decades_only) return mag * 10;
    return r < 1.5 ? 2 * mag : r < 3.5 ? 5 * mag : 10 * mag;
}

static double log_floor(double v, int decades_only)
{
    double mag = pow(10.0, floor(log10(v) + 1e-9));
    if (decades_only) return mag;
    double r = v / mag;
    return (r >= 5 ? 5 : r >= 2 ? 2 : 1) * mag;
}

static void log_text(char *buf, size_t n, double v)
{
    if (v >= 1)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%g", v);
}

typedef struct axis {
    int log;
    double lo, hi; /* in axis units: log10 of values on a log axis */
} axis_t;

static double ax_pos(const axis_t *a, double v)
{
    double t = a->log ? log10(v) : v;
    return (t - a->lo) / (a->hi - a->lo);
}

static void axis_label(FILE *f, const char *label, int log)
{
    sv__xml_escape(f, label);
    if (log) fputs(" (log scale)", f);
}

void sv__svg_chart(FILE *f, const sv_svg_chart_t *c, int W, int H)
{
    sv__svg_chart_reach(f, c, W, H, NAN, NAN);
}

/* Where a chart's plot sits and what its axes span. */
typedef struct frame {
    double L, R, T, B, pw, ph; /* margins and plot size, px */
    axis_t ax, ay;
    double x0, x1, xs, y0, y1, ys; /* axis ends and linear tick steps */
    int xdec, ydec;                /* log axes: ticks at powers of ten only */
} frame_t;

static double px(const frame_t *fr, double x)
{
    return fr->L + ax_pos(&fr->ax, x) * fr->pw;
}

static double py(const frame_t *fr, double y)
{
    return fr->T + fr->ph - ax_pos(&fr->ay, y) * fr->ph;
}

/* The axes of chart c: the data's range, its reference lines and the stated reach (NAN:
 * none), rounded out to ticks; log where asked for and the data span it. */
static void chart_frame(const sv_svg_chart_t *c, int W, int H, double xmax, double ymax,
                        frame_t *fr)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    double px0 = INFINITY, py0 = INFINITY; /* smallest positive values */
    int xneg = 0, yneg = 0;
    for (int k = 0; k < c->ns; k++)
        for (int i = 0; i < c->s[k].n; i++) {
            double x = c->s[k].x[i], y = c->s[k].y[i];
            if (!isfinite(x) || !isfinite(y)) continue;
            if (x < x0) x0 = x;
            if (x > x1) x1 = x;
            if (y < y0) y0 = y;
            if (y > y1) y1 = y;
            if (x > 0 && x < px0) px0 = x;
            if (y > 0 && y < py0) py0 = y;
            xneg |= x <= 0;
            yneg |= y <= 0;
        }
    axis_t ax = {0, 0, 1}, ay = {0, 0, 1};
    ax.log = c->logx && !xneg && isfinite(px0) && x1 / px0 >= SV_SVG_LOG_SPAN;
    ay.log = c->logy && !yneg && isfinite(py0) && y1 / py0 >= SV_SVG_LOG_SPAN;
    /* A reference line at the edge of the data gets a little room, so it never lies on the
     * frame where it cannot be seen. */
    for (int i = 0; i < c->nh; i++) {
        if (ay.log && !(c->hline[i] > 0)) continue;
        if (c->hline[i] * 1.05 > y1) y1 = c->hline[i] * 1.05;
        if (c->hline[i] < y0) y0 = c->hline[i];
    }
    for (int i = 0; i < c->nv; i++) {
        if (ax.log && !(c->vline[i] > 0)) continue;
        if (c->vline[i] * 1.05 > x1) x1 = c->vline[i] * 1.05;
        if (c->vline[i] < x0) x0 = c->vline[i];
    }
    if (!isfinite(x0)) x0 = 0, x1 = 1;
    if (!isfinite(y0)) y0 = 0, y1 = 1;
    if (xmax > x1) x1 = xmax; /* a stated reach (false for NAN) */
    if (ymax > y1) y1 = ymax;
    if (c->ymin_zero && y0 > 0 && !ay.log) y0 = 0;
    if (c->xmin_zero && x0 > 0 && !ax.log) x0 = 0;
    if (x1 <= x0) x1 = x0 + 1;
    if (y1 <= y0) y1 = y0 + 1;
    double xs = nice_step(x1 - x0, 6), ys = nice_step(y1 - y0, 5);
    int xdec = ax.log && x1 / x0 > 1000, ydec = ay.log && y1 / y0 > 1000;
    if (c->xcat && c->nxcat > 0) {
        ax.log = 0;
        x0 = 0.5, x1 = c->nxcat + 0.5, xs = 1;
        ax.lo = x0, ax.hi = x1;
    } else if (ax.log) {
        x0 = log_floor(x0, xdec);
        double t = x0;
        while (t < x1 * (1 - 1e-9))
            t = log_tick_next(t, xdec);
        x1 = t;
        ax.lo = log10(x0), ax.hi = log10(x1);
    } else {
        x0 = floor(x0 / xs) * xs;
        x1 = ceil(x1 / xs) * xs;
        ax.lo = x0, ax.hi = x1;
    }
    if (ay.log) {
        y0 = log_floor(y0, ydec);
        double t = y0;
        while (t < y1 * (1 - 1e-9))
            t = log_tick_next(t, ydec);
        y1 = t;
        ay.lo = log10(y0), ay.hi = log10(y1);
    } else {
        y0 = floor(y0 / ys) * ys;
        y1 = ceil(y1 / ys) * ys;
        ay.lo = y0, ay.hi = y1;
    }
    *fr = (frame_t){.L = 70,
                    .R = c->legend_right ? 230 : 20,
                    .T = 36,
                    .B = 56,
                    .ax = ax,
                    .ay = ay,
                    .x0 = x0,
                    .x1 = x1,
                    .xs = xs,
                    .y0 = y0,
                    .y1 = y1,
                    .ys = ys,
                    .xdec = xdec,
                    .ydec = ydec};
    fr->pw = W - fr->L - fr->R;
    fr->ph = H - fr->T - fr->B;
}

/* Title, grid, ticks, axis labels, frame and reference lines (their labels come last). */
static void draw_axes(FILE *f, const sv_svg_chart_t *c, const frame_t *fr, int W, int H)
{
    const double L = fr->L, T = fr->T, pw = fr->pw, ph = fr->ph;
    const axis_t ax = fr->ax, ay = fr->ay;
    const double x0 = fr->x0, x1 = fr->x1, xs = fr->xs, y0 = fr->y0, y1 = fr->y1, ys = fr->ys;
    const int xdec = fr->xdec, ydec = fr->ydec;
    svg_open(f, W, H, L, c->title);
    char buf[64];
    for (double y = y0; ay.log ? y <= y1 * (1 + 1e-9) : y <= y1 + ys * 1e-9;
         y = ay.log ? log_tick_next(y, ydec) : y + ys) {
        fprintf(f, "<line x1=\"%g\" y1=\"%.2f\" x2=\"%g\" y2=\"%.2f\" stroke=\"#e5e5e5\"/>\n", L,
                py(fr, y), L + pw, py(fr, y));
        if (ay.log)
            log_text(buf, sizeof buf, y);
        else
            tick_text(buf, sizeof buf, y, ys);
        fprintf(f, "<text x=\"%g\" y=\"%.2f\" text-anchor=\"end\" fill=\"#333\">%s</text>\n", L - 6,
                py(fr, y) + 4, buf);
    }
    for (int i = 1; c->xcat && i <= c->nxcat; i++) {
        fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#f0f0f0\"/>\n",
                px(fr, i), T, px(fr, i), T + ph);
        fprintf(f, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\" fill=\"#333\">", px(fr, i),
                T + ph + 16);
        sv__xml_escape(f, c->xcat[i - 1]);
        fputs("</text>\n", f);
    }
    for (double x = x0;
         !(c->xcat && c->nxcat > 0) && (ax.log ? x <= x1 * (1 + 1e-9) : x <= x1 + xs * 1e-9);
         x = ax.log ? log_tick_next(x, xdec) : x + xs) {
        fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#f0f0f0\"/>\n",
                px(fr, x), T, px(fr, x), T + ph);
        if (ax.log)
            log_text(buf, sizeof buf, x);
        else
            tick_text(buf, sizeof buf, x, xs);
        fprintf(f, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\" fill=\"#333\">%s</text>\n",
                px(fr, x), T + ph + 16, buf);
    }
    fprintf(f,
            "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#999\"/>\n",
            L, T, pw, ph);
    fprintf(f, "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\">", L + pw / 2, H - 12);
    axis_label(f, c->xlabel, ax.log);
    fputs("</text>\n", f);
    fprintf(f, "<text transform=\"translate(16 %g) rotate(-90)\" text-anchor=\"middle\">",
            T + ph / 2);
    axis_label(f, c->ylabel, ay.log);
    fputs("</text>\n", f);
    for (int i = 0; i < c->nh; i++) {
        if (ay.log && !(c->hline[i] > 0)) continue;
        fprintf(f,
                "<line x1=\"%g\" y1=\"%.2f\" x2=\"%g\" y2=\"%.2f\" stroke=\"#d62728\" "
                "stroke-dasharray=\"6 4\"/>\n",
                L, py(fr, c->hline[i]), L + pw, py(fr, c->hline[i]));
    }
    for (int i = 0; i < c->nv; i++) {
        if (ax.log && !(c->vline[i] > 0)) continue;
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#2ca02c\" "
                "stroke-dasharray=\"6 4\"/>\n",
                px(fr, c->vline[i]), T, px(fr, c->vline[i]), T + ph);
        /* Labels sit low in the plot (the legend is at the top) and on the inner side. */
        int right = px(fr, c->vline[i]) > L + pw / 2;
        fprintf(f, "<text x=\"%.2f\" y=\"%g\" fill=\"#2ca02c\" text-anchor=\"%s\">",
                px(fr, c->vline[i]) + (right ? -4 : 4), T + ph - 8 - 14.0 * i,
                right ? "end" : "start");
        sv__xml_escape(f, c->vlabel[i]);
        fputs("</text>\n", f);
    }
    if (c->legend_right && c->legend_title) {
        fprintf(f, "<text x=\"%g\" y=\"%g\" font-weight=\"bold\">", L + pw + 14, T + 10);
        sv__xml_escape(f, c->legend_title);
        fputs("</text>\n", f);
    }
}

/* The series: lines, points (with their labels) and marks. */
static void draw_series(FILE *f, const sv_svg_chart_t *c, const frame_t *fr)
{
    const double L = fr->L, pw = fr->pw;
    const axis_t ax = fr->ax, ay = fr->ay;
    for (int k = 0; k < c->ns; k++) {
        const sv_svg_series_t *s = &c->s[k];
        const char *col = palette[(s->color ? s->color - 1 : k) % 12];
        const char *dash = s->dash ? " stroke-dasharray=\"5 3\"" : "";
        if (s->lines && s->n > 1) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"",
                    col, dash);
            for (int i = 0; i < s->n; i++)
                if (isfinite(s->x[i]) && isfinite(s->y[i]) && (!ax.log || s->x[i] > 0) &&
                    (!ay.log || s->y[i] > 0))
                    fprintf(f, "%.2f,%.2f ", px(fr, s->x[i]), py(fr, s->y[i]));
            fputs("\"/>\n", f);
        }
        if (s->points)
            for (int i = 0; i < s->n; i++) {
                if (!isfinite(s->x[i]) || !isfinite(s->y[i])) continue;
                if ((ax.log && s->x[i] <= 0) || (ay.log && s->y[i] <= 0)) continue;
                if (s->dash)
                    fprintf(f,
                            "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"white\" stroke=\"%s\" "
                            "stroke-width=\"1.5\"/>\n",
                            px(fr, s->x[i]), py(fr, s->y[i]), col);
                else
                    fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\"/>\n",
                            px(fr, s->x[i]), py(fr, s->y[i]), col);
                if (s->labels && s->labels[i]) {
                    int right = px(fr, s->x[i]) > L + 0.8 * pw; /* keep labels inside the plot */
                    fprintf(f,
                            "<text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" fill=\"#333\" "
                            "text-anchor=\"%s\">",
                            px(fr, s->x[i]) + (right ? -5 : 5), py(fr, s->y[i]) - 5,
                            right ? "end" : "start");
                    sv__xml_escape(f, s->labels[i]);
                    fputs("</text>\n", f);
                }
            }
        if (s->mark > 0 && s->mark <= s->n) {
            int i = s->mark - 1;
            double mx = s->x[i], my = s->y[i];
            if (isfinite(mx) && isfinite(my) && (!ax.log || mx > 0) && (!ay.log || my > 0)) {
                fprintf(f,
                        "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"8\" fill=\"none\" stroke=\"%s\" "
                        "stroke-width=\"2\"/>\n",
                        px(fr, mx), py(fr, my), col);
                if (s->mark_label) {
                    int right = px(fr, mx) > L + 0.75 * pw;
                    fprintf(f,
                            "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" fill=\"%s\" "
                            "text-anchor=\"%s\">",
                            px(fr, mx) + (right ? -11 : 11), py(fr, my) + 14, col,
                            right ? "end" : "start");
                    sv__xml_escape(f, s->mark_label);
                    fputs("</text>\n", f);
                }
            }
        }
    }
}

/* What is read on top of the data: the reference lines' labels, then the legend. */
static void draw_labels(FILE *f, const sv_svg_chart_t *c, const frame_t *fr)
{
    const double L = fr->L, T = fr->T, pw = fr->pw;
    const axis_t ay = fr->ay;
    int lrow = c->legend_right && c->legend_title ? 1 : 0;
    /* What is read on top of the data comes last, each text with a white halo so that no
     * curve crosses it: the SLO lines' labels, then the legend. */
    const char *halo = " stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"";
    for (int i = 0; i < c->nh; i++) {
        if (ay.log && !(c->hline[i] > 0)) continue;
        fprintf(f, "<text x=\"%g\" y=\"%.2f\" text-anchor=\"end\" fill=\"#d62728\"%s>", L + pw - 4,
                py(fr, c->hline[i]) - 4, halo);
        sv__xml_escape(f, c->hlabel[i]);
        fputs("</text>\n", f);
    }
    for (int k = 0; k < c->ns; k++) {
        const sv_svg_series_t *s = &c->s[k];
        const char *col = palette[(s->color ? s->color - 1 : k) % 12];
        const char *dash = s->dash ? " stroke-dasharray=\"5 3\"" : "";
        if (c->legend_right) {
            double ly = T + 10 + 17.0 * (lrow + k);
            fprintf(f,
                    "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" "
                    "stroke-width=\"2\"%s/>",
                    L + pw + 14, ly - 4, L + pw + 36, ly - 4, col, dash);
            fprintf(f, "<text x=\"%g\" y=\"%g\">", L + pw + 42, ly);
        } else {
            fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"12\" height=\"3\" fill=\"%s\"/>", L + 10,
                    T + 10 + 16.0 * k, col);
            fprintf(f, "<text x=\"%g\" y=\"%g\"%s>", L + 28, T + 15 + 16.0 * k, halo);
        }
        sv__xml_escape(f, s->name);
        fputs("</text>\n", f);
    }
}

void sv__svg_chart_reach(FILE *f, const sv_svg_chart_t *c, int W, int H, double xmax, double ymax)
{
    frame_t fr;
    chart_frame(c, W, H, xmax, ymax, &fr);
    draw_axes(f, c, &fr, W, H);
    draw_series(f, c, &fr);
    draw_labels(f, c, &fr);
    fputs("</svg>\n", f);
}

void sv__svg_bars(FILE *f, const char *title, const char *ylabel, const char *const *names,
                  const double *values, int n, int W, int H)
{
    sv__svg_bars_reach(f, title, ylabel, names, values, n, W, H, NAN);
}

void sv__svg_bars_reach(FILE *f, const char *title, const char *ylabel, const char *const *names,
                        const double *values, int n, int W, int H, double ymax)
{
    const double L = 70, R = 20, T = 36, B = 56;
    double y1 = ymax > 0 ? ymax : 0;
    for (int i = 0; i < n; i++)
        if (values[i] > y1) y1 = values[i];
    if (y1 <= 0) y1 = 1;
    double ys = nice_step(y1, 5);
    y1 = ceil(y1 / ys) * ys;
    double pw = W - L - R, ph = H - T - B, bw = pw / (n ? n : 1);
    svg_open(f, W, H, L, title);
    char buf[64];
    for (double y = 0; y <= y1 + ys * 1e-9; y += ys) {
        double py = T + ph - y / y1 * ph;
        fprintf(f, "<line x1=\"%g\" y1=\"%.2f\" x2=\"%g\" y2=\"%.2f\" stroke=\"#e5e5e5\"/>\n", L,
                py, L + pw, py);
        tick_text(buf, sizeof buf, y, ys);
        fprintf(f, "<text x=\"%g\" y=\"%.2f\" text-anchor=\"end\" fill=\"#333\">%s</text>\n", L - 6,
                py + 4, buf);
    }
    for (int i = 0; i < n; i++) {
        double h = values[i] / y1 * ph, x = L + i * bw + bw * 0.15;
        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", x,
                T + ph - h, bw * 0.7, h, palette[i % 12]);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%.1f</text>\n",
                x + bw * 0.35, T + ph - h - 4, values[i]);
        fprintf(f, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\">", x + bw * 0.35, T + ph + 16);
        sv__xml_escape(f, names[i]);
        fputs("</text>\n", f);
    }
    fprintf(f,
            "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#999\"/>\n",
            L, T, pw, ph);
    fprintf(f, "<text transform=\"translate(16 %g) rotate(-90)\" text-anchor=\"middle\">",
            T + ph / 2);
    sv__xml_escape(f, ylabel);
    fputs("</text>\n</svg>\n", f);
}
