/*
 * Unit tests of the metric definitions on small hand-made cases: every expected value
 * below is worked out by hand from vLLM's definitions (../shared/spec/metrics.md).
 * Times are binary fractions so the inclusive SLO comparisons are exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/stats_int.h"
#include "servesim/metrics/metrics.h"
#include "testutil.h"

static sv_req_t mkreq(double start, double first, double last, int in, int out, int state)
{
    sv_req_t r;
    memset(&r, 0, sizeof r);
    r.arrival = r.start = start;
    r.scheduled = start;
    r.first_token = first;
    r.last_token = last;
    r.end = last;
    r.prefill_end = first;
    r.xfer_start = r.xfer_end = r.decode_start = -1.0;
    r.input = in;
    r.output = out;
    r.state = (uint8_t)state;
    return r;
}

/*
 * Replica 0 runs decode steps ending at 0.25, 0.375, 0.5625, 0.75 (k = 0..3).
 *   R0: start 0,      first token 0.125, decodes in steps 0,1  -> 3 tokens, last 0.375
 *   R1: start 0.0625, first token 0.25,  decodes in steps 1..3 -> 4 tokens, last 0.75
 *   R2: start 0.5,    first token 0.75, output 1              -> no TPOT, no ITL
 *   R3: start 0.0625, failed (timeout) after decoding in steps 1,2: counts nowhere
 * TTFT  = [0.125, 0.1875, 0.25]
 * TPOT  = [(0.375-0.125)/2, (0.75-0.25)/3] = [0.125, 0.16667]
 * ITL   = R0 [0.125, 0.125], R1 [0.125, 0.1875, 0.1875]
 * E2EL  = [0.375, 0.6875, 0.25]; duration = last end = 0.75
 */
static void build(sv_metrics_t **mout, sv_reqpool_t *pool, double slo_ttft, double slo_tpot)
{
    sv_metrics_cfg_t cfg = {.percentiles = {99.0},
                            .npercentiles = 1,
                            .selected = SV_M_TTFT | SV_M_TPOT | SV_M_ITL,
                            .slo_ttft_ms = slo_ttft,
                            .slo_tpot_ms = slo_tpot,
                            .slo_e2el_ms = NAN,
                            .sample_interval = 1.0};
    sv_metrics_t *m = sv_metrics_new(&cfg, 1);
    const double steps[] = {0.25, 0.375, 0.5625, 0.75};
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq((int)sv_metrics_decode_step(m, 0, steps[k]), k);
    int32_t s0 = sv_metrics_seg_open(m, 0, 0, 0, 0.125);
    int32_t s1 = sv_metrics_seg_open(m, 1, 0, 1, 0.25);
    int32_t s3 = sv_metrics_seg_open(m, 3, 0, 1, 0.25);
    ck_assert(sv_metrics_seg_close(m, s0, 2) == 0.375);
    ck_assert(sv_metrics_seg_close(m, s1, 4) == 0.75);
    ck_assert(sv_metrics_seg_close(m, s3, 3) == 0.5625);
    pool->n = pool->cap = 4;
    pool->r = malloc(4 * sizeof *pool->r);
    pool->r[0] = mkreq(0.0, 0.125, 0.375, 10, 3, SV_RQ_DONE);
    pool->r[1] = mkreq(0.0625, 0.25, 0.75, 20, 4, SV_RQ_DONE);
    pool->r[2] = mkreq(0.5, 0.75, 0.75, 30, 1, SV_RQ_DONE);
    pool->r[3] = mkreq(0.0625, 0.25, 0.5625, 40, 9, SV_RQ_FAILED);
    pool->r[3].fail = SV_FAIL_TIMEOUT;
    pool->r[3].end = 0.6;
    *mout = m;
}

/* The counts of build()'s requests, in any mode. */
static void assert_counts(const sv_summary_t *s)
{
    ck_assert_int_eq(s->completed, 3);
    ck_assert_int_eq(s->failed, 1);
    ck_assert_int_eq(s->failed_by[SV_FAIL_TIMEOUT], 1);
    ck_assert_int_eq(s->total_input, 60);
    ck_assert_int_eq(s->total_output, 8);
    ck_assert(s->duration == 0.75);
    /* the largest TTFT (R2's 250 ms) and TPOT (R1's 500 / 3 ms) of the completed ones */
    ck_assert(s->max_ttft_ms == 250.0);
    tu_assert_rel(s->max_tpot_ms, 500.0 / 3.0, 1e-12);
}

START_TEST(test_three_requests)
{
    sv_metrics_t *m;
    sv_reqpool_t pool = {0};
    sv_summary_t s;
    sv_error_t err;
    build(&m, &pool, 187.5, 125.0);
    ck_assert_int_eq(sv_metrics_summarize(m, &pool, &s, &err), 0);
    assert_counts(&s);
    ck_assert(s.request_throughput == 4.0);
    tu_assert_rel(s.output_throughput, 8.0 / 0.75, 1e-15);
    tu_assert_rel(s.total_token_throughput, 68.0 / 0.75, 1e-15);
    /* Goodput: R0 meets TTFT 187.5 ms and TPOT 125 ms (both inclusive); R1 misses TPOT;
     * R2 misses TTFT. */
    ck_assert_int_eq(s.good, 1);
    tu_assert_rel(s.request_goodput, 1.0 / 0.75, 1e-15);

    tu_assert_rel(s.ttft.mean, 187.5, 1e-12);
    tu_assert_rel(s.ttft.median, 187.5, 1e-12);
    tu_assert_rel(s.ttft.std, 62.5 * sqrt(2.0 / 3.0), 1e-12);
    tu_assert_rel(s.ttft.pct[0], 248.75, 1e-12); /* 0.1875 + 0.98 * 0.0625 */
    tu_assert_rel(s.tpot.mean, (125.0 + 500.0 / 3.0) / 2.0, 1e-12);
    tu_assert_rel(s.tpot.pct[0], 125.0 + 0.99 * (500.0 / 3.0 - 125.0), 1e-12);
    ck_assert_int_eq(s.tpot.n, 2);
    /* ITL pool [0.125 x3, 0.1875 x2]: mean 0.15, median 0.125, std sqrt(0.0009375). */
    ck_assert_int_eq(s.itl.n, 5);
    tu_assert_rel(s.itl.mean, 150.0, 1e-12);
    tu_assert_rel(s.itl.median, 125.0, 1e-12);
    tu_assert_rel(s.itl.std, 1e3 * sqrt(0.0009375), 1e-12);
    tu_assert_rel(s.itl.pct[0], 187.5, 1e-12);
    tu_assert_rel(s.e2el.mean, 437.5, 1e-12);
    /* All 8 tokens of the successful requests fall in the first second; the failed
     * request's tokens do not count. Peak overlap of [start, end): R0 with R1, or R1 with R2. */
    ck_assert(s.max_output_tokens_per_s == 8.0);
    ck_assert_int_eq(s.max_concurrent_requests, 2);

    double *itl;
    size_t n;
    ck_assert_int_eq(sv_metrics_itls(m, &pool, 1, &itl, &n), 0);
    ck_assert_int_eq((int)n, 3);
    ck_assert(itl[0] == 0.125 && itl[1] == 0.1875 && itl[2] == 0.1875);
    free(itl);
    ck_assert_int_eq(sv_metrics_itls(m, &pool, 3, &itl, &n), 0); /* failed: none */
    ck_assert_int_eq((int)n, 0);
    sv_metrics_free(m);
    free(pool.r);
}
END_TEST

/* The same three requests as build(), fed in event order to a streaming collector
 * (sketches, no classes): each request folded in as it ends. Counts, goodput, totals,
 * peak concurrency, the per-second peak and the ITL count are the exact ones; means
 * are running moments; percentiles are within the sketch's alpha of the exact ones. */
START_TEST(test_streaming_matches_exact)
{
    sv_metrics_cfg_t cfg = {.percentiles = {99.0},
                            .npercentiles = 1,
                            .selected = SV_M_TTFT | SV_M_TPOT | SV_M_ITL,
                            .slo_ttft_ms = 187.5,
                            .slo_tpot_ms = 125.0,
                            .slo_e2el_ms = NAN,
                            .sample_interval = 1.0,
                            .sketch = 1,
                            .sketch_alpha = 0.01};
    sv_metrics_t *m = sv_metrics_new(&cfg, 1);
    ck_assert(sv_metrics_streaming(m));
    sv_req_t r0 = mkreq(0.0, 0.125, 0.375, 10, 3, SV_RQ_DONE);
    sv_req_t r1 = mkreq(0.0625, 0.25, 0.75, 20, 4, SV_RQ_DONE);
    sv_req_t r2 = mkreq(0.5, 0.75, 0.75, 30, 1, SV_RQ_DONE);
    sv_req_t r3 = mkreq(0.0625, 0.25, 0.5625, 40, 9, SV_RQ_FAILED);
    r3.fail = SV_FAIL_TIMEOUT;
    r3.end = 0.6;
    sv_metrics_request_start(m, 0, &r0);
    sv_metrics_request_start(m, 1, &r1);
    sv_metrics_request_start(m, 3, &r3);
    int32_t s0 = sv_metrics_seg_open(m, 0, 0, 0, 0.125);
    ck_assert_int_eq((int)sv_metrics_decode_step(m, 0, 0.25), 0);
    int32_t s1 = sv_metrics_seg_open(m, 1, 0, 1, 0.25);
    int32_t s3 = sv_metrics_seg_open(m, 3, 0, 1, 0.25);
    ck_assert_int_eq((int)sv_metrics_decode_step(m, 0, 0.375), 1);
    ck_assert(sv_metrics_seg_close(m, s0, 2) == 0.375);
    sv_metrics_request_end(m, &r0, 0);
    sv_metrics_request_start(m, 2, &r2);
    ck_assert_int_eq((int)sv_metrics_decode_step(m, 0, 0.5625), 2);
    ck_assert(sv_metrics_seg_close(m, s3, 3) == 0.5625);
    sv_metrics_request_end(m, &r3, 3);
    ck_assert_int_eq((int)sv_metrics_decode_step(m, 0, 0.75), 3);
    ck_assert(sv_metrics_seg_close(m, s1, 4) == 0.75);
    sv_metrics_request_end(m, &r1, 1);
    sv_metrics_request_end(m, &r2, 2);

    sv_reqpool_t pool = {0}; /* the streaming summary reads nothing from it */
    sv_summary_t s;
    sv_error_t err;
    ck_assert_int_eq(sv_metrics_summarize(m, &pool, &s, &err), 0);
    ck_assert(s.sketch_alpha == 0.01);
    assert_counts(&s);
    ck_assert_int_eq(s.good, 1);
    tu_assert_rel(s.ttft.mean, 187.5, 1e-12);
    tu_assert_rel(s.ttft.pct[0], 248.75, 0.01);
    tu_assert_rel(s.tpot.pct[0], 125.0 + 0.99 * (500.0 / 3.0 - 125.0), 0.01);
    ck_assert_int_eq(s.tpot.n, 2);
    ck_assert_int_eq(s.itl.n, 5);
    tu_assert_rel(s.itl.mean, 150.0, 1e-12);
    tu_assert_rel(s.itl.std, 1e3 * sqrt(0.0009375), 1e-9);
    tu_assert_rel(s.itl.median, 125.0, 0.01);
    tu_assert_rel(s.itl.pct[0], 187.5, 0.01);
    tu_assert_rel(s.e2el.mean, 437.5, 1e-12);
    ck_assert(s.max_output_tokens_per_s == 8.0);
    ck_assert_int_eq(s.max_concurrent_requests, 2);
    double *itl;
    size_t n;
    ck_assert_int_eq(sv_metrics_itls(m, &pool, 1, &itl, &n), SV_EINVAL);
    ck_assert_int_eq(sv_metrics_oom(m), 0);
    sv_metrics_free(m);
}
END_TEST

START_TEST(test_goodput_ttft_only_and_none)
{
    sv_metrics_t *m;
    sv_reqpool_t pool = {0};
    sv_summary_t s;
    sv_error_t err;
    build(&m, &pool, 187.5, NAN);
    ck_assert_int_eq(sv_metrics_summarize(m, &pool, &s, &err), 0);
    ck_assert_int_eq(s.good, 2); /* R0 and R1 (0.1875 <= 0.1875) */
    sv_metrics_free(m);
    free(pool.r);
    build(&m, &pool, NAN, NAN);
    ck_assert_int_eq(sv_metrics_summarize(m, &pool, &s, &err), 0);
    ck_assert(isnan(s.request_goodput)); /* vLLM writes null without SLOs */
    sv_metrics_free(m);
    free(pool.r);
}
END_TEST

START_TEST(test_percentile_like_numpy)
{
    /* numpy.percentile([1, 2, 3, 4], [0, 25, 50, 90, 100]) = [1, 1.75, 2.5, 3.7, 4] */
    double x[] = {4, 1, 3, 2};
    double p[] = {0, 25, 90, 100};
    sv_stat_t st;
    sv_stat_compute(x, 4, p, 4, 1.0, &st);
    ck_assert(st.pct[0] == 1.0);
    ck_assert(st.pct[1] == 1.75);
    tu_assert_rel(st.pct[2], 3.7, 1e-15);
    ck_assert(st.pct[3] == 4.0);
    ck_assert(st.median == 2.5);
    ck_assert(st.mean == 2.5);
    tu_assert_rel(st.std, sqrt(1.25), 1e-15); /* population std */
    /* The weighted form over {1 x2, 3 x1, 4 x1} equals the expanded list [1, 1, 3, 4]. */
    sv_wval_t w[] = {{3, 1}, {1, 2}, {4, 1}};
    double e[] = {1, 1, 3, 4};
    sv_stat_t ws, es;
    double q[] = {10, 50, 75, 99};
    sv_wstat_compute(w, 3, q, 4, 1.0, &ws);
    sv_stat_compute(e, 4, q, 4, 1.0, &es);
    for (int i = 0; i < 4; i++)
        tu_assert_rel(ws.pct[i], es.pct[i], 1e-15);
    tu_assert_rel(ws.mean, es.mean, 1e-15);
    tu_assert_rel(ws.std, es.std, 1e-15);
    /* An empty list gives zeros, as numpy does on [0]. */
    sv_stat_compute(NULL, 0, q, 4, 1.0, &st);
    ck_assert(st.mean == 0 && st.pct[3] == 0);
}
END_TEST

START_TEST(test_numpy_bits)
{
    /* numpy's pairwise sum where a plain loop differs. Nine terms: eight accumulators
     * seeded with x[0..7], combined ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then
     * x[8]. With x = {1, h x 7, 0}, h = 2^-53 (half an ulp of 1): r0 + r1 = 1 (a tie, to
     * even), each other pair 2^-52, (1 + 2^-52) + 2^-51 = 1 + 3 * 2^-52. The loop from 0
     * adds h to 1 seven times, each a tie back to 1. */
    const double h = 0x1p-53;
    double x[256] = {1, h, h, h, h, h, h, h, 0};
    ck_assert(sv_np_sum(x, 9) == 1 + 3 * 0x1p-52);
    double loop = 0.0;
    for (int i = 0; i < 9; i++)
        loop += x[i];
    ck_assert(loop == 1.0);
    /* 256 terms {1, h x 255}: two halves of 128. The first: r0 = 1 + h x 15 = 1, r1..r7
     * = 16 h = 2^-49 each, so (1 + 2^-49) + 2^-48 + 2^-47 = 1 + 7 * 2^-49; the second, 128 h
     * = 2^-46 = 8 * 2^-49, exactly: 1 + 15 * 2^-49. */
    for (int i = 1; i < 256; i++)
        x[i] = h;
    ck_assert(sv_np_sum(x, 256) == 1 + 15 * 0x1p-49);
    double mean, std;
    sv_np_mean_std(x, 256, &mean, &std);
    ck_assert(mean == (1 + 15 * 0x1p-49) / 256);
    /* numpy's linear percentile, at the virtual index (n - 1) * (p / 100). Of 0..100 at
     * p = 29: 100 * 0.29 = 29 - 2^-48 (0.29 is just below 29/100), so the index falls in
     * [28, 29) with t = 1 - 2^-48 >= 0.5, read as b - (b - a) * (1 - t) = 29 - 2^-48 (the
     * old reading, (n - 1) * p / 100 = 29 exactly, gave 29). */
    double r[101];
    for (int i = 0; i <= 100; i++)
        r[i] = i;
    ck_assert(sv_percentile_sorted(r, 101, 29) == 29 - 0x1p-48);
    /* t >= 0.5 where the two forms differ: {1, 1.5 + 2^-52} at p = 62.5, t = 0.625,
     * d = 0.5 + 2^-52. a + d t: d t = 0.3125 + 2.5 ulps (2^-54) -> 0.3125 + 2^-53 (tie,
     * even), then 1.3125 + half an ulp -> 1.3125 (tie, even). b - d (1 - t): d * 0.375 =
     * 0.1875 + 3 * 2^-55 exactly, b less it = 1.3125 + 0.625 ulp -> 1.3125 + 2^-52. */
    double two[] = {1, 1.5 + 0x1p-52};
    ck_assert(sv_percentile_sorted(two, 2, 62.5) == 1.3125 + 0x1p-52);
    /* np.median of an even list is the mean of the middle two, not the 50th percentile:
     * {5, 2^55}: 5 + 2^55 -> 2^55 + 8 (ulp 8), halved 2^54 + 4; the percentile reads
     * d = 2^55 - 5 -> 2^55 - 4 (ulp 4), b - d / 2 = 2^54 + 2 -> 2^54 (tie, even). */
    double mid[] = {0x1p55, 5};
    sv_stat_t st;
    double p50 = 50;
    sv_stat_compute(mid, 2, &p50, 1, 1.0, &st);
    ck_assert(st.median == 0x1p54 + 4);
    ck_assert(st.pct[0] == 0x1p54);
    /* The weighted pool's mean: numpy's pairwise sum of the v * w in the pool's order, over
     * the count. The pool {1 x1, h x1 (seven of them), 0 x1} sums as the nine doubles above,
     * 1 + 3 * 2^-52, where the loop gives 1; and {1 x1, h x3} as the list {1, 3h} (below
     * eight terms: a loop from -0), 1 + 3h = 1 + 1.5 ulps -> 1 + 2^-51 (tie, even). */
    sv_wval_t w[9] = {{1, 1}, {h, 1}, {h, 1}, {h, 1}, {h, 1}, {h, 1}, {h, 1}, {h, 1}, {0, 1}};
    double cnt;
    ck_assert_int_eq(sv_wmean_std(w, 9, &cnt, &mean, &std), 0);
    ck_assert(cnt == 9 && mean == (1 + 3 * 0x1p-52) / 9);
    sv_wval_t w2[] = {{1, 1}, {h, 3}};
    ck_assert_int_eq(sv_wmean_std(w2, 2, &cnt, &mean, &std), 0);
    ck_assert(cnt == 4 && mean == (1 + 0x1p-51) / 4);
}
END_TEST

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_wv(const void *a, const void *b)
{
    double x = ((const sv_wval_t *)a)->v, y = ((const sv_wval_t *)b)->v;
    return (x > y) - (x < y);
}

START_TEST(test_selection_like_numpy)
{
    /* The same hand-computed numpy values as above, by selection. */
    double x[] = {4, 1, 3, 2}, p[] = {0, 25, 90, 100, 50}, out[5];
    sv_percentiles_select(x, 4, p, 5, out);
    ck_assert(out[0] == 1.0 && out[1] == 1.75 && out[3] == 4.0 && out[4] == 2.5);
    tu_assert_rel(out[2], 3.7, 1e-15);
    sv_percentiles_select(NULL, 0, p, 5, out);
    ck_assert(out[0] == 0.0 && out[4] == 0.0);
    double one = 7.0;
    sv_percentiles_select(&one, 1, p, 5, out);
    ck_assert(out[0] == 7.0 && out[2] == 7.0 && out[3] == 7.0);
    /* Against the sorted definition on many lists with ties (integers in [0, m)): equal
     * to the last bit, whatever the length and the share of ties. */
    unsigned long long s = 12345;
    double q[] = {99.9, 1, 50, 90, 95, 99, 0.1, 100, 0, 33.3};
    for (int round = 0; round < 60; round++) {
        size_t n = 1 + (size_t)(round * round * 7) % 5000;
        int m = round % 7 == 0 ? 3 : 1000000;
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            a[i] = b[i] = (double)((s >> 33) % (unsigned)m) * 0.001;
        }
        qsort(b, n, sizeof *b, cmp_d);
        double got[10];
        sv_percentiles_select(a, n, q, 10, got);
        for (int i = 0; i < 10; i++)
            ck_assert_msg(got[i] == sv_percentile_sorted(b, n, q[i]), "n %zu p %g", n, q[i]);
        free(a);
        free(b);
    }
}
END_TEST

START_TEST(test_selection_weighted_and_zeros)
{
    /* The weighted pool's percentiles and median equal those of its expanded list, on pools
     * large enough that the counting recurses (a peak of ties, a few values far out). */
    unsigned long long s = 777;
    double q[] = {0, 1, 25, 50, 62.5, 90, 95, 99, 99.9, 100};
    for (int round = 0; round < 6; round++) {
        size_t n = round < 3 ? 40 : 20000, ne = 0;
        sv_wval_t *w = malloc(n * sizeof *w);
        double *e = malloc(n * 8 * sizeof *e);
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            double v = (double)((s >> 33) % 5000) * 1e-5;
            if (round % 2 && i % 3 == 0) v = 0.0095; /* ties */
            if (i % 997 == 5) v = 40.0 + (double)i;  /* far out */
            int k = 1 + (int)((s >> 20) % 8);
            w[i] = (sv_wval_t){v, (double)k};
            for (int j = 0; j < k; j++)
                e[ne++] = v;
        }
        sv_stat_t ws, es;
        sv_wstat_compute(w, n, q, 10, 1.0, &ws);
        sv_stat_compute(e, ne, q, 10, 1.0, &es);
        ck_assert_int_eq(ws.n, (long)ne);
        ck_assert(ws.median == es.median);
        for (int i = 0; i < 10; i++)
            ck_assert_msg(ws.pct[i] == es.pct[i], "round %d p %g", round, q[i]);
        free(w);
        free(e);
    }
    /* With a sign bit in the list the order is the keys': -0 before +0. Of {+0, -0, -0},
     * p25 reads ranks 0 and 1 (-0, -0) at t = 0.5: b - (b - a) * 0.5 = -0 - 0 = -0 (in the
     * list's order, +0 then -0, it would be -0 - (-0 * 0.5) = +0); p75 reads -0 and +0:
     * +0 - 0 = +0. */
    double z[] = {0.0, -0.0, -0.0}, p[] = {25, 75}, out[2];
    sv_percentiles_select(z, 3, p, 2, out);
    ck_assert(out[0] == 0.0 && signbit(out[0]));
    ck_assert(out[1] == 0.0 && !signbit(out[1]));
}
END_TEST

START_TEST(test_selection_positive_range)
{
    /* sv_stat_compute takes a list's range with double compares when its sum is not a NaN
     * and its smallest value is positive, else from the bits: either way its percentiles
     * and median are those of the sorted list, on lists with ties, all-equal lists, an
     * infinity, and lists with zeros and negatives (the bits' path). */
    unsigned long long s = 4242;
    double q[] = {0, 1, 25, 50, 90, 95, 99, 99.9, 100, 37.5};
    for (int round = 0; round < 40; round++) {
        size_t n = 1 + (size_t)(round * round * 13) % 3000;
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            unsigned m = round % 5 == 0 ? 4 : 100000;
            double v = 0.001 + (double)((s >> 33) % m) * 1e-4; /* positive, ties */
            if (round % 8 == 1) v = 0.25;                      /* all equal */
            if (round % 8 == 3 && i == n / 2) v = INFINITY;
            if (round % 8 == 5 && i % 7 == 0) v = 0.0; /* a zero: the bits' path */
            if (round % 8 == 7 && i % 5 == 0) v = -v;  /* negatives: keyed */
            a[i] = b[i] = v;
        }
        qsort(b, n, sizeof *b, cmp_d);
        sv_stat_t st;
        sv_stat_compute(a, n, q, 10, 1.0, &st);
        for (int i = 0; i < 10; i++) {
            double want = sv_percentile_sorted(b, n, q[i]);
            ck_assert_msg(st.pct[i] == want || (isnan(want) && isnan(st.pct[i])),
                          "round %d n %zu p %g: %g, want %g", round, n, q[i], st.pct[i], want);
        }
        double mid = n % 2 ? b[n / 2] : (0.0 + (-0.0 + b[n / 2 - 1] + b[n / 2])) / 2.0;
        ck_assert_msg(st.median == mid || (isnan(mid) && isnan(st.median)), "round %d", round);
        free(a);
        free(b);
    }
    /* The range is taken two records at a time, the last few one by one: lists and weighted
     * pools of 32 to 43 (past the selection's insertion sort) whose smallest and largest are
     * their last two. */
    for (size_t n = 32; n < 44; n++) {
        double a[44], pr[] = {0, 50, 100};
        sv_wval_t w[44];
        for (size_t i = 0; i < n; i++)
            a[i] = i == n - 1 ? 9.0 : i == n - 2 ? 0.125 : 0.5 + 0.01 * (double)i;
        for (size_t i = 0; i < n; i++)
            w[i] = (sv_wval_t){a[i], 1.0};
        sv_stat_t st, ws;
        sv_wstat_compute(w, n, pr, 3, 1.0, &ws);
        sv_stat_compute(a, n, pr, 3, 1.0, &st);
        ck_assert_msg(st.pct[0] == 0.125 && st.pct[2] == 9.0, "n %zu", n);
        ck_assert_msg(ws.pct[0] == 0.125 && ws.pct[2] == 9.0, "n %zu", n);
        ck_assert(ws.pct[1] == st.pct[1] && ws.median == st.median);
    }
}
END_TEST

START_TEST(test_stat_top)
{
    /* The exact statistics' largest finite value: from the selection's range when the sum
     * is finite (positive values; with a zero and negatives, the bits' and keys' paths),
     * by a loop over the finite ones past an infinity or a NaN, 0 when none is above 0. */
    double p[] = {50.0}, pv[1], top;
    sv_stat_t st;
    double a[] = {0.5, 3.25, 1.0, 2.0};
    ck_assert_int_eq(sv__stat_exact(a, 4, p, 1, 1.0, &st, pv, &top), 0);
    ck_assert(top == 3.25);
    double b[] = {0.0, -1.0, 2.5, -0.0};
    ck_assert_int_eq(sv__stat_exact(b, 4, p, 1, 1.0, &st, pv, &top), 0);
    ck_assert(top == 2.5);
    double c[] = {1.5, INFINITY, 4.0, 2.0};
    ck_assert_int_eq(sv__stat_exact(c, 4, p, 1, 1.0, &st, pv, &top), 0);
    ck_assert(top == 4.0);
    double d[] = {NAN, 0.75, 0.25};
    ck_assert_int_eq(sv__stat_exact(d, 3, p, 1, 1.0, &st, pv, &top), 0);
    ck_assert(top == 0.75);
    double e[] = {-2.0, -1.0};
    ck_assert_int_eq(sv__stat_exact(e, 2, p, 1, 1.0, &st, pv, &top), 0);
    ck_assert(top == 0.0);
    ck_assert_int_eq(sv__stat_exact(e, 0, p, 1, 1.0, &st, pv, &top), 0);
    ck_assert(top == 0.0);
}
END_TEST

/* A collector's configuration without SLOs, printing p99. */
static sv_metrics_cfg_t plain_cfg(void)
{
    sv_metrics_cfg_t cfg = {.percentiles = {99.0},
                            .npercentiles = 1,
                            .slo_ttft_ms = NAN,
                            .slo_tpot_ms = NAN,
                            .slo_e2el_ms = NAN,
                            .sample_interval = 1.0};
    return cfg;
}

START_TEST(test_token_bins_by_runs)
{
    /* A replica's steps go into the per-second bins by runs within one second: steps at
     * 0.5, 0.9 | 1.1, 1.3, 1.5, 1.7 | 2.1. A (first token 0.25) decodes in all seven, B
     * (first token 0.75) in steps 1..5: second 0 holds 3 + 2 tokens, second 1 4 + 4,
     * second 2 one. With a request far off (2e9 s later) the bins are sparse: the same. */
    for (int far = 0; far < 2; far++) {
        sv_metrics_cfg_t cfg = plain_cfg();
        sv_metrics_t *m = sv_metrics_new(&cfg, 1);
        const double steps[] = {0.5, 0.9, 1.1, 1.3, 1.5, 1.7, 2.1};
        for (int k = 0; k < 7; k++)
            ck_assert_int_eq((int)sv_metrics_decode_step(m, 0, steps[k]), k);
        int32_t a = sv_metrics_seg_open(m, 0, 0, 0, 0.25);
        int32_t b = sv_metrics_seg_open(m, 1, 0, 1, 0.75);
        ck_assert(sv_metrics_seg_close(m, a, 7) == 2.1);
        ck_assert(sv_metrics_seg_close(m, b, 6) == 1.7);
        sv_reqpool_t pool = {0};
        pool.n = pool.cap = far ? 3 : 2;
        pool.r = malloc(3 * sizeof *pool.r);
        pool.r[0] = mkreq(0.0, 0.25, 2.1, 10, 8, SV_RQ_DONE);
        pool.r[1] = mkreq(0.5, 0.75, 1.7, 10, 6, SV_RQ_DONE);
        pool.r[2] = mkreq(2e9, 2e9 + 0.5, 2e9 + 0.5, 10, 1, SV_RQ_DONE);
        sv_summary_t sum;
        sv_error_t err;
        ck_assert_int_eq(sv_metrics_summarize(m, &pool, &sum, &err), 0);
        ck_assert_msg(sum.max_output_tokens_per_s == 8.0, "far %d: %g", far,
                      sum.max_output_tokens_per_s);
        ck_assert_int_eq(sum.itl.n, 12); /* A 7 gaps, B 5 */
        free(pool.r);
        sv_metrics_free(m);
    }
}
END_TEST

START_TEST(test_peak_concurrency)
{
    /* The peak of [start, last token) over requests sent in pool order, against the count
     * at each start (i + 1 less the ends at or before it, an end at a start leaving first):
     * starts and ends on a grid of 1/64 s (ties of ends with starts), and one request that
     * runs 1000 times longer than the rest (the ends crowd into a few of the sweep's time
     * buckets), then a burst of 1000 sent at once (one bucket of starts, all compared). */
    sv_metrics_cfg_t cfg = plain_cfg();
    for (int round = 0; round < 3; round++) {
        size_t n = 3000;
        sv_metrics_t *m = sv_metrics_new(&cfg, 1);
        sv_reqpool_t pool = {0};
        pool.n = pool.cap = n;
        pool.r = malloc(n * sizeof *pool.r);
        unsigned long long s = 4242;
        double t = 0;
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            if (round < 2 || i >= 1000) t += (double)((s >> 33) % 3) / 64.0;
            double len = (double)(1 + (s >> 40) % 200) / 64.0;
            if (round == 1 && i == 10) len = 1000.0 * 200 / 64.0;
            pool.r[i] = mkreq(t, t + len / 2, t + len, 1, 2, SV_RQ_DONE);
        }
        long want = 0;
        for (size_t i = 0; i < n; i++) {
            long c = 0;
            for (size_t j = 0; j <= i; j++)
                c += pool.r[j].last_token > pool.r[i].start;
            if (c > want) want = c;
        }
        sv_summary_t sum;
        sv_error_t err;
        ck_assert_int_eq(sv_metrics_summarize(m, &pool, &sum, &err), 0);
        ck_assert_int_eq(sum.max_concurrent_requests, want);
        ck_assert(want > 20);
        sv_metrics_free(m);
        free(pool.r);
    }
}
END_TEST

/* n values from an LCG (seed s): -20..20 x 0.37e-3, with zeros of either sign when negzero,
 * else each nudged by up to 1e-6 (no zero); sorted as doubles and as weighted values (w:
 * the index, which shows the order among equal v), both compared with qsort's order. */
static double sort_like_qsort(size_t n, unsigned long long s, int negzero, double *lo)
{
    sv_wval_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        int k = (int)((s >> 33) % 41) - 20;
        double v = negzero ? (k == 0 ? ((s >> 20) & 1 ? -0.0 : 0.0) : k * 0.37e-3)
                           : k * 0.37e-3 + (double)(s >> 54) * 1e-9;
        a[i] = b[i] = (sv_wval_t){v, (double)i};
        x[i] = y[i] = v;
    }
    sv_sort_wvals(a, n);
    qsort(b, n, sizeof *b, cmp_wv);
    for (size_t i = 0; i < n; i++)
        ck_assert(memcmp(&a[i], &b[i], sizeof a[i]) == 0);
    sv_sort_doubles(x, n);
    /* glibc's qsort is stable here; the radix sort is stable by construction */
    qsort(y, n, sizeof *y, cmp_d);
    ck_assert(memcmp(x, y, n * sizeof *x) == 0);
    double hi = x[n - 1];
    *lo = x[0];
    free(a);
    free(b);
    free(x);
    free(y);
    return hi;
}

START_TEST(test_sorts_as_qsort)
{
    /* The radix sort leaves exactly qsort's (glibc: stable merge sort) order: equal values
     * keep their order, -0 equals +0 (with a -0 it hands over to qsort; without one it
     * sorts the keys and gives the values' bits back), negatives before positives. */
    size_t n = 3000;
    double lo, hi = sort_like_qsort(n, 99, 1, &lo);
    ck_assert(signbit(lo) && lo == -20 * 0.37e-3 && hi == 20 * 0.37e-3);
    hi = sort_like_qsort(n, 7, 0, &lo);
    ck_assert(lo < -19 * 0.37e-3 && hi > 19 * 0.37e-3);
    /* Sorted and constant lists stay as they are. */
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = 2.5;
    sv_sort_doubles(x, n);
    ck_assert(x[0] == 2.5 && x[n - 1] == 2.5);
    free(x);
}
END_TEST

START_TEST(test_sorts_large_and_peaked)
{
    /* 200,000 values: the first pass's 16-bit digit, buckets sorted again on lower digits
     * (a peak of ties around 28 ms: 41 x 1,024 distinct values) and by insertion. */
    double lo, hi = sort_like_qsort(200000, 5, 0, &lo);
    ck_assert(lo < -19 * 0.37e-3 && hi > 19 * 0.37e-3);
    /* Values over many binades, a few of them far out (the range the first digit splits):
     * every record in qsort's order, the weights of equal values in their first order. */
    size_t n = 50000;
    sv_wval_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    unsigned long long s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double v = ldexp(1.0 + (double)(s >> 40) / 16777216.0, (int)((s >> 33) % 30) - 20);
        if (i % 1000 == 7) v = 1e6 + (double)i;
        if (i % 5 == 0) v = 0.028 + (double)((s >> 20) % 16) * 1e-6;
        a[i] = b[i] = (sv_wval_t){v, (double)i};
        x[i] = y[i] = v;
    }
    sv_sort_wvals(a, n);
    qsort(b, n, sizeof *b, cmp_wv);
    ck_assert(memcmp(a, b, n * sizeof *a) == 0);
    sv_sort_doubles(x, n);
    qsort(y, n, sizeof *y, cmp_d);
    ck_assert(memcmp(x, y, n * sizeof *x) == 0);
    ck_assert(x[n - 1] == 1e6 + 49007.0);
    /* Three values, unsorted: buckets of equal keys (done without sorting their bits). */
    for (size_t i = 0; i < n; i++) {
        x[i] = y[i] = (i * 7919) % 3 == 0 ? 0.25 : (i * 7919) % 3 == 1 ? 0.5 : 0.125;
        a[i] = b[i] = (sv_wval_t){x[i], (double)i};
    }
    sv_sort_doubles(x, n);
    qsort(y, n, sizeof *y, cmp_d);
    ck_assert(memcmp(x, y, n * sizeof *x) == 0);
    ck_assert(x[0] == 0.125 && x[n / 2] == 0.25 && x[n - 1] == 0.5);
    sv_sort_wvals(a, n);
    qsort(b, n, sizeof *b, cmp_wv);
    ck_assert(memcmp(a, b, n * sizeof *a) == 0);
    free(a);
    free(b);
    free(x);
    free(y);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("definitions");
    tcase_add_test(tc, test_three_requests);
    tcase_add_test(tc, test_goodput_ttft_only_and_none);
    tcase_add_test(tc, test_streaming_matches_exact);
    tcase_add_test(tc, test_percentile_like_numpy);
    tcase_add_test(tc, test_numpy_bits);
    tcase_add_test(tc, test_selection_like_numpy);
    tcase_add_test(tc, test_selection_weighted_and_zeros);
    tcase_add_test(tc, test_selection_positive_range);
    tcase_add_test(tc, test_stat_top);
    tcase_add_test(tc, test_token_bins_by_runs);
    tcase_add_test(tc, test_peak_concurrency);
    tcase_add_test(tc, test_sorts_as_qsort);
    tcase_add_test(tc, test_sorts_large_and_peaked);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
