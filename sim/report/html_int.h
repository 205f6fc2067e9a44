/*
 * The page every HTML report is written on (run, plan: html.c; sweep: html_sweep.c):
 * the head with the shared style, charts drawn into memory and written both inline and
 * beside the page as FILE-NAME.svg, and the closing note. Private to the report layer.
 *
 * Ownership: the caller owns the sv__page_t; sv__page_close() closes its file.
 */
#ifndef SERVESIM_HTML_INT_H
#define SERVESIM_HTML_INT_H

#include <stddef.h>
#include <stdio.h>

#include "servesim/base/error.h"

typedef struct sv__page {
    FILE *html;
    char path[1024];
    char base[1024]; /* path without .html, for the SVG files */
    int rc;          /* the first failure of a chart, returned by sv__page_close */
    sv_error_t *err;
    FILE *chart; /* open chart (memstream) */
    char *buf;
    size_t len;
    char name[64];
} sv__page_t;

/* Open path and write the head: the shared style plus extra_css (may be NULL), title. */
int sv__page_open(sv__page_t *p, const char *path, const char *title, const char *extra_css,
                  sv_error_t *err);
/* A stream to draw chart `name` into; never NULL (when memory runs out it is a sink and
 * the page fails at sv__page_close with that error). */
FILE *sv__chart_begin(sv__page_t *p, const char *name);
/* Put the chart on the page and into FILE-NAME.svg. */
void sv__chart_end(sv__page_t *p);
/* The closing note; close the file. 0, or the first error of the page or a chart. */
int sv__page_close(sv__page_t *p);

/* Downsampled CDF of v (seconds; sorted in place): m points at most, x in ms, y in % of
 * requests at or below x; returns the points written. The run report and the lab draw
 * their latency CDFs with it. */
int sv__cdf(double *v, int n, double *x, double *y, int m);

/* A latency CDF (x in ms, y in %) with its SLO (NAN: none) as a vertical line, 620 x 360,
 * its x axis reaching at least xmax (NAN: the data's). */
void sv__cdf_chart(FILE *f, const char *title, const char *xlabel, const char *series,
                   const double *x, const double *y, int n, double slo, double xmax);

#endif
