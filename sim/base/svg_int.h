/*
 * Internal: small SVG charts for the HTML reports. Line charts (optionally with points)
 * with labelled axes, nice ticks, horizontal and vertical marker lines (SLOs, knees), and
 * bar charts. Output is a standalone <svg> element written to a FILE.
 *
 * Options all off when zero (so plain charts look as they always did): a series' colour
 * and dashed line (curves that belong together share a colour), a ringed and labelled
 * point (a knee), log axes chosen automatically when the positive values span 30x or more
 * (the axis label then ends in "(log scale)"), and a legend outside the plot on the right
 * with a title, for charts with many series.
 */
#ifndef SERVESIM_SVG_INT_H
#define SERVESIM_SVG_INT_H

#include <stdio.h>

#define SV_SVG_MAX_SERIES 24
#define SV_SVG_MAX_MARKS 6

typedef struct sv_svg_series {
    const char *name;
    const double *x, *y;
    int n;
    int points; /* draw markers (and no line when lines == 0) */
    int lines;
    const char *const *labels; /* per-point text (scatter), or NULL */
    int color;                 /* 1 + palette index; 0: by the series' position */
    int dash;                  /* dashed line (and hollow markers) */
    int mark;                  /* 1 + index of a point to ring and label (a knee); 0: none */
    const char *mark_label;
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
    double ymin_zero; /* 1: the y axis starts at 0 (unless on a log scale) */
    int xmin_zero;    /* 1: the x axis starts at 0 (a time axis: with the same reach, every
                         chart of one run then has the same domain and ticks) */
    int logx, logy;   /* 1: log scale when the positive values span >= SV_SVG_LOG_SPAN */
    int legend_right; /* 1: the legend outside the plot, on the right */
    /* categories on the x axis: x values 1..nxcat are drawn as these tick labels */
    const char *const *xcat;
    int nxcat;
    const char *legend_title;
} sv_svg_chart_t;

#define SV_SVG_LOG_SPAN 30.0

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
