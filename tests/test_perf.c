/*
 * Unit tests of the roofline cost model against hand-computed numbers. The arithmetic
 * behind each expected value is written next to it; docs/cost-model.md has the equations.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "servesim/base/numeric.h"
#include "servesim/cost/perf.h"
#include "testutil.h"

static sv_catalog_t *cat;

static void setup(void)
{
    cat = tu_catalog();
}

static void teardown(void)
{
    sv_catalog_free(cat);
}

/* Build a cost model; ideal = pure roofline (efficiencies 1, overheads 0). */
static sv_perf_t mk(const char *model, const char *gpu, int tp, int ideal)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, gpu, &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, model, &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    if (ideal) sv_perf_settings_ideal(&s);
    sv_perf_t p;
    ck_assert_msg(sv_perf_init(&p, g, m, &s, &err) == 0, "%s", err.msg);
    return p;
}

/* Llama-3.1-8B by hand:
 *   attention per layer: q 4096*4096 + k,v 2*4096*1024 + o 4096*4096 = 41,943,040
 *   MLP per layer:       3*4096*14336                              = 176,160,768
 *   norms per layer:     2*4096                                    = 8,192
 *   32 layers: 32 * 218,112,000 = 6,979,584,000; final norm 4,096
 *   embeddings + LM head (untied): 2 * 128256*4096 = 1,050,673,152
 *   total 8,030,261,248 parameters = 16,060,522,496 bytes in BF16 */
#define L8B_PARAMS 8030261248.0
#define L8B_TABLE_BYTES (128256.0 * 4096.0 * 2.0) /* one 128256 x 4096 table in BF16 */
#define L8B_LINEAR_PER_LAYER 218103808.0

/* The cost model's inline max and min answer as C's fmax and fmin: the larger (smaller)
 * of two numbers, the number where the other is a NaN. */
START_TEST(test_fmax_fmin_inline)
{
    const double v[] = {-3.5, -1e-300, 1e-300, 0.25, 2.0, 7e12, INFINITY, -INFINITY, NAN};
    size_t n = sizeof v / sizeof *v;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double a = v[i], b = v[j];
            if (isnan(a) && isnan(b)) {
                ck_assert(isnan(sv_fmax(a, b)) && isnan(sv_fmin(a, b)));
                continue;
            }
            ck_assert_msg(sv_fmax(a, b) == fmax(a, b), "fmax(%g, %g)", a, b);
            ck_assert_msg(sv_fmin(a, b) == fmin(a, b), "fmin(%g, %g)", a, b);
        }
    ck_assert(sv_fmax(1.0, NAN) == 1.0 && sv_fmax(NAN, 1.0) == 1.0);
    ck_assert(sv_fmin(1.0, NAN) == 1.0 && sv_fmin(NAN, 1.0) == 1.0);
    ck_assert(sv_fmax(2.0, 3.0) == 3.0 && sv_fmin(2.0, 3.0) == 2.0);
}
END_TEST

/* sv_floor gives floor's bits, the sign of a zero included, on both sides of its fast
 * path: 2.75 -> 2, 0.5 -> +0, -0 -> -0, -0.5 -> -1, 2^52 - 0.5 -> 2^52 - 1, 2^53 + 2 as
 * it is, infinities and NaN as floor gives them. */
START_TEST(test_floor_inline)
{
    const double v[] = {2.75,   0.5,     0.0,     -0.0,     -0.5,  -2.25,       1e-300,
                        4503599627370495.5, 4503599627370496.0, 9007199254740994.0,
                        1e300,  INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        double got = sv_floor(v[i]), want = floor(v[i]);
        ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "floor(%.17g): %.17g, not %.17g", v[i],
                      got, want);
    }
    ck_assert(sv_floor(2.75) == 2.0 && sv_floor(-0.5) == -1.0 && signbit(sv_floor(-0.0)));
    ck_assert(sv_floor(4503599627370495.5) == 4503599627370495.0);
    ck_assert(isnan(sv_floor(NAN)));
}
END_TEST

/* The memo answers a decode-only step with the bits sv_perf_step gives: steps of one batch
 * size at growing contexts (the short way), another size and back to the first (its own
 * slot kept it), a step with a prefill chunk (computed in full), a size sharing the first's
 * slot (7 + 64: it takes the slot) and the first again, TP 2 (all-reduces) and 1. */
START_TEST(test_step_memo_same_bits)
{
    const int tps[] = {1, 2};
    for (int t = 0; t < 2; t++) {
        sv_perf_t p = mk("llama-3.1-8b", "h100-sxm", tps[t], 0);
        sv_perf_memo_t memo = {0};
        sv_chunk_t ch = {.new_tokens = 300, .cached_tokens = 16, .last = 1};
        const long nd[] = {7, 7, 7, 12, 12, 7, 7, 7, 71, 71, 7, 7};
        for (int i = 0; i < 12; i++) {
            sv_batch_t b = {.n_decode = nd[i], .decode_ctx_sum = 1000.0 + 37.0 * i};
            if (i == 5) {
                b.chunks = &ch;
                b.n_chunks = 1;
            }
            sv_step_cost_t full;
            sv_perf_step(&p, &b, &full);
            const sv_step_cost_t *got = sv_perf_spec_step_memo(&p, &memo, &b);
            ck_assert_msg(memcmp(&full, got, sizeof full) == 0, "tp %d step %d", tps[t], i);
            ck_assert(full.total > 0);
        }
    }
}
END_TEST

START_TEST(test_llama8b_sizes)
{
    sv_perf_t p = mk("llama-3.1-8b", "h100-sxm", 1, 0);
    ck_assert(sv_model_param_count(&p.model) == L8B_PARAMS);
    ck_assert(p.weight_bytes_total == 2.0 * L8B_PARAMS);
    tu_assert_rel(p.weight_bytes_gpu, 16.06e9, 0.005);
    ck_assert(p.kv_bytes_token == 131072.0); /* 2 * 32 * 8 * 128 * 2 */
    ck_assert(p.layer_linear_params == L8B_LINEAR_PER_LAYER);
    sv_perf_t p70 = mk("llama-3.1-70b", "h100-sxm", 8, 0);
    ck_assert(p70.kv_bytes_token_total == 327680.0); /* 2 * 80 * 8 * 128 * 2 */
    ck_assert(p70.kv_bytes_token == 40960.0);        /* one KV head per GPU at TP 8 */
}
END_TEST

START_TEST(test_decode_batch1_memory_bound)
{
    /* Pure roofline, batch 1 at 1,024 cached tokens: every weight but the input embedding
     * table, plus the KV of 1,024 tokens, over 3.35 TB/s:
     *   (16,060,522,496 - 1,050,673,152 + 1024 * 131072) / 3.35e12 = 4.5206 ms */
    sv_perf_t p = mk("llama-3.1-8b", "h100-sxm", 1, 1);
    sv_step_cost_t c;
    double t = sv_perf_decode_time(&p, 1, 1024, &c);
    double expect = (2.0 * L8B_PARAMS - L8B_TABLE_BYTES + 1024.0 * 131072.0) / 3.35e12;
    tu_assert_rel(t, expect, 0.03);
    ck_assert_int_eq(c.compute_bound, 0);
    ck_assert(c.op[SV_OP_LINEAR].t_memory > c.op[SV_OP_LINEAR].t_compute);
    /* Attention FLOPs of one decode token: 4 * 32 heads * 128 * (1024 + 1) keys * 32 layers */
    ck_assert(c.op[SV_OP_ATTN_DECODE].flops == 4.0 * 4096.0 * 1025.0 * 32.0);
    /* KV bytes read and written: (1024 + 1) tokens * 131072 B, plus q and o (2 * 4096 * 2 B
     * per layer). */
    ck_assert(c.op[SV_OP_ATTN_DECODE].bytes == 1025.0 * 131072.0 + 32.0 * 2.0 * 4096.0 * 2.0);
    ck_assert(c.comm == 0.0 && c.overhead == 0.0);
}
END_TEST

START_TEST(test_prefill_compute_bound)
{
    sv_step_cost_t c;
    for (int ideal = 0; ideal <= 1; ideal++) {
        sv_perf_t p = mk("llama-3.1-8b", "h100-sxm", 1, ideal);
        sv_perf_prefill_time(&p, 2048, &c);
        ck_assert_int_eq(c.compute_bound, 1);
        ck_assert(c.op[SV_OP_LINEAR].t_compute > c.op[SV_OP_LINEAR].t_memory);
    }
    sv_perf_t p = mk("llama-3.1-8b", "h100-sxm", 1, 1);
    double t = sv_perf_prefill_time(&p, 2048, &c);
    /* Linear FLOPs: 2 * 2048 tokens * 32 layers * 218,103,808 = 2.8587e13 */
    ck_assert(c.op[SV_OP_LINEAR].flops == 2.0 * 2048.0 * 32.0 * L8B_LINEAR_PER_LAYER);
    /* Causal attention: 4 * 32 heads * 128 * (2048 * 2049 / 2) * 32 layers */
    ck_assert(c.op[SV_OP_ATTN_PREFILL].flops == 4.0 * 4096.0 * (2048.0 * 2049.0 / 2.0) * 32.0);
    /* Only the last prompt token yields logits: 2 * 4096 * 128256 */
    ck_assert(c.op[SV_OP_LM_HEAD].flops == 2.0 * 4096.0 * 128256.0);
    /* At 989.4 TFLOP/s the linear layers alone take 28.89 ms. */
    tu_assert_rel(c.op[SV_OP_LINEAR].time, 2.0 * 2048.0 * 32.0 * L8B_LINEAR_PER_LAYER / 989.4e12,
                  1e-12);
    ck_assert(t > c.op[SV_OP_LINEAR].time);
    /* A chunk after 1,000 cached tokens attends to them too: n*c + n(n+1)/2 keys. */
    sv_chunk_t ch = {.new_tokens = 512, .cached_tokens = 1000, .last = 0};
    sv_batch_t b = {.chunks = &ch, .n_chunks = 1};
    sv_perf_step(&p, &b, &c);
    ck_assert(c.op[SV_OP_ATTN_PREFILL].flops ==
              4.0 * 4096.0 * (512.0 * 1000.0 + 512.0 * 513.0 / 2.0) * 32.0);
    ck_assert(c.op[SV_OP_LM_HEAD].flops == 0.0); /* not the last chunk: no logits */
}
END_TEST

START_TEST(test_batch_tradeoff)
{
    sv_perf_t p = mk("llama-3.1-8b", "h100-sxm", 1, 0);
    double prev_t = 0, prev_tput = 0;
    for (long b = 1; b <= 512; b *= 2) {
        double t = sv_perf_decode_time(&p, b, 1024, NULL);
        double tput = (double)b / t;
        ck_assert_msg(t > prev_t, "step time must grow with batch (b=%ld)", b);
        ck_assert_msg(tput > prev_tput, "tokens/s per GPU must rise with batch (b=%ld)", b);
        prev_t = t;
        prev_tput = tput;
    }
    sv_batch_t empty = {0};
    sv_step_cost_t c;
    sv_perf_step(&p, &empty, &c);
    ck_assert(c.total == 0.0);
}
END_TEST

START_TEST(test_tensor_parallel)
{
    sv_perf_t p1 = mk("llama-3.1-8b", "h100-sxm", 1, 0);
    sv_perf_t p2 = mk("llama-3.1-8b", "h100-sxm", 2, 0);
    /* Everything is split in two except the RMSNorm weights (65 * 4096 * 2 B = 532,480). */
    double norms = (32.0 * 2.0 * 4096.0 + 4096.0) * 2.0;
    ck_assert(p2.weight_bytes_gpu == (p1.weight_bytes_gpu - norms) / 2.0 + norms);
    sv_step_cost_t c1, c2;
    sv_perf_decode_time(&p1, 1, 1024, &c1);
    sv_perf_decode_time(&p2, 1, 1024, &c2);
    ck_assert(c1.comm == 0.0);
    /* 2 all-reduces per layer, ring over 900/2 GB/s each way at the H100's fitted link
     * efficiency 0.730, plus its fitted latency 19.8 us (no per-rank term at TP 2; Vidur's
     * H100 DGX table, models/gpus.yaml), with no engine profile:
     *   64 * (19.8e-6 + 2 * (2 - 1) / 2 * 4096 * 2 B / (450e9 * 0.730)) = 1.2688 ms */
    tu_assert_rel(c2.comm, 64.0 * (19.8e-6 + 8192.0 / (450e9 * 0.730)), 1e-12);
    tu_assert_rel(c2.comm, 1.26880e-3, 1e-4);
    tu_assert_rel(c2.op[SV_OP_LINEAR].bytes, c1.op[SV_OP_LINEAR].bytes / 2.0, 0.01);
}
END_TEST

START_TEST(test_moe_experts_touched)
{
    /* Mixtral: T tokens touch E(1 - (1 - k/E)^T) distinct experts; 2 at T=1, 3.5 at T=2.
     * One expert is 3 * 4096 * 14336 = 176,160,768 parameters per layer. */
    sv_perf_t p = mk("mixtral-8x7b", "h100-sxm", 1, 1);
    sv_step_cost_t c1, c2, cbig;
    sv_perf_decode_time(&p, 1, 0, &c1);
    sv_perf_decode_time(&p, 2, 0, &c2);
    double expert_bytes = 176160768.0 * 2.0 * 32.0;
    tu_assert_rel(c2.op[SV_OP_LINEAR].bytes - c1.op[SV_OP_LINEAR].bytes, 1.5 * expert_bytes, 0.005);
    sv_perf_decode_time(&p, 256, 0, &cbig);
    ck_assert(cbig.op[SV_OP_LINEAR].bytes > 8.0 * expert_bytes * 0.999);
    /* FLOPs follow the k experts each token uses, not the ones touched. */
    ck_assert(c1.op[SV_OP_LINEAR].flops ==
              2.0 * 32.0 * (p.layer_linear_params + 2.0 * 176160768.0));
}
END_TEST

/* A model read from tests/data/NAME/config.json, on gpu at tp, with the vllm profile's
 * curves (or ideal). */
/* A cost model of a model in tests/data/NAME/config.json with settings s. */
static sv_perf_t init_cfg(const char *name, const char *gpu, const sv_perf_settings_t *s)
{
    sv_error_t err;
    const sv_gpu_t *g;
    sv_model_t m;
    char path[256];
    snprintf(path, sizeof path, "%s/config.json", name);
    ck_assert_int_eq(sv_catalog_gpu(cat, gpu, &g, &err), 0);
    ck_assert_msg(sv_model_from_hf_config(tu_data(path), &m, &err) == 0, "%s", err.msg);
    sv_perf_t p;
    ck_assert_msg(sv_perf_init(&p, g, &m, s, &err) == 0, "%s", err.msg);
    return p;
}

static sv_perf_t mk_cfg(const char *name, const char *gpu, int tp, int ideal)
{
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    if (ideal) sv_perf_settings_ideal(&s);
    return init_cfg(name, gpu, &s);
}

/* DeepSeek-R1 from its published config.json (FP8 checkpoint, 128x128 block scales):
 *   MLA per layer: replicated q_a + kv_a 7168 * (1536 + 512 + 64) = 15,138,816; split by
 *     heads q_b 1536*128*192 + kv_b 512*128*(128+128) + o 128*128*7168 = 171,966,464
 *   3 dense MLPs 3*7168*18432 each; 58 MoE layers of 256 routed + 1 shared expert of
 *     3*7168*2048 = 44,040,192, a 7168 x 256 router (BF16)
 *   TP 1: FP8 weights 15,156,838,400 (attention, dense, shared) + 653,908,770,816 (experts)
 *     + one FP32 scale per 16,384 of them + routers and norms (BF16) + embedding and LM head
 *     2 * 129280*7168 * 2 bytes + final norm = 673,150,545,584 bytes
 *   TP 8: 85,140,064,624 bytes per GPU; TP 4: 169,141,561,904 (more than an H200 holds)
 *   KV per token per GPU: (512 + 64) * 61 layers * 2 bytes = 70,272 at every TP (the latent
 *     is not split by heads); 35,136 in FP8 */
START_TEST(test_deepseek_r1)
{
    sv_perf_t p8 = mk_cfg("deepseek-r1", "h200", 8, 0), p4 = mk_cfg("deepseek-r1", "h200", 4, 0);
    ck_assert_int_eq(p8.set.weight_dtype, SV_DT_FP8);
    ck_assert_int_eq(p8.x.expert_dtype, SV_DT_FP8);
    tu_assert_rel(p8.weight_bytes_total, 673150545584.0, 1e-12);
    tu_assert_rel(p8.weight_bytes_gpu, 85140064624.0, 1e-12);
    tu_assert_rel(p4.weight_bytes_gpu, 169141561904.0, 1e-12);
    ck_assert(p8.kv_bytes_token == 70272.0 && p4.kv_bytes_token == 70272.0);
    ck_assert(sv_model_kv_bytes_token(&p8.model, SV_DT_BF16) == 70272.0); /* list models */
    ck_assert(p8.seq_state_bytes == 0.0);
    sv_error_t err;
    sv_memplan_t mp;
    ck_assert_int_eq(sv_perf_memplan(&p4, &mp, &err), SV_ENOFIT);
    ck_assert_int_eq(sv_perf_memplan(&p8, &mp, &err), 0);
    ck_assert_int_eq(mp.seq_blocks, 0);
    /* Decode attention in the absorbed form, per cached key per layer on one of 8 GPUs:
     * 16 heads * (2 * (512 + 64) + 2 * 512) = 34,816 FLOPs; it reads the 1,152-byte latent. */
    sv_perf_t id = mk_cfg("deepseek-r1", "h200", 8, 1);
    sv_step_cost_t c;
    sv_perf_decode_time(&id, 1, 1000.0, &c);
    ck_assert(c.op[SV_OP_ATTN_DECODE].flops == 34816.0 * 61.0 * 1001.0);
    /* Prefill with decompressed heads: 2 * 16 * (192 + 128) per (query, key) pair. */
    sv_perf_prefill_time(&id, 100, &c);
    ck_assert(c.op[SV_OP_ATTN_PREFILL].flops == 10240.0 * 61.0 * 5050.0);
    /* --weight-dtype given: it wins over the checkpoint's format (no FP8 block scales). */
    const sv_gpu_t *g;
    sv_model_t m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h200", &g, &err), 0);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("deepseek-r1/config.json"), &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = 8;
    ck_assert_int_eq(sv_perf_settings_set(&s, "weight_dtype", "bf16", &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "kv_cache_dtype", "fp8", &err), 0);
    sv_perf_t pb;
    ck_assert_int_eq(sv_perf_init(&pb, g, &m, &s, &err), 0);
    ck_assert_int_eq(pb.set.weight_dtype, SV_DT_BF16);
    ck_assert(pb.kv_bytes_token == 35136.0);
    ck_assert(pb.weight_bytes_gpu > 2.0 * (p8.weight_bytes_gpu - 1.0e9));
}
END_TEST

/* mla_prefill_efficiency scales the MLA context phase's attention compute only. DeepSeek-R1
 * at TP 8 on the H200, every efficiency 1 (ideal): a 1,000-token prompt's attention is
 * 10,240 FLOPs per (query, key) pair * 61 layers * 500,500 pairs = 312,632,320,000 FLOPs,
 * 0.31598 ms at the 989.4 TFLOP/s BF16 peak; at an efficiency of 0.25 it takes 4 times that,
 * 1.26393 ms. Its bytes and time on memory, and decode attention, do not move; a dense
 * model (Llama-3.1-8B) does not read the key. */
static sv_perf_t mk_pf(const char *name, const char *gpu, int tp, const char *pf)
{
    sv_error_t err;
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    sv_perf_settings_ideal(&s);
    if (pf) ck_assert_int_eq(sv_perf_settings_set(&s, "mla_prefill_efficiency", pf, &err), 0);
    return init_cfg(name, gpu, &s);
}

START_TEST(test_mla_prefill_efficiency)
{
    sv_perf_t a = mk_pf("deepseek-r1", "h200", 8, NULL), b = mk_pf("deepseek-r1", "h200", 8, "0.25");
    sv_step_cost_t ca, cb;
    sv_perf_prefill_time(&a, 1000, &ca);
    sv_perf_prefill_time(&b, 1000, &cb);
    const sv_op_cost_t *pa = &ca.op[SV_OP_ATTN_PREFILL], *pb = &cb.op[SV_OP_ATTN_PREFILL];
    ck_assert(pa->flops == 312632320000.0 && pb->flops == pa->flops);
    tu_assert_rel(pa->t_compute, 312632320000.0 / 989.4e12, 1e-12);
    tu_assert_rel(pb->t_compute, 4.0 * 312632320000.0 / 989.4e12, 1e-12);
    tu_assert_rel(pb->t_compute, 1.26393e-3, 1e-5);
    ck_assert(pb->bytes == pa->bytes && pb->t_memory == pa->t_memory);
    ck_assert(cb.op[SV_OP_LINEAR].t_compute == ca.op[SV_OP_LINEAR].t_compute);
    sv_perf_decode_time(&a, 64, 2000.0, &ca);
    sv_perf_decode_time(&b, 64, 2000.0, &cb);
    ck_assert(cb.op[SV_OP_ATTN_DECODE].t_compute == ca.op[SV_OP_ATTN_DECODE].t_compute);
    ck_assert(cb.op[SV_OP_ATTN_DECODE].t_memory == ca.op[SV_OP_ATTN_DECODE].t_memory);
    sv_perf_t d = mk_pf("llama-3.1-8b", "h100-sxm", 1, NULL), e = mk_pf("llama-3.1-8b", "h100-sxm", 1, "0.25");
    sv_perf_prefill_time(&d, 1000, &ca);
    sv_perf_prefill_time(&e, 1000, &cb);
    ck_assert(cb.op[SV_OP_ATTN_PREFILL].t_compute == ca.op[SV_OP_ATTN_PREFILL].t_compute);
    ck_assert(cb.total == ca.total);
}
END_TEST

/* Expected distinct experts of E touched by T tokens of top-k: E (1 - (1 - k/E)^T).
 * DeepSeek-R1 (E 256, k 8): T 1 -> 8; T 2 -> 256 (1 - (31/32)^2) = 15.75; the expert bytes
 * read grow by 7.75 experts * 58 layers * 3*7168*256 (one expert's TP-8 share) * 1 byte. */
/* prefill_efficiency e: what the prompts add to a step's GPU time over the same step's
 * decodes alone takes 1 / e as long, operator by operator and in the all-reduces.
 * Llama-3.1-8B at TP 2 on the H100, every other efficiency 1 (ideal, no overheads): at e 0.5
 * a step of one 300-token prompt and 100 decodes costs D + 2 (M - D) in each operator's
 * compute, memory and fixed time and in the all-reduce, M its cost at e 1 and D that of the
 * 100 decodes alone (the decode attention, which the prompt does not change, stays); a
 * prompt alone costs 2 times; a decode-only step the same. prefill_request_overhead_ms: a step
 * pays it per prompt, 12.7 ms for one, 25.4 ms for two, a decode-only step nothing. */
/* The cost model of a catalog model on a catalog GPU with settings s. */
static sv_perf_t init_cat(const char *model, const char *gpu, const sv_perf_settings_t *s)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, gpu, &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, model, &m, &err), 0);
    sv_perf_t p;
    ck_assert_msg(sv_perf_init(&p, g, m, s, &err) == 0, "%s", err.msg);
    return p;
}

static sv_perf_t mk_pe(const char *key, const char *value)
{
    sv_error_t err;
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = 2;
    sv_perf_settings_ideal(&s);
    if (key) ck_assert_int_eq(sv_perf_settings_set(&s, key, value, &err), 0);
    return init_cat("llama-3.1-8b", "h100-sxm", &s);
}

START_TEST(test_prefill_efficiency)
{
    sv_perf_t a = mk_pe(NULL, NULL), b = mk_pe("prefill_efficiency", "0.5");
    sv_chunk_t ch = {.new_tokens = 300, .cached_tokens = 0, .last = 1};
    sv_batch_t mixed = {.chunks = &ch, .n_chunks = 1, .n_decode = 100, .decode_ctx_sum = 100000.0};
    sv_batch_t decodes = mixed;
    decodes.n_chunks = 0;
    decodes.chunks = NULL;
    sv_step_cost_t ca, cb, cd;
    sv_perf_step(&a, &mixed, &ca);
    sv_perf_step(&b, &mixed, &cb);
    sv_perf_step(&a, &decodes, &cd);
    ck_assert(ca.tokens == 400 && cd.tokens == 100 && ca.comm > cd.comm && cd.comm > 0);
    double busy = 0.0;
    for (int i = 0; i < SV_OP_COUNT; i++) {
        const sv_op_cost_t *m = &ca.op[i], *d = &cd.op[i], *o = &cb.op[i];
        double tc = d->t_compute + 2.0 * fmax(0.0, m->t_compute - d->t_compute);
        double tm = d->t_memory + 2.0 * fmax(0.0, m->t_memory - d->t_memory);
        double tf = d->t_fixed + 2.0 * fmax(0.0, m->t_fixed - d->t_fixed);
        tu_assert_rel(o->time, fmax(tc, tm) + tf, 1e-12);
        ck_assert(o->flops == m->flops && o->bytes == m->bytes);
        busy += o->time;
    }
    ck_assert(cb.op[SV_OP_ATTN_DECODE].time == ca.op[SV_OP_ATTN_DECODE].time);
    ck_assert(cb.op[SV_OP_LINEAR].time > 1.5 * ca.op[SV_OP_LINEAR].time);
    tu_assert_rel(cb.comm, cd.comm + 2.0 * (ca.comm - cd.comm), 1e-12);
    tu_assert_rel(cb.total, busy + cb.comm, 1e-12);
    tu_assert_rel(sv_perf_prefill_time(&b, 300, NULL), 2.0 * sv_perf_prefill_time(&a, 300, NULL),
                  1e-12);
    ck_assert(sv_perf_decode_time(&b, 100, 1000.0, NULL) ==
              sv_perf_decode_time(&a, 100, 1000.0, NULL));

    sv_perf_t c = mk_pe("prefill_request_overhead_ms", "12.7");
    sv_step_cost_t cc;
    sv_perf_step(&c, &mixed, &cc);
    tu_assert_rel(cc.eng_launch, 12.7e-3, 1e-12);
    tu_assert_rel(cc.total, ca.total + 12.7e-3, 1e-12);
    sv_chunk_t two[2] = {ch, ch};
    sv_batch_t both = mixed;
    both.chunks = two;
    both.n_chunks = 2;
    sv_perf_step(&c, &both, &cc);
    tu_assert_rel(cc.eng_launch, 25.4e-3, 1e-12);
    sv_perf_decode_time(&a, 100, 1000.0, &ca);
    sv_perf_decode_time(&c, 100, 1000.0, &cc);
    ck_assert(cc.eng_launch == 0.0 && cc.total == ca.total);
}
END_TEST

/* The trtllm-pytorch profile (models/engines.yaml) against what it was fitted to,
 * NVIDIA/TensorRT-LLM#5929: DeepSeek-R1 FP8 on 8 x H200 at TP 8 EP 8, one request at a time,
 * median TTFT 124.1 ms at 1,600 prompt tokens and 352.8 ms at 8,192, of which 12 ms is the
 * front end (engine.api_server_ms). By hand, a prompt alone takes the trtllm profile's GPU
 * time (60.40 and 200.09 ms) / 0.611 plus 12.7 ms for the context request, with the same
 * per-step and per-sequence costs (0.5 ms, 5 us): 112.07 and 340.68 ms, within 0.5% of the
 * measurements less the front end (112.1, 340.8). */
static sv_perf_t mk_dsr1(const char *profile)
{
    sv_error_t err;
    sv_perf_settings_t s = sv_perf_settings_default();
    const char *keys[][2] = {
        {"tp", "8"}, {"ep", "8"}, {"weight_dtype", "fp8"}, {"kv_cache_dtype", "fp8"}};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(sv_perf_settings_set(&s, keys[i][0], keys[i][1], &err), 0);
    ck_assert_msg(sv_perf_settings_profile(&s, cat, profile, &err) == 0, "%s", err.msg);
    return init_cat("deepseek-r1", "h200", &s);
}

START_TEST(test_trtllm_pytorch_context)
{
    sv_perf_t t = mk_dsr1("trtllm"), y = mk_dsr1("trtllm-pytorch");
    const long n[2] = {1600, 8192};
    const double measured[2] = {124.1e-3, 352.8e-3}, by_hand[2] = {112.07e-3, 340.68e-3};
    for (int i = 0; i < 2; i++) {
        sv_step_cost_t ct, cy;
        sv_perf_prefill_time(&t, n[i], &ct);
        sv_perf_prefill_time(&y, n[i], &cy);
        tu_assert_rel(ct.eng_step, 0.5e-3, 1e-12);
        tu_assert_rel(ct.eng_seq, 5e-6, 1e-12);
        double gpu = ct.total - ct.overhead;
        tu_assert_rel(cy.eng_launch, 12.7e-3, 1e-12);
        tu_assert_rel(cy.total, gpu / 0.611 + 0.5e-3 + 5e-6 + 12.7e-3, 1e-9);
        tu_assert_rel(cy.total, by_hand[i], 1e-4);
        tu_assert_rel(cy.total + 12e-3, measured[i], 0.005);
    }
}
END_TEST

/* Every step cost is written whole, and the memo answers with the plain path's bits, on a
 * run of mixed prefill + decode steps between decode-only ones: sv_perf_step into a struct
 * filled with 0xA5 bytes gives the bytes it gives into a zeroed one (no field is left
 * unset, the pads included), and sv_perf_spec_step_memo gives those bytes for every step
 * (its decode-only hits computing only the context's terms from its slot). Llama-3.1-8B at
 * TP 1 and 2 with the GPU's efficiencies, at prefill_efficiency 0.5 (each mixed step costs
 * its decodes alone as well), with a prefill request overhead; Mistral-7B (a window on
 * every layer); DeepSeek-R1 (the extended architectures: the memo computes each in full).
 * The one-stage path with its branches compiled out (sv_perf_t.plain: the two Llamas and
 * Mistral, not the context phase's or DeepSeek's) gives the general path's bytes. */
START_TEST(test_step_mixed_same_bits)
{
    sv_perf_t models[6] = {mk("llama-3.1-8b", "h100-sxm", 1, 0), mk("llama-3.1-8b", "h100-sxm", 2, 0),
                           mk_pe("prefill_efficiency", "0.5"),
                           mk_pe("prefill_request_overhead_ms", "12.7"),
                           mk("mistral-7b", "h100-sxm", 1, 0), mk_dsr1("trtllm-pytorch")};
    sv_chunk_t ch[3] = {{.new_tokens = 512, .cached_tokens = 0, .last = 0},
                        {.new_tokens = 180, .cached_tokens = 4000, .last = 1},
                        {.new_tokens = 37, .cached_tokens = 16, .last = 1}};
    /* decode sequences, chunks (ch[0..n)), per step */
    const long nd[] = {7, 7, 9, 7, 0, 7, 7, 71, 0, 7, 12, 12};
    const int nch[] = {0, 0, 3, 0, 1, 2, 0, 1, 0, 1, 0, 0};
    for (int t = 0; t < 6; t++) {
        const sv_perf_t *p = &models[t];
        ck_assert_int_eq(p->plain, t == 0 || t == 1 || t == 4);
        sv_perf_t general = *p;
        general.plain = 0; /* every branch taken at run time */
        sv_perf_memo_t memo;
        memset(&memo, 0, sizeof memo);
        int mixed = 0, hits = 0;
        for (int i = 0; i < 12; i++) {
            sv_batch_t b = {.chunks = nch[i] ? ch : NULL, .n_chunks = nch[i], .n_decode = nd[i],
                            .decode_ctx_sum = nd[i] * (900.0 + 53.0 * i)};
            sv_step_cost_t ref, dirty;
            memset(&ref, 0, sizeof ref);
            memset(&dirty, 0xA5, sizeof dirty);
            sv_perf_step(p, &b, &ref);
            sv_perf_step(p, &b, &dirty);
            ck_assert_msg(memcmp(&ref, &dirty, sizeof ref) == 0, "model %d step %d: unset bytes", t, i);
            memset(&dirty, 0x5A, sizeof dirty);
            sv_perf_step(&general, &b, &dirty);
            ck_assert_msg(memcmp(&ref, &dirty, sizeof ref) == 0, "model %d step %d: general path",
                          t, i);
            const sv_perf_memo_slot_t *slot = &memo.slot[nd[i] % SV_PERF_MEMO_SLOTS];
            if (nch[i] == 0 && nd[i] > 0 && slot->n_decode == nd[i]) {
                /* a hit: it starts from its slot's step of another context */
                ck_assert(slot->cost.op[SV_OP_ATTN_DECODE].bytes != ref.op[SV_OP_ATTN_DECODE].bytes);
                hits++;
            }
            const sv_step_cost_t *got = sv_perf_spec_step_memo(p, &memo, &b);
            ck_assert_msg(memcmp(&ref, got, sizeof ref) == 0, "model %d step %d", t, i);
            ck_assert(ref.tokens == 0 || ref.total > 0);
            if (nch[i] && nd[i]) mixed++;
        }
        ck_assert_int_eq(mixed, 4);
        ck_assert_int_eq(hits, t < 5 ? 4 : 0);
    }
    /* prefill_efficiency 0.5 makes the mixed steps dearer, not the decode-only ones */
    sv_batch_t b = {.chunks = ch, .n_chunks = 2, .n_decode = 7, .decode_ctx_sum = 7000.0};
    sv_perf_t plain = mk_pe(NULL, NULL);
    sv_step_cost_t a, c;
    sv_perf_step(&plain, &b, &a);
    sv_perf_step(&models[2], &b, &c);
    ck_assert(c.total > a.total);
}
END_TEST

START_TEST(test_experts_touched)
{
    sv_perf_t p = mk_cfg("deepseek-r1", "h200", 8, 1);
    sv_step_cost_t c1, c2;
    sv_perf_decode_time(&p, 1, 0, &c1);
    sv_perf_decode_time(&p, 2, 0, &c2);
    double expert = 3.0 * 7168.0 * 256.0;
    ck_assert(p.expert_params == expert);
    /* Activations grow with the tokens too: 58 layers of 8 experts' (7168 + 2*256 + 256 +
     * 7168) + the shared expert's + the router's 256 values, the rest per token. */
    double grow = c2.op[SV_OP_LINEAR].bytes - c1.op[SV_OP_LINEAR].bytes;
    double act = (c2.op[SV_OP_LINEAR].bytes - c1.op[SV_OP_LINEAR].bytes) -
                 7.75 * 58.0 * expert * 1.0;
    ck_assert(act > 0.0 && act < 0.02 * grow);
    /* Expert FLOPs follow the k experts per token, not the experts touched. */
    ck_assert(c2.op[SV_OP_LINEAR].flops - c1.op[SV_OP_LINEAR].flops ==
              2.0 * p.x.lin_params + 2.0 * 8.0 * 58.0 * expert);
    /* An imbalance factor scales the expert GEMMs' compute time, nothing else. */
    sv_perf_t q = p;
    q.x.imbalance = 2.0;
    sv_step_cost_t a, b2;
    sv_perf_prefill_time(&p, 4096, &a);
    sv_perf_prefill_time(&q, 4096, &b2);
    double e_fl = 2.0 * 4096.0 * 8.0 * 58.0 * expert;
    double te = 4096.0 * 8.0 / (256.0 * (1.0 - pow(1.0 - 8.0 / 256.0, 4096.0)));
    tu_assert_rel(b2.op[SV_OP_LINEAR].t_compute - a.op[SV_OP_LINEAR].t_compute,
                  e_fl / 1978.9e12 * (te + 0.0) / te, 1e-9);
    /* Occupancy: with n_h = 16 the weight read of n touched experts per rank runs at
     * g n / (n + n_h): at T 1 (n = 8) it takes 3 times as long, 58 * 8 experts * 1 byte
     * read at 4.8 TB/s once more and once again; the compute does not change. */
    sv_perf_t o = p;
    o.x.grouped_n_half = 16.0;
    sv_step_cost_t d1, o1;
    sv_perf_decode_time(&p, 1, 0, &d1);
    sv_perf_decode_time(&o, 1, 0, &o1);
    tu_assert_rel(o1.op[SV_OP_LINEAR].t_memory - d1.op[SV_OP_LINEAR].t_memory,
                  2.0 * 58.0 * 8.0 * expert / 4800e9, 1e-9);
    ck_assert(o1.op[SV_OP_LINEAR].t_compute == d1.op[SV_OP_LINEAR].t_compute);
    /* At T 2 (n = 15.75): (15.75 + 16) / 15.75 of the read. */
    sv_perf_decode_time(&p, 2, 0, &d1);
    sv_perf_decode_time(&o, 2, 0, &o1);
    tu_assert_rel(o1.op[SV_OP_LINEAR].t_memory - d1.op[SV_OP_LINEAR].t_memory,
                  16.0 / 15.75 * 58.0 * 15.75 * expert / 4800e9, 1e-9);
}
END_TEST

/* The MI325X's shipped occupancy fit (models/gpus.yaml: g 0.44522, n_g 19.446, SGLang
 * 0.5.12's): at batch 4, 256 (1 - (248/256)^4) = 30.53 experts touched per MoE layer, each
 * 3 * 7168 * 2048 / 8 = 5,505,024 FP8 bytes per GPU at TP 8, read at 6 TB/s * 0.8035 *
 * 0.44522 * n / (n + 19.446): 58 * 30.53 * 5,505,024 B = 9.748 GB, 4.542 ms at the flat g,
 * and n_g / n = 0.637 times that more for the occupancy (2.893 ms of a 7.435 ms expert
 * read); batch 64 touches 222.4 (0.087 times more). */
START_TEST(test_mi325x_expert_occupancy)
{
    sv_perf_t p = mk_cfg("deepseek-r1", "mi325x", 8, 0);
    ck_assert(p.x.grouped_eff == 0.44522 && p.x.grouped_n_half == 19.446);
    sv_perf_t flat = p;
    flat.x.grouped_n_half = 0.0;
    double expert = 3.0 * 7168.0 * 256.0, bw = 6000e9 * 0.8035 * 0.44522;
    for (int b = 4; b <= 64; b *= 16) {
        sv_step_cost_t o, f;
        sv_perf_decode_time(&p, b, 1024, &o);
        sv_perf_decode_time(&flat, b, 1024, &f);
        double n = 256.0 * (1.0 - pow(1.0 - 8.0 / 256.0, (double)b));
        tu_assert_rel(o.op[SV_OP_LINEAR].t_memory - f.op[SV_OP_LINEAR].t_memory,
                      19.446 / n * 58.0 * n * expert / bw, 1e-9);
        ck_assert(o.op[SV_OP_LINEAR].t_compute == f.op[SV_OP_LINEAR].t_compute);
    }
    /* The occupancy's share at batch 4: 19.446 / 30.53 of the flat read, 2.893 ms. */
    sv_step_cost_t o4, f4;
    sv_perf_decode_time(&p, 4, 1024, &o4);
    sv_perf_decode_time(&flat, 4, 1024, &f4);
    tu_assert_rel(o4.op[SV_OP_LINEAR].t_memory - f4.op[SV_OP_LINEAR].t_memory, 2.893e-3, 1e-3);
}
END_TEST

/* Windows bound KV: gpt-oss-120b alternates 18 sliding-window (128) and 18 full layers of
 * 8 KV heads x 64 (2048 bytes per token per layer in BF16); Gemma-3-27B has 52 local
 * (window 1024) and 10 global layers of 16 KV heads x 128 (8192 bytes). */
START_TEST(test_window_kv)
{
    sv_perf_t g1 = mk_cfg("gpt-oss-120b", "h200", 1, 0), g8 = mk_cfg("gpt-oss-120b", "h200", 8, 0);
    ck_assert(g1.kv_bytes_token == 18.0 * 2048.0);         /* 36,864 */
    ck_assert(sv_model_kv_bytes_token(&g1.model, SV_DT_BF16) == 36864.0);
    ck_assert(g1.seq_state_bytes == 18.0 * 128.0 * 2048.0); /* 4,718,592 per sequence */
    ck_assert(g8.kv_bytes_token == 18.0 * 256.0);           /* one KV head per GPU: 4,608 */
    ck_assert(g8.seq_state_bytes == 18.0 * 128.0 * 256.0);
    ck_assert_int_eq(sv_perf_seq_blocks(&g8, 16), 8); /* 589,824 / (4,608 * 16) */
    ck_assert_int_eq(g1.set.weight_dtype, SV_DT_BF16);
    ck_assert_int_eq(g1.x.expert_dtype, SV_DT_MXFP4);
    /* MXFP4 experts: W4A4 on a GPU with MXFP4 tensor cores (B200), dequantised to BF16 on
     * the H200 (no FP4 tensor cores); 0.53125 bytes per expert weight either way. */
    sv_perf_t gb = mk_cfg("gpt-oss-120b", "b200", 8, 0);
    tu_assert_rel(gb.x.inv_exp_c * gb.gpu.fp4_flops * gb.set.compute_eff, 1.0, 1e-12);
    tu_assert_rel(g8.x.inv_exp_c * g8.gpu.bf16_flops * g8.set.compute_eff, 1.0, 1e-12);
    /* 36 layers x 128 experts x 3 x 2880 x 2880 weights at 0.53125 bytes, the rest BF16. */
    double experts = 36.0 * 128.0 * 3.0 * 2880.0 * 2880.0;
    ck_assert(g1.weight_bytes_total > experts * 0.53125 &&
              g1.weight_bytes_total < experts * 0.53125 + 6.0e9);
    sv_perf_t e1 = mk_cfg("gemma-3-27b", "h200", 1, 0);
    ck_assert(e1.kv_bytes_token == 10.0 * 8192.0); /* 81,920 */
    ck_assert(e1.seq_state_bytes == 52.0 * 1024.0 * 8192.0); /* 436,207,616 */
    ck_assert(e1.model.tied_embeddings == 1);
    /* Decode attention over the window: at 4000 cached tokens the 52 local layers read 1024
     * keys each, the 10 global ones 4000 (+ the new token's K and V in both). */
    sv_perf_t ei = mk_cfg("gemma-3-27b", "h200", 1, 1);
    sv_step_cost_t c;
    sv_perf_decode_time(&ei, 1, 4000.0, &c);
    double q = 32.0 * 128.0;
    ck_assert(c.op[SV_OP_ATTN_DECODE].flops == 4.0 * q * (10.0 * 4001.0 + 52.0 * 1025.0));
}
END_TEST

/* Qwen3-Next-80B-A3B: 36 Gated DeltaNet layers hold a fixed state per sequence, 12 full
 * layers a KV cache. Per linear layer: 32 value heads x 128 x 128 FP32 = 2,097,152 bytes
 * + the conv state 3 x (2*16*128 + 32*128) x 2 = 49,152; x 36 = 77,266,944 bytes per
 * sequence. KV: 12 x 2 x 2 heads x 256 x 2 = 24,576 bytes per token. */
START_TEST(test_linear_state)
{
    sv_perf_t p = mk_cfg("qwen3-next-80b-a3b", "h200", 1, 0);
    ck_assert(p.seq_state_bytes == 77266944.0);
    ck_assert(p.kv_bytes_token == 24576.0);
    sv_perf_t p8 = mk_cfg("qwen3-next-80b-a3b", "h200", 8, 0);
    /* TP 8: 4 value and 2 key heads per GPU: 36 x (4*128*128*4 + 3*1024*2) = 9,658,368. */
    ck_assert(p8.seq_state_bytes == 9658368.0);
    ck_assert_int_eq(sv_perf_seq_blocks(&p8, 16), 50); /* ceil(9,658,368 / (12,288 * 16)) */
}
END_TEST

/*
 * The KV cache groups of vLLM V1's hybrid allocator (vllm/v1/core/kv_cache_utils.py,
 * _get_kv_cache_groups_uniform_page_size: groups of the fewest layers of any kind) and the
 * blocks a sequence holds in them (single_type_kv_cache_manager.py), one H200, block 16:
 * - gpt-oss-120b (TP 1): 18 full + 18 sliding (128) layers of 2048 bytes per token, 1 + 1
 *   groups of 18, pages of 18 x 2048 x 16 = 589,824 bytes. 100 tokens: 7 + 7 blocks. 1000:
 *   7 + (63 - floor((1000 - 127) / 16) = 9); 1007: the 55th block has left the window: 63 +
 *   8. A step from 1000 to 1001 needs 63 + 9; a 2000-token prefill chunk 125 + 125.
 * - Gemma-3-27B (TP 1): 10 full + 52 sliding (1024) layers: groups of 10, 1 full and 6
 *   windowed (the last padded with 8 layers), pages of 10 x 8192 x 16. 100 tokens: 7 + 6 x 7;
 *   past the window at most 1024 / 16 + 1 = 65 a group.
 * - Llama-4 Scout (TP 1): 12 full + 36 chunked (8192) layers: 1 + 3 groups of 12. 9000
 *   tokens: 563 + 3 x (563 - 8192 / 16 = 51); at most 512 a chunk group (at 8191 tokens).
 * - Qwen3-Next-80B-A3B (TP 1): 12 full + 36 Gated DeltaNet layers: 1 + 3 groups of 12, pages
 *   of 12 x 2048 x 16 = 393,216 bytes; a layer's state of 2,146,304 bytes takes
 *   ceil(2,146,304 / 32,768) = 66 pages: 3 x 66 = 198 blocks from the first token.
 * A dense model is one full-attention group: not hybrid.
 */
START_TEST(test_kv_groups)
{
    long v[SV_KV_KINDS];
    sv_perf_t g = mk_cfg("gpt-oss-120b", "h200", 1, 0);
    const sv_kvspec_t *k = &g.kvs;
    ck_assert(k->hybrid);
    ck_assert_int_eq(k->group_layers, 18);
    ck_assert_int_eq(k->groups[SV_KV_FULL], 1);
    ck_assert_int_eq(k->groups[SV_KV_WINDOW], 1);
    ck_assert(k->page_token * 16 == 589824.0);
    ck_assert_int_eq(sv_kv_blocks(k, 100, 100, v), 14);
    ck_assert_int_eq(v[SV_KV_WINDOW], 7);
    ck_assert_int_eq(sv_kv_blocks(k, 1000, 1000, v), 72);
    ck_assert_int_eq(v[SV_KV_WINDOW], 9);
    ck_assert_int_eq(sv_kv_blocks(k, 1007, 1007, v), 71);
    ck_assert_int_eq(v[SV_KV_WINDOW], 8);
    ck_assert_int_eq(sv_kv_blocks(k, 1000, 1001, NULL), 72);
    ck_assert_int_eq(sv_kv_blocks(k, 0, 2000, NULL), 250);
    ck_assert_int_eq(sv_kv_peak_blocks(k, 2000, v), 134);
    ck_assert_int_eq(v[SV_KV_WINDOW], 9);
    /* windowed blocks freed as the sequence grows: 9 at most whatever its length */
    for (long t = 128; t <= 20000; t += 37) {
        sv_kv_blocks(k, t, t, v);
        ck_assert(v[SV_KV_WINDOW] >= 8 && v[SV_KV_WINDOW] <= 9);
        ck_assert_int_eq(v[SV_KV_FULL], (t + 15) / 16);
    }

    sv_perf_t e = mk_cfg("gemma-3-27b", "h200", 1, 0);
    k = &e.kvs;
    ck_assert_int_eq(k->group_layers, 10);
    ck_assert_int_eq(k->groups[SV_KV_WINDOW], 6);
    ck_assert(k->page_token * 16 == 10.0 * 8192.0 * 16.0);
    ck_assert_int_eq(sv_kv_blocks(k, 100, 100, NULL), 7 + 6 * 7);
    ck_assert_int_eq(sv_kv_peak_blocks(k, 16000, v), 1000 + 6 * 65);

    sv_perf_t s = mk("llama-4-scout", "h200", 1, 0);
    k = &s.kvs;
    ck_assert_int_eq(k->group_layers, 12);
    ck_assert_int_eq(k->groups[SV_KV_CHUNK], 3);
    ck_assert_int_eq(k->groups[SV_KV_WINDOW], 0);
    ck_assert_int_eq(sv_kv_blocks(k, 9000, 9000, NULL), 563 + 3 * 51);
    ck_assert_int_eq(sv_kv_blocks(k, 8192, 8192, NULL), 512); /* the chunk just ended */
    ck_assert_int_eq(sv_kv_peak_blocks(k, 9000, v), 563 + 3 * 512);

    sv_perf_t q = mk_cfg("qwen3-next-80b-a3b", "h200", 1, 0);
    k = &q.kvs;
    ck_assert_int_eq(k->groups[SV_KV_STATE], 3);
    ck_assert_int_eq(k->state_blocks, 66);
    ck_assert(k->page_token * 16 == 393216.0);
    ck_assert_int_eq(sv_kv_blocks(k, 1, 1, NULL), 1 + 198);
    ck_assert_int_eq(sv_kv_blocks(k, 16000, 16000, NULL), 1000 + 198);
    ck_assert_int_eq(sv_kv_blocks(k, 0, 0, NULL), 0);

    sv_perf_t d = mk("llama-3.1-8b", "h100-sxm", 1, 0);
    ck_assert(!d.kvs.hybrid);
    ck_assert_int_eq(d.kvs.groups[SV_KV_FULL], 1);
    ck_assert(d.kvs.page_token == d.kv_bytes_token);
}
END_TEST

START_TEST(test_dtypes)
{
    sv_error_t err;
    const sv_gpu_t *h, *a;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &h, &err), 0);
    ck_assert_int_eq(sv_catalog_gpu(cat, "a100-80gb", &a, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    ck_assert_int_eq(sv_perf_settings_set(&s, "weight_dtype", "fp8", &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "kv_cache_dtype", "fp8", &err), 0);
    sv_perf_t p;
    ck_assert_int_eq(sv_perf_init(&p, h, m, &s, &err), 0);
    ck_assert(p.compute_peak == 1978.9e12);
    ck_assert(p.kv_bytes_token == 65536.0);
    /* Decoder layers at 1 byte; embeddings, LM head and norms stay 16-bit. */
    double norms = (32.0 * 2.0 * 4096.0 + 4096.0) * 2.0;
    ck_assert(p.weight_bytes_gpu == 32.0 * L8B_LINEAR_PER_LAYER + norms + 2.0 * L8B_TABLE_BYTES);
    ck_assert_int_eq(sv_perf_init(&p, a, m, &s, &err), 0);
    ck_assert(p.compute_peak == 312e12); /* no FP8 tensor cores on the A100 */
    ck_assert_int_eq(sv_perf_settings_set(&s, "weight_dtype", "int4", &err), 0);
    ck_assert_int_eq(sv_perf_init(&p, h, m, &s, &err), 0);
    ck_assert(p.compute_peak == 989.4e12);
    ck_assert_int_eq(sv_perf_settings_set(&s, "kv_cache_dtype", "int4", &err), SV_EINVAL);
    ck_assert_int_eq(sv_perf_settings_set(&s, "weight_dtype", "fp4", &err), SV_EINVAL);
    ck_assert_str_eq(
        err.msg, "weight_dtype: expected one of bf16, fp16, fp8, int4, nvfp4, mxfp4, got 'fp4'");
}
END_TEST

START_TEST(test_sliding_window)
{
    sv_perf_t p = mk("mistral-7b", "h100-sxm", 1, 1);
    ck_assert(sv_perf_attended(&p, 8000) == 4096.0);
    ck_assert(sv_perf_attended(&p, 100) == 100.0);
    sv_step_cost_t c;
    sv_perf_prefill_time(&p, 8000, &c);
    /* Positions 1..4096 attend to themselves and all before; the rest to 4096 keys:
     *   4096 * 4097 / 2 + (8000 - 4096) * 4096 = 24,381,440 keys */
    ck_assert(c.op[SV_OP_ATTN_PREFILL].flops == 4.0 * 4096.0 * 24381440.0 * 32.0);
}
END_TEST

START_TEST(test_bad_tp)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    sv_perf_t p;
    sv_perf_settings_t s = sv_perf_settings_default();
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "qwen2.5-7b", &m, &err), 0);
    s.tp = 8;
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "tp=8 does not divide the 28 attention heads of model "
                              "'qwen2.5-7b' (TP degrees that work: 1, 2, 4)");
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &m, &err), 0);
    s.tp = 3;
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "tp=3 does not divide the 32 attention heads") != NULL, "%s",
                  err.msg);
    s.tp = 16; /* 32 heads / 16 fine, 8 KV heads: replicated, 16 % 8 == 0 fine */
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), 0);
    ck_assert_int_eq(p.kv_heads_local, 1);
    ck_assert_int_eq(sv_perf_settings_set(&s, "tp", "zero", &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "tp: expected a whole number in [1, 1024], got 'zero'");
    ck_assert_int_eq(sv_perf_settings_set(&s, "tpp", "2", &err), SV_ENOKEY);
}
END_TEST

START_TEST(test_memplan)
{
    sv_error_t err;
    sv_perf_t p = mk("llama-3.1-8b", "h100-sxm", 1, 0);
    p.set.activation_reserve = 2e9;
    sv_memplan_t mp;
    ck_assert_int_eq(sv_perf_memplan(&p, &mp, &err), 0);
    /* 0.9 * 81559 MiB - 16,060,522,496 - 2e9 = 58,909,656,185 B -> / (131072 * 16) */
    double kv = 0.9 * 81559.0 * 1048576.0 - 2.0 * L8B_PARAMS - 2e9;
    ck_assert(mp.kv_bytes == kv);
    ck_assert_int_eq(mp.kv_blocks, (long)floor(kv / (131072.0 * 16.0)));
    ck_assert_int_eq(mp.kv_tokens, mp.kv_blocks * 16);

    /* 70B in BF16 (141 GB) on one 40 GB A100: no room. */
    sv_perf_t big = mk("llama-3.1-70b", "a100-40gb", 1, 0);
    ck_assert_int_eq(sv_perf_memplan(&big, &mp, &err), SV_ENOFIT);
    ck_assert_msg(strstr(err.msg, "model 'llama-3.1-70b' (bf16 weights) does not fit on "
                                  "a100-40gb with tp=1: weights need 141.") != NULL,
                  "%s", err.msg);
    /* At TP 8 on H100s it fits. */
    sv_perf_t ok = mk("llama-3.1-70b", "h100-sxm", 8, 0);
    ck_assert_int_eq(sv_perf_memplan(&ok, &mp, &err), 0);
    ck_assert(mp.kv_blocks > 0);
}
END_TEST

/* Cost model v2 by hand (docs/cost-model.md), Llama-3.1-8B on an H100 with the vllm profile. */
/* model at TP tp on gpu under an engine profile, with one KEY=VALUE set first (or none). */
static sv_perf_t mk_on(const char *gpu, const char *model, int tp, const char *profile,
                       const char *key, const char *value)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, gpu, &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, model, &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    if (key) ck_assert_int_eq(sv_perf_settings_set(&s, key, value, &err), 0);
    ck_assert_msg(sv_perf_settings_profile(&s, cat, profile, &err) == 0, "%s", err.msg);
    sv_perf_t p;
    ck_assert_msg(sv_perf_init(&p, g, m, &s, &err) == 0, "%s", err.msg);
    return p;
}

static sv_perf_t mk_profile(const char *model, int tp, const char *profile)
{
    return mk_on("h100-sxm", model, tp, profile, NULL, NULL);
}

START_TEST(test_v2_terms)
{
    sv_perf_t p = mk_profile("llama-3.1-8b", 1, "vllm");
    sv_step_cost_t c;
    /* Prefill of 2048 tokens: GEMM efficiency 0.7435 x 2048 / (2048 + 76.4). */
    sv_perf_prefill_time(&p, 2048, &c);
    tu_assert_rel(c.op[SV_OP_LINEAR].t_compute,
                  2.0 * 2048.0 * 32.0 * L8B_LINEAR_PER_LAYER / (989.4e12 * 0.7435) *
                      (2048.0 + 76.4) / 2048.0,
                  1e-12);
    /* 4 GEMM floors of 6.39 us per layer. */
    tu_assert_rel(c.op[SV_OP_LINEAR].t_fixed, 32.0 * 4.0 * 6.39e-6, 1e-12);
    /* Small ops per token per layer: norms 2 x 2d = 16,384 values, adds 2 x 3d, SwiGLU 3f,
     * rotary 2 (q + kv) = 24576 + 43008 + 10240 = 77,824 values; x 2 B = 188,416 B in all;
     * six kernels of at least 2.22 us each; the norms read at 0.388 of 3.35 TB/s, the rest
     * at 0.771. */
    tu_assert_rel(c.op[SV_OP_SMALL].bytes, 2048.0 * 32.0 * 188416.0, 1e-12);
    tu_assert_rel(c.op[SV_OP_SMALL].time,
                  32.0 * 6.0 * 2.22e-6 +
                      2048.0 * 32.0 * 2.0 * (16384.0 / 0.388 + 77824.0 / 0.771) / 3350e9,
                  1e-12);
    /* 2048 tokens is past vllm's 512-token CUDA graphs: 32 launches of 8 us; one sequence
     * at 20 us (vllm-project/vllm#10634, models/engines.yaml); 1.5 ms per step. */
    tu_assert_rel(c.eng_launch, 32.0 * 8e-6, 1e-12);
    tu_assert_rel(c.eng_seq, 20e-6, 1e-12);
    tu_assert_rel(c.eng_step, 1.5e-3, 1e-12);
    /* Decode of 8 sequences at 1024: a CUDA graph (no launches), 8 x 20 us, and the paged
     * attention's 0.05 us per sequence per layer on top of reading the KV at 0.88
     * (FlashInfer's batch decode on H100, models/gpus.yaml). */
    sv_perf_decode_time(&p, 8, 1024, &c);
    ck_assert(c.eng_launch == 0.0);
    tu_assert_rel(c.eng_seq, 8.0 * 20e-6, 1e-12);
    tu_assert_rel(c.op[SV_OP_ATTN_DECODE].t_fixed, 8.0 * 32.0 * 0.05e-6, 1e-12);
    tu_assert_rel(c.op[SV_OP_ATTN_DECODE].t_memory, c.op[SV_OP_ATTN_DECODE].bytes / (3350e9 * 0.88),
                  1e-12);
    /* Memory-bound GEMMs at T = 8 read the weights at 0.8035 of HBM bandwidth. */
    tu_assert_rel(c.op[SV_OP_LINEAR].t_memory, c.op[SV_OP_LINEAR].bytes / (3350e9 * 0.8035), 1e-12);
    /* The pure roofline has no small ops, floors or engine terms. */
    sv_perf_t id = mk("llama-3.1-8b", "h100-sxm", 1, 1);
    sv_perf_decode_time(&id, 8, 1024, &c);
    ck_assert(c.op[SV_OP_SMALL].time == 0.0 && c.overhead == 0.0);
    ck_assert(c.op[SV_OP_LINEAR].t_fixed == 0.0 && c.op[SV_OP_ATTN_DECODE].t_fixed == 0.0);
}
END_TEST

START_TEST(test_v2_allreduce_and_profiles)
{
    /* TP 8 with vllm: 4 sequences' 64 KiB all-reduce runs its custom one-shot kernel, 15 us
     * + 6 ranks x 1.58 us, each rank reading the 7 peers' buffers over 450 GB/s x 0.730 per
     * direction; NCCL's ring keeps the H100's fitted 19.8 us. */
    sv_perf_t p = mk_profile("llama-3.1-70b", 8, "vllm");
    tu_assert_rel(p.ar_custom_alpha, 15e-6 + 6.0 * 1.58e-6, 1e-12);
    tu_assert_rel(p.ar_alpha, 19.8e-6 + 6.0 * 1.58e-6, 1e-12);
    sv_step_cost_t c;
    sv_perf_decode_time(&p, 4, 1000, &c);
    tu_assert_rel(c.comm,
                  2.0 * 80.0 * (15e-6 + 6.0 * 1.58e-6 + 7.0 * 4.0 * 8192.0 * 2.0 / (450e9 * 0.730)),
                  1e-12);
    ck_assert_int_eq(c.ar_algo, SV_AR_ONE_SHOT);
    /* trtllm is leaner than vllm, eager (no CUDA graphs) far slower at every batch. */
    sv_perf_t t = mk_profile("llama-3.1-70b", 8, "trtllm");
    sv_perf_t e = mk_profile("llama-3.1-70b", 8, "eager");
    for (long b = 1; b <= 64; b *= 4) {
        double tv = sv_perf_decode_time(&p, b, 1000, NULL);
        ck_assert(sv_perf_decode_time(&t, b, 1000, NULL) < tv);
        ck_assert(sv_perf_decode_time(&e, b, 1000, NULL) > tv);
    }
    /* Settings given before the profile win over it. */
    sv_perf_settings_t s = sv_perf_settings_default();
    sv_error_t err;
    ck_assert_int_eq(sv_perf_settings_set(&s, "seq_overhead_us", "7", &err), 0);
    ck_assert_int_eq(sv_perf_settings_profile(&s, cat, "vllm", &err), 0);
    tu_assert_rel(s.seq_overhead_s, 7e-6, 1e-12);
    tu_assert_rel(s.iter_overhead_s, 1.5e-3, 1e-12);
    ck_assert_str_eq(s.engine, "vllm");
    ck_assert_int_eq(sv_perf_settings_profile(&s, cat, "nosuch", &err), SV_ENOTFOUND);
    ck_assert_msg(strstr(err.msg, "unknown engine profile 'nosuch' (known: vllm, trtllm, eager"),
                  "%s", err.msg);
    ck_assert_int_eq(sv_perf_settings_set(&s, "attention_efficiency", "1.5", &err), SV_EINVAL);
}
END_TEST

/*
 * The TP all-reduce by message size, Llama-3.1-70B (hidden 8192, 80 layers: 160 all-reduces
 * of batch x 16 KiB per decode step) on H100 SXM (B = 450 GB/s x 0.730 = 328.5 GB/s one
 * way, the fit to Vidur's H100 DGX table), vllm profile (15 us + (TP-2) x 1.58 us). vLLM's csrc/custom_all_reduce.cuh: one-shot
 * at 2 GPUs, under 512 KiB up to 4 and under 256 KiB up to 8, else two-shot; NCCL past
 * 8 MiB (custom_all_reduce.py's max_size).
 */
START_TEST(test_allreduce_by_size)
{
    const double B = 450e9 * 0.730, KiB = 1024.0, MiB = 1024.0 * KiB;
    sv_ar_algo_t a;
    sv_step_cost_t c;
    /* TP 8, batch 1: 16 KiB one-shot, 24.48 us + 7 x 16 KiB / B = 24.83 us. */
    sv_perf_t p8 = mk_profile("llama-3.1-70b", 8, "vllm");
    sv_perf_decode_time(&p8, 1, 1000, &c);
    ck_assert_int_eq(c.ar_algo, SV_AR_ONE_SHOT);
    tu_assert_rel(c.comm, 160.0 * 24.8291e-6, 1e-4);
    /* TP 8, batch 256: 4 MiB two-shot. Its second pass costs what one-shot's extra bytes
     * take at the 256 KiB threshold, 7 x (1 - 2/8) x 256 KiB / B = 4.190 us, so 28.67 us +
     * 2 x 7/8 x 4 MiB / B (22.34 us) = 51.01 us, 8.16 ms a step (NCCL's ring: 51.62 us). */
    sv_perf_decode_time(&p8, 256, 1000, &c);
    ck_assert_int_eq(c.ar_algo, SV_AR_TWO_SHOT);
    tu_assert_rel(c.comm, 160.0 * 51.01e-6, 1e-3);
    tu_assert_rel(sv_perf_allreduce(&p8, 4.0 * MiB, NULL),
                  24.48e-6 + 7.0 * 0.75 * 256.0 * KiB / B + 1.75 * 4.0 * MiB / B, 1e-12);
    /* At the threshold the two cost the same (the engine's switch is the break-even), below
     * it one-shot is the cheaper, above it two-shot. */
    double lo = sv_perf_allreduce(&p8, 256.0 * KiB - 2.0, &a);
    ck_assert_int_eq(a, SV_AR_ONE_SHOT);
    double hi = sv_perf_allreduce(&p8, 256.0 * KiB, &a);
    ck_assert_int_eq(a, SV_AR_TWO_SHOT);
    tu_assert_rel(lo, hi, 1e-5);
    /* Past 8 MiB NCCL: its ring at the H100's 19.8 us takes 16 MiB in 29.28 + 89.38 us,
     * its NVLink SHARP (H100: NVSwitch of NVLink 4), at the same latency, (1 + 1/8) x 16 MiB
     * at 0.686 of 450 GB/s: 29.28 + 61.14 = 90.42 us, so NCCL runs NVLS. */
    tu_assert_rel(sv_perf_allreduce(&p8, 16.0 * MiB, &a),
                  29.28e-6 + 1.125 * 16.0 * MiB / (450e9 * 0.686), 1e-12);
    ck_assert_int_eq(a, SV_AR_NCCL_NVLS);
    tu_assert_rel(sv_perf_allreduce(&p8, 16.0 * MiB, NULL), 90.42e-6, 1e-4);
    tu_assert_rel(sv_perf_allreduce(&p8, 8.0 * MiB, &a), 28.67e-6 + 1.75 * 8.0 * MiB / B, 1e-4);
    ck_assert_int_eq(a, SV_AR_TWO_SHOT);
    /* TP 4, batch 64: 1 MiB two-shot, 18.16 + 3 x 0.5 x 512 KiB / B (2.394) + 1.5 x 1 MiB / B
     * (4.788) = 25.34 us; batch 16 (256 KiB) one-shot, 18.16 + 2.394 = 20.55 us. */
    sv_perf_t p4 = mk_profile("llama-3.1-70b", 4, "vllm");
    sv_perf_decode_time(&p4, 64, 1000, &c);
    ck_assert_int_eq(c.ar_algo, SV_AR_TWO_SHOT);
    tu_assert_rel(c.comm, 160.0 * 25.342e-6, 1e-3);
    sv_perf_decode_time(&p4, 16, 1000, &c);
    ck_assert_int_eq(c.ar_algo, SV_AR_ONE_SHOT);
    tu_assert_rel(c.comm, 160.0 * 20.554e-6, 1e-3);
    /* TP 2 runs one-shot at every size up to 8 MiB: batch 256 is 15 + 4 MiB / B = 27.77 us. */
    sv_perf_t p2 = mk_profile("llama-3.1-70b", 2, "vllm");
    sv_perf_decode_time(&p2, 256, 1000, &c);
    ck_assert_int_eq(c.ar_algo, SV_AR_ONE_SHOT);
    tu_assert_rel(c.comm, 160.0 * 27.768e-6, 1e-3);
    /* At TP 2 NVLS moves (1 + 1/2) of the payload each way against the ring's 1, at 0.686
     * against 0.730 of the link: 2.19 against 1.37 s per byte per 450 GB/s, so the ring,
     * 16 MiB in 19.8 + 51.07 = 70.87 us (NVLS: 19.8 + 81.52 us). */
    tu_assert_rel(sv_perf_allreduce(&p2, 16.0 * MiB, &a), 19.8e-6 + 16.0 * MiB / B, 1e-12);
    ck_assert_int_eq(a, SV_AR_NCCL_RING);
    tu_assert_rel(sv_perf_allreduce(&p2, 16.0 * MiB, NULL), 70.872e-6, 1e-4);
    /* SGLang turns NVLS off (NCCL_NVLS_ENABLE=0 unless --enable-nccl-nvls): the ring. */
    sv_perf_t s8 = mk_profile("llama-3.1-70b", 8, "sglang");
    tu_assert_rel(sv_perf_allreduce(&s8, 16.0 * MiB, &a), 29.28e-6 + 1.75 * 16.0 * MiB / B, 1e-12);
    ck_assert_int_eq(a, SV_AR_NCCL_RING);
    /* The A100's NVSwitch (NVLink 3, 600 GB/s) has no NVLS, and nccl_nvls=false turns it
     * off on the H100: the ring, 7/4 x 16 MiB after 36.82 us (A100: 31.6 + 6 x 0.87) or
     * 29.28 us (H100). */
    sv_perf_t a8 = mk_on("a100-80gb", "llama-3.1-70b", 8, "vllm", NULL, NULL);
    tu_assert_rel(sv_perf_allreduce(&a8, 16.0 * MiB, &a),
                  36.82e-6 + 1.75 * 16.0 * MiB / (300e9 * 0.513), 1e-12);
    ck_assert_int_eq(a, SV_AR_NCCL_RING);
    sv_perf_t n8 = mk_on("h100-sxm", "llama-3.1-70b", 8, "vllm", "nccl_nvls", "false");
    tu_assert_rel(sv_perf_allreduce(&n8, 16.0 * MiB, &a), 29.28e-6 + 1.75 * 16.0 * MiB / B, 1e-12);
    ck_assert_int_eq(a, SV_AR_NCCL_RING);
    /* An engine without the custom kernel (eager, custom_allreduce: false) rings at every size. */
    sv_perf_t e8 = mk_profile("llama-3.1-70b", 8, "eager");
    sv_perf_decode_time(&e8, 1, 1000, &c);
    ck_assert_int_eq(c.ar_algo, SV_AR_NCCL_RING);
    tu_assert_rel(c.comm, 160.0 * (29.28e-6 + 1.75 * 16.0 * KiB / B), 1e-12);
    /* ... where link_latency_us, given, is the ring's latency (with the kernel, its own). */
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-70b", &m, &err), 0);
    for (int custom = 0; custom <= 1; custom++) {
        sv_perf_settings_t s = sv_perf_settings_default();
        s.tp = 8;
        ck_assert_int_eq(sv_perf_settings_set(&s, "link_latency_us", "40", &err), 0);
        ck_assert_int_eq(sv_perf_settings_profile(&s, cat, custom ? "vllm" : "eager", &err), 0);
        sv_perf_t q;
        ck_assert_msg(sv_perf_init(&q, g, m, &s, &err) == 0, "%s", err.msg);
        tu_assert_rel(q.ar_alpha, (custom ? 19.8e-6 : 40e-6) + 6.0 * 1.58e-6, 1e-12);
        if (custom) tu_assert_rel(q.ar_custom_alpha, 40e-6 + 6.0 * 1.58e-6, 1e-12);
    }
    /* NVLink pairs over PCIe: two GPUs of a pair one-shot over their bridge, four ring
     * through PCIe (vLLM needs full NVLink beyond 2 GPUs). */
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-pcie", &g, &err), 0);
    for (int tp = 2; tp <= 4; tp += 2) {
        sv_perf_settings_t s = sv_perf_settings_default();
        s.tp = tp;
        ck_assert_int_eq(sv_perf_settings_profile(&s, cat, "vllm", &err), 0);
        sv_perf_t q;
        ck_assert_msg(sv_perf_init(&q, g, m, &s, &err) == 0, "%s", err.msg);
        sv_perf_allreduce(&q, 16.0 * KiB, &a);
        ck_assert_int_eq(a, tp == 2 ? SV_AR_ONE_SHOT : SV_AR_NCCL_RING);
    }
    ck_assert_str_eq(sv_ar_algo_names[SV_AR_TWO_SHOT], "two-shot");
}
END_TEST

static sv_perf_t mk_dt(const char *model, const char *gpu, int tp, const char *w, const char *kv)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, gpu, &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, model, &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    ck_assert_int_eq(sv_perf_settings_set(&s, "weight_dtype", w, &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "kv_cache_dtype", kv, &err), 0);
    sv_perf_t p;
    ck_assert_msg(sv_perf_init(&p, g, m, &s, &err) == 0, "%s", err.msg);
    return p;
}

/* FP4 weights and KV by hand, block scales included. */
START_TEST(test_fp4_sizes)
{
    /* NVFP4: 4 bits + one FP8 scale per 16 values = 0.5625 B; MXFP4: + one E8M0 per 32. */
    ck_assert(sv_dtype_weight_bytes(SV_DT_NVFP4) == 0.5625);
    ck_assert(sv_dtype_weight_bytes(SV_DT_MXFP4) == 0.53125);
    /* Llama-3.1-8B NVFP4 on one B200:
     *   decoder linear 32 x 218,103,808 x 0.5625 = 3,925,868,544
     *   norms (BF16)   32 x 2 x 4096 x 2 + 4096 x 2 = 532,480
     *   embedding + LM head (BF16) 2 x 128256 x 4096 x 2 = 2,101,346,304
     *   per-tensor FP32 scales 32 layers x 7 tensors x 4 B = 896
     *   total 6,027,748,224 bytes */
    sv_perf_t p = mk_dt("llama-3.1-8b", "b200", 1, "nvfp4", "nvfp4");
    ck_assert(p.weight_bytes_gpu == 6027748224.0);
    ck_assert(p.weight_bytes_total == 6027748224.0);
    /* KV: 2 x 32 layers x 8 heads x 128 x 0.5625 = 36,864 B per token (BF16: 131,072). */
    ck_assert(p.kv_bytes_token == 36864.0);
    ck_assert(p.compute_peak == 9000e12); /* W4A4 on the FP4 tensor cores */
    /* MXFP4 on the MI355X: 6,979,321,856 x 0.53125 + 532,480 + 2,101,346,304 (no tensor
     * scales) = 5,809,643,520; KV 2 x 32 x 8 x 128 x 0.53125 = 34,816. */
    sv_perf_t q = mk_dt("llama-3.1-8b", "mi355x", 1, "mxfp4", "mxfp4");
    ck_assert(q.weight_bytes_gpu == 5809643520.0);
    ck_assert(q.kv_bytes_token == 34816.0);
    /* Llama-3.1-70B NVFP4: 80 x 855,638,016 x 0.5625 = 38,503,710,720; norms 80 x 2 x 8192
     * x 2 + 8192 x 2 = 2,637,824; tables 2 x 128256 x 8192 x 2 = 4,202,692,608; scales
     * 80 x 7 x 4 = 2,240: 42,709,043,392 bytes (BF16: 141.1 GB). At TP 8 the tables and
     * the linear layers split 8 ways; norms and tensor scales are held by every GPU. */
    sv_perf_t r = mk_dt("llama-3.1-70b", "b200", 1, "nvfp4", "fp8");
    ck_assert(r.weight_bytes_total == 42709043392.0);
    ck_assert(r.weight_bytes_gpu == 42709043392.0);
    sv_perf_t r8 = mk_dt("llama-3.1-70b", "gb200", 8, "nvfp4", "nvfp4");
    ck_assert(r8.weight_bytes_gpu == 38503710720.0 / 8 + 2637824.0 + 4202692608.0 / 8 + 2240.0);
    /* KV of the 70B in NVFP4: 2 x 80 x 8 x 128 x 0.5625 = 92,160 B per token. */
    ck_assert(r8.kv_bytes_token_total == 92160.0);
}
END_TEST

START_TEST(test_fp4_errors)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    sv_perf_t p;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &g, &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "weight_dtype", "nvfp4", &err), 0);
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "weight_dtype nvfp4: GPU 'h100-sxm' has no nvfp4 tensor cores "
                              "(fp4_formats in the catalog: none)");
    /* The MI355X takes MXFP4 only. */
    ck_assert_int_eq(sv_catalog_gpu(cat, "mi355x", &g, &err), 0);
    s = sv_perf_settings_default();
    ck_assert_int_eq(sv_perf_settings_set(&s, "kv_cache_dtype", "nvfp4", &err), 0);
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "kv_cache_dtype nvfp4: GPU 'mi355x' has no nvfp4 tensor cores "
                              "(fp4_formats in the catalog: mxfp4)");
}
END_TEST

/*
 * PP = 2 of Llama-3.1-8B on two H100s (in one NVLink domain): each stage holds 16 layers,
 * so a stage's time t_s equals the step of a 16-layer copy of the model without PP minus
 * its per-step engine costs; a send is t_x = 13.2 us + T x 4096 x 2 B / (450 GB/s x 0.95).
 * step = max(sum_j (t_s,j + t_x,j), 2 t_s + t_x) + engine per step and per sequence:
 *   batch 1 (one micro-batch):  2 t_s(1) + t_x(1) + engine  (the bubble is t_s(1))
 *   batch 2 (two micro-batches of 1): 2 (t_s(1) + t_x(1)) + engine
 */
/* The H100 SXM and Llama-3.1-8B of the catalog, for the tests below. */
static void h100_8b(const sv_gpu_t **g, const sv_model_t **m)
{
    sv_error_t err;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", m, &err), 0);
}

/* A power cap scales tensor-core throughput by (cap / TDP)^0.736: at Splitwise's 70% cap
 * (490 of the H100's 700 W) the compute of a prompt takes 1.30x, as in its profile; the
 * bytes (decode's bound) do not change; the range is a quarter of the TDP to the TDP. */
START_TEST(test_power_limit)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    h100_8b(&g, &m);
    ck_assert(fabs(1.0 / sv_perf_power_scale(g, 490.0) - 1.30) < 1e-3);
    ck_assert(sv_perf_power_scale(g, 0.0) == 1.0);
    ck_assert(sv_perf_power_scale(g, 700.0) == 1.0);
    double lo, hi;
    sv_perf_power_range(g, &lo, &hi);
    ck_assert(lo == 175.0 && hi == 700.0);
    sv_perf_settings_t s = sv_perf_settings_default(), c = s;
    ck_assert_int_eq(sv_perf_settings_set(&c, "power_limit_w", "490", &err), 0);
    sv_perf_t p0, p1;
    ck_assert_int_eq(sv_perf_init(&p0, g, m, &s, &err), 0);
    ck_assert_int_eq(sv_perf_init(&p1, g, m, &c, &err), 0);
    sv_step_cost_t a, b;
    sv_perf_prefill_time(&p0, 4096, &a);
    sv_perf_prefill_time(&p1, 4096, &b);
    double r = b.op[SV_OP_LINEAR].t_compute / a.op[SV_OP_LINEAR].t_compute;
    ck_assert_msg(fabs(r - 1.30) < 1e-3, "linear compute x%.4f", r);
    ck_assert(b.op[SV_OP_LINEAR].bytes == a.op[SV_OP_LINEAR].bytes);
    sv_perf_decode_time(&p0, 1, 1000.0, &a);
    sv_perf_decode_time(&p1, 1, 1000.0, &b);
    ck_assert(fabs(b.total - a.total) < 1e-3 * a.total); /* batch 1: memory-bound */
    ck_assert_int_eq(sv_perf_settings_set(&c, "power_limit_w", "900", &err), 0);
    ck_assert_int_eq(sv_perf_init(&p1, g, m, &c, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "power_limit_w: 900 W is outside the h100-sxm's range of 175 to "
                              "700 W (a quarter of its TDP to its TDP)");
}
END_TEST

/* vLLM V0's multi-step scheduling: a decode-only step pays 1/n of the profile's per-step
 * and per-sequence cost (here 1.5 ms and 30 us a sequence); a step with a prompt chunk
 * pays all of it. */
START_TEST(test_multi_step)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    h100_8b(&g, &m);
    sv_perf_settings_t s = sv_perf_settings_default();
    ck_assert_int_eq(sv_perf_settings_set(&s, "iteration_overhead_ms", "1.5", &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "seq_overhead_us", "30", &err), 0);
    sv_perf_settings_t s8 = s;
    ck_assert_int_eq(sv_perf_settings_set(&s8, "num_scheduler_steps", "8", &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s8, "num_scheduler_steps", "0", &err), SV_EINVAL);
    sv_perf_t p1, p8;
    ck_assert_int_eq(sv_perf_init(&p1, g, m, &s, &err), 0);
    ck_assert_int_eq(sv_perf_init(&p8, g, m, &s8, &err), 0);
    sv_step_cost_t a, b;
    sv_perf_decode_time(&p1, 64, 1000.0, &a);
    sv_perf_decode_time(&p8, 64, 1000.0, &b);
    ck_assert(fabs(a.eng_step + a.eng_seq - (1.5e-3 + 64 * 30e-6)) < 1e-12);
    ck_assert(fabs(b.eng_step + b.eng_seq - (1.5e-3 + 64 * 30e-6) / 8) < 1e-12);
    ck_assert(fabs((a.total - b.total) - (1.5e-3 + 64 * 30e-6) * 7 / 8) < 1e-12);
    sv_chunk_t c = {.new_tokens = 512, .cached_tokens = 0, .last = 1};
    sv_batch_t mixed = {.chunks = &c, .n_chunks = 1, .n_decode = 63, .decode_ctx_sum = 63000.0};
    sv_perf_step(&p1, &mixed, &a);
    sv_perf_step(&p8, &mixed, &b);
    ck_assert(a.total == b.total);
}
END_TEST

START_TEST(test_pipeline)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    ck_assert_int_eq(sv_perf_settings_set(&s, "pp", "2", &err), 0);
    sv_perf_t p2;
    ck_assert_msg(sv_perf_init(&p2, g, m, &s, &err) == 0, "%s", err.msg);
    ck_assert(p2.stage_layers == 16.0);
    ck_assert_int_eq(p2.pp_nvlink, 1);
    ck_assert(p2.kv_bytes_token == 65536.0);        /* 2 x 16 x 8 x 128 x 2 */
    ck_assert(p2.kv_bytes_token_total == 131072.0); /* both stages */

    sv_model_t half = *m;
    half.layers = 16;
    sv_perf_settings_t s1 = sv_perf_settings_default();
    sv_perf_t p1;
    ck_assert_int_eq(sv_perf_init(&p1, g, &half, &s1, &err), 0);
    sv_step_cost_t c1, c2;
    double ctx = 1000.0;
    sv_perf_decode_time(&p1, 1, ctx, &c1);
    double ts = c1.total - c1.eng_step - c1.eng_seq;
    double tx = 13.2e-6 + 1.0 * 4096 * 2 / (450e9 * 0.95);
    double eng1 = c1.eng_step + c1.eng_seq;

    sv_perf_decode_time(&p2, 1, ctx, &c2);
    ck_assert_int_eq(c2.micro_batches, 1);
    tu_assert_rel(c2.total, 2.0 * ts + tx + eng1, 1e-12);
    tu_assert_rel(c2.pp_bubble, ts, 1e-9);
    tu_assert_rel(c2.pp_send, tx, 1e-9);

    sv_perf_decode_time(&p2, 2, ctx, &c2);
    ck_assert_int_eq(c2.micro_batches, 2);
    double eng2 = c1.eng_step + 2.0 * c1.eng_seq;
    tu_assert_rel(c2.total, 2.0 * (ts + tx) + eng2, 1e-12);
    ck_assert(c2.pp_bubble < 1e-12);

    /* Across nodes (TP 8 x PP 2 > 8 GPUs per NVLink domain) the sends take 50 GB/s. */
    s = sv_perf_settings_default();
    s.tp = 8;
    s.pp = 2;
    ck_assert_int_eq(sv_perf_init(&p2, g, m, &s, &err), 0);
    ck_assert_int_eq(p2.pp_nvlink, 0);
    tu_assert_rel(p2.p2p_inv_bw, 1.0 / (50e9 * 0.95), 1e-12);

    /* Llama-3.1-405B in BF16 does not fit 8 H100s; TP 8 x PP 2 does. */
    const sv_model_t *big;
    sv_memplan_t mp;
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-405b", &big, &err), 0);
    s = sv_perf_settings_default();
    s.tp = 8;
    ck_assert_int_eq(sv_perf_init(&p2, g, big, &s, &err), 0);
    ck_assert_int_eq(sv_perf_memplan(&p2, &mp, &err), SV_ENOFIT);
    s.pp = 2;
    ck_assert_int_eq(sv_perf_init(&p2, g, big, &s, &err), 0);
    ck_assert_msg(sv_perf_memplan(&p2, &mp, &err) == 0, "%s", err.msg);
    ck_assert(mp.kv_tokens > 100000);

    /* Stages are at least one layer each. */
    s.pp = 127;
    ck_assert_int_eq(sv_perf_init(&p2, g, big, &s, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "pp=127 exceeds the 126 layers of model 'llama-3.1-405b' "
                              "(each pipeline stage holds at least one)");
}
END_TEST

START_TEST(test_pipeline_bubble_vs_pp)
{
    /* vLLM V1 keeps pp batches in flight (EngineCore.step_with_batch_queue over a queue of
     * max_concurrent_batches = pp): a stage works on one micro-batch after another and a
     * sequence gets a token per trip through all stages. Llama-3.1-8B (32 layers) on H100s,
     * 8 decode sequences of 1000 tokens: with pp = 1, 2, 4 the batch is pp micro-batches of
     * 8/pp sequences and each stage holds 32/pp layers, so
     *   step(pp) = pp (t_s + t_x) + engine(8 sequences),
     * t_s the step of a model of 32/pp layers at 8/pp sequences (the last stage, with the LM
     * head), t_x = 13.2 us + (8/pp) 4096 x 2 bytes / (450 GB/s x 0.95); no bubble. Tokens
     * per second of the replica = 8 / step, per GPU that over pp. */
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &m, &err), 0);
    const double ctx = 1000.0;
    double tput[3];
    for (int i = 0, pp = 1; pp <= 4; i++, pp *= 2) {
        sv_perf_settings_t s = sv_perf_settings_default();
        s.pp = pp;
        sv_perf_t p;
        ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), 0);
        sv_model_t stage = *m;
        stage.layers = 32 / pp;
        sv_perf_settings_t s1 = sv_perf_settings_default();
        sv_perf_t p1;
        ck_assert_int_eq(sv_perf_init(&p1, g, &stage, &s1, &err), 0);
        sv_step_cost_t c, c1, c8;
        sv_perf_decode_time(&p1, 8 / pp, ctx, &c1);
        sv_perf_decode_time(&p1, 8, ctx, &c8);
        double ts = c1.total - c1.eng_step - c1.eng_seq;
        double tx = pp > 1 ? 13.2e-6 + (8.0 / pp) * 4096 * 2 / (450e9 * 0.95) : 0.0;
        double step = pp * (ts + tx) + c8.eng_step + c8.eng_seq;
        sv_perf_decode_time(&p, 8, ctx, &c);
        ck_assert_int_eq(c.micro_batches, pp);
        tu_assert_rel(c.total, step, 1e-9);
        ck_assert(c.pp_bubble < 1e-12);
        tput[i] = 8.0 / c.total;
    }
    /* A small batch reads the weights once a step whatever the split (each stage reads its
     * share): the replica's tokens per second stay within the sends and engine costs of one
     * another, so per GPU they fall about as 1/pp. */
    ck_assert(tput[1] / 2 < 0.6 * tput[0] && tput[2] / 4 < 0.6 * tput[1] / 2);
    ck_assert(tput[2] > 0.8 * tput[0]);

    /* Fewer sequences than stages: 2 sequences at pp = 4 make 2 micro-batches of one; the
     * step is one micro-batch's trip, 4 t_s + 3 t_x, of which each stage works 2 t_s: the
     * bubble is 2 t_s, a share of the step of (4 - 2) t_s / (4 t_s + 3 t_x), about
     * (pp - m) / pp = 1/2. */
    sv_perf_settings_t s = sv_perf_settings_default();
    s.pp = 4;
    sv_perf_t p4, p1;
    ck_assert_int_eq(sv_perf_init(&p4, g, m, &s, &err), 0);
    sv_model_t stage = *m;
    stage.layers = 8;
    sv_perf_settings_t s1 = sv_perf_settings_default();
    ck_assert_int_eq(sv_perf_init(&p1, g, &stage, &s1, &err), 0);
    sv_step_cost_t c, c1, c2;
    sv_perf_decode_time(&p1, 1, ctx, &c1);
    sv_perf_decode_time(&p1, 2, ctx, &c2);
    double ts = c1.total - c1.eng_step - c1.eng_seq;
    double tx = 13.2e-6 + 4096.0 * 2 / (450e9 * 0.95);
    sv_perf_decode_time(&p4, 2, ctx, &c);
    ck_assert_int_eq(c.micro_batches, 2);
    tu_assert_rel(c.total, 4 * ts + 3 * tx + c2.eng_step + c2.eng_seq, 1e-9);
    tu_assert_rel(c.pp_bubble, 2 * ts, 1e-9);
    tu_assert_rel(c.pp_send, 3 * tx, 1e-9);
    double share = c.pp_bubble / (c.total - c2.eng_step - c2.eng_seq);
    ck_assert(share > 0.45 && share < 0.5);
}
END_TEST

static sv_perf_t mk_layout(const char *model, int tp, int ep, int dp)
{
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    s.ep = ep;
    s.dp_attention = dp;
    return init_cfg(model, "h200", &s);
}

START_TEST(test_ep_redundant_experts)
{
    /* EPLB's redundant experts (SGLang --ep-num-redundant-experts): DeepSeek-R1 at EP 48
     * refuses 256 experts (48 does not divide them) and takes 256 + 32 = 288, 6 per rank.
     * At EP 16, 16 copies add one expert per rank: 58 MoE layers x 3 x 7168 x 2048 =
     * 2,554,331,136 FP8 parameters with one FP32 scale per 128 x 128 block, 2,554,954,752
     * bytes per GPU; 32 copies add twice that. */
    sv_error_t err;
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = 48;
    s.ep = 48;
    s.dp_attention = 48;
    const sv_gpu_t *g;
    sv_model_t m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h200", &g, &err), 0);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("deepseek-r1/config.json"), &m, &err), 0);
    sv_perf_t p;
    ck_assert_int_eq(sv_perf_init(&p, g, &m, &s, &err), SV_EINVAL);
    ck_assert_int_eq(sv_perf_settings_set(&s, "ep_redundant_experts", "30", &err), 0);
    ck_assert_int_eq(sv_perf_init(&p, g, &m, &s, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "ep=48 does not divide the 256 routed experts of model "
                              "'deepseek-r1' and their 30 redundant copies (ep_redundant_experts; "
                              "EP degrees that work with tp=48: 1, 2)");
    ck_assert_int_eq(sv_perf_settings_set(&s, "ep_redundant_experts", "32", &err), 0);
    ck_assert_msg(sv_perf_init(&p, g, &m, &s, &err) == 0, "%s", err.msg);
    double w[3];
    for (int i = 0; i < 3; i++) {
        sv_perf_settings_t t = sv_perf_settings_default();
        t.tp = t.ep = t.dp_attention = 16;
        t.ep_redundant = 16 * i;
        sv_memplan_t mp;
        ck_assert_int_eq(sv_perf_init(&p, g, &m, &t, &err), 0);
        ck_assert_int_eq(sv_perf_memplan(&p, &mp, &err), 0);
        w[i] = mp.weight_bytes;
    }
    tu_assert_rel(w[1] - w[0], 2554954752.0, 1e-9);
    tu_assert_rel(w[2] - w[0], 2.0 * 2554954752.0, 1e-9);
}
END_TEST

static sv_perf_t mk_cat_tp(const char *model, int tp)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h200", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, model, &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    sv_perf_t p;
    ck_assert_msg(sv_perf_init(&p, g, m, &s, &err) == 0, "%s", err.msg);
    return p;
}

START_TEST(test_kv_handoff_per_rank)
{
    /* DeepSeek-R1 (MLA: 61 layers x (512 + 64) x 2 bytes = 70,272 bytes of latent per token,
     * held whole by every attention rank's GPU) from a prefill worker of TP 8 / EP 8 to a
     * decode worker of 32 GPUs with DP attention 32 and EP 32: the 8 prefill GPUs each send
     * their 70,272 bytes a token, the request lands on one attention rank of one GPU, which
     * takes 70,272 bytes a token: the busier side moves 70,272 bytes a token through one
     * NIC, 8 x 70,272 = 562,176 on the prefill worker's link of 8 GPUs. */
    sv_perf_t pre = mk_layout("deepseek-r1", 8, 8, 1), dec = mk_layout("deepseek-r1", 32, 32, 32);
    sv_kv_handoff_t h;
    sv_perf_kv_handoff(&pre, &dec, &h);
    ck_assert_int_eq(h.senders, 8);
    ck_assert_int_eq(h.receivers, 1);
    ck_assert(h.send_gpu == 70272.0 && h.recv_gpu == 70272.0);
    ck_assert(h.link_gpu == 70272.0 && h.link_tok == 562176.0);
    /* DP attention 8 over 32 GPUs: a rank is 4 GPUs (attention TP 4), each holding the whole
     * latent: 4 receivers of 70,272 bytes a token each, the same time per token. */
    sv_perf_t dec8 = mk_layout("deepseek-r1", 32, 32, 8);
    sv_perf_kv_handoff(&pre, &dec8, &h);
    ck_assert_int_eq(h.receivers, 4);
    ck_assert(h.recv_gpu == 70272.0 && h.link_tok == 562176.0);
    /* Grouped-query attention splits the KV by heads: Llama-3.1-70B's 80 layers x 8 KV heads
     * x 128 x 2 (K, V) x 2 bytes = 327,680 bytes a token, 40,960 per GPU at TP 8 and 163,840
     * per GPU at TP 2. From TP 8 to TP 2 the 2 receiving GPUs are the busier side: 163,840
     * bytes a token through each NIC, 8 x 163,840 = 1,310,720 on the 8-GPU link (4 times the
     * 327,680 the senders hold); from TP 2 to TP 8 the senders are, 163,840 each. */
    sv_perf_t g8 = mk_cat_tp("llama-3.1-70b", 8), g2 = mk_cat_tp("llama-3.1-70b", 2);
    sv_perf_kv_handoff(&g8, &g2, &h);
    ck_assert(h.senders == 8 && h.receivers == 2);
    ck_assert(h.send_gpu == 40960.0 && h.recv_gpu == 163840.0);
    ck_assert(h.link_gpu == 163840.0 && h.link_tok == 1310720.0);
    sv_perf_kv_handoff(&g2, &g8, &h);
    ck_assert(h.senders == 2 && h.receivers == 8);
    ck_assert(h.link_gpu == 163840.0 && h.link_tok == 327680.0);
}
END_TEST

/* Speculative decoding (docs/cost-model.md, "Speculative decoding"). */
static sv_perf_t mk_spec(const char *accept, int ideal)
{
    sv_error_t err;
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = 8;
    if (ideal) sv_perf_settings_ideal(&s);
    ck_assert_int_eq(sv_perf_settings_set(&s, "speculative", "mtp", &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "num_speculative_tokens", "3", &err), 0);
    if (accept) ck_assert_int_eq(sv_perf_settings_set(&s, "spec_acceptance", accept, &err), 0);
    return init_cfg("deepseek-r1", "h200", &s);
}

START_TEST(test_spec_decode)
{
    /* Tokens per verify step: 1 + 0.8 + 0.8*0.5 + 0.8*0.5*0.25 = 2.3. */
    sv_perf_t p = mk_spec("0.8,0.5,0.25", 0);
    tu_assert_rel(sv_spec_accept_len(&p.set), 2.3, 1e-12);
    /* One rate: every position; 1 + 0.5 + 0.25 + 0.125. */
    sv_perf_t one = mk_spec("0.5", 0);
    tu_assert_rel(sv_spec_accept_len(&one.set), 1.875, 1e-12);
    /* MTP's default: 0.85 then 0.62: 1 + 0.85 + 0.527 + 0.32674. */
    sv_perf_t def = mk_spec(NULL, 0);
    tu_assert_rel(sv_spec_accept_len(&def.set), 2.70374, 1e-12);
    /* Counters for 2300 decode tokens: 1000 drafts, 3000 draft tokens, 1300 accepted,
     * positions 800, 400, 100. */
    sv_spec_counters_t c;
    sv_spec_counters(&p.set, 2300.0, &c);
    tu_assert_rel(c.drafts, 1000.0, 1e-12);
    tu_assert_rel(c.draft_tokens, 3000.0, 1e-12);
    tu_assert_rel(c.accepted, 1300.0, 1e-12);
    tu_assert_rel(c.per_pos[0], 800.0, 1e-12);
    tu_assert_rel(c.per_pos[1], 400.0, 1e-12);
    tu_assert_rel(c.per_pos[2], 100.0, 1e-12);
    /* The MTP layer's KV: 62 layers' latent instead of 61; each sequence holds its 3 draft
     * tokens' slots. */
    tu_assert_rel(p.kv_bytes_token, 70272.0 * 62.0 / 61.0, 1e-12);
    tu_assert_rel(p.seq_state_bytes, 3.0 * 70272.0 * 62.0 / 61.0, 1e-12);
    /* The verify step: 4 tokens per sequence through the linear layers, as 4 decode
     * sequences; attention: 4 queries over the 1000 cached keys and the 4 new ones each
     * (34,816 FLOPs per key per layer, absorbed MLA, TP 8). */
    sv_perf_t id = mk_spec("0.8,0.5,0.25", 1);
    sv_batch_t vb = {.n_decode = 1, .decode_ctx_sum = 1000.0, .verify = 4};
    sv_batch_t d4 = {.n_decode = 4, .decode_ctx_sum = 4000.0};
    sv_step_cost_t cv, c4;
    sv_perf_step(&id, &vb, &cv);
    sv_perf_step(&id, &d4, &c4);
    tu_assert_rel(cv.op[SV_OP_LINEAR].flops, c4.op[SV_OP_LINEAR].flops, 1e-12);
    tu_assert_rel(cv.op[SV_OP_LM_HEAD].flops, c4.op[SV_OP_LM_HEAD].flops, 1e-12);
    ck_assert(cv.op[SV_OP_ATTN_DECODE].flops == 4.0 * 34816.0 * 61.0 * 1001.0);
    /* ... and it reads the latent of 1000 + 4 keys once, not 4 x 1001. */
    ck_assert(cv.op[SV_OP_ATTN_DECODE].bytes < c4.op[SV_OP_ATTN_DECODE].bytes);
    /* A decode-only step: (verify + draft) / tau per token step. */
    sv_step_cost_t s;
    sv_perf_decode_time(&p, 8, 1500.0, &s);
    tu_assert_rel(s.total, (s.spec_verify + s.spec_draft) / 2.3, 1e-12);
    ck_assert(s.spec_draft > 0);
    tu_assert_rel(s.spec_len, 2.3, 1e-12);
    /* Errors name the key. */
    sv_error_t err;
    sv_perf_settings_t st = sv_perf_settings_default();
    ck_assert_int_eq(sv_perf_settings_set(&st, "spec_acceptance", "1.2", &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "spec_acceptance: expected acceptance rates in [0, 1], got '1.2'");
    ck_assert_int_eq(sv_perf_settings_set(&st, "spec_acceptance", "0.9,,0.5", &err), SV_EINVAL);
    ck_assert_int_eq(sv_perf_settings_set(&st, "num_speculative_tokens", "0", &err), SV_EINVAL);
    ck_assert_int_eq(sv_perf_settings_set(&st, "num_speculative_tokens", "17", &err), SV_EINVAL);
}
END_TEST

/* Speculative decoding with a draft model: Llama-3.1-8B drafted by Llama-3.2-1B on H100s,
 * k = 4 at 0.8 a position. *draft must outlive the returned model (it borrows it). */
static sv_perf_t mk_draft(int tp, int ideal, sv_perf_t *draft)
{
    sv_perf_t p;
    tu_draft_pair(cat, tp, ideal, "4", "0.8", &p, draft);
    return p;
}

/* A draft model's forward pass as the drafter prices it: the step less the engine's CPU. */
static double pass_of(const sv_perf_t *d, long n, double ctx_sum, int verify)
{
    sv_batch_t b = {.n_decode = n, .decode_ctx_sum = ctx_sum, .verify = verify};
    sv_step_cost_t c;
    sv_perf_step(d, &b, &c);
    return c.total - c.eng_step - c.eng_seq;
}

START_TEST(test_spec_draft_model)
{
    sv_perf_t draft;
    sv_perf_t p = mk_draft(1, 0, &draft);
    sv_perf_t alone = mk("llama-3.1-8b", "h100-sxm", 1, 0);
    /* Llama-3.2-1B by hand: per layer q 2048*2048 + k,v 2*2048*512 + o 2048*2048 =
     * 10,485,760, MLP 3*2048*8192 = 50,331,648, norms 4,096: 60,821,504 x 16 = 973,144,064;
     * final norm 2,048; one tied 128256 x 2048 table 262,668,288: 1,235,814,400. */
    ck_assert(sv_model_param_count(&draft.model) == 1235814400.0);
    tu_assert_rel(draft.weight_bytes_gpu, 2.0 * 1235814400.0, 0.005);
    /* Memory per GPU: both models' weights; KV per token 131,072 (the 8B's) + 2 * 16 * 8 *
     * 64 * 2 = 32,768 (the 1B's) = 163,840 B; every sequence the 4 lookahead slots. */
    ck_assert(p.weight_bytes_gpu == alone.weight_bytes_gpu + draft.weight_bytes_gpu);
    ck_assert(draft.kv_bytes_token == 32768.0);
    ck_assert(p.kv_bytes_token == 163840.0);
    ck_assert(p.seq_state_bytes == 4.0 * 163840.0);
    sv_memplan_t mp, ma;
    sv_error_t err;
    ck_assert_int_eq(sv_perf_memplan(&p, &mp, &err), 0);
    ck_assert_int_eq(sv_perf_memplan(&alone, &ma, &err), 0);
    tu_assert_rel(ma.kv_bytes - mp.kv_bytes, draft.weight_bytes_gpu, 1e-9);
    ck_assert(mp.kv_tokens < ma.kv_tokens * 131072.0 / 163840.0);
    /* Tokens per verify step: 1 + 0.8 + 0.64 + 0.512 + 0.4096 = 3.3616. */
    tu_assert_rel(sv_spec_accept_len(&p.set), 3.3616, 1e-12);
    /* The draft per step at batch 8, context 1000: its first pass over 4 + 2 = 6 tokens a
     * sequence, then 3 steps of one token, each priced by the 1B's own cost model. */
    sv_step_cost_t s;
    sv_perf_decode_time(&p, 8, 1000.0, &s);
    double d6 = pass_of(&draft, 8, 8000.0, 6), d1 = pass_of(&draft, 8, 8000.0, 1);
    tu_assert_rel(s.spec_draft, d6 + 3.0 * d1, 1e-12);
    /* The verify step is the target's over k + 1 = 5 tokens a sequence, the lockstep step
     * (verify + draft) / tau. */
    sv_batch_t vb = {.n_decode = 8, .decode_ctx_sum = 8000.0, .verify = 5};
    sv_step_cost_t cv;
    sv_perf_step(&alone, &vb, &cv);
    tu_assert_rel(s.spec_verify, cv.total, 1e-12);
    tu_assert_rel(s.total, (s.spec_verify + s.spec_draft) / 3.3616, 1e-12);
    /* Pure roofline at batch 1 and no context: each one-token draft step reads the 1B's
     * 2,471,628,800 bytes of weights at 3.35 TB/s: 0.7378 ms (the activations and the 6
     * tokens of the first pass add well under 1%). */
    sv_perf_t idraft;
    sv_perf_t id = mk_draft(1, 1, &idraft);
    tu_assert_rel(pass_of(&idraft, 1, 0.0, 1), 2471628800.0 / 3.35e12, 0.01);
    sv_perf_decode_time(&id, 1, 0.0, &s);
    tu_assert_rel(s.spec_draft, 4.0 * 2471628800.0 / 3.35e12, 0.01);
    /* A prompt's last chunk: the draft's pass over its tokens, then 3 one-token steps. */
    sv_chunk_t ch = {.new_tokens = 512, .cached_tokens = 0, .last = 1};
    sv_batch_t pb = {.chunks = &ch, .n_chunks = 1};
    sv_perf_spec_step(&p, &pb, &s);
    sv_step_cost_t dc;
    sv_perf_step(&draft, &pb, &dc);
    tu_assert_rel(s.spec_draft,
                  dc.total - dc.eng_step - dc.eng_seq + 3.0 * pass_of(&draft, 1, 512.0, 1), 1e-12);
}
END_TEST

START_TEST(test_spec_draft_model_errors)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m, *mistral, *dm;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &m, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "mistral-7b", &mistral, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.2-1b", &dm, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    ck_assert_int_eq(sv_perf_settings_set(&s, "speculative", "draft", &err), 0);
    sv_perf_t p, d;
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "speculative: draft needs speculative_model (the draft model, a "
                              "catalog name or a config.json)");
    ck_assert_int_eq(sv_perf_settings_set(&s, "speculative_model", "mistral-7b", &err), 0);
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "speculative: draft needs spec_acceptance (the acceptance of a draft "
                              "model depends on the pair of models and the data; no default is "
                              "given)");
    ck_assert_int_eq(sv_perf_settings_set(&s, "spec_acceptance", "0.7", &err), 0);
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), 0);
    ck_assert_int_eq(sv_perf_draft_init(&p, &d, mistral, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "speculative_model: the draft 'mistral-7b' has a vocabulary of 32000 "
                              "tokens, the target 'llama-3.1-8b' 128256; a draft model must share "
                              "the target's tokenizer");
    /* Pipeline stages with a draft model are not modelled. */
    s.tp = 2;
    s.pp = 2;
    ck_assert_int_eq(sv_perf_init(&p, g, m, &s, &err), 0);
    ck_assert_int_eq(sv_perf_draft_init(&p, &d, dm, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "speculative_model: a draft model runs with tensor parallelism only "
                              "(this layout has pp=2, ep=1, dp_attention=1)");
    sv_perf_settings_t n = sv_perf_settings_default();
    ck_assert_int_eq(sv_perf_settings_set(&n, "speculative_model", "llama-3.2-1b", &err), 0);
    ck_assert_int_eq(sv_spec_check(&n, &err), 0); /* speculative none: not loaded */
    ck_assert_int_eq(sv_perf_settings_set(&n, "speculative", "eagle", &err), 0);
    ck_assert_int_eq(sv_spec_check(&n, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "speculative_model: a draft model is run with speculative: draft "
                              "(this pool's is eagle; with none the draft model is not loaded)");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("perf");
    TCase *tc = tcase_create("roofline");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_fmax_fmin_inline);
    tcase_add_test(tc, test_floor_inline);
    tcase_add_test(tc, test_step_memo_same_bits);
    tcase_add_test(tc, test_step_mixed_same_bits);
    tcase_add_test(tc, test_llama8b_sizes);
    tcase_add_test(tc, test_decode_batch1_memory_bound);
    tcase_add_test(tc, test_prefill_compute_bound);
    tcase_add_test(tc, test_batch_tradeoff);
    tcase_add_test(tc, test_tensor_parallel);
    tcase_add_test(tc, test_moe_experts_touched);
    tcase_add_test(tc, test_dtypes);
    tcase_add_test(tc, test_sliding_window);
    tcase_add_test(tc, test_bad_tp);
    tcase_add_test(tc, test_memplan);
    tcase_add_test(tc, test_v2_terms);
    tcase_add_test(tc, test_v2_allreduce_and_profiles);
    tcase_add_test(tc, test_allreduce_by_size);
    tcase_add_test(tc, test_fp4_sizes);
    tcase_add_test(tc, test_fp4_errors);
    tcase_add_test(tc, test_pipeline);
    tcase_add_test(tc, test_pipeline_bubble_vs_pp);
    tcase_add_test(tc, test_kv_handoff_per_rank);
    tcase_add_test(tc, test_ep_redundant_experts);
    tcase_add_test(tc, test_power_limit);
    tcase_add_test(tc, test_multi_step);
    tcase_add_test(tc, test_deepseek_r1);
    tcase_add_test(tc, test_mla_prefill_efficiency);
    tcase_add_test(tc, test_prefill_efficiency);
    tcase_add_test(tc, test_trtllm_pytorch_context);
    tcase_add_test(tc, test_experts_touched);
    tcase_add_test(tc, test_mi325x_expert_occupancy);
    tcase_add_test(tc, test_window_kv);
    tcase_add_test(tc, test_kv_groups);
    tcase_add_test(tc, test_linear_state);
    tcase_add_test(tc, test_spec_decode);
    tcase_add_test(tc, test_spec_draft_model);
    tcase_add_test(tc, test_spec_draft_model_errors);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
