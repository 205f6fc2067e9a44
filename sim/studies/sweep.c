/*
 * Sweeps (see include/servesim/studies/sweep.h): points of a grid run as full simulations, in
 * parallel processes if asked, their rows written so that shards merge exactly.
 */
#include "servesim/studies/sweep.h"

#include "servesim/studies/confidence.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio_int.h"
#include "base/jsonw_int.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "servesim/metrics/contract.h"
#include "servesim/base/yaml.h"

const char *const sv_col_names[SV_NCOLS] = {"completed",
                                            "failed",
                                            "duration_s",
                                            "request_throughput",
                                            "request_goodput",
                                            "output_throughput",
                                            "slo_attainment",
                                            "attainment_target",
                                            "mean_ttft_ms",
                                            "p50_ttft_ms",
                                            "p90_ttft_ms",
                                            "p99_ttft_ms",
                                            "mean_tpot_ms",
                                            "p50_tpot_ms",
                                            "p90_tpot_ms",
                                            "p99_tpot_ms",
                                            "mean_itl_ms",
                                            "p99_itl_ms",
                                            "mean_e2el_ms",
                                            "p99_e2el_ms",
                                            "gpus",
                                            "cost_per_hour_usd",
                                            "cost_per_million_output_tokens_usd",
                                            "energy_per_output_token_j",
                                            "goodput_per_gpu",
                                            "kv_usage_p99",
                                            "preemptions",
                                            "slo_ttft_ms",
                                            "slo_tpot_ms",
                                            "throughput_error_band_pct",
                                            "latency_error_band_pct"};

/* ---- specs ------------------------------------------------------------------------------ */

static int add_value(sv_vary_t *v, double x, const char *arg, sv_error_t *err)
{
    if (v->n == SV_MAX_VALUES)
        return sv_errorf(err, SV_ELIMIT, "--vary %s: more than %d values", arg, SV_MAX_VALUES);
    char buf[32];
    snprintf(v->vals[v->n++], SV_VALUE_MAX, "%s", sv__fmt_double(x, buf));
    /* whole numbers print without ".0" so integer keys (replicas, tp) accept them */
    size_t l = strlen(v->vals[v->n - 1]);
    if (l > 2 && strcmp(v->vals[v->n - 1] + l - 2, ".0") == 0) v->vals[v->n - 1][l - 2] = '\0';
    return 0;
}

int sv_vary_parse(const char *arg, sv_vary_t *v, sv_error_t *err)
{
    memset(v, 0, sizeof *v);
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof v->key || !eq[1])
        return sv_errorf(err, SV_EINVAL,
                         "--vary %s: expected KEY=SPEC, SPEC a list 1,2,4, a range 2:20:2 or "
                         "1:64:x2",
                         arg);
    memcpy(v->key, arg, (size_t)(eq - arg));
    const char *spec = eq + 1;
    char a[64], b[64], c[64];
    int rc;
    if (strchr(spec, ':') && !strchr(spec, '{') && !strchr(spec, '[') &&
        sscanf(spec, "%63[^:]:%63[^:]:%63s", a, b, c) == 3) {
        double lo, hi, step;
        int geo = c[0] == 'x';
        if (sv_parse_double(a, &lo) || sv_parse_double(b, &hi) ||
            sv_parse_double(geo ? c + 1 : c, &step) || !isfinite(lo) || !isfinite(hi) ||
            (geo ? !(step > 1.0) || !(lo > 0) : !(step > 0)) || hi < lo)
            return sv_errorf(err, SV_EINVAL,
                             "--vary %s: expected start:stop:step with step > 0 or start:stop:xF "
                             "with start > 0 and F > 1, stop >= start",
                             arg);
        for (double x = lo; x <= hi * (1 + 1e-12); x = geo ? x * step : lo + step * v->n)
            if ((rc = add_value(v, x, arg, err))) return rc;
        return 0;
    }
    /* A list; YAML flow values ({...}, [...]) are kept whole. */
    const char *p = spec;
    while (*p) {
        int depth = 0;
        const char *q = p;
        while (*q && (depth > 0 || *q != ',')) {
            if (*q == '{' || *q == '[') depth++;
            if (*q == '}' || *q == ']') depth--;
            q++;
        }
        size_t len = (size_t)(q - p);
        if (len == 0 || len >= SV_VALUE_MAX)
            return sv_errorf(err, SV_EINVAL, "--vary %s: empty or too long value in the list", arg);
        if (v->n == SV_MAX_VALUES)
            return sv_errorf(err, SV_ELIMIT, "--vary %s: more than %d values", arg, SV_MAX_VALUES);
        memcpy(v->vals[v->n], p, len);
        v->vals[v->n++][len] = '\0';
        p = *q ? q + 1 : q;
    }
    return 0;
}

int sv_sweep_init(sv_sweep_t *sw, sv_error_t *err)
{
    long n = 1;
    for (int k = 0; k < sw->nvary; k++)
        for (int j = 0; j < k; j++)
            if (strcmp(sw->vary[j].key, sw->vary[k].key) == 0)
                return sv_errorf(err, SV_EINVAL,
                                 "--vary %s: the key is varied twice; give each key once (one "
                                 "list of values)",
                                 sw->vary[k].key);
    for (int k = 0; k < sw->nvary; k++) {
        n *= sw->vary[k].n;
        if (n > SV_MAX_POINTS)
            return sv_errorf(err, SV_ELIMIT, "the sweep has more than %d points", SV_MAX_POINTS);
    }
    sw->npoints = n;
    return 0;
}

const char *sv_sweep_value(const sv_sweep_t *sw, long index, int k)
{
    for (int j = 0; j < k; j++)
        index /= sw->vary[j].n;
    return sw->vary[k].vals[index % sw->vary[k].n];
}

/* ---- one point -------------------------------------------------------------------------- */

static int pct_at(const sv_summary_t *s, double p)
{
    for (int i = 0; i < s->npcts; i++)
        if (s->pcts[i] == p) return i;
    return 0;
}

static void fill_row(const sv_result_t *res, sv_row_t *row)
{
    const sv_summary_t *s = &res->summary;
    const sv_metrics_cfg_t *c = &res->sc->metrics;
    double *m = row->m;
    int slo = !isnan(c->slo_ttft_ms) || !isnan(c->slo_tpot_ms) || !isnan(c->slo_e2el_ms);
    long total = s->completed + s->failed;
    int p50 = pct_at(s, 50), p90 = pct_at(s, 90), p99 = pct_at(s, 99);
    m[SV_COL_COMPLETED] = (double)s->completed;
    m[SV_COL_FAILED] = (double)s->failed;
    m[SV_COL_DURATION] = s->duration;
    m[SV_COL_REQ_TPUT] = s->request_throughput;
    m[SV_COL_GOODPUT] = s->request_goodput;
    m[SV_COL_OUT_TPUT] = s->output_throughput;
    m[SV_COL_ATTAIN] = slo && total ? (double)s->good / (double)total : NAN;
    m[SV_COL_ATTAIN_TARGET] = c->attainment;
    m[SV_COL_TTFT_MEAN] = s->ttft.mean;
    m[SV_COL_TTFT_P50] = s->ttft.pct[p50];
    m[SV_COL_TTFT_P90] = s->ttft.pct[p90];
    m[SV_COL_TTFT_P99] = s->ttft.pct[p99];
    m[SV_COL_TPOT_MEAN] = s->tpot.mean;
    m[SV_COL_TPOT_P50] = s->tpot.pct[p50];
    m[SV_COL_TPOT_P90] = s->tpot.pct[p90];
    m[SV_COL_TPOT_P99] = s->tpot.pct[p99];
    m[SV_COL_ITL_MEAN] = s->itl.mean;
    m[SV_COL_ITL_P99] = s->itl.pct[p99];
    m[SV_COL_E2EL_MEAN] = s->e2el.mean;
    m[SV_COL_E2EL_P99] = s->e2el.pct[p99];
    m[SV_COL_GPUS] = res->gpus;
    double per_hour = 0.0;
    for (int p = 0; p < res->npools; p++)
        per_hour += res->pools[p].gpus * res->pools[p].cfg->gpu.price_per_hour;
    m[SV_COL_COST_HOUR] = per_hour;
    m[SV_COL_COST_MTOK] = res->cost_per_mtok;
    m[SV_COL_ENERGY_TOK] = res->energy_per_tok;
    m[SV_COL_GOODPUT_GPU] = res->gpus > 0 ? s->request_goodput / res->gpus : NAN;
    m[SV_COL_KV_P99] = res->kv_usage_p99;
    m[SV_COL_PREEMPT] = (double)res->preemptions;
    sv_contract_check_t v;
    sv_contract_check(c, s, res->class_summary, &v);
    if (v.layered) snprintf(row->broke, sizeof row->broke, "%s", v.met ? "-" : v.broken);
    m[SV_COL_SLO_TTFT] = c->slo_ttft_ms;
    m[SV_COL_SLO_TPOT] = c->slo_tpot_ms;
    m[SV_COL_BAND_TPUT] = m[SV_COL_BAND_LAT] = 0.0;
    for (int p = 0; p < res->npools; p++) {
        sv_confidence_t cf;
        sv_confidence_of(&res->pools[p].perf, &cf);
        m[SV_COL_BAND_TPUT] = fmax(m[SV_COL_BAND_TPUT], cf.throughput_pct);
        m[SV_COL_BAND_LAT] = fmax(m[SV_COL_BAND_LAT], cf.latency_pct);
    }
}

static void point_path(char *buf, size_t n, const char *outdir, long index, const char *ext)
{
    snprintf(buf, n, "%s/points/point-%06ld.%s", outdir, index, ext);
}

static void run_point(const sv_sweep_t *sw, const sv_catalog_t *cat, long index, const char *outdir,
                      sv_row_t *row)
{
    memset(row, 0, sizeof *row);
    row->index = index;
    for (int k = 0; k < sw->nvary; k++)
        snprintf(row->vals[k], SV_VALUE_MAX, "%s", sv_sweep_value(sw, index, k));
    for (int c = 0; c < SV_NCOLS; c++)
        row->m[c] = NAN;
    int nsets = sw->nsets + sw->nvary;
    const char **sets = malloc((size_t)nsets * sizeof *sets);
    char(*own)[256] = malloc((size_t)(sw->nvary + 1) * sizeof *own);
    sv_error_t err;
    sv_scenario_t *sc = NULL;
    sv_result_t *res = NULL;
    int rc = (!sets || !own) ? sv_errorf(&err, SV_ENOMEM, "out of memory") : 0;
    if (!rc) {
        for (int i = 0; i < sw->nsets; i++)
            sets[i] = sw->sets[i];
        for (int k = 0; k < sw->nvary; k++) {
            snprintf(own[k], sizeof own[k], "%s=%s", sw->vary[k].key, row->vals[k]);
            sets[sw->nsets + k] = own[k];
        }
        rc = sv_scenario_load(sw->scenario, sets, nsets, cat, &sc, &err);
    }
    if (!rc) rc = sv_sim_run(sc, &res, &err);
    if (!rc && sw->write_point) {
        char path[1200];
        point_path(path, sizeof path, outdir, index, "json");
        rc = sw->write_point(res, path, &err);
    }
    if (!rc) {
        fill_row(res, row);
        row->ok = 1;
    } else {
        row->ok = 0;
        snprintf(row->error, sizeof row->error, "%s", err.msg);
    }
    sv_result_free(res);
    sv_scenario_free(sc);
    free(sets);
    free(own);
}

int sv_sweep_check_keys(const sv_sweep_t *sw, const sv_catalog_t *cat, sv_error_t *err)
{
    int nsets = sw->nsets + sw->nvary;
    const char **sets = malloc((size_t)nsets * sizeof *sets);
    char(*own)[256] = malloc((size_t)(sw->nvary + 1) * sizeof *own);
    if (!sets || !own) {
        free(sets);
        free(own);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    for (int i = 0; i < sw->nsets; i++)
        sets[i] = sw->sets[i];
    for (int k = 0; k < sw->nvary; k++) {
        snprintf(own[k], sizeof own[k], "%s=%s", sw->vary[k].key, sw->vary[k].vals[0]);
        sets[sw->nsets + k] = own[k];
    }
    sv_scenario_t *sc = NULL;
    sv_error_t e;
    int rc = sv_scenario_load(sw->scenario, sets, nsets, cat, &sc, &e);
    sv_scenario_free(sc);
    free(sets);
    free(own);
    if (rc != SV_ENOKEY) return 0;
    /* The base scenario and --set loaded before, so a varied key is the unknown one. */
    const char *what = strstr(e.msg, "unknown key '");
    const char *key = sw->vary[0].key;
    for (int k = 0; k < sw->nvary; k++) {
        char q[200];
        snprintf(q, sizeof q, "'%s'", sw->vary[k].key);
        if (what && strstr(what, q)) key = sw->vary[k].key;
    }
    return sv_errorf(err, SV_ENOKEY, "--vary %s: %s", key, what ? what : e.msg);
}

/* ---- rows as CSV ------------------------------------------------------------------------ */

static void put_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n{[")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static void put_row(FILE *f, const sv_row_t *r, int nkeys)
{
    char buf[40];
    fprintf(f, "%ld", r->index);
    for (int k = 0; k < nkeys; k++) {
        fputc(',', f);
        put_field(f, r->vals[k]);
    }
    for (int c = 0; c < SV_NCOLS; c++) {
        fputc(',', f);
        fputs(isnan(r->m[c]) ? "nan" : sv__fmt_double(r->m[c], buf), f);
    }
    fputc(',', f);
    put_field(f, r->ok ? "" : r->error);
    if (r->broke[0]) { /* layered contracts only: other sweeps keep their columns */
        fputc(',', f);
        put_field(f, r->broke);
    }
    fputc('\n', f);
}

/* Next CSV field of *p (quotes honoured, "" = a quote) into out; advances past the comma. */
static int get_field(char **p, char *out, size_t n)
{
    char *s = *p;
    size_t k = 0;
    if (*s == '"') {
        s++;
        for (; *s; s++) {
            if (*s == '"') {
                if (s[1] == '"')
                    s++;
                else {
                    s++;
                    break;
                }
            }
            if (k + 1 < n) out[k++] = *s;
        }
    } else {
        for (; *s && *s != ',' && *s != '\n'; s++)
            if (k + 1 < n) out[k++] = *s;
    }
    out[k] = '\0';
    int more = *s == ',';
    if (*s == ',' || *s == '\n') s++;
    *p = s;
    return more;
}

static int parse_row(char **p, int nkeys, sv_row_t *r, const char *where, sv_error_t *err)
{
    char f[512];
    memset(r, 0, sizeof *r);
    get_field(p, f, sizeof f);
    if (sv_parse_long(f, &r->index) || r->index < 0)
        return sv_errorf(err, SV_EPARSE, "%s: expected a point index, got '%s'", where, f);
    for (int k = 0; k < nkeys; k++)
        get_field(p, r->vals[k], SV_VALUE_MAX);
    for (int c = 0; c < SV_NCOLS; c++) {
        get_field(p, f, sizeof f);
        if (strcmp(f, "nan") == 0)
            r->m[c] = NAN;
        else if (sv_parse_double(f, &r->m[c]))
            return sv_errorf(err, SV_EPARSE, "%s: column %s: expected a number, got '%s'", where,
                             sv_col_names[c], f);
    }
    if (get_field(p, r->error, sizeof r->error)) get_field(p, r->broke, sizeof r->broke);
    r->ok = r->error[0] == '\0';
    return 0;
}

/* ---- running ------------------------------------------------------------------------------ */

static int make_dirs(const char *outdir, sv_error_t *err)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/points", outdir);
    if ((mkdir(outdir, 0755) && errno != EEXIST) || (mkdir(p, 0755) && errno != EEXIST))
        return sv_errorf(err, SV_EIO, "%s: cannot create the output directory: %s", outdir,
                         strerror(errno));
    return 0;
}

/* Child processes hand their row back through points/point-N.row. */
static int read_row_file(const char *path, int nkeys, sv_row_t *row, sv_error_t *err)
{
    char *buf;
    size_t len;
    int rc = sv__read_file(path, 1 << 20, &buf, &len, err);
    if (rc) return rc;
    char *p = buf;
    rc = parse_row(&p, nkeys, row, path, err);
    free(buf);
    unlink(path);
    return rc;
}

int sv_sweep_run(const sv_sweep_t *sw, const sv_catalog_t *cat, const char *outdir, int jobs,
                 int shard, int nshards, sv_row_t *rows, FILE *progress, sv_error_t *err)
{
    int rc = make_dirs(outdir, err);
    if (rc) return rc;
    for (long i = 0; i < sw->npoints; i++)
        rows[i].ok = -1;
    long todo = 0;
    for (long i = shard - 1; i < sw->npoints; i += nshards)
        todo++;
    if (jobs <= 1) {
        long k = 0;
        for (long i = shard - 1; i < sw->npoints; i += nshards) {
            run_point(sw, cat, i, outdir, &rows[i]);
            if (progress) fprintf(progress, "\rservesim sweep: %ld/%ld points", ++k, todo);
        }
        if (progress) fputc('\n', progress);
        return 0;
    }
    long next = shard - 1, running = 0, finished = 0;
    pid_t *pids = calloc((size_t)jobs, sizeof *pids);
    long *which = calloc((size_t)jobs, sizeof *which);
    if (!pids || !which) {
        free(pids);
        free(which);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    fflush(NULL);
    while (!rc && (next < sw->npoints || running > 0)) {
        while (running < jobs && next < sw->npoints) {
            int slot = 0;
            while (pids[slot])
                slot++;
            pid_t pid = fork();
            if (pid < 0) {
                rc = sv_errorf(err, SV_EIO, "cannot start a worker process: %s", strerror(errno));
                break;
            }
            if (pid == 0) {
                sv_row_t row;
                char path[1200];
                run_point(sw, cat, next, outdir, &row);
                point_path(path, sizeof path, outdir, next, "row");
                FILE *f = fopen(path, "w");
                if (!f) _exit(3);
                put_row(f, &row, sw->nvary);
                _exit(ferror(f) | fclose(f) ? 3 : 0);
            }
            pids[slot] = pid;
            which[slot] = next;
            running++;
            next += nshards;
        }
        if (running == 0) break;
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            rc = sv_errorf(err, SV_EIO, "waiting for workers: %s", strerror(errno));
            break;
        }
        for (int s = 0; s < jobs; s++) {
            if (pids[s] != pid) continue;
            long i = which[s];
            pids[s] = 0;
            running--;
            char path[1200];
            point_path(path, sizeof path, outdir, i, "row");
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                rows[i].ok = 0;
                rows[i].index = i;
                for (int c = 0; c < SV_NCOLS; c++)
                    rows[i].m[c] = NAN;
                for (int k = 0; k < sw->nvary; k++)
                    snprintf(rows[i].vals[k], SV_VALUE_MAX, "%s", sv_sweep_value(sw, i, k));
                snprintf(rows[i].error, sizeof rows[i].error, "the worker process died");
            } else {
                rc = read_row_file(path, sw->nvary, &rows[i], err);
            }
            if (progress) fprintf(progress, "\rservesim sweep: %ld/%ld points", ++finished, todo);
        }
    }
    while (running > 0 && wait(NULL) > 0)
        running--;
    if (progress) fputc('\n', progress);
    free(pids);
    free(which);
    return rc;
}

/* ---- knees and outputs -------------------------------------------------------------------- */

void sv_knee(const double *attain, const double *goodput, int n, double target, int *knee,
             int *best)
{
    *knee = *best = -1;
    for (int i = 0; i < n; i++) {
        if (!(attain[i] >= target)) break;
        *knee = i;
    }
    for (int i = 0; i < n; i++)
        if (!isnan(goodput[i]) && (*best < 0 || goodput[i] > goodput[*best])) *best = i;
}

/* Rows on the same curve: same values of every key but the first. */
static int same_curve(const sv_row_t *a, const sv_row_t *b, int nkeys)
{
    for (int k = 1; k < nkeys; k++)
        if (strcmp(a->vals[k], b->vals[k])) return 0;
    return 1;
}

typedef struct curve {
    long first; /* index into rows of its first point */
    int n;
    long *members;
    int knee, best;
} curve_t;

static int build_curves(const sv_row_t *rows, long nrows, int nkeys, curve_t **out, int *ncurves)
{
    curve_t *cv = calloc((size_t)nrows + 1, sizeof *cv);
    long *mem = malloc(((size_t)nrows + 1) * sizeof *mem);
    if (!cv || !mem) {
        free(cv);
        free(mem);
        return SV_ENOMEM;
    }
    int nc = 0;
    long used = 0;
    for (long i = 0; i < nrows; i++) {
        int c = 0;
        while (c < nc && !same_curve(&rows[cv[c].first], &rows[i], nkeys))
            c++;
        if (c == nc) {
            cv[nc].first = i;
            nc++;
        }
    }
    for (int c = 0; c < nc; c++) {
        cv[c].members = mem + used;
        for (long i = 0; i < nrows; i++)
            if (same_curve(&rows[cv[c].first], &rows[i], nkeys)) cv[c].members[cv[c].n++] = i;
        used += cv[c].n;
        double *a = malloc((size_t)cv[c].n * sizeof *a), *g = malloc((size_t)cv[c].n * sizeof *g);
        if (!a || !g) {
            free(a);
            free(g);
            return SV_ENOMEM;
        }
        for (int j = 0; j < cv[c].n; j++) {
            const sv_row_t *r = &rows[cv[c].members[j]];
            a[j] = !r->ok ? NAN : r->broke[0] ? (strcmp(r->broke, "-") == 0) : r->m[SV_COL_ATTAIN];
            g[j] = r->ok ? r->m[SV_COL_GOODPUT] : NAN;
        }
        double target = rows[cv[c].first].m[SV_COL_ATTAIN_TARGET];
        if (isnan(target)) target = 0.9;
        sv_knee(a, g, cv[c].n, target, &cv[c].knee, &cv[c].best);
        free(a);
        free(g);
    }
    *out = cv;
    *ncurves = nc;
    return 0;
}

/* A layered contract's point just past the knee (the first along the curve when none
 * holds), whose broken budget is the one the knee ran into; NULL otherwise. */
static const sv_row_t *first_broken(const sv_row_t *rows, const curve_t *cv)
{
    int j = cv->knee + 1;
    if (j >= cv->n) return NULL;
    const sv_row_t *r = &rows[cv->members[j]];
    return r->ok == 1 && r->broke[0] && strcmp(r->broke, "-") != 0 ? r : NULL;
}

static void free_curves(curve_t *cv)
{
    if (cv) free(cv[0].members);
    free(cv);
}

static void print_table(FILE *t, char keys[][128], int nkeys, const sv_row_t *rows, long nrows,
                        const curve_t *cv, int nc)
{
    for (int k = 0; k < nkeys; k++)
        fprintf(t, "%-22s ", keys[k]);
    fprintf(t, "%10s %10s %10s %8s %11s %11s %11s %7s\n", "req/s", "tok/s", "goodput", "SLO %",
            "p99 TTFT ms", "p99 TPOT ms", "$/M tok", "band");
    for (long i = 0; i < nrows; i++) {
        const sv_row_t *r = &rows[i];
        for (int k = 0; k < nkeys; k++)
            fprintf(t, "%-22.22s ", r->vals[k]);
        if (!r->ok) {
            fprintf(t, "failed: %s\n", r->error);
            continue;
        }
        const double *m = r->m;
        fprintf(t, "%10.2f %10.1f %10.2f %8.1f %11.1f %11.2f %11.3f %4s%.0f%%\n",
                m[SV_COL_REQ_TPUT], m[SV_COL_OUT_TPUT],
                isnan(m[SV_COL_GOODPUT]) ? 0.0 : m[SV_COL_GOODPUT],
                isnan(m[SV_COL_ATTAIN]) ? 0.0 : 100.0 * m[SV_COL_ATTAIN], m[SV_COL_TTFT_P99],
                m[SV_COL_TPOT_P99], m[SV_COL_COST_MTOK], "+-", m[SV_COL_BAND_TPUT]);
    }
    for (int c = 0; c < nc; c++) {
        const sv_row_t *f = &rows[cv[c].first];
        fputs("\n", t);
        for (int k = 1; k < nkeys; k++)
            fprintf(t, "%s=%s  ", keys[k], f->vals[k]);
        if (isnan(f->m[SV_COL_ATTAIN]) && f->ok && !f->broke[0])
            fprintf(t, "no SLOs in the scenario: no knee (give slo.ttft_ms / tpot_ms)\n");
        else if (cv[c].knee < 0 && !f->ok)
            fprintf(t, "knee: none (the first point failed: %s)\n", f->error);
        else if (cv[c].knee < 0)
            fprintf(t, "knee: none (the SLOs fail at %.0f%% attainment from the first point)\n",
                    100.0 * f->m[SV_COL_ATTAIN_TARGET]);
        else
            fprintf(t, "knee: %s=%s is the highest load meeting the SLOs for %.0f%% of requests\n",
                    keys[0], rows[cv[c].members[cv[c].knee]].vals[0],
                    100.0 * f->m[SV_COL_ATTAIN_TARGET]);
        const sv_row_t *nx = first_broken(rows, &cv[c]);
        if (nx) fprintf(t, "first broken budget: %s at %s=%s\n", nx->broke, keys[0], nx->vals[0]);
        if (cv[c].best >= 0)
            fprintf(t, "max goodput: %.2f req/s at %s=%s\n",
                    rows[cv[c].members[cv[c].best]].m[SV_COL_GOODPUT], keys[0],
                    rows[cv[c].members[cv[c].best]].vals[0]);
    }
}

static int write_json(const char *path, char keys[][128], int nkeys, const sv_row_t *rows,
                      long nrows, const curve_t *cv, int nc, sv_error_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    sv_jw_t w;
    sv__jw_init(&w, f);
    sv__jw_obj(&w, NULL);
    sv__jw_arr(&w, "keys");
    for (int k = 0; k < nkeys; k++)
        sv__jw_str(&w, NULL, keys[k]);
    sv__jw_end_arr(&w);
    sv__jw_arr(&w, "points");
    for (long i = 0; i < nrows; i++) {
        const sv_row_t *r = &rows[i];
        sv__jw_obj(&w, NULL);
        sv__jw_int(&w, "index", r->index);
        sv__jw_obj(&w, "values");
        for (int k = 0; k < nkeys; k++)
            sv__jw_str(&w, keys[k], r->vals[k]);
        sv__jw_end_obj(&w);
        if (r->ok)
            for (int c = 0; c < SV_NCOLS; c++)
                sv__jw_num(&w, sv_col_names[c], r->m[c]);
        else
            sv__jw_str(&w, "error", r->error);
        if (r->broke[0] && strcmp(r->broke, "-") == 0)
            sv__jw_null(&w, "broken_budget");
        else if (r->broke[0])
            sv__jw_str(&w, "broken_budget", r->broke);
        sv__jw_end_obj(&w);
    }
    sv__jw_end_arr(&w);
    sv__jw_arr(&w, "curves");
    for (int c = 0; c < nc; c++) {
        const sv_row_t *first = &rows[cv[c].first];
        sv__jw_obj(&w, NULL);
        sv__jw_obj(&w, "fixed");
        for (int k = 1; k < nkeys; k++)
            sv__jw_str(&w, keys[k], first->vals[k]);
        sv__jw_end_obj(&w);
        sv__jw_num(&w, "attainment_target", first->m[SV_COL_ATTAIN_TARGET]);
        if (cv[c].knee >= 0) {
            const sv_row_t *k = &rows[cv[c].members[cv[c].knee]];
            sv__jw_obj(&w, "knee");
            sv__jw_str(&w, keys[0], k->vals[0]);
            sv__jw_int(&w, "index", k->index);
            sv__jw_num(&w, "request_throughput", k->m[SV_COL_REQ_TPUT]);
            sv__jw_num(&w, "request_goodput", k->m[SV_COL_GOODPUT]);
            sv__jw_end_obj(&w);
        } else {
            sv__jw_null(&w, "knee");
        }
        const sv_row_t *nx = first_broken(rows, &cv[c]);
        if (nx) sv__jw_str(&w, "first_broken_budget", nx->broke);
        if (cv[c].best >= 0) {
            const sv_row_t *b = &rows[cv[c].members[cv[c].best]];
            sv__jw_obj(&w, "max_goodput");
            sv__jw_str(&w, keys[0], b->vals[0]);
            sv__jw_int(&w, "index", b->index);
            sv__jw_num(&w, "request_goodput", b->m[SV_COL_GOODPUT]);
            sv__jw_end_obj(&w);
        } else {
            sv__jw_null(&w, "max_goodput");
        }
        sv__jw_end_obj(&w);
    }
    sv__jw_end_arr(&w);
    sv__jw_end_obj(&w);
    fputc('\n', f);
    return sv__close_out(f, path, err);
}

int sv_sweep_write(const char *outdir, char keys[][128], int nkeys, const sv_row_t *rows,
                   long nrows, FILE *table, sv_error_t *err)
{
    int rc = make_dirs(outdir, err);
    if (rc) return rc;
    char path[1200];
    snprintf(path, sizeof path, "%s/sweep.csv", outdir);
    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    fputs("index", f);
    for (int k = 0; k < nkeys; k++) {
        fputc(',', f);
        put_field(f, keys[k]);
    }
    for (int c = 0; c < SV_NCOLS; c++)
        fprintf(f, ",%s", sv_col_names[c]);
    fputs(",error", f);
    int layered = 0;
    for (long i = 0; i < nrows; i++)
        layered |= rows[i].broke[0] != '\0';
    fputs(layered ? ",broken_budget\n" : "\n", f);
    for (long i = 0; i < nrows; i++)
        put_row(f, &rows[i], nkeys);
    if ((rc = sv__close_out(f, path, err))) return rc;
    curve_t *cv;
    int nc;
    if (build_curves(rows, nrows, nkeys, &cv, &nc))
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    snprintf(path, sizeof path, "%s/sweep.json", outdir);
    rc = write_json(path, keys, nkeys, rows, nrows, cv, nc, err);
    if (!rc && table) print_table(table, keys, nkeys, rows, nrows, cv, nc);
    free_curves(cv);
    return rc;
}

/* ---- merging shards ------------------------------------------------------------------------ */

static int copy_file(const char *from, const char *to, sv_error_t *err)
{
    char *buf;
    size_t len;
    int rc = sv__read_file(from, (size_t)1 << 32, &buf, &len, err);
    if (rc) return rc;
    FILE *f = fopen(to, "wb");
    if (!f) {
        free(buf);
        return sv_errorf(err, SV_EIO, "%s: cannot write: %s", to, strerror(errno));
    }
    size_t w = fwrite(buf, 1, len, f);
    free(buf);
    if (sv__close_out(f, to, err) || w != len) return sv_errorf(err, SV_EIO, "%s: write error", to);
    return 0;
}

static int cmp_row_index(const void *a, const void *b)
{
    long x = ((const sv_row_t *)a)->index, y = ((const sv_row_t *)b)->index;
    return (x > y) - (x < y);
}

int sv_sweep_merge(const char *outdir, const char *const *dirs, int ndirs, FILE *table,
                   sv_error_t *err)
{
    char keys[SV_MAX_VARY][128];
    int nkeys = -1, rc = 0;
    sv_row_t *rows = NULL;
    long nrows = 0, cap = 0;
    char header0[4096] = "";
    for (int d = 0; d < ndirs && !rc; d++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/sweep.csv", dirs[d]);
        char *buf;
        size_t len;
        if ((rc = sv__read_file(path, (size_t)1 << 31, &buf, &len, err))) break;
        char *nl = strchr(buf, '\n');
        if (!nl) {
            free(buf);
            rc = sv_errorf(err, SV_EPARSE, "%s: no header row", path);
            break;
        }
        *nl = '\0';
        if (nkeys < 0) {
            snprintf(header0, sizeof header0, "%s", buf);
            char *p = buf, f[256];
            nkeys = 0;
            get_field(&p, f, sizeof f); /* index */
            while (get_field(&p, f, sizeof f) && strcmp(f, sv_col_names[0]) != 0 &&
                   nkeys < SV_MAX_VARY)
                snprintf(keys[nkeys++], 128, "%s", f);
        } else if (strcmp(header0, buf) != 0) {
            free(buf);
            rc = sv_errorf(err, SV_EPARSE, "%s: its columns differ from the first shard's", path);
            break;
        }
        char *p = nl + 1;
        long line = 1;
        while (!rc && *p) {
            line++;
            if (nrows == cap) {
                cap = cap ? cap * 2 : 256;
                sv_row_t *nr = realloc(rows, (size_t)cap * sizeof *rows);
                if (!nr) {
                    rc = sv_errorf(err, SV_ENOMEM, "out of memory");
                    break;
                }
                rows = nr;
            }
            char where[1300];
            snprintf(where, sizeof where, "%s:%ld", path, line);
            rc = parse_row(&p, nkeys, &rows[nrows], where, err);
            if (!rc) {
                char from[1200], to[1200];
                point_path(from, sizeof from, dirs[d], rows[nrows].index, "json");
                point_path(to, sizeof to, outdir, rows[nrows].index, "json");
                if (rows[nrows].ok && access(from, R_OK) == 0 &&
                    ((rc = make_dirs(outdir, err)) || (rc = copy_file(from, to, err))))
                    break;
                nrows++;
            }
        }
        free(buf);
    }
    if (!rc && nkeys < 0)
        rc = sv_errorf(err, SV_EINVAL, "merge needs at least one shard directory");
    if (!rc) {
        /* Points in index order; each must come from exactly one shard. */
        qsort(rows, (size_t)nrows, sizeof *rows, cmp_row_index);
        for (long i = 1; i < nrows && !rc; i++)
            if (rows[i].index == rows[i - 1].index)
                rc = sv_errorf(err, SV_EINVAL, "point %ld appears in two shards", rows[i].index);
    }
    if (!rc) rc = sv_sweep_write(outdir, keys, nkeys, rows, nrows, table, err);
    free(rows);
    return rc;
}
