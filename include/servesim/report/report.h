/*
 * Reports of a run, for people and for the tools that read real benchmark results:
 *   - the summary exactly as `vllm bench serve` prints it (same labels, order, widths and
 *     conditional lines), followed by servesim's own block (queue/prefill/decode, KV
 *     usage, preemptions, failures by reason, cost and energy);
 *   - vLLM's result JSON with its key names (servesim's extra keys under "servesim", the
 *     run's configuration under "servesim.config": servesim/report/config.h);
 *     per-request lists only with detailed set, except "latencies", as vLLM does;
 *   - one CSV row per request, and the per-replica time series as CSV.
 * Output is a pure function of the result: two runs of the same scenario and seed give
 * byte-identical files. The JSON "date" is SOURCE_DATE_EPOCH when set, else fixed.
 *
 * Ownership: the functions only read the result; files are opened and closed here.
 */
#ifndef SERVESIM_REPORT_H
#define SERVESIM_REPORT_H

#include <stdio.h>

#include "servesim/base/error.h"
#include "servesim/cluster/sim.h"

void sv_report_summary(const sv_result_t *res, FILE *f);
/* A percentile as its labels spell it: "99" for 99.0, else the shortest text that reads
 * back as p ("99.9"), as vLLM's p_word does: "P" + this + " TTFT (ms)". */
void sv_report_pct_word(double p, char *buf, size_t n);
int sv_report_json(const sv_result_t *res, int detailed, const char *path, sv_error_t *err);
/* The same JSON text onto an open stream (the lab answers with it); the caller checks
 * and closes f. 0, or SV_ENOMEM when the configuration block cannot be built. */
int sv_report_json_stream(const sv_result_t *res, int detailed, FILE *f, sv_error_t *err);
int sv_report_requests_csv(const sv_result_t *res, const char *path, sv_error_t *err);
int sv_report_timeseries_csv(const sv_result_t *res, const char *path, sv_error_t *err);

/* The cluster over time, one row per time-series sample (metrics.sample_interval_s):
 * arrivals per second over the interval before it, replicas up per pool, requests
 * waiting and running, mean KV usage of the replicas up, and the SLO attainment of the
 * requests that arrived in the interval (NAN: none, or no SLO). Arrays owned by the
 * struct, freed with sv_cluster_series_free(); up is npools blocks of n + 1 values. */
typedef struct sv_cluster_series {
    size_t n;
    int npools;
    double *t, *arrival_rate, *up, *waiting, *running, *kv_usage, *attainment;
} sv_cluster_series_t;
int sv_report_cluster_series(const sv_result_t *res, sv_cluster_series_t *out, sv_error_t *err);
void sv_cluster_series_free(sv_cluster_series_t *c);

/* --cluster-csv: the series above as CSV (attainment empty where undefined). */
int sv_report_cluster_csv(const sv_result_t *res, const char *path, sv_error_t *err);

/*
 * vLLM's Prometheus metrics as a text exposition at the end of the run, one series per
 * replica (labels model_name and engine): the request, token and preemption counters and the
 * latency histograms with vLLM's bucket bounds, over the requests each replica completed
 * (a disaggregated request counts where it was decoded). Gauges show their last sample.
 */
int sv_report_prometheus(const sv_result_t *res, const char *path, sv_error_t *err);
/* vLLM's histogram `name` (vllm:time_to_first_token_seconds, ...) as sv_report_prometheus
 * writes it: its help text and bucket bounds (static). 0, or SV_ENOTFOUND. */
int sv_report_prom_histogram(const char *name, const char **help, const double **bounds, int *n);

/*
 * The same metrics over time (--prometheus-series): one scrape of every replica at each
 * time-series sample (metrics.sample_interval_s) after the start, as OpenMetrics text
 * with a timestamp (epoch + simulated seconds, > 0) on every value: the running/waiting/KV gauges as sampled, the
 * success and token counters and the TTFT, E2E and TPOT histograms over the requests each
 * replica had completed by then (TTFT observed at the first token, the others at the
 * last). Ends with "# EOF"; `-` writes to stdout.
 */
int sv_report_prometheus_series(const sv_result_t *res, double epoch, const char *path,
                                sv_error_t *err);

#endif
