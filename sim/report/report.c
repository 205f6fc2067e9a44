/*
 * Reports (see include/servesim/report/report.h): vLLM's printed summary and result JSON,
 * servesim's extra block and keys, and CSV exports.
 */
#include "servesim/report/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fileio_int.h"
#include "base/jsonw_int.h"
#include "report/report_int.h"
#include "report/contract_int.h"
#include "servesim/report/axes.h"
#include "servesim/report/config.h"
#include "servesim/report/convention.h"
#include "servesim/studies/confidence.h"

#ifndef SERVESIM_VERSION
#define SERVESIM_VERSION "0"
#endif

/* Python's "{s:{c}^{n}}".format(...): centred, the odd pad character on the right. */
static void centred(FILE *f, const char *s, char c, int width)
{
    int len = (int)strlen(s), pad = width - len;
    int left = pad > 0 ? pad / 2 : 0, right = pad > 0 ? pad - left : 0;
    for (int i = 0; i < left; i++)
        fputc(c, f);
    fputs(s, f);
    for (int i = 0; i < right; i++)
        fputc(c, f);
    fputc('\n', f);
}

/* "{:<40} {:<10}" for an integer and "{:<40} {:<10.2f}" for a float. */
static void line_int(FILE *f, const char *label, long v)
{
    fprintf(f, "%-40s %-10ld\n", label, v);
}

static void line_num(FILE *f, const char *label, double v)
{
    fprintf(f, "%-40s %-10.2f\n", label, v);
}

/* "99" for 99.0, else Python's str(p): the shortest text that reads back as p, so 99.9
 * stays "99.9" and 99.99999 is never rounded to "100" (vLLM's p_word). */
void sv_report_pct_word(double p, char *buf, size_t n)
{
    char tmp[32];
    if (p == floor(p))
        snprintf(buf, n, "%ld", (long)p);
    else
        snprintf(buf, n, "%s", sv__fmt_double(p, tmp));
}

static const sv_stat_t *stat_of(const sv_summary_t *s, int m)
{
    switch (m) {
    case SV_M_TTFT:
        return &s->ttft;
    case SV_M_TPOT:
        return &s->tpot;
    case SV_M_ITL:
        return &s->itl;
    default:
        return &s->e2el;
    }
}

/*
 * vLLM's client-side queueing (vllm/benchmarks/serve.py, benchmark(): client_queue_time =
 * start - arrival, the wait for the --max-concurrency slot; e2el_including_client_queue =
 * latency + that): over the completed requests, when selected, under max_concurrency, and
 * the second with a finite request rate. 1 with *out filled, 0 when not reported.
 */
static int client_queue_stat(const sv_result_t *res, int m, sv_stat_t *out)
{
    const sv_scenario_t *sc = res->sc;
    const sv_workload_cfg_t *w = &sc->workload;
    const sv_summary_t *s = &res->summary;
    if (!(sc->metrics.selected & m) || w->max_concurrency <= 0) return 0;
    if (m == SV_M_E2EL_QUEUE && (w->has_trace || isinf(w->rate))) return 0;
    const sv_reqpool_t *p = &res->pool;
    double *v = malloc((p->n + 1) * sizeof *v);
    size_t nv = 0;
    if (!v) return 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->r[i].state == SV_RQ_DONE)
            v[nv++] = sv_conv_client_queue(sc, &p->r[i]) +
                      (m == SV_M_E2EL_QUEUE ? sv_req_e2el(&p->r[i]) : 0.0);
    sv_conv_stat_t c;
    int rc = sv_conv_stat(m == SV_M_CLIENT_QUEUE ? SV_CQ_CLIENT_QUEUE : SV_CQ_E2EL_QUEUE, p->r,
                          p->n, v, nv, s->pcts, s->npcts, 1e3, 0, &c, NULL);
    free(v);
    if (rc) return 0;
    memset(out, 0, sizeof *out);
    out->mean = c.mean;
    out->median = c.median;
    out->std = c.std;
    out->n = c.n;
    for (int i = 0; i < s->npcts && i < SV_MAX_PCT; i++)
        out->pct[i] = c.pct[i];
    return 1;
}

static void print_stat(FILE *f, const sv_result_t *res, const sv_stat_t *st, const char *name,
                       const char *header)
{
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    char label[64], pw[32];
    centred(f, header, '-', 50);
    snprintf(label, sizeof label, "Mean %s (ms):", name);
    line_num(f, label, st->mean);
    snprintf(label, sizeof label, "Median %s (ms):", name);
    line_num(f, label, st->median);
    for (int i = 0; i < c->npercentiles; i++) {
        sv_report_pct_word(c->percentiles[i], pw, sizeof pw);
        snprintf(label, sizeof label, "P%s %s (ms):", pw, name);
        line_num(f, label, st->pct[i]);
    }
}

static void print_metric(FILE *f, const sv_result_t *res, int m, const char *name,
                         const char *header)
{
    sv_stat_t q;
    if (m == SV_M_CLIENT_QUEUE || m == SV_M_E2EL_QUEUE) {
        if (client_queue_stat(res, m, &q)) print_stat(f, res, &q, name, header);
    } else if (res->sc->metrics.selected & m) {
        print_stat(f, res, stat_of(&res->summary, m), name, header);
    }
}

/* Index of percentile p in the summary's list (it holds the configured ones and 99). */
static int pct_index(const sv_summary_t *s, double p)
{
    for (int i = 0; i < s->npcts; i++)
        if (s->pcts[i] == p) return i;
    return 0;
}

/* ---- sessions and agentic tasks (workload.sessions; issue 12) ------------------------- */

const char *sv__report_session_kind(const sv_scenario_t *sc)
{
    if (sc->sessions.shape == SV_SESSION_FANOUT) return "fanout";
    return sc->sessions.history ? "chain, with history" : "chain";
}

void sv__report_lines_print(FILE *f, const sv__line_t *l, int n)
{
    char lab[80];
    for (int i = 0; i < n; i++) {
        snprintf(lab, sizeof lab, "%s:", l[i].label);
        fprintf(f, "%-40s %-10s\n", lab, l[i].text);
    }
}

static int line_add(sv__line_t *out, int n, const char *label, const char *text)
{
    snprintf(out[n].label, sizeof out[n].label, "%s", label);
    snprintf(out[n].text, sizeof out[n].text, "%s", text);
    return n + 1;
}

/* P95 of the sessions' durations and calls is reported when metrics.percentiles lists
 * 95 (the lab's tail lesson): without it the block is as it always was. */
static int sessions_p95(const sv_scenario_t *sc)
{
    for (int i = 0; i < sc->metrics.npercentiles; i++)
        if (sc->metrics.percentiles[i] == 95.0) return 1;
    return 0;
}

int sv__report_session_lines(const sv_result_t *res, sv__line_t *out)
{
    if (!res->sc->sessions.given) return 0;
    const sv_session_summary_t *ss = &res->session_sum;
    char buf[128];
    int n = 0;
    snprintf(buf, sizeof buf, "%ld: %ld complete, %ld failed, %ld cut", ss->sessions, ss->complete,
             ss->failed, ss->cut);
    n = line_add(out, n, "Sessions", buf);
    if (!isinf(res->sc->workload.rate)) {
        snprintf(buf, sizeof buf, "%.2f", res->sc->workload.rate);
        n = line_add(out, n, "Session rate configured (per s)", buf);
    } else if (res->sc->workload.max_concurrency > 0) {
        snprintf(buf, sizeof buf, "%ld", (long)res->sc->workload.max_concurrency);
        n = line_add(out, n, "Concurrent sessions (closed loop)", buf);
    }
    snprintf(buf, sizeof buf, "%ld sent (%ld done, %ld failed), %ld not sent", ss->calls_sent,
             ss->calls_done, ss->calls_failed, ss->calls_not_sent);
    n = line_add(out, n, "Calls", buf);
    snprintf(buf, sizeof buf, "%.2f", ss->calls_done_mean);
    n = line_add(out, n, "Mean calls completed per session", buf);
    snprintf(buf, sizeof buf, "%.2f", ss->duration_mean);
    n = line_add(out, n, "Mean session duration (s)", buf);
    snprintf(buf, sizeof buf, "%.2f / %.2f / %.2f", ss->duration_p50, ss->duration_p90,
             ss->duration_p99);
    n = line_add(out, n, "Session duration P50/P90/P99 (s)", buf);
    snprintf(buf, sizeof buf, "%.2f / %.2f / %.2f", ss->call_p50, ss->call_p90, ss->call_p99);
    n = line_add(out, n, "Call latency P50/P90/P99 (s)", buf);
    if (sessions_p95(res->sc)) {
        snprintf(buf, sizeof buf, "%.2f", ss->duration_p95);
        n = line_add(out, n, "Session duration P95 (s)", buf);
        snprintf(buf, sizeof buf, "%.2f", ss->call_p95);
        n = line_add(out, n, "Call latency P95 (s)", buf);
    }
    return n;
}

const char *const sv__turn_heads[SV__TURN_COLS] = {"Call",     "Sent",     "Done",   "TTFT p50",
                                                   "TTFT p99", "E2EL p50", "Prompt", "Hit %"};

void sv__report_turn_cells(const sv_result_t *res, int i, char cells[SV__TURN_COLS][32])
{
    const sv_turn_row_t *t = &res->session_sum.turn[i];
    snprintf(cells[0], 32, "%d%s", i + 1, i == SV_MAX_TURN_ROWS - 1 ? "+" : "");
    snprintf(cells[1], 32, "%ld", t->requests);
    snprintf(cells[2], 32, "%ld", t->completed);
    snprintf(cells[3], 32, "%.2f", t->ttft_p50_ms);
    snprintf(cells[4], 32, "%.2f", t->ttft_p99_ms);
    snprintf(cells[5], 32, "%.2f", t->e2el_p50_ms);
    snprintf(cells[6], 32, "%.0f", t->input_mean);
    snprintf(cells[7], 32, "%.1f", 100.0 * t->hit_rate);
}

/* The summary's session block: per session, then one row per call index. */
static void print_sessions(FILE *f, const sv_result_t *res)
{
    sv__line_t l[SV__MAX_LINES];
    char head[96], c[SV__TURN_COLS][32];
    const char *const *H = sv__turn_heads;
    snprintf(head, sizeof head, " sessions (%s) ", sv__report_session_kind(res->sc));
    centred(f, head, '-', 50);
    sv__report_lines_print(f, l, sv__report_session_lines(res, l));
    fprintf(f, "%-5s %7s %7s %9s %9s %9s %8s %6s\n", H[0], H[1], H[2], H[3], H[4], H[5], H[6],
            H[7]);
    for (int i = 0; i < res->session_sum.nturn; i++) {
        sv__report_turn_cells(res, i, c);
        fprintf(f, "%-5s %7s %7s %9s %9s %9s %8s %6s\n", c[0], c[1], c[2], c[3], c[4], c[5], c[6],
                c[7]);
    }
}

/* The JSON's `servesim.sessions` object (its last `calls` row, call 16, covers every
 * later call too). */
static void write_sessions(sv_jw_t *w, const sv_result_t *res)
{
    const sv_session_summary_t *ss = &res->session_sum;
    sv__jw_obj(w, "sessions");
    sv__jw_str(w, "shape", res->sc->sessions.shape == SV_SESSION_FANOUT ? "fanout" : "chain");
    sv__jw_int(w, "history", res->sc->sessions.history); /* 1: prompts carry the history */
    sv__jw_int(w, "sessions", ss->sessions);
    sv__jw_int(w, "complete", ss->complete);
    sv__jw_int(w, "failed", ss->failed);
    sv__jw_int(w, "cut", ss->cut);
    sv__jw_int(w, "calls_planned", ss->calls_planned);
    sv__jw_int(w, "calls_sent", ss->calls_sent);
    sv__jw_int(w, "calls_not_sent", ss->calls_not_sent);
    sv__jw_int(w, "calls_done", ss->calls_done);
    sv__jw_int(w, "calls_failed", ss->calls_failed);
    sv__jw_num(w, "calls_done_mean", ss->calls_done_mean);
    sv__jw_num(w, "duration_mean_s", ss->duration_mean);
    sv__jw_num(w, "duration_p50_s", ss->duration_p50);
    sv__jw_num(w, "duration_p90_s", ss->duration_p90);
    sv__jw_num(w, "duration_p99_s", ss->duration_p99);
    sv__jw_num(w, "call_latency_p50_s", ss->call_p50);
    sv__jw_num(w, "call_latency_p90_s", ss->call_p90);
    sv__jw_num(w, "call_latency_p99_s", ss->call_p99);
    if (sessions_p95(res->sc)) {
        sv__jw_num(w, "duration_p95_s", ss->duration_p95);
        sv__jw_num(w, "call_latency_p95_s", ss->call_p95);
    }
    sv__jw_arr(w, "calls");
    for (int i = 0; i < ss->nturn; i++) {
        const sv_turn_row_t *t = &ss->turn[i];
        sv__jw_obj(w, NULL);
        sv__jw_int(w, "call", i + 1);
        sv__jw_int(w, "requests", t->requests);
        sv__jw_int(w, "completed", t->completed);
        sv__jw_int(w, "failed", t->failed);
        sv__jw_num(w, "ttft_p50_ms", t->ttft_p50_ms);
        sv__jw_num(w, "ttft_p99_ms", t->ttft_p99_ms);
        sv__jw_num(w, "e2el_p50_ms", t->e2el_p50_ms);
        sv__jw_num(w, "input_mean", t->input_mean);
        sv__jw_num(w, "prefix_cache_hit_rate", t->hit_rate);
        sv__jw_end_obj(w);
    }
    sv__jw_end_arr(w);
    sv__jw_end_obj(w);
}

/* ---- end of sessions ------------------------------------------------------------------ */

void sv_report_summary(const sv_result_t *res, FILE *f)
{
    const sv_scenario_t *sc = res->sc;
    const sv_summary_t *s = &res->summary;
    const sv_workload_cfg_t *w = &sc->workload;
    int slo = !isnan(sc->metrics.slo_ttft_ms) || !isnan(sc->metrics.slo_tpot_ms) ||
              !isnan(sc->metrics.slo_e2el_ms);
    centred(f, " Serving Benchmark Result ", '=', 50);
    line_int(f, "Successful requests:", s->completed);
    line_int(f, "Failed requests:", s->failed);
    if (w->max_concurrency > 0 && !(sc->sessions.given && isinf(w->rate)))
        line_int(f, "Maximum request concurrency:", w->max_concurrency);
    if (!w->has_trace && !isinf(w->rate) && !sc->sessions.given)
        line_num(f, "Request rate configured (RPS):", w->rate);
    line_num(f, "Benchmark duration (s):", s->duration);
    line_int(f, "Total input tokens:", s->total_input);
    line_int(f, "Total generated tokens:", s->total_output);
    line_num(f, "Request throughput (req/s):", s->request_throughput);
    if (slo) line_num(f, "Request goodput (req/s):", s->request_goodput);
    line_num(f, "Output token throughput (tok/s):", s->output_throughput);
    line_num(f, "Peak output token throughput (tok/s):", s->max_output_tokens_per_s);
    line_num(f, "Peak concurrent requests:", (double)s->max_concurrent_requests);
    line_num(f, "Total token throughput (tok/s):", s->total_token_throughput);
    print_metric(f, res, SV_M_TTFT, "TTFT", "Time to First Token");
    print_metric(f, res, SV_M_TPOT, "TPOT", "Time per Output Token (excl. 1st token)");
    print_metric(f, res, SV_M_ITL, "ITL", "Inter-token Latency");
    print_metric(f, res, SV_M_E2EL, "E2EL", "End-to-end Latency");
    print_metric(f, res, SV_M_CLIENT_QUEUE, "Client Queue Time", "Client-side Queueing");
    print_metric(f, res, SV_M_E2EL_QUEUE, "E2EL incl. Client Queue",
                 "Queue-inclusive End-to-end Latency");
    centred(f, "", '=', 50);
    sv__report_servesim_summary(res, f);
}

/* The serving lines: colocated or disaggregated, each pool's engine, and the network round trips.
 */
static void summary_serving(const sv_result_t *res, FILE *f)
{
    const sv_scenario_t *sc = res->sc;
    char buf[160];
    if (sc->disaggregated)
        snprintf(buf, sizeof buf, "disaggregated, %s link %.0f GB/s/GPU", sc->link.kind,
                 sc->link.bw_per_gpu / 1e9);
    else
        snprintf(buf, sizeof buf, "colocated, %s", sv_route_names[sc->route]);
    fprintf(f, "%-40s %-10s\n", "Serving:", buf);
    for (int i = 0; i < sc->npools; i++) { /* the engine each pool runs (docs/scenarios.md) */
        const sv_pool_cfg_t *pc = &sc->pools[i];
        char lab[96];
        snprintf(lab, sizeof lab, sc->npools > 1 ? "Engine of pool %s:" : "Engine:", pc->name);
        const char *prof =
            res->pools[i].perf.set.engine[0] ? res->pools[i].perf.set.engine : "none";
        if (pc->engine_name[0])
            snprintf(buf, sizeof buf, "%s (scheduler %s, profile %s)", pc->engine_name,
                     sv_sched_name(pc->engine.scheduler), prof);
        else /* no engine named: the scheduler and profile the scenario chose */
            snprintf(buf, sizeof buf, "scheduler %s, profile %s",
                     sv_sched_name(pc->engine.scheduler), prof);
        fprintf(f, "%-40s %s\n", lab, buf);
        if (pc->engine_note[0]) fprintf(f, "%-40s %s\n", "Engine note:", pc->engine_note);
        if (pc->engine.async_scheduling || pc->engine.api_server > 0) {
            /* the engine loop's timing: async scheduling and the API server's path */
            snprintf(lab, sizeof lab,
                     sc->npools > 1 ? "Engine loop of pool %s:" : "Engine loop:", pc->name);
            snprintf(buf, sizeof buf, "async scheduling %s, API server %g ms%s",
                     pc->engine.async_scheduling ? "on" : "off", pc->engine.api_server * 1e3,
                     pc->profile_defaulted ? " (profile defaults)" : "");
            fprintf(f, "%-40s %s\n", lab, buf);
        }
    }
    if (sc->network.enabled) {
        sv__report_network_text(&sc->network, buf, sizeof buf);
        fprintf(f, "%-40s %s\n", "Client-server round trip:", buf);
    }
    for (int i = 0; sc->has_class_rtt && i < sc->workload.nclasses; i++)
        if (sc->class_rtt[i].enabled) {
            char lab[96];
            snprintf(lab, sizeof lab, "Round trip of class %s:", sc->metrics.class_name[i]);
            sv__report_network_text(&sc->class_rtt[i], buf, sizeof buf);
            fprintf(f, "%-40s %s\n", lab, buf);
        }
}

/* One confidence line per pool: the band's label and the GPU's and engine's calibration status. */
static void summary_confidence(const sv_result_t *res, FILE *f)
{
    char buf[160];
    for (int p = 0; p < res->npools; p++) {
        sv_confidence_t c;
        char lab[256];
        sv_confidence_of(&res->pools[p].perf, &c);
        snprintf(buf, sizeof buf, "Confidence%s%s:", res->npools > 1 ? ", " : "",
                 res->npools > 1 ? res->pools[p].cfg->name : "");
        fprintf(f, "%-40s %s\n", buf, sv_confidence_label(&c, lab, sizeof lab));
        fprintf(f, "%-40s GPU %s %s, engine %s %s\n", "", c.gpu, sv_calibration_name(c.gpu_cal),
                c.engine[0] ? c.engine : "none", sv_calibration_name(c.engine_cal));
    }
}

/* One block per autoscaled pool: replicas up, scale events, GPU-hours and cost. */
static void summary_autoscalers(const sv_result_t *res, FILE *f)
{
    char buf[160];
    for (int p = 0; p < res->npools; p++) {
        const sv_pool_result_t *pp = &res->pools[p];
        if (!pp->cfg->autoscale.enabled) continue;
        char head[96];
        snprintf(head, sizeof head, " autoscaler: pool %s ", pp->cfg->name);
        centred(f, head, '-', 50);
        snprintf(buf, sizeof buf, "%.2f mean, %d peak, %d max", pp->mean_up, pp->peak_up,
                 pp->count);
        fprintf(f, "%-40s %-10s\n", "Replicas up:", buf);
        snprintf(buf, sizeof buf, "%ld up, %ld down", pp->scale_ups, pp->scale_downs);
        fprintf(f, "%-40s %-10s\n", "Scale events:", buf);
        line_num(f, "GPU-hours:", pp->gpu_hours);
        line_num(f, "Cost ($):", pp->cost_usd);
    }
}

/* One block per pool when there are several or the serving is disaggregated: replicas, busy
   share, KV usage, batch, preemptions, a prefill pool's stalls and KV link, and cost. */
static void summary_pools(const sv_result_t *res, FILE *f)
{
    const sv_scenario_t *sc = res->sc;
    const sv_summary_t *s = &res->summary;
    char buf[160];
    for (int p = 0; p < res->npools && (res->npools > 1 || sc->disaggregated); p++) {
        const sv_pool_result_t *pp = &res->pools[p];
        const sv_pool_cfg_t *pc = pp->cfg;
        char head[96];
        snprintf(head, sizeof head, " pool %s (%s) ", pc->name, sv_role_name(pc->role));
        centred(f, head, '-', 50);
        snprintf(buf, sizeof buf, "%d x %s TP%d, %s", pp->count, pc->gpu.name, pp->perf.set.tp,
                 sv_sched_name(pc->engine.scheduler));
        fprintf(f, "%-40s %-10s\n", "Replicas:", buf);
        line_num(f, "GPU busy (%):", 100.0 * pp->busy_share);
        line_num(f, "KV cache usage p99 (%):", 100.0 * pp->kv_usage_p99);
        if (pc->role != SV_ROLE_PREFILL)
            line_num(f, "Mean decode batch (sequences):", pp->mean_decode_batch);
        line_int(f, "Preemptions:", pp->preemptions);
        if (pc->role == SV_ROLE_PREFILL) {
            double T = s->duration * pp->count;
            line_num(f, "Stalled, no KV room (%):", T > 0 ? 100.0 * pp->stall_s / T : 0.0);
            line_num(f, "KV sent (GB):", pp->link_bytes / 1e9);
            line_num(f, "KV link busy (%):", T > 0 ? 100.0 * pp->link_busy_s / T : 0.0);
        }
        line_num(f, pc->autoscale.enabled ? "Cost at the peak ($/h):" : "Cost ($/h):",
                 pp->gpus * pc->gpu.price_per_hour);
    }
}

void sv__report_servesim_summary(const sv_result_t *res, FILE *f)
{
    const sv_scenario_t *sc = res->sc;
    const sv_summary_t *s = &res->summary;
    int slo = !isnan(sc->metrics.slo_ttft_ms) || !isnan(sc->metrics.slo_tpot_ms) ||
              !isnan(sc->metrics.slo_e2el_ms);
    char buf[160];
    int p99 = pct_index(s, 99.0);
    centred(f, " servesim: inside the server ", '=', 50);
    summary_serving(res, f);
    int scaled = 0; /* an autoscaled pool counts the GPUs up at its peak */
    for (int p = 0; p < res->npools; p++)
        scaled |= res->pools[p].cfg->autoscale.enabled;
    line_num(f, scaled ? "GPUs (at the peak):" : "GPUs:", res->gpus);
    if (s->sketch_alpha > 0) { /* exact percentiles say nothing: the default */
        snprintf(buf, sizeof buf, "sketch, within %g%% (DDSketch)", 100.0 * s->sketch_alpha);
        fprintf(f, "%-40s %s\n", "Percentiles:", buf);
    }
    line_num(f, "Mean queue time (ms):", s->queue.mean);
    line_num(f, "P99 queue time (ms):", s->queue.pct[p99]);
    line_num(f, "Mean prefill time (ms):", s->prefill.mean);
    if (sc->disaggregated) {
        line_num(f, "Mean KV transfer wait (ms):", s->xfer_wait.mean);
        line_num(f, "P99 KV transfer wait (ms):", s->xfer_wait.pct[p99]);
        line_num(f, "Mean KV transfer (ms):", s->xfer.mean);
        line_num(f, "Mean decode queue (ms):", s->decode_queue.mean);
    }
    line_num(f, "Mean decode time (ms):", s->decode.mean);
    line_num(f, "KV cache usage p50 (%):", 100.0 * res->kv_usage_p50);
    line_num(f, "KV cache usage p99 (%):", 100.0 * res->kv_usage_p99);
    line_int(f, "Preemptions:", res->preemptions);
    if (res->prefix_queries > 0) {
        line_num(f, "Prefix cache hit rate (%):", 100.0 * res->prefix_hits / res->prefix_queries);
        line_int(f, "Prefix cache hits (tokens):", (long)res->prefix_hits);
    }
    for (int i = 1; i < SV_FAIL_COUNT; i++) {
        if (!s->failed_by[i]) continue;
        snprintf(buf, sizeof buf, "Failed (%s):", sv_fail_name(i));
        line_int(f, buf, s->failed_by[i]);
    }
    if (slo && s->completed + s->failed > 0)
        line_num(
            f, "SLO attainment (%):", 100.0 * (double)s->good / (double)(s->completed + s->failed));
    if (slo && res->gpus > 0)
        line_num(f, "Goodput per GPU (req/s):", s->request_goodput / res->gpus);
    line_num(f, "GPU busy (%):", 100.0 * res->busy_share);
    line_num(f, "Cost per 1M output tokens ($):", res->cost_per_mtok);
    line_num(f, "Energy per output token (J):", res->energy_per_tok);
    summary_confidence(res, f);
    summary_autoscalers(res, f);
    if (sc->sessions.given) print_sessions(f, res);
    summary_pools(res, f);
    sv__report_finance_summary(res, f);
    centred(f, "", '=', 50);
    sv__report_contract_text(res, f);
}

/* Open path for writing ("-" is stdout for the JSON). */
static FILE *open_out(const char *path, sv_error_t *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

/* Close what open_out() opened; a write error anywhere becomes SV_EIO. */
static int close_out(FILE *f, const char *path, sv_error_t *err)
{
    return sv__close_out(f, path, err);
}

void sv__report_network_text(const sv_network_cfg_t *n, char *buf, size_t size)
{
    static const char *const kind[] = {"fixed", "uniform", "normal", "lognormal"};
    if (n->kind == SV_NET_FIXED)
        snprintf(buf, size, "%g ms, half each way", n->value * 1e3);
    else if (n->kind == SV_NET_UNIFORM)
        snprintf(buf, size, "uniform %g to %g ms, half each way", n->min * 1e3, n->max * 1e3);
    else
        snprintf(buf, size, "%s mean %g ms, std %g ms, half each way", kind[n->kind], n->mean * 1e3,
                 n->std * 1e3);
}

void sv__report_centred(FILE *f, const char *s, char c, int width)
{
    centred(f, s, c, width);
}

FILE *sv__report_open(const char *path, sv_error_t *err)
{
    return open_out(path, err);
}

int sv__report_close(FILE *f, const char *path, sv_error_t *err)
{
    return close_out(f, path, err);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void stat_keys(sv_jw_t *w, const sv_summary_t *s, const char *m, const sv_stat_t *st)
{
    char key[64], pw[32];
    snprintf(key, sizeof key, "mean_%s_ms", m);
    sv__jw_num(w, key, st->mean);
    snprintf(key, sizeof key, "median_%s_ms", m);
    sv__jw_num(w, key, st->median);
    snprintf(key, sizeof key, "std_%s_ms", m);
    sv__jw_num(w, key, st->std);
    for (int i = 0; i < s->npcts; i++) {
        sv_report_pct_word(s->pcts[i], pw, sizeof pw);
        snprintf(key, sizeof key, "p%s_%s_ms", pw, m);
        sv__jw_num(w, key, st->pct[i]);
    }
}

static void date_string(char *buf, size_t n)
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    time_t t = 0;
    if (e && *e) t = (time_t)strtoll(e, NULL, 10);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y%m%d-%H%M%S", &tm);
}

void sv__report_date(char *buf, size_t n)
{
    date_string(buf, n);
}

/* ---- the per-request lists of the JSON --------------------------------------------------
 * One item of each list per request, in id order; the lists in vLLM's order, some only
 * with --detailed. Written from the records at the end, or item by item as requests end
 * (servesim/report/recstream.h): the same functions either way. */

static int done_(const sv_req_t *r)
{
    return r->state == SV_RQ_DONE;
}

static void put_input(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                      size_t n)
{
    (void)sc, (void)v, (void)n;
    sv__jw_int(w, NULL, r->input);
}

static void put_output(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                       size_t n)
{
    (void)sc, (void)v, (void)n;
    sv__jw_int(w, NULL, done_(r) ? r->output : 0);
}

/* The lists of one number per request: the number (val_*) and its item (put_*). */
static double val_ttft(const sv_scenario_t *sc, const sv_req_t *r)
{
    (void)sc;
    return done_(r) ? r->first_token - r->start : 0.0;
}

static void put_ttft(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                     size_t n)
{
    (void)v, (void)n;
    sv__jw_num(w, NULL, val_ttft(sc, r));
}

static void put_itls(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                     size_t n)
{
    (void)sc, (void)r;
    sv__jw_arr(w, NULL);
    sv__jw_nums(w, v, n);
    sv__jw_end_arr(w);
}

static double val_latency(const sv_scenario_t *sc, const sv_req_t *r)
{
    (void)sc;
    return done_(r) ? r->last_token - r->start : 0.0;
}

static void put_latency(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                        size_t n)
{
    (void)v, (void)n;
    sv__jw_num(w, NULL, val_latency(sc, r));
}

static double val_start(const sv_scenario_t *sc, const sv_req_t *r)
{
    (void)sc;
    return r->start;
}

static void put_start(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                      size_t n)
{
    (void)v, (void)n;
    sv__jw_num(w, NULL, val_start(sc, r));
}

/* vLLM keeps queue_times without --save-detailed: each request's wait for its
 * --max-concurrency slot (client_queue_time, sv_conv_client_queue), failed ones too */
static double val_queue(const sv_scenario_t *sc, const sv_req_t *r)
{
    return sv_conv_client_queue(sc, r);
}

static void put_queue(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                      size_t n)
{
    (void)v, (void)n;
    sv__jw_num(w, NULL, val_queue(sc, r));
}

/* No text is generated: a placeholder of one word per output token ("x x x"), "" for a
 * failed request as in vLLM (RequestFuncOutput.generated_text); written straight out, it
 * needs no escaping and no buffer */
#define X16 " x x x x x x x x x x x x x x x x"
static void put_text(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                     size_t n)
{
    (void)sc, (void)v, (void)n;
    static const char XS[] = X16 X16 X16 X16 X16 X16 X16 X16; /* 128 tokens' " x" */
    long out = done_(r) ? r->output : 0;
    sv__jw_key(w, NULL);
    fputs(out ? "\"x" : "\"", w->f);
    for (long left = out - 1; left > 0; left -= 128)
        fwrite(XS, 1, 2 * (size_t)(left < 128 ? left : 128), w->f);
    fputc('"', w->f);
}

static void put_error(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r, const double *v,
                      size_t n)
{
    (void)sc, (void)v, (void)n;
    sv__jw_str(w, NULL, done_(r) ? "" : sv_fail_name(r->fail));
}

static const struct {
    const char *name;
    int detailed; /* only with --detailed */
    sv__list_put_fn put;
    double (*val)(const sv_scenario_t *sc, const sv_req_t *r); /* NULL: not one number */
} LISTS[SV__NLISTS] = {
    {"input_lens", 1, put_input, NULL},
    {"output_lens", 1, put_output, NULL},
    {"ttfts", 1, put_ttft, val_ttft},
    {"itls", 1, put_itls, NULL},
    {"latencies", 0, put_latency, val_latency},
    {"start_times", 1, put_start, val_start},
    {"queue_times", 0, put_queue, val_queue},
    {"generated_texts", 1, put_text, NULL},
    {"errors", 1, put_error, NULL},
};

int sv__report_list_wanted(int k, int detailed)
{
    return detailed || !LISTS[k].detailed;
}

void sv__report_list_put(int k, sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r,
                         const double *itl, size_t n)
{
    LISTS[k].put(w, sc, r, itl, n);
}

int sv__report_list_itls(int k)
{
    return LISTS[k].put == put_itls;
}

/* val's numbers of the m records r[0..m) into out; the lists every --json writes
 * (latencies, queue_times) with val's calls inlined, the others through the pointer. */
typedef double (*list_val_fn)(const sv_scenario_t *sc, const sv_req_t *r);
static inline __attribute__((always_inline)) void gather_with(list_val_fn val,
                                                              const sv_scenario_t *sc,
                                                              const sv_req_t *r, size_t m,
                                                              double *out)
{
    for (size_t j = 0; j < m; j++)
        out[j] = val(sc, &r[j]);
}

static void gather(list_val_fn val, const sv_scenario_t *sc, const sv_req_t *r, size_t m,
                   double *out)
{
    if (val == val_latency)
        gather_with(val_latency, sc, r, m, out);
    else if (val == val_queue)
        gather_with(val_queue, sc, r, m, out);
    else
        gather_with(val, sc, r, m, out);
}

/* The lists from the records, or (streamed) spliced from what was written as requests
 * ended. */

/*
 * The ITL lists. Every request decoding in one step of a replica gets the same gap there
 * (the step's end less the step before's), so the gaps between consecutive steps are
 * written once per step, each with its separator, into one text per decode stream (a
 * rope, made when a list first needs it), and a request's run of steps is a copy of a
 * range of it: the bytes sv__jw_nums would write for those gaps, at the cost of a copy.
 * Its other gaps (a segment's first, the single tokens) go through the number cache.
 */
typedef struct rope {
    char *text;   /* ", g1, g2, ...": the gap before step k is item k */
    size_t *at;   /* item k spans [at[k], at[k + 1]); at[0] = at[1] = 0 (no gap before 0) */
    int made;     /* tried (text NULL then: out of memory) */
} rope_t;

static int make_rope(rope_t *r, const double *t, size_t n, sv_fmtcache_t *cache)
{
    r->made = 1;
    if (!cache) return SV_ENOMEM; /* (the lists then go number by number) */
    size_t cap = 24 * n + 64, len = 0;
    r->text = malloc(cap);
    r->at = malloc((n + 1) * sizeof *r->at);
    if (!r->text || !r->at) return SV_ENOMEM;
    r->at[0] = 0;
    for (size_t k = 1; k < n; k++) {
        r->at[k] = len;
        if (cap - len < 56) {
            char *bigger = realloc(r->text, cap * 2);
            if (!bigger) return SV_ENOMEM;
            r->text = bigger;
            cap *= 2;
        }
        /* the writer's item text ("null" when not finite), written in place */
        memcpy(r->text + len, ", ", 2);
        char *end = sv__fmtcache_put(cache, r->text + len + 2, t[k] - t[k - 1]);
        len = (size_t)(end - r->text);
    }
    r->at[n] = len;
    return 0;
}

static void free_ropes(rope_t *ropes, int n)
{
    for (int i = 0; ropes && i < n; i++) {
        free(ropes[i].text);
        free(ropes[i].at);
    }
    free(ropes);
}

/* Request i's ITLs from its runs; 0, or SV_ENOMEM (nothing written then). */
static int itls_by_runs(sv_jw_t *w, const sv_result_t *res, rope_t *ropes, int32_t i,
                        sv_itl_run_t **runs, size_t *cap)
{
    size_t nr = 0;
    if (sv_metrics_itl_runs(res->metrics, &res->pool, i, runs, cap, &nr)) return SV_ENOMEM;
    for (size_t j = 0; j < nr; j++) { /* every rope the runs need, before any is written */
        rope_t *r = (*runs)[j].stream >= 0 ? &ropes[(*runs)[j].stream] : NULL;
        if (!r || r->made) {
            if (r && !r->text) return SV_ENOMEM;
            continue;
        }
        size_t n;
        const double *t = sv_metrics_steps(res->metrics, (*runs)[j].stream, &n);
        if (make_rope(r, t, n, w->cache)) return SV_ENOMEM;
    }
    for (size_t j = 0; j < nr; j++) {
        const sv_itl_run_t *u = &(*runs)[j];
        if (u->stream < 0) {
            sv__jw_nums(w, &u->v, 1);
        } else {
            const rope_t *r = &ropes[u->stream];
            sv__jw_items(w, r->text + r->at[u->k0], r->at[u->k1] - r->at[u->k0]);
        }
    }
    return 0;
}

/* The "itls" list: each request's list, by its runs, or (out of memory for those) from
 * its gaps one by one. */
static void write_itls(sv_jw_t *w, const sv_result_t *res)
{
    const sv_reqpool_t *p = &res->pool;
    int ns = sv_metrics_nstreams(res->metrics);
    rope_t *ropes = calloc((size_t)ns + 1, sizeof *ropes);
    sv_itl_run_t *runs = NULL;
    size_t cap = 0;
    w->cache = sv__fmtcache_new(); /* none: no cache */
    for (size_t i = 0; i < p->n; i++) {
        sv__jw_arr(w, NULL);
        if (!ropes || itls_by_runs(w, res, ropes, (int32_t)i, &runs, &cap)) {
            double *v = NULL;
            size_t n = 0;
            sv_metrics_itls(res->metrics, p, (int32_t)i, &v, &n);
            sv__jw_nums(w, v, n);
            free(v);
        }
        sv__jw_end_arr(w);
    }
    free(runs);
    free_ropes(ropes, ns);
    sv__fmtcache_free(w->cache);
    w->cache = NULL;
}

static void write_lists(sv_jw_t *w, const sv_result_t *res, int detailed, const sv_recstream_t *rs)
{
    const sv_reqpool_t *p = &res->pool;
    for (int k = 0; k < SV__NLISTS; k++) {
        if (!sv__report_list_wanted(k, detailed)) continue;
        sv__jw_arr(w, LISTS[k].name);
        if (rs) {
            sv__recstream_splice(rs, k, w);
        } else {
            sv__list_put_fn put = LISTS[k].put;
            double (*val)(const sv_scenario_t *, const sv_req_t *) = LISTS[k].val;
            double chunk[256]; /* the numbers of a list, a chunk at a time: the same items */
            for (size_t i = 0; i < p->n && val; i += sizeof chunk / sizeof chunk[0]) {
                size_t m = p->n - i < 256 ? p->n - i : 256;
                gather(val, res->sc, &p->r[i], m, chunk);
                sv__jw_nums(w, chunk, m);
            }
            for (size_t i = 0; i < p->n && put != put_itls && !val; i++)
                put(w, res->sc, &p->r[i], NULL, 0);
            if (put == put_itls) write_itls(w, res);
        }
        sv__jw_end_arr(w);
    }
}

/* The confidence mark of one cost model (see servesim/confidence.h). */
static void write_confidence(sv_jw_t *w, const char *key, const sv_perf_t *perf)
{
    sv_confidence_t c;
    sv_confidence_of(perf, &c);
    sv__jw_obj(w, key);
    sv__jw_str(w, "status", sv_calibration_name(c.status));
    sv__jw_str(w, "model_class", sv_band_class_name(c.band_class));
    sv__jw_num(w, "throughput_error_band_pct", c.throughput_pct);
    sv__jw_num(w, "latency_error_band_pct", c.latency_pct);
    if (strcmp(c.evidence, "assumed")) sv__jw_num(w, "band_coverage_pct", sv_band_coverage_pct);
    sv__jw_str(w, "band_evidence", c.evidence);
    sv__jw_obj(w, "gpu");
    sv__jw_str(w, "name", c.gpu);
    sv__jw_str(w, "calibration", sv_calibration_name(c.gpu_cal));
    sv__jw_str(w, "calibrated_from", c.gpu_note);
    sv__jw_end_obj(w);
    sv__jw_obj(w, "engine_profile");
    sv__jw_str(w, "name", c.engine);
    sv__jw_str(w, "calibration", sv_calibration_name(c.engine_cal));
    sv__jw_str(w, "fitted_to", c.engine_note);
    sv__jw_end_obj(w);
    sv__jw_end_obj(w);
}

/* The weakest confidence over the pools: the one a whole run's answer stands on. */
static const sv_perf_t *weakest_pool(const sv_result_t *res)
{
    const sv_perf_t *worst = &res->pools[0].perf;
    sv_confidence_t a, b;
    sv_confidence_of(worst, &a);
    for (int p = 1; p < res->npools; p++) {
        sv_confidence_of(&res->pools[p].perf, &b);
        if (b.status > a.status) {
            worst = &res->pools[p].perf;
            a = b;
        }
    }
    return worst;
}

/* A replica's speculative-decoding counters (vLLM's names, SGLang's accept length), as
 * drawn or at their expected values (sv_replica_spec_counters); nothing without spec
 * decoding. */
static void write_spec(sv_jw_t *w, const sv_perf_settings_t *set, const sv_replica_stats_t *st)
{
    sv_spec_counters_t c;
    sv_replica_spec_counters(st, set, &c);
    if (c.k == 0) return;
    sv__jw_obj(w, "spec_decode");
    sv__jw_int(w, "num_speculative_tokens", c.k);
    sv__jw_num(w, "num_drafts", c.drafts);
    sv__jw_num(w, "num_draft_tokens", c.draft_tokens);
    sv__jw_num(w, "num_accepted_tokens", c.accepted);
    sv__jw_num(w, "mean_acceptance_length", c.mean_len);
    sv__jw_arr(w, "num_accepted_tokens_per_pos");
    for (int i = 0; i < c.k; i++)
        sv__jw_num(w, NULL, c.per_pos[i]);
    sv__jw_end_arr(w);
    sv__jw_arr(w, "acceptance_rate_per_pos");
    for (int i = 0; i < c.k; i++)
        sv__jw_num(w, NULL, c.drafts > 0 ? c.per_pos[i] / c.drafts : 0.0);
    sv__jw_end_arr(w);
    sv__jw_end_obj(w);
}

static void write_pools(sv_jw_t *w, const sv_result_t *res)
{
    double T = res->summary.duration;
    sv__jw_arr(w, "pools");
    for (int p = 0; p < res->npools; p++) {
        const sv_pool_result_t *pp = &res->pools[p];
        const sv_pool_cfg_t *pc = pp->cfg;
        sv__jw_obj(w, NULL);
        sv__jw_str(w, "name", pc->name);
        sv__jw_str(w, "role", sv_role_name(pc->role));
        sv__jw_str(w, "gpu", pc->gpu.name);
        sv__jw_int(w, "tp", pp->perf.set.tp);
        sv__jw_int(w, "replicas", pp->count);
        sv__jw_num(w, "gpus", pp->gpus);
        if (pc->engine_name[0]) sv__jw_str(w, "engine", pc->engine_name);
        sv__jw_str(w, "scheduler", sv_sched_name(pc->engine.scheduler));
        sv__jw_str(w, "engine_profile", pp->perf.set.engine);
        if (pc->engine_note[0]) sv__jw_str(w, "engine_note", pc->engine_note);
        sv__jw_int(w, "max_num_seqs", pc->engine.max_num_seqs);
        sv__jw_int(w, "max_num_batched_tokens", pc->engine.max_num_batched_tokens);
        sv__jw_int(w, "kv_blocks_per_replica", pp->mem.kv_blocks);
        sv__jw_int(w, "block_size", pp->mem.block_size);
        sv__jw_int(w, "max_model_len", pp->max_model_len);
        sv__jw_num(w, "busy_share", pp->busy_share);
        sv__jw_num(w, "kv_usage_p50", pp->kv_usage_p50);
        sv__jw_num(w, "kv_usage_p99", pp->kv_usage_p99);
        sv__jw_num(w, "kv_usage_max", pp->kv_usage_max);
        sv__jw_int(w, "preemptions", pp->preemptions);
        sv__jw_int(w, "steps", pp->steps);
        sv__jw_num(w, "mean_decode_batch", pp->mean_decode_batch);
        sv__jw_int(w, "handoffs", pp->handoffs);
        write_confidence(w, "confidence", &pp->perf);
        sv__jw_num(w, "stall_s", pp->stall_s);
        sv__jw_num(w, "stall_share", T > 0 ? pp->stall_s / (T * pp->count) : 0.0);
        sv__jw_num(w, "kv_sent_bytes", pp->link_bytes);
        sv__jw_int(w, "kv_transfers", pp->transfers);
        sv__jw_num(w, "kv_link_busy_share", T > 0 ? pp->link_busy_s / (T * pp->count) : 0.0);
        sv__jw_num(w, "price_per_hour_usd", pc->gpu.price_per_hour);
        sv__jw_num(w, "cost_usd", pp->cost_usd);
        sv__jw_num(w, "energy_j", pp->energy_j);
        sv__jw_num(w, "gpu_hours", pp->gpu_hours);
        if (pc->autoscale.enabled) {
            sv__jw_num(w, "mean_replicas_up", pp->mean_up);
            sv__jw_int(w, "peak_replicas_up", pp->peak_up);
            sv__jw_int(w, "scale_ups", pp->scale_ups);
            sv__jw_int(w, "scale_downs", pp->scale_downs);
        }
        sv__jw_end_obj(w);
    }
    sv__jw_end_arr(w);
    sv__jw_arr(w, "replicas");
    for (int i = 0; i < res->replicas; i++) {
        const sv_replica_stats_t *st = &res->rstats[i];
        sv__jw_obj(w, NULL);
        sv__jw_str(w, "pool", res->pools[res->rpool[i]].cfg->name);
        sv__jw_num(w, "busy_share", T > 0 ? st->busy_s / T : 0.0);
        sv__jw_int(w, "steps", st->steps);
        sv__jw_int(w, "decode_steps", st->decode_steps);
        sv__jw_num(w, "prefill_tokens", st->prefill_tokens);
        sv__jw_num(w, "decode_tokens", st->decode_tokens);
        sv__jw_int(w, "preemptions", st->preemptions);
        sv__jw_int(w, "peak_running", st->peak_running);
        sv__jw_int(w, "peak_waiting", st->peak_waiting);
        sv__jw_int(w, "peak_blocks_used", st->peak_blocks_used);
        const sv_kvspec_t *ks = &res->pools[res->rpool[i]].perf.kvs;
        if (ks->hybrid) {
            /* A hybrid model's KV cache groups and the most blocks each kind held. */
            sv__jw_obj(w, "kv_cache_groups");
            for (int k = 0; k < SV_KV_KINDS; k++)
                if (ks->groups[k]) sv__jw_int(w, sv_kv_kind_names[k], ks->groups[k]);
            sv__jw_end_obj(w);
            sv__jw_obj(w, "peak_blocks_by_kind");
            for (int k = 0; k < SV_KV_KINDS; k++)
                if (ks->groups[k]) sv__jw_int(w, sv_kv_kind_names[k], st->peak_kind_blocks[k]);
            sv__jw_end_obj(w);
        }
        sv__jw_num(w, "stall_s", res->stall_s[i]);
        write_spec(w, &res->pools[res->rpool[i]].perf.set, st);
        sv__jw_end_obj(w);
    }
    sv__jw_end_arr(w);
}

/* servesim.config: the rows of sv_run_config(), sections as nested objects ("pools.x" ->
 * "pools": {"x": {...}}; only the first dot nests, so a pool name may hold dots). */
static void write_config(sv_jw_t *w, const sv_run_config_t *c)
{
    sv__jw_obj(w, "config");
    char cur[2][80] = {"", ""};
    int depth = 0;
    for (int i = 0; i < c->n; i++) {
        const sv_cfg_row_t *r = &c->rows[i];
        char comp[2][80] = {"", ""};
        int nc = 0;
        if (r->section[0]) {
            const char *dot = strchr(r->section, '.');
            if (dot) {
                snprintf(comp[0], sizeof comp[0], "%.*s", (int)(dot - r->section), r->section);
                snprintf(comp[1], sizeof comp[1], "%s", dot + 1);
                nc = 2;
            } else {
                snprintf(comp[0], sizeof comp[0], "%s", r->section);
                nc = 1;
            }
        }
        int common = 0;
        while (common < depth && common < nc && strcmp(cur[common], comp[common]) == 0)
            common++;
        for (; depth > common; depth--)
            sv__jw_end_obj(w);
        for (; depth < nc; depth++) {
            sv__jw_obj(w, comp[depth]);
            snprintf(cur[depth], sizeof cur[depth], "%s", comp[depth]);
        }
        switch (r->kind) {
        case SV_CFGV_NUM:
            if (isinf(r->num))
                sv__jw_str(w, r->key, r->num > 0 ? "inf" : "-inf");
            else
                sv__jw_num(w, r->key, r->num);
            break;
        case SV_CFGV_INT:
            sv__jw_int(w, r->key, (long)r->num);
            break;
        case SV_CFGV_BOOL:
            sv__jw_key(w, r->key);
            fputs(r->num != 0 ? "true" : "false", w->f);
            break;
        default:
            sv__jw_str(w, r->key, r->text);
            break;
        }
    }
    for (; depth > 0; depth--)
        sv__jw_end_obj(w);
    sv__jw_end_obj(w);
}

void sv__report_servesim_json(sv_jw_t *w, const sv_result_t *res, const char *convention,
                              const char *definitions, const sv_run_config_t *cfg)
{
    const sv_scenario_t *sc = res->sc;
    const sv_summary_t *s = &res->summary;
    sv__jw_obj(w, "servesim");
    sv__jw_str(w, "version", SERVESIM_VERSION);
    if (convention) sv__jw_str(w, "convention", convention);
    sv__jw_str(w, "definitions",
               definitions ? definitions : "vllm bench serve (ttft, tpot, itl, e2el, goodput)");
    sv__jw_str(w, "scenario", sc->name);
    sv__jw_int(w, "seed", (long)sc->seed);
    if (s->sketch_alpha > 0) {
        sv__jw_str(w, "percentiles", "sketch");
        sv__jw_num(w, "percentile_relative_error", s->sketch_alpha);
    }
    if (res->npools > 0) write_confidence(w, "confidence", weakest_pool(res));
    sv__jw_str(w, "router", sv_route_names[sc->route]);
    sv__jw_num(w, "router_latency_ms", sc->router_latency * 1e3);
    if (sc->network.enabled) {
        char buf[160];
        sv__report_network_text(&sc->network, buf, sizeof buf);
        sv__jw_str(w, "network_rtt", buf);
    }
    if (sc->has_class_rtt) { /* the classes' own round trips (workload.classes[i].rtt_ms) */
        char buf[160];
        sv__jw_obj(w, "class_network_rtt");
        for (int i = 0; i < sc->workload.nclasses; i++)
            if (sc->class_rtt[i].enabled) {
                sv__report_network_text(&sc->class_rtt[i], buf, sizeof buf);
                sv__jw_str(w, sc->metrics.class_name[i], buf);
            }
        sv__jw_end_obj(w);
    }
    sv__jw_str(w, "serving", sc->disaggregated ? "disaggregated" : "colocated");
    if (sc->disaggregated) {
        sv__jw_str(w, "first_token", sc->first_token_at_decode ? "decode" : "prefill");
        sv__jw_str(w, "decode_router", sv_route_names[sc->decode_route]);
        if (sc->handoff > 0) sv__jw_num(w, "handoff_ms", sc->handoff * 1e3);
        sv__jw_obj(w, "kv_link");
        sv__jw_str(w, "kind", sc->link.kind);
        sv__jw_num(w, "bandwidth_gb_s_per_gpu", sc->link.bw_per_gpu / 1e9);
        sv__jw_num(w, "latency_us", sc->link.latency * 1e6);
        sv__jw_str(w, "sharing", sc->link.fifo ? "fifo" : "fair");
        sv__jw_str(w, "overlap", sc->link.overlap ? "layerwise" : "none");
        sv__jw_end_obj(w);
    }
    sv__jw_num(w, "gpus", res->gpus);
    sv__jw_int(w, "requests", (long)res->pool.n);
    sv__jw_obj(w, "failed_by_reason");
    for (int i = 1; i < SV_FAIL_COUNT; i++) /* aborted: only a served run's clients abort */
        if (i != SV_FAIL_ABORTED || s->failed_by[i]) sv__jw_int(w, sv_fail_name(i), s->failed_by[i]);
    sv__jw_end_obj(w);
    stat_keys(w, s, "queue", &s->queue);
    stat_keys(w, s, "prefill", &s->prefill);
    stat_keys(w, s, "kv_transfer_wait", &s->xfer_wait);
    stat_keys(w, s, "kv_transfer", &s->xfer);
    stat_keys(w, s, "decode_queue", &s->decode_queue);
    stat_keys(w, s, "decode", &s->decode);
    sv__jw_num(w, "kv_usage_p50", res->kv_usage_p50);
    sv__jw_num(w, "kv_usage_p99", res->kv_usage_p99);
    sv__jw_num(w, "kv_usage_max", res->kv_usage_max);
    sv__jw_int(w, "preemptions", res->preemptions);
    sv__jw_num(w, "prefix_cache_queries", res->prefix_queries);
    sv__jw_num(w, "prefix_cache_hits", res->prefix_hits);
    sv__jw_num(w, "prefix_cache_hit_rate",
               res->prefix_queries > 0 ? res->prefix_hits / res->prefix_queries : 0.0);
    sv__jw_int(w, "good_requests", s->good);
    sv__jw_num(w, "slo_attainment",
               s->completed + s->failed ? (double)s->good / (double)(s->completed + s->failed)
                                        : 0.0);
    if (isnan(s->request_goodput))
        sv__jw_null(w, "goodput_per_gpu");
    else
        sv__jw_num(w, "goodput_per_gpu", res->gpus > 0 ? s->request_goodput / res->gpus : 0.0);
    sv__jw_num(w, "gpu_busy_share", res->busy_share);
    sv__jw_num(w, "cost_usd", res->cost_usd);
    sv__jw_num(w, "gpu_hours", res->gpu_hours);
    sv__jw_num(w, "cost_per_million_output_tokens_usd", res->cost_per_mtok);
    sv__jw_num(w, "energy_j", res->energy_j);
    sv__jw_num(w, "energy_per_output_token_j", res->energy_per_tok);
    sv__report_finance_json(w, res);
    sv__jw_int(w, "events", res->events);
    write_pools(w, res);
    sv__report_contract_json(w, res);
    if (res->sc->sessions.given) write_sessions(w, res);
    if (cfg) write_config(w, cfg);
    sv_run_axes_t ax;
    sv_run_axes_of(res, &ax);
    sv__jw_obj(w, "axes");
    sv__jw_num(w, "ttft_ms", ax.ttft_ms);
    sv__jw_num(w, "tpot_ms", ax.tpot_ms);
    sv__jw_num(w, "phase_ms", ax.phase_ms);
    sv__jw_num(w, "time_s", ax.time_s);
    sv__jw_num(w, "requests", ax.requests);
    sv__jw_num(w, "kv_pct", ax.kv_pct);
    sv__jw_end_obj(w);
    sv__jw_end_obj(w);
}

int sv_report_json(const sv_result_t *res, int detailed, const char *path, sv_error_t *err)
{
    int rc;
    FILE *f = open_out(path, err);
    if (!f) return SV_EIO;
    rc = sv_report_json_stream(res, detailed, f, err);
    int crc = close_out(f, path, err);
    return rc ? rc : crc;
}

static int json_body(const sv_result_t *res, int detailed, const sv_recstream_t *rs, FILE *f,
                     sv_error_t *err);

int sv_report_json_stream(const sv_result_t *res, int detailed, FILE *f, sv_error_t *err)
{
    return json_body(res, detailed, NULL, f, err);
}

int sv_report_json_streamed(const sv_result_t *res, const sv_recstream_t *rs, int detailed,
                            const char *path, sv_error_t *err)
{
    FILE *f = open_out(path, err);
    if (!f) return SV_EIO;
    int rc = json_body(res, detailed, rs, f, err);
    int crc = close_out(f, path, err);
    return rc ? rc : crc;
}

static int json_body(const sv_result_t *res, int detailed, const sv_recstream_t *rs, FILE *f,
                     sv_error_t *err)
{
    sv_run_config_t cfg;
    int rc = sv_run_config(res, &cfg, err);
    if (rc) return rc;
    const sv_scenario_t *sc = res->sc;
    const sv_summary_t *s = &res->summary;
    const sv_workload_cfg_t *wl = &sc->workload;
    sv_jw_t w;
    char date[32];
    date_string(date, sizeof date);
    sv__jw_init(&w, f);
    sv__jw_obj(&w, NULL);
    sv__jw_str(&w, "date", date);
    sv__jw_str(&w, "endpoint_type", "servesim");
    sv__jw_str(&w, "backend", "servesim");
    sv__jw_str(&w, "label", sc->name);
    sv__jw_str(&w, "model_id", sc->model.hf_id[0] ? sc->model.hf_id : sc->model.name);
    sv__jw_str(&w, "tokenizer_id", sc->model.hf_id[0] ? sc->model.hf_id : sc->model.name);
    sv__jw_int(&w, "num_prompts", (long)res->pool.n);
    if (wl->has_trace || isinf(wl->rate))
        sv__jw_str(&w, "request_rate", "inf");
    else
        sv__jw_num(&w, "request_rate", wl->rate);
    if (isinf(wl->burstiness))
        sv__jw_str(&w, "burstiness", "inf");
    else
        sv__jw_num(&w, "burstiness", wl->burstiness);
    if (wl->max_concurrency > 0)
        sv__jw_int(&w, "max_concurrency", wl->max_concurrency);
    else
        sv__jw_null(&w, "max_concurrency");
    sv__jw_num(&w, "duration", s->duration);
    sv__jw_int(&w, "completed", s->completed);
    sv__jw_int(&w, "failed", s->failed);
    sv__jw_int(&w, "total_input_tokens", s->total_input);
    sv__jw_int(&w, "total_output_tokens", s->total_output);
    sv__jw_num(&w, "request_throughput", s->request_throughput);
    if (isnan(s->request_goodput))
        sv__jw_null(&w, "request_goodput");
    else
        sv__jw_num(&w, "request_goodput", s->request_goodput);
    sv__jw_num(&w, "output_throughput", s->output_throughput);
    sv__jw_num(&w, "total_token_throughput", s->total_token_throughput);
    write_lists(&w, res, detailed, rs);
    sv__jw_num(&w, "max_output_tokens_per_s", s->max_output_tokens_per_s);
    sv__jw_int(&w, "max_concurrent_requests", s->max_concurrent_requests);
    sv__jw_num(&w, "rtfx", 0.0); /* inverse real-time factor: audio input only */
    stat_keys(&w, s, "ttft", &s->ttft);
    stat_keys(&w, s, "tpot", &s->tpot);
    stat_keys(&w, s, "itl", &s->itl);
    stat_keys(&w, s, "e2el", &s->e2el);
    sv_stat_t q;
    if (client_queue_stat(res, SV_M_CLIENT_QUEUE, &q)) stat_keys(&w, s, "client_queue_time", &q);
    if (client_queue_stat(res, SV_M_E2EL_QUEUE, &q))
        stat_keys(&w, s, "e2el_including_client_queue", &q);
    sv__report_servesim_json(&w, res, NULL, NULL, &cfg);
    sv__jw_end_obj(&w);
    fputc('\n', f);
    sv_run_config_free(&cfg);
    return 0;
}

/* ---- CSV ------------------------------------------------------------------------------- */

static double ms_or_nan(int ok, double s)
{
    return ok ? s * 1e3 : NAN;
}

void sv__report_csv_head(FILE *f, const sv_metrics_cfg_t *mc)
{
    fputs("id,replica,prefill_replica,arrival_s,start_s,input_tokens,output_tokens,status,"
          "fail_reason,queue_ms,prefill_ms,kv_transfer_wait_ms,kv_transfer_ms,decode_queue_ms,"
          "ttft_ms,tpot_ms,decode_ms,e2el_ms,preemptions",
          f);
    fputs(mc->nclasses > 0 ? ",class,priority\n" : "\n", f); /* workload.classes only */
}

void sv__report_csv_row(FILE *f, const sv_metrics_cfg_t *mc, size_t i, const sv_req_t *r)
{
    int ok = r->state == SV_RQ_DONE;
    double tpot = ok && r->output > 1 ? sv_req_tpot(r) : NAN;
    int dis = r->xfer_end >= 0;
    fprintf(f, "%zu,%d,%d,%.9g,%.9g,%d,%d,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%u", i,
            r->replica, dis ? r->prefill_replica : r->replica, r->arrival, r->start, r->input,
            r->output, ok ? "completed" : "failed", ok ? "" : sv_fail_name(r->fail),
            ms_or_nan(ok, r->scheduled - r->start), ms_or_nan(ok, r->prefill_end - r->scheduled),
            ms_or_nan(ok, dis ? r->xfer_start - r->prefill_end : 0.0),
            ms_or_nan(ok, dis ? r->xfer_end - r->xfer_start : 0.0),
            ms_or_nan(ok, dis ? r->decode_start - r->xfer_end : 0.0), ms_or_nan(ok, sv_req_ttft(r)),
            ms_or_nan(ok && r->output > 1, tpot), ms_or_nan(ok, r->last_token - r->first_token),
            ms_or_nan(ok, sv_req_e2el(r)), (unsigned)r->preemptions);
    if (mc->nclasses > 0) fprintf(f, ",%s,%d", mc->class_name[r->cls], (int)r->priority);
    fputc('\n', f);
}

int sv_report_requests_csv(const sv_result_t *res, const char *path, sv_error_t *err)
{
    FILE *f = open_out(path, err);
    if (!f) return SV_EIO;
    const sv_metrics_cfg_t *mc = &res->sc->metrics;
    sv__report_csv_head(f, mc);
    for (size_t i = 0; i < res->pool.n; i++)
        sv__report_csv_row(f, mc, i, &res->pool.r[i]);
    return close_out(f, path, err);
}

int sv_report_timeseries_csv(const sv_result_t *res, const char *path, sv_error_t *err)
{
    FILE *f = open_out(path, err);
    if (!f) return SV_EIO;
    fputs("time_s,replica,running,waiting,kv_usage,batch_tokens,up\n", f);
    size_t n;
    const sv_sample_t *s = sv_metrics_samples(res->metrics, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.9g,%d,%d,%d,%.6f,%d,%d\n", s[i].t, s[i].replica, s[i].running, s[i].waiting,
                (double)s[i].kv_usage, s[i].batch_tokens, s[i].up);
    return close_out(f, path, err);
}

int sv_report_cluster_series(const sv_result_t *res, sv_cluster_series_t *out, sv_error_t *err)
{
    memset(out, 0, sizeof *out);
    size_t ns;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &ns);
    int R = res->replicas;
    size_t T = R > 0 ? ns / (size_t)R : 0;
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    int slo = !isnan(c->slo_ttft_ms) || !isnan(c->slo_tpot_ms) || !isnan(c->slo_e2el_ms);
    out->n = T;
    out->npools = res->npools;
    out->t = calloc(T + 1, sizeof *out->t);
    out->arrival_rate = calloc(T + 1, sizeof *out->arrival_rate);
    out->up = calloc((T + 1) * SV_MAX_POOLS, sizeof *out->up);
    out->waiting = calloc(T + 1, sizeof *out->waiting);
    out->running = calloc(T + 1, sizeof *out->running);
    out->kv_usage = calloc(T + 1, sizeof *out->kv_usage);
    out->attainment = calloc(T + 1, sizeof *out->attainment);
    double *good = calloc(T + 1, sizeof *good), *all = calloc(T + 1, sizeof *all);
    if (!out->t || !out->arrival_rate || !out->up || !out->waiting || !out->running ||
        !out->kv_usage || !out->attainment || !good || !all) {
        free(good);
        free(all);
        sv_cluster_series_free(out);
        return sv_errorf(err, SV_ENOMEM, "out of memory for the cluster time series");
    }
    for (size_t k = 0; k < T; k++) {
        const sv_sample_t *row = &sm[k * (size_t)R];
        int nup = 0;
        out->t[k] = row[0].t;
        for (int i = 0; i < R; i++) {
            if (!row[i].up) continue;
            nup++;
            out->up[(size_t)res->rpool[i] * (T + 1) + k] += 1;
            out->waiting[k] += row[i].waiting;
            out->running[k] += row[i].running;
            out->kv_usage[k] += row[i].kv_usage;
        }
        out->kv_usage[k] = nup ? out->kv_usage[k] / nup : 0.0;
    }
    /* Requests by the sample interval they arrived in: (t[k-1], t[k]]. */
    for (size_t i = 0; i < res->pool.n && T > 1; i++) {
        const sv_req_t *r = &res->pool.r[i];
        size_t lo = 0, hi = T - 1;
        if (r->arrival > out->t[T - 1]) continue;
        while (lo < hi) { /* the first sample at or after the arrival */
            size_t mid = (lo + hi) / 2;
            if (out->t[mid] >= r->arrival)
                hi = mid;
            else
                lo = mid + 1;
        }
        all[lo] += 1;
        if (slo && r->state == SV_RQ_DONE) {
            double t = sv_req_ttft(r), lat = sv_req_e2el(r), tp = sv_req_tpot(r);
            good[lo] += (isnan(c->slo_ttft_ms) || c->slo_ttft_ms / 1000.0 >= t) &&
                        (isnan(c->slo_tpot_ms) || c->slo_tpot_ms / 1000.0 >= tp) &&
                        (isnan(c->slo_e2el_ms) || c->slo_e2el_ms / 1000.0 >= lat);
        }
    }
    for (size_t k = 0; k < T; k++) {
        double dt = k > 0 ? out->t[k] - out->t[k - 1] : 0.0;
        out->arrival_rate[k] = dt > 0 ? all[k] / dt : 0.0;
        out->attainment[k] = slo && all[k] > 0 ? good[k] / all[k] : NAN;
    }
    free(good);
    free(all);
    return 0;
}

void sv_cluster_series_free(sv_cluster_series_t *c)
{
    free(c->t);
    free(c->arrival_rate);
    free(c->up);
    free(c->waiting);
    free(c->running);
    free(c->kv_usage);
    free(c->attainment);
    memset(c, 0, sizeof *c);
}

int sv_report_cluster_csv(const sv_result_t *res, const char *path, sv_error_t *err)
{
    sv_cluster_series_t c;
    int rc = sv_report_cluster_series(res, &c, err);
    if (rc) return rc;
    FILE *f = open_out(path, err);
    if (!f) {
        sv_cluster_series_free(&c);
        return SV_EIO;
    }
    fputs("time_s,arrival_rate", f);
    for (int p = 0; p < res->npools; p++)
        fprintf(f, ",replicas_up_%s", res->pools[p].cfg->name);
    fputs(",waiting,running,kv_usage,attainment\n", f);
    for (size_t k = 0; k < c.n; k++) {
        fprintf(f, "%.9g,%.6g", c.t[k], c.arrival_rate[k]);
        for (int p = 0; p < res->npools; p++)
            fprintf(f, ",%.0f", c.up[(size_t)p * (c.n + 1) + k]);
        fprintf(f, ",%.0f,%.0f,%.6f,", c.waiting[k], c.running[k], c.kv_usage[k]);
        if (!isnan(c.attainment[k])) fprintf(f, "%.6f", c.attainment[k]);
        fputc('\n', f);
    }
    sv_cluster_series_free(&c);
    return close_out(f, path, err);
}

/* ---- Prometheus ---------------------------------------------------------------------------- */

static const double b_ttft[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
                                1.0,   2.5,   5.0,  7.5,  10,   20,   40,   80,  160,  640, 2560};
static const double b_itl[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
                               0.75, 1.0,   2.5,  5.0,   7.5, 10,   20,  40,  80};
static const double b_req[] = {0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5,    10,  15,
                               20,  30,  40,  50,  60,  120, 240, 480, 960, 1920, 7680};

#define NB(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* vLLM's histograms: name, help, buckets, and the per-request value observed (NULL: the
 * request's inter-token latencies, one observation each). */
static double h_queue(const sv_req_t *r)
{
    return r->scheduled - r->start;
}
static double h_prefill(const sv_req_t *r)
{
    return r->prefill_end - r->scheduled;
}
/* From the prompt's KV to the last token: prefill + decode = inference, as a replica sees
 * it. Colocated, prefill_end is the first token and this is metrics.c's decode phase; with a
 * split it also holds the hand-off, which the summary breaks out (metrics.c's ph_decode). */
static double h_decode(const sv_req_t *r)
{
    return r->last_token - r->prefill_end;
}
static double h_inference(const sv_req_t *r)
{
    return r->last_token - r->scheduled;
}

static const struct {
    const char *name, *help;
    const double *b;
    int nb;
    double (*get)(const sv_req_t *r);
    int multi_token_only; /* observed only for requests with more than one output token */
} HISTS[] = {
    {"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", b_ttft,
     NB(b_ttft), sv_req_ttft, 0},
    {"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", b_itl,
     NB(b_itl), NULL, 0},
    {"vllm:request_time_per_output_token_seconds",
     "Histogram of time_per_output_token_seconds per request.", b_itl, NB(b_itl), sv_req_tpot, 1},
    {"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", b_req,
     NB(b_req), sv_req_e2el, 0},
    {"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
     b_req, NB(b_req), h_queue, 0},
    {"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
     b_req, NB(b_req), h_prefill, 0},
    {"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
     b_req, NB(b_req), h_decode, 0},
    {"vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
     b_req, NB(b_req), h_inference, 0},
};
enum { NH = NB(HISTS) };

int sv_report_prom_histogram(const char *name, const char **help, const double **bounds, int *n)
{
    for (int k = 0; k < NH; k++)
        if (strcmp(HISTS[k].name, name) == 0) {
            *help = HISTS[k].help;
            *bounds = HISTS[k].b;
            *n = HISTS[k].nb;
            return 0;
        }
    return SV_ENOTFOUND;
}

/* What the gauges and counters read, per replica. */
typedef struct prom {
    const sv_result_t *res;
    const sv_sample_t *last;     /* the last sample of every replica, or NULL */
    double *prompt, *gen, *ok;   /* per replica: prompt and generated tokens, successes */
    double *count[NH], *sum[NH]; /* histograms: per replica x (nb + 1) buckets, and sums */
} prom_t;

static double g_running(const prom_t *p, int e)
{
    return p->last ? p->last[e].running : 0;
}
static double g_waiting(const prom_t *p, int e)
{
    return p->last ? p->last[e].waiting : 0;
}
static double g_kv(const prom_t *p, int e)
{
    return p->last ? p->last[e].kv_usage : 0;
}
static double g_preempt(const prom_t *p, int e)
{
    return (double)p->res->rstats[e].preemptions;
}
static double g_prompt(const prom_t *p, int e)
{
    return p->prompt[e];
}
static double g_gen(const prom_t *p, int e)
{
    return p->gen[e];
}
static double g_ok(const prom_t *p, int e)
{
    return p->ok[e];
}
static double g_pq(const prom_t *p, int e)
{
    return p->res->rstats[e].prefix_queries;
}
static double g_ph(const prom_t *p, int e)
{
    return p->res->rstats[e].prefix_hits;
}

/* vLLM's gauges and counters: name, help, type, value, and an extra label. */
static const struct {
    const char *name, *help, *type;
    double (*get)(const prom_t *p, int e);
    const char *label;
} GAUGES[] = {
    {"vllm:num_requests_running", "Number of requests in model execution batches.", "gauge",
     g_running, ""},
    {"vllm:num_requests_waiting", "Number of requests waiting to be processed.", "gauge", g_waiting,
     ""},
    {"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", "gauge", g_kv, ""},
    {"vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", "counter",
     g_preempt, ""},
    {"vllm:prompt_tokens_total", "Number of prefill tokens processed.", "counter", g_prompt, ""},
    {"vllm:generation_tokens_total", "Number of generation tokens processed.", "counter", g_gen,
     ""},
    {"vllm:request_success_total", "Count of successfully processed requests.", "counter", g_ok,
     ",finished_reason=\"length\""},
    {"vllm:prefix_cache_queries_total",
     "Prefix cache queries, in terms of number of queried tokens.", "counter", g_pq, ""},
    {"vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
     "counter", g_ph, ""},
};

static void hist_add(prom_t *p, int h, int rep, double v)
{
    double *c = p->count[h] + (size_t)rep * (HISTS[h].nb + 1);
    int i = 0;
    while (i < HISTS[h].nb && v > HISTS[h].b[i])
        i++;
    c[i] += 1.0; /* cumulated when written */
    p->sum[h][rep] += v;
}

/* Every completed request's observations, by the replica that served it. */
static int prom_collect(prom_t *p)
{
    const sv_reqpool_t *pool = &p->res->pool;
    for (size_t i = 0; i < pool->n; i++) {
        const sv_req_t *r = &pool->r[i];
        if (r->state != SV_RQ_DONE) continue;
        int e = r->replica;
        p->ok[e] += 1;
        p->prompt[e] += r->input;
        p->gen[e] += r->output;
        for (int h = 0; h < NH; h++) {
            if (HISTS[h].get) {
                if (!HISTS[h].multi_token_only || r->output > 1) hist_add(p, h, e, HISTS[h].get(r));
                continue;
            }
            double *itl;
            size_t n;
            if (sv_metrics_itls(p->res->metrics, pool, (int32_t)i, &itl, &n)) return SV_ENOMEM;
            for (size_t k = 0; k < n; k++)
                hist_add(p, h, e, itl[k]);
            free(itl);
        }
    }
    return 0;
}

/* vLLM's speculative-decoding counters, for the replicas that draft (sv_replica_spec_counters). */
static void prom_spec(const prom_t *p, FILE *f, const char *model)
{
    static const char *const name[] = {"vllm:spec_decode_num_drafts_total",
                                       "vllm:spec_decode_num_draft_tokens_total",
                                       "vllm:spec_decode_num_accepted_tokens_total",
                                       "vllm:spec_decode_num_accepted_tokens_per_pos_total"};
    static const char *const help[] = {"Number of spec decoding drafts.", "Number of draft tokens.",
                                       "Number of accepted tokens.",
                                       "Number of accepted tokens per draft position."};
    const sv_result_t *res = p->res;
    char b1[40];
    for (int n = 0; n < 4; n++) {
        int header = 0;
        for (int e = 0; e < res->replicas; e++) {
            sv_spec_counters_t c;
            sv_replica_spec_counters(&res->rstats[e], &res->pools[res->rpool[e]].perf.set, &c);
            if (c.k == 0) continue;
            if (!header) fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name[n], help[n], name[n]);
            header = 1;
            double v = n == 0 ? c.drafts : n == 1 ? c.draft_tokens : c.accepted;
            if (n < 3) {
                fprintf(f, "%s{engine=\"%d\",model_name=\"%s\"} %s\n", name[n], e, model,
                        sv__fmt_double(v, b1));
                continue;
            }
            for (int i = 0; i < c.k; i++)
                fprintf(f, "%s{engine=\"%d\",model_name=\"%s\",position=\"%d\"} %s\n", name[n], e,
                        model, i, sv__fmt_double(c.per_pos[i], b1));
        }
    }
}

static void prom_write(const prom_t *p, FILE *f)
{
    const sv_result_t *res = p->res;
    const char *model = res->sc->model.hf_id[0] ? res->sc->model.hf_id : res->sc->model.name;
    char lab[256], b1[40], b2[40];
    for (size_t g = 0; g < sizeof GAUGES / sizeof GAUGES[0]; g++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", GAUGES[g].name, GAUGES[g].help, GAUGES[g].name,
                GAUGES[g].type);
        for (int e = 0; e < res->replicas; e++) {
            snprintf(lab, sizeof lab, "engine=\"%d\",model_name=\"%s\"", e, model);
            fprintf(f, "%s{%s%s} %s\n", GAUGES[g].name, lab, GAUGES[g].label,
                    sv__fmt_double(GAUGES[g].get(p, e), b1));
        }
    }
    for (int k = 0; k < NH; k++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", HISTS[k].name, HISTS[k].help,
                HISTS[k].name);
        for (int e = 0; e < res->replicas; e++) {
            snprintf(lab, sizeof lab, "engine=\"%d\",model_name=\"%s\"", e, model);
            const double *c = p->count[k] + (size_t)e * (HISTS[k].nb + 1);
            double cum = 0;
            for (int i = 0; i < HISTS[k].nb; i++) {
                cum += c[i];
                fprintf(f, "%s_bucket{%s,le=\"%s\"} %s\n", HISTS[k].name, lab,
                        sv__fmt_double(HISTS[k].b[i], b1), sv__fmt_double(cum, b2));
            }
            cum += c[HISTS[k].nb];
            fprintf(f, "%s_bucket{%s,le=\"+Inf\"} %s\n", HISTS[k].name, lab,
                    sv__fmt_double(cum, b1));
            fprintf(f, "%s_count{%s} %s\n", HISTS[k].name, lab, sv__fmt_double(cum, b1));
            fprintf(f, "%s_sum{%s} %s\n", HISTS[k].name, lab, sv__fmt_double(p->sum[k][e], b1));
        }
    }
    prom_spec(p, f, model);
}

int sv_report_prometheus(const sv_result_t *res, const char *path, sv_error_t *err)
{
    size_t R = (size_t)res->replicas, ns;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &ns);
    prom_t p = {.res = res, .last = ns >= R ? sm + ns - R : NULL};
    p.prompt = calloc(R, sizeof *p.prompt);
    p.gen = calloc(R, sizeof *p.gen);
    p.ok = calloc(R, sizeof *p.ok);
    int rc = (!p.prompt || !p.gen || !p.ok) ? SV_ENOMEM : 0;
    for (int k = 0; k < NH && !rc; k++) {
        p.count[k] = calloc(R * (size_t)(HISTS[k].nb + 1), sizeof *p.count[k]);
        p.sum[k] = calloc(R, sizeof *p.sum[k]);
        if (!p.count[k] || !p.sum[k]) rc = SV_ENOMEM;
    }
    if (!rc) rc = prom_collect(&p);
    if (rc) {
        sv_errorf(err, rc, "out of memory writing %s", path);
    } else {
        FILE *f = open_out(path, err);
        if (!f) {
            rc = SV_EIO;
        } else {
            prom_write(&p, f);
            rc = close_out(f, path, err);
        }
    }
    for (int k = 0; k < NH; k++) {
        free(p.count[k]);
        free(p.sum[k]);
    }
    free(p.prompt);
    free(p.gen);
    free(p.ok);
    return rc;
}
