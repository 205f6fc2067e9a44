/*
 * Order statistics (see include/servesim/metrics/metrics.h): the selection of the few
 * order statistics a summary's percentiles and median read, and a stable radix sort (most
 * significant digit first) of doubles and of weighted values for the callers that want
 * whole arrays in order.
 *
 * The summary sorts nothing: its means and standard deviations are numpy's sums in the
 * arrays' own order (stats.c), and its percentiles need a few ranks of each array, which
 * a counting pass on the keys' top bits finds in linear time (the selection section).
 * The sort is stable and orders keys as qsort's three-way comparison of doubles does (-0
 * equals +0), so it leaves exactly the order glibc's qsort (a stable merge sort) leaves;
 * arrays already in order (empty, constant, or sorted) cost one pass.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "metrics/numpy_int.h"
#include "metrics/stats_int.h"
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

/* INSERTION_SORT(rec_t, a, n): a[0..n) in KEY order, a record moved only past strictly
 * greater keys (stable). */
#define INSERTION_SORT(rec_t, a, n)                                                                \
    for (size_t i_ = 1; i_ < (n); i_++) {                                                          \
        rec_t t_ = (a)[i_];                                                                        \
        size_t j_ = i_;                                                                            \
        for (; j_ > 0 && KEY((a)[j_ - 1]) > KEY(t_); j_--)                                         \
            (a)[j_] = (a)[j_ - 1];                                                                 \
        (a)[j_] = t_;                                                                              \
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
            INSERTION_SORT(rec_t, a, n);                                                           \
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

/*
 * The order statistics a list of ranks needs, without sorting: the records' keys (a
 * double's bits read as an unsigned integer: their order is the doubles' when none has
 * its sign bit set; otherwise every double is first turned into key_of's order, -0 before
 * +0, NaNs past the infinities) less the smallest one are counted by their top bits, the
 * counts (weights, for a weighted pool) walked to the buckets that hold the ranks wanted,
 * the records of those buckets alone gathered, and each such bucket done the same way on
 * its own range, by insertion once it is small. Latencies spread over their range, so
 * the first count splits them into buckets of about SEL_PER_BUCKET records: three passes
 * over the data (the range, the count, the gathering) and a little work on the buckets
 * gathered. Ranks are 0-based in the expanded list (a record of weight w holds w of them).
 */
#define SEL_SMALL 24
#define SEL_BITS_MAX 14
#define SEL_PER_BUCKET 8

/* Record i counted into its bucket (and its weight added), and gathered when its bucket
 * holds a wanted rank (SELECT's names). */
#define SEL_COUNT(i, WEIGHTED)                                                                     \
    do {                                                                                           \
        size_t b_ = (size_t)((KEY(a[i]) - lo) >> sh);                                              \
        cnt[b_]++;                                                                                 \
        if (WEIGHTED) wsum[b_] += WEIGHT(a[i]);                                                    \
    } while (0)
#define SEL_GATHER(i)                                                                              \
    do {                                                                                           \
        int k_ = need[(KEY(a[i]) - lo) >> sh];                                                     \
        if (k_) g[bk[k_ - 1].n++] = a[i];                                                          \
    } while (0)

/* One bucket a count found a wanted rank in: its records' place among those gathered, the
 * weight below it, its first wanted rank and how many. */
typedef struct selb {
    size_t start, n;
    double below;
    int r0, nr;
} selb_t;

/* SELECT(name, rec_t, WEIGHTED): name(a, n, lo, hi, rank, nr, out) sets out[i] to the key
 * of rank rank[i] (ascending, each below the total weight) of a[0..n), whose keys KEY(r)
 * lie in [lo, hi]; WEIGHT(r) is a record's weight. a is reordered. 0, or SV_ENOMEM. */
#define SELECT(name, rec_t, WEIGHTED)                                                              \
    static int name(rec_t *a, size_t n, uint64_t lo, uint64_t hi, const double *rank, int nr,      \
                    uint64_t *out)                                                                 \
    {                                                                                              \
        if (lo == hi) { /* one key (a bucket of equal keys is done at once) */                     \
            for (int i = 0; i < nr; i++)                                                           \
                out[i] = lo;                                                                       \
            return 0;                                                                              \
        }                                                                                          \
        if (n <= SEL_SMALL) {                                                                      \
            INSERTION_SORT(rec_t, a, n);                                                           \
            double c = WEIGHT(a[0]);                                                               \
            size_t j = 0;                                                                          \
            for (int i = 0; i < nr; i++) {                                                         \
                for (; c <= rank[i] && j + 1 < n; j++) /* (WEIGHT may drop its argument) */        \
                    c += WEIGHT(a[j + 1]);                                                         \
                out[i] = KEY(a[j]);                                                                \
            }                                                                                      \
            return 0;                                                                              \
        }                                                                                          \
        int span = 64 - __builtin_clzll(hi - lo);                                                  \
        int bits = digit_bits(n / SEL_PER_BUCKET, SEL_BITS_MAX);                                   \
        if (bits > span) bits = span;                                                              \
        int sh = span - bits;                                                                      \
        size_t nd = (size_t)1 << bits;                                                             \
        uint32_t *cnt = calloc(nd, sizeof *cnt);                                                   \
        double *wsum = WEIGHTED ? calloc(nd, sizeof *wsum) : NULL;                                 \
        uint8_t *need = calloc(nd, 1);                                                             \
        selb_t bk[SV__MAX_RANKS];                                                                  \
        int nb = 0, rc = 0;                                                                        \
        rec_t *g = NULL;                                                                           \
        if (!cnt || !need || (WEIGHTED && !wsum) || nr > (int)(sizeof bk / sizeof *bk)) {          \
            rc = SV_ENOMEM;                                                                        \
            goto out;                                                                              \
        }                                                                                          \
        /* (four records a turn: the loop's own increment, compare and branch are nearly as        \
         * many instructions as a record's count, or its gathering below) */                       \
        size_t i4 = 0;                                                                             \
        for (; i4 + 4 <= n; i4 += 4) {                                                             \
            SEL_COUNT(i4, WEIGHTED);                                                               \
            SEL_COUNT(i4 + 1, WEIGHTED);                                                           \
            SEL_COUNT(i4 + 2, WEIGHTED);                                                           \
            SEL_COUNT(i4 + 3, WEIGHTED);                                                           \
        }                                                                                          \
        for (; i4 < n; i4++)                                                                       \
            SEL_COUNT(i4, WEIGHTED);                                                               \
        size_t ng = 0; /* records gathered */                                                      \
        double c = 0.0;                                                                            \
        for (size_t b = 0, i = 0; b < nd && (int)i < nr; b++) {                                    \
            double wb = WEIGHTED ? wsum[b] : (double)cnt[b];                                       \
            if (rank[i] < c + wb) {                                                                \
                bk[nb] = (selb_t){.start = ng, .n = cnt[b], .below = c, .r0 = (int)i};             \
                while ((int)i < nr && rank[i] < c + wb)                                            \
                    i++;                                                                           \
                bk[nb].nr = (int)i - bk[nb].r0;                                                    \
                ng += cnt[b];                                                                      \
                need[b] = (uint8_t)++nb;                                                           \
            }                                                                                      \
            c += wb;                                                                               \
        }                                                                                          \
        g = malloc((ng + 1) * sizeof *g);                                                          \
        if (!g) {                                                                                  \
            rc = SV_ENOMEM;                                                                        \
            goto out;                                                                              \
        }                                                                                          \
        for (int k = 0; k < nb; k++)                                                               \
            bk[k].n = bk[k].start; /* (the fill point while gathering) */                          \
        for (i4 = 0; i4 + 4 <= n; i4 += 4) {                                                       \
            SEL_GATHER(i4);                                                                        \
            SEL_GATHER(i4 + 1);                                                                    \
            SEL_GATHER(i4 + 2);                                                                    \
            SEL_GATHER(i4 + 3);                                                                    \
        }                                                                                          \
        for (; i4 < n; i4++)                                                                       \
            SEL_GATHER(i4);                                                                        \
        for (int k = 0; k < nb && !rc; k++) {                                                      \
            rec_t *seg = g + bk[k].start;                                                          \
            size_t m = bk[k].n - bk[k].start;                                                      \
            uint64_t blo = KEY(seg[0]), bhi = blo;                                                 \
            for (size_t i = 1; i < m; i++) {                                                       \
                uint64_t key = KEY(seg[i]);                                                        \
                blo = key < blo ? key : blo;                                                       \
                bhi = key > bhi ? key : bhi;                                                       \
            }                                                                                      \
            double rr[SV__MAX_RANKS];                                                              \
            for (int i = 0; i < bk[k].nr; i++)                                                     \
                rr[i] = rank[bk[k].r0 + i] - bk[k].below;                                          \
            rc = name(seg, m, blo, bhi, rr, bk[k].nr, out + bk[k].r0);                             \
        }                                                                                          \
    out:                                                                                           \
        free(cnt);                                                                                 \
        free(wsum);                                                                                \
        free(need);                                                                                \
        free(g);                                                                                   \
        return rc;                                                                                 \
    }

#define KEY(r) bits_of(r)
#define WEIGHT(r) 1.0
SELECT(select_keys, double, 0)
#undef KEY
#undef WEIGHT
#define KEY(r) bits_of((r).v)
#define WEIGHT(r) ((r).w)
SELECT(select_wkeys, sv_wval_t, 1)
#undef KEY
#undef WEIGHT

/* The smallest and largest bits of n records of stride bytes, each starting with its
 * double; whether any has its sign bit set. */
static int bits_range(const char *base, size_t n, size_t stride, uint64_t *lo, uint64_t *hi)
{
    uint64_t mn = UINT64_MAX, mx = 0, any = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, base + i * stride, sizeof u);
        mn = u < mn ? u : mn;
        mx = u > mx ? u : mx;
        any |= u;
    }
    *lo = mn;
    *hi = mx;
    return (int)(any >> 63);
}

/* Each record's double turned into its key (in place); their range. */
static void keys_all(char *base, size_t n, size_t stride, uint64_t *lo, uint64_t *hi)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, base + i * stride, sizeof u);
        u = key_of(u);
        memcpy(base + i * stride, &u, sizeof u);
    }
    bits_range(base, n, stride, lo, hi);
}

#if defined(__SSE2__)
/* The smallest and largest of the doubles of n >= 8 records of stride 8 or 16 bytes, two
 * lanes at a time (minpd and maxpd take x < y ? x : y and x > y ? x : y, as the scalar
 * loop does; without NaNs, and with the smallest positive, the order they are met in
 * changes nothing). */
static void range_sse2(const char *base, size_t n, size_t stride, double *lo, double *hi)
{
    const double *x = (const double *)(const void *)base;
    size_t step = stride / sizeof *x; /* doubles a record */
#define PAIR(i)                       /* the doubles of records i and i + 1 */                     \
    (step == 1 ? _mm_loadu_pd(x + (i)) : _mm_loadh_pd(_mm_load_sd(x + (i)*2), x + (i)*2 + 2))
    __m128d a = PAIR(0), b = PAIR(2), c = PAIR(4), d = PAIR(6);
    __m128d mn0 = _mm_min_pd(a, c), mn1 = _mm_min_pd(b, d);
    __m128d mx0 = _mm_max_pd(a, c), mx1 = _mm_max_pd(b, d);
    size_t i = 8;
    if (step == 1)
        for (; i + 8 <= n; i += 8) {
            a = _mm_loadu_pd(x + i), b = _mm_loadu_pd(x + i + 2);
            c = _mm_loadu_pd(x + i + 4), d = _mm_loadu_pd(x + i + 6);
            mn0 = _mm_min_pd(mn0, a), mn1 = _mm_min_pd(mn1, b);
            mx0 = _mm_max_pd(mx0, a), mx1 = _mm_max_pd(mx1, b);
            mn0 = _mm_min_pd(mn0, c), mn1 = _mm_min_pd(mn1, d);
            mx0 = _mm_max_pd(mx0, c), mx1 = _mm_max_pd(mx1, d);
        }
    else
        for (; i + 4 <= n; i += 4) {
            a = PAIR(i), b = PAIR(i + 2);
            mn0 = _mm_min_pd(mn0, a), mn1 = _mm_min_pd(mn1, b);
            mx0 = _mm_max_pd(mx0, a), mx1 = _mm_max_pd(mx1, b);
        }
#undef PAIR
    mn0 = _mm_min_pd(mn0, mn1);
    mx0 = _mm_max_pd(mx0, mx1);
    double mn = _mm_cvtsd_f64(_mm_min_sd(mn0, _mm_unpackhi_pd(mn0, mn0)));
    double mx = _mm_cvtsd_f64(_mm_max_sd(mx0, _mm_unpackhi_pd(mx0, mx0)));
    for (; i < n; i++) {
        double v = x[i * step];
        mn = mn < v ? mn : v;
        mx = mx > v ? mx : v;
    }
    *lo = mn;
    *hi = mx;
}
#endif

/* The doubles' range of n >= 1 records of stride bytes (none of them a NaN), as minsd and
 * maxsd take it (one instruction a record each, where bits_range takes integer compares;
 * two records an instruction with SSE2): 0 and its bits when the smallest is positive
 * (every double then above +0, so their bits' order is theirs), -1 otherwise (a zero,
 * which may be -0, or a negative: bits_range then). */
static int positive_range(const char *base, size_t n, size_t stride, uint64_t *lo, uint64_t *hi)
{
    double mn, mx;
#if defined(__SSE2__)
    if (n >= 8 && (stride == sizeof(double) || stride == 2 * sizeof(double))) {
        range_sse2(base, n, stride, &mn, &mx);
        goto done;
    }
#endif
    memcpy(&mn, base, sizeof mn);
    mx = mn;
    size_t i = 1;
    for (; i + 4 <= n; i += 4) {
        double at_[4];
        for (int k = 0; k < 4; k++)
            memcpy(&at_[k], base + (i + (size_t)k) * stride, sizeof at_[k]);
        for (int k = 0; k < 4; k++) {
            mn = mn < at_[k] ? mn : at_[k];
            mx = mx > at_[k] ? mx : at_[k];
        }
    }
    for (; i < n; i++) {
        double v;
        memcpy(&v, base + i * stride, sizeof v);
        mn = mn < v ? mn : v;
        mx = mx > v ? mx : v;
    }
#if defined(__SSE2__)
done:
#endif
    if (!(mn > 0.0)) return -1;
    memcpy(lo, &mn, sizeof *lo);
    memcpy(hi, &mx, sizeof *hi);
    return 0;
}

/* SELECT_TOP(name, rec_t, core): the doubles of ranks rank[0..nr) of x[0..n) (n >= 1). */
#define SELECT_TOP(name, rec_t, core)                                                              \
    int name(rec_t *x, size_t n, int nan_free, const double *rank, int nr, double *val,            \
             double *top)                                                                          \
    {                                                                                              \
        uint64_t lo, hi, out[SV__MAX_RANKS];                                                       \
        if (nr > (int)(sizeof out / sizeof *out)) return SV_EINVAL;                                \
        int keyed = 0;                                                                             \
        if (!nan_free || positive_range((const char *)x, n, sizeof *x, &lo, &hi))                  \
            keyed = bits_range((const char *)x, n, sizeof *x, &lo, &hi);                           \
        if (keyed) keys_all((char *)x, n, sizeof *x, &lo, &hi);                                    \
        if (top) {                                                                                 \
            uint64_t u = keyed ? double_of(hi) : hi;                                               \
            memcpy(top, &u, sizeof u);                                                             \
        }                                                                                          \
        int rc = core(x, n, lo, hi, rank, nr, out);                                                \
        for (int i = 0; i < nr; i++) {                                                             \
            uint64_t u = keyed ? double_of(out[i]) : out[i];                                       \
            memcpy(&val[i], &u, sizeof u);                                                         \
        }                                                                                          \
        return rc;                                                                                 \
    }

SELECT_TOP(sv__select_doubles, double, select_keys)
SELECT_TOP(sv__select_wvals, sv_wval_t, select_wkeys)

static int cmp_dbl(const void *a, const void *b)
{
    return sv_cmp_double(a, b);
}

int sv__ranks_add(double *rank, int nr, double r)
{
    for (int i = 0; i < nr; i++)
        if (rank[i] == r) return nr;
    rank[nr] = r;
    return nr + 1;
}

int sv__ranks_sort(double *rank, int nr)
{
    qsort(rank, (size_t)nr, sizeof *rank, cmp_dbl);
    return nr;
}

double sv__rank_value(const double *rank, const double *val, int nr, double r)
{
    for (int i = 0; i < nr; i++)
        if (rank[i] == r) return val[i];
    return 0.0;
}

void sv_percentiles_select(double *x, size_t n, const double *pcts, int npcts, double *out)
{
    double rank[SV__MAX_RANKS], val[SV__MAX_RANKS];
    int nr = 0;
    for (int i = 0; n > 0 && i < npcts && 2 * i + 2 <= SV__MAX_RANKS; i++) {
        double lo, hi, t;
        sv__np_ranks((double)n, pcts[i], &lo, &hi, &t);
        nr = sv__ranks_add(rank, nr, lo);
        nr = sv__ranks_add(rank, nr, hi);
    }
    if (n == 0 || sv__select_doubles(x, n, 0, rank, sv__ranks_sort(rank, nr), val, NULL)) {
        for (int i = 0; i < npcts; i++)
            out[i] = 0.0;
        return;
    }
    for (int i = 0; i < npcts; i++) {
        double lo, hi, t;
        sv__np_ranks((double)n, pcts[i], &lo, &hi, &t);
        out[i] =
            sv__np_lerp(sv__rank_value(rank, val, nr, lo), sv__rank_value(rank, val, nr, hi), t);
    }
}
