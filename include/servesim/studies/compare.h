/*
 * Benchmark results side by side: `servesim compare REAL.json SIM.json`.
 *
 * A result is read from vLLM's result JSON (`vllm bench serve --save-result`, which
 * servesim also writes with `--json`) or from GenAI-Perf's / AIPerf's aggregate
 * `profile_export_*.json`, whose names are mapped to vLLM's (docs/compare.md):
 * inter_token_latency is vLLM's TPOT, inter_chunk_latency its ITL, request_latency its
 * E2EL. Each metric (throughputs; mean, median, p90 and p99 of TTFT, TPOT, ITL and E2EL) is
 * either present in the file or marked absent, never taken as zero. Per-request lists
 * (vLLM's `input_lens`, `output_lens`, `ttfts`, `itls`, `latencies`, `start_times`,
 * `errors`) are checked for type and length when present and kept for distribution tests
 * and for `servesim replay` (replay.h); without `latencies` (as vLLM writes it) each
 * latency is rebuilt from the request's ttft and itls.
 *
 * The comparison gives, per metric, both values and the signed relative error
 * (sim - real) / real, and for each per-request metric present in both files a
 * two-sample Kolmogorov-Smirnov statistic D with its asymptotic p-value.
 *
 * Ownership: sv_bench_load() returns a result freed with sv_bench_free() (NULL-safe);
 * sv_compare_new() returns a comparison freed with sv_compare_free() that borrows both
 * results, which must outlive it.
 */
#ifndef SERVESIM_COMPARE_H
#define SERVESIM_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include "servesim/base/error.h"

/* Bound on the requests of one result file (its lists are held in memory). */
#define SV_BENCH_MAX_REQUESTS 10000000L
/* Bound on the size of a result file. */
#define SV_BENCH_MAX_BYTES ((size_t)2 << 30)

/* The compared scalar metrics, in the order they are printed. */
enum {
    SV_CM_REQ_TPUT = 0, /* req/s */
    SV_CM_OUT_TPUT,     /* tok/s */
    SV_CM_TOTAL_TPUT,   /* tok/s */
    SV_CM_LAT_FIRST,    /* then 4 latency metrics x 4 statistics, in ms */
    SV_CM_COUNT = SV_CM_LAT_FIRST + 16
};

/* Per-request latency metrics (order of the latency blocks and of the KS rows). */
enum { SV_LM_TTFT = 0, SV_LM_TPOT, SV_LM_ITL, SV_LM_E2EL, SV_LM_COUNT };

typedef enum { SV_BENCH_VLLM = 0, SV_BENCH_GENAI_PERF } sv_bench_format_t;

typedef struct sv_bench {
    char path[1024];
    sv_bench_format_t format;
    char backend[64];          /* vLLM's "backend" ("vllm", "servesim", ...); "" if absent */
    double value[SV_CM_COUNT]; /* in the printed unit */
    int has[SV_CM_COUNT];      /* 1 when the file holds the metric */
    long max_concurrency;      /* 0 = none (null or absent) */
    double duration;           /* s; NAN when absent */
    /* Per-request lists, each NULL when absent, else n entries (itls: n lists). */
    size_t n;
    double *input_lens, *output_lens, *ttfts, *latencies, *start_times;
    double **itls;
    size_t *nitls;
    int *failed; /* 1 where errors[i] is a non-empty string; NULL when `errors` is absent */
    /* 1 when `latencies` was absent and was rebuilt as ttft + the sum of the request's
     * itls (vLLM's own result has no per-request latency list; its client measures the
     * latency at the stream's end, so the sum telescopes to it but for the gap after the
     * last token). */
    int latencies_derived;
    /* Per-request samples of successful requests, in seconds, for the distributions
     * (NULL with count 0 when the file cannot give them). */
    double *sample[SV_LM_COUNT];
    size_t nsample[SV_LM_COUNT];
} sv_bench_t;

/* Read a result file. Errors are one line naming the file and the key (with the index
 * inside a list), or file:line:col for malformed JSON. */
int sv_bench_load(const char *path, sv_bench_t **out, sv_error_t *err);
void sv_bench_free(sv_bench_t *b);

/* Words for a format ("vLLM result JSON", ...). */
const char *sv_bench_format_name(sv_bench_format_t f);

/* Label of scalar metric m ("Mean TTFT (ms)") and of latency metric l ("TTFT"). */
const char *sv_compare_metric_label(int m);
const char *sv_compare_latency_name(int l);

/* (sim - real) / real; 0 when both are 0, +-INFINITY when only real is 0. */
double sv_rel_err(double real, double sim);

/* Two-sample Kolmogorov-Smirnov test of a (na values) against b (nb): the statistic D =
 * sup |F_a - F_b| over the pooled values (both samples are sorted in place) and its
 * asymptotic p-value, the Kolmogorov distribution's tail at sqrt(na nb / (na + nb)) D.
 * Values less than `tie` above the smallest value not yet passed count as equal to it
 * (0: exact ties only). Returns SV_EINVAL when a sample is empty. */
int sv_ks_2samp(double *a, size_t na, double *b, size_t nb, double tie, double *d, double *p);

/* The tie width compare uses, in seconds: per-request times closer than a microsecond are
 * the same measurement (a real client's clock and a result file's rounding of absolute
 * start times do not resolve finer). */
#define SV_KS_TIE_S 1e-6

/* Tail of the Kolmogorov distribution: P(K > lambda). */
double sv_kolmogorov_q(double lambda);

typedef struct sv_compare_row {
    int metric; /* SV_CM_* */
    int in_real, in_sim;
    double real, sim; /* valid when present */
    double err;       /* relative error when both are present, else NAN */
} sv_compare_row_t;

typedef struct sv_compare_ks {
    int metric; /* SV_LM_* */
    size_t n_real, n_sim;
    double d, p; /* NAN when either side lacks per-request data */
} sv_compare_ks_t;

typedef struct sv_compare {
    const sv_bench_t *real, *sim;
    sv_compare_row_t rows[SV_CM_COUNT];
    sv_compare_ks_t ks[SV_LM_COUNT];
    int worst;        /* index of the row with the largest |err|; -1 when none compares */
    double worst_err; /* its |err| */
} sv_compare_t;

int sv_compare_new(const sv_bench_t *real, const sv_bench_t *sim, sv_compare_t **out,
                   sv_error_t *err);
void sv_compare_free(sv_compare_t *c);

/* Rows past tolerance (a fraction, 0.1 = 10%); NAN tolerance: 0. */
int sv_compare_past(const sv_compare_t *c, double tolerance);

/* The table, the distribution rows and the verdict line. tolerance: a fraction, or NAN
 * when none was given. */
void sv_compare_print(const sv_compare_t *c, double tolerance, FILE *f);

/* A self-contained HTML page: the table and the two empirical CDFs of TTFT, TPOT, ITL and
 * E2EL drawn over one axis per metric. */
int sv_compare_html(const sv_compare_t *c, double tolerance, const char *path, sv_error_t *err);

#endif
