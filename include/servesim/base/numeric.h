/*
 * Small numeric helpers every layer shares, written once: the splitmix64 mixer (Steele,
 * Lea and Flood 2014, as in Vigna's splitmix64.c) that derives seeds and hashes, the
 * qsort comparator of doubles, fmax/fmin inline, and floor with a fast path.
 *
 * Ownership: pure functions; nothing is allocated.
 */
#ifndef SERVESIM_NUMERIC_H
#define SERVESIM_NUMERIC_H

#include <math.h>
#include <stdint.h>

/* splitmix64's output function: a bijection of 64-bit words that spreads every input bit. */
static inline uint64_t sv_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* One splitmix64 step from state x: the golden-ratio increment, then the mix. */
static inline uint64_t sv_splitmix64(uint64_t x)
{
    return sv_mix64(x + 0x9e3779b97f4a7c15ULL);
}

/* qsort order of doubles, ascending (NaNs compare equal to everything: keep them out). */
static inline int sv_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* fmax and fmin as glibc's x86-64 ones answer (maxsd/minsd: of two equal values, zeros of
 * either sign included, the second; a NaN yields the other operand), inline: the cost
 * model calls them several times a step, and libm's are calls. */
static inline double sv_fmax(double a, double b)
{
    /* (a > b || b != b) ? a : b, its common case first: b >= a, one comparison (the cost
     * model's memory-bound operators); else b only when a alone is a NaN. */
    if (b >= a) return b;
    return (a != a && b == b) ? b : a;
}

static inline double sv_fmin(double a, double b)
{
    return (a < b || b != b) ? a : b;
}

/* floor(x), the same value for every x: a positive x below 2^52 (where a double may have a
 * fraction) by the conversion to an integer, which truncates, and so floors it; the rest
 * (zeros, negatives, large values, NaN) by floor itself. Inline: a summary's per-second
 * bins and each drawn length round this way, and without SSE4.1 floor is bit work. */
static inline double sv_floor(double x)
{
    return x > 0.0 && x < 4503599627370496.0 ? (double)(int64_t)x : floor(x);
}

#endif
