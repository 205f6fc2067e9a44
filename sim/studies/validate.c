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
#include "servesim/cluster/sim.h"
#include "servesim/base/yaml.h"

#ifndef SERVESIM_VALIDATION_DATA
#define SERVESIM_VALIDATION_DATA "tests/data/validation/measurements.csv"
#endif

#define MAX_ROWS 100000
#define MAX_SETS 16

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

int sv_validation_load(const char *path, sv_validation_t **out, sv_error_t *err)
{
    *out = NULL;
    sv__csv_t *t;
    int idx[C_N], rc = sv__csv_read(path, &t, err);
    if (rc) return rc;
    if ((rc = sv__csv_need(t, cols, idx, C_N, err))) goto done;
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
            (rc = whole(t, r, idx[C_TP], 1, &tp, err)) ||
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
    fprintf(f,
            "name: validate-line-%ld\nseed: 1\nmodel: %s\n"
            "hardware: {gpu: %s, tp: %d, weight_dtype: %s, kv_cache_dtype: %s}\n"
            "engine: {scheduler: %s, max_num_seqs: 1024, max_num_batched_tokens: 8192, "
            "profile: %s}\n"
            "workload:\n  num_requests: %ld\n  rate: inf\n",
            w->line, w->model, w->gpu, w->tp, w->weight_dtype, w->kv_dtype,
            /* TensorRT-LLM's own capacity scheduler reserves whole sequences; SGLang runs
             * prefill batches before decode */
            strcmp(w->profile, "trtllm") == 0   ? "trtllm"
            : strcmp(w->profile, "sglang") == 0 ? "sglang"
                                                : "vllm",
            w->profile, w->requests);
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

static int simulate(const sv_vrow_t *w, const sv_catalog_t *cat, double *out, sv_error_t *err)
{
    char path[512], sets_buf[512];
    const char *sets[MAX_SETS];
    int nsets = 0, rc;
    memcpy(sets_buf, w->sets, sizeof sets_buf);
    for (char *s = sets_buf; *s && nsets < MAX_SETS;) {
        sets[nsets++] = s;
        char *e = strchr(s, ';');
        if (!e) break;
        *e = '\0';
        s = e + 1;
    }
    if ((rc = write_scenario(w, path, sizeof path, err))) return rc;
    sv_scenario_t *sc = NULL;
    sv_result_t *res = NULL;
    rc = sv_scenario_load(path, sets, nsets, cat, &sc, err);
    unlink(path);
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
            *out = s->total_token_throughput / w->tp;
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

void sv_validation_print(const sv_validation_t *v, FILE *f)
{
    const char *fam[256];
    int nf = families(v, fam, 256);
    for (int i = 0; i < nf; i++) {
        int header = 0;
        for (long r = 0; r < v->nrows; r++) {
            const sv_vrow_t *w = &v->rows[r];
            if (strcmp(w->family, fam[i]) || isnan(w->simulated)) continue;
            if (!header) {
                fprintf(f, "\n%s (%s, %s x%d, %s/%s, profile %s)%s\n", fam[i], w->model, w->gpu,
                        w->tp, w->weight_dtype, w->kv_dtype, w->profile,
                        w->fitted ? "  [fitted]" : "  [check only]");
                fprintf(f, "  %-10s %-34s %12s %12s %8s\n", "kind", "condition", "measured",
                        "simulated", "error");
                header = 1;
            }
            char cond[64];
            if (w->kind >= SV_VK_PREFILL)
                snprintf(cond, sizeof cond, "in %ld out %ld batch %ld", w->input, w->output,
                         w->batch);
            else
                snprintf(cond, sizeof cond, "in %ld out %ld %s %ld", w->input, w->output,
                         w->concurrency ? "conc" : "all-at-once", w->concurrency);
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
