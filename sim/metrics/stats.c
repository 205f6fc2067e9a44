/*
 * The summary's exact statistics (see include/servesim/metrics/metrics.h), as vLLM's
 * `vllm bench serve` computes them: np.mean, np.std, np.median and np.percentile of each
 * per-request list in request order (vllm/benchmarks/serve.py, calculate_metrics).
 *
 * A list's mean and standard deviation are numpy's to the bit: np.add.reduce of a
 * contiguous float64 array is its identity 0 plus numpy's pairwise sum of the whole array
 * (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum; numpy 2.3 and later reduce the
 * array in one call, where earlier ones summed blocks of the 8,192-element buffer one after
 * another: numpy 2.3.0's release notes, "growinner", gh-27883), divided by n; np.std
 * (numpy/_core/_methods.py, _var) squares each x - mean and sums the squares the same way,
 * divides by n (ddof 0) and takes the square root. The percentiles and the median are
 * numpy's too (numpy_int.h), read off order statistics selected without sorting
 * (order.c).
 *
 * The ITL pool is weighted (a value with the number of gaps it stands for), so its
 * expanded list, vLLM's flat list of every gap in request order, is never made, and no
 * order of summation could be numpy's on it. Its mean and standard deviation take numpy's
 * pairwise sums over the pool in its own order (the order the summary builds it in: the
 * single tokens, the segments' first gaps, then each replica's decode steps): of v * w,
 * over the count; of w * (v - mean)^2 (each product rounded), over the count. Well defined
 * and as accurate as numpy's own, at the cost of one pass each.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/numpy_int.h"
#include "metrics/stats_int.h"
#include "servesim/metrics/metrics.h"

/* ---- numpy's pairwise sum ------------------------------------------------------------- */

/* PAIRWISE(name, elem_t, TERM): name(a, n, m) is numpy's pairwise sum of TERM(a[i], m), a of
 * elem_t: below 8
 * terms a loop from -0; up to 128, eight accumulators seeded with the first eight, stepped
 * by eight, combined in pairs, then the rest one by one; above, the two halves (the first
 * one's length a multiple of 8) summed apart. */
#define PW_BLOCKSIZE 128
#define PAIRWISE(name, elem_t, TERM)                                                               \
    static double name(const elem_t *a, size_t n, double m)                                        \
    {                                                                                              \
        (void)m;                                                                                   \
        if (n < 8) {                                                                               \
            double res = -0.0;                                                                     \
            for (size_t i = 0; i < n; i++)                                                         \
                res += TERM(a[i], m);                                                              \
            return res;                                                                            \
        }                                                                                          \
        if (n <= PW_BLOCKSIZE) {                                                                   \
            double r0 = TERM(a[0], m), r1 = TERM(a[1], m), r2 = TERM(a[2], m), r3 = TERM(a[3], m), \
                   r4 = TERM(a[4], m), r5 = TERM(a[5], m), r6 = TERM(a[6], m), r7 = TERM(a[7], m); \
            size_t i;                                                                              \
            for (i = 8; i < n - n % 8; i += 8) {                                                   \
                r0 += TERM(a[i + 0], m);                                                           \
                r1 += TERM(a[i + 1], m);                                                           \
                r2 += TERM(a[i + 2], m);                                                           \
                r3 += TERM(a[i + 3], m);                                                           \
                r4 += TERM(a[i + 4], m);                                                           \
                r5 += TERM(a[i + 5], m);                                                           \
                r6 += TERM(a[i + 6], m);                                                           \
                r7 += TERM(a[i + 7], m);                                                           \
            }                                                                                      \
            double res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));                        \
            for (; i < n; i++)                                                                     \
                res += TERM(a[i], m);                                                              \
            return res;                                                                            \
        }                                                                                          \
        size_t n2 = n / 2;                                                                         \
        n2 -= n2 % 8;                                                                              \
        return name(a, n2, m) + name(a + n2, n - n2, m);                                           \
    }

#define TERM_X(x, m) (x)
#define TERM_SQDEV(x, m) (((x) - (m)) * ((x) - (m)))
#define TERM_WX(r, m) ((r).v * (r).w)
#define TERM_WSQDEV(r, m) ((((r).v - (m)) * ((r).v - (m))) * (r).w)
PAIRWISE(pairwise_sum, double, TERM_X)
PAIRWISE(pairwise_sqdev, double, TERM_SQDEV)
PAIRWISE(pairwise_wsum, sv_wval_t, TERM_WX)
PAIRWISE(pairwise_wsqdev, sv_wval_t, TERM_WSQDEV)
#undef TERM_X
#undef TERM_SQDEV
#undef TERM_WX
#undef TERM_WSQDEV

double sv_np_sum(const double *x, size_t n)
{
    return 0.0 + pairwise_sum(x, n, 0.0);
}

void sv_np_mean_std(const double *x, size_t n, double *mean, double *std)
{
    *mean = *std = 0.0;
    if (n == 0) return;
    double m = sv_np_sum(x, n) / (double)n;
    *mean = m;
    *std = sqrt((0.0 + pairwise_sqdev(x, n, m)) / (double)n);
}

/* ---- the statistics ------------------------------------------------------------------- */

double sv_percentile_sorted(const double *x, size_t n, double p)
{
    if (n == 0) return 0.0;
    double lo, hi, t;
    sv__np_ranks((double)n, p, &lo, &hi, &t);
    return sv__np_lerp(x[(size_t)lo], x[(size_t)hi], t);
}

/* The median's ranks in a list of n (a double: a weighted pool's count): the middle one,
 * or the middle two. */
static int median_ranks(double n, double *r)
{
    double h = floor(n / 2.0);
    if (n - 2.0 * h != 0.0) {
        r[0] = h;
        return 1;
    }
    r[0] = h - 1.0;
    r[1] = h;
    return 2;
}

/* The ranks the median and percentiles p[0..np) of n values read, into rank (sorted);
 * their count. */
static int wanted_ranks(double n, const double *p, int np, double *rank)
{
    double m[2];
    int nm = median_ranks(n, m), nr = 0;
    for (int i = 0; i < nm; i++)
        nr = sv__ranks_add(rank, nr, m[i]);
    for (int i = 0; i < np; i++) {
        double lo, hi, t;
        sv__np_ranks(n, p[i], &lo, &hi, &t);
        nr = sv__ranks_add(rank, nr, lo);
        nr = sv__ranks_add(rank, nr, hi);
    }
    return sv__ranks_sort(rank, nr);
}

/* The median and percentiles from the selected order statistics, times scale. */
static void read_ranks(double n, const double *p, int np, double scale, const double *rank,
                       const double *val, int nr, sv_stat_t *st, double *pv)
{
    double m[2];
    int nm = median_ranks(n, m);
    double a = sv__rank_value(rank, val, nr, m[0]);
    st->median =
        (nm == 1 ? sv__np_mid1(a) : sv__np_mid2(a, sv__rank_value(rank, val, nr, m[1]))) * scale;
    for (int i = 0; i < np; i++) {
        double lo, hi, t;
        sv__np_ranks(n, p[i], &lo, &hi, &t);
        pv[i] =
            sv__np_lerp(sv__rank_value(rank, val, nr, lo), sv__rank_value(rank, val, nr, hi), t) *
            scale;
    }
}

int sv__stat_exact(double *x, size_t n, const double *p, int np, double scale, sv_stat_t *st,
                   double *pv, double *top)
{
    memset(st, 0, sizeof *st);
    for (int i = 0; i < np; i++)
        pv[i] = 0.0;
    st->n = (long)n;
    if (top) *top = 0.0;
    if (n == 0) return 0; /* numpy on the list [0] gives 0 for everything */
    if (2 * np + 2 > SV__MAX_RANKS) return SV_EINVAL;
    double mean, std, rank[SV__MAX_RANKS], val[SV__MAX_RANKS];
    sv_np_mean_std(x, n, &mean, &std); /* in the list's order, before selection reorders it */
    st->mean = mean * scale;
    st->std = std * scale;
    int nr = wanted_ranks((double)n, p, np, rank);
    if (top && !isfinite(mean)) { /* (an infinity or a NaN: the largest finite one, first) */
        for (size_t i = 0; i < n; i++)
            if (isfinite(x[i]) && x[i] > *top) *top = x[i];
        top = NULL;
    }
    double t = 0.0;
    int rc = sv__select_doubles(x, n, !isnan(mean), rank, nr, val, top ? &t : NULL);
    if (top && t > 0.0) *top = t; /* (the mean is finite: so is every value) */
    if (rc) return rc;
    read_ranks((double)n, p, np, scale, rank, val, nr, st, pv);
    return 0;
}

void sv_stat_compute(double *x, size_t n, const double *pcts, int npcts, double scale,
                     sv_stat_t *out)
{
    sv__stat_exact(x, n, pcts, npcts < SV_MAX_PCT ? npcts : SV_MAX_PCT, scale, out, out->pct, NULL);
}

/* sv_wmean_std's mean and std of x[0..n) given the sum of its weights, W > 0. */
static void wmean_std_of(const sv_wval_t *x, size_t n, double W, double *mean, double *std)
{
    double m = (0.0 + pairwise_wsum(x, n, 0.0)) / W;
    *mean = m;
    *std = sqrt((0.0 + pairwise_wsqdev(x, n, m)) / W);
}

int sv_wmean_std(const sv_wval_t *x, size_t n, double *count, double *mean, double *std)
{
    *count = *mean = *std = 0.0;
    double W = 0.0;
    for (size_t i = 0; i < n; i++)
        W += x[i].w;
    if (W > 0) {
        *count = W;
        wmean_std_of(x, n, W, mean, std);
    }
    return 0;
}

int sv__wstat_exact(sv_wval_t *x, size_t n, double count, const double *p, int np, double scale,
                    sv_stat_t *st, double *pv)
{
    memset(st, 0, sizeof *st);
    for (int i = 0; i < np; i++)
        pv[i] = 0.0;
    double W = count;
    if (W <= 0) {
        /* Not given: the entries of positive weight, moved down from the first that is
         * not, and their sum. */
        size_t k = 0;
        while (k < n && x[k].w > 0)
            k++;
        for (size_t i = k; i < n; i++)
            if (x[i].w > 0) x[k++] = x[i];
        n = k;
        W = 0.0;
        for (size_t i = 0; i < n; i++)
            W += x[i].w;
    }
    if (n == 0) return 0;
    if (2 * np + 2 > SV__MAX_RANKS) return SV_EINVAL;
    double mean, std, rank[SV__MAX_RANKS], val[SV__MAX_RANKS];
    wmean_std_of(x, n, W, &mean, &std);
    st->n = (long)W;
    st->mean = mean * scale;
    st->std = std * scale;
    int nr = wanted_ranks(W, p, np, rank);
    int rc = sv__select_wvals(x, n, !isnan(mean), rank, nr, val, NULL);
    if (rc) return rc;
    read_ranks(W, p, np, scale, rank, val, nr, st, pv);
    return 0;
}

void sv_wstat_compute(sv_wval_t *x, size_t n, const double *pcts, int npcts, double scale,
                      sv_stat_t *out)
{
    sv__wstat_exact(x, n, 0.0, pcts, npcts < SV_MAX_PCT ? npcts : SV_MAX_PCT, scale, out, out->pct);
}
