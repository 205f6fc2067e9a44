/*
 * The servesim command line: parses arguments and calls the library, nothing more.
 *   servesim run SCENARIO [--set k=v ...] [--json FILE] [--detailed] [--requests-csv FILE]
 *                         [--timeseries-csv FILE] [--quiet]
 *   servesim list gpus|models
 *   servesim explain --model M --gpu G [--tp N] [--input N] [--output N] [--batch 1,8,...]
 * Every error is one line on stderr and a non-zero exit status.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#ifdef SERVESIM_HAVE_MPI
#include <mpi.h>
#endif

#include "servesim/studies/calibrate.h"
#include "servesim/studies/confidence.h"
#include "servesim/cost/catalog.h"
#include "servesim/studies/explain.h"
#include "servesim/report/config.h"
#include "servesim/report/html.h"
#include "servesim/base/paths.h"
#include "servesim/base/suggest.h"
#include "servesim/cost/perf.h"
#include "servesim/studies/plan.h"
#include "servesim/studies/runprogress.h"
#include "servesim/report/report.h"
#include "servesim/report/convention.h"
#include "servesim/report/recstream.h"
#include "servesim/report/trace.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "servesim/studies/sweep.h"
#include "servesim/studies/validate.h"
#include "servesim/base/yaml.h"
#include "servesim/lab/lab.h"
#include "servesim/serve/serve.h"

#include "cli/cli_cmp_int.h"
#include "cli/cli_int.h"
#include "cli/help_int.h"

#define EXIT_USAGE 2

static int fail(const char *fmt, const char *a)
{
    fprintf(stderr, "servesim: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return EXIT_FAILURE;
}

/* A code returned without a message (err starts zeroed) prints its sv_strerror() words. */
static int fail_err(const sv_error_t *err)
{
    fprintf(stderr, "servesim: error: %s\n", err->msg[0] ? err->msg : sv_strerror(err->code));
    return EXIT_FAILURE;
}

/* ---- outputs never overwrite inputs ---- */

static const char *catalog_dir_used; /* set once by servesim_main */

/* A set of paths with the catalog files as inputs; NULL when out of memory. */
static sv_paths_t *paths_with_catalog(void)
{
    sv_paths_t *ps = sv_paths_new();
    if (ps && sv_paths_input_dir(ps, catalog_dir_used, ".yaml", "a catalog file")) {
        sv_paths_free(ps);
        ps = NULL;
    }
    return ps;
}

/* The scenario and every file it read. */
static int scenario_inputs(sv_paths_t *ps, const char *path, const sv_scenario_t *sc,
                           sv_error_t *err)
{
    int rc = sv_paths_input(ps, path, "the scenario");
    for (int i = 0; !rc && i < sc->ninputs; i++)
        rc = sv_paths_input(ps, sc->inputs[i], "a file the scenario reads");
    return rc ? sv_errorf(err, rc, "out of memory") : 0;
}

/* An output file (NULL: not asked for). */
static int out_file(sv_paths_t *ps, const char *opt, const char *path, sv_error_t *err)
{
    return path ? sv_paths_output(ps, path, NULL, opt, err) : 0;
}

/* An HTML report and its charts, PATH-NAME.svg beside it (PATH without .html). */
static int out_report(sv_paths_t *ps, const char *path, sv_error_t *err)
{
    if (!path) return 0;
    char base[1100];
    size_t l = strlen(path);
    int html = l > 5 && strcmp(path + l - 5, ".html") == 0;
    snprintf(base, sizeof base, "%.*s-", (int)(html ? l - 5 : l), path);
    int rc = sv_paths_output(ps, path, NULL, "--report", err);
    return rc ? rc : sv_paths_output(ps, base, ".svg", "--report", err);
}

/* A file in an output folder: "DIR/name" checked as --out. */
static int out_in_dir(sv_paths_t *ps, const char *opt, const char *dir, const char *name,
                      const char *suffix, sv_error_t *err)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return sv_paths_output(ps, p, suffix, opt, err);
}

/* The option whose value was missing, for the message. */
static const char *missing_opt = "an option";

const char *sv__opt_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    sv__opt_listed(name);
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        missing_opt = name;
        return NULL;
    }
    return argv[++*i];
}

const char *sv__opt_missing(void)
{
    return missing_opt;
}

static int cmd_list(const sv_catalog_t *cat, int argc, char **argv)
{
    static const char *const what[] = {"gpus", "models"};
    if (argc != 1 || (strcmp(argv[0], "gpus") && strcmp(argv[0], "models"))) {
        const char *near = argc == 1 ? sv_suggest(argv[0], what, 2) : NULL;
        if (near)
            fprintf(stderr,
                    "servesim: error: expected 'list gpus' or 'list models' (did you mean "
                    "'list %s'?)\n",
                    near);
        else
            fprintf(stderr, "servesim: error: expected 'list gpus' or 'list models'\n");
        return EXIT_FAILURE;
    }
    if (strcmp(argv[0], "gpus") == 0) {
        printf("%-11s %-26s %9s %9s %8s %10s %-16s %6s %7s %7s\n", "name", "description",
               "BF16 TF/s", "FP8 TF/s", "mem GiB", "HBM GB/s", "link (GB/s bidir)", "TDP W",
               "idle W", "$/h");
        for (size_t i = 0; i < cat->ngpus; i++) {
            const sv_gpu_t *g = &cat->gpus[i];
            char link[48];
            snprintf(link, sizeof link, "%s %.0f", g->link, g->link_bw / 1e9);
            printf("%-11s %-26s %9.1f %9.1f %8.1f %10.0f %-16s %6.0f %7.0f %7.2f\n", g->name,
                   g->description, g->bf16_flops / 1e12, g->fp8_flops / 1e12,
                   g->mem_bytes / 1073741824.0, g->hbm_bw / 1e9, link, g->tdp_w, g->idle_w,
                   g->price_per_hour);
        }
    } else {
        printf("%-15s %9s %6s %6s %5s %4s %6s %7s %7s %10s %-8s\n", "name", "params B", "layers",
               "hidden", "heads", "kv", "headd", "ffn", "vocab", "KV B/tok", "notes");
        for (size_t i = 0; i < cat->nmodels; i++) {
            const sv_model_t *m = &cat->models[i];
            char notes[64] = "";
            if (m->experts)
                snprintf(notes, sizeof notes, "MoE %dx top-%d", m->experts, m->experts_per_tok);
            else if (m->sliding_window)
                snprintf(notes, sizeof notes, "window %d", m->sliding_window);
            else if (m->tied_embeddings)
                snprintf(notes, sizeof notes, "tied emb.");
            double kv = sv_model_kv_bytes_token(m, SV_DT_BF16);
            printf("%-15s %9.2f %6d %6d %5d %4d %6d %7d %7d %10.0f %-8s\n", m->name,
                   sv_model_param_count(m) / 1e9, m->layers, m->hidden, m->heads, m->kv_heads,
                   m->head_dim, m->experts ? m->moe_ffn : m->ffn, m->vocab, kv, notes);
        }
    }
    return EXIT_SUCCESS;
}

/* "1,8,32" -> array. */
static int parse_batches(const char *s, long *out, int max, int *n)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (*n == max || sv_parse_long(tok, &v) || v < 1) return -1;
        out[(*n)++] = v;
    }
    return *n ? 0 : -1;
}

static int apply_set(sv_perf_settings_t *s, const char *kv, sv_error_t *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq) return sv_errorf(err, SV_EINVAL, "--set %s: expected KEY=VALUE", kv);
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    const char *k = key;
    if (strncmp(k, "hardware.", 9) == 0)
        k += 9;
    else if (strncmp(k, "engine.", 7) == 0)
        k += 7;
    int rc = sv_perf_settings_set(s, k, eq + 1, err);
    if (rc == SV_ENOKEY) {
        size_t nkeys = 0;
        while (sv_perf_setting_keys[nkeys])
            nkeys++;
        const char *near = sv_suggest(k, sv_perf_setting_keys, nkeys);
        if (near)
            return sv_errorf(err, SV_ENOKEY, "--set %s: unknown key '%s' (did you mean '%s'?)", kv,
                             key, near);
        return sv_errorf(err, SV_ENOKEY,
                         "--set %s: unknown key '%s' (see servesim explain --help for the keys)",
                         kv, key);
    }
    if (rc) sv_error_prefix(err, "--set %s", kv);
    return rc;
}

/* explain --json FILE: FILE must not be a catalog file nor the model's config.json; 0 or a code. */
static int explain_out_check(const char *model_name, const char *json_path, sv_error_t *err)
{
    sv_paths_t *ps = paths_with_catalog();
    struct stat st;
    int rc = ps ? 0 : sv_errorf(err, SV_ENOMEM, "out of memory");
    if (!rc && stat(model_name, &st) == 0 && S_ISREG(st.st_mode) &&
        sv_paths_input(ps, model_name, "the model's config.json"))
        rc = sv_errorf(err, SV_ENOMEM, "out of memory");
    if (!rc) rc = out_file(ps, "--json", json_path, err);
    sv_paths_free(ps);
    return rc;
}

/* explain --json: writes the breakdown to json_path (stdout when NULL or "-"); the exit code. */
static int explain_write_json(const sv_explain_t *e, const char *json_path)
{
    int rc = EXIT_SUCCESS;
    cJSON *j = sv_explain_json(e);
    char *text = cJSON_Print(j);
    if (json_path && strcmp(json_path, "-") == 0) json_path = NULL;
    FILE *f = json_path ? fopen(json_path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "servesim: error: %s: cannot write: %s\n", json_path, strerror(errno));
        rc = EXIT_FAILURE;
    } else {
        fprintf(f, "%s\n", text);
        if (json_path) {
            int bad = ferror(f);
            if (fclose(f)) bad = 1;
            if (bad) rc = fail("error: %s: write error", json_path);
        }
    }
    free(text);
    cJSON_Delete(j);
    return rc;
}

static int cmd_explain(const sv_catalog_t *cat, int argc, char **argv)
{
    const char *model_name = NULL, *gpu_name = NULL, *json_path = NULL, *profile = NULL;
    long input = 1024, output = 256;
    long batches[SV_EXPLAIN_MAX_BATCHES] = {1, 8, 32, 64, 128, 256};
    int nbatches = 6, ideal = 0, json = 0;
    sv_perf_settings_t set = sv_perf_settings_default();
    sv_error_t err = {0};
    sv_error_clear(&err);
    const char *v;
    int missing = 0;
    /* --set values are applied after the named options, in order. */
    const char *sets[64];
    int nsets = 0;

    for (int i = 0; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--model", &missing)))
            model_name = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--gpu", &missing)))
            gpu_name = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--profile", &missing)))
            profile = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--tp", &missing))) {
            if (sv_perf_settings_set(&set, "tp", v, &err)) return fail_err(&err);
        } else if ((v = sv__opt_value(argc, argv, &i, "--input", &missing))) {
            if (sv_parse_long(v, &input) || input < 1)
                return fail("error: --input: expected a whole number >= 1, got '%s'", v);
        } else if ((v = sv__opt_value(argc, argv, &i, "--output", &missing))) {
            if (sv_parse_long(v, &output) || output < 1)
                return fail("error: --output: expected a whole number >= 1, got '%s'", v);
        } else if ((v = sv__opt_value(argc, argv, &i, "--batch", &missing))) {
            if (parse_batches(v, batches, SV_EXPLAIN_MAX_BATCHES, &nbatches)) {
                fprintf(stderr,
                        "servesim: error: --batch: expected 1 to %d sizes >= 1 like 1,8,32,64, "
                        "got '%s'\n",
                        SV_EXPLAIN_MAX_BATCHES, v);
                return EXIT_FAILURE;
            }
        } else if ((v = sv__opt_value(argc, argv, &i, "--weight-dtype", &missing))) {
            if (sv_perf_settings_set(&set, "weight_dtype", v, &err)) return fail_err(&err);
        } else if ((v = sv__opt_value(argc, argv, &i, "--kv-dtype", &missing))) {
            if (sv_perf_settings_set(&set, "kv_cache_dtype", v, &err)) return fail_err(&err);
        } else if ((v = sv__opt_value(argc, argv, &i, "--set", &missing))) {
            if (nsets == 64) return fail("error: too many --set options (at most 64)%s", "");
            sets[nsets++] = v;
        } else if (sv__opt_is(argv[i], "--ideal")) {
            ideal = 1;
        } else if (sv__opt_is(argv[i], "--json")) {
            /* --json alone prints to stdout; --json FILE (or -) like every other option */
            json = 1;
            if (i + 1 < argc && (argv[i + 1][0] != '-' || strcmp(argv[i + 1], "-") == 0))
                json_path = argv[++i];
        } else if (strncmp(argv[i], "--json=", 7) == 0) {
            json = 1;
            json_path = argv[i] + 7;
        } else if (missing) {
            break;
        } else {
            return sv__unknown_option("explain", argv[i]);
        }
        if (missing) break;
    }
    if (missing) return fail("error: %s needs a value (see servesim --help)", missing_opt);
    if (!model_name) return fail("error: explain needs --model NAME%s", "");
    if (!gpu_name) return fail("error: explain needs --gpu NAME%s", "");
    if (ideal) sv_perf_settings_ideal(&set);
    for (int i = 0; i < nsets; i++)
        if (apply_set(&set, sets[i], &err)) return fail_err(&err);
    if (sv_perf_settings_profile(&set, cat, profile, &err)) return fail_err(&err);

    const sv_gpu_t *gpu;
    sv_model_t model;
    sv_perf_t perf;
    if (sv_catalog_gpu(cat, gpu_name, &gpu, &err) ||
        sv_catalog_resolve_model(cat, model_name, &model, &err) ||
        sv_perf_init(&perf, gpu, &model, &set, &err))
        return fail_err(&err);
    sv_model_t draft_model;
    sv_perf_t draft; /* perf borrows it (speculative: draft) */
    if (set.spec_method == SV_SPEC_DRAFT) {
        if (sv_catalog_resolve_model(cat, set.spec_model, &draft_model, &err)) {
            sv_error_prefix(&err, "speculative_model");
            return fail_err(&err);
        }
        if (sv_perf_draft_init(&perf, &draft, &draft_model, &err)) return fail_err(&err);
    }
    if (json_path && strcmp(json_path, "-") != 0 && explain_out_check(model_name, json_path, &err))
        return fail_err(&err);
    sv_explain_t *e = malloc(sizeof *e);
    if (!e) return fail("error: out of memory%s", "");
    if (sv_explain_compute(&perf, input, output, batches, nbatches, e, &err)) {
        free(e);
        return fail_err(&err);
    }
    int rc = json ? explain_write_json(e, json_path) : EXIT_SUCCESS;
    if (!json) {
        sv_explain_print(e, stdout);
        const sv_engine_profile_t *ep;
        if (perf.set.engine[0] && sv_catalog_engine(cat, perf.set.engine, &ep, NULL) == 0) {
            printf("\nEngine profile '%s': %s\n  fitted to: %s\n", ep->name, ep->description,
                   ep->fitted_to);
            for (int k = 0; k < ep->nscheds; k++) {
                char d[128];
                printf("  scheduler %s, where a scenario leaves them unset: %s%s\n",
                       ep->scheds[k].scheduler,
                       sv_engine_sched_defaults_text(&ep->scheds[k], d, sizeof d),
                       ep->scheds[k].async_scheduling == 1
                           ? " (the step times above are without async scheduling's overlap)"
                           : "");
            }
        }
    }
    free(e);
    return rc;
}

/* Options every scenario command takes: the scenario path, --set (repeatable) and --jobs. */
typedef struct cmd_args {
    const char *path;
    const char *sets[256];
    int nsets;
    int jobs;
    int missing; /* an option lacked its value */
} cmd_args_t;

/* Take argv[*i] if it is a shared option or the scenario path: 1 if taken, 0 if not,
 * -1 after printing an error. */
static int take_common(int argc, char **argv, int *i, cmd_args_t *a, const char *cmd)
{
    const char *v;
    if ((v = sv__opt_value(argc, argv, i, "--set", &a->missing))) {
        if (a->nsets == 256) return fail("error: too many --set options (at most 256)%s", ""), -1;
        a->sets[a->nsets++] = v;
        return 1;
    }
    if ((v = sv__opt_value(argc, argv, i, "--jobs", &a->missing))) {
        long j;
        if (sv_parse_long(v, &j) || j < 1 || j > 1024)
            return fail("error: --jobs: expected a whole number in [1, 1024], got '%s'", v), -1;
        a->jobs = (int)j;
        return 1;
    }
    if (a->missing) return 0;
    if (argv[*i][0] == '-' && argv[*i][1] != '\0') {
        sv__unknown_option(cmd, argv[*i]);
        return -1;
    }
    if (a->path) {
        fprintf(stderr, "servesim: error: %s takes one scenario file; '%s' is one too many\n", cmd,
                argv[*i]);
        return -1;
    }
    a->path = argv[*i];
    return 1;
}

/* After the loop: a missing value or a missing scenario is an error (-1, printed). */
static int finish_args(const cmd_args_t *a, const char *need)
{
    if (a->missing) return fail("error: %s needs a value (see servesim --help)", missing_opt), -1;
    if (!a->path) return fail("error: %s", need), -1;
    return 0;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What `servesim run` was asked for. */
typedef struct run_opts {
    cmd_args_t a;
    const char *json, *req_csv, *ts_csv, *html, *prom, *prom_series, *cl_csv, *trace,
        *axes_from[16];
    int naxes, detailed, quiet, check, verbose;
    int sketch;          /* --sketch */
    double sketch_alpha; /* --sketch-alpha; 0: the default */
    long exact_max;      /* --exact-max; 0: the default */
    sv_convention_t conv;
} run_opts_t;

/* Parse run's options into o: 0, or the exit status of a usage error (already printed). */
static int parse_run(int argc, char **argv, run_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->a.jobs = 1;
    o->conv = SV_CONV_VLLM;
    const char *v;
    for (int i = 0; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--json", &o->a.missing)))
            o->json = v;
        else if (sv__opt_is(argv[i], "--verbose"))
            o->verbose = 1;
        else if ((v = sv__opt_value(argc, argv, &i, "--trace-json", &o->a.missing)))
            o->trace = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--axes-from", &o->a.missing))) {
            if (o->naxes == 16)
                return fail("error: too many --axes-from options (at most 16)%s", "");
            o->axes_from[o->naxes++] = v;
        } else if (sv__opt_is(argv[i], "--check"))
            o->check = 1;
        else if (sv__opt_is(argv[i], "--sketch"))
            o->sketch = 1;
        else if ((v = sv__opt_value(argc, argv, &i, "--sketch-alpha", &o->a.missing))) {
            char *end;
            o->sketch_alpha = strtod(v, &end);
            if (end == v || *end || !(o->sketch_alpha > 0 && o->sketch_alpha <= 0.5))
                return fail("error: --sketch-alpha: expected a number in (0, 0.5], got '%s'", v);
        } else if ((v = sv__opt_value(argc, argv, &i, "--exact-max", &o->a.missing))) {
            char *end;
            long long k = strtoll(v, &end, 10);
            if (end == v || *end || k < 1)
                return fail("error: --exact-max: expected a whole number >= 1, got '%s'", v);
            o->exact_max = (long)k;
        } else if ((v = sv__opt_value(argc, argv, &i, "--report", &o->a.missing)))
            o->html = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--prometheus", &o->a.missing)))
            o->prom = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--prometheus-series", &o->a.missing)))
            o->prom_series = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--requests-csv", &o->a.missing)))
            o->req_csv = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--timeseries-csv", &o->a.missing)))
            o->ts_csv = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--cluster-csv", &o->a.missing)))
            o->cl_csv = v;
        else if (sv__opt_is(argv[i], "--detailed"))
            o->detailed = 1;
        else if (sv__opt_is(argv[i], "--quiet"))
            o->quiet = 1;
        else if ((v = sv__opt_value(argc, argv, &i, "--convention", &o->a.missing))) {
            sv_error_t cerr;
            if (sv_convention_parse(v, &o->conv, &cerr)) return fail_err(&cerr);
        } else if (take_common(argc, argv, &i, &o->a, "run") < 0)
            return EXIT_FAILURE;
        if (o->a.missing) break;
    }
    if (finish_args(&o->a, "run needs a scenario file (e.g. scenarios/quickstart.yaml)"))
        return EXIT_FAILURE;
    return 0;
}

/* Every output checked against the inputs (an --axes-from file is one: --json RUN.json
 * --axes-from RUN.json would replace it) and each other, before the run. */
static int check_run_outputs(const run_opts_t *o, const sv_scenario_t *sc, sv_error_t *err)
{
    sv_paths_t *ps = paths_with_catalog();
    int bad =
        !ps ? sv_errorf(err, SV_ENOMEM, "out of memory") : scenario_inputs(ps, o->a.path, sc, err);
    for (int k = 0; !bad && k < o->naxes; k++)
        if (sv_paths_input(ps, o->axes_from[k], "an --axes-from file"))
            bad = sv_errorf(err, SV_ENOMEM, "out of memory");
    if (!bad && o->json && strcmp(o->json, "-") != 0) bad = out_file(ps, "--json", o->json, err);
    if (!bad) bad = out_file(ps, "--requests-csv", o->req_csv, err);
    if (!bad) bad = out_file(ps, "--timeseries-csv", o->ts_csv, err);
    if (!bad) bad = out_file(ps, "--cluster-csv", o->cl_csv, err);
    if (!bad) bad = out_file(ps, "--prometheus", o->prom, err);
    if (!bad && o->prom_series && strcmp(o->prom_series, "-") != 0)
        bad = out_file(ps, "--prometheus-series", o->prom_series, err);
    if (!bad) bad = out_file(ps, "--trace-json", o->trace, err);
    if (!bad) bad = out_report(ps, o->html, err);
    sv_paths_free(ps);
    return bad;
}

/* The streaming summary (--sketch without request classes) forgets each request's tokens
 * as it ends: the outputs that list them per request are refused. */
static int check_streaming(const run_opts_t *o, const sv_scenario_t *sc, sv_error_t *err)
{
    if (!sc->metrics.sketch || sc->metrics.nclasses > 0) return 0;
    if (sv_sim_windowed(sc)) return 0; /* every output written as the requests end */
    const sv_convention_def_t *d = o->conv != SV_CONV_VLLM ? sv_convention_get(o->conv) : NULL;
    int itls = 0; /* another convention pools the ITLs or takes the time to second token */
    for (int i = 0; d && i < d->nmetrics; i++)
        itls |= d->metrics[i].q == SV_CQ_ITL || d->metrics[i].q == SV_CQ_TTST;
    const char *what = o->detailed ? "--detailed"
                       : o->prom   ? "--prometheus"
                       : itls      ? "--convention"
                                   : NULL;
    if (!what) return 0;
    return sv_errorf(err, SV_EINVAL,
                     "%s needs every request's inter-token latencies, which the streaming "
                     "summary (--sketch, metrics.sketch) does not keep; drop one of them",
                     what);
}

/* Whether the outputs asked for read no request record after the run, or can be written as
 * the requests end (--json and --requests-csv to a file, servesim/report/recstream.h), so
 * that the streaming summary's run may release each record once it has ended
 * (metrics.window): vLLM's convention without the client-queue metrics (read from the
 * records at the end), no --report, --cluster-csv, --prometheus(-series) or --trace-json. */
static int records_unread(const run_opts_t *o, const sv_scenario_t *sc)
{
    int client_queue = (sc->metrics.selected & (SV_M_CLIENT_QUEUE | SV_M_E2EL_QUEUE)) &&
                       sc->workload.max_concurrency > 0;
    int csv_out = o->req_csv && strcmp(o->req_csv, "-") == 0; /* (stdout: after the summary) */
    return !csv_out && !o->cl_csv && !o->html && !o->prom && !o->prom_series && !o->trace &&
           o->conv == SV_CONV_VLLM && !client_queue;
}

/* --axes-from: the other runs' reach, read before the run so that a bad file costs none;
 * note names them for the report. */
static int read_run_axes(const run_opts_t *o, sv_run_axes_t *given, char *note, size_t n,
                         sv_error_t *err)
{
    memset(given, 0, sizeof *given);
    note[0] = '\0';
    if (o->naxes > 0 && !o->html)
        return sv_errorf(err, SV_EINVAL,
                         "--axes-from sets the axes of --report's charts; give "
                         "--report FILE.html too");
    for (int k = 0, w = 0; k < o->naxes; k++) {
        int rc = sv_run_axes_read(o->axes_from[k], given, err);
        if (rc) return rc;
        if (w < (int)n)
            w += snprintf(note + w, n - (size_t)w, "%s%s", k ? ", " : "", o->axes_from[k]);
    }
    return 0;
}

/* A windowed run writes --requests-csv and --json's per-request lists as its requests end
 * (*rs; NULL when it is not windowed or writes neither). */
static int open_recstream(const run_opts_t *o, sv_scenario_t *sc, sv_recstream_t **rs,
                          sv_error_t *err)
{
    *rs = NULL;
    if (!sv_sim_windowed(sc) || (!o->json && !o->req_csv)) return 0;
    int rc = sv_recstream_new(sc, o->req_csv, o->json != NULL, o->detailed, rs, err);
    if (!rc) sv_recstream_attach(*rs, sc);
    return rc;
}

/* The files asked for, in order; stops at the first that fails (0 or its code). rs: what
 * was written as the requests ended (--requests-csv done, --json's lists). */
static int write_run_outputs(const run_opts_t *o, const sv_result_t *res,
                             const sv_run_axes_t *given, const char *note, sv_tracer_t *tracer,
                             sv_recstream_t *rs, sv_error_t *err)
{
    int rc = 0;
    if (o->verbose && !o->quiet) {
        sv_run_config_t cfg;
        if ((rc = sv_run_config(res, &cfg, err))) return rc;
        sv_run_config_print(&cfg, stdout);
        sv_run_config_free(&cfg);
    }
    if (!o->quiet) sv_report_summary_as(res, o->conv, stdout);
    if (rs && (rc = sv_recstream_finish(rs, err))) return rc;
    if (o->json && rs && (rc = sv_report_json_streamed(res, rs, o->detailed, o->json, err)))
        return rc;
    if (o->json && !rs && (rc = sv_report_json_as(res, o->conv, o->detailed, o->json, err)))
        return rc;
    if (o->req_csv && !rs && (rc = sv_report_requests_csv(res, o->req_csv, err))) return rc;
    if (o->ts_csv && (rc = sv_report_timeseries_csv(res, o->ts_csv, err))) return rc;
    if (o->cl_csv && (rc = sv_report_cluster_csv(res, o->cl_csv, err))) return rc;
    if (o->html && o->naxes == 0 && (rc = sv_html_run(res, o->html, err))) return rc;
    if (o->html && o->naxes > 0) {
        sv_run_axes_t ax;
        sv_run_axes_of(res, &ax);
        sv_run_axes_widen(&ax, given);
        if ((rc = sv_html_run_axes(res, &ax, note, o->html, err))) return rc;
    }
    if (o->prom && (rc = sv_report_prometheus(res, o->prom, err))) return rc;
    if (o->prom_series && (rc = sv_report_prometheus_series(res, 0.0, o->prom_series, err)))
        return rc;
    sv_trace_cut_t cut;
    if (tracer && (rc = sv_tracer_write(tracer, res, o->trace, &cut, err))) return rc;
    if (tracer && cut.cut)
        fprintf(stderr,
                "servesim: note: --trace-json holds the first %.6g s of simulated time (%ld of "
                "%ld steps, %ld of %ld requests): a trace stops at %ld steps or %ld requests\n",
                cut.until_s, cut.steps, cut.steps_all, cut.requests, cut.requests_all,
                SV_TRACE_MAX_STEPS, SV_TRACE_MAX_REQUESTS);
    return 0;
}

/* The run's notes on stderr: its size and speed, defaults taken, samples thinned. */
static void run_notes(const sv_scenario_t *sc, const sv_result_t *res, double wall)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr,
            "servesim: simulated %zu requests (%ld events) in %.3f s wall, peak memory %.1f MiB\n",
            res->pool.n, res->events, wall, (double)ru.ru_maxrss / 1024.0);
    for (int p = 0; p < sc->npools; p++)
        if (sc->pools[p].defaulted)
            fprintf(stderr,
                    "servesim: pool '%s' (%s, %s): vLLM's defaults for `vllm serve` on this GPU: "
                    "max_num_seqs %ld, max_num_batched_tokens %ld\n",
                    sc->pools[p].name, sc->pools[p].gpu.name,
                    sv_sched_name(sc->pools[p].engine.scheduler), sc->pools[p].engine.max_num_seqs,
                    sc->pools[p].engine.max_num_batched_tokens);
    if (res->sample_interval > sc->metrics.sample_interval)
        fprintf(stderr,
                "servesim: note: time-series samples thinned to one every %g s to stay "
                "under %ld samples\n",
                res->sample_interval, SV_MAX_SAMPLES);
}

static int cmd_run(const sv_catalog_t *cat, int argc, char **argv)
{
    run_opts_t o;
    int st = parse_run(argc, argv, &o);
    if (st) return st;
    sv_error_t err = {0};
    sv_scenario_t *sc = NULL;
    if (sv_scenario_load(o.a.path, o.a.sets, o.a.nsets, cat, &sc, &err)) return fail_err(&err);
    sc->check = o.check;
    sc->metrics.sketch |= o.sketch; /* the scenario's metrics.sketch, or --sketch */
    sc->metrics.sketch_alpha = o.sketch_alpha;
    sc->metrics.exact_max = o.exact_max;
    sc->metrics.window = sc->metrics.sketch && records_unread(&o, sc);
    sv_run_axes_t given;
    char note[512];
    sv_tracer_t *tracer = NULL;
    sv_recstream_t *rs = NULL;
    sv_sim_hooks_t hooks;
    int bad = check_run_outputs(&o, sc, &err);
    if (!bad) bad = check_streaming(&o, sc, &err);
    if (!bad) bad = read_run_axes(&o, &given, note, sizeof note, &err);
    if (!bad && o.trace && !(bad = sv_tracer_new(0, 0, &tracer, &err)))
        sv_tracer_hooks(tracer, &hooks);
    if (!bad) bad = open_recstream(&o, sc, &rs, &err);
    if (bad) {
        sv_tracer_free(tracer);
        sv_scenario_free(sc);
        return fail_err(&err);
    }
    double t0 = wall_seconds();
    sv_result_t *res = NULL;
    sv_run_progress_t prog; /* a line on stderr once a run lasts (studies/runprogress.h) */
    sv_run_progress_start(&prog, sc, tracer ? &hooks : NULL, stderr);
    int rc = sv_sim_run_hooked(sc, o.quiet ? (tracer ? &hooks : NULL) : &prog.hooks, &res, &err);
    sv_run_progress_end(&prog);
    double wall = wall_seconds() - t0;
    if (!rc) {
        rc = write_run_outputs(&o, res, &given, note, tracer, rs, &err);
        if (!o.quiet) run_notes(sc, res, wall);
    }
    if (rc) fail_err(&err);
    sv_tracer_free(tracer);
    sv_recstream_free(rs);
    sv_result_free(res);
    sv_scenario_free(sc);
    return rc ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* A sweep point's result file: the run's summary JSON. */
static int write_point_json(const sv_result_t *res, const char *path, sv_error_t *err)
{
    return sv_report_json(res, 0, path, err);
}

/* sweep's outputs (sweep.csv, sweep.json, points/, --report) must not be any of its inputs. */
static int sweep_out_check(const char *path, const sv_scenario_t *sc, const char *out,
                           const char *html, sv_error_t *err)
{
    sv_paths_t *ps = paths_with_catalog();
    int rc = !ps ? sv_errorf(err, SV_ENOMEM, "out of memory") : scenario_inputs(ps, path, sc, err);
    if (!rc) rc = out_in_dir(ps, "--out", out, "sweep.csv", NULL, err);
    if (!rc) rc = out_in_dir(ps, "--out", out, "sweep.json", NULL, err);
    if (!rc) rc = out_in_dir(ps, "--out", out, "points/point-", ".json", err);
    if (!rc) rc = out_report(ps, html, err);
    sv_paths_free(ps);
    return rc;
}

/* Fills sw's vary axes: each --vary is one key or zipped keys "K1,K2=a1,b1;a2,b2"
 * (sv_vary_parse_all); without --vary, the scenario's sweep.vary. The sweep: section is checked
 * either way (a misspelled key there is an error even when --vary replaces its vary). */
static int sweep_read_vary(sv_sweep_t *sw, const char *path, const char *const *sets, int nsets,
                           const char *const *vary_args, int nvary, sv_error_t *err)
{
    static sv_sweep_cfg_t scfg;
    int rc = sv_sweep_cfg_read(path, sets, nsets, &scfg, err);
    const char *specs[SV_MAX_VARY];
    int nspecs = nvary ? nvary : scfg.nvary;
    for (int k = 0; k < nspecs; k++)
        specs[k] = nvary ? vary_args[k] : scfg.vary[k];
    for (int k = 0; k < nspecs && !rc; k++) {
        int got = 0;
        rc = sv_vary_parse_all(specs[k], &sw->vary[sw->nvary], SV_MAX_VARY - sw->nvary, &got, err);
        sw->nvary += got;
    }
    return rc;
}

static int cmd_sweep(const sv_catalog_t *cat, int argc, char **argv)
{
    const char *out = "sweep-out", *html = NULL, *load = NULL;
    const char *vary_args[SV_MAX_VARY];
    cmd_args_t a = {.jobs = 1};
    int nvary = 0, shard = 1, nshards = 1, quiet = 0, t;
    const char *v;
    for (int i = 0; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--vary", &a.missing))) {
            if (nvary == SV_MAX_VARY) return fail("error: at most 6 --vary keys%s", "");
            vary_args[nvary++] = v;
        } else if ((v = sv__opt_value(argc, argv, &i, "--out", &a.missing)))
            out = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--load", &a.missing)))
            load = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--report", &a.missing)))
            html = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--shard", &a.missing))) {
            char extra;
            if (sscanf(v, "%d/%d%c", &shard, &nshards, &extra) != 2 || nshards < 1 || shard < 1 ||
                shard > nshards)
                return fail("error: --shard: expected K/N with 1 <= K <= N, got '%s'", v);
        } else if (sv__opt_is(argv[i], "--quiet"))
            quiet = 1;
        else if ((t = take_common(argc, argv, &i, &a, "sweep")) < 0)
            return EXIT_FAILURE;
        if (a.missing) break;
    }
    if (finish_args(&a, "sweep needs a scenario file")) return EXIT_FAILURE;
    const char *path = a.path, *const *sets = a.sets;
    int nsets = a.nsets, jobs = a.jobs;
    sv_error_t err = {0};
    /* Load once: to validate, and to check the inputs against the outputs. */
    sv_scenario_t *sc = NULL;
    if (sv_scenario_load(path, sets, nsets, cat, &sc, &err)) return fail_err(&err);
    static sv_sweep_t sw;
    memset(&sw, 0, sizeof sw);
    sw.scenario = path;
    sw.write_point = write_point_json;
    sw.sets = sets;
    sw.nsets = nsets;
    sw.load = load;
    int rc = sweep_out_check(path, sc, out, html, &err);
    if (!rc) rc = sweep_read_vary(&sw, path, sets, nsets, vary_args, nvary, &err);
    sv_scenario_free(sc);
    if (!rc && sw.nvary == 0)
        rc = sv_errorf(&err, SV_EINVAL,
                       "sweep needs --vary KEY=SPEC (or sweep.vary in the scenario)");
    if (!rc) rc = sv_sweep_init(&sw, &err);
    if (!rc) rc = sv_sweep_check_keys(&sw, cat, &err);
    if (rc) {
        sv_sweep_free(&sw);
        return fail_err(&err);
    }
    sv_row_t *rows = calloc((size_t)sw.npoints, sizeof *rows);
    if (!rows) {
        sv_sweep_free(&sw);
        return fail("error: out of memory%s", "");
    }
    int root = 1;
    rc = sv_sweep_run_ranks(&sw, cat, out, jobs, shard, nshards, rows, quiet ? NULL : stderr, &root,
                            &err);
    if (!root) {
        free(rows);
        sv_sweep_free(&sw);
        return rc ? fail_err(&err) : EXIT_SUCCESS;
    }
    long n = 0;
    for (long i = 0; !rc && i < sw.npoints; i++)
        if (rows[i].ok >= 0) rows[n++] = rows[i];
    char keys[SV_MAX_VARY][128];
    for (int k = 0; k < sw.nvary; k++)
        snprintf(keys[k], sizeof keys[k], "%s", sw.vary[k].key);
    if (!rc) rc = sv_sweep_write(out, keys, sw.nvary, rows, n, load, quiet ? NULL : stdout, &err);
    if (!rc && html) {
        char title[1200];
        snprintf(title, sizeof title, "servesim sweep: %s", path);
        char *config = sv_sweep_config_json(out, rows, n);
        rc = sv_html_sweep_cfg(title, keys, sw.nvary, rows, n, load, config, html, &err);
        free(config);
    }
    long nfailed = 0;
    char first_error[sizeof rows[0].error] = "";
    for (long i = 0; !rc && i < n; i++)
        if (!rows[i].ok && nfailed++ == 0)
            snprintf(first_error, sizeof first_error, "%s", rows[i].error);
    free(rows);
    sv_sweep_free(&sw);
    if (rc) return fail_err(&err);
    /* Failed points are written (their rows say why), but the sweep did not succeed. */
    if (nfailed) {
        fprintf(stderr,
                "servesim: error: %ld of %ld points failed (rows in %s/sweep.csv); the first: "
                "%s\n",
                nfailed, n, out, first_error);
        return EXIT_FAILURE;
    }
    if (!quiet)
        fprintf(stderr, "servesim: %ld points written to %s/ (sweep.csv, sweep.json, points/)\n", n,
                out);
    return EXIT_SUCCESS;
}

static int cmd_merge(int argc, char **argv)
{
    if (argc < 2) return fail("error: merge needs OUT and at least one shard directory%s", "");
    sv_error_t err = {0};
    sv_paths_t *ps = sv_paths_new();
    int rc = ps ? 0 : sv_errorf(&err, SV_ENOMEM, "out of memory");
    for (int d = 1; !rc && d < argc; d++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/sweep.csv", argv[d]);
        if (sv_paths_input(ps, p, "a shard's sweep.csv"))
            rc = sv_errorf(&err, SV_ENOMEM, "out of memory");
    }
    if (!rc) rc = out_in_dir(ps, "merge OUT", argv[0], "sweep.csv", NULL, &err);
    if (!rc) rc = out_in_dir(ps, "merge OUT", argv[0], "sweep.json", NULL, &err);
    sv_paths_free(ps);
    if (rc) return fail_err(&err);
    if (sv_sweep_merge(argv[0], (const char *const *)argv + 1, argc - 1, NULL, stdout, &err))
        return fail_err(&err);
    return EXIT_SUCCESS;
}

static int cmd_plan(const sv_catalog_t *cat, int argc, char **argv)
{
    const char *out = NULL, *html = NULL;
    cmd_args_t a = {.jobs = 1};
    int t;
    const char *v;
    for (int i = 0; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--out", &a.missing)))
            out = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--report", &a.missing)))
            html = v;
        else if ((t = take_common(argc, argv, &i, &a, "plan")) < 0)
            return EXIT_FAILURE;
        if (a.missing) break;
    }
    if (finish_args(&a, "plan needs a scenario file with a plan: map")) return EXIT_FAILURE;
    const char *path = a.path, *const *sets = a.sets;
    int nsets = a.nsets, jobs = a.jobs;
    sv_error_t err = {0};
    sv_scenario_t *sc = NULL;
    static sv_plan_cfg_t cfg;
    if (sv_scenario_load(path, sets, nsets, cat, &sc, &err)) return fail_err(&err);
    if (sv_plan_cfg_read(path, sets, nsets, sc, cat, &cfg, &err)) {
        sv_scenario_free(sc);
        return fail_err(&err);
    }
    sv_paths_t *ps = paths_with_catalog();
    int bad =
        !ps ? sv_errorf(&err, SV_ENOMEM, "out of memory") : scenario_inputs(ps, path, sc, &err);
    if (!bad && out) bad = out_in_dir(ps, "--out", out, "plan.csv", NULL, &err);
    if (!bad && out) bad = out_in_dir(ps, "--out", out, "plan.json", NULL, &err);
    if (!bad) bad = out_report(ps, html, &err);
    sv_paths_free(ps);
    if (bad) {
        sv_scenario_free(sc);
        return fail_err(&err);
    }
    double t0 = wall_seconds();
    sv_plan_row_t *rows = NULL;
    int n = 0;
    int rc = sv_plan_run(sc, &cfg, cat, jobs, &rows, &n, stderr, &err);
    if (!rc) rc = sv_plan_write(sc, &cfg, rows, n, out, stdout, &err);
    if (!rc && html) rc = sv_html_plan(sc, &cfg, rows, n, html, &err);
    int nok = 0;
    for (int i = 0; !rc && i < n; i++)
        nok += rows[i].ok != 0;
    if (rc)
        fail_err(&err);
    else if (nok == 0) {
        /* Nothing could run: the table says why per row; the command failed. */
        fprintf(stderr, "servesim: error: none of the %d configurations could run; the first: %s\n",
                n, n ? rows[0].error : "none");
        rc = 1;
    } else {
        long probes = 0;
        for (int i = 0; i < n; i++)
            probes += rows[i].probes;
        fprintf(stderr, "servesim: %d configurations, %ld simulations in %.1f s wall\n", n, probes,
                wall_seconds() - t0);
    }
    free(rows);
    sv_scenario_free(sc);
    return rc ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int servesim_main(int argc, char **argv);

/* What went to stdout must have arrived: a full disk or a closed pipe is an error, once. */
static int finish_stdout(int rc)
{
    int bad = fflush(stdout) != 0;
    if (ferror(stdout)) bad = 1;
    if (bad && rc == EXIT_SUCCESS) {
        fprintf(stderr, "servesim: error: stdout: write error\n");
        rc = EXIT_FAILURE;
    }
    return rc;
}

int main(int argc, char **argv)
{
#ifdef SERVESIM_HAVE_MPI
    MPI_Init(&argc, &argv);
    int rc = finish_stdout(servesim_main(argc, argv));
    MPI_Finalize();
    return rc;
#else
    return finish_stdout(servesim_main(argc, argv));
#endif
}

static int cmd_validate(const sv_catalog_t *cat, int argc, char **argv)
{
    const char *data = sv_validation_default_path(), *family = NULL, *bounds = NULL, *v;
    int missing = 0, markdown = 0, band_table = 0;
    double tolerance = NAN, band_tolerance = NAN;
    for (int i = 0; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--data", &missing)))
            data = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--family", &missing)))
            family = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--bounds", &missing)))
            bounds = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--coverage-tolerance", &missing))) {
            char *end;
            tolerance = strtod(v, &end);
            if (*end || end == v || !(tolerance >= 0 && tolerance <= 100))
                return fail("error: --coverage-tolerance: expected points between 0 and 100, "
                            "got '%s'",
                            v);
        } else if ((v = sv__opt_value(argc, argv, &i, "--band-tolerance", &missing))) {
            char *end;
            band_tolerance = strtod(v, &end);
            if (*end || end == v || !(band_tolerance >= 0 && band_tolerance <= 100))
                return fail("error: --band-tolerance: expected points between 0 and 100, "
                            "got '%s'",
                            v);
        } else if (sv__opt_is(argv[i], "--markdown"))
            markdown = 1;
        else if (sv__opt_is(argv[i], "--band-table"))
            band_table = 1;
        else if (!missing)
            return sv__unknown_option("validate", argv[i]);
        if (missing) return fail("error: %s needs a value (see servesim --help)", missing_opt);
    }
    if (family && (markdown || band_table || !isnan(tolerance) || !isnan(band_tolerance)))
        return fail("error: validate --family: the bands need every family; drop --family or "
                    "%s",
                    markdown            ? "--markdown"
                    : band_table        ? "--band-table"
                    : !isnan(tolerance) ? "--coverage-tolerance"
                                        : "--band-tolerance");
    sv_error_t err = {0};
    sv_validation_t *val = NULL;
    double *lofo = NULL;
    sv_band_evidence_t ev;
    int rc = EXIT_SUCCESS;
    if (sv_validation_load(data, &val, &err) || sv_validation_run(val, cat, family, &err)) {
        sv_validation_free(val);
        return fail_err(&err);
    }
    if (!family) {
        if (!(lofo = malloc((size_t)val->nrows * sizeof *lofo))) {
            sv_validation_free(val);
            return fail("error: validate: out of memory%s", "");
        }
        if (sv_confidence_lofo(val, cat, lofo, &err) ||
            sv_confidence_derive(val, lofo, cat, &ev, NULL, &err)) {
            free(lofo);
            sv_validation_free(val);
            return fail_err(&err);
        }
    }
    if (band_table) {
        const char *base = strrchr(data, '/');
        sv_confidence_band_table(&ev, base ? base + 1 : data, stdout);
        free(lofo);
        sv_validation_free(val);
        return EXIT_SUCCESS;
    }
    if (markdown) {
        if (sv_confidence_markdown(val, lofo, cat, stdout, &err)) rc = fail_err(&err);
    } else {
        sv_validation_print(val, stdout);
        if (lofo) {
            sv_validation_print_mape(val, lofo,
                                     "MAPE % per family and kind, each family left out of every "
                                     "fit (leave-one-family-out)",
                                     stdout);
            sv_confidence_derive(val, lofo, cat, &ev, stdout, &err);
        }
    }
    if (!isnan(tolerance)) {
        int off = sv_confidence_check(&ev, tolerance, stdout);
        if (off) {
            fprintf(stderr,
                    "servesim: error: %d error band(s) cover their left-out families more than %g "
                    "points from %.0f%%\n",
                    off, tolerance, sv_band_coverage_pct);
            rc = EXIT_FAILURE;
        }
    }
    if (!isnan(band_tolerance)) {
        int off = sv_confidence_check_derived(&ev, band_tolerance, stdout);
        if (off) {
            fprintf(stderr,
                    "servesim: error: %d printed error band(s) more than %g points from what the "
                    "residuals of %s give: run tools/band-table\n",
                    off, band_tolerance, data);
            rc = EXIT_FAILURE;
        }
    }
    if (bounds) {
        fputc('\n', stdout);
        int over = sv_validation_check(val, bounds, stdout, &err);
        if (over < 0)
            rc = fail_err(&err);
        else if (over > 0) {
            fprintf(stderr, "servesim: error: %d MAPE bound(s) of %s exceeded\n", over, bounds);
            rc = EXIT_FAILURE;
        }
    }
    free(lofo);
    sv_validation_free(val);
    return rc;
}

/* calibrate's --out is never one of its tables or a catalog file (the catalog it read). */
static int calibrate_out_check(const char *out, const char *const *files, int nfiles,
                               const char *ar, const char *sr, sv_error_t *err)
{
    sv_paths_t *ps = paths_with_catalog();
    int bad = !ps;
    for (int k = 0; !bad && k < nfiles; k++)
        bad = sv_paths_input(ps, files[k], "a table being fitted");
    if (!bad && ar) bad = sv_paths_input(ps, ar, "the --allreduce table");
    if (!bad && sr) bad = sv_paths_input(ps, sr, "the --send-recv table");
    int rc = bad ? sv_errorf(err, SV_ENOMEM, "out of memory") : out_file(ps, "--out", out, err);
    sv_paths_free(ps);
    return rc;
}

/* What `servesim calibrate MODE` was asked for. */
typedef struct calib_args {
    const char *mode, *gpu_name, *out, *name, *ar, *sr, *rows, *base_name, *fit_keys, *family,
        *data;
    const char *files[64];
    int nfiles;
    const char *sets[64]; /* result: --set overrides of the scenario */
    int nsets;
    double noise_rel;
    int check; /* kernels: the GPU's own values against the tables, nothing fitted */
    sv_fit_opts_t o;
} calib_args_t;

/* Reads calibrate's options and table paths into c; 0, or the exit code after printing why. */
static int calib_parse(int argc, char **argv, calib_args_t *c)
{
    const char *v;
    int missing = 0;
    for (int i = 1; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--gpu", &missing)))
            c->gpu_name = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--out", &missing)))
            c->out = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--name", &missing)))
            c->name = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--allreduce", &missing)))
            c->ar = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--send-recv", &missing)))
            c->sr = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--rows", &missing)))
            c->rows = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--base", &missing)))
            c->base_name = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--fit", &missing)))
            c->fit_keys = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--family", &missing)))
            c->family = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--data", &missing)))
            c->data = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--set", &missing))) {
            if (c->nsets == 64) return fail("error: too many --set options (at most 64)%s", "");
            c->sets[c->nsets++] = v;
        } else if (sv__opt_is(argv[i], "--check")) {
            c->check = 1;
        } else if ((v = sv__opt_value(argc, argv, &i, "--noise", &missing))) {
            if (sv_parse_double(v, &c->noise_rel) || c->noise_rel < 0 || c->noise_rel > 0.5)
                return fail("error: --noise: expected a number in [0, 0.5], got '%s'", v);
        } else if ((v = sv__opt_value(argc, argv, &i, "--max-iter", &missing))) {
            long n;
            if (sv_parse_long(v, &n) || n < 1 || n > 100000)
                return fail("error: --max-iter: expected a whole number in [1, 100000], got '%s'",
                            v);
            c->o.max_iter = (int)n;
        } else if (missing) {
            break;
        } else if (argv[i][0] == '-') {
            return sv__unknown_option("calibrate", argv[i]);
        } else {
            if (c->nfiles == 64) return fail("error: calibrate takes at most 64 tables%s", "");
            c->files[c->nfiles++] = argv[i];
        }
        if (missing) break;
    }
    if (missing) return fail("error: %s needs a value (see servesim --help)", missing_opt);
    return 0;
}

/* Splits --fit's comma list into keys (pointing into kb, 512 bytes); 0, or the exit code. */
static int calib_fit_keys(const char *fit_keys, char *kb, const char **keys, int *nk)
{
    *nk = 0;
    snprintf(kb, 512, "%s", fit_keys);
    for (char *t = strtok(kb, ","); t; t = strtok(NULL, ",")) {
        if (*nk == SV_FIT_MAX_PARAMS)
            return fail("error: --fit: at most 8 keys, got '%s'", fit_keys);
        keys[(*nk)++] = t;
    }
    return 0;
}

/* calibrate synthetic: fits tables drawn from known parameters and says if they come back. */
static int calib_synthetic(const calib_args_t *c, const sv_gpu_t *gpu, sv_error_t *err)
{
    /* Known parameters: the A100 fit's order of magnitude. */
    const double g4[4] = {0.72, 96.0, 0.84, 6.0}, s3[3] = {0.78, 0.45, 3.5};
    /* a fresh file of our own (mkstemp creates it exclusively, never through a link) */
    char path[512];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/servesim-synthetic-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return fail("error: calibrate synthetic: cannot create a temporary file in %s",
                    dir && *dir ? dir : "/tmp");
    close(fd);
    sv_fit_t g, s;
    const char *p1 = path;
    int rc = sv_calibrate_synthetic_mlp(path, gpu, g4, s3, c->noise_rel, 42, err);
    if (!rc) rc = sv_calibrate_kernels(&p1, 1, gpu, &c->o, &g, &s, err);
    remove(path);
    if (rc) return fail_err(err);
    printf("synthetic kernel tables for %s, %.1f%% multiplicative noise: true -> fitted\n",
           gpu->name, c->noise_rel * 100);
    int bad = 0;
    for (int k = 0; k < 7; k++) {
        const sv_fit_t *f = k < 4 ? &g : &s;
        double truth = k < 4 ? g4[k] : s3[k - 4], got = f->value[k < 4 ? k : k - 4];
        double e = 100.0 * (got / truth - 1.0);
        bad |= fabs(e) > 2.0;
        printf("  %-24s %10.4g -> %10.4g  (%+.2f%%)\n", f->names[k < 4 ? k : k - 4], truth, got, e);
    }
    printf("%s\n", bad ? "NOT recovered within 2%" : "all recovered within 2%");
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* calibrate kernels: fits Vidur kernel (and collective) tables; writes a GPU file with --out. */
static int calib_kernels(const calib_args_t *c, const sv_gpu_t *gpu, sv_error_t *err)
{
    if (c->nfiles < 1 && !c->ar && !c->sr)
        return fail("error: calibrate kernels needs an mlp.csv, --allreduce or --send-recv%s", "");
    sv_fit_t fits[4];
    const sv_fit_t *fp[4];
    int nf = 0;
    /* Collective tables alone fit the collectives only (a GPU with NCCL profiles and no
     * kernel profiles, as Vidur's H100 DGX). */
    if (c->check && (c->nfiles < 1 || c->out || c->ar || c->sr))
        return fail("error: calibrate kernels --check scores mlp.csv tables only, fitting "
                    "nothing: give one and drop --out, --allreduce and --send-recv%s",
                    "");
    if (c->nfiles > 0) {
        if (c->check
                ? sv_calibrate_kernels_check(c->files, c->nfiles, gpu, &fits[0], &fits[1], err)
                : sv_calibrate_kernels(c->files, c->nfiles, gpu, &c->o, &fits[0], &fits[1], err))
            return fail_err(err);
        nf = 2;
    }
    if (c->ar && sv_calibrate_allreduce(c->ar, gpu, &c->o, &fits[nf++], err)) return fail_err(err);
    if (c->sr && sv_calibrate_sendrecv(c->sr, gpu, &c->o, &fits[nf++], err)) return fail_err(err);
    printf("servesim calibrate kernels: %s, %d kernel table(s)\n", gpu->name, c->nfiles);
    for (int i = 0; i < nf; i++) {
        sv_fit_print(&fits[i], stdout);
        fp[i] = &fits[i];
    }
    if (c->out) {
        char nm[SV_NAME_MAX], src[SV_TEXT_MAX];
        snprintf(nm, sizeof nm, "%s-calibrated", gpu->name);
        snprintf(src, sizeof src, "%d Vidur mlp.csv table(s)%s%s", c->nfiles,
                 c->ar ? " and all_reduce.csv" : "", c->sr ? " and send_recv.csv" : "");
        if (sv_calibrate_write_gpu(c->out, gpu, c->name ? c->name : nm, fp, nf, src, err))
            return fail_err(err);
        printf("wrote %s\n", c->out);
    }
    return EXIT_SUCCESS;
}

/* calibrate runs: fits engine settings to a validation family's measured runs. */
static int calib_runs(const calib_args_t *c, const sv_catalog_t *cat, sv_error_t *err)
{
    if (!c->family || !c->gpu_name || !c->fit_keys)
        return fail("error: calibrate runs needs --family, --gpu and --fit%s", "");
    char kb[512];
    const char *keys[SV_FIT_MAX_PARAMS];
    int nk, rc = calib_fit_keys(c->fit_keys, kb, keys, &nk);
    if (rc) return rc;
    sv_validation_t *val = NULL;
    sv_fit_t fit;
    if (sv_validation_load(c->data, &val, err) || sv_validation_run(val, cat, c->family, err)) {
        sv_validation_free(val);
        return fail_err(err);
    }
    /* The MAPE before the fit of each kind the family has (NAN for the others). */
    double before[SV_VK_COUNT];
    for (int k = 0; k < SV_VK_COUNT; k++)
        before[k] = sv_validation_mape(val, c->family, k);
    if (sv_calibrate_runs(val, c->family, cat, c->gpu_name, keys, nk, &c->o, &fit, err)) {
        sv_validation_free(val);
        return fail_err(err);
    }
    printf("servesim calibrate runs: %s on family %s (%ld rows of %s)\n", c->gpu_name, c->family,
           fit.n, c->data);
    for (int k = 0; k < SV_VK_COUNT; k++)
        if (!isnan(before[k])) printf("  %s MAPE before %.1f%%\n", sv_vkind_name(k), before[k]);
    sv_fit_print(&fit, stdout);
    sv_validation_free(val);
    return EXIT_SUCCESS;
}

/* calibrate engine: fits a base engine profile's settings to one perf_model.csv. */
static int calib_engine(const calib_args_t *c, const sv_catalog_t *cat, sv_error_t *err)
{
    if (c->nfiles != 1) return fail("error: calibrate engine takes one perf_model.csv%s", "");
    if (!c->rows || !c->base_name || !c->fit_keys)
        return fail("error: calibrate engine needs --rows, --base and --fit%s", "");
    const sv_engine_profile_t *base;
    if (sv_catalog_engine(cat, c->base_name, &base, err)) return fail_err(err);
    char kb[512];
    const char *keys[SV_FIT_MAX_PARAMS];
    int nk, rc = calib_fit_keys(c->fit_keys, kb, keys, &nk);
    if (rc) return rc;
    sv_perf_settings_t probe = sv_perf_settings_default();
    for (int i = 0; i < nk; i++)
        if (sv_perf_settings_set(&probe, keys[i], "1", err) == SV_ENOKEY) return fail_err(err);
    sv_fit_t fit;
    if (sv_calibrate_engine(c->files[0], c->rows, cat, base, keys, nk, &c->o, &fit, err))
        return fail_err(err);
    printf("servesim calibrate engine: profile %s on %s (%s)\n", base->name, c->files[0], c->rows);
    sv_fit_print(&fit, stdout);
    if (c->out) {
        char src[SV_TEXT_MAX];
        snprintf(src, sizeof src, "servesim calibrate engine on %s rows %s", c->files[0], c->rows);
        if (sv_calibrate_write_engine(c->out, base, c->name ? c->name : base->name, &fit, src, err))
            return fail_err(err);
        printf("wrote %s\n", c->out);
    }
    return EXIT_SUCCESS;
}

/* calibrate result: fits settings to one real result replayed on a scenario. */
static int calib_result(const calib_args_t *c, const sv_catalog_t *cat, sv_error_t *err)
{
    if (c->nfiles != 2 || !c->fit_keys)
        return fail("error: calibrate result needs RESULT.json SCENARIO.yaml and --fit%s", "");
    char kb[512];
    const char *keys[SV_FIT_MAX_PARAMS];
    int nk, rc = calib_fit_keys(c->fit_keys, kb, keys, &nk);
    if (rc) return rc;
    sv_bench_t *b = NULL;
    if (sv_bench_load(c->files[0], &b, err)) return fail_err(err);
    sv_result_fit_t fit;
    rc = sv_calibrate_result(c->files[1], c->sets, c->nsets, cat, b, keys, nk, &c->o, &fit, err);
    if (rc) {
        sv_bench_free(b);
        return fail_err(err);
    }
    printf("servesim calibrate result: %s replayed on %s (%ld requests)\n", c->files[0],
           c->files[1], fit.replayed);
    sv_result_fit_print(&fit, stdout);
    sv_bench_free(b);
    return EXIT_SUCCESS;
}

/* An unknown calibrate mode: the error, with the nearest mode when one is close. */
static int calib_bad_mode(const char *mode)
{
    static const char *const modes[] = {"kernels", "engine", "runs", "result", "synthetic"};
    const char *near = sv_suggest(mode, modes, 5);
    if (near)
        fprintf(stderr,
                "servesim: error: calibrate: expected kernels, engine, runs, result or synthetic, "
                "got '%s' (did you mean '%s'?)\n",
                mode, near);
    else
        fprintf(stderr,
                "servesim: error: calibrate: expected kernels, engine, runs, result or synthetic, "
                "got '%s'\n",
                mode);
    return EXIT_FAILURE;
}

/* calibrate kernels | engine | runs | result | synthetic (see the usage text). */
static int cmd_calibrate(const sv_catalog_t *cat, int argc, char **argv)
{
    if (argc < 1)
        return fail("error: calibrate needs kernels, engine, runs, result or synthetic%s", "");
    calib_args_t c = {.mode = argv[0],
                      .data = sv_validation_default_path(),
                      .noise_rel = 0.01,
                      .o = {.max_iter = 200}};
    int rc = calib_parse(argc, argv, &c);
    if (rc) return rc;
    const char *mode = c.mode;
    sv_error_t err = {0};
    if (c.out && calibrate_out_check(c.out, c.files, c.nfiles, c.ar, c.sr, &err))
        return fail_err(&err);
    const sv_gpu_t *gpu = NULL;
    if (strcmp(mode, "kernels") == 0 || strcmp(mode, "synthetic") == 0) {
        if (!c.gpu_name) return fail("error: calibrate %s needs --gpu NAME", mode);
        if (sv_catalog_gpu(cat, c.gpu_name, &gpu, &err)) return fail_err(&err);
    }
    if (strcmp(mode, "synthetic") == 0) return calib_synthetic(&c, gpu, &err);
    if (strcmp(mode, "kernels") == 0) return calib_kernels(&c, gpu, &err);
    if (strcmp(mode, "runs") == 0) return calib_runs(&c, cat, &err);
    if (strcmp(mode, "engine") == 0) return calib_engine(&c, cat, &err);
    if (strcmp(mode, "result") == 0) return calib_result(&c, cat, &err);
    return calib_bad_mode(mode);
}

/* servesim lab [--port N] [--bind ADDR]: serve the lab until Ctrl-C (docs/lab.md). */
static int cmd_lab(const sv_catalog_t *cat, int argc, char **argv)
{
    sv_lab_t lab = {.cat = cat, .dir = sv_lab_default_dir(), .bind = "127.0.0.1", .port = 8080};
    const char *v;
    int missing = 0;
    for (int i = 0; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--port", &missing))) {
            long p;
            if (sv_parse_long(v, &p) || p < 0 || p > 65535)
                return fail("error: --port: expected a whole number in [0, 65535], got '%s'", v);
            lab.port = (int)p;
        } else if ((v = sv__opt_value(argc, argv, &i, "--bind", &missing))) {
            lab.bind = v;
        } else if (missing) {
            break;
        } else {
            return sv__unknown_option("lab", argv[i]);
        }
    }
    if (missing) return fail("error: %s needs a value (see servesim lab --help)", missing_opt);
    lab.log = stderr;
    sv_error_t err = {0};
    if (sv_lab_serve(&lab, &err)) return fail_err(&err);
    return EXIT_SUCCESS;
}

static int cmd_serve(const sv_catalog_t *cat, int argc, char **argv)
{
    sv_serve_opts_t o;
    sv_serve_defaults(&o);
    cmd_args_t a = {.jobs = 1};
    const char *v;
    for (int i = 0; i < argc; i++) {
        long n;
        double x;
        if ((v = sv__opt_value(argc, argv, &i, "--port", &a.missing))) {
            if (sv_parse_long(v, &n) || n < 0 || n > 65535)
                return fail("error: --port: expected a whole number in [0, 65535], got '%s'", v);
            o.port = (int)n;
        } else if ((v = sv__opt_value(argc, argv, &i, "--host", &a.missing))) {
            o.host = v;
        } else if ((v = sv__opt_value(argc, argv, &i, "--speed", &a.missing))) {
            if (sv_parse_double(v, &x) || !(x > 0) || x > 1e6)
                return fail("error: --speed: expected a number in (0, 1e6], got '%s'", v);
            o.speed = x;
        } else if ((v = sv__opt_value(argc, argv, &i, "--max-connections", &a.missing))) {
            if (sv_parse_long(v, &n) || n < 1 || n > 16384)
                return fail("error: --max-connections: expected a whole number in [1, 16384], "
                            "got '%s'",
                            v);
            o.max_conns = o.per_client = (unsigned)n;
        } else if ((v = sv__opt_value(argc, argv, &i, "--timeout", &a.missing))) {
            if (sv_parse_long(v, &n) || n < 1 || n > 3600)
                return fail("error: --timeout: expected a whole number of seconds in [1, 3600], "
                            "got '%s'",
                            v);
            o.deadline_s = (unsigned)n;
            o.idle_s = (unsigned)(3 * n);
        } else if ((v = sv__opt_value(argc, argv, &i, "--json", &a.missing))) {
            o.json = v;
        } else if (strcmp(argv[i], "--background") == 0) {
            o.background = 1;
        } else if (strcmp(argv[i], "--log") == 0) {
            o.log = stderr;
        } else if ((v = sv__opt_value(argc, argv, &i, "--set", &a.missing))) {
            if (a.nsets == 256) return fail("error: too many --set options (at most 256)%s", "");
            a.sets[a.nsets++] = v;
        } else if (!a.missing && take_common(argc, argv, &i, &a, "serve") < 0) {
            return EXIT_FAILURE; /* the scenario path, or an unknown option */
        }
        if (a.missing) break;
    }
    if (finish_args(&a, "serve needs a scenario file (servesim serve SCENARIO.yaml)"))
        return EXIT_FAILURE;
    sv_error_t err;
    sv_scenario_t *sc = NULL;
    if (sv_scenario_load(a.path, a.sets, a.nsets, cat, &sc, &err)) return fail_err(&err);
    if (o.json) {
        sv_paths_t *ps = paths_with_catalog();
        int bad = !ps ? sv_errorf(&err, SV_ENOMEM, "out of memory")
                      : scenario_inputs(ps, a.path, sc, &err);
        if (!bad) bad = sv_paths_output(ps, o.json, NULL, "--json", &err);
        sv_paths_free(ps);
        if (bad) {
            sv_scenario_free(sc);
            return fail_err(&err);
        }
    }
    o.sc = sc;
    int rc = sv_serve(&o, &err);
    sv_scenario_free(sc);
    if (rc) return fail_err(&err);
    return EXIT_SUCCESS;
}

static int servesim_main(int argc, char **argv)
{
    const char *catalog_dir = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        int missing = 0;
        const char *v;
        if (sv__opt_is(argv[i], "--help") || strcmp(argv[i], "-h") == 0) {
            sv__help_overview(stdout);
            return EXIT_SUCCESS;
        } else if (sv__opt_is(argv[i], "--version")) {
            printf("servesim %s\n", SERVESIM_VERSION);
            return EXIT_SUCCESS;
        } else if ((v = sv__opt_value(argc, argv, &i, "--catalog", &missing))) {
            catalog_dir = v;
        } else if (missing) {
            return fail("error: --catalog needs a directory (--catalog DIR)%s", "");
        } else {
            return sv__unknown_option(NULL, argv[i]);
        }
    }
    if (i >= argc) {
        sv__help_overview(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[i++];
    if (strcmp(cmd, "help") == 0) return sv__help_main(argc - i, argv + i);
    const sv__cmd_help_t *help = sv__help_command(cmd);
    if (!help) return sv__unknown_command(cmd);
    sv__help_parsing(cmd);
    /* CMD --help (or -h) anywhere among its arguments: the command's help, nothing run. */
    if (sv__help_asked(argc - i, argv + i)) {
        sv__help_print(help, stdout);
        return EXIT_SUCCESS;
    }
    if (strcmp(cmd, "merge") == 0) return cmd_merge(argc - i, argv + i);
    if (strcmp(cmd, "compare") == 0 || strcmp(cmd, "replay") == 0)
        return sv__cli_compare_replay(cmd, catalog_dir, argc - i, argv + i);
    sv_catalog_t *cat = NULL;
    sv_error_t err = {0};
    catalog_dir_used = catalog_dir ? catalog_dir : sv_catalog_default_dir();
    if (sv_catalog_load(catalog_dir_used, &cat, &err)) return fail_err(&err);
    int rc = strcmp(cmd, "list") == 0        ? cmd_list(cat, argc - i, argv + i)
             : strcmp(cmd, "explain") == 0   ? cmd_explain(cat, argc - i, argv + i)
             : strcmp(cmd, "sweep") == 0     ? cmd_sweep(cat, argc - i, argv + i)
             : strcmp(cmd, "plan") == 0      ? cmd_plan(cat, argc - i, argv + i)
             : strcmp(cmd, "validate") == 0  ? cmd_validate(cat, argc - i, argv + i)
             : strcmp(cmd, "calibrate") == 0 ? cmd_calibrate(cat, argc - i, argv + i)
             : strcmp(cmd, "lab") == 0       ? cmd_lab(cat, argc - i, argv + i)
             : strcmp(cmd, "serve") == 0     ? cmd_serve(cat, argc - i, argv + i)
                                             : cmd_run(cat, argc - i, argv + i);
    sv_catalog_free(cat);
    return rc;
}
