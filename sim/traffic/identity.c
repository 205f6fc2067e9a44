/*
 * Prompt identity (see include/servesim/traffic/identity.h): shared system prompts drawn per
 * request, or a Mooncake trace's hash ids read line by line.
 */
#include "servesim/traffic/identity.h"

#include <cJSON.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio_int.h"
#include "base/vec_int.h"

/* The largest trace file read (bytes). */
#define SV_MAX_TRACE_BYTES ((size_t)2 << 30)

struct sv_identity {
    sv_shared_prefix_cfg_t cfg;
    const sv_prompts_t *prompts;
    gsl_rng *rng;
    sv_segment_t buf[2];
};

int sv_identity_new(const sv_shared_prefix_cfg_t *cfg, const sv_prompts_t *prompts, uint64_t seed,
                    sv_identity_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_identity_t *g = calloc(1, sizeof *g);
    if (!g || !(g->rng = gsl_rng_alloc(gsl_rng_mt19937))) {
        free(g);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    if (cfg) g->cfg = *cfg;
    g->prompts = prompts;
    gsl_rng_set(g->rng, (unsigned long)sv_stream_seed(seed, SV_STREAM_PREFIX));
    *out = g;
    return 0;
}

void sv_identity_free(sv_identity_t *g)
{
    if (!g) return;
    gsl_rng_free(g->rng);
    free(g);
}

/* Identities of the kinds of segments, far apart from each other. */
#define SYSTEM_PROMPT_ID(k) (0x5157000000000000ULL + (uint64_t)(k))
#define MESSAGE_ID(req) (0x3e55000000000000ULL + (uint64_t)(req))
#define TRACE_BLOCK_ID(h) (0x7ace000000000000ULL ^ (uint64_t)(h))

int sv_identity_next(sv_identity_t *g, int32_t req, int32_t *input, const sv_segment_t **seg)
{
    if (g->prompts) {
        size_t row = (size_t)req % g->prompts->n;
        *seg = g->prompts->seg + g->prompts->off[row];
        return g->prompts->nseg[row];
    }
    int n = 0;
    int32_t own = *input;
    /* Both draws are made for every request, so one request's choice never shifts the
     * stream of the next. */
    double u = gsl_rng_uniform(g->rng);
    unsigned long k = gsl_rng_uniform_int(g->rng, (unsigned long)g->cfg.prompts);
    if (u < g->cfg.share) {
        g->buf[n++] = (sv_segment_t){SYSTEM_PROMPT_ID(k), (int32_t)g->cfg.tokens};
        *input += (int32_t)g->cfg.tokens;
    }
    g->buf[n++] = (sv_segment_t){MESSAGE_ID(req), own};
    *seg = g->buf;
    return n;
}

int sv_identity_own_messages(const sv_identity_t *g)
{
    return !g->prompts;
}

void sv_prompts_free(sv_prompts_t *p)
{
    if (!p) return;
    free(p->off);
    free(p->nseg);
    free(p->seg);
    free(p);
}

/* ---- Mooncake traces ---------------------------------------------------------------- */

/* Where the value of top-level key `key` starts in line, a JSON object cJSON has accepted
 * (so strings are closed and brackets balanced); NULL when the key is not there as written.
 * Hash ids are read from this text, not from cJSON's doubles, which hold 53 bits. */
static const char *raw_value(const char *line, const char *key)
{
    size_t klen = strlen(key);
    int depth = 0;
    for (const char *p = line; *p; p++) {
        if (*p == '"') {
            const char *start = ++p;
            while (*p && *p != '"')
                p += *p == '\\' && p[1] ? 2 : 1;
            if (!*p) return NULL;
            const char *c = p + 1;
            while (*c == ' ' || *c == '\t' || *c == '\r')
                c++;
            if (depth == 1 && *c == ':' && (size_t)(p - start) == klen && !memcmp(start, key, klen)) {
                for (c++; *c == ' ' || *c == '\t' || *c == '\r';)
                    c++;
                return c;
            }
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            depth--;
        }
    }
    return NULL;
}

/* The next id of a raw hash_ids list at *pp (after '[' or ','): digits only, at most
 * 2^64 - 1. 0, or -1 for anything else. */
static int raw_id(const char **pp, uint64_t *id)
{
    const char *p = *pp;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '[' || *p == ',')
        p++;
    if (*p < '0' || *p > '9') return -1;
    uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (*p == '.' || *p == 'e' || *p == 'E') return -1;
    *id = v;
    *pp = p;
    return 0;
}

/* A whole number >= lo from field `key` of object o, or an error naming file:line. */
static int get_whole(const cJSON *o, const char *key, double lo, const char *path, long line,
                     double *out, sv_error_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return sv_errorf(err, SV_EINVAL, "%s:%ld: missing field '%s'", path, line, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo) || v->valuedouble > 9e15 ||
        (strcmp(key, "timestamp") != 0 && v->valuedouble != floor(v->valuedouble)))
        return sv_errorf(err, SV_EINVAL, "%s:%ld: field '%s': expected a %s >= %g", path, line, key,
                         strcmp(key, "timestamp") ? "whole number" : "number", lo);
    *out = v->valuedouble;
    return 0;
}

int sv_mooncake_load(const sv_mooncake_cfg_t *cfg, sv_trace_t **trace, sv_prompts_t **prompts,
                     sv_error_t *err)
{
    *trace = NULL;
    *prompts = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = sv__read_file(cfg->path, SV_MAX_TRACE_BYTES, &text, &len, err);
    if (rc) return rc;
    sv_trace_t *t = calloc(1, sizeof *t);
    sv_prompts_t *p = calloc(1, sizeof *p);
    size_t cap = 0, capo = 0, capn = 0, caps = 0, capin = 0, capout = 0;
    double t0 = 0, prev = -1;
    long line = 0;
    if (!t || !p) rc = sv_errorf(err, SV_ENOMEM, "out of memory");
    for (char *s = text; !rc && s < text + len;) {
        char *e = memchr(s, '\n', (size_t)(text + len - s));
        if (!e) e = text + len;
        *e = '\0';
        line++;
        char *q = s;
        s = e + 1;
        while (*q == ' ' || *q == '\t' || *q == '\r')
            q++;
        if (!*q) continue;
        if (cfg->limit > 0 && (long)t->n >= cfg->limit) break;
        if (strlen(q) != (size_t)(e - q)) {
            rc = sv_errorf(err, SV_EINVAL, "%s:%ld: a NUL byte inside the line", cfg->path, line);
            break;
        }
        const char *end = NULL;
        cJSON *o = cJSON_ParseWithOpts(q, &end, 0);
        double ts, in, out;
        if (o && end)
            while (*end == ' ' || *end == '\t' || *end == '\r')
                end++;
        if (!o || !cJSON_IsObject(o)) {
            rc = sv_errorf(err, SV_EINVAL, "%s:%ld: expected one JSON object per line", cfg->path,
                           line);
        } else if (end && *end) {
            rc = sv_errorf(err, SV_EINVAL,
                           "%s:%ld: text after the JSON object; expected one object per line",
                           cfg->path, line);
        } else if (!(rc = get_whole(o, "timestamp", 0, cfg->path, line, &ts, err)) &&
                   !(rc = get_whole(o, "input_length", 1, cfg->path, line, &in, err)) &&
                   !(rc = get_whole(o, "output_length", 1, cfg->path, line, &out, err))) {
            const cJSON *ids = cJSON_GetObjectItemCaseSensitive(o, "hash_ids");
            long need = (long)ceil(in / (double)cfg->block_tokens);
            if (in > 1e7 || out > 1e7)
                rc = sv_errorf(err, SV_EINVAL, "%s:%ld: lengths over 10,000,000 tokens", cfg->path,
                               line);
            else if (!ids)
                rc = sv_errorf(err, SV_EINVAL, "%s:%ld: missing field 'hash_ids'", cfg->path, line);
            else if (!cJSON_IsArray(ids) || cJSON_GetArraySize(ids) != need)
                rc = sv_errorf(err, SV_EINVAL,
                               "%s:%ld: field 'hash_ids': expected %ld ids (one per %ld prompt "
                               "tokens of input_length %.0f), got %d",
                               cfg->path, line, need, cfg->block_tokens, in,
                               cJSON_IsArray(ids) ? cJSON_GetArraySize(ids) : -1);
            else if (prev >= 0 && ts < prev)
                rc = sv_errorf(err, SV_EINVAL,
                               "%s:%ld: timestamp %.17g is earlier than the line before (%.17g); "
                               "lines must be in time order",
                               cfg->path, line, ts, prev);
            if (!rc) {
                if (t->n == 0) t0 = ts;
                prev = ts;
                if (SV_GROW(t->time, cap, t->n + 1) || SV_GROW(t->input, capin, t->n + 1) ||
                    SV_GROW(t->output, capout, t->n + 1) || SV_GROW(p->off, capo, t->n + 1) ||
                    SV_GROW(p->nseg, capn, t->n + 1)) {
                    rc = sv_errorf(err, SV_ENOMEM, "out of memory reading %s", cfg->path);
                } else {
                    t->time[t->n] = (ts - t0) / 1000.0 / cfg->speedup;
                    t->input[t->n] = (int32_t)in;
                    t->output[t->n] = (int32_t)out;
                    size_t base = t->n ? (size_t)(p->off[t->n - 1] + p->nseg[t->n - 1]) : 0;
                    p->off[t->n] = (int64_t)base;
                    p->nseg[t->n] = (int32_t)need;
                    if (SV_GROW(p->seg, caps, base + (size_t)need)) {
                        rc = sv_errorf(err, SV_ENOMEM, "out of memory reading %s", cfg->path);
                    } else {
                        long left = (long)in, k = 0;
                        const cJSON *id;
                        const char *raw = raw_value(q, "hash_ids");
                        uint64_t h = 0;
                        cJSON_ArrayForEach(id, ids)
                        {
                            if (!cJSON_IsNumber(id) || !raw || raw_id(&raw, &h)) {
                                rc = sv_errorf(err, SV_EINVAL,
                                               "%s:%ld: hash_ids[%ld]: expected a whole number "
                                               "in [0, 18446744073709551615]",
                                               cfg->path, line, k);
                                break;
                            }
                            long l = left < cfg->block_tokens ? left : cfg->block_tokens;
                            p->seg[base + (size_t)k++] =
                                (sv_segment_t){TRACE_BLOCK_ID(h), (int32_t)l};
                            left -= l;
                        }
                        t->n++;
                        p->n = t->n;
                    }
                }
            }
        }
        cJSON_Delete(o);
    }
    free(text);
    if (!rc && t && t->n == 0)
        rc = sv_errorf(err, SV_EINVAL, "%s: no requests in the trace", cfg->path);
    if (rc) {
        sv_trace_free(t);
        sv_prompts_free(p);
        return rc;
    }
    *trace = t;
    *prompts = p;
    return 0;
}
