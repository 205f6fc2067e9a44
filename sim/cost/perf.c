/*
 * The cost model v2 (see include/servesim/cost/perf.h and docs/cost-model.md): parameter and
 * KV sizes from the architecture; FLOPs and HBM bytes per operator class for a batch,
 * each class timed at the efficiency the hardware reaches at that size plus its kernel
 * floors; alpha-beta tensor-parallel all-reduces; the engine profile's costs per step,
 * per sequence and per layer launch; and the memory plan that decides how many KV
 * blocks a replica has. sv_perf_init folds every setting into a few coefficients so
 * that sv_perf_step, called once per simulated step, stays a handful of multiply-adds.
 */
#include "servesim/cost/perf.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servesim/base/numeric.h"
#include "servesim/base/yaml.h"

#define ACT_BYTES 2.0   /* activations are BF16/FP16 */
#define EMBED_BYTES 2.0 /* embeddings, LM head and norms stay 16-bit when weights are quantised */
#define LOGIT_BYTES 4.0 /* logits are written in FP32 */
#define RUNTIME_RESERVE (512.0 * 1048576.0) /* CUDA context, NCCL and library workspaces */

/* Send/recv bandwidth efficiency fitted with p2p_latency_us by `servesim calibrate kernels
 * --send-recv` on Vidur's A100 send_recv.csv (docs/cost-model.md). */
#define P2P_EFFICIENCY 0.95

/* ---- dtypes and settings ------------------------------------------------------------ */

static const char *const dtype_names[SV_DT_COUNT] = {"bf16", "fp16",  "fp8",
                                                     "int4", "nvfp4", "mxfp4"};

int sv_dtype_parse(const char *s, sv_dtype_t *out)
{
    for (int i = 0; i < SV_DT_COUNT; i++) {
        if (strcasecmp(s, dtype_names[i]) == 0) {
            *out = (sv_dtype_t)i;
            return 0;
        }
    }
    if (strcasecmp(s, "bfloat16") == 0)
        *out = SV_DT_BF16;
    else if (strcasecmp(s, "float16") == 0 || strcasecmp(s, "half") == 0)
        *out = SV_DT_FP16;
    else if (strcasecmp(s, "fp8_e4m3") == 0 || strcasecmp(s, "fp8_e5m2") == 0)
        *out = SV_DT_FP8;
    else
        return SV_EINVAL;
    return 0;
}

const char *sv_dtype_name(sv_dtype_t t)
{
    return (t >= SV_DT_BF16 && t < SV_DT_COUNT) ? dtype_names[t] : "?";
}

double sv_dtype_weight_bytes(sv_dtype_t t)
{
    switch (t) {
    case SV_DT_FP8:
        return 1.0;
    case SV_DT_INT4:
        return 0.5 + 2.0 / 128.0; /* 4 bits + an FP16 scale per 128 weights */
    case SV_DT_NVFP4:
        return 0.5 + 1.0 / 16.0; /* E2M1 + an FP8 E4M3 scale per 16 */
    case SV_DT_MXFP4:
        return 0.5 + 1.0 / 32.0; /* E2M1 + an E8M0 scale per 32 */
    default:
        return 2.0;
    }
}

double sv_dtype_kv_bytes(sv_dtype_t t)
{
    switch (t) {
    case SV_DT_FP8:
        return 1.0;
    case SV_DT_NVFP4:
    case SV_DT_MXFP4:
        return sv_dtype_weight_bytes(t);
    default:
        return 2.0;
    }
}

double sv_model_kv_bytes_token(const sv_model_t *m, sv_dtype_t t)
{
    /* MLA caches its latent and rotary key; windowed layers (when not every layer has the
     * window) and linear-attention layers hold per-sequence state instead. */
    if (m->mla)
        return (double)(m->layers - m->linear_layers) * (m->kv_lora_rank + m->qk_rope_head_dim) *
               sv_dtype_kv_bytes(t);
    int layers = m->layers - m->linear_layers - (m->window_layers > 0 ? m->window_layers : 0);
    return 2.0 * layers * m->kv_heads * m->head_dim * sv_dtype_kv_bytes(t);
}

/*
 * Power limits. A cap lowers the clocks, and so the tensor-core FLOP/s, while HBM keeps its
 * bandwidth: FLOP/s x (cap / TDP)^a. a = ln 1.30 / ln(1 / 0.70) = 0.736 is read from
 * Splitwise's profile (Patel et al., ISCA 2024; github.com/Mutinifni/splitwise-sim): its
 * power-capped DGX-H100 (configs/hardware_repo/skus/dgx-h100-pcap.yaml, 7140 W of
 * dgx-h100's 10200 W: 70%) takes 1.30x the prompt time of the uncapped one at every prompt
 * and batch, and the same token time (data/perf_model.csv). The lowest cap is a quarter of
 * the TDP (nvidia-smi's lowest limit is 100 of 400 W on A100 SXM, 200 of 700 W on H100 SXM).
 */
#define POWER_EXPONENT 0.736
#define POWER_MIN_SHARE 0.25

/*
 * vLLM V0's multi-step scheduling (`--num-scheduler-steps n`, vLLM 0.6-0.7; RFC
 * vllm-project/vllm#6854, PR #7000): the scheduler, input preparation and output processing
 * run once for n decode steps, so a decode-only step pays 1/n of the profile's per-step and
 * per-sequence CPU cost. A step with prompt tokens is scheduled alone (PR #8378: prefills
 * run single-step), and pays all of it. The replica runs a round as n such steps and hands
 * out their tokens together (sim/engine/replica.c, step_cost).
 */
static void multi_step(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out)
{
    if (p->set.sched_steps <= 1 || b->n_chunks > 0) return;
    out->eng_step /= p->set.sched_steps;
    out->eng_seq /= p->set.sched_steps;
}

double sv_perf_power_scale(const sv_gpu_t *gpu, double power_limit_w)
{
    if (!(power_limit_w > 0) || !(gpu->tdp_w > 0) || power_limit_w >= gpu->tdp_w) return 1.0;
    return pow(power_limit_w / gpu->tdp_w, POWER_EXPONENT);
}

void sv_perf_power_range(const sv_gpu_t *gpu, double *lo, double *hi)
{
    *lo = POWER_MIN_SHARE * gpu->tdp_w;
    *hi = gpu->tdp_w;
}

sv_perf_settings_t sv_perf_settings_default(void)
{
    sv_perf_settings_t s = {
        .tp = 1,
        .pp = 1,
        .pp_link_bw = -1,
        .weight_dtype = SV_DT_BF16,
        .kv_dtype = SV_DT_BF16,
        .engine_calibration = SV_CAL_DATASHEET,
        .compute_eff = -1,
        .memory_eff = -1,
        .iter_overhead_s = -1,
        .layer_overhead_s = -1,
        .link_bw = -1,
        .link_latency = -1,
        .gpu_memory_utilization = 0.9,
        .activation_reserve = -1,
        .block_size = 16,
        .max_batched_tokens = 8192,
        .seq_overhead_s = -1,
        .cuda_graphs = -1,
        .custom_allreduce = -1,
        .nccl_nvls = -1,
        .graph_max_tokens = -1,
        .spec_draft_step_s = -1,
    };
    for (int k = 0; k < SV_CV_COUNT; k++)
        s.curve[k] = -1;
    return s;
}

void sv_perf_settings_ideal(sv_perf_settings_t *s)
{
    s->compute_eff = 1.0;
    s->memory_eff = 1.0;
    s->iter_overhead_s = 0.0;
    s->layer_overhead_s = 0.0;
    s->link_latency = 0.0;
    s->seq_overhead_s = 0.0;
    s->ideal = 1;
    for (int k = 0; k < SV_CV_COUNT; k++)
        s->curve[k] = 0.0; /* sizes at half efficiency, floors and latencies */
    s->curve[SV_CV_SMALL_EFF] = s->curve[SV_CV_ATTN_EFF] = s->curve[SV_CV_ATTN_MEM_EFF] =
        s->curve[SV_CV_LINK_EFF] = s->curve[SV_CV_NORM_EFF] = s->curve[SV_CV_GROUPED_EFF] =
            s->curve[SV_CV_MLA_EFF] = s->curve[SV_CV_MOE_IMBALANCE] =
                s->curve[SV_CV_MLA_PREFILL_EFF] = s->curve[SV_CV_PREFILL_EFF] = 1.0;
}

const char *const sv_perf_setting_keys[] = {"tp",
                                            "pp",
                                            "pp_layer_partition",
                                            "ep",
                                            "dp_attention",
                                            "ep_kernel",
                                            "ep_redundant_experts",
                                            "pp_link_bandwidth_gb_s",
                                            "weight_dtype",
                                            "kv_cache_dtype",
                                            "compute_efficiency",
                                            "memory_efficiency",
                                            "iteration_overhead_ms",
                                            "layer_overhead_us",
                                            "link_bandwidth_gb_s",
                                            "link_latency_us",
                                            "gpu_memory_utilization",
                                            "activation_reserve_gb",
                                            "block_size",
                                            "max_num_batched_tokens",
                                            "seq_overhead_us",
                                            "cuda_graphs",
                                            "custom_allreduce",
                                            "nccl_nvls",
                                            "graph_max_tokens",
                                            "power_limit_w",
                                            "num_scheduler_steps",
                                            "gemm_m_half_tokens",
                                            "gemm_floor_us",
                                            "small_op_efficiency",
                                            "small_op_floor_us",
                                            "attention_efficiency",
                                            "attention_n_half_tokens",
                                            "attention_memory_efficiency",
                                            "attention_seq_us",
                                            "link_efficiency",
                                            "link_latency_per_rank_us",
                                            "p2p_latency_us",
                                            "norm_efficiency",
                                            "grouped_gemm_efficiency",
                                            "mla_attention_efficiency",
                                            "moe_imbalance",
                                            "grouped_gemm_n_half_experts",
                                            "mla_prefill_efficiency",
                                            "prefill_efficiency",
                                            "prefill_request_overhead_ms",
                                            "speculative",
                                            "num_speculative_tokens",
                                            "spec_acceptance",
                                            "spec_draft_step_us",
                                            "spec_sampling",
                                            "speculative_model",
                                            NULL};

static int num_in(const char *key, const char *value, double lo, double hi, int lo_open,
                  double scale, double *out, sv_error_t *err)
{
    double v;
    if (sv_parse_double(value, &v) || v > hi || (lo_open ? v <= lo : v < lo))
        return sv_errorf(err, SV_EINVAL, "%s: expected a number %s %g and <= %g, got '%s'", key,
                         lo_open ? ">" : ">=", lo, hi, value);
    *out = v * scale;
    return 0;
}

static int bool_in(const char *key, const char *value, int *out, sv_error_t *err)
{
    if (sv_parse_bool(value, out))
        return sv_errorf(err, SV_EINVAL, "%s: expected true or false, got '%s'", key, value);
    return 0;
}

static int int_in(const char *key, const char *value, long lo, long hi, long *out, sv_error_t *err)
{
    long v;
    if (sv_parse_long(value, &v) || v < lo || v > hi)
        return sv_errorf(err, SV_EINVAL, "%s: expected a whole number in [%ld, %ld], got '%s'", key,
                         lo, hi, value);
    *out = v;
    return 0;
}

/* pp_layer_partition: the layers of each pipeline stage, first stage first, as vLLM's
 * VLLM_PP_LAYER_PARTITION and SGLang's SGLANG_PP_LAYER_PARTITION take them ("31,30"); their
 * count and sum are checked against pp and the model's layers in sv_perf_init. */
static int pp_split_parse(sv_perf_settings_t *s, const char *value, sv_error_t *err)
{
    const char *c = value;
    int n = 0;
    for (;;) {
        char *end;
        long v = strtol(c, &end, 10);
        if (end == c || v < 1 || v > 65535 || n == SV_PP_MAX || (*end && *end != ','))
            return sv_errorf(err, SV_EINVAL,
                             "pp_layer_partition: expected the layers of each stage as whole "
                             "numbers >= 1 separated by commas (\"31,30\"), got '%s'",
                             value);
        s->pp_split[n++] = (unsigned short)v;
        if (!*end) break;
        c = end + 1;
    }
    s->pp_split_n = n;
    return 0;
}

/* ---- speculative decoding: settings ------------------------------------------------- */

/*
 * Default acceptance per draft position, conditional on the position before accepted.
 * MTP (DeepSeek-V3/R1's one next-n module, run k times on its own drafts as SGLang's and
 * TensorRT-LLM's MTP-EAGLE do): position 1 at 0.85, the low end of the 85-90% the
 * DeepSeek-V3 technical report (arXiv 2412.19437, section 5.4.3) measured for the second
 * token on natural text; later positions at 0.62, an assumption (no published figure for
 * the module reused on its own drafts) that matches InferenceX's MI325X SGLang MTP rows
 * (docs/validation.md; the H200 rows accept less: their streamed chunks give about 1.9
 * tokens per step on random prompts). EAGLE: 0.8 at every position, the order of the chain
 * acceptance the EAGLE paper (Li et al., arXiv 2401.15077) reports on MT-bench; not fitted.
 */
#define SPEC_MTP_FIRST 0.85
#define SPEC_MTP_LATER 0.62
#define SPEC_EAGLE_RATE 0.8
#define SPEC_DEFAULT_K 3
/* Engine cost of one draft step (its own launch, sampling and tree bookkeeping) when not
 * set: 0, which the InferenceX MTP rows do not contradict (docs/validation.md). */
#define SPEC_DRAFT_STEP_S 0.0

static const char *const spec_names[SV_SPEC_COUNT] = {"none", "mtp", "eagle", "draft"};

static int spec_set(sv_perf_settings_t *s, const char *key, const char *value, sv_error_t *err)
{
    long l = 0;
    int rc;
    if (strcmp(key, "speculative") == 0) {
        for (int i = 0; i < SV_SPEC_COUNT; i++)
            if (strcmp(value, spec_names[i]) == 0) {
                s->spec_method = i;
                return 0;
            }
        return sv_errorf(err, SV_EINVAL, "%s: expected one of none, mtp, eagle, draft, got '%s'",
                         key, value);
    }
    if (strcmp(key, "speculative_model") == 0) {
        size_t n = strlen(value);
        if (n == 0 || n >= sizeof s->spec_model)
            return sv_errorf(err, SV_EINVAL,
                             "%s: expected a model name or a config.json path of 1 to %zu "
                             "characters, got '%s'",
                             key, sizeof s->spec_model - 1, value);
        memcpy(s->spec_model, value, n + 1);
        return 0;
    }
    if (strcmp(key, "num_speculative_tokens") == 0) {
        if ((rc = int_in(key, value, 1, SV_SPEC_MAX_K, &l, err))) return rc;
        s->spec_k = (int)l;
        return 0;
    }
    if (strcmp(key, "spec_draft_step_us") == 0)
        return num_in(key, value, 0, 1e6, 0, 1e-6, &s->spec_draft_step_s, err);
    if (strcmp(key, "spec_sampling") == 0) {
        if (strcmp(value, "sampled") != 0 && strcmp(value, "expected") != 0)
            return sv_errorf(err, SV_EINVAL, "%s: expected sampled or expected, got '%s'", key,
                             value);
        s->spec_expected = strcmp(value, "expected") == 0;
        return 0;
    }
    if (strcmp(key, "spec_acceptance") != 0) return SV_ENOKEY;
    /* One rate for every position, or a comma-separated list, one per position. */
    int n = 0;
    const char *c = value;
    char buf[64];
    while (*c) {
        size_t len = strcspn(c, ",");
        double v;
        if (n == SV_SPEC_MAX_K || len == 0 || len >= sizeof buf)
            return sv_errorf(err, SV_EINVAL,
                             "%s: expected up to %d rates in [0, 1] separated by commas, got '%s'",
                             key, SV_SPEC_MAX_K, value);
        memcpy(buf, c, len);
        buf[len] = 0;
        if (sv_parse_double(buf, &v) || !(v >= 0.0 && v <= 1.0))
            return sv_errorf(err, SV_EINVAL, "%s: expected acceptance rates in [0, 1], got '%s'",
                             key, value);
        s->spec_accept[n++] = v;
        c += len;
        if (*c == ',') c++;
    }
    if (n == 0)
        return sv_errorf(err, SV_EINVAL, "%s: expected acceptance rates in [0, 1], got '%s'", key,
                         value);
    s->spec_naccept = n;
    return 0;
}

int sv_spec_check(const sv_perf_settings_t *s, sv_error_t *err)
{
    if (s->spec_method == SV_SPEC_DRAFT && !s->spec_model[0])
        return sv_errorf(err, SV_EINVAL,
                         "speculative: draft needs speculative_model (the draft model, a catalog "
                         "name or a config.json)");
    if ((s->spec_method == SV_SPEC_MTP || s->spec_method == SV_SPEC_EAGLE) && s->spec_model[0])
        return sv_errorf(err, SV_EINVAL,
                         "speculative_model: a draft model is run with speculative: draft (this "
                         "pool's is %s; with none the draft model is not loaded)",
                         spec_names[s->spec_method]);
    if (s->spec_method == SV_SPEC_DRAFT && s->spec_naccept == 0)
        return sv_errorf(err, SV_EINVAL,
                         "speculative: draft needs spec_acceptance (the acceptance of a draft "
                         "model depends on the pair of models and the data; no default is given)");
    return 0;
}

int sv_spec_k(const sv_perf_settings_t *s)
{
    if (s->spec_method == SV_SPEC_NONE) return 0;
    return s->spec_k > 0 ? s->spec_k : SPEC_DEFAULT_K;
}

double sv_spec_accept(const sv_perf_settings_t *s, int i)
{
    if (s->spec_naccept > 0) return s->spec_accept[i < s->spec_naccept ? i : s->spec_naccept - 1];
    if (s->spec_method == SV_SPEC_MTP) return i == 0 ? SPEC_MTP_FIRST : SPEC_MTP_LATER;
    return SPEC_EAGLE_RATE;
}

double sv_spec_accept_len(const sv_perf_settings_t *s)
{
    double len = 1.0, run = 1.0;
    for (int i = 0; i < sv_spec_k(s); i++) {
        run *= sv_spec_accept(s, i);
        len += run;
    }
    return len;
}

void sv_spec_counters(const sv_perf_settings_t *s, double decode_tokens, sv_spec_counters_t *out)
{
    memset(out, 0, sizeof *out);
    out->k = sv_spec_k(s);
    if (out->k == 0) return;
    out->mean_len = sv_spec_accept_len(s);
    out->drafts = decode_tokens / out->mean_len;
    out->draft_tokens = out->k * out->drafts;
    out->accepted = (out->mean_len - 1.0) * out->drafts;
    double run = out->drafts;
    for (int i = 0; i < out->k; i++)
        out->per_pos[i] = run *= sv_spec_accept(s, i);
}

int sv_perf_settings_set(sv_perf_settings_t *s, const char *key, const char *value, sv_error_t *err)
{
    long l = 0;
    int rc;
    if (strcmp(key, "tp") == 0) {
        if ((rc = int_in(key, value, 1, 1024, &l, err))) return rc;
        s->tp = (int)l;
        return 0;
    }
    if (strcmp(key, "pp") == 0) {
        if ((rc = int_in(key, value, 1, 256, &l, err))) return rc;
        s->pp = (int)l;
        return 0;
    }
    if (strcmp(key, "pp_layer_partition") == 0) return pp_split_parse(s, value, err);
    if (strcmp(key, "pp_link_bandwidth_gb_s") == 0)
        return num_in(key, value, 0, 1e6, 1, 1e9, &s->pp_link_bw, err);
    if (strcmp(key, "ep") == 0 || strcmp(key, "dp_attention") == 0) {
        if ((rc = int_in(key, value, 1, 1024, &l, err))) return rc;
        *(key[0] == 'e' ? &s->ep : &s->dp_attention) = (int)l;
        return 0;
    }
    if (strcmp(key, "ep_redundant_experts") == 0) {
        if ((rc = int_in(key, value, 0, 4096, &l, err))) return rc;
        s->ep_redundant = (int)l;
        return 0;
    }
    if (strcmp(key, "ep_kernel") == 0) {
        static const char *const names[] = {"auto", "low_latency", "high_throughput"};
        for (int i = 0; i < 3; i++)
            if (strcmp(value, names[i]) == 0) {
                s->ep_kernel = i;
                return 0;
            }
        return sv_errorf(err, SV_EINVAL,
                         "%s: expected auto, low_latency or high_throughput, got '%s'", key, value);
    }
    if (strcmp(key, "weight_dtype") == 0 || strcmp(key, "kv_cache_dtype") == 0) {
        sv_dtype_t t;
        int kv = key[0] == 'k';
        if (sv_dtype_parse(value, &t) || (kv && t == SV_DT_INT4))
            return sv_errorf(err, SV_EINVAL, "%s: expected one of %s, got '%s'", key,
                             kv ? "bf16, fp16, fp8, nvfp4, mxfp4"
                                : "bf16, fp16, fp8, int4, nvfp4, mxfp4",
                             value);
        if (kv) {
            s->kv_dtype = t;
        } else {
            s->weight_dtype = t;
            s->weight_dtype_given = 1;
        }
        return 0;
    }
    if (strcmp(key, "compute_efficiency") == 0)
        return num_in(key, value, 0, 1, 1, 1, &s->compute_eff, err);
    if (strcmp(key, "memory_efficiency") == 0)
        return num_in(key, value, 0, 1, 1, 1, &s->memory_eff, err);
    if (strcmp(key, "iteration_overhead_ms") == 0)
        return num_in(key, value, 0, 1e4, 0, 1e-3, &s->iter_overhead_s, err);
    if (strcmp(key, "layer_overhead_us") == 0)
        return num_in(key, value, 0, 1e6, 0, 1e-6, &s->layer_overhead_s, err);
    if (strcmp(key, "link_bandwidth_gb_s") == 0)
        return num_in(key, value, 0, 1e6, 1, 1e9, &s->link_bw, err);
    if (strcmp(key, "link_latency_us") == 0)
        return num_in(key, value, 0, 1e6, 0, 1e-6, &s->link_latency, err);
    if (strcmp(key, "gpu_memory_utilization") == 0)
        return num_in(key, value, 0, 1, 1, 1, &s->gpu_memory_utilization, err);
    if (strcmp(key, "activation_reserve_gb") == 0)
        return num_in(key, value, 0, 1e6, 0, 1e9, &s->activation_reserve, err);
    if (strcmp(key, "block_size") == 0) {
        if ((rc = int_in(key, value, 1, 4096, &l, err))) return rc;
        s->block_size = (int)l;
        return 0;
    }
    if (strcmp(key, "max_num_batched_tokens") == 0) {
        if ((rc = int_in(key, value, 1, 1L << 30, &l, err))) return rc;
        s->max_batched_tokens = l;
        return 0;
    }
    if (strcmp(key, "seq_overhead_us") == 0)
        return num_in(key, value, 0, 1e6, 0, 1e-6, &s->seq_overhead_s, err);
    if (strcmp(key, "cuda_graphs") == 0) return bool_in(key, value, &s->cuda_graphs, err);
    if (strcmp(key, "custom_allreduce") == 0) return bool_in(key, value, &s->custom_allreduce, err);
    if (strcmp(key, "nccl_nvls") == 0) return bool_in(key, value, &s->nccl_nvls, err);
    if (strcmp(key, "graph_max_tokens") == 0) {
        if ((rc = int_in(key, value, 0, 1L << 30, &l, err))) return rc;
        s->graph_max_tokens = l;
        return 0;
    }
    if (strcmp(key, "power_limit_w") == 0) /* the GPU's range: sv_perf_init */
        return num_in(key, value, 0, 1e5, 1, 1, &s->power_limit_w, err);
    if (strcmp(key, "num_scheduler_steps") == 0) {
        if ((rc = int_in(key, value, 1, 1024, &l, err))) return rc;
        s->sched_steps = (int)l;
        return 0;
    }
    for (int k = 0; k < SV_CV_COUNT; k++)
        if (strcmp(key, sv_curve_keys[k]) == 0)
            return num_in(key, value, sv_curve_lo[k], sv_curve_hi[k], 0, 1, &s->curve[k], err);
    rc = spec_set(s, key, value, err);
    if (rc != SV_ENOKEY) return rc;
    return sv_errorf(err, SV_ENOKEY, "unknown setting '%s'", key);
}

int sv_perf_settings_engine(sv_perf_settings_t *s, const sv_engine_profile_t *e, sv_error_t *err)
{
    sv_perf_settings_t prof = sv_perf_settings_default();
    for (int i = 0; i < e->nkeys; i++) {
        int rc = sv_perf_settings_set(&prof, e->keys[i], e->values[i], err);
        if (rc) return sv_error_prefix(err, "engine profile '%s'", e->name);
    }
#define FILL(f)                                                                                    \
    if (s->f < 0) s->f = prof.f
    FILL(compute_eff);
    FILL(memory_eff);
    FILL(iter_overhead_s);
    FILL(layer_overhead_s);
    FILL(link_latency);
    FILL(seq_overhead_s);
    FILL(cuda_graphs);
    FILL(custom_allreduce);
    FILL(nccl_nvls);
    FILL(graph_max_tokens);
    for (int k = 0; k < SV_CV_COUNT; k++)
        FILL(curve[k]);
#undef FILL
    snprintf(s->engine, sizeof s->engine, "%s", e->name);
    s->engine_calibration = e->calibration;
    snprintf(s->engine_fitted_to, sizeof s->engine_fitted_to, "%s", e->fitted_to);
    return 0;
}

int sv_perf_settings_profile(sv_perf_settings_t *s, const sv_catalog_t *cat, const char *name,
                             sv_error_t *err)
{
    const sv_engine_profile_t *e;
    if (!name || !*name) {
        if (cat->nengines == 0) return 0;
        name = "vllm";
    }
    int rc = sv_catalog_engine(cat, name, &e, err);
    return rc ? rc : sv_perf_settings_engine(s, e, err);
}

/* ---- sizes -------------------------------------------------------------------------- */

/* Per-layer parameter counts for a given TP (tp = 1 gives the whole model). */
typedef struct layer_params {
    double attn;   /* q, k, v, o projections and QKV bias */
    double mlp;    /* dense MLP (0 for MoE layers) */
    double expert; /* one expert */
    double router;
    double norms;
} layer_params_t;

static int kv_heads_per_gpu(const sv_model_t *m, int tp)
{
    return m->kv_heads >= tp ? m->kv_heads / tp : 1;
}

static layer_params_t layer_params(const sv_model_t *m, int tp)
{
    layer_params_t lp;
    double d = m->hidden, hd = m->head_dim;
    double q = (double)(m->heads / tp) * hd, kv = kv_heads_per_gpu(m, tp) * hd;
    int mats = m->gated_mlp ? 3 : 2;
    lp.attn = d * q + 2.0 * d * kv + q * d + (m->qkv_bias ? q + 2.0 * kv : 0.0);
    lp.mlp = m->experts ? 0.0 : mats * d * (double)(m->ffn / tp);
    lp.expert = m->experts ? mats * d * (double)(m->moe_ffn / tp) : 0.0;
    lp.router = m->experts ? d * m->experts : 0.0;
    lp.norms = 2.0 * d;
    return lp;
}

/* Parameters per GPU at tensor-parallel degree tp, over the whole model (one pipeline
 * stage is 1/pp of each), by kind. */
typedef struct arch_params {
    double attn;    /* attention projections of the full and windowed layers (MLA: all) */
    double lin;     /* linear-attention layers' projections and convolutions */
    double dense;   /* dense MLPs */
    double shared;  /* shared experts */
    double router;  /* MoE routers (16-bit) */
    double expert;  /* one routed expert of one layer */
    double experts; /* every routed expert of every MoE layer */
    double norms;   /* RMSNorms (16-bit) */
} arch_params_t;

static arch_params_t arch_params(const sv_model_t *m, int tp);

/* The model needs the architecture terms (sv_perf_t.ext). */
static int model_ext(const sv_model_t *m)
{
    return m->mla || m->experts || m->linear_layers || (m->sliding_window > 0 && m->window_layers > 0);
}

double sv_model_param_count(const sv_model_t *m)
{
    if (model_ext(m)) {
        arch_params_t a = arch_params(m, 1);
        double embed = (double)m->vocab * m->hidden;
        return a.attn + a.lin + a.dense + a.shared + a.router + a.experts + a.norms + m->hidden +
               embed * (m->tied_embeddings ? 1.0 : 2.0);
    }
    layer_params_t lp = layer_params(m, 1);
    double per_layer = lp.attn + lp.mlp + lp.expert * m->experts + lp.router + lp.norms;
    double embed = (double)m->vocab * m->hidden;
    return m->layers * per_layer + m->hidden + embed * (m->tied_embeddings ? 1.0 : 2.0);
}

/* Divisors of the heads that also fit the KV heads and MLP: the TP degrees that work. */
static void valid_tps(const sv_model_t *m, char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int tp = 1; tp <= 64 && off < n - 1; tp *= 2) {
        if (m->heads % tp || (m->kv_heads % tp && tp % m->kv_heads) || m->ffn % tp ||
            (m->experts && m->moe_ffn % tp))
            continue;
        off += (size_t)snprintf(buf + off, n - off, "%s%d", off ? ", " : "", tp);
    }
}

static double causal_keys(double n, double c, double w);
static void finish_op(sv_op_cost_t *o, double t_compute, double t_memory, double t_fixed);

/* ---- architectures beyond the dense transformer -------------------------------------- */


static arch_params_t arch_params(const sv_model_t *m, int tp)
{
    arch_params_t a;
    memset(&a, 0, sizeof a);
    double d = m->hidden, mats = m->gated_mlp ? 3.0 : 2.0;
    double attn_layers = m->layers - m->linear_layers;
    double moe = sv_model_moe_layers(m), dense = m->layers - moe;
    if (m->mla) {
        /* DeepSeek-V3 (modeling_deepseek_v3.py): q_a (d x q_lora) and kv_a (d x (kv_lora +
         * rope)) are replicated on every TP rank; q_b, kv_b and o split by heads. */
        double hl = (double)(m->heads / tp), qk = m->qk_nope_head_dim + m->qk_rope_head_dim;
        double repl = d * (m->q_lora_rank + m->kv_lora_rank + m->qk_rope_head_dim);
        double q = m->q_lora_rank ? (double)m->q_lora_rank * hl * qk : d * hl * qk;
        double split = q + (double)m->kv_lora_rank * hl * (m->qk_nope_head_dim + m->v_head_dim) +
                       hl * m->v_head_dim * d;
        a.attn = attn_layers * (repl + split);
        a.norms += attn_layers * (m->q_lora_rank + m->kv_lora_rank);
    } else {
        double hd = m->head_dim, q = (double)(m->heads / tp) * hd;
        double kv = (m->kv_heads >= tp ? m->kv_heads / tp : 1) * hd;
        double per = d * q + 2.0 * d * kv + q * d + (m->qkv_bias ? q + 2.0 * kv : 0.0);
        if (m->attn_output_gate) per += d * q; /* the gate doubles the Q projection */
        a.attn = attn_layers * per;
    }
    if (m->linear_layers) {
        double kh = (double)m->lin_k_heads / tp, vh = (double)m->lin_v_heads / tp;
        double conv = 2.0 * kh * m->lin_k_dim + vh * m->lin_v_dim;
        /* Gated DeltaNet (Qwen3-Next): in_proj_qkvz, in_proj_ba, out_proj, conv1d */
        a.lin = m->linear_layers * (d * (conv + vh * m->lin_v_dim) + d * 2.0 * vh +
                                    vh * m->lin_v_dim * d + conv * m->lin_conv);
    }
    a.dense = dense * mats * d * (double)(m->ffn / tp);
    if (m->experts) {
        a.shared = moe * mats * d * (double)m->shared_ffn / tp;
        a.router = moe * d * m->experts;
        a.expert = mats * d * (double)(m->moe_ffn / tp);
        a.experts = moe * m->experts * a.expert;
    }
    a.norms += 2.0 * d * m->layers;
    return a;
}

/* Weight bytes of the decoder layers on one GPU (all stages), at the weight formats. */
static double arch_decoder_bytes(const sv_model_t *m, const arch_params_t *a, double wb,
                                 double wb_e, int scale_block)
{
    double quant = a->attn + a->lin + a->dense + a->shared;
    double bytes = quant * wb + a->experts * wb_e + (a->router + a->norms) * EMBED_BYTES;
    /* FP8 block quantisation keeps one FP32 scale per block of weights (DeepSeek's 128x128). */
    if (scale_block > 0) bytes += (quant + a->experts) * 4.0 / scale_block;
    (void)m;
    return bytes;
}

/* What the last pipeline stage holds besides its layers: the final norm and the LM head
 * (the embedding's own copy when they are tied). */
static double last_stage_extra(const sv_perf_t *p)
{
    const sv_model_t *m = &p->model;
    return m->hidden * EMBED_BYTES +
           (m->tied_embeddings ? p->embed_bytes_gpu : p->lm_head_params * EMBED_BYTES);
}

/* Uneven pipeline stages: the weight bytes of the heaviest GPU, its stage's layers at
 * layer_bytes each, the first stage's with the embedding and the last's with
 * last_stage_extra. */
static double heaviest_stage(const sv_perf_t *p, double layer_bytes)
{
    int pp = p->set.pp;
    double most = 0.0, first = p->embed_bytes_gpu, last = last_stage_extra(p);
    for (int i = 0; i < pp; i++)
        most = fmax(most, p->pp_layers[i] * layer_bytes + (i == 0 ? first : 0.0) +
                              (i == pp - 1 ? last : 0.0));
    return most;
}

/* The layer counts, linear parameters and weight bytes of an extended model's stage
 * (arch_init's first step); head is the embedding and LM head bytes per GPU. */
static void arch_weights(sv_perf_t *p, double head)
{
    const sv_model_t *m = &p->model;
    sv_perf_arch_t *x = &p->x;
    const sv_perf_settings_t *r = &p->set;
    int tp = p->attn_tp; /* attention and dense layers' TP */
    double inv_pp = p->stage_share; /* the heaviest stage's share of the layers (1/pp if even) */
    double wb = sv_dtype_weight_bytes(r->weight_dtype), wb_e = sv_dtype_weight_bytes(x->expert_dtype);
    int scale_block = r->weight_dtype == SV_DT_FP8 && !r->weight_dtype_given ? m->ckpt_scale_block : 0;
    arch_params_t a = arch_params(m, tp), a1 = arch_params(m, 1);
    if (p->ep > 1 || p->dp > 1) {
        /* The routed experts over the whole group: ep ranks of experts/ep experts, each split
         * over tp/ep GPUs; per GPU 1/tp of them whatever the split. */
        arch_params_t ae = arch_params(m, r->tp / p->ep);
        /* EPLB's redundant copies: each rank holds (experts + copies) / ep of them */
        double held = p->ep > 1 ? (m->experts + (double)r->ep_redundant) / m->experts : 1.0;
        a.expert = ae.expert / p->ep;
        a.experts = ae.experts * held / p->ep;
    }

    double nwin = sv_model_window_layers(m);
    x->linear_layers = m->linear_layers * inv_pp;
    x->window_layers = nwin * inv_pp;
    x->full_layers = (m->layers - m->linear_layers - nwin) * inv_pp;
    x->moe_layers = sv_model_moe_layers(m) * inv_pp;
    x->lin_params = (a.attn + a.lin + a.dense + a.shared + a.router) * inv_pp;
    x->lin_bytes = (arch_decoder_bytes(m, &a, wb, wb_e, scale_block) - a.experts * wb_e -
                    (scale_block > 0 ? a.experts * 4.0 / scale_block : 0.0)) *
                   inv_pp;
    p->expert_params = a.expert;
    p->layer_linear_params = x->lin_params / (m->layers * inv_pp);

    /* Weights per GPU: the decoder's stage plus the embedding and LM head as before. */
    double decoder = arch_decoder_bytes(m, &a, wb, wb_e, scale_block) * inv_pp;
    p->weight_bytes_gpu =
        p->pp_uneven ? heaviest_stage(p, arch_decoder_bytes(m, &a, wb, wb_e, scale_block) / m->layers)
                     : decoder + head;
    double full_embed = (double)m->vocab * m->hidden * EMBED_BYTES;
    p->weight_bytes_total = arch_decoder_bytes(m, &a1, wb, wb_e, scale_block) +
                            m->hidden * EMBED_BYTES + full_embed * (m->tied_embeddings ? 1.0 : 2.0);
}

/* The KV cache per token and the per-sequence state (windowed layers' capped KV, linear
 * attention's recurrent and convolution state) of an extended model (arch_init's second step). */
static void arch_kv(sv_perf_t *p)
{
    const sv_model_t *m = &p->model;
    sv_perf_arch_t *x = &p->x;
    const sv_perf_settings_t *r = &p->set;
    int tp = p->attn_tp, pp = r->pp;
    /* KV per token per attention layer on one GPU: MLA caches the latent and the rotary key
     * (kv_lora + rope values), the same on every TP rank; GQA its local K and V heads. */
    double kvb = sv_dtype_kv_bytes(r->kv_dtype);
    double hl = p->heads_local;
    if (m->mla) {
        double qk = m->qk_nope_head_dim + m->qk_rope_head_dim, lat = m->kv_lora_rank;
        x->kv_layer = (lat + m->qk_rope_head_dim) * kvb;
        x->pair_flops = 2.0 * hl * (qk + m->v_head_dim);
        x->q_bytes_tok = hl * (qk + m->v_head_dim) * ACT_BYTES;
        x->key_act_bytes = hl * (qk + m->v_head_dim) * ACT_BYTES;
        x->decomp_flops_key = 2.0 * lat * hl * (m->qk_nope_head_dim + m->v_head_dim);
        /* Absorbed decode (DeepSeek-V2 paper, section 2.1.2): every head scores the latent and
         * the rotary key (lat + rope) and sums the latent (lat). */
        x->dec_flops_key = 2.0 * hl * (lat + m->qk_rope_head_dim) + 2.0 * hl * lat;
        x->dec_q_bytes = hl * (2.0 * lat + m->qk_rope_head_dim) * ACT_BYTES;
    } else {
        double q = hl * m->head_dim;
        x->kv_layer = p->kv_bytes_token_layer;
        x->pair_flops = 4.0 * q;
        x->q_bytes_tok = 2.0 * q * ACT_BYTES;
        x->dec_flops_key = 4.0 * q;
        x->dec_q_bytes = 2.0 * q * ACT_BYTES;
    }
    p->kv_bytes_token_layer = x->kv_layer;
    p->kv_bytes_token = x->full_layers * x->kv_layer;
    p->kv_bytes_token_window = x->window_layers * x->kv_layer;
    p->kv_bytes_token_total = p->kv_bytes_token * tp * (p->pp_uneven ? p->stage_equiv : pp);
    x->window_cap = m->sliding_window;
    if (m->max_context > 0 && m->max_context < x->window_cap) x->window_cap = (double)m->max_context;
    if (m->linear_layers) {
        double kh = (double)m->lin_k_heads / tp, vh = (double)m->lin_v_heads / tp;
        double conv = 2.0 * kh * m->lin_k_dim + vh * m->lin_v_dim;
        /* Per value head a dk x dv state: decay, read (k^T S), update (outer product) and query
         * (q^T S), about 6 dk dv FLOPs per token; the causal conv1d 2 x kernel per channel. */
        x->lin_flops_tok = 6.0 * vh * m->lin_k_dim * m->lin_v_dim + 2.0 * m->lin_conv * conv;
        /* SGLang keeps the recurrent state in FP32 (mamba_ssm_dtype float32) and the last
         * kernel - 1 inputs of the convolution in 16 bits. */
        x->lin_state = vh * m->lin_k_dim * m->lin_v_dim * 4.0 +
                       (m->lin_conv > 1 ? m->lin_conv - 1 : 0) * conv * ACT_BYTES;
        x->lin_act_tok = 2.0 * (conv + 2.0 * vh * m->lin_v_dim) * ACT_BYTES;
    }
    p->seq_state_bytes = x->window_layers * x->window_cap * x->kv_layer + x->linear_layers * x->lin_state;
}

/*
 * The MoE layer's token permutation outside its GEMMs, in activation elements (2 bytes) per
 * token per layer, to be multiplied by the hidden size: the dispatch reads the token's row and
 * writes one copy per local expert choice in the expert GEMM's input format (1 byte with FP8
 * experts, 2 otherwise), the combine reads those rows' outputs back (BF16) and writes the
 * weighted sum (TensorRT-LLM's expandInputRows and finalizeMoeRouting kernels around its
 * CUTLASS grouped GEMMs, vLLM's and SGLang's moe_sum after the fused MoE). Separate kernels,
 * memory-bound, so they cost as small ops rather than overlapping the GEMMs. A rank holds
 * k / ep of a token's choices under expert parallelism with replicated attention; with
 * attention data parallelism the all-to-all kernels move the rows (a2a_step) and nothing
 * is added here. 0 for a model without experts.
 */
static double moe_route_elems(const sv_model_t *m, int expert_dtype, int ep, int dp)
{
    if (!m->experts || (ep > 1 && dp > 1)) return 0.0;
    double k = (double)m->experts_per_tok / (ep > 1 ? ep : 1);
    double in_b = expert_dtype == SV_DT_FP8 ? 1.0 : ACT_BYTES;
    return 1.0 + k * in_b / ACT_BYTES + k + 1.0;
}

/* The coefficients of an MLA, MoE, windowed or linear-attention model (sv_perf_arch_t):
 * weights, KV and state, then the activation traffic, expert peak and kernel floors. */
static void arch_init(sv_perf_t *p, double head)
{
    const sv_model_t *m = &p->model;
    sv_perf_arch_t *x = &p->x;
    const sv_perf_settings_t *r = &p->set;
    const double *cv = r->curve;
    int tp = p->attn_tp; /* attention and dense layers' TP */
    double inv_pp = p->stage_share, d = m->hidden, mats = m->gated_mlp ? 3.0 : 2.0;
    arch_weights(p, head);
    arch_kv(p);
    double hl = p->heads_local;

    /* GEMM inputs and outputs per token over the stage's layers. */
    double q = hl * m->head_dim, kv = p->kv_heads_local * m->head_dim;
    double act_attn = m->mla ? 2.0 * d + 2.0 * m->q_lora_rank + 2.0 * m->kv_lora_rank +
                                   m->qk_rope_head_dim + hl * (m->qk_nope_head_dim + m->qk_rope_head_dim) +
                                   hl * (m->qk_nope_head_dim + 2.0 * m->v_head_dim)
                             : (d + q + 2.0 * kv) + (q + d) + (m->attn_output_gate ? q : 0.0);
    double fl = p->ffn_local, fe = p->moe_ffn_local, fs = (double)m->shared_ffn / tp;
    double act_dense = d + (mats - 1.0) * fl + fl + d;
    double act_moe = m->experts ? m->experts_per_tok * (d + (mats - 1.0) * fe + fe + d) +
                                      (fs > 0 ? d + (mats - 1.0) * fs + fs + d : 0.0) + m->experts
                                : 0.0;
    double layers_s = m->layers * inv_pp, dense_s = layers_s - x->moe_layers;
    double attn_s = x->full_layers + x->window_layers;
    double lin_act = 0.0;
    if (m->linear_layers) {
        double kh = (double)m->lin_k_heads / tp, vh = (double)m->lin_v_heads / tp;
        lin_act = 3.0 * d + 2.0 * kh * m->lin_k_dim + 3.0 * vh * m->lin_v_dim + 2.0 * vh;
    }
    x->act_tok = attn_s * act_attn + x->linear_layers * lin_act + dense_s * act_dense +
                 x->moe_layers * act_moe;

    /* Expert GEMMs: on the expert format's tensor cores (FP4 weights on a GPU without FP4
     * tensor cores are dequantised to BF16: weight-only, W4A16). */
    double peak_e = p->compute_peak;
    if (x->expert_dtype != r->weight_dtype) {
        int bit = x->expert_dtype == SV_DT_NVFP4 ? SV_FP4_NVFP4 : x->expert_dtype == SV_DT_MXFP4 ? SV_FP4_MXFP4 : 0;
        peak_e = (bit && (p->gpu.fp4_formats & bit) ? p->gpu.fp4_flops
                  : x->expert_dtype == SV_DT_FP8 && p->gpu.fp8_flops > 0 ? p->gpu.fp8_flops
                                                                         : p->gpu.bf16_flops) *
                 sv_perf_power_scale(&p->gpu, p->set.power_limit_w);
    }
    x->inv_exp_c = 1.0 / (peak_e * r->compute_eff);
    x->grouped_eff = cv[SV_CV_GROUPED_EFF];
    x->grouped_n_half = cv[SV_CV_GROUPED_N_HALF];
    x->imbalance = cv[SV_CV_MOE_IMBALANCE];
    double mla_eff = m->mla ? cv[SV_CV_MLA_EFF] : 1.0;
    x->inv_attn_c = p->inv_attn_c / mla_eff;
    x->inv_attn_mem = p->inv_attn_mem / mla_eff;
    /* The context phase runs other kernels than decode (TensorRT-LLM's MLA context FMHA vs
     * its generation kernels, SGLang's FlashInfer/FA3 prefill vs FlashMLA decode). */
    x->inv_attn_pf = x->inv_attn_c / (m->mla ? cv[SV_CV_MLA_PREFILL_EFF] : 1.0);

    /* Kernel floors: attention GEMMs (MLA: q_a+kv_a fused, q_b, kv_b or the two absorbed
     * batched GEMMs, o = 5; GQA: qkv, o = 2), linear-attention projections (3), dense MLP (2),
     * MoE (router, the two grouped GEMMs, and the shared expert's 2). */
    double floor = cv[SV_CV_GEMM_FLOOR] * 1e-6;
    p->gemm_floor_step = floor * (attn_s * (m->mla ? 5.0 : 2.0) + x->linear_layers * 3.0 +
                                  dense_s * 2.0 + x->moe_layers * (1.0 + (fs > 0 ? 2.0 : 0.0)));
    x->expert_floor_step = floor * x->moe_layers * 2.0;
    p->lm_floor = floor;
    p->attn_seq_step = attn_s * cv[SV_CV_ATTN_SEQ] * 1e-6;
    if (!r->ideal) {
        double norm = 0.0, other = 0.0;
        double rot = m->mla ? 2.0 * (hl * m->qk_rope_head_dim + m->qk_rope_head_dim) : 2.0 * (q + kv);
        double act_f = dense_s * fl + x->moe_layers * (m->experts_per_tok * fe + fs);
        norm = layers_s * 2.0 * 2.0 * d + (m->mla ? attn_s * 2.0 * (m->q_lora_rank + m->kv_lora_rank) : 0.0);
        other = layers_s * 2.0 * 3.0 * d + (m->gated_mlp ? 3.0 : 2.0) * act_f + attn_s * rot;
        other += x->moe_layers * moe_route_elems(m, x->expert_dtype, p->ep, p->dp) * d;
        p->small_bytes_tok = (norm + other) * ACT_BYTES;
        p->small_s_tok = ACT_BYTES / p->gpu.hbm_bw * (norm / cv[SV_CV_NORM_EFF] + other / cv[SV_CV_SMALL_EFF]);
    }
}

/*
 * The linear layers and attention of one stage for micro-batch j of m_mb, for a model with
 * MLA, MoE, per-layer windows or linear attention (docs/cost-model.md, "Architectures").
 * Adds the logits of prompt-ending chunks; returns the micro-batch's tokens.
 */
static double arch_ops(const sv_perf_t *p, const sv_batch_t *b, int j, int m_mb, double nd,
                       double ctx_sum, double moe_T, double *logits, sv_step_cost_t *out)
{
    const sv_perf_arch_t *x = &p->x;
    const sv_model_t *m = &p->model;
    double w = m->sliding_window, kvl = x->kv_layer;
    sv_op_cost_t *ap = &out->op[SV_OP_ATTN_PREFILL];
    double prefill_tokens = 0.0, eff_flops = 0.0;
    for (int i = 0; i < b->n_chunks; i++) {
        double n = (double)b->chunks[i].new_tokens, c = (double)b->chunks[i].cached_tokens;
        if (n <= 0 || i % m_mb != j) continue;
        prefill_tokens += n;
        if (b->chunks[i].last) *logits += 1.0;
        double fl = x->pair_flops * (x->full_layers * causal_keys(n, c, 0.0) +
                                     x->window_layers * causal_keys(n, c, w)) +
                    x->decomp_flops_key * x->full_layers * c + x->lin_flops_tok * x->linear_layers * n;
        double by = x->full_layers * (n * x->q_bytes_tok + (c + n) * (kvl + x->key_act_bytes) + n * kvl) +
                    x->window_layers * (n * x->q_bytes_tok + (fmin(c, w) + n) * kvl + n * kvl) +
                    x->linear_layers * (2.0 * x->lin_state + n * x->lin_act_tok);
        ap->flops += fl;
        eff_flops += fl * (n + p->attn_n_half) / n;
        ap->bytes += by;
    }
    double v = b->verify > 1 ? b->verify : 1.0; /* tokens per decode sequence (verify) */
    double T = prefill_tokens + nd * v;
    if (T <= 0) return 0.0;
    *logits += nd * (v - 1.0);

    /* Linear layers: the non-expert weights read once; the experts a step touches,
     * E (1 - (1 - k/E)^T) per MoE layer in expectation; expert GEMMs at the grouped-GEMM
     * efficiency of their tokens per touched expert, times the busiest expert's share. */
    sv_op_cost_t *li = &out->op[SV_OP_LINEAR];
    double dense_fl = 2.0 * T * x->lin_params, tc_exp = 0.0, tm_exp = 0.0;
    li->flops = dense_fl;
    li->bytes = x->lin_bytes + T * m->hidden * EMBED_BYTES / p->attn_tp + T * x->act_tok * ACT_BYTES;
    double floors = p->gemm_floor_step, dense_bytes = li->bytes;
    if (m->experts) {
        /* With attention data parallelism the experts see every rank's tokens (moe_T). */
        double E = m->experts, k = m->experts_per_tok, Tm = moe_T > 0 ? moe_T : T;
        double touched = E * (1.0 - pow(1.0 - k / E, Tm));
        double efl = 2.0 * Tm * k * x->moe_layers * p->expert_params;
        double te = Tm * k / touched; /* tokens per touched expert */
        double eby = x->moe_layers * touched * p->expert_params * sv_dtype_weight_bytes(x->expert_dtype);
        li->flops += efl;
        li->bytes += eby;
        /* The grouped GEMMs reach g of a dense GEMM's FLOP/s and bandwidth; the busiest
         * expert's share u stretches their compute. */
        tc_exp = efl * x->inv_exp_c * x->imbalance / x->grouped_eff * (te + p->m_half) / te;
        tm_exp = eby * p->inv_mem / x->grouped_eff;
        if (x->grouped_n_half > 0) {
            /* Occupancy: the weight read reaches g n / (n + n_h) of the bandwidth with n
             * touched experts per rank (the experts in flight), so it costs n_h experts'
             * reads more than at g (a fitted form, docs/cost-model.md). */
            double n = touched / (p->ep > 1 ? p->ep : 1);
            tm_exp *= (n + x->grouped_n_half) / n;
        }
        floors += x->expert_floor_step;
    }
    finish_op(li, dense_fl * p->inv_lin_c * (T + p->m_half) / T + tc_exp,
              dense_bytes * p->inv_mem + tm_exp, floors);
    finish_op(ap, eff_flops * x->inv_attn_pf, ap->bytes * p->inv_mem, 0.0);

    /* Decode attention: full layers over the whole context (MLA in the absorbed form over the
     * latent), windowed layers over at most the window (of the mean context), linear layers
     * read and write their state. A verify step's v tokens per sequence read its KV once
     * and each attend to it (v x the FLOPs, v x the queries). */
    sv_op_cost_t *ad = &out->op[SV_OP_ATTN_DECODE];
    if (nd > 0) {
        double ctx_w = w > 0 ? nd * fmin(ctx_sum / nd, w) : 0.0, ndv = nd * v;
        ad->flops = v * x->dec_flops_key * (x->full_layers * (ctx_sum + nd) + x->window_layers * (ctx_w + nd)) +
                    x->lin_flops_tok * x->linear_layers * ndv;
        ad->bytes = x->full_layers * ((ctx_sum + ndv) * kvl + ndv * x->dec_q_bytes) +
                    x->window_layers * ((ctx_w + ndv) * kvl + ndv * x->dec_q_bytes) +
                    x->linear_layers * nd * (2.0 * x->lin_state + v * x->lin_act_tok);
        finish_op(ad, ad->flops * x->inv_attn_c, ad->bytes * x->inv_attn_mem, nd * p->attn_seq_step);
    }
    return T;
}

/* ---- the KV cache groups ---------------------------------------------------------- */

const char *const sv_kv_kind_names[SV_KV_KINDS] = {"full", "window", "chunk", "state"};

/*
 * The groups of vLLM V1's hybrid allocator (sv_kvspec_t). A model whose every layer has the
 * window (window_layers 0) stays one full-attention group with its attention capped
 * (sv_perf_attended), as before. The group's page is group_layers layers of the
 * full-attention KV; a linear-attention layer's state takes whole pages of it: vLLM instead
 * raises the attention block size until one page holds the state
 * (vllm/model_executor/models/config.py, HybridAttentionMambaModelConfig), which gives a
 * state group the same bytes but the full-attention group coarser blocks.
 */
static void kv_groups(sv_perf_t *p)
{
    const sv_model_t *m = &p->model;
    sv_kvspec_t *k = &p->kvs;
    memset(k, 0, sizeof *k);
    k->block_size = p->set.block_size;
    k->page_token = p->kv_bytes_token;
    int nwin = p->ext && m->sliding_window > 0 && m->window_layers > 0 ? m->window_layers : 0;
    k->layers[SV_KV_STATE] = p->ext ? m->linear_layers : 0;
    k->layers[m->chunked_window ? SV_KV_CHUNK : SV_KV_WINDOW] = nwin;
    k->layers[SV_KV_FULL] = m->layers - nwin - k->layers[SV_KV_STATE];
    k->window = nwin ? m->sliding_window : 0;
    int lo = 0, hi = 0;
    for (int i = 0; i < SV_KV_KINDS; i++) {
        int n = k->layers[i];
        if (n <= 0) continue;
        if (!lo || n < lo) lo = n;
        if (n > hi) hi = n;
    }
    k->group_layers = (double)hi < 1.25 * lo ? hi : lo;
    for (int i = 0; i < SV_KV_KINDS; i++) {
        k->groups[i] = (k->layers[i] + k->group_layers - 1) / k->group_layers;
        if (i != SV_KV_FULL && k->groups[i]) k->hybrid = 1;
    }
    if (!k->hybrid || k->layers[SV_KV_FULL] <= 0) {
        k->hybrid = 0;
        return;
    }
    /* kv_bytes_token is the full-attention layers' (with a drafter's layer, spec_init) */
    k->page_token = p->kv_bytes_token * k->group_layers / k->layers[SV_KV_FULL];
    double layer_page = p->x.kv_layer * k->block_size;
    if (p->x.lin_state > 0 && layer_page > 0) k->state_blocks = (long)ceil(p->x.lin_state / layer_page);
}

/* ceil(a / b) and floor(a / b) for a >= 0, b > 0 */
static long cdiv(long a, long b)
{
    return (a + b - 1) / b;
}

long sv_kv_blocks(const sv_kvspec_t *k, long c, long tokens, long out[SV_KV_KINDS])
{
    long bs = k->block_size, need = cdiv(tokens, bs), v[SV_KV_KINDS] = {0};
    v[SV_KV_FULL] = k->groups[SV_KV_FULL] * need;
    if (k->groups[SV_KV_WINDOW]) {
        long skip = c - k->window + 1;
        v[SV_KV_WINDOW] = k->groups[SV_KV_WINDOW] * (need - (skip > 0 ? skip / bs : 0));
    }
    if (k->groups[SV_KV_CHUNK]) v[SV_KV_CHUNK] = k->groups[SV_KV_CHUNK] * (need - c / k->window * k->window / bs);
    if (tokens > 0) v[SV_KV_STATE] = k->groups[SV_KV_STATE] * k->state_blocks;
    long sum = 0;
    for (int i = 0; i < SV_KV_KINDS; i++) {
        sum += v[i];
        if (out) out[i] = v[i];
    }
    return sum;
}

long sv_kv_peak_blocks(const sv_kvspec_t *k, long len, long out[SV_KV_KINDS])
{
    long best[SV_KV_KINDS] = {0}, v[SV_KV_KINDS], bs = k->block_size, w = k->window;
    /* Every kind's count at rest is largest at len, at the last token before the window
     * starts sliding or a chunk ends, or (past the window, where the count repeats every
     * block) at one of the block's positions before len. */
    long at[3 + 2 * 64], n = 0;
    at[n++] = len;
    if (w > 0) {
        at[n++] = len < w - 1 ? len : w - 1;
        long chunk_end = len / w * w - 1;
        if (chunk_end > 0) at[n++] = chunk_end;
        for (long t = len - 1; t >= len - bs && t >= w && n < (long)(sizeof at / sizeof *at); t--)
            at[n++] = t;
    }
    for (long i = 0; i < n; i++) {
        sv_kv_blocks(k, at[i], at[i], v);
        for (int j = 0; j < SV_KV_KINDS; j++)
            if (v[j] > best[j]) best[j] = v[j];
    }
    long sum = 0;
    for (int j = 0; j < SV_KV_KINDS; j++) {
        sum += best[j];
        if (out) out[j] = best[j];
    }
    return sum;
}

long sv_perf_seq_blocks(const sv_perf_t *p, int block_size)
{
    double block = p->kv_bytes_token * block_size;
    return p->seq_state_bytes > 0 && block > 0 ? (long)ceil(p->seq_state_bytes / block) : 0;
}

void sv_small_op_elems(double d, double q, double kv, double f, int gated,
                       double out[SV_SMALL_COUNT])
{
    out[SV_SMALL_INPUT_NORM] = 2.0 * d;
    out[SV_SMALL_POST_NORM] = 2.0 * d;
    out[SV_SMALL_ROPE] = 2.0 * (q + kv);
    out[SV_SMALL_ACT] = gated ? 3.0 * f : 2.0 * f;
    out[SV_SMALL_ADD] = 3.0 * d;
}

/*
 * What the drafter holds: MTP and EAGLE one decoder layer's weights (a stage's mean layer)
 * and its KV (one more layer's per token), and every sequence the KV slots of its k draft
 * tokens. MTP needs a model that has next-n layers.
 */
static int spec_init(sv_perf_t *p, sv_error_t *err)
{
    if (p->set.spec_draft_step_s < 0) p->set.spec_draft_step_s = SPEC_DRAFT_STEP_S;
    int k = sv_spec_k(&p->set);
    if (k == 0) return 0;
    if (p->set.spec_method == SV_SPEC_MTP && p->model.mtp_layers < 1)
        return sv_errorf(err, SV_EINVAL,
                         "speculative: mtp needs a model with MTP layers "
                         "(num_nextn_predict_layers >= 1); model '%s' has none (use eagle)",
                         p->model.name);
    if (p->set.spec_method == SV_SPEC_DRAFT) return sv_spec_check(&p->set, err); /* the rest:
                                                                       sv_perf_draft_init */
    double L = p->stage_layers;
    double layer = (p->weight_bytes_gpu - p->embed_bytes_gpu - p->lm_head_params * EMBED_BYTES) / L;
    p->weight_bytes_gpu += layer;
    p->kv_bytes_token *= (L + 1.0) / L;
    p->kv_bytes_token_total *= (L + 1.0) / L;
    p->seq_state_bytes += k * p->kv_bytes_token;
    return 0;
}

/*
 * A draft model (speculative: draft) runs whole beside the target, on the same GPUs at the
 * same TP (vLLM's SpeculativeConfig takes draft_tensor_parallel_size = the target's TP when
 * not given, vllm/config/speculative.py; SGLang's draft worker joins the target's TP group),
 * from its own checkpoint's weight format (vLLM's speculative `quantization` defaults to the
 * checkpoint's) and in the target's KV format: vLLM allocates the draft's attention layers in
 * the same KV cache as the target's (vllm/v1/spec_decode/draft_model.py binds them with the
 * target's layers), so a block of block_size tokens holds both and the per-token KV is the
 * sum. Pipeline stages, expert and attention data parallelism with a draft model are not
 * modelled (vLLM V1 refuses speculative decoding with pipeline parallelism).
 */
int sv_spec_draft_check(const sv_perf_settings_t *s, const sv_model_t *target,
                        const sv_model_t *dm, sv_error_t *err)
{
    if (dm->vocab != target->vocab)
        return sv_errorf(err, SV_EINVAL,
                         "speculative_model: the draft '%s' has a vocabulary of %d tokens, the "
                         "target '%s' %d; a draft model must share the target's tokenizer",
                         dm->name, dm->vocab, target->name, target->vocab);
    if (s->pp > 1 || s->ep > 1 || s->dp_attention > 1)
        return sv_errorf(err, SV_EINVAL,
                         "speculative_model: a draft model runs with tensor parallelism only "
                         "(this layout has pp=%d, ep=%d, dp_attention=%d)",
                         s->pp > 1 ? s->pp : 1, s->ep > 1 ? s->ep : 1,
                         s->dp_attention > 1 ? s->dp_attention : 1);
    return 0;
}

int sv_perf_draft_init(sv_perf_t *p, sv_perf_t *draft, const sv_model_t *dm, sv_error_t *err)
{
    if (p->set.spec_method != SV_SPEC_DRAFT)
        return sv_errorf(err, SV_EINVAL, "speculative_model: a draft model is run with "
                                         "speculative: draft");
    int rc = sv_spec_draft_check(&p->set, &p->model, dm, err);
    if (rc) return rc;
    sv_perf_settings_t ds = p->set;
    ds.spec_method = SV_SPEC_NONE;
    ds.spec_k = ds.spec_naccept = 0;
    ds.spec_model[0] = '\0';
    ds.weight_dtype = SV_DT_BF16;
    ds.weight_dtype_given = 0;
    if ((rc = sv_perf_init(draft, &p->gpu, dm, &ds, err))) return sv_error_prefix(err, "speculative_model: draft '%s'", dm->name);
    p->draft = draft;
    p->weight_bytes_gpu += draft->weight_bytes_gpu;
    p->kv_bytes_token += draft->kv_bytes_token;
    p->kv_bytes_token_total += draft->kv_bytes_token_total;
    p->seq_state_bytes += sv_spec_k(&p->set) * p->kv_bytes_token;
    return 0;
}

/* ---- topology ------------------------------------------------------------------------ */

/*
 * NCCL's ring all-reduce over NVLink pairs joined by PCIe (sv_topology_t NVLINK_PAIRS) when the
 * TP group spans more than one pair: alpha-beta fitted to Vidur's a100_pairwise_nvlink
 * all_reduce.csv (microsoft/vidur data/profiling, 2,248 rows at 4 GPUs, median times): 55.2 us
 * + payload x 2 (n-1)/n at 23.56 GB/s of bus bandwidth, MAPE 1.3%, i.e. 0.736 of one direction
 * of PCIe Gen4 x16 (32 GB/s). The engines' custom one-shot all-reduces need every GPU pair on
 * NVLink (vLLM's custom_all_reduce checks full connectivity), so NCCL's latency applies
 * whatever link_latency_us says; link_bandwidth_gb_s given replaces the whole term.
 */
#define PAIRS_PCIE_ALPHA_S 55.2e-6
#define PAIRS_PCIE_EFF 0.736
#define PAIRS_PCIE_FIT_GPUS 4

static void pairs_allreduce(sv_perf_t *p)
{
    int n = p->attn_tp;
    const double *cv = p->set.curve;
    p->ar_alpha = PAIRS_PCIE_ALPHA_S + (n - PAIRS_PCIE_FIT_GPUS) * cv[SV_CV_LINK_RANK] * 1e-6;
    p->ar_inv_bw = 2.0 * (n - 1.0) / n / (p->set.link_bw / 2.0 * PAIRS_PCIE_EFF);
}

/* ---- the TP all-reduce by message size --------------------------------------------- */

/*
 * The engines' custom all-reduce (vLLM's custom_all_reduce.py and csrc/custom_all_reduce.cuh;
 * SGLang runs the same kernels from sgl-kernel, TensorRT-LLM its ONESHOT/TWOSHOT plugin):
 * world sizes 2, 4, 6 and 8 (vLLM's _SUPPORTED_WORLD_SIZES), messages up to 8 MiB (vLLM's
 * default max_size, 8192 x 1024 bytes), every pair of GPUs joined directly (vLLM disables it
 * beyond 2 GPUs without full NVLink: two GPUs of one NVLink pair are, PCIe-only nodes and a
 * group beyond one NVLink domain are not). One-shot below the thresholds of the kernel's
 * dispatch (any size at 2 GPUs; under 512 KiB up to 4 GPUs, under 256 KiB up to 8), two-shot
 * above them.
 */
#define AR_CUSTOM_MAX_BYTES (8192.0 * 1024.0)

static const struct {
    int max_gpus;    /* groups of up to this many GPUs */
    double one_shot; /* ... run one-shot below this many bytes */
} ar_one_shot_limits[] = {
    {2, AR_CUSTOM_MAX_BYTES + 1.0},
    {4, 512.0 * 1024.0},
    {8, 256.0 * 1024.0},
};

const char *const sv_ar_algo_names[SV_AR_COUNT] = {"one-shot", "two-shot", "nccl-ring", "nccl-nvls"};

/*
 * NCCL's NVLink SHARP all-reduce (NVLS, NCCL 2.17 and later; NCCL_NVLS_ENABLE, default 2:
 * on where the driver reports multicast support, src/transport/nvls.cc): the NVSwitch
 * reduces and multicasts, so each GPU sends its buffer and receives the result once,
 * (1 + 1/n) of the payload each way (a ring moves 2 (n-1)/n). NVSwitch of the third
 * generation (NVLink 4, 900 GB/s per GPU: HGX H100/H200) and later has it; A100's does not.
 * Its latency is the ring's fitted one: NCCL's own model puts NVLS's (25 us on NVLink,
 * src/graph/tuning.cc) between its low-latency ring's (15 us at 8 GPUs) and its simple
 * ring's (56 us), and the fit is one latency for all of NCCL's protocols, so NVLS wins on
 * bandwidth alone: at 8 GPUs always, at 2 never. Its efficiency is read from the NCCL maintainers' figure for 8 H100s, a peak bus bandwidth
 * of about 480 GB/s, algorithm bandwidth 275 GB/s (NVIDIA/nccl-tests#212; 475 GB/s on 8
 * H200s with NCCL 2.20, NVIDIA/nccl-tests#272): 275 x (1 + 1/8) = 309 GB/s one way, 0.686
 * of NVLink 4's 450. NCCL picks, per message, the algorithm its model says is faster; so
 * does sv_perf_allreduce.
 */
#define NVLS_EFFICIENCY 0.686
#define NVLS_MIN_LINK_BW 900e9

static int nvls_runs(const sv_perf_t *p, int pairs_pcie)
{
    int topo = p->gpu.topology, domain = p->gpu.nvlink_domain > 0 ? p->gpu.nvlink_domain : 8;
    return p->set.nccl_nvls && !p->set.ideal && !pairs_pcie && p->set.tp <= domain &&
           (topo == SV_TOPO_NVSWITCH || topo == SV_TOPO_NVL72) &&
           p->gpu.link_bw >= NVLS_MIN_LINK_BW && p->set.link_bw >= NVLS_MIN_LINK_BW;
}

static int custom_allreduce_runs(const sv_perf_t *p, int pairs_pcie)
{
    int n = p->attn_tp, topo = p->gpu.topology;
    int domain = p->gpu.nvlink_domain > 0 ? p->gpu.nvlink_domain : 8;
    if (!p->set.custom_allreduce || n > 8 || n % 2 || p->set.tp > domain || pairs_pcie)
        return 0;
    return topo == SV_TOPO_NVSWITCH || topo == SV_TOPO_NVL72 || topo == SV_TOPO_MESH ||
           (topo == SV_TOPO_NVLINK_PAIRS && n == 2);
}

double sv_perf_one_shot_limit(int n)
{
    for (size_t i = 0; i < sizeof ar_one_shot_limits / sizeof ar_one_shot_limits[0]; i++)
        if (n <= ar_one_shot_limits[i].max_gpus) return ar_one_shot_limits[i].one_shot;
    return 0.0;
}

double sv_perf_allreduce(const sv_perf_t *p, double bytes, sv_ar_algo_t *algo)
{
    int n = p->attn_tp;
    sv_ar_algo_t a = SV_AR_NCCL_RING;
    double t = 0.0;
    if (n < 2) {
        if (algo) *algo = SV_AR_ONE_SHOT;
        return 0.0;
    }
    if (p->ar_custom && bytes <= AR_CUSTOM_MAX_BYTES)
        a = bytes < sv_perf_one_shot_limit(n) ? SV_AR_ONE_SHOT : SV_AR_TWO_SHOT;
    /* One-shot: each rank reads the n-1 peers' whole buffers over its link; two-shot: a
     * reduce-scatter and an all-gather, (n-1)/n of the payload in each, and the latency of
     * its second pass (ar_two_shot_alpha). */
    if (a == SV_AR_ONE_SHOT)
        t = p->ar_custom_alpha + (n - 1.0) * bytes * p->ar_link_inv_bw;
    else if (a == SV_AR_TWO_SHOT)
        t = p->ar_two_shot_alpha + 2.0 * (n - 1.0) / n * bytes * p->ar_link_inv_bw;
    else {
        t = p->ar_alpha + bytes * p->ar_inv_bw;
        double nvls = p->ar_nvls_alpha + (1.0 + 1.0 / n) * bytes * p->ar_nvls_inv_bw;
        if (p->ar_nvls && nvls < t) {
            t = nvls;
            a = SV_AR_NCCL_NVLS;
        }
    }
    if (algo) *algo = a;
    return t;
}

/* ---- expert parallelism and attention data parallelism ------------------------------- */

/* Divisors of n up to 1024 that also divide tp: the degrees that work, for an error message. */
static void divisors_of(int n, int tp, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int e = 1; e <= tp && e <= 1024 && off < len - 1; e++)
        if (n % e == 0 && tp % e == 0)
            off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? ", " : "", e);
}

/*
 * The layouts engines accept (SGLang --tp/--dp/--enable-dp-attention/--ep, TensorRT-LLM
 * tp_size/moe_ep_size/enable_attention_dp, vLLM -tp/-dp/--enable-expert-parallel): EP ranks and
 * attention DP ranks are GPUs of the tp group, EP divides the routed experts, the attention
 * (tp / dp_attention) and MoE (tp / ep) TP degrees divide the heads and widths they split.
 */
static int layout_check(const sv_model_t *m, int tp, int ep, int dp, int pp, int red,
                        sv_error_t *err)
{
    char ok[256];
    if (!m->experts)
        return sv_errorf(err, SV_EINVAL,
                         "%s=%d: model '%s' has no routed experts (expert parallelism and "
                         "attention data parallelism are for MoE models; a dense model scales "
                         "out with replicas)",
                         ep > 1 ? "ep" : "dp_attention", ep > 1 ? ep : dp, m->name);
    if (tp % ep || tp % dp)
        return sv_errorf(err, SV_EINVAL,
                         "%s=%d does not divide tp=%d (tp counts every GPU of the replica; the "
                         "expert-parallel and attention data-parallel ranks are among them)",
                         tp % ep ? "ep" : "dp_attention", tp % ep ? ep : dp, tp);
    if (red > 0 && (m->experts + red) % ep) {
        divisors_of(m->experts + red, tp, ok, sizeof ok);
        return sv_errorf(err, SV_EINVAL,
                         "ep=%d does not divide the %d routed experts of model '%s' and their %d "
                         "redundant copies (ep_redundant_experts; EP degrees that work with "
                         "tp=%d: %s)",
                         ep, m->experts, m->name, red, tp, ok);
    }
    if (!red && m->experts % ep) {
        divisors_of(m->experts, tp, ok, sizeof ok);
        return sv_errorf(err, SV_EINVAL,
                         "ep=%d does not divide the %d routed experts of model '%s' (EP degrees "
                         "that work with tp=%d: %s)",
                         ep, m->experts, m->name, tp, ok);
    }
    int atp = tp / dp, mtp = tp / ep;
    if (m->heads % atp || (m->kv_heads % atp && atp % m->kv_heads) || m->ffn % atp ||
        (m->shared_ffn && m->shared_ffn % atp))
        return sv_errorf(err, SV_EINVAL,
                         "attention TP %d (tp=%d / dp_attention=%d) does not divide the %d %s "
                         "of model '%s'",
                         atp, tp, dp, m->heads % atp ? m->heads : m->kv_heads % atp ? m->kv_heads : m->ffn,
                         m->heads % atp ? "attention heads" : m->kv_heads % atp ? "KV heads" : "MLP width",
                         m->name);
    if (m->moe_ffn % mtp)
        return sv_errorf(err, SV_EINVAL,
                         "expert TP %d (tp=%d / ep=%d) does not divide the expert width %d of "
                         "model '%s'",
                         mtp, tp, ep, m->moe_ffn, m->name);
    if (dp > 1 && pp > 1)
        return sv_errorf(err, SV_EINVAL,
                         "dp_attention=%d with pp=%d is not modelled (attention data-parallel "
                         "ranks with pipeline stages); use one of them",
                         dp, pp);
    return 0;
}

void sv_perf_a2a_bytes(const sv_model_t *m, int ep, sv_ep_kernel_t kernel, double *dispatch,
                       double *combine)
{
    *dispatch = *combine = 0.0;
    if (ep <= 1 || !m->experts) return;
    double E = m->experts, k = m->experts_per_tok, per = E / ep, copies;
    if (kernel == SV_EPK_LOW_LATENCY) {
        copies = k * (ep - 1.0) / ep;
    } else {
        double none = 1.0; /* P(no expert of a given rank among the k): C(E - E/ep, k) / C(E, k) */
        for (int i = 0; i < m->experts_per_tok; i++)
            none *= fmax(0.0, (E - per - i) / (E - i));
        copies = (ep - 1.0) * (1.0 - none);
    }
    double d = m->hidden;
    *dispatch = copies * (d + ceil(d / 128.0) * 4.0); /* FP8 + one FP32 scale per 128 */
    *combine = copies * d * ACT_BYTES;
}

/*
 * Dispatch/combine link parameters per kernel (index sv_ep_kernel_t; 0 unused): latency per
 * operation and achieved share of one link direction. From DeepEP's published H800 figures
 * (github.com/deepseek-ai/DeepEP, docs/legacy.md "Performance", the V1 kernels): normal
 * kernels 153-158 GB/s over NVLink of a ~200 GB/s direction (0.77) and 43-58 GB/s RDMA over
 * a 400 Gb/s CX7 (~50 GB/s, 0.9). The low-latency kernels over the scale-out network are
 * fitted to V1's low-latency table (128 tokens a rank, hidden 7168, top-8, FP8 dispatch and
 * BF16 combine; EP 16, 32, 64, 128, 256: dispatch 118, 155, 173, 192, 194 us, combine 195,
 * 273, 314, 369, 360 us) with this model's bytes (sv_perf_a2a_bytes) and its split of the
 * peers between NVLink (7 of them) and the scale-out NIC: alpha + bytes off the node /
 * (eff x 50 GB/s), relative least squares over the ten figures: 27 us and 0.87 (MAPE 2.5%;
 * the hand-set 10 us and 0.8 before gave 3.4%). The NVLink latencies, the normal kernels'
 * latencies and the low-latency NVLink share are set by hand: no figure separates them
 * (V1's low-latency kernels ran over RDMA even within a node, and InferenceX's one
 * DP-attention condition is ruled by its scheduling, docs/validation.md).
 */
static const struct {
    double alpha_us[3], eff[3];
} A2A_NVLINK = {{0, 10, 40}, {0, 0.5, 0.77}}, A2A_SCALEOUT = {{0, 27, 40}, {0, 0.87, 0.9}};

/* The all-to-all coefficients of a layout with dp_attention > 1 and ep > 1. */
static void a2a_init(sv_perf_t *p, int domain)
{
    int ep = p->ep;
    /* EP ranks beyond one NVLink domain send the share of their peers outside it over the
     * scale-out network (pp_link_bandwidth_gb_s per GPU), the rest over NVLink. */
    double f_nv = ep <= domain ? 1.0 : (domain - 1.0) / (ep - 1.0);
    for (int k = 1; k < 3; k++) {
        double nv = p->gpu.link_bw / 2.0 * A2A_NVLINK.eff[k];
        double so = p->set.pp_link_bw * A2A_SCALEOUT.eff[k];
        p->a2a_alpha[k] = (f_nv < 1.0 ? A2A_SCALEOUT.alpha_us[k] : A2A_NVLINK.alpha_us[k]) * 1e-6;
        p->a2a_inv_bw[k] = fmax(f_nv / nv, (1.0 - f_nv) / so);
        sv_perf_a2a_bytes(&p->model, ep, (sv_ep_kernel_t)k, &p->a2a_bytes[k][0], &p->a2a_bytes[k][1]);
    }
}

/*
 * The slowest attention data-parallel rank of a batch: sequences dealt round-robin over the
 * ranks (prefill chunks first), rank 0 holds ceil(n / dp) of them. Sets *j to that rank and
 * *moe_T to the tokens of all ranks (the experts see them all); returns the number of ranks.
 */
static int dp_rank_deal(const sv_batch_t *b, int dp, int *j, double *moe_T)
{
    double all = (double)b->n_decode;
    for (int i = 0; i < b->n_chunks; i++)
        if (b->chunks[i].new_tokens > 0) all += (double)b->chunks[i].new_tokens;
    *moe_T = all;
    *j = 0;
    return dp;
}

/* Dispatch and combine of every MoE layer for the slowest rank's T tokens. */
static void a2a_step(const sv_perf_t *p, const sv_batch_t *b, double T, sv_step_cost_t *out)
{
    int k = p->set.ep_kernel;
    if (k == SV_EPK_AUTO) k = b->n_chunks > 0 ? SV_EPK_HIGH_THROUGHPUT : SV_EPK_LOW_LATENCY;
    double per = 2.0 * p->a2a_alpha[k] + T * (p->a2a_bytes[k][0] + p->a2a_bytes[k][1]) * p->a2a_inv_bw[k];
    out->a2a = p->x.moe_layers * per;
    out->a2a_kernel = k;
    out->comm += out->a2a;
}

/* The weight format from the model's checkpoint_dtype unless weight_dtype is given
 * (sv_perf_init's first step): the experts' format, and the rest's unless only the experts
 * are quantised. */
static int perf_checkpoint(sv_perf_t *p, const sv_perf_settings_t *s, sv_error_t *err)
{
    const sv_model_t *model = &p->model;
    sv_dtype_t ckpt = SV_DT_BF16;
    if (!s->weight_dtype_given && model->ckpt_dtype[0] && sv_dtype_parse(model->ckpt_dtype, &ckpt))
        return sv_errorf(err, SV_EINVAL, "model '%s': unknown checkpoint_dtype '%s'", model->name,
                         model->ckpt_dtype);
    p->x.expert_dtype = s->weight_dtype;
    if (!s->weight_dtype_given && model->ckpt_dtype[0]) {
        p->x.expert_dtype = ckpt;
        if (!model->ckpt_experts_only) p->set.weight_dtype = ckpt;
    }
    return 0;
}

int sv_perf_pp_split(const sv_model_t *m, const sv_perf_settings_t *s, unsigned short *out,
                     sv_error_t *err)
{
    int pp = s->pp < 1 ? 1 : s->pp, L = m->layers, sum = 0;
    if (s->pp_split_n) {
        if (s->pp_split_n != pp)
            return sv_errorf(err, SV_EINVAL,
                             "pp_layer_partition: %d stage(s) given for pp=%d (one count of "
                             "layers per stage)",
                             s->pp_split_n, pp);
        for (int i = 0; i < pp; i++)
            sum += out[i] = s->pp_split[i];
        if (sum != L)
            return sv_errorf(err, SV_EINVAL,
                             "pp_layer_partition: its stages hold %d layers; model '%s' has %d",
                             sum, m->name, L);
        return 0;
    }
    if (pp > L)
        return sv_errorf(err, SV_EINVAL,
                         "pp=%d exceeds the %d layers of model '%s' (each pipeline stage holds "
                         "at least one)",
                         pp, L, m->name);
    for (int i = 0; i < pp; i++)
        out[i] = (unsigned short)(L / pp);
    for (int i = 2; i < L % pp + 2; i++)
        out[pp - i]++;
    return 0;
}

/* The stages' layers (sv_perf_pp_split) and the heaviest stage's: stage_layers,
 * stage_share, stage_equiv. */
static int pp_stages(sv_perf_t *p, const sv_perf_settings_t *s, sv_error_t *err)
{
    int rc = sv_perf_pp_split(&p->model, s, p->pp_layers, err);
    if (rc) return rc;
    int pp = s->pp < 1 ? 1 : s->pp, L = p->model.layers, most = 0;
    for (int i = 0; i < pp; i++)
        if (p->pp_layers[i] > most) most = p->pp_layers[i];
    p->pp_uneven = most * pp != L;
    p->stage_layers = most;
    p->stage_share = (double)most / L;
    p->stage_equiv = (double)L / most;
    return 0;
}

/* Checks the parallel layout, the KV and weight formats against the GPU and the block size
 * (the settings as given, before the checkpoint's format); sets ep, dp and attn_tp. */
static int perf_layout(sv_perf_t *p, const sv_perf_settings_t *s, sv_error_t *err)
{
    const sv_gpu_t *gpu = &p->gpu;
    const sv_model_t *m = &p->model;
    int tp = s->tp;
    char ok[128];
    if (tp < 1) return sv_errorf(err, SV_EINVAL, "tp must be >= 1, got %d", tp);
    int ep = s->ep < 1 ? 1 : s->ep, dp = s->dp_attention < 1 ? 1 : s->dp_attention;
    int rc;
    if ((ep > 1 || dp > 1) &&
        (rc = layout_check(m, tp, ep, dp, s->pp, ep > 1 ? s->ep_redundant : 0, err)))
        return rc;
    p->ep = ep;
    p->dp = dp;
    p->attn_tp = tp / dp;
    if (ep == 1 && dp == 1 && (m->heads % tp || (m->kv_heads % tp && tp % m->kv_heads) || m->ffn % tp ||
        (m->experts && m->moe_ffn % tp))) {
        valid_tps(m, ok, sizeof ok);
        const char *what = m->heads % tp                            ? "attention heads"
                           : (m->kv_heads % tp && tp % m->kv_heads) ? "KV heads"
                                                                    : "MLP width";
        int count = m->heads % tp                            ? m->heads
                    : (m->kv_heads % tp && tp % m->kv_heads) ? m->kv_heads
                    : (m->ffn % tp)                          ? m->ffn
                                                             : m->moe_ffn;
        return sv_errorf(err, SV_EINVAL,
                         "tp=%d does not divide the %d %s of model '%s' (TP degrees that work: %s)",
                         tp, count, what, m->name, ok);
    }
    if ((rc = pp_stages(p, s, err))) return rc;
    if (s->kv_dtype == SV_DT_INT4)
        return sv_errorf(err, SV_EINVAL,
                         "kv_cache_dtype int4 is not supported (use bf16, fp16 or fp8)");
    for (int kv = 0; kv < 2; kv++) {
        sv_dtype_t t = kv ? s->kv_dtype : s->weight_dtype;
        int bit = t == SV_DT_NVFP4 ? SV_FP4_NVFP4 : t == SV_DT_MXFP4 ? SV_FP4_MXFP4 : 0;
        if (bit && !(gpu->fp4_formats & bit))
            return sv_errorf(err, SV_EINVAL,
                             "%s %s: GPU '%s' has no %s tensor cores (fp4_formats in the "
                             "catalog: %s)",
                             kv ? "kv_cache_dtype" : "weight_dtype", sv_dtype_name(t), gpu->name,
                             sv_dtype_name(t),
                             gpu->fp4_formats == 3   ? "nvfp4, mxfp4"
                             : gpu->fp4_formats == 1 ? "nvfp4"
                             : gpu->fp4_formats == 2 ? "mxfp4"
                                                     : "none");
    }
    if (s->block_size < 1) return sv_errorf(err, SV_EINVAL, "block_size must be >= 1");
    return 0;
}

/* Fills the settings left at -1 from the GPU's catalog entry and the built-in defaults;
 * says whether an NVLink-pairs GPU's TP group runs over PCIe and whether the link
 * bandwidth was given. */
static void perf_defaults(sv_perf_t *p, int *pairs_pcie, int *link_given)
{
    const sv_gpu_t *gpu = &p->gpu;
    sv_perf_settings_t *r = &p->set;
    int tp = r->tp, domain = gpu->nvlink_domain > 0 ? gpu->nvlink_domain : 8;
    if (r->compute_eff < 0) r->compute_eff = gpu->compute_eff;
    if (r->memory_eff < 0) r->memory_eff = gpu->memory_eff;
    if (r->iter_overhead_s < 0) r->iter_overhead_s = gpu->iter_overhead_s;
    if (r->layer_overhead_s < 0) r->layer_overhead_s = gpu->layer_overhead_s;
    if (r->pp_link_bw < 0) r->pp_link_bw = 50e9;
    /* A TP group larger than one NVLink domain all-reduces over the scale-out network
     * (both directions of pp_link_bandwidth_gb_s) unless link_bandwidth_gb_s is given. */
    /* NVLink pairs over PCIe: a TP group beyond one pair runs its ring through PCIe. */
    *pairs_pcie = gpu->topology == SV_TOPO_NVLINK_PAIRS && p->attn_tp > 2;
    *link_given = r->link_bw >= 0;
    if (r->link_bw < 0 && *pairs_pcie) r->link_bw = gpu->pcie_bw;
    if (r->link_bw < 0) r->link_bw = tp > domain ? 2.0 * r->pp_link_bw : gpu->link_bw;
    if (r->link_latency < 0) r->link_latency = gpu->link_latency;
    if (r->seq_overhead_s < 0) r->seq_overhead_s = 0.0;
    if (r->cuda_graphs < 0) r->cuda_graphs = 1;
    if (r->custom_allreduce < 0) r->custom_allreduce = 0;
    if (r->nccl_nvls < 0) r->nccl_nvls = 1;
    if (r->graph_max_tokens < 0) r->graph_max_tokens = 512;
    for (int k = 0; k < SV_CV_COUNT; k++)
        if (r->curve[k] < 0)
            r->curve[k] = isnan(gpu->curve[k]) ? sv_curve_default[k] : gpu->curve[k];
}

/* The GEMM and attention tensor-core peaks of the resolved weight format, scaled to the
 * power limit if one is set. */
static int perf_peaks(sv_perf_t *p, sv_error_t *err)
{
    const sv_gpu_t *gpu = &p->gpu;
    const sv_perf_settings_t *s = &p->set;
    /* FP4 weights run as W4A4 on FP4 tensor cores (NVFP4/MXFP4 GEMMs quantise the
     * activations too), FP8 weights on FP8 tensor cores when the GPU has them. */
    p->compute_peak = SV_DT_IS_FP4(s->weight_dtype)                          ? gpu->fp4_flops
                      : (s->weight_dtype == SV_DT_FP8 && gpu->fp8_flops > 0) ? gpu->fp8_flops
                                                                             : gpu->bf16_flops;
    p->attn_peak = gpu->bf16_flops;
    if (s->power_limit_w > 0) {
        double lo, hi;
        sv_perf_power_range(gpu, &lo, &hi);
        if (s->power_limit_w < lo || s->power_limit_w > hi)
            return sv_errorf(err, SV_EINVAL,
                             "power_limit_w: %g W is outside the %s's range of %g to %g W (a "
                             "quarter of its TDP to its TDP)",
                             s->power_limit_w, gpu->name, lo, hi);
        double k = sv_perf_power_scale(gpu, s->power_limit_w);
        p->compute_peak *= k;
        p->attn_peak *= k;
    }
    return 0;
}

/* The memory plan: local head and MLP widths, weight bytes per GPU and in all, and KV
 * bytes per token; returns the embedding and LM head bytes of the heaviest GPU. */
static double perf_memory(sv_perf_t *p)
{
    const sv_model_t *m = &p->model;
    sv_perf_settings_t *r = &p->set;
    int tp = r->tp, dp = p->dp, pp = r->pp < 1 ? 1 : r->pp;
    int atp = p->attn_tp; /* = tp without attention data parallelism */
    p->heads_local = m->heads / atp;
    p->kv_heads_local = kv_heads_per_gpu(m, atp);
    p->ffn_local = m->ffn / atp;
    /* Expert-MLP width per rank token: a GPU computes tokens x k x moe_ffn / tp of it. */
    p->moe_ffn_local = m->experts ? m->moe_ffn * dp / tp : 0;

    double wb = sv_dtype_weight_bytes(r->weight_dtype);
    layer_params_t lp = layer_params(m, tp);
    p->layer_linear_params = lp.attn + lp.mlp + lp.router;
    p->expert_params = lp.expert;
    double vocab_local = ceil((double)m->vocab / atp);
    p->embed_bytes_gpu = vocab_local * m->hidden * EMBED_BYTES;
    p->lm_head_params = vocab_local * m->hidden;
    double Ls = p->stage_layers; /* layers of the heaviest pipeline stage (pp_stages) */
    r->pp = pp;
    double layer_bytes =
        (lp.attn + lp.mlp + lp.expert * m->experts) * wb + (lp.router + lp.norms) * EMBED_BYTES;
    double decoder = Ls * layer_bytes;
    /* NVFP4 keeps one FP32 global scale per weight tensor (q, k, v, o, gate, up, down or
     * up, down, and each expert's), held by every GPU of the replica. */
    double tensor_scales =
        r->weight_dtype == SV_DT_NVFP4
            ? 4.0 * m->layers * (4.0 + (m->gated_mlp ? 3.0 : 2.0) * (m->experts ? m->experts : 1))
            : 0.0;
    decoder += tensor_scales / pp;
    /* Without PP one GPU holds the embedding and the LM head; with PP the first stage
     * holds the embedding, the last the LM head and the final norm: the heavier counts. */
    double last = last_stage_extra(p);
    double head = pp > 1 ? fmax(p->embed_bytes_gpu, last)
                         : m->hidden * EMBED_BYTES + p->embed_bytes_gpu +
                               (m->tied_embeddings ? 0.0 : p->lm_head_params * EMBED_BYTES);
    p->weight_bytes_gpu = decoder + head;
    if (p->pp_uneven)
        p->weight_bytes_gpu = heaviest_stage(p, layer_bytes + tensor_scales / m->layers);
    layer_params_t lp1 = layer_params(m, 1);
    double full_embed = (double)m->vocab * m->hidden * EMBED_BYTES;
    p->weight_bytes_total = m->layers * ((lp1.attn + lp1.mlp + lp1.expert * m->experts) * wb +
                                         (lp1.router + lp1.norms) * EMBED_BYTES) +
                            m->hidden * EMBED_BYTES +
                            full_embed * (m->tied_embeddings ? 1.0 : 2.0) + tensor_scales;

    double kvb = sv_dtype_kv_bytes(r->kv_dtype);
    p->kv_bytes_token_layer = 2.0 * p->kv_heads_local * m->head_dim * kvb;
    p->kv_bytes_token = p->kv_bytes_token_layer * Ls;
    p->kv_bytes_token_total = p->kv_bytes_token * tp * (p->pp_uneven ? p->stage_equiv : pp);
    return head;
}

/* The compute, memory and element-wise-kernel coefficients of sv_perf_step. */
static void perf_coefficients(sv_perf_t *p)
{
    const sv_gpu_t *gpu = &p->gpu;
    const sv_model_t *m = &p->model;
    const sv_perf_settings_t *r = &p->set;
    const double *cv = r->curve;
    double L = p->stage_layers, d = m->hidden;
    double q = (double)p->heads_local * m->head_dim, kv = (double)p->kv_heads_local * m->head_dim;
    p->inv_lin_c = 1.0 / (p->compute_peak * r->compute_eff);
    p->inv_attn_c = 1.0 / (p->attn_peak * cv[SV_CV_ATTN_EFF]);
    p->inv_lm_c = 1.0 / (p->attn_peak * r->compute_eff); /* BF16, as attention */
    p->inv_mem = 1.0 / (gpu->hbm_bw * r->memory_eff);
    p->inv_attn_mem = 1.0 / (gpu->hbm_bw * cv[SV_CV_ATTN_MEM_EFF]);
    p->m_half = cv[SV_CV_GEMM_M_HALF];
    p->attn_n_half = cv[SV_CV_ATTN_N_HALF];
    /* QKV, O, up (gate+up fused), down: 4 GEMMs per layer (+ the router for MoE). */
    p->gemm_floor_step = L * (m->experts ? 5.0 : 4.0) * cv[SV_CV_GEMM_FLOOR] * 1e-6;
    if (!r->ideal) {
        /* The six element-wise kernels of a layer (sv_small_op_elems). */
        double f = m->experts ? (double)p->moe_ffn_local * m->experts_per_tok : p->ffn_local;
        double e[SV_SMALL_COUNT];
        sv_small_op_elems(d, q, kv, f, m->gated_mlp, e);
        double norm = e[SV_SMALL_INPUT_NORM] + e[SV_SMALL_POST_NORM];
        double other = 2.0 * e[SV_SMALL_ADD] + e[SV_SMALL_ACT] + e[SV_SMALL_ROPE];
        p->small_bytes_tok = L * (norm + other) * ACT_BYTES;
        /* The norms are reductions and reach less of the bandwidth than the rest. */
        p->small_s_tok =
            L * ACT_BYTES / gpu->hbm_bw * (norm / cv[SV_CV_NORM_EFF] + other / cv[SV_CV_SMALL_EFF]);
        p->small_floor_step = L * 6.0 * cv[SV_CV_SMALL_FLOOR] * 1e-6;
    }
    p->attn_seq_step = L * cv[SV_CV_ATTN_SEQ] * 1e-6;
    p->prefill_slow = 1.0 / cv[SV_CV_PREFILL_EFF] - 1.0;
    p->prefill_request_s = cv[SV_CV_PREFILL_REQUEST] * 1e-3;
}

/* The collectives: the TP all-reduce, the all-to-all of expert parallelism under
 * attention data parallelism, and the pipeline's send/recv between stages. */
static void perf_collectives(sv_perf_t *p, int pairs_pcie, int link_given)
{
    const sv_gpu_t *gpu = &p->gpu;
    const sv_perf_settings_t *r = &p->set;
    const double *cv = r->curve;
    int atp = p->attn_tp, tp = r->tp, pp = r->pp, ep = p->ep, dp = p->dp;
    int domain = gpu->nvlink_domain > 0 ? gpu->nvlink_domain : 8;
    if (atp > 1) {
        double rank = (atp - 2.0) * cv[SV_CV_LINK_RANK] * 1e-6;
        /* One direction of a GPU's link carries half the catalog's bidirectional figure. */
        p->ar_link_inv_bw = 1.0 / (r->link_bw / 2.0 * cv[SV_CV_LINK_EFF]);
        /* NCCL's ring: 2 (TP-1)/TP of the payload crosses each GPU's link one way, at the
         * catalog's fitted NCCL latency where the engine has a custom kernel (link_latency_us
         * is then the kernel's), else at link_latency_us. */
        double nccl = r->custom_allreduce ? gpu->link_latency : r->link_latency;
        p->ar_alpha = (r->ideal ? 0.0 : nccl) + rank;
        p->ar_inv_bw = 2.0 * (atp - 1.0) / atp * p->ar_link_inv_bw;
        p->ar_custom = custom_allreduce_runs(p, pairs_pcie);
        p->ar_custom_alpha = r->link_latency + rank;
        /* The engine's threshold S is where the two cost the same: two-shot's second pass
         * costs what one-shot's extra bytes take there, (n-1)(1 - 2/n) S one way. */
        double lim = sv_perf_one_shot_limit(atp);
        if (lim > AR_CUSTOM_MAX_BYTES) lim = 0.0; /* two GPUs: one-shot at every size */
        p->ar_two_shot_alpha =
            p->ar_custom_alpha + (atp - 1.0) * (1.0 - 2.0 / atp) * lim * p->ar_link_inv_bw;
        p->ar_nvls = nvls_runs(p, pairs_pcie);
        p->ar_nvls_alpha = p->ar_alpha;
        p->ar_nvls_inv_bw = 1.0 / (r->link_bw / 2.0 * NVLS_EFFICIENCY);
    }
    if (pairs_pcie && !link_given) pairs_allreduce(p);
    if (dp > 1 && ep > 1) a2a_init(p, domain);
    if (pp > 1) {
        /* Stages inside one NVLink domain send over it (one direction: half the
         * bidirectional figure), else over the scale-out network (pp_link_bandwidth_gb_s,
         * default 50 GB/s: one 400 Gb/s NIC per GPU as in DGX/HGX nodes); at the fitted
         * send/recv efficiency and latency. */
        p->pp_nvlink = tp * pp <= domain;
        double bw = p->pp_nvlink ? r->link_bw / 2.0 : r->pp_link_bw;
        p->p2p_alpha = cv[SV_CV_P2P_LAT] * 1e-6;
        p->p2p_inv_bw = 1.0 / (bw * P2P_EFFICIENCY);
    }
}

/* The dense linear layers' terms of stage_step that do not depend on the batch, each
 * summed in the order stage_step summed it (the same bits). */
static void linear_init(sv_perf_t *p)
{
    const sv_model_t *m = &p->model;
    double L = p->stage_layers, d = m->hidden, hd = m->head_dim;
    double q = p->heads_local * hd, kv = p->kv_heads_local * hd;
    double wb = sv_dtype_weight_bytes(p->set.weight_dtype);
    double fl = p->ffn_local, mats = m->gated_mlp ? 3.0 : 2.0;
    double act_attn = (d + q + 2.0 * kv) + (q + d);
    double act_mlp = m->experts ? m->experts_per_tok *
                                      (d + (mats - 1.0) * p->moe_ffn_local + p->moe_ffn_local + d)
                                : (d + (mats - 1.0) * fl + fl + d);
    p->lin_act = act_attn + act_mlp;
    p->lin_bytes_fixed = L * (p->layer_linear_params - (m->experts ? d * m->experts : 0.0)) * wb +
                         L * (m->experts ? d * m->experts : 0.0) * EMBED_BYTES +
                         L * 2.0 * d * EMBED_BYTES;
}

/* The step's invariants (sv_perf_t.q_width to lm_w_bytes). */
static void step_invariants(sv_perf_t *p)
{
    double L = p->stage_layers, d = p->model.hidden;
    double q = p->heads_local * p->model.head_dim;
    p->q_width = q;
    p->hidden_d = d;
    p->window_d = p->model.sliding_window;
    p->tp_d = p->set.tp;
    p->graph_max_d = (double)p->set.graph_max_tokens;
    p->pf_flops_pair = 4.0 * q;
    p->dec_flops_layer = L * 4.0 * q;
    p->lm_vocab = p->lm_head_params / d;
    p->lm_w_bytes = p->lm_head_params * EMBED_BYTES;
}

int sv_perf_init(sv_perf_t *p, const sv_gpu_t *gpu, const sv_model_t *model,
                 const sv_perf_settings_t *s, sv_error_t *err)
{
    memset(p, 0, sizeof *p);
    p->gpu = *gpu;
    p->model = *model;
    p->set = *s;
    int rc, pairs_pcie, link_given;
    if ((rc = perf_checkpoint(p, s, err)) || (rc = perf_layout(p, s, err))) return rc;
    /* from here on, the weight format resolved with the checkpoint's (p->set) */
    perf_defaults(p, &pairs_pcie, &link_given);
    if ((rc = perf_peaks(p, err))) return rc;
    double head = perf_memory(p);
    perf_coefficients(p);
    perf_collectives(p, pairs_pcie, link_given);
    p->lm_floor = p->gemm_floor_step / p->stage_layers / 4.0;
    p->ext = model_ext(&p->model);
    if (p->ext) arch_init(p, head);
    linear_init(p);
    if ((rc = spec_init(p, err))) return rc;
    kv_groups(p);
    step_invariants(p);
    p->plain = p->set.pp <= 1 && p->dp <= 1 && !p->ext && !(p->prefill_slow > 0) &&
               !(p->prefill_request_s > 0);
    p->memo_ok = p->set.pp <= 1 && p->dp <= 1 && !p->ext && sv_spec_k(&p->set) == 0;
    return 0;
}

/* ---- one iteration ------------------------------------------------------------------ */

const char *sv_op_name(int op)
{
    static const char *const names[] = {"linear", "attention_prefill", "attention_decode",
                                        "lm_head", "small_ops"};
    return (op >= 0 && op < SV_OP_COUNT) ? names[op] : "?";
}

double sv_perf_attended(const sv_perf_t *p, double ctx)
{
    /* With windows on some layers only, sv_perf_step applies each layer's own. */
    if (p->ext) return ctx;
    double w = p->model.sliding_window;
    return (w > 0 && ctx > w) ? w : ctx;
}

/* Sum over the new positions c+1 .. c+n of the keys each attends to (window applied). */
static double causal_keys(double n, double c, double w)
{
    double hi = c + n;
    if (w <= 0 || hi <= w) return n * c + n * (n + 1.0) / 2.0;
    double sum = 0.0;
    if (c < w) sum += (w * (w + 1.0) - c * (c + 1.0)) / 2.0; /* positions c+1 .. w */
    sum += (hi - sv_fmax(c, w)) * w;                         /* positions past the window */
    return sum;
}

static void finish_op(sv_op_cost_t *o, double t_compute, double t_memory, double t_fixed)
{
    o->t_compute = t_compute;
    o->t_memory = t_memory;
    o->t_fixed = t_fixed;
    o->time = sv_fmax(t_compute, t_memory) + t_fixed;
}

/* Sequences s in [a, b) with s % m == j. */
static double count_mod(long a, long b, long j, long m)
{
    long hi = b > j ? (b - j - 1) / m + 1 : 0, lo = a > j ? (a - j - 1) / m + 1 : 0;
    return (double)(hi - lo);
}

/* Decode attention (the non-extended architectures'): every cached token of every
 * sequence is read once per layer, at the paged kernel's bandwidth, plus its fixed cost per
 * sequence per layer (a verify step's v tokens read it once and each attend to it). */
static void decode_attention(const sv_perf_t *p, double nd, double ctx_sum, double v,
                             sv_op_cost_t *ad)
{
    double L = p->stage_layers, q = p->q_width;
    double kvtl = p->kv_bytes_token_layer;
    ad->flops = p->dec_flops_layer * v * (ctx_sum + nd); /* L 4 q v (ctx_sum + nd) */
    ad->bytes = L * (ctx_sum * kvtl + v * nd * kvtl + 2.0 * v * nd * q * ACT_BYTES);
    finish_op(ad, ad->flops * p->inv_attn_c, ad->bytes * p->inv_attn_mem, nd * p->attn_seq_step);
}

static void stage_step(const sv_perf_t *p, const sv_batch_t *b, int j, int m_mb,
                       sv_step_cost_t *out);

/* The terms past the operators, each zeroed (the struct has no padding, so every byte). */
static inline void zero_terms(sv_step_cost_t *out)
{
    out->comm = out->a2a = 0.0;
    out->a2a_kernel = out->ar_algo = 0;
    out->rank_seqs = 0;
    out->eng_step = out->eng_seq = out->eng_launch = out->overhead = 0.0;
    out->pp_send = out->pp_bubble = out->total = 0.0;
    out->tokens = 0;
    out->spec_verify = out->spec_draft = out->spec_len = out->spec_cpu = 0.0;
    out->micro_batches = out->compute_bound = 0;
}

/*
 * One stage's work on micro-batch j of m (sequences dealt round-robin: chunks first, then
 * the decode sequences), without the engine's per-step costs; j = 0, m = 1 is the batch.
 * plain (a constant where it is inlined): the caller has p->plain, and j = 0, m = 1, so
 * the branches of pipelines, attention data parallelism, the extended architectures and
 * the context phase are compiled out; the same operations otherwise, in the same order.
 */
static inline __attribute__((always_inline)) void stage_step_in(const sv_perf_t *p,
                                                                const sv_batch_t *b, int j,
                                                                int m_mb, sv_step_cost_t *out,
                                                                const int plain)
{
    /* Every byte of *out is written: the terms past the operators zeroed here, the
     * operators' fields each assigned below (the extended architectures' zeroed first). */
    zero_terms(out);
    const sv_model_t *m = &p->model;
    double L = p->stage_layers, d = p->hidden_d, q = p->q_width;
    double kvtl = p->kv_bytes_token_layer;
    double w = p->window_d;

    /* Prefill attention: flash-attention efficiency rises with the chunk length n as
     * n / (n + n_half), so each chunk's FLOPs count (n + n_half) / n times. */
    double prefill_tokens = 0.0, logits = (double)b->n_decode, attn_eff_flops = 0.0;
    sv_op_cost_t *ap = &out->op[SV_OP_ATTN_PREFILL];
    double nd = b->n_decode, ctx_sum = b->decode_ctx_sum, moe_T = 0.0;
    if (!plain && p->dp > 1) m_mb = dp_rank_deal(b, p->dp, &j, &moe_T); /* pp is 1 here */
    if (!plain && m_mb > 1) {
        double share = count_mod(b->n_chunks, b->n_chunks + b->n_decode, j, m_mb);
        ctx_sum = b->n_decode > 0 ? ctx_sum * share / (double)b->n_decode : 0.0;
        nd = share;
        logits = nd;
    }
    double T;
    if (!plain && p->ext) {
        memset(out->op, 0, sizeof out->op);
        T = arch_ops(p, b, j, m_mb, nd, ctx_sum, moe_T, &logits, out);
        out->tokens = (long)T;
        if (T <= 0) return;
    } else {
        double ap_flops = 0.0, ap_bytes = 0.0;
        for (int i = 0; i < b->n_chunks; i++) {
            double n = (double)b->chunks[i].new_tokens, c = (double)b->chunks[i].cached_tokens;
            if (n <= 0 || (!plain && i % m_mb != j)) continue;
            prefill_tokens += n;
            if (b->chunks[i].last) logits += 1.0;
            double fl = p->pf_flops_pair * causal_keys(n, c, w); /* 4 q keys */
            ap_flops += fl;
            attn_eff_flops += fl * (n + p->attn_n_half) / n;
            double keys_read = (w > 0 ? sv_fmin(c, w) : c) + n;
            ap_bytes += 2.0 * n * q * ACT_BYTES + keys_read * kvtl + n * kvtl;
        }

        double v = b->verify > 1 ? b->verify : 1.0; /* tokens per decode sequence (verify) */
        logits += nd * (v - 1.0);
        T = prefill_tokens + nd * v;
        out->tokens = (long)T;
        if (T <= 0) {
            memset(out->op, 0, sizeof out->op);
            return;
        }
        ap->flops = ap_flops * L;
        ap->bytes = ap_bytes * L;

        /* Dense linear layers: weights read once, activations in and out of each matmul;
         * GEMM efficiency at T tokens is compute_eff x T / (T + m_half). */
        sv_op_cost_t *li = &out->op[SV_OP_LINEAR];
        li->flops = 2.0 * T * L * p->layer_linear_params;
        li->bytes =
            p->lin_bytes_fixed + T * d * EMBED_BYTES / p->tp_d + T * L * p->lin_act * ACT_BYTES;
        if (!plain && m->experts) {
            double E = m->experts, k = m->experts_per_tok;
            double touched = E * (1.0 - pow(1.0 - k / E, T)); /* expected distinct experts */
            li->flops += 2.0 * T * k * L * p->expert_params;
            li->bytes += L * touched * p->expert_params * sv_dtype_weight_bytes(p->set.weight_dtype);
        }
        double slow = (T + p->m_half) / T;
        finish_op(li, li->flops * p->inv_lin_c * slow, li->bytes * p->inv_mem, p->gemm_floor_step);
        finish_op(ap, attn_eff_flops * L * p->inv_attn_c, ap->bytes * p->inv_mem, 0.0);

        if (nd > 0) decode_attention(p, nd, ctx_sum, v, &out->op[SV_OP_ATTN_DECODE]);
        else memset(&out->op[SV_OP_ATTN_DECODE], 0, sizeof(sv_op_cost_t));
    }

    /* LM head: the vocabulary projection for each token that yields a next token (a GEMM
     * with M = logits; it stays 16-bit). */
    sv_op_cost_t *lm = &out->op[SV_OP_LM_HEAD];
    if (logits > 0) {
        double vl = p->lm_vocab;
        lm->flops = 2.0 * logits * p->lm_head_params;
        lm->bytes = p->lm_w_bytes + logits * d * ACT_BYTES + logits * vl * LOGIT_BYTES;
        finish_op(lm, lm->flops * p->inv_lm_c * (logits + p->m_half) / logits,
                  lm->bytes * p->inv_mem, p->lm_floor);
    } else {
        memset(lm, 0, sizeof *lm);
    }

    /* Norms, rotary, activation and residual adds: memory-bound over T x d. */
    sv_op_cost_t *sm = &out->op[SV_OP_SMALL];
    sm->flops = 0.0;
    sm->bytes = T * p->small_bytes_tok;
    finish_op(sm, 0.0, T * p->small_s_tok, p->small_floor_step);

    if (p->attn_tp > 1) {
        sv_ar_algo_t algo;
        out->comm = 2.0 * L * sv_perf_allreduce(p, T * d * ACT_BYTES, &algo);
        out->ar_algo = (int)algo;
    }
    if (!plain && p->dp > 1 && p->ep > 1) a2a_step(p, b, T, out);
    /* The engine's context phase (prefill_efficiency e, docs/cost-model.md): what the
     * prompts add to the step's GPU time, over the same step without them, takes 1 / e as
     * long, operator by operator and in the collectives. */
    double P = 0.0, prompts = 0.0;
    int context = !plain && (p->prefill_slow > 0 || p->prefill_request_s > 0); /* else none */
    for (int i = 0; context && i < b->n_chunks; i++)
        if (b->chunks[i].new_tokens > 0 && i % m_mb == j) {
            P += (double)b->chunks[i].new_tokens;
            prompts += 1.0;
        }
    if (!plain && P > 0 && p->prefill_slow > 0) {
        sv_step_cost_t dec; /* the decodes alone (none: a zero step) */
        sv_batch_t db = *b;
        db.n_chunks = 0;
        db.chunks = NULL;
        if (nd > 0) stage_step(p, &db, j, m_mb, &dec);
        else memset(&dec, 0, sizeof dec);
        double g = 1.0 + p->prefill_slow;
        for (int i = 0; i < SV_OP_COUNT; i++) {
            sv_op_cost_t *o = &out->op[i];
            const sv_op_cost_t *d0 = &dec.op[i];
            finish_op(o, d0->t_compute + sv_fmax(0.0, o->t_compute - d0->t_compute) * g,
                      d0->t_memory + sv_fmax(0.0, o->t_memory - d0->t_memory) * g,
                      d0->t_fixed + sv_fmax(0.0, o->t_fixed - d0->t_fixed) * g);
        }
        out->comm = dec.comm + sv_fmax(0.0, out->comm - dec.comm) * g;
        out->a2a = dec.a2a + sv_fmax(0.0, out->a2a - dec.a2a) * g;
    }
    /* An engine that replays CUDA graphs for decode batches only runs a step with prompt
     * tokens eagerly, and prepares each context request on the host:
     * prefill_request_overhead_ms per prompt in the step, in place of the launch rule. */
    if (!plain && P > 0 && p->prefill_request_s > 0)
        out->eng_launch = prompts * p->prefill_request_s;
    else if (!p->set.cuda_graphs || T > p->graph_max_d)
        out->eng_launch = L * p->set.layer_overhead_s;
    /* The micro-batch's time and the activations it sends to the next stage: a pipeline's
     * (one stage's total is summed again by its callers, sv_perf_step and
     * sv_perf_micro_batch, from the operators). */
    if (!plain && p->set.pp > 1) {
        for (int i = 0; i < SV_OP_COUNT; i++)
            out->total += out->op[i].time;
        out->total += out->comm + out->eng_launch;
        out->pp_send = p->p2p_alpha + T * d * ACT_BYTES * p->p2p_inv_bw;
    }
}

static __attribute__((noinline)) void stage_step(const sv_perf_t *p, const sv_batch_t *b, int j,
                                                 int m_mb, sv_step_cost_t *out)
{
    stage_step_in(p, b, j, m_mb, out, 0);
}

/* The operators' times summed, in their order. */
static double ops_time(const sv_step_cost_t *out)
{
    double busy = 0.0;
    for (int i = 0; i < SV_OP_COUNT; i++)
        busy += out->op[i].time;
    return busy;
}

static int compute_bound(const sv_step_cost_t *out)
{
    double tc = 0.0, tm = 0.0;
    for (int i = 0; i < SV_OP_COUNT; i++) {
        tc += out->op[i].t_compute;
        tm += out->op[i].t_memory;
    }
    return tc > tm;
}

/* sv_perf_step; plain (a constant where it is inlined): p->plain, one stage inlined. */
static inline __attribute__((always_inline)) void
perf_step_in(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out, const int plain)
{
    int pp = !plain && p->set.pp > 1 ? p->set.pp : 1;
    long seqs = b->n_decode + b->n_chunks;
    int m = pp > 1 && seqs > 1 ? (int)(seqs < pp ? seqs : pp) : 1;
    if (plain)
        stage_step_in(p, b, 0, 1, out, 1);
    else
        stage_step(p, b, 0, m, out);
    double sum = out->total + out->pp_send, ts = out->total, tx = out->pp_send;
    for (int j = 1; j < m; j++) {
        sv_step_cost_t mb;
        stage_step(p, b, j, m, &mb);
        for (int i = 0; i < SV_OP_COUNT; i++) {
            sv_op_cost_t *o = &out->op[i];
            o->flops += mb.op[i].flops;
            o->bytes += mb.op[i].bytes;
            o->t_compute += mb.op[i].t_compute;
            o->t_memory += mb.op[i].t_memory;
            o->t_fixed += mb.op[i].t_fixed;
            o->time += mb.op[i].time;
        }
        out->comm += mb.comm;
        out->eng_launch += mb.eng_launch;
        out->tokens += mb.tokens;
        sum += mb.total + mb.pp_send;
        ts = sv_fmax(ts, mb.total);
        tx = sv_fmax(tx, mb.pp_send);
    }
    out->micro_batches = m;
    if (out->tokens <= 0) {
        memset(out, 0, sizeof *out);
        return;
    }
    out->eng_step = p->set.iter_overhead_s;
    /* Attention data-parallel ranks schedule their own sequences side by side. */
    out->rank_seqs = !plain && p->dp > 1 ? (seqs + p->dp - 1) / p->dp : seqs;
    out->eng_seq = p->set.seq_overhead_s * (double)out->rank_seqs;
    multi_step(p, b, out);
    out->overhead = out->eng_step + out->eng_seq + out->eng_launch;
    double busy = ops_time(out); /* one stage's work over all micro-batches */
    if (pp == 1) {
        out->total = busy + (out->comm + out->overhead);
        out->pp_send = 0.0;
    } else {
        busy += out->comm + out->eng_launch;
        /* One micro-batch through every stage: stage s takes ts x its layers / the
         * heaviest stage's (pp x ts when the stages are even). */
        double full = (p->pp_uneven ? ts * p->stage_equiv : pp * ts) + (pp - 1) * tx;
        double pipe = sv_fmax(sum, full);
        out->pp_send = sum >= full ? sum - busy : (pp - 1) * tx;
        out->pp_bubble = sv_fmax(0.0, pipe - busy - out->pp_send);
        out->total = pipe + out->eng_step + out->eng_seq;
    }
    out->compute_bound = compute_bound(out);
}

static __attribute__((noinline)) void plain_step(const sv_perf_t *p, const sv_batch_t *b,
                                                 sv_step_cost_t *out)
{
    perf_step_in(p, b, out, 1);
}

void sv_perf_step(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out)
{
    if (p->plain)
        plain_step(p, b, out);
    else
        perf_step_in(p, b, out, 0);
}

void sv_perf_micro_batch(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out)
{
    stage_step(p, b, 0, 1, out);
    out->micro_batches = 1;
    if (out->tokens <= 0) {
        memset(out, 0, sizeof *out);
        return;
    }
    out->eng_step = p->set.iter_overhead_s;
    out->rank_seqs = b->n_decode + b->n_chunks;
    out->eng_seq = p->set.seq_overhead_s * (double)out->rank_seqs;
    out->overhead = out->eng_step + out->eng_seq + out->eng_launch;
    out->total = ops_time(out) + out->comm + out->overhead;
    if (p->set.pp <= 1) out->pp_send = 0.0;
    out->compute_bound = compute_bound(out);
}

/* A step the memo can answer: decode-only, one forward pass of the plain cost model. */
static int memo_fits(const sv_perf_t *p, const sv_batch_t *b)
{
    return b->n_chunks == 0 && b->n_decode > 0 && b->verify <= 1 && p->memo_ok;
}

/* A memo slot's step in full (sv_perf_step), with the terms of decode_attention at v = 1
 * and of the sums over the operators that do not see the context, each grouped as there. */
static __attribute__((noinline)) const sv_step_cost_t *memo_fill(const sv_perf_t *p,
                                                                 sv_perf_memo_slot_t *s,
                                                                 const sv_batch_t *b)
{
    sv_step_cost_t *out = &s->cost;
    sv_perf_step(p, b, out);
    s->n_decode = b->n_decode;
    double L = p->stage_layers, q = p->heads_local * p->model.head_dim, v = 1.0;
    double nd = (double)b->n_decode;
    s->dec_flops_ctx = L * 4.0 * q * v;
    s->dec_bytes_seq = v * nd * p->kv_bytes_token_layer;
    s->dec_bytes_act = 2.0 * v * nd * q * ACT_BYTES;
    s->time01 = 0.0 + out->op[0].time + out->op[1].time;
    s->compute01 = 0.0 + out->op[0].t_compute + out->op[1].t_compute;
    s->memory01 = 0.0 + out->op[0].t_memory + out->op[1].t_memory;
    s->comm_overhead = out->comm + out->overhead;
    return out;
}

/* Not inlined: in the engine's step loop (LTO) it costs that loop's registers more than the
 * call (about 2 M instructions on the 100k benchmark, docs/performance.md). */
__attribute__((noinline)) const sv_step_cost_t *
sv_perf_spec_step_memo(const sv_perf_t *p, sv_perf_memo_t *memo, const sv_batch_t *b)
{
    if (!memo_fits(p, b)) {
        if (p->memo_ok)
            sv_perf_step(p, b, &memo->scratch); /* (no speculative decoding) */
        else
            sv_perf_spec_step(p, b, &memo->scratch);
        return &memo->scratch;
    }
    sv_perf_memo_slot_t *s = &memo->slot[(size_t)b->n_decode % SV_PERF_MEMO_SLOTS];
    if (s->n_decode != b->n_decode) return memo_fill(p, s, b);
    sv_step_cost_t *out = &s->cost;
    double nd = (double)b->n_decode, ctx_sum = b->decode_ctx_sum;
    /* What sv_perf_step computes again for this batch: everything that sees its context,
     * decode_attention and the sums of ops_time, sv_perf_step's total and compute_bound, each
     * operation as they do it in their order from the slot's first terms (the same bits). */
    _Static_assert(SV_OP_ATTN_DECODE == 2 && SV_OP_COUNT == 5, "the memo's partial sums");
    sv_op_cost_t *ad = &out->op[SV_OP_ATTN_DECODE];
    const sv_op_cost_t *o3 = &out->op[3], *o4 = &out->op[4];
    ad->flops = s->dec_flops_ctx * (ctx_sum + nd);
    ad->bytes = p->stage_layers * (ctx_sum * p->kv_bytes_token_layer + s->dec_bytes_seq +
                                   s->dec_bytes_act);
    /* t_fixed (n_decode x attn_seq_step) is the slot's */
    finish_op(ad, ad->flops * p->inv_attn_c, ad->bytes * p->inv_attn_mem, ad->t_fixed);
    out->total = s->time01 + ad->time + o3->time + o4->time + s->comm_overhead;
    double tc = s->compute01 + ad->t_compute + o3->t_compute + o4->t_compute;
    double tm = s->memory01 + ad->t_memory + o3->t_memory + o4->t_memory;
    out->compute_bound = tc > tm;
    return out;
}

/* ---- speculative decoding: the verify step and the drafter -------------------------- */

/*
 * The drafter's cost for nd decode sequences: k draft steps of nd tokens and one pass over
 * the k + 1 verified tokens of each (the MTP/EAGLE layer extends its KV over them), each a
 * pass through one decoder layer of the target (1/L of a step's layer work at those
 * tokens: DeepSeek's MTP module is one MoE decoder layer, an EAGLE head one decoder layer)
 * plus the LM head over the drafted tokens, plus the engine's cost per draft step.
 */
static double spec_draft(const sv_perf_t *p, long nd, double ctx_sum, int k)
{
    double t = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        sv_batch_t b = {.n_decode = nd, .decode_ctx_sum = ctx_sum, .verify = pass ? k + 1 : 1};
        sv_step_cost_t c;
        sv_perf_step(p, &b, &c);
        double lm = c.op[SV_OP_LM_HEAD].time;
        double layer = (c.total - c.overhead - lm) / p->stage_layers;
        t += pass ? layer : k * (layer + lm + p->set.spec_draft_step_s);
    }
    return t;
}

/* The drafter's pass over a step's prefill chunks (its layer builds their KV, as SGLang's
 * and vLLM's drafters extend over the prompt): 1/L of the chunks' layer work. */
static double spec_prefill(const sv_perf_t *p, const sv_batch_t *b)
{
    sv_batch_t cb = {.chunks = b->chunks, .n_chunks = b->n_chunks};
    sv_step_cost_t c;
    sv_perf_step(p, &cb, &c);
    return (c.total - c.overhead - c.op[SV_OP_LM_HEAD].time) / p->stage_layers;
}

/*
 * A draft model's forward pass over a batch on its own cost model: its layers, LM head and
 * all-reduces (the engine's per-step and per-sequence CPU costs are the target step's).
 */
static double draft_pass(const sv_perf_t *d, const sv_batch_t *b)
{
    sv_step_cost_t c;
    sv_perf_step(d, b, &c);
    return c.total - c.eng_step - c.eng_seq;
}

/*
 * A draft model's proposal, as vLLM's DraftModelProposer makes it (vllm/v1/spec_decode/
 * draft_model.py on SpecDecodeBaseProposer.propose, vllm/v1/spec_decode/eagle.py): a first
 * pass over the tokens the target ran this step with the sampled token appended (k + 2 per
 * decode sequence: the verified k + 1 and the new one; a prefill chunk's tokens), which
 * yields every sampling sequence's first draft token, then k - 1 passes of one token per
 * sampling sequence (the decodes and the prompts that end this step); each pass pays
 * spec_draft_step_us. *dec is the decodes' share (their first pass alone and their k - 1
 * steps), *pre what the chunks add.
 */
static void draft_model_cost(const sv_perf_t *p, const sv_batch_t *b, int k, double *dec,
                             double *pre)
{
    const sv_perf_t *d = p->draft;
    double step = p->set.spec_draft_step_s;
    long last = 0;
    double last_ctx = 0.0;
    for (int i = 0; i < b->n_chunks; i++)
        if (b->chunks[i].last) {
            last++;
            last_ctx += sv_perf_attended(d, (double)(b->chunks[i].cached_tokens + b->chunks[i].new_tokens));
        }
    sv_batch_t first = {.chunks = b->chunks, .n_chunks = b->n_chunks, .n_decode = b->n_decode,
                        .decode_ctx_sum = b->decode_ctx_sum, .verify = k + 2};
    sv_batch_t first_dec = first, next = {.verify = 1}, next_dec = next;
    first_dec.chunks = NULL;
    first_dec.n_chunks = 0;
    next.n_decode = b->n_decode + last;
    next_dec.n_decode = b->n_decode;
    next_dec.decode_ctx_sum = b->decode_ctx_sum;
    next.decode_ctx_sum = b->decode_ctx_sum + last_ctx;
    double t_first = draft_pass(d, &first), t_next = next.n_decode ? draft_pass(d, &next) : 0.0;
    double d_first = 0.0, d_next = 0.0;
    if (b->n_decode > 0) {
        d_first = draft_pass(d, &first_dec);
        d_next = draft_pass(d, &next_dec);
    }
    *dec = b->n_decode > 0 ? d_first + (k - 1) * d_next + k * step : 0.0;
    *pre = 0.0;
    if (b->n_chunks > 0) {
        *pre = t_first - d_first + (k - 1) * (t_next - d_next);
        if (b->n_decode == 0) *pre += step + (last > 0 ? (k - 1) * step : 0.0);
    }
}

/* sv_perf_spec_step with k draft tokens (k > 0); apart, so that a step without speculative
 * decoding does not pay this one's stack frame. */
static __attribute__((noinline)) void spec_step(const sv_perf_t *p, const sv_batch_t *b, int k,
                                                sv_step_cost_t *out)
{
    double pre = 0.0, draft = 0.0;
    if (p->draft) draft_model_cost(p, b, k, &draft, &pre);
    else if (b->n_chunks > 0) pre = spec_prefill(p, b);
    if (b->n_decode <= 0) {
        sv_perf_step(p, b, out);
        out->spec_draft = pre;
        out->total += pre;
        return;
    }
    sv_batch_t vb = *b;
    vb.verify = k + 1;
    sv_perf_step(p, &vb, out);
    double tau = sv_spec_accept_len(&p->set);
    if (!p->draft) draft = spec_draft(p, b->n_decode, b->decode_ctx_sum, k);
    double dec = out->total; /* the decodes' own verify step */
    double dec_step = out->eng_step, dec_seq = out->eng_seq; /* and its engine CPU cost */
    if (b->n_chunks > 0) {
        sv_batch_t db = {.n_decode = b->n_decode, .decode_ctx_sum = b->decode_ctx_sum, .verify = k + 1};
        sv_step_cost_t dc;
        sv_perf_step(p, &db, &dc);
        dec = dc.total;
        dec_step = dc.eng_step;
        dec_seq = dc.eng_seq;
    }
    out->spec_verify = out->total;
    out->spec_draft = draft + pre;
    out->spec_len = tau;
    double spread = 1.0 - 1.0 / tau;
    out->total = out->total + draft + pre - spread * (dec + draft);
    /* The lockstep step is 1/tau of the decodes' verify step: its engine CPU cost too (what
     * async scheduling overlaps with the GPU's share). The sampled replica times the whole
     * verify step from spec_verify and spec_draft, its CPU cost from spec_cpu. */
    out->spec_cpu = out->eng_step + out->eng_seq;
    out->eng_step -= spread * dec_step;
    out->eng_seq -= spread * dec_seq;
}

void sv_perf_spec_step(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out)
{
    int k = sv_spec_k(&p->set);
    if (k == 0) sv_perf_step(p, b, out);
    else spec_step(p, b, k, out);
}

double sv_perf_prefill_time(const sv_perf_t *p, long n, sv_step_cost_t *out)
{
    sv_chunk_t c = {.new_tokens = n, .cached_tokens = 0, .last = 1};
    sv_batch_t b = {.chunks = &c, .n_chunks = 1};
    sv_step_cost_t tmp;
    sv_perf_spec_step(p, &b, out ? out : &tmp);
    return out ? out->total : tmp.total;
}

double sv_perf_decode_time(const sv_perf_t *p, long batch, double ctx, sv_step_cost_t *out)
{
    sv_batch_t b = {.n_decode = batch, .decode_ctx_sum = batch * sv_perf_attended(p, ctx)};
    sv_step_cost_t tmp;
    sv_perf_spec_step(p, &b, out ? out : &tmp);
    return out ? out->total : tmp.total;
}

void sv_perf_kv_handoff(const sv_perf_t *prefill, const sv_perf_t *decode, sv_kv_handoff_t *out)
{
    int ppp = prefill->set.pp > 1 ? prefill->set.pp : 1;
    int ppd = decode->set.pp > 1 ? decode->set.pp : 1, dp = decode->dp > 1 ? decode->dp : 1;
    out->senders = prefill->set.tp * ppp;
    out->receivers = decode->set.tp / dp * ppd;
    out->send_gpu = prefill->kv_bytes_token;
    out->recv_gpu = decode->kv_bytes_token;
    double recv = out->recv_gpu * prefill->set.tp;
    out->link_tok = recv > prefill->kv_bytes_token_total ? recv : prefill->kv_bytes_token_total;
    out->link_gpu = out->link_tok / prefill->set.tp;
}

/* ---- memory ------------------------------------------------------------------------- */

int sv_perf_memplan(const sv_perf_t *p, sv_memplan_t *out, sv_error_t *err)
{
    const sv_model_t *m = &p->model;
    memset(out, 0, sizeof *out);
    out->device_bytes = p->gpu.mem_bytes;
    out->budget_bytes = p->gpu.mem_bytes * p->set.gpu_memory_utilization;
    out->weight_bytes = p->weight_bytes_gpu;
    out->block_size = p->set.block_size;
    out->kv_bytes_token = p->kv_bytes_token;
    if (p->set.activation_reserve >= 0) {
        out->activation_bytes = p->set.activation_reserve;
    } else {
        /* A forward pass over the largest batch holds a few hidden-size and MLP-width
         * tensors per token at once; vLLM profiles exactly this before sizing the cache. */
        double width = m->experts ? (double)p->moe_ffn_local * m->experts_per_tok +
                                        (double)m->shared_ffn / p->attn_tp
                                  : (double)p->ffn_local;
        out->activation_bytes = RUNTIME_RESERVE + (double)p->set.max_batched_tokens *
                                                      (4.0 * m->hidden + 3.0 * width) * ACT_BYTES;
    }
    out->kv_bytes = out->budget_bytes - out->weight_bytes - out->activation_bytes;
    /* One pool of blocks for every KV cache group (vLLM's shared BlockPool): a block is one
     * group's page, the full-attention layers' KV when the model has no other kind. */
    double block = (p->kvs.hybrid ? p->kvs.page_token : out->kv_bytes_token) * out->block_size;
    if (out->kv_bytes < block) {
        return sv_errorf(err, SV_ENOFIT,
                         "model '%s' (%s weights) does not fit on %s with tp=%d: weights need "
                         "%.2f GB per GPU and activations %.2f GB, but %.2f x %.2f GB = %.2f GB "
                         "is usable, leaving no room for the KV cache (try a larger tp, "
                         "smaller weights or a GPU with more memory)",
                         m->name, sv_dtype_name(p->set.weight_dtype), p->gpu.name, p->set.tp,
                         out->weight_bytes / 1e9, out->activation_bytes / 1e9,
                         p->set.gpu_memory_utilization, out->device_bytes / 1e9,
                         out->budget_bytes / 1e9);
    }
    /* With attention data parallelism each rank's GPUs cache only its own sequences: the
     * replica holds dp_ranks such pools (one sequence never spans two). */
    out->dp_ranks = p->dp > 1 ? p->dp : 1;
    out->rank_kv_tokens = (long)floor(out->kv_bytes / block) * out->block_size;
    out->kv_blocks = (long)floor(out->kv_bytes / block) * out->dp_ranks;
    out->kv_tokens = out->kv_blocks * out->block_size;
    out->seq_blocks = sv_perf_seq_blocks(p, out->block_size);
    return 0;
}
