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
                             double lat, const char *cls, const char *gpu_status)
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
    ck_assert(cJSON_GetObjectItemCaseSensitive(c, "latency_error_band_pct")->valuedouble == lat);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(c, "model_class")->valuestring, cls);
    const cJSON *cg = cJSON_GetObjectItemCaseSensitive(c, "gpu");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cg, "calibration")->valuestring, gpu_status);
    cJSON_Delete(j);
}

/*
 * Sequences that fit one H200 (TP 1; Llama-4 Scout and Qwen3-Next with FP8 weights) at 50 +
 * 50, 1000 + 1000 and 8000 + 8000 tokens: the pool's blocks are one KV cache group's page
 * (group layers x full-attention KV x 16 tokens), a sequence holds at rest at most (block 16):
 *   gpt-oss-120b   7 + 7        125 + 9 (the 128 window: 8 blocks + 1 it straddles)   1000 + 9
 *   Gemma-3-27B    7 + 6 x 7    125 + 6 x 65 (the 1024 window)                        1000 + 390
 *   Llama-4 Scout  7 + 3 x 7    125 + 3 x 125 (its first chunk of 8192)              1000 + 3 x 512
 *   Qwen3-Next     7 + 3 x 66   125 + 198 (the state, from the first token)           1000 + 198
 * (The fixed charge before: gpt-oss 8 blocks, Gemma 333, Scout 1536, Qwen3-Next 197 a
 * sequence besides its tokens.)
 */
START_TEST(test_explain_kv_groups)
{
    static const struct {
        const char *model;
        int fp8;
        long page_layers; /* layers of a group */
        long blocks[3];
    } cases[] = {
        {"gpt-oss-120b", 0, 18, {14, 134, 1009}},
        {"gemma-3-27b", 0, 10, {49, 515, 1390}},
        {"llama-4-scout", 1, 12, {28, 500, 2536}},
        {"qwen3-next-80b-a3b", 1, 12, {205, 323, 1198}},
    };
    static const long len[3][2] = {{50, 50}, {1000, 1000}, {8000, 8000}};
    sv_catalog_t *cat = tu_catalog();
    sv_error_t err;
    const sv_gpu_t *g;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h200", &g, &err), 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const sv_model_t *m;
        ck_assert_int_eq(sv_catalog_model(cat, cases[i].model, &m, &err), 0);
        sv_perf_settings_t s = sv_perf_settings_default();
        if (cases[i].fp8) {
            s.weight_dtype = SV_DT_FP8;
            s.weight_dtype_given = 1;
        }
        sv_perf_t p;
        ck_assert_msg(sv_perf_init(&p, g, m, &s, &err) == 0, "%s", err.msg);
        double page = (double)cases[i].page_layers * p.kv_bytes_token_layer * 16.0;
        long batches[] = {1};
        for (int j = 0; j < 3; j++) {
            sv_explain_t e;
            ck_assert_int_eq(sv_explain_compute(&p, len[j][0], len[j][1], batches, 1, &e, &err), 0);
            ck_assert_int_eq(e.mem.kv_blocks, (long)floor(e.mem.kv_bytes / page));
            ck_assert_msg(e.seq_blocks == cases[i].blocks[j], "%s at %ld: %ld blocks",
                          cases[i].model, len[j][0] + len[j][1], e.seq_blocks);
            ck_assert_int_eq(e.max_seqs, e.mem.kv_blocks / cases[i].blocks[j]);
        }
    }
    sv_catalog_free(cat);
}
END_TEST

START_TEST(test_confidence_json)
{
    sv_catalog_t *cat = tu_catalog();
    /* A100 (kernel fit) with the eager profile (fitted to Splitwise): measured, +-5% (80%
     * of its left-out points, test_confidence.c). */
    check_confidence(cat, "a100-80gb", "eager", "llama-3.1-8b", 1, "measured", 5.0, 30.0, "dense",
                     "measured");
    /* MI300X (fitted to AMD's rows) with the hand-set vllm profile: transferred, +-11%, +-28%
     * (sim/studies/bands.c). */
    check_confidence(cat, "mi300x", "vllm", "llama-3.1-70b", 8, "transferred", 11.0, 28.0, "dense",
                     "measured");
    /* B200: datasheet only, +-50%. */
    check_confidence(cat, "b200", "vllm", "llama-3.1-8b", 1, "datasheet", 50.0, 50.0, "dense",
                     "datasheet");
    /* DeepSeek-R1 (MoE, MLA) on the H200 with sglang: the InferenceX families' band, +-43%
     * and +-55% (sim/studies/bands.c), not the dense models' */
    check_confidence(cat, "h200", "sglang", "deepseek-r1", 8, "transferred", 43.0, 55.0,
                     "moe-mla", "transferred");
    sv_catalog_free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("explain");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_explain_numbers);
    tcase_add_test(tc, test_explain_kv_groups);
    tcase_add_test(tc, test_confidence_json);
    tcase_add_test(tc, test_explain_draft_model);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
