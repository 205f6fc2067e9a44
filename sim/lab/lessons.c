/*
 * The lab's lesson tabs (docs/lab.md): for each tab, its parameters (name, range,
 * default), the runs one slider position needs (all simulated, under the request
 * budget), the numbers the page shows and the charts (servesim's SVG charts, drawn by the
 * report layer). The page (sim/lab/lab.html) only sends the parameters and shows what
 * comes back.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/base/numeric.h"
#include "lab/lab_int.h"
#include "servesim/base/yaml.h"
#include "servesim/metrics/metrics.h"
#include "servesim/report/charts.h"
#include "servesim/studies/sweep.h"

/* A tab's parameter: a number in [lo, hi] (whole when integer), or one of choices. */
typedef struct param {
    const char *name;
    double lo, hi, def;
    int integer;
    const char *const *choices; /* NULL-terminated; the value is the index */
} param_t;

#define MAX_PARAMS 4

typedef struct tab tab_t;
typedef int (*tab_fn)(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err);

struct tab {
    const char *name;
    param_t params[MAX_PARAMS];
    int nparams;
    tab_fn run;
};

/* ---- helpers --------------------------------------------------------------------------- */

static void num(cJSON *resp, const char *key, double v)
{
    cJSON *n = cJSON_GetObjectItemCaseSensitive(resp, "numbers");
    if (!n) n = cJSON_AddObjectToObject(resp, "numbers");
    cJSON_AddItemToObject(n, key, sv__lab_number(v));
}

static void text(cJSON *resp, const char *key, const char *v)
{
    cJSON *n = cJSON_GetObjectItemCaseSensitive(resp, "numbers");
    if (!n) n = cJSON_AddObjectToObject(resp, "numbers");
    cJSON_AddStringToObject(n, key, v);
}

static int chart(cJSON *resp, const char *name, char *svg, sv_error_t *err)
{
    if (!svg) return sv_errorf(err, SV_ENOMEM, "out of memory");
    cJSON *c = cJSON_GetObjectItemCaseSensitive(resp, "charts");
    if (!c) c = cJSON_AddArrayToObject(resp, "charts");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "svg", svg);
    cJSON_AddItemToArray(c, o);
    free(svg);
    return 0;
}

/* Sets built from formats: set(s, "workload.input=%ld", v). */
typedef struct sets {
    char buf[SV_LAB_MAX_SETS][160];
    const char *p[SV_LAB_MAX_SETS];
    int n;
} sets_t;

__attribute__((format(printf, 2, 3))) static void set(sets_t *s, const char *fmt, ...)
{
    if (s->n == SV_LAB_MAX_SETS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->buf[s->n], sizeof s->buf[s->n], fmt, ap);
    va_end(ap);
    s->p[s->n] = s->buf[s->n];
    s->n++;
}

static int run(sv__lab_req_t *req, const char *name, const sets_t *s, int show, sv__lab_run_t *r,
               sv_error_t *err)
{
    return sv__lab_run(req, name, s->p, s->n, show, r, err);
}

/* Runs that go together, run at once (sv__lab_run_many). */
#define MAX_BATCH 32
typedef struct batch {
    sets_t sets[MAX_BATCH];
    sets_t spare; /* filled and ignored when the batch is full (go() then fails) */
    int overflow;
    sv__lab_spec_t spec[MAX_BATCH];
    sv__lab_run_t run[MAX_BATCH];
    int n;
} batch_t;

/* A new run of scenario name in b: its sets to fill. */
static sets_t *add(batch_t *b, const char *name, int show)
{
    if (b->n == MAX_BATCH) {
        b->overflow = 1;
        b->spare.n = 0;
        return &b->spare;
    }
    b->spec[b->n] = (sv__lab_spec_t){.name = name, .show = show};
    b->sets[b->n].n = 0;
    return &b->sets[b->n++];
}

static int go(sv__lab_req_t *req, batch_t *b, sv_error_t *err)
{
    if (b->overflow)
        return sv_errorf(err, SV_ELIMIT, "a lesson asked for more than %d runs", MAX_BATCH);
    for (int i = 0; i < b->n; i++) {
        b->spec[i].sets = b->sets[i].p;
        b->spec[i].nsets = b->sets[i].n;
    }
    return sv__lab_run_many(req, b->n, b->spec, b->run, err);
}

static void batch_free(batch_t *b)
{
    if (!b) return;
    for (int i = 0; i < b->n; i++)
        sv__lab_run_free(&b->run[i]);
    free(b);
}

/* A CDF of the finite values (x as given, y in %), up to m points. */
static int cdf_of(const double *v, size_t n, double *x, double *y, int m)
{
    double *c = malloc((n + 1) * sizeof *c);
    size_t k = 0;
    if (!c) return 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) c[k++] = v[i];
    qsort(c, k, sizeof *c, sv_cmp_double);
    if ((size_t)m > k) m = (int)k;
    for (int i = 0; i < m; i++) {
        size_t j = m > 1 ? (size_t)((double)i / (m - 1) * (double)(k - 1)) : 0;
        x[i] = c[j];
        y[i] = 100.0 * (double)(j + 1) / (double)k;
    }
    free(c);
    return m;
}

static sv_chart_spec_t spec(const char *title, const char *xl, const char *yl)
{
    sv_chart_spec_t c;
    memset(&c, 0, sizeof c);
    c.title = title;
    c.xlabel = xl;
    c.ylabel = yl;
    c.hline = c.vline = NAN;
    return c;
}

static void series(sv_chart_spec_t *c, const char *name, const double *x, const double *y, int n)
{
    if (c->ns < SV_CHART_MAX_SERIES)
        c->s[c->ns++] = (sv_chart_series_t){.name = name, .x = x, .y = y, .n = n, .points = 1};
}

/* ---- Two clocks ------------------------------------------------------------------------ */

static const char *const gpus[] = {"h100-sxm", "h200", "b200", "a100-80gb", "l40s", "mi300x", NULL};
static const char *const models[] = {"llama-3.1-8b", "llama-3.1-70b", NULL};

static int tab_clocks(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err)
{
    long prompt = (long)p[0], reply = (long)p[1];
    const char *gpu = gpus[(int)p[2]], *model = models[(int)p[3]];
    int tp = (int)p[3] == 1 ? 4 : 1;
    /* This slider position, then each slider alone: the prompt from 256 to 32k at this
     * reply, the reply from 16 to 4k at this prompt. */
    static const long prompts[] = {256, 1024, 2048, 4096, 8192, 16384, 32768};
    static const long replies[] = {16, 128, 256, 512, 1024, 2048, 4096};
    batch_t *b = calloc(1, sizeof *b);
    if (!b) return sv_errorf(err, SV_ENOMEM, "out of memory");
    for (int i = 0; i < 15; i++) {
        sets_t *s = add(b, "clocks", i == 0);
        long in = i >= 1 && i <= 7 ? prompts[i - 1] : prompt;
        long out = i >= 8 ? replies[i - 8] : reply;
        set(s, "workload.input=%ld", in);
        set(s, "workload.output=%ld", out);
        set(s, "hardware.gpu=%s", gpu);
        set(s, "model=%s", model);
        set(s, "hardware.tp=%d", tp);
    }
    int rc = go(req, b, err);
    if (rc) {
        batch_free(b);
        return rc;
    }
    const sv__lab_run_t *r = &b->run[0];
    num(resp, "ttft_ms", sv__lab_num(r, "mean_ttft_ms"));
    num(resp, "tpot_ms", sv__lab_num(r, "mean_tpot_ms"));
    num(resp, "e2el_ms", sv__lab_num(r, "mean_e2el_ms"));
    num(resp, "prefill_ms", sv__lab_num(r, "servesim.mean_prefill_ms"));
    num(resp, "decode_ms", sv__lab_num(r, "servesim.mean_decode_ms"));
    num(resp, "tp", tp);
    rc = chart(resp, "breakdown", sv_chart_run(r->res, "breakdown"), err);
    /* Each clock as a multiple of its value at the slider's smallest step: the clock a
     * slider moves climbs, the other stays at 1. */
    double x[2][7], y[2][3][7];
    static const char *const keys[3] = {"mean_ttft_ms", "mean_tpot_ms", "mean_e2el_ms"};
    for (int axis = 0; axis < 2; axis++)
        for (int m = 0; m < 3; m++) {
            double base = sv__lab_num(&b->run[1 + 7 * axis], keys[m]);
            for (int i = 0; i < 7; i++) {
                x[axis][i] = (double)(axis == 0 ? prompts[i] : replies[i]);
                y[axis][m][i] = sv__lab_num(&b->run[1 + 7 * axis + i], keys[m]) / base;
            }
        }
    batch_free(b);
    for (int axis = 0; axis < 2 && !rc; axis++) {
        char yl[96];
        snprintf(yl, sizeof yl, "times its value at %ld tokens",
                 axis == 0 ? prompts[0] : replies[0]);
        sv_chart_spec_t c =
            spec(axis == 0 ? "Moving the prompt: which clock moves?"
                           : "Moving the reply: which clock moves?",
                 axis == 0 ? "prompt length (tokens)" : "reply length (tokens)", yl);
        series(&c, "TTFT", x[axis], y[axis][0], 7);
        series(&c, "TPOT", x[axis], y[axis][1], 7);
        series(&c, "E2E", x[axis], y[axis][2], 7);
        c.vline = axis == 0 ? (double)prompt : (double)reply;
        c.vlabel = "slider";
        rc = chart(resp, axis == 0 ? "prompt" : "reply", sv_chart_lines(&c), err);
    }
    return rc;
}

/* ---- Who is faster depends on the reply ------------------------------------------------ */

static int tab_reply(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err)
{
    long reply = (long)p[0];
    static const char *const sys[2] = {"reply-a", "reply-b"};
    static const char *const key[2] = {"a", "b"};
    static const long lens[] = {5, 10, 20, 30, 40, 50, 75, 100, 200, 300, 500, 750, 1000};
    enum { NL = 13, NZ = 8 }; /* NZ: the points up to 100 tokens, for the zoomed chart */
    batch_t *b = calloc(1, sizeof *b);
    if (!b) return sv_errorf(err, SV_ENOMEM, "out of memory");
    for (int k = 0; k < 2; k++)
        for (int i = 0; i <= NL; i++)
            set(add(b, sys[k], i == NL), "workload.output=%ld", i < NL ? lens[i] : reply);
    int rc = go(req, b, err);
    if (rc) {
        batch_free(b);
        return rc;
    }
    double e2e[2], x[NL], y[2][NL];
    for (int k = 0; k < 2; k++) {
        const sv__lab_run_t *r = &b->run[k * (NL + 1) + NL];
        char nm[32];
        snprintf(nm, sizeof nm, "%s_ttft_ms", key[k]);
        num(resp, nm, sv__lab_num(r, "mean_ttft_ms"));
        snprintf(nm, sizeof nm, "%s_tpot_ms", key[k]);
        num(resp, nm, sv__lab_num(r, "mean_tpot_ms"));
        snprintf(nm, sizeof nm, "%s_e2el_ms", key[k]);
        num(resp, nm, e2e[k] = sv__lab_num(r, "mean_e2el_ms"));
        for (int i = 0; i < NL; i++) {
            x[i] = (double)lens[i];
            y[k][i] = sv__lab_num(&b->run[k * (NL + 1) + i], "mean_e2el_ms") / 1e3;
        }
    }
    batch_free(b);
    text(resp, "faster", e2e[0] <= e2e[1] ? "A" : "B");
    /* where B starts winning: the first length at which its E2E is the lower */
    double cross = NAN;
    for (int i = 1; i < NL && isnan(cross); i++)
        if (y[1][i] < y[0][i] && y[1][i - 1] >= y[0][i - 1]) {
            double d0 = y[0][i - 1] - y[1][i - 1], d1 = y[0][i] - y[1][i];
            cross = x[i - 1] + (x[i] - x[i - 1]) * d0 / (d0 - d1);
        }
    /* in whole tokens: the first reply length B finishes before A */
    num(resp, "crossover_tokens", isnan(cross) ? NAN : ceil(cross));
    /* a realistic chat reply (200 tokens, about 150 words) beside the slider's */
    num(resp, "chat_a_e2el_ms", 1e3 * y[0][8]);
    num(resp, "chat_b_e2el_ms", 1e3 * y[1][8]);
    sv_chart_spec_t c =
        spec("Time until the whole reply has arrived", "reply length (tokens)", "E2E latency (s)");
    series(&c, "A: fast start, slow stream", x, y[0], NL);
    series(&c, "B: slow start, 3x faster stream", x, y[1], NL);
    c.vline = (double)reply;
    c.vlabel = "slider";
    int rc2 = chart(resp, "e2e", sv_chart_lines(&c), err);
    double zy[2][NZ];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < NZ; i++)
            zy[k][i] = 1e3 * y[k][i];
    c = spec("The first 100 tokens: where the lines cross", "reply length (tokens)",
             "E2E latency (ms)");
    series(&c, "A", x, zy[0], NZ);
    series(&c, "B", x, zy[1], NZ);
    c.vline = reply <= 100 ? (double)reply : NAN;
    c.vlabel = "slider";
    if (!rc2) rc2 = chart(resp, "e2e-zoom", sv_chart_lines(&c), err);
    return rc2;
}

/* ---- More users, every user slower ----------------------------------------------------- */

static const double user_steps[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
#define N_USERS 9

static int tab_users(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err)
{
    int cur = (int)p[0];
    double x[N_USERS], tput[N_USERS], per_user[N_USERS], p50[N_USERS], p99[N_USERS], good[N_USERS],
        rtput[N_USERS], att[N_USERS];
    batch_t *b = calloc(1, sizeof *b);
    if (!b) return sv_errorf(err, SV_ENOMEM, "out of memory");
    for (int i = 0; i < N_USERS; i++) {
        sets_t *s = add(b, "users", i == cur);
        double n = fmin(1000, fmax(100, 16 * user_steps[i])); /* a few rounds per user */
        set(s, "workload.max_concurrency=%.0f", user_steps[i]);
        set(s, "workload.num_requests=%.0f", n);
    }
    int rc = go(req, b, err);
    if (rc) {
        batch_free(b);
        return rc;
    }
    double slo_ttft = b->run[0].sc->metrics.slo_ttft_ms, target = b->run[0].sc->metrics.attainment;
    for (int i = 0; i < N_USERS; i++) {
        const sv__lab_run_t *r = &b->run[i];
        x[i] = user_steps[i];
        tput[i] = sv__lab_num(r, "output_throughput");
        double tpot = sv__lab_num(r, "mean_tpot_ms");
        per_user[i] = tpot > 0 ? 1e3 / tpot : NAN;
        p50[i] = sv__lab_num(r, "median_ttft_ms");
        p99[i] = sv__lab_num(r, "p99_ttft_ms");
        rtput[i] = sv__lab_num(r, "request_throughput");
        good[i] = sv__lab_num(r, "request_goodput");
        att[i] = sv__lab_num(r, "servesim.slo_attainment");
    }
    /* The batch-size table: at 1, 8, 32 and 64 users (a closed loop keeps that many
     * sequences in the batch, up to max_num_seqs), TPOT, each user's tokens/s and the
     * tokens/s of each GPU. */
    cJSON *bt = cJSON_AddArrayToObject(resp, "batch_table");
    int ngpu = b->run[0].sc->pools[0].replicas * b->run[0].sc->pools[0].perf.tp;
    for (int i = 0; i < N_USERS; i++) {
        double u = user_steps[i];
        if (u != 1 && u != 8 && u != 32 && u != 64) continue;
        cJSON *row = cJSON_CreateObject();
        cJSON_AddItemToObject(row, "batch", sv__lab_number(u));
        cJSON_AddItemToObject(row, "tpot_ms",
                              sv__lab_number(sv__lab_num(&b->run[i], "mean_tpot_ms")));
        cJSON_AddItemToObject(row, "per_user_tok_s", sv__lab_number(per_user[i]));
        cJSON_AddItemToObject(row, "per_gpu_tok_s",
                              sv__lab_number(ngpu > 0 ? tput[i] / ngpu : NAN));
        cJSON_AddItemToArray(bt, row);
    }
    batch_free(b);
    num(resp, "users", user_steps[cur]);
    num(resp, "output_tok_s", tput[cur]);
    num(resp, "per_user_tok_s", per_user[cur]);
    num(resp, "ttft_p50_ms", p50[cur]);
    num(resp, "ttft_p99_ms", p99[cur]);
    num(resp, "goodput_req_s", good[cur]);
    num(resp, "attainment_pct", 100 * att[cur]);
    int knee = -1, best = -1;
    sv_knee(att, good, N_USERS, target, &knee, &best);
    num(resp, "knee_users", knee >= 0 ? x[knee] : NAN);
    num(resp, "best_goodput_users", best >= 0 ? x[best] : NAN);
    char kl[64];
    snprintf(kl, sizeof kl, "knee: %g users", knee >= 0 ? x[knee] : 0.0);
    double kx = knee >= 0 ? x[knee] : NAN;
    sv_chart_spec_t c = spec("The system: output tokens per second", "concurrent users",
                             "output throughput (tokens/s)");
    series(&c, "all users together", x, tput, N_USERS);
    c.vline = x[cur];
    c.vlabel = "slider";
    rc = chart(resp, "system", sv_chart_lines(&c), err);
    c = spec("Each user: tokens per second of their stream", "concurrent users",
             "tokens/s per user (1000 / TPOT ms)");
    series(&c, "one user's stream", x, per_user, N_USERS);
    c.vline = x[cur];
    c.vlabel = "slider";
    if (!rc) rc = chart(resp, "per-user", sv_chart_lines(&c), err);
    c = spec("Waiting for the first token", "concurrent users", "time to first token (ms)");
    series(&c, "P50 TTFT", x, p50, N_USERS);
    series(&c, "P99 TTFT", x, p99, N_USERS);
    c.hline = slo_ttft;
    char sl[48];
    snprintf(sl, sizeof sl, "SLO %g ms", slo_ttft);
    c.hlabel = sl;
    c.vline = kx;
    c.vlabel = kl;
    if (!rc) rc = chart(resp, "ttft", sv_chart_lines(&c), err);
    c = spec("Throughput and goodput (requests within the SLOs)", "concurrent users",
             "requests per second");
    series(&c, "throughput", x, rtput, N_USERS);
    series(&c, "goodput", x, good, N_USERS);
    c.vline = kx;
    c.vlabel = kl;
    if (!rc) rc = chart(resp, "goodput", sv_chart_lines(&c), err);
    return rc;
}

/* ---- Continuous vs static batching ----------------------------------------------------- */

static int tab_batching(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err)
{
    static const char *const sys[2] = {"batching-continuous", "batching-static"};
    static const char *const key[2] = {"cont", "static"};
    static const char *const label[2] = {"continuous (vLLM)", "static"};
    double tx[2][300], ty[2][300], ex[2][300], ey[2][300];
    int nt[2], ne[2];
    for (int k = 0; k < 2; k++) {
        sets_t s = {.n = 0};
        set(&s, "workload.rate=%g", p[0]);
        sv__lab_run_t r;
        int rc = run(req, sys[k], &s, 1, &r, err);
        if (rc) return rc;
        char nm[48];
        static const char *const keys[][2] = {
            {"req_s", "request_throughput"},  {"tok_s", "output_throughput"},
            {"ttft_mean_ms", "mean_ttft_ms"}, {"ttft_p99_ms", "p99_ttft_ms"},
            {"tpot_mean_ms", "mean_tpot_ms"}, {"goodput_req_s", "request_goodput"}};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            snprintf(nm, sizeof nm, "%s_%s", key[k], keys[i][0]);
            num(resp, nm, sv__lab_num(&r, keys[i][1]));
        }
        snprintf(nm, sizeof nm, "%s_batch", key[k]);
        num(resp, nm, r.res->pools[0].mean_decode_batch);
        size_t n = r.res->pool.n;
        double *v = malloc((n + 1) * sizeof *v);
        if (!v) {
            sv__lab_run_free(&r);
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
            const sv_req_t *q = &r.res->pool.r[i];
            v[i] = q->state == SV_RQ_DONE ? sv_req_ttft(q) : NAN;
        }
        nt[k] = cdf_of(v, n, tx[k], ty[k], 300);
        for (size_t i = 0; i < n; i++) {
            const sv_req_t *q = &r.res->pool.r[i];
            v[i] = q->state == SV_RQ_DONE ? sv_req_e2el(q) : NAN;
        }
        ne[k] = cdf_of(v, n, ex[k], ey[k], 300);
        free(v);
        sv__lab_run_free(&r);
    }
    sv_chart_spec_t c = spec("TTFT: share of requests answered within x", "time to first token (s)",
                             "requests (%)");
    for (int k = 0; k < 2; k++)
        series(&c, label[k], tx[k], ty[k], nt[k]);
    c.s[0].points = c.s[1].points = 0;
    int rc = chart(resp, "ttft-cdf", sv_chart_lines(&c), err);
    c = spec("E2E: share of requests complete within x", "end-to-end latency (s)", "requests (%)");
    for (int k = 0; k < 2; k++)
        series(&c, label[k], ex[k], ey[k], ne[k]);
    c.s[0].points = c.s[1].points = 0;
    if (!rc) rc = chart(resp, "e2e-cdf", sv_chart_lines(&c), err);
    return rc;
}

/* ---- Cost and energy are a utilisation problem ----------------------------------------- */

static int tab_cost(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err)
{
    double util = p[0] / 100.0;
    sets_t s = {.n = 0};
    set(&s, "workload.rate=inf");
    sv__lab_run_t r0;
    int rc = run(req, "cost", &s, 0, &r0, err);
    if (rc) return rc;
    double cap = sv__lab_num(&r0, "request_throughput");
    sv__lab_run_free(&r0);
    num(resp, "capacity_req_s", cap);
    enum { NU = 10 };
    double x[NU + 1], cost[NU + 1], gpu_j[NU + 1], srv_j[NU + 1], busy[NU + 1], batch[NU + 1];
    int have_srv = 0;
    char srv_name[96] = "";
    batch_t *b = calloc(1, sizeof *b);
    if (!b) return sv_errorf(err, SV_ENOMEM, "out of memory");
    for (int i = 0; i <= NU; i++)
        set(add(b, "cost", i == NU), "workload.rate=%.6g", (i < NU ? 0.1 * (i + 1) : util) * cap);
    rc = go(req, b, err);
    if (rc) {
        batch_free(b);
        return rc;
    }
    for (int i = 0; i <= NU; i++) {
        const sv__lab_run_t *r = &b->run[i];
        double u = i < NU ? 0.1 * (i + 1) : util;
        x[i] = 100 * u;
        cost[i] = sv__lab_num(r, "servesim.cost_per_million_output_tokens_usd");
        gpu_j[i] = sv__lab_num(r, "servesim.energy_per_output_token_j");
        busy[i] = 100 * sv__lab_num(r, "servesim.gpu_busy_share");
        batch[i] = r->res->pools[0].mean_decode_batch;
        /* the whole server at the wall: host power and PUE (the scenario's cost map) */
        srv_j[i] = sv__lab_num(r, "servesim.finance.wall_energy_per_output_token_j");
        if (!isnan(srv_j[i])) {
            snprintf(srv_name, sizeof srv_name, "wall, PUE %g",
                     sv__lab_num(r, "servesim.finance.pue"));
            have_srv = 1;
        }
        if (i == NU) {
            num(resp, "rate_req_s", u * cap);
            num(resp, "busy_pct", busy[i]);
            num(resp, "decode_batch", batch[i]);
            num(resp, "usd_per_mtok", cost[i]);
            num(resp, "gpu_j_per_tok", gpu_j[i]);
            num(resp, "server_j_per_tok", srv_j[i]);
            num(resp, "wall_w", sv__lab_num(r, "servesim.finance.mean_wall_power_w"));
            num(resp, "total_usd_per_mtok",
                sv__lab_num(r, "servesim.finance.total_usd_per_million_output_tokens"));
            /* every cost and energy number the run reports, for keys added later */
            cJSON *all = cJSON_AddObjectToObject(resp, "cost_energy_keys");
            const cJSON *sv = cJSON_GetObjectItemCaseSensitive(r->json, "servesim"), *it;
            cJSON_ArrayForEach(it, sv)
            {
                if (cJSON_IsNumber(it) &&
                    (strstr(it->string, "cost") || strstr(it->string, "energy") ||
                     strstr(it->string, "pue") || strstr(it->string, "power")))
                    cJSON_AddItemToObject(all, it->string, sv__lab_number(it->valuedouble));
            }
        }
    }
    batch_free(b);
    sv_chart_spec_t c = spec("Cost per million output tokens", "offered load (% of capacity)",
                             "USD per million output tokens");
    series(&c, "cost", x, cost, NU);
    c.vline = 100 * util;
    c.vlabel = "slider";
    rc = chart(resp, "cost", sv_chart_lines(&c), err);
    c = spec("Energy per output token", "offered load (% of capacity)", "joules per output token");
    series(&c, "GPU only", x, gpu_j, NU);
    if (have_srv) series(&c, srv_name, x, srv_j, NU);
    c.vline = 100 * util;
    c.vlabel = "slider";
    if (!rc) rc = chart(resp, "energy", sv_chart_lines(&c), err);
    c = spec("How full each decode step is", "offered load (% of capacity)",
             "sequences per decode step (mean)");
    series(&c, "decode batch", x, batch, NU);
    c.vline = 100 * util;
    c.vlabel = "slider";
    if (!rc) rc = chart(resp, "batch", sv_chart_lines(&c), err);
    return rc;
}

/* ---- The average hides the tail -------------------------------------------------------- */

static const char *const slow_cols[] = {"slow0",  "slow1",  "slow2", "slow5",
                                        "slow10", "slow20", NULL};
static const char *const slow_pcts[] = {"0", "1", "2", "5", "10", "20", NULL};

/* Tasks of k parallel calls: the simulator's fan-out (workload.sessions, shape fanout, in
 * scenarios/lab/tail.yaml), each task over when its last call is. About TAIL_CALLS calls
 * at every k (TAIL_CALLS / k tasks, rounded down), 8 calls per second (8/k tasks per
 * second), so only the grouping changes with k; the numbers are the run's own: per call
 * mean_e2el_ms and the sessions block's call_latency_p95_s / _p99_s, per task its
 * duration_mean_s / _p95_s / _p99_s. */
#define TAIL_CALLS 1800
#define TAIL_MAX_K 10

static void tail_sets(sets_t *s, const char *col, int k)
{
    int tasks = TAIL_CALLS / k;
    set(s, "workload.output.column=%s", col);
    set(s, "workload.sessions.turns=%d", k);
    set(s, "workload.sessions.count=%d", tasks);
    set(s, "workload.rate=%.6g", 8.0 / k);
    set(s, "workload.num_requests=%d", tasks * k);
}

static int tab_tail(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err)
{
    const char *col = slow_cols[(int)p[0]];
    int k = (int)p[1];
    /* every fan-out from 1 to TAIL_MAX_K; the slider's is shown */
    batch_t *b = calloc(1, sizeof *b);
    if (!b) return sv_errorf(err, SV_ENOMEM, "out of memory");
    for (int j = 1; j <= TAIL_MAX_K; j++)
        tail_sets(add(b, "tail", j == k), col, j);
    int rc = go(req, b, err);
    if (rc) {
        batch_free(b);
        return rc;
    }
    double kx[TAIL_MAX_K], km[TAIL_MAX_K], k95[TAIL_MAX_K], k99[TAIL_MAX_K], c95[TAIL_MAX_K];
    for (int j = 0; j < TAIL_MAX_K; j++) {
        const sv__lab_run_t *r = &b->run[j];
        kx[j] = j + 1;
        km[j] = sv__lab_num(r, "servesim.sessions.duration_mean_s");
        k95[j] = sv__lab_num(r, "servesim.sessions.duration_p95_s");
        k99[j] = sv__lab_num(r, "servesim.sessions.duration_p99_s");
        c95[j] = sv__lab_num(r, "servesim.sessions.call_latency_p95_s");
    }
    const sv__lab_run_t *r = &b->run[k - 1];
    double call[3] = {sv__lab_num(r, "mean_e2el_ms"),
                      1e3 * sv__lab_num(r, "servesim.sessions.call_latency_p95_s"),
                      1e3 * sv__lab_num(r, "servesim.sessions.call_latency_p99_s")};
    double task[3] = {1e3 * km[k - 1], 1e3 * k95[k - 1], 1e3 * k99[k - 1]};
    num(resp, "call_mean_ms", call[0]);
    num(resp, "call_p95_ms", call[1]);
    num(resp, "call_p99_ms", call[2]);
    num(resp, "task_mean_ms", task[0]);
    num(resp, "task_p95_ms", task[1]);
    num(resp, "task_p99_ms", task[2]);
    num(resp, "tasks", sv__lab_num(r, "servesim.sessions.complete"));
    num(resp, "calls", sv__lab_num(r, "servesim.sessions.calls_done"));
    /* the share of tasks that meet at least one slow call: 1 - (1 - s)^k (1% and k = 10:
     * 9.6%) */
    double slow = atof(slow_pcts[(int)p[0]]) / 100.0;
    num(resp, "tasks_slow_pct", 100.0 * (1.0 - pow(1.0 - slow, k)));
    batch_free(b);
    static const char *const names[6] = {"call mean", "call P95", "call P99",
                                         "task mean", "task P95", "task P99"};
    double vals[6] = {call[0] / 1e3, call[1] / 1e3, call[2] / 1e3,
                      task[0] / 1e3, task[1] / 1e3, task[2] / 1e3};
    char title[96];
    snprintf(title, sizeof title, "One call vs a task of %d parallel calls", k);
    rc = chart(resp, "bars", sv_chart_bars(title, "end-to-end latency (s)", names, vals, 6), err);
    sv_chart_spec_t c =
        spec("A task waits for its slowest call", "calls per task (fan-out k)", "latency (s)");
    series(&c, "task mean", kx, km, TAIL_MAX_K);
    series(&c, "task P95", kx, k95, TAIL_MAX_K);
    series(&c, "task P99", kx, k99, TAIL_MAX_K);
    series(&c, "call P95", kx, c95, TAIL_MAX_K);
    c.vline = k;
    c.vlabel = "slider";
    if (!rc) rc = chart(resp, "fanout", sv_chart_lines(&c), err);
    return rc;
}

/* ---- Disaggregation -------------------------------------------------------------------- */

/* The load keeps the prompt tokens per second the same at every prompt length (14 req/s
 * at 4096 tokens, as the shipped scenarios), at most 30 req/s: a longer prompt is more
 * work per request, not an overload. */
static double disagg_rate(double prompt)
{
    return fmin(30.0, 14.0 * 4096.0 / prompt);
}

static int tab_disagg(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err)
{
    static const char *const sys[2] = {"disagg-colocated", "disagg-split"};
    static const char *const key[2] = {"colo", "split"};
    static const double prompts[] = {1024, 2048, 4096, 8192, 16384};
    enum { NP = 5 };
    double x[NP], gpg[2][NP], tpot99[2][NP];
    batch_t *b = calloc(1, sizeof *b);
    if (!b) return sv_errorf(err, SV_ENOMEM, "out of memory");
    for (int k = 0; k < 2; k++)
        for (int i = 0; i <= NP; i++) {
            double pr = i < NP ? prompts[i] : p[0];
            sets_t *s = add(b, sys[k], i == NP);
            set(s, "workload.input.mean=%.0f", pr);
            set(s, "workload.input.std=%.0f", pr / 2);
            set(s, "slo.tpot_ms=%g", p[1]);
            set(s, "workload.rate=%.6g", disagg_rate(pr));
        }
    int rc = go(req, b, err);
    if (rc) {
        batch_free(b);
        return rc;
    }
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < NP; i++) {
            const sv__lab_run_t *r = &b->run[k * (NP + 1) + i];
            x[i] = prompts[i];
            gpg[k][i] = sv__lab_num(r, "servesim.goodput_per_gpu");
            tpot99[k][i] = sv__lab_num(r, "p99_tpot_ms");
        }
        const sv__lab_run_t *r = &b->run[k * (NP + 1) + NP];
        char nm[48];
        if (k == 0) num(resp, "rate_req_s", disagg_rate(p[0]));
        snprintf(nm, sizeof nm, "%s_goodput_per_gpu", key[k]);
        num(resp, nm, sv__lab_num(r, "servesim.goodput_per_gpu"));
        snprintf(nm, sizeof nm, "%s_attainment_pct", key[k]);
        num(resp, nm, 100 * sv__lab_num(r, "servesim.slo_attainment"));
        snprintf(nm, sizeof nm, "%s_ttft_p99_ms", key[k]);
        num(resp, nm, sv__lab_num(r, "p99_ttft_ms"));
        snprintf(nm, sizeof nm, "%s_tpot_p99_ms", key[k]);
        num(resp, nm, sv__lab_num(r, "p99_tpot_ms"));
    }
    batch_free(b);
    sv_chart_spec_t c = spec("Goodput per GPU (requests within both SLOs)", "mean prompt (tokens)",
                             "goodput per GPU (req/s)");
    series(&c, "colocated: 4 GPUs", x, gpg[0], NP);
    series(&c, "split: 2 prefill + 2 decode", x, gpg[1], NP);
    c.vline = p[0];
    c.vlabel = "slider";
    rc = chart(resp, "goodput", sv_chart_lines(&c), err);
    c = spec("The decode clock: P99 time per output token", "mean prompt (tokens)",
             "P99 TPOT (ms)");
    series(&c, "colocated", x, tpot99[0], NP);
    series(&c, "split", x, tpot99[1], NP);
    char sl[48];
    snprintf(sl, sizeof sl, "TPOT SLO %g ms", p[1]);
    c.hline = p[1];
    c.hlabel = sl;
    c.vline = p[0];
    c.vlabel = "slider";
    if (!rc) rc = chart(resp, "tpot", sv_chart_lines(&c), err);
    return rc;
}

/* ---- Queue depth warns first ----------------------------------------------------------- */

#define QUEUE_MAX_T 240 /* seconds of the ramp (and of each series) at most */

/* A load ramp past capacity (4 to 28 req/s over 120 s) on the GPU chosen: per second, the requests
 * waiting and running (the samples) and the mean TTFT of the requests whose first token came in
 * that second (what a dashboard reading vllm:time_to_first_token_seconds shows), on one time axis.
 */
static int tab_queue(sv__lab_req_t *req, const double *p, cJSON *resp, sv_error_t *err)
{
    sets_t s = {.n = 0};
    set(&s, "hardware.gpu=%s", gpus[(int)p[0]]); /* the lab refuses keys naming "file" */
    sv__lab_run_t r;
    int rc = run(req, "queue", &s, 1, &r, err);
    if (rc) return rc;
    enum { N = QUEUE_MAX_T };
    double t[N], wait[N], running[N], ttft[N], sum[N] = {0}, cnt[N] = {0};
    int n = 0;
    size_t ns;
    const sv_sample_t *sm = sv_metrics_samples(r.res->metrics, &ns);
    for (size_t i = 0; i < ns && n < N; i++) /* one replica: a sample per second */
        if (sm[i].t >= 1.0 && (n == 0 || sm[i].t > t[n - 1])) {
            t[n] = sm[i].t;
            wait[n] = sm[i].waiting;
            running[n] = sm[i].running;
            n++;
        }
    for (size_t i = 0; i < r.res->pool.n; i++) {
        const sv_req_t *q = &r.res->pool.r[i];
        if (q->state != SV_RQ_DONE) continue;
        int k = (int)ceil(q->first_token) - 1; /* the second (k, k + 1] it came in */
        if (k < 0) k = 0;
        if (k < N) sum[k] += sv_req_ttft(q), cnt[k] += 1;
    }
    double slo = r.sc->metrics.slo_ttft_ms, t_queue = NAN, t_slo = NAN, peak_wait = 0;
    for (int i = 0; i < n; i++) {
        int k = (int)t[i] - 1;
        ttft[i] = k >= 0 && k < N && cnt[k] > 0 ? 1e3 * sum[k] / cnt[k] : NAN;
        /* the queue "builds" from the first second it holds requests for five seconds in a
         * row: arrivals outpace the engine */
        int held = i + 5 < n;
        for (int j = i; j <= i + 5 && j < n; j++)
            held &= wait[j] >= 3;
        if (isnan(t_queue) && held) t_queue = t[i];
        if (wait[i] > peak_wait) peak_wait = wait[i];
    }
    /* TTFT "breaks" from the first second it stays over the SLO for five seconds in a row
     * (one long prompt alone can cross it for a second on a slow GPU) */
    for (int i = 0; i + 5 < n && isnan(t_slo); i++) {
        int held = 1;
        for (int j = i; j <= i + 5; j++)
            held &= !isnan(ttft[j]) && ttft[j] > slo;
        if (held) t_slo = t[i];
    }
    num(resp, "queue_builds_s", t_queue);
    num(resp, "ttft_breaks_s", t_slo);
    num(resp, "lead_s", t_slo - t_queue);
    num(resp, "peak_waiting", peak_wait);
    num(resp, "p99_ttft_ms", sv__lab_num(&r, "p99_ttft_ms"));
    sv__lab_run_free(&r);
    char ql[48];
    snprintf(ql, sizeof ql, "queue builds: %.0f s", t_queue);
    sv_chart_spec_t c = spec("Requests in the engine", "time (s)", "requests");
    series(&c, "waiting", t, wait, n);
    series(&c, "running", t, running, n);
    c.s[0].points = c.s[1].points = 0;
    c.linear_x = 1;
    c.xmax = n > 0 ? t[n - 1] : 0; /* both charts on one time axis, TTFT's empty seconds too */
    c.vline = t_queue;
    c.vlabel = ql;
    rc = chart(resp, "queue", sv_chart_lines(&c), err);
    char sl[48];
    snprintf(sl, sizeof sl, "SLO %g ms", slo);
    c = spec("TTFT as a dashboard sees it (mean per second)", "time (s)",
             "time to first token (ms)");
    series(&c, "TTFT", t, ttft, n);
    c.s[0].points = 0;
    c.linear_x = 1;
    c.xmax = n > 0 ? t[n - 1] : 0;
    c.hline = slo;
    c.hlabel = sl;
    c.vline = t_queue;
    c.vlabel = ql;
    if (!rc) rc = chart(resp, "ttft", sv_chart_lines(&c), err);
    return rc;
}

/* ---- the table of tabs ----------------------------------------------------------------- */

static const char *const user_choices[] = {"1",  "2",  "4",   "8",   "16",
                                           "32", "64", "128", "256", NULL};

static const tab_t tabs[] = {
    {"clocks",
     {{"prompt", 16, 32768, 1024, 1, NULL},
      {"reply", 2, 4096, 256, 1, NULL},
      {"gpu", 0, 0, 0, 0, gpus},
      {"model", 0, 0, 0, 0, models}},
     4,
     tab_clocks},
    {"reply", {{"reply", 2, 1000, 20, 1, NULL}}, 1, tab_reply},
    {"users", {{"users", 0, 0, 4, 0, user_choices}}, 1, tab_users},
    {"batching", {{"rate", 0.5, 12, 4, 0, NULL}}, 1, tab_batching},
    {"cost", {{"util", 5, 100, 40, 1, NULL}}, 1, tab_cost},
    {"tail", {{"slow", 0, 0, 3, 0, slow_pcts}, {"k", 1, 10, 1, 1, NULL}}, 2, tab_tail},
    {"queue", {{"gpu", 0, 0, 0, 0, gpus}}, 1, tab_queue},
    {"disagg",
     {{"prompt", 512, 16384, 4096, 1, NULL}, {"tpot_slo", 10, 100, 25, 0, NULL}},
     2,
     tab_disagg},
};

static int parse_param(const param_t *pm, const char *tab, const char *v, double *out,
                       sv_error_t *err)
{
    if (pm->choices) {
        char list[256] = "";
        for (int i = 0; pm->choices[i]; i++) {
            if (strcmp(v, pm->choices[i]) == 0) {
                *out = i;
                return 0;
            }
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     pm->choices[i]);
        }
        return sv_errorf(err, SV_EINVAL, "tab %s: %s: expected one of %s, got '%.60s'", tab,
                         pm->name, list, v);
    }
    double d;
    if (sv_parse_double(v, &d) || !isfinite(d) || d < pm->lo || d > pm->hi ||
        (pm->integer && d != floor(d)))
        return sv_errorf(err, SV_EINVAL, "tab %s: %s: expected %s in [%g, %g], got '%.60s'", tab,
                         pm->name, pm->integer ? "a whole number" : "a number", pm->lo, pm->hi, v);
    *out = d;
    return 0;
}

int sv__lab_lesson(sv__lab_req_t *req, const sv_lab_arg_t *args, int nargs, cJSON *resp,
                   sv_error_t *err)
{
    const char *name = NULL;
    for (int i = 0; i < nargs; i++)
        if (strcmp(args[i].key, "tab") == 0) {
            if (name) return sv_errorf(err, SV_EINVAL, "tab= given twice");
            name = args[i].value;
        }
    const tab_t *t = NULL;
    for (size_t i = 0; name && i < sizeof tabs / sizeof tabs[0]; i++)
        if (strcmp(tabs[i].name, name) == 0) t = &tabs[i];
    if (!t)
        return sv_errorf(err, SV_ENOTFOUND,
                         "tab: expected one of clocks, reply, users, batching, cost, tail, "
                         "disagg, got '%.60s'",
                         name ? name : "");
    double p[MAX_PARAMS];
    int seen[MAX_PARAMS] = {0};
    for (int j = 0; j < t->nparams; j++)
        p[j] = t->params[j].def;
    for (int i = 0; i < nargs; i++) {
        if (strcmp(args[i].key, "tab") == 0) continue;
        int j = 0;
        while (j < t->nparams && strcmp(args[i].key, t->params[j].name) != 0)
            j++;
        if (j == t->nparams) {
            char list[128] = "";
            for (int q = 0; q < t->nparams; q++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", q ? ", " : "",
                         t->params[q].name);
            return sv_errorf(err, SV_ENOKEY, "tab %s: unknown parameter '%.60s' (expected %s)",
                             t->name, args[i].key, list);
        }
        if (seen[j]++)
            return sv_errorf(err, SV_EINVAL, "tab %s: %s given twice", t->name, t->params[j].name);
        int rc = parse_param(&t->params[j], t->name, args[i].value, &p[j], err);
        if (rc) return rc;
    }
    cJSON_AddStringToObject(resp, "tab", t->name);
    cJSON *ps = cJSON_AddObjectToObject(resp, "params");
    for (int j = 0; j < t->nparams; j++) {
        if (t->params[j].choices)
            cJSON_AddStringToObject(ps, t->params[j].name, t->params[j].choices[(int)p[j]]);
        else
            cJSON_AddNumberToObject(ps, t->params[j].name, p[j]);
    }
    return t->run(req, p, resp, err);
}
