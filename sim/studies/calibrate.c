/*
 * `servesim calibrate` (see include/servesim/studies/calibrate.h): read measured tables, build
 * one residual per row (model / measured - 1), and let GSL's trust-region solver find
 * the parameters; report them with 95% confidence intervals from the covariance, the
 * MAPE and the worst rows.
 */
#include "servesim/studies/calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_vector.h>

#include "base/csv_int.h"
#include "servesim/cost/perf.h"
#include "base/vec_int.h"
#include "studies/calibrate_int.h"

#define ACT 2.0 /* 16-bit activations and weights in the profiles */

/* ---- the generic fitter ------------------------------------------------------------- */

/* One measured row: what the model needs, the measurement, where it came from. */
typedef struct row {
    int op;            /* which formula */
    double x[6];       /* its inputs */
    double y;          /* measured, seconds */
    const char *label; /* op name for messages */
    char where[96];    /* file:line */
} row_t;

typedef double (*model_fn)(const double *theta, const row_t *r, const void *ctx);

typedef struct problem {
    const row_t *rows;
    size_t n;
    model_fn f;
    const void *ctx;
    double lo[SV_FIT_MAX_PARAMS], hi[SV_FIT_MAX_PARAMS]; /* each parameter's range */
} problem_t;

/* The range a fitted key accepts where it is read (the catalog, --set, an engine profile):
 * the curve keys' own table, efficiencies (0, 1], overheads and latencies [0, 1e6]. */
static void key_range(const char *name, double *lo, double *hi)
{
    for (int k = 0; k < SV_CV_COUNT; k++)
        if (strcmp(name, sv_curve_keys[k]) == 0) {
            *lo = sv_curve_lo[k];
            *hi = sv_curve_hi[k];
            return;
        }
    *lo = strstr(name, "efficiency") ? 1e-6 : 0.0;
    *hi = strstr(name, "efficiency") ? 1.0 : 1e6;
}

/* Parameter k at log-value u, held to its range. */
static double held(const problem_t *pb, size_t k, double u)
{
    double v = exp(u);
    return v < pb->lo[k] ? pb->lo[k] : v > pb->hi[k] ? pb->hi[k] : v;
}

static int resid(const gsl_vector *u, void *data, gsl_vector *out)
{
    const problem_t *pb = data;
    double th[SV_FIT_MAX_PARAMS];
    for (size_t k = 0; k < u->size; k++)
        th[k] = held(pb, k, gsl_vector_get(u, k));
    for (size_t i = 0; i < pb->n; i++) {
        double m = pb->f(th, &pb->rows[i], pb->ctx);
        gsl_vector_set(out, i, isfinite(m) ? m / pb->rows[i].y - 1.0 : 1e6);
    }
    return GSL_SUCCESS;
}

/* The fitted values from the solver's state in w, each with its status and 95% interval (the
 * covariance in cov, scaled by the residual variance s2). */
static void fit_params(const problem_t *pb, gsl_multifit_nlinear_workspace *w, gsl_matrix *cov,
                       double s2, sv_fit_t *fit)
{
    size_t p = (size_t)fit->np;
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    int cst = gsl_multifit_nlinear_covar(J, 0.0, cov);
    for (size_t k = 0; k < p; k++) {
        double x = exp(gsl_vector_get(w->x, k)), v = held(pb, k, gsl_vector_get(w->x, k));
        fit->value[k] = v;
        /* a column the residuals do not depend on (held at a bound, or dependent on
         * others: the pivoted QR of the covariance gives it variance 0) is not
         * determined by the rows */
        double var = cst == GSL_SUCCESS ? gsl_matrix_get(cov, k, k) : NAN;
        fit->status[k] = x != v ? SV_FIT_AT_BOUND : !(var > 0) ? SV_FIT_UNDETERMINED : SV_FIT_OK;
        fit->ci95[k] = fit->status[k] == SV_FIT_OK ? 1.96 * sqrt(var * s2) * v /* delta
                                                                                * method, log */
                                                   : NAN;
    }
}

/* One more row's relative error e in a group's count, absolute and signed sums. */
static void group_add(long *n, double *ape, double *bias, double e)
{
    (*n)++;
    *ape += fabs(e);
    *bias += e;
}

/* A group's sums made its MAPE and mean signed error, in percent. */
static void group_mean(long n, double *ape, double *bias)
{
    *ape *= 100.0 / (double)n;
    *bias *= 100.0 / (double)n;
}

/* The errors per TP degree of the rows that carry one (x[5], kernel rows), in increasing
 * order of TP; degrees beyond SV_FIT_TP_MAX distinct ones, or above 65,536, are left out. */
static void tp_errors(const row_t *rows, size_t n, const gsl_vector *r, sv_fit_t *fit)
{
    fit->ntp = 0;
    for (size_t i = 0; i < n; i++) {
        double t = rows[i].x[5];
        if (!(t >= 1.0 && t <= 65536.0)) continue; /* none, or no TP a table can mean */
        int tp = (int)t;
        int k = 0;
        while (k < fit->ntp && fit->tp[k] < tp)
            k++;
        if (k == fit->ntp || fit->tp[k] != tp) {
            if (fit->ntp == SV_FIT_TP_MAX) continue;
            for (int j = fit->ntp; j > k; j--) {
                fit->tp[j] = fit->tp[j - 1];
                fit->tp_n[j] = fit->tp_n[j - 1];
                fit->tp_mape[j] = fit->tp_mape[j - 1];
                fit->tp_bias[j] = fit->tp_bias[j - 1];
            }
            fit->tp[k] = tp;
            fit->tp_n[k] = 0;
            fit->tp_mape[k] = fit->tp_bias[k] = 0.0;
            fit->ntp++;
        }
        group_add(&fit->tp_n[k], &fit->tp_mape[k], &fit->tp_bias[k], gsl_vector_get(r, i));
    }
    for (int k = 0; k < fit->ntp; k++)
        group_mean(fit->tp_n[k], &fit->tp_mape[k], &fit->tp_bias[k]);
}

/* The fit's quality from its residuals r: mean and largest error, the worst rows (described
 * with the fitted model f), and the error per row kind. */
static void fit_errors(const row_t *rows, size_t n, const gsl_vector *r, model_fn f,
                       const void *ctx, sv_fit_t *fit)
{
    fit->n = (long)n;
    double sum = 0.0;
    fit->max_ape = 0.0;
    fit->nworst = 0;
    size_t order[SV_FIT_WORST];
    double ord_e[SV_FIT_WORST];
    for (size_t i = 0; i < n; i++) {
        double e = fabs(gsl_vector_get(r, i));
        sum += e;
        if (e > fit->max_ape) fit->max_ape = e;
        /* keep the worst rows, largest first */
        int pos = fit->nworst;
        while (pos > 0 && ord_e[pos - 1] < e)
            pos--;
        if (pos < SV_FIT_WORST) {
            int last = fit->nworst < SV_FIT_WORST ? fit->nworst : SV_FIT_WORST - 1;
            for (int k = last; k > pos; k--) {
                order[k] = order[k - 1];
                ord_e[k] = ord_e[k - 1];
            }
            order[pos] = i;
            ord_e[pos] = e;
            if (fit->nworst < SV_FIT_WORST) fit->nworst++;
        }
    }
    fit->mape = 100.0 * sum / (double)n;
    fit->nkinds = 0;
    for (size_t i = 0; i < n; i++) {
        int k = 0;
        while (k < fit->nkinds && strcmp(fit->kind[k], rows[i].label))
            k++;
        if (k == fit->nkinds) {
            if (k == SV_FIT_MAX_PARAMS + 2) continue;
            fit->kind[k] = rows[i].label;
            fit->kind_n[k] = 0;
            fit->kind_mape[k] = fit->kind_bias[k] = 0.0;
            fit->nkinds++;
        }
        group_add(&fit->kind_n[k], &fit->kind_mape[k], &fit->kind_bias[k], gsl_vector_get(r, i));
    }
    for (int k = 0; k < fit->nkinds; k++)
        group_mean(fit->kind_n[k], &fit->kind_mape[k], &fit->kind_bias[k]);
    tp_errors(rows, n, r, fit);
    fit->max_ape *= 100.0;
    double th[SV_FIT_MAX_PARAMS];
    for (int k = 0; k < fit->np; k++)
        th[k] = fit->value[k];
    for (int k = 0; k < fit->nworst; k++) {
        const row_t *rw = &rows[order[k]];
        double m = f(th, rw, ctx);
        snprintf(fit->worst[k], sizeof fit->worst[k],
                 "%s %s: measured %.4g ms, model %.4g ms (%+.1f%%)", rw->where, rw->label,
                 rw->y * 1e3, m * 1e3, 100.0 * (m / rw->y - 1.0));
    }
}

/* Fit theta (starting values in fit->value) to the rows. */
static int run_fit(const row_t *rows, size_t n, model_fn f, const void *ctx, const sv_fit_opts_t *o,
                   const char *src, sv_fit_t *fit, sv_error_t *err)
{
    size_t p = (size_t)fit->np;
    if (n < p + 2)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %zu usable rows for the %s fit, need at least %zu to fit %zu "
                         "parameters",
                         src, n, fit->what, p + 2, p);
    gsl_set_error_handler_off();
    problem_t pb = {rows, n, f, ctx, {0}, {0}};
    for (size_t k = 0; k < p; k++)
        key_range(fit->names[k], &pb.lo[k], &pb.hi[k]);
    gsl_multifit_nlinear_fdf fdf = {
        .f = resid, .df = NULL, .fvv = NULL, .n = n, .p = p, .params = &pb};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, p);
    gsl_vector *u = gsl_vector_alloc(p);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    if (!w || !u || !cov) {
        if (w) gsl_multifit_nlinear_free(w);
        gsl_vector_free(u);
        gsl_matrix_free(cov);
        return sv_errorf(err, SV_ENOMEM, "%s: out of memory for the %s fit", src, fit->what);
    }
    for (size_t k = 0; k < p; k++)
        gsl_vector_set(u, k, log(fit->value[k]));
    int rc = 0, info = 0;
    int max_iter = o && o->max_iter > 0 ? o->max_iter : 200;
    int st = gsl_multifit_nlinear_init(u, &fdf, w);
    if (st == GSL_SUCCESS)
        st = gsl_multifit_nlinear_driver((size_t)max_iter, 1e-10, 1e-10, 1e-10, NULL, NULL, &info,
                                         w);
    fit->iterations = (int)gsl_multifit_nlinear_niter(w);
    if (st == GSL_EMAXITER) {
        rc = sv_errorf(err, SV_EINVAL,
                       "%s: the %s fit did not converge in %d iterations (raise --max-iter, or "
                       "check the rows)",
                       src, fit->what, max_iter);
    } else if (st != GSL_SUCCESS) {
        rc = sv_errorf(err, SV_EINVAL, "%s: the %s fit failed: %s", src, fit->what,
                       gsl_strerror(st));
    } else {
        gsl_vector *r = gsl_multifit_nlinear_residual(w);
        double chi2;
        gsl_blas_ddot(r, r, &chi2);
        double s2 = chi2 / (double)(n - p);
        fit_params(&pb, w, cov, s2, fit);
        fit_errors(rows, n, r, f, ctx, fit);
    }
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(u);
    gsl_matrix_free(cov);
    return rc;
}

void sv_fit_print(const sv_fit_t *fit, FILE *f)
{
    fprintf(f, "%s: %ld rows, %d iterations, MAPE %.2f%%, worst %.1f%%\n", fit->what, fit->n,
            fit->iterations, fit->mape, fit->max_ape);
    for (int k = 0; k < fit->np; k++)
        if (fit->status[k] == SV_FIT_AT_BOUND)
            fprintf(f, "  %-28s %12.5g  held at the bound of its range: the rows push it past\n",
                    fit->names[k], fit->value[k]);
        else if (fit->status[k] == SV_FIT_UNDETERMINED)
            fprintf(f, "  %-28s %12.5g  not determined by these rows\n", fit->names[k],
                    fit->value[k]);
        else if (isnan(fit->ci95[k]))
            fprintf(f, "  %-28s %12.5g\n", fit->names[k], fit->value[k]);
        else
            fprintf(f, "  %-28s %12.5g  +- %.3g (95%%)\n", fit->names[k], fit->value[k],
                    fit->ci95[k]);
    if (fit->nkinds > 1)
        for (int k = 0; k < fit->nkinds; k++)
            fprintf(f, "  %-28s %6ld rows  MAPE %6.2f%%  mean error %+6.2f%%\n", fit->kind[k],
                    fit->kind_n[k], fit->kind_mape[k], fit->kind_bias[k]);
    if (fit->ntp > 1)
        for (int k = 0; k < fit->ntp; k++) {
            char lab[16];
            snprintf(lab, sizeof lab, "TP %d", fit->tp[k]);
            fprintf(f, "  %-28s %6ld rows  MAPE %6.2f%%  mean error %+6.2f%%\n", lab, fit->tp_n[k],
                    fit->tp_mape[k], fit->tp_bias[k]);
        }
    if (fit->nworst) fprintf(f, "  worst rows:\n");
    for (int k = 0; k < fit->nworst; k++)
        fprintf(f, "    %s\n", fit->worst[k]);
}

/* ---- kernels: GEMMs and small ops (Vidur mlp.csv) ----------------------------------- */

enum { OP_GEMM = 0, OP_SMALL };

typedef struct hw {
    double peak, bw;
} hw_t;

/* One GEMM of M x K by K x N in 16 bits: the formula sv_perf_step sums over a layer.
 * theta: compute_efficiency, gemm_m_half_tokens, memory_efficiency, gemm_floor_us. */
static double gemm_time(const double *th, const row_t *r, const void *ctx)
{
    const hw_t *h = ctx;
    double M = r->x[0], N = r->x[1], K = r->x[2];
    double tc = 2.0 * M * N * K / (h->peak * th[0]) * (M + th[1]) / M;
    double tm = ACT * (N * K + M * K + M * N) / (h->bw * th[2]);
    return fmax(tc, tm) + th[3] * 1e-6;
}

/* A small op moving x[0] bytes; x[1] = 1 for a norm.
 * theta: small_op_efficiency, norm_efficiency, small_op_floor_us. */
static double small_time(const double *th, const row_t *r, const void *ctx)
{
    const hw_t *h = ctx;
    return th[2] * 1e-6 + r->x[0] / (h->bw * (r->x[1] > 0 ? th[1] : th[0]));
}

static const char *const gemm_ops[] = {"attn_pre_proj", "attn_post_proj", "mlp_up_proj",
                                       "mlp_down_proj"};
static const char *const small_ops[] = {"input_layernorm", "post_attention_layernorm", "attn_rope",
                                        "mlp_act", "add"};
static const char *const shape_cols[] = {"n_head",
                                         "n_kv_head",
                                         "n_embd",
                                         "n_expanded_embd",
                                         "use_gated_mlp",
                                         "num_tokens",
                                         "num_tensor_parallel_workers"};

/* Rows of one mlp.csv appended to the GEMM and small-op lists. */
static int read_mlp(const char *path, row_t **g, size_t *ng, size_t *capg, row_t **s, size_t *ns,
                    size_t *caps, sv_error_t *err)
{
    sv__csv_t *t;
    int rc = sv__csv_read(path, &t, err);
    if (rc) return rc;
    int sc[7], gc[4], smc[5];
    char name[96];
    if ((rc = sv__csv_need(t, shape_cols, sc, 7, err))) goto done;
    /* Op columns are each optional (phi-2 has no post-attention norm), but not all. */
    int any = 0;
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "time_stats.%s.median", gemm_ops[i]);
        any |= (gc[i] = sv__csv_col(t, name)) >= 0;
    }
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "time_stats.%s.median", small_ops[i]);
        any |= (smc[i] = sv__csv_col(t, name)) >= 0;
    }
    if (!any) {
        rc = sv_errorf(err, SV_EPARSE,
                       "%s:1: missing column 'time_stats.mlp_up_proj.median' (no operator time "
                       "columns at all)",
                       path);
        goto done;
    }
    for (long r = 0; r < t->nrows; r++) {
        double v[7];
        for (int i = 0; i < 7; i++) {
            const char *c = sv__csv_cell(t, r, sc[i]);
            if (i == 4) {
                v[i] = strcmp(c, "True") == 0 || strcmp(c, "true") == 0 || strcmp(c, "1") == 0;
                continue;
            }
            if ((rc = sv__csv_num(t, r, sc[i], &v[i], err))) goto done;
            if (v[i] <= 0) {
                rc = sv_errorf(err, SV_EINVAL, "%s:%ld: column '%s': expected > 0, got '%s'", path,
                               t->lines[r], t->names[sc[i]], c);
                goto done;
            }
        }
        double h = v[0], kvh = v[1], d = v[2], f = v[3], gated = v[4], M = v[5], tp = v[6];
        double hd = d / h, q = h * hd / tp, kv = fmax(1.0, kvh / tp) * hd, fl = f / tp;
        double shp[4][2] = {{q + 2.0 * kv, d}, {d, q}, {(gated ? 2.0 : 1.0) * fl, d}, {d, fl}};
        for (int i = 0; i < 4; i++) {
            double y;
            if (gc[i] < 0) continue;
            if ((rc = sv__csv_num(t, r, gc[i], &y, err))) goto done;
            if (y <= 0) continue; /* not profiled */
            if (SV_GROW(*g, *capg, *ng + 1)) goto oom;
            row_t *w = &(*g)[(*ng)++];
            *w = (row_t){.op = OP_GEMM,
                         .x = {M, shp[i][0], shp[i][1], 0, 0, tp},
                         .y = y * 1e-3,
                         .label = gemm_ops[i]};
            snprintf(w->where, sizeof w->where, "%s:%ld", path, t->lines[r]);
        }
        /* Bytes each small op moves: the cost model's counts (sv_small_op_elems), in the
         * order of small_ops. */
        double bytes[SV_SMALL_COUNT];
        sv_small_op_elems(d, q, kv, fl, gated > 0, bytes);
        for (int i = 0; i < SV_SMALL_COUNT; i++)
            bytes[i] *= M * ACT;
        for (int i = 0; i < SV_SMALL_COUNT; i++) {
            double y;
            if (smc[i] < 0) continue;
            if ((rc = sv__csv_num(t, r, smc[i], &y, err))) goto done;
            if (y <= 0) continue;
            if (SV_GROW(*s, *caps, *ns + 1)) goto oom;
            row_t *w = &(*s)[(*ns)++];
            *w = (row_t){.op = OP_SMALL,
                         .x = {bytes[i], i < 2 ? 1.0 : 0.0, 0, 0, 0, tp},
                         .y = y * 1e-3,
                         .label = small_ops[i]};
            snprintf(w->where, sizeof w->where, "%s:%ld", path, t->lines[r]);
        }
    }
    goto done;
oom:
    rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
done:
    sv__csv_free(t);
    return rc;
}

/* A value of gpu's curve as the cost model takes it: its own, else the built-in default. */
static double gpu_curve(const sv_gpu_t *gpu, int k)
{
    return isnan(gpu->curve[k]) ? sv_curve_default[k] : gpu->curve[k];
}

/* The errors of rows at fit->value (nothing fitted). */
static int check_rows(const row_t *rows, size_t n, model_fn f, const void *ctx, const char *src,
                      sv_fit_t *fit, sv_error_t *err)
{
    if (n < 1)
        return sv_errorf(err, SV_EINVAL, "%s: no usable rows for the %s check", src, fit->what);
    gsl_vector *r = gsl_vector_alloc(n);
    if (!r) return sv_errorf(err, SV_ENOMEM, "%s: out of memory for the %s check", src, fit->what);
    for (size_t i = 0; i < n; i++) {
        double m = f(fit->value, &rows[i], ctx);
        gsl_vector_set(r, i, isfinite(m) ? m / rows[i].y - 1.0 : 1e6);
    }
    fit->iterations = 0;
    for (int k = 0; k < fit->np; k++) {
        fit->ci95[k] = NAN;
        fit->status[k] = SV_FIT_OK;
    }
    fit_errors(rows, n, r, f, ctx, fit);
    gsl_vector_free(r);
    return 0;
}

/* The kernel tables fitted from fixed starting values, or (check) scored at gpu's own. */
static int kernel_tables(const char *const *paths, int npaths, const sv_gpu_t *gpu,
                         const sv_fit_opts_t *o, int check, sv_fit_t *gemm, sv_fit_t *small,
                         sv_error_t *err)
{
    row_t *g = NULL, *s = NULL;
    size_t ng = 0, capg = 0, ns = 0, caps = 0;
    int rc = 0;
    for (int i = 0; i < npaths && !rc; i++)
        rc = read_mlp(paths[i], &g, &ng, &capg, &s, &ns, &caps, err);
    hw_t h = {gpu->bf16_flops, gpu->hbm_bw};
    *gemm = (sv_fit_t){
        .what = check ? "gemm (the GPU's values, not fitted)" : "gemm",
        .np = 4,
        .names = {"compute_efficiency", "gemm_m_half_tokens", "memory_efficiency", "gemm_floor_us"},
        .value = {0.7, 50, 0.8, 5}};
    *small = (sv_fit_t){.what = check ? "small ops (the GPU's values, not fitted)" : "small ops",
                        .np = 3,
                        .names = {"small_op_efficiency", "norm_efficiency", "small_op_floor_us"},
                        .value = {0.8, 0.5, 4}};
    if (check) {
        const double gv[4] = {gpu->compute_eff, gpu_curve(gpu, SV_CV_GEMM_M_HALF), gpu->memory_eff,
                              gpu_curve(gpu, SV_CV_GEMM_FLOOR)};
        const double sv[3] = {gpu_curve(gpu, SV_CV_SMALL_EFF), gpu_curve(gpu, SV_CV_NORM_EFF),
                              gpu_curve(gpu, SV_CV_SMALL_FLOOR)};
        memcpy(gemm->value, gv, sizeof gv);
        memcpy(small->value, sv, sizeof sv);
    }
    const char *src = npaths == 1 ? paths[0] : "the mlp.csv tables";
    if (!rc)
        rc = check ? check_rows(g, ng, gemm_time, &h, src, gemm, err)
                   : run_fit(g, ng, gemm_time, &h, o, src, gemm, err);
    if (!rc)
        rc = check ? check_rows(s, ns, small_time, &h, src, small, err)
                   : run_fit(s, ns, small_time, &h, o, src, small, err);
    free(g);
    free(s);
    return rc;
}

int sv_calibrate_kernels(const char *const *paths, int npaths, const sv_gpu_t *gpu,
                         const sv_fit_opts_t *o, sv_fit_t *gemm, sv_fit_t *small, sv_error_t *err)
{
    return kernel_tables(paths, npaths, gpu, o, 0, gemm, small, err);
}

int sv_calibrate_kernels_check(const char *const *paths, int npaths, const sv_gpu_t *gpu,
                               sv_fit_t *gemm, sv_fit_t *small, sv_error_t *err)
{
    return kernel_tables(paths, npaths, gpu, NULL, 1, gemm, small, err);
}

/* ---- collectives (Vidur all_reduce.csv, send_recv.csv) ------------------------------ */

/* theta: link_latency_us, link_latency_per_rank_us, link_efficiency. x: bytes, ranks. */
static double allreduce_time(const double *th, const row_t *r, const void *ctx)
{
    const hw_t *h = ctx; /* bw: one direction of the link */
    double n = r->x[1];
    return (th[0] + (n - 2.0) * th[1]) * 1e-6 + 2.0 * (n - 1.0) / n * r->x[0] / (h->bw * th[2]);
}

/* theta: p2p_latency_us, p2p bandwidth efficiency. */
static double sendrecv_time(const double *th, const row_t *r, const void *ctx)
{
    const hw_t *h = ctx;
    return th[0] * 1e-6 + r->x[0] / (h->bw * th[1]);
}

static int read_net(const char *path, const char *op, row_t **rows, size_t *n, sv_error_t *err)
{
    sv__csv_t *t;
    int rc = sv__csv_read(path, &t, err);
    if (rc) return rc;
    char tcol[64];
    snprintf(tcol, sizeof tcol, "time_stats.%s.median", op);
    const char *need[] = {tcol, "size", "num_workers", "devices_per_node"};
    int c[4];
    size_t cap = 0;
    if ((rc = sv__csv_need(t, need, c, 4, err))) goto done;
    for (long r = 0; r < t->nrows; r++) {
        double v[4];
        for (int i = 0; i < 4; i++)
            if ((rc = sv__csv_num(t, r, c[i], &v[i], err))) goto done;
        if (v[0] <= 0 || v[1] <= 0 || v[2] < 2) {
            rc = sv_errorf(err, SV_EINVAL,
                           "%s:%ld: expected a time > 0, size > 0 and at least 2 workers", path,
                           t->lines[r]);
            goto done;
        }
        if (v[3] != v[2]) continue; /* only collectives within one node (NVLink) */
        if (SV_GROW(*rows, cap, *n + 1)) {
            rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        row_t *w = &(*rows)[(*n)++];
        *w = (row_t){.x = {v[1], v[2]}, .y = v[0] * 1e-3, .label = op};
        snprintf(w->where, sizeof w->where, "%s:%ld", path, t->lines[r]);
    }
done:
    sv__csv_free(t);
    return rc;
}

int sv_calibrate_allreduce(const char *path, const sv_gpu_t *gpu, const sv_fit_opts_t *o,
                           sv_fit_t *fit, sv_error_t *err)
{
    row_t *rows = NULL;
    size_t n = 0;
    hw_t h = {gpu->bf16_flops, gpu->link_bw / 2.0};
    *fit = (sv_fit_t){.what = "all-reduce",
                      .np = 3,
                      .names = {"link_latency_us", "link_latency_per_rank_us", "link_efficiency"},
                      .value = {20, 3, 0.7}};
    int rc = read_net(path, "all_reduce", &rows, &n, err);
    if (!rc) rc = run_fit(rows, n, allreduce_time, &h, o, path, fit, err);
    free(rows);
    return rc;
}

int sv_calibrate_sendrecv(const char *path, const sv_gpu_t *gpu, const sv_fit_opts_t *o,
                          sv_fit_t *fit, sv_error_t *err)
{
    row_t *rows = NULL;
    size_t n = 0;
    hw_t h = {gpu->bf16_flops, gpu->link_bw / 2.0};
    *fit = (sv_fit_t){.what = "send/recv",
                      .np = 2,
                      .names = {"p2p_latency_us", "p2p_efficiency"},
                      .value = {10, 0.7}};
    int rc = read_net(path, "send_recv", &rows, &n, err);
    if (!rc) rc = run_fit(rows, n, sendrecv_time, &h, o, path, fit, err);
    free(rows);
    return rc;
}

/* ---- engine profiles (Splitwise perf_model.csv) ------------------------------------- */

typedef struct eng_ctx {
    const sv_catalog_t *cat;
    const sv_engine_profile_t *base;
    const char *const *keys;
    int nkeys;
    const sv_gpu_t *gpus[8];
    const sv_model_t *models[8];
} eng_ctx_t;

/* x: pair index, tp, prompt, batch, kind (0 prefill, 1 step), tokens out. */
static double engine_time(const double *th, const row_t *r, const void *ctx)
{
    const eng_ctx_t *c = ctx;
    sv_perf_settings_t s = sv_perf_settings_default();
    char v[64];
    int k = (int)r->x[0];
    s.tp = (int)r->x[1];
    s.weight_dtype = s.kv_dtype = SV_DT_FP16;
    for (int i = 0; i < c->nkeys; i++) {
        snprintf(v, sizeof v, "%.17g", th[i]);
        if (sv_perf_settings_set(&s, c->keys[i], v, NULL)) return NAN;
    }
    if (sv_perf_settings_engine(&s, c->base, NULL)) return NAN;
    sv_perf_t p;
    if (sv_perf_init(&p, c->gpus[k], c->models[k], &s, NULL)) return NAN;
    long P = (long)r->x[2], B = (long)r->x[3];
    if (r->x[4] == 0) {
        sv_chunk_t ch[64];
        long per = B < 64 ? B : 64;
        for (long i = 0; i < per; i++)
            ch[i] = (sv_chunk_t){.new_tokens = P, .cached_tokens = 0, .last = 1};
        sv_batch_t b = {.chunks = ch, .n_chunks = (int)per};
        sv_step_cost_t out;
        sv_perf_step(&p, &b, &out);
        return out.total * (double)((B + per - 1) / per);
    }
    return sv_perf_decode_time(&p, B, (double)P + r->x[5] / 2.0, NULL);
}

static const char *map_gpu(const char *hw)
{
    if (strcmp(hw, "h100-80gb") == 0) return "h100-sxm";
    return hw;
}

static const char *map_model(const char *m)
{
    if (strcmp(m, "llama2-70b") == 0) return "llama-2-70b";
    return m;
}

int sv_calibrate_engine(const char *path, const char *rows, const sv_catalog_t *cat,
                        const sv_engine_profile_t *base, const char *const *keys, int nkeys,
                        const sv_fit_opts_t *o, sv_fit_t *fit, sv_error_t *err)
{
    if (nkeys < 1 || nkeys > SV_FIT_MAX_PARAMS)
        return sv_errorf(err, SV_EINVAL, "calibrate: fit 1 to %d engine keys", SV_FIT_MAX_PARAMS);
    eng_ctx_t ctx = {.cat = cat, .base = base, .keys = keys, .nkeys = nkeys};
    char pairs[8][2][SV_NAME_MAX];
    int npairs = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", rows);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *colon = strchr(tok, ':');
        if (!colon || npairs == 8 || strlen(tok) >= SV_NAME_MAX)
            return sv_errorf(err, SV_EINVAL,
                             "--rows: expected MODEL:HARDWARE[,...] (at most 8), got '%s'", rows);
        *colon = '\0';
        snprintf(pairs[npairs][0], SV_NAME_MAX, "%s", tok);
        snprintf(pairs[npairs][1], SV_NAME_MAX, "%s", colon + 1);
        int rc;
        if ((rc = sv_catalog_gpu(cat, map_gpu(pairs[npairs][1]), &ctx.gpus[npairs], err)) ||
            (rc = sv_catalog_model(cat, map_model(pairs[npairs][0]), &ctx.models[npairs], err)))
            return sv_error_prefix(err, "--rows");
        npairs++;
    }
    sv__csv_t *t;
    int rc = sv__csv_read(path, &t, err);
    if (rc) return rc;
    static const char *const need[] = {"model",      "hardware",   "tensor_parallel", "prompt_size",
                                       "batch_size", "token_size", "prompt_time",     "token_time"};
    int c[8];
    row_t *rw = NULL;
    size_t n = 0, cap = 0;
    if ((rc = sv__csv_need(t, need, c, 8, err))) goto done;
    for (long r = 0; r < t->nrows; r++) {
        int k = -1;
        for (int i = 0; i < npairs; i++)
            if (strcmp(sv__csv_cell(t, r, c[0]), pairs[i][0]) == 0 &&
                strcmp(sv__csv_cell(t, r, c[1]), pairs[i][1]) == 0)
                k = i;
        if (k < 0) continue;
        double v[8];
        for (int i = 2; i < 8; i++)
            if ((rc = sv__csv_num(t, r, c[i], &v[i], err))) goto done;
        /* range-checked before the costing turns them into integers */
        if (!(v[2] >= 1 && v[2] <= 256) || !(v[3] >= 1 && v[3] <= 1e7) || !(v[4] >= 1) ||
            v[4] > 4096 || !(v[5] >= 1 && v[5] <= 1e7) || v[2] != floor(v[2]) ||
            v[3] != floor(v[3]) || v[4] != floor(v[4]) || !(v[6] > 0) || !(v[7] > 0)) {
            rc = sv_errorf(err, SV_EINVAL,
                           "%s:%ld: expected whole numbers tp in [1, 256], prompt and tokens in "
                           "[1, 10000000], batch in [1, 4096], and times > 0",
                           path, t->lines[r]);
            goto done;
        }
        for (int kind = 0; kind < 2; kind++) {
            if (SV_GROW(rw, cap, n + 1)) {
                rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
                goto done;
            }
            row_t *w = &rw[n++];
            *w = (row_t){.x = {k, v[2], v[3], v[4], kind, v[5]},
                         .y = (kind ? v[7] : v[6]) * 1e-3,
                         .label = kind ? "decode step" : "prefill"};
            snprintf(w->where, sizeof w->where, "%s:%ld", path, t->lines[r]);
        }
    }
    *fit = (sv_fit_t){.what = "engine", .np = nkeys};
    for (int i = 0; i < nkeys; i++) {
        fit->names[i] = keys[i];
        sv_perf_settings_t s = sv_perf_settings_default();
        sv_perf_settings_engine(&s, base, NULL);
        /* Start from the base profile's value, or a neutral guess. */
        double start = 1.0;
        for (int j = 0; j < base->nkeys; j++)
            if (strcmp(base->keys[j], keys[i]) == 0) start = atof(base->values[j]);
        fit->value[i] = start > 0 ? start : 1e-3;
    }
    rc = run_fit(rw, n, engine_time, &ctx, o, path, fit, err);
done:
    free(rw);
    sv__csv_free(t);
    return rc;
}

/* ---- synthetic data ----------------------------------------------------------------- */

static double noise(gsl_rng *rng, double sigma)
{
    return sigma > 0 ? gsl_ran_gaussian(rng, sigma) : 0.0;
}

int sv_calibrate_synthetic_mlp(const char *path, const sv_gpu_t *gpu, const double *gemm4,
                               const double *small3, double rel_noise, unsigned long seed,
                               sv_error_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write", path);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        fclose(f);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    gsl_rng_set(rng, seed);
    hw_t h = {gpu->bf16_flops, gpu->hbm_bw};
    fprintf(f, "n_head,n_kv_head,n_embd,n_expanded_embd,use_gated_mlp,num_tokens,"
               "num_tensor_parallel_workers");
    for (int i = 0; i < 4; i++)
        fprintf(f, ",time_stats.%s.median", gemm_ops[i]);
    for (int i = 0; i < 5; i++)
        fprintf(f, ",time_stats.%s.median", small_ops[i]);
    fputc('\n', f);
    static const double shapes[][4] = {{32, 8, 4096, 14336}, {64, 8, 8192, 28672}};
    for (int s = 0; s < 2; s++) {
        for (int tp = 1; tp <= 8; tp *= 2) {
            for (double M = 1; M <= 16384; M *= 2) {
                double hh = shapes[s][0], kvh = shapes[s][1], d = shapes[s][2], ff = shapes[s][3];
                double hd = d / hh, q = hh * hd / tp, kv = fmax(1.0, kvh / tp) * hd, fl = ff / tp;
                double shp[4][2] = {{q + 2.0 * kv, d}, {d, q}, {2.0 * fl, d}, {d, fl}};
                double bytes[5] = {2.0 * M * d * ACT, 2.0 * M * d * ACT, 2.0 * M * (q + kv) * ACT,
                                   3.0 * M * fl * ACT, 3.0 * M * d * ACT};
                fprintf(f, "%g,%g,%g,%g,True,%g,%d", hh, kvh, d, ff, M, tp);
                for (int i = 0; i < 4; i++) {
                    row_t r = {.x = {M, shp[i][0], shp[i][1]}};
                    double y = gemm_time(gemm4, &r, &h) * (1.0 + noise(rng, rel_noise));
                    fprintf(f, ",%.9g", y * 1e3);
                }
                for (int i = 0; i < 5; i++) {
                    row_t r = {.x = {bytes[i], i < 2 ? 1.0 : 0.0}};
                    double y = small_time(small3, &r, &h) * (1.0 + noise(rng, rel_noise));
                    fprintf(f, ",%.9g", y * 1e3);
                }
                fputc('\n', f);
            }
        }
    }
    gsl_rng_free(rng);
    if (fclose(f)) return sv_errorf(err, SV_EIO, "%s: cannot write", path);
    return 0;
}

/* ---- whole runs (validation families) ----------------------------------------------- */

typedef struct runs_ctx {
    sv_validation_t *v;
    const char *family;
    sv_catalog_t cat; /* a copy whose gpus[] is ours */
    sv_gpu_t *gpu;
    int nkeys;
    int curve[SV_FIT_MAX_PARAMS]; /* SV_CV_* or -1 compute_efficiency, -2 memory_efficiency */
    long evals;
    sv_error_t *err;
    int rc;
} runs_ctx_t;

static void runs_set(runs_ctx_t *c, int k, double x)
{
    if (c->curve[k] >= 0)
        c->gpu->curve[c->curve[k]] = x;
    else if (c->curve[k] == -1)
        c->gpu->compute_eff = x;
    else
        c->gpu->memory_eff = x;
}

/* Sum of squared relative errors of the family at the parameters set now. */
static double runs_cost(runs_ctx_t *c)
{
    if (c->rc) return HUGE_VAL;
    c->evals++;
    if ((c->rc = sv_validation_run(c->v, &c->cat, c->family, c->err))) return HUGE_VAL;
    double ss = 0.0;
    size_t flen = strlen(c->family);
    for (long i = 0; i < c->v->nrows; i++) {
        const sv_vrow_t *r = &c->v->rows[i];
        if (strncmp(r->family, c->family, flen) || isnan(r->simulated)) continue;
        double e = r->simulated / r->measured - 1.0;
        ss += e * e;
    }
    return ss;
}

/* runs_cost at the parameters x (every key set). */
static double runs_eval(void *ctx, const double *x)
{
    runs_ctx_t *c = ctx;
    for (int k = 0; k < c->nkeys; k++)
        runs_set(c, k, x[k]);
    return c->rc ? NAN : runs_cost(c);
}

int sv__golden_descent(double (*cost)(void *, const double *), void *ctx, int nkeys,
                       const double *lo, const double *hi, double *x, int sweeps)
{
    /* Coordinate descent: a golden-section search over each key's range in turn, the
     * other keys held at their best values so far. */
    const double gr = 0.5 * (sqrt(5.0) - 1.0);
    double t[SV_FIT_MAX_PARAMS];
    memcpy(t, x, (size_t)nkeys * sizeof *t);
    int it = 0;
    double best = cost(ctx, t);
    for (; it < sweeps && !isnan(best); it++) {
        double before = best;
        for (int k = 0; k < nkeys && !isnan(best); k++) {
            double a = lo[k], b = hi[k];
            double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
            t[k] = x1;
            double f1 = cost(ctx, t);
            t[k] = x2;
            double f2 = cost(ctx, t);
            for (int n = 0;
                 n < 40 && (b - a) > 1e-4 * (fabs(a) + fabs(b) + 1e-3) && !isnan(f1) && !isnan(f2);
                 n++) {
                if (f1 < f2) {
                    b = x2, x2 = x1, f2 = f1, x1 = b - gr * (b - a);
                    t[k] = x1;
                    f1 = cost(ctx, t);
                } else {
                    a = x1, x1 = x2, f1 = f2, x2 = a + gr * (b - a);
                    t[k] = x2;
                    f2 = cost(ctx, t);
                }
            }
            if (isnan(f1) || isnan(f2)) return -1;
            double xn = f1 < f2 ? x1 : x2, fn = fmin(f1, f2);
            if (fn < best) {
                best = fn;
                x[k] = xn;
            }
            t[k] = x[k];
        }
        if (before - best < 1e-6 * before) {
            it++;
            break;
        }
    }
    return isnan(best) ? -1 : it;
}

int sv_calibrate_runs(sv_validation_t *v, const char *family, const sv_catalog_t *cat,
                      const char *gpu_name, const char *const *keys, int nkeys,
                      const sv_fit_opts_t *o, sv_fit_t *fit, sv_error_t *err)
{
    memset(fit, 0, sizeof *fit);
    if (nkeys < 1 || nkeys > SV_FIT_MAX_PARAMS)
        return sv_errorf(err, SV_EINVAL, "calibrate runs: --fit takes 1 to %d keys",
                         SV_FIT_MAX_PARAMS);
    runs_ctx_t c = {.v = v, .family = family, .cat = *cat, .nkeys = nkeys, .err = err};
    const sv_gpu_t *g0;
    int rc;
    if ((rc = sv_catalog_gpu(cat, gpu_name, &g0, err))) return rc;
    long nrows = 0;
    for (long i = 0; i < v->nrows; i++)
        if (strncmp(v->rows[i].family, family, strlen(family)) == 0) {
            if (strcasecmp(v->rows[i].gpu, g0->name))
                return sv_errorf(err, SV_EINVAL,
                                 "%s:%ld: calibrate runs: family '%s' row runs on '%s', not '%s'",
                                 v->path, v->rows[i].line, family, v->rows[i].gpu, g0->name);
            nrows++;
        }
    if (nrows == 0)
        return sv_errorf(err, SV_ENOTFOUND, "%s: calibrate runs: no rows of family '%s'", v->path,
                         family);
    double lo[SV_FIT_MAX_PARAMS], hi[SV_FIT_MAX_PARAMS], x[SV_FIT_MAX_PARAMS];
    for (int k = 0; k < nkeys; k++) {
        c.curve[k] = strcmp(keys[k], "compute_efficiency") == 0  ? -1
                     : strcmp(keys[k], "memory_efficiency") == 0 ? -2
                                                                 : -3;
        for (int j = 0; j < SV_CV_COUNT && c.curve[k] == -3; j++)
            if (strcmp(keys[k], sv_curve_keys[j]) == 0) c.curve[k] = j;
        if (c.curve[k] == -3)
            return sv_errorf(
                err, SV_ENOKEY,
                "calibrate runs: --fit %s: not a GPU curve key (see docs/cost-model.md)", keys[k]);
        int j = c.curve[k];
        lo[k] = j >= 0 ? sv_curve_lo[j] : 0.05;
        hi[k] = j >= 0 ? sv_curve_hi[j] : 1.0;
        if (j == SV_CV_ATTN_SEQ || j == SV_CV_GEMM_FLOOR || j == SV_CV_SMALL_FLOOR) hi[k] = 20.0;
        if (j == SV_CV_GEMM_M_HALF || j == SV_CV_ATTN_N_HALF) hi[k] = 2048.0;
        fit->names[k] = keys[k];
    }
    c.cat.gpus = malloc(cat->ngpus * sizeof *cat->gpus);
    if (!c.cat.gpus) return sv_errorf(err, SV_ENOMEM, "calibrate runs: out of memory");
    memcpy(c.cat.gpus, cat->gpus, cat->ngpus * sizeof *cat->gpus);
    c.gpu = &c.cat.gpus[g0 - cat->gpus];
    for (int k = 0; k < nkeys; k++) {
        int j = c.curve[k];
        x[k] = j >= 0    ? (isnan(c.gpu->curve[j]) ? sv_curve_default[j] : c.gpu->curve[j])
               : j == -1 ? c.gpu->compute_eff
                         : c.gpu->memory_eff;
        runs_set(&c, k, x[k]);
    }
    int sweeps = o && o->max_iter < 4 ? o->max_iter : 4;
    int it = sv__golden_descent(runs_eval, &c, nkeys, lo, hi, x, sweeps);
    if (!c.rc) runs_eval(&c, x); /* leave v at the fitted values */
    rc = c.rc;
    free(c.cat.gpus);
    if (rc) return rc;
    fit->what = "runs";
    fit->np = nkeys;
    fit->iterations = it;
    for (int k = 0; k < nkeys; k++) {
        fit->value[k] = x[k];
        fit->ci95[k] = NAN;
    }
    double sum = 0.0;
    size_t flen = strlen(family);
    for (long i = 0; i < v->nrows; i++) {
        const sv_vrow_t *r = &v->rows[i];
        if (strncmp(r->family, family, flen)) continue;
        double ape = 100.0 * fabs(r->simulated / r->measured - 1.0);
        sum += ape;
        fit->n++;
        if (ape > fit->max_ape) fit->max_ape = ape;
        if (fit->nworst < SV_FIT_WORST)
            snprintf(fit->worst[fit->nworst++], sizeof fit->worst[0],
                     "%s:%ld %s: measured %.6g, model %.6g (%+.1f%%)", v->path, r->line,
                     sv_vkind_name(r->kind), r->measured, r->simulated,
                     100.0 * (r->simulated / r->measured - 1.0));
    }
    fit->mape = fit->n ? sum / fit->n : NAN;
    return 0;
}

/* ---- profile YAML ------------------------------------------------------------------- */

static void put_fit(FILE *f, const sv_fit_t *fit, const char *skip)
{
    for (int k = 0; k < fit->np; k++) {
        if (skip && !strcmp(fit->names[k], skip)) continue;
        fprintf(f, "    %s: %.4g", fit->names[k], fit->value[k]);
        if (fit->status[k] == SV_FIT_AT_BOUND)
            fprintf(f, "   # held at the bound of its range (the rows push it past)\n");
        else if (fit->status[k] == SV_FIT_UNDETERMINED)
            fprintf(f, "   # not determined by the rows\n");
        else if (isnan(fit->ci95[k]))
            fputc('\n', f);
        else
            fprintf(f, "   # +- %.2g (95%%)\n", fit->ci95[k]);
    }
}

int sv_calibrate_write_gpu(const char *path, const sv_gpu_t *g, const char *name,
                           const sv_fit_t *const *fits, int nfits, const char *source,
                           sv_error_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write", path);
    fprintf(f,
            "# Written by servesim calibrate kernels: %s's datasheet figures with efficiency\n"
            "# curves fitted to %s. Put it in a catalog directory (--catalog DIR).\n"
            "gpus:\n  - name: %s\n    description: %s (calibrated)\n",
            g->name, source, name, g->description);
    fprintf(f,
            "    bf16_tflops: %.6g\n    fp8_tflops: %.6g\n    memory_mib: %.0f\n"
            "    hbm_bandwidth_gb_s: %.6g\n    link: %s\n    link_bandwidth_gb_s: %.6g\n"
            "    tdp_w: %.6g\n    idle_w: %.6g\n    price_per_hour_usd: %.6g\n"
            "    iteration_overhead_ms: %.6g\n    layer_overhead_us: %.6g\n",
            g->bf16_flops / 1e12, g->fp8_flops / 1e12, g->mem_bytes / 1048576.0, g->hbm_bw / 1e9,
            g->link, g->link_bw / 1e9, g->tdp_w, g->idle_w, g->price_per_hour,
            g->iter_overhead_s * 1e3, g->layer_overhead_s * 1e6);
    const char *base_keys[] = {"compute_efficiency", "memory_efficiency", "link_latency_us"};
    double base_vals[] = {g->compute_eff, g->memory_eff, g->link_latency * 1e6};
    for (int j = 0; j < 3; j++) {
        int fitted = 0;
        for (int i = 0; i < nfits; i++)
            for (int k = 0; k < fits[i]->np; k++)
                fitted |= strcmp(fits[i]->names[k], base_keys[j]) == 0;
        if (!fitted) fprintf(f, "    %s: %.6g\n", base_keys[j], base_vals[j]);
    }
    for (int i = 0; i < nfits; i++)
        put_fit(f, fits[i], "p2p_efficiency");
    for (int k = 0; k < SV_CV_COUNT; k++) { /* the curves not fitted, as the base GPU has them */
        int fitted = 0;
        for (int i = 0; i < nfits; i++)
            for (int j = 0; j < fits[i]->np; j++)
                fitted |= strcmp(fits[i]->names[j], sv_curve_keys[k]) == 0;
        if (!fitted)
            fprintf(f, "    %s: %.6g   # not fitted: %s's\n", sv_curve_keys[k],
                    isnan(g->curve[k]) ? sv_curve_default[k] : g->curve[k], g->name);
    }
    fprintf(f, "    source: \"%s; curves fitted by servesim calibrate to %s\"\n", g->name, source);
    if (fclose(f)) return sv_errorf(err, SV_EIO, "%s: cannot write", path);
    return 0;
}

int sv_calibrate_write_engine(const char *path, const sv_engine_profile_t *base, const char *name,
                              const sv_fit_t *fit, const char *source, sv_error_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write", path);
    fprintf(f,
            "# Written by servesim calibrate engine, starting from profile '%s'.\n"
            "engines:\n  - name: %s\n    description: \"%s\"\n"
            "    fitted_to: \"%s\"\n",
            base->name, name, base->description, source);
    for (int j = 0; j < base->nkeys; j++) {
        int fitted = 0;
        for (int k = 0; k < fit->np; k++)
            fitted |= strcmp(fit->names[k], base->keys[j]) == 0;
        if (!fitted) fprintf(f, "    %s: %s\n", base->keys[j], base->values[j]);
    }
    put_fit(f, fit, NULL);
    if (fclose(f)) return sv_errorf(err, SV_EIO, "%s: cannot write", path);
    return 0;
}
