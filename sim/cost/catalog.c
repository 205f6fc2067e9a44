/*
 * The catalog loader: reads the GPU and model YAML files of the catalog directory
 * into plain structs, strictly (every key known, every number in range, every place
 * named in errors), and looks entries up by name.
 */
#include "servesim/cost/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "servesim/cost/perf.h"
#include "servesim/base/yaml.h"
#include "base/vec_int.h"

#ifndef SERVESIM_CATALOG_DIR
#define SERVESIM_CATALOG_DIR "models"
#endif

#define MAX_FILES 256

const char *const sv_curve_keys[SV_CV_COUNT] = {
    "gemm_m_half_tokens",          "gemm_floor_us",        "small_op_efficiency",
    "small_op_floor_us",           "attention_efficiency", "attention_n_half_tokens",
    "attention_memory_efficiency", "attention_seq_us",     "link_efficiency",
    "link_latency_per_rank_us",    "p2p_latency_us",       "norm_efficiency",
    "grouped_gemm_efficiency",     "mla_attention_efficiency", "moe_imbalance",
    "grouped_gemm_n_half_experts", "mla_prefill_efficiency", "prefill_efficiency",
    "prefill_request_overhead_ms"};
/* Built-ins for a GPU whose catalog gives no curve (a catalog directory of one's own):
 * the same values as models/gpus.yaml's defaults, the A100 fit plus the literature
 * attention terms (docs/cost-model.md says where each comes from). */
const double sv_curve_default[SV_CV_COUNT] = {76.4, 6.39, 0.771, 2.22, 0.70, 128,
                                              0.70, 0.05, 0.513, 0.87, 13.2, 0.388,
                                              1.0,  1.0,  1.0, 0,     1.0, 1.0, 0};
const double sv_curve_lo[SV_CV_COUNT] = {0, 0, 1e-3, 0, 1e-3, 0, 1e-3, 0, 1e-3, 0, 0, 1e-3,
                                         1e-3, 1e-3, 1, 0, 1e-3, 1e-3, 0};
const double sv_curve_hi[SV_CV_COUNT] = {1e6, 1e4, 1, 1e4, 1, 1e7, 1, 1e4, 1,
                                         1e4, 1e4, 1, 1, 1, 64, 1e4, 1, 1, 1e4};

const char *sv_catalog_default_dir(void)
{
    const char *env = getenv("SERVESIM_CATALOG");
    return (env && *env) ? env : SERVESIM_CATALOG_DIR;
}

void sv_catalog_free(sv_catalog_t *cat)
{
    if (!cat) return;
    free(cat->gpus);
    free(cat->models);
    free(cat->engines);
    free(cat);
}

static int copy_text(char *dst, size_t n, const char *src, const sv_ynode_t *map, const char *key,
                     sv_error_t *err)
{
    if (strlen(src) >= n) {
        char where[512];
        return sv_errorf(err, SV_EINVAL, "%s: %s.%s: longer than %zu characters",
                         sv_ynode_where(map, where, sizeof where), map->path, key, n - 1);
    }
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

static const char *const calibration_names[SV_CAL_COUNT] = {"measured", "transferred", "datasheet"};

int sv_calibration_parse(const char *s, sv_calibration_t *out)
{
    for (int i = 0; i < SV_CAL_COUNT; i++)
        if (strcmp(s, calibration_names[i]) == 0) {
            *out = (sv_calibration_t)i;
            return 0;
        }
    return SV_EINVAL;
}

const char *sv_calibration_name(sv_calibration_t c)
{
    return c >= 0 && c < SV_CAL_COUNT ? calibration_names[c] : "?";
}

/* The optional `calibration:` key of a GPU or engine entry (default datasheet). */
static int read_calibration(sv_ynode_t *map, sv_calibration_t *out, sv_error_t *err)
{
    const char *s = NULL;
    int rc = sv_yget_str(map, "calibration", 0, &s, err);
    if (rc < 0) return rc;
    if (!s) {
        *out = SV_CAL_DATASHEET;
        return 0;
    }
    if (sv_calibration_parse(s, out)) {
        char where[512];
        return sv_errorf(
            err, SV_EINVAL,
            "%s: %s.calibration: expected measured, transferred or datasheet, got '%s'",
            sv_ynode_where(map, where, sizeof where), map->path, s);
    }
    return 0;
}

/* fp4_formats: "nvfp4", "mxfp4" or "nvfp4,mxfp4". */
static int read_fp4_formats(sv_ynode_t *map, double fp4, int *out, sv_error_t *err)
{
    const char *s = NULL;
    char where[512];
    int rc = sv_yget_str(map, "fp4_formats", 0, &s, err);
    if (rc < 0) return rc;
    *out = 0;
    if (s) {
        if (strstr(s, "nvfp4")) *out |= SV_FP4_NVFP4;
        if (strstr(s, "mxfp4")) *out |= SV_FP4_MXFP4;
        if (!*out)
            return sv_errorf(err, SV_EINVAL,
                             "%s: %s.fp4_formats: expected nvfp4, mxfp4 or both, got '%s'",
                             sv_ynode_where(map, where, sizeof where), map->path, s);
    }
    if ((fp4 > 0) != (*out != 0))
        return sv_errorf(err, SV_EINVAL, "%s: %s: fp4_tflops and fp4_formats go together",
                         sv_ynode_where(map, where, sizeof where), map->path);
    return 0;
}

const char *const sv_topology_names[SV_TOPO_COUNT] = {"nvswitch", "nvlink-pairs", "pcie", "nvl72",
                                                      "mesh"};

/* topology: one of sv_topology_names; without it, from the link kind and the domain. */
static int read_topology(sv_ynode_t *map, sv_gpu_t *g, double domain, sv_error_t *err)
{
    const char *s = NULL;
    char where[512];
    int rc = sv_yget_str(map, "topology", 0, &s, err);
    if (rc < 0) return rc;
    if (!s) {
        g->topology = strcmp(g->link, "nvlink") == 0 ? (domain >= 72 ? SV_TOPO_NVL72 : SV_TOPO_NVSWITCH)
                      : strcmp(g->link, "pcie") == 0 ? SV_TOPO_PCIE
                                                     : SV_TOPO_MESH;
        return 0;
    }
    for (int i = 0; i < SV_TOPO_COUNT; i++)
        if (strcmp(s, sv_topology_names[i]) == 0) {
            g->topology = i;
            return 0;
        }
    return sv_errorf(err, SV_EINVAL,
                     "%s: %s.topology: expected nvswitch, nvlink-pairs, pcie, nvl72 or mesh, got '%s'",
                     sv_ynode_where(map, where, sizeof where), map->path, s);
}

/* Engine-efficiency settings that a file's `defaults:` map may give its GPUs. */
typedef struct gpu_defaults {
    double compute_eff, memory_eff, iter_overhead_ms, layer_overhead_us, link_latency_us;
    double curve[SV_CV_COUNT];
} gpu_defaults_t;

/* The curve keys of a map (defaults or one GPU) into curve[], leaving absent ones. */
static int read_curves(sv_ynode_t *map, double *curve, sv_error_t *err)
{
    for (int k = 0; k < SV_CV_COUNT; k++) {
        int rc = sv_yget_double(map, sv_curve_keys[k], 0, sv_curve_lo[k], sv_curve_hi[k], &curve[k],
                                err);
        if (rc < 0) return rc;
    }
    return 0;
}

static int read_defaults(sv_ynode_t *map, gpu_defaults_t *d, sv_error_t *err)
{
    int rc;
    if ((rc = sv_yexpect_map(map, "defaults", err))) return rc;
    if ((rc = sv_yget_double(map, "compute_efficiency", 0, 1e-6, 1, &d->compute_eff, err)) < 0 ||
        (rc = sv_yget_double(map, "memory_efficiency", 0, 1e-6, 1, &d->memory_eff, err)) < 0 ||
        (rc = sv_yget_double(map, "iteration_overhead_ms", 0, 0, 1e4, &d->iter_overhead_ms, err)) <
            0 ||
        (rc = sv_yget_double(map, "layer_overhead_us", 0, 0, 1e6, &d->layer_overhead_us, err)) <
            0 ||
        (rc = sv_yget_double(map, "link_latency_us", 0, 0, 1e6, &d->link_latency_us, err)) < 0 ||
        (rc = read_curves(map, d->curve, err)))
        return rc;
    return sv_ymap_check_unknown(map, err);
}

static int read_gpu(sv_ynode_t *map, const gpu_defaults_t *d, sv_gpu_t *g, sv_error_t *err)
{
    int rc;
    const char *s;
    double tf, fp8 = 0, fp4 = 0, mib, bw, lbw, llat = d->link_latency_us;
    double domain = 8, pcie = 0;
    double ce = d->compute_eff, me = d->memory_eff, io = d->iter_overhead_ms,
           lo = d->layer_overhead_us;
    memset(g, 0, sizeof *g);
    if ((rc = sv_yexpect_map(map, "gpu entry", err))) return rc;
    if ((rc = sv_yget_str(map, "name", 1, &s, err)) ||
        (rc = copy_text(g->name, sizeof g->name, s, map, "name", err)))
        return rc;
    s = "";
    if ((rc = sv_yget_str(map, "description", 0, &s, err)) < 0 ||
        (rc = copy_text(g->description, sizeof g->description, s, map, "description", err)))
        return rc;
    if ((rc = sv_yget_double(map, "bf16_tflops", 1, 1e-3, 1e6, &tf, err)) ||
        (rc = sv_yget_double(map, "fp8_tflops", 0, 0, 1e6, &fp8, err)) < 0 ||
        (rc = sv_yget_double(map, "fp4_tflops", 0, 0, 1e6, &fp4, err)) < 0 ||
        (rc = read_fp4_formats(map, fp4, &g->fp4_formats, err)) ||
        (rc = sv_yget_double(map, "nvlink_domain_gpus", 0, 1, 1024, &domain, err)) < 0 ||
        (rc = sv_yget_double(map, "memory_mib", 1, 1, 1e9, &mib, err)) ||
        (rc = sv_yget_double(map, "hbm_bandwidth_gb_s", 1, 1e-3, 1e6, &bw, err)))
        return rc;
    s = "";
    if ((rc = sv_yget_str(map, "link", 1, &s, err)) ||
        (rc = copy_text(g->link, sizeof g->link, s, map, "link", err)) ||
        (rc = sv_yget_double(map, "link_bandwidth_gb_s", 1, 1e-3, 1e6, &lbw, err)) ||
        (rc = read_topology(map, g, domain, err)) ||
        (rc = sv_yget_double(map, "pcie_bandwidth_gb_s", g->topology == SV_TOPO_NVLINK_PAIRS,
                             1e-3, 1e6, &pcie, err)) < 0 ||
        (rc = sv_yget_double(map, "link_latency_us", isnan(llat), 0, 1e6, &llat, err)) < 0 ||
        (rc = sv_yget_double(map, "tdp_w", 1, 1, 1e5, &g->tdp_w, err)) ||
        (rc = sv_yget_double(map, "idle_w", 1, 0, 1e5, &g->idle_w, err)) ||
        (rc = sv_yget_double(map, "price_per_hour_usd", 1, 0, 1e6, &g->price_per_hour, err)) ||
        (rc = sv_yget_double(map, "price_low_usd", 0, 0, 1e6, &g->price_low, err)) < 0 ||
        (rc = sv_yget_double(map, "price_high_usd", 0, 0, 1e6, &g->price_high, err)) < 0 ||
        (rc = read_calibration(map, &g->calibration, err)) ||
        (rc = sv_yget_double(map, "compute_efficiency", isnan(ce), 1e-6, 1, &ce, err)) < 0 ||
        (rc = sv_yget_double(map, "memory_efficiency", isnan(me), 1e-6, 1, &me, err)) < 0 ||
        (rc = sv_yget_double(map, "iteration_overhead_ms", isnan(io), 0, 1e4, &io, err)) < 0 ||
        (rc = sv_yget_double(map, "layer_overhead_us", isnan(lo), 0, 1e6, &lo, err)) < 0)
        return rc;
    memcpy(g->curve, d->curve, sizeof g->curve);
    if ((rc = read_curves(map, g->curve, err))) return rc;
    s = "";
    if ((rc = sv_yget_str(map, "source", 1, &s, err)) ||
        (rc = copy_text(g->source, sizeof g->source, s, map, "source", err)))
        return rc;
    s = "";
    if ((rc = sv_yget_str(map, "calibrated_from", 0, &s, err)) < 0 ||
        (rc = copy_text(g->calibrated_from, sizeof g->calibrated_from, s, map, "calibrated_from",
                        err)))
        return rc;
    s = "";
    if ((rc = sv_yget_str(map, "price_date", 0, &s, err)) < 0 ||
        (rc = copy_text(g->price_date, sizeof g->price_date, s, map, "price_date", err)))
        return rc;
    if (g->price_high < g->price_low) {
        char where[512];
        return sv_errorf(err, SV_EINVAL, "%s: %s: price_low_usd (%g) exceeds price_high_usd (%g)",
                         sv_ynode_where(map, where, sizeof where), map->path, g->price_low,
                         g->price_high);
    }
    if (g->idle_w > g->tdp_w) {
        char where[512];
        return sv_errorf(err, SV_EINVAL, "%s: %s: idle_w (%g) exceeds tdp_w (%g)",
                         sv_ynode_where(map, where, sizeof where), map->path, g->idle_w, g->tdp_w);
    }
    g->bf16_flops = tf * 1e12;
    g->fp8_flops = fp8 * 1e12;
    g->fp4_flops = fp4 * 1e12;
    g->nvlink_domain = (int)domain;
    g->mem_bytes = mib * 1048576.0;
    g->hbm_bw = bw * 1e9;
    g->link_bw = lbw * 1e9;
    g->link_latency = llat * 1e-6;
    g->pcie_bw = pcie * 1e9;
    g->compute_eff = ce;
    g->memory_eff = me;
    g->iter_overhead_s = io * 1e-3;
    g->layer_overhead_s = lo * 1e-6;
    return sv_ymap_check_unknown(map, err);
}

static int get_int(sv_ynode_t *map, const char *key, int required, long lo, long hi, int *out,
                   sv_error_t *err)
{
    long v;
    int rc = sv_yget_long(map, key, required, lo, hi, &v, err);
    if (rc == 0) *out = (int)v;
    return rc;
}

/* The keys of a model entry beyond the dense transformer (docs/cost-model.md,
 * "Architectures"); names follow config.json where it has one. */
static int read_model_arch(sv_ynode_t *map, sv_model_t *m, sv_error_t *err)
{
    int rc;
    const char *attn = "gqa", *fmt = "";
    if ((rc = sv_yget_str(map, "attention", 0, &attn, err)) < 0 ||
        (rc = get_int(map, "q_lora_rank", 0, 0, 1 << 20, &m->q_lora_rank, err)) < 0 ||
        (rc = get_int(map, "kv_lora_rank", 0, 1, 1 << 20, &m->kv_lora_rank, err)) < 0 ||
        (rc = get_int(map, "qk_nope_head_dim", 0, 1, 1 << 16, &m->qk_nope_head_dim, err)) < 0 ||
        (rc = get_int(map, "qk_rope_head_dim", 0, 1, 1 << 16, &m->qk_rope_head_dim, err)) < 0 ||
        (rc = get_int(map, "v_head_dim", 0, 1, 1 << 16, &m->v_head_dim, err)) < 0 ||
        (rc = get_int(map, "n_shared_experts", 0, 0, 1 << 10, &m->shared_experts, err)) < 0 ||
        (rc = get_int(map, "shared_expert_intermediate_size", 0, 1, 1 << 24, &m->shared_ffn,
                      err)) < 0 ||
        (rc = get_int(map, "dense_layers", 0, 0, 100000, &m->dense_layers, err)) < 0 ||
        (rc = get_int(map, "window_layers", 0, 0, 100000, &m->window_layers, err)) < 0 ||
        (rc = sv_yget_bool(map, "chunked_attention", 0, &m->chunked_window, err)) < 0 ||
        (rc = get_int(map, "linear_attention_layers", 0, 0, 100000, &m->linear_layers, err)) < 0 ||
        (rc = get_int(map, "linear_num_key_heads", 0, 1, 1 << 16, &m->lin_k_heads, err)) < 0 ||
        (rc = get_int(map, "linear_num_value_heads", 0, 1, 1 << 16, &m->lin_v_heads, err)) < 0 ||
        (rc = get_int(map, "linear_key_head_dim", 0, 1, 1 << 16, &m->lin_k_dim, err)) < 0 ||
        (rc = get_int(map, "linear_value_head_dim", 0, 1, 1 << 16, &m->lin_v_dim, err)) < 0 ||
        (rc = get_int(map, "linear_conv_kernel_dim", 0, 1, 1 << 10, &m->lin_conv, err)) < 0 ||
        (rc = sv_yget_bool(map, "attn_output_gate", 0, &m->attn_output_gate, err)) < 0 ||
        (rc = sv_yget_bool(map, "attention_sinks", 0, &m->attention_sinks, err)) < 0 ||
        (rc = get_int(map, "num_nextn_predict_layers", 0, 0, 64, &m->mtp_layers, err)) < 0 ||
        (rc = sv_yget_str(map, "checkpoint_dtype", 0, &fmt, err)) < 0 ||
        (rc = sv_yget_bool(map, "checkpoint_experts_only", 0, &m->ckpt_experts_only, err)) < 0 ||
        (rc = get_int(map, "checkpoint_scale_block", 0, 1, 1 << 30, &m->ckpt_scale_block, err)) <
            0)
        return rc;
    char where[512];
    if (strcmp(attn, "mla") == 0) {
        m->mla = 1;
        if (!m->kv_lora_rank || !m->qk_nope_head_dim || !m->qk_rope_head_dim || !m->v_head_dim)
            return sv_errorf(err, SV_EINVAL,
                             "%s: %s: attention mla needs kv_lora_rank, qk_nope_head_dim, "
                             "qk_rope_head_dim and v_head_dim",
                             sv_ynode_where(map, where, sizeof where), map->path);
    } else if (strcmp(attn, "gqa") != 0) {
        return sv_errorf(err, SV_EINVAL, "%s: %s.attention: expected 'gqa' or 'mla', got '%s'",
                         sv_ynode_where(sv_ymap_get(map, "attention"), where, sizeof where),
                         map->path, attn);
    }
    if (*fmt && strcmp(fmt, "fp8") && strcmp(fmt, "mxfp4") && strcmp(fmt, "nvfp4") &&
        strcmp(fmt, "int4"))
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.checkpoint_dtype: expected fp8, mxfp4, nvfp4 or int4, got '%s'",
                         sv_ynode_where(sv_ymap_get(map, "checkpoint_dtype"), where, sizeof where),
                         map->path, fmt);
    snprintf(m->ckpt_dtype, sizeof m->ckpt_dtype, "%s", fmt);
    if (m->shared_experts && !m->shared_ffn) m->shared_ffn = m->shared_experts * m->moe_ffn;
    if (m->shared_ffn && !m->shared_experts) m->shared_experts = 1;
    if (m->mtp_layers)
        snprintf(m->notes, sizeof m->notes,
                 "num_nextn_predict_layers: the MTP module is not loaded (no speculative decoding)");
    return 0;
}

static int read_model(sv_ynode_t *map, sv_model_t *m, sv_error_t *err)
{
    int rc;
    const char *s;
    memset(m, 0, sizeof *m);
    m->gated_mlp = 1;
    if ((rc = sv_yexpect_map(map, "model entry", err))) return rc;
    if ((rc = sv_yget_str(map, "name", 1, &s, err)) ||
        (rc = copy_text(m->name, sizeof m->name, s, map, "name", err)))
        return rc;
    s = "";
    if ((rc = sv_yget_str(map, "hf_id", 0, &s, err)) < 0 ||
        (rc = copy_text(m->hf_id, sizeof m->hf_id, s, map, "hf_id", err)))
        return rc;
    const char *mlp = "gated";
    if ((rc = get_int(map, "num_hidden_layers", 1, 1, 100000, &m->layers, err)) ||
        (rc = get_int(map, "hidden_size", 1, 1, 1 << 22, &m->hidden, err)) ||
        (rc = get_int(map, "num_attention_heads", 1, 1, 1 << 16, &m->heads, err)) ||
        (rc = get_int(map, "num_key_value_heads", 1, 1, 1 << 16, &m->kv_heads, err)) ||
        (rc = get_int(map, "head_dim", 1, 1, 1 << 16, &m->head_dim, err)) ||
        (rc = get_int(map, "intermediate_size", 1, 1, 1 << 24, &m->ffn, err)) ||
        (rc = get_int(map, "vocab_size", 1, 1, 1 << 24, &m->vocab, err)) ||
        (rc = sv_yget_bool(map, "tie_word_embeddings", 1, &m->tied_embeddings, err)) ||
        (rc = sv_yget_str(map, "mlp", 0, &mlp, err)) < 0 ||
        (rc = sv_yget_bool(map, "qkv_bias", 0, &m->qkv_bias, err)) < 0 ||
        (rc = get_int(map, "num_local_experts", 0, 0, 1 << 16, &m->experts, err)) < 0 ||
        (rc = get_int(map, "num_experts_per_tok", 0, 1, 1 << 16, &m->experts_per_tok, err)) < 0 ||
        (rc = get_int(map, "moe_intermediate_size", 0, 1, 1 << 24, &m->moe_ffn, err)) < 0 ||
        (rc = get_int(map, "sliding_window", 0, 0, 1 << 30, &m->sliding_window, err)) < 0 ||
        (rc = sv_yget_long(map, "max_position_embeddings", 1, 1, 1L << 40, &m->max_context, err)))
        return rc;
    if ((rc = read_model_arch(map, m, err))) return rc;
    if (strcmp(mlp, "gated") == 0)
        m->gated_mlp = 1;
    else if (strcmp(mlp, "plain") == 0)
        m->gated_mlp = 0;
    else {
        char where[512];
        return sv_errorf(err, SV_EINVAL, "%s: %s.mlp: expected 'gated' or 'plain', got '%s'",
                         sv_ynode_where(sv_ymap_get(map, "mlp"), where, sizeof where), map->path,
                         mlp);
    }
    s = "";
    if ((rc = sv_yget_str(map, "source", 1, &s, err)) ||
        (rc = copy_text(m->source, sizeof m->source, s, map, "source", err)))
        return rc;
    if ((rc = sv_ymap_check_unknown(map, err))) return rc;
    if (m->experts && !m->moe_ffn) m->moe_ffn = m->ffn;
    if (m->shared_experts && !m->shared_ffn) m->shared_ffn = m->shared_experts * m->moe_ffn;
    char where[600];
    char w2[512];
    snprintf(where, sizeof where, "%s: %s", sv_ynode_where(map, w2, sizeof w2), map->path);
    return sv_model_check(m, where, err);
}

int sv_model_check(const sv_model_t *m, const char *where, sv_error_t *err)
{
    if (m->layers <= 0 || m->hidden <= 0 || m->heads <= 0 || m->kv_heads <= 0 || m->head_dim <= 0 ||
        m->ffn <= 0 || m->vocab <= 0)
        return sv_errorf(err, SV_EINVAL, "%s: model sizes must all be positive", where);
    if (m->heads % m->kv_heads)
        return sv_errorf(
            err, SV_EINVAL,
            "%s: num_attention_heads (%d) is not a multiple of num_key_value_heads (%d)", where,
            m->heads, m->kv_heads);
    if (m->experts < 0 ||
        (m->experts > 0 && (m->experts_per_tok < 1 || m->experts_per_tok > m->experts)))
        return sv_errorf(
            err, SV_EINVAL,
            "%s: num_experts_per_tok (%d) must be between 1 and num_local_experts (%d)", where,
            m->experts_per_tok, m->experts);
    if (m->sliding_window > 0 && m->max_context > 0 && m->sliding_window > m->max_context)
        return sv_errorf(err, SV_EINVAL,
                         "%s: sliding_window (%d) is larger than the context "
                         "max_position_embeddings (%ld)",
                         where, m->sliding_window, m->max_context);
    if (m->dense_layers < 0 || m->window_layers < 0 || m->linear_layers < 0 ||
        m->dense_layers > m->layers || (m->dense_layers == m->layers && m->experts) ||
        ((m->window_layers || m->linear_layers) &&
         m->window_layers + m->linear_layers >= m->layers))
        return sv_errorf(err, SV_EINVAL,
                         "%s: dense_layers (%d), window_layers (%d) and linear_attention_layers "
                         "(%d) must fit the %d layers (and leave a full-attention layer, and a "
                         "MoE layer when there are experts)",
                         where, m->dense_layers, m->window_layers, m->linear_layers, m->layers);
    if (m->window_layers && !m->sliding_window)
        return sv_errorf(err, SV_EINVAL, "%s: window_layers (%d) needs a sliding_window", where,
                         m->window_layers);
    if (m->linear_layers &&
        (m->lin_k_heads < 1 || m->lin_v_heads < 1 || m->lin_k_dim < 1 || m->lin_v_dim < 1))
        return sv_errorf(err, SV_EINVAL,
                         "%s: linear_attention_layers needs linear_num_key_heads, "
                         "linear_num_value_heads, linear_key_head_dim and linear_value_head_dim",
                         where);
    if (m->mla && (m->linear_layers || m->window_layers || m->sliding_window))
        return sv_errorf(err, SV_EINVAL,
                         "%s: MLA with windowed or linear-attention layers is not modelled", where);
    if (m->shared_experts && !m->experts)
        return sv_errorf(err, SV_EINVAL, "%s: shared experts need routed experts", where);
    return 0;
}

int sv_model_window_layers(const sv_model_t *m)
{
    return m->sliding_window <= 0 ? 0 : m->window_layers ? m->window_layers : m->layers;
}

int sv_model_moe_layers(const sv_model_t *m)
{
    return m->experts ? m->layers - m->dense_layers : 0;
}

typedef struct loader {
    sv_catalog_t *cat;
    size_t capg, capm, cape;
} loader_t;

/* Keys an engine profile may give besides name, description and fitted_to. */
static int engine_key_ok(const char *k)
{
    static const char *const own[] = {
        "iteration_overhead_ms", "layer_overhead_us",  "seq_overhead_us",   "cuda_graphs",
        "graph_max_tokens",      "compute_efficiency", "memory_efficiency", "link_latency_us",
        "custom_allreduce",      "nccl_nvls"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (strcmp(k, own[i]) == 0) return 1;
    for (int i = 0; i < SV_CV_COUNT; i++)
        if (strcmp(k, sv_curve_keys[i]) == 0) return 1;
    return 0;
}

/*
 * An engine profile's `scheduler_defaults`: a map from a scheduler's name to the engine
 * settings the engine uses by default with it (async_scheduling, api_server_ms). The names
 * are checked where they are used (the scenario loader knows the schedulers).
 */
static int read_sched_defaults(sv_ynode_t *sd, sv_engine_profile_t *e, sv_error_t *err)
{
    int rc;
    char where[512];
    if ((rc = sv_yexpect_map(sd, "scheduler_defaults", err))) return rc;
    for (size_t i = 0; i < sd->n; i++) {
        sv_yentry_t *en = &sd->map[i];
        sv_ynode_t *m = en->val;
        sv_ynode_where(m, where, sizeof where);
        if (e->nscheds == SV_ENGINE_MAX_SCHEDS || strlen(en->key) >= sizeof e->scheds[0].scheduler)
            return sv_errorf(err, SV_ELIMIT,
                             "%s: %s: at most %d schedulers of names under %zu characters", where,
                             m->path, SV_ENGINE_MAX_SCHEDS, sizeof e->scheds[0].scheduler);
        if ((rc = sv_yexpect_map(m, "scheduler defaults", err))) return rc;
        en->used = 1;
        sv_engine_sched_defaults_t *d = &e->scheds[e->nscheds++];
        snprintf(d->scheduler, sizeof d->scheduler, "%s", en->key);
        snprintf(d->where, sizeof d->where, "%s: %s", where, m->path);
        d->async_scheduling = -1;
        d->api_server_ms = NAN;
        if ((rc = sv_yget_bool(m, "async_scheduling", 0, &d->async_scheduling, err)) < 0 ||
            (rc = sv_yget_double(m, "api_server_ms", 0, 0, 1e6, &d->api_server_ms, err)) < 0 ||
            (rc = sv_ymap_check_unknown(m, err)))
            return rc;
    }
    return 0;
}

const sv_engine_sched_defaults_t *sv_engine_sched_defaults(const sv_engine_profile_t *e,
                                                           const char *scheduler)
{
    for (int i = 0; e && i < e->nscheds; i++)
        if (strcmp(e->scheds[i].scheduler, scheduler) == 0) return &e->scheds[i];
    return NULL;
}

const char *sv_engine_sched_defaults_text(const sv_engine_sched_defaults_t *d, char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    const char *async =
        d && d->async_scheduling >= 0 ? d->async_scheduling ? "true" : "false" : NULL;
    if (async) off = (size_t)snprintf(buf, n, "async_scheduling %s", async);
    if (d && !isnan(d->api_server_ms) && off < n)
        snprintf(buf + off, n - off, "%sapi_server_ms %g", off ? ", " : "", d->api_server_ms);
    if (!buf[0]) snprintf(buf, n, "none");
    return buf;
}

static int read_engine(sv_ynode_t *map, sv_engine_profile_t *e, sv_error_t *err)
{
    int rc;
    const char *s;
    char where[512];
    memset(e, 0, sizeof *e);
    if ((rc = sv_yexpect_map(map, "engine profile", err))) return rc;
    if ((rc = sv_yget_str(map, "name", 1, &s, err)) ||
        (rc = copy_text(e->name, sizeof e->name, s, map, "name", err)))
        return rc;
    s = "";
    if ((rc = sv_yget_str(map, "description", 0, &s, err)) < 0 ||
        (rc = copy_text(e->description, sizeof e->description, s, map, "description", err)) ||
        (rc = sv_yget_str(map, "fitted_to", 1, &s, err)) ||
        (rc = copy_text(e->fitted_to, sizeof e->fitted_to, s, map, "fitted_to", err)) ||
        (rc = read_calibration(map, &e->calibration, err)))
        return rc;
    sv_ynode_t *sd = sv_ymap_get(map, "scheduler_defaults");
    if (sd && (rc = read_sched_defaults(sd, e, err))) return rc;
    sv_perf_settings_t scratch = sv_perf_settings_default();
    for (size_t i = 0; i < map->n; i++) {
        sv_yentry_t *en = &map->map[i];
        if (en->used) continue;
        /* The place is written out only for a message: most keys have none. */
        if (!engine_key_ok(en->key))
            return sv_errorf(err, SV_ENOKEY,
                             "%s: %s.%s: not an engine-profile key (engine costs, cuda_graphs, "
                             "graph_max_tokens, custom_allreduce, nccl_nvls, scheduler_defaults, or a "
                             "hardware curve key)",
                             sv_ynode_where(en->val, where, sizeof where), map->path, en->key);
        if (en->val->kind != SV_Y_SCALAR)
            return sv_errorf(err, SV_EINVAL, "%s: %s.%s: expected a value",
                             sv_ynode_where(en->val, where, sizeof where), map->path, en->key);
        size_t klen = strlen(en->key), vlen = strlen(en->val->scalar);
        if (e->nkeys == SV_ENGINE_MAX_KEYS || klen >= sizeof e->keys[0] ||
            vlen >= sizeof e->values[0])
            return sv_errorf(err, SV_ELIMIT, "%s: %s.%s: too many keys or too long a value",
                             sv_ynode_where(en->val, where, sizeof where), map->path, en->key);
        if ((rc = sv_perf_settings_set(&scratch, en->key, en->val->scalar, err)))
            return sv_error_prefix(err, "%s: %s", sv_ynode_where(en->val, where, sizeof where),
                                   map->path);
        en->used = 1;
        memcpy(e->keys[e->nkeys], en->key, klen + 1); /* (both fit: checked above) */
        memcpy(e->values[e->nkeys], en->val->scalar, vlen + 1);
        e->nkeys++;
    }
    return 0;
}

static int load_file(loader_t *ld, const char *path, sv_error_t *err)
{
    sv_ydoc_t *doc;
    int rc = sv_ydoc_load(path, &doc, err);
    if (rc) return rc;
    sv_ynode_t *root = doc->root;
    if (!root) goto done; /* an empty file adds nothing */
    if ((rc = sv_yexpect_map(root, path, err))) goto done;
    gpu_defaults_t d = {NAN, NAN, NAN, NAN, NAN, {0}};
    for (int k = 0; k < SV_CV_COUNT; k++)
        d.curve[k] = NAN;
    sv_ynode_t *defs = sv_ymap_get(root, "defaults");
    if (defs && (rc = read_defaults(defs, &d, err))) goto done;
    sv_ynode_t *gpus = sv_ymap_get(root, "gpus");
    sv_ynode_t *models = sv_ymap_get(root, "models");
    sv_ynode_t *engines = sv_ymap_get(root, "engines");
    if ((rc = sv_ymap_check_unknown(root, err))) goto done;
    if (engines) {
        if ((rc = sv_yexpect_seq(engines, "engines", err))) goto done;
        for (size_t i = 0; i < engines->n; i++) {
            sv_catalog_t *c = ld->cat;
            if (SV_GROW(c->engines, ld->cape, c->nengines + 1)) {
                rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
                goto done;
            }
            if ((rc = read_engine(engines->seq[i], &c->engines[c->nengines], err))) goto done;
            for (size_t k = 0; k < c->nengines; k++) {
                if (strcasecmp(c->engines[k].name, c->engines[c->nengines].name) == 0) {
                    char where[512];
                    rc = sv_errorf(
                        err, SV_EINVAL, "%s: engine profile '%s' is defined twice in the catalog",
                        sv_ynode_where(engines->seq[i], where, sizeof where), c->engines[k].name);
                    goto done;
                }
            }
            c->nengines++;
        }
    }
    if (gpus) {
        if ((rc = sv_yexpect_seq(gpus, "gpus", err))) goto done;
        for (size_t i = 0; i < gpus->n; i++) {
            sv_catalog_t *c = ld->cat;
            if (SV_GROW(c->gpus, ld->capg, c->ngpus + 1)) {
                rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
                goto done;
            }
            if ((rc = read_gpu(gpus->seq[i], &d, &c->gpus[c->ngpus], err))) goto done;
            for (size_t k = 0; k < c->ngpus; k++) {
                if (strcasecmp(c->gpus[k].name, c->gpus[c->ngpus].name) == 0) {
                    char where[512];
                    rc = sv_errorf(err, SV_EINVAL, "%s: GPU '%s' is defined twice in the catalog",
                                   sv_ynode_where(gpus->seq[i], where, sizeof where),
                                   c->gpus[k].name);
                    goto done;
                }
            }
            c->ngpus++;
        }
    }
    if (models) {
        if ((rc = sv_yexpect_seq(models, "models", err))) goto done;
        for (size_t i = 0; i < models->n; i++) {
            sv_catalog_t *c = ld->cat;
            if (SV_GROW(c->models, ld->capm, c->nmodels + 1)) {
                rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
                goto done;
            }
            if ((rc = read_model(models->seq[i], &c->models[c->nmodels], err))) goto done;
            for (size_t k = 0; k < c->nmodels; k++) {
                if (strcasecmp(c->models[k].name, c->models[c->nmodels].name) == 0) {
                    char where[512];
                    rc = sv_errorf(err, SV_EINVAL, "%s: model '%s' is defined twice in the catalog",
                                   sv_ynode_where(models->seq[i], where, sizeof where),
                                   c->models[k].name);
                    goto done;
                }
            }
            c->nmodels++;
        }
    }
done:
    sv_ydoc_free(doc);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sv_catalog_load(const char *dir, sv_catalog_t **out, sv_error_t *err)
{
    *out = NULL;
    DIR *dp = opendir(dir);
    if (!dp)
        return sv_errorf(err, SV_EIO,
                         "%s: cannot open the catalog directory: %s (set --catalog DIR or "
                         "SERVESIM_CATALOG)",
                         dir, strerror(errno));
    char *names[MAX_FILES];
    size_t n = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0 || de->d_name[0] == '.') continue;
        if (n == MAX_FILES) {
            rc = sv_errorf(err, SV_ELIMIT, "%s: more than %d catalog files", dir, MAX_FILES);
            break;
        }
        size_t plen = strlen(dir) + len + 2;
        if (!(names[n] = malloc(plen))) {
            rc = sv_errorf(err, SV_ENOMEM, "out of memory");
            break;
        }
        snprintf(names[n++], plen, "%s/%s", dir, de->d_name);
    }
    closedir(dp);
    qsort(names, n, sizeof names[0], cmp_str);
    loader_t ld = {.cat = calloc(1, sizeof(sv_catalog_t))};
    if (!ld.cat && !rc) rc = sv_errorf(err, SV_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !rc; i++)
        rc = load_file(&ld, names[i], err);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    if (!rc && ld.cat->ngpus == 0 && ld.cat->nmodels == 0)
        rc = sv_errorf(err, SV_EINVAL, "%s: no GPUs or models found in the catalog", dir);
    if (rc) {
        sv_catalog_free(ld.cat);
        return rc;
    }
    *out = ld.cat;
    return 0;
}

/* "a, b, c" from count names laid out stride bytes apart (the name field of an array). */
static void join_names(char *buf, size_t n, const char *first, size_t count, size_t stride)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && off < n - 1; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "", first + i * stride);
}

int sv_catalog_gpu(const sv_catalog_t *cat, const char *name, const sv_gpu_t **out, sv_error_t *err)
{
    for (size_t i = 0; i < cat->ngpus; i++) {
        if (strcasecmp(cat->gpus[i].name, name) == 0) {
            *out = &cat->gpus[i];
            return 0;
        }
    }
    char known[SV_ERRMSG_MAX / 2];
    join_names(known, sizeof known, cat->ngpus ? cat->gpus[0].name : "", cat->ngpus,
               sizeof *cat->gpus);
    return sv_errorf(err, SV_ENOTFOUND, "unknown GPU '%s' (known: %s)", name, known);
}

int sv_catalog_engine(const sv_catalog_t *cat, const char *name, const sv_engine_profile_t **out,
                      sv_error_t *err)
{
    for (size_t i = 0; i < cat->nengines; i++) {
        if (strcasecmp(cat->engines[i].name, name) == 0) {
            *out = &cat->engines[i];
            return 0;
        }
    }
    char known[SV_ERRMSG_MAX / 2];
    join_names(known, sizeof known, cat->nengines ? cat->engines[0].name : "", cat->nengines,
               sizeof *cat->engines);
    return sv_errorf(err, SV_ENOTFOUND, "unknown engine profile '%s' (known: %s)", name,
                     cat->nengines ? known : "none: the catalog has no engines list");
}

int sv_catalog_model(const sv_catalog_t *cat, const char *name, const sv_model_t **out,
                     sv_error_t *err)
{
    for (size_t i = 0; i < cat->nmodels; i++) {
        if (strcasecmp(cat->models[i].name, name) == 0) {
            *out = &cat->models[i];
            return 0;
        }
    }
    char known[SV_ERRMSG_MAX / 2];
    join_names(known, sizeof known, cat->nmodels ? cat->models[0].name : "", cat->nmodels,
               sizeof *cat->models);
    return sv_errorf(err, SV_ENOTFOUND,
                     "unknown model '%s' (known: %s; or give a path to a config.json)", name,
                     known);
}

int sv_catalog_resolve_model(const sv_catalog_t *cat, const char *spec, sv_model_t *out,
                             sv_error_t *err)
{
    size_t len = strlen(spec);
    struct stat st;
    int is_file = stat(spec, &st) == 0 && S_ISREG(st.st_mode);
    if (is_file || (len > 5 && strcmp(spec + len - 5, ".json") == 0))
        return sv_model_from_hf_config(spec, out, err);
    const sv_model_t *m;
    int rc = sv_catalog_model(cat, spec, &m, err);
    if (rc) return rc;
    *out = *m;
    return 0;
}
