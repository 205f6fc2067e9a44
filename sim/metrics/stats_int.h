/*
 * Internal: the summary's exact statistics (stats.c) with more percentiles than an
 * sv_stat_t holds (the SLO budgets'), for metrics.c, and the selection of order statistics
 * they read (order.c). A rank is 0-based in the expanded list (a record of weight w holds
 * w ranks), a double so that a weighted pool's ranks fit.
 */
#ifndef SERVESIM_METRICS_STATS_INT_H
#define SERVESIM_METRICS_STATS_INT_H

#include <stddef.h>

#include "servesim/metrics/metrics.h"

/* The most ranks one selection takes: two for each percentile and budget, two for the
 * median. */
#define SV__MAX_RANKS (2 * (SV_MAX_PCT + 4 + SV_MAX_BUDGETS) + 2)

/* The values val[i] of ranks rank[0..nr) (ascending, distinct, each below the total
 * weight) of x[0..n), n >= 1: order statistics in the doubles' order (key order when a
 * value has its sign bit set: -0 before +0, NaNs past the infinities). nan_free: the
 * caller knows no value is a NaN (a sum of them is not), so the range may be taken with
 * double compares. x is scratch: its contents are left unspecified. 0, SV_ENOMEM, or
 * SV_EINVAL for more than SV__MAX_RANKS ranks. sv__select_wvals takes weights (> 0) and
 * leaves each record's weight with it. top (NULL: not wanted): the largest value, in the
 * same order (a NaN when there is one), which the range taken first gives for free. */
int sv__select_doubles(double *x, size_t n, int nan_free, const double *rank, int nr, double *val,
                       double *top);
int sv__select_wvals(sv_wval_t *x, size_t n, int nan_free, const double *rank, int nr, double *val,
                     double *top);

/* sv_stat_compute and sv_wstat_compute of x with the percentiles p[0..np) into pv[0..np)
 * (times scale, as st's) instead of st->pct; x is scratch (left unspecified). count > 0:
 * the caller knows every weight positive and gives their sum (the one a loop in x's order
 * takes); 0: the entries of weight <= 0 are dropped and the rest summed. 0, SV_ENOMEM (st
 * and pv then hold what was done) or SV_EINVAL (np past SV__MAX_RANKS). sv__stat_exact's
 * top (NULL: not wanted): the largest finite value, unscaled, 0 when there is none (or
 * none above 0). */
int sv__stat_exact(double *x, size_t n, const double *p, int np, double scale, sv_stat_t *st,
                   double *pv, double *top);
int sv__wstat_exact(sv_wval_t *x, size_t n, double count, const double *p, int np, double scale,
                    sv_stat_t *st, double *pv);

/* A set of ranks: add r to rank[0..nr) unless there (returns the new count); sort it
 * (returns nr); the value val[i] of rank r once selected (0 when r is not in the set). */
int sv__ranks_add(double *rank, int nr, double r);
int sv__ranks_sort(double *rank, int nr);
double sv__rank_value(const double *rank, const double *val, int nr, double r);

#endif
