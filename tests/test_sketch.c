/*
 * The quantile sketch (servesim/metrics/sketch.h): percentiles within the stated relative
 * error of the exact ones (numpy's linear interpolation, sv_percentile_sorted), exact
 * zeros, weights, and merging.
 */
#include <math.h>
#include <stdlib.h>

#include "servesim/metrics/sketch.h"
#include "testsim.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* |got - want| <= alpha |want|, with room for the bucket logarithm's rounding. */
static void assert_within(double got, double want, double alpha)
{
    ck_assert_msg(fabs(got - want) <= alpha * fabs(want) * (1 + 1e-9) + 1e-300,
                  "%.17g is not within %g of %.17g", got, alpha, want);
}

START_TEST(test_hand_cases)
{
    sv_sketch_t *s = sv_sketch_new(0.01);
    double x[] = {4, 1, 3, 2};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(sv_sketch_add(s, x[i], 1), 0);
    /* 1 sits in bucket 0, (1/gamma, 1], read as 2 / (gamma + 1) = 1 - alpha = 0.99 */
    tu_assert_rel(sv_sketch_rank(s, 0), 0.99, 1e-15);
    /* numpy: p25 of [1, 2, 3, 4] = 1.75, p90 = 3.7, p100 = 4 */
    assert_within(sv_sketch_percentile(s, 25), 1.75, 0.01);
    assert_within(sv_sketch_percentile(s, 90), 3.7, 0.01);
    assert_within(sv_sketch_percentile(s, 100), 4.0, 0.01);
    sv_stat_t st;
    double p[] = {25};
    sv_sketch_stat(s, p, 1, 1e3, &st);
    ck_assert_int_eq(st.n, 4);
    tu_assert_rel(st.mean, 2500.0, 1e-15); /* the moments are not estimated */
    tu_assert_rel(st.std, sqrt(1.25) * 1e3, 1e-15);
    assert_within(st.median, 2500.0, 0.01);
    sv_sketch_free(s);
    /* Zeros are counted exactly: [0, 0, 0, 5] has p50 = 0, p100 = 5 (within 1%). */
    s = sv_sketch_new(0.01);
    sv_sketch_add(s, 0.0, 3);
    sv_sketch_add(s, 5.0, 1);
    ck_assert(sv_sketch_percentile(s, 50) == 0.0);
    assert_within(sv_sketch_percentile(s, 100), 5.0, 0.01);
    ck_assert(sv_sketch_count(s) == 4);
    ck_assert_int_eq(sv_sketch_add(s, NAN, 1), SV_EINVAL);
    sv_sketch_free(s);
    /* An empty sketch gives zeros, as the exact summary does on no values. */
    s = sv_sketch_new(0.05);
    ck_assert(sv_sketch_percentile(s, 99) == 0.0);
    sv_sketch_free(s);
    ck_assert(sv_sketch_new(0) == NULL && sv_sketch_new(0.7) == NULL);
}
END_TEST

START_TEST(test_within_bound_and_merge)
{
    /* Lognormal latencies over six decades, with ties and zeros; every percentile of the
     * sketch within alpha of the exact one, for three alphas; two half sketches merged
     * give the very same buckets as one sketch of all. */
    size_t n = 200000;
    double *x = malloc(n * sizeof *x);
    unsigned long long r = 7;
    for (size_t i = 0; i < n; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        double u1 = ((r >> 11) + 0.5) / 9007199254740992.0;
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        double u2 = ((r >> 11) + 0.5) / 9007199254740992.0;
        double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        x[i] = i % 97 == 0 ? 0.0 : i % 13 == 0 ? 0.125 : exp(-3 + 2.2 * z);
    }
    double alphas[] = {0.001, 0.01, 0.05};
    double ps[] = {0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};
    for (int a = 0; a < 3; a++) {
        sv_sketch_t *all = sv_sketch_new(alphas[a]), *h1 = sv_sketch_new(alphas[a]),
                    *h2 = sv_sketch_new(alphas[a]);
        for (size_t i = 0; i < n; i++) {
            sv_sketch_add(all, x[i], 1);
            sv_sketch_add(i < n / 3 ? h1 : h2, x[i], 1);
        }
        ck_assert_int_eq(sv_sketch_merge(h1, h2), 0);
        double *y = malloc(n * sizeof *y);
        for (size_t i = 0; i < n; i++)
            y[i] = x[i];
        qsort(y, n, sizeof *y, cmp_d);
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += y[i];
        for (size_t k = 0; k < sizeof ps / sizeof *ps; k++) {
            double exact = sv_percentile_sorted(y, n, ps[k]);
            assert_within(sv_sketch_percentile(all, ps[k]), exact, alphas[a]);
            ck_assert(sv_sketch_percentile(h1, ps[k]) == sv_sketch_percentile(all, ps[k]));
        }
        sv_stat_t st;
        sv_sketch_stat(h1, ps, 1, 1.0, &st);
        tu_assert_rel(st.mean, sum / (double)n, 1e-12);
        ck_assert_int_eq(st.n, (long)n);
        sv_sketch_t *other = sv_sketch_new(alphas[(a + 1) % 3]);
        ck_assert_int_eq(sv_sketch_merge(h1, other), SV_EINVAL); /* different buckets */
        sv_sketch_free(other);
        sv_sketch_free(all);
        sv_sketch_free(h1);
        sv_sketch_free(h2);
        free(y);
    }
    free(x);
}
END_TEST

START_TEST(test_weights)
{
    /* Weight w counts as w copies: {1 x2, 3 x1, 4 x1} is [1, 1, 3, 4]. */
    sv_sketch_t *w = sv_sketch_new(0.01), *e = sv_sketch_new(0.01);
    sv_sketch_add(w, 3, 1);
    sv_sketch_add(w, 1, 2);
    sv_sketch_add(w, 4, 1);
    double v[] = {1, 1, 3, 4};
    for (int i = 0; i < 4; i++)
        sv_sketch_add(e, v[i], 1);
    for (double p = 0; p <= 100; p += 12.5)
        ck_assert(sv_sketch_percentile(w, p) == sv_sketch_percentile(e, p));
    /* numpy.percentile([1, 1, 3, 4], 75) = 3.25 */
    assert_within(sv_sketch_percentile(w, 75), 3.25, 0.01);
    /* Exported (as sent between MPI ranks) and merged into an empty sketch: the same. */
    /* buckets 0 (holding 1) to 70 (holding 4: ln 4 / ln gamma = 69.3), after 9 header fields */
    size_t k = sv_sketch_export(w, NULL, 0);
    ck_assert_int_eq(k, 9 + 71);
    double *buf = malloc(k * sizeof *buf);
    ck_assert_int_eq(sv_sketch_export(w, buf, k), k);
    sv_sketch_t *c = sv_sketch_new(0.01);
    ck_assert_int_eq(sv_sketch_merge_exported(c, buf, k), 0);
    for (double p = 0; p <= 100; p += 12.5)
        ck_assert(sv_sketch_percentile(c, p) == sv_sketch_percentile(w, p));
    ck_assert(sv_sketch_count(c) == 4);
    ck_assert_int_eq(sv_sketch_merge_exported(c, buf, k - 1), SV_EINVAL); /* cut short */
    free(buf);
    sv_sketch_free(c);
    sv_sketch_free(w);
    sv_sketch_free(e);
}
END_TEST

static void stat_within(const sv_stat_t *sk, const sv_stat_t *ex, int npcts, double alpha)
{
    ck_assert_int_eq(sk->n, ex->n);
    tu_assert_rel(sk->mean, ex->mean, 1e-9);
    assert_within(sk->median, ex->median, alpha);
    for (int i = 0; i < npcts; i++)
        assert_within(sk->pct[i], ex->pct[i], alpha);
}

START_TEST(test_summary_sketch_mode)
{
    /* The same run summarised exactly and from sketches (--sketch, and automatically past
     * --exact-max): every percentile, median and budget value within alpha of the exact
     * one; counts, throughputs and the peak concurrency the same. Disaggregated, so the
     * transfer phases are not all zero. */
    sv_catalog_t *cat = tu_catalog();
    const char *yaml = "model: llama-3.1-8b\n"
                       "pools:\n"
                       "  - {name: prefill, role: prefill, gpu: h100-sxm, replicas: 1}\n"
                       "  - {name: decode, role: decode, gpu: h100-sxm, replicas: 2}\n"
                       "disaggregation: {kv_link: {kind: infiniband}}\n"
                       "workload:\n"
                       "  num_requests: 3000\n"
                       "  rate: 12\n"
                       "  input: {dist: lognormal, mean: 1024, std: 512, min: 16, max: 8192}\n"
                       "  output: {dist: lognormal, mean: 150, std: 100, min: 2, max: 1024}\n"
                       "slo: {ttft_ms: {p90: 400}, tpot_ms: 40}\n";
    sv_scenario_t *sc;
    sv_result_t *ex = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    ck_assert(ex->summary.sketch_alpha == 0);
    const double alphas[] = {0.01, 0.002};
    for (int k = 0; k < 3; k++) {
        sv_scenario_t *sc2;
        sv_error_t err;
        ck_assert(tu_load_yaml(cat, yaml, NULL, 0, &sc2, &err) == 0);
        if (k < 2) {
            sc2->metrics.sketch = 1;
            sc2->metrics.sketch_alpha = alphas[k];
        } else {
            sc2->metrics.exact_max = 2999; /* one request too many for the exact summary */
        }
        double alpha = k < 2 ? alphas[k] : SV_SKETCH_ALPHA;
        sv_result_t *sk;
        ck_assert(sv_sim_run(sc2, &sk, &err) == 0);
        const sv_summary_t *a = &sk->summary, *b = &ex->summary;
        ck_assert(a->sketch_alpha == alpha);
        ck_assert_int_eq(a->completed, b->completed);
        ck_assert_int_eq(a->max_concurrent_requests, b->max_concurrent_requests);
        ck_assert(a->request_throughput == b->request_throughput);
        ck_assert(a->max_output_tokens_per_s == b->max_output_tokens_per_s);
        ck_assert(b->xfer.median > 0);
        const sv_stat_t *sa[] = {&a->ttft, &a->tpot, &a->itl, &a->e2el, &a->queue,
                                 &a->prefill, &a->decode, &a->xfer_wait, &a->xfer,
                                 &a->decode_queue};
        const sv_stat_t *sb[] = {&b->ttft, &b->tpot, &b->itl, &b->e2el, &b->queue,
                                 &b->prefill, &b->decode, &b->xfer_wait, &b->xfer,
                                 &b->decode_queue};
        for (int d = 0; d < 10; d++)
            stat_within(sa[d], sb[d], b->npcts, alpha);
        assert_within(a->budget_ms[0], b->budget_ms[0], alpha);
        tu_done(sc2, sk);
    }
    tu_done(sc, ex);
    sv_catalog_free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sketch");
    TCase *tc = tcase_create("ddsketch");
    tcase_add_test(tc, test_hand_cases);
    tcase_add_test(tc, test_within_bound_and_merge);
    tcase_add_test(tc, test_weights);
    tcase_add_test(tc, test_summary_sketch_mode);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
