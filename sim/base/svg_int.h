/*
 * Internal: small SVG charts for the HTML reports. Line charts (optionally with points)
 * with labelled axes, nice ticks, horizontal and vertical marker lines (SLOs, knees), and
 * bar charts. Output is a standalone <svg> element written to a FILE.
 */
#ifndef SERVESIM_SVG_INT_H
#define SERVESIM_SVG_INT_H

#include <stdio.h>

#define SV_SVG_MAX_SERIES 12
#define SV_SVG_MAX_MARKS 6

typedef struct sv_svg_series {
    const char *name;
    const double *x, *y;
    int n;
    int points; /* draw markers (and no line when lines == 0) */
    int lines;
    const char *const *labels; /* per-point text (scatter), or NULL */
} sv_svg_series_t;

typedef struct sv_svg_chart {
    const char *title, *xlabel, *ylabel;
    sv_svg_series_t s[SV_SVG_MAX_SERIES];
    int ns;
    double hline[SV_SVG_MAX_MARKS];
    const char *hlabel[SV_SVG_MAX_MARKS];
    int nh;
    double vline[SV_SVG_MAX_MARKS];
    const char *vlabel[SV_SVG_MAX_MARKS];
    int nv;
    double ymin_zero; /* 1: the y axis starts at 0 */
} sv_svg_chart_t;

/* Text for XML and HTML: < > & and " escaped. */
void sv__xml_escape(FILE *f, const char *s);

void sv__svg_chart(FILE *f, const sv_svg_chart_t *c, int width, int height);
void sv__svg_bars(FILE *f, const char *title, const char *ylabel, const char *const *names,
                  const double *values, int n, int width, int height);

/* The same charts with axes that reach at least xmax / ymax (NAN: the data's own reach),
 * so that charts of several runs can share their scales (run --axes-from). */
void sv__svg_chart_reach(FILE *f, const sv_svg_chart_t *c, int width, int height, double xmax,
                         double ymax);
void sv__svg_bars_reach(FILE *f, const char *title, const char *ylabel, const char *const *names,
                        const double *values, int n, int width, int height, double ymax);

#endif
