/*
 * Internal: numpy's linear percentile (numpy.percentile, method "linear", numpy 1.22 and
 * later: numpy/lib/_function_base_impl.py, _quantile, _get_indexes and _lerp), for the
 * summary's exact statistics (stats.c) and the selection of order statistics (order.c).
 *
 * Of n sorted values, percentile p is read at the virtual index (n - 1) * (p / 100): the
 * order statistics at its floor and the one after, interpolated by its fractional part t
 * as a + (b - a) * t, or as b - (b - a) * (1 - t) where t >= 0.5 (the two differ in the
 * last bit). An index at or past the last value reads the last value twice (numpy sets
 * both neighbours to it and t to the index + 1, which the formula then multiplies by 0).
 * n is a double so that a weighted pool's expanded size serves too.
 */
#ifndef SERVESIM_METRICS_NUMPY_INT_H
#define SERVESIM_METRICS_NUMPY_INT_H

#include <math.h>

/* The ranks (0-based) of the two order statistics percentile p of n >= 1 values reads,
 * lo <= hi, and the interpolation weight t between them. */
static inline void sv__np_ranks(double n, double p, double *lo, double *hi, double *t)
{
    double vi = (n - 1.0) * (p / 100.0);
    if (vi >= n - 1.0) {
        *lo = *hi = n - 1.0;
        *t = vi + 1.0;
        return;
    }
    *lo = floor(vi);
    *hi = *lo + 1.0;
    *t = vi - *lo;
}

/* numpy's _lerp(a, b, t). */
static inline double sv__np_lerp(double a, double b, double t)
{
    double d = b - a;
    return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

/* np.median's value of two middle order statistics a <= b: np.mean([a, b]), the sum as
 * numpy's add.reduce takes it (its identity 0 plus a pairwise sum seeded with -0). One
 * middle value m: np.mean([m]) = 0 + (-0 + m). */
static inline double sv__np_mid2(double a, double b)
{
    return (0.0 + (-0.0 + a + b)) / 2.0;
}

static inline double sv__np_mid1(double m)
{
    return 0.0 + (-0.0 + m);
}

#endif
