/*
 * Unit tests of `servesim compare` and `replay`: the two-sample Kolmogorov-Smirnov
 * statistic on small samples worked by hand, the Kolmogorov tail against tabled values,
 * relative errors, GenAI-Perf's names mapped to vLLM's, a result compared with itself,
 * and a real result turned into a trace (absolute start times rebased, failures left out).
 */
#include <math.h>

#include "servesim/studies/compare.h"
#include "servesim/studies/replay.h"
#include "testutil.h"

START_TEST(test_ks_by_hand)
{
    double d, p;
    /* a = 1 2 3 4, b = 2.5 3.5 5 6 7. F_a - F_b after each pooled value:
     * 1: .25-0, 2: .5-0, 2.5: .5-.2, 3: .75-.2, 3.5: .75-.4, 4: 1-.4 = .6 (largest). */
    double a[] = {4, 2, 3, 1}, b[] = {7, 2.5, 6, 3.5, 5};
    ck_assert_int_eq(sv_ks_2samp(a, 4, b, 5, 0.0, &d, &p), 0);
    ck_assert_double_eq_tol(d, 0.6, 1e-12);
    /* lambda = sqrt(4 x 5 / 9) x 0.6 = 0.894427; Q(lambda) = 0.400471 */
    ck_assert_double_eq_tol(p, 0.400471, 1e-6);
    /* Ties step both samples together: a = 1 2 2 3, b = 2 2 4 5. At 1: .25; at 2 (both
     * past their twos): .75 - .5 = .25; at 3: 1 - .5 = .5. Stepping one sample alone past
     * 2 would wrongly see .75. */
    double c[] = {1, 2, 2, 3}, e[] = {2, 2, 4, 5};
    ck_assert_int_eq(sv_ks_2samp(c, 4, e, 4, 0.0, &d, &p), 0);
    ck_assert_double_eq_tol(d, 0.5, 1e-12);
    ck_assert_double_eq_tol(p, 0.699374, 1e-6); /* lambda = sqrt(2) x 0.5 */
    /* The same sample: D = 0, p = 1. */
    double f[] = {3, 1, 2}, g[] = {1, 2, 3};
    ck_assert_int_eq(sv_ks_2samp(f, 3, g, 3, 0.0, &d, &p), 0);
    ck_assert_double_eq(d, 0.0);
    ck_assert_double_eq(p, 1.0);
    /* Within the tie width values are the same: 1, 2, 3 against each plus 1e-7. */
    double f2[] = {1 + 1e-7, 2 + 1e-7, 3 + 1e-7}, g2[] = {1, 2, 3};
    ck_assert_int_eq(sv_ks_2samp(f2, 3, g2, 3, 0.0, &d, &p), 0);
    ck_assert_double_eq_tol(d, 1.0 / 3.0, 1e-12); /* exact: a shift by 1e-7 is seen */
    ck_assert_int_eq(sv_ks_2samp(f2, 3, g2, 3, 1e-6, &d, &p), 0);
    ck_assert_double_eq(d, 0.0);
    /* Disjoint samples: D = 1. */
    double h[] = {1, 2}, k[] = {3, 4, 5};
    ck_assert_int_eq(sv_ks_2samp(h, 2, k, 3, 0.0, &d, &p), 0);
    ck_assert_double_eq(d, 1.0);
    ck_assert_int_eq(sv_ks_2samp(h, 0, k, 3, 0.0, &d, &p), SV_EINVAL);
    ck_assert(isnan(d));
}
END_TEST

START_TEST(test_kolmogorov_tail)
{
    /* Tabled critical values: 5% at 1.358, 1% at 1.628; both branches of the series meet
     * at 1.18. */
    ck_assert_double_eq_tol(sv_kolmogorov_q(1.36), 0.0494859, 1e-6);
    ck_assert_double_eq_tol(sv_kolmogorov_q(1.628), 0.0099755, 1e-6);
    ck_assert_double_eq_tol(sv_kolmogorov_q(0.5), 0.9639452, 1e-6);
    ck_assert_double_eq_tol(sv_kolmogorov_q(1.18 - 1e-9), 0.1234538, 1e-6);
    ck_assert_double_eq_tol(sv_kolmogorov_q(1.18), 0.1234538, 1e-6);
    ck_assert_double_eq(sv_kolmogorov_q(0.0), 1.0);
    ck_assert(sv_kolmogorov_q(5.0) < 1e-20);
}
END_TEST

START_TEST(test_relative_errors)
{
    ck_assert_double_eq_tol(sv_rel_err(100, 110), 0.10, 1e-15);
    ck_assert_double_eq_tol(sv_rel_err(100, 90), -0.10, 1e-15);
    ck_assert_double_eq_tol(sv_rel_err(200, 150), -0.25, 1e-15);
    ck_assert_double_eq_tol(sv_rel_err(-4, -5), 0.25, 1e-15); /* signed by the real value */
    ck_assert_double_eq(sv_rel_err(0, 0), 0.0);
    ck_assert(isinf(sv_rel_err(0, 1)) && sv_rel_err(0, 1) > 0);
    ck_assert(isinf(sv_rel_err(0, -1)) && sv_rel_err(0, -1) < 0);
}
END_TEST

static double v_of(const sv_bench_t *b, int lat, int stat)
{
    int m = SV_CM_LAT_FIRST + 4 * lat + stat;
    ck_assert_msg(b->has[m], "%s missing", sv_compare_metric_label(m));
    return b->value[m];
}

START_TEST(test_genai_perf_mapping)
{
    sv_bench_t *b = NULL;
    sv_error_t err;
    ck_assert_msg(sv_bench_load(tu_data("genai_perf_export.json"), &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(b->format, SV_BENCH_GENAI_PERF);
    ck_assert(b->has[SV_CM_REQ_TPUT] && b->value[SV_CM_REQ_TPUT] == 3.05);
    ck_assert(b->has[SV_CM_OUT_TPUT] && b->value[SV_CM_OUT_TPUT] == 815.25);
    ck_assert(!b->has[SV_CM_TOTAL_TPUT]); /* not in the export: absent, not zero */
    /* statistics: avg -> mean, p50 -> median, p90, p99 */
    ck_assert_double_eq(v_of(b, SV_LM_TTFT, 0), 91.5);
    ck_assert_double_eq(v_of(b, SV_LM_TTFT, 1), 58.25);
    ck_assert_double_eq(v_of(b, SV_LM_TTFT, 2), 192.0);
    ck_assert_double_eq(v_of(b, SV_LM_TTFT, 3), 301.75);
    /* their inter_token_latency is vLLM's TPOT, inter_chunk_latency vLLM's ITL */
    ck_assert_double_eq(v_of(b, SV_LM_TPOT, 0), 15.75);
    ck_assert_double_eq(v_of(b, SV_LM_TPOT, 3), 20.5);
    ck_assert_double_eq(v_of(b, SV_LM_ITL, 0), 15.25);
    ck_assert_double_eq(v_of(b, SV_LM_ITL, 3), 98.5);
    /* request_latency is E2EL */
    ck_assert_double_eq(v_of(b, SV_LM_E2EL, 1), 3610.25);
    ck_assert_double_eq(v_of(b, SV_LM_E2EL, 2), 6810.5);
    for (int l = 0; l < SV_LM_COUNT; l++)
        ck_assert(b->sample[l] == NULL);
    /* Against the vLLM fixture: each row's error is (sim - real) / real. */
    sv_bench_t *v = NULL;
    ck_assert_msg(sv_bench_load(tu_data("vllm_result_llama8b.json"), &v, &err) == 0, "%s", err.msg);
    sv_compare_t *c = NULL;
    ck_assert_int_eq(sv_compare_new(v, b, &c, &err), 0);
    int m = SV_CM_LAT_FIRST + 4 * SV_LM_TPOT;
    ck_assert_double_eq_tol(c->rows[m].err, (15.75 - v->value[m]) / v->value[m], 1e-15);
    ck_assert(!c->rows[SV_CM_TOTAL_TPUT].in_sim && c->rows[SV_CM_TOTAL_TPUT].in_real);
    ck_assert(isnan(c->rows[SV_CM_TOTAL_TPUT].err));
    ck_assert(isnan(c->ks[SV_LM_TTFT].d)); /* no per-request lists in the export */
    sv_compare_free(c);
    sv_bench_free(v);
    sv_bench_free(b);
}
END_TEST

START_TEST(test_compare_with_itself)
{
    sv_bench_t *a = NULL, *b = NULL;
    sv_error_t err;
    ck_assert_int_eq(sv_bench_load(tu_data("vllm_result_llama8b.json"), &a, &err), 0);
    ck_assert_int_eq(sv_bench_load(tu_data("vllm_result_llama8b.json"), &b, &err), 0);
    ck_assert_int_eq((int)a->n, 50);
    ck_assert_int_eq((int)a->nsample[SV_LM_TTFT], 50);
    ck_assert_int_eq((int)a->nsample[SV_LM_TPOT], 50);
    sv_compare_t *c = NULL;
    ck_assert_int_eq(sv_compare_new(a, b, &c, &err), 0);
    for (int m = 0; m < SV_CM_COUNT; m++)
        if (c->rows[m].in_real) ck_assert_double_eq(c->rows[m].err, 0.0);
    for (int l = 0; l < SV_LM_COUNT; l++) {
        ck_assert_double_eq(c->ks[l].d, 0.0);
        ck_assert_double_eq(c->ks[l].p, 1.0);
    }
    ck_assert_double_eq(c->worst_err, 0.0);
    ck_assert_int_eq(sv_compare_past(c, 0.0), 0);
    /* The mean TTFT of the file's list is the file's own mean_ttft_ms. */
    double s = 0;
    for (size_t i = 0; i < a->nsample[SV_LM_TTFT]; i++)
        s += a->sample[SV_LM_TTFT][i];
    tu_assert_rel(1e3 * s / 50, a->value[SV_CM_LAT_FIRST], 1e-12);
    sv_compare_free(c);
    sv_bench_free(a);
    sv_bench_free(b);
}
END_TEST

START_TEST(test_replay_trace)
{
    sv_bench_t *b = NULL;
    sv_trace_t *t = NULL;
    sv_error_t err;
    long skipped = -1;
    /* Absolute start times (far beyond the 15.6 s run) are rebased to the benchmark's
     * start: the last completion minus the duration. */
    ck_assert_int_eq(sv_bench_load(tu_data("vllm_result_llama8b.json"), &b, &err), 0);
    ck_assert_int_eq(sv_replay_trace(b, &t, &skipped, &err), 0);
    ck_assert_int_eq((int)t->n, 50);
    ck_assert_int_eq(skipped, 0);
    double last = 0;
    for (int i = 0; i < 50; i++)
        if (b->start_times[i] + b->latencies[i] > last) last = b->start_times[i] + b->latencies[i];
    double origin = last - b->duration;
    ck_assert(t->time[0] > 0 && t->time[0] < 1);
    ck_assert_double_eq_tol(t->time[0], b->start_times[0] - origin, 1e-9);
    ck_assert_double_eq_tol(t->time[49], b->start_times[49] - origin, 1e-9);
    ck_assert_int_eq(t->input[3], (int)b->input_lens[3]);
    ck_assert_int_eq(t->output[3], (int)b->output_lens[3]);
    sv_trace_free(t);
    sv_bench_free(b);
    /* A failed request is left out and counted. */
    ck_assert_int_eq(sv_bench_load(tu_data("result_one_failed.json"), &b, &err), 0);
    ck_assert_int_eq(sv_replay_trace(b, &t, &skipped, &err), 0);
    ck_assert_int_eq((int)t->n, 2);
    ck_assert_int_eq(skipped, 1);
    /* start 5120.25 and 5121.5; the last completion 5121.5 + 0.807 less the 2.75 s
     * duration puts the benchmark's start at 5119.557 */
    ck_assert_double_eq_tol(t->time[0], 0.693, 1e-9);
    ck_assert_double_eq_tol(t->time[1], 1.943, 1e-9);
    ck_assert_int_eq(t->output[1], 60);
    ck_assert_int_eq((int)b->nsample[SV_LM_TTFT], 2); /* failures out of the distributions */
    ck_assert_int_eq((int)b->nsample[SV_LM_ITL], 99 + 59);
    sv_trace_free(t);
    sv_bench_free(b);
    /* Without start_times the error names the key. */
    ck_assert_int_eq(sv_bench_load(tu_data("result_no_start_times.json"), &b, &err), 0);
    ck_assert_int_eq(sv_replay_trace(b, &t, &skipped, &err), SV_EINVAL);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.msg, "no key 'start_times'"), "%s", err.msg);
    sv_bench_free(b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_ks_by_hand);
    tcase_add_test(tc, test_kolmogorov_tail);
    tcase_add_test(tc, test_relative_errors);
    tcase_add_test(tc, test_genai_perf_mapping);
    tcase_add_test(tc, test_compare_with_itself);
    tcase_add_test(tc, test_replay_trace);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
