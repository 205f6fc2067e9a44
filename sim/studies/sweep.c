/*
 * Sweeps (see include/servesim/studies/sweep.h): points of a grid run as full simulations, in
 * parallel processes if asked, their rows written so that shards merge exactly.
 */
#include "servesim/studies/sweep.h"

#include "servesim/studies/confidence.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/vec_int.h"
#include "base/fileio_int.h"
#include "base/jsonw_int.h"
#include "studies/parallel_int.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "servesim/metrics/contract.h"
#include "servesim/base/yaml.h"
#include "servesim/base/progress.h"

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

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void sv_vary_free(sv_vary_t *v)
{
    for (int i = 0; i < v->n; i++) {
        free(v->vals[i]);
        free(v->labels[i]);
        v->labels[i] = NULL;
    }
    v->n = 0;
}

/* The length of a NAME= label at the start of s (len bytes), 0 when there is none. */
static size_t label_len(const char *s, size_t len)
{
    size_t i = 0;
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-'))
        i++;
    return i < len && s[i] == '=' && i + 1 < len ? i : 0;
}

static int add_text(sv_vary_t *v, const char *s, size_t len, const char *arg, sv_error_t *err)
{
    if (v->n == SV_MAX_VALUES)
        return sv_errorf(err, SV_ELIMIT, "--vary %s: more than %d values", arg, SV_MAX_VALUES);
    size_t l = label_len(s, len);
    v->labels[v->n] = NULL;
    if (l && !(v->labels[v->n] = dup_n(s, l))) return sv_errorf(err, SV_ENOMEM, "out of memory");
    if (l) s += l + 1, len -= l + 1;
    if (!(v->vals[v->n] = dup_n(s, len))) {
        free(v->labels[v->n]);
        v->labels[v->n] = NULL;
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    v->n++;
    return 0;
}

/* Range values print with ten significant digits, so 0.1:0.5:0.1 gives 0.3, not
 * 0.30000000000000004; whole numbers print without ".0" so integer keys accept them. */
static int add_value(sv_vary_t *v, double x, const char *arg, sv_error_t *err)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%.10g", x);
    return add_text(v, buf, strlen(buf), arg, err);
}

/* The end of the list item starting at p: the next `sep` outside YAML flow brackets. */
static const char *item_end(const char *p, char sep, char stop)
{
    int depth = 0;
    while (*p && (depth > 0 || (*p != sep && *p != stop))) {
        if (*p == '{' || *p == '[') depth++;
        if (*p == '}' || *p == ']') depth--;
        p++;
    }
    return p;
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
    int rc = 0;
    if (strchr(spec, ':') && !strchr(spec, '{') && !strchr(spec, '[') && strlen(spec) < 64 &&
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
        for (double x = lo; !rc && x <= hi * (1 + 1e-12); x = geo ? x * step : lo + step * v->n)
            rc = add_value(v, x, arg, err);
    } else {
        /* A list of values of any length; YAML flow values ({...}, [...]) are kept whole. */
        for (const char *p = spec; !rc && *p;) {
            const char *q = item_end(p, ',', '\0');
            if (q == p)
                rc = sv_errorf(err, SV_EINVAL, "--vary %s: empty value in the list", arg);
            else
                rc = add_text(v, p, (size_t)(q - p), arg, err);
            if (!rc && *q && !q[1])
                rc = sv_errorf(err, SV_EINVAL, "--vary %s: empty value in the list", arg);
            p = *q ? q + 1 : q;
        }
    }
    if (rc) sv_vary_free(v);
    return rc;
}

int sv_vary_parse_all(const char *arg, sv_vary_t *v, int room, int *nkeys, sv_error_t *err)
{
    const char *eq = strchr(arg, '=');
    const char *comma = strchr(arg, ',');
    *nkeys = 0;
    if (!eq || !comma || comma > eq) {
        if (room < 1) return sv_errorf(err, SV_ELIMIT, "at most %d --vary keys", SV_MAX_VARY);
        int rc = sv_vary_parse(arg, &v[0], err);
        if (!rc) *nkeys = 1;
        return rc;
    }
    /* Zipped: K1,K2=a1,b1;a2,b2 */
    int nk = 0, rc = 0;
    for (const char *p = arg; p < eq;) {
        const char *q = p;
        while (q < eq && *q != ',')
            q++;
        if (q == p || (size_t)(q - p) >= sizeof v[0].key)
            return sv_errorf(err, SV_EINVAL,
                             "--vary %s: expected KEY1,KEY2=a1,b1;a2,b2 (zipped keys, one tuple "
                             "of values per point, tuples separated by ';')",
                             arg);
        if (nk == room) return sv_errorf(err, SV_ELIMIT, "at most %d --vary keys", SV_MAX_VARY);
        memset(&v[nk], 0, sizeof v[nk]);
        memcpy(v[nk].key, p, (size_t)(q - p));
        v[nk].zip = nk > 0;
        nk++;
        p = q < eq ? q + 1 : q;
    }
    if (eq[-1] == ',')
        return sv_errorf(err, SV_EINVAL,
                         "--vary %s: expected KEY1,KEY2=a1,b1;a2,b2 (zipped keys, one tuple "
                         "of values per point, tuples separated by ';')",
                         arg);
    const char *p = eq + 1;
    if (!*p)
        rc =
            sv_errorf(err, SV_EINVAL, "--vary %s: expected tuples of %d values after '='", arg, nk);
    long tuple = 0;
    while (!rc && *p) {
        tuple++;
        const char *end = item_end(p, ';', '\0');
        int k = 0, bad = 0;
        for (const char *f = p; !rc;) {
            const char *q = item_end(f, ',', ';'); /* <= end */
            if (k == nk || q == f) {
                bad = 1;
                break;
            }
            rc = add_text(&v[k++], f, (size_t)(q - f), arg, err);
            if (q == end) break;
            f = q + 1;
        }
        /* the tuple's label, on its first value, names every key's value of the tuple */
        for (int j = 1; !rc && !bad && k == nk && j < nk && v[0].labels[v[0].n - 1]; j++)
            if (!v[j].labels[v[j].n - 1] &&
                !(v[j].labels[v[j].n - 1] =
                      dup_n(v[0].labels[v[0].n - 1], strlen(v[0].labels[v[0].n - 1]))))
                rc = sv_errorf(err, SV_ENOMEM, "out of memory");
        if (!rc && (bad || k != nk))
            rc = sv_errorf(err, SV_EINVAL,
                           "--vary %s: tuple %ld: expected %d non-empty values separated by ',' "
                           "(one per key), tuples separated by ';'",
                           arg, tuple, nk);
        p = *end ? end + 1 : end;
        if (!rc && *end && !*p) /* a trailing ';': an empty last tuple, as ";;" is one */
            rc = sv_errorf(err, SV_EINVAL,
                           "--vary %s: tuple %ld: expected %d non-empty values separated by ',' "
                           "(one per key), tuples separated by ';'",
                           arg, tuple + 1, nk);
    }
    if (rc) {
        for (int k = 0; k < nk; k++)
            sv_vary_free(&v[k]);
        return rc;
    }
    *nkeys = nk;
    return 0;
}

/* The position (digit) of group leader g in point index: leaders before it vary faster. */
static int leader_of(const sv_sweep_t *sw, int k)
{
    while (k > 0 && sw->vary[k].zip)
        k--;
    return k;
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
    /* The load key's group first: it varies fastest and is the x axis. */
    const char *load = sw->load ? sw->load : SV_DEFAULT_LOAD;
    int kl = -1;
    for (int k = 0; k < sw->nvary; k++)
        if (strcmp(sw->vary[k].key, load) == 0) kl = k;
    if (kl < 0 && sw->load) {
        char list[800] = "";
        for (int k = 0; k < sw->nvary; k++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", k ? ", " : "", sw->vary[k].key);
        }
        return sv_errorf(err, SV_EINVAL, "--load %s: not a varied key (varied: %s)", sw->load,
                         list);
    }
    if (kl > 0) {
        int g = leader_of(sw, kl), e = g + 1;
        while (e < sw->nvary && sw->vary[e].zip)
            e++;
        int len = e - g;
        static sv_vary_t tmp[SV_MAX_VARY];
        memcpy(tmp, &sw->vary[g], (size_t)len * sizeof tmp[0]);
        memmove(&sw->vary[len], &sw->vary[0], (size_t)g * sizeof tmp[0]);
        memcpy(&sw->vary[0], tmp, (size_t)len * sizeof tmp[0]);
    }
    for (int k = 0; k < sw->nvary; k++) {
        if (sw->vary[k].zip) continue;
        n *= sw->vary[k].n;
        if (n > SV_MAX_POINTS)
            return sv_errorf(err, SV_ELIMIT, "the sweep has more than %d points", SV_MAX_POINTS);
    }
    sw->npoints = n;
    return 0;
}

void sv_sweep_free(sv_sweep_t *sw)
{
    for (int k = 0; k < sw->nvary; k++)
        sv_vary_free(&sw->vary[k]);
    sw->nvary = 0;
}

/* The position of point index in vary key k's values. */
static int value_at(const sv_sweep_t *sw, long index, int k)
{
    int g = leader_of(sw, k);
    for (int j = 0; j < g; j++)
        if (!sw->vary[j].zip) index /= sw->vary[j].n;
    return (int)(index % sw->vary[k].n);
}

const char *sv_sweep_value(const sv_sweep_t *sw, long index, int k)
{
    return sw->vary[k].vals[value_at(sw, index, k)];
}

const char *sv_sweep_label(const sv_sweep_t *sw, long index, int k)
{
    int i = value_at(sw, index, k);
    return sw->vary[k].labels[i] ? sw->vary[k].labels[i] : sw->vary[k].vals[i];
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

/* The --set texts "KEY=VALUE" of a point: the base overrides, then the varied keys. */
static const char **point_sets(const sv_sweep_t *sw, long index, char **own)
{
    const char **sets = malloc((size_t)(sw->nsets + sw->nvary + 1) * sizeof *sets);
    if (!sets) return NULL;
    for (int i = 0; i < sw->nsets; i++)
        sets[i] = sw->sets[i];
    for (int k = 0; k < sw->nvary; k++) {
        const char *val = sv_sweep_value(sw, index, k);
        size_t len = strlen(sw->vary[k].key) + strlen(val) + 2;
        if (!(own[k] = malloc(len))) {
            for (int j = 0; j < k; j++)
                free(own[j]);
            free(sets);
            return NULL;
        }
        snprintf(own[k], len, "%s=%s", sw->vary[k].key, val);
        sets[sw->nsets + k] = own[k];
    }
    return sets;
}

static void free_sets(const sv_sweep_t *sw, const char **sets, char **own)
{
    if (sets)
        for (int k = 0; k < sw->nvary; k++)
            free(own[k]);
    free((void *)sets);
}

static void row_values(const sv_sweep_t *sw, long index, sv_row_t *row)
{
    for (int k = 0; k < sw->nvary; k++)
        row->vals[k] = sv_sweep_label(sw, index, k);
}

/* One point: the source's parsed scenario (the base with --set) with the point's own
 * overrides applied to a copy (sv_scenario_src_load), run, its file written. */
static void run_point(const sv_sweep_t *sw, sv_scenario_src_t *src, const sv_catalog_t *cat,
                      long index, const char *outdir, sv_row_t *row)
{
    memset(row, 0, sizeof *row);
    row->index = index;
    row_values(sw, index, row);
    for (int c = 0; c < SV_NCOLS; c++)
        row->m[c] = NAN;
    char *own[SV_MAX_VARY];
    const char **sets = point_sets(sw, index, own);
    sv_error_t err;
    sv_scenario_t *sc = NULL;
    sv_result_t *res = NULL;
    int rc = !sets ? sv_errorf(&err, SV_ENOMEM, "out of memory")
                   : sv_scenario_src_load(src, sets + sw->nsets, sw->nvary, cat, &sc, &err);
    if (!rc) rc = sv_sim_run(sc, &res, &err);
    if (sw->write_point) {
        /* a point that fails leaves no file: not an earlier sweep's into the same --out */
        char path[1200];
        point_path(path, sizeof path, outdir, index, "json");
        if (!rc) rc = sw->write_point(res, path, &err);
        if (rc) remove(path);
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
    free_sets(sw, sets, own);
}

int sv_sweep_check_keys(const sv_sweep_t *sw, const sv_catalog_t *cat, sv_error_t *err)
{
    char *own[SV_MAX_VARY];
    const char **sets = point_sets(sw, 0, own);
    if (!sets) return sv_errorf(err, SV_ENOMEM, "out of memory");
    int nsets = sw->nsets + sw->nvary;
    sv_scenario_t *sc = NULL;
    sv_error_t e;
    int rc = sv_scenario_load(sw->scenario, sets, nsets, cat, &sc, &e);
    sv_scenario_free(sc);
    free_sets(sw, sets, own);
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

/* Next CSV field of *p (quotes honoured, "" = a quote) into out (n bytes, truncated; out may
 * be NULL to measure); advances past the comma. *len: the field's full length. */
static int get_field_n(char **p, char *out, size_t n, size_t *len)
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
            if (out && k + 1 < n) out[k] = *s;
            k++;
        }
    } else {
        for (; *s && *s != ',' && *s != '\n'; s++) {
            if (out && k + 1 < n) out[k] = *s;
            k++;
        }
    }
    if (out && n) out[k < n ? k : n - 1] = '\0';
    if (len) *len = k;
    int more = *s == ',';
    if (*s == ',' || *s == '\n') s++;
    *p = s;
    return more;
}

static int get_field(char **p, char *out, size_t n)
{
    return get_field_n(p, out, n, NULL);
}

/* The next field as a new string (NULL when out of memory). */
static char *get_field_dup(char **p)
{
    char *q = *p;
    size_t len;
    get_field_n(&q, NULL, 0, &len);
    char *s = malloc(len + 1);
    if (s)
        get_field(p, s, len + 1);
    else
        *p = q;
    return s;
}

static void free_row_vals(sv_row_t *r, int nkeys)
{
    for (int k = 0; k < nkeys; k++) {
        free((void *)r->vals[k]);
        r->vals[k] = NULL;
    }
}

/* One row; with keep_vals its values become new strings (free_row_vals), else they are
 * skipped and left NULL. */
static int parse_row(char **p, int nkeys, int keep_vals, sv_row_t *r, const char *where,
                     sv_error_t *err)
{
    char f[512];
    memset(r, 0, sizeof *r);
    get_field(p, f, sizeof f);
    if (sv_parse_long(f, &r->index) || r->index < 0)
        return sv_errorf(err, SV_EPARSE, "%s: expected a point index, got '%s'", where, f);
    for (int k = 0; k < nkeys; k++) {
        if (!keep_vals) {
            get_field(p, NULL, 0);
            continue;
        }
        if (!(r->vals[k] = get_field_dup(p))) {
            free_row_vals(r, nkeys);
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        }
    }
    for (int c = 0; c < SV_NCOLS; c++) {
        get_field(p, f, sizeof f);
        if (strcmp(f, "nan") == 0)
            r->m[c] = NAN;
        else if (sv_parse_double(f, &r->m[c])) {
            free_row_vals(r, nkeys);
            return sv_errorf(err, SV_EPARSE, "%s: column %s: expected a number, got '%s'", where,
                             sv_col_names[c], f);
        }
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

typedef struct run_ctx {
    const sv_sweep_t *sw;
    sv_scenario_src_t *src;
    const sv_catalog_t *cat;
    const char *outdir;
    sv_progress_t *progress;
} run_ctx_t;

static void work_point(long i, void *out, void *ctx)
{
    const run_ctx_t *c = ctx;
    run_point(c->sw, c->src, c->cat, i, c->outdir, out);
}

static void died_point(long i, void *out, void *ctx)
{
    const run_ctx_t *c = ctx;
    sv_row_t *row = out;
    memset(row, 0, sizeof *row);
    row->index = i;
    for (int k = 0; k < SV_NCOLS; k++)
        row->m[k] = NAN;
    snprintf(row->error, sizeof row->error, "the worker process died");
    (void)c;
}

/* A row from a worker holds the worker's pointers: point its values again. */
static void done_point(long i, void *out, void *ctx)
{
    const run_ctx_t *c = ctx;
    row_values(c->sw, i, out);
}

static void progress_point(long finished, long total, void *ctx)
{
    const run_ctx_t *c = ctx;
    sv_progress_update(c->progress, "servesim sweep: %ld/%ld points", finished, total);
}

/* Point files of an earlier, larger sweep into the same folder: indexes past this one's. */
static void remove_stale_points(const char *outdir, long npoints)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/points", outdir);
    DIR *d = opendir(p);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        long index;
        char tail[8];
        if (sscanf(e->d_name, "point-%ld.%7s", &index, tail) == 2 && index >= npoints &&
            strcmp(tail, "json") == 0) {
            char f[1500];
            snprintf(f, sizeof f, "%s/%s", p, e->d_name);
            remove(f);
        }
    }
    closedir(d);
}

int sv_sweep_run(const sv_sweep_t *sw, const sv_catalog_t *cat, const char *outdir, int jobs,
                 int shard, int nshards, sv_row_t *rows, FILE *progress, sv_error_t *err)
{
    int rc = make_dirs(outdir, err);
    if (rc) return rc;
    if (sw->write_point) remove_stale_points(outdir, sw->npoints);
    for (long i = 0; i < sw->npoints; i++)
        rows[i].ok = -1;
    /* The scenario is parsed once (with --set); each point applies its own values to a
     * copy. With worker processes, reading the first point here, before any of them forks,
     * fills the source's trace cache, so every worker inherits the trace instead of reading
     * it again; run in this process, the first point fills it itself. */
    sv_scenario_src_t *src;
    if ((rc = sv_scenario_src_open(sw->scenario, sw->sets, sw->nsets, &src, err))) return rc;
    if (jobs > 1) {
        char *own[SV_MAX_VARY];
        const char **sets = point_sets(sw, shard - 1 < sw->npoints ? shard - 1 : 0, own);
        sv_scenario_t *first = NULL;
        sv_error_t ignored; /* a point that does not load fails again, as a row, below */
        if (sets) sv_scenario_src_load(src, sets + sw->nsets, sw->nvary, cat, &first, &ignored);
        sv_scenario_free(first);
        free_sets(sw, sets, own);
    }
    sv_progress_t pr;
    sv_progress_start(&pr, progress);
    run_ctx_t ctx = {sw, src, cat, outdir, &pr};
    sv__pmap_t m = {.n = sw->npoints,
                    .first = shard - 1,
                    .stride = nshards,
                    .jobs = jobs,
                    .size = sizeof *rows,
                    .results = rows,
                    .work = work_point,
                    .died = died_point,
                    .done = done_point,
                    .progress = progress_point,
                    .ctx = &ctx};
    rc = sv__parallel_map(&m, err);
    sv_progress_end(&pr);
    sv_scenario_src_free(src);
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

const char *sv_fmt_num(double v, char buf[32])
{
    double a = fabs(v);
    if (isnan(v))
        snprintf(buf, 32, "-");
    else if (a >= 1e9 || isinf(v))
        snprintf(buf, 32, "%.3g", v);
    else if (a >= 100 || v == 0)
        snprintf(buf, 32, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, 32, "%.1f", v);
    else if (a >= 1)
        snprintf(buf, 32, "%.2f", v);
    else if (a >= 1e-4) /* three significant digits, trailing zeros kept: 0.660, 0.0123 */
        snprintf(buf, 32, "%.*f", 2 - (int)floor(log10(a) + 1e-12), v);
    else
        snprintf(buf, 32, "%.3g", v);
    return buf;
}

/* ---- curves ------------------------------------------------------------------------------ */

typedef struct keyed {
    const sv_row_t *r;
    long i;
    int from, to; /* compare vals[from..to) */
} keyed_t;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed_t *a = pa, *b = pb;
    for (int k = a->from; k < a->to; k++) {
        int c = strcmp(a->r->vals[k], b->r->vals[k]);
        if (c) return c;
    }
    return (a->i > b->i) - (a->i < b->i);
}

static int same_keys(const sv_row_t *a, const sv_row_t *b, int from, int to)
{
    for (int k = from; k < to; k++)
        if (strcmp(a->vals[k], b->vals[k])) return 0;
    return 1;
}

/* Distinct values of keys [from, to) over the rows (ks: scratch of nrows entries). */
static long distinct(const sv_row_t *rows, long nrows, int from, int to, keyed_t *ks)
{
    for (long i = 0; i < nrows; i++)
        ks[i] = (keyed_t){&rows[i], i, from, to};
    qsort(ks, (size_t)nrows, sizeof *ks, cmp_keyed);
    long d = nrows > 0;
    for (long i = 1; i < nrows; i++)
        d += !same_keys(ks[i - 1].r, ks[i].r, from, to);
    return d;
}

/* Key j moves in lockstep with key 0: as many distinct values as key 0 and as the pairs. */
static int lockstep(const sv_row_t *rows, long nrows, int j, keyed_t *ks)
{
    long d0 = distinct(rows, nrows, 0, 1, ks), dj = distinct(rows, nrows, j, j + 1, ks);
    if (d0 != dj) return 0;
    /* pairs (0, j): keys 0..j compared would mix in others; compare 0 and j only */
    for (long i = 0; i < nrows; i++)
        ks[i] = (keyed_t){&rows[i], i, 0, 1};
    qsort(ks, (size_t)nrows, sizeof *ks, cmp_keyed);
    for (long i = 1; i < nrows; i++)
        if (same_keys(ks[i - 1].r, ks[i].r, 0, 1) && !same_keys(ks[i - 1].r, ks[i].r, j, j + 1))
            return 0;
    return 1;
}

static int cmp_first(const void *pa, const void *pb)
{
    long x = ((const sv_curve_t *)pa)->first, y = ((const sv_curve_t *)pb)->first;
    return (x > y) - (x < y);
}

int sv_sweep_curves(char keys[][128], int nkeys, const sv_row_t *rows, long nrows, const char *load,
                    sv_curves_t *out, sv_error_t *err)
{
    memset(out, 0, sizeof *out);
    keyed_t *ks = malloc(((size_t)nrows + 1) * sizeof *ks);
    out->c = calloc((size_t)nrows + 1, sizeof *out->c);
    out->mem = malloc(((size_t)nrows + 1) * sizeof *out->mem);
    if (!ks || !out->c || !out->mem) {
        free(ks);
        sv_curves_free(out);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    out->is_load = nkeys > 0 && strcmp(keys[0], load ? load : SV_DEFAULT_LOAD) == 0;
    out->nx = nkeys > 0;
    while (out->nx < nkeys && nrows > 0 && lockstep(rows, nrows, out->nx, ks))
        out->nx++;
    /* Rows grouped by the values of the curve keys, in row order within a group. */
    for (long i = 0; i < nrows; i++)
        ks[i] = (keyed_t){&rows[i], i, out->nx, nkeys};
    qsort(ks, (size_t)nrows, sizeof *ks, cmp_keyed);
    int nc = 0;
    for (long i = 0; i < nrows; i++) {
        if (i == 0 || !same_keys(ks[i - 1].r, ks[i].r, out->nx, nkeys)) {
            out->c[nc].first = ks[i].i;
            out->c[nc].members = out->mem + i;
            nc++;
        }
        out->c[nc - 1].members[out->c[nc - 1].n++] = ks[i].i;
    }
    free(ks);
    qsort(out->c, (size_t)nc, sizeof *out->c, cmp_first);
    out->n = nc;
    for (long i = 0; i < nrows; i++)
        if (rows[i].ok && (!isnan(rows[i].m[SV_COL_ATTAIN]) || rows[i].broke[0])) out->slo = 1;
    for (int c = 0; c < nc; c++) {
        sv_curve_t *cv = &out->c[c];
        int n = cv->n;
        double *a = malloc((size_t)n * sizeof *a), *g = malloc((size_t)n * sizeof *g);
        if (!a || !g) {
            free(a);
            free(g);
            sv_curves_free(out);
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        }
        for (int j = 0; j < n; j++) {
            const sv_row_t *r = &rows[cv->members[j]];
            a[j] = !r->ok ? NAN : r->broke[0] ? (strcmp(r->broke, "-") == 0) : r->m[SV_COL_ATTAIN];
            g[j] = r->ok ? r->m[SV_COL_GOODPUT] : NAN;
        }
        double target = rows[cv->first].m[SV_COL_ATTAIN_TARGET];
        if (isnan(target)) target = 0.9;
        sv_knee(a, g, n, target, &cv->knee, &cv->best);
        cv->met = -1;
        for (int j = 0; j < n && cv->met < 0; j++)
            if (a[j] >= target) cv->met = j;
        cv->met_after = cv->met >= 0;
        for (int j = cv->met + 1; cv->met >= 0 && j < n; j++)
            if (!(a[j] >= target)) cv->met_after = 0;
        if (out->is_load)
            cv->edge = n > 1 && (cv->knee <= 0 || cv->knee == n - 1);
        else
            cv->edge = n > 1 && (cv->met <= 0 || cv->met == n - 1);
        free(a);
        free(g);
    }
    return 0;
}

/* A layered contract's point just past the knee (the first along the curve when none
 * holds), whose broken budget is the one the knee ran into; NULL otherwise. */
static const sv_row_t *first_broken(const sv_row_t *rows, const sv_curve_t *cu)
{
    int j = cu->knee + 1;
    if (j >= cu->n) return NULL;
    const sv_row_t *r = &rows[cu->members[j]];
    return r->ok == 1 && r->broke[0] && strcmp(r->broke, "-") != 0 ? r : NULL;
}

void sv_curves_free(sv_curves_t *cv)
{
    free(cv->c);
    free(cv->mem);
    memset(cv, 0, sizeof *cv);
}

/* "k1=v1, k2=v2" for keys [from, to) of a row. */
static void key_text(char *buf, size_t n, char keys[][128], int from, int to, const sv_row_t *r)
{
    size_t l = 0;
    buf[0] = '\0';
    for (int k = from; k < to && l < n; k++) {
        snprintf(buf + l, n - l, "%s%s=%s", k > from ? ", " : "", keys[k], r->vals[k]);
        l = strlen(buf);
    }
}

void sv_curve_summary(const sv_curves_t *cv, int c, char keys[][128], int nkeys,
                      const sv_row_t *rows, char *buf, size_t n)
{
    FILE *t = fmemopen(buf, n, "w");
    if (!t) {
        if (n) buf[0] = '\0';
        return;
    }
    const sv_curve_t *cu = &cv->c[c];
    const sv_row_t *f = &rows[cu->first];
    const sv_row_t *last = &rows[cu->members[cu->n - 1]];
    double target = f->m[SV_COL_ATTAIN_TARGET];
    if (isnan(target)) target = 0.9;
    char at[1024], at2[1024], num[32];
    if (nkeys > cv->nx) {
        key_text(at, sizeof at, keys, cv->nx, nkeys, f);
        fprintf(t, "[%s]\n", at);
    }
    if (!cv->slo) {
        fprintf(t, "no SLOs in the scenario: no knee (give slo.ttft_ms / tpot_ms)\n");
    } else if (cv->is_load) {
        if (cu->knee < 0 && !f->ok)
            fprintf(t, "knee: none (the first point failed: %s)\n", f->error);
        else if (cu->knee < 0)
            fprintf(t, "knee: none (the SLOs fail at %.0f%% attainment from the first point)\n",
                    100.0 * target);
        else
            fprintf(t, "knee: %s=%s is the highest load meeting the SLOs for %.0f%% of requests\n",
                    keys[0], rows[cu->members[cu->knee]].vals[0], 100.0 * target);
        const sv_row_t *nx = first_broken(rows, cu);
        if (nx) fprintf(t, "first broken budget: %s at %s=%s\n", nx->broke, keys[0], nx->vals[0]);
        if (cu->edge && cu->knee < 0)
            fprintf(t,
                    "warning: the SLOs fail from the grid's first load (%s=%s); extend the "
                    "grid down\n",
                    keys[0], f->vals[0]);
        else if (cu->edge && cu->knee == cu->n - 1)
            fprintf(t,
                    "warning: the knee is the grid's last load (%s=%s); the SLOs may hold at "
                    "higher loads: extend the grid up\n",
                    keys[0], last->vals[0]);
        else if (cu->edge)
            fprintf(t,
                    "warning: the knee is the grid's first load (%s=%s); the SLOs fail from "
                    "%s=%s: refine the grid between them\n",
                    keys[0], f->vals[0], keys[0], rows[cu->members[1]].vals[0]);
    } else {
        key_text(at2, sizeof at2, keys, 0, cv->nx, last);
        if (cu->met < 0) {
            key_text(at, sizeof at, keys, 0, cv->nx, f);
            fprintf(t, "SLOs not met for %.0f%% of requests anywhere on the grid (%s to %s)\n",
                    100.0 * target, at, at2);
        } else {
            key_text(at, sizeof at, keys, 0, cv->nx, &rows[cu->members[cu->met]]);
            if (cu->met_after)
                fprintf(t, "SLOs met from %s (for %.0f%% of requests, at every later point)\n", at,
                        100.0 * target);
            else
                fprintf(t,
                        "SLOs first met at %s (for %.0f%% of requests), but not at every later "
                        "point\n",
                        at, 100.0 * target);
        }
        if (cu->edge && cu->met < 0)
            fprintf(t, "warning: extend the grid: the SLOs may be met past its last point\n");
        else if (cu->edge && cu->met == 0)
            fprintf(t,
                    "warning: the SLOs are met at the grid's first point (%s); they may be met "
                    "below it too: extend the grid down\n",
                    at);
        else if (cu->edge)
            fprintf(t,
                    "warning: the SLOs are met only at the grid's last point (%s): extend the "
                    "grid up\n",
                    at);
    }
    if (cu->best >= 0) {
        key_text(at, sizeof at, keys, 0, cv->nx, &rows[cu->members[cu->best]]);
        fprintf(t, "max goodput: %s req/s at %s\n",
                sv_fmt_num(rows[cu->members[cu->best]].m[SV_COL_GOODPUT], num), at);
    }
    fclose(t);
}

/* A value cut to w characters ("..." at the end when cut). */
static void put_cell(FILE *t, const char *s, int w)
{
    int l = (int)strlen(s);
    if (l <= w)
        fprintf(t, "%-*s ", w, s);
    else
        fprintf(t, "%.*s... ", w - 3, s);
}

static void print_table(FILE *t, char keys[][128], int nkeys, const sv_row_t *rows, long nrows,
                        const sv_curves_t *cv)
{
    int w[SV_MAX_VARY];
    for (int k = 0; k < nkeys; k++) {
        w[k] = (int)strlen(keys[k]);
        for (long i = 0; i < nrows; i++)
            if ((int)strlen(rows[i].vals[k]) > w[k]) w[k] = (int)strlen(rows[i].vals[k]);
        if (w[k] > 40) w[k] = 40;
    }
    for (int k = 0; k < nkeys; k++)
        put_cell(t, keys[k], w[k]);
    fprintf(t, "%8s %8s %8s %11s %6s %11s %11s %8s %5s\n", "req/s", "tok/s", "goodput",
            "goodput/GPU", "SLO %", "p99 TTFT ms", "p99 TPOT ms", "$/M tok", "band");
    char b[9][32];
    for (long i = 0; i < nrows; i++) {
        const sv_row_t *r = &rows[i];
        for (int k = 0; k < nkeys; k++)
            put_cell(t, r->vals[k], w[k]);
        if (!r->ok) {
            fprintf(t, "failed: %s\n", r->error);
            continue;
        }
        const double *m = r->m;
        char band[40];
        snprintf(band, sizeof band, "+-%.0f%%", m[SV_COL_BAND_TPUT]);
        fprintf(t, "%8s %8s %8s %11s %6s %11s %11s %8s %5s\n", sv_fmt_num(m[SV_COL_REQ_TPUT], b[0]),
                sv_fmt_num(m[SV_COL_OUT_TPUT], b[1]),
                sv_fmt_num(isnan(m[SV_COL_GOODPUT]) ? 0.0 : m[SV_COL_GOODPUT], b[2]),
                sv_fmt_num(isnan(m[SV_COL_GOODPUT_GPU]) ? 0.0 : m[SV_COL_GOODPUT_GPU], b[3]),
                isnan(m[SV_COL_ATTAIN]) ? "-" : sv_fmt_num(100.0 * m[SV_COL_ATTAIN], b[4]),
                sv_fmt_num(m[SV_COL_TTFT_P99], b[5]), sv_fmt_num(m[SV_COL_TPOT_P99], b[6]),
                sv_fmt_num(m[SV_COL_COST_MTOK], b[7]), band);
    }
    if (nrows > 0)
        fprintf(t, "band: throughput error band, holding %.0f%% of left-out validation points "
                   "(servesim validate)\n",
                sv_band_coverage_pct);
    char *sum = malloc(8192);
    for (int c = 0; sum && c < cv->n; c++) {
        sv_curve_summary(cv, c, keys, nkeys, rows, sum, 8192);
        fprintf(t, "\n%s", sum);
    }
    free(sum);
}

char *sv_sweep_config_json(const char *outdir, const sv_row_t *rows, long nrows)
{
    for (long i = 0; i < nrows; i++) {
        if (!rows[i].ok) continue;
        char path[1200], *buf;
        size_t len;
        sv_error_t e;
        point_path(path, sizeof path, outdir, rows[i].index, "json");
        if (sv__read_file(path, (size_t)1 << 30, &buf, &len, &e)) return NULL;
        cJSON *j = cJSON_ParseWithLength(buf, len);
        free(buf);
        cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "servesim"),
                                                    "config");
        char *text = c ? cJSON_PrintUnformatted(c) : NULL;
        cJSON_Delete(j);
        return text;
    }
    return NULL;
}

static int write_json(const char *path, char keys[][128], int nkeys, const sv_row_t *rows,
                      long nrows, const sv_curves_t *cv, const char *config, sv_error_t *err)
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
    sv__jw_arr(&w, "x_keys");
    for (int k = 0; k < cv->nx; k++)
        sv__jw_str(&w, NULL, keys[k]);
    sv__jw_end_arr(&w);
    sv__jw_str(&w, "x_axis", cv->is_load ? "load" : "other");
    if (config) { /* the first point's configuration block (the swept keys at its values) */
        sv__jw_key(&w, "config");
        fputs(config, f);
    }
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
    for (int c = 0; c < cv->n; c++) {
        const sv_curve_t *cu = &cv->c[c];
        const sv_row_t *first = &rows[cu->first];
        sv__jw_obj(&w, NULL);
        sv__jw_obj(&w, "fixed");
        for (int k = cv->nx; k < nkeys; k++)
            sv__jw_str(&w, keys[k], first->vals[k]);
        sv__jw_end_obj(&w);
        sv__jw_num(&w, "attainment_target", first->m[SV_COL_ATTAIN_TARGET]);
        int at = cv->is_load ? cu->knee : cu->met;
        if (at >= 0) {
            const sv_row_t *k = &rows[cu->members[at]];
            sv__jw_obj(&w, cv->is_load ? "knee" : "slos_met_from");
            for (int j = 0; j < cv->nx; j++)
                sv__jw_str(&w, keys[j], k->vals[j]);
            sv__jw_int(&w, "index", k->index);
            sv__jw_num(&w, "request_throughput", k->m[SV_COL_REQ_TPUT]);
            sv__jw_num(&w, "request_goodput", k->m[SV_COL_GOODPUT]);
            if (!cv->is_load) sv__jw_int(&w, "at_every_later_point", cu->met_after);
            sv__jw_end_obj(&w);
        } else {
            sv__jw_null(&w, cv->is_load ? "knee" : "slos_met_from");
        }
        sv__jw_int(&w, "at_grid_edge", cu->edge);
        const sv_row_t *nx = first_broken(rows, cu);
        if (nx && cv->is_load) sv__jw_str(&w, "first_broken_budget", nx->broke);
        if (cu->best >= 0) {
            const sv_row_t *b = &rows[cu->members[cu->best]];
            sv__jw_obj(&w, "max_goodput");
            for (int j = 0; j < cv->nx; j++)
                sv__jw_str(&w, keys[j], b->vals[j]);
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
                   long nrows, const char *load, FILE *table, sv_error_t *err)
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
    sv_curves_t cv;
    if ((rc = sv_sweep_curves(keys, nkeys, rows, nrows, load, &cv, err))) return rc;
    snprintf(path, sizeof path, "%s/sweep.json", outdir);
    char *config = sv_sweep_config_json(outdir, rows, nrows);
    rc = write_json(path, keys, nkeys, rows, nrows, &cv, config, err);
    free(config);
    if (!rc && table) print_table(table, keys, nkeys, rows, nrows, &cv);
    sv_curves_free(&cv);
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

int sv_sweep_merge(const char *outdir, const char *const *dirs, int ndirs, const char *load,
                   FILE *table, sv_error_t *err)
{
    char keys[SV_MAX_VARY][128];
    int nkeys = -1, rc = 0;
    sv_row_t *rows = NULL;
    long nrows = 0;
    size_t cap = 0;
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
            if (SV_GROW(rows, cap, (size_t)nrows + 1)) {
                rc = sv_errorf(err, SV_ENOMEM, "out of memory");
                break;
            }
            char where[1300];
            snprintf(where, sizeof where, "%s:%ld", path, line);
            rc = parse_row(&p, nkeys, 1, &rows[nrows], where, err);
            if (!rc) {
                nrows++; /* its values are freed below */
                char from[1200], to[1200];
                point_path(from, sizeof from, dirs[d], rows[nrows - 1].index, "json");
                point_path(to, sizeof to, outdir, rows[nrows - 1].index, "json");
                if (rows[nrows - 1].ok && access(from, R_OK) == 0 &&
                    ((rc = make_dirs(outdir, err)) || (rc = copy_file(from, to, err))))
                    break;
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
    if (!rc) rc = sv_sweep_write(outdir, keys, nkeys, rows, nrows, load, table, err);
    for (long i = 0; i < nrows; i++)
        free_row_vals(&rows[i], nkeys);
    free(rows);
    return rc;
}
