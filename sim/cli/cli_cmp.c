/*
 * The command lines of `servesim compare` and `servesim replay` (see cli_cmp_int.h).
 *   servesim compare REAL.json SIM.json [--tolerance PCT] [--report FILE.html]
 *   servesim replay REAL.json SCENARIO.yaml [--set k=v ...] [--json FILE] [--detailed]
 *                   [--requests-csv FILE] [--timeseries-csv FILE] [--report FILE.html]
 *                   [--prometheus FILE] [--quiet] [--check]
 * Every error is one line on stderr and a non-zero exit status; compare also exits 1 when
 * a metric is past --tolerance.
 */
#include "cli/cli_cmp_int.h"
#include "cli/cli_int.h"
#include "cli/help_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/cost/catalog.h"
#include "servesim/studies/compare.h"
#include "servesim/report/html.h"
#include "servesim/base/paths.h"
#include "servesim/studies/replay.h"
#include "servesim/report/report.h"
#include "servesim/report/convention.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "servesim/base/yaml.h"

static int fail_msg(const char *cmd, const char *msg)
{
    fprintf(stderr, "servesim: error: %s: %s\n", cmd, msg);
    return EXIT_FAILURE;
}

static int fail_err(const sv_error_t *err)
{
    fprintf(stderr, "servesim: error: %s\n", err->msg);
    return EXIT_FAILURE;
}

static int fail_missing(void)
{
    fprintf(stderr, "servesim: error: %s needs a value (see servesim --help)\n", sv__opt_missing());
    return EXIT_FAILURE;
}

/* Outputs never overwrite inputs (paths.h): check out (NULL: not asked for) as opt. With
 * charts, the report's PATH-*.svg files are checked too. */
static int out_check(sv_paths_t *ps, const char *opt, const char *out, int charts, sv_error_t *err)
{
    if (!out || strcmp(out, "-") == 0) return 0;
    int rc = sv_paths_output(ps, out, NULL, opt, err);
    if (rc || !charts) return rc;
    char base[1100];
    size_t l = strlen(out);
    int html = l > 5 && strcmp(out + l - 5, ".html") == 0;
    snprintf(base, sizeof base, "%.*s-", (int)(html ? l - 5 : l), out);
    return sv_paths_output(ps, base, ".svg", opt, err);
}

/* A positional argument: 1 taken, -1 one too many (printed). */
static int positional(const char *cmd, char **argv, int i, const char **pos, int *npos)
{
    if (argv[i][0] == '-' && argv[i][1] != '\0') {
        sv__unknown_option(cmd, argv[i]);
        return -1;
    }
    if (*npos == 2) {
        fprintf(stderr, "servesim: error: %s takes two files; '%s' is one too many\n", cmd,
                argv[i]);
        return -1;
    }
    pos[(*npos)++] = argv[i];
    return 1;
}

static int cmd_compare(int argc, char **argv)
{
    const char *pos[2] = {0}, *html = NULL, *v;
    int npos = 0, missing = 0;
    double tol = NAN;
    for (int i = 0; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--tolerance", &missing))) {
            char *end;
            tol = strtod(v, &end);
            if (end == v || *end || !(tol >= 0) || isinf(tol)) {
                fprintf(stderr,
                        "servesim: error: compare: --tolerance: expected a percentage >= 0, got "
                        "'%s'\n",
                        v);
                return EXIT_FAILURE;
            }
            tol /= 100.0;
        } else if ((v = sv__opt_value(argc, argv, &i, "--report", &missing))) {
            html = v;
        } else if (!missing && positional("compare", argv, i, pos, &npos) < 0) {
            return EXIT_FAILURE;
        }
        if (missing) return fail_missing();
    }
    if (npos != 2) return fail_msg("compare", "needs two result files: REAL.json SIM.json");
    sv_error_t err;
    sv_bench_t *real = NULL, *sim = NULL;
    sv_compare_t *c = NULL;
    int rc = 0;
    if (html) {
        sv_paths_t *ps = sv_paths_new();
        rc = !ps || sv_paths_input(ps, pos[0], "the REAL result") ||
                     sv_paths_input(ps, pos[1], "the SIM result")
                 ? sv_errorf(&err, SV_ENOMEM, "out of memory")
                 : out_check(ps, "--report", html, 0, &err);
        sv_paths_free(ps);
        if (rc) return fail_err(&err);
    }
    rc = sv_bench_load(pos[0], &real, &err);
    if (!rc) rc = sv_bench_load(pos[1], &sim, &err);
    if (!rc) rc = sv_compare_new(real, sim, &c, &err);
    if (!rc && html) rc = sv_compare_html(c, tol, html, &err);
    int status = EXIT_SUCCESS;
    if (rc) {
        status = fail_err(&err);
    } else {
        sv_compare_print(c, tol, stdout);
        if (sv_compare_past(c, tol) > 0) status = EXIT_FAILURE;
    }
    sv_compare_free(c);
    sv_bench_free(real);
    sv_bench_free(sim);
    return status;
}

static int cmd_replay(const char *catalog_dir, int argc, char **argv)
{
    const char *pos[2] = {0}, *json = NULL, *req_csv = NULL, *ts_csv = NULL, *html = NULL,
               *prom = NULL, *v;
    const char *sets[256];
    int npos = 0, nsets = 0, missing = 0, detailed = 0, quiet = 0, check = 0;
    sv_convention_t conv = SV_CONV_VLLM;
    for (int i = 0; i < argc; i++) {
        if ((v = sv__opt_value(argc, argv, &i, "--set", &missing))) {
            if (nsets == 256) return fail_msg("replay", "too many --set options");
            sets[nsets++] = v;
        } else if ((v = sv__opt_value(argc, argv, &i, "--json", &missing)))
            json = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--requests-csv", &missing)))
            req_csv = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--timeseries-csv", &missing)))
            ts_csv = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--report", &missing)))
            html = v;
        else if ((v = sv__opt_value(argc, argv, &i, "--prometheus", &missing)))
            prom = v;
        else if (sv__opt_is(argv[i], "--detailed"))
            detailed = 1;
        else if (sv__opt_is(argv[i], "--quiet"))
            quiet = 1;
        else if (sv__opt_is(argv[i], "--check"))
            check = 1;
        else if ((v = sv__opt_value(argc, argv, &i, "--convention", &missing))) {
            sv_error_t cerr;
            if (sv_convention_parse(v, &conv, &cerr)) return fail_err(&cerr);
        } else if (!missing && positional("replay", argv, i, pos, &npos) < 0)
            return EXIT_FAILURE;
        if (missing) return fail_missing();
    }
    if (npos != 2)
        return fail_msg("replay", "needs a result file and a scenario: REAL.json SCENARIO.yaml");
    sv_error_t err;
    sv_bench_t *b = NULL;
    if (sv_bench_load(pos[0], &b, &err)) return fail_err(&err);
    /* Check the requests before loading the catalog and the scenario. */
    sv_trace_t *probe = NULL;
    long skipped = 0;
    if (sv_replay_trace(b, &probe, &skipped, &err)) {
        sv_bench_free(b);
        return fail_err(&err);
    }
    sv_trace_free(probe);
    sv_catalog_t *cat = NULL;
    sv_scenario_t *sc = NULL;
    sv_result_t *res = NULL;
    int rc = sv_catalog_load(catalog_dir ? catalog_dir : sv_catalog_default_dir(), &cat, &err);
    if (!rc) rc = sv_scenario_load(pos[1], sets, nsets, cat, &sc, &err);
    if (!rc) {
        sv_paths_t *ps = sv_paths_new();
        const char *cdir = catalog_dir ? catalog_dir : sv_catalog_default_dir();
        if (!ps || sv_paths_input_dir(ps, cdir, ".yaml", "a catalog file") ||
            sv_paths_input(ps, pos[0], "the result replayed") ||
            sv_paths_input(ps, pos[1], "the scenario"))
            rc = sv_errorf(&err, SV_ENOMEM, "out of memory");
        for (int k = 0; !rc && k < sc->ninputs; k++)
            if (sv_paths_input(ps, sc->inputs[k], "a file the scenario reads"))
                rc = sv_errorf(&err, SV_ENOMEM, "out of memory");
        if (!rc) rc = out_check(ps, "--json", json, 0, &err);
        if (!rc) rc = out_check(ps, "--requests-csv", req_csv, 0, &err);
        if (!rc) rc = out_check(ps, "--timeseries-csv", ts_csv, 0, &err);
        if (!rc) rc = out_check(ps, "--prometheus", prom, 0, &err);
        if (!rc) rc = out_check(ps, "--report", html, 1, &err);
        sv_paths_free(ps);
    }
    if (!rc) rc = sv_replay_apply(sc, b, &skipped, &err);
    if (!rc) {
        sc->check = check;
        rc = sv_sim_run(sc, &res, &err);
    }
    if (!rc && !quiet) sv_report_summary_as(res, conv, stdout);
    if (!rc && json) rc = sv_report_json_as(res, conv, detailed, json, &err);
    if (!rc && req_csv) rc = sv_report_requests_csv(res, req_csv, &err);
    if (!rc && ts_csv) rc = sv_report_timeseries_csv(res, ts_csv, &err);
    if (!rc && html) rc = sv_html_run(res, html, &err);
    if (!rc && prom) rc = sv_report_prometheus(res, prom, &err);
    int status = rc ? fail_err(&err) : EXIT_SUCCESS;
    if (!rc && !quiet) {
        fprintf(stderr, "servesim: replayed %zu requests of %s", res->pool.n, b->path);
        if (skipped) fprintf(stderr, " (left out %ld that failed there)", skipped);
        if (b->max_concurrency)
            fprintf(stderr, ", max_concurrency %ld\n", b->max_concurrency);
        else
            fprintf(stderr, ", no max_concurrency\n");
    }
    sv_result_free(res);
    sv_scenario_free(sc);
    sv_catalog_free(cat);
    sv_bench_free(b);
    return status;
}

int sv__cli_compare_replay(const char *cmd, const char *catalog_dir, int argc, char **argv)
{
    return strcmp(cmd, "compare") == 0 ? cmd_compare(argc, argv)
                                       : cmd_replay(catalog_dir, argc, argv);
}
