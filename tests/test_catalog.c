/*
 * Unit tests of the catalog: the shipped GPUs and models with their datasheet figures,
 * lookups and their errors, config.json models, and strict catalog files.
 */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servesim/cost/catalog.h"
#include "servesim/cost/perf.h"
#include "testutil.h"

START_TEST(test_shipped_gpus)
{
    sv_catalog_t *cat = tu_catalog();
    const char *names[] = {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200",
                           "b200",      "l40s",      "l4",       "mi300x"};
    sv_error_t err;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const sv_gpu_t *g;
        ck_assert_msg(sv_catalog_gpu(cat, names[i], &g, &err) == 0, "%s", err.msg);
        ck_assert(g->bf16_flops > 0 && g->hbm_bw > 0 && g->mem_bytes > 0 && g->tdp_w > 0);
        ck_assert(g->idle_w > 0 && g->idle_w < g->tdp_w && g->price_per_hour > 0);
        ck_assert(g->compute_eff > 0 && g->compute_eff <= 1 && g->memory_eff > 0);
        ck_assert(g->source[0] != '\0');
    }
    const sv_gpu_t *h;
    ck_assert_int_eq(sv_catalog_gpu(cat, "H100-SXM", &h, &err), 0); /* case-insensitive */
    ck_assert(h->bf16_flops == 989.4e12);
    ck_assert(h->fp8_flops == 1978.9e12);
    ck_assert(h->hbm_bw == 3350e9);
    ck_assert(h->mem_bytes == 81559.0 * 1048576.0);
    ck_assert(h->link_bw == 900e9);
    ck_assert(h->tdp_w == 700 && h->idle_w == 75);
    const sv_gpu_t *a;
    ck_assert_int_eq(sv_catalog_gpu(cat, "a100-80gb", &a, &err), 0);
    ck_assert(a->fp8_flops == 0 && a->hbm_bw == 2039e9);
    sv_catalog_free(cat);
}
END_TEST

START_TEST(test_shipped_models)
{
    sv_catalog_t *cat = tu_catalog();
    sv_error_t err;
    const char *names[] = {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b",
                           "llama-2-70b",  "mistral-7b",    "mixtral-8x7b",
                           "qwen2.5-7b",   "qwen2.5-72b",   "opt-13b"};
    /* Published parameter counts, billions (model cards), within 1%. */
    const double params[] = {8.03, 70.6, 405.9, 69.0, 7.24, 46.7, 7.62, 72.7, 12.85};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const sv_model_t *m;
        ck_assert_msg(sv_catalog_model(cat, names[i], &m, &err) == 0, "%s", err.msg);
        tu_assert_rel(sv_model_param_count(m) / 1e9, params[i], 0.01);
    }
    const sv_model_t *mx;
    ck_assert_int_eq(sv_catalog_model(cat, "mixtral-8x7b", &mx, &err), 0);
    ck_assert_int_eq(mx->experts, 8);
    ck_assert_int_eq(mx->experts_per_tok, 2);
    ck_assert_int_eq(mx->moe_ffn, 14336);
    const sv_model_t *opt;
    ck_assert_int_eq(sv_catalog_model(cat, "opt-13b", &opt, &err), 0);
    ck_assert_int_eq(opt->gated_mlp, 0);
    ck_assert_int_eq(opt->tied_embeddings, 1);
    sv_catalog_free(cat);
}
END_TEST

START_TEST(test_unknown_names)
{
    sv_catalog_t *cat = tu_catalog();
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100x", &g, &err), SV_ENOTFOUND);
    ck_assert_msg(strncmp(err.msg, "unknown GPU 'h100x' (known: a100-40gb, ", 39) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-9", &m, &err), SV_ENOTFOUND);
    ck_assert_msg(strstr(err.msg, "unknown model 'llama-9'") != NULL, "%s", err.msg);
    sv_model_t mm;
    ck_assert_int_eq(sv_catalog_resolve_model(cat, "nope.json", &mm, &err), SV_EIO);
    ck_assert_msg(strstr(err.msg, "nope.json: cannot open") != NULL, "%s", err.msg);
    sv_catalog_free(cat);
}
END_TEST

START_TEST(test_hf_config)
{
    sv_catalog_t *cat = tu_catalog();
    sv_error_t err;
    sv_model_t m;
    const sv_model_t *ref;
    ck_assert_msg(sv_catalog_resolve_model(cat, tu_data("llama-3.1-8b/config.json"), &m, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &ref, &err), 0);
    ck_assert_str_eq(m.name, "llama-3.1-8b"); /* the folder's name */
    ck_assert_int_eq(m.layers, ref->layers);
    ck_assert_int_eq(m.kv_heads, ref->kv_heads);
    ck_assert_int_eq(m.head_dim, 128); /* derived: hidden / heads */
    ck_assert(sv_model_param_count(&m) == sv_model_param_count(ref));

    /* OPT: ffn_dim, no KV-head key, ReLU MLP, tied embeddings by model type. */
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("opt-13b/config.json"), &m, &err), 0);
    ck_assert_int_eq(m.kv_heads, 40);
    ck_assert_int_eq(m.ffn, 20480);
    ck_assert_int_eq(m.gated_mlp, 0);
    ck_assert_int_eq(m.tied_embeddings, 1);
    ck_assert_str_eq(m.hf_id, "facebook/opt-13b");

    ck_assert_int_eq(sv_model_from_hf_config(tu_data("bad_config.json"), &m, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "bad_config.json:4:") && strstr(err.msg, "malformed JSON"), "%s",
                  err.msg);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("missing_key_config.json"), &m, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "missing key 'num_hidden_layers'") != NULL, "%s", err.msg);
    sv_catalog_free(cat);
}
END_TEST

/* Architectures beyond the dense transformer, read from their config.json keys. */
START_TEST(test_hf_config_arch)
{
    sv_catalog_t *cat = tu_catalog();
    sv_error_t err;
    sv_model_t m;
    const sv_model_t *ref;
    ck_assert_msg(sv_model_from_hf_config(tu_data("deepseek-r1/config.json"), &m, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(m.mla, 1);
    ck_assert_int_eq(m.kv_lora_rank, 512);
    ck_assert_int_eq(m.q_lora_rank, 1536);
    ck_assert_int_eq(m.head_dim, 192); /* qk_nope 128 + qk_rope 64 */
    ck_assert_int_eq(m.experts, 256);
    ck_assert_int_eq(m.experts_per_tok, 8);
    ck_assert_int_eq(m.shared_experts, 1);
    ck_assert_int_eq(m.shared_ffn, 2048);
    ck_assert_int_eq(m.dense_layers, 3); /* first_k_dense_replace */
    ck_assert_int_eq(sv_model_moe_layers(&m), 58);
    ck_assert_int_eq(m.mtp_layers, 1);
    ck_assert_str_eq(m.ckpt_dtype, "fp8");
    ck_assert_int_eq(m.ckpt_scale_block, 16384);
    ck_assert_msg(strstr(m.notes, "MTP module is not loaded") != NULL, "%s", m.notes);
    /* The catalog's entry is the same model. */
    ck_assert_int_eq(sv_catalog_model(cat, "deepseek-r1", &ref, &err), 0);
    ck_assert(sv_model_param_count(&m) == sv_model_param_count(ref));
    tu_assert_rel(sv_model_param_count(ref) / 1e9, 671.0, 0.001);

    ck_assert_int_eq(sv_model_from_hf_config(tu_data("gpt-oss-120b/config.json"), &m, &err), 0);
    ck_assert_int_eq(m.sliding_window, 128);
    ck_assert_int_eq(m.window_layers, 18); /* layer_types alternate */
    ck_assert_int_eq(m.attention_sinks, 1);
    ck_assert_str_eq(m.ckpt_dtype, "mxfp4");
    ck_assert_int_eq(m.ckpt_experts_only, 1);
    ck_assert_int_eq(sv_catalog_model(cat, "gpt-oss-120b", &ref, &err), 0);
    ck_assert(sv_model_param_count(&m) == sv_model_param_count(ref));

    ck_assert_int_eq(sv_model_from_hf_config(tu_data("gemma-3-27b/config.json"), &m, &err), 0);
    ck_assert_int_eq(m.window_layers, 52); /* sliding_window_pattern 6: 62 - 62/6 */
    ck_assert_int_eq(m.tied_embeddings, 1);
    ck_assert_int_eq(sv_catalog_model(cat, "gemma-3-27b", &ref, &err), 0);
    ck_assert(sv_model_param_count(&m) == sv_model_param_count(ref));

    ck_assert_int_eq(sv_model_from_hf_config(tu_data("qwen3-next-80b-a3b/config.json"), &m, &err),
                     0);
    ck_assert_int_eq(m.linear_layers, 36); /* full_attention_interval 4 */
    ck_assert_int_eq(m.attn_output_gate, 1);
    ck_assert_int_eq(m.shared_ffn, 512);
    ck_assert_int_eq(sv_catalog_model(cat, "qwen3-next-80b-a3b", &ref, &err), 0);
    ck_assert(sv_model_param_count(&m) == sv_model_param_count(ref));

    /* Bad input: a key that changes the cost and is not modelled, a window beyond the
     * context, more experts per token than experts. */
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("errors/cfg_unmodelled.json"), &m, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "key 'index_topk': DeepSeek sparse attention") != NULL, "%s",
                  err.msg);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("errors/cfg_window_ctx.json"), &m, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "sliding_window (8192) is larger than the context") != NULL,
                  "%s", err.msg);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("errors/cfg_moe.json"), &m, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "key 'num_experts_per_tok'") != NULL, "%s", err.msg);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("errors/cfg_layer_kind.json"), &m, &err),
                     SV_EINVAL);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("errors/cfg_quant.json"), &m, &err), SV_EINVAL);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("errors/cfg_all_linear.json"), &m, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "leave a full-attention layer") != NULL, "%s", err.msg);
    sv_catalog_free(cat);
}
END_TEST

/* A catalog directory with one file of the given text. */
static void write_catalog(const char *dir, const char *text)
{
    char path[512];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/x.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_strict_catalog_files)
{
    char dir[] = "/tmp/sv_cat_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    sv_catalog_t *cat = NULL;
    sv_error_t err;
    write_catalog(dir, "gpus:\n"
                       "  - name: g1\n"
                       "    bf16_tflops: 100\n"
                       "    memory_mib: 1024\n"
                       "    hbm_bandwith_gb_s: 100\n");
    ck_assert_int_eq(sv_catalog_load(dir, &cat, &err), SV_EINVAL);
    /* The required key is missing because of the typo; the message names the entry. */
    ck_assert_msg(strstr(err.msg, "x.yaml:2:5: gpus[0]: missing required key "
                                  "'hbm_bandwidth_gb_s'") != NULL,
                  "%s", err.msg);
    write_catalog(dir, "gpus:\n"
                       "  - name: g1\n"
                       "    bf16_tflops: 100\n"
                       "    memory_mib: 1024\n"
                       "    hbm_bandwidth_gb_s: 100\n"
                       "    link: pcie\n"
                       "    link_bandwidth_gb_s: 64\n"
                       "    link_latency_us: 5\n"
                       "    tdp_w: 100\n"
                       "    idle_w: 10\n"
                       "    price_per_hour_usd: 1\n"
                       "    compute_efficiency: 0.5\n"
                       "    memory_efficiency: 0.5\n"
                       "    iteration_overhead_ms: 1\n"
                       "    layer_overhead_us: 1\n"
                       "    colour: red\n"
                       "    source: test\n");
    ck_assert_int_eq(sv_catalog_load(dir, &cat, &err), SV_ENOKEY);
    ck_assert_msg(strstr(err.msg, "x.yaml:16:13: unknown key 'gpus[0].colour'") != NULL, "%s",
                  err.msg);
    write_catalog(dir, "gpus:\n  - name: g1\n    bf16_tflops: -3\n");
    ck_assert_int_eq(sv_catalog_load(dir, &cat, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "x.yaml:3:18: gpus[0].bf16_tflops: expected a number in") != NULL,
                  "%s", err.msg);
    ck_assert_ptr_null(cat);
    char path[600];
    snprintf(path, sizeof path, "%s/x.yaml", dir);
    unlink(path);
    rmdir(dir);
    ck_assert_int_eq(sv_catalog_load("/nonexistent-dir", &cat, &err), SV_EIO);
}
END_TEST

/* Issue 8 item 11: cJSON keeps the first of two equal keys and stops at the end of the
 * first value; servesim rejects both, at the place. */
START_TEST(test_hf_config_strict)
{
    sv_model_t m;
    sv_error_t err;
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("dup_key_config.json"), &m, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "dup_key_config.json:7:53: duplicate key 'type'"), "%s", err.msg);
    /* A byte-order mark and whitespace cJSON accepts (\v, \f) do not hide a duplicate. */
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("errors/cfg_bom_dup.json"), &m, &err),
                     SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "cfg_bom_dup.json:2:11: duplicate key 'c'"), "%s", err.msg);
    /* Found by tools/fuzz: a control byte cJSON takes for whitespace put the scan out of
     * step and UBSan caught strcmp on a missing key name. */
    ck_assert_int_eq(
        sv_model_from_hf_config(tu_data("fuzz-regress/hfconfig-ubsan-null-key.json"), &m, &err),
        SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "hfconfig-ubsan-null-key.json:15:3: duplicate key "
                                  "'inios_token_id'"),
                  "%s", err.msg);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("trailing_config.json"), &m, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "trailing_config.json:8:1: text after the end of the JSON "
                                  "object (expected one object)"),
                  "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("catalog");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_shipped_gpus);
    tcase_add_test(tc, test_shipped_models);
    tcase_add_test(tc, test_unknown_names);
    tcase_add_test(tc, test_hf_config);
    tcase_add_test(tc, test_hf_config_strict);
    tcase_add_test(tc, test_hf_config_arch);
    tcase_add_test(tc, test_strict_catalog_files);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
