/*
 * The DDSketch quantile sketch (see include/servesim/metrics/sketch.h): two dense stores of
 * bucket counts that grow to the range of indices seen, a zero count, and the running
 * moments.
 */
#include "servesim/metrics/sketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/numpy_int.h"

/* Counts of buckets lo .. lo + n - 1 (doubles: weights are whole numbers below 2^53). */
typedef struct store {
    double *c;
    int lo, n;
} store_t;

struct sv_sketch {
    double alpha, gamma, inv_ln_gamma;
    store_t pos, neg; /* neg: bucket of -x */
    double zero;      /* weight of exact zeros */
    double count, mean, m2;
};

sv_sketch_t *sv_sketch_new(double alpha)
{
    if (!(alpha > 0 && alpha <= 0.5)) return NULL;
    sv_sketch_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->alpha = alpha;
    s->gamma = (1 + alpha) / (1 - alpha);
    s->inv_ln_gamma = 1.0 / log(s->gamma);
    return s;
}

void sv_sketch_free(sv_sketch_t *s)
{
    if (!s) return;
    free(s->pos.c);
    free(s->neg.c);
    free(s);
}

/* Make bucket i addressable. The index range is bounded by the doubles' (|i| below
 * 1100 / ln(gamma)), so a store never exceeds a few hundred KiB. */
static int store_reach(store_t *st, int i)
{
    if (st->n && i >= st->lo && i < st->lo + st->n) return 0;
    int lo = st->n ? (i < st->lo ? i : st->lo) : i;
    int hi = st->n ? (i >= st->lo + st->n ? i : st->lo + st->n - 1) : i;
    /* grow by at least half again, so a slowly widening range costs amortised O(1) */
    int want = hi - lo + 1, extra = st->n / 2;
    if (want < st->n + extra) {
        if (i < st->lo)
            lo -= st->n + extra - want;
        else
            hi += st->n + extra - want;
        want = hi - lo + 1;
    }
    double *c = calloc((size_t)want, sizeof *c);
    if (!c) return SV_ENOMEM;
    if (st->n) memcpy(c + (st->lo - lo), st->c, (size_t)st->n * sizeof *c);
    free(st->c);
    st->c = c;
    st->lo = lo;
    st->n = want;
    return 0;
}

static int bucket(const sv_sketch_t *s, double x) /* x > 0 */
{
    return (int)ceil(log(x) * s->inv_ln_gamma);
}

int sv_sketch_add(sv_sketch_t *s, double x, double w)
{
    if (!isfinite(x)) return SV_EINVAL;
    if (!(w > 0)) return 0;
    if (x == 0) {
        s->zero += w;
    } else {
        store_t *st = x > 0 ? &s->pos : &s->neg;
        int i = bucket(s, fabs(x));
        if (store_reach(st, i)) return SV_ENOMEM;
        st->c[i - st->lo] += w;
    }
    /* Welford's update, weighted */
    s->count += w;
    double d = x - s->mean;
    s->mean += d * w / s->count;
    s->m2 += w * d * (x - s->mean);
    return 0;
}

static int store_merge(store_t *into, const store_t *from)
{
    if (!from->n) return 0;
    if (store_reach(into, from->lo) || store_reach(into, from->lo + from->n - 1)) return SV_ENOMEM;
    for (int k = 0; k < from->n; k++)
        into->c[from->lo + k - into->lo] += from->c[k];
    return 0;
}

int sv_sketch_merge(sv_sketch_t *into, const sv_sketch_t *from)
{
    if (into->alpha != from->alpha) return SV_EINVAL;
    if (store_merge(&into->pos, &from->pos) || store_merge(&into->neg, &from->neg))
        return SV_ENOMEM;
    into->zero += from->zero;
    double n = into->count + from->count;
    if (n > 0) { /* Chan et al.'s pairwise combination */
        double d = from->mean - into->mean;
        into->m2 += from->m2 + d * d * into->count * from->count / n;
        into->mean += d * from->count / n;
    }
    into->count = n;
    return 0;
}

/* Layout: alpha, zero, count, mean, m2, then the first bucket and the number of buckets of
 * pos and of neg (from the first non-empty bucket to the last), then their counts. Every
 * field is a double that holds its value exactly. */
#define HEADER 9

/* The buckets of st from its first to its last non-empty one: [*lo, *lo + *n). */
static void used(const store_t *st, int *lo, int *n)
{
    int a = 0, b = st->n;
    while (a < b && st->c[a] == 0)
        a++;
    while (b > a && st->c[b - 1] == 0)
        b--;
    *lo = st->lo + a;
    *n = b - a;
}

size_t sv_sketch_export(const sv_sketch_t *s, double *buf, size_t cap)
{
    int plo, pn, nlo, nn;
    used(&s->pos, &plo, &pn);
    used(&s->neg, &nlo, &nn);
    size_t n = HEADER + (size_t)pn + (size_t)nn;
    if (cap < n) return n;
    const double h[HEADER] = {s->alpha, s->zero, s->count, s->mean, s->m2, plo, pn, nlo, nn};
    memcpy(buf, h, sizeof h);
    if (pn) memcpy(buf + HEADER, s->pos.c + (plo - s->pos.lo), (size_t)pn * sizeof *buf);
    if (nn) memcpy(buf + HEADER + pn, s->neg.c + (nlo - s->neg.lo), (size_t)nn * sizeof *buf);
    return n;
}

int sv_sketch_merge_exported(sv_sketch_t *into, const double *buf, size_t n)
{
    if (n < HEADER || buf[0] != into->alpha) return SV_EINVAL;
    double pn = buf[6], nn = buf[8];
    if (!(pn >= 0 && nn >= 0 && pn < 1e7 && nn < 1e7) || fabs(buf[5]) > 1e9 ||
        fabs(buf[7]) > 1e9 || (double)n != HEADER + pn + nn || !(buf[2] >= 0))
        return SV_EINVAL;
    sv_sketch_t from = {.alpha = buf[0], .zero = buf[1], .count = buf[2], .mean = buf[3],
                        .m2 = buf[4]};
    from.pos = (store_t){(double *)(buf + HEADER), (int)buf[5], (int)pn};
    from.neg = (store_t){(double *)(buf + HEADER + (size_t)pn), (int)buf[7], (int)nn};
    return sv_sketch_merge(into, &from);
}

double sv_sketch_alpha(const sv_sketch_t *s)
{
    return s->alpha;
}

double sv_sketch_count(const sv_sketch_t *s)
{
    return s->count;
}

/* The representative of bucket i: within alpha of every value in (gamma^(i-1), gamma^i]. */
static double value_of(const sv_sketch_t *s, int i)
{
    return 2.0 * pow(s->gamma, i) / (s->gamma + 1.0);
}

double sv_sketch_rank(const sv_sketch_t *s, double r)
{
    if (s->count <= 0) return 0.0;
    double cum = 0.0;
    for (int k = s->neg.n - 1; k >= 0; k--) /* the most negative first */
        if ((cum += s->neg.c[k]) > r) return -value_of(s, s->neg.lo + k);
    if ((cum += s->zero) > r) return 0.0;
    for (int k = 0; k < s->pos.n; k++)
        if ((cum += s->pos.c[k]) > r) return value_of(s, s->pos.lo + k);
    for (int k = s->pos.n - 1; k >= 0; k--) /* r past the end: the largest */
        if (s->pos.c[k] > 0) return value_of(s, s->pos.lo + k);
    return 0.0;
}

double sv_sketch_percentile(const sv_sketch_t *s, double p)
{
    double n = s->count;
    if (n <= 0) return 0.0;
    /* as sv_percentile_sorted (numpy's, numpy_int.h), over ranks instead of an array */
    double lo, hi, t;
    sv__np_ranks(n, p, &lo, &hi, &t);
    return sv__np_lerp(sv_sketch_rank(s, lo), sv_sketch_rank(s, hi), t);
}

void sv_sketch_stat(const sv_sketch_t *s, const double *pcts, int npcts, double scale,
                    sv_stat_t *out)
{
    memset(out, 0, sizeof *out);
    out->n = (long)s->count;
    if (s->count <= 0) return;
    out->mean = s->mean * scale;
    out->std = sqrt(s->m2 > 0 ? s->m2 / s->count : 0.0) * scale;
    out->median = sv_sketch_percentile(s, 50.0) * scale;
    for (int i = 0; i < npcts; i++)
        out->pct[i] = sv_sketch_percentile(s, pcts[i]) * scale;
}
