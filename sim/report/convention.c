/*
 * Other tools' metric conventions (see include/servesim/report/convention.h): the table of
 * what each tool reports and calls it, the statistics of each metric over the request
 * records, and the summary and JSON in each tool's layout. vLLM's convention is the
 * report's own writers (report.c), untouched.
 *
 * Sources of the names and definitions (read from each tool's output and source, facts
 * only): ../shared/spec/metrics.md; vLLM's vllm/benchmarks/serve.py at 009e6d4a (client
 * queue time); GenAI-Perf (triton-inference-server/perf_analyzer at 263c5f6:
 * genai_perf/profile_data_parser/llm_profile_data_parser.py for the per-request metrics and
 * the duration, metrics/statistics.py for the percentiles, export_data/console_exporter.py
 * for the table); LLMPerf's token_benchmark_ray.py, metrics_summary (ray-project/llmperf
 * at f1d6bed); SGLang's bench_serving result dict and printed summary.
 */
#include "servesim/report/convention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec_int.h"
#include "base/jsonw_int.h"
#include "report/report_int.h"
#include "servesim/report/report.h"

/* ---- the table ------------------------------------------------------------------------ */

static const sv_conv_metric_t m_vllm[] = {
    {SV_CQ_TTFT, "ttft", "TTFT", "ms", 1e3},
    {SV_CQ_TPOT, "tpot", "TPOT", "ms", 1e3},
    {SV_CQ_ITL, "itl", "ITL", "ms", 1e3},
    {SV_CQ_E2EL, "e2el", "E2EL", "ms", 1e3},
};

/* GenAI-Perf's profile export, in its order (genai_perf/metrics/llm_metrics.py: the base
 * metrics' request_throughput, request_latency, request_count, then the LLM ones). */
static const sv_conv_metric_t m_genai[] = {
    {SV_CQ_REQ_TPUT, "request_throughput", "Request Throughput (per sec)", "requests/sec", 1.0},
    {SV_CQ_E2EL, "request_latency", "Request Latency (ms)", "ms", 1e3},
    {SV_CQ_REQ_COUNT, "request_count", "Request Count (count)", "count", 1.0},
    {SV_CQ_TTFT, "time_to_first_token", "Time To First Token (ms)", "ms", 1e3},
    {SV_CQ_TTST, "time_to_second_token", "Time To Second Token (ms)", "ms", 1e3},
    {SV_CQ_TPOT, "inter_token_latency", "Inter Token Latency (ms)", "ms", 1e3},
    {SV_CQ_OUT_TPUT, "output_token_throughput", "Output Token Throughput (tokens/sec)",
     "tokens/sec", 1.0},
    {SV_CQ_TPS_USER, "output_token_throughput_per_user",
     "Output Token Throughput Per User (tokens/sec/user)", "tokens/sec/user", 1.0},
    {SV_CQ_OSL, "output_sequence_length", "Output Sequence Length (tokens)", "tokens", 1.0},
    {SV_CQ_ISL, "input_sequence_length", "Input Sequence Length (tokens)", "tokens", 1.0},
};

static const sv_conv_metric_t m_llmperf[] = {
    {SV_CQ_ITL_WITH_TTFT, "inter_token_latency_s", "inter_token_latency_s", "s", 1.0},
    {SV_CQ_TTFT, "ttft_s", "ttft_s", "s", 1.0},
    {SV_CQ_E2EL, "end_to_end_latency_s", "end_to_end_latency_s", "s", 1.0},
    {SV_CQ_REQ_OUT_TPUT, "request_output_throughput_token_per_s",
     "request_output_throughput_token_per_s", "tokens/s", 1.0},
    {SV_CQ_ISL, "number_input_tokens", "number_input_tokens", "tokens", 1.0},
    {SV_CQ_OSL, "number_output_tokens", "number_output_tokens", "tokens", 1.0},
};

static const sv_conv_metric_t m_sglang[] = {
    {SV_CQ_E2EL, "e2e_latency", "E2E Latency", "ms", 1e3},
    {SV_CQ_TTFT, "ttft", "TTFT", "ms", 1e3},
    {SV_CQ_TPOT, "tpot", "TPOT", "ms", 1e3},
    {SV_CQ_ITL, "itl", "ITL", "ms", 1e3},
};

/* genai_perf/metrics/statistics.py, Statistics._calculate_percentiles */
static const double p_genai[] = {1, 5, 10, 25, 50, 75, 90, 95, 99};
static const double p_llmperf[] = {25, 50, 75, 90, 95, 99};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const sv_convention_def_t conventions[SV_CONV_COUNT] = {
    {"vllm", "vllm bench serve", "vllm bench serve (ttft, tpot, itl, e2el, goodput)", 0, NULL, 0,
     m_vllm, N(m_vllm)},
    {"genai-perf", "NVIDIA GenAI-Perf",
     "genai-perf: inter_token_latency = vLLM TPOT, (e2el - ttft) / (osl - 1); "
     "time_to_second_token = the first ITL; output_token_throughput_per_user = 1 / "
     "inter_token_latency; request_latency = E2EL; throughputs per second of first request to "
     "last response; std ddof 0",
     0, p_genai, N(p_genai), m_genai, N(m_genai)},
    {"llmperf", "Ray LLMPerf",
     "llmperf: inter_token_latency_s = e2el / osl (TTFT included); seconds; std ddof 1 "
     "(pandas)",
     1, p_llmperf, N(p_llmperf), m_llmperf, N(m_llmperf)},
    {"sglang", "SGLang bench_serving",
     "sglang: e2e_latency = vLLM E2EL; ttft, tpot, itl as vLLM; input_throughput added; std "
     "ddof 0",
     0, NULL, 0, m_sglang, N(m_sglang)},
};

const sv_convention_def_t *sv_convention_get(sv_convention_t c)
{
    return (int)c >= 0 && c < SV_CONV_COUNT ? &conventions[c] : NULL;
}

int sv_convention_parse(const char *name, sv_convention_t *out, sv_error_t *err)
{
    for (int i = 0; i < SV_CONV_COUNT; i++)
        if (strcmp(name, conventions[i].name) == 0) {
            *out = (sv_convention_t)i;
            return 0;
        }
    return sv_errorf(err, SV_EINVAL,
                     "--convention: expected one of vllm, genai-perf, llmperf, sglang, got '%s'",
                     name);
}

/* ---- statistics ----------------------------------------------------------------------- */

int sv_conv_is_system(sv_conv_quantity_t q)
{
    return q >= SV_CQ_REQ_TPUT && q < SV_CQ_COUNT;
}

double sv_conv_client_queue(const sv_scenario_t *sc, const sv_req_t *r)
{
    const sv_workload_cfg_t *w = &sc->workload;
    int closed = isinf(w->rate) && w->max_concurrency > 0 && !w->has_trace && !sc->sessions.given;
    double made = closed ? 0.0 : r->arrival;
    return r->start > made ? r->start - made : 0.0;
}

/* The quantity of one completed request; 0 when it has none (TPOT of a single token). */
static int req_value(sv_conv_quantity_t q, const sv_req_t *r, double *v)
{
    switch (q) {
    case SV_CQ_TTFT:
        *v = sv_req_ttft(r);
        return 1;
    case SV_CQ_TPOT:
        *v = sv_req_tpot(r);
        return r->output > 1;
    case SV_CQ_E2EL:
        *v = sv_req_e2el(r);
        return 1;
    case SV_CQ_ITL_WITH_TTFT:
        *v = r->output > 0 ? sv_req_e2el(r) / r->output : 0.0;
        return r->output > 0;
    case SV_CQ_REQ_OUT_TPUT:
        *v = sv_req_e2el(r) > 0 ? r->output / sv_req_e2el(r) : 0.0;
        return sv_req_e2el(r) > 0;
    case SV_CQ_ISL:
        *v = r->input;
        return 1;
    case SV_CQ_OSL:
        *v = r->output;
        return 1;
    case SV_CQ_TPS_USER:
        *v = r->output > 1 && sv_req_tpot(r) > 0 ? 1.0 / sv_req_tpot(r) : 0.0;
        return r->output > 1 && sv_req_tpot(r) > 0;
    default:
        return 0;
    }
}

int sv_conv_stat(sv_conv_quantity_t q, const sv_req_t *r, size_t n, const double *itl, size_t nitl,
                 const double *pcts, int npcts, double scale, int ddof, sv_conv_stat_t *out,
                 sv_error_t *err)
{
    memset(out, 0, sizeof *out);
    int pooled =
        q == SV_CQ_ITL || q == SV_CQ_TTST || q == SV_CQ_CLIENT_QUEUE || q == SV_CQ_E2EL_QUEUE;
    size_t cap = pooled ? nitl : n;
    double *x = malloc((cap + 1) * sizeof *x);
    if (!x) return sv_errorf(err, SV_ENOMEM, "out of memory for %zu metric values", cap);
    size_t k = 0;
    if (pooled) {
        for (size_t i = 0; i < nitl; i++)
            x[k++] = itl[i] * scale;
    } else {
        for (size_t i = 0; i < n; i++) {
            double v;
            if (r[i].state == SV_RQ_DONE && req_value(q, &r[i], &v)) x[k++] = v * scale;
        }
    }
    out->n = (long)k;
    if (k > 0) {
        double sum = 0.0, ss = 0.0;
        for (size_t i = 0; i < k; i++)
            sum += x[i];
        out->mean = sum / (double)k;
        for (size_t i = 0; i < k; i++)
            ss += (x[i] - out->mean) * (x[i] - out->mean);
        out->std = k > (size_t)ddof ? sqrt(ss / (double)(k - (size_t)ddof)) : 0.0;
        sv_sort_doubles(x, k); /* linear time; the order qsort gave */
        out->min = x[0];
        out->max = x[k - 1];
        out->median = sv_percentile_sorted(x, k, 50.0);
        for (int i = 0; i < npcts && i < SV_MAX_PCT + 4; i++)
            out->pct[i] = sv_percentile_sorted(x, k, pcts[i]);
    }
    free(x);
    return 0;
}

/* ---- a run's values ------------------------------------------------------------------- */

/* GenAI-Perf's benchmark duration: the last response of a completed request less the
 * first of their requests (llm_profile_data_parser.py, _parse_requests). */
static double genai_duration(const sv_reqpool_t *p)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < p->n; i++)
        if (p->r[i].state == SV_RQ_DONE) {
            lo = fmin(lo, p->r[i].start);
            hi = fmax(hi, p->r[i].last_token);
        }
    return hi > lo ? hi - lo : 0.0;
}

/* A system quantity's one value. */
static double system_value(sv_conv_quantity_t q, const sv_result_t *res)
{
    const sv_reqpool_t *p = &res->pool;
    double dur = genai_duration(p);
    if (q == SV_CQ_REQ_COUNT) return (double)res->summary.completed;
    if (!(dur > 0)) return 0.0;
    if (q == SV_CQ_REQ_TPUT) return (double)p->n / dur;
    return (double)res->summary.total_output / dur;
}

/* Every metric of convention d over the run, into st[0..nmetrics). */
static int run_stats(const sv_result_t *res, const sv_convention_def_t *d, sv_conv_stat_t *st,
                     sv_error_t *err)
{
    const sv_reqpool_t *p = &res->pool;
    const double *pcts = d->pcts ? d->pcts : res->summary.pcts;
    int npcts = d->pcts ? d->npcts : res->summary.npcts;
    double *pool = NULL, *first = NULL;
    size_t npool = 0, cap = 0, nfirst = 0;
    int need = 0, rc = 0;
    for (int i = 0; i < d->nmetrics; i++)
        need |= d->metrics[i].q == SV_CQ_ITL || d->metrics[i].q == SV_CQ_TTST;
    if (need && !(first = malloc((p->n + 1) * sizeof *first)))
        return sv_errorf(err, SV_ENOMEM, "out of memory for the inter-token latencies");
    /* The pooled ITLs: every gap of every completed request, 8 bytes a token; and each
     * completed request's first gap (GenAI-Perf's time to second token). */
    for (size_t i = 0; need && i < p->n && !rc; i++) {
        double *v = NULL;
        size_t nv = 0;
        if (sv_metrics_itls(res->metrics, p, (int32_t)i, &v, &nv)) {
            rc = sv_errorf(err, SV_ENOMEM, "out of memory for the inter-token latencies");
            break;
        }
        if (nv && p->r[i].state == SV_RQ_DONE && p->r[i].output > 1) first[nfirst++] = v[0];
        if (SV_GROW(pool, cap, npool + nv)) {
            free(v);
            rc = sv_errorf(err, SV_ENOMEM, "out of memory for the inter-token latencies");
            break;
        }
        if (nv) memcpy(pool + npool, v, nv * sizeof *v);
        npool += nv;
        free(v);
    }
    for (int i = 0; i < d->nmetrics && !rc; i++) {
        sv_conv_quantity_t q = d->metrics[i].q;
        if (sv_conv_is_system(q)) {
            memset(&st[i], 0, sizeof st[i]);
            st[i].mean = system_value(q, res) * d->metrics[i].scale;
            st[i].n = 1;
        } else if (q == SV_CQ_TTST) {
            rc = sv_conv_stat(q, p->r, p->n, first, nfirst, pcts, npcts, d->metrics[i].scale,
                              d->ddof, &st[i], err);
        } else {
            rc = sv_conv_stat(q, p->r, p->n, pool, npool, pcts, npcts, d->metrics[i].scale,
                              d->ddof, &st[i], err);
        }
    }
    free(pool);
    free(first);
    return rc;
}

static double mean_concurrency(const sv_result_t *res)
{
    double sum = 0.0;
    for (size_t i = 0; i < res->pool.n; i++)
        if (res->pool.r[i].state == SV_RQ_DONE) sum += sv_req_e2el(&res->pool.r[i]);
    return res->summary.duration > 0 ? sum / res->summary.duration : 0.0;
}

/* ---- printed summaries ---------------------------------------------------------------- */

static void line_num(FILE *f, const char *label, double v)
{
    fprintf(f, "%-40s %-10.2f\n", label, v);
}

static void line_int(FILE *f, const char *label, long v)
{
    fprintf(f, "%-40s %-10ld\n", label, v);
}

static void convention_line(FILE *f, const sv_convention_def_t *d)
{
    fprintf(f, "%-40s %s\n", "Metric convention:", d->name);
    fprintf(f, "%-40s %s\n", "", d->definitions);
}

/* One row of GenAI-Perf's console table; a label longer than its 36-character column is
 * wrapped at a space, as its exporter does (textwrap.fill), the rest on a line of its own. */
static void genai_row(FILE *f, const char *label, const double *v, int nv)
{
    char first[64];
    const char *rest = NULL;
    size_t len = strlen(label);
    snprintf(first, sizeof first, "%s", label);
    if (len > 36) {
        size_t cut = 36;
        while (cut > 0 && label[cut] != ' ')
            cut--;
        if (cut > 0) {
            first[cut] = '\0';
            rest = label + cut + 1;
        }
    }
    fprintf(f, "%36s", first);
    for (int c = 0; c < 6; c++)
        if (c < nv)
            fprintf(f, " %10.2f", v[c]);
        else
            fprintf(f, " %10s", "N/A");
    fputc('\n', f);
    if (rest) fprintf(f, "%36s\n", rest);
}

static void summary_genai(const sv_result_t *res, const sv_convention_def_t *d,
                          const sv_conv_stat_t *st, FILE *f)
{
    /* Columns avg, min, max, p99, p90, p75 (console_exporter.py, STAT_COLUMN_KEYS); the
     * request metrics first, in the console's order, then the system ones (avg only). */
    static const char *const order[] = {
        "time_to_first_token", "time_to_second_token",   "request_latency",
        "inter_token_latency", "output_token_throughput_per_user", "output_sequence_length",
        "input_sequence_length", "output_token_throughput", "request_throughput",
        "request_count"};
    static const double want[] = {99, 90, 75};
    int col[3] = {0, 0, 0}; /* where p99, p90, p75 are in the convention's list */
    (void)res;
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < d->npcts; k++)
            if (d->pcts[k] == want[c]) col[c] = k;
    sv__report_centred(f, " NVIDIA GenAI-Perf | LLM Metrics (servesim) ", '=', 102);
    fprintf(f, "%36s %10s %10s %10s %10s %10s %10s\n", "Statistic", "avg", "min", "max", "p99",
            "p90", "p75");
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++)
        for (int i = 0; i < d->nmetrics; i++) {
            if (strcmp(d->metrics[i].key, order[o]) || st[i].n == 0) continue;
            double v[6] = {st[i].mean, st[i].min, st[i].max, st[i].pct[col[0]],
                           st[i].pct[col[1]], st[i].pct[col[2]]};
            genai_row(f, d->metrics[i].label, v, sv_conv_is_system(d->metrics[i].q) ? 1 : 6);
        }
    convention_line(f, d);
}

/*
 * The HTTP status a client sees for each way a request fails (LLMPerf records the
 * response's status code; -1 when none came: its client's initial value, a timeout).
 */
static const int fail_http[SV_FAIL_COUNT] = {
    [SV_FAIL_QUEUE_FULL] = 429,   /* the server's queue is full */
    [SV_FAIL_TIMEOUT] = -1,       /* the client gave up: no response */
    [SV_FAIL_TOO_LONG] = 400,     /* prompt + output past max_model_len */
    [SV_FAIL_PROMPT_BUDGET] = 400, [SV_FAIL_KV_CAPACITY] = 400, /* refused prompts */
    [SV_FAIL_UNFINISHED] = -1,    /* cut by the run's end: no response */
    [SV_FAIL_ABORTED] = -1,       /* the client disconnected: no response read */
};

/*
 * LLMPerf's results_error_code_frequency: str() of pandas' value_counts of the failed
 * requests' codes (token_benchmark_ray.py, metrics_summary), most frequent first (ties in
 * order of first failure), "{}" without failures. With some requests successful the
 * column holds NaN, so pandas makes the codes floats ("{429.0: 3}"); all failed, ints.
 */
static const char *llmperf_error_codes(const sv_result_t *res, char *buf, size_t n)
{
    const sv_reqpool_t *p = &res->pool;
    int code[SV_FAIL_COUNT];
    long count[SV_FAIL_COUNT];
    int nc = 0, any_ok = res->summary.completed > 0;
    for (size_t i = 0; i < p->n; i++) {
        if (p->r[i].state == SV_RQ_DONE) continue;
        int c = p->r[i].fail < SV_FAIL_COUNT ? fail_http[p->r[i].fail] : -1, k = 0;
        if (c == 0) c = -1;
        while (k < nc && code[k] != c)
            k++;
        if (k == nc) {
            code[nc] = c;
            count[nc++] = 0;
        }
        count[k]++;
    }
    /* most frequent first; a stable insertion sort keeps first failures first among ties */
    for (int a = 1; a < nc; a++)
        for (int b = a; b > 0 && count[b] > count[b - 1]; b--) {
            int tc = code[b];
            long tn = count[b];
            code[b] = code[b - 1], count[b] = count[b - 1];
            code[b - 1] = tc, count[b - 1] = tn;
        }
    size_t len = (size_t)snprintf(buf, n, "{");
    for (int k = 0; k < nc && len < n; k++)
        len += (size_t)snprintf(buf + len, n - len, "%s%d%s: %ld", k ? ", " : "", code[k],
                                any_ok ? ".0" : "", count[k]);
    if (len < n) snprintf(buf + len, n - len, "}");
    return buf;
}

static void summary_llmperf(const sv_result_t *res, const sv_convention_def_t *d,
                            const sv_conv_stat_t *st, FILE *f)
{
    const sv_summary_t *s = &res->summary;
    long all = s->completed + s->failed;
    sv__report_centred(f, " LLMPerf results (servesim) ", '=', 50);
    for (int i = 0; i < d->nmetrics; i++) {
        fprintf(f, "results_%s\n", d->metrics[i].key);
        fprintf(f, "    p25 = %.6g, p50 = %.6g, p75 = %.6g, p90 = %.6g, p95 = %.6g, p99 = %.6g\n",
                st[i].pct[0], st[i].pct[1], st[i].pct[2], st[i].pct[3], st[i].pct[4], st[i].pct[5]);
        fprintf(f, "    mean = %.6g, min = %.6g, max = %.6g, stddev = %.6g\n", st[i].mean,
                st[i].min, st[i].max, st[i].std);
    }
    fprintf(f, "Number Of Errored Requests: %ld\n", s->failed);
    if (s->failed) {
        char freq[256];
        fprintf(f, "Error Code Frequency\n%s\n", llmperf_error_codes(res, freq, sizeof freq));
    }
    fprintf(f, "Overall Output Throughput: %.6g\n", s->output_throughput);
    fprintf(f, "Number Of Completed Requests: %ld\n", s->completed);
    fprintf(f, "Completed Requests Per Minute: %.6g\n", s->request_throughput * 60.0);
    fprintf(f, "Error rate: %.6g\n", all ? (double)s->failed / (double)all : 0.0);
    convention_line(f, d);
}

static void summary_sglang(const sv_result_t *res, const sv_convention_def_t *d,
                           const sv_conv_stat_t *st, FILE *f)
{
    const sv_summary_t *s = &res->summary;
    const sv_workload_cfg_t *w = &res->sc->workload;
    const double *pcts = s->pcts;
    char buf[64], pw[32];
    sv__report_centred(f, " Serving Benchmark Result ", '=', 50);
    fprintf(f, "%-40s %-10s\n", "Backend:", "servesim");
    fprintf(f, "%-40s %-10s\n", "Traffic request rate:",
            w->has_trace || isinf(w->rate) ? "inf" : sv__fmt_double(w->rate, buf));
    if (w->max_concurrency > 0)
        line_int(f, "Max request concurrency:", w->max_concurrency);
    else
        fprintf(f, "%-40s %-10s\n", "Max request concurrency:", "not set");
    line_int(f, "Successful requests:", s->completed);
    line_num(f, "Benchmark duration (s):", s->duration);
    line_int(f, "Total input tokens:", s->total_input);
    line_int(f, "Total generated tokens:", s->total_output);
    line_num(f, "Request throughput (req/s):", s->request_throughput);
    line_num(f, "Input token throughput (tok/s):",
             s->duration > 0 ? (double)s->total_input / s->duration : 0.0);
    line_num(f, "Output token throughput (tok/s):", s->output_throughput);
    line_num(f, "Total token throughput (tok/s):", s->total_token_throughput);
    line_num(f, "Concurrency:", mean_concurrency(res));
    static const char *const head[] = {"End-to-End Latency", "Time to First Token",
                                       "Time per Output Token (excl. 1st token)",
                                       "Inter-Token Latency"};
    for (int i = 0; i < d->nmetrics; i++) {
        sv__report_centred(f, head[i], '-', 50);
        snprintf(buf, sizeof buf, "Mean %s (ms):", d->metrics[i].label);
        line_num(f, buf, st[i].mean);
        snprintf(buf, sizeof buf, "Median %s (ms):", d->metrics[i].label);
        line_num(f, buf, st[i].median);
        for (int k = 0; k < res->sc->metrics.npercentiles && i > 0; k++) {
            int j = 0;
            while (j < s->npcts && pcts[j] != res->sc->metrics.percentiles[k])
                j++;
            sv_report_pct_word(pcts[j], pw, sizeof pw);
            snprintf(buf, sizeof buf, "P%s %s (ms):", pw, d->metrics[i].label);
            line_num(f, buf, st[i].pct[j]);
        }
        if (d->metrics[i].q == SV_CQ_ITL) {
            snprintf(buf, sizeof buf, "Max %s (ms):", d->metrics[i].label);
            line_num(f, buf, st[i].max);
        }
    }
    sv__report_centred(f, "", '=', 50);
    convention_line(f, d);
}

void sv_report_summary_as(const sv_result_t *res, sv_convention_t c, FILE *f)
{
    const sv_convention_def_t *d = sv_convention_get(c);
    if (!d || c == SV_CONV_VLLM) {
        sv_report_summary(res, f);
        return;
    }
    sv_conv_stat_t st[16];
    sv_error_t err;
    if (run_stats(res, d, st, &err)) {
        fprintf(f, "servesim: %s\n", err.msg);
        return;
    }
    if (c == SV_CONV_GENAI_PERF)
        summary_genai(res, d, st, f);
    else if (c == SV_CONV_LLMPERF)
        summary_llmperf(res, d, st, f);
    else
        summary_sglang(res, d, st, f);
    sv__report_servesim_summary(res, f);
}

/* ---- JSON ----------------------------------------------------------------------------- */

static void pct_key(char *key, size_t n, const char *fmt, double p, const char *m)
{
    char pw[32];
    sv_report_pct_word(p, pw, sizeof pw);
    snprintf(key, n, fmt, pw, m);
}

static void json_genai(sv_jw_t *w, const sv_result_t *res, const sv_convention_def_t *d,
                       const sv_conv_stat_t *st)
{
    (void)res;
    char key[96];
    for (int i = 0; i < d->nmetrics; i++) {
        /* GenAI-Perf leaves out a metric without data points (Statistics._should_skip) */
        if (st[i].n == 0) continue;
        sv__jw_obj(w, d->metrics[i].key);
        sv__jw_str(w, "unit", d->metrics[i].unit);
        sv__jw_num(w, "avg", st[i].mean);
        if (!sv_conv_is_system(d->metrics[i].q)) {
            for (int k = 0; k < d->npcts; k++) {
                pct_key(key, sizeof key, "p%s%s", d->pcts[k], "");
                sv__jw_num(w, key, st[i].pct[k]);
            }
            sv__jw_num(w, "min", st[i].min);
            sv__jw_num(w, "max", st[i].max);
            sv__jw_num(w, "std", st[i].std);
        }
        sv__jw_end_obj(w);
    }
}

static void json_llmperf(sv_jw_t *w, const sv_result_t *res, const sv_convention_def_t *d,
                         const sv_conv_stat_t *st)
{
    const sv_summary_t *s = &res->summary;
    const sv_scenario_t *sc = res->sc;
    char key[128];
    long all = s->completed + s->failed;
    sv__jw_str(w, "version", "2023-08-31");
    sv__jw_str(w, "name", sc->name);
    sv__jw_str(w, "model", sc->model.hf_id[0] ? sc->model.hf_id : sc->model.name);
    for (int i = 0; i < d->nmetrics; i++) {
        if (d->metrics[i].q == SV_CQ_ISL || d->metrics[i].q == SV_CQ_OSL) {
            const char *io = d->metrics[i].q == SV_CQ_ISL ? "input" : "output";
            snprintf(key, sizeof key, "mean_%s_tokens", io);
            sv__jw_num(w, key, st[i].mean);
            snprintf(key, sizeof key, "stddev_%s_tokens", io);
            sv__jw_num(w, key, st[i].std);
        }
    }
    if (sc->workload.max_concurrency > 0)
        sv__jw_int(w, "num_concurrent_requests", sc->workload.max_concurrency);
    else
        sv__jw_null(w, "num_concurrent_requests");
    for (int i = 0; i < d->nmetrics; i++) {
        const char *m = d->metrics[i].key;
        for (int k = 0; k < d->npcts; k++) {
            char pw[32];
            sv_report_pct_word(d->pcts[k], pw, sizeof pw);
            snprintf(key, sizeof key, "results_%s_quantiles_p%s", m, pw);
            sv__jw_num(w, key, st[i].pct[k]);
        }
        snprintf(key, sizeof key, "results_%s_mean", m);
        sv__jw_num(w, key, st[i].mean);
        snprintf(key, sizeof key, "results_%s_min", m);
        sv__jw_num(w, key, st[i].min);
        snprintf(key, sizeof key, "results_%s_max", m);
        sv__jw_num(w, key, st[i].max);
        snprintf(key, sizeof key, "results_%s_stddev", m);
        sv__jw_num(w, key, st[i].std);
    }
    sv__jw_int(w, "results_num_requests_started", all);
    sv__jw_num(w, "results_error_rate", all ? (double)s->failed / (double)all : 0.0);
    sv__jw_int(w, "results_number_errors", s->failed);
    char freq[256];
    sv__jw_str(w, "results_error_code_frequency", llmperf_error_codes(res, freq, sizeof freq));
    sv__jw_num(w, "results_mean_output_throughput_token_per_s", s->output_throughput);
    sv__jw_int(w, "results_num_completed_requests", s->completed);
    sv__jw_num(w, "results_num_completed_requests_per_min", s->request_throughput * 60.0);
}

static void json_sglang(sv_jw_t *w, const sv_result_t *res, const sv_convention_def_t *d,
                        const sv_conv_stat_t *st)
{
    const sv_summary_t *s = &res->summary;
    const sv_workload_cfg_t *wl = &res->sc->workload;
    char key[96];
    sv__jw_str(w, "backend", "servesim");
    if (wl->has_trace || isinf(wl->rate))
        sv__jw_str(w, "request_rate", "inf");
    else
        sv__jw_num(w, "request_rate", wl->rate);
    if (wl->max_concurrency > 0)
        sv__jw_int(w, "max_concurrency", wl->max_concurrency);
    else
        sv__jw_null(w, "max_concurrency");
    sv__jw_num(w, "duration", s->duration);
    sv__jw_int(w, "completed", s->completed);
    sv__jw_int(w, "total_input_tokens", s->total_input);
    sv__jw_int(w, "total_output_tokens", s->total_output);
    sv__jw_num(w, "request_throughput", s->request_throughput);
    sv__jw_num(w, "input_throughput", s->duration > 0 ? (double)s->total_input / s->duration : 0.0);
    sv__jw_num(w, "output_throughput", s->output_throughput);
    sv__jw_num(w, "total_throughput", s->total_token_throughput);
    for (int i = 0; i < d->nmetrics; i++) {
        const char *m = d->metrics[i].key;
        snprintf(key, sizeof key, "mean_%s_ms", m);
        sv__jw_num(w, key, st[i].mean);
        snprintf(key, sizeof key, "median_%s_ms", m);
        sv__jw_num(w, key, st[i].median);
        snprintf(key, sizeof key, "std_%s_ms", m);
        sv__jw_num(w, key, st[i].std);
        for (int k = 0; k < s->npcts; k++) {
            pct_key(key, sizeof key, "p%s_%s_ms", s->pcts[k], m);
            sv__jw_num(w, key, st[i].pct[k]);
        }
        if (d->metrics[i].q == SV_CQ_ITL) sv__jw_num(w, "max_itl_ms", st[i].max);
    }
    sv__jw_num(w, "concurrency", mean_concurrency(res));
}

int sv_report_json_as(const sv_result_t *res, sv_convention_t c, int detailed, const char *path,
                      sv_error_t *err)
{
    const sv_convention_def_t *d = sv_convention_get(c);
    if (!d || c == SV_CONV_VLLM) return sv_report_json(res, detailed, path, err);
    sv_conv_stat_t st[16];
    int rc = run_stats(res, d, st, err);
    if (rc) return rc;
    sv_run_config_t cfg;
    if ((rc = sv_run_config(res, &cfg, err))) return rc;
    FILE *f = sv__report_open(path, err);
    if (!f) {
        sv_run_config_free(&cfg);
        return SV_EIO;
    }
    sv_jw_t w;
    char date[32];
    sv__report_date(date, sizeof date);
    sv__jw_init(&w, f);
    sv__jw_obj(&w, NULL);
    if (c == SV_CONV_GENAI_PERF)
        json_genai(&w, res, d, st);
    else if (c == SV_CONV_LLMPERF)
        json_llmperf(&w, res, d, st);
    else
        json_sglang(&w, res, d, st);
    sv__jw_str(&w, "date", date);
    sv__report_servesim_json(&w, res, d->name, d->definitions, &cfg);
    sv__jw_end_obj(&w);
    fputc('\n', f);
    sv_run_config_free(&cfg);
    return sv__report_close(f, path, err);
}
