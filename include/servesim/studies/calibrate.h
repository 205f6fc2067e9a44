/*
 * `servesim calibrate`: fit the cost model's parameters to measured tables with GSL's
 * nonlinear least squares (gsl_multifit_nlinear, trust-region Levenberg-Marquardt on
 * relative residuals, parameters fitted as logarithms so they stay positive).
 *
 *   kernels: Vidur's per-operator tables (mlp.csv: one layer's GEMMs and small ops on
 *            one GPU) give the GPU's GEMM curve (compute_efficiency, gemm_m_half_tokens,
 *            memory_efficiency, gemm_floor_us) and small-op terms (small_op_efficiency,
 *            norm_efficiency, small_op_floor_us);
 *   network: Vidur's all_reduce.csv gives the alpha-beta all-reduce (link_latency_us,
 *            link_latency_per_rank_us, link_efficiency); send_recv.csv gives
 *            p2p_latency_us (and its bandwidth efficiency, printed);
 *   engine:  Splitwise's perf_model.csv (whole iterations) gives an engine profile's
 *            terms, costed through sv_perf_step itself;
 *   runs:    a family of `servesim validate` rows (whole simulated runs, e.g. AMD's vLLM
 *            throughput on MI300X) gives a GPU's curve values, each run simulated in full;
 *            a coordinate search with golden sections on relative squared errors, since
 *            simulated throughput is not smooth enough for finite-difference Jacobians;
 *   result:  one real benchmark result (vLLM's result JSON, compare.h) replayed on a
 *            scenario (replay.h) gives the settings that bring its mean and median TTFT,
 *            TPOT and ITL closest (squared log errors), by the same search.
 * The formulas the kernel fits use are the ones sv_perf_step sums (docs/cost-model.md).
 *
 * Ownership: every function fills caller storage; nothing returned needs freeing.
 */
#ifndef SERVESIM_CALIBRATE_H
#define SERVESIM_CALIBRATE_H

#include <stdio.h>

#include "servesim/cost/catalog.h"
#include "servesim/base/error.h"
#include "servesim/studies/compare.h"
#include "servesim/studies/validate.h"

#define SV_FIT_MAX_PARAMS 8
#define SV_FIT_WORST 5
#define SV_FIT_TP_MAX 6 /* TP degrees told apart in a kernel fit's errors */

typedef struct sv_fit {
    const char *what; /* "gemm", "small ops", ... */
    int np;
    const char *names[SV_FIT_MAX_PARAMS]; /* the --set / YAML keys */
    double value[SV_FIT_MAX_PARAMS];      /* in the keys' units */
    double ci95[SV_FIT_MAX_PARAMS];       /* half-width of the 95% confidence interval; NAN
                                           * when the rows do not determine the parameter */
    /* Each parameter is held to the range its key accepts (the catalog's, or --set's); the
     * fit's verdict on it: */
    int status[SV_FIT_MAX_PARAMS]; /* SV_FIT_* */
    long n;                        /* rows fitted */
    int iterations;
    double mape, max_ape;          /* percent */
    char worst[SV_FIT_WORST][160]; /* "file:line op: measured x, model y (+e%)" */
    int nworst;
    /* MAPE (percent) and mean signed error per kind of row (operator), to show what one
     * curve cannot say (shape effects) */
    int nkinds;
    const char *kind[SV_FIT_MAX_PARAMS + 2];
    long kind_n[SV_FIT_MAX_PARAMS + 2];
    double kind_mape[SV_FIT_MAX_PARAMS + 2], kind_bias[SV_FIT_MAX_PARAMS + 2];
    /* The same per tensor-parallel degree of the rows (Vidur's num_tensor_parallel_workers;
     * kernel tables only, ntp 0 otherwise), in increasing order: how the curve holds as
     * the shards shrink */
    int ntp;
    int tp[SV_FIT_TP_MAX];
    long tp_n[SV_FIT_TP_MAX];
    double tp_mape[SV_FIT_TP_MAX], tp_bias[SV_FIT_TP_MAX];
} sv_fit_t;

enum {
    SV_FIT_OK = 0,      /* determined, inside its range */
    SV_FIT_AT_BOUND,    /* the rows push it out of its range: held at the bound */
    SV_FIT_UNDETERMINED /* the rows do not determine it (no effect, or collinear with another) */
};

typedef struct sv_fit_opts {
    int max_iter; /* iterations before the fit is declared not converged (default 200) */
} sv_fit_opts_t;

/* Fit the GEMM curve and the small-op terms of gpu to Vidur mlp.csv tables. */
int sv_calibrate_kernels(const char *const *paths, int npaths, const sv_gpu_t *gpu,
                         const sv_fit_opts_t *o, sv_fit_t *gemm, sv_fit_t *small, sv_error_t *err);

/* The same tables against gpu's own values, fitting nothing: gemm and small hold the
 * catalog's GEMM curve and small-op terms (for a GPU without its own, the defaults it takes)
 * with their errors per operator and per TP (iterations 0, ci95 NAN). */
int sv_calibrate_kernels_check(const char *const *paths, int npaths, const sv_gpu_t *gpu,
                               sv_fit_t *gemm, sv_fit_t *small, sv_error_t *err);

/* Fit the all-reduce alpha-beta model to a Vidur all_reduce.csv (rows within one node). */
int sv_calibrate_allreduce(const char *path, const sv_gpu_t *gpu, const sv_fit_opts_t *o,
                           sv_fit_t *fit, sv_error_t *err);

/* Fit send/recv latency and bandwidth efficiency to a Vidur send_recv.csv. */
int sv_calibrate_sendrecv(const char *path, const sv_gpu_t *gpu, const sv_fit_opts_t *o,
                          sv_fit_t *fit, sv_error_t *err);

/*
 * Fit an engine profile to a Splitwise perf_model.csv: prefill (prompt_time) and decode
 * step (token_time) rows whose model:hardware pair is in rows ("bloom-176b:a100-80gb,..."),
 * each costed by sv_perf_step on the catalog's model and GPU (Splitwise's hardware names
 * a100-80gb, h100-80gb map to a100-80gb, h100-sxm), FP16, at the row's TP. base is the
 * profile the fit starts from; keys lists the parameters to fit (engine-profile keys).
 */
int sv_calibrate_engine(const char *path, const char *rows, const sv_catalog_t *cat,
                        const sv_engine_profile_t *base, const char *const *keys, int nkeys,
                        const sv_fit_opts_t *o, sv_fit_t *fit, sv_error_t *err);

/*
 * Fit the curve keys (sv_curve_keys, or compute_efficiency / memory_efficiency) of GPU
 * gpu_name to the validation rows of one family (v loaded; rows must run on that GPU):
 * each evaluation reruns the family with sv_validation_run on a copy of the catalog.
 * The fit's ci95 are NAN (no Jacobian); mape and the worst rows are filled. On return
 * the rows of v hold the simulated values at the fitted parameters.
 */
int sv_calibrate_runs(sv_validation_t *v, const char *family, const sv_catalog_t *cat,
                      const char *gpu_name, const char *const *keys, int nkeys,
                      const sv_fit_opts_t *o, sv_fit_t *fit, sv_error_t *err);

/* What `calibrate result` found: the fitted keys (fit.ci95 NAN: no Jacobian; fit.n the
 * metrics scored) and, per compare metric, the real value and the replay's before and
 * after the fit. */
typedef struct sv_result_fit {
    sv_fit_t fit;
    double lo[SV_FIT_MAX_PARAMS], hi[SV_FIT_MAX_PARAMS]; /* the range searched per key */
    double real[SV_CM_COUNT], before[SV_CM_COUNT], after[SV_CM_COUNT];
    int has[SV_CM_COUNT], scored[SV_CM_COUNT];
    long replayed;
} sv_result_fit_t;

/*
 * Fit keys (hardware.memory_efficiency, hardware.compute_efficiency,
 * hardware.iteration_overhead_ms, hardware.seq_overhead_us, engine.api_server_ms) to the
 * result real: every trial loads scenario with sets and the trial values, replays real's
 * requests on it and simulates. Errors are the scenario loader's, replay's, or one line
 * naming the key or the file.
 */
int sv_calibrate_result(const char *scenario, const char *const *sets, int nsets,
                        const sv_catalog_t *cat, const sv_bench_t *real, const char *const *keys,
                        int nkeys, const sv_fit_opts_t *o, sv_result_fit_t *out, sv_error_t *err);
void sv_result_fit_print(const sv_result_fit_t *r, FILE *f);

/* Write a Vidur-format mlp.csv generated from known kernel parameters (values in the
 * order of the gemm fit then the small fit), with multiplicative noise of rel_noise
 * (deterministic, seeded). For tests and `servesim calibrate synthetic`. */
int sv_calibrate_synthetic_mlp(const char *path, const sv_gpu_t *gpu, const double *gemm4,
                               const double *small3, double rel_noise, unsigned long seed,
                               sv_error_t *err);

void sv_fit_print(const sv_fit_t *fit, FILE *f);

/* A catalog file holding gpu under a new name with the fitted curve values. */
int sv_calibrate_write_gpu(const char *path, const sv_gpu_t *gpu, const char *name,
                           const sv_fit_t *const *fits, int nfits, const char *source,
                           sv_error_t *err);

/* A catalog file holding one engine profile: base's keys with the fitted ones replaced. */
int sv_calibrate_write_engine(const char *path, const sv_engine_profile_t *base, const char *name,
                              const sv_fit_t *fit, const char *source, sv_error_t *err);

#endif
