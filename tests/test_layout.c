/*
 * Unit tests of the expert-parallel and attention data-parallel layouts of the cost model
 * (docs/cost-model.md, "Expert parallelism and attention data parallelism") against
 * hand-computed numbers: the all-to-all bytes per token, memory per GPU, KV per rank, and the
 * dispatch/combine term of a decode step, the MoE token permutation's bytes; and TensorRT-LLM's
 * attention-DP balancing, step by step.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "servesim/cost/perf.h"
#include "servesim/engine/replica.h"
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

/* DeepSeek-R1 from its config.json (FP8 checkpoint, or weights in dtype when >= 0) on H200
 * with the given layout. */
static int mk_dtype(sv_perf_t *p, int tp, int ep, int dp, int ideal, int dtype, sv_error_t *err);

static int mk(sv_perf_t *p, int tp, int ep, int dp, int ideal, sv_error_t *err)
{
    return mk_dtype(p, tp, ep, dp, ideal, -1, err);
}

static int mk_dtype(sv_perf_t *p, int tp, int ep, int dp, int ideal, int dtype, sv_error_t *err)
{
    const sv_gpu_t *g;
    sv_model_t m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h200", &g, err), 0);
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("deepseek-r1/config.json"), &m, err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    s.ep = ep;
    s.dp_attention = dp;
    s.activation_reserve = 0.0;
    if (dtype >= 0) {
        s.weight_dtype = (sv_dtype_t)dtype;
        s.weight_dtype_given = 1;
    }
    if (ideal) sv_perf_settings_ideal(&s);
    return sv_perf_init(p, g, &m, &s, err);
}

/*
 * Bytes per token per MoE layer, DeepSeek-R1 (256 experts, top-8, hidden 7168): a dispatched
 * copy is 7168 FP8 values + 56 FP32 scales = 7392 B, a combined one 7168 x 2 = 14336 B.
 *   EP 8 (32 experts a rank): P(no expert on a given rank) = prod_{i<8} (224-i)/(256-i)
 *     = 0.33816850; high-throughput copies 7 x (1 - 0.33816850) = 4.6328205:
 *     34,245.809 + 66,416.115 B; low-latency 8 x 7/8 = 7 copies: 51,744 + 100,352 B.
 *   EP 32 (8 a rank): prod_{i<8} (248-i)/(256-i) = 0.77291250; 31 x 0.22708750 = 7.0397121:
 *     52,037.554 + 100,921.317 B; low-latency 8 x 31/32 = 7.75: 57,288 + 111,104 B.
 */
START_TEST(test_a2a_bytes)
{
    sv_perf_t p;
    sv_error_t err;
    ck_assert_int_eq(mk(&p, 8, 1, 1, 0, &err), 0);
    double d, c;
    sv_perf_a2a_bytes(&p.model, 8, SV_EPK_HIGH_THROUGHPUT, &d, &c);
    tu_assert_rel(d, 34245.80913847, 1e-9);
    tu_assert_rel(c, 66416.11469280, 1e-9);
    sv_perf_a2a_bytes(&p.model, 8, SV_EPK_LOW_LATENCY, &d, &c);
    ck_assert(d == 51744.0 && c == 100352.0);
    sv_perf_a2a_bytes(&p.model, 32, SV_EPK_HIGH_THROUGHPUT, &d, &c);
    tu_assert_rel(d, 52037.55420816, 1e-9);
    tu_assert_rel(c, 100921.31725220, 1e-9);
    sv_perf_a2a_bytes(&p.model, 32, SV_EPK_LOW_LATENCY, &d, &c);
    ck_assert(d == 57288.0 && c == 111104.0);
    sv_perf_a2a_bytes(&p.model, 1, SV_EPK_LOW_LATENCY, &d, &c);
    ck_assert(d == 0.0 && c == 0.0);
}
END_TEST

/*
 * EP without attention data parallelism (TensorRT-LLM's moe_ep_size with attention TP): the
 * experts' bytes per GPU are 1/8 of them as with TP 8, every rank sees every token, and the
 * MoE output is all-reduced as with TP: the same weights, no all-to-all. The step differs
 * by the token permutation alone: a rank dispatches and combines 8 / 8 = 1 copy of a token's
 * row instead of 8, 7 x (1/2 + 1) = 10.5 fewer activation elements of 7168 per token per
 * MoE layer: 64 x 58 x 7168 x 10.5 x 2 B = 558,759,936 B at the HBM's 4.8 TB/s x the
 * small-op efficiency.
 */
START_TEST(test_ep_without_dp)
{
    sv_perf_t tp8, ep8;
    sv_error_t err;
    ck_assert_int_eq(mk(&tp8, 8, 1, 1, 0, &err), 0);
    ck_assert_int_eq(mk(&ep8, 8, 8, 1, 0, &err), 0);
    tu_assert_rel(ep8.weight_bytes_gpu, 85140064624.0, 1e-12); /* test_perf's TP 8 figure */
    sv_step_cost_t a, b;
    sv_perf_decode_time(&tp8, 64, 1000.0, &a);
    sv_perf_decode_time(&ep8, 64, 1000.0, &b);
    tu_assert_rel(a.total - b.total, 558759936.0 / (4.8e12 * tp8.set.curve[SV_CV_SMALL_EFF]), 1e-9);
    ck_assert(b.a2a == 0.0 && b.rank_seqs == 64);
}
END_TEST

/*
 * The MoE token permutation in the small ops, per token over DeepSeek-R1's 58 MoE layers of
 * hidden 7168 (docs/cost-model.md, "Architectures"): the dispatch reads a row and writes k'
 * copies in the experts' input format, the combine reads the k' BF16 outputs and writes one,
 * (2 + k' (b_in/2 + 1)) values of 2 bytes with k' = k / ep.
 *   TP 8, FP8 experts: (2 + 8 x 1.5) = 14 values; TP 8, BF16: 2 + 8 x 2 = 18, 4 more:
 *     4 x 7168 x 2 x 58 = 3,325,952 B more per token.
 *   EP 8 without DP (k' = 1): 2 + 1.5 = 3.5 values, 10.5 fewer than TP 8:
 *     10.5 x 7168 x 2 x 58 = 8,730,624 B less per token.
 * The rest of the small ops is the same in all three (the same widths per GPU).
 */
START_TEST(test_moe_permutation)
{
    sv_perf_t tp8, bf, ep8;
    sv_error_t err;
    ck_assert_int_eq(mk(&tp8, 8, 1, 1, 0, &err), 0);
    ck_assert_msg(mk_dtype(&bf, 8, 1, 1, 0, SV_DT_BF16, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(mk(&ep8, 8, 8, 1, 0, &err), 0);
    tu_assert_rel(bf.small_bytes_tok - tp8.small_bytes_tok, 3325952.0, 1e-9);
    tu_assert_rel(tp8.small_bytes_tok - ep8.small_bytes_tok, 8730624.0, 1e-9);
}
END_TEST

/*
 * DP attention 8, EP 8 on 8 GPUs: attention, the 3 dense MLPs, the shared experts and the
 * embedding and LM head at TP 1 on each rank, the routed experts 1/8 per GPU. Against TP 8
 * each GPU holds 7/8 more of the split non-expert weights (FP8, one FP32 scale per 16,384):
 *   61 x 171,966,464 (MLA q_b, kv_b, o) + 3 x 3 x 7168 x 18432 + 58 x 3 x 7168 x 2048
 *     = 14,233,370,624 parameters; x 7/8 x (1 + 4/16384) = 12,457,239,872 B
 *   embedding + LM head: 2 x (129,280 - 16,160) x 7168 x 2 B = 3,243,376,640 B
 *   85,140,064,624 + 15,700,616,512 = 100,840,681,136 B per GPU.
 * KV: the latent, 70,272 B per token per GPU; each rank caches only its own sequences, so the
 * replica holds 8 x one rank's tokens.
 */
START_TEST(test_dp_attention_memory)
{
    sv_perf_t p;
    sv_error_t err;
    ck_assert_msg(mk(&p, 8, 8, 8, 0, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(p.attn_tp, 1);
    ck_assert_int_eq(p.heads_local, 128);
    tu_assert_rel(p.weight_bytes_gpu, 100840681136.0, 1e-9);
    ck_assert(p.kv_bytes_token == 70272.0);
    sv_memplan_t mp;
    ck_assert_int_eq(sv_perf_memplan(&p, &mp, &err), 0);
    ck_assert_int_eq(mp.dp_ranks, 8);
    long rank = (long)floor((mp.budget_bytes - p.weight_bytes_gpu) / (70272.0 * 16)) * 16;
    ck_assert_int_eq(mp.rank_kv_tokens, rank);
    ck_assert_int_eq(mp.kv_tokens, 8 * rank);
}
END_TEST

/*
 * A decode step of 64 sequences over 8 attention ranks: the slowest rank holds 8 of them.
 * Ideal roofline: its absorbed MLA attention is 128 heads x (2 (512 + 64) + 2 x 512) =
 * 278,528 FLOPs per key per layer over 8 x (1000 + 1) keys in 61 layers. The all-to-all:
 * low-latency kernels (a decode-only step), 58 MoE layers x (2 x 10 us + 8 tokens x
 * (51,744 + 100,352) B / (900/2 GB/s x 0.5)) = 58 x 25.4078 us = 1.47365 ms.
 */
START_TEST(test_dp_attention_step)
{
    sv_perf_t id, p;
    sv_error_t err;
    ck_assert_int_eq(mk(&id, 8, 8, 8, 1, &err), 0);
    sv_step_cost_t c;
    sv_perf_decode_time(&id, 64, 1000.0, &c);
    ck_assert_int_eq(c.rank_seqs, 8);
    ck_assert(c.op[SV_OP_ATTN_DECODE].flops == 278528.0 * 61.0 * 8.0 * 1001.0);
    ck_assert_int_eq(mk(&p, 8, 8, 8, 0, &err), 0);
    sv_perf_decode_time(&p, 64, 1000.0, &c);
    ck_assert_int_eq(c.a2a_kernel, SV_EPK_LOW_LATENCY);
    tu_assert_rel(c.a2a, 58.0 * (20e-6 + 8.0 * 152096.0 / 225e9), 1e-9);
    /* A step with a prefill chunk takes the high-throughput kernels. */
    sv_perf_prefill_time(&p, 1024, &c);
    ck_assert_int_eq(c.a2a_kernel, SV_EPK_HIGH_THROUGHPUT);
}
END_TEST

/* The layouts engines refuse, with the message docs/errors.md shows. */
START_TEST(test_layout_errors)
{
    sv_perf_t p;
    sv_error_t err;
    ck_assert_int_eq(mk(&p, 24, 3, 24, 0, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "ep=3 does not divide the 256 routed experts of model 'deepseek-r1' "
                              "(EP degrees that work with tp=24: 1, 2, 4, 8)");
    ck_assert_int_eq(mk(&p, 8, 16, 1, 0, &err), SV_EINVAL);
    ck_assert(strstr(err.msg, "ep=16 does not divide tp=8") != NULL);
    ck_assert_int_eq(mk(&p, 24, 1, 2, 0, &err), SV_EINVAL);
    ck_assert(strstr(err.msg, "attention TP 12 (tp=24 / dp_attention=2)") != NULL);
}
END_TEST

/* Llama-3.1-70B (BF16) at TP n on a catalog GPU. */
static sv_perf_t mk70(const char *gpu, int tp)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, gpu, &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-70b", &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    sv_perf_t p;
    ck_assert_msg(sv_perf_init(&p, g, m, &s, &err) == 0, "%s", err.msg);
    return p;
}

/*
 * h100-pcie is NVLink pairs over PCIe Gen5 (128 GB/s both ways): TP 2 all-reduces over the
 * 600 GB/s bridge as before; TP 4 rings through PCIe with the Vidur pairwise fit:
 * 55.2 us + 2 x 3/4 of the payload at 128/2 GB/s x 0.736. The racks and the new GPUs: the
 * topology and domain from the catalog, GB300's dense NVFP4 1,080 PF / 72.
 */
START_TEST(test_topology)
{
    const sv_gpu_t *g;
    sv_error_t err;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-pcie", &g, &err), 0);
    ck_assert_int_eq(g->topology, SV_TOPO_NVLINK_PAIRS);
    ck_assert(g->pcie_bw == 128e9);
    sv_perf_t p2 = mk70("h100-pcie", 2), p4 = mk70("h100-pcie", 4), s4 = mk70("h100-sxm", 4);
    ck_assert(p2.set.link_bw == 600e9);
    ck_assert(p4.set.link_bw == 128e9);
    tu_assert_rel(p4.ar_alpha, 55.2e-6, 1e-12);
    tu_assert_rel(p4.ar_inv_bw, 1.5 / (64e9 * 0.736), 1e-12);
    ck_assert_int_eq(s4.gpu.topology, SV_TOPO_NVSWITCH);
    ck_assert(s4.set.link_bw == 900e9);
    ck_assert_int_eq(sv_catalog_gpu(cat, "gb300", &g, &err), 0);
    ck_assert_int_eq(g->topology, SV_TOPO_NVL72);
    ck_assert_int_eq(g->nvlink_domain, 72);
    ck_assert(g->fp4_flops == 15000e12);
    ck_assert_int_eq(sv_catalog_gpu(cat, "gb200", &g, &err), 0);
    ck_assert_int_eq(g->topology, SV_TOPO_NVL72);
    ck_assert_int_eq(sv_catalog_gpu(cat, "l40s", &g, &err), 0);
    ck_assert_int_eq(g->topology, SV_TOPO_PCIE);
}
END_TEST

/*
 * EP 32 with DP attention 32: on GB200 NVL72 the 32 ranks stay in the 72-GPU NVLink domain
 * (one direction 900 GB/s x 0.77 for the high-throughput kernels); on H200 nodes of 8, 24 of
 * the 31 peers are off the node: max(7/31 / (450 GB/s x 0.77), 24/31 / (50 GB/s x 0.9)).
 */
START_TEST(test_ep_domains)
{
    sv_error_t err;
    const sv_gpu_t *g;
    sv_model_t m;
    ck_assert_int_eq(sv_model_from_hf_config(tu_data("deepseek-r1/config.json"), &m, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = 32;
    s.ep = 32;
    s.dp_attention = 32;
    sv_perf_t p;
    ck_assert_int_eq(sv_catalog_gpu(cat, "gb200", &g, &err), 0);
    ck_assert_msg(sv_perf_init(&p, g, &m, &s, &err) == 0, "%s", err.msg);
    tu_assert_rel(p.a2a_inv_bw[SV_EPK_HIGH_THROUGHPUT], 1.0 / (900e9 * 0.77), 1e-12);
    ck_assert_int_eq(sv_catalog_gpu(cat, "h200", &g, &err), 0);
    ck_assert_msg(sv_perf_init(&p, g, &m, &s, &err) == 0, "%s", err.msg);
    tu_assert_rel(p.a2a_inv_bw[SV_EPK_HIGH_THROUGHPUT], 24.0 / 31.0 / (50e9 * 0.9), 1e-12);
    tu_assert_rel(p.a2a_alpha[SV_EPK_HIGH_THROUGHPUT], 40e-6, 1e-12);
    /* The low-latency kernels fitted to DeepEP V1's table: 27 us, 0.87 of 50 GB/s off the
     * node; max(7/31 / (450 GB/s x 0.5), 24/31 / (50 GB/s x 0.87)) is the scale-out term. A
     * rank's 128 tokens: 7.75 copies a token of 7,392 FP8 bytes out, of 14,336 BF16 back,
     * 128 x (57,288 + 111,104) x 24/31 / 43.5e9 = 383.6 us + 2 x 27 us = 437.6 us, against
     * DeepEP's 155 + 273 = 428 us at EP 32 (+2.2%). */
    tu_assert_rel(p.a2a_inv_bw[SV_EPK_LOW_LATENCY], 24.0 / 31.0 / (50e9 * 0.87), 1e-12);
    tu_assert_rel(p.a2a_alpha[SV_EPK_LOW_LATENCY], 27e-6, 1e-12);
    double t = 2.0 * p.a2a_alpha[SV_EPK_LOW_LATENCY] +
               128.0 * (p.a2a_bytes[SV_EPK_LOW_LATENCY][0] + p.a2a_bytes[SV_EPK_LOW_LATENCY][1]) *
                   p.a2a_inv_bw[SV_EPK_LOW_LATENCY];
    tu_assert_rel(p.a2a_bytes[SV_EPK_LOW_LATENCY][0], 57288.0, 1e-12);
    tu_assert_rel(p.a2a_bytes[SV_EPK_LOW_LATENCY][1], 111104.0, 1e-12);
    tu_assert_rel(t, 437.6e-6, 1e-3);
    tu_assert_rel(t, 428e-6, 0.03);
}
END_TEST

/* One step of replica r at *now: its prompts (sv_step_info_t.prefill_seqs); *now moves to
 * its end. */
static long adp_step(sv_replica_t *r, double *now)
{
    double d = sv_replica_start_step(r, *now);
    ck_assert(d > 0);
    sv_step_info_t si;
    sv_replica_step_info(r, &si);
    *now += d;
    ck_assert_int_eq(sv_replica_end_step(r, *now), 0);
    return si.prefill_seqs;
}

/*
 * TensorRT-LLM's attention-DP balancing (PyExecutor._balance_adp_requests,
 * tensorrt_llm/_torch/pyexecutor/py_executor.py), by hand, at dp_attention 2, max_num_seqs 8
 * (4 a rank), timeout_iters 3, batching_wait_iters 1:
 *   step 1: A and B wait, no rank decodes: released (both prefill).
 *   C arrives. Steps 2 and 3: one context for two ranks: held, the waiting count 1, 2.
 *   step 4: the count reaches 3 = timeout_iters: released (C prefills), the count back to 0.
 *   D and E arrive. Step 5: a context and a free slot on every rank, every rank decoding
 *   (3 decodes): they wait batching_wait_iters = 1 step. Step 6: released (both prefill).
 * Without the balancing C prefills in step 2.
 */
START_TEST(test_adp_balance)
{
    for (int balance = 1; balance >= 0; balance--) {
        sv_scenario_t *sc;
        sv_error_t err;
        const char *set = balance ? "engine.attention_dp_balance=true"
                                  : "engine.attention_dp_balance=false";
        ck_assert_int_eq(tu_load_yaml(cat,
                                      "model: mixtral-8x7b\n"
                                      "hardware: {gpu: h100-sxm, tp: 2, ep: 2, dp_attention: 2}\n"
                                      "engine: {name: trtllm, max_num_seqs: 8, api_server_ms: 0,\n"
                                      "  attention_dp_timeout_iters: 3,\n"
                                      "  attention_dp_batching_wait_iters: 1}\n"
                                      "workload: {num_requests: 5, input: 100, output: 20}\n",
                                      &set, 1, &sc, &err),
                         0);
        sv_perf_t perf;
        ck_assert_int_eq(
            sv_perf_init(&perf, &sc->pools[0].gpu, &sc->model, &sc->pools[0].perf, &err), 0);
        ck_assert_int_eq(perf.dp, 2);
        sv_metrics_t *m = sv_metrics_new(&sc->metrics, 1);
        sv_reqpool_t pool = {0};
        for (int i = 0; i < 5; i++) {
            ck_assert_int_eq(sv_reqpool_add(&pool), i);
            pool.r[i].input = 100;
            pool.r[i].output = 20;
        }
        sv_engine_cfg_t e = sc->pools[0].engine;
        ck_assert_int_eq(e.adp_balance, balance);
        e.max_model_len = 4096;
        sv_replica_t *r;
        ck_assert_int_eq(sv_replica_new(0, &perf, 1000, &e, &pool, m, &r, &err), 0);
        double now = 0.0;
        ck_assert_int_eq(sv_replica_submit(r, 0, now), SV_FAIL_NONE);
        ck_assert_int_eq(sv_replica_submit(r, 1, now), SV_FAIL_NONE);
        ck_assert_int_eq(adp_step(r, &now), 2);
        ck_assert_int_eq(sv_replica_submit(r, 2, now), SV_FAIL_NONE);
        if (balance) {
            ck_assert_int_eq(adp_step(r, &now), 0);
            ck_assert_int_eq(adp_step(r, &now), 0);
        }
        ck_assert_int_eq(adp_step(r, &now), 1);
        ck_assert_int_eq(sv_replica_submit(r, 3, now), SV_FAIL_NONE);
        ck_assert_int_eq(sv_replica_submit(r, 4, now), SV_FAIL_NONE);
        if (balance) ck_assert_int_eq(adp_step(r, &now), 0);
        ck_assert_int_eq(adp_step(r, &now), 2);
        sv_replica_free(r);
        sv_metrics_free(m);
        sv_reqpool_free(&pool);
        sv_scenario_free(sc);
    }
}
END_TEST

/* The balancing is TensorRT-LLM's, with attention DP only: other schedulers and layouts are
 * refused at the key. */
START_TEST(test_adp_balance_errors)
{
    const char *yaml = "model: mixtral-8x7b\n"
                       "hardware: {gpu: h100-sxm, tp: 2, ep: 2, dp_attention: 2}\n"
                       "engine: {name: trtllm, attention_dp_balance: true}\n"
                       "workload: {num_requests: 5, input: 100, output: 20}\n";
    const char *sets[][1] = {{"engine.scheduler=vllm"}, {"hardware.dp_attention=1"}};
    const char *want[] = {"(this pool: scheduler vllm, dp_attention 2)",
                          "(this pool: scheduler trtllm, dp_attention 1)"};
    for (int i = 0; i < 2; i++) {
        sv_scenario_t *sc = NULL;
        sv_error_t err;
        ck_assert_int_eq(tu_load_yaml(cat, yaml, sets[i], 1, &sc, &err), SV_EINVAL);
        ck_assert_msg(strstr(err.msg, "engine.attention_dp_balance: TensorRT-LLM's attention-DP "
                                      "balancing needs the trtllm scheduler and "
                                      "hardware.dp_attention > 1") &&
                          strstr(err.msg, want[i]),
                      "%s", err.msg);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("ep_dp");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_a2a_bytes);
    tcase_add_test(tc, test_ep_without_dp);
    tcase_add_test(tc, test_moe_permutation);
    tcase_add_test(tc, test_dp_attention_memory);
    tcase_add_test(tc, test_dp_attention_step);
    tcase_add_test(tc, test_layout_errors);
    tcase_add_test(tc, test_topology);
    tcase_add_test(tc, test_ep_domains);
    tcase_add_test(tc, test_adp_balance);
    tcase_add_test(tc, test_adp_balance_errors);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
