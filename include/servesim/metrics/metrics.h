/*
 * Metrics: the numbers a real benchmark run reports, with vLLM's definitions
 * (../shared/spec/metrics.md), computed exactly from what the engine reports.
 *
 * The engine feeds, and never keeps a number per token: the end time of every decode
 * step of each replica, one segment per stretch of consecutive decode steps a request
 * took part in, and single tokens made outside decode steps (the token a re-prefill
 * yields after a preemption). At the end, difference arrays over decode steps turn these
 * into the exact ITL pool and the per-second token counts, over successful requests only,
 * as vLLM counts them. Time-series samples (running, waiting, KV usage, batch tokens)
 * are kept per replica at a fixed simulated interval.
 *
 * Ownership: sv_metrics_new() returns a collector freed with sv_metrics_free();
 * sv_metrics_summarize() fills caller storage. Per-request ITL lists come from
 * sv_metrics_itls(), into a caller-freed array.
 */
#ifndef SERVESIM_METRICS_H
#define SERVESIM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "servesim/base/error.h"
#include "servesim/traffic/request.h"

#define SV_MAX_PCT 16

/* The metrics `metrics.percentile_metrics` selects (vLLM's --percentile-metrics); the
 * client-side queue time and the queue-inclusive E2EL are reported only under
 * max_concurrency (and the latter a finite rate), as vLLM does. */
enum {
    SV_M_TTFT = 1,
    SV_M_TPOT = 2,
    SV_M_ITL = 4,
    SV_M_E2EL = 8,
    SV_M_CLIENT_QUEUE = 16, /* client_queue_time */
    SV_M_E2EL_QUEUE = 32    /* e2el_including_client_queue */
};

/* Contracts (servesim/metrics/contract.h, docs/contracts.md): a percentile budget says
 * "the pct-th percentile of metric must be <= ms"; an SLO is per-request thresholds
 * (vLLM's --goodput), percentile budgets, or both, with the attainment target that the
 * per-request part must reach. */
#define SV_MAX_BUDGETS 8
#define SV_CLASS_NAME 32
enum { SV_K_TTFT = 0, SV_K_TPOT, SV_K_ITL, SV_K_E2EL, SV_K_COUNT };

typedef struct sv_budget {
    int metric; /* SV_K_* */
    double pct; /* in (0, 100) */
    double ms;
} sv_budget_t;

typedef struct sv_slo {
    double ttft_ms, tpot_ms, e2el_ms; /* per request; NAN when not given */
    double attainment;                /* share of requests that must meet them */
    sv_budget_t budget[SV_MAX_BUDGETS];
    int nbudgets;
} sv_slo_t;

typedef struct sv_metrics_cfg {
    double percentiles[SV_MAX_PCT]; /* to print, e.g. {99} */
    int npercentiles;
    int selected;                                 /* SV_M_* bits printed in the summary */
    double slo_ttft_ms, slo_tpot_ms, slo_e2el_ms; /* NAN when not given */
    double attainment;      /* share of requests that must meet the SLOs (sweep, plan) */
    double sample_interval; /* s between time-series samples */
    sv_budget_t budgets[SV_MAX_BUDGETS]; /* percentile budgets of the whole workload */
    int nbudgets;
    /* Request classes (workload.classes): names and each one's SLO (the top-level one
     * when the class gives none). sv_req_t.cls indexes them. */
    int nclasses;
    char class_name[SV_MAX_CLASSES][SV_CLASS_NAME];
    sv_slo_t class_slo[SV_MAX_CLASSES];
    /* How the summary takes percentiles: exactly (sorting the per-request values) unless
     * sketch is set or the run has more than exact_max requests (0: SV_EXACT_MAX); then
     * from quantile sketches of relative accuracy sketch_alpha (0: SV_SKETCH_ALPHA,
     * servesim/metrics/sketch.h), in memory that does not grow with the requests. */
    int sketch;
    double sketch_alpha;
    long exact_max;
    /* With the streaming summary (sketch, no classes): the caller reads no request record
     * after the run, so the simulator may release each once it has ended (a windowed
     * pool, servesim/traffic/request.h); the records' memory then follows the requests in
     * flight. Not set by scenarios: `run` sets it when no output it writes reads them,
     * or when they are written as the requests end (servesim/report/recstream.h). */
    int window;
    /* Outputs written as requests end (streaming mode; NULL: none). on_end(out_ctx, ...)
     * sees each request as it ends, in the order they end, with its token gaps when
     * end_itls is set (itl[0..n), n = 0 unless it completed with more than one output
     * token; valid during the call only); on_record each released record of a windowed
     * pool, in id order, once the request and every one before it have ended. */
    void (*on_end)(void *ctx, int32_t id, const sv_req_t *r, const double *itl, size_t n);
    int end_itls;
    void (*on_record)(void *ctx, int32_t id, const sv_req_t *r);
    void *out_ctx;
} sv_metrics_cfg_t;

/* Above this many requests the summary uses sketches unless exact_max says otherwise: the
 * exact summary holds nine doubles per request besides the records (1.4 GiB at 20M). */
#define SV_EXACT_MAX 20000000L

typedef struct sv_sample {
    double t;
    int32_t replica;
    int32_t running, waiting;
    float kv_usage; /* 0..1 */
    int32_t batch_tokens;
    uint8_t up; /* the replica is up (starting, active or draining); 0: switched off */
} sv_sample_t;

typedef struct sv_metrics sv_metrics_t;

sv_metrics_t *sv_metrics_new(const sv_metrics_cfg_t *cfg, int replicas);
void sv_metrics_free(sv_metrics_t *m);

/* A decode step of replica ended at t; returns its index (0, 1, ...) or -1 on no memory. */
int64_t sv_metrics_decode_step(sv_metrics_t *m, int replica, double t);
/* A request joins decoding at the replica's next decode step k0, its last token at t_join
 * (NAN when that step will make its first token: a decode replica that makes it). */
int32_t sv_metrics_seg_open(sv_metrics_t *m, int32_t req, int replica, int64_t k0, double t_join);
/* It leaves before decode step k1; returns the time of its last token. */
double sv_metrics_seg_close(sv_metrics_t *m, int32_t seg, int64_t k1);
/* A token made outside decode steps at t, gap after the request's previous token. */
int sv_metrics_single(sv_metrics_t *m, int32_t req, double t, double gap);
int sv_metrics_sample(sv_metrics_t *m, const sv_sample_t *s);
/* Streaming mode (cfg.sketch without request classes): request id was sent (r->start
 * set) / has ended for good (completed or failed; it gets no more tokens). The collector
 * folds it into the summary's sketches then and forgets its segments and single tokens;
 * the summary then reads nothing from the pool, sv_metrics_itls() gives SV_EINVAL. Both
 * do nothing in exact mode. Failures show in sv_metrics_oom(). */
void sv_metrics_request_start(sv_metrics_t *m, int32_t id, const sv_req_t *r);
void sv_metrics_request_end(sv_metrics_t *m, const sv_req_t *r, int32_t id);
/* Whether m is in streaming mode. */
int sv_metrics_streaming(const sv_metrics_t *m);
/* The bound on kept time-series samples (32 bytes each, so 128 MiB): past it the
 * simulator halves its sampling rate and thins what it has already taken. */
#define SV_MAX_SAMPLES 4000000L
/* Keep every other round of samples (a round: the consecutive samples taken at one
 * time), starting with the first. */
void sv_metrics_thin_samples(sv_metrics_t *m);
int sv_metrics_oom(const sv_metrics_t *m); /* an allocation failed somewhere above */

const sv_sample_t *sv_metrics_samples(const sv_metrics_t *m, size_t *n);

/* Mean, median, population std and percentiles, in ms. */
typedef struct sv_stat {
    double mean, median, std;
    double pct[SV_MAX_PCT];
    long n;
} sv_stat_t;

/* Percentiles always computed (for JSON) besides the configured ones. */
#define SV_STD_PCTS                                                                                \
    {                                                                                              \
        50.0, 90.0, 95.0, 99.0                                                                     \
    }

typedef struct sv_summary {
    long completed, failed;
    long failed_by[SV_FAIL_COUNT];
    long total_input, total_output;
    double duration;
    double request_throughput, output_throughput, total_token_throughput;
    double request_goodput; /* NAN without SLOs */
    long good;
    long good_by[3]; /* meeting the TTFT, TPOT, E2EL SLO alone (to tell which one binds) */
    double max_output_tokens_per_s;
    long max_concurrent_requests;
    /* The largest finite TTFT, and TPOT over more than one output token, of the completed
     * requests, in ms, 0 when none is above 0 (the report's axes read them: the exact
     * summary's from its selection's range, the others' as each request is folded). */
    double max_ttft_ms, max_tpot_ms;
    double pcts[SV_MAX_PCT + 4]; /* configured then the standard ones not already there */
    int npcts;
    sv_stat_t ttft, tpot, itl, e2el, queue, prefill, decode;
    /* Phases of disaggregated serving (zero when colocated): waiting for decode room,
     * moving the KV, waiting for the decode replica's next step. */
    sv_stat_t xfer_wait, xfer, decode_queue;
    /* The value (ms) of each percentile budget of the SLO judged (the top-level one, or
     * the class's for sv_metrics_summarize_class), in its order. */
    double budget_ms[SV_MAX_BUDGETS];
    /* 0: percentiles exact; else the relative error bound of every percentile (and
     * median, and budget value): they came from quantile sketches. Counts are exact
     * either way; means and std are numpy's (sim/metrics/stats.c) in exact mode, the
     * sketches' running moments otherwise (the same up to the order of summation). */
    double sketch_alpha;
} sv_summary_t;

/* Aggregate everything over the request pool. */
int sv_metrics_summarize(const sv_metrics_t *m, const sv_reqpool_t *pool, sv_summary_t *out,
                         sv_error_t *err);

/* The SLO the summary of the whole workload is judged by (cls < 0), or class cls's. */
void sv_metrics_slo(const sv_metrics_cfg_t *c, int cls, sv_slo_t *out);

/* The same over the requests of class cls only (sv_req_t.cls), judged by its SLO;
 * duration and throughputs stay those of the whole run (the classes' throughputs add up). */
int sv_metrics_summarize_class(const sv_metrics_t *m, const sv_reqpool_t *pool, int cls,
                               sv_summary_t *out, sv_error_t *err);

/* The ITL list of one successful request (seconds), as vLLM stores it. */
int sv_metrics_itls(const sv_metrics_t *m, const sv_reqpool_t *pool, int32_t req, double **out,
                    size_t *n);

/* The same list as runs, in order: a lone gap v (stream < 0), or the gaps between the
 * consecutive decode steps of one stream, step k's time less step k - 1's for k in
 * [k0, k1) (sv_metrics_steps), which every request decoding in those steps shares. The
 * runs go into *runs (grown as needed, capacity *cap; the caller frees it), their count
 * into *n. 0, SV_ENOMEM, or SV_EINVAL in streaming mode. */
typedef struct sv_itl_run {
    int32_t stream;
    int64_t k0, k1;
    double v;
} sv_itl_run_t;
int sv_metrics_itl_runs(const sv_metrics_t *m, const sv_reqpool_t *pool, int32_t req,
                        sv_itl_run_t **runs, size_t *cap, size_t *n);
/* Decode-step streams (one per replica and pipeline lane), and the end times of stream s's
 * steps: (*n of them, step k's at [k]; exact mode only, NULL in streaming mode). */
int sv_metrics_nstreams(const sv_metrics_t *m);
const double *sv_metrics_steps(const sv_metrics_t *m, int s, size_t *n);

/* Exact statistics (sim/metrics/stats.c), exposed for tests; values in x's units. They are
 * numpy's as vLLM's `vllm bench serve` takes them of a list in request order: np.mean and
 * np.std (population) from numpy's pairwise sums of the list in the order given,
 * np.median, np.percentile (method linear); numpy on the list [0] for n = 0 (zeros). */
/* Mean, std and percentiles of x[0..n) in the order given; x is scratch (its contents
 * are left unspecified). */
void sv_stat_compute(double *x, size_t n, const double *pcts, int npcts, double scale,
                     sv_stat_t *out);
/* numpy.percentile (linear) of sorted data; 0 for n = 0. */
double sv_percentile_sorted(const double *x, size_t n, double p);
/* np.add.reduce of x[0..n) (numpy's pairwise summation, in this order). */
double sv_np_sum(const double *x, size_t n);
/* np.mean and np.std (ddof 0) of x[0..n) in this order; 0 for n = 0. */
void sv_np_mean_std(const double *x, size_t n, double *mean, double *std);

/* A weighted sample: value with multiplicity (a whole number; a fractional one weighs as
 * its value). */
typedef struct sv_wval {
    double v;
    double w;
} sv_wval_t;
/* The statistics of the expanded multiset (each v w times) of the entries of positive
 * weight; x is scratch (its contents are left unspecified). Percentiles and median are
 * numpy's on the expanded list sorted; mean and std numpy's pairwise sums over x in its
 * order of the v * w, over the count, and of the w * (v - mean)^2. */
void sv_wstat_compute(sv_wval_t *x, size_t n, const double *pcts, int npcts, double scale,
                      sv_stat_t *out);
/* Count (sum of w), mean and std as sv_wstat_compute takes them, of x[0..n) (weights > 0);
 * 0 (SV_ENOMEM is kept for callers that check). */
int sv_wmean_std(const sv_wval_t *x, size_t n, double *count, double *mean, double *std);

/* Ascending sorts (sim/metrics/order.c): stable, in the order qsort with a three-way
 * comparison of the values gives (-0 equals +0), in linear time (a radix sort on the bit
 * patterns); an array already in order costs one pass. No NaNs. */
void sv_sort_doubles(double *x, size_t n);
void sv_sort_wvals(sv_wval_t *x, size_t n); /* by v */
/* numpy.percentile (linear) of x for each of pcts into out, as sv_percentile_sorted of the
 * sorted x would give, by selecting only the order statistics needed (linear time); x is
 * scratch (its contents are left unspecified). 0 for n = 0. At most SV_MAX_PCT + 4 +
 * SV_MAX_BUDGETS percentiles. The order is the doubles' (with a sign bit in x: -0 before
 * +0, NaNs past the infinities). */
void sv_percentiles_select(double *x, size_t n, const double *pcts, int npcts, double *out);

#endif
