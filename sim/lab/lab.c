/*
 * The lab's server and its generic part (see include/servesim/lab/lab.h): the routes
 * behind the shared HTTP server (sim/serve/httpd.c: a thread per connection; nothing but
 * the read-only catalog is shared between them; answers queue for a CPU), the checks every lab run passes (allow-listed
 * scenario, allowed keys, no file paths, bounded requests, lengths and replicas), the
 * run itself, and the YAML of a scenario with its overrides for "copy as scenario".
 */
#include "servesim/lab/lab.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/jsonw_int.h"
#include "lab/lab_int.h"
#include "servesim/base/yaml.h"
#include "servesim/cluster/scenario.h"
#include "servesim/report/charts.h"
#include "servesim/report/report.h"
#include "servesim/serve/httpd.h"

#ifndef SERVESIM_LAB_DIR
#define SERVESIM_LAB_DIR "scenarios/lab"
#endif

const char *sv_lab_default_dir(void)
{
    return SERVESIM_LAB_DIR;
}

/* The scenarios the lab runs: scenarios/lab/NAME.yaml and nothing else. */
static const char *const lab_scenarios[] = {
    "clocks",
    "reply-a",
    "reply-b",
    "users",
    "batching-continuous",
    "batching-static",
    "cost",
    "tail",
    "disagg-colocated",
    "disagg-split",
    "queue",
};
#define N_LAB_SCENARIOS (int)(sizeof lab_scenarios / sizeof lab_scenarios[0])

/* Keys a lab request may override (a prefix ending in '.' allows the subtree); the
 * loader checks the rest. Keys or values naming files are refused: the lab reads only
 * its own scenarios. */
static const char *const allowed_keys[] = {
    "seed",    "model",  "router", "workload.",       "hardware.",
    "engine.", "pools.", "slo.",   "disaggregation.",
};
static const char *const refused_words[] = {"file", "trace", "mooncake", "config", ".json", "/", "\\"};

/* Bounds on one run besides the request budget. */
#define MAX_REPLICAS 64
#define MAX_INPUT 131072L
#define MAX_OUTPUT 32768L
#define MAX_TOKENS 8000000.0 /* requests x the largest reply: decode steps stay bounded */
/* Requests x mean reply x mean context (prompt + reply): each reply token is one step of a
 * sequence that long, and a step's work grows with its context (its blocks); 3e10 is about
 * 5 s of simulation on the development machine (4,000 prompts of 129,000 tokens with
 * 2,000-token replies, 1e12, ran for minutes). */
#define MAX_TOKEN_STEPS 3e10

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* ---- checks ---------------------------------------------------------------------------- */

static int check_set(const char *set, sv_error_t *err)
{
    const char *eq = strchr(set, '=');
    if (!eq || eq == set)
        return sv_errorf(err, SV_EINVAL, "set '%s': expected KEY=VALUE (e.g. workload.rate=4)",
                         set);
    size_t kl = (size_t)(eq - set);
    int ok = 0;
    for (size_t i = 0; i < sizeof allowed_keys / sizeof allowed_keys[0]; i++) {
        size_t l = strlen(allowed_keys[i]);
        if (allowed_keys[i][l - 1] == '.' ? (kl > l && strncmp(set, allowed_keys[i], l) == 0)
                                          : (kl == l && strncmp(set, allowed_keys[i], l) == 0))
            ok = 1;
    }
    if (!ok)
        return sv_errorf(err, SV_ENOKEY,
                         "set '%.*s': the lab overrides only seed, model, router and keys under "
                         "workload., hardware., engine., pools., slo. and disaggregation.",
                         (int)kl, set);
    for (size_t i = 0; i < sizeof refused_words / sizeof refused_words[0]; i++)
        if (strstr(set, refused_words[i]))
            return sv_errorf(err, SV_EINVAL,
                             "set '%s': the lab reads no files; '%s' is not allowed in a key or "
                             "value",
                             set, refused_words[i]);
    return 0;
}

/* The largest length a distribution can draw. */
static double len_bound(const sv_lendist_t *d)
{
    double hi = (double)d->max;
    if (d->kind == SV_LEN_FIXED && d->value < hi) hi = d->value;
    if (d->kind == SV_LEN_UNIFORM && (double)d->hi < hi) hi = (double)d->hi;
    if (d->kind == SV_LEN_EMPIRICAL) {
        double m = 0;
        for (size_t i = 0; i < d->nsamples; i++)
            if (d->samples[i] > m) m = (double)d->samples[i];
        if (m < hi) hi = m;
    }
    return hi;
}

/* The mean length a distribution draws (within its min and max). */
static double len_mean(const sv_lendist_t *d)
{
    double m = d->kind == SV_LEN_FIXED     ? d->value
               : d->kind == SV_LEN_UNIFORM ? 0.5 * (double)(d->lo + d->hi)
                                           : d->mean;
    if (d->kind == SV_LEN_EMPIRICAL) {
        m = 0;
        for (size_t i = 0; i < d->nsamples; i++)
            m += (double)d->samples[i] / (double)d->nsamples;
    }
    return m < (double)d->min ? (double)d->min : m > (double)d->max ? (double)d->max : m;
}

static int check_bounds(const sv__lab_req_t *req, const sv_scenario_t *sc, sv_error_t *err)
{
    const sv_workload_cfg_t *w = &sc->workload;
    if (w->has_trace || w->num_requests <= 0 || w->duration > 0)
        return sv_errorf(err, SV_ELIMIT,
                         "workload: the lab runs a given number of requests "
                         "(workload.num_requests), not a duration or a trace");
    if (w->num_requests > req->budget)
        return sv_errorf(err, SV_ELIMIT,
                         "workload.num_requests: %ld is more than this lab request may simulate "
                         "(%ld left of %ld)",
                         w->num_requests, req->budget, SV_LAB_MAX_REQUESTS);
    int replicas = 0;
    for (int p = 0; p < sc->npools; p++)
        replicas += sc->pools[p].replicas;
    if (replicas > MAX_REPLICAS)
        return sv_errorf(err, SV_ELIMIT, "replicas: %d in all; the lab runs at most %d", replicas,
                         MAX_REPLICAS);
    double in = len_bound(&w->input), out = len_bound(&w->output);
    /* with classes the lengths are the classes' (workload.input/output are then unused) */
    for (int k = 0; k < w->nclasses; k++) {
        double ci = len_bound(&w->classes[k].input), co = len_bound(&w->classes[k].output);
        in = k == 0 || ci > in ? ci : in;
        out = k == 0 || co > out ? co : out;
    }
    if (in > MAX_INPUT)
        return sv_errorf(err, SV_ELIMIT,
                         "workload.input: prompts up to %.0f tokens; the lab allows at most %ld "
                         "(set max)",
                         in, MAX_INPUT);
    if (out > MAX_OUTPUT)
        return sv_errorf(err, SV_ELIMIT,
                         "workload.output: replies up to %.0f tokens; the lab allows at most %ld "
                         "(set max)",
                         out, MAX_OUTPUT);
    if (out * (double)w->num_requests > MAX_TOKENS)
        return sv_errorf(err, SV_ELIMIT,
                         "workload: %ld requests of up to %.0f reply tokens; the lab allows at "
                         "most %.0f tokens in all",
                         w->num_requests, out, MAX_TOKENS);
    /* requests x mean reply x mean context, the classes weighed by their shares */
    double steps = 0, reply = 0;
    for (int k = 0; k < (w->nclasses ? w->nclasses : 1); k++) {
        const sv_lendist_t *di = w->nclasses ? &w->classes[k].input : &w->input;
        const sv_lendist_t *dout = w->nclasses ? &w->classes[k].output : &w->output;
        double share = w->nclasses ? w->classes[k].share : 1.0, mo = len_mean(dout);
        reply += share * mo;
        steps += share * (double)w->num_requests * mo * (len_mean(di) + mo);
    }
    if (steps > MAX_TOKEN_STEPS)
        return sv_errorf(err, SV_ELIMIT,
                         "workload: %ld requests with replies of %.0f tokens over contexts of "
                         "%.0f on average are %.3g token-steps; the lab allows at most %.3g "
                         "(fewer or shorter requests)",
                         w->num_requests, reply, steps / ((double)w->num_requests * reply), steps,
                         MAX_TOKEN_STEPS);
    return 0;
}

/* ---- the YAML of a scenario with its overrides ------------------------------------------ */

static int plain_scalar(const char *s)
{
    if (!*s || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0])) return 0;
    for (const char *p = s; *p; p++)
        if ((*p == ':' && (p[1] == ' ' || !p[1])) || (*p == ' ' && p[1] == '#') || *p == '\n' ||
            *p == '"' || *p == '\\')
            return 0;
    return s[strlen(s) - 1] != ' ';
}

static void emit_scalar(FILE *f, const sv_ynode_t *n)
{
    if (!n->quoted && plain_scalar(n->scalar)) {
        fputs(n->scalar, f);
        return;
    }
    fputc('"', f);
    for (const char *p = n->scalar; *p; p++) {
        if (*p == '"' || *p == '\\') fputc('\\', f);
        if (*p == '\n')
            fputs("\\n", f);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void emit_flow(FILE *f, const sv_ynode_t *n)
{
    if (n->kind == SV_Y_SCALAR) {
        emit_scalar(f, n);
    } else if (n->kind == SV_Y_MAP) {
        fputc('{', f);
        for (size_t i = 0; i < n->n; i++) {
            fprintf(f, "%s%s: ", i ? ", " : "", n->map[i].key);
            emit_flow(f, n->map[i].val);
        }
        fputc('}', f);
    } else {
        fputc('[', f);
        for (size_t i = 0; i < n->n; i++) {
            fputs(i ? ", " : "", f);
            emit_flow(f, n->seq[i]);
        }
        fputc(']', f);
    }
}

/* Maps in block style, sequences one flow item a line, the rest in flow style. */
static void emit_block(FILE *f, const sv_ynode_t *map, int indent)
{
    for (size_t i = 0; i < map->n; i++) {
        const sv_ynode_t *v = map->map[i].val;
        fprintf(f, "%*s%s:", indent, "", map->map[i].key);
        if (v->kind == SV_Y_MAP && indent == 0) {
            fputc('\n', f);
            emit_block(f, v, indent + 2);
        } else if (v->kind == SV_Y_SEQ && indent == 0) {
            fputc('\n', f);
            for (size_t k = 0; k < v->n; k++) {
                fprintf(f, "%*s- ", indent + 2, "");
                emit_flow(f, v->seq[k]);
                fputc('\n', f);
            }
        } else {
            fputc(' ', f);
            emit_flow(f, v);
            fputc('\n', f);
        }
    }
}

/* The scenario file with the sets applied, as YAML text (malloc'd), or NULL. */
static char *scenario_yaml(const char *path, const char *name, const char *const *sets, int nsets)
{
    sv_ydoc_t *doc = NULL;
    sv_error_t e;
    if (sv_ydoc_load(path, &doc, &e)) return NULL;
    for (int i = 0; i < nsets; i++)
        if (sv_ydoc_set(doc, sets[i], &e)) {
            sv_ydoc_free(doc);
            return NULL;
        }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        sv_ydoc_free(doc);
        return NULL;
    }
    fprintf(f,
            "# scenarios/lab/%s.yaml as the lab ran it (servesim lab, docs/lab.md).\n"
            "# Save it next to scenarios/lab/%s.yaml and run: servesim run FILE.yaml\n",
            name, name);
    if (nsets) fputs("# overrides applied:", f);
    for (int i = 0; i < nsets; i++)
        fprintf(f, " %s", sets[i]);
    if (nsets) fputc('\n', f);
    if (doc->root && doc->root->kind == SV_Y_MAP) emit_block(f, doc->root, 0);
    sv_ydoc_free(doc);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- one run ----------------------------------------------------------------------------- */

void sv__lab_run_free(sv__lab_run_t *r)
{
    if (!r) return;
    sv_result_free(r->res);
    sv_scenario_free(r->sc);
    free(r->text);
    cJSON_Delete(r->json);
    memset(r, 0, sizeof *r);
}

/* The run's JSON text and its parse into r; 0 or SV_ENOMEM. */
static int run_json(sv__lab_run_t *r)
{
    size_t len = 0;
    FILE *f = open_memstream(&r->text, &len);
    if (!f) return SV_ENOMEM;
    int rc = sv_report_json_stream(r->res, 0, f, NULL);
    if (fclose(f) != 0 || rc) return SV_ENOMEM;
    r->json = cJSON_Parse(r->text);
    return r->json ? 0 : SV_ENOMEM;
}

cJSON *sv__lab_number(double v)
{
    char buf[40];
    return isfinite(v) ? cJSON_CreateRaw(sv__fmt_double(v, buf)) : cJSON_CreateNull();
}

static void add_shown(sv__lab_req_t *req, const char *name, const char *path,
                      const char *const *sets, int nsets)
{
    cJSON *o = cJSON_CreateObject(), *s = cJSON_CreateArray();
    char cmd[4096];
    int at = snprintf(cmd, sizeof cmd, "servesim run scenarios/lab/%s.yaml", name);
    for (int i = 0; i < nsets; i++) {
        cJSON_AddItemToArray(s, cJSON_CreateString(sets[i]));
        int q = strpbrk(sets[i], " {}[],") != NULL;
        if (at < (int)sizeof cmd)
            at += snprintf(cmd + at, sizeof cmd - (size_t)at, q ? " --set '%s'" : " --set %s",
                           sets[i]);
    }
    cJSON_AddStringToObject(o, "scenario", name);
    cJSON_AddItemToObject(o, "sets", s);
    cJSON_AddStringToObject(o, "command", cmd);
    char *y = scenario_yaml(path, name, sets, nsets);
    cJSON_AddStringToObject(o, "yaml", y ? y : "");
    free(y);
    cJSON_AddItemToArray(req->runs, o);
}

static int load_one(sv__lab_req_t *req, const char *name, const char *const *sets, int nsets,
                    sv__lab_run_t *out, sv_error_t *err)
{
    memset(out, 0, sizeof *out);
    int known = 0;
    for (int i = 0; i < N_LAB_SCENARIOS; i++)
        known |= strcmp(name, lab_scenarios[i]) == 0;
    if (!known)
        return sv_errorf(err, SV_ENOTFOUND,
                         "scenario '%s': not a lab scenario (clocks, reply-a, reply-b, users, "
                         "batching-continuous, batching-static, cost, tail, disagg-colocated, "
                         "disagg-split, queue)",
                         name);
    if (nsets > SV_LAB_MAX_SETS)
        return sv_errorf(err, SV_ELIMIT, "at most %d set= overrides, got %d", SV_LAB_MAX_SETS,
                         nsets);
    for (int i = 0; i < nsets; i++) {
        int rc = check_set(sets[i], err);
        if (rc) return rc;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.yaml", req->lab->dir, name);
    int rc = sv_scenario_load(path, sets, nsets, req->lab->cat, &out->sc, err);
    if (!rc) rc = check_bounds(req, out->sc, err);
    if (!rc) req->budget -= out->sc->workload.num_requests;
    return rc;
}

typedef struct job {
    sv__lab_run_t *run;
    sv_error_t err;
    int rc;
} job_t;

static void *run_job(void *arg)
{
    job_t *j = arg;
    j->rc = sv_sim_run(j->run->sc, &j->run->res, &j->err);
    return NULL;
}

int sv__lab_run_many(sv__lab_req_t *req, int n, const sv__lab_spec_t *specs, sv__lab_run_t *out,
                     sv_error_t *err)
{
    int rc = 0, i;
    for (i = 0; i < n; i++)
        memset(&out[i], 0, sizeof out[i]);
    for (i = 0; i < n && !rc; i++)
        rc = load_one(req, specs[i].name, specs[i].sets, specs[i].nsets, &out[i], err);
    /* The runs share nothing: each owns its scenario and result, so they run in threads,
     * a few at a time. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int width = cpus < 1 ? 1 : cpus > SV_LAB_MAX_THREADS ? SV_LAB_MAX_THREADS : (int)cpus;
    job_t jobs[SV_LAB_MAX_THREADS];
    pthread_t th[SV_LAB_MAX_THREADS];
    for (int base = 0; base < n && !rc; base += width) {
        int m = n - base < width ? n - base : width, started = 0;
        for (int k = 0; k < m; k++) {
            jobs[k] = (job_t){.run = &out[base + k], .rc = 0};
            sv_error_clear(&jobs[k].err);
            if (m > 1 && pthread_create(&th[k], NULL, run_job, &jobs[k]) == 0)
                started |= 1 << k;
            else
                run_job(&jobs[k]);
        }
        for (int k = 0; k < m; k++) {
            if (started & (1 << k)) pthread_join(th[k], NULL);
            if (jobs[k].rc && !rc) {
                rc = jobs[k].rc;
                *err = jobs[k].err;
            }
        }
    }
    for (i = 0; i < n && !rc; i++) {
        req->simulated += out[i].sc->workload.num_requests;
        if (run_json(&out[i])) rc = sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    if (rc) {
        for (i = 0; i < n; i++)
            sv__lab_run_free(&out[i]);
        return rc;
    }
    for (i = 0; i < n; i++)
        if (specs[i].show) {
            char path[1200];
            snprintf(path, sizeof path, "%s/%s.yaml", req->lab->dir, specs[i].name);
            add_shown(req, specs[i].name, path, specs[i].sets, specs[i].nsets);
        }
    return 0;
}

int sv__lab_run(sv__lab_req_t *req, const char *name, const char *const *sets, int nsets, int show,
                sv__lab_run_t *out, sv_error_t *err)
{
    sv__lab_spec_t sp = {.name = name, .sets = sets, .nsets = nsets, .show = show};
    return sv__lab_run_many(req, 1, &sp, out, err);
}

double sv__lab_num(const sv__lab_run_t *r, const char *path)
{
    const cJSON *j = r->json;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t && j; t = strtok_r(NULL, ".", &save))
        j = cJSON_GetObjectItemCaseSensitive(j, t);
    return cJSON_IsNumber(j) ? j->valuedouble : NAN;
}

/* ---- routes -------------------------------------------------------------------------------- */

static char *print_json(cJSON *j, size_t *len)
{
    char *s = cJSON_PrintUnformatted(j);
    *len = s ? strlen(s) : 0;
    return s;
}

static int json_error(int status, const char *msg, char **body, size_t *len, const char **ctype)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", msg);
    *body = print_json(j, len);
    cJSON_Delete(j);
    *ctype = "application/json";
    return *body ? status : 500;
}

static int api_run(sv__lab_req_t *req, const sv_lab_arg_t *args, int nargs, cJSON *resp,
                   sv_error_t *err)
{
    const char *scenario = NULL, *sets[SV_LAB_MAX_SETS + 1];
    int nsets = 0;
    for (int i = 0; i < nargs; i++) {
        if (strcmp(args[i].key, "scenario") == 0) {
            if (scenario) return sv_errorf(err, SV_EINVAL, "scenario= given twice");
            scenario = args[i].value;
        } else if (strcmp(args[i].key, "set") == 0) {
            if (nsets > SV_LAB_MAX_SETS)
                return sv_errorf(err, SV_ELIMIT, "at most %d set= overrides", SV_LAB_MAX_SETS);
            sets[nsets++] = args[i].value;
        } else {
            return sv_errorf(err, SV_ENOKEY,
                             "unknown parameter '%s' (/api/run takes scenario= and set=KEY=VALUE)",
                             args[i].key);
        }
    }
    if (!scenario) return sv_errorf(err, SV_EINVAL, "/api/run needs scenario=NAME");
    sv__lab_run_t r;
    int rc = sv__lab_run(req, scenario, sets, nsets, 1, &r, err);
    if (rc) return rc;
    cJSON *charts = cJSON_AddObjectToObject(resp, "charts");
    static const char *const names[] = {"ttft-cdf", "tpot-cdf", "breakdown"};
    for (int i = 0; i < 3; i++) {
        char *svg = sv_chart_run(r.res, names[i]);
        cJSON_AddStringToObject(charts, names[i], svg ? svg : "");
        free(svg);
    }
    cJSON_AddItemToObject(resp, "result", cJSON_CreateRaw(r.text));
    sv__lab_run_free(&r);
    return 0;
}

int sv_lab_answer(const sv_lab_t *lab, const char *path, const sv_lab_arg_t *args, int nargs,
                  char **body, size_t *len, const char **ctype)
{
    *body = NULL;
    *len = 0;
    if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0) {
        *body = malloc(sv__lab_html_len);
        if (!*body) return 500;
        memcpy(*body, sv__lab_html, sv__lab_html_len);
        *len = sv__lab_html_len;
        *ctype = "text/html; charset=utf-8";
        return 200;
    }
    int run = strcmp(path, "/api/run") == 0, lesson = strcmp(path, "/api/lesson") == 0;
    if (!run && !lesson)
        return json_error(404, "not found: the lab serves /, /api/run and /api/lesson", body, len,
                          ctype);
    if (nargs > SV_LAB_MAX_ARGS)
        return json_error(400, "too many query parameters", body, len, ctype);
    for (int i = 0; i < nargs; i++)
        if (!args[i].value || !args[i].value[0]) {
            char m[200];
            snprintf(m, sizeof m, "parameter '%.60s' needs a value (%.60s=VALUE)", args[i].key,
                     args[i].key);
            return json_error(400, m, body, len, ctype);
        }
    double t0 = now_ms();
    sv__lab_req_t req = {.lab = lab, .budget = SV_LAB_MAX_REQUESTS, .runs = cJSON_CreateArray()};
    cJSON *resp = cJSON_CreateObject();
    sv_error_t err;
    sv_error_clear(&err);
    int rc = run ? api_run(&req, args, nargs, resp, &err)
                 : sv__lab_lesson(&req, args, nargs, resp, &err);
    if (rc) {
        cJSON_Delete(resp);
        cJSON_Delete(req.runs);
        return json_error(rc == SV_ENOMEM ? 500 : 400, err.msg, body, len, ctype);
    }
    cJSON_AddItemToObject(resp, "runs", req.runs);
    cJSON_AddNumberToObject(resp, "simulated_requests", (double)req.simulated);
    cJSON_AddNumberToObject(resp, "elapsed_ms", round((now_ms() - t0) * 1000) / 1000);
    *body = print_json(resp, len);
    cJSON_Delete(resp);
    *ctype = "application/json";
    return *body ? 200 : 500;
}

/* ---- HTTP ------------------------------------------------------------------------------------ */

typedef struct argv_acc {
    sv_lab_arg_t a[SV_LAB_MAX_ARGS + 1];
    int n;
    const char *nul; /* the first key whose name or value holds a NUL byte (%00) */
} argv_acc_t;

/* A %00 would cut a key or value short as a C string ("clocks%00x" read as "clocks"):
 * such a request is refused rather than answered for a value it did not send. */
static enum MHD_Result take_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    argv_acc_t *acc = cls;
    if (!acc->nul && (strlen(key) != key_size || (value && strlen(value) != value_size)))
        acc->nul = key;
    if (acc->n <= SV_LAB_MAX_ARGS) acc->a[acc->n++] = (sv_lab_arg_t){key, value};
    return MHD_YES;
}

/* The lab's server: one answer computes at a time per CPU (the rest wait their turn in
 * this queue, up to LAB_QUEUE, instead of being reset), and the shared server's rules
 * (sim/serve/httpd.c) in front. */
#define LAB_CONNS 128     /* connections answered at once */
#define LAB_PER_CLIENT 64 /* ... from one address */
#define LAB_DEADLINE_S 10 /* to send a request whole */
#define LAB_IDLE_S 30     /* without progress while answering */
#define LAB_QUEUE 96      /* answers waiting for a CPU; past it: 503 */

typedef struct lab_server {
    const sv_lab_t *lab;
    sv_httpd_t *httpd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int width, running, waiting;
} lab_server_t;

static char *lab_error_body(void *cls, int status, const char *msg, size_t *len,
                            const char **ctype)
{
    (void)cls;
    (void)status;
    char *body = NULL;
    json_error(400, msg, &body, len, ctype);
    return body;
}

/* Wait for a CPU: 0, or -1 when the queue is full. */
static int lab_enter(lab_server_t *ls)
{
    pthread_mutex_lock(&ls->mu);
    if (ls->running >= ls->width && ls->waiting >= LAB_QUEUE) {
        pthread_mutex_unlock(&ls->mu);
        return -1;
    }
    ls->waiting++;
    while (ls->running >= ls->width)
        pthread_cond_wait(&ls->cv, &ls->mu);
    ls->waiting--;
    ls->running++;
    pthread_mutex_unlock(&ls->mu);
    return 0;
}

static void lab_leave(lab_server_t *ls)
{
    pthread_mutex_lock(&ls->mu);
    ls->running--;
    pthread_cond_signal(&ls->cv);
    pthread_mutex_unlock(&ls->mu);
}

static enum MHD_Result on_request(void *cls, sv_httpd_req_t *q)
{
    lab_server_t *ls = cls;
    const sv_lab_t *lab = ls->lab;
    struct MHD_Connection *c = q->conn;
    char *body = NULL;
    size_t len = 0;
    const char *ctype = "application/json";
    int status;
    argv_acc_t acc = {.n = 0};
    double t0 = now_ms();
    if (strcmp(q->method, "GET") != 0 && strcmp(q->method, "HEAD") != 0) {
        status = json_error(405, "the lab answers GET only", &body, &len, &ctype);
    } else {
        MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, take_arg, &acc);
        if (acc.nul) {
            char m[160];
            snprintf(m, sizeof m, "parameter '%.60s': a NUL byte (%%00) in its name or value",
                     acc.nul);
            status = json_error(400, m, &body, &len, &ctype);
        } else if (strcmp(q->url, "/") == 0 || strcmp(q->url, "/index.html") == 0) {
            status = sv_lab_answer(lab, q->url, acc.a, acc.n, &body, &len, &ctype);
        } else if (lab_enter(ls)) {
            status = json_error(503, "the lab is busy: too many runs waiting; retry in a moment",
                                &body, &len, &ctype);
        } else {
            status = sv_lab_answer(lab, q->url, acc.a, acc.n, &body, &len, &ctype);
            lab_leave(ls);
        }
    }
    enum MHD_Result ok = sv_httpd_respond(ls->httpd, c, status, body, len, ctype);
    if (lab->log)
        fprintf(lab->log, "servesim lab: %s %s -> %d (%.1f ms)\n", q->method, q->url, status,
                now_ms() - t0);
    return ok;
}

int sv_lab_serve(const sv_lab_t *lab, sv_error_t *err)
{
    static const char *const headers[] = {
        "Content-Security-Policy",
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src "
        "data:; connect-src 'self'",
        NULL};
    lab_server_t ls = {.lab = lab};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ls.width = cpus < 1 ? 1 : cpus > SV_LAB_MAX_THREADS ? SV_LAB_MAX_THREADS : (int)cpus;
    pthread_mutex_init(&ls.mu, NULL);
    pthread_cond_init(&ls.cv, NULL);
    /* Each connection's memory pool holds its request line and one record per query
     * parameter: at libmicrohttpd's default 32 KiB, about 500 parameters (&s=1&s=1...) run it
     * out and the connection is closed without an answer. 256 KiB holds a few thousand, so
     * "too many query parameters" is answered. */
    sv_httpd_cfg_t cfg = {.bind = lab->bind,
                          .port = lab->port,
                          .threaded = 1,
                          .max_conns = LAB_CONNS,
                          .per_client = LAB_PER_CLIENT,
                          .deadline_s = LAB_DEADLINE_S,
                          .idle_s = LAB_IDLE_S,
                          .max_body = 64 * 1024,
                          .conn_memory = (size_t)256 * 1024,
                          .handler = on_request,
                          .error_body = lab_error_body,
                          .cls = &ls,
                          .headers = headers};
    /* The serving threads inherit this mask; the main thread waits for the signal. */
    sv_httpd_block_signals();
    int port = 0;
    int rc = sv_httpd_start(&cfg, &ls.httpd, &port, err);
    if (rc) {
        pthread_mutex_destroy(&ls.mu);
        pthread_cond_destroy(&ls.cv);
        return rc;
    }
    char host[80];
    printf("servesim lab: http://%s:%d/ (Ctrl-C stops it)\nport %d\n",
           sv_httpd_url_host(lab->bind, host, sizeof host), port, port);
    fflush(stdout);
    int sig = sv_httpd_wait_signal();
    sv_httpd_stop(ls.httpd);
    pthread_mutex_destroy(&ls.mu);
    pthread_cond_destroy(&ls.cv);
    if (lab->log) fprintf(lab->log, "servesim lab: stopped (signal %d)\n", sig);
    return 0;
}
