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
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
        .graph_max_tokens = -1,
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
            s->curve[SV_CV_MLA_EFF] = s->curve[SV_CV_MOE_IMBALANCE] = 1.0;
}

const char *const sv_perf_setting_keys[] = {"tp",
                                            "pp",
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
                                            "graph_max_tokens",
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

static int int_in(const char *key, const char *value, long lo, long hi, long *out, sv_error_t *err)
{
    long v;
    if (sv_parse_long(value, &v) || v < lo || v > hi)
        return sv_errorf(err, SV_EINVAL, "%s: expected a whole number in [%ld, %ld], got '%s'", key,
                         lo, hi, value);
    *out = v;
    return 0;
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
    if (strcmp(key, "pp_link_bandwidth_gb_s") == 0)
        return num_in(key, value, 0, 1e6, 1, 1e9, &s->pp_link_bw, err);
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
    if (strcmp(key, "cuda_graphs") == 0) {
        int b;
        if (sv_parse_bool(value, &b))
            return sv_errorf(err, SV_EINVAL, "%s: expected true or false, got '%s'", key, value);
        s->cuda_graphs = b;
        return 0;
    }
    if (strcmp(key, "graph_max_tokens") == 0) {
        if ((rc = int_in(key, value, 0, 1L << 30, &l, err))) return rc;
        s->graph_max_tokens = l;
        return 0;
    }
    for (int k = 0; k < SV_CV_COUNT; k++)
        if (strcmp(key, sv_curve_keys[k]) == 0)
            return num_in(key, value, sv_curve_lo[k], sv_curve_hi[k], 0, 1, &s->curve[k], err);
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

/* The coefficients of an MLA, MoE, windowed or linear-attention model (sv_perf_arch_t). */
static void arch_init(sv_perf_t *p, double head)
{
    const sv_model_t *m = &p->model;
    sv_perf_arch_t *x = &p->x;
    const sv_perf_settings_t *r = &p->set;
    const double *cv = r->curve;
    int tp = r->tp, pp = r->pp;
    double inv_pp = 1.0 / pp, d = m->hidden, mats = m->gated_mlp ? 3.0 : 2.0;
    double wb = sv_dtype_weight_bytes(r->weight_dtype), wb_e = sv_dtype_weight_bytes(x->expert_dtype);
    int scale_block = r->weight_dtype == SV_DT_FP8 && !r->weight_dtype_given ? m->ckpt_scale_block : 0;
    arch_params_t a = arch_params(m, tp), a1 = arch_params(m, 1);

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
    p->weight_bytes_gpu = decoder + head;
    double full_embed = (double)m->vocab * m->hidden * EMBED_BYTES;
    p->weight_bytes_total = arch_decoder_bytes(m, &a1, wb, wb_e, scale_block) +
                            m->hidden * EMBED_BYTES + full_embed * (m->tied_embeddings ? 1.0 : 2.0);

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
    p->kv_bytes_token_total = p->kv_bytes_token * tp * pp;
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
        peak_e = bit && (p->gpu.fp4_formats & bit) ? p->gpu.fp4_flops
                 : x->expert_dtype == SV_DT_FP8 && p->gpu.fp8_flops > 0 ? p->gpu.fp8_flops
                                                                        : p->gpu.bf16_flops;
    }
    x->inv_exp_c = 1.0 / (peak_e * r->compute_eff);
    x->grouped_eff = cv[SV_CV_GROUPED_EFF];
    x->imbalance = cv[SV_CV_MOE_IMBALANCE];
    double mla_eff = m->mla ? cv[SV_CV_MLA_EFF] : 1.0;
    x->inv_attn_c = p->inv_attn_c / mla_eff;
    x->inv_attn_mem = p->inv_attn_mem / mla_eff;

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
                       double ctx_sum, double *logits, sv_step_cost_t *out)
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
    double T = prefill_tokens + nd;
    if (T <= 0) return 0.0;

    /* Linear layers: the non-expert weights read once; the experts a step touches,
     * E (1 - (1 - k/E)^T) per MoE layer in expectation; expert GEMMs at the grouped-GEMM
     * efficiency of their tokens per touched expert, times the busiest expert's share. */
    sv_op_cost_t *li = &out->op[SV_OP_LINEAR];
    double dense_fl = 2.0 * T * x->lin_params, tc_exp = 0.0, tm_exp = 0.0;
    li->flops = dense_fl;
    li->bytes = x->lin_bytes + T * m->hidden * EMBED_BYTES / p->set.tp + T * x->act_tok * ACT_BYTES;
    double floors = p->gemm_floor_step, dense_bytes = li->bytes;
    if (m->experts) {
        double E = m->experts, k = m->experts_per_tok;
        double touched = E * (1.0 - pow(1.0 - k / E, T));
        double efl = 2.0 * T * k * x->moe_layers * p->expert_params;
        double te = T * k / touched; /* tokens per touched expert */
        double eby = x->moe_layers * touched * p->expert_params * sv_dtype_weight_bytes(x->expert_dtype);
        li->flops += efl;
        li->bytes += eby;
        /* The grouped GEMMs reach g of a dense GEMM's FLOP/s and bandwidth; the busiest
         * expert's share u stretches their compute. */
        tc_exp = efl * x->inv_exp_c * x->imbalance / x->grouped_eff * (te + p->m_half) / te;
        tm_exp = eby * p->inv_mem / x->grouped_eff;
        floors += x->expert_floor_step;
    }
    finish_op(li, dense_fl * p->inv_lin_c * (T + p->m_half) / T + tc_exp,
              dense_bytes * p->inv_mem + tm_exp, floors);
    finish_op(ap, eff_flops * x->inv_attn_c, ap->bytes * p->inv_mem, 0.0);

    /* Decode attention: full layers over the whole context (MLA in the absorbed form over the
     * latent), windowed layers over at most the window (of the mean context), linear layers
     * read and write their state. */
    sv_op_cost_t *ad = &out->op[SV_OP_ATTN_DECODE];
    if (nd > 0) {
        double ctx_w = w > 0 ? nd * fmin(ctx_sum / nd, w) : 0.0;
        ad->flops = x->dec_flops_key * (x->full_layers * (ctx_sum + nd) + x->window_layers * (ctx_w + nd)) +
                    x->lin_flops_tok * x->linear_layers * nd;
        ad->bytes = x->full_layers * ((ctx_sum + nd) * kvl + nd * x->dec_q_bytes) +
                    x->window_layers * ((ctx_w + nd) * kvl + nd * x->dec_q_bytes) +
                    x->linear_layers * nd * (2.0 * x->lin_state + x->lin_act_tok);
        finish_op(ad, ad->flops * x->inv_attn_c, ad->bytes * x->inv_attn_mem, nd * p->attn_seq_step);
    }
    return T;
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

int sv_perf_init(sv_perf_t *p, const sv_gpu_t *gpu, const sv_model_t *model,
                 const sv_perf_settings_t *s, sv_error_t *err)
{
    memset(p, 0, sizeof *p);
    p->gpu = *gpu;
    p->model = *model;
    p->set = *s;
    sv_dtype_t ckpt = SV_DT_BF16;
    if (!s->weight_dtype_given && model->ckpt_dtype[0] && sv_dtype_parse(model->ckpt_dtype, &ckpt))
        return sv_errorf(err, SV_EINVAL, "model '%s': unknown checkpoint_dtype '%s'", model->name,
                         model->ckpt_dtype);
    p->x.expert_dtype = s->weight_dtype;
    if (!s->weight_dtype_given && model->ckpt_dtype[0]) {
        p->x.expert_dtype = ckpt;
        if (!model->ckpt_experts_only) p->set.weight_dtype = ckpt;
    }
    const sv_model_t *m = &p->model;
    int tp = s->tp;
    char ok[128];
    if (tp < 1) return sv_errorf(err, SV_EINVAL, "tp must be >= 1, got %d", tp);
    if (m->heads % tp || (m->kv_heads % tp && tp % m->kv_heads) || m->ffn % tp ||
        (m->experts && m->moe_ffn % tp)) {
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
    int pp = s->pp < 1 ? 1 : s->pp;
    if (m->layers % pp)
        return sv_errorf(err, SV_EINVAL,
                         "pp=%d does not divide the %d layers of model '%s' (each pipeline stage "
                         "holds layers/pp of them)",
                         pp, m->layers, m->name);
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

    sv_perf_settings_t *r = &p->set;
    s = r; /* from here on, the weight format resolved with the checkpoint's */
    if (r->compute_eff < 0) r->compute_eff = gpu->compute_eff;
    if (r->memory_eff < 0) r->memory_eff = gpu->memory_eff;
    if (r->iter_overhead_s < 0) r->iter_overhead_s = gpu->iter_overhead_s;
    if (r->layer_overhead_s < 0) r->layer_overhead_s = gpu->layer_overhead_s;
    int domain = gpu->nvlink_domain > 0 ? gpu->nvlink_domain : 8;
    if (r->pp_link_bw < 0) r->pp_link_bw = 50e9;
    /* A TP group larger than one NVLink domain all-reduces over the scale-out network
     * (both directions of pp_link_bandwidth_gb_s) unless link_bandwidth_gb_s is given. */
    if (r->link_bw < 0) r->link_bw = tp > domain ? 2.0 * r->pp_link_bw : gpu->link_bw;
    if (r->link_latency < 0) r->link_latency = gpu->link_latency;
    if (r->seq_overhead_s < 0) r->seq_overhead_s = 0.0;
    if (r->cuda_graphs < 0) r->cuda_graphs = 1;
    if (r->graph_max_tokens < 0) r->graph_max_tokens = 512;
    for (int k = 0; k < SV_CV_COUNT; k++)
        if (r->curve[k] < 0)
            r->curve[k] = isnan(gpu->curve[k]) ? sv_curve_default[k] : gpu->curve[k];

    /* FP4 weights run as W4A4 on FP4 tensor cores (NVFP4/MXFP4 GEMMs quantise the
     * activations too), FP8 weights on FP8 tensor cores when the GPU has them. */
    p->compute_peak = SV_DT_IS_FP4(s->weight_dtype)                          ? gpu->fp4_flops
                      : (s->weight_dtype == SV_DT_FP8 && gpu->fp8_flops > 0) ? gpu->fp8_flops
                                                                             : gpu->bf16_flops;
    p->attn_peak = gpu->bf16_flops;
    p->heads_local = m->heads / tp;
    p->kv_heads_local = kv_heads_per_gpu(m, tp);
    p->ffn_local = m->ffn / tp;
    p->moe_ffn_local = m->experts ? m->moe_ffn / tp : 0;

    double wb = sv_dtype_weight_bytes(s->weight_dtype);
    layer_params_t lp = layer_params(m, tp);
    p->layer_linear_params = lp.attn + lp.mlp + lp.router;
    p->expert_params = lp.expert;
    double vocab_local = ceil((double)m->vocab / tp);
    p->embed_bytes_gpu = vocab_local * m->hidden * EMBED_BYTES;
    p->lm_head_params = vocab_local * m->hidden;
    double Ls = (double)m->layers / pp; /* layers of one pipeline stage */
    p->stage_layers = Ls;
    r->pp = pp;
    double decoder = Ls * ((lp.attn + lp.mlp + lp.expert * m->experts) * wb +
                           (lp.router + lp.norms) * EMBED_BYTES);
    /* NVFP4 keeps one FP32 global scale per weight tensor (q, k, v, o, gate, up, down or
     * up, down, and each expert's), held by every GPU of the replica. */
    double tensor_scales =
        s->weight_dtype == SV_DT_NVFP4
            ? 4.0 * m->layers * (4.0 + (m->gated_mlp ? 3.0 : 2.0) * (m->experts ? m->experts : 1))
            : 0.0;
    decoder += tensor_scales / pp;
    /* Without PP one GPU holds the embedding and the LM head; with PP the first stage
     * holds the embedding, the last the LM head and the final norm: the heavier counts. */
    double head =
        pp > 1 ? fmax(p->embed_bytes_gpu,
                      m->hidden * EMBED_BYTES +
                          (m->tied_embeddings ? p->embed_bytes_gpu : p->lm_head_params * EMBED_BYTES))
               : m->hidden * EMBED_BYTES + p->embed_bytes_gpu +
                     (m->tied_embeddings ? 0.0 : p->lm_head_params * EMBED_BYTES);
    p->weight_bytes_gpu = decoder + head;
    layer_params_t lp1 = layer_params(m, 1);
    double full_embed = (double)m->vocab * m->hidden * EMBED_BYTES;
    p->weight_bytes_total = m->layers * ((lp1.attn + lp1.mlp + lp1.expert * m->experts) * wb +
                                         (lp1.router + lp1.norms) * EMBED_BYTES) +
                            m->hidden * EMBED_BYTES +
                            full_embed * (m->tied_embeddings ? 1.0 : 2.0) + tensor_scales;

    double kvb = sv_dtype_kv_bytes(s->kv_dtype);
    p->kv_bytes_token_layer = 2.0 * p->kv_heads_local * m->head_dim * kvb;
    p->kv_bytes_token = p->kv_bytes_token_layer * Ls;
    p->kv_bytes_token_total = p->kv_bytes_token * tp * pp;

    /* Coefficients of sv_perf_step. */
    const double *cv = r->curve;
    double L = Ls, d = m->hidden;
    double q = (double)p->heads_local * m->head_dim, kv = (double)p->kv_heads_local * m->head_dim;
    p->inv_lin_c = 1.0 / (p->compute_peak * r->compute_eff);
    p->inv_attn_c = 1.0 / (p->attn_peak * cv[SV_CV_ATTN_EFF]);
    p->inv_lm_c = 1.0 / (gpu->bf16_flops * r->compute_eff);
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
    if (tp > 1) {
        p->ar_alpha = r->link_latency + (tp - 2.0) * cv[SV_CV_LINK_RANK] * 1e-6;
        /* Ring all-reduce: 2 (TP-1)/TP of the payload crosses each GPU's link in one
         * direction, which carries half the catalog's bidirectional figure. */
        p->ar_inv_bw = 2.0 * (tp - 1.0) / tp / (r->link_bw / 2.0 * cv[SV_CV_LINK_EFF]);
    }
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
    p->lm_floor = p->gemm_floor_step / L / 4.0;
    p->ext = model_ext(m);
    if (p->ext) arch_init(p, head);
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
    sum += (hi - fmax(c, w)) * w;                            /* positions past the window */
    return sum;
}

static void finish_op(sv_op_cost_t *o, double t_compute, double t_memory, double t_fixed)
{
    o->t_compute = t_compute;
    o->t_memory = t_memory;
    o->t_fixed = t_fixed;
    o->time = fmax(t_compute, t_memory) + t_fixed;
}

/* Sequences s in [a, b) with s % m == j. */
static double count_mod(long a, long b, long j, long m)
{
    long hi = b > j ? (b - j - 1) / m + 1 : 0, lo = a > j ? (a - j - 1) / m + 1 : 0;
    return (double)(hi - lo);
}

/*
 * One stage's work on micro-batch j of m (sequences dealt round-robin: chunks first, then
 * the decode sequences), without the engine's per-step costs; j = 0, m = 1 is the batch.
 */
static void stage_step(const sv_perf_t *p, const sv_batch_t *b, int j, int m_mb,
                       sv_step_cost_t *out)
{
    memset(out, 0, sizeof *out);
    const sv_model_t *m = &p->model;
    double L = p->stage_layers, d = m->hidden, hd = m->head_dim;
    double hq = p->heads_local, q = hq * hd, kv = p->kv_heads_local * hd;
    double wb = sv_dtype_weight_bytes(p->set.weight_dtype);
    double kvtl = p->kv_bytes_token_layer;
    double w = m->sliding_window;

    /* Prefill attention: flash-attention efficiency rises with the chunk length n as
     * n / (n + n_half), so each chunk's FLOPs count (n + n_half) / n times. */
    double prefill_tokens = 0.0, logits = (double)b->n_decode, attn_eff_flops = 0.0;
    sv_op_cost_t *ap = &out->op[SV_OP_ATTN_PREFILL];
    double nd = b->n_decode, ctx_sum = b->decode_ctx_sum;
    if (m_mb > 1) {
        double share = count_mod(b->n_chunks, b->n_chunks + b->n_decode, j, m_mb);
        ctx_sum = b->n_decode > 0 ? ctx_sum * share / (double)b->n_decode : 0.0;
        nd = share;
        logits = nd;
    }
    double T;
    if (p->ext) {
        T = arch_ops(p, b, j, m_mb, nd, ctx_sum, &logits, out);
        out->tokens = (long)T;
        if (T <= 0) return;
    } else {
        for (int i = 0; i < b->n_chunks; i++) {
            double n = (double)b->chunks[i].new_tokens, c = (double)b->chunks[i].cached_tokens;
            if (n <= 0 || i % m_mb != j) continue;
            prefill_tokens += n;
            if (b->chunks[i].last) logits += 1.0;
            double fl = 4.0 * q * causal_keys(n, c, w);
            ap->flops += fl;
            attn_eff_flops += fl * (n + p->attn_n_half) / n;
            double keys_read = (w > 0 ? fmin(c, w) : c) + n;
            ap->bytes += 2.0 * n * q * ACT_BYTES + keys_read * kvtl + n * kvtl;
        }
        ap->flops *= L;
        ap->bytes *= L;

        T = prefill_tokens + nd;
        out->tokens = (long)T;
        if (T <= 0) return;

        /* Dense linear layers: weights read once, activations in and out of each matmul;
         * GEMM efficiency at T tokens is compute_eff x T / (T + m_half). */
        sv_op_cost_t *li = &out->op[SV_OP_LINEAR];
        double fl = p->ffn_local, mats = m->gated_mlp ? 3.0 : 2.0;
        double act_attn = (d + q + 2.0 * kv) + (q + d);
        double act_mlp = m->experts ? m->experts_per_tok *
                                          (d + (mats - 1.0) * p->moe_ffn_local + p->moe_ffn_local + d)
                                    : (d + (mats - 1.0) * fl + fl + d);
        li->flops = 2.0 * T * L * p->layer_linear_params;
        li->bytes = L * (p->layer_linear_params - (m->experts ? d * m->experts : 0.0)) * wb +
                    L * (m->experts ? d * m->experts : 0.0) * EMBED_BYTES + L * 2.0 * d * EMBED_BYTES +
                    T * d * EMBED_BYTES / p->set.tp + T * L * (act_attn + act_mlp) * ACT_BYTES;
        if (m->experts) {
            double E = m->experts, k = m->experts_per_tok;
            double touched = E * (1.0 - pow(1.0 - k / E, T)); /* expected distinct experts */
            li->flops += 2.0 * T * k * L * p->expert_params;
            li->bytes += L * touched * p->expert_params * wb;
        }
        double slow = (T + p->m_half) / T;
        finish_op(li, li->flops * p->inv_lin_c * slow, li->bytes * p->inv_mem, p->gemm_floor_step);
        finish_op(ap, attn_eff_flops * L * p->inv_attn_c, ap->bytes * p->inv_mem, 0.0);

        /* Decode attention: every cached token of every sequence is read once per layer, at
         * the paged kernel's bandwidth, plus its fixed cost per sequence per layer. */
        sv_op_cost_t *ad = &out->op[SV_OP_ATTN_DECODE];
        if (nd > 0) {
            ad->flops = L * 4.0 * q * (ctx_sum + nd);
            ad->bytes = L * (ctx_sum * kvtl + nd * kvtl + 2.0 * nd * q * ACT_BYTES);
            finish_op(ad, ad->flops * p->inv_attn_c, ad->bytes * p->inv_attn_mem,
                      nd * p->attn_seq_step);
        }
    }

    /* LM head: the vocabulary projection for each token that yields a next token (a GEMM
     * with M = logits; it stays 16-bit). */
    sv_op_cost_t *lm = &out->op[SV_OP_LM_HEAD];
    if (logits > 0) {
        double vl = p->lm_head_params / d;
        lm->flops = 2.0 * logits * p->lm_head_params;
        lm->bytes =
            p->lm_head_params * EMBED_BYTES + logits * d * ACT_BYTES + logits * vl * LOGIT_BYTES;
        finish_op(lm, lm->flops * p->inv_lm_c * (logits + p->m_half) / logits,
                  lm->bytes * p->inv_mem, p->lm_floor);
    }

    /* Norms, rotary, activation and residual adds: memory-bound over T x d. */
    sv_op_cost_t *sm = &out->op[SV_OP_SMALL];
    sm->bytes = T * p->small_bytes_tok;
    finish_op(sm, 0.0, T * p->small_s_tok, p->small_floor_step);

    if (p->set.tp > 1) out->comm = 2.0 * L * (p->ar_alpha + T * d * ACT_BYTES * p->ar_inv_bw);
    if (!p->set.cuda_graphs || T > (double)p->set.graph_max_tokens)
        out->eng_launch = L * p->set.layer_overhead_s;
    for (int i = 0; i < SV_OP_COUNT; i++)
        out->total += out->op[i].time;
    out->total += out->comm + out->eng_launch;
    /* The activations this micro-batch sends to the next stage. */
    if (p->set.pp > 1) out->pp_send = p->p2p_alpha + T * d * ACT_BYTES * p->p2p_inv_bw;
}

void sv_perf_step(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out)
{
    int pp = p->set.pp > 1 ? p->set.pp : 1;
    long seqs = b->n_decode + b->n_chunks;
    int m = pp > 1 && seqs > 1 ? (int)(seqs < pp ? seqs : pp) : 1;
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
        ts = fmax(ts, mb.total);
        tx = fmax(tx, mb.pp_send);
    }
    out->micro_batches = m;
    if (out->tokens <= 0) {
        memset(out, 0, sizeof *out);
        return;
    }
    out->eng_step = p->set.iter_overhead_s;
    out->eng_seq = p->set.seq_overhead_s * (double)seqs;
    out->overhead = out->eng_step + out->eng_seq + out->eng_launch;
    double busy = 0.0; /* one stage's work over all micro-batches */
    for (int i = 0; i < SV_OP_COUNT; i++)
        busy += out->op[i].time;
    if (pp == 1) {
        out->total = busy + (out->comm + out->overhead);
        out->pp_send = 0.0;
    } else {
        busy += out->comm + out->eng_launch;
        double full = pp * ts + (pp - 1) * tx, pipe = fmax(sum, full);
        out->pp_send = sum >= full ? sum - busy : (pp - 1) * tx;
        out->pp_bubble = fmax(0.0, pipe - busy - out->pp_send);
        out->total = pipe + out->eng_step + out->eng_seq;
    }
    double tc = 0.0, tm = 0.0;
    for (int i = 0; i < SV_OP_COUNT; i++) {
        tc += out->op[i].t_compute;
        tm += out->op[i].t_memory;
    }
    out->compute_bound = tc > tm;
}

double sv_perf_prefill_time(const sv_perf_t *p, long n, sv_step_cost_t *out)
{
    sv_chunk_t c = {.new_tokens = n, .cached_tokens = 0, .last = 1};
    sv_batch_t b = {.chunks = &c, .n_chunks = 1};
    sv_step_cost_t tmp;
    sv_perf_step(p, &b, out ? out : &tmp);
    return out ? out->total : tmp.total;
}

double sv_perf_decode_time(const sv_perf_t *p, long batch, double ctx, sv_step_cost_t *out)
{
    sv_batch_t b = {.n_decode = batch, .decode_ctx_sum = batch * sv_perf_attended(p, ctx)};
    sv_step_cost_t tmp;
    sv_perf_step(p, &b, out ? out : &tmp);
    return out ? out->total : tmp.total;
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
                                        (double)m->shared_ffn / p->set.tp
                                  : (double)p->ffn_local;
        out->activation_bytes = RUNTIME_RESERVE + (double)p->set.max_batched_tokens *
                                                      (4.0 * m->hidden + 3.0 * width) * ACT_BYTES;
    }
    out->kv_bytes = out->budget_bytes - out->weight_bytes - out->activation_bytes;
    double block = out->kv_bytes_token * out->block_size;
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
    out->kv_blocks = (long)floor(out->kv_bytes / block);
    out->kv_tokens = out->kv_blocks * out->block_size;
    out->seq_blocks = sv_perf_seq_blocks(p, out->block_size);
    return 0;
}
