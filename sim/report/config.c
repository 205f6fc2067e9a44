/*
 * The configuration block of a run (see include/servesim/report/config.h): the rows built
 * once from the scenario and the result, and the terminal writer. The JSON writer lives
 * with the rest of the JSON (report.c), the HTML one with the run report (html.c).
 */
#include "servesim/report/config.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec_int.h"
#include "report/report_int.h"
#include "servesim/cluster/finance.h"
#include "servesim/cluster/schema.h"
#include "servesim/metrics/contract.h"

#ifndef SERVESIM_VERSION
#define SERVESIM_VERSION "0"
#endif

typedef struct builder {
    sv_run_config_t *c;
    char section[80];
    int oom;
} builder_t;

static sv_cfg_row_t *add(builder_t *b, const char *key, const char *label, sv_cfgv_kind_t kind,
                         double num)
{
    sv_run_config_t *c = b->c;
    if (b->oom) return NULL;
    if (SV_GROW(c->rows, c->cap, (size_t)c->n + 1)) {
        b->oom = 1;
        return NULL;
    }
    sv_cfg_row_t *r = &c->rows[c->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->section, sizeof r->section, "%s", b->section);
    snprintf(r->key, sizeof r->key, "%s", key);
    snprintf(r->label, sizeof r->label, "%s", label);
    r->kind = kind;
    r->num = num;
    return r;
}

/* A text value. */
static void text(builder_t *b, const char *key, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void text(builder_t *b, const char *key, const char *label, const char *fmt, ...)
{
    sv_cfg_row_t *r = add(b, key, label, SV_CFGV_TEXT, NAN);
    if (!r) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->text, sizeof r->text, fmt, ap);
    va_end(ap);
}

/* A number: the JSON gets v, people read it with %.4g and the unit. */
static void num(builder_t *b, const char *key, const char *label, double v, const char *unit)
{
    sv_cfg_row_t *r = add(b, key, label, SV_CFGV_NUM, v);
    if (!r) return;
    if (isinf(v))
        snprintf(r->text, sizeof r->text, "inf");
    else
        snprintf(r->text, sizeof r->text, "%.4g%s%s", v, unit && *unit ? " " : "",
                 unit ? unit : "");
}

static void integer(builder_t *b, const char *key, const char *label, long v)
{
    sv_cfg_row_t *r = add(b, key, label, SV_CFGV_INT, (double)v);
    if (r) snprintf(r->text, sizeof r->text, "%ld", v);
}

static void flag(builder_t *b, const char *key, const char *label, int v)
{
    sv_cfg_row_t *r = add(b, key, label, SV_CFGV_BOOL, v ? 1.0 : 0.0);
    if (r) snprintf(r->text, sizeof r->text, "%s", v ? "on" : "off");
}

static void section(builder_t *b, const char *s)
{
    snprintf(b->section, sizeof b->section, "%s", s);
}

/* A length distribution in words: "lognormal mean 300 std 300, in [4, 1800]". */
static void lendist_text(const sv_lendist_t *d, char *buf, size_t n)
{
    char clamp[64] = "";
    if (d->kind != SV_LEN_UNIFORM && (d->min > 1 || d->max < 10000000))
        snprintf(clamp, sizeof clamp, ", in [%ld, %ld]", d->min, d->max);
    switch (d->kind) {
    case SV_LEN_FIXED:
        snprintf(buf, n, "fixed %.0f%s", d->value, clamp);
        break;
    case SV_LEN_UNIFORM:
        snprintf(buf, n, "uniform [%ld, %ld]", d->lo, d->hi);
        break;
    case SV_LEN_NORMAL:
    case SV_LEN_LOGNORMAL:
        snprintf(buf, n, "%s mean %.4g std %.4g%s",
                 d->kind == SV_LEN_NORMAL ? "normal" : "lognormal", d->mean, d->std, clamp);
        break;
    default:
        snprintf(buf, n, "empirical, %zu samples%s", d->nsamples, clamp);
        break;
    }
}

/* An SLO in words: "TTFT 500 ms, TPOT 50 ms per request; ttft p99 4000 ms" ("" when none). */
static void slo_text(const sv_slo_t *slo, char *buf, size_t n)
{
    static const char *const M[] = {"TTFT", "TPOT", "ITL", "E2EL"};
    double thr[4] = {slo->ttft_ms, slo->tpot_ms, NAN, slo->e2el_ms};
    size_t o = 0;
    buf[0] = '\0';
    for (int k = 0; k < 4 && o < n; k++)
        if (!isnan(thr[k]))
            o += (size_t)snprintf(buf + o, n - o, "%s%s %g ms", o ? ", " : "", M[k], thr[k]);
    if (o > 0 && o < n) o += (size_t)snprintf(buf + o, n - o, " per request");
    for (int i = 0; i < slo->nbudgets && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s p%g %g ms",
                              o == 0   ? ""
                              : i == 0 ? "; "
                                       : ", ",
                              sv_slo_metric_name(slo->budget[i].metric), slo->budget[i].pct,
                              slo->budget[i].ms);
}

/* The name the settings schema gives an enumerated key's value, as the scenario writes it. */
static const char *named(const char *section, const char *key, int value)
{
    const char *s = sv_scenario_enum_name(section, key, value);
    return s ? s : "none";
}

static void pool_rows(builder_t *b, const sv_result_t *res, int p)
{
    const sv_pool_result_t *pr = &res->pools[p];
    const sv_pool_cfg_t *pc = pr->cfg;
    const sv_engine_cfg_t *e = &pc->engine;
    char sec[80];
    snprintf(sec, sizeof sec, "pools.%s", pc->name);
    section(b, sec);
    text(b, "role", "role", "%s", sv_role_name(pc->role));
    text(b, "gpu", "GPU", "%s", pc->gpu.name);
    integer(b, "replicas", pc->autoscale.enabled ? "replicas (autoscaler max)" : "replicas",
            pr->count);
    integer(b, "tp", "tensor parallel", pr->perf.set.tp);
    integer(b, "pp", "pipeline stages", pr->perf.set.pp > 0 ? pr->perf.set.pp : 1);
    num(b, "gpus", "GPUs", pr->gpus, "");
    text(b, "weight_dtype", "weight dtype", "%s", sv_dtype_name(pr->perf.set.weight_dtype));
    text(b, "kv_cache_dtype", "KV cache dtype", "%s", sv_dtype_name(pr->perf.set.kv_dtype));
    if (pr->perf.draft) /* speculative: draft */
        text(b, "speculative_model", "draft model", "%s, %d draft tokens a step",
             pr->perf.draft->model.name, sv_spec_k(&pr->perf.set));
    if (pc->engine_name[0]) text(b, "engine", "engine", "%s", pc->engine_name);
    text(b, "engine_profile", "engine profile", "%s",
         pr->perf.set.engine[0] ? pr->perf.set.engine : "none");
    text(b, "scheduler", "scheduler", "%s", sv_sched_name(e->scheduler));
    if (pc->engine_note[0]) text(b, "engine_note", "note", "%s", pc->engine_note);
    if (e->priority_policy) text(b, "scheduling_policy", "scheduling policy", "priority");
    integer(b, "max_num_seqs", "max_num_seqs", e->max_num_seqs);
    integer(b, "max_num_batched_tokens", "max_num_batched_tokens", e->max_num_batched_tokens);
    /* only when off (engine.chunked_prefill: false, trtllm): whole prompts a step */
    if (e->no_chunked_prefill) flag(b, "chunked_prefill", "chunked prefill", 0);
    integer(b, "block_size", "block size (tokens)", pr->mem.block_size);
    integer(b, "kv_blocks_per_replica", "KV blocks per replica", pr->mem.kv_blocks);
    integer(b, "max_model_len", "max_model_len", pr->max_model_len);
    num(b, "gpu_memory_utilization", "gpu_memory_utilization", pr->perf.set.gpu_memory_utilization,
        "");
    text(b, "preemption", "preemption", "%s", named("engine", "preemption", e->preempt_swap));
    flag(b, "prefix_caching", "prefix caching", e->prefix_caching);
    flag(b, "async_scheduling", "async scheduling", e->async_scheduling);
    flag(b, "overlap_schedule", "overlap schedule", e->overlap_schedule > 0);
    num(b, "api_server_ms", "API server path", e->api_server * 1e3, "ms");
    if (pc->profile_defaulted)
        text(b, "profile_defaults", "from the engine profile", "%s%s%s (profile %s, scheduler %s)",
             pc->profile_defaulted & SV_PROFILE_ASYNC ? "async_scheduling" : "",
             pc->profile_defaulted == (SV_PROFILE_ASYNC | SV_PROFILE_API_SERVER) ? ", " : "",
             pc->profile_defaulted & SV_PROFILE_API_SERVER ? "api_server_ms" : "",
             pr->perf.set.engine, sv_sched_name(e->scheduler));
    if (e->max_queue > 0) integer(b, "max_queue", "max queue", e->max_queue);
    num(b, "price_per_gpu_hour_usd", "price per GPU-hour", pc->gpu.price_per_hour, "USD");
    if (pc->autoscale.enabled) {
        const sv_autoscale_cfg_t *a = &pc->autoscale;
        text(b, "autoscaler", "autoscaler", "%s target %.4g, %d..%d replicas (%d at start)",
             named("autoscaler", "policy", (int)a->policy), a->target, a->min, a->max, a->initial);
    }
}

/* The scenario, model and serving sections: what runs, on how many GPUs, routed how. */
static void cfg_serving(builder_t *b, const sv_result_t *res)
{
    const sv_scenario_t *sc = res->sc;
    section(b, "");
    text(b, "scenario", "scenario", "%s", sc->name);
    text(b, "servesim_version", "servesim version", "%s", SERVESIM_VERSION);
    integer(b, "seed", "seed", (long)sc->seed);

    section(b, "model");
    text(b, "name", "model", "%s", sc->model.name);
    if (sc->model.hf_id[0]) text(b, "hf_id", "Hugging Face id", "%s", sc->model.hf_id);
    num(b, "parameters_b", "parameters (billions)", sv_model_param_count(&sc->model) / 1e9, "");
    integer(b, "layers", "layers", sc->model.layers);
    if (sc->model.experts > 0)
        text(b, "experts", "experts", "%d routed, %d per token", sc->model.experts,
             sc->model.experts_per_tok);

    section(b, "serving");
    text(b, "mode", "serving", "%s", sc->disaggregated ? "disaggregated" : "colocated");
    num(b, "gpus", "GPUs (all pools)", res->gpus, "");
    text(b, "router", sc->disaggregated ? "router (to prefill)" : "router", "%s",
         sv_route_names[sc->route]);
    if (sc->router_latency > 0)
        num(b, "router_latency_ms", "router latency", sc->router_latency * 1e3, "ms");
    if (sc->disaggregated) {
        text(b, "decode_router", "decode router", "%s", sv_route_names[sc->decode_route]);
        text(b, "first_token", "first token made on", "%s",
             sc->first_token_at_decode ? "decode" : "prefill");
    }
}

/* The kv_link section of a disaggregated scenario: the link carrying KV caches from prefill to
   decode. */
static void cfg_kv_link(builder_t *b, const sv_scenario_t *sc)
{
    section(b, "kv_link");
    text(b, "kind", "KV link", "%s", sc->link.kind);
    num(b, "bandwidth_gb_s_per_gpu", "bandwidth per GPU", sc->link.bw_per_gpu / 1e9, "GB/s");
    num(b, "latency_us", "latency per transfer", sc->link.latency * 1e6, "us");
    text(b, "sharing", "sharing", "%s", named("disaggregation.kv_link", "sharing", sc->link.fifo));
    text(b, "overlap", "overlap", "%s", sc->link.overlap ? "layerwise" : "none");
}

/* The workload section: the trace or the synthetic arrivals and lengths, and the run's limits. */
static void cfg_workload(builder_t *b, const sv_scenario_t *sc)
{
    const sv_workload_cfg_t *w = &sc->workload;
    char buf[256];
    section(b, "workload");
    if (w->has_trace) {
        text(b, "trace", "trace", "%s", w->trace.path);
        if (w->trace.mean_rate > 0)
            num(b, "trace_mean_rate", "rescaled to", w->trace.mean_rate, "req/s");
        else if (w->trace.speedup != 1.0)
            num(b, "trace_speedup", "speedup", w->trace.speedup, "x");
    } else {
        if (w->profile.kind != SV_PROFILE_NONE)
            text(b, "rate_profile", "rate profile", "%s, peak %.4g req/s",
                 named("workload.rate_profile", "kind", (int)w->profile.kind),
                 sv_profile_peak(&w->profile));
        else
            num(b, "rate", sc->sessions.given ? "rate (sessions started)" : "rate", w->rate,
                sc->sessions.given ? "per s" : "req/s");
        num(b, "burstiness", "burstiness (gamma shape)", w->burstiness, "");
        if (w->nclasses == 0) { /* else each class has its lengths, below */
            lendist_text(&w->input, buf, sizeof buf);
            text(b, "input", sc->sessions.given ? "input tokens (first call)" : "input tokens",
                 "%s", buf);
            lendist_text(&w->output, buf, sizeof buf);
            text(b, "output", "output tokens", "%s", buf);
        }
    }
    if (w->num_requests > 0) integer(b, "num_requests", "requests", w->num_requests);
    if (w->duration > 0) num(b, "duration_s", "duration", w->duration, "s");
    if (w->max_concurrency > 0)
        integer(b, "max_concurrency", "max concurrency", w->max_concurrency);
    if (w->timeout > 0) num(b, "timeout_s", "client timeout", w->timeout, "s");
    if (sc->horizon > 0) num(b, "horizon_s", "horizon", sc->horizon, "s");
}

/* The sessions section of a multi-call workload: count, shape, calls, think time and messages. */
static void cfg_sessions(builder_t *b, const sv_session_cfg_t *ss)
{
    char buf[256];
    section(b, "sessions");
    integer(b, "count", "sessions", ss->count);
    text(b, "shape", "shape", "%s", named("workload.sessions", "shape", ss->shape));
    if (ss->shape != SV_SESSION_FANOUT)
        flag(b, "history", "prompts carry the history", ss->history);
    lendist_text(&ss->turns, buf, sizeof buf);
    text(b, "turns", "calls per session", "%s", buf);
    if (ss->has_think) {
        lendist_text(&ss->think_ms, buf, sizeof buf);
        text(b, "think_time_ms", "think time (ms)", "%s", buf);
    }
    if (ss->has_message) {
        lendist_text(&ss->message, buf, sizeof buf);
        text(b, "message", "later calls' message tokens", "%s", buf);
    }
}

/* The network and cost sections, each when the scenario enables it. */
static void cfg_network_cost(builder_t *b, const sv_scenario_t *sc)
{
    char buf[256];
    if (sc->network.enabled) {
        section(b, "network");
        sv__report_network_text(&sc->network, buf, sizeof buf);
        text(b, "rtt", "client-server round trip", "%s", buf);
    }
    if (sc->finance.enabled) {
        const sv_finance_cfg_t *fc = &sc->finance;
        section(b, "cost");
        num(b, "host_w_per_server", "host power per server", fc->host_w_per_server, "W");
        num(b, "gpus_per_server", "GPUs per server", fc->gpus_per_server, "");
        num(b, "pue", "PUE", fc->pue, "");
        num(b, "energy_usd_per_kwh", "energy price", fc->energy_usd_per_kwh, "USD/kWh");
        if (fc->purchase)
            text(b, "gpu_purchase", "GPU purchase",
                 "%.6g USD per GPU over %.4g years at %.4g %% use", fc->purchase_usd, fc->years,
                 100 * fc->utilisation);
    }
}

/* One classes.NAME section per request class: share, priority, lengths and SLO. */
static void cfg_classes(builder_t *b, const sv_scenario_t *sc)
{
    const sv_workload_cfg_t *w = &sc->workload;
    const sv_metrics_cfg_t *m = &sc->metrics;
    char buf[256];
    for (int k = 0; k < w->nclasses && k < m->nclasses; k++) {
        const sv_class_cfg_t *cl = &w->classes[k];
        char sec[80];
        snprintf(sec, sizeof sec, "classes.%s", m->class_name[k]);
        section(b, sec);
        num(b, "share", "share", cl->share, "");
        integer(b, "priority", "priority", cl->priority);
        lendist_text(&cl->input, buf, sizeof buf);
        text(b, "input", "input tokens", "%s", buf);
        lendist_text(&cl->output, buf, sizeof buf);
        text(b, "output", "output tokens", "%s", buf);
        sv_slo_t slo;
        sv_metrics_slo(m, k, &slo);
        slo_text(&slo, buf, sizeof buf);
        text(b, "slo", "SLO", "%s", buf[0] ? buf : "none");
    }
}

/* The slo section: the top-level thresholds and attainment target, or per class, and the
   percentile budgets. */
static void cfg_slo(builder_t *b, const sv_metrics_cfg_t *m)
{
    char buf[256];
    section(b, "slo");
    int any = 0;
    if (!isnan(m->slo_ttft_ms)) num(b, "ttft_ms", "TTFT", m->slo_ttft_ms, "ms"), any = 1;
    if (!isnan(m->slo_tpot_ms)) num(b, "tpot_ms", "TPOT", m->slo_tpot_ms, "ms"), any = 1;
    if (!isnan(m->slo_e2el_ms)) num(b, "e2el_ms", "E2EL", m->slo_e2el_ms, "ms"), any = 1;
    if (any) {
        num(b, "attainment", "attainment target", m->attainment, "");
        if (!b->oom)
            snprintf(b->c->rows[b->c->n - 1].text, sizeof b->c->rows[0].text, "%.4g %%",
                     100 * m->attainment);
    } else if (m->nclasses > 0) {
        text(b, "slos", "SLOs", "per class");
        num(b, "attainment", "attainment target", m->attainment, "");
        if (!b->oom)
            snprintf(b->c->rows[b->c->n - 1].text, sizeof b->c->rows[0].text, "%.4g %%",
                     100 * m->attainment);
    } else if (m->nbudgets == 0)
        text(b, "slos", "SLOs", "none");
    if (m->nbudgets > 0) {
        sv_slo_t top = {.ttft_ms = NAN, .tpot_ms = NAN, .e2el_ms = NAN, .nbudgets = m->nbudgets};
        memcpy(top.budget, m->budgets, sizeof top.budget);
        slo_text(&top, buf, sizeof buf);
        text(b, "budgets", "percentile budgets", "%s", buf);
    }
}

/* The metrics section: the reported percentiles and the time-series sample interval. */
static void cfg_metrics(builder_t *b, const sv_metrics_cfg_t *m)
{
    char buf[256];
    section(b, "metrics");
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < m->npercentiles && o < sizeof buf - 32; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%g", i ? ", " : "", m->percentiles[i]);
    text(b, "percentiles", "percentiles", "%s", buf);
    num(b, "sample_interval_s", "time-series sample interval", m->sample_interval, "s");
}

int sv_run_config(const sv_result_t *res, sv_run_config_t *out, sv_error_t *err)
{
    const sv_scenario_t *sc = res->sc;
    memset(out, 0, sizeof *out);
    builder_t b = {.c = out};
    cfg_serving(&b, res);
    for (int p = 0; p < res->npools; p++)
        pool_rows(&b, res, p);
    if (sc->disaggregated) cfg_kv_link(&b, sc);
    cfg_workload(&b, sc);
    if (sc->sessions.given) cfg_sessions(&b, &sc->sessions);
    cfg_network_cost(&b, sc);
    cfg_classes(&b, sc);
    cfg_slo(&b, &sc->metrics);
    cfg_metrics(&b, &sc->metrics);
    if (b.oom) {
        sv_run_config_free(out);
        return sv_errorf(err, SV_ENOMEM, "out of memory for the configuration block");
    }
    return 0;
}

void sv_run_config_free(sv_run_config_t *c)
{
    free(c->rows);
    memset(c, 0, sizeof *c);
}

void sv_run_config_print(const sv_run_config_t *c, FILE *f)
{
    fputs("============ servesim: configuration =============\n", f);
    const char *cur = NULL;
    for (int i = 0; i < c->n; i++) {
        const sv_cfg_row_t *r = &c->rows[i];
        if (!cur || strcmp(cur, r->section) != 0) {
            cur = r->section;
            if (strncmp(cur, "pools.", 6) == 0)
                fprintf(f, "pool %s:\n", cur + 6);
            else if (strncmp(cur, "classes.", 8) == 0)
                fprintf(f, "class %s:\n", cur + 8);
            else if (*cur)
                fprintf(f, "%s:\n", cur);
        }
        char lab[80];
        snprintf(lab, sizeof lab, "%s:", r->label);
        fprintf(f, "%s%-*s %s\n", *r->section ? "  " : "", *r->section ? 38 : 40, lab, r->text);
    }
    fputs("==================================================\n", f);
}
