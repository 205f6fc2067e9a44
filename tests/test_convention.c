/*
 * Unit tests of the other tools' metric conventions (servesim/report/convention.h): each
 * convention computed on the same three hand-made requests, against values worked out by
 * hand from each tool's definitions (../shared/spec/metrics.md).
 *
 *   A: start 0, first token 0.1, last 0.5, input 100, output 5, gaps 0.05 0.15 0.1 0.1
 *   B: start 1, first token 1.3, last 1.3, input 200, output 1 (no TPOT, no gap)
 *   C: start 2, first token 2.2, last 2.8, input 300, output 3, gaps 0.2 0.4
 *   D: failed: counts in no metric
 * TTFT  = [0.1, 0.3, 0.2]          E2EL = [0.5, 0.3, 0.8]
 * TPOT  = [(0.5-0.1)/4, (0.8-0.2)/2] = [0.1, 0.3]            (B has one token)
 * ITL   = [0.05, 0.15, 0.1, 0.1, 0.2, 0.4]                   (pooled)
 * LLMPerf's inter-token latency = E2EL / output = [0.1, 0.3, 4/15]
 */
#include <math.h>

#include "servesim/report/convention.h"
#include "testutil.h"

static sv_req_t mk(double start, double first, double last, int in, int out, int state)
{
    sv_req_t r;
    memset(&r, 0, sizeof r);
    r.arrival = r.start = r.scheduled = start;
    r.first_token = r.prefill_end = first;
    r.last_token = r.end = last;
    r.xfer_start = r.xfer_end = r.decode_start = -1.0;
    r.input = in;
    r.output = out;
    r.state = (uint8_t)state;
    return r;
}

static sv_req_t R[4];
static const double ITL[] = {0.05, 0.15, 0.1, 0.1, 0.2, 0.4};

static void setup(void)
{
    R[0] = mk(0.0, 0.1, 0.5, 100, 5, SV_RQ_DONE);
    R[1] = mk(1.0, 1.3, 1.3, 200, 1, SV_RQ_DONE);
    R[2] = mk(2.0, 2.2, 2.8, 300, 3, SV_RQ_DONE);
    R[3] = mk(3.0, 3.5, 9.0, 400, 7, SV_RQ_FAILED);
}

/* The statistics of the metric of convention c whose tool key is key. */
static sv_conv_stat_t stat_of(sv_convention_t c, const char *key, sv_conv_quantity_t *q)
{
    const sv_convention_def_t *d = sv_convention_get(c);
    static const double run_p[] = {50, 99};
    for (int i = 0; i < d->nmetrics; i++) {
        if (strcmp(d->metrics[i].key, key) != 0) continue;
        sv_conv_stat_t st;
        sv_error_t err;
        ck_assert_int_eq(sv_conv_stat(d->metrics[i].q, R, 4, ITL, 6, d->pcts ? d->pcts : run_p,
                                      d->pcts ? d->npcts : 2, d->metrics[i].scale, d->ddof, &st,
                                      &err),
                         0);
        if (q) *q = d->metrics[i].q;
        return st;
    }
    ck_abort_msg("convention %s has no metric '%s'", d->name, key);
    sv_conv_stat_t none = {0};
    return none;
}

#define NEAR(a, b) tu_assert_rel((a), (b), 1e-9)

START_TEST(test_vllm)
{
    sv_conv_quantity_t q;
    /* TTFT ms: [100, 200, 300]; population std sqrt(20000/3); p99 at rank 1.98. */
    sv_conv_stat_t t = stat_of(SV_CONV_VLLM, "ttft", &q);
    ck_assert_int_eq(q, SV_CQ_TTFT);
    ck_assert_int_eq(t.n, 3);
    NEAR(t.mean, 200.0);
    NEAR(t.median, 200.0);
    NEAR(t.std, sqrt(20000.0 / 3.0));
    NEAR(t.pct[1], 298.0);
    /* TPOT ms: [100, 300] (B excluded); std 100; p99 = 100 + 0.99 x 200. */
    sv_conv_stat_t p = stat_of(SV_CONV_VLLM, "tpot", NULL);
    ck_assert_int_eq(p.n, 2);
    NEAR(p.mean, 200.0);
    NEAR(p.std, 100.0);
    NEAR(p.pct[1], 298.0);
    /* ITL ms sorted [50, 100, 100, 150, 200, 400]: mean 1000/6, median 125, p99 at rank
     * 4.95 = 200 + 0.95 x 200 = 390; population variance 78333.33 / 6. */
    sv_conv_stat_t i = stat_of(SV_CONV_VLLM, "itl", NULL);
    ck_assert_int_eq(i.n, 6);
    NEAR(i.mean, 1000.0 / 6.0);
    NEAR(i.median, 125.0);
    NEAR(i.pct[1], 390.0);
    NEAR(i.std, sqrt(235000.0 / 3.0 / 6.0));
    /* E2EL ms [300, 500, 800]. */
    sv_conv_stat_t e = stat_of(SV_CONV_VLLM, "e2el", NULL);
    NEAR(e.mean, 1600.0 / 3.0);
    NEAR(e.median, 500.0);
}
END_TEST

START_TEST(test_genai_perf)
{
    sv_conv_quantity_t q;
    /* GenAI-Perf's inter_token_latency is vLLM's TPOT: [100, 300] ms; its percentiles
     * p1 p5 p10 p25 ... at ranks 0.01, 0.05, 0.1, 0.25: 102, 110, 120, 150. */
    sv_conv_stat_t t = stat_of(SV_CONV_GENAI_PERF, "inter_token_latency", &q);
    ck_assert_int_eq(q, SV_CQ_TPOT);
    NEAR(t.mean, 200.0);
    NEAR(t.min, 100.0);
    NEAR(t.max, 300.0);
    NEAR(t.pct[0], 102.0); /* p1 */
    NEAR(t.pct[1], 110.0); /* p5 */
    NEAR(t.pct[2], 120.0); /* p10 */
    NEAR(t.pct[3], 150.0); /* p25 */
    NEAR(t.pct[5], 250.0); /* p75 */
    NEAR(t.std, 100.0);
    /* output_token_throughput_per_user is 1 / that: [10, 10/3] tokens/s */
    sv_conv_stat_t u = stat_of(SV_CONV_GENAI_PERF, "output_token_throughput_per_user", &q);
    ck_assert_int_eq(q, SV_CQ_TPS_USER);
    ck_assert_int_eq(u.n, 2);
    NEAR(u.mean, (10.0 + 10.0 / 3.0) / 2.0);
    NEAR(u.max, 10.0);
    /* inter_chunk_latency is AIPerf's, not GenAI-Perf's */
    const sv_convention_def_t *d = sv_convention_get(SV_CONV_GENAI_PERF);
    for (int i = 0; i < d->nmetrics; i++)
        ck_assert_str_ne(d->metrics[i].key, "inter_chunk_latency");
    sv_conv_stat_t r = stat_of(SV_CONV_GENAI_PERF, "request_latency", NULL);
    NEAR(r.mean, 1600.0 / 3.0);
    NEAR(r.max, 800.0);
    sv_conv_stat_t o = stat_of(SV_CONV_GENAI_PERF, "output_sequence_length", NULL);
    NEAR(o.mean, 3.0);
    NEAR(o.min, 1.0);
    /* time_to_second_token: the first gap of each request with two tokens or more (A 0.05,
     * C 0.2), given as the pooled values */
    static const double first[] = {0.05, 0.2};
    sv_conv_stat_t s2;
    sv_error_t err;
    ck_assert_int_eq(sv_conv_stat(SV_CQ_TTST, R, 4, first, 2, d->pcts, d->npcts, 1e3, 0, &s2,
                                  &err),
                     0);
    NEAR(s2.mean, 125.0);
    NEAR(s2.pct[4], 125.0); /* p50 */
    ck_assert(sv_conv_is_system(SV_CQ_REQ_TPUT) && !sv_conv_is_system(SV_CQ_TTST));
}
END_TEST

START_TEST(test_llmperf)
{
    sv_conv_quantity_t q;
    /* Inter-token latency with the TTFT in: E2EL / output = [9, 27, 24] / 90 s; mean 20/90;
     * sample std (ddof 1): deviations [-11, 7, 4] / 90, sqrt(186 / 2) / 90. */
    sv_conv_stat_t i = stat_of(SV_CONV_LLMPERF, "inter_token_latency_s", &q);
    ck_assert_int_eq(q, SV_CQ_ITL_WITH_TTFT);
    ck_assert_int_eq(i.n, 3);
    NEAR(i.mean, 20.0 / 90.0);
    NEAR(i.std, sqrt(93.0) / 90.0);
    NEAR(i.min, 0.1);
    NEAR(i.max, 0.3);
    NEAR(i.pct[1], 24.0 / 90.0); /* p50 */
    /* TTFT in seconds, std with ddof 1: sqrt((0.01 + 0.01 + 0) / 2) = 0.1 (vLLM: 0.0816). */
    sv_conv_stat_t t = stat_of(SV_CONV_LLMPERF, "ttft_s", NULL);
    NEAR(t.mean, 0.2);
    NEAR(t.std, 0.1);
    /* Per-request output throughput: output / E2EL = [10, 10/3, 3.75] tokens/s. */
    sv_conv_stat_t o = stat_of(SV_CONV_LLMPERF, "request_output_throughput_token_per_s", NULL);
    NEAR(o.mean, (10.0 + 10.0 / 3.0 + 3.75) / 3.0);
    NEAR(o.min, 10.0 / 3.0);
    ck_assert_int_eq(sv_convention_get(SV_CONV_LLMPERF)->ddof, 1);
}
END_TEST

START_TEST(test_sglang)
{
    sv_conv_quantity_t q;
    /* SGLang names E2EL e2e_latency; values and ddof as vLLM's. */
    sv_conv_stat_t e = stat_of(SV_CONV_SGLANG, "e2e_latency", &q);
    ck_assert_int_eq(q, SV_CQ_E2EL);
    NEAR(e.mean, 1600.0 / 3.0);
    /* Deviations from 1600/3 in units of 100/3: -7, -1, 8; population variance. */
    NEAR(e.std, sqrt(10000.0 / 9.0 * (49.0 + 1.0 + 64.0) / 3.0));
    sv_conv_stat_t i = stat_of(SV_CONV_SGLANG, "itl", &q);
    ck_assert_int_eq(q, SV_CQ_ITL);
    NEAR(i.max, 400.0);
    NEAR(i.pct[1], 390.0);
}
END_TEST

START_TEST(test_parse)
{
    sv_convention_t c;
    sv_error_t err;
    ck_assert_int_eq(sv_convention_parse("genai-perf", &c, &err), 0);
    ck_assert_int_eq(c, SV_CONV_GENAI_PERF);
    ck_assert_int_eq(sv_convention_parse("sglang", &c, &err), 0);
    ck_assert_int_eq(c, SV_CONV_SGLANG);
    ck_assert_int_eq(sv_convention_parse("aiperf", &c, &err), SV_EINVAL);
    ck_assert_str_eq(
        err.msg, "--convention: expected one of vllm, genai-perf, llmperf, sglang, got 'aiperf'");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("convention");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_vllm);
    tcase_add_test(tc, test_genai_perf);
    tcase_add_test(tc, test_llmperf);
    tcase_add_test(tc, test_sglang);
    tcase_add_test(tc, test_parse);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
