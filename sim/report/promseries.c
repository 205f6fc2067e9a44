/*
 * vLLM's Prometheus metrics over time (include/servesim/report/report.h,
 * sv_report_prometheus_series): what a Prometheus server scraping every replica at each
 * time-series sample would have stored, written as OpenMetrics text with a timestamp on
 * every value, so that dashboards and alert rules (queue depth, KV usage, TTFT quantiles)
 * can be tried on a simulated run, or the file backfilled with `promtool tsdb
 * create-blocks-from openmetrics`.
 *
 * The OpenMetrics rules it keeps (openmetrics.io, the text format; the Python client's
 * parser checks them): a family's samples of one label set are contiguous and in time
 * order; a histogram's buckets, _count and _sum of one time stand together, buckets
 * ascending and cumulative; a counter family is named without its _total suffix; "# EOF"
 * ends the file. Timestamps are in seconds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio_int.h"
#include "base/jsonw_int.h"
#include "servesim/report/report.h"

/* The gauges, as sampled. */
static const struct {
    const char *name, *help;
} GAUGES[] = {
    {"vllm:num_requests_running", "Number of requests in model execution batches."},
    {"vllm:num_requests_waiting", "Number of requests waiting to be processed."},
    {"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."},
};

/* The counters, over the requests each replica completed by then (at their last token). */
static const struct {
    const char *name, *help, *label;
} COUNTERS[] = {
    {"vllm:request_success", "Count of successfully processed requests.",
     ",finished_reason=\"length\""},
    {"vllm:prompt_tokens", "Number of prefill tokens processed.", ""},
    {"vllm:generation_tokens", "Number of generation tokens processed.", ""},
};

/* The histograms: observed at the first token (TTFT) or at the last (the others). */
static const struct {
    const char *name;
    double (*get)(const sv_req_t *r);
    int at_first, multi_token_only;
} HISTS[] = {
    {"vllm:time_to_first_token_seconds", sv_req_ttft, 1, 0},
    {"vllm:e2e_request_latency_seconds", sv_req_e2el, 0, 0},
    {"vllm:request_time_per_output_token_seconds", sv_req_tpot, 0, 1},
};
#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct series {
    const sv_result_t *res;
    double epoch;
    double *t; /* the scrape times (distinct sample times) */
    size_t nt;
    const sv_sample_t **at;  /* [replica x nt]: its sample at each time, or NULL */
    int32_t **first, **last; /* per replica: completed requests by first / last token time */
    size_t *n;               /* per replica: how many */
    char model[160];
} series_t;

/* qsort's comparators read the pool through this (one writer at a time: the report). */
static const sv_req_t *req_pool;

static int cmp_at(double x, double y, int32_t a, int32_t b)
{
    if (x != y) return x < y ? -1 : 1;
    return (a > b) - (a < b); /* ties by index: the order is total, the output fixed */
}
static int by_first(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    return cmp_at(req_pool[i].first_token, req_pool[j].first_token, i, j);
}
static int by_last(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    return cmp_at(req_pool[i].last_token, req_pool[j].last_token, i, j);
}

static int build(series_t *s)
{
    const sv_result_t *res = s->res;
    size_t R = (size_t)res->replicas, ns;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &ns);
    s->t = malloc((ns + 1) * sizeof *s->t);
    s->at = calloc(R * (ns + 1), sizeof *s->at);
    s->first = calloc(R, sizeof *s->first);
    s->last = calloc(R, sizeof *s->last);
    s->n = calloc(R, sizeof *s->n);
    if (!s->t || !s->at || !s->first || !s->last || !s->n) return SV_ENOMEM;
    for (size_t i = 0; i < ns; i++) {
        if (s->epoch + sm[i].t <= 0) continue; /* the start itself: nothing yet, no time */
        if (s->nt == 0 || sm[i].t > s->t[s->nt - 1]) s->t[s->nt++] = sm[i].t;
        if (sm[i].replica >= 0 && (size_t)sm[i].replica < R)
            s->at[(size_t)sm[i].replica * (ns + 1) + s->nt - 1] = &sm[i];
    }
    /* re-pack the per-replica rows to stride nt (ns + 1 above: nt was not known yet) */
    for (size_t e = 1; e < R; e++)
        memmove(s->at + e * s->nt, s->at + e * (ns + 1), s->nt * sizeof *s->at);
    const sv_reqpool_t *pool = &res->pool;
    for (size_t i = 0; i < pool->n; i++)
        if (pool->r[i].state == SV_RQ_DONE && pool->r[i].replica >= 0 &&
            (size_t)pool->r[i].replica < R)
            s->n[pool->r[i].replica]++;
    for (size_t e = 0; e < R; e++) {
        s->first[e] = malloc((s->n[e] + 1) * sizeof **s->first);
        s->last[e] = malloc((s->n[e] + 1) * sizeof **s->last);
        if (!s->first[e] || !s->last[e]) return SV_ENOMEM;
        s->n[e] = 0;
    }
    for (size_t i = 0; i < pool->n; i++) {
        const sv_req_t *r = &pool->r[i];
        if (r->state != SV_RQ_DONE || r->replica < 0 || (size_t)r->replica >= R) continue;
        size_t e = (size_t)r->replica;
        s->first[e][s->n[e]] = s->last[e][s->n[e]] = (int32_t)i;
        s->n[e]++;
    }
    req_pool = pool->r;
    for (size_t e = 0; e < R; e++) {
        qsort(s->first[e], s->n[e], sizeof **s->first, by_first);
        qsort(s->last[e], s->n[e], sizeof **s->last, by_last);
    }
    const sv_model_t *m = &res->sc->model;
    snprintf(s->model, sizeof s->model, "%s", m->hf_id[0] ? m->hf_id : m->name);
    return 0;
}

static void release(series_t *s)
{
    for (int e = 0; s->first && s->last && e < s->res->replicas; e++) {
        free(s->first[e]);
        free(s->last[e]);
    }
    free(s->first);
    free(s->last);
    free(s->n);
    free(s->at);
    free(s->t);
}

static void write_series(const series_t *s, FILE *f)
{
    const sv_result_t *res = s->res;
    char b1[40], b2[40], lab[256];
    for (int g = 0; g < N_OF(GAUGES); g++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", GAUGES[g].name, GAUGES[g].help,
                GAUGES[g].name);
        for (int e = 0; e < res->replicas; e++)
            for (size_t k = 0; k < s->nt; k++) {
                const sv_sample_t *x = s->at[(size_t)e * s->nt + k];
                if (!x) continue;
                double v = g == 0 ? x->running : g == 1 ? x->waiting : x->kv_usage;
                fprintf(f, "%s{engine=\"%d\",model_name=\"%s\"} %s %.3f\n", GAUGES[g].name, e,
                        s->model, sv__fmt_double(v, b1), s->epoch + s->t[k]);
            }
    }
    for (int c = 0; c < N_OF(COUNTERS); c++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", COUNTERS[c].name, COUNTERS[c].help,
                COUNTERS[c].name);
        for (int e = 0; e < res->replicas; e++) {
            size_t j = 0;
            double v = 0;
            for (size_t k = 0; k < s->nt; k++) {
                for (; j < s->n[e] && res->pool.r[s->last[e][j]].last_token <= s->t[k]; j++) {
                    const sv_req_t *r = &res->pool.r[s->last[e][j]];
                    v += c == 0 ? 1.0 : c == 1 ? r->input : r->output;
                }
                fprintf(f, "%s_total{engine=\"%d\",model_name=\"%s\"%s} %s %.3f\n",
                        COUNTERS[c].name, e, s->model, COUNTERS[c].label, sv__fmt_double(v, b1),
                        s->epoch + s->t[k]);
            }
        }
    }
    for (int h = 0; h < N_OF(HISTS); h++) {
        const char *help;
        const double *b;
        int nb;
        if (sv_report_prom_histogram(HISTS[h].name, &help, &b, &nb)) continue;
        fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", HISTS[h].name, help, HISTS[h].name);
        double *cnt = calloc((size_t)nb + 1, sizeof *cnt);
        if (!cnt) continue;
        for (int e = 0; e < res->replicas; e++) {
            int32_t *ord = HISTS[h].at_first ? s->first[e] : s->last[e];
            size_t j = 0;
            double sum = 0, total = 0;
            memset(cnt, 0, ((size_t)nb + 1) * sizeof *cnt);
            snprintf(lab, sizeof lab, "engine=\"%d\",model_name=\"%s\"", e, s->model);
            for (size_t k = 0; k < s->nt; k++) {
                for (; j < s->n[e]; j++) {
                    const sv_req_t *r = &res->pool.r[ord[j]];
                    if ((HISTS[h].at_first ? r->first_token : r->last_token) > s->t[k]) break;
                    if (HISTS[h].multi_token_only && r->output <= 1) continue;
                    double v = HISTS[h].get(r);
                    int i = 0;
                    while (i < nb && v > b[i])
                        i++;
                    cnt[i] += 1;
                    sum += v;
                    total += 1;
                }
                double ts = s->epoch + s->t[k], cum = 0;
                for (int i = 0; i < nb; i++) {
                    cum += cnt[i];
                    fprintf(f, "%s_bucket{%s,le=\"%s\"} %s %.3f\n", HISTS[h].name, lab,
                            sv__fmt_double(b[i], b1), sv__fmt_double(cum, b2), ts);
                }
                fprintf(f, "%s_bucket{%s,le=\"+Inf\"} %s %.3f\n", HISTS[h].name, lab,
                        sv__fmt_double(total, b1), ts);
                fprintf(f, "%s_count{%s} %s %.3f\n", HISTS[h].name, lab, sv__fmt_double(total, b1),
                        ts);
                fprintf(f, "%s_sum{%s} %s %.3f\n", HISTS[h].name, lab, sv__fmt_double(sum, b1), ts);
            }
        }
        free(cnt);
    }
    fputs("# EOF\n", f);
}

int sv_report_prometheus_series(const sv_result_t *res, double epoch, const char *path,
                                sv_error_t *err)
{
    series_t s = {.res = res, .epoch = epoch};
    int rc = build(&s);
    if (rc) {
        release(&s);
        return sv_errorf(err, rc, "out of memory writing %s", path);
    }
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        release(&s);
        return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    write_series(&s, f);
    release(&s);
    if (f == stdout) return fflush(f) ? sv_errorf(err, SV_EIO, "%s: cannot write", path) : 0;
    return sv__close_out(f, path, err);
}
