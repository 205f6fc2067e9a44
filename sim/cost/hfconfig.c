/*
 * A model architecture read from a Hugging Face config.json, so users can simulate
 * their own model without editing the catalog. Every key that changes memory, FLOPs or
 * bytes moved is read: the dense transformer's sizes, mixture of experts (routed, shared,
 * dense layers among MoE ones), multi-head latent attention, sliding and chunked windows
 * per layer, linear-attention layers, and the checkpoint's weight format
 * (quantization_config). A key that changes cost and is not modelled is an error naming
 * it (unmodelled_keys below); what is approximated is said in the model's notes. Other
 * keys (tokenizer ids, dropout, rotary scaling, ...) change no cost and are ignored.
 * Missing or mistyped required keys are errors naming the file and key.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "base/fileio_int.h"
#include "servesim/cost/catalog.h"

/* Architectures whose MLP has two matrices (up, down) rather than gate+up+down. */
static const char *const plain_mlp_types[] = {"opt",        "gpt2",   "gpt_neox", "gptj",
                                              "bloom",      "falcon", "phi",      "gpt_bigcode",
                                              "starcoder2", "mpt",    NULL};

/* Integer key: 0 ok, 1 absent/null (when optional), negative error. */
static int json_int(const cJSON *obj, const char *key, int required, long lo, long hi, long *out,
                    const char *path, sv_error_t *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it || cJSON_IsNull(it)) {
        if (!required) return 1;
        return sv_errorf(err, SV_EINVAL,
                         "%s: missing key '%s' (expected a Hugging Face config.json)", path, key);
    }
    double v = it->valuedouble;
    if (!cJSON_IsNumber(it) || v != floor(v) || v < (double)lo || v > (double)hi)
        return sv_errorf(err, SV_EINVAL, "%s: key '%s': expected a whole number in [%ld, %ld]",
                         path, key, lo, hi);
    *out = (long)v;
    return 0;
}

static int json_bool(const cJSON *obj, const char *key, int *out, const char *path, sv_error_t *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it || cJSON_IsNull(it)) return 1;
    if (!cJSON_IsBool(it))
        return sv_errorf(err, SV_EINVAL, "%s: key '%s': expected true or false", path, key);
    *out = cJSON_IsTrue(it);
    return 0;
}

/* Append one approximation to the model's notes. */
static void note(sv_model_t *m, const char *text)
{
    size_t n = strlen(m->notes);
    snprintf(m->notes + n, sizeof m->notes - n, "%s%s", n ? "; " : "", text);
}

/*
 * Keys that change what a step costs and that the cost model does not model: reading
 * such a config.json silently would give wrong answers, so each is an error naming it.
 */
static const struct {
    const char *key, *what;
} unmodelled_keys[] = {
    {"index_topk", "DeepSeek sparse attention (the indexer's top-k keys)"},
    {"index_n_heads", "DeepSeek sparse attention (the lightning indexer)"},
    {"num_kv_shared_layers", "layers that reuse another layer's KV cache"},
    {"altup_num_inputs", "Gemma-3n's alternating updates"},
    {"ssm_state_size", "Mamba state-space layers"},
    {"mamba_d_state", "Mamba state-space layers"},
    {"cross_attention_layers", "cross-attention layers"},
    {"attn_type_list", "per-layer lightning attention"},
    {NULL, NULL},
};

/* A value that switches a feature on: a non-zero number, true, a non-empty list or text. */
static int json_set(const cJSON *it)
{
    if (!it || cJSON_IsNull(it) || cJSON_IsFalse(it)) return 0;
    if (cJSON_IsNumber(it)) return it->valuedouble != 0.0;
    if (cJSON_IsArray(it) || cJSON_IsObject(it)) return it->child != NULL;
    if (cJSON_IsString(it)) return it->valuestring[0] != '\0';
    return 1;
}

/* A list of whole numbers (layer indices); count of entries, or negative on error. */
static int json_int_list(const cJSON *obj, const char *key, int *vals, int max, const char *path,
                         sv_error_t *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it || cJSON_IsNull(it)) return 0;
    int n = 0;
    if (cJSON_IsArray(it)) {
        for (const cJSON *c = it->child; c; c = c->next) {
            if (!cJSON_IsNumber(c) || c->valuedouble != floor(c->valuedouble) ||
                c->valuedouble < 0 || c->valuedouble > 1e6 || n >= max)
                return sv_errorf(err, SV_EINVAL,
                                 "%s: key '%s': expected a list of at most %d whole numbers", path,
                                 key, max);
            vals[n++] = (int)c->valuedouble;
        }
        return n;
    }
    return sv_errorf(err, SV_EINVAL, "%s: key '%s': expected a list of whole numbers", path, key);
}

static void locate(const char *buf, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    if (memcmp(buf, "\xEF\xBB\xBF", 3) == 0 && at >= buf + 3) buf += 3; /* a BOM has no width */
    for (const char *p = buf; p < at && *p; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* ---- strictness cJSON does not have: duplicate keys, located ------------------------------ */

typedef struct jkey {
    const char *name; /* cJSON's decoded name */
    const char *at;   /* its opening quote in the text */
} jkey_t;

static int cmp_jkey(const void *a, const void *b)
{
    const jkey_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Whitespace as cJSON skips it: every byte from 1 to 32. */
static const char *skip_ws(const char *p)
{
    while (*p && (unsigned char)*p <= 32)
        p++;
    return p;
}

static const char *skip_string(const char *p)
{
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1]) p++;
    return *p ? p + 1 : p;
}

/* Walk the text of a value that cJSON parsed into node (so it is well formed), in step
 * with node's children, and find the earliest key that repeats within one object.
 * Returns the position after the value; *dup is the repeated key's quote, *dupname its
 * name. */
static const char *scan_value(const char *p, const cJSON *node, const char **dup,
                              const char **dupname)
{
    p = skip_ws(p);
    if (*p == '"') return skip_string(p);
    if (*p != '{' && *p != '[') {
        while (*p && (unsigned char)*p > 32 && !strchr(",]}", *p))
            p++;
        return p;
    }
    /* The node's type, not the text, says whether children have names: a scan that lost
     * step with cJSON must still never compare a missing name. */
    int obj = cJSON_IsObject(node);
    size_t n = 0;
    for (const cJSON *c = node->child; c; c = c->next)
        n++;
    jkey_t *keys = obj && n > 1 ? malloc(n * sizeof *keys) : NULL;
    size_t k = 0;
    p = skip_ws(p + 1);
    for (const cJSON *c = node->child; c; c = c->next) {
        if (obj) {
            if (keys && c->string) keys[k++] = (jkey_t){c->string, p};
            p = skip_ws(skip_string(p));
            if (*p == ':') p = skip_ws(p + 1); /* never past the end, even out of step */
        }
        p = skip_ws(scan_value(p, c, dup, dupname));
        if (*p == ',') p = skip_ws(p + 1);
    }
    if (keys) {
        qsort(keys, k, sizeof *keys, cmp_jkey);
        for (size_t i = 1; i < k; i++)
            if (strcmp(keys[i].name, keys[i - 1].name) == 0 && (!*dup || keys[i].at < *dup)) {
                *dup = keys[i].at;
                *dupname = keys[i].name;
            }
        free(keys);
    }
    return *p ? p + 1 : p; /* the closing bracket */
}

/* The model's name: the folder holding config.json, else the file name without .json. */
static void name_from_path(const char *path, char *name, size_t n)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strcmp(base, "config.json") == 0 && slash && slash > path) {
        const char *start = slash;
        while (start > path && start[-1] != '/')
            start--;
        snprintf(name, n, "%.*s", (int)(slash - start), start);
    } else {
        size_t len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".json") == 0) len -= 5;
        snprintf(name, n, "%.*s", (int)len, base);
    }
}

/* Multi-head latent attention (DeepSeek-V2/V3): present when kv_lora_rank is. */
static int read_mla(const cJSON *cfg, const char *path, sv_model_t *m, sv_error_t *err)
{
    long v = 0;
    int rc = json_int(cfg, "kv_lora_rank", 0, 1, 1 << 20, &v, path, err);
    if (rc) return rc < 0 ? rc : 0;
    m->mla = 1;
    m->kv_lora_rank = (int)v;
    if ((rc = json_int(cfg, "q_lora_rank", 0, 1, 1 << 20, &v, path, err)) < 0) return rc;
    m->q_lora_rank = rc == 0 ? (int)v : 0;
    if ((rc = json_int(cfg, "qk_nope_head_dim", 1, 1, 1 << 16, &v, path, err))) return rc;
    m->qk_nope_head_dim = (int)v;
    if ((rc = json_int(cfg, "qk_rope_head_dim", 1, 1, 1 << 16, &v, path, err))) return rc;
    m->qk_rope_head_dim = (int)v;
    if ((rc = json_int(cfg, "v_head_dim", 1, 1, 1 << 16, &v, path, err))) return rc;
    m->v_head_dim = (int)v;
    /* Every head has its own query and key of qk_nope + qk_rope values. */
    m->head_dim = m->qk_nope_head_dim + m->qk_rope_head_dim;
    m->kv_heads = m->heads;
    return 0;
}

/* Which layers of a MoE model are dense, by the keys each family uses. */
static int read_dense_layers(const cJSON *cfg, const char *path, sv_model_t *m, sv_error_t *err)
{
    long v = 0, first = 0, freq = 1, step = 1;
    int rc, list[4096], n;
    /* DeepSeek: layers below first_k_dense_replace are dense, then every moe_layer_freq-th
     * is MoE (modeling_deepseek_v3.py's rule). */
    if ((rc = json_int(cfg, "first_k_dense_replace", 0, 0, m->layers, &first, path, err)) < 0 ||
        (rc = json_int(cfg, "moe_layer_freq", 0, 1, 1 << 16, &freq, path, err)) < 0)
        return rc;
    /* Qwen-MoE: every decoder_sparse_step-th layer is MoE, except mlp_only_layers;
     * Llama-4: every interleave_moe_layer_step-th. */
    if ((rc = json_int(cfg, "decoder_sparse_step", 0, 1, 1 << 16, &step, path, err)) < 0) return rc;
    if (rc == 1 &&
        (rc = json_int(cfg, "interleave_moe_layer_step", 0, 1, 1 << 16, &step, path, err)) < 0)
        return rc;
    if ((n = json_int_list(cfg, "mlp_only_layers", list, 4096, path, err)) < 0) return n;
    int moe = 0;
    for (int i = 0; i < m->layers; i++) {
        int is_moe = i >= first && i % freq == 0 && (i + 1) % step == 0;
        for (int j = 0; j < n && is_moe; j++)
            if (list[j] == i) is_moe = 0;
        moe += is_moe;
    }
    (void)v;
    m->dense_layers = m->layers - moe;
    if (moe == 0)
        return sv_errorf(err, SV_EINVAL, "%s: key 'first_k_dense_replace': no layer is left a MoE layer",
                         path);
    return 0;
}

/* Mixture of experts: Mixtral's num_local_experts, DeepSeek's n_routed_experts, Qwen-MoE's
 * num_experts; shared experts (DeepSeek's n_shared_experts of moe_intermediate_size each,
 * Qwen's one of shared_expert_intermediate_size, Llama-4's one of intermediate_size); dense
 * layers; Llama-4's dense MLP width intermediate_size_mlp. */
static int read_moe(const cJSON *cfg, const char *model_type, const char *path, sv_model_t *m,
                    sv_error_t *err)
{
    long v = 0;
    int rc;
    const char *ekeys[] = {"num_local_experts", "n_routed_experts", "num_experts"};
    for (int i = 0; i < 3 && !m->experts; i++) {
        if ((rc = json_int(cfg, ekeys[i], 0, 0, 1 << 16, &v, path, err)) < 0) return rc;
        if (rc == 0) m->experts = (int)v;
    }
    if (!m->experts) return 0;
    if ((rc = json_int(cfg, "num_experts_per_tok", 1, 1, m->experts, &v, path, err))) return rc;
    m->experts_per_tok = (int)v;
    m->moe_ffn = m->ffn;
    if ((rc = json_int(cfg, "moe_intermediate_size", 0, 1, 1 << 24, &v, path, err)) < 0) return rc;
    if (rc == 0) m->moe_ffn = (int)v;
    int llama4 = strncmp(model_type, "llama4", 6) == 0;
    if ((rc = json_int(cfg, "intermediate_size_mlp", 0, 1, 1 << 24, &v, path, err)) < 0) return rc;
    if (rc == 0) m->ffn = (int)v; /* Llama-4: intermediate_size is the expert's width */
    if ((rc = json_int(cfg, "n_shared_experts", 0, 0, 1 << 10, &v, path, err)) < 0) return rc;
    if (rc == 0 && v > 0) {
        m->shared_experts = (int)v;
        m->shared_ffn = (int)v * m->moe_ffn;
    }
    if ((rc = json_int(cfg, "shared_expert_intermediate_size", 0, 0, 1 << 24, &v, path, err)) < 0)
        return rc;
    if (rc == 0 && v > 0) {
        m->shared_experts = 1;
        m->shared_ffn = (int)v;
    }
    if (llama4) {
        m->shared_experts = 1;
        m->shared_ffn = m->moe_ffn;
    }
    if (json_set(cJSON_GetObjectItemCaseSensitive(cfg, "n_group")) &&
        json_set(cJSON_GetObjectItemCaseSensitive(cfg, "topk_group")))
        note(m, "grouped routing (n_group, topk_group): experts touched counted as for "
                "ungrouped top-k");
    if ((rc = json_int(cfg, "num_nextn_predict_layers", 0, 0, 64, &v, path, err)) < 0) return rc;
    if (rc == 0 && v > 0) {
        m->mtp_layers = (int)v;
        note(m, "num_nextn_predict_layers: the MTP module is not loaded (no speculative decoding)");
    }
    return read_dense_layers(cfg, path, m, err);
}

/* Kinds of layers: sliding-window (gpt-oss, Gemma-3, Mistral), chunked (Llama-4),
 * linear attention (Qwen3-Next) and full attention. */
static int read_layers(const cJSON *cfg, const char *model_type, const char *path, sv_model_t *m,
                       sv_error_t *err)
{
    long v = 0, w = 0;
    int rc, use_sw = 1;
    if ((rc = json_bool(cfg, "use_sliding_window", &use_sw, path, err)) < 0) return rc;
    if ((rc = json_int(cfg, "sliding_window", 0, 0, 1L << 30, &w, path, err)) < 0) return rc;
    if (rc == 1 || !use_sw) w = 0;
    int nwin = w > 0 ? m->layers : 0, nlin = 0;
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(cfg, "layer_types");
    if (types && !cJSON_IsNull(types)) {
        int n = 0, nw = 0;
        for (const cJSON *c = cJSON_IsArray(types) ? types->child : NULL; c; c = c->next, n++) {
            const char *t = cJSON_IsString(c) ? c->valuestring : "";
            if (strcmp(t, "sliding_attention") == 0)
                nw++;
            else if (strcmp(t, "chunked_attention") == 0)
                nw++; /* the window is attention_chunk_size, read below */
            else if (strcmp(t, "linear_attention") == 0)
                nlin++;
            else if (strcmp(t, "full_attention") != 0)
                return sv_errorf(err, SV_EINVAL,
                                 "%s: key 'layer_types': layer kind '%s' is not modelled (expected "
                                 "full_attention, sliding_attention or linear_attention)",
                                 path, t);
        }
        if (!cJSON_IsArray(types) || n != m->layers)
            return sv_errorf(err, SV_EINVAL,
                             "%s: key 'layer_types': expected a list of %d layer kinds, one per "
                             "layer",
                             path, m->layers);
        nwin = w > 0 ? nw : 0;
    } else if ((rc = json_int(cfg, "sliding_window_pattern", 0, 1, 1 << 16, &v, path, err)) < 0) {
        return rc;
    } else if (rc == 0 && w > 0) {
        nwin = m->layers - m->layers / (int)v; /* Gemma-3: every v-th layer is global */
    } else if ((rc = json_int(cfg, "full_attention_interval", 0, 1, 1 << 16, &v, path, err)) < 0) {
        return rc;
    } else if (rc == 0) {
        nlin = m->layers - m->layers / (int)v; /* Qwen3-Next: every v-th layer is full */
    } else if (w > 0 && (rc = json_int(cfg, "max_window_layers", 0, 0, m->layers, &v, path, err)) <
                            0) {
        return rc;
    } else if (w > 0 && rc == 0 && strncmp(model_type, "qwen", 4) == 0) {
        nwin = m->layers - (int)v; /* Qwen2: layers from max_window_layers on slide */
    }
    /* Llama-4: attention_chunk_size on the layers with rotary (no_rope_layers[i] = 1). */
    if ((rc = json_int(cfg, "attention_chunk_size", 0, 1, 1L << 30, &v, path, err)) < 0) return rc;
    if (rc == 0) {
        int list[4096], n = json_int_list(cfg, "no_rope_layers", list, 4096, path, err), rope = 0;
        if (n < 0) return n;
        for (int i = 0; i < n; i++)
            rope += list[i] != 0;
        if (n == 0) rope = m->layers - m->layers / 4; /* transformers' default interval of 4 */
        w = v;
        nwin = rope;
        m->chunked_window = 1;
        note(m, "chunked attention costed as a sliding window of attention_chunk_size (an upper "
                "bound)");
    }
    if (w > 0 && nwin > 0) {
        m->sliding_window = (int)w;
        m->window_layers = nwin == m->layers ? 0 : nwin;
    }
    if (nlin > 0) {
        m->linear_layers = nlin;
        long kh, vh, kd, vd, conv = 4;
        if ((rc = json_int(cfg, "linear_num_key_heads", 1, 1, 1 << 16, &kh, path, err)) ||
            (rc = json_int(cfg, "linear_num_value_heads", 1, 1, 1 << 16, &vh, path, err)) ||
            (rc = json_int(cfg, "linear_key_head_dim", 1, 1, 1 << 16, &kd, path, err)) ||
            (rc = json_int(cfg, "linear_value_head_dim", 1, 1, 1 << 16, &vd, path, err)) ||
            (rc = json_int(cfg, "linear_conv_kernel_dim", 0, 1, 1 << 10, &conv, path, err)) < 0)
            return rc;
        m->lin_k_heads = (int)kh;
        m->lin_v_heads = (int)vh;
        m->lin_k_dim = (int)kd;
        m->lin_v_dim = (int)vd;
        m->lin_conv = (int)conv;
    }
    m->attn_output_gate = strcmp(model_type, "qwen3_next") == 0;
    if ((rc = json_bool(cfg, "attn_output_gate", &m->attn_output_gate, path, err)) < 0) return rc;
    return 0;
}

/* The checkpoint's weight format, from quantization_config (kept at the top level even
 * when the architecture is under text_config). */
static int read_quant(const cJSON *root, const char *path, sv_model_t *m, sv_error_t *err)
{
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, "quantization_config");
    if (!q || cJSON_IsNull(q)) return 0;
    const cJSON *meth = cJSON_GetObjectItemCaseSensitive(q, "quant_method");
    const char *qm = cJSON_IsString(meth) ? meth->valuestring : "";
    const char *fmt = NULL;
    if (strcmp(qm, "fp8") == 0) {
        fmt = "fp8";
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(q, "weight_block_size");
        if (cJSON_GetArraySize(b) == 2 && cJSON_IsNumber(b->child) &&
            cJSON_IsNumber(b->child->next) && b->child->valuedouble >= 1 &&
            b->child->next->valuedouble >= 1 && b->child->valuedouble <= 65536 &&
            b->child->next->valuedouble <= 65536)
            m->ckpt_scale_block = (int)(b->child->valuedouble * b->child->next->valuedouble);
    } else if (strcmp(qm, "mxfp4") == 0) {
        fmt = "mxfp4";
        const cJSON *keep = cJSON_GetObjectItemCaseSensitive(q, "modules_to_not_convert");
        for (const cJSON *c = cJSON_IsArray(keep) ? keep->child : NULL; c; c = c->next)
            if (cJSON_IsString(c) && strstr(c->valuestring, "self_attn")) m->ckpt_experts_only = 1;
    } else if (strcmp(qm, "modelopt") == 0) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(q, "quant_algo");
        const char *algo = cJSON_IsString(a) ? a->valuestring : "";
        fmt = strcmp(algo, "NVFP4") == 0 ? "nvfp4" : strcmp(algo, "FP8") == 0 ? "fp8" : NULL;
    } else if (strcmp(qm, "gptq") == 0 || strcmp(qm, "awq") == 0) {
        const cJSON *bits = cJSON_GetObjectItemCaseSensitive(q, "bits");
        fmt = cJSON_IsNumber(bits) && bits->valuedouble == 4 ? "int4" : NULL;
    }
    if (!fmt)
        return sv_errorf(err, SV_EINVAL,
                         "%s: key 'quantization_config': weight format '%s' is not modelled "
                         "(expected fp8, mxfp4, modelopt FP8/NVFP4, or 4-bit gptq/awq)",
                         path, qm);
    snprintf(m->ckpt_dtype, sizeof m->ckpt_dtype, "%s", fmt);
    return 0;
}

static int read_arch(const cJSON *cfg, const char *path, sv_model_t *m, sv_error_t *err)
{
    long v = 0;
    int rc;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(cfg, "model_type");
    const char *model_type = cJSON_IsString(mt) ? mt->valuestring : "";

#define REQ(key, lo, hi, field)                                                                    \
    do {                                                                                           \
        if ((rc = json_int(cfg, key, 1, lo, hi, &v, path, err))) return rc;                        \
        m->field = (int)v;                                                                         \
    } while (0)
    REQ("num_hidden_layers", 1, 100000, layers);
    REQ("hidden_size", 1, 1 << 22, hidden);
    REQ("num_attention_heads", 1, 1 << 16, heads);
    REQ("vocab_size", 1, 1 << 24, vocab);
#undef REQ
    m->kv_heads = m->heads;
    if ((rc = json_int(cfg, "num_key_value_heads", 0, 1, 1 << 16, &v, path, err)) < 0) return rc;
    if (rc == 0) m->kv_heads = (int)v;
    m->head_dim = m->hidden / m->heads;
    if ((rc = json_int(cfg, "head_dim", 0, 1, 1 << 16, &v, path, err)) < 0) return rc;
    if (rc == 0) m->head_dim = (int)v;
    /* OPT calls the MLP width ffn_dim. */
    if ((rc = json_int(cfg, "intermediate_size", 0, 1, 1 << 24, &v, path, err)) < 0) return rc;
    if (rc == 1 && (rc = json_int(cfg, "ffn_dim", 0, 1, 1 << 24, &v, path, err)) < 0) return rc;
    if (rc == 1)
        return sv_errorf(err, SV_EINVAL,
                         "%s: missing key 'intermediate_size' (expected a Hugging Face "
                         "config.json)",
                         path);
    m->ffn = (int)v;

    m->gated_mlp = 1;
    for (int i = 0; plain_mlp_types[i]; i++)
        if (strcmp(model_type, plain_mlp_types[i]) == 0) m->gated_mlp = 0;
    m->tied_embeddings = strcmp(model_type, "opt") == 0 || strncmp(model_type, "gemma", 5) == 0;
    if ((rc = json_bool(cfg, "tie_word_embeddings", &m->tied_embeddings, path, err)) < 0) return rc;
    m->qkv_bias = strcmp(model_type, "qwen2") == 0 || strcmp(model_type, "qwen2_moe") == 0;
    if ((rc = json_bool(cfg, "attention_bias", &m->qkv_bias, path, err)) < 0) return rc;

    for (int i = 0; unmodelled_keys[i].key; i++)
        if (json_set(cJSON_GetObjectItemCaseSensitive(cfg, unmodelled_keys[i].key)))
            return sv_errorf(err, SV_EINVAL,
                             "%s: key '%s': %s is not modelled (it changes the cost of every step)",
                             path, unmodelled_keys[i].key, unmodelled_keys[i].what);
    if ((rc = read_mla(cfg, path, m, err)) || (rc = read_moe(cfg, model_type, path, m, err)) ||
        (rc = read_layers(cfg, model_type, path, m, err)))
        return rc;
    if ((rc = json_int(cfg, "max_position_embeddings", 0, 1, 1L << 40, &v, path, err)) < 0)
        return rc;
    if (rc == 0) m->max_context = v;
    if (strcmp(model_type, "gpt_oss") == 0) {
        m->attention_sinks = 1;
        note(m, "gpt-oss attention sinks: one logit per head, not costed");
    }
    return 0;
}

int sv_model_from_hf_config(const char *path, sv_model_t *out, sv_error_t *err)
{
    char *buf;
    size_t len;
    int rc = sv__read_file(path, (size_t)16 << 20, &buf, &len, err);
    if (rc) return rc;
    const char *end = NULL, *dup = NULL, *dupname = NULL;
    int line, col;
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        locate(buf, nul, &line, &col);
        rc = sv_errorf(err, SV_EPARSE, "%s:%d:%d: a NUL byte (expected a text config.json)", path,
                       line, col);
        free(buf);
        return rc;
    }
    cJSON *root = cJSON_ParseWithOpts(buf, &end, 0);
    if (!root) {
        locate(buf, end ? end : buf, &line, &col);
        rc = sv_errorf(err, SV_EPARSE,
                       "%s:%d:%d: malformed JSON (expected a Hugging Face "
                       "config.json)",
                       path, line, col);
        free(buf);
        return rc;
    }
    end = skip_ws(end);
    if (*end) {
        locate(buf, end, &line, &col);
        rc = sv_errorf(err, SV_EPARSE,
                       "%s:%d:%d: text after the end of the JSON object (expected one object)",
                       path, line, col);
    } else {
        /* cJSON skips a UTF-8 byte-order mark; so does the scan. */
        scan_value(len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? buf + 3 : buf, root, &dup,
                   &dupname);
        if (dup) {
            locate(buf, dup, &line, &col);
            rc =
                sv_errorf(err, SV_EPARSE, "%s:%d:%d: duplicate key '%s'", path, line, col, dupname);
        }
    }
    free(buf);
    if (rc) {
        cJSON_Delete(root);
        return rc;
    }
    sv_model_t m;
    memset(&m, 0, sizeof m);
    const cJSON *cfg = root;
    /* Multimodal configs keep the language model under text_config. */
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(root, "text_config");
    if (cJSON_IsObject(text) && !cJSON_GetObjectItemCaseSensitive(root, "num_hidden_layers"))
        cfg = text;
    if (!cJSON_IsObject(root)) {
        rc = sv_errorf(err, SV_EPARSE, "%s: expected a JSON object (a Hugging Face config.json)",
                       path);
    } else {
        rc = read_arch(cfg, path, &m, err);
        if (!rc) rc = read_quant(root, path, &m, err);
        if (!rc && cfg != root) note(&m, "only the language model under text_config is costed");
    }
    if (!rc) {
        name_from_path(path, m.name, sizeof m.name);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "_name_or_path");
        if (cJSON_IsString(id)) snprintf(m.hf_id, sizeof m.hf_id, "%s", id->valuestring);
        snprintf(m.source, sizeof m.source, "%s", path);
        rc = sv_model_check(&m, path, err);
    }
    cJSON_Delete(root);
    if (!rc) *out = m;
    return rc;
}
