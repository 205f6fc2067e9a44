/*
 * Charts as SVG text, for callers that serve them rather than write files (the lab).
 * sv_chart_run() draws a run report's charts exactly as `servesim run --report` writes
 * them (report-<name>.svg): the same data, titles, axes and sizes, so a chart on the lab
 * page and the one in a report of the same run are the same bytes. sv_chart_lines() and
 * sv_chart_bars() draw other charts with the same code (servesim's SVG charts).
 *
 * Ownership: every function returns a malloc'd NUL-terminated string the caller frees,
 * or NULL when out of memory (or, for sv_chart_run, an unknown chart name).
 */
#ifndef SERVESIM_CHARTS_H
#define SERVESIM_CHARTS_H

#include "servesim/cluster/sim.h"

/* The run report's charts: "ttft-cdf", "tpot-cdf", "breakdown". */
char *sv_chart_run(const sv_result_t *res, const char *name);

#define SV_CHART_MAX_SERIES 6

typedef struct sv_chart_series {
    const char *name;
    const double *x, *y;
    int n;
    int points; /* markers at the points as well as the line */
} sv_chart_series_t;

/* A line chart; hline / vline NAN for none. An axis whose values span 30x or more is
 * logarithmic (its label then says so); the legend stands right of the plot, never over
 * the data. */
typedef struct sv_chart_spec {
    const char *title, *xlabel, *ylabel;
    sv_chart_series_t s[SV_CHART_MAX_SERIES];
    int ns;
    double hline, vline;
    const char *hlabel, *vlabel;
    int width, height; /* 0: the report's 620 x 360 */
    int linear_x;      /* 1: the x axis stays linear (time), whatever its span */
    double xmax;       /* > 0: the x axis spans [0, at least xmax] (charts over one run's time
                          share it: same domain and ticks); 0: the data's own */
} sv_chart_spec_t;

char *sv_chart_lines(const sv_chart_spec_t *c);
char *sv_chart_bars(const char *title, const char *ylabel, const char *const *names,
                    const double *values, int n);

#endif
