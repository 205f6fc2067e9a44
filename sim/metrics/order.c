/*
 * Order statistics for the summary (see include/servesim/metrics/metrics.h): a stable
 * radix sort (most significant digit first) of doubles and of weighted values, and
 * selection of the few order statistics a list of percentiles needs.
 *
 * The summary's percentiles read order statistics (its means and standard deviations are
 * taken first, in the arrays' own order: stats.c); a radix sort on the bit patterns gives
 * them in a few linear passes instead of qsort's n log n indirect comparisons. It is
 * stable and orders keys as qsort's three-way comparison of doubles does (-0 equals +0),
 * so it leaves exactly the order glibc's qsort (a stable merge sort) leaves. Arrays
 * already in order (empty, constant, or sorted) cost one pass. Where only percentiles are
 * needed, sv_percentiles_select picks the order statistics by quickselect in O(n).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/numpy_int.h"
#include "servesim/base/numeric.h"
#include "servesim/metrics/metrics.h"

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

/* The sort is most significant digit first: the keys less the smallest one span `hi` bits;
 * one counting pass on their top digit (up to 16 bits for a large array, fewer for a small
 * bucket) scatters them into buckets (stably: records of one digit keep their order), and
 * each bucket is sorted on the bits below its digit the same way, or by insertion once it
 * is small. Latencies spread over their range, so most buckets of the first pass hold a
 * record or two: about four passes over the data where an LSD sort of 64-bit keys takes
 * six or more. Insertion moves a record only past strictly greater keys (stable). */
#define INSERTION_MAX 24
#define TOP_BITS_MAX 16
#define SUB_BITS_MAX 6

/* Digit bits for a bucket of n records: about log2(n), within [4, max]. */
static int digit_bits(size_t n, int max)
{
    int b = 4;
    while (b < max && ((size_t)1 << b) < n)
        b++;
    return b;
}

/* MSD_SORT(name, rec_t): name(a, tmp, n, hi, base, top) sorts a[0..n) by their keys;
 * tmp holds n records of scratch. KEY(r) is a record's key. The first call (top: its
 * counters, 2^TOP_BITS_MAX + 1) is given the keys' smallest (base) and the bits their
 * range spans (hi), sorts the buckets where its pass left them, in tmp, and writes the
 * records back with their doubles (OUT(r)); a call on a bucket finds its own range (a
 * bucket of equal keys is done at once, however many bits they share) and leaves keys. */
#define MSD_SORT(name, rec_t)                                                                      \
    static void name(rec_t *a, rec_t *tmp, size_t n, int hi, uint64_t base, uint32_t *top)         \
    {                                                                                              \
        if (n <= INSERTION_MAX) {                                                                  \
            for (size_t i = 1; i < n; i++) {                                                       \
                rec_t t = a[i];                                                                    \
                size_t j = i;                                                                      \
                for (; j > 0 && KEY(a[j - 1]) > KEY(t); j--)                                       \
                    a[j] = a[j - 1];                                                               \
                a[j] = t;                                                                          \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        if (!top) { /* the bucket's own range: equal keys are done, and its digits start */        \
            uint64_t mn = KEY(a[0]), mx = mn; /* at the first bit where its keys differ */         \
            for (size_t i = 1; i < n; i++) {                                                       \
                uint64_t k = KEY(a[i]);                                                            \
                mn = k < mn ? k : mn;                                                              \
                mx = k > mx ? k : mx;                                                              \
            }                                                                                      \
            if (mn == mx) return;                                                                  \
            base = mn;                                                                             \
            hi = 0;                                                                                \
            for (uint64_t r = mx - mn; r; r >>= 1)                                                 \
                hi++;                                                                              \
        }                                                                                          \
        uint32_t local[(1u << SUB_BITS_MAX) + 1];                                                  \
        int bits = digit_bits(n, top ? TOP_BITS_MAX : SUB_BITS_MAX);                               \
        if (bits > hi) bits = hi;                                                                  \
        int sh = hi - bits;                                                                        \
        size_t nd = (size_t)1 << bits;                                                             \
        uint64_t mask = nd - 1;                                                                    \
        uint32_t *cnt = top ? top : local;                                                         \
        memset(cnt, 0, (nd + 1) * sizeof *cnt);                                                    \
        for (size_t i = 0; i < n; i++)                                                             \
            cnt[(((KEY(a[i]) - base) >> sh) & mask) + 1]++;                                        \
        for (size_t d = 1; d <= nd; d++) /* counts become start offsets */                         \
            cnt[d] += cnt[d - 1];                                                                  \
        for (size_t i = 0; i < n; i++)                                                             \
            tmp[cnt[((KEY(a[i]) - base) >> sh) & mask]++] = a[i];                                  \
        rec_t *in = top ? tmp : a, *scratch = top ? a : tmp;                                       \
        if (!top) memcpy(a, tmp, n * sizeof *a);                                                   \
        if (sh > 0) { /* (at 0 each bucket holds one key) */                                       \
            /* cnt[d] is now the end of bucket d (and the start of d + 1) */                       \
            size_t from = 0;                                                                       \
            for (size_t d = 0; d < nd; d++) {                                                      \
                size_t to = cnt[d];                                                                \
                if (to - from > 1) name(in + from, scratch + from, to - from, 0, 0, NULL);         \
                from = to;                                                                         \
            }                                                                                      \
        }                                                                                          \
        if (top)                                                                                   \
            for (size_t i = 0; i < n; i++)                                                         \
                a[i] = OUT(tmp[i]);                                                                \
    }

/* A record's key, held in the bits of its double (read as an integer, not as a double). */
static inline uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* A key's double. */
static inline double double_of_key(uint64_t k)
{
    uint64_t u = double_of(k);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline sv_wval_t wval_out(sv_wval_t r)
{
    r.v = double_of_key(bits_of(r.v));
    return r;
}

#define KEY(r) bits_of(r)
#define OUT(r) double_of_key(bits_of(r))
MSD_SORT(msd_keys, double)
#undef KEY
#undef OUT
#define KEY(r) bits_of((r).v)
#define OUT(r) wval_out(r)
MSD_SORT(msd_wkeys, sv_wval_t)
#undef KEY
#undef OUT

/* Each record's leading double replaced by its key (in place), the smallest and largest
 * key found; -1 (nothing changed) if a double is -0, which the key maps next to +0 where
 * qsort holds them equal. */
static int keys_in(char *base, size_t n, size_t stride, uint64_t *lo, uint64_t *hi)
{
    uint64_t mn = UINT64_MAX, mx = 0;
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
        mn = u < mn ? u : mn;
        mx = u > mx ? u : mx;
    }
    *lo = mn;
    *hi = mx;
    return 0;
}

/* Stable radix sort of n records of stride bytes (8: a double; 16: a weighted value), each
 * starting with its double (turned into its key, sorted on it, and turned back). 0, or -1
 * when it cannot (no memory, too many records, a -0): the caller falls back to qsort. */
static int radix_sort(void *base, size_t n, size_t stride)
{
    if (n > UINT32_MAX) return -1;
    uint32_t *cnt = malloc(((1u << TOP_BITS_MAX) + 1) * sizeof *cnt);
    void *tmp = malloc(n * stride);
    uint64_t lo, hi;
    if (!cnt || !tmp || keys_in(base, n, stride, &lo, &hi)) {
        free(cnt);
        free(tmp);
        return -1;
    }
    int bits = 0; /* the keys less lo span bits bits */
    for (uint64_t r = hi - lo; r; r >>= 1)
        bits++;
    if (stride == sizeof(uint64_t))
        msd_keys(base, tmp, n, bits, lo, cnt);
    else
        msd_wkeys(base, tmp, n, bits, lo, cnt);
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
    /* The ranks needed: the two each percentile reads (numpy_int.h); selected in ascending
     * order, each in what is left above the previous one. */
    size_t rank[2 * (SV_MAX_PCT + 4)];
    int nr = 0;
    for (int i = 0; i < npcts && nr + 2 <= (int)(sizeof rank / sizeof *rank); i++) {
        double lo, hi, t;
        sv__np_ranks((double)n, pcts[i], &lo, &hi, &t);
        rank[nr++] = (size_t)lo;
        rank[nr++] = (size_t)hi;
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
        double lo, hi, t;
        sv__np_ranks((double)n, pcts[i], &lo, &hi, &t);
        out[i] = sv__np_lerp(x[(size_t)lo], x[(size_t)hi], t);
    }
}
