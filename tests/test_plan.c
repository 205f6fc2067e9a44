/*
 * Tests of sweeps and capacity planning: vary specs, knee detection on a synthetic curve,
 * the capacity bisection against M/D/1 theory (an analytic SLO boundary), shards that merge
 * into exactly the unsharded sweep, and a small plan.
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <unistd.h>

#include "servesim/studies/plan.h"
#include "servesim/studies/runprogress.h"
#include "servesim/cluster/sim.h"
#include "servesim/studies/sweep.h"
#include "servesim/report/report.h"
#include "testsim.h"

static int point_json(const struct sv_result *res, const char *path, sv_error_t *err)
{
    return sv_report_json(res, 0, path, err);
}

static sv_catalog_t *cat;

static void setup(void)
{
    cat = tu_catalog();
}

static void teardown(void)
{
    sv_catalog_free(cat);
}

/* A scenario file that stays for the test's duration (a sweep reads it per point). */
static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/sv_plan_XXXXXX");
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

START_TEST(test_vary_specs)
{
    sv_vary_t v;
    sv_error_t err;
    ck_assert_int_eq(sv_vary_parse("workload.rate=2:10:2", &v, &err), 0);
    ck_assert_str_eq(v.key, "workload.rate");
    ck_assert_int_eq(v.n, 5);
    ck_assert_str_eq(v.vals[0], "2");
    ck_assert_str_eq(v.vals[4], "10");
    sv_vary_free(&v);
    ck_assert_int_eq(sv_vary_parse("hardware.replicas=1:64:x2", &v, &err), 0);
    ck_assert_int_eq(v.n, 7);
    ck_assert_str_eq(v.vals[6], "64");
    sv_vary_free(&v);
    ck_assert_int_eq(sv_vary_parse("workload.rate=0.5:1.5:0.25", &v, &err), 0);
    ck_assert_int_eq(v.n, 5);
    ck_assert_str_eq(v.vals[1], "0.75");
    sv_vary_free(&v);
    ck_assert_int_eq(
        sv_vary_parse("workload.input={dist: fixed, value: 5},128,{dist: uniform, min: 1, max: 9}",
                      &v, &err),
        0);
    ck_assert_int_eq(v.n, 3);
    ck_assert_str_eq(v.vals[0], "{dist: fixed, value: 5}");
    ck_assert_str_eq(v.vals[1], "128");
    sv_vary_free(&v);
    /* NAME=VALUE: set as VALUE, shown as NAME; YAML values and numbers carry no label */
    ck_assert_int_eq(
        sv_vary_parse("workload.input=short={dist: fixed, value: 5},long_1=2048,{a: b=c},-1", &v,
                      &err),
        0);
    ck_assert_int_eq(v.n, 4);
    ck_assert_str_eq(v.labels[0], "short");
    ck_assert_str_eq(v.vals[0], "{dist: fixed, value: 5}");
    ck_assert_str_eq(v.labels[1], "long_1");
    ck_assert_str_eq(v.vals[1], "2048");
    ck_assert_ptr_null(v.labels[2]);
    ck_assert_str_eq(v.vals[2], "{a: b=c}");
    ck_assert_ptr_null(v.labels[3]);
    sv_vary_free(&v);
    sv_vary_t z[2];
    int nk;
    ck_assert_int_eq(
        sv_vary_parse_all("pools.0.replicas,pools.1.replicas=p1d3=1,3;2,2", z, 2, &nk, &err), 0);
    ck_assert_int_eq(nk, 2);
    ck_assert_str_eq(z[0].vals[0], "1");
    ck_assert_str_eq(z[0].labels[0], "p1d3");
    ck_assert_str_eq(z[1].labels[0], "p1d3"); /* the tuple's label names both values */
    ck_assert_str_eq(z[1].vals[0], "3");
    ck_assert_ptr_null(z[0].labels[1]);
    ck_assert_ptr_null(z[1].labels[1]);
    sv_vary_free(&z[0]);
    sv_vary_free(&z[1]);
    ck_assert_int_eq(sv_vary_parse("workload.rate", &v, &err), SV_EINVAL);
    sv_vary_free(&v);
    ck_assert_int_eq(sv_vary_parse("workload.rate=10:2:2", &v, &err), SV_EINVAL);
    sv_vary_free(&v);
    ck_assert_int_eq(sv_vary_parse("workload.rate=0:10:x2", &v, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "start:stop:xF") != NULL, "%s", err.msg);
    sv_vary_free(&v);
}
END_TEST

START_TEST(test_knee_synthetic)
{
    /* Attainment holds (>= 0.9) up to index 2, fails at 3; the recovery at 4 does not count.
     * Goodput peaks at index 3. */
    double a[] = {1.0, 0.99, 0.95, 0.89, 0.95, 0.5};
    double g[] = {2.0, 4.0, 5.5, 6.0, 5.0, 1.0};
    int knee, best;
    sv_knee(a, g, 6, 0.9, &knee, &best);
    ck_assert_int_eq(knee, 2);
    ck_assert_int_eq(best, 3);
    double a2[] = {0.8, 0.95};
    sv_knee(a2, g, 2, 0.9, &knee, &best);
    ck_assert_int_eq(knee, -1); /* fails from the first point */
    double a3[] = {0.9, 0.9, 0.9};
    sv_knee(a3, g, 3, 0.9, &knee, &best);
    ck_assert_int_eq(knee, 2); /* inclusive */
    double a4[] = {1.0, NAN, 1.0};
    sv_knee(a4, g, 3, 0.9, &knee, &best);
    ck_assert_int_eq(knee, 0); /* a failed point ends the curve */
}
END_TEST

/* M/D/1: P(W <= D) = (1 - rho) e^rho (Erlang); the load where it equals 0.9. */
static double md1_f(double rho, void *p)
{
    (void)p;
    return (1.0 - rho) * exp(rho) - 0.9;
}

START_TEST(test_capacity_md1)
{
    gsl_set_error_handler_off();
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    gsl_function F = {.function = md1_f, .params = NULL};
    ck_assert_int_eq(gsl_root_fsolver_set(s, &F, 0.01, 0.99), GSL_SUCCESS);
    double rho = 0;
    for (int i = 0; i < 100; i++) {
        gsl_root_fsolver_iterate(s);
        rho = gsl_root_fsolver_root(s);
        if (gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s), 0,
                                   1e-12) == GSL_SUCCESS)
            break;
    }
    gsl_root_fsolver_free(s);
    ck_assert(fabs(rho - 0.3915) < 0.001);

    /* One sequence at a time, fixed lengths: service D is a request alone. TTFT is the wait
     * plus the prefill, so TTFT <= prefill + D is exactly W <= D. Service starts the
     * instant the server is free: no API-server path, no async scheduling's lag. */
    const char *base = "seed: 21\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "engine: {max_num_seqs: 1, async_scheduling: false, api_server_ms: 0}\n"
                       "workload: {num_requests: 1, rate: 1, rescale_arrivals: false,"
                       " input: 128, output: 2}\n";
    sv_error_t err;
    sv_scenario_t *sc;
    ck_assert_int_eq(tu_load_yaml(cat, base, NULL, 0, &sc, &err), 0);
    sv_result_t *res;
    ck_assert_int_eq(sv_sim_run(sc, &res, &err), 0);
    double D = res->summary.e2el.mean / 1e3, P = res->summary.ttft.mean / 1e3;
    sv_result_free(res);
    sv_scenario_free(sc);
    char slo[128];
    snprintf(slo, sizeof slo, "slo={ttft_ms: %.17g, attainment: 0.9}", (P + D) * 1e3);
    const char *sets[] = {slo};
    ck_assert_int_eq(tu_load_yaml(cat, base, sets, 1, &sc, &err), 0);
    double rate;
    char binding[SV_BINDING_MAX];
    long probes;
    ck_assert_msg(sv_capacity(sc, 200000, 0.005, &rate, binding, &probes, &err) == 0, "%s",
                  err.msg);
    tu_assert_rel(rate, rho / D, 0.02);
    ck_assert_str_eq(binding, "ttft");
    ck_assert(probes > 5);
    sv_scenario_free(sc);
}
END_TEST

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

START_TEST(test_shards_merge_exactly)
{
    const char *scn =
        "name: shard\nseed: 4\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
        "workload: {num_requests: 150, rate: 4, input: {dist: lognormal, mean: 512, std: 256},"
        " output: {dist: lognormal, mean: 128, std: 64}}\n"
        "slo: {ttft_ms: 300, tpot_ms: 20}\n";
    char path[64];
    snprintf(path, sizeof path, "%s", write_tmp(scn));
    static sv_sweep_t sw;
    memset(&sw, 0, sizeof sw);
    sw.scenario = path;
    sw.write_point = point_json;
    sv_error_t err;
    ck_assert_int_eq(sv_vary_parse("workload.rate=4:40:12", &sw.vary[0], &err), 0);
    ck_assert_int_eq(sv_vary_parse("engine.max_num_seqs=8,64", &sw.vary[1], &err), 0);
    sw.nvary = 2;
    ck_assert_int_eq(sv_sweep_init(&sw, &err), 0);
    ck_assert_int_eq(sw.npoints, 8);
    char keys[SV_MAX_VARY][128];
    snprintf(keys[0], 128, "%s", sw.vary[0].key);
    snprintf(keys[1], 128, "%s", sw.vary[1].key);
    char dir[] = "/tmp/sv_sweep_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char full[128], s1[128], s2[128], merged[128];
    snprintf(full, sizeof full, "%s/full", dir);
    snprintf(s1, sizeof s1, "%s/s1", dir);
    snprintf(s2, sizeof s2, "%s/s2", dir);
    snprintf(merged, sizeof merged, "%s/merged", dir);
    sv_row_t rows[8], part[8];
    ck_assert_int_eq(sv_sweep_run(&sw, cat, full, 2, 1, 1, rows, NULL, &err), 0);
    ck_assert_int_eq(sv_sweep_write(full, keys, 2, rows, 8, NULL, NULL, &err), 0);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(rows[i].ok, 1);
    /* the knee rises with more sequences per step */
    ck_assert(rows[0].m[SV_COL_ATTAIN] >= 0.9);
    for (int k = 1; k <= 2; k++) {
        const char *d = k == 1 ? s1 : s2;
        ck_assert_int_eq(sv_sweep_run(&sw, cat, d, 1, k, 2, part, NULL, &err), 0);
        sv_row_t mine[8];
        long n = 0;
        for (int i = 0; i < 8; i++)
            if (part[i].ok >= 0) mine[n++] = part[i];
        ck_assert_int_eq(n, 4);
        ck_assert_int_eq(sv_sweep_write(d, keys, 2, mine, n, NULL, NULL, &err), 0);
    }
    const char *dirs[] = {s2, s1};
    ck_assert_int_eq(sv_sweep_merge(merged, dirs, 2, NULL, NULL, &err), 0);
    const char *files[] = {"sweep.csv", "sweep.json", "points/point-000000.json",
                           "points/point-000007.json"};
    for (int i = 0; i < 4; i++) {
        char a[256], b[256];
        snprintf(a, sizeof a, "%s/%s", full, files[i]);
        snprintf(b, sizeof b, "%s/%s", merged, files[i]);
        ck_assert_msg(same_file(a, b), "%s differs after merging", files[i]);
    }
    /* sweep.json carries the first point's configuration block: its seed, model, and the
     * swept keys at that point's values (rate 4, max_num_seqs 8) */
    char sj[256];
    snprintf(sj, sizeof sj, "%s/sweep.json", full);
    FILE *jf = fopen(sj, "r");
    ck_assert_ptr_nonnull(jf);
    static char jtext[1 << 16];
    jtext[fread(jtext, 1, sizeof jtext - 1, jf)] = '\0';
    fclose(jf);
    ck_assert_msg(strstr(jtext, "\"x_axis\": \"load\", \"config\": {\"scenario\":\"shard\","),
                  "%.400s", jtext);
    ck_assert(strstr(jtext, "\"seed\":4,"));
    ck_assert(strstr(jtext, "\"max_num_seqs\":8,"));
    const char *twice[] = {s1, s1};
    ck_assert_int_eq(sv_sweep_merge(merged, twice, 2, NULL, NULL, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "appears in two shards") != NULL, "%s", err.msg);
    unlink(path);
}
END_TEST

/* Issue 8 item 7: merging sorts with qsort (it was an insertion sort: two shards of a
 * 100k-point sweep took minutes). Shards written in descending order merge into index
 * order, values intact. */
START_TEST(test_merge_many_rows)
{
    enum { N = 20000 };
    sv_row_t *rows = calloc(N / 2, sizeof *rows);
    char(*text)[16] = calloc(N / 2, sizeof *text); /* the rows' values */
    ck_assert_ptr_nonnull(rows);
    ck_assert_ptr_nonnull(text);
    char keys[SV_MAX_VARY][128] = {"workload.rate"};
    char dir[] = "/tmp/sv_merge_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char shard[2][128], merged[128];
    sv_error_t err;
    for (int s = 0; s < 2; s++) {
        snprintf(shard[s], sizeof shard[s], "%s/s%d", dir, s + 1);
        for (int k = 0; k < N / 2; k++) {
            sv_row_t *r = &rows[k];
            r->index = N - 1 - 2 * k - s; /* descending: N-1-s, N-3-s, ... */
            r->ok = 1;
            snprintf(text[k], sizeof text[k], "%ld", r->index + 1);
            r->vals[0] = text[k];
            for (int c = 0; c < SV_NCOLS; c++)
                r->m[c] = (double)r->index;
        }
        ck_assert_int_eq(sv_sweep_write(shard[s], keys, 1, rows, N / 2, NULL, NULL, &err), 0);
    }
    free(rows);
    free(text);
    snprintf(merged, sizeof merged, "%s/merged", dir);
    const char *dirs[] = {shard[0], shard[1]};
    ck_assert_msg(sv_sweep_merge(merged, dirs, 2, NULL, NULL, &err) == 0, "%s", err.msg);
    char path[256], line[4096];
    snprintf(path, sizeof path, "%s/sweep.csv", merged);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* header */
    long want = 0;
    while (fgets(line, sizeof line, f)) {
        long idx, val;
        double completed;
        ck_assert_int_eq(sscanf(line, "%ld,%ld,%lf", &idx, &val, &completed), 3);
        ck_assert_int_eq(idx, want);
        ck_assert_int_eq(val, want + 1);
        ck_assert(completed == (double)want);
        want++;
    }
    fclose(f);
    ck_assert_int_eq(want, N);
    char rm[160];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    ck_assert_int_eq(system(rm), 0);
}
END_TEST

/* Load scenario text and its plan: section, from one temporary file. */
static int load_plan(const char *yaml, const char **sets, int nsets, sv_scenario_t **sc,
                     sv_plan_cfg_t *cfg, sv_error_t *err)
{
    char path[] = "/tmp/sv_plan_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    ck_assert(write(fd, yaml, strlen(yaml)) == (ssize_t)strlen(yaml));
    close(fd);
    *sc = NULL;
    int rc = sv_scenario_load(path, sets, nsets, cat, sc, err);
    if (!rc) rc = sv_plan_cfg_read(path, sets, nsets, *sc, cat, cfg, err);
    unlink(path);
    return rc;
}

START_TEST(test_small_plan)
{
    const char *scn =
        "name: p\nseed: 6\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
        "workload: {num_requests: 500, rate: 5, input: {dist: lognormal, mean: 512, std: 256},"
        " output: {dist: lognormal, mean: 128, std: 64}}\n"
        "slo: {ttft_ms: 400, tpot_ms: 30}\n"
        "plan: {target_rate: 30, gpus: [h100-sxm, l4], tp: [1, 3],"
        " serving: [colocated, disaggregated], prefill_decode: ['1:1'], probe_requests: 500}\n";
    sv_error_t err;
    sv_scenario_t *sc;
    static sv_plan_cfg_t cfg;
    ck_assert_int_eq(load_plan(scn, NULL, 0, &sc, &cfg, &err), 0);
    sv_plan_row_t *rows;
    int n;
    ck_assert_int_eq(sv_plan_run(sc, &cfg, cat, 2, &rows, &n, NULL, &err), 0);
    ck_assert_int_eq(n, 8); /* 2 GPUs x 2 TPs x (colocated + 1 ratio) */
    ck_assert_int_eq(sv_plan_write(sc, &cfg, rows, n, NULL, NULL, &err), 0);
    /* Ranked by cost; the feasible first; TP 3 never divides 32 heads. */
    int feasible = 0;
    for (int i = 0; i < n; i++) {
        if (rows[i].tp == 3) {
            ck_assert_int_eq(rows[i].ok, 0);
            ck_assert_msg(strstr(rows[i].error, "does not divide") != NULL, "%s", rows[i].error);
        }
        if (rows[i].ok) {
            feasible++;
            ck_assert(i == 0 || rows[i - 1].cost_hour <= rows[i].cost_hour);
            ck_assert(rows[i].attain_at_target >= 0.9);
            ck_assert(rows[i].units * rows[i].unit_capacity >= 30.0 * 0.98 ||
                      rows[i].attain_at_target >= 0.9);
            ck_assert_int_eq(rows[i].gpus, rows[i].units * rows[i].unit_gpus);
            tu_assert_rel(rows[i].goodput_per_gpu, rows[i].unit_capacity / rows[i].unit_gpus,
                          1e-12);
        }
    }
    ck_assert(feasible >= 2);
    ck_assert_str_eq(rows[0].gpu, "h100-sxm");
    free(rows);
    sv_scenario_free(sc);
}
END_TEST

/* Issue 13: plan on the arrivals of a real trace (3,000 rows of the Azure conversation
 * trace, tests/data/azure_conv_sample.csv) rescaled to the target mean rate needs at
 * least as many GPUs as plan on Poisson arrivals at that rate with the same lengths; a
 * per-GPU price override prices the plan; p90 latencies are printed per candidate. */
START_TEST(test_plan_trace_vs_poisson)
{
    const char *trace = tu_data("azure_conv_sample.csv");
    char poisson[2048], replay[2048];
    const char *common = "seed: 4\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                         "slo: {ttft_ms: 300, tpot_ms: 30, attainment: 0.9}\n"
                         "plan: {target_rate: 60, gpus: [h100-sxm], probe_requests: 3000,"
                         " price_per_hour_usd: {h100-sxm: 1.25}}\n";
    snprintf(poisson, sizeof poisson,
             "name: poisson\n%sworkload: {num_requests: 3000, rate: 60, input: {dist: empirical, "
             "file: %s, column: ContextTokens}, output: {dist: empirical, file: %s, column: "
             "GeneratedTokens}}\n",
             common, trace, trace);
    snprintf(replay, sizeof replay, "name: trace\n%sworkload: {trace: {file: %s}}\n", common,
             trace);
    int gpus[2];
    for (int k = 0; k < 2; k++) {
        sv_error_t err;
        sv_scenario_t *sc;
        static sv_plan_cfg_t cfg;
        ck_assert_msg(load_plan(k ? replay : poisson, NULL, 0, &sc, &cfg, &err) == 0, "%s",
                      err.msg);
        sv_plan_row_t *rows;
        int n;
        ck_assert_int_eq(sv_plan_run(sc, &cfg, cat, 1, &rows, &n, NULL, &err), 0);
        ck_assert_int_eq(n, 1);
        ck_assert_msg(rows[0].ok, "%s", rows[0].error);
        gpus[k] = rows[0].gpus;
        tu_assert_rel(rows[0].cost_hour, 1.25 * rows[0].gpus, 1e-12);
        ck_assert(rows[0].ttft_p90 > 0 && rows[0].ttft_p90 <= 300);
        ck_assert(rows[0].tpot_p90 > 0 && rows[0].tpot_p90 <= 30);
        free(rows);
        sv_scenario_free(sc);
    }
    ck_assert_msg(gpus[1] >= gpus[0], "trace %d GPUs, Poisson %d", gpus[1], gpus[0]);
}
END_TEST

/* plan.size_for: peak sizes for a rate profile's peak (x peak_factor). */
START_TEST(test_plan_profile_peak)
{
    const char *scn = "name: pk\nseed: 2\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "workload: {duration_s: 100, rate_profile: {kind: steps, points: [[0, 5], "
                      "[50, 40]], spikes: [{at_s: 60, duration_s: 5, factor: 1.5}]}, input: 512, "
                      "output: 128}\n"
                      "slo: {ttft_ms: 300, tpot_ms: 30}\n"
                      "plan: {size_for: peak, gpus: [h100-sxm], probe_requests: 500}\n";
    sv_error_t err;
    sv_scenario_t *sc;
    static sv_plan_cfg_t cfg;
    ck_assert_msg(load_plan(scn, NULL, 0, &sc, &cfg, &err) == 0, "%s", err.msg);
    tu_assert_rel(cfg.target_rate, 60.0, 1e-12); /* 40 x the spike's 1.5 */
    sv_scenario_free(sc);
    const char *set[] = {"plan.size_for=peak", "plan.target_rate=", "slo.ttft_ms=300"};
    ck_assert_int_eq(load_plan("name: q\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                               "workload: {num_requests: 10, rate: 2, input: 10, output: 10}\n"
                               "plan: {target_rate: 3, gpus: [h100-sxm]}\n",
                               set, 3, &sc, &cfg, &err),
                     SV_EINVAL);
    sv_scenario_free(sc);
    ck_assert_msg(strstr(err.msg, "plan.size_for: peak needs a workload.rate_profile"), "%s",
                  err.msg);
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Read a whole small file into a static buffer. */
static const char *slurp(const char *path)
{
    static char buf[65536];
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/*
 * A contract of percentile budgets only (p99 TTFT <= 2000 ms, p99 TPOT <= 60 ms) is judged
 * as written: each budget's value at the target is the p99 of the cluster's own run (numpy's
 * linear percentile over completed requests, recomputed here from a separate run of the same
 * cluster, same seed), the attainment is the share of requests within both bounds, the
 * goodput those requests per second, and every output names the budgets, not a p90.
 */
START_TEST(test_plan_p99_contract)
{
    const char *scn =
        "name: p99\nseed: 5\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
        "engine: {max_num_seqs: 256, max_num_batched_tokens: 8192}\n"
        "workload: {num_requests: 400, rate: 20, input: {dist: lognormal, mean: 1024, std: 768,"
        " min: 16, max: 8192}, output: {dist: lognormal, mean: 256, std: 192, min: 8, max: 2048}}\n"
        "slo: {ttft_ms: {p99: 2000}, tpot_ms: {p99: 60}}\n"
        "plan: {target_rate: 30, gpus: [h100-sxm], probe_requests: 400}\n";
    sv_error_t err;
    sv_scenario_t *sc;
    static sv_plan_cfg_t cfg;
    ck_assert_msg(load_plan(scn, NULL, 0, &sc, &cfg, &err) == 0, "%s", err.msg);
    sv_plan_row_t *rows;
    int n;
    ck_assert_int_eq(sv_plan_run(sc, &cfg, cat, 1, &rows, &n, NULL, &err), 0);
    ck_assert_int_eq(n, 1);
    const sv_plan_row_t *r = &rows[0];
    ck_assert_msg(r->ok, "%s", r->error);
    ck_assert_int_eq(r->contract_met, 1);
    ck_assert_int_eq(r->nbudgets, 2);
    ck_assert_str_eq(r->budget[0].name, "ttft p99");
    ck_assert_str_eq(r->budget[1].name, "tpot p99");
    tu_assert_rel(r->budget[0].budget_ms, 2000.0, 0);
    tu_assert_rel(r->budget[1].budget_ms, 60.0, 0);
    /* The same cluster run alone: units replicas behind least-outstanding at the target. */
    char sets[4][64];
    snprintf(sets[0], sizeof sets[0], "hardware.replicas=%d", r->units);
    snprintf(sets[1], sizeof sets[1], "workload.num_requests=%d", 400 * r->units);
    snprintf(sets[2], sizeof sets[2], "workload.rate=30");
    snprintf(sets[3], sizeof sets[3], "router=least-outstanding");
    const char *sp[4] = {sets[0], sets[1], sets[2], sets[3]};
    sv_scenario_t *sc2;
    sv_result_t *res = tu_run_yaml(cat, scn, sp, 4, &sc2);
    size_t m = 0, within = 0, total = res->pool.n;
    double *ttft = malloc(total * sizeof *ttft), *tpot = malloc(total * sizeof *tpot);
    for (size_t i = 0; i < total; i++) {
        const sv_req_t *q = &res->pool.r[i];
        if (q->state != SV_RQ_DONE) continue;
        ttft[m] = sv_req_ttft(q) * 1e3;
        tpot[m] = sv_req_tpot(q) * 1e3;
        within += ttft[m] <= 2000.0 && tpot[m] <= 60.0;
        m++;
    }
    qsort(ttft, m, sizeof *ttft, cmp_double);
    qsort(tpot, m, sizeof *tpot, cmp_double);
    tu_assert_rel(r->budget[0].value_ms, sv_percentile_sorted(ttft, m, 99), 1e-12);
    tu_assert_rel(r->budget[1].value_ms, sv_percentile_sorted(tpot, m, 99), 1e-12);
    tu_assert_rel(r->attain_at_target, (double)within / (double)total, 1e-12);
    ck_assert(r->attain_at_target >= 0.99); /* p99 within the bound: at least 99% inside */
    tu_assert_rel(r->goodput_at_target, (double)within / res->summary.duration, 1e-12);
    free(ttft);
    free(tpot);
    tu_done(sc2, res);
    /* Every output speaks of the budgets. */
    char dir[] = "/tmp/sv_plan_out_XXXXXX", path[128];
    ck_assert(mkdtemp(dir) != NULL);
    char *text = NULL;
    size_t len = 0;
    FILE *t = open_memstream(&text, &len);
    ck_assert_int_eq(sv_plan_write(sc, &cfg, rows, n, dir, t, &err), 0);
    fclose(t);
    ck_assert_msg(strstr(text, "with TTFT p99 <= 2000 ms, TPOT p99 <= 60 ms\n"), "%s", text);
    ck_assert_msg(strstr(text, "in bounds %  ttft p99  tpot p99"), "%s", text);
    ck_assert_msg(!strstr(text, "TTFT p90"), "%s", text);
    free(text);
    snprintf(path, sizeof path, "%s/plan.csv", dir);
    const char *csv = slurp(path);
    ck_assert(
        strstr(csv, ",attainment_at_target,goodput_at_target,attainment_basis,contract_met,"));
    ck_assert(strstr(csv, ",ttft_p99_ms,ttft_p99_budget_ms,tpot_p99_ms,tpot_p99_budget_ms,"));
    ck_assert(strstr(csv, ",budget_bounds,1,"));
    ck_assert(!strstr(csv, "nan,budget_bounds")); /* the goodput is a number */
    unlink(path);
    snprintf(path, sizeof path, "%s/plan.json", dir);
    const char *js = slurp(path);
    ck_assert(strstr(js, "\"text\": \"TTFT p99 <= 2000 ms, TPOT p99 <= 60 ms\""));
    ck_assert(strstr(js, "{\"name\": \"ttft p99\", \"metric\": \"ttft\", \"percentile\": 99.0, "
                         "\"budget_ms\": 2000.0}"));
    ck_assert(!strstr(js, "ttft_slo_percentile_ms"));
    unlink(path);
    rmdir(dir);
    free(rows);
    sv_scenario_free(sc);
}
END_TEST

/* A per-phase plan from a disaggregated scenario: prefill on H100 TP1, decode on H100 or
 * A40 at TP 1 or 2 (plan.decode), beside the colocated H100. Every split row prices each
 * phase's GPUs at its own catalog price (H100 $3.50, A40 $0.40 per GPU-hour); the best
 * split, rebuilt by hand as pools and run alone, meets the contract for exactly the share
 * the plan reports; every output sets the best colocated row beside the best split. */
START_TEST(test_plan_per_phase)
{
    const char *scn =
        "name: split\nseed: 7\nmodel: llama-3.1-8b\n"
        "pools:\n  - {name: prefill, role: prefill, gpu: h100-sxm}\n"
        "  - {name: decode, role: decode, gpu: h100-sxm}\n"
        "disaggregation: {kv_link: {kind: infiniband}}\n"
        "workload: {num_requests: 400, rate: 5, input: {dist: lognormal, mean: 512, std: 256},"
        " output: {dist: lognormal, mean: 128, std: 64}}\n"
        "slo: {ttft_ms: 400, tpot_ms: 40}\n"
        "plan: {target_rate: 20, gpus: [h100-sxm], serving: [colocated, disaggregated],"
        " prefill: {gpus: [h100-sxm]}, decode: {gpus: [h100-sxm, a40], tp: [1, 2]},"
        " prefill_decode: ['1:1'], probe_requests: 400}\n";
    sv_error_t err;
    sv_scenario_t *sc;
    static sv_plan_cfg_t cfg;
    ck_assert_msg(load_plan(scn, NULL, 0, &sc, &cfg, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(cfg.split, 1);
    sv_plan_row_t *rows;
    int n;
    ck_assert_msg(sv_plan_run(sc, &cfg, cat, 2, &rows, &n, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(n, 5); /* 1 colocated + 1 prefill placement x 2 GPUs x 2 TPs x 1 ratio */
    int seen = 0, ncol = 0;
    for (int i = 0; i < n; i++) {
        const sv_plan_row_t *r = &rows[i];
        if (!r->disagg) {
            ncol++;
            ck_assert_str_eq(r->dgpu, r->gpu);
            continue;
        }
        ck_assert_str_eq(r->gpu, "h100-sxm");
        ck_assert_int_eq(r->tp, 1);
        int a40 = strcmp(r->dgpu, "a40") == 0;
        ck_assert(a40 || strcmp(r->dgpu, "h100-sxm") == 0);
        seen |= 1 << (2 * a40 + r->dtp - 1);
        ck_assert_int_eq(r->unit_gpus, 1 + r->dtp);
        tu_assert_rel(r->dprice, a40 ? 0.40 : 3.50, 0);
        if (r->ok)
            tu_assert_rel(r->cost_hour, r->units * (3.50 + r->dtp * (a40 ? 0.40 : 3.50)), 1e-12);
    }
    ck_assert_int_eq(ncol, 1);
    ck_assert_int_eq(seen, 15); /* every decode placement once */
    ck_assert_int_eq(sv_plan_write(sc, &cfg, rows, n, NULL, NULL, &err), 0);
    sv_plan_facts_t fa;
    sv_plan_facts(sc, &cfg, rows, n, &fa);
    int bc = -1, bd = -1;
    for (int i = 0; i < n && rows[i].ok; i++) {
        if (!rows[i].disagg && bc < 0) bc = i;
        if (rows[i].disagg && bd < 0) bd = i;
    }
    ck_assert(bd >= 0);
    ck_assert_int_eq(fa.best_colocated, bc);
    ck_assert_int_eq(fa.best_disaggregated, bd);
    ck_assert_msg(strstr(fa.kv_link, "the scenario's infiniband link"), "%s", fa.kv_link);
    char want[96];
    snprintf(want, sizeof want, "best disaggregated: rank %d h100-sxm TP1 1:1 ", bd + 1);
    ck_assert_msg(strstr(fa.versus, want), "%s", fa.versus);
    /* The best split rebuilt by hand: its pools behind least-outstanding at the target. */
    const sv_plan_row_t *r = &rows[bd];
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "name: split\nseed: 7\nmodel: llama-3.1-8b\nrouter: least-outstanding\n"
             "pools:\n  - {name: prefill, role: prefill, gpu: h100-sxm, replicas: %d}\n"
             "  - {name: decode, role: decode, gpu: %s, tp: %d, replicas: %d}\n"
             "disaggregation: {kv_link: {kind: infiniband}}\n"
             "workload: {num_requests: %d, rate: 20, input: {dist: lognormal, mean: 512, std: "
             "256}, output: {dist: lognormal, mean: 128, std: 64}}\n"
             "slo: {ttft_ms: 400, tpot_ms: 40}\n",
             r->p * r->units, r->dgpu, r->dtp, r->d * r->units, 400 * r->units);
    sv_scenario_t *sc2;
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc2);
    size_t within = 0, total = res->pool.n;
    for (size_t i = 0; i < total; i++) {
        const sv_req_t *q = &res->pool.r[i];
        within +=
            q->state == SV_RQ_DONE && sv_req_ttft(q) * 1e3 <= 400.0 && sv_req_tpot(q) * 1e3 <= 40.0;
    }
    tu_assert_rel(r->attain_at_target, (double)within / (double)total, 1e-12);
    ck_assert(r->attain_at_target >= 0.9);
    tu_done(sc2, res);
    /* plan.csv and plan.json carry the placement and the two bests. */
    char dir[] = "/tmp/sv_plan_split_XXXXXX", path[128];
    ck_assert(mkdtemp(dir) != NULL);
    ck_assert_int_eq(sv_plan_write(sc, &cfg, rows, n, dir, NULL, &err), 0);
    snprintf(path, sizeof path, "%s/plan.csv", dir);
    const char *csv = slurp(path);
    ck_assert(
        strstr(csv, "rank,gpu,tp,serving,prefill,decode,decode_gpu,decode_tp,best_of_serving,"));
    snprintf(want, sizeof want, "\n%d,h100-sxm,1,disaggregated,1,1,%s,%d,1,", bd + 1, r->dgpu,
             r->dtp);
    ck_assert_msg(strstr(csv, want), "%s", csv);
    unlink(path);
    snprintf(path, sizeof path, "%s/plan.json", dir);
    const char *js = slurp(path);
    snprintf(want, sizeof want, "\"best_disaggregated\": {\"rank\": %d,", bd + 1);
    ck_assert_msg(strstr(js, want), "%s", js);
    ck_assert(strstr(js, "\"best_colocated\": "));
    snprintf(want, sizeof want, "\"decode_gpu\": \"%s\", \"decode_tp\": %d,", r->dgpu, r->dtp);
    ck_assert(strstr(js, want));
    unlink(path);
    rmdir(dir);
    free(rows);
    sv_scenario_free(sc);
}
END_TEST

/* A long run's progress line: simulated time over the workload's length (its requests at
 * its rate), and the wall time left at the pace so far (10 s for a quarter: 30 s more). */
START_TEST(test_run_progress)
{
    sv_error_t err;
    sv_scenario_t *sc;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "workload: {num_requests: 400, rate: 4, input: 10, output: 10}\n",
                                  NULL, 0, &sc, &err),
                     0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sv_run_progress_t rp;
    sv_run_progress_start(&rp, sc, NULL, f);
    tu_assert_rel(rp.expect_s, 100.0, 0);
    rp.p.tty = 0;
    rp.t0 -= 10.0; /* as if the run had started 10 s ago */
    rp.last -= 10.0;
    sv_step_event_t ev = {.start = 25.0};
    for (int i = 0; i < 4096; i++)
        rp.hooks.step(rp.hooks.ctx, &ev);
    sv_run_progress_end(&rp);
    fclose(f);
    ck_assert_str_eq(text, "servesim run: 25 of 100 simulated s (25%), about 30 s left\n");
    free(text);
    sv_scenario_free(sc);
}
END_TEST

/* plan.layouts: every layout is searched per GPU and TP, its label in the configuration's
 * name; the empty layout is the plan without the key, row for row; a layout the model or
 * TP cannot take is listed with the reason; a bad layout key is a one-line error. */
START_TEST(test_plan_layouts)
{
    const char *scn =
        "name: ly\nseed: 3\nmodel: deepseek-r1\nhardware: {gpu: h200, tp: 8, weight_dtype: fp8}\n"
        "engine: {name: sglang, max_num_seqs: 64}\n"
        "workload: {num_requests: 200, rate: 1, input: 1024, output: 256}\n"
        "slo: {ttft_ms: 1000, tpot_ms: 25}\n"
        "plan: {target_rate: 2, gpus: [h200], tp: [8], serving: [colocated, disaggregated],"
        " prefill_decode: ['1:1'], probe_requests: 200, tolerance: 0.1}\n";
    const char *set[] = {"plan.layouts=[{}, {ep: 8, dp_attention: 8}, {ep: 7}, "
                         "{speculative: mtp}]"};
    sv_error_t err;
    sv_scenario_t *sc;
    static sv_plan_cfg_t cfg, plain;
    ck_assert_msg(load_plan(scn, set, 1, &sc, &cfg, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(cfg.nlayouts, 4);
    ck_assert_str_eq(cfg.layouts[0].name, "");
    ck_assert_str_eq(cfg.layouts[1].name, "EP8 DPA8");
    ck_assert_str_eq(cfg.layouts[2].name, "EP7");
    ck_assert_str_eq(cfg.layouts[3].name, "MTP3"); /* num_speculative_tokens' default */
    sv_plan_row_t *rows, *ref;
    int n, nref;
    ck_assert_int_eq(sv_plan_run(sc, &cfg, cat, 2, &rows, &n, NULL, &err), 0);
    ck_assert_int_eq(n, 8); /* 4 layouts x (colocated + 1:1) */
    sv_scenario_free(sc);
    ck_assert_msg(load_plan(scn, NULL, 0, &sc, &plain, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(plain.nlayouts, 1);
    ck_assert_int_eq(sv_plan_run(sc, &plain, cat, 2, &ref, &nref, NULL, &err), 0);
    ck_assert_int_eq(nref, 2);
    const char *names[8] = {
        "h200 TP8 colocated seqs 64",          "h200 TP8 1:1 P:D seqs 64",
        "h200 TP8 EP8 DPA8 colocated seqs 64", "h200 TP8 EP8 DPA8 1:1 P:D seqs 64",
        "h200 TP8 EP7 colocated seqs 64",      "h200 TP8 EP7 1:1 P:D seqs 64",
        "h200 TP8 MTP3 colocated seqs 64",     "h200 TP8 MTP3 1:1 P:D seqs 64"};
    int seen[8] = {0};
    double cap[8];
    for (int i = 0; i < n; i++) {
        char name[96];
        sv_plan_config_name(&rows[i], name, sizeof name);
        int k = 0;
        while (k < 8 && strcmp(name, names[k]) != 0)
            k++;
        ck_assert_msg(k < 8, "unexpected configuration '%s'", name);
        seen[k]++;
        cap[k] = rows[i].unit_capacity;
        ck_assert_int_eq(rows[i].layout, k / 2);
        if (k / 2 == 2) { /* EP 7 divides neither TP 8 nor the 256 experts */
            ck_assert_int_eq(rows[i].ok, 0);
            ck_assert_msg(strstr(rows[i].error, "ep=7 does not divide tp=8"), "%s", rows[i].error);
        } else
            ck_assert_msg(rows[i].ok, "%s: %s", name, rows[i].error);
    }
    for (int k = 0; k < 8; k++)
        ck_assert_int_eq(seen[k], 1);
    /* The empty layout is the plan without layouts: same capacities, same cost. */
    for (int i = 0; i < nref; i++) {
        int k = ref[i].disagg;
        ck_assert(cap[k] == ref[i].unit_capacity);
    }
    /* The other layouts reach the candidates' pools: DP attention + EP moves the colocated
     * capacity (2.59 against 2.83 req/s), MTP's drafts raise both (6.17 against 2.83
     * colocated, 20.7 against 4.76 split: TPOT binds). */
    ck_assert(cap[2] != cap[0]);
    ck_assert(cap[6] > 2 * cap[0] && cap[7] > 2 * cap[1]);
    free(rows);
    free(ref);
    sv_scenario_free(sc);
    /* A dense model takes no expert parallelism: the row says so. */
    const char *dense = "name: dn\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                        "workload: {num_requests: 100, rate: 1, input: 128, output: 16}\n"
                        "slo: {ttft_ms: 500}\n"
                        "plan: {target_rate: 1, gpus: [h100-sxm], tp: [2], layouts: [{ep: 2}], "
                        "probe_requests: 100}\n";
    ck_assert_msg(load_plan(dense, NULL, 0, &sc, &cfg, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sv_plan_run(sc, &cfg, cat, 1, &rows, &n, NULL, &err), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(rows[0].ok, 0);
    ck_assert_msg(strstr(rows[0].error, "ep=2: model 'llama-3.1-8b' has no routed experts"), "%s",
                  rows[0].error);
    free(rows);
    sv_scenario_free(sc);
    /* Bad layouts: named by their place in the list, checked as the hardware map's keys. */
    const char *bad[][2] = {
        {"plan.layouts=[{}, {ep_kernel: fast}]", "plan.layouts[1].ep_kernel: expected"},
        {"plan.layouts=[{tp: 4}]", "plan.layouts[0].tp: not a layout key"},
        {"plan.layouts=[{ep: 8}, {ep: 8}]", "plan.layouts[1]: the same layout as plan.layouts[0]"},
        {"plan.layouts=[]", "plan.layouts: give 1 to 8 values, got 0"}};
    for (int b = 0; b < 4; b++) {
        ck_assert_int_ne(load_plan(dense, bad[b], 1, &sc, &cfg, &err), 0);
        sv_scenario_free(sc);
        ck_assert_msg(strstr(err.msg, bad[b][1]) && !strchr(err.msg, '\n'), "%s", err.msg);
    }
}
END_TEST

/* plan.layouts with keys for one phase (`prefill`, `decode` maps): tried on disaggregated
 * candidates only, each pool taking the keys for both phases and then its own. The same
 * keys given to each phase are the layout that gives them to both: the same capacity. */
START_TEST(test_plan_phase_layouts)
{
    const char *scn =
        "name: ph\nseed: 3\nmodel: deepseek-r1\nhardware: {gpu: h200, tp: 8, weight_dtype: fp8}\n"
        "engine: {name: sglang, max_num_seqs: 64}\n"
        "workload: {num_requests: 200, rate: 1, input: 1024, output: 256}\n"
        "slo: {ttft_ms: 1000, tpot_ms: 25}\n"
        "plan: {target_rate: 2, gpus: [h200], tp: [8], serving: [colocated, disaggregated],"
        " prefill_decode: ['1:1'], probe_requests: 200, tolerance: 0.1}\n";
    const char *set[] = {"plan.layouts=[{speculative: mtp}, {prefill: {speculative: mtp}, "
                         "decode: {speculative: mtp}}, {decode: {speculative: mtp}}, {prefill: "
                         "{speculative: mtp}}, {}]"};
    sv_error_t err;
    sv_scenario_t *sc;
    static sv_plan_cfg_t cfg;
    sv_plan_row_t *rows;
    int n;
    ck_assert_msg(load_plan(scn, set, 1, &sc, &cfg, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(cfg.nlayouts, 5);
    const char *names[] = {"MTP3", "P MTP3 / D MTP3", "P TP / D MTP3", "P MTP3 / D TP", ""};
    for (int l = 0; l < 5; l++) {
        ck_assert_str_eq(cfg.layouts[l].name, names[l]);
        ck_assert_int_eq(cfg.layouts[l].phased, l >= 1 && l <= 3);
    }
    ck_assert_int_eq(sv_plan_run(sc, &cfg, cat, 2, &rows, &n, NULL, &err), 0);
    ck_assert_int_eq(n, 7); /* MTP3 and {} colocated and 1:1; the phased three 1:1 only */
    double cap[5] = {0};
    for (int i = 0; i < n; i++) {
        ck_assert_msg(rows[i].ok, "%s", rows[i].error);
        ck_assert(!cfg.layouts[rows[i].layout].phased || rows[i].disagg);
        if (rows[i].disagg) cap[rows[i].layout] = rows[i].unit_capacity;
    }
    /* Each phase's MTP is both phases' MTP, row for row. TPOT binds the split unit (about
     * 4.8 req/s plain): MTP's drafts on the decode pool raise it past twice that, on the
     * prefill pool alone they leave it where it was. */
    ck_assert(cap[0] > 0 && cap[1] == cap[0]);
    ck_assert_msg(cap[2] > 2.0 * cap[4], "%g %g", cap[2], cap[4]);
    ck_assert_msg(cap[3] < 1.2 * cap[4] && cap[3] > 0.8 * cap[4], "%g %g", cap[3], cap[4]);
    free(rows);
    sv_scenario_free(sc);
    const char *bad[][2] = {
        {"plan.layouts=[{prefill: {tp: 4}}]", "plan.layouts[0].prefill.tp: not a layout key"},
        {"plan.layouts=[{decode: 3}]", "plan.layouts[0].decode"},
        {"plan.layouts=[{ep: 8, decode: {dp_attention: 8}}, {prefill: {ep: 8}, decode: {ep: 8, "
         "dp_attention: 8}}]",
         "plan.layouts[1]: the same layout as plan.layouts[0]"},
        {"plan.layouts=[{prefill: {speculative: eagle, spec_acceptance: 0.7, "
         "num_speculative_tokens: 8, ep_kernel: low_latency}, decode: {speculative: eagle, "
         "num_speculative_tokens: 3, spec_acceptance: 0.7, ep_kernel: high_throughput}}]",
         "its label 'P DeepEP-LL EAGLE8 acc 0.7 / D DeepEP-HT EAGLE3 acc 0.7' is longer than 47 "
         "characters"}};
    for (int b = 0; b < 4; b++) {
        ck_assert_int_ne(load_plan(scn, bad[b], 1, &sc, &cfg, &err), 0);
        sv_scenario_free(sc);
        ck_assert_msg(strstr(err.msg, bad[b][1]) && !strchr(err.msg, '\n'), "%s", err.msg);
    }
    /* Keys for one phase only and no disaggregated candidate: nothing to try, said so. */
    const char *colo[] = {"plan.layouts=[{decode: {speculative: mtp}}]", "plan.serving=[colocated]"};
    ck_assert_msg(load_plan(scn, colo, 2, &sc, &cfg, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sv_plan_run(sc, &cfg, cat, 1, &rows, &n, NULL, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "plan: no configuration to try"), "%s", err.msg);
    sv_scenario_free(sc);
}
END_TEST

/* slo.interactivity_tok_s: X tokens/s per user is the per-request TPOT threshold 1000 / X ms;
 * with a per-request tpot_ms as well, a one-line error. */
START_TEST(test_slo_interactivity)
{
    const char *scn = "name: ia\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "workload: {num_requests: 10, rate: 1, input: 16, output: 16}\n"
                      "slo: {ttft_ms: 500, interactivity_tok_s: 40}\n"
                      "plan: {target_rate: 1, gpus: [h100-sxm]}\n";
    sv_error_t err;
    sv_scenario_t *sc;
    static sv_plan_cfg_t cfg;
    ck_assert_msg(load_plan(scn, NULL, 0, &sc, &cfg, &err) == 0, "%s", err.msg);
    tu_assert_rel(sc->metrics.slo_tpot_ms, 25.0, 1e-15);
    tu_assert_rel(sc->metrics.slo_ttft_ms, 500.0, 0);
    sv_scenario_free(sc);
    const char *set[] = {"slo.interactivity_tok_s=8", "slo.tpot_ms={p99: 200}"};
    ck_assert_msg(load_plan(scn, set, 2, &sc, &cfg, &err) == 0, "%s", err.msg);
    tu_assert_rel(sc->metrics.slo_tpot_ms, 125.0, 1e-15); /* budgets keep their own */
    ck_assert_int_eq(sc->metrics.nbudgets, 1);
    sv_scenario_free(sc);
    const char *both[] = {"slo.tpot_ms=30"};
    ck_assert_int_eq(load_plan(scn, both, 1, &sc, &cfg, &err), SV_EINVAL);
    sv_scenario_free(sc);
    ck_assert_msg(strstr(err.msg, "slo.interactivity_tok_s: sets the per-request TPOT threshold"),
                  "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("plan");
    tcase_set_timeout(tc, 600);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_vary_specs);
    tcase_add_test(tc, test_knee_synthetic);
    tcase_add_test(tc, test_capacity_md1);
    tcase_add_test(tc, test_shards_merge_exactly);
    tcase_add_test(tc, test_small_plan);
    tcase_add_test(tc, test_merge_many_rows);
    tcase_add_test(tc, test_plan_trace_vs_poisson);
    tcase_add_test(tc, test_plan_profile_peak);
    tcase_add_test(tc, test_plan_p99_contract);
    tcase_add_test(tc, test_plan_per_phase);
    tcase_add_test(tc, test_plan_layouts);
    tcase_add_test(tc, test_plan_phase_layouts);
    tcase_add_test(tc, test_slo_interactivity);
    tcase_add_test(tc, test_run_progress);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
