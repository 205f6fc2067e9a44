/*
 * A model architecture read from a Hugging Face config.json, so users can simulate
 * their own model without editing the catalog. Only the keys the cost model needs are
 * read; the rest are ignored (a config.json carries many unrelated keys). Missing or
 * mistyped required keys are errors naming the file and key.
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
    m->tied_embeddings = strcmp(model_type, "opt") == 0;
    if ((rc = json_bool(cfg, "tie_word_embeddings", &m->tied_embeddings, path, err)) < 0) return rc;
    m->qkv_bias = strcmp(model_type, "qwen2") == 0 || strcmp(model_type, "qwen2_moe") == 0;
    if ((rc = json_bool(cfg, "attention_bias", &m->qkv_bias, path, err)) < 0) return rc;

    /* Mixture of experts: Mixtral's num_local_experts, DeepSeek's n_routed_experts,
     * Qwen-MoE's num_experts. */
    const char *ekeys[] = {"num_local_experts", "n_routed_experts", "num_experts"};
    for (int i = 0; i < 3 && !m->experts; i++) {
        if ((rc = json_int(cfg, ekeys[i], 0, 0, 1 << 16, &v, path, err)) < 0) return rc;
        if (rc == 0) m->experts = (int)v;
    }
    if (m->experts) {
        if ((rc = json_int(cfg, "num_experts_per_tok", 1, 1, m->experts, &v, path, err))) return rc;
        m->experts_per_tok = (int)v;
        m->moe_ffn = m->ffn;
        if ((rc = json_int(cfg, "moe_intermediate_size", 0, 1, 1 << 24, &v, path, err)) < 0)
            return rc;
        if (rc == 0) m->moe_ffn = (int)v;
    }

    int use_sw = 1;
    if ((rc = json_bool(cfg, "use_sliding_window", &use_sw, path, err)) < 0) return rc;
    if ((rc = json_int(cfg, "sliding_window", 0, 0, 1L << 30, &v, path, err)) < 0) return rc;
    if (rc == 0 && use_sw) m->sliding_window = (int)v;
    if ((rc = json_int(cfg, "max_position_embeddings", 0, 1, 1L << 40, &v, path, err)) < 0)
        return rc;
    if (rc == 0) m->max_context = v;
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
