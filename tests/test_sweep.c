/*
 * Tests of sweep semantics on hand-made rows and small runs: the knee per curve of a
 * two-curve sweep, where the SLOs are first met along a non-load axis (and the grid-edge
 * warnings), zipped --vary parsing and its expansion into points, the load axis moved
 * first, values longer than any fixed buffer, table number formatting, the sweep
 * report's overlay legend and automatic log axis, and the worker-process map sweep and plan
 * share.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "servesim/report/html.h"
#include "servesim/studies/sweep.h"
#include "studies/parallel_int.h" /* sv__parallel_map: sweep's and plan's workers */
#include "testsim.h"

static sv_catalog_t *cat;

static void setup(void)
{
    cat = tu_catalog();
}

static void teardown(void)
{
    sv_catalog_free(cat);
}

/* A row with its values and the metrics the curves read. */
static void mk_row(sv_row_t *r, long index, const char *v0, const char *v1, double attain,
                   double goodput)
{
    memset(r, 0, sizeof *r);
    r->index = index;
    r->ok = 1;
    r->vals[0] = v0;
    r->vals[1] = v1;
    for (int c = 0; c < SV_NCOLS; c++)
        r->m[c] = 1.0;
    r->m[SV_COL_ATTAIN] = attain;
    r->m[SV_COL_ATTAIN_TARGET] = 0.9;
    r->m[SV_COL_GOODPUT] = goodput;
    r->m[SV_COL_REQ_TPUT] = goodput;
}

/* Two curves (static, vllm) over rates 2, 4, 8, 16, interleaved as a sweep writes them
 * (the load varies fastest). static: attainment 0.95, 0.92, 0.5, 0.1 -> knee at rate 4
 * (index 1), max goodput 3.1 at rate 4. vllm: 1, 1, 0.97, 0.91 -> knee at the last rate
 * 16, an edge of the grid. */
START_TEST(test_knee_per_curve)
{
    const char *rate[] = {"2", "4", "8", "16"};
    double as[] = {0.95, 0.92, 0.5, 0.1}, gs[] = {1.9, 3.1, 2.0, 0.8};
    double av[] = {1.0, 1.0, 0.97, 0.91}, gv[] = {2.0, 4.0, 7.9, 14.5};
    sv_row_t rows[8];
    for (int i = 0; i < 4; i++) {
        mk_row(&rows[i], i, rate[i], "static", as[i], gs[i]);
        mk_row(&rows[4 + i], 4 + i, rate[i], "vllm", av[i], gv[i]);
    }
    char keys[SV_MAX_VARY][128] = {"workload.rate", "engine.scheduler"};
    sv_curves_t cv;
    sv_error_t err;
    ck_assert_int_eq(sv_sweep_curves(keys, 2, rows, 8, NULL, &cv, &err), 0);
    ck_assert_int_eq(cv.n, 2);
    ck_assert_int_eq(cv.nx, 1);
    ck_assert_int_eq(cv.is_load, 1);
    ck_assert_int_eq(cv.c[0].n, 4);
    ck_assert_int_eq(cv.c[0].first, 0);
    ck_assert_int_eq(cv.c[0].members[3], 3);
    ck_assert_int_eq(cv.c[0].knee, 1);
    ck_assert_int_eq(cv.c[0].best, 1);
    ck_assert_int_eq(cv.c[0].edge, 0);
    ck_assert_int_eq(cv.c[1].first, 4);
    ck_assert_int_eq(cv.c[1].members[0], 4);
    ck_assert_int_eq(cv.c[1].knee, 3);
    ck_assert_int_eq(cv.c[1].best, 3);
    ck_assert_int_eq(cv.c[1].edge, 1);
    char buf[2048];
    sv_curve_summary(&cv, 0, keys, 2, rows, buf, sizeof buf);
    ck_assert_str_eq(buf, "[engine.scheduler=static]\n"
                          "knee: workload.rate=4 is the highest load meeting the SLOs for 90% "
                          "of requests\n"
                          "max goodput: 3.10 req/s at workload.rate=4\n");
    sv_curve_summary(&cv, 1, keys, 2, rows, buf, sizeof buf);
    ck_assert_str_eq(buf, "[engine.scheduler=vllm]\n"
                          "knee: workload.rate=16 is the highest load meeting the SLOs for 90% "
                          "of requests\n"
                          "warning: the knee is the grid's last load (workload.rate=16); the "
                          "SLOs may hold at higher loads: extend the grid up\n"
                          "max goodput: 14.5 req/s at workload.rate=16\n");
    sv_curves_free(&cv);

    /* The same rows in another order (a merge sorts by index; a hand-made table need not
     * be): curves keep their members in row order, ordered by their first row. */
    sv_row_t shuffled[8];
    for (int i = 0; i < 4; i++) {
        shuffled[2 * i] = rows[4 + i];
        shuffled[2 * i + 1] = rows[i];
    }
    ck_assert_int_eq(sv_sweep_curves(keys, 2, shuffled, 8, NULL, &cv, &err), 0);
    ck_assert_int_eq(cv.n, 2);
    ck_assert_str_eq(shuffled[cv.c[0].first].vals[1], "vllm");
    ck_assert_int_eq(cv.c[0].knee, 3);
    ck_assert_int_eq(cv.c[1].knee, 1);
    sv_curves_free(&cv);
}
END_TEST

/* A bandwidth sweep (not the load): "SLOs met from" the first value where attainment
 * reaches the target, with warnings at the grid's edges. */
START_TEST(test_slo_first_met)
{
    const char *bw[] = {"1", "2", "5", "10", "20"};
    double a[] = {0.2, 0.7, 0.93, 0.97, 0.99};
    sv_row_t rows[5];
    for (int i = 0; i < 5; i++)
        mk_row(&rows[i], i, bw[i], NULL, a[i], 1.0 + i);
    char keys[SV_MAX_VARY][128] = {"kv_link.bandwidth_gb_s"};
    sv_curves_t cv;
    sv_error_t err;
    char buf[2048];
    ck_assert_int_eq(sv_sweep_curves(keys, 1, rows, 5, NULL, &cv, &err), 0);
    ck_assert_int_eq(cv.is_load, 0);
    ck_assert_int_eq(cv.n, 1);
    ck_assert_int_eq(cv.c[0].met, 2);
    ck_assert_int_eq(cv.c[0].met_after, 1);
    ck_assert_int_eq(cv.c[0].edge, 0);
    sv_curve_summary(&cv, 0, keys, 1, rows, buf, sizeof buf);
    ck_assert_str_eq(buf, "SLOs met from kv_link.bandwidth_gb_s=5 (for 90% of requests, at every "
                          "later point)\n"
                          "max goodput: 5.00 req/s at kv_link.bandwidth_gb_s=20\n");
    sv_curves_free(&cv);

    /* met from the first point: the threshold may lie below the grid */
    rows[0].m[SV_COL_ATTAIN] = rows[1].m[SV_COL_ATTAIN] = 0.95;
    ck_assert_int_eq(sv_sweep_curves(keys, 1, rows, 5, NULL, &cv, &err), 0);
    ck_assert_int_eq(cv.c[0].met, 0);
    ck_assert_int_eq(cv.c[0].edge, 1);
    sv_curve_summary(&cv, 0, keys, 1, rows, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "SLOs met from kv_link.bandwidth_gb_s=1 (") == buf, "%s", buf);
    ck_assert_msg(strstr(buf, "\nwarning: the SLOs are met at the grid's first point "
                              "(kv_link.bandwidth_gb_s=1); they may be met below it too: extend "
                              "the grid down\n"),
                  "%s", buf);
    sv_curves_free(&cv);

    /* met, then lost again: said so; never met: said so, with the grid's range */
    rows[3].m[SV_COL_ATTAIN] = 0.5;
    ck_assert_int_eq(sv_sweep_curves(keys, 1, rows, 5, NULL, &cv, &err), 0);
    ck_assert_int_eq(cv.c[0].met_after, 0);
    sv_curve_summary(&cv, 0, keys, 1, rows, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "SLOs first met at kv_link.bandwidth_gb_s=1 (for 90% of requests), "
                              "but not at every later point\n") == buf,
                  "%s", buf);
    sv_curves_free(&cv);
    for (int i = 0; i < 5; i++)
        rows[i].m[SV_COL_ATTAIN] = 0.1;
    ck_assert_int_eq(sv_sweep_curves(keys, 1, rows, 5, NULL, &cv, &err), 0);
    ck_assert_int_eq(cv.c[0].met, -1);
    sv_curve_summary(&cv, 0, keys, 1, rows, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "SLOs not met for 90% of requests anywhere on the grid "
                              "(kv_link.bandwidth_gb_s=1 to kv_link.bandwidth_gb_s=20)\n"
                              "warning: extend the grid") == buf,
                  "%s", buf);
    sv_curves_free(&cv);
}
END_TEST

START_TEST(test_zip_parse)
{
    sv_vary_t v[SV_MAX_VARY];
    sv_error_t err;
    int n;
    ck_assert_int_eq(sv_vary_parse_all("pools.0.replicas,pools.1.replicas=1,3;2,2;3,1", v,
                                       SV_MAX_VARY, &n, &err),
                     0);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(v[0].key, "pools.0.replicas");
    ck_assert_str_eq(v[1].key, "pools.1.replicas");
    ck_assert_int_eq(v[0].zip, 0);
    ck_assert_int_eq(v[1].zip, 1);
    ck_assert_int_eq(v[0].n, 3);
    ck_assert_int_eq(v[1].n, 3);
    ck_assert_str_eq(v[0].vals[0], "1");
    ck_assert_str_eq(v[1].vals[0], "3");
    ck_assert_str_eq(v[0].vals[2], "3");
    ck_assert_str_eq(v[1].vals[2], "1");
    sv_vary_free(&v[0]);
    sv_vary_free(&v[1]);
    /* flow values keep their commas and semicolons */
    ck_assert_int_eq(sv_vary_parse_all("a,b={x: 1, y: 2},5;[1;2, 3],6", v, 2, &n, &err), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(v[0].n, 2);
    ck_assert_str_eq(v[0].vals[0], "{x: 1, y: 2}");
    ck_assert_str_eq(v[1].vals[0], "5");
    ck_assert_str_eq(v[0].vals[1], "[1;2, 3]");
    ck_assert_str_eq(v[1].vals[1], "6");
    sv_vary_free(&v[0]);
    sv_vary_free(&v[1]);
    /* a single key still takes ranges */
    ck_assert_int_eq(sv_vary_parse_all("workload.rate=0.1:0.5:0.1", v, 1, &n, &err), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(v[0].n, 5);
    ck_assert_str_eq(v[0].vals[2], "0.3"); /* not 0.30000000000000004 */
    sv_vary_free(&v[0]);
    /* tuples of the wrong size, empty values, too many keys */
    ck_assert_int_eq(sv_vary_parse_all("a,b=1,2;3", v, SV_MAX_VARY, &n, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--vary a,b=1,2;3: tuple 2: expected 2 non-empty values separated "
                              "by ',' (one per key), tuples separated by ';'");
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(sv_vary_parse_all("a,b=1,2,3", v, SV_MAX_VARY, &n, &err), SV_EINVAL);
    ck_assert_int_eq(sv_vary_parse_all("a,b=1,;2,3", v, SV_MAX_VARY, &n, &err), SV_EINVAL);
    ck_assert_int_eq(sv_vary_parse_all("a,,b=1,2", v, SV_MAX_VARY, &n, &err), SV_EINVAL);
    /* a trailing ';' is an empty last tuple, as ";;" is an empty middle one; a trailing
     * ',' is an empty key or value */
    ck_assert_int_eq(sv_vary_parse_all("a,b=1,2;", v, SV_MAX_VARY, &n, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--vary a,b=1,2;: tuple 2: expected 2 non-empty values separated "
                              "by ',' (one per key), tuples separated by ';'");
    ck_assert_int_eq(sv_vary_parse_all("a,=1,2", v, SV_MAX_VARY, &n, &err), SV_EINVAL);
    ck_assert_int_eq(sv_vary_parse_all("a=1,2,", v, SV_MAX_VARY, &n, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--vary a=1,2,: empty value in the list");
    ck_assert_int_eq(sv_vary_parse_all("a,b,c=1,2,3", v, 2, &n, &err), SV_ELIMIT);
}
END_TEST

/* A zipped split (3 tuples) times 2 rates with the rate given last: the load moves first,
 * 6 points, the zipped keys move together. */
START_TEST(test_zip_expand)
{
    static sv_sweep_t sw;
    memset(&sw, 0, sizeof sw);
    sv_error_t err;
    int n;
    ck_assert_int_eq(sv_vary_parse_all("pools.0.replicas,pools.1.replicas=1,3;2,2;3,1", sw.vary,
                                       SV_MAX_VARY, &n, &err),
                     0);
    sw.nvary = n;
    ck_assert_int_eq(sv_vary_parse_all("workload.rate=4,8", &sw.vary[n], SV_MAX_VARY - n, &n, &err),
                     0);
    sw.nvary += n;
    ck_assert_int_eq(sv_sweep_init(&sw, &err), 0);
    ck_assert_int_eq(sw.npoints, 6);
    ck_assert_str_eq(sw.vary[0].key, "workload.rate");
    ck_assert_str_eq(sw.vary[1].key, "pools.0.replicas");
    ck_assert_str_eq(sw.vary[2].key, "pools.1.replicas");
    ck_assert_int_eq(sw.vary[2].zip, 1);
    /* point 3: rate index 1 (8), split index 1 (2:2); point 4: rate 4, split 3:1 */
    ck_assert_str_eq(sv_sweep_value(&sw, 3, 0), "8");
    ck_assert_str_eq(sv_sweep_value(&sw, 3, 1), "2");
    ck_assert_str_eq(sv_sweep_value(&sw, 3, 2), "2");
    ck_assert_str_eq(sv_sweep_value(&sw, 4, 0), "4");
    ck_assert_str_eq(sv_sweep_value(&sw, 4, 1), "3");
    ck_assert_str_eq(sv_sweep_value(&sw, 4, 2), "1");
    /* curves of such rows: one per split, the rate on the x axis */
    sv_row_t rows[6];
    char keys[SV_MAX_VARY][128];
    for (int k = 0; k < 3; k++)
        snprintf(keys[k], 128, "%s", sw.vary[k].key);
    for (long i = 0; i < 6; i++) {
        mk_row(&rows[i], i, NULL, NULL, 1.0, 1.0);
        for (int k = 0; k < 3; k++)
            rows[i].vals[k] = sv_sweep_value(&sw, i, k);
    }
    sv_curves_t cv;
    ck_assert_int_eq(sv_sweep_curves(keys, 3, rows, 6, NULL, &cv, &err), 0);
    ck_assert_int_eq(cv.nx, 1);
    ck_assert_int_eq(cv.n, 3);
    ck_assert_int_eq(cv.c[2].members[1], 5);
    sv_curves_free(&cv);
    /* without the rate, the zipped pair is the x axis: nx = 2, one curve */
    for (long i = 0; i < 3; i++) {
        rows[i].vals[0] = rows[2 * i].vals[1];
        rows[i].vals[1] = rows[2 * i].vals[2];
        rows[i].m[SV_COL_ATTAIN] = i == 0 ? 0.5 : 0.95;
    }
    char k2[SV_MAX_VARY][128] = {"pools.0.replicas", "pools.1.replicas"};
    ck_assert_int_eq(sv_sweep_curves(k2, 2, rows, 3, NULL, &cv, &err), 0);
    ck_assert_int_eq(cv.nx, 2);
    ck_assert_int_eq(cv.n, 1);
    char buf[1024];
    sv_curve_summary(&cv, 0, k2, 2, rows, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "SLOs met from pools.0.replicas=2, pools.1.replicas=2 (") == buf,
                  "%s", buf);
    sv_curves_free(&cv);
    sv_sweep_free(&sw);
    /* an explicit --load that is not varied */
    memset(&sw, 0, sizeof sw);
    ck_assert_int_eq(sv_vary_parse("engine.max_num_seqs=8,16", &sw.vary[0], &err), 0);
    sw.nvary = 1;
    sw.load = "workload.rate";
    ck_assert_int_eq(sv_sweep_init(&sw, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg,
                     "--load workload.rate: not a varied key (varied: engine.max_num_seqs)");
    sv_sweep_free(&sw);
}
END_TEST

/* A value of 300 characters (it was cut at 96) reaches the scenario whole and the row. */
START_TEST(test_long_values)
{
    char spec[600], val[400];
    /* a valid YAML flow map padded with spaces after the commas */
    snprintf(val, sizeof val, "{dist: fixed,%250s value: 64}", "");
    ck_assert_int_gt((int)strlen(val), 260);
    snprintf(spec, sizeof spec, "workload.input=%s,32", val);
    static sv_sweep_t sw;
    memset(&sw, 0, sizeof sw);
    sv_error_t err;
    ck_assert_int_eq(sv_vary_parse(spec, &sw.vary[0], &err), 0);
    ck_assert_int_eq(sw.vary[0].n, 2);
    ck_assert_str_eq(sw.vary[0].vals[0], val);
    sw.nvary = 1;
    char path[] = "/tmp/sv_sweep_long_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    const char *scn = "name: long\nseed: 3\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "workload: {num_requests: 20, rate: 2, input: 16, output: 8}\n";
    ck_assert(write(fd, scn, strlen(scn)) == (ssize_t)strlen(scn));
    close(fd);
    sw.scenario = path;
    ck_assert_int_eq(sv_sweep_init(&sw, &err), 0);
    ck_assert_int_eq(sv_sweep_check_keys(&sw, cat, &err), 0);
    char dir[] = "/tmp/sv_sweep_longd_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    sv_row_t rows[2];
    ck_assert_int_eq(sv_sweep_run(&sw, cat, dir, 1, 1, 1, rows, NULL, &err), 0);
    ck_assert_msg(rows[0].ok == 1, "%s", rows[0].error);
    ck_assert_str_eq(rows[0].vals[0], val);
    ck_assert_int_eq((long)rows[0].m[SV_COL_COMPLETED], 20);
    char keys[SV_MAX_VARY][128] = {"workload.input"};
    ck_assert_int_eq(sv_sweep_write(dir, keys, 1, rows, 2, NULL, NULL, &err), 0);
    /* the merge reads it back whole */
    char merged[64];
    snprintf(merged, sizeof merged, "%s/m", dir);
    const char *dirs[] = {dir};
    ck_assert_msg(sv_sweep_merge(merged, dirs, 1, NULL, NULL, &err) == 0, "%s", err.msg);
    char csv[128], *text = NULL;
    snprintf(csv, sizeof csv, "%s/sweep.csv", merged);
    FILE *f = fopen(csv, "r");
    ck_assert_ptr_nonnull(f);
    size_t cap = 0;
    ck_assert(getdelim(&text, &cap, '\0', f) > 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, val));
    free(text);
    sv_sweep_free(&sw);
    unlink(path);
}
END_TEST

START_TEST(test_fmt_num)
{
    char b[32];
    ck_assert_str_eq(sv_fmt_num(56.843418860808015, b), "56.8");
    ck_assert_str_eq(sv_fmt_num(1234.6, b), "1235");
    ck_assert_str_eq(sv_fmt_num(3.14159, b), "3.14");
    ck_assert_str_eq(sv_fmt_num(0.012345, b), "0.0123");
    ck_assert_str_eq(sv_fmt_num(0.66, b), "0.660");
    ck_assert_str_eq(sv_fmt_num(0.1, b), "0.100");
    ck_assert_str_eq(sv_fmt_num(0.00001234, b), "1.23e-05");
    ck_assert_str_eq(sv_fmt_num(0.0, b), "0");
    ck_assert_str_eq(sv_fmt_num(100.0, b), "100");
    ck_assert_str_eq(sv_fmt_num(NAN, b), "-");
}
END_TEST

/* The report of a two-curve sweep: a legend naming both curves, and a log TTFT axis when
 * the values span 30x or more (here 40 ms to 40 s), a linear one when they do not. */
START_TEST(test_sweep_report_overlay)
{
    const char *rate[] = {"2", "4", "8"};
    sv_row_t rows[6];
    double ttft[] = {40, 50, 400, 2000, 9000, 40000};
    for (int i = 0; i < 6; i++) {
        mk_row(&rows[i], i, rate[i % 3], i < 3 ? "vllm" : "static", 0.95, 1.0);
        rows[i].m[SV_COL_TTFT_P99] = ttft[i];
        rows[i].m[SV_COL_TTFT_P50] = ttft[i] / 2;
        rows[i].m[SV_COL_TPOT_P99] = 10 + i;
        rows[i].m[SV_COL_TPOT_P50] = 9 + i;
        rows[i].m[SV_COL_SLO_TTFT] = 1000;
        rows[i].m[SV_COL_SLO_TPOT] = NAN;
    }
    char keys[SV_MAX_VARY][128] = {"workload.rate", "engine.scheduler"};
    char dir[] = "/tmp/sv_sweep_html_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char html[128], svg[128];
    snprintf(html, sizeof html, "%s/r.html", dir);
    sv_error_t err;
    ck_assert_msg(sv_html_sweep("t", keys, 2, rows, 6, NULL, html, &err) == 0, "%s", err.msg);
    const char *want[][3] = {
        {"ttft", "TTFT (ms) (log scale)", ">vllm: p99<"},
        {"tpot", "TPOT (ms)</text>", ">static: p50<"},
        {"latency-ttft", "achieved throughput (requests per second)", ">engine.scheduler<"},
    };
    for (int i = 0; i < 3; i++) {
        snprintf(svg, sizeof svg, "%s/r-%s.svg", dir, want[i][0]);
        FILE *f = fopen(svg, "r");
        ck_assert_msg(f != NULL, "%s missing", svg);
        char *text = NULL;
        size_t cap = 0;
        ck_assert(getdelim(&text, &cap, '\0', f) > 0);
        fclose(f);
        ck_assert_msg(strstr(text, want[i][1]) && strstr(text, want[i][2]), "%s: %s / %s",
                      want[i][0], want[i][1], want[i][2]);
        free(text);
    }
}
END_TEST

/* sv__parallel_map: results land in their items' slots whatever order workers finish in;
 * a worker that dies gets died() and the map goes on; done() and progress see every item. */
typedef struct pres {
    long item;
    double sq;
} pres_t;

static int done_calls, last_finished, last_total;

static void pwork(long i, void *out, void *ctx)
{
    if (i == 4 && *(const int *)ctx) _exit(1); /* this worker dies */
    pres_t *r = out;
    r->item = i;
    r->sq = (double)(i * i);
}

static void pdied(long i, void *out, void *ctx)
{
    (void)ctx;
    pres_t *r = out;
    r->item = -i;
    r->sq = -1;
}

static void pdone(long i, void *out, void *ctx)
{
    (void)i;
    (void)out;
    (void)ctx;
    done_calls++;
}

static void pprog(long finished, long total, void *ctx)
{
    (void)ctx;
    last_finished = (int)finished;
    last_total = (int)total;
}

START_TEST(test_parallel_map)
{
    for (int jobs = 1; jobs <= 3; jobs += 2) {
        pres_t res[10];
        memset(res, 0, sizeof res);
        int kill = jobs > 1;
        done_calls = last_finished = last_total = 0;
        /* items 1, 4, 7 (first 1, stride 3) of 10 */
        sv__pmap_t m = {.n = 10,
                        .first = 1,
                        .stride = 3,
                        .jobs = jobs,
                        .size = sizeof res[0],
                        .results = res,
                        .work = pwork,
                        .died = pdied,
                        .done = pdone,
                        .progress = pprog,
                        .ctx = &kill};
        sv_error_t err;
        ck_assert_int_eq(sv__parallel_map(&m, &err), 0);
        ck_assert_int_eq(res[1].item, 1);
        ck_assert(res[7].sq == 49.0);
        ck_assert_int_eq(res[4].item, kill ? -4 : 4);
        ck_assert(res[4].sq == (kill ? -1.0 : 16.0));
        ck_assert_int_eq(res[0].item, 0); /* not an item: untouched */
        ck_assert_int_eq(res[2].item, 0);
        ck_assert_int_eq(done_calls, 3);
        ck_assert_int_eq(last_finished, 3);
        ck_assert_int_eq(last_total, 3);
    }
    /* a result too large for a pipe is refused, not deadlocked on */
    static char big[2][SV_PARALLEL_MAX_RESULT + 1];
    int kill = 0;
    sv__pmap_t m = {.n = 2,
                    .first = 0,
                    .stride = 1,
                    .jobs = 2,
                    .size = sizeof big[0],
                    .results = big,
                    .work = pwork,
                    .died = pdied,
                    .ctx = &kill};
    sv_error_t err;
    ck_assert_int_eq(sv__parallel_map(&m, &err), SV_EINVAL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_knee_per_curve);
    tcase_add_test(tc, test_slo_first_met);
    tcase_add_test(tc, test_zip_parse);
    tcase_add_test(tc, test_zip_expand);
    tcase_add_test(tc, test_long_values);
    tcase_add_test(tc, test_fmt_num);
    tcase_add_test(tc, test_sweep_report_overlay);
    tcase_add_test(tc, test_parallel_map);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
