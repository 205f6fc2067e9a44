/*
 * Reading benchmark results (vLLM's result JSON, GenAI-Perf's and AIPerf's aggregate
 * export) and comparing two of them metric by metric (see include/servesim/studies/compare.h).
 */
#include "servesim/studies/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "servesim/base/numeric.h"
#include "base/fileio_int.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *const lat_names[SV_LM_COUNT] = {"TTFT", "TPOT", "ITL", "E2EL"};
static const char *const lat_keys[SV_LM_COUNT] = {"ttft", "tpot", "itl", "e2el"};
static const char *const stat_keys[4] = {"mean", "median", "p90", "p99"};
static const char *const stat_words[4] = {"Mean", "Median", "P90", "P99"};
/* GenAI-Perf / AIPerf: the object holding each latency metric and its statistics. */
static const char *const gp_lat[SV_LM_COUNT] = {"time_to_first_token", "inter_token_latency",
                                                "inter_chunk_latency", "request_latency"};
static const char *const gp_stat[4] = {"avg", "p50", "p90", "p99"};

const char *sv_bench_format_name(sv_bench_format_t f)
{
    return f == SV_BENCH_GENAI_PERF ? "GenAI-Perf/AIPerf profile export" : "vLLM result JSON";
}

const char *sv_compare_latency_name(int l)
{
    return l >= 0 && l < SV_LM_COUNT ? lat_names[l] : "?";
}

const char *sv_compare_metric_label(int m)
{
    static char labels[SV_CM_COUNT][40];
    if (m == SV_CM_REQ_TPUT) return "Request throughput (req/s)";
    if (m == SV_CM_OUT_TPUT) return "Output token throughput (tok/s)";
    if (m == SV_CM_TOTAL_TPUT) return "Total token throughput (tok/s)";
    if (m < SV_CM_LAT_FIRST || m >= SV_CM_COUNT) return "?";
    int k = m - SV_CM_LAT_FIRST;
    if (!labels[m][0])
        snprintf(labels[m], sizeof labels[m], "%s %s (ms)", stat_words[k % 4], lat_names[k / 4]);
    return labels[m];
}

double sv_rel_err(double real, double sim)
{
    if (real == 0.0) return sim == 0.0 ? 0.0 : (sim > 0 ? INFINITY : -INFINITY);
    return (sim - real) / real;
}

/* ---- Kolmogorov-Smirnov ---------------------------------------------------------------- */

double sv_kolmogorov_q(double lambda)
{
    if (!(lambda > 0)) return 1.0;
    if (lambda < 1.18) {
        /* P(K <= l) = sqrt(2 pi) / l * sum_{j>=1} exp(-(2j - 1)^2 pi^2 / (8 l^2)), which
         * converges fast for small l. */
        double s = 0, c = -M_PI * M_PI / (8.0 * lambda * lambda);
        for (int j = 1; j <= 20; j++)
            s += exp(c * (2 * j - 1) * (2 * j - 1));
        double q = 1.0 - sqrt(2.0 * M_PI) / lambda * s;
        return q < 0 ? 0 : q > 1 ? 1 : q;
    }
    /* P(K > l) = 2 sum_{j>=1} (-1)^(j-1) exp(-2 j^2 l^2), fast for large l. */
    double s = 0;
    for (int j = 1; j <= 100; j++) {
        double t = exp(-2.0 * j * j * lambda * lambda);
        s += (j % 2 ? t : -t);
        if (t < 1e-17) break;
    }
    double q = 2.0 * s;
    return q < 0 ? 0 : q > 1 ? 1 : q;
}

int sv_ks_2samp(double *a, size_t na, double *b, size_t nb, double tie, double *d, double *p)
{
    *d = NAN;
    *p = NAN;
    if (na == 0 || nb == 0) return SV_EINVAL;
    qsort(a, na, sizeof *a, sv_cmp_double);
    qsort(b, nb, sizeof *b, sv_cmp_double);
    size_t i = 0, j = 0;
    double best = 0;
    /* Walk the pooled values in order; at each distinct value step past every copy of it in
     * both samples (values within `tie` of it count as copies), then compare the two
     * empirical CDFs there. */
    while (i < na && j < nb) {
        double v = (a[i] < b[j] ? a[i] : b[j]) + tie;
        while (i < na && a[i] <= v)
            i++;
        while (j < nb && b[j] <= v)
            j++;
        double diff = fabs((double)i / (double)na - (double)j / (double)nb);
        if (diff > best) best = diff;
    }
    /* Once one sample is used up its CDF is 1; the largest gap left is at the current
     * position of the other, already compared above. */
    *d = best;
    double en = (double)na * (double)nb / (double)(na + nb);
    *p = sv_kolmogorov_q(sqrt(en) * best);
    return 0;
}

/* ---- loading --------------------------------------------------------------------------- */

static void locate(const char *buf, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *q = buf; q < at && *q; q++) {
        if (*q == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static const char *json_type(const cJSON *it)
{
    if (cJSON_IsString(it)) return "a string";
    if (cJSON_IsNull(it)) return "null";
    if (cJSON_IsBool(it)) return "a boolean";
    if (cJSON_IsArray(it)) return "a list";
    if (cJSON_IsObject(it)) return "an object";
    return "a number";
}

/* A number under key: 0 and *v, 1 when absent or null, negative on a wrong type. */
static int get_num(const cJSON *obj, const char *key, double *v, const char *path,
                   const char *where, sv_error_t *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it || cJSON_IsNull(it)) return 1;
    if (!cJSON_IsNumber(it))
        return sv_errorf(err, SV_EINVAL, "%s: key '%s%s': expected a number, got %s", path, where,
                         key, json_type(it));
    if (!isfinite(it->valuedouble))
        return sv_errorf(err, SV_EINVAL, "%s: key '%s%s': expected a finite number, got %g", path,
                         where, key, it->valuedouble);
    *v = it->valuedouble;
    return 0;
}

void sv_bench_free(sv_bench_t *b)
{
    if (!b) return;
    free(b->input_lens);
    free(b->output_lens);
    free(b->ttfts);
    free(b->latencies);
    free(b->start_times);
    if (b->itls)
        for (size_t i = 0; i < b->n; i++)
            free(b->itls[i]);
    free(b->itls);
    free(b->nitls);
    free(b->failed);
    for (int l = 0; l < SV_LM_COUNT; l++)
        free(b->sample[l]);
    free(b);
}

/* The length every per-request list must have: set by the first list read. */
typedef struct lists {
    const char *first; /* key that set n */
    int have_n;
} lists_t;

static int list_len(sv_bench_t *b, lists_t *ls, const char *key, const cJSON *arr, sv_error_t *err)
{
    size_t n = (size_t)cJSON_GetArraySize(arr);
    if (n > (size_t)SV_BENCH_MAX_REQUESTS)
        return sv_errorf(err, SV_ELIMIT, "%s: key '%s' has %zu entries, over the bound of %ld",
                         b->path, key, n, SV_BENCH_MAX_REQUESTS);
    if (!ls->have_n) {
        ls->have_n = 1;
        ls->first = key;
        b->n = n;
        return 0;
    }
    if (n != b->n)
        return sv_errorf(err, SV_EINVAL,
                         "%s: key '%s' has %zu entries but '%s' has %zu (one entry per request)",
                         b->path, key, n, ls->first, b->n);
    return 0;
}

/* The list under key (NULL when absent or null), checked to be a list. */
static int get_list(sv_bench_t *b, const cJSON *root, const char *key, const cJSON **out,
                    sv_error_t *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = NULL;
    if (!it || cJSON_IsNull(it)) return 0;
    if (!cJSON_IsArray(it))
        return sv_errorf(err, SV_EINVAL, "%s: key '%s': expected a list, got %s", b->path, key,
                         json_type(it));
    *out = it;
    return 0;
}

static int num_list(sv_bench_t *b, lists_t *ls, const cJSON *root, const char *key, double **out,
                    sv_error_t *err)
{
    const cJSON *arr;
    int rc = get_list(b, root, key, &arr, err);
    if (rc || !arr) return rc;
    if ((rc = list_len(b, ls, key, arr, err))) return rc;
    double *v = malloc((b->n ? b->n : 1) * sizeof *v);
    if (!v) return sv_errorf(err, SV_ENOMEM, "%s: out of memory for key '%s'", b->path, key);
    size_t i = 0;
    for (const cJSON *it = arr->child; it; it = it->next, i++) {
        if (!cJSON_IsNumber(it)) {
            free(v);
            return sv_errorf(err, SV_EINVAL, "%s: key '%s'[%zu]: expected a number, got %s",
                             b->path, key, i, json_type(it));
        }
        if (!isfinite(it->valuedouble)) {
            free(v);
            return sv_errorf(err, SV_EINVAL, "%s: key '%s'[%zu]: expected a finite number, got %g",
                             b->path, key, i, it->valuedouble);
        }
        v[i] = it->valuedouble;
    }
    *out = v;
    return 0;
}

static int itl_list(sv_bench_t *b, lists_t *ls, const cJSON *root, sv_error_t *err)
{
    const cJSON *arr;
    int rc = get_list(b, root, "itls", &arr, err);
    if (rc || !arr) return rc;
    if ((rc = list_len(b, ls, "itls", arr, err))) return rc;
    b->itls = calloc(b->n ? b->n : 1, sizeof *b->itls);
    b->nitls = calloc(b->n ? b->n : 1, sizeof *b->nitls);
    if (!b->itls || !b->nitls) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", b->path);
    size_t i = 0;
    for (const cJSON *it = arr->child; it; it = it->next, i++) {
        if (!cJSON_IsArray(it))
            return sv_errorf(err, SV_EINVAL, "%s: key 'itls'[%zu]: expected a list, got %s",
                             b->path, i, json_type(it));
        size_t m = (size_t)cJSON_GetArraySize(it), k = 0;
        b->itls[i] = malloc((m ? m : 1) * sizeof **b->itls);
        if (!b->itls[i]) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", b->path);
        b->nitls[i] = m;
        for (const cJSON *g = it->child; g; g = g->next, k++) {
            if (!cJSON_IsNumber(g))
                return sv_errorf(err, SV_EINVAL,
                                 "%s: key 'itls'[%zu][%zu]: expected a number, got %s", b->path, i,
                                 k, json_type(g));
            if (!isfinite(g->valuedouble))
                return sv_errorf(err, SV_EINVAL,
                                 "%s: key 'itls'[%zu][%zu]: expected a finite number, got %g",
                                 b->path, i, k, g->valuedouble);
            b->itls[i][k] = g->valuedouble;
        }
    }
    return 0;
}

static int error_list(sv_bench_t *b, lists_t *ls, const cJSON *root, sv_error_t *err)
{
    const cJSON *arr;
    int rc = get_list(b, root, "errors", &arr, err);
    if (rc || !arr) return rc;
    if ((rc = list_len(b, ls, "errors", arr, err))) return rc;
    b->failed = calloc(b->n ? b->n : 1, sizeof *b->failed);
    if (!b->failed) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", b->path);
    size_t i = 0;
    for (const cJSON *it = arr->child; it; it = it->next, i++) {
        if (cJSON_IsNull(it)) continue;
        if (!cJSON_IsString(it))
            return sv_errorf(err, SV_EINVAL,
                             "%s: key 'errors'[%zu]: expected a string (empty when the request "
                             "succeeded), got %s",
                             b->path, i, json_type(it));
        b->failed[i] = it->valuestring[0] != '\0';
    }
    return 0;
}

/* Whether request i succeeded: its error is empty, else (no errors list) it produced output,
 * else (no output lengths either) it has a latency. */
static int succeeded(const sv_bench_t *b, size_t i)
{
    if (b->failed) return !b->failed[i];
    if (b->output_lens) return b->output_lens[i] > 0;
    if (b->latencies) return b->latencies[i] > 0;
    return 1;
}

/* Per-request samples of successful requests, with vLLM's definitions. */
/* vLLM's result lists ttfts and itls but no latencies. Its client (vllm/benchmarks/lib/
 * endpoint_request_func.py) sets ttft at the first token, appends each later gap to itl
 * and takes the latency when the stream ends, so ttft + sum(itl) is the latency less the
 * moment between the last token and the end of the stream. Rebuilt so, the E2EL and TPOT
 * distributions and replay's recovered start exist for a real file too. */
static int derive_latencies(sv_bench_t *b, sv_error_t *err)
{
    if (b->latencies || !b->ttfts || !b->itls) return 0;
    b->latencies = malloc((b->n ? b->n : 1) * sizeof *b->latencies);
    if (!b->latencies) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", b->path);
    for (size_t i = 0; i < b->n; i++) {
        double s = b->ttfts[i];
        for (size_t g = 0; g < b->nitls[i]; g++)
            s += b->itls[i][g];
        b->latencies[i] = s;
    }
    b->latencies_derived = 1;
    return 0;
}

static int build_samples(sv_bench_t *b, sv_error_t *err)
{
    size_t n = b->n;
    for (int l = 0; l < SV_LM_COUNT; l++) {
        size_t cap = 0;
        if (l == SV_LM_ITL) {
            if (!b->itls) continue;
            for (size_t i = 0; i < n; i++)
                if (succeeded(b, i)) cap += b->nitls[i];
        } else {
            int ok = l == SV_LM_TTFT   ? b->ttfts != NULL
                     : l == SV_LM_E2EL ? b->latencies != NULL
                                       : b->ttfts && b->latencies && b->output_lens;
            if (!ok) continue;
            cap = n;
        }
        double *v = malloc((cap ? cap : 1) * sizeof *v);
        if (!v) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", b->path);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (!succeeded(b, i)) continue;
            if (l == SV_LM_TTFT)
                v[k++] = b->ttfts[i];
            else if (l == SV_LM_E2EL)
                v[k++] = b->latencies[i];
            else if (l == SV_LM_TPOT && b->output_lens[i] > 1)
                v[k++] = (b->latencies[i] - b->ttfts[i]) / (b->output_lens[i] - 1);
            else if (l == SV_LM_ITL)
                for (size_t g = 0; g < b->nitls[i]; g++)
                    v[k++] = b->itls[i][g];
        }
        b->sample[l] = v;
        b->nsample[l] = k;
    }
    return 0;
}

static int load_vllm(sv_bench_t *b, const cJSON *root, sv_error_t *err)
{
    const char *path = b->path;
    double v = 0;
    int rc;
    static const char *const tput[3] = {"request_throughput", "output_throughput",
                                        "total_token_throughput"};
    for (int m = 0; m < 3; m++) {
        if ((rc = get_num(root, tput[m], &v, path, "", err)) < 0) return rc;
        if (rc == 0) b->value[m] = v, b->has[m] = 1;
    }
    for (int l = 0; l < SV_LM_COUNT; l++)
        for (int s = 0; s < 4; s++) {
            char key[64];
            snprintf(key, sizeof key, "%s_%s_ms", stat_keys[s], lat_keys[l]);
            int m = SV_CM_LAT_FIRST + 4 * l + s;
            if ((rc = get_num(root, key, &v, path, "", err)) < 0) return rc;
            if (rc == 0) b->value[m] = v, b->has[m] = 1;
        }
    if ((rc = get_num(root, "duration", &v, path, "", err)) < 0) return rc;
    if (rc == 0) b->duration = v;
    const cJSON *mc = cJSON_GetObjectItemCaseSensitive(root, "max_concurrency");
    if (mc && !cJSON_IsNull(mc)) {
        /* the bound of a scenario's workload.max_concurrency */
        if (!cJSON_IsNumber(mc) || !(mc->valuedouble >= 1) || mc->valuedouble > 1e7 ||
            mc->valuedouble != floor(mc->valuedouble))
            return sv_errorf(err, SV_EINVAL,
                             "%s: key 'max_concurrency': expected a whole number in [1, "
                             "10000000] or null",
                             path);
        b->max_concurrency = (long)mc->valuedouble;
    }
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(root, "backend");
    if (cJSON_IsString(be)) snprintf(b->backend, sizeof b->backend, "%s", be->valuestring);
    lists_t ls = {0};
    if ((rc = num_list(b, &ls, root, "input_lens", &b->input_lens, err)) ||
        (rc = num_list(b, &ls, root, "output_lens", &b->output_lens, err)) ||
        (rc = num_list(b, &ls, root, "ttfts", &b->ttfts, err)) ||
        (rc = itl_list(b, &ls, root, err)) ||
        (rc = num_list(b, &ls, root, "latencies", &b->latencies, err)) ||
        (rc = num_list(b, &ls, root, "start_times", &b->start_times, err)) ||
        (rc = error_list(b, &ls, root, err)))
        return rc;
    if ((rc = derive_latencies(b, err))) return rc;
    return build_samples(b, err);
}

/* Milliseconds per unit of a GenAI-Perf latency ("ms" when absent). */
static int unit_ms(const cJSON *obj, double *f)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(obj, "unit");
    const char *s = cJSON_IsString(u) ? u->valuestring : "ms";
    if (!strcmp(s, "ms"))
        *f = 1.0;
    else if (!strcmp(s, "s") || !strcmp(s, "sec"))
        *f = 1e3;
    else if (!strcmp(s, "us"))
        *f = 1e-3;
    else if (!strcmp(s, "ns"))
        *f = 1e-6;
    else
        return -1;
    return 0;
}

static int load_genai_perf(sv_bench_t *b, const cJSON *root, sv_error_t *err)
{
    static const char *const tput[3] = {"request_throughput", "output_token_throughput",
                                        "total_token_throughput"};
    char where[96];
    double v = 0;
    int rc;
    for (int m = 0; m < 3; m++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, tput[m]);
        if (!cJSON_IsObject(o)) continue;
        snprintf(where, sizeof where, "%s.", tput[m]);
        if ((rc = get_num(o, "avg", &v, b->path, where, err)) < 0) return rc;
        if (rc == 0) b->value[m] = v, b->has[m] = 1;
    }
    for (int l = 0; l < SV_LM_COUNT; l++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, gp_lat[l]);
        if (!cJSON_IsObject(o)) continue;
        double f;
        if (unit_ms(o, &f))
            return sv_errorf(err, SV_EINVAL, "%s: key '%s.unit': expected ms, s, us or ns", b->path,
                             gp_lat[l]);
        snprintf(where, sizeof where, "%s.", gp_lat[l]);
        for (int s = 0; s < 4; s++) {
            int m = SV_CM_LAT_FIRST + 4 * l + s;
            if ((rc = get_num(o, gp_stat[s], &v, b->path, where, err)) < 0) return rc;
            if (rc == 0) b->value[m] = v * f, b->has[m] = 1;
        }
    }
    return 0;
}

static int is_genai_perf(const cJSON *root)
{
    for (int l = 0; l < SV_LM_COUNT; l++)
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, gp_lat[l]))) return 1;
    return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "request_throughput"));
}

int sv_bench_load(const char *path, sv_bench_t **out, sv_error_t *err)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = sv__read_file(path, SV_BENCH_MAX_BYTES, &buf, &len, err);
    if (rc) return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(buf, &end, 0);
    if (!root) {
        int line, col;
        locate(buf, end ? end : buf, &line, &col);
        rc = sv_errorf(err, SV_EPARSE,
                       "%s:%d:%d: malformed JSON (expected a vLLM result JSON or a GenAI-Perf "
                       "profile export)",
                       path, line, col);
        free(buf);
        return rc;
    }
    free(buf);
    sv_bench_t *b = calloc(1, sizeof *b);
    if (!b) {
        cJSON_Delete(root);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    snprintf(b->path, sizeof b->path, "%s", path);
    b->duration = NAN;
    if (!cJSON_IsObject(root)) {
        rc = sv_errorf(err, SV_EINVAL,
                       "%s: not a vLLM result JSON: the top level is %s, not an object", path,
                       json_type(root));
    } else {
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(root, "records");
        int has_completed = cJSON_HasObjectItem(root, "completed");
        int has_duration = cJSON_HasObjectItem(root, "duration");
        if (has_completed || has_duration) {
            if (!has_completed || !has_duration)
                rc = sv_errorf(err, SV_EINVAL, "%s: not a vLLM result JSON: no key '%s'", path,
                               has_completed ? "duration" : "completed");
            else
                rc = load_vllm(b, root, err);
        } else if (is_genai_perf(root) || (cJSON_IsObject(rec) && is_genai_perf(rec))) {
            b->format = SV_BENCH_GENAI_PERF;
            rc = load_genai_perf(b, is_genai_perf(root) ? root : rec, err);
        } else {
            rc = sv_errorf(err, SV_EINVAL,
                           "%s: not a vLLM result JSON: no key 'completed' (expected the output "
                           "of vllm bench serve --save-result, servesim --json, or a GenAI-Perf "
                           "profile export)",
                           path);
        }
    }
    cJSON_Delete(root);
    if (rc) {
        sv_bench_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

/* ---- comparing ------------------------------------------------------------------------- */

int sv_compare_new(const sv_bench_t *real, const sv_bench_t *sim, sv_compare_t **out,
                   sv_error_t *err)
{
    *out = NULL;
    sv_compare_t *c = calloc(1, sizeof *c);
    if (!c) return sv_errorf(err, SV_ENOMEM, "out of memory");
    c->real = real;
    c->sim = sim;
    c->worst = -1;
    c->worst_err = 0;
    for (int m = 0; m < SV_CM_COUNT; m++) {
        sv_compare_row_t *r = &c->rows[m];
        r->metric = m;
        r->in_real = real->has[m];
        r->in_sim = sim->has[m];
        r->real = real->value[m];
        r->sim = sim->value[m];
        r->err = r->in_real && r->in_sim ? sv_rel_err(r->real, r->sim) : NAN;
        if (!isnan(r->err) && (c->worst < 0 || fabs(r->err) > c->worst_err)) {
            c->worst = m;
            c->worst_err = fabs(r->err);
        }
    }
    for (int l = 0; l < SV_LM_COUNT; l++) {
        sv_compare_ks_t *k = &c->ks[l];
        k->metric = l;
        k->n_real = real->sample[l] ? real->nsample[l] : 0;
        k->n_sim = sim->sample[l] ? sim->nsample[l] : 0;
        k->d = k->p = NAN;
        if (!k->n_real || !k->n_sim) continue;
        double *a = malloc(k->n_real * sizeof *a), *b = malloc(k->n_sim * sizeof *b);
        if (!a || !b) {
            free(a);
            free(b);
            free(c);
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        }
        memcpy(a, real->sample[l], k->n_real * sizeof *a);
        memcpy(b, sim->sample[l], k->n_sim * sizeof *b);
        sv_ks_2samp(a, k->n_real, b, k->n_sim, SV_KS_TIE_S, &k->d, &k->p);
        free(a);
        free(b);
    }
    *out = c;
    return 0;
}

void sv_compare_free(sv_compare_t *c)
{
    free(c);
}

int sv_compare_past(const sv_compare_t *c, double tolerance)
{
    int n = 0;
    if (isnan(tolerance)) return 0;
    for (int m = 0; m < SV_CM_COUNT; m++)
        if (!isnan(c->rows[m].err) && fabs(c->rows[m].err) > tolerance) n++;
    return n;
}

static void fmt_err(char *buf, size_t n, double e)
{
    if (isinf(e))
        snprintf(buf, n, "%s", "inf (REAL is 0)");
    else if (fabs(e) < 5e-5) /* what %+.2f%% would print as +0.00% or -0.00% */
        snprintf(buf, n, "%s", "0.00%");
    else
        snprintf(buf, n, "%+.2f%%", 100.0 * e);
}

static void describe(FILE *f, const char *role, const sv_bench_t *b)
{
    fprintf(f, "%-5s %s (%s", role, b->path, sv_bench_format_name(b->format));
    if (b->backend[0]) fprintf(f, ", backend %s", b->backend);
    if (b->format == SV_BENCH_VLLM) {
        if (b->start_times || b->ttfts)
            fprintf(f, ", %zu requests listed%s", b->n,
                    b->latencies_derived ? "; latencies = ttft + sum of itls" : "");
        else
            fputs(", no per-request lists", f);
    } else {
        fputs(", aggregates only; inter_token_latency read as TPOT, inter_chunk_latency as ITL, "
              "request_latency as E2EL",
              f);
    }
    fputs(")\n", f);
}

void sv_compare_print(const sv_compare_t *c, double tolerance, FILE *f)
{
    char a[32], b[32], e[32];
    fputs("servesim compare: error = (SIM - REAL) / REAL, metrics as vllm bench serve defines "
          "them\n",
          f);
    describe(f, "REAL", c->real);
    describe(f, "SIM", c->sim);
    fprintf(f, "%-34s %14s %14s %10s\n", "metric", "REAL", "SIM", "error");
    for (int m = 0; m < SV_CM_COUNT; m++) {
        const sv_compare_row_t *r = &c->rows[m];
        if (m == SV_CM_LAT_FIRST || (m > SV_CM_LAT_FIRST && (m - SV_CM_LAT_FIRST) % 4 == 0))
            fputc('\n', f);
        snprintf(a, sizeof a, r->in_real ? "%.2f" : "not in REAL", r->real);
        snprintf(b, sizeof b, r->in_sim ? "%.2f" : "not in SIM", r->sim);
        if (isnan(r->err))
            snprintf(e, sizeof e, "-");
        else
            fmt_err(e, sizeof e, r->err);
        fprintf(f, "%-34s %14s %14s %10s\n", sv_compare_metric_label(m), a, b, e);
    }
    fputs("\nDistributions of per-request values (successful requests), two-sample "
          "Kolmogorov-Smirnov:\n",
          f);
    fprintf(f, "%-34s %14s %14s %10s %10s\n", "metric", "n REAL", "n SIM", "D", "p-value");
    for (int l = 0; l < SV_LM_COUNT; l++) {
        const sv_compare_ks_t *k = &c->ks[l];
        char label[48];
        snprintf(label, sizeof label, "KS %s", lat_names[l]);
        if (!c->real->sample[l] || !c->sim->sample[l]) {
            fprintf(f, "%-34s %14s %14s %10s %10s\n", label,
                    c->real->sample[l] ? "" : "not in REAL", c->sim->sample[l] ? "" : "not in SIM",
                    "-", "-");
            continue;
        }
        snprintf(a, sizeof a, "%zu", k->n_real);
        snprintf(b, sizeof b, "%zu", k->n_sim);
        if (isnan(k->d))
            fprintf(f, "%-34s %14s %14s %10s %10s\n", label, a, b, "-", "-");
        else
            fprintf(f, "%-34s %14s %14s %10.4f %10.4f\n", label, a, b, k->d, k->p);
    }
    fputc('\n', f);
    if (c->worst < 0) {
        fputs("verdict: no metric is in both files\n", f);
        return;
    }
    fmt_err(e, sizeof e, c->rows[c->worst].err);
    fprintf(f, "verdict: worst |error| %s (%s)", e, sv_compare_metric_label(c->worst));
    if (isnan(tolerance)) {
        fputs("; no --tolerance given\n", f);
        return;
    }
    int past = sv_compare_past(c, tolerance);
    if (past)
        fprintf(f, "; %d metric%s past the tolerance of %g%%\n", past, past > 1 ? "s" : "",
                100.0 * tolerance);
    else
        fprintf(f, "; within the tolerance of %g%%\n", 100.0 * tolerance);
}
