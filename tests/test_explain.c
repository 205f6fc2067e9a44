/*
 * Unit tests of `explain`: its numbers agree with the cost model they summarise, and the
 * single-request latency is TTFT + the exact sum of decode steps.
 */
#include <cJSON.h>
#include <math.h>

#include "servesim/studies/explain.h"
#include "testutil.h"

START_TEST(test_explain_numbers)
{
    sv_catalog_t *cat = tu_catalog();
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    sv_perf_t p;
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), 0);
    long batches[] = {1, 8, 32, 64};
    sv_explain_t e;
    ck_assert_msg(sv_explain_compute(&p, 1024, 256, batches, 4, &e, &err) == 0, "%s", err.msg);
    ck_assert(e.ttft_s == sv_perf_prefill_time(&p, 1024, NULL));
    ck_assert(e.decode_ctx == 1024.0 + 128.0);
    /* Decode steps are linear in context, so the mean of steps at 1024 .. 1278 cached tokens
     * equals the step at their mean, 1151. */
    tu_assert_rel(e.tpot_s, sv_perf_decode_time(&p, 1, 1151.0, NULL), 1e-9);
    tu_assert_rel(e.e2e_s, e.ttft_s + 255.0 * e.tpot_s, 1e-12);
    for (int i = 0; i < 4; i++) {
        ck_assert(e.rows[i].step_s == sv_perf_decode_time(&p, batches[i], 1152.0, NULL));
        tu_assert_rel(e.rows[i].tok_s_gpu, batches[i] / e.rows[i].step_s, 1e-12);
        if (i) ck_assert(e.rows[i].tok_s_gpu > e.rows[i - 1].tok_s_gpu);
        ck_assert_int_eq(e.rows[i].fits, 1);
    }
    /* 1280-token sequences take 80 blocks of 16. */
    ck_assert_int_eq(e.max_seqs, e.mem.kv_blocks / 80);

    cJSON *j = sv_explain_json(&e);
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(j, "single_request");
    ck_assert(cJSON_GetObjectItemCaseSensitive(one, "e2e_ms")->valuedouble == e.e2e_s * 1e3);
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(j, "memory");
    ck_assert(cJSON_GetObjectItemCaseSensitive(mem, "kv_bytes_per_token")->valuedouble == 131072.0);
    const cJSON *rows =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "decode"), "batches");
    ck_assert_int_eq(cJSON_GetArraySize(rows), 4);
    cJSON_Delete(j);

    ck_assert_int_eq(sv_explain_compute(&p, 0, 256, batches, 4, &e, &err), SV_EINVAL);
    sv_catalog_free(cat);
}
END_TEST

/* A draft model in explain: its memory per GPU, the KV per token both models take
 * (Llama-3.1-8B 131,072 + Llama-3.2-1B 32,768 at TP 1) and its JSON block. */
START_TEST(test_explain_draft_model)
{
    sv_catalog_t *cat = tu_catalog();
    sv_error_t err;
    sv_perf_t p, d;
    tu_draft_pair(cat, 1, 0, "3", "0.7", &p, &d);
    long batches[] = {1, 8};
    sv_explain_t e;
    ck_assert_msg(sv_explain_compute(&p, 1024, 256, batches, 2, &e, &err) == 0, "%s", err.msg);
    cJSON *j = sv_explain_json(&e);
    const cJSON *dj = cJSON_GetObjectItemCaseSensitive(j, "draft_model");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(dj, "name")->valuestring, "llama-3.2-1b");
    ck_assert(cJSON_GetObjectItemCaseSensitive(dj, "kv_bytes_per_token_per_gpu")->valuedouble ==
              32768.0);
    ck_assert(cJSON_GetObjectItemCaseSensitive(dj, "weight_bytes_per_gpu")->valuedouble ==
              d.weight_bytes_gpu);
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(j, "memory");
    ck_assert(cJSON_GetObjectItemCaseSensitive(mem, "kv_bytes_per_token")->valuedouble == 163840.0);
    cJSON_Delete(j);
    sv_catalog_free(cat);
}
END_TEST

/* The confidence mark in explain's JSON: status and band of a measured and a
 * datasheet-only GPU (docs/cost-model.md, "Calibration status and error bands"). */
static void check_confidence(sv_catalog_t *cat, const char *gpu, const char *profile,
                             const char *model, int tp, const char *status, double thr,
                             const char *gpu_status)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, gpu, &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, model, &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    ck_assert_int_eq(sv_perf_settings_profile(&s, cat, profile, &err), 0);
    sv_perf_t p;
    ck_assert_msg(sv_perf_init(&p, g, m, &s, &err) == 0, "%s", err.msg);
    long batches[] = {1};
    sv_explain_t e;
    ck_assert_int_eq(sv_explain_compute(&p, 512, 64, batches, 1, &e, &err), 0);
    cJSON *j = sv_explain_json(&e);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "confidence");
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(c, "status")->valuestring, status);
    ck_assert(cJSON_GetObjectItemCaseSensitive(c, "throughput_error_band_pct")->valuedouble == thr);
    const cJSON *cg = cJSON_GetObjectItemCaseSensitive(c, "gpu");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cg, "calibration")->valuestring, gpu_status);
    cJSON_Delete(j);
}

START_TEST(test_confidence_json)
{
    sv_catalog_t *cat = tu_catalog();
    /* A100 (kernel fit) with the eager profile (fitted to Splitwise): measured, +-7% (80%
     * of its left-out points, test_confidence.c). */
    check_confidence(cat, "a100-80gb", "eager", "llama-3.1-8b", 1, "measured", 7.0, "measured");
    /* MI300X (fitted to AMD's rows) with the hand-set vllm profile: transferred, +-7%. */
    check_confidence(cat, "mi300x", "vllm", "llama-3.1-70b", 8, "transferred", 7.0, "measured");
    /* B200: datasheet only, +-50%. */
    check_confidence(cat, "b200", "vllm", "llama-3.1-8b", 1, "datasheet", 50.0, "datasheet");
    sv_catalog_free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("explain");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_explain_numbers);
    tcase_add_test(tc, test_confidence_json);
    tcase_add_test(tc, test_explain_draft_model);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
