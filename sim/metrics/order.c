/*
 * Order statistics for the summary (see include/servesim/metrics/metrics.h): a stable LSD
 * radix sort of doubles and of weighted values, and selection of the few order statistics
 * a list of percentiles needs.
 *
 * Why a sort at all: the summary's mean and standard deviation are sums taken in ascending
 * order (that order fixes their last bits, which the JSON prints), so the arrays that have
 * a mean are sorted; a radix sort on the bit patterns does it in a few linear passes
 * instead of qsort's n log n indirect comparisons. It is stable and orders keys as
 * qsort's three-way comparison of doubles does (-0 equals +0), so it leaves exactly the
 * order glibc's qsort (a stable merge sort) leaves. Arrays already in order (empty,
 * constant, or sorted) cost one pass. Where only percentiles are needed,
 * sv_percentiles_select picks the order statistics by quickselect in O(n).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/base/numeric.h"
#include "servesim/metrics/metrics.h"

/* 11-bit digits: 6 passes over 64-bit keys, 2,048 counters each (16 KiB, in L1/L2). */
#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)
#define PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)

/* A record's key: the bits of its double, the sign bit flipped for a positive one and
 * every bit for a negative one, so that unsigned order is the double's (NaNs have no
 * order; -0, which qsort holds equal to +0, makes the sort fall back to qsort). */

static int cmp_wval(const void *a, const void *b)
{
    double x = ((const sv_wval_t *)a)->v, y = ((const sv_wval_t *)b)->v;
    return (x > y) - (x < y);
}

#define NEG_ZERO UINT64_C(0x8000000000000000)

static inline uint64_t key_of(uint64_t u)
{
    return (u >> 63) ? ~u : u | NEG_ZERO;
}

static inline uint64_t double_of(uint64_t k)
{
    return (k >> 63) ? k & ~NEG_ZERO : ~k;
}

/* Each record's leading double replaced by its key (in place) and the histograms of every
 * digit of the keys counted, in one pass; returns which passes are needed (a digit every
 * key shares moves nothing), or, if a double is -0 (which the key maps onto +0 and could
 * not give back), nothing done: -1. */
static int keys_in(char *base, size_t n, size_t stride, uint32_t (*cnt)[RADIX], unsigned *need)
{
    memset(cnt, 0, PASSES * sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, base + i * stride, sizeof u);
        if (u == NEG_ZERO) {
            while (i-- > 0) { /* undo */
                memcpy(&u, base + i * stride, sizeof u);
                u = double_of(u);
                memcpy(base + i * stride, &u, sizeof u);
            }
            return -1;
        }
        u = key_of(u);
        memcpy(base + i * stride, &u, sizeof u);
        for (int p = 0; p < PASSES; p++)
            cnt[p][(u >> (p * RADIX_BITS)) & (RADIX - 1)]++;
    }
    *need = 0;
    for (int p = 0; p < PASSES; p++) {
        int full = 0;
        for (unsigned d = 0; d < RADIX && !full; d++)
            full = cnt[p][d] == n;
        if (!full) *need |= 1u << p;
        uint32_t sum = 0; /* counts become start offsets */
        for (unsigned d = 0; d < RADIX; d++) {
            uint32_t c = cnt[p][d];
            cnt[p][d] = sum;
            sum += c;
        }
    }
    return 0;
}

/* The doubles back from their keys. */
static void keys_out(char *base, size_t n, size_t stride)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, base + i * stride, sizeof u);
        u = double_of(u);
        memcpy(base + i * stride, &u, sizeof u);
    }
}

/* Stable LSD radix sort of n records of stride bytes, each starting with its double key
 * (turned into an unsigned key as it is counted, sorted on it, and turned back by the last
 * pass). 0, or -1 when it cannot (no memory, too many records, a -0): the caller falls
 * back to qsort. */
static int radix_sort(void *base, size_t n, size_t stride)
{
    if (n > UINT32_MAX) return -1;
    uint32_t(*cnt)[RADIX] = malloc(PASSES * sizeof *cnt);
    char *tmp = malloc(n * stride);
    unsigned need = 0;
    if (!cnt || !tmp || keys_in(base, n, stride, cnt, &need)) {
        free(cnt);
        free(tmp);
        return -1;
    }
    char *src = base, *dst = tmp;
    int last = -1;
    for (int p = 0; p < PASSES; p++)
        if (need & (1u << p)) last = p;
    for (int p = 0; p < PASSES; p++) {
        if (!(need & (1u << p))) continue;
        uint32_t *c = cnt[p];
        int sh = p * RADIX_BITS, out = p == last; /* the last pass writes the doubles back */
        if (stride == sizeof(uint64_t)) { /* plain keys: the common case, a word a record */
            /* (memcpy: the records are doubles, read and written as words) */
            if (out)
                for (size_t i = 0; i < n; i++) {
                    uint64_t k, v;
                    memcpy(&k, src + i * sizeof k, sizeof k);
                    v = double_of(k);
                    memcpy(dst + (size_t)c[(k >> sh) & (RADIX - 1)]++ * sizeof k, &v, sizeof v);
                }
            else
                for (size_t i = 0; i < n; i++) {
                    uint64_t k;
                    memcpy(&k, src + i * sizeof k, sizeof k);
                    memcpy(dst + (size_t)c[(k >> sh) & (RADIX - 1)]++ * sizeof k, &k, sizeof k);
                }
        } else {
            for (size_t i = 0; i < n; i++) {
                uint64_t k;
                memcpy(&k, src + i * stride, sizeof k);
                char *to = dst + (size_t)c[(k >> sh) & (RADIX - 1)]++ * stride;
                memcpy(to, src + i * stride, stride);
                if (out) {
                    k = double_of(k);
                    memcpy(to, &k, sizeof k);
                }
            }
        }
        char *t = src;
        src = dst;
        dst = t;
    }
    if (src != base) memcpy(base, src, n * stride);
    if (last < 0) keys_out(base, n, stride);
    free(tmp);
    free(cnt);
    return 0;
}

/* Below this, qsort is as quick as the radix sort's fixed cost (the histograms). */
#define RADIX_MIN 256

void sv_sort_doubles(double *x, size_t n)
{
    size_t i = 1;
    while (i < n && x[i - 1] <= x[i])
        i++;
    if (i >= n) return; /* already in order: a stable sort leaves it as it is */
    if (n < RADIX_MIN || radix_sort(x, n, sizeof *x)) qsort(x, n, sizeof *x, sv_cmp_double);
}

void sv_sort_wvals(sv_wval_t *x, size_t n)
{
    size_t i = 1;
    while (i < n && x[i - 1].v <= x[i].v)
        i++;
    if (i >= n) return;
    if (n < RADIX_MIN || radix_sort(x, n, sizeof *x)) qsort(x, n, sizeof *x, cmp_wval);
}

/* ---- selection ------------------------------------------------------------------------ */

static void swap_(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Reorder x[lo..hi] so that x[k] holds the value of rank k, smaller ones before it and
 * larger ones after it (Hoare's quickselect, median-of-three pivots; a shrinking range
 * that stops halving falls back to sorting it). */
static void select_k(double *x, size_t lo, size_t hi, size_t k)
{
    int budget = 2 * 64;
    while (hi > lo) {
        if (hi - lo < 16 || budget-- <= 0) {
            qsort(x + lo, hi - lo + 1, sizeof *x, sv_cmp_double);
            return;
        }
        size_t mid = lo + (hi - lo) / 2;
        if (x[mid] < x[lo]) swap_(&x[mid], &x[lo]);
        if (x[hi] < x[lo]) swap_(&x[hi], &x[lo]);
        if (x[hi] < x[mid]) swap_(&x[hi], &x[mid]);
        double pivot = x[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (x[i] < pivot)
                i++;
            while (pivot < x[j])
                j--;
            if (i <= j) {
                swap_(&x[i], &x[j]);
                i++;
                if (j == 0) break;
                j--;
            }
        }
        /* now x[lo..j] <= pivot <= x[i..hi], and x[j+1..i-1] == pivot */
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

void sv_percentiles_select(double *x, size_t n, const double *pcts, int npcts, double *out)
{
    if (n == 0) {
        for (int i = 0; i < npcts; i++)
            out[i] = 0.0;
        return;
    }
    /* The ranks needed: floor(pos) and the one after for each percentile, as in
     * sv_percentile_sorted; selected in ascending order, each in what is left above the
     * previous one. */
    size_t rank[2 * SV_MAX_PCT + 8];
    int nr = 0;
    for (int i = 0; i < npcts && nr + 2 <= (int)(sizeof rank / sizeof *rank); i++) {
        double pos = (double)(n - 1) * pcts[i] / 100.0;
        size_t lo = (size_t)floor(pos);
        if (lo >= n - 1) lo = n - 1;
        rank[nr++] = lo;
        if (lo + 1 < n) rank[nr++] = lo + 1;
    }
    qsort(rank, (size_t)nr, sizeof *rank, cmp_size);
    size_t from = 0;
    for (int i = 0; i < nr; i++) {
        if (i > 0 && rank[i] == rank[i - 1]) continue;
        select_k(x, from, n - 1, rank[i]);
        from = rank[i] + 1;
    }
    /* x[r] is now the value of rank r for every selected r. */
    for (int i = 0; i < npcts; i++) {
        double pos = (double)(n - 1) * pcts[i] / 100.0;
        size_t lo = (size_t)floor(pos);
        if (lo >= n - 1) {
            out[i] = x[n - 1];
            continue;
        }
        double frac = pos - (double)lo;
        out[i] = x[lo] + (x[lo + 1] - x[lo]) * frac;
    }
}
