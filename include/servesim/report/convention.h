/*
 * Metric conventions of other benchmark tools (../shared/spec/metrics.md, "Other tools'
 * words for the same things"): one run reported with the definitions and the names of
 * vLLM's `vllm bench serve` (the default), NVIDIA GenAI-Perf, Ray LLMPerf or SGLang's
 * bench_serving, so that a simulated result sits next to a measured one of that tool.
 *
 * A table maps each convention to the metrics it reports: which per-request quantity each
 * is (defined once below over the request records), the tool's name for it, its unit and
 * the degrees of freedom of its std. The summary and JSON writers of the report layer read
 * the table; every output but vLLM's (which stays byte-identical to `vllm bench serve`)
 * states the convention it uses, and the JSON's "servesim" block carries it as a key.
 *
 * Ownership: functions read their inputs; statistics go into caller storage; files are
 * opened and closed here.
 */
#ifndef SERVESIM_CONVENTION_H
#define SERVESIM_CONVENTION_H

#include <stddef.h>
#include <stdio.h>

#include "servesim/base/error.h"
#include "servesim/cluster/sim.h"
#include "servesim/metrics/metrics.h"
#include "servesim/traffic/request.h"

typedef enum {
    SV_CONV_VLLM = 0,   /* vllm bench serve */
    SV_CONV_GENAI_PERF, /* NVIDIA GenAI-Perf / AIPerf */
    SV_CONV_LLMPERF,    /* Ray LLMPerf (token_benchmark_ray.py) */
    SV_CONV_SGLANG,     /* python -m sglang.bench_serving */
    SV_CONV_COUNT
} sv_convention_t;

/* What a reported metric is, over the completed requests (times in seconds):
 *   TTFT          first token - start                            one per request
 *   TPOT          (E2EL - TTFT) / (output - 1)                   requests with output > 1
 *   ITL           every gap between consecutive tokens, pooled   (vLLM's itl lists)
 *   E2EL          last token - start                             one per request
 *   ITL_WITH_TTFT E2EL / output (the TTFT counted in, LLMPerf)   one per request
 *   REQ_OUT_TPUT  output / E2EL, tokens/s seen by one request    one per request
 *   ISL, OSL      input and output lengths, tokens               one per request
 *   TTST          second token - first token (GenAI-Perf)        requests with output > 1
 *   TPS_USER      1 / TPOT, tokens/s one user sees (GenAI-Perf)  requests with output > 1
 *   CLIENT_QUEUE  start - arrival: the wait for the client's     one per request
 *                 concurrency slot (vLLM's client_queue_time)
 *   E2EL_QUEUE    E2EL + CLIENT_QUEUE                            one per request
 * and of the whole run (one value, the tool's "system" metrics):
 *   REQ_TPUT, OUT_TPUT  requests started, output tokens of the completed ones, per second
 *                       of GenAI-Perf's duration (last response - first request, over the
 *                       completed requests)
 *   REQ_COUNT           completed requests */
typedef enum {
    SV_CQ_TTFT = 0,
    SV_CQ_TPOT,
    SV_CQ_ITL,
    SV_CQ_E2EL,
    SV_CQ_ITL_WITH_TTFT,
    SV_CQ_REQ_OUT_TPUT,
    SV_CQ_ISL,
    SV_CQ_OSL,
    SV_CQ_TTST,
    SV_CQ_TPS_USER,
    SV_CQ_CLIENT_QUEUE,
    SV_CQ_E2EL_QUEUE,
    SV_CQ_REQ_TPUT,
    SV_CQ_OUT_TPUT,
    SV_CQ_REQ_COUNT,
    SV_CQ_COUNT
} sv_conv_quantity_t;

/* Whether q is one value of the whole run (SV_CQ_REQ_TPUT and after). */
int sv_conv_is_system(sv_conv_quantity_t q);

/*
 * vLLM's client_queue_time of request r (seconds): its start less the moment the client
 * created it (vllm/benchmarks/serve.py, limited_request_func). At a finite rate that is its
 * arrival; with rate inf and max_concurrency (servesim's closed loop, which makes each
 * request when a slot frees) vLLM creates every request at the start, t = 0, so it is the
 * start itself. Multi-turn sessions keep their arrival.
 */
double sv_conv_client_queue(const sv_scenario_t *sc, const sv_req_t *r);

/* One metric of a convention: the quantity, the tool's key (JSON) and label (printed), the
 * unit's name and the factor from the quantity's unit (s, tokens, tokens/s) to it. */
typedef struct sv_conv_metric {
    sv_conv_quantity_t q;
    const char *key;
    const char *label;
    const char *unit;
    double scale;
} sv_conv_metric_t;

typedef struct sv_convention_def {
    const char *name;        /* the --convention value */
    const char *tool;        /* the tool, in words */
    const char *definitions; /* what its names mean in vLLM's words (one line) */
    int ddof;                /* std: 0 population (numpy), 1 sample (pandas) */
    const double *pcts;      /* the percentiles it reports; NULL: the run's list */
    int npcts;
    const sv_conv_metric_t *metrics;
    int nmetrics;
} sv_convention_def_t;

/* The table row of convention c (NULL outside the enum). */
const sv_convention_def_t *sv_convention_get(sv_convention_t c);
/* "vllm", "genai-perf", "llmperf" or "sglang"; else SV_EINVAL naming what is accepted. */
int sv_convention_parse(const char *name, sv_convention_t *out, sv_error_t *err);

/* Statistics of one metric, in the metric's unit. An empty list gives zeros; std is 0
 * when there are no more values than ddof. */
typedef struct sv_conv_stat {
    double mean, median, std, min, max;
    double pct[SV_MAX_PCT + 4];
    long n;
} sv_conv_stat_t;

/* Statistics of quantity q over the completed (SV_RQ_DONE) requests r[0..n); for
 * SV_CQ_ITL the values are itl[0..nitl) (seconds, every gap of every completed request),
 * for SV_CQ_TTST, CLIENT_QUEUE and E2EL_QUEUE likewise (one per completed request, in
 * seconds, built by the caller). Not for system quantities.
 * Values are multiplied by scale; percentiles as numpy's (linear); std with ddof.
 * 0, or SV_ENOMEM. */
int sv_conv_stat(sv_conv_quantity_t q, const sv_req_t *r, size_t n, const double *itl, size_t nitl,
                 const double *pcts, int npcts, double scale, int ddof, sv_conv_stat_t *out,
                 sv_error_t *err);

/* The run's summary and result JSON in convention c. SV_CONV_VLLM is exactly
 * sv_report_summary() and sv_report_json(); the others print the tool's block (its names,
 * definitions and layout) with a "Metric convention:" line, then servesim's own block,
 * and write the tool's JSON layout with servesim's block (its "convention" key) in it. */
void sv_report_summary_as(const sv_result_t *res, sv_convention_t c, FILE *f);
int sv_report_json_as(const sv_result_t *res, sv_convention_t c, int detailed, const char *path,
                      sv_error_t *err);

#endif
