/*
 * The summary's exact statistics (see include/servesim/metrics/metrics.h), as vLLM's
 * `vllm bench serve` computes them: np.mean, np.std, np.median and np.percentile of each
 * per-request list in request order (vllm/benchmarks/serve.py, calculate_metrics).
 *
 * A list's mean and standard deviation are numpy's to the bit: np.add.reduce of a
 * contiguous float64 array is its identity 0 plus numpy's pairwise sum of the whole array
 * (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum; numpy 2.3 and later reduce the
 * array in one call, where earlier ones summed blocks of the 8,192-element buffer one after
 * another), divided by n; np.std (numpy/_core/_methods.py, _var) squares each x - mean and
 * sums the squares the same way, divides by n (ddof 0) and takes the square root. The
 * percentiles and the median are numpy's too (numpy_int.h).
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

/* np.median of sorted x (n >= 1). */
static double median_sorted(const double *x, size_t n)
{
    return n % 2 ? sv__np_mid1(x[n / 2]) : sv__np_mid2(x[n / 2 - 1], x[n / 2]);
}

void sv_stat_compute(double *x, size_t n, const double *pcts, int npcts, double scale,
                     sv_stat_t *out)
{
    memset(out, 0, sizeof *out);
    out->n = (long)n;
    if (n == 0) return; /* numpy on the list [0] gives 0 for everything */
    double mean, std;
    sv_np_mean_std(x, n, &mean, &std); /* in the list's order, before it is sorted */
    sv_sort_doubles(x, n);
    out->mean = mean * scale;
    out->std = std * scale;
    out->median = median_sorted(x, n) * scale;
    for (int i = 0; i < npcts; i++)
        out->pct[i] = sv_percentile_sorted(x, n, pcts[i]) * scale;
}

/* Value at 0-based rank r of the expanded multiset (cumulative weights in cw). */
static double wrank(const sv_wval_t *x, const double *cw, size_t n, double r)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) { /* first i with cw[i] > r */
        size_t mid = (lo + hi) / 2;
        if (cw[mid] > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return x[lo].v;
}

static double wpercentile(const sv_wval_t *x, const double *cw, size_t n, double p)
{
    double lo, hi, t;
    sv__np_ranks(cw[n - 1], p, &lo, &hi, &t);
    return sv__np_lerp(wrank(x, cw, n, lo), wrank(x, cw, n, hi), t);
}

static double wmedian(const sv_wval_t *x, const double *cw, size_t n)
{
    double N = cw[n - 1], h = floor(N / 2.0);
    if (N - 2.0 * h != 0.0) return sv__np_mid1(wrank(x, cw, n, h));
    return sv__np_mid2(wrank(x, cw, n, h - 1.0), wrank(x, cw, n, h));
}

int sv_wmean_std(const sv_wval_t *x, size_t n, double *count, double *mean, double *std)
{
    *count = *mean = *std = 0.0;
    double W = 0.0;
    for (size_t i = 0; i < n; i++)
        W += x[i].w;
    if (W > 0) {
        double m = (0.0 + pairwise_wsum(x, n, 0.0)) / W;
        *count = W;
        *mean = m;
        *std = sqrt((0.0 + pairwise_wsqdev(x, n, m)) / W);
    }
    return 0;
}

void sv_wstat_compute(sv_wval_t *x, size_t n, const double *pcts, int npcts, double scale,
                      sv_stat_t *out)
{
    memset(out, 0, sizeof *out);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (x[i].w > 0) x[k++] = x[i];
    n = k;
    if (n == 0) return;
    double W, mean, std;
    double *cw = malloc(n * sizeof *cw);
    if (!cw || sv_wmean_std(x, n, &W, &mean, &std)) {
        free(cw);
        return;
    }
    sv_sort_wvals(x, n);
    double c = 0.0;
    for (size_t i = 0; i < n; i++) {
        c += x[i].w;
        cw[i] = c;
    }
    out->n = (long)W;
    out->mean = mean * scale;
    out->std = std * scale;
    out->median = wmedian(x, cw, n) * scale;
    for (int i = 0; i < npcts; i++)
        out->pct[i] = wpercentile(x, cw, n, pcts[i]) * scale;
    free(cw);
}
