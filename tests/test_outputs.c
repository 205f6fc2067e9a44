/*
 * Output formats of other tools, checked on hand-checkable runs:
 *  - vLLM's result JSON (vllm/benchmarks/serve.py at commit 009e6d4a, benchmark() and
 *    main_async()): its keys in its order, queue_times (kept without --save-detailed),
 *    generated_texts (detailed; one placeholder word per output token), rtfx, and the
 *    client-side queue percentiles (client_queue_time, e2el_including_client_queue);
 *  - GenAI-Perf's profile export (perf_analyzer genai-perf at 263c5f6,
 *    llm_profile_data_parser.py _parse_requests, metrics/statistics.py): its metrics in its
 *    order, p1 to p99, time_to_second_token, output_token_throughput_per_user, throughput
 *    over its own duration, no inter_chunk_latency (an AIPerf metric);
 *  - LLMPerf's summary (token_benchmark_ray.py, metrics_summary): results_error_code_frequency.
 *
 * The run: 4 requests of 128 tokens in, 4 out, rate inf, max_concurrency 2. Requests 0 and
 * 1 run together and end at L; 2 and 3 are sent at L (their slots free) and end at 2L. In
 * vLLM every request is created at t = 0, so the client queue times are 0, 0, L, L.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "servesim/metrics/metrics.h"
#include "servesim/report/convention.h"
#include "servesim/report/report.h"
#include "testsim.h"

static sv_catalog_t *cat;

static void setup(void)
{
    cat = tu_catalog();
}

static void teardown(void)
{
    sv_catalog_free(cat);
}

static const char *hand = "name: hand\nseed: 1\nmodel: llama-3.1-8b\n"
                          "hardware: {gpu: h100-sxm, tp: 1}\n"
                          "workload:\n  num_requests: 4\n  rate: inf\n  max_concurrency: 2\n"
                          "  input: {dist: fixed, value: 128}\n"
                          "  output: {dist: fixed, value: 4}\n";

/* The JSON of res in convention c, parsed (caller deletes). */
static cJSON *json_of(const sv_result_t *res, sv_convention_t c, int detailed)
{
    char path[] = "/tmp/sv_outputs_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    sv_error_t err;
    ck_assert_msg(sv_report_json_as(res, c, detailed, path, &err) == 0, "%s", err.msg);
    FILE *f = fopen(path, "rb");
    ck_assert(f != NULL);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    cJSON *j = cJSON_Parse(buf);
    ck_assert_msg(j != NULL, "not JSON");
    return j;
}

static double num(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    ck_assert_msg(cJSON_IsNumber(v), "no number '%s'", key);
    return v->valuedouble;
}

static double item(const cJSON *arr, int i)
{
    const cJSON *v = cJSON_GetArrayItem(arr, i);
    ck_assert(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* The first n keys of object j are want[0..n). */
static void keys_are(const cJSON *j, const char *const *want, int n)
{
    const cJSON *k = j->child;
    for (int i = 0; i < n; i++, k = k->next) {
        ck_assert_msg(k != NULL, "missing key %d '%s'", i, want[i]);
        ck_assert_msg(strcmp(k->string, want[i]) == 0, "key %d: '%s', vLLM has '%s'", i,
                      k->string, want[i]);
    }
}

START_TEST(test_vllm_result_keys)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, hand, NULL, 0, &sc);
    ck_assert_int_eq(res->summary.completed, 4);
    cJSON *j = json_of(res, SV_CONV_VLLM, 1);
    /* vLLM's result_json: the setup keys, then benchmark()'s result dict in its order */
    static const char *const want[] = {
        "date",          "endpoint_type",      "backend",          "label",
        "model_id",      "tokenizer_id",       "num_prompts",      "request_rate",
        "burstiness",    "max_concurrency",    "duration",         "completed",
        "failed",        "total_input_tokens", "total_output_tokens", "request_throughput",
        "request_goodput", "output_throughput", "total_token_throughput", "input_lens",
        "output_lens",   "ttfts",              "itls",             "latencies",
        "start_times",   "queue_times",        "generated_texts",  "errors",
        "max_output_tokens_per_s", "max_concurrent_requests", "rtfx", "mean_ttft_ms"};
    keys_are(j, want, (int)(sizeof want / sizeof want[0]));
    const cJSON *lat = cJSON_GetObjectItemCaseSensitive(j, "latencies"),
                *q = cJSON_GetObjectItemCaseSensitive(j, "queue_times"),
                *st = cJSON_GetObjectItemCaseSensitive(j, "start_times"),
                *txt = cJSON_GetObjectItemCaseSensitive(j, "generated_texts");
    double L = item(lat, 0);
    ck_assert(L > 0);
    ck_assert_double_eq(item(q, 0), 0.0);
    ck_assert_double_eq(item(q, 1), 0.0);
    ck_assert_double_eq(item(q, 2), L); /* sent when request 0 ended, created at 0 */
    ck_assert_double_eq(item(q, 3), L);
    ck_assert_double_eq(item(st, 2), L);
    for (int i = 0; i < 4; i++)
        ck_assert_str_eq(cJSON_GetArrayItem(txt, i)->valuestring, "x x x x");
    ck_assert_double_eq(num(j, "rtfx"), 0.0);
    cJSON_Delete(j);
    /* Without --save-detailed vLLM deletes input_lens, output_lens, start_times, ttfts,
     * itls, generated_texts and errors; latencies and queue_times stay. */
    j = json_of(res, SV_CONV_VLLM, 0);
    static const char *const plain[] = {"total_token_throughput", "latencies", "queue_times",
                                        "max_output_tokens_per_s"};
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "total_token_throughput");
    for (int i = 0; i < 4; i++, k = k->next)
        ck_assert_str_eq(k->string, plain[i]);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "generated_texts"));
    /* no client queue percentiles unless selected */
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "mean_client_queue_time_ms"));
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

START_TEST(test_client_queue_percentiles)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, hand, NULL, 0, &sc);
    /* metrics.percentile_metrics: [ttft, tpot, itl, e2el, client_queue_time,
     * e2el_including_client_queue], as vLLM's --percentile-metrics */
    sc->metrics.selected |= SV_M_CLIENT_QUEUE | SV_M_E2EL_QUEUE;
    cJSON *j = json_of(res, SV_CONV_VLLM, 0);
    double L = item(cJSON_GetObjectItemCaseSensitive(j, "latencies"), 0) * 1e3;
    /* queue times 0, 0, L, L ms: mean L/2, median (0 + L)/2, population std L/2, p99 at
     * rank 2.97 between L and L */
    tu_assert_rel(num(j, "mean_client_queue_time_ms"), L / 2, 1e-12);
    tu_assert_rel(num(j, "median_client_queue_time_ms"), L / 2, 1e-12);
    tu_assert_rel(num(j, "std_client_queue_time_ms"), L / 2, 1e-12);
    tu_assert_rel(num(j, "p99_client_queue_time_ms"), L, 1e-12);
    /* rate inf: vLLM computes no queue-inclusive E2EL */
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "mean_e2el_including_client_queue_ms"));
    cJSON_Delete(j);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    sv_report_summary(res, f);
    fclose(f);
    /* process_one_metric's header: "{s:{c}^{n}}" of "Client-side Queueing", 50 wide */
    ck_assert_msg(strstr(buf, "---------------Client-side Queueing---------------\n"
                              "Mean Client Queue Time (ms):"),
                  "%s", buf);
    ck_assert_ptr_null(strstr(buf, "Queue-inclusive"));
    free(buf);
    tu_done(sc, res);

    /* At a finite rate the queue time is start - arrival and the E2EL includes it. */
    const char *sets[] = {"workload.rate=400", "workload.max_concurrency=1"};
    res = tu_run_yaml(cat, hand, sets, 2, &sc);
    sc->metrics.selected |= SV_M_CLIENT_QUEUE | SV_M_E2EL_QUEUE;
    j = json_of(res, SV_CONV_VLLM, 0);
    double sum = 0.0, sumq = 0.0;
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        sumq += r->start - r->arrival;
        sum += r->start - r->arrival + sv_req_e2el(r);
    }
    ck_assert(sumq > 0); /* one slot: the later requests waited */
    tu_assert_rel(num(j, "mean_client_queue_time_ms"), sumq / 4 * 1e3, 1e-12);
    tu_assert_rel(num(j, "mean_e2el_including_client_queue_ms"), sum / 4 * 1e3, 1e-12);
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

START_TEST(test_genai_perf_export)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, hand, NULL, 0, &sc);
    cJSON *j = json_of(res, SV_CONV_GENAI_PERF, 0);
    static const char *const want[] = {"request_throughput",
                                       "request_latency",
                                       "request_count",
                                       "time_to_first_token",
                                       "time_to_second_token",
                                       "inter_token_latency",
                                       "output_token_throughput",
                                       "output_token_throughput_per_user",
                                       "output_sequence_length",
                                       "input_sequence_length",
                                       "date"};
    keys_are(j, want, (int)(sizeof want / sizeof want[0]));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "inter_chunk_latency"));
    /* GenAI-Perf's duration: the last response (2L) less the first request (0); 4
     * requests and 16 output tokens over it */
    double end = 0.0;
    for (size_t i = 0; i < res->pool.n; i++)
        end = fmax(end, res->pool.r[i].last_token);
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(j, "request_throughput");
    tu_assert_rel(num(rt, "avg"), 4.0 / end, 1e-12);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(rt, "p50")); /* a system metric */
    tu_assert_rel(num(cJSON_GetObjectItemCaseSensitive(j, "output_token_throughput"), "avg"),
                  16.0 / end, 1e-12);
    ck_assert_double_eq(num(cJSON_GetObjectItemCaseSensitive(j, "request_count"), "avg"), 4.0);
    /* time to second token: each request's first gap; per user: 1 / TPOT */
    double gap = 0.0, tps = 0.0;
    for (size_t i = 0; i < res->pool.n; i++) {
        double *v = NULL;
        size_t nv = 0;
        ck_assert_int_eq(sv_metrics_itls(res->metrics, &res->pool, (int32_t)i, &v, &nv), 0);
        ck_assert_int_eq(nv, 3);
        gap += v[0] * 1e3 / 4;
        tps += 1.0 / sv_req_tpot(&res->pool.r[i]) / 4;
        free(v);
    }
    const cJSON *ttst = cJSON_GetObjectItemCaseSensitive(j, "time_to_second_token");
    tu_assert_rel(num(ttst, "avg"), gap, 1e-12);
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(j, "output_token_throughput_per_user");
    tu_assert_rel(num(user, "avg"), tps, 1e-12);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(user, "unit")->valuestring,
                     "tokens/sec/user");
    /* the percentiles GenAI-Perf computes, in its order, then min, max, std */
    static const char *const stats[] = {"unit", "avg", "p1",  "p5",  "p10", "p25", "p50",
                                        "p75",  "p90", "p95", "p99", "min", "max", "std"};
    keys_are(cJSON_GetObjectItemCaseSensitive(j, "request_latency"), stats, 14);
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

/* The detailed ITL lists are written from runs of decode steps shared between requests
 * (each step's gap formatted once, a run copied as bytes) and the lone gaps; with
 * preemptions a request's list has several segments, each with its join gap, and the
 * tokens of its re-prefills. Every list must hold, number for number, the request's gaps
 * (sv_metrics_itls), and a run must cover several requests' steps. */
static const char *preempting = "seed: 5\n"
                                "model: llama-3.1-8b\n"
                                "hardware: {gpu: h100-sxm, gpu_memory_utilization: 0.215}\n"
                                "workload:\n"
                                "  num_requests: 40\n"
                                "  rate: 40\n"
                                "  input: {dist: uniform, min: 16, max: 256}\n"
                                "  output: {dist: uniform, min: 200, max: 600}\n";

START_TEST(test_itl_lists_by_runs)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, preempting, NULL, 0, &sc);
    ck_assert_int_gt(res->preemptions, 0);
    cJSON *j = json_of(res, SV_CONV_VLLM, 1);
    const cJSON *itls = cJSON_GetObjectItemCaseSensitive(j, "itls");
    ck_assert_int_eq(cJSON_GetArraySize(itls), (int)res->pool.n);
    sv_itl_run_t *runs = NULL;
    size_t cap = 0, lone = 0, multi = 0;
    for (size_t i = 0; i < res->pool.n; i++) {
        double *v = NULL;
        size_t nv = 0, nr = 0;
        ck_assert_int_eq(sv_metrics_itls(res->metrics, &res->pool, (int32_t)i, &v, &nv), 0);
        ck_assert_int_eq(nv, (size_t)res->pool.r[i].output - 1);
        const cJSON *list = cJSON_GetArrayItem(itls, (int)i);
        ck_assert_int_eq(cJSON_GetArraySize(list), (int)nv);
        for (size_t k = 0; k < nv; k++)
            ck_assert_double_eq(cJSON_GetArrayItem(list, (int)k)->valuedouble, v[k]);
        free(v);
        ck_assert_int_eq(sv_metrics_itl_runs(res->metrics, &res->pool, (int32_t)i, &runs, &cap, &nr), 0);
        size_t steps = 0;
        for (size_t r = 0; r < nr; r++) {
            lone += runs[r].stream < 0;
            steps += runs[r].stream < 0 ? 0 : 1;
        }
        multi += steps > 1; /* preempted and decoding again: two runs of steps or more */
    }
    ck_assert_int_gt(lone, 40); /* join gaps of later segments and re-prefilled tokens */
    ck_assert_int_gt(multi, 0);
    free(runs);
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

START_TEST(test_llmperf_error_codes)
{
    /* 20 prompts of 50-150 tokens, 30 out, max_model_len 160: those over 130 tokens fail
     * with HTTP 400; pandas makes the codes floats when some requests succeeded. */
    const char *sets[] = {"engine.max_model_len=160", "workload.num_requests=20",
                          "workload.input={dist: uniform, min: 50, max: 150}",
                          "workload.output=30"};
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, hand, sets, 4, &sc);
    long failed = res->summary.failed;
    ck_assert_int_gt(failed, 0);
    ck_assert_int_lt(failed, 20);
    ck_assert_int_eq(res->summary.failed_by[SV_FAIL_TOO_LONG], failed);
    cJSON *j = json_of(res, SV_CONV_LLMPERF, 0);
    char want[64];
    snprintf(want, sizeof want, "{400.0: %ld}", failed);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "results_error_code_frequency");
    ck_assert_str_eq(f->valuestring, want);
    /* after results_number_errors, as LLMPerf's summary has it */
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "results_number_errors")->next->string,
                     "results_error_code_frequency");
    cJSON_Delete(j);
    tu_done(sc, res);
    /* every request too long: ints; none failing: {} */
    const char *all[] = {"engine.max_model_len=160", "workload.input=140", "workload.output=30"};
    res = tu_run_yaml(cat, hand, all, 3, &sc);
    j = json_of(res, SV_CONV_LLMPERF, 0);
    ck_assert_str_eq(
        cJSON_GetObjectItemCaseSensitive(j, "results_error_code_frequency")->valuestring,
        "{400: 4}");
    cJSON_Delete(j);
    tu_done(sc, res);
    res = tu_run_yaml(cat, hand, NULL, 0, &sc);
    j = json_of(res, SV_CONV_LLMPERF, 0);
    ck_assert_str_eq(
        cJSON_GetObjectItemCaseSensitive(j, "results_error_code_frequency")->valuestring, "{}");
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("outputs");
    TCase *tc = tcase_create("outputs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_vllm_result_keys);
    tcase_add_test(tc, test_client_queue_percentiles);
    tcase_add_test(tc, test_genai_perf_export);
    tcase_add_test(tc, test_llmperf_error_codes);
    tcase_add_test(tc, test_itl_lists_by_runs);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
