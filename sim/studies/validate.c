/*
 * `servesim validate` (see include/servesim/studies/validate.h): read the measurement table,
 * rebuild each measured condition (a batch for the cost model, or a scenario for the
 * simulator), and compare.
 */
#include "servesim/studies/validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/csv_int.h"
#include "servesim/cost/perf.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cluster/schema.h"
#include "servesim/cluster/sim.h"
#include "servesim/base/yaml.h"

#ifndef SERVESIM_VALIDATION_DATA
#define SERVESIM_VALIDATION_DATA "tests/data/validation/measurements.csv"
#endif

#define MAX_ROWS 100000
#define MAX_SETS 32
#define MAX_WORKERS 1024

static const char *const kind_names[SV_VK_COUNT] = {"throughput", "ttft", "tpot",
                                                    "prefill",    "step", "e2e"};

const char *sv_vkind_name(int kind)
{
    return kind >= 0 && kind < SV_VK_COUNT ? kind_names[kind] : "?";
}

const char *sv_validation_default_path(void)
{
    return SERVESIM_VALIDATION_DATA;
}

void sv_validation_free(sv_validation_t *v)
{
    if (!v) return;
    free(v->rows);
    free(v);
}

static const char *const cols[] = {"family",       "kind",        "model",    "gpu",      "tp",
                                   "weight_dtype", "kv_dtype",    "profile",  "input",    "output",
                                   "batch",        "concurrency", "requests", "measured", "unit",
                                   "fitted",       "sets",        "source"};
enum {
    C_FAM,
    C_KIND,
    C_MODEL,
    C_GPU,
    C_TP,
    C_WDT,
    C_KVDT,
    C_PROF,
    C_IN,
    C_OUT,
    C_BATCH,
    C_CONC,
    C_REQ,
    C_MEAS,
    C_UNIT,
    C_FIT,
    C_SETS,
    C_SRC,
    C_N
};

static int text(const sv__csv_t *t, long r, int c, char *dst, size_t n, sv_error_t *err)
{
    const char *s = sv__csv_cell(t, r, c);
    if (strlen(s) >= n)
        return sv_errorf(err, SV_EINVAL, "%s:%ld: column '%s': longer than %zu characters", t->path,
                         t->lines[r], t->names[c], n - 1);
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

static int whole(const sv__csv_t *t, long r, int c, long lo, long *out, sv_error_t *err)
{
    double x;
    int rc = sv__csv_num(t, r, c, &x, err);
    if (rc) return rc;
    if (x != floor(x) || x < (double)lo || x > 1e12)
        return sv_errorf(err, SV_EINVAL,
                         "%s:%ld: column '%s': expected a whole number >= %ld, "
                         "got '%s'",
                         t->path, t->lines[r], t->names[c], lo, sv__csv_cell(t, r, c));
    *out = (long)x;
    return 0;
}

long sv_vrow_gpus(const sv_vrow_t *w)
{
    long n = w->npools ? 0 : w->tp;
    for (int i = 0; i < w->npools; i++)
        n += (long)w->pools[i].workers * w->pools[i].tp;
    return n;
}

/* One key=value word of a layout pool into *p. */
static int layout_word(sv_vpool_t *p, const char *role, char *word, sv_error_t *err)
{
    static const char *const keys[] = {"workers", "tp", "ep", "dp_attention"};
    static const long hi[] = {MAX_WORKERS, 256, 256, 256};
    int *dst[] = {&p->workers, &p->tp, &p->ep, &p->dp_attention};
    char *eq = strchr(word, '=');
    if (eq) *eq = '\0';
    for (int k = 0; k < 4; k++) {
        if (strcmp(word, keys[k])) continue;
        char *end = NULL;
        long v = eq ? strtol(eq + 1, &end, 10) : 0;
        if (!eq || end == eq + 1 || *end || v < 1 || v > hi[k])
            return sv_errorf(err, SV_EINVAL, "%s %s: expected a whole number in [1, %ld], got '%s'",
                             role, keys[k], hi[k], eq ? eq + 1 : "");
        *dst[k] = (int)v;
        return 0;
    }
    return sv_errorf(err, SV_EINVAL,
                     "%s: unknown key '%s' (expected workers, tp, ep or dp_attention)", role, word);
}

int sv_vrow_layout(sv_vrow_t *w, const char *text, sv_error_t *err)
{
    static const char *const roles[] = {"prefill", "decode"};
    char buf[256];
    w->npools = 0;
    if (!*text) return 0;
    if (strlen(text) >= sizeof buf)
        return sv_errorf(err, SV_EINVAL, "longer than %zu characters", sizeof buf - 1);
    memcpy(buf, text, strlen(text) + 1);
    char *save = NULL, *part = strtok_r(buf, "+", &save);
    for (; part; part = strtok_r(NULL, "+", &save)) {
        if (w->npools == 2)
            return sv_errorf(err, SV_EINVAL, "expected a prefill and a decode pool, got a third");
        sv_vpool_t *p = &w->pools[w->npools];
        *p = (sv_vpool_t){.decode = w->npools, .ep = 1, .dp_attention = 1};
        char *wsave = NULL, *word = strtok_r(part, " ", &wsave);
        const char *role = roles[w->npools];
        if (!word || strcmp(word, role))
            return sv_errorf(err, SV_EINVAL, "pool %d: expected '%s' first, got '%s'",
                             w->npools + 1, role, word ? word : "");
        for (word = strtok_r(NULL, " ", &wsave); word; word = strtok_r(NULL, " ", &wsave)) {
            int rc = layout_word(p, role, word, err);
            if (rc) return rc;
        }
        if (!p->workers || !p->tp)
            return sv_errorf(err, SV_EINVAL, "%s: missing key '%s'", role,
                             p->workers ? "tp" : "workers");
        if (p->tp % p->ep || p->tp % p->dp_attention)
            return sv_errorf(err, SV_EINVAL,
                             "%s: ep (%d) and dp_attention (%d) must divide tp (%d)", role, p->ep,
                             p->dp_attention, p->tp);
        w->npools++;
    }
    if (w->npools != 2)
        return sv_errorf(err, SV_EINVAL,
                         "expected a prefill and a decode pool joined by '+', got %d", w->npools);
    return 0;
}

int sv_validation_load(const char *path, sv_validation_t **out, sv_error_t *err)
{
    *out = NULL;
    sv__csv_t *t;
    int idx[C_N], rc = sv__csv_read(path, &t, err);
    if (rc) return rc;
    if ((rc = sv__csv_need(t, cols, idx, C_N, err))) goto done;
    int c_layout = sv__csv_col(t, "layout"); /* optional: disaggregated rows */
    if (t->nrows < 1 || t->nrows > MAX_ROWS) {
        rc = sv_errorf(err, SV_EINVAL, "%s: expected 1 to %d measurement rows, got %ld", path,
                       MAX_ROWS, t->nrows);
        goto done;
    }
    sv_validation_t *v = calloc(1, sizeof *v);
    if (!v || !(v->rows = calloc((size_t)t->nrows, sizeof *v->rows))) {
        free(v);
        rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    snprintf(v->path, sizeof v->path, "%s", path);
    v->nrows = t->nrows;
    for (long r = 0; r < t->nrows && !rc; r++) {
        sv_vrow_t *w = &v->rows[r];
        char kind[32], fit[8];
        long tp;
        w->line = t->lines[r];
        w->simulated = NAN;
        if ((rc = text(t, r, idx[C_FAM], w->family, sizeof w->family, err)) ||
            (rc = text(t, r, idx[C_KIND], kind, sizeof kind, err)) ||
            (rc = text(t, r, idx[C_MODEL], w->model, sizeof w->model, err)) ||
            (rc = text(t, r, idx[C_GPU], w->gpu, sizeof w->gpu, err)) ||
            (rc = whole(t, r, idx[C_TP], 0, &tp, err)) ||
            (rc = text(t, r, idx[C_WDT], w->weight_dtype, sizeof w->weight_dtype, err)) ||
            (rc = text(t, r, idx[C_KVDT], w->kv_dtype, sizeof w->kv_dtype, err)) ||
            (rc = text(t, r, idx[C_PROF], w->profile, sizeof w->profile, err)) ||
            (rc = whole(t, r, idx[C_IN], 1, &w->input, err)) ||
            (rc = whole(t, r, idx[C_OUT], 1, &w->output, err)) ||
            (rc = whole(t, r, idx[C_BATCH], 0, &w->batch, err)) ||
            (rc = whole(t, r, idx[C_CONC], 0, &w->concurrency, err)) ||
            (rc = whole(t, r, idx[C_REQ], 0, &w->requests, err)) ||
            (rc = sv__csv_num(t, r, idx[C_MEAS], &w->measured, err)) ||
            (rc = text(t, r, idx[C_UNIT], w->unit, sizeof w->unit, err)) ||
            (rc = text(t, r, idx[C_FIT], fit, sizeof fit, err)) ||
            (rc = text(t, r, idx[C_SETS], w->sets, sizeof w->sets, err)) ||
            (rc = text(t, r, idx[C_SRC], w->source, sizeof w->source, err)))
            break;
        w->tp = (int)tp;
        if (c_layout >= 0 && (rc = sv_vrow_layout(w, sv__csv_cell(t, r, c_layout), err))) {
            rc = sv_error_prefix(err, "%s:%ld: column 'layout'", path, w->line);
            break;
        }
        w->kind = -1;
        for (int k = 0; k < SV_VK_COUNT; k++)
            if (strcmp(kind, kind_names[k]) == 0) w->kind = k;
        if (w->kind < 0)
            rc = sv_errorf(err, SV_EINVAL,
                           "%s:%ld: column 'kind': expected throughput, ttft, tpot, prefill, "
                           "step or e2e, got '%s'",
                           path, w->line, kind);
        else if (strcmp(fit, "yes") && strcmp(fit, "no"))
            rc = sv_errorf(err, SV_EINVAL, "%s:%ld: column 'fitted': expected yes or no, got '%s'",
                           path, w->line, fit);
        else if ((w->tp == 0) != (w->npools > 0))
            rc = sv_errorf(err, SV_EINVAL, "%s:%ld: column 'tp': %s", path, w->line,
                           w->npools ? "a row with a layout gives tp 0 (its pools give theirs)"
                                     : "expected a whole number >= 1, got '0'");
        else if (w->npools && w->kind >= SV_VK_PREFILL)
            rc = sv_errorf(err, SV_EINVAL,
                           "%s:%ld: column 'layout': a %s row is one batch of the cost model; "
                           "only throughput, ttft and tpot rows run a layout",
                           path, w->line, kind);
        else if (w->measured <= 0)
            rc = sv_errorf(err, SV_EINVAL, "%s:%ld: column 'measured': expected > 0, got %g", path,
                           w->line, w->measured);
        else if (w->kind >= SV_VK_PREFILL && w->batch < 1)
            rc = sv_errorf(err, SV_EINVAL, "%s:%ld: column 'batch': a %s row needs a batch >= 1",
                           path, w->line, kind);
        else if (w->kind < SV_VK_PREFILL && w->requests < 1)
            rc =
                sv_errorf(err, SV_EINVAL, "%s:%ld: column 'requests': a %s row needs requests >= 1",
                          path, w->line, kind);
        w->fitted = strcmp(fit, "yes") == 0;
    }
    if (rc)
        sv_validation_free(v);
    else
        *out = v;
done:
    sv__csv_free(t);
    return rc;
}

/* A row's `hardware.KEY=VALUE` sets that are cost-model keys (power_limit_w, ...), for the
 * rows the cost model computes alone; the others belong to simulated runs. */
static int row_cost_sets(const sv_vrow_t *w, sv_perf_settings_t *set, sv_error_t *err)
{
    char buf[sizeof w->sets];
    memcpy(buf, w->sets, sizeof buf);
    for (char *s = buf, *next; s && *s; s = next) {
        next = strchr(s, ';');
        if (next) *next++ = '\0';
        char *eq = strchr(s, '=');
        if (strncmp(s, "hardware.", 9) != 0 || !eq) continue;
        *eq = '\0';
        int rc = sv_perf_settings_set(set, s + 9, eq + 1, err);
        if (rc == SV_ENOKEY) continue;
        if (rc) return sv_error_prefix(err, "line %ld: sets", w->line);
    }
    return 0;
}

/* The cost model of a row's replica. */
static int row_perf(const sv_vrow_t *w, const sv_catalog_t *cat, sv_perf_t *p, sv_error_t *err)
{
    sv_perf_settings_t set = sv_perf_settings_default();
    char tp[16];
    snprintf(tp, sizeof tp, "%d", w->tp);
    const sv_gpu_t *gpu;
    const sv_model_t *model;
    int rc;
    if ((rc = sv_perf_settings_set(&set, "tp", tp, err)) ||
        (rc = sv_perf_settings_set(&set, "weight_dtype", w->weight_dtype, err)) ||
        (rc = sv_perf_settings_set(&set, "kv_cache_dtype", w->kv_dtype, err)) ||
        (rc = sv_perf_settings_profile(&set, cat, w->profile, err)) ||
        (rc = row_cost_sets(w, &set, err)) || (rc = sv_catalog_gpu(cat, w->gpu, &gpu, err)) ||
        (rc = sv_catalog_model(cat, w->model, &model, err)) ||
        (rc = sv_perf_init(p, gpu, model, &set, err)))
        return rc;
    return 0;
}

/* prefill: batch prompts of input tokens in one step; step: a decode step of batch
 * sequences at the mean context input + output/2; e2e: the prefill, then output - 1
 * decode steps at growing context. Milliseconds. */
static double batch_ms(const sv_perf_t *p, const sv_vrow_t *w)
{
    sv_chunk_t chunks[256];
    long nb = w->batch;
    sv_step_cost_t c;
    double pre = 0.0;
    if (w->kind != SV_VK_STEP) {
        /* Batches wider than the chunk array are costed in equal parts. */
        long per = nb <= 256 ? nb : 256, parts = (nb + per - 1) / per;
        for (long i = 0; i < per; i++)
            chunks[i] = (sv_chunk_t){.new_tokens = w->input, .cached_tokens = 0, .last = 1};
        sv_batch_t b = {.chunks = chunks, .n_chunks = (int)per};
        sv_perf_step(p, &b, &c);
        pre = c.total * (double)parts;
        if (w->kind == SV_VK_PREFILL) return pre * 1e3;
    }
    if (w->kind == SV_VK_STEP)
        return sv_perf_decode_time(p, nb, (double)w->input + (double)w->output / 2.0, NULL) * 1e3;
    double dec = 0.0;
    for (long k = 1; k < w->output; k++)
        dec += sv_perf_decode_time(p, nb, (double)(w->input + k - 1), NULL);
    return (pre + dec) * 1e3;
}

/* A row's engine map, colocated or per pool (its scheduler, then its profile): the caps
 * wide enough for any row, which a row's sets override. */
#define ROW_ENGINE "{scheduler: %s, max_num_seqs: 1024, max_num_batched_tokens: 8192, profile: %s}"

/* The scheduler of a row's engine profile: TensorRT-LLM's own capacity scheduler reserves
 * whole sequences; SGLang runs prefill batches before decode (each version's profile too). */
static const char *row_scheduler(const sv_vrow_t *w)
{
    const char *e = sv_engine_of_profile(w->profile); /* "sglang-0.5.9-rocm": sglang's */
    return e && strcmp(e, "vllm") ? e : "vllm";
}

/*
 * A disaggregated row's pools: one prefill and one decode pool of its layout's workers,
 * each worker an 8-GPU (or tp-GPU) engine of its own. Requests are dealt round-robin over
 * the prefill workers and the decode workers (Dynamo's frontend routes round-robin unless
 * told to route by KV overlap, and these prompts share none). Each worker is its own node,
 * so the KV crosses the nodes' InfiniBand NICs, one 400 Gb/s NIC per GPU as on H200 HGX
 * nodes. The client's stream comes from the decode worker, so its first token is timed
 * there (first_token: decode): after the prefill, the KV transfer and a decode slot.
 */
static void write_pools(FILE *f, const sv_vrow_t *w)
{
    fprintf(f, "pools:\n");
    for (int i = 0; i < w->npools; i++) {
        const sv_vpool_t *p = &w->pools[i];
        const char *role = p->decode ? "decode" : "prefill";
        fprintf(f,
                "  - {name: %s, role: %s, gpu: %s, tp: %d, ep: %d, dp_attention: %d, "
                "weight_dtype: %s, kv_cache_dtype: %s, replicas: %d,\n"
                "     engine: " ROW_ENGINE "}\n",
                role, role, w->gpu, p->tp, p->ep, p->dp_attention, w->weight_dtype, w->kv_dtype,
                p->workers, row_scheduler(w), w->profile);
    }
    fprintf(f, "router: round-robin\n"
               "disaggregation: {decode_router: round-robin, first_token: decode, "
               "kv_link: {kind: infiniband}}\n");
}

/* A scenario for a simulated row, written to a temporary file. */
static int write_scenario(const sv_vrow_t *w, char *path, size_t n, sv_error_t *err)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, n, "%s/servesim-validate-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        return sv_errorf(err, SV_EIO, "cannot create a temporary scenario in %s", path);
    }
    fprintf(f, "name: validate-line-%ld\nseed: 1\nmodel: %s\n", w->line, w->model);
    if (w->npools)
        write_pools(f, w);
    else
        fprintf(f,
                "hardware: {gpu: %s, tp: %d, weight_dtype: %s, kv_cache_dtype: %s}\n"
                "engine: " ROW_ENGINE "\n",
                w->gpu, w->tp, w->weight_dtype, w->kv_dtype, row_scheduler(w), w->profile);
    fprintf(f, "workload:\n  num_requests: %ld\n  rate: inf\n", w->requests);
    if (w->concurrency > 0) fprintf(f, "  max_concurrency: %ld\n", w->concurrency);
    if (strncmp(w->family, "inferencex-", 11) == 0)
        /* InferenceX draws each length uniformly in [int(0.8 L), L] (--random-range-ratio
         * 0.8 of vLLM's benchmark_serving.py), input and output independently. */
        fprintf(f,
                "  input: {dist: uniform, min: %ld, max: %ld}\n"
                "  output: {dist: uniform, min: %ld, max: %ld}\n",
                (long)(0.8 * (double)w->input), w->input, (long)(0.8 * (double)w->output),
                w->output);
    else
        fprintf(f, "  input: {dist: fixed, value: %ld}\n  output: {dist: fixed, value: %ld}\n",
                w->input, w->output);
    if (fclose(f)) {
        unlink(path);
        return sv_errorf(err, SV_EIO, "cannot write the temporary scenario %s", path);
    }
    return 0;
}

/*
 * A row's sets as --set assignments. In a row with a layout, hardware.KEY and engine.KEY
 * set KEY in both pools (pools.NAME.KEY, pools.NAME.engine.KEY); pools.prefill.KEY and
 * pools.decode.KEY set one. Written into buf; returns how many, or -1 past MAX_SETS.
 */
static int row_sets(const sv_vrow_t *w, char *buf, size_t n, const char **sets)
{
    char src[sizeof w->sets];
    int nsets = 0;
    size_t used = 0;
    memcpy(src, w->sets, sizeof src);
    for (char *s = src, *next; s && *s; s = next) {
        next = strchr(s, ';');
        if (next) *next++ = '\0';
        int both = w->npools && (strncmp(s, "hardware.", 9) == 0 || strncmp(s, "engine.", 7) == 0);
        for (int i = 0; i < (both ? w->npools : 1); i++) {
            const char *pool = w->pools[i].decode ? "decode" : "prefill";
            int len = !both         ? snprintf(buf + used, n - used, "%s", s)
                      : s[0] == 'h' ? snprintf(buf + used, n - used, "pools.%s.%s", pool, s + 9)
                                    : snprintf(buf + used, n - used, "pools.%s.%s", pool, s);
            if (nsets == MAX_SETS || len < 0 || (size_t)len >= n - used) return -1;
            sets[nsets++] = buf + used;
            used += (size_t)len + 1;
        }
    }
    return nsets;
}

int sv_validation_scenario(const sv_vrow_t *w, const sv_catalog_t *cat, sv_scenario_t **out,
                           sv_error_t *err)
{
    char path[512], sets_buf[2 * sizeof w->sets + 64 * MAX_SETS];
    const char *sets[MAX_SETS];
    int nsets = row_sets(w, sets_buf, sizeof sets_buf, sets), rc;
    *out = NULL;
    if (nsets < 0)
        return sv_errorf(err, SV_EINVAL, "column 'sets': more than %d settings", MAX_SETS);
    if ((rc = write_scenario(w, path, sizeof path, err))) return rc;
    rc = sv_scenario_load(path, sets, nsets, cat, out, err);
    unlink(path);
    return rc;
}

static int simulate(const sv_vrow_t *w, const sv_catalog_t *cat, double *out, sv_error_t *err)
{
    sv_scenario_t *sc = NULL;
    sv_result_t *res = NULL;
    int rc = sv_validation_scenario(w, cat, &sc, err);
    if (!rc) rc = sv_sim_run(sc, &res, err);
    if (!rc) {
        const sv_summary_t *s = &res->summary;
        if (w->kind == SV_VK_TTFT)
            /* median by default (vLLM's benchmark, InferenceX); ms_mean: AIPerf's average,
             * which the NIM tables give */
            *out = strcmp(w->unit, "ms_mean") == 0 ? s->ttft.mean : s->ttft.median;
        else if (w->kind == SV_VK_TPOT)
            *out = strcmp(w->unit, "ms_median") == 0 ? s->tpot.median : s->tpot.mean;
        else if (strcmp(w->unit, "total_tok_s") == 0)
            *out = s->total_token_throughput;
        else if (strcmp(w->unit, "total_tok_s_gpu") == 0)
            *out = s->total_token_throughput / (double)sv_vrow_gpus(w);
        else
            *out = s->output_throughput;
    }
    sv_result_free(res);
    sv_scenario_free(sc);
    return rc;
}

int sv_validation_run(sv_validation_t *v, const sv_catalog_t *cat, const char *prefix,
                      sv_error_t *err)
{
    for (long r = 0; r < v->nrows; r++) {
        sv_vrow_t *w = &v->rows[r];
        if (prefix && strncmp(w->family, prefix, strlen(prefix)) != 0) continue;
        int rc;
        if (w->kind >= SV_VK_PREFILL) {
            sv_perf_t p;
            if ((rc = row_perf(w, cat, &p, err)) == 0) w->simulated = batch_ms(&p, w);
        } else {
            rc = simulate(w, cat, &w->simulated, err);
        }
        if (rc) return sv_error_prefix(err, "%s:%ld", v->path, w->line);
    }
    return 0;
}

double sv_validation_mape(const sv_validation_t *v, const char *family, int kind)
{
    return sv_validation_mape_of(v, NULL, family, kind);
}

double sv_validation_mape_of(const sv_validation_t *v, const double *sim, const char *family,
                             int kind)
{
    double sum = 0.0;
    long n = 0;
    for (long r = 0; r < v->nrows; r++) {
        const sv_vrow_t *w = &v->rows[r];
        double y = sim ? sim[r] : w->simulated;
        if (w->kind != kind || isnan(y)) continue;
        if (family && strcmp(w->family, family)) continue;
        sum += fabs(y - w->measured) / w->measured;
        n++;
    }
    return n ? 100.0 * sum / (double)n : NAN;
}

/* Families in order of first appearance. */
static int families(const sv_validation_t *v, const char **out, int max)
{
    int n = 0;
    for (long r = 0; r < v->nrows; r++) {
        int seen = 0;
        for (int i = 0; i < n && !seen; i++)
            seen = strcmp(out[i], v->rows[r].family) == 0;
        if (!seen && n < max) out[n++] = v->rows[r].family;
    }
    return n;
}

/* " 9D:TP8/EP8/DPA8": a pool's workers and layout, EP and DPA only when above 1. */
static void layout_text(const sv_vpool_t *p, char *dst, size_t n)
{
    int k = snprintf(dst, n, " %d%c:TP%d", p->workers, p->decode ? 'D' : 'P', p->tp);
    if (k > 0 && (size_t)k < n && p->ep > 1) k += snprintf(dst + k, n - (size_t)k, "/EP%d", p->ep);
    if (k > 0 && (size_t)k < n && p->dp_attention > 1)
        snprintf(dst + k, n - (size_t)k, "/DPA%d", p->dp_attention);
}

/* The engine profiles of a family's rows, each once, in row order ("sglang, sglang-0.5.9-rocm"):
 * a family may hold runs of several versions of one engine. */
static void row_profiles(const sv_validation_t *v, const char *family, char *dst, size_t n)
{
    dst[0] = '\0';
    for (long r = 0; r < v->nrows; r++) {
        const sv_vrow_t *w = &v->rows[r];
        if (strcmp(w->family, family) || isnan(w->simulated)) continue;
        int seen = 0;
        for (long q = 0; q < r && !seen; q++)
            seen = !strcmp(v->rows[q].family, family) && !isnan(v->rows[q].simulated) &&
                   !strcmp(v->rows[q].profile, w->profile);
        size_t len = strlen(dst);
        if (!seen && len < n) snprintf(dst + len, n - len, "%s%s", len ? ", " : "", w->profile);
    }
}

void sv_validation_print(const sv_validation_t *v, FILE *f)
{
    const char *fam[256];
    int nf = families(v, fam, 256);
    for (int i = 0; i < nf; i++) {
        int header = 0;
        const char *first_profile = "";
        for (long r = 0; r < v->nrows; r++) {
            const sv_vrow_t *w = &v->rows[r];
            if (strcmp(w->family, fam[i]) || isnan(w->simulated)) continue;
            if (!header) {
                first_profile = w->profile;
                char gpus[64];
                if (w->npools)
                    snprintf(gpus, sizeof gpus, "%s disaggregated", w->gpu);
                else
                    snprintf(gpus, sizeof gpus, "%s x%d", w->gpu, w->tp);
                char profs[160];
                row_profiles(v, fam[i], profs, sizeof profs);
                fprintf(f, "\n%s (%s, %s, %s/%s, %s %s)%s\n", fam[i], w->model, gpus,
                        w->weight_dtype, w->kv_dtype, strchr(profs, ',') ? "profiles" : "profile",
                        profs, w->fitted ? "  [fitted]" : "  [check only]");
                fprintf(f, "  %-10s %-34s %12s %12s %8s\n", "kind", "condition", "measured",
                        "simulated", "error");
                header = 1;
            }
            char cond[160];
            if (w->kind >= SV_VK_PREFILL)
                snprintf(cond, sizeof cond, "in %ld out %ld batch %ld", w->input, w->output,
                         w->batch);
            else
                snprintf(cond, sizeof cond, "in %ld out %ld %s %ld", w->input, w->output,
                         w->concurrency ? "conc" : "all-at-once", w->concurrency);
            if (strcmp(w->profile, first_profile)) /* another engine version */
                snprintf(cond + strlen(cond), sizeof cond - strlen(cond), " %s", w->profile);
            for (int p = 0; p < w->npools; p++) /* e.g. " 1P:TP8/EP8/DPA8 9D:TP8" */
                layout_text(&w->pools[p], cond + strlen(cond), sizeof cond - strlen(cond));
            fprintf(f, "  %-10s %-34s %12.2f %12.2f %+7.1f%%  %s\n", kind_names[w->kind], cond,
                    w->measured, w->simulated, 100.0 * (w->simulated - w->measured) / w->measured,
                    w->unit);
        }
    }
    sv_validation_print_mape(v, NULL, "MAPE % per family and kind (rows)", f);
}

void sv_validation_print_mape(const sv_validation_t *v, const double *sim, const char *title,
                              FILE *f)
{
    const char *fam[256];
    int nf = families(v, fam, 256);
    fprintf(f, "\n%s\n  %-28s", title, "family");
    for (int k = 0; k < SV_VK_COUNT; k++)
        fprintf(f, " %10s", kind_names[k]);
    fputc('\n', f);
    for (int i = 0; i <= nf; i++) {
        const char *name = i < nf ? fam[i] : NULL;
        int any = 0;
        for (int k = 0; k < SV_VK_COUNT; k++)
            any |= !isnan(sv_validation_mape_of(v, sim, name, k));
        if (!any) continue;
        fprintf(f, "  %-28s", name ? name : "all");
        for (int k = 0; k < SV_VK_COUNT; k++) {
            double m = sv_validation_mape_of(v, sim, name, k);
            if (isnan(m))
                fprintf(f, " %10s", "-");
            else
                fprintf(f, " %10.1f", m);
        }
        fputc('\n', f);
    }
}

int sv_validation_check(const sv_validation_t *v, const char *bounds_path, FILE *f, sv_error_t *err)
{
    static const char *const bcols[] = {"family", "kind", "max_mape_pct"};
    int idx[3], over = 0;
    sv__csv_t *t;
    int rc = sv__csv_read(bounds_path, &t, err);
    if (rc) return rc;
    if ((rc = sv__csv_need(t, bcols, idx, 3, err))) goto done;
    for (long r = 0; r < t->nrows; r++) {
        const char *fam = sv__csv_cell(t, r, idx[0]), *kind = sv__csv_cell(t, r, idx[1]);
        double bound;
        int k = -1;
        if ((rc = sv__csv_num(t, r, idx[2], &bound, err))) goto done;
        for (int i = 0; i < SV_VK_COUNT; i++)
            if (strcmp(kind, kind_names[i]) == 0) k = i;
        if (k < 0) {
            rc = sv_errorf(err, SV_EINVAL, "%s:%ld: column 'kind': unknown kind '%s'", bounds_path,
                           t->lines[r], kind);
            goto done;
        }
        double m = sv_validation_mape(v, fam, k);
        if (isnan(m)) {
            rc = sv_errorf(err, SV_EINVAL, "%s:%ld: no simulated %s rows of family '%s'",
                           bounds_path, t->lines[r], kind, fam);
            goto done;
        }
        int bad = m > bound;
        over += bad;
        fprintf(f, "%s %-28s %-10s MAPE %6.1f%% (bound %.1f%%)\n", bad ? "OVER" : "ok  ", fam, kind,
                m, bound);
    }
    rc = over;
done:
    sv__csv_free(t);
    return rc;
}
