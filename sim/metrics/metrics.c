/*
 * Metrics (see include/servesim/metrics/metrics.h): collects decode-step times, decode segments
 * and single tokens from the engine, and turns them into vLLM's exact per-request and
 * aggregate numbers at the end.
 */
#include "servesim/metrics/metrics.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/heap_int.h"
#include "base/vec_int.h"
#include "metrics/stats_int.h"
#include "servesim/base/numeric.h"
#include "servesim/metrics/sketch.h"

typedef struct seg {
    int32_t req, replica;
    int64_t k0, k1; /* decode steps [k0, k1) of the replica; k1 = -1 while open */
    double t_join;  /* time of the request's token before step k0 */
} seg_t;

typedef struct single {
    int32_t req;
    double t, gap;
} single_t;

/* A replica's decode-step times. Exact mode keeps them all (base 0); streaming mode keeps
 * those from base on (t[k - base] is step k's), with difference arrays of the coverage by
 * ended successful requests, and drops the steps below the oldest segment still needed. */
typedef struct steps {
    double *t;
    size_t n, cap; /* n: steps recorded (indices 0 .. n-1 ever) */
    size_t fast;   /* n below it: a step is a store and a count (exact mode: cap; else 0) */
    int64_t base;
    /* streaming: */
    int32_t *cov, *wts;     /* difference arrays of tokens and ITL weights, index k - base */
    size_t capd;            /* of cov and wts */
    int64_t done;           /* steps below done are counted into the sketch and bins */
    long cv, wv;            /* prefix sums of cov and wts up to done */
    int32_t *live;          /* ring of the segments opened here and not yet dropped, k0 order */
    size_t lhead, ln, lcap; /* its first slot, length and capacity (a power of two) */
} steps_t;

static inline double step_t(const steps_t *s, int64_t k)
{
    return s->t[k - s->base];
}

typedef struct stream stream_t;
struct sv_metrics;
static int stream_grow(steps_t *s, size_t need);
static int32_t stream_seg_open(struct sv_metrics *m, int32_t req, int replica, int64_t k0,
                               double t_join);
static int stream_single(struct sv_metrics *m, int32_t req, double t, double gap);
static int stream_new(struct sv_metrics *m);
static void stream_free(struct sv_metrics *m);
static int stream_summarize(const struct sv_metrics *m, sv_summary_t *out, sv_error_t *err);

struct sv_metrics {
    sv_metrics_cfg_t cfg;
    int replicas;
    steps_t *dec;
    seg_t *segs;
    size_t nsegs, capsegs;
    single_t *singles;
    size_t nsingles, capsingles;
    sv_sample_t *samples;
    size_t nsamples, capsamples;
    int oom;
    /* per-request index into segs and singles, built on first use by sv_metrics_itls;
     * streaming mode keeps seg_next and single_next as the chains of each request in
     * flight (and of free slots) */
    int32_t *seg_first, *seg_next, *single_first, *single_next;
    stream_t *st; /* streaming mode's state; NULL in exact mode */
};

const char *sv_fail_name(int reason)
{
    static const char *const names[] = {
        "none",        "queue_full", "timeout", "too_long", "prompt_over_budget",
        "kv_capacity", "unfinished", "aborted"};
    return (reason >= 0 && reason < SV_FAIL_COUNT) ? names[reason] : "?";
}

sv_metrics_t *sv_metrics_new(const sv_metrics_cfg_t *cfg, int replicas)
{
    sv_metrics_t *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->cfg = *cfg;
    m->replicas = replicas;
    m->dec = calloc((size_t)replicas, sizeof *m->dec);
    if (!m->dec || (cfg->sketch && cfg->nclasses == 0 && stream_new(m))) {
        sv_metrics_free(m);
        return NULL;
    }
    return m;
}

void sv_metrics_free(sv_metrics_t *m)
{
    if (!m) return;
    stream_free(m);
    for (int i = 0; m->dec && i < m->replicas; i++)
        free(m->dec[i].t);
    free(m->dec);
    free(m->segs);
    free(m->singles);
    free(m->samples);
    free(m->seg_first);
    free(m->seg_next);
    free(m->single_first);
    free(m->single_next);
    free(m);
}

/* sv_metrics_decode_step when the array is full or in streaming mode (its difference
 * arrays grow with it, and its base moves): kept out of line, so the common step is a
 * store and a count. */
static __attribute__((noinline)) int64_t decode_step_grow(sv_metrics_t *m, steps_t *s, double t)
{
    size_t k = s->n - (size_t)s->base;
    if (SV_GROW(s->t, s->cap, k + 1) || (m->st && stream_grow(s, k + 2))) {
        m->oom = 1;
        return -1;
    }
    if (!m->st) s->fast = s->cap; /* (base 0: step n is t[n]) */
    s->t[k] = t;
    return (int64_t)s->n++;
}

int64_t sv_metrics_decode_step(sv_metrics_t *m, int replica, double t)
{
    steps_t *s = &m->dec[replica];
    size_t n = s->n;
    if (n >= s->fast) return decode_step_grow(m, s, t);
    s->t[n] = t;
    s->n = n + 1;
    return (int64_t)n;
}

int32_t sv_metrics_seg_open(sv_metrics_t *m, int32_t req, int replica, int64_t k0, double t_join)
{
    if (m->st) return stream_seg_open(m, req, replica, k0, t_join);
    if (SV_GROW(m->segs, m->capsegs, m->nsegs + 1) || m->nsegs >= INT32_MAX) {
        m->oom = 1;
        return -1;
    }
    m->segs[m->nsegs] =
        (seg_t){.req = req, .replica = replica, .k0 = k0, .k1 = -1, .t_join = t_join};
    return (int32_t)m->nsegs++;
}

double sv_metrics_seg_close(sv_metrics_t *m, int32_t seg, int64_t k1)
{
    if (seg < 0) return NAN;
    seg_t *s = &m->segs[seg];
    s->k1 = k1;
    return k1 > s->k0 ? step_t(&m->dec[s->replica], k1 - 1) : s->t_join;
}

int sv_metrics_single(sv_metrics_t *m, int32_t req, double t, double gap)
{
    if (m->st) return stream_single(m, req, t, gap);
    if (SV_GROW(m->singles, m->capsingles, m->nsingles + 1)) {
        m->oom = 1;
        return SV_ENOMEM;
    }
    m->singles[m->nsingles++] = (single_t){.req = req, .t = t, .gap = gap};
    return 0;
}

int sv_metrics_sample(sv_metrics_t *m, const sv_sample_t *s)
{
    if (SV_GROW(m->samples, m->capsamples, m->nsamples + 1)) {
        m->oom = 1;
        return SV_ENOMEM;
    }
    m->samples[m->nsamples++] = *s;
    return 0;
}

void sv_metrics_thin_samples(sv_metrics_t *m)
{
    size_t k = 0, round = 0;
    for (size_t i = 0; i < m->nsamples; i++) {
        if (i > 0 && m->samples[i].t != m->samples[i - 1].t) round++;
        if (round % 2 == 0) m->samples[k++] = m->samples[i];
    }
    m->nsamples = k;
}

int sv_metrics_oom(const sv_metrics_t *m)
{
    return m->oom;
}

const sv_sample_t *sv_metrics_samples(const sv_metrics_t *m, size_t *n)
{
    *n = m->nsamples;
    return m->samples;
}

/* ---- the summary ---------------------------------------------------------------------- */

/* The ITL budgets' percentiles from the ITL sketch. */
static void itl_budgets(const sv_slo_t *slo, const sv_sketch_t *sk, sv_summary_t *out)
{
    for (int b = 0; b < slo->nbudgets; b++)
        if (slo->budget[b].metric == SV_K_ITL)
            out->budget_ms[b] = sv_sketch_percentile(sk, slo->budget[b].pct) * 1e3;
}

static int ok(const sv_req_t *r)
{
    return r->state == SV_RQ_DONE;
}

/* Output tokens per whole second of the benchmark, for the peak: a dense array when the
 * run is not much longer in seconds than it has token events, else the events themselves,
 * sorted and summed per second at the end (a run of three requests over 1e9 s). */
typedef struct bins {
    double *dense;
    size_t n;
    sv_wval_t *sparse; /* v: second, w: tokens */
    size_t ns;
} bins_t;

static int bins_init(bins_t *b, double seconds, size_t events)
{
    memset(b, 0, sizeof *b);
    if (seconds <= 4.0 * (double)events + 1e6) {
        b->n = (size_t)seconds;
        b->dense = calloc(b->n + 1, sizeof *b->dense);
        return b->dense ? 0 : SV_ENOMEM;
    }
    b->sparse = malloc((events + 1) * sizeof *b->sparse);
    return b->sparse ? 0 : SV_ENOMEM;
}

static void bins_add(bins_t *b, double second, double tokens)
{
    if (second < 0) return;
    if (b->dense) {
        if (second < (double)b->n) b->dense[(size_t)second] += tokens;
    } else if (b->sparse) {
        b->sparse[b->ns++] = (sv_wval_t){second, tokens};
    }
}

static double bins_max(bins_t *b)
{
    double best = 0.0;
    if (b->dense) {
        for (size_t i = 0; i < b->n; i++)
            if (b->dense[i] > best) best = b->dense[i];
        return best;
    }
    sv_sort_wvals(b->sparse, b->ns);
    for (size_t i = 0; i < b->ns;) {
        double sum = 0.0, sec = b->sparse[i].v;
        for (; i < b->ns && b->sparse[i].v == sec; i++)
            sum += b->sparse[i].w;
        if (sum > best) best = sum;
    }
    return best;
}

static void bins_free(bins_t *b)
{
    free(b->dense);
    free(b->sparse);
}

void sv_metrics_slo(const sv_metrics_cfg_t *c, int cls, sv_slo_t *out)
{
    if (cls >= 0 && cls < c->nclasses) {
        *out = c->class_slo[cls];
        return;
    }
    memset(out, 0, sizeof *out);
    out->ttft_ms = c->slo_ttft_ms;
    out->tpot_ms = c->slo_tpot_ms;
    out->e2el_ms = c->slo_e2el_ms;
    out->attainment = c->attainment;
    out->nbudgets = c->nbudgets;
    for (int i = 0; i < c->nbudgets; i++)
        out->budget[i] = c->budgets[i];
}

static int has_thresholds(const sv_slo_t *s)
{
    return !isnan(s->ttft_ms) || !isnan(s->tpot_ms) || !isnan(s->e2el_ms);
}

/* A completed request of the selection (every class when cls < 0). */
static int okc(const sv_req_t *r, int cls)
{
    return r->state == SV_RQ_DONE && (cls < 0 || r->cls == cls);
}

/* The summary's percentile list: the configured ones, then 50/90/95/99 if missing. */
static void summary_percentiles(const sv_metrics_cfg_t *c, sv_summary_t *out)
{
    const double std_p[] = SV_STD_PCTS;
    for (int i = 0; i < c->npercentiles; i++)
        out->pcts[out->npcts++] = c->percentiles[i];
    for (int i = 0; i < 4; i++) {
        int have = 0;
        for (int k = 0; k < out->npcts; k++)
            have |= out->pcts[k] == std_p[i];
        if (!have && out->npcts < SV_MAX_PCT) out->pcts[out->npcts++] = std_p[i];
    }
}

/* Phases of a completed request, in seconds. Colocated requests have no transfer: those
 * phases are zero. */
static double ph_ttft(const sv_req_t *r)
{
    return sv_req_ttft(r);
}
static double ph_tpot(const sv_req_t *r)
{
    return sv_req_tpot(r);
}
static double ph_e2el(const sv_req_t *r)
{
    return sv_req_e2el(r);
}
static double ph_queue(const sv_req_t *r)
{
    return r->scheduled - r->start;
}
static double ph_prefill(const sv_req_t *r)
{
    return r->prefill_end - r->scheduled;
}
/* The breakdown's decode phase: first token to last. With a prefill/decode split, the
 * hand-off phases below may sit between prefill_end and the first token, so the phases
 * never count the transfer twice. report.c's vllm:request_decode_time_seconds is a
 * replica's view instead (prefill_end to last token, so prefill + decode = inference
 * time); the two differ only in a disaggregated run (docs/simulator.md). */
static double ph_decode(const sv_req_t *r)
{
    return r->last_token - r->first_token;
}
static double xfer_start(const sv_req_t *r)
{
    return r->xfer_start >= 0 ? r->xfer_start : r->prefill_end;
}
static double xfer_end(const sv_req_t *r)
{
    return r->xfer_end >= 0 ? r->xfer_end : r->prefill_end;
}
static double ph_xfer_wait(const sv_req_t *r)
{
    return xfer_start(r) - r->prefill_end;
}
static double ph_xfer(const sv_req_t *r)
{
    return xfer_end(r) - xfer_start(r);
}
static double ph_decode_queue(const sv_req_t *r)
{
    double xe = xfer_end(r);
    return (r->decode_start >= 0 ? r->decode_start : xe) - xe;
}

/* The per-request distributions of the summary: where each goes, how it is read off a
 * completed request, and whether only requests with more than one output token count
 * (TPOT, as vLLM). */
static const struct {
    size_t off; /* of its sv_stat_t in sv_summary_t */
    double (*get)(const sv_req_t *r);
    int multi_token_only;
} DISTS[] = {
    {offsetof(sv_summary_t, ttft), ph_ttft, 0},
    {offsetof(sv_summary_t, tpot), ph_tpot, 1},
    {offsetof(sv_summary_t, e2el), ph_e2el, 0},
    {offsetof(sv_summary_t, queue), ph_queue, 0},
    {offsetof(sv_summary_t, prefill), ph_prefill, 0},
    {offsetof(sv_summary_t, decode), ph_decode, 0},
    {offsetof(sv_summary_t, xfer_wait), ph_xfer_wait, 0},
    {offsetof(sv_summary_t, xfer), ph_xfer, 0},
    {offsetof(sv_summary_t, decode_queue), ph_decode_queue, 0},
};
#define NDISTS (sizeof DISTS / sizeof DISTS[0])

/* Every DISTS[d].get(r) into x[d], the calls written out (direct, so inlined): the exact
 * summary's loop over the records. */
/* DISTS's reads of r into x, the three phases of disaggregated serving only when
 * transfers (otherwise x[6..8] are left as they are: nothing reads them). */
static inline void phases_of(const sv_req_t *r, double *x, int transfers)
{
    _Static_assert(NDISTS == 9, "phases_of lists every row of DISTS, in its order");
    x[0] = ph_ttft(r);
    x[1] = ph_tpot(r);
    x[2] = ph_e2el(r);
    x[3] = ph_queue(r);
    x[4] = ph_prefill(r);
    x[5] = ph_decode(r);
    if (!transfers) return;
    x[6] = ph_xfer_wait(r);
    x[7] = ph_xfer(r);
    x[8] = ph_decode_queue(r);
}

/* Goodput as vLLM's --goodput: a request is good when it meets every per-request SLO
 * (its TTFT, TPOT and E2EL in seconds). The thresholds in seconds, taken once per SLO
 * (the same quotients), and whether each is given. */
typedef struct good_th {
    double s[3];
    int none[3];
} good_th_t;

static void good_th_of(const sv_slo_t *th, good_th_t *g)
{
    const double ms[3] = {th->ttft_ms, th->tpot_ms, th->e2el_ms};
    for (int k = 0; k < 3; k++) {
        g->none[k] = isnan(ms[k]);
        g->s[k] = ms[k] / 1000.0;
    }
}

/* The counts out->good and out->good_by[0..3) of the requests judged. */
typedef struct good_count {
    long good, by[3];
} good_count_t;

static inline void good_add(const good_th_t *g, double ttft, double tpot, double e2el,
                            good_count_t *n)
{
    int g0 = g->none[0] || g->s[0] >= ttft;
    int g1 = g->none[1] || g->s[1] >= tpot;
    int g2 = g->none[2] || g->s[2] >= e2el;
    n->good += g0 && g1 && g2;
    n->by[0] += g0;
    n->by[1] += g1;
    n->by[2] += g2;
}

static void count_good_of(const sv_slo_t *th, double ttft, double tpot, double e2el,
                          sv_summary_t *out)
{
    good_th_t g;
    good_th_of(th, &g);
    good_count_t n = {0};
    good_add(&g, ttft, tpot, e2el, &n);
    out->good += n.good;
    for (int k = 0; k < 3; k++)
        out->good_by[k] += n.by[k];
}

static void count_good(const sv_slo_t *th, const sv_req_t *r, sv_summary_t *out)
{
    count_good_of(th, sv_req_ttft(r), sv_req_tpot(r), sv_req_e2el(r), out);
}

/* A min-heap of the end times of the requests in flight (4-ary: shallower, its children
 * in one cache line; equal times are interchangeable). */
typedef SV_HEAP_OF(double) heap_t;
static inline int end_less(const double *a, const double *b)
{
    return *a < *b;
}
SV_HEAP_DEFINE(endheap, heap_t, double, 4, end_less, SV_HEAP_UNTRACKED)

/* The exact summary's scratch: one block that its phases take their arrays from in turn
 * (the peak concurrency's, then the per-request metrics', then the ITL pool's), each phase
 * starting again at its beginning once the previous one is done with it. A large run then
 * touches the largest phase's pages once instead of every phase's anew: the kernel maps
 * and zeroes each page of a fresh allocation, which costs about as much CPU again as the
 * summary's own work at ten million requests (docs/performance.md, "Where memory goes"). */
typedef struct scratch {
    char *base; /* calloc'd: zero beyond dirty */
    size_t cap, used;
    size_t dirty; /* the end of the bytes ever taken */
} scratch_t;

/* n bytes of the scratch, 64-byte aligned; NULL when they do not fit (the sizes are
 * worked out before, so only a miscount gives NULL, reported as out of memory). */
static void *scratch_take(scratch_t *s, size_t n)
{
    size_t at = (s->used + 63) & ~(size_t)63;
    if (at > s->cap || n > s->cap - at) return NULL;
    s->used = at + n;
    if (s->used > s->dirty) s->dirty = s->used;
    return s->base + at;
}

/* scratch_take, zeroed: only the part an earlier phase took is cleared (the rest of a
 * calloc'd block is still zero). */
static void *scratch_zero(scratch_t *s, size_t n)
{
    size_t dirty = s->dirty;
    char *p = scratch_take(s, n);
    if (!p) return NULL;
    size_t at = (size_t)(p - s->base);
    if (at < dirty) memset(p, 0, dirty - at < n ? dirty - at : n);
    return p;
}

/* Room for n bytes taken whole, with its alignment. */
#define SCRATCH_ROOM(n) ((size_t)(n) + 64)

/* The bucket of time t of nb buckets from t0 (scale: nb over the span; top: nb - 1):
 * monotone in t. */
static inline size_t time_bucket(double t, double t0, double scale, double top)
{
    double f = (t - t0) * scale;
    return (size_t)(f < top ? f : top);
}

/* Peak concurrency of n requests sent in pool order (start[i] nondecreasing, end[i] >
 * start[i]; t1 the largest end): before request i starts, the ends at or before its start
 * have left, and none of them is of a request from i on (each ends after it starts), so
 * i + 1 less those ends are in flight. The ends are counted into nb time buckets
 * (bucket(t) is monotone in t: an end in an earlier bucket than a start is before it, one
 * in a later bucket after it), so at[b], the ends before bucket b, bounds the count at a
 * start of bucket b: at most i + 1 - at[b], at least i + 1 - at[b + 1]. The largest lower
 * bound is reached by some count; only the starts whose upper bound passes it (or the
 * largest one before them) can beat it, and only the ends in those starts' buckets are
 * gathered (in place, in end), sorted and compared with them. end is reordered. -1 when out of
 * memory or when the times give no buckets (a span of zero or not finite). */
static long peak_in_order(const double *start, double *end, size_t n, double t1, scratch_t *ws)
{
    if (n == 0) return 0;
    double t0 = start[0];
    size_t nb = n;
    double scale = (double)nb / (t1 - t0), top = (double)(nb - 1);
    if (!(t1 > t0) || !isfinite(scale)) return -1;
    uint32_t *at = scratch_zero(ws, (nb + 1) * sizeof *at); /* ends before bucket b, once summed */
    uint32_t *eb = scratch_take(ws, n * sizeof *eb);        /* each end's bucket */
    uint32_t *sb = scratch_take(ws, n * sizeof *sb);        /* the starts compared */
    double *emax = scratch_zero(ws, nb * sizeof *emax);     /* at least each bucket's last end */
    uint8_t *cmp = scratch_zero(ws, nb); /* the buckets whose ends are compared */
    if (!at || !eb || !sb || !emax || !cmp || n > UINT32_MAX) return -1;
    for (size_t i = 0; i < n; i++) {
        size_t b = time_bucket(end[i], t0, scale, top);
        eb[i] = (uint32_t)b;
        at[b + 1]++;
        emax[b] = end[i] > emax[b] ? end[i] : emax[b];
    }
    for (size_t b = 1; b <= nb; b++)
        at[b] += at[b - 1];
    /* The largest lower bound so far (that of the last start is at least 0), and the
     * starts whose upper bound passes it, unless every end of their bucket is at or
     * before them (their count is then their lower bound: a closed loop's start, at the
     * end of the request it replaces). */
    long peak = 0;
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        size_t b = time_bucket(start[i], t0, scale, top);
        long lo = (long)(i + 1) - (long)at[b + 1];
        peak = lo > peak ? lo : peak;
        if ((long)(i + 1) - (long)at[b] > peak && emax[b] > start[i]) {
            cmp[b] = 1;
            sb[ns++] = (uint32_t)i;
        }
    }
    size_t ne = 0;
    for (size_t i = 0; i < n; i++)
        if (cmp[eb[i]]) end[ne++] = end[i];
    sv_sort_doubles(end, ne);
    /* For a start s of bucket b: the ends gathered at or before it (p) less those of the
     * buckets before b (q) are its bucket's ends at or before it. */
    long best = peak;
    for (size_t k = 0, p = 0, q = 0; k < ns; k++) {
        size_t i = sb[k];
        double s = start[i];
        size_t b = time_bucket(s, t0, scale, top);
        while (p < ne && end[p] <= s)
            p++;
        while (q < ne && time_bucket(end[q], t0, scale, top) < b)
            q++;
        long c = (long)(i + 1) - (long)(at[b] + (p - q));
        best = c > best ? c : best;
    }
    return best;
}

/* Peak concurrency of the completed requests of the selection: a sweep over the half-open
 * [start, last token) of each, an end before a start at the same time. When they were
 * sent in pool order (open and closed loops, traces), peak_in_order; otherwise the sorted
 * starts and ends are merged. It runs before the summary's per-request arrays are made:
 * its arrays, taken from the start of the scratch ws, are not held with them. Sets *transfers when
 * a completed request of the selection has a phase of disaggregated serving. -1 when out of memory.
 */
static long peak_concurrency(const sv_reqpool_t *pool, int cls, int *transfers, scratch_t *ws)
{
    const sv_req_t *R = pool->r;
    size_t n = 0;
    int in_order = 1, tr = 0;
    double prev = -INFINITY, t1 = -INFINITY;
    /* (room for every request: the scratch is sized for it) */
    *transfers = 0;
    ws->used = 0;
    double *start = scratch_take(ws, (pool->n + 1) * sizeof *start);
    double *end = scratch_take(ws, (pool->n + 1) * sizeof *end);
    if (!start || !end) return -1;
    for (size_t i = 0; i < pool->n; i++)
        if (okc(&R[i], cls)) {
            /* (a request that ends as it starts would leave the sweep before it enters) */
            in_order &= R[i].start >= prev && R[i].last_token > R[i].start;
            prev = R[i].start;
            tr |= R[i].xfer_start >= 0 || R[i].xfer_end >= 0 || R[i].decode_start >= 0;
            start[n] = R[i].start;
            end[n++] = R[i].last_token;
            t1 = R[i].last_token > t1 ? R[i].last_token : t1;
        }
    *transfers = tr;
    long cur = 0, peak = in_order ? peak_in_order(start, end, n, t1, ws) : -1;
    if (peak < 0) {
        peak = 0;
        sv_sort_doubles(start, n);
        sv_sort_doubles(end, n);
        for (size_t i = 0, j = 0; i < n;) {
            if (j < n && end[j] <= start[i]) {
                cur--;
                j++;
            } else {
                if (++cur > peak) peak = cur;
                i++;
            }
        }
    }
    return peak;
}

/* The scratch peak_concurrency takes for n requests: their starts and ends, then
 * peak_in_order's bucket bounds, each end's and each start's bucket, the buckets' last
 * ends and the flags of the buckets compared. */
static size_t peak_scratch(size_t n)
{
    return 3 * SCRATCH_ROOM((n + 1) * sizeof(double)) + SCRATCH_ROOM((n + 1) * sizeof(uint32_t)) +
           2 * SCRATCH_ROOM(n * sizeof(uint32_t)) + SCRATCH_ROOM(n);
}

/* The SLO budget metric (SV_K_*) of DISTS[d], -1 for none. */
static int dist_metric(size_t d)
{
    return d == 0 ? SV_K_TTFT : d == 1 ? SV_K_TPOT : d == 2 ? SV_K_E2EL : -1;
}

/* The summary's percentiles then those of the budgets of the SLO on metric into p, the
 * budgets' indices into idx; the count. */
static int with_budgets(const sv_slo_t *slo, int metric, const sv_summary_t *out, double *p,
                        int *idx)
{
    int np = 0;
    for (int i = 0; i < out->npcts; i++)
        p[np++] = out->pcts[i];
    for (int b = 0; b < slo->nbudgets; b++)
        if (slo->budget[b].metric == metric) {
            idx[np - out->npcts] = b;
            p[np++] = slo->budget[b].pct;
        }
    return np;
}

/* The exact statistics of x[0..n) (or, with w, of the weighted pool w[0..n)) into st, in
 * ms, and the values of the SLO's budgets on metric into out->budget_ms. */
static int exact_stat(double *x, sv_wval_t *w, size_t n, double count, const sv_slo_t *slo,
                      int metric, sv_summary_t *out, sv_stat_t *st, double *top, sv_error_t *err)
{
    double p[SV_MAX_PCT + SV_MAX_BUDGETS], pv[SV_MAX_PCT + SV_MAX_BUDGETS];
    int idx[SV_MAX_BUDGETS];
    int np = with_budgets(slo, metric, out, p, idx);
    int rc = w ? sv__wstat_exact(w, n, count, p, np, 1e3, st, pv)
               : sv__stat_exact(x, n, p, np, 1e3, st, pv, top);
    if (rc) return sv_errorf(err, rc, "out of memory for the summary's percentiles");
    for (int i = 0; i < out->npcts; i++)
        st->pct[i] = pv[i];
    for (int i = out->npcts; i < np; i++)
        out->budget_ms[idx[i - out->npcts]] = pv[i];
    return 0;
}

/* The ITL pool and the per-second output-token bins, from the decode segments, the decode
 * steps of each replica and the single-token events. */
/* The ITL pool's entries: the single tokens, the segments' first gaps and the steps. */
static size_t itl_entries(const sv_metrics_t *m)
{
    size_t nw = m->nsingles + m->nsegs;
    for (int k = 0; k < m->replicas; k++)
        nw += m->dec[k].n;
    return nw;
}

/* The scratch summarize_itl takes: the coverage and weight difference arrays of every
 * replica's steps, and the pool itself when it is exact. */
static size_t itl_scratch(const sv_metrics_t *m, double alpha)
{
    size_t room = alpha > 0 ? 0 : SCRATCH_ROOM((itl_entries(m) + 1) * sizeof(sv_wval_t));
    for (int k = 0; k < m->replicas; k++)
        room += 2 * SCRATCH_ROOM((m->dec[k].n + 1) * sizeof(int32_t));
    return room;
}

static int summarize_itl(const sv_metrics_t *m, const sv_reqpool_t *pool, int cls,
                         const sv_slo_t *jslo, size_t nc, double min_start, double max_end,
                         double alpha, scratch_t *ws, sv_summary_t *out, sv_error_t *err)
{
    const sv_req_t *R = pool->r;
    int rc = 0;
    int32_t **cov = calloc((size_t)m->replicas, sizeof *cov);
    int32_t **wts = calloc((size_t)m->replicas, sizeof *wts);
    size_t nw = itl_entries(m);
    ws->used = 0; /* (the per-request arrays are done with) */
    /* The pool itself (exact), or its sketch (alpha > 0). */
    sv_sketch_t *sk = alpha > 0 ? sv_sketch_new(alpha) : NULL;
    sv_wval_t *w = sk ? NULL : scratch_take(ws, (nw + 1) * sizeof *w);
    bins_t bins;
    int bad = bins_init(&bins, nc ? ceil(max_end - min_start) + 1 : 0, nw + nc) || !cov || !wts ||
              (!w && !sk);
    for (int k = 0; k < m->replicas && !bad; k++) {
        size_t bytes = (m->dec[k].n + 1) * sizeof **cov;
        cov[k] = scratch_zero(ws, bytes);
        wts[k] = scratch_zero(ws, bytes);
        bad = !cov[k] || !wts[k];
    }
    if (bad) {
        rc = sv_errorf(err, SV_ENOMEM, "out of memory summarising the inter-token latencies");
    } else {
        size_t nwv = 0;
        double wsum = 0.0; /* of the pool's weights (each positive), in its order */
#define BIN(t) bins_add(&bins, sv_floor((t)-min_start), 1.0)
#define ITL(gap, weight)                                                                           \
    do {                                                                                           \
        if (sk) {                                                                                  \
            bad |= sv_sketch_add(sk, (gap), (weight));                                             \
        } else {                                                                                   \
            w[nwv++] = (sv_wval_t){(gap), (weight)};                                               \
            wsum += (weight);                                                                      \
        }                                                                                          \
    } while (0)
        for (size_t i = 0; i < pool->n; i++)
            if (okc(&R[i], cls)) BIN(R[i].first_token);
        for (size_t i = 0; i < m->nsingles; i++) {
            const single_t *s = &m->singles[i];
            if (!okc(&R[s->req], cls)) continue;
            ITL(s->gap, 1.0);
            BIN(s->t);
        }
        for (size_t i = 0; i < m->nsegs; i++) {
            const seg_t *s = &m->segs[i];
            if (!okc(&R[s->req], cls) || s->k1 <= s->k0) continue;
            if (isnan(s->t_join)) {
                /* Its first step made the request's first token: TTFT, not an ITL, and
                 * already binned with the first tokens. */
                cov[s->replica][s->k0 + 1]++;
            } else {
                ITL(m->dec[s->replica].t[s->k0] - s->t_join, 1.0);
                cov[s->replica][s->k0]++;
            }
            cov[s->replica][s->k1]--;
            wts[s->replica][s->k0 + 1]++;
            wts[s->replica][s->k1]--;
        }
        /* A replica's steps run in time order, so its tokens go to the bins by runs of
         * steps within one second [sec, sec + 1) (the second sv_floor gives each), summed
         * (whole numbers: exact in any order) and added once a run. */
        /* (the loop written twice, as STEPS(ITL) and STEPS(POOL): the exact pool's
         * appends without ITL's test for a sketch at every step) */
#define POOL(gap, weight)                                                                          \
    do {                                                                                           \
        w[nwv++] = (sv_wval_t){(gap), (weight)};                                                   \
        wsum += (weight);                                                                          \
    } while (0)
#define STEPS(ADD)                                                                                 \
    for (int k = 0; k < m->replicas; k++) {                                                        \
        long cv = 0, wv = 0, run = 0;                                                              \
        double sec = 0.0, next = -INFINITY;                                                        \
        const double *t = m->dec[k].t;                                                             \
        const int32_t *ck = cov[k], *wk = wts[k];                                                  \
        const size_t nk = m->dec[k].n;                                                             \
        for (size_t j = 0; j < nk; j++) {                                                          \
            cv += ck[j];                                                                           \
            wv += wk[j];                                                                           \
            if (cv > 0) {                                                                          \
                double d = t[j] - min_start;                                                       \
                if (!(d >= sec && d < next)) {                                                     \
                    if (run) bins_add(&bins, sec, (double)run);                                    \
                    sec = sv_floor(d);                                                             \
                    next = sec + 1.0;                                                              \
                    run = 0;                                                                       \
                }                                                                                  \
                run += cv;                                                                         \
            }                                                                                      \
            if (wv > 0) ADD(t[j] - t[j - 1], (double)wv);                                          \
        }                                                                                          \
        if (run) bins_add(&bins, sec, (double)run);                                                \
    }
        if (sk)
            STEPS(ITL)
        else
            STEPS(POOL)
#undef STEPS
#undef POOL
#undef BIN
#undef ITL
        out->max_output_tokens_per_s = bins_max(&bins);
        if (bad) {
            rc = sv_errorf(err, SV_ENOMEM, "out of memory for the inter-token latency sketch");
        } else if (sk) {
            itl_budgets(jslo, sk, out);
            sv_sketch_stat(sk, out->pcts, out->npcts, 1e3, &out->itl);
        } else {
            rc = exact_stat(NULL, w, nwv, wsum, jslo, SV_K_ITL, out, &out->itl, NULL, err);
        }
    }
    free(cov);
    free(wts);
    bins_free(&bins);
    sv_sketch_free(sk);
    return rc;
}

/* The summary of class cls (every request when cls < 0): per-request SLOs judged by each
 * request's class when the workload has classes and the whole is summarised. */
/* One per-request distribution of the summary: its values, for the exact statistics, or
 * their sketch. */
typedef struct dist {
    double *v;
    size_t n;
    sv_sketch_t *sk;
} dist_t;

static int dist_add(dist_t *d, double x)
{
    if (d->sk) return sv_sketch_add(d->sk, x, 1.0);
    d->v[d->n++] = x;
    return 0;
}

/* The relative error bound of the summary of n requests: 0 for exact percentiles. */
static double summary_alpha(const sv_metrics_cfg_t *c, size_t n)
{
    long max = c->exact_max > 0 ? c->exact_max : SV_EXACT_MAX;
    if (!c->sketch && n <= (size_t)max) return 0.0;
    return c->sketch_alpha > 0 ? c->sketch_alpha : SV_SKETCH_ALPHA;
}

static int summarize(const sv_metrics_t *m, const sv_reqpool_t *pool, int cls, sv_summary_t *out,
                     sv_error_t *err)
{
    memset(out, 0, sizeof *out);
    const sv_metrics_cfg_t *c = &m->cfg;
    sv_slo_t jslo;
    sv_metrics_slo(c, cls, &jslo);
    int byclass = cls < 0 && c->nclasses > 0;
    size_t n = pool->n;
    const sv_req_t *R = pool->r;
    summary_percentiles(c, out);
    double alpha = summary_alpha(c, n);
    out->sketch_alpha = alpha;
    /* The scratch for the largest of the three phases: the peak concurrency's five arrays,
     * the per-request arrays (exact), the ITL pool's. */
    size_t peak_room = peak_scratch(n);
    size_t dist_room = alpha > 0 ? 0 : NDISTS * SCRATCH_ROOM((n + 1) * sizeof(double));
    size_t itl_room = itl_scratch(m, alpha);
    scratch_t ws = {.cap = peak_room > dist_room ? peak_room : dist_room};
    if (itl_room > ws.cap) ws.cap = itl_room;
    ws.base = calloc(1, ws.cap);
    if (!ws.base) return sv_errorf(err, SV_ENOMEM, "out of memory summarising %zu requests", n);
    int transfers;
    long peak = peak_concurrency(pool, cls, &transfers, &ws); /* (before the arrays below) */
    /* Without a phase of disaggregated serving, the last three are zeros (x - x): their
     * arrays are not made. */
    size_t nd = alpha > 0 || transfers ? NDISTS : NDISTS - 3;

    dist_t v[NDISTS] = {{0}};
    int rc = 0, bad = 0;
    ws.used = 0; /* (the peak concurrency's arrays are done with) */
    for (size_t d = 0; d < nd; d++)
        if (alpha > 0)
            bad |= !(v[d].sk = sv_sketch_new(alpha));
        else
            bad |= !(v[d].v = scratch_take(&ws, (n + 1) * sizeof *v[d].v));
    if (bad) {
        rc = sv_errorf(err, SV_ENOMEM, "out of memory summarising %zu requests", n);
        goto done;
    }
    size_t nc = 0, ntpot = 0;
    double min_start = INFINITY, max_end = -INFINITY, duration = 0.0;
    int slo = has_thresholds(&jslo);
    for (int k = 0; byclass && k < c->nclasses; k++)
        slo |= has_thresholds(&c->class_slo[k]);
    good_th_t gj, gcls[SV_MAX_CLASSES];
    good_th_of(&jslo, &gj);
    for (int k = 0; byclass && k < c->nclasses; k++)
        good_th_of(&c->class_slo[k], &gcls[k]);
    good_count_t good = {0};
    for (size_t i = 0; i < n; i++) {
        const sv_req_t *r = &R[i];
        if (r->end > duration) duration = r->end;
        if (cls >= 0 && r->cls != cls) continue;
        if (!ok(r)) {
            out->failed++;
            out->failed_by[r->fail < SV_FAIL_COUNT ? r->fail : 0]++;
            continue;
        }
        double x[NDISTS]; /* (DISTS's reads written out; exact: straight into the arrays) */
        if (alpha > 0) {
            phases_of(r, x, 1);
            for (size_t d = 0; d < NDISTS; d++)
                if (!DISTS[d].multi_token_only || r->output > 1) bad |= dist_add(&v[d], x[d]);
            double ttft = x[0] * 1e3, tpot = r->output > 1 ? x[1] * 1e3 : 0.0;
            if (isfinite(ttft) && ttft > out->max_ttft_ms) out->max_ttft_ms = ttft;
            if (isfinite(tpot) && tpot > out->max_tpot_ms) out->max_tpot_ms = tpot;
        } else {
            _Static_assert(NDISTS == 9, "TPOT (DISTS[1]) is the one multi_token_only");
            phases_of(r, x, transfers);
            v[0].v[nc] = x[0];
            v[1].v[ntpot] = x[1];
            ntpot += r->output > 1;
            for (size_t d = 2; d < NDISTS - 3; d++)
                v[d].v[nc] = x[d];
            if (transfers) /* (the last three read only then, below) */
                for (size_t d = NDISTS - 3; d < NDISTS; d++)
                    v[d].v[nc] = x[d];
        }
        nc++;
        out->total_input += r->input;
        out->total_output += r->output;
        if (slo)
            good_add(byclass && r->cls < c->nclasses ? &gcls[r->cls] : &gj, x[0], x[1], x[2],
                     &good); /* (x: ttft, tpot, e2el) */
        if (r->start < min_start) min_start = r->start;
        /* start + latency, taken as the exact end time: recomputing it as a sum can round
         * past the start of a request sent at that very instant (closed loops). */
        if (r->last_token > max_end) max_end = r->last_token;
    }
    if (alpha == 0)
        for (size_t d = 0; d < NDISTS; d++)
            v[d].n = d == 1 ? ntpot : nc;
    out->good = good.good;
    for (int k = 0; k < 3; k++)
        out->good_by[k] = good.by[k];
    out->completed = (long)nc;
    out->duration = duration;
    if (duration > 0) {
        out->request_throughput = (double)nc / duration;
        out->output_throughput = (double)out->total_output / duration;
        out->total_token_throughput = (double)(out->total_input + out->total_output) / duration;
        out->request_goodput = slo ? (double)out->good / duration : NAN;
    } else {
        out->request_goodput = slo ? 0.0 : NAN;
    }
    out->max_concurrent_requests = peak;
    if (bad || out->max_concurrent_requests < 0) {
        rc = sv_errorf(err, SV_ENOMEM, "out of memory summarising %zu requests", n);
        goto done;
    }
    for (size_t d = 0; d < NDISTS && !rc; d++) {
        sv_stat_t *st = (sv_stat_t *)((char *)out + DISTS[d].off);
        if (alpha > 0) {
            sv_sketch_stat(v[d].sk, out->pcts, out->npcts, 1e3, st);
        } else if (d < nd) {
            double top = 0.0; /* (the largest TTFT and TPOT, from the selection's range) */
            rc = exact_stat(v[d].v, NULL, v[d].n, 0.0, &jslo, dist_metric(d), out, st,
                            d < 2 ? &top : NULL, err);
            if (d == 0) out->max_ttft_ms = top * 1e3;
            if (d == 1) out->max_tpot_ms = top * 1e3;
        } else {
            st->n = (long)nc; /* zeros: numpy's statistics of a list of zeros */
        }
    }
    for (int b = 0; alpha > 0 && b < jslo.nbudgets; b++) {
        const sv_budget_t *bg = &jslo.budget[b];
        const dist_t *d = &v[bg->metric == SV_K_TTFT ? 0 : bg->metric == SV_K_TPOT ? 1 : 2];
        if (bg->metric != SV_K_ITL) out->budget_ms[b] = sv_sketch_percentile(d->sk, bg->pct) * 1e3;
    }
    if (!rc) rc = summarize_itl(m, pool, cls, &jslo, nc, min_start, max_end, alpha, &ws, out, err);
done:
    for (size_t d = 0; d < NDISTS; d++)
        sv_sketch_free(v[d].sk);
    free(ws.base);
    return rc;
}

int sv_metrics_summarize(const sv_metrics_t *m, const sv_reqpool_t *pool, sv_summary_t *out,
                         sv_error_t *err)
{
    if (m->st) return stream_summarize(m, out, err);
    return summarize(m, pool, -1, out, err);
}

int sv_metrics_summarize_class(const sv_metrics_t *m, const sv_reqpool_t *pool, int cls,
                               sv_summary_t *out, sv_error_t *err)
{
    if (cls < 0 || cls >= m->cfg.nclasses)
        return sv_errorf(err, SV_EINVAL, "no request class %d", cls);
    return summarize(m, pool, cls, out, err);
}

/* ---- per-request ITL lists ------------------------------------------------------------ */

static int build_index(sv_metrics_t *m, size_t nreq)
{
    if (m->seg_first) return 0;
    m->seg_first = malloc((nreq + 1) * sizeof *m->seg_first);
    m->single_first = malloc((nreq + 1) * sizeof *m->single_first);
    m->seg_next = malloc((m->nsegs + 1) * sizeof *m->seg_next);
    m->single_next = malloc((m->nsingles + 1) * sizeof *m->single_next);
    if (!m->seg_first || !m->single_first || !m->seg_next || !m->single_next) return SV_ENOMEM;
    for (size_t i = 0; i < nreq; i++)
        m->seg_first[i] = m->single_first[i] = -1;
    /* Prepend in reverse so each list runs in recording (time) order. */
    for (size_t i = m->nsegs; i-- > 0;) {
        m->seg_next[i] = m->seg_first[m->segs[i].req];
        m->seg_first[m->segs[i].req] = (int32_t)i;
    }
    for (size_t i = m->nsingles; i-- > 0;) {
        m->single_next[i] = m->single_first[m->singles[i].req];
        m->single_first[m->singles[i].req] = (int32_t)i;
    }
    return 0;
}

static size_t runs_of(const sv_metrics_t *m, const sv_req_t *r, int32_t s, int32_t g,
                      sv_itl_run_t *out);

/* Room for the runs of the segments from s and single tokens from g (chained through
 * seg_next and single_next): two per segment at most (its join gap and its steps), one
 * per single token. */
static size_t runs_room(const sv_metrics_t *m, int32_t s, int32_t g)
{
    size_t n = 0;
    for (; s >= 0; s = m->seg_next[s])
        n += 2;
    for (; g >= 0; g = m->single_next[g])
        n++;
    return n;
}

/* The gaps of runs[0..n) into v; how many. */
static size_t expand_runs(const sv_metrics_t *m, const sv_itl_run_t *runs, size_t n, double *v)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const sv_itl_run_t *u = &runs[i];
        if (u->stream < 0) {
            v[k++] = u->v;
            continue;
        }
        const steps_t *t = &m->dec[u->stream];
        for (int64_t j = u->k0; j < u->k1; j++)
            v[k++] = step_t(t, j) - step_t(t, j - 1);
    }
    return k;
}

int sv_metrics_itl_runs(const sv_metrics_t *cm, const sv_reqpool_t *pool, int32_t req,
                        sv_itl_run_t **runs, size_t *cap, size_t *n)
{
    sv_metrics_t *m = (sv_metrics_t *)cm; /* the index is a cache */
    *n = 0;
    const sv_req_t *r = sv_reqpool_req(pool, req);
    if (m->st) return SV_EINVAL; /* streaming mode keeps no per-request ITLs */
    if (!ok(r) || r->output <= 1) return 0;
    if (build_index(m, pool->n)) return SV_ENOMEM;
    size_t room = runs_room(m, m->seg_first[req], m->single_first[req]);
    if (SV_GROW(*runs, *cap, room + 1)) return SV_ENOMEM;
    *n = runs_of(m, r, m->seg_first[req], m->single_first[req], *runs);
    return 0;
}

int sv_metrics_itls(const sv_metrics_t *cm, const sv_reqpool_t *pool, int32_t req, double **out,
                    size_t *n)
{
    *out = NULL;
    *n = 0;
    sv_itl_run_t *runs = NULL;
    size_t cap = 0, nr = 0;
    int rc = sv_metrics_itl_runs(cm, pool, req, &runs, &cap, &nr);
    if (rc || nr == 0) {
        free(runs);
        return rc;
    }
    const sv_req_t *r = sv_reqpool_req(pool, req);
    double *v = malloc((size_t)(r->output - 1) * sizeof *v);
    if (!v) {
        free(runs);
        return SV_ENOMEM;
    }
    *n = expand_runs(cm, runs, nr, v);
    free(runs);
    *out = v;
    return 0;
}

int sv_metrics_nstreams(const sv_metrics_t *m)
{
    return m->replicas;
}

const double *sv_metrics_steps(const sv_metrics_t *m, int s, size_t *n)
{
    *n = 0;
    if (m->st || s < 0 || s >= m->replicas) return NULL;
    *n = m->dec[s].n;
    return m->dec[s].t;
}

/* The token gaps of completed request r (output > 1) as runs into out: its segments from
 * s and single tokens from g, chained through seg_next and single_next, at most output - 1
 * gaps in all. A segment's first gap is from the token before it (its join, t_join) to its
 * first step, unless that step made the request's first token (no gap); each later one is
 * a step's time less the step before's. */
static size_t runs_of(const sv_metrics_t *m, const sv_req_t *r, int32_t s, int32_t g,
                      sv_itl_run_t *out)
{
    size_t n = 0, k = 0, most = (size_t)(r->output - 1);
    /* Segments and singles alternate in time; merge them by their start times. */
    while ((s >= 0 || g >= 0) && k < most) {
        if (g >= 0 && (s < 0 || m->singles[g].t <= m->segs[s].t_join)) {
            out[n++] = (sv_itl_run_t){.stream = -1, .v = m->singles[g].gap};
            k++;
            g = m->single_next[g];
            continue;
        }
        const seg_t *sg = &m->segs[s];
        int64_t j = sg->k0;
        if (j < sg->k1) {
            if (isnan(sg->t_join)) {
                j++; /* the first token: no gap */
            } else {
                out[n++] =
                    (sv_itl_run_t){.stream = -1, .v = step_t(&m->dec[sg->replica], j) - sg->t_join};
                k++;
                j++;
            }
        }
        int64_t end = sg->k1;
        if (k < most && end > j) {
            if ((size_t)(end - j) > most - k) end = j + (int64_t)(most - k);
            out[n++] = (sv_itl_run_t){.stream = sg->replica, .k0 = j, .k1 = end};
            k += (size_t)(end - j);
        }
        s = m->seg_next[s];
    }
    return n;
}

/* ---- streaming mode ------------------------------------------------------------------- */

/*
 * With sketches chosen (cfg.sketch) and no request classes, the collector forgets each
 * request as it ends (sv_metrics_request_end): its per-request values go into the
 * summary's sketches, its segments and single tokens (chained per request, found through
 * a map kept only for requests in flight) into the ITL sketch and the per-second bins, and
 * their slots are reused. A replica's decode steps below its oldest segment still needed
 * are counted (their coverage is final: every segment over them has ended) and dropped.
 * Peak concurrency is swept in event order: a completed request's [start, last token) is
 * final once every request sent before it has ended, so the sweep runs up to the start of
 * the oldest request in flight. Memory follows the requests in flight (and the window
 * between the oldest of them and the newest), not the run.
 */

typedef struct chain {
    int32_t id;            /* -1: empty slot of the map */
    int32_t seg, seg_tail; /* its segments in opening order (seg_next), -1 terminated */
    int32_t sg, sg_tail;   /* its single tokens (single_next) */
    int64_t seq;           /* its place in the ring of requests sent; -1 when never sent */
} chain_t;

#define STREAM_DENSE_BINS ((size_t)1 << 22) /* seconds binned densely; later ones sparsely */

struct stream {
    sv_sketch_t *dist[NDISTS], *itl;
    chain_t *map; /* open addressing, linear probing; mcap a power of two */
    size_t mcap, mn;
    int32_t seg_free, single_free; /* chains of free slots */
    size_t cap_seg_next, cap_single_next;
    /* requests sent, in sending (so start) order: seq fhead .. ftail - 1 of a ring; each
     * one's start, its last token once it completed (NAN when it failed) and whether it
     * has ended; the sweep has taken those before fswept */
    double *fstart, *fend;
    uint8_t *fdone;
    int64_t fswept, fhead, ftail;
    size_t fcap; /* a power of two */
    heap_t act;  /* ends of the swept requests still open */
    long peak;
    double t0; /* the first start: the origin of the per-second bins */
    int started;
    double *bin; /* output tokens per second from t0 */
    size_t capbin;
    sv_wval_t *far; /* seconds past the dense bins: (second, tokens) */
    size_t nfar, capfar;
    double *itlbuf;       /* one request's token gaps, for cfg.on_end */
    sv_itl_run_t *runbuf; /* ... as runs first */
    size_t caprun;
    size_t capitl;
    sv_summary_t tot; /* counts, totals, goodput counts, duration */
    sv_slo_t slo;
    int has_slo;
};

static int stream_new(sv_metrics_t *m)
{
    stream_t *st = calloc(1, sizeof *st);
    if (!st) return SV_ENOMEM;
    m->st = st;
    double a = m->cfg.sketch_alpha > 0 ? m->cfg.sketch_alpha : SV_SKETCH_ALPHA;
    int bad = !(st->itl = sv_sketch_new(a));
    for (size_t d = 0; d < NDISTS; d++)
        bad |= !(st->dist[d] = sv_sketch_new(a));
    st->mcap = 1024;
    st->fcap = 1024;
    st->map = malloc(st->mcap * sizeof *st->map);
    st->fstart = malloc(st->fcap * sizeof *st->fstart);
    st->fend = malloc(st->fcap * sizeof *st->fend);
    st->fdone = malloc(st->fcap);
    if (bad || !st->map || !st->fstart || !st->fend || !st->fdone) return SV_ENOMEM;
    for (size_t i = 0; i < st->mcap; i++)
        st->map[i].id = -1;
    st->seg_free = st->single_free = -1;
    sv_metrics_slo(&m->cfg, -1, &st->slo);
    st->has_slo = has_thresholds(&st->slo);
    return 0;
}

static void stream_free(sv_metrics_t *m)
{
    stream_t *st = m->st;
    for (int i = 0; m->dec && i < m->replicas; i++) {
        free(m->dec[i].cov);
        free(m->dec[i].wts);
        free(m->dec[i].live);
    }
    if (!st) return;
    for (size_t d = 0; d < NDISTS; d++)
        sv_sketch_free(st->dist[d]);
    sv_sketch_free(st->itl);
    free(st->map);
    free(st->fstart);
    free(st->fend);
    free(st->fdone);
    free(st->act.v);
    free(st->bin);
    free(st->far);
    free(st->itlbuf);
    free(st->runbuf);
    free(st);
    m->st = NULL;
}

/* Room for difference-array index need - 1 (zeroed). */
static int stream_grow(steps_t *s, size_t need)
{
    if (need <= s->capd) return 0;
    size_t cap = s->capd ? s->capd : 64;
    while (cap < need)
        cap *= 2;
    int32_t *c = realloc(s->cov, cap * sizeof *c);
    if (!c) return SV_ENOMEM;
    s->cov = c;
    int32_t *w = realloc(s->wts, cap * sizeof *w);
    if (!w) return SV_ENOMEM;
    s->wts = w;
    memset(s->cov + s->capd, 0, (cap - s->capd) * sizeof *c);
    memset(s->wts + s->capd, 0, (cap - s->capd) * sizeof *w);
    s->capd = cap;
    return 0;
}

static size_t map_slot(const stream_t *st, int32_t id)
{
    return ((uint32_t)id * 2654435761u) & (st->mcap - 1);
}

static long map_find(const stream_t *st, int32_t id)
{
    for (size_t i = map_slot(st, id);; i = (i + 1) & (st->mcap - 1)) {
        if (st->map[i].id == id) return (long)i;
        if (st->map[i].id < 0) return -1;
    }
}

/* The chain of request id, made empty when it has none; NULL when out of memory. */
static chain_t *map_get(stream_t *st, int32_t id)
{
    long f = map_find(st, id);
    if (f >= 0) return &st->map[f];
    if (2 * (st->mn + 1) > st->mcap) {
        chain_t *old = st->map;
        size_t ocap = st->mcap;
        chain_t *nm = malloc(2 * ocap * sizeof *nm);
        if (!nm) return NULL;
        st->map = nm;
        st->mcap = 2 * ocap;
        for (size_t i = 0; i < st->mcap; i++)
            nm[i].id = -1;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].id >= 0) {
                size_t j = map_slot(st, old[i].id);
                while (nm[j].id >= 0)
                    j = (j + 1) & (st->mcap - 1);
                nm[j] = old[i];
            }
        free(old);
    }
    size_t j = map_slot(st, id);
    while (st->map[j].id >= 0)
        j = (j + 1) & (st->mcap - 1);
    st->map[j] = (chain_t){.id = id, .seg = -1, .seg_tail = -1, .sg = -1, .sg_tail = -1, .seq = -1};
    st->mn++;
    return &st->map[j];
}

/* Remove slot i, shifting back the entries that probed past it. */
static void map_del(stream_t *st, size_t i)
{
    size_t mask = st->mcap - 1;
    st->map[i].id = -1;
    st->mn--;
    for (size_t j = (i + 1) & mask; st->map[j].id >= 0; j = (j + 1) & mask) {
        size_t h = map_slot(st, st->map[j].id);
        /* j's entry may move to the hole at i unless its home lies in (i, j] */
        int stay = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (stay) continue;
        st->map[i] = st->map[j];
        st->map[j].id = -1;
        i = j;
    }
}

/* Append segment slot to replica d's ring of live segments. */
static int live_push(steps_t *d, int32_t slot)
{
    if (d->ln == d->lcap) {
        size_t cap = d->lcap ? 2 * d->lcap : 64;
        int32_t *r = malloc(cap * sizeof *r);
        if (!r) return SV_ENOMEM;
        for (size_t i = 0; i < d->ln; i++)
            r[i] = d->live[(d->lhead + i) & (d->lcap - 1)];
        free(d->live);
        d->live = r;
        d->lcap = cap;
        d->lhead = 0;
    }
    d->live[(d->lhead + d->ln++) & (d->lcap - 1)] = slot;
    return 0;
}

/* A slot of arr (n used, elem bytes each) and of its chain array next: a free one, else a
 * new one; -1 when out of memory. */
static int32_t slot_take(int32_t *free_head, int32_t **next, size_t *capnext, void **arr,
                         size_t *cap, size_t *n, size_t elem)
{
    int32_t slot = *free_head;
    if (slot >= 0) {
        *free_head = (*next)[slot];
        return slot;
    }
    if (*n >= INT32_MAX || sv__grow(arr, cap, *n + 1, elem) ||
        sv__grow((void **)next, capnext, *n + 1, sizeof **next))
        return -1;
    return (int32_t)(*n)++;
}

/* Append slot to the chain head .. tail linked through next. */
static void chain_append(int32_t *head, int32_t *tail, int32_t *next, int32_t slot)
{
    next[slot] = -1;
    if (*tail >= 0)
        next[*tail] = slot;
    else
        *head = slot;
    *tail = slot;
}

static int32_t stream_seg_open(sv_metrics_t *m, int32_t req, int replica, int64_t k0, double t_join)
{
    stream_t *st = m->st;
    int32_t slot = slot_take(&st->seg_free, &m->seg_next, &st->cap_seg_next, (void **)&m->segs,
                             &m->capsegs, &m->nsegs, sizeof *m->segs);
    chain_t *c = slot < 0 ? NULL : map_get(st, req);
    if (!c || live_push(&m->dec[replica], slot)) {
        m->oom = 1;
        return -1;
    }
    m->segs[slot] = (seg_t){.req = req, .replica = replica, .k0 = k0, .k1 = -1, .t_join = t_join};
    chain_append(&c->seg, &c->seg_tail, m->seg_next, slot);
    return slot;
}

static int stream_single(sv_metrics_t *m, int32_t req, double t, double gap)
{
    stream_t *st = m->st;
    int32_t slot =
        slot_take(&st->single_free, &m->single_next, &st->cap_single_next, (void **)&m->singles,
                  &m->capsingles, &m->nsingles, sizeof *m->singles);
    chain_t *c = slot < 0 ? NULL : map_get(st, req);
    if (!c) {
        m->oom = 1;
        return SV_ENOMEM;
    }
    m->singles[slot] = (single_t){.req = req, .t = t, .gap = gap};
    chain_append(&c->sg, &c->sg_tail, m->single_next, slot);
    return 0;
}

static void stream_bin(sv_metrics_t *m, double t, double tokens)
{
    stream_t *st = m->st;
    double x = sv_floor(t - st->t0);
    if (!(x >= 0)) return;
    if (x < (double)STREAM_DENSE_BINS) {
        size_t k = (size_t)x;
        if (k >= st->capbin) {
            size_t cap = st->capbin ? st->capbin : 1024, old = st->capbin;
            while (cap <= k)
                cap *= 2;
            double *b = realloc(st->bin, cap * sizeof *b);
            if (!b) {
                m->oom = 1;
                return;
            }
            memset(b + old, 0, (cap - old) * sizeof *b);
            st->bin = b;
            st->capbin = cap;
        }
        st->bin[k] += tokens;
    } else if (SV_GROW(st->far, st->capfar, st->nfar + 1)) {
        m->oom = 1;
    } else {
        st->far[st->nfar++] = (sv_wval_t){x, tokens};
    }
}

static void stream_itl(sv_metrics_t *m, double gap, double w)
{
    if (sv_sketch_add(m->st->itl, gap, w)) m->oom = 1;
}

/* Count replica d's steps below upto (their coverage is final) and drop those no longer
 * needed (one is kept below the first uncounted step, for its gap). */
static void steps_flush(sv_metrics_t *m, steps_t *d, int64_t upto)
{
    for (int64_t j = d->done; j < upto; j++) {
        size_t i = (size_t)(j - d->base);
        d->cv += d->cov[i];
        d->wv += d->wts[i];
        if (d->cv > 0) stream_bin(m, d->t[i], (double)d->cv);
        if (d->wv > 0) stream_itl(m, d->t[i] - d->t[i - 1], (double)d->wv);
    }
    if (upto > d->done) d->done = upto;
    int64_t drop = d->done - 1 - d->base;
    size_t len = d->n - (size_t)d->base + 1; /* difference entries in use */
    if (drop <= 0 || (size_t)drop < len / 2) return;
    memmove(d->t, d->t + drop, (d->n - (size_t)d->base - (size_t)drop) * sizeof *d->t);
    memmove(d->cov, d->cov + drop, (len - (size_t)drop) * sizeof *d->cov);
    memmove(d->wts, d->wts + drop, (len - (size_t)drop) * sizeof *d->wts);
    memset(d->cov + len - drop, 0, (size_t)drop * sizeof *d->cov);
    memset(d->wts + len - drop, 0, (size_t)drop * sizeof *d->wts);
    d->base += drop;
}

/* Recycle the ended segments at the head of replica d's ring; count its steps below the
 * oldest segment left. */
static void steps_trim(sv_metrics_t *m, steps_t *d)
{
    stream_t *st = m->st;
    while (d->ln) {
        int32_t slot = d->live[d->lhead];
        seg_t *s = &m->segs[slot];
        if (s->req >= 0) break;
        d->lhead = (d->lhead + 1) & (d->lcap - 1);
        d->ln--;
        if (s->k1 >= 0) { /* (a segment its engine never closed keeps its slot) */
            m->seg_next[slot] = st->seg_free;
            st->seg_free = slot;
        }
    }
    int64_t bound = d->ln ? m->segs[d->live[d->lhead]].k0 : (int64_t)d->n;
    if (bound > d->done) steps_flush(m, d, bound);
}

/* Sweep the completed requests sent before the oldest one in flight, in start order: the
 * same sweep as the exact summary's, an end before a start at the same time. (One sent at
 * the same time as the oldest in flight is swept later: every interval over that instant
 * is known by then, and the peak is a maximum.) */
static void sweep(sv_metrics_t *m)
{
    stream_t *st = m->st;
    int64_t mask = (int64_t)st->fcap - 1;
    while (st->fhead < st->ftail && st->fdone[st->fhead & mask])
        st->fhead++;
    for (; st->fswept < st->fhead; st->fswept++) {
        double start = st->fstart[st->fswept & mask], end = st->fend[st->fswept & mask];
        if (isnan(end)) continue;
        while (st->act.n && st->act.v[0] <= start)
            endheap_pop(&st->act, NULL);
        if (end > start && endheap_push(&st->act, NULL, end)) m->oom = 1;
        if ((long)st->act.n > st->peak) st->peak = (long)st->act.n;
    }
}

void sv_metrics_request_start(sv_metrics_t *m, int32_t id, const sv_req_t *r)
{
    stream_t *st = m->st;
    if (!st) return;
    if (!st->started) {
        st->t0 = r->start;
        st->started = 1;
    }
    if ((size_t)(st->ftail - st->fswept) == st->fcap) {
        size_t cap = 2 * st->fcap;
        double *fs = malloc(cap * sizeof *fs), *fe = malloc(cap * sizeof *fe);
        uint8_t *fd = malloc(cap);
        if (!fs || !fe || !fd) {
            free(fs);
            free(fe);
            free(fd);
            m->oom = 1;
            return;
        }
        for (int64_t q = st->fswept; q < st->ftail; q++) {
            fs[q & (int64_t)(cap - 1)] = st->fstart[q & (int64_t)(st->fcap - 1)];
            fe[q & (int64_t)(cap - 1)] = st->fend[q & (int64_t)(st->fcap - 1)];
            fd[q & (int64_t)(cap - 1)] = st->fdone[q & (int64_t)(st->fcap - 1)];
        }
        free(st->fstart);
        free(st->fend);
        free(st->fdone);
        st->fstart = fs;
        st->fend = fe;
        st->fdone = fd;
        st->fcap = cap;
    }
    chain_t *c = map_get(st, id);
    if (!c) {
        m->oom = 1;
        return;
    }
    int64_t q = st->ftail++;
    st->fstart[q & (int64_t)(st->fcap - 1)] = r->start;
    st->fdone[q & (int64_t)(st->fcap - 1)] = 0;
    st->fend[q & (int64_t)(st->fcap - 1)] = NAN;
    c->seq = q;
}

/* Request id ends: cfg.on_end sees it with its token gaps (none unless it completed with
 * more than one output token), before its chains are folded and forgotten. */
static void stream_report(sv_metrics_t *m, const sv_req_t *r, int32_t id, const chain_t *c,
                          int done)
{
    stream_t *st = m->st;
    size_t n = 0;
    if (done && r->output > 1 && m->cfg.end_itls) {
        if (SV_GROW(st->itlbuf, st->capitl, (size_t)(r->output - 1)) ||
            SV_GROW(st->runbuf, st->caprun, runs_room(m, c->seg, c->sg) + 1)) {
            m->oom = 1;
            return;
        }
        n = expand_runs(m, st->runbuf, runs_of(m, r, c->seg, c->sg, st->runbuf), st->itlbuf);
    }
    m->cfg.on_end(m->cfg.out_ctx, id, r, st->itlbuf, n);
}

void sv_metrics_request_end(sv_metrics_t *m, const sv_req_t *r, int32_t id)
{
    stream_t *st = m->st;
    if (!st) return;
    sv_summary_t *t = &st->tot;
    if (r->end > t->duration) t->duration = r->end;
    long f = map_find(st, id);
    chain_t c = {.id = id, .seg = -1, .sg = -1, .seq = -1};
    if (f >= 0) {
        c = st->map[f];
        map_del(st, (size_t)f);
    }
    int done = ok(r);
    if (m->cfg.on_end) stream_report(m, r, id, &c, done);
    if (done) {
        for (size_t d = 0; d < NDISTS; d++)
            if (!DISTS[d].multi_token_only || r->output > 1)
                if (sv_sketch_add(st->dist[d], DISTS[d].get(r), 1.0)) m->oom = 1;
        t->completed++;
        t->total_input += r->input;
        t->total_output += r->output;
        if (st->has_slo) count_good(&st->slo, r, t);
        double ttft = sv_req_ttft(r) * 1e3, tpot = r->output > 1 ? sv_req_tpot(r) * 1e3 : 0.0;
        if (ttft > t->max_ttft_ms) t->max_ttft_ms = ttft;
        if (tpot > t->max_tpot_ms) t->max_tpot_ms = tpot;
        stream_bin(m, r->first_token, 1.0);
    } else {
        t->failed++;
        t->failed_by[r->fail < SV_FAIL_COUNT ? r->fail : 0]++;
    }
    for (int32_t g = c.sg; g >= 0;) {
        int32_t next = m->single_next[g];
        if (done) {
            stream_itl(m, m->singles[g].gap, 1.0);
            stream_bin(m, m->singles[g].t, 1.0);
        }
        m->single_next[g] = st->single_free;
        st->single_free = g;
        g = next;
    }
    for (int32_t k = c.seg; k >= 0; k = m->seg_next[k]) {
        seg_t *s = &m->segs[k];
        steps_t *d = &m->dec[s->replica];
        if (done && s->k1 > s->k0) {
            if (isnan(s->t_join)) { /* its first step made the first token, binned above */
                d->cov[s->k0 + 1 - d->base]++;
            } else {
                stream_itl(m, step_t(d, s->k0) - s->t_join, 1.0);
                d->cov[s->k0 - d->base]++;
            }
            d->cov[s->k1 - d->base]--;
            d->wts[s->k0 + 1 - d->base]++;
            d->wts[s->k1 - d->base]--;
        }
        s->req = -1;
    }
    for (int32_t k = c.seg; k >= 0;) { /* (trimming may recycle k, so the next first) */
        int32_t next = m->seg_next[k];
        steps_trim(m, &m->dec[m->segs[k].replica]);
        k = next;
    }
    if (c.seq >= 0) {
        st->fdone[c.seq & (int64_t)(st->fcap - 1)] = 1;
        if (done) st->fend[c.seq & (int64_t)(st->fcap - 1)] = r->last_token;
        sweep(m);
    }
}

static int stream_summarize(const sv_metrics_t *cm, sv_summary_t *out, sv_error_t *err)
{
    sv_metrics_t *m = (sv_metrics_t *)cm; /* what is left is counted now, once */
    stream_t *st = m->st;
    for (int k = 0; k < m->replicas; k++)
        steps_flush(m, &m->dec[k], (int64_t)m->dec[k].n);
    st->fhead = st->ftail;
    sweep(m);
    if (m->oom) return sv_errorf(err, SV_ENOMEM, "out of memory in the streaming summary");
    *out = st->tot;
    memset(out->pcts, 0, sizeof out->pcts);
    out->npcts = 0;
    summary_percentiles(&m->cfg, out);
    out->sketch_alpha = sv_sketch_alpha(st->itl);
    double duration = out->duration;
    long nc = out->completed;
    if (duration > 0) {
        out->request_throughput = (double)nc / duration;
        out->output_throughput = (double)out->total_output / duration;
        out->total_token_throughput = (double)(out->total_input + out->total_output) / duration;
        out->request_goodput = st->has_slo ? (double)out->good / duration : NAN;
    } else {
        out->request_goodput = st->has_slo ? 0.0 : NAN;
    }
    out->max_concurrent_requests = st->peak;
    for (size_t d = 0; d < NDISTS; d++)
        sv_sketch_stat(st->dist[d], out->pcts, out->npcts, 1e3,
                       (sv_stat_t *)((char *)out + DISTS[d].off));
    for (int b = 0; b < st->slo.nbudgets; b++) {
        const sv_budget_t *bg = &st->slo.budget[b];
        int d = bg->metric == SV_K_TTFT ? 0 : bg->metric == SV_K_TPOT ? 1 : 2;
        if (bg->metric != SV_K_ITL)
            out->budget_ms[b] = sv_sketch_percentile(st->dist[d], bg->pct) * 1e3;
    }
    double best = 0.0;
    for (size_t i = 0; i < st->capbin; i++)
        if (st->bin[i] > best) best = st->bin[i];
    bins_t far = {.sparse = st->far, .ns = st->nfar};
    double b2 = st->nfar ? bins_max(&far) : 0.0;
    out->max_output_tokens_per_s = b2 > best ? b2 : best;
    sv_sketch_stat(st->itl, out->pcts, out->npcts, 1e3, &out->itl);
    itl_budgets(&st->slo, st->itl, out);
    return 0;
}

int sv_metrics_streaming(const sv_metrics_t *m)
{
    return m->st != NULL;
}
