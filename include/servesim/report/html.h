/*
 * HTML reports people can look at: one self-contained file (inline CSS and SVG, no
 * network, no JavaScript) per run, sweep or plan. Every chart is also written as its own
 * SVG file next to the report (report.html -> report-<chart>.svg).
 *
 *   run:   the configuration block (servesim/report/config.h); everything the terminal
 *          prints: vllm bench serve's result and servesim's block, the pools (and
 *          autoscalers); TTFT and TPOT CDFs with the SLO lines; the mean queue / prefill /
 *          (transfer) / decode breakdown; KV usage, queue depth and running batch per pool
 *          over time; for disaggregated runs the KV links' utilisation and the requests
 *          waiting for decode room over time (docs/reports.md).
 *   sweep: (html_sweep.c) the summary of every curve, the table; throughput and goodput,
 *          p50/p99 TTFT and TPOT and SLO attainment against the x axis, one curve per
 *          combination of the other keys with a legend; TTFT and TPOT against the achieved
 *          throughput (the latency-throughput curve); SLO lines; knees ringed; log axes
 *          where values span 30x or more. load: the load key (NULL: workload.rate).
 *   plan:  the ranked table and the cost against capacity of every feasible cluster.
 *
 * Ownership: the functions only read their inputs; files are opened and closed here.
 */
#ifndef SERVESIM_HTML_H
#define SERVESIM_HTML_H

#include "servesim/base/error.h"
#include "servesim/report/axes.h"
#include "servesim/studies/plan.h"
#include "servesim/cluster/sim.h"
#include "servesim/studies/sweep.h"

int sv_html_run(const sv_result_t *res, const char *path, sv_error_t *err);
/* The run report with shared axes: each chart reaches at least what axes says (NULL: its
 * own data, as sv_html_run), and the page states them and where they come from (note). */
int sv_html_run_axes(const sv_result_t *res, const sv_run_axes_t *axes, const char *note,
                     const char *path, sv_error_t *err);
int sv_html_sweep(const char *title, char keys[][128], int nkeys, const sv_row_t *rows, long n,
                  const char *load, const char *path, sv_error_t *err);
/* The same with the configuration block (sv_sweep_config_json; NULL: none) as a table. */
int sv_html_sweep_cfg(const char *title, char keys[][128], int nkeys, const sv_row_t *rows, long n,
                      const char *load, const char *config, const char *path, sv_error_t *err);
int sv_html_plan(const sv_scenario_t *sc, const sv_plan_cfg_t *cfg, const sv_plan_row_t *rows,
                 int n, const char *path, sv_error_t *err);

#endif
