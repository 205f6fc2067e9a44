/*
 * Workload generation (see include/servesim/traffic/workload.h): arrival processes as the
 * vLLM benchmark client produces them, length distributions, and trace replay from
 * CSV files with errors that name the row.
 */
#include "servesim/traffic/workload.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/vec_int.h"
#include "base/fileio_int.h"
#include "traffic/workload_int.h"
#include "servesim/base/numeric.h"
#include "servesim/base/yaml.h"

uint64_t sv_stream_seed(uint64_t seed, uint64_t stream)
{
    return sv_mix64(seed + stream * 0x9e3779b97f4a7c15ULL); /* splitmix64's stream-th output */
}

/* ---- CSV ---------------------------------------------------------------------------- */

/* Split line in place at commas (quotes around a field are stripped). Returns count. */
static int split_csv(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        while (*p == ' ' || *p == '\t')
            p++;
        char *start = p;
        if (*p == '"') {
            start = ++p;
            while (*p && *p != '"')
                p++;
            if (*p == '"') *p++ = '\0';
            while (*p && *p != ',')
                p++;
        } else {
            while (*p && *p != ',')
                p++;
        }
        char *end = p;
        int last = *p == '\0';
        *p = '\0';
        while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            *--end = '\0';
        fields[n++] = start;
        if (last) break;
        p++;
    }
    return n;
}

typedef struct csv {
    char *buf;
    char *cursor;
    long row; /* 1-based line number of the line last returned */
    const char *path;
} csv_t;

static char *csv_next_line(csv_t *c)
{
    while (c->cursor && *c->cursor) {
        char *line = c->cursor;
        char *nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
            c->cursor = nl + 1;
        } else {
            c->cursor = NULL;
        }
        c->row++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (len == 0) continue; /* blank lines are skipped */
        return line;
    }
    return NULL;
}

#define MAX_COLS 64

/* Open a CSV and find the named columns in its header. */
static int csv_open(csv_t *c, const char *path, const char *const *names, int *idx, int n,
                    sv_error_t *err)
{
    size_t len;
    memset(c, 0, sizeof *c);
    c->path = path;
    int rc = sv__read_file(path, (size_t)4 << 30, &c->buf, &len, err);
    if (rc) return rc;
    c->cursor = c->buf;
    /* A NUL byte would end the text early and drop every row after it. */
    const char *nul = memchr(c->buf, '\0', len);
    if (nul) {
        long line = 1;
        for (const char *p = c->buf; p < nul; p++)
            line += *p == '\n';
        free(c->buf);
        return sv_errorf(err, SV_EPARSE, "%s:%ld: a NUL byte in the line (expected a text CSV)",
                         path, line);
    }
    /* Spreadsheets save UTF-8 with a byte-order mark; it is not part of the first name. */
    if (len >= 3 && memcmp(c->buf, "\xEF\xBB\xBF", 3) == 0) c->cursor += 3;
    char *header = csv_next_line(c);
    if (!header) {
        free(c->buf);
        return sv_errorf(err, SV_EPARSE, "%s: empty file (expected a CSV with a header row)", path);
    }
    char *fields[MAX_COLS];
    int nf = split_csv(header, fields, MAX_COLS);
    for (int i = 0; i < nf; i++)
        for (int j = i + 1; j < nf; j++)
            if (fields[i][0] && strcmp(fields[i], fields[j]) == 0) {
                rc = sv_errorf(err, SV_EPARSE,
                               "%s:%ld: column '%s' appears twice in the header (columns %d and "
                               "%d); give each column a distinct name",
                               path, c->row, fields[i], i + 1, j + 1);
                free(c->buf);
                return rc;
            }
    for (int k = 0; k < n; k++) {
        idx[k] = -1;
        for (int i = 0; i < nf; i++)
            if (strcmp(fields[i], names[k]) == 0) idx[k] = i;
        if (idx[k] < 0) {
            char have[512];
            size_t off = 0;
            have[0] = '\0';
            for (int i = 0; i < nf && off < sizeof have - 1; i++)
                off += (size_t)snprintf(have + off, sizeof have - off, "%s%s", i ? ", " : "",
                                        fields[i]);
            free(c->buf);
            return sv_errorf(err, SV_EPARSE, "%s:%ld: no column '%s' in the header (columns: %s)",
                             path, c->row, names[k], have);
        }
    }
    return 0;
}

static int whole_field(const csv_t *c, const char *col, const char *text, long *out,
                       sv_error_t *err)
{
    long v;
    if (sv_parse_long(text, &v) || v < 1 || v > 100000000L)
        return sv_errorf(err, SV_EPARSE,
                         "%s:%ld: column %s: expected a whole number >= 1, got '%s'", c->path,
                         c->row, col, text);
    *out = v;
    return 0;
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static long days_from_civil(long y, long m, long d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "2023-11-16 18:15:46.6805900" (or with 'T'), or a plain number of seconds. */
static int parse_time(const char *s, double *out)
{
    if (sv_parse_double(s, out) == 0) return isfinite(*out) ? 0 : -1;
    int y, mo, d, h, mi, n = 0;
    if (sscanf(s, "%4d-%2d-%2d%*1[ T]%2d:%2d:%n", &y, &mo, &d, &h, &mi, &n) != 5 || n == 0)
        return -1;
    double sec;
    if (sv_parse_double(s + n, &sec) || sec < 0 || sec >= 61 || mo < 1 || mo > 12 || d < 1 ||
        d > 31 || h > 23 || mi > 59)
        return -1;
    *out = (double)days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
    return 0;
}

void sv_trace_free(sv_trace_t *t)
{
    if (!t) return;
    free(t->time);
    free(t->input);
    free(t->output);
    free(t);
}

/* Rescale a loaded trace to its target mean rate, then repeat it cfg->loop times. */
static int trace_rescale_loop(const sv_trace_cfg_t *cfg, sv_trace_t *t, sv_error_t *err)
{
    double span = t->time[t->n - 1];
    if (cfg->mean_rate > 0) {
        if (t->n < 2 || !(span > 0))
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.trace.mean_rate needs at least two rows at different "
                             "times (the trace has %zu rows over %g s)",
                             cfg->path, t->n, span);
        /* speedup was 1 here: the trace's own mean rate is (n - 1) / span */
        double f = (double)(t->n - 1) / (span * cfg->mean_rate);
        for (size_t i = 0; i < t->n; i++)
            t->time[i] *= f;
        span *= f;
    }
    if (cfg->loop <= 1) return 0;
    size_t n = t->n;
    if ((double)n * (double)cfg->loop > (double)SV_MAX_TRACE_ROWS)
        return sv_errorf(err, SV_ELIMIT,
                         "%s: workload.trace.loop: %ld passes of %zu rows exceed the bound of %ld "
                         "rows",
                         cfg->path, cfg->loop, n, SV_MAX_TRACE_ROWS);
    size_t total = n * (size_t)cfg->loop;
    double *nt = realloc(t->time, total * sizeof *nt);
    if (nt) t->time = nt;
    int32_t *ni = realloc(t->input, total * sizeof *ni);
    if (ni) t->input = ni;
    int32_t *no = realloc(t->output, total * sizeof *no);
    if (no) t->output = no;
    if (!nt || !ni || !no) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", cfg->path);
    /* Each pass starts one mean gap after the last row of the one before. */
    double period = n > 1 ? span * (double)n / (double)(n - 1) : 1.0;
    for (long k = 1; k < cfg->loop; k++)
        for (size_t i = 0; i < n; i++) {
            t->time[(size_t)k * n + i] = t->time[i] + (double)k * period;
            t->input[(size_t)k * n + i] = t->input[i];
            t->output[(size_t)k * n + i] = t->output[i];
        }
    t->n = total;
    return 0;
}

int sv_trace_load(const sv_trace_cfg_t *cfg, sv_trace_t **out, sv_error_t *err)
{
    *out = NULL;
    const char *names[3] = {cfg->time_col, cfg->input_col, cfg->output_col};
    int idx[3];
    csv_t c;
    int rc = csv_open(&c, cfg->path, names, idx, 3, err);
    if (rc) return rc;
    sv_trace_t *t = calloc(1, sizeof *t);
    size_t cap[3] = {0, 0, 0}; /* of time, input, output */
    char *line;
    double t0 = 0, prev = -INFINITY;
    rc = t ? 0 : sv_errorf(err, SV_ENOMEM, "out of memory");
    double first = NAN;
    while (!rc && (line = csv_next_line(&c))) {
        if (cfg->limit > 0 && (long)t->n >= cfg->limit) break;
        if ((long)t->n >= SV_MAX_TRACE_ROWS) {
            rc = sv_errorf(err, SV_ELIMIT, "%s: more than %ld rows", cfg->path, SV_MAX_TRACE_ROWS);
            break;
        }
        char *f[MAX_COLS];
        int nf = split_csv(line, f, MAX_COLS);
        int need = idx[0] > idx[1] ? idx[0] : idx[1];
        if (idx[2] > need) need = idx[2];
        if (nf <= need) {
            rc = sv_errorf(err, SV_EPARSE, "%s:%ld: expected at least %d columns, got %d",
                           cfg->path, c.row, need + 1, nf);
            break;
        }
        double tm;
        long in = 0, outl = 0;
        if (parse_time(f[idx[0]], &tm)) {
            rc = sv_errorf(err, SV_EPARSE,
                           "%s:%ld: column %s: expected seconds or a date-time like "
                           "'2023-11-16 18:15:46.68', got '%s'",
                           cfg->path, c.row, cfg->time_col, f[idx[0]]);
            break;
        }
        if ((rc = whole_field(&c, cfg->input_col, f[idx[1]], &in, err)) ||
            (rc = whole_field(&c, cfg->output_col, f[idx[2]], &outl, err)))
            break;
        if (tm < prev) {
            rc = sv_errorf(err, SV_EPARSE,
                           "%s:%ld: column %s: time goes backwards (%s is before the row above)",
                           cfg->path, c.row, cfg->time_col, f[idx[0]]);
            break;
        }
        prev = tm;
        if (isnan(first)) first = tm;
        if (tm - first < cfg->window_start) continue;
        if (cfg->window_end > 0 && tm - first >= cfg->window_end) break;
        if (t->n == 0) t0 = tm;
        if (SV_GROW(t->time, cap[0], t->n + 1) || SV_GROW(t->input, cap[1], t->n + 1) ||
            SV_GROW(t->output, cap[2], t->n + 1)) {
            rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", cfg->path);
            break;
        }
        t->time[t->n] = (tm - t0) / (cfg->mean_rate > 0 ? 1.0 : cfg->speedup);
        t->input[t->n] = (int32_t)in;
        t->output[t->n] = (int32_t)outl;
        t->n++;
    }
    if (!rc && t->n == 0)
        rc = sv_errorf(err, SV_EPARSE, "%s: no data rows%s", cfg->path,
                       cfg->window_start > 0 || cfg->window_end > 0 ? " in the window" : "");
    free(c.buf);
    if (!rc) rc = trace_rescale_loop(cfg, t, err);
    if (rc) {
        sv_trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int sv_empirical_load(const char *path, const char *column, long **values, size_t *n,
                      sv_error_t *err)
{
    *values = NULL;
    *n = 0;
    int idx = 0;
    csv_t c;
    int rc = csv_open(&c, path, &column, &idx, 1, err);
    if (rc) return rc;
    size_t cap = 0, cnt = 0;
    long *v = NULL;
    char *line;
    while (!rc && (line = csv_next_line(&c))) {
        char *f[MAX_COLS];
        int nf = split_csv(line, f, MAX_COLS);
        long x = 0;
        if (nf <= idx) {
            rc = sv_errorf(err, SV_EPARSE, "%s:%ld: expected at least %d columns, got %d", path,
                           c.row, idx + 1, nf);
            break;
        }
        if ((rc = whole_field(&c, column, f[idx], &x, err))) break;
        if (SV_GROW(v, cap, cnt + 1)) {
            rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
            break;
        }
        v[cnt++] = x;
    }
    free(c.buf);
    if (!rc && cnt == 0) rc = sv_errorf(err, SV_EPARSE, "%s: no data rows", path);
    if (rc) {
        free(v);
        return rc;
    }
    *values = v;
    *n = cnt;
    return 0;
}

/* ---- rate profiles ---------------------------------------------------------------------- */

static double base_rate(const sv_rate_profile_t *p, double t)
{
    if (p->kind == SV_PROFILE_DIURNAL) {
        double a = (p->ratio - 1.0) / (p->ratio + 1.0);
        return p->mean *
               (1.0 + a * cos(2.0 * 3.14159265358979323846 * (t - p->peak_at) / p->period));
    }
    /* tables: the last point at or before t (t[0] = 0) */
    int lo = 0, hi = p->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (p->t[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (p->kind == SV_PROFILE_LINEAR && lo + 1 < p->n) {
        double f = (t - p->t[lo]) / (p->t[lo + 1] - p->t[lo]);
        return p->rate[lo] + f * (p->rate[lo + 1] - p->rate[lo]);
    }
    return p->rate[lo];
}

double sv_profile_rate(const sv_rate_profile_t *p, double t)
{
    double r = base_rate(p, t);
    for (int i = 0; i < p->nspikes; i++)
        if (t >= p->spikes[i].at && t < p->spikes[i].at + p->spikes[i].duration)
            r *= p->spikes[i].factor;
    return r;
}

double sv_profile_peak(const sv_rate_profile_t *p)
{
    double peak = 0.0;
    if (p->kind == SV_PROFILE_DIURNAL) {
        peak = p->mean * (1.0 + (p->ratio - 1.0) / (p->ratio + 1.0));
    } else {
        for (int i = 0; i < p->n; i++)
            if (p->rate[i] > peak) peak = p->rate[i];
    }
    /* spikes may overlap: the product of every factor above 1 bounds them all */
    for (int i = 0; i < p->nspikes; i++)
        if (p->spikes[i].factor > 1.0) peak *= p->spikes[i].factor;
    return peak;
}

double sv_profile_mean(const sv_rate_profile_t *p, double t0, double t1)
{
    if (!(t1 > t0)) return sv_profile_rate(p, t0);
    /* the midpoint rule on a fine grid: exact for the steps up to the cells that hold a
     * breakpoint, within 1e-6 relative for the sinusoid */
    const long n = 200000;
    double h = (t1 - t0) / (double)n, acc = 0.0;
    for (long i = 0; i < n; i++)
        acc += sv_profile_rate(p, t0 + ((double)i + 0.5) * h);
    return acc / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sv_profile_candidates(const sv_rate_profile_t *p, long count, double duration)
{
    double peak = sv_profile_peak(p), end = INFINITY;
    if (!(peak > 0)) return 0.0;
    if (p->kind == SV_PROFILE_DIURNAL) {
        /* whole periods hold mean x period arrivals each */
        if (count > 0) end = (double)count / p->mean;
    } else if (count > 0) {
        /* the rate is linear between breakpoints (points and spike edges), so the
         * midpoint rule integrates each piece exactly */
        double edge[SV_MAX_PROFILE_POINTS + 2 * SV_MAX_SPIKES];
        int ne = 0;
        for (int i = 0; i < p->n; i++)
            edge[ne++] = p->t[i];
        for (int i = 0; i < p->nspikes; i++) {
            edge[ne++] = p->spikes[i].at;
            edge[ne++] = p->spikes[i].at + p->spikes[i].duration;
        }
        qsort(edge, (size_t)ne, sizeof *edge, cmp_double);
        double acc = 0.0;
        for (int i = 0; i + 1 < ne && !isfinite(end); i++) {
            double a = edge[i], b = edge[i + 1], r = sv_profile_rate(p, 0.5 * (a + b));
            if (b > a && acc + r * (b - a) >= (double)count) end = a + ((double)count - acc) / r;
            acc += r * (b - a);
        }
        double r_last = sv_profile_rate(p, edge[ne - 1]);
        if (!isfinite(end) && r_last > 0) end = edge[ne - 1] + ((double)count - acc) / r_last;
    }
    if (duration > 0 && duration < end) end = duration;
    return peak * end;
}

/* ---- generator ------------------------------------------------------------------------ */

struct sv_workload {
    const sv_workload_cfg_t *cfg;
    const sv_trace_t *trace;
    gsl_rng *r_arr, *r_in, *r_out;
    gsl_rng *r_cls; /* classes only */
    int cls;        /* of the last request */
    double *times;  /* precomputed arrivals when rescaling (up to RESCALE_KEPT requests) */
    double rescale; /* above that, the factor of the second pass over the gaps; 0: none */
    long count;     /* requests to produce; -1 when bounded by duration only */
    long next;
    double clock;       /* cumulative arrival time (incremental mode) */
    double peak;        /* rate profile: the thinning envelope, req/s */
    double trace_scale; /* trace times are multiplied by this (trace_rate) */
    /* the length distributions' draw parameters: [0] the workload's, [1 + k] class k's */
    sv__lenp_t in[1 + SV_MAX_CLASSES], out[1 + SV_MAX_CLASSES];
    /* Poisson arrivals (a finite rate, burstiness 1), the common gap, set once: their mean
     * 1 / rate, 0 for any other process */
    double exp_mu;
};

/* Rescaled arrivals of up to this many requests are kept, one double each; past it the
 * gaps are drawn twice from the same seed (once for their sum, once as the run goes), so
 * that a run of a hundred million requests keeps no array of them. The same doubles
 * either way: each arrival is the same cumulative sum times the same factor. */
#define RESCALE_KEPT (1L << 20)

/* ---- the workload's generator: GSL's mt19937, drawn inline ------------------------------
 *
 * The workload's streams draw from MT19937 (Matsumoto and Nishimura, ACM TOMACS 8(1),
 * 1998), seeded as GSL's gsl_rng_mt19937 seeds it (GSL's reference manual, "Random number
 * generator algorithms": a seed of 0 is taken as 4357; the state's words from Knuth's
 * multiplier 1812433253, as the 2002 reference initialisation), and handed to GSL as a
 * gsl_rng_type of its own (sv__mt19937) so that every gsl_ran_* distribution draws from it
 * through GSL's usual calls. It gives the very words of gsl_rng_mt19937 (the unit test
 * compares the two), but its state is the workload's own, so the lognormal lengths and
 * exponential gaps of the common workloads draw their uniforms inline, without GSL's two
 * calls through function pointers a uniform; the distributions are computed as GSL
 * computes them (gsl_ran_lognormal: Box-Muller's polar method; gsl_ran_exponential:
 * -mu log1p(-u)), the same libm calls in the same order, so the same doubles. */

#define MT_N 624
#define MT_M 397

typedef struct mt_state {
    uint32_t w[MT_N];
    uint32_t t[MT_N]; /* the block's words tempered, all at once when it is regenerated (a
                         loop the compiler vectorises; a word at a time, each draw paid about
                         ten instructions more) */
    unsigned i;       /* the next word of t to give; MT_N: the block is to be regenerated */
} mt_state_t;

/* Word k of the next block from words k and k + 1 (mod N) of this one and word k + M
 * (mod N), in place in the order of k (so past N - M that word is already the next
 * block's). */
#define MT_TWIST(w, k, k1, km)                                                                     \
    do {                                                                                           \
        uint32_t y_ = ((w)[k] & 0x80000000u) | ((w)[k1] & 0x7fffffffu);                            \
        (w)[k] = (w)[km] ^ (y_ >> 1) ^ ((y_ & 1u) ? 0x9908b0dfu : 0u);                             \
    } while (0)

static void mt_regenerate(mt_state_t *s)
{
    uint32_t *w = s->w;
    int k = 0;
    for (; k < MT_N - MT_M; k++)
        MT_TWIST(w, k, k + 1, k + MT_M);
    for (; k < MT_N - 1; k++)
        MT_TWIST(w, k, k + 1, k + MT_M - MT_N);
    MT_TWIST(w, MT_N - 1, 0, MT_M - 1);
    for (k = 0; k < MT_N; k++) { /* MT19937's tempering */
        uint32_t y = w[k];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        y ^= y >> 18;
        s->t[k] = y;
    }
    s->i = 0;
}

static inline uint32_t mt_next(mt_state_t *s)
{
    if (s->i >= MT_N) mt_regenerate(s);
    return s->t[s->i++];
}

static void mt_set(void *state, unsigned long seed)
{
    mt_state_t *s = state;
    if (seed == 0) seed = 4357;
    s->w[0] = (uint32_t)(seed & 0xffffffffUL);
    for (int k = 1; k < MT_N; k++)
        s->w[k] = 1812433253u * (s->w[k - 1] ^ (s->w[k - 1] >> 30)) + (uint32_t)k;
    s->i = MT_N;
}

static unsigned long mt_get(void *state)
{
    return mt_next(state);
}

static inline double mt_uniform(mt_state_t *s)
{
    return mt_next(s) / 4294967296.0;
}

static double mt_get_double(void *state)
{
    return mt_uniform(state);
}

static const gsl_rng_type MT_TYPE = {
    "servesim-mt19937", 0xffffffffUL, 0, sizeof(mt_state_t), mt_set, mt_get, mt_get_double};
const gsl_rng_type *const sv__mt19937 = &MT_TYPE;

/* gsl_ran_lognormal's draw from the workload's generator state s. */
static inline double lognormal_mt(mt_state_t *s, double zeta, double sigma)
{
    double u, v, r2;
    do { /* a point uniform in the unit disc (not its centre) */
        /* its two words at once while the block holds both (else one by one, mt_next),
         * and -1 + 2 mt_uniform as x / 2^31 - 1: x / 2^32 and its double are exact, so the
         * same sum and the same bits */
        uint32_t x, y;
        if (s->i <= MT_N - 2) {
            x = s->t[s->i];
            y = s->t[s->i + 1];
            s->i += 2;
        } else {
            x = mt_next(s);
            y = mt_next(s);
        }
        u = (double)x * 0x1p-31 - 1.0;
        v = (double)y * 0x1p-31 - 1.0;
        r2 = u * u + v * v;
    } while (r2 > 1.0 || r2 == 0);
    double normal = u * sqrt(-2.0 * log(r2) / r2);
    return exp(sigma * normal + zeta);
}

double sv__lognormal(gsl_rng *r, double zeta, double sigma)
{
    if (r->type != &MT_TYPE) return gsl_ran_lognormal(r, zeta, sigma);
    return lognormal_mt(r->state, zeta, sigma);
}

/* gsl_ran_exponential's draw from the workload's generator state s. */
static inline double exponential_mt(mt_state_t *s, double mu)
{
    return -mu * log1p(-mt_uniform(s));
}

double sv__exponential(gsl_rng *r, double mu)
{
    if (r->type != &MT_TYPE) return gsl_ran_exponential(r, mu);
    return exponential_mt(r->state, mu);
}

static gsl_rng *new_rng(uint64_t seed)
{
    gsl_rng *r = gsl_rng_alloc(sv__mt19937);
    if (r) gsl_rng_set(r, (unsigned long)seed);
    return r;
}

/* The next arrival of a rate profile after the clock, by thinning: candidates of a
 * Poisson process at the peak rate, each kept with probability rate(t) / peak. */
static double profile_arrival(sv_workload_t *w)
{
    const sv_workload_cfg_t *c = w->cfg;
    for (;;) {
        w->clock += sv__exponential(w->r_arr, 1.0 / w->peak);
        if (c->duration > 0 && w->clock > c->duration) return w->clock;
        if (gsl_rng_uniform(w->r_arr) * w->peak < sv_profile_rate(&c->profile, w->clock))
            return w->clock;
    }
}

static double gap(sv_workload_t *w)
{
    const sv_workload_cfg_t *c = w->cfg;
    if (w->exp_mu > 0) return exponential_mt(w->r_arr->state, w->exp_mu); /* (r_arr is MT) */
    if (isinf(c->rate)) return 0.0;
    if (isinf(c->burstiness)) return 1.0 / c->rate;
    if (c->burstiness == 1.0) return sv__exponential(w->r_arr, 1.0 / c->rate);
    return gsl_ran_gamma(w->r_arr, c->burstiness, 1.0 / (c->rate * c->burstiness));
}

void sv__lenp_init(sv__lenp_t *p, const sv_lendist_t *d)
{
    p->d = d;
    p->mu = p->sigma = 0.0;
    p->min = (double)d->min;
    p->max = (double)d->max;
    p->mt_lognormal = d->kind == SV_LEN_LOGNORMAL;
    if (d->kind == SV_LEN_LOGNORMAL) {
        double cv2 = (d->std / d->mean) * (d->std / d->mean);
        p->sigma = sqrt(log1p(cv2));
        p->mu = log(d->mean) - p->sigma * p->sigma / 2.0;
    }
}

/* A draw of p->d before its rounding: every kind from any generator (the lognormal from
 * the workload's own inline). */
static __attribute__((noinline)) double draw_value(const sv__lenp_t *p, gsl_rng *r)
{
    const sv_lendist_t *d = p->d;
    double x;
    switch (d->kind) {
    case SV_LEN_UNIFORM:
        x = (double)d->lo + (double)gsl_rng_uniform_int(r, (unsigned long)(d->hi - d->lo + 1));
        break;
    case SV_LEN_NORMAL:
        x = d->mean + gsl_ran_gaussian(r, d->std);
        break;
    case SV_LEN_LOGNORMAL:
        x = sv__lognormal(r, p->mu, p->sigma);
        break;
    case SV_LEN_EMPIRICAL:
        x = (double)d->samples[gsl_rng_uniform_int(r, (unsigned long)d->nsamples)];
        break;
    default:
        x = d->value;
        break;
    }
    return x;
}

/* sv__draw_lenp, inlined into the workload's draws: the common lognormal from the
 * workload's generator without draw_value's call and switch. */
static inline __attribute__((always_inline)) int32_t draw_lenp(const sv__lenp_t *p, gsl_rng *r)
{
    double x = p->mt_lognormal && r->type == &MT_TYPE ? lognormal_mt(r->state, p->mu, p->sigma)
                                                      : draw_value(p, r);
    x = sv_floor(x + 0.5);
    if (x < p->min) x = p->min;
    if (x > p->max) x = p->max;
    return (int32_t)x;
}

int32_t sv__draw_lenp(const sv__lenp_t *p, gsl_rng *r)
{
    return draw_lenp(p, r);
}

int32_t sv__draw_len(const sv_lendist_t *d, gsl_rng *r)
{
    sv__lenp_t p;
    sv__lenp_init(&p, d);
    return sv__draw_lenp(&p, r);
}

int sv_workload_new(const sv_workload_cfg_t *cfg, const sv_trace_t *trace, uint64_t seed,
                    sv_workload_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_workload_t *w = calloc(1, sizeof *w);
    if (!w) return sv_errorf(err, SV_ENOMEM, "out of memory");
    w->cfg = cfg;
    w->trace = cfg->has_trace ? trace : NULL;
    sv__lenp_init(&w->in[0], &cfg->input);
    sv__lenp_init(&w->out[0], &cfg->output);
    for (int k = 0; k < cfg->nclasses && k < SV_MAX_CLASSES; k++) {
        sv__lenp_init(&w->in[1 + k], &cfg->classes[k].input);
        sv__lenp_init(&w->out[1 + k], &cfg->classes[k].output);
    }
    w->r_arr = new_rng(sv_stream_seed(seed, SV_STREAM_ARRIVALS));
    w->r_in = new_rng(sv_stream_seed(seed, SV_STREAM_INPUT));
    w->r_out = new_rng(sv_stream_seed(seed, SV_STREAM_OUTPUT));
    if (cfg->nclasses > 0) w->r_cls = new_rng(sv_stream_seed(seed, SV_STREAM_CLASS));
    if (!w->r_arr || !w->r_in || !w->r_out || (cfg->nclasses > 0 && !w->r_cls)) {
        sv_workload_free(w);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    if (!isinf(cfg->rate) && !isinf(cfg->burstiness) && cfg->burstiness == 1.0 && cfg->rate > 0)
        w->exp_mu = 1.0 / cfg->rate; /* gap's sv__exponential(r_arr, 1.0 / rate), inline */
    if (w->trace) {
        w->count = (long)w->trace->n;
        if (cfg->num_requests > 0 && cfg->num_requests < w->count) w->count = cfg->num_requests;
        w->trace_scale = 1.0;
        /* the replayed rows' own mean rate is (count - 1) / span */
        double span = w->count > 1 ? w->trace->time[w->count - 1] : 0.0;
        if (cfg->trace_rate > 0 && span > 0)
            w->trace_scale = (double)(w->count - 1) / (span * cfg->trace_rate);
    } else {
        w->count = cfg->num_requests > 0 ? cfg->num_requests : -1;
    }
    if (cfg->profile.kind != SV_PROFILE_NONE) {
        w->peak = sv_profile_peak(&cfg->profile);
        if (!(w->peak > 0)) {
            sv_workload_free(w);
            return sv_errorf(err, SV_EINVAL, "workload.rate_profile: the rate is 0 at all times");
        }
        double cand = sv_profile_candidates(&cfg->profile, cfg->num_requests, cfg->duration);
        if (!(cand <= SV_PROFILE_MAX_CANDIDATES)) {
            sv_workload_free(w);
            return sv_errorf(err, SV_ELIMIT, "workload.rate_profile: " SV_PROFILE_TOO_LONG, cand,
                             SV_PROFILE_MAX_CANDIDATES);
        }
    } else if (!w->trace && w->count > 0 && cfg->duration <= 0 && cfg->rescale &&
               !isinf(cfg->rate)) {
        /* vLLM draws every gap first, then scales the cumulative delays so the last request
         * goes out at exactly N / rate. */
        if (w->count > RESCALE_KEPT) {
            double acc = 0.0;
            for (long i = 0; i < w->count; i++)
                acc += gap(w);
            w->rescale = acc > 0 ? ((double)w->count / cfg->rate) / acc : 1.0;
            gsl_rng_set(w->r_arr, (unsigned long)sv_stream_seed(seed, SV_STREAM_ARRIVALS));
            *out = w;
            return 0;
        }
        w->times = malloc((size_t)w->count * sizeof *w->times);
        if (!w->times) {
            long count = w->count;
            sv_workload_free(w);
            return sv_errorf(err, SV_ENOMEM, "out of memory for %ld arrival times", count);
        }
        double acc = 0.0;
        if (w->exp_mu > 0) { /* gap's first case, its generator's state and mean held */
            mt_state_t *st = w->r_arr->state;
            double mu = w->exp_mu;
            for (long i = 0; i < w->count; i++)
                w->times[i] = (acc += exponential_mt(st, mu));
        } else {
            for (long i = 0; i < w->count; i++)
                w->times[i] = (acc += gap(w));
        }
        double f = acc > 0 ? ((double)w->count / cfg->rate) / acc : 1.0;
        for (long i = 0; i < w->count; i++)
            w->times[i] *= f;
    }
    *out = w;
    return 0;
}

void sv_workload_free(sv_workload_t *w)
{
    if (!w) return;
    gsl_rng_free(w->r_arr);
    gsl_rng_free(w->r_in);
    gsl_rng_free(w->r_out);
    if (w->r_cls) gsl_rng_free(w->r_cls);
    free(w->times);
    free(w);
}

int sv_workload_next(sv_workload_t *w, double *arrival, int32_t *input, int32_t *output)
{
    const sv_workload_cfg_t *c = w->cfg;
    if (w->count >= 0 && w->next >= w->count) return 0;
    if (w->next >= SV_MAX_REQUESTS) return 0;
    if (w->trace) {
        *arrival = w->trace->time[w->next] * w->trace_scale;
        *input = w->trace->input[w->next];
        *output = w->trace->output[w->next];
        w->next++;
        return 1;
    }
    double t;
    if (w->times) {
        t = w->times[w->next];
    } else if (w->rescale > 0) {
        t = (w->clock += gap(w)) * w->rescale;
    } else {
        t = c->profile.kind != SV_PROFILE_NONE ? profile_arrival(w) : (w->clock += gap(w));
        if (c->duration > 0 && t > c->duration) {
            w->count = w->next; /* the stream ends here */
            return 0;
        }
    }
    *arrival = t;
    if (c->nclasses > 0) {
        /* the class by its share: the first whose cumulative share passes a uniform draw */
        double u = gsl_rng_uniform(w->r_cls), acc = 0.0;
        int k = 0;
        while (k < c->nclasses - 1 && u >= (acc += c->classes[k].share))
            k++;
        w->cls = k;
        *input = draw_lenp(&w->in[1 + k], w->r_in);
        *output = draw_lenp(&w->out[1 + k], w->r_out);
    } else {
        *input = draw_lenp(&w->in[0], w->r_in);
        *output = draw_lenp(&w->out[0], w->r_out);
    }
    w->next++;
    return 1;
}

int sv_workload_last_class(const sv_workload_t *w)
{
    return w->cls;
}
