/*
 * Tests of what a run's reports show (issue 14): the HTML report labels each configured
 * percentile with its own name and value (it used to print the first one under "P99"),
 * the JSON's servesim.config holds the configuration block's keys with the scenario's
 * values, and the HTML opens with that block and, for disaggregated runs, a section per pool.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "servesim/cluster/finance.h"
#include "servesim/report/axes.h"
#include "servesim/report/charts.h"
#include "servesim/report/config.h"
#include "servesim/report/html.h"
#include "servesim/report/report.h"
#include "servesim/report/trace.h"
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

/* The whole of a file, NUL-terminated (caller frees). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert(s != NULL);
    ck_assert(fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* A temporary directory's file path: /tmp/sv_report_XXXXXX/name. */
static const char *tmp_path(char *dir, const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

/* Remove every file of the directory (the report writes SVGs next to the HTML), then it. */
static void rm_dir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *colocated = "name: pct\nseed: 3\nmodel: llama-3.1-8b\n"
                               "hardware: {gpu: h100-sxm}\n"
                               "engine: {max_num_seqs: 16, max_num_batched_tokens: 2048}\n"
                               "workload: {num_requests: 40, rate: 20, input: 512, output: 32}\n";

/* With percentiles [50] the summary table says "P50 TTFT (ms)" and "P50 TPOT (ms)" with the
 * median of the requests' TTFTs (computed here from the records, numpy's linear rule: 40
 * values, so the mean of the 20th and 21st), and no "P99 TTFT" or "P99 TPOT". */
START_TEST(test_html_labels_the_configured_percentile)
{
    const char *sets[] = {"metrics.percentiles=[50]"};
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, colocated, sets, 1, &sc);
    ck_assert_int_eq(res->summary.completed, 40);
    double t[40];
    for (int i = 0; i < 40; i++)
        t[i] = sv_req_ttft(&res->pool.r[i]) * 1e3;
    qsort(t, 40, sizeof t[0], cmp_d);
    double median = (t[19] + t[20]) / 2;
    tu_assert_rel(res->summary.ttft.pct[0], median, 1e-12);

    char dir[] = "/tmp/sv_report_XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    sv_error_t err;
    ck_assert_msg(sv_html_run(res, tmp_path(dir, "r.html"), &err) == 0, "%s", err.msg);
    char *html = slurp(tmp_path(dir, "r.html"));
    char want[160];
    snprintf(want, sizeof want, "<tr><th class=\"l\">P50 TTFT (ms)</th><td>%.2f</td></tr>", median);
    ck_assert_msg(strstr(html, want) != NULL, "missing %s", want);
    snprintf(want, sizeof want, "<tr><th class=\"l\">P50 TPOT (ms)</th><td>%.2f</td></tr>",
             res->summary.tpot.pct[0]);
    ck_assert_msg(strstr(html, want) != NULL, "missing %s", want);
    /* (servesim's own block always shows the P99 queue time, as the terminal does) */
    ck_assert_msg(strstr(html, "P99 TTFT") == NULL && strstr(html, "P99 TPOT") == NULL,
                  "a P99 TTFT or TPOT label with percentiles [50]");
    free(html);
    rm_dir(dir);
    tu_done(sc, res);
}
END_TEST

/* Two percentiles: both rows, in the configured order, labelled as vLLM labels them. */
START_TEST(test_html_labels_every_percentile)
{
    const char *sets[] = {"metrics.percentiles=[90, 99.9]"};
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, colocated, sets, 1, &sc);
    char dir[] = "/tmp/sv_report_XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    sv_error_t err;
    ck_assert_msg(sv_html_run(res, tmp_path(dir, "r.html"), &err) == 0, "%s", err.msg);
    char *html = slurp(tmp_path(dir, "r.html"));
    char a[160], b[160];
    snprintf(a, sizeof a, "<tr><th class=\"l\">P90 TTFT (ms)</th><td>%.2f</td></tr>",
             res->summary.ttft.pct[0]);
    snprintf(b, sizeof b, "<tr><th class=\"l\">P99.9 TTFT (ms)</th><td>%.2f</td></tr>",
             res->summary.ttft.pct[1]);
    const char *pa = strstr(html, a), *pb = strstr(html, b);
    ck_assert_msg(pa && pb && pa < pb, "P90 then P99.9 rows expected");
    ck_assert(res->summary.ttft.pct[0] < res->summary.ttft.pct[1]);
    free(html);
    rm_dir(dir);
    tu_done(sc, res);
}
END_TEST

static const char *disagg =
    "name: cfg-disagg\nseed: 13\nmodel: opt-13b\n"
    "pools:\n"
    "  - {name: pre, role: prefill, gpu: a100-80gb, engine: {max_num_seqs: 128, "
    "max_num_batched_tokens: 2048}}\n"
    "  - {name: dec, role: decode, gpu: a100-80gb, replicas: 2, kv_cache_dtype: fp8, "
    "engine: {max_num_seqs: 256, max_num_batched_tokens: 4096}}\n"
    "disaggregation: {kv_link: {kind: infiniband, bandwidth_gb_s: 25}}\n"
    "workload: {rate: 4, num_requests: 30, input: 300, output: 50}\n"
    "slo: {ttft_ms: 250, tpot_ms: 100, attainment: 0.9}\n";

static const cJSON *get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(v != NULL, "servesim.config: no key '%s'", key);
    return v;
}

static void expect_str(const cJSON *o, const char *key, const char *want)
{
    const cJSON *v = get(o, key);
    ck_assert_msg(cJSON_IsString(v) && strcmp(v->valuestring, want) == 0,
                  "servesim.config: %s is not \"%s\"", key, want);
}

static void expect_num(const cJSON *o, const char *key, double want)
{
    const cJSON *v = get(o, key);
    ck_assert_msg(cJSON_IsNumber(v) && v->valuedouble == want, "servesim.config: %s = %g, not %g",
                  key, cJSON_IsNumber(v) ? v->valuedouble : NAN, want);
}

/* The JSON's servesim.config: its sections in order, and the values the scenario set. */
START_TEST(test_json_config_block)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, disagg, NULL, 0, &sc);
    char dir[] = "/tmp/sv_report_XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    sv_error_t err;
    ck_assert_msg(sv_report_json(res, 0, tmp_path(dir, "r.json"), &err) == 0, "%s", err.msg);
    char *text = slurp(tmp_path(dir, "r.json"));
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "the JSON does not parse");
    const cJSON *c = get(get(j, "servesim"), "config");
    const char *sections[] = {"scenario", "servesim_version", "seed",     "model", "serving",
                              "pools",    "kv_link",          "workload", "slo",   "metrics"};
    const cJSON *it = c->child;
    for (int i = 0; i < 10; i++, it = it->next) {
        ck_assert_msg(it != NULL, "servesim.config ends before '%s'", sections[i]);
        ck_assert_str_eq(it->string, sections[i]);
    }
    ck_assert_msg(it == NULL, "servesim.config has more than its ten keys");
    expect_str(c, "scenario", "cfg-disagg");
    expect_num(c, "seed", 13);
    expect_str(get(c, "model"), "name", "opt-13b");
    expect_str(get(c, "serving"), "mode", "disaggregated");
    expect_num(get(c, "serving"), "gpus", 3);
    const cJSON *pre = get(get(c, "pools"), "pre"), *dec = get(get(c, "pools"), "dec");
    expect_str(pre, "role", "prefill");
    expect_str(pre, "gpu", "a100-80gb");
    expect_num(pre, "replicas", 1);
    expect_num(pre, "tp", 1);
    expect_str(pre, "weight_dtype", "bf16");
    expect_str(pre, "kv_cache_dtype", "bf16");
    expect_str(pre, "engine_profile", "vllm");
    expect_str(pre, "scheduler", "vllm");
    expect_num(pre, "max_num_seqs", 128);
    expect_num(pre, "max_num_batched_tokens", 2048);
    expect_str(dec, "role", "decode");
    expect_num(dec, "replicas", 2);
    expect_str(dec, "kv_cache_dtype", "fp8");
    expect_num(dec, "max_num_seqs", 256);
    expect_num(dec, "max_num_batched_tokens", 4096);
    expect_num(dec, "kv_blocks_per_replica", (double)res->pools[1].mem.kv_blocks);
    expect_str(get(c, "kv_link"), "kind", "infiniband");
    expect_num(get(c, "kv_link"), "bandwidth_gb_s_per_gpu", 25);
    expect_num(get(c, "workload"), "rate", 4);
    expect_num(get(c, "workload"), "num_requests", 30);
    expect_str(get(c, "workload"), "input", "fixed 300");
    expect_num(get(c, "slo"), "ttft_ms", 250);
    expect_num(get(c, "slo"), "tpot_ms", 100);
    expect_num(get(c, "slo"), "attainment", 0.9);
    cJSON_Delete(j);
    free(text);
    rm_dir(dir);
    tu_done(sc, res);
}
END_TEST

/* engine.chunked_prefill: false shows in the pool's configuration (only when off, so the
 * other runs' blocks keep their keys). */
START_TEST(test_json_config_chunked_prefill_off)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "engine: {scheduler: trtllm%s}\n"
                       "workload: {num_requests: 2, input: 100, output: 4}\n";
    for (int off = 0; off < 2; off++) {
        char text[256];
        snprintf(text, sizeof text, yaml, off ? ", chunked_prefill: false" : "");
        sv_scenario_t *sc;
        sv_result_t *res = tu_run_yaml(cat, text, NULL, 0, &sc);
        char dir[] = "/tmp/sv_report_XXXXXX";
        ck_assert(mkdtemp(dir) != NULL);
        sv_error_t err;
        ck_assert_msg(sv_report_json(res, 0, tmp_path(dir, "r.json"), &err) == 0, "%s", err.msg);
        char *json = slurp(tmp_path(dir, "r.json"));
        cJSON *j = cJSON_Parse(json);
        ck_assert_msg(j != NULL, "the JSON does not parse");
        const cJSON *pool = get(get(get(get(j, "servesim"), "config"), "pools"), "default");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(pool, "chunked_prefill");
        if (off)
            ck_assert_msg(cJSON_IsFalse(v), "servesim.config: chunked_prefill is not false");
        else
            ck_assert_msg(v == NULL, "servesim.config: chunked_prefill shown while on");
        cJSON_Delete(j);
        free(json);
        rm_dir(dir);
        tu_done(sc, res);
    }
}
END_TEST

/* The HTML report of a disaggregated run opens with the configuration block (the pools read
 * across: the decode pool's fp8 KV cache next to the prefill pool's bf16), then the summary
 * and the Pools table with the terminal's per-pool figures (KV sent by the prefill pool in
 * GB, as the terminal prints it), and draws the KV link and decode-room charts. */
START_TEST(test_html_pool_sections)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, disagg, NULL, 0, &sc);
    char dir[] = "/tmp/sv_report_XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    sv_error_t err;
    ck_assert_msg(sv_html_run(res, tmp_path(dir, "r.html"), &err) == 0, "%s", err.msg);
    char *html = slurp(tmp_path(dir, "r.html"));
    const char *cfg = strstr(html, "<h2>Configuration</h2>"),
               *sum = strstr(html, "<h2>Summary</h2>"), *pools = strstr(html, "<h2>Pools</h2>");
    ck_assert_msg(cfg && sum && pools && cfg < sum && sum < pools, "sections out of order");
    ck_assert(strstr(cfg, "<th class=\"l\">pool pre</th><th class=\"l\">pool dec</th>") != NULL);
    ck_assert(strstr(cfg, "<td class=\"l\">KV cache dtype</td><td class=\"l\">bf16</td>"
                          "<td class=\"l\">fp8</td>") != NULL);
    ck_assert(strstr(pools, "<th>pool pre (prefill)</th><th>pool dec (decode)</th>") != NULL);
    char want[128];
    ck_assert(res->pools[0].link_bytes > 0);
    snprintf(want, sizeof want, "<tr><th class=\"l\">KV sent (GB)</th><td>%.2f</td><td></td></tr>",
             res->pools[0].link_bytes / 1e9);
    ck_assert_msg(strstr(pools, want) != NULL, "missing %s", want);
    ck_assert(strstr(html, "<h2>KV transfers over time</h2>") != NULL);
    free(html);
    char *svg = slurp(tmp_path(dir, "r-kv-link.svg"));
    ck_assert(strstr(svg, "mean of the 1 prefill replicas&#39; links") != NULL ||
              strstr(svg, "mean of the 1 prefill replicas' links") != NULL);
    free(svg);
    rm_dir(dir);
    tu_done(sc, res);
}
END_TEST

/* Run sc's text with a tracer (limits max_steps, max_req; 0: defaults), write the trace and
 * parse it back. */
static cJSON *traced_run(const char *yaml, long max_steps, long max_req, sv_scenario_t **sc,
                         sv_result_t **res, sv_trace_cut_t *cut)
{
    sv_error_t err;
    ck_assert_msg(tu_load_yaml(cat, yaml, NULL, 0, sc, &err) == 0, "%s", err.msg);
    sv_tracer_t *t;
    ck_assert_int_eq(sv_tracer_new(max_steps, max_req, &t, &err), 0);
    sv_sim_hooks_t h;
    sv_tracer_hooks(t, &h);
    ck_assert_msg(sv_sim_run_hooked(*sc, &h, res, &err) == 0, "%s", err.msg);
    char dir[] = "/tmp/sv_report_XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    ck_assert_msg(sv_tracer_write(t, *res, tmp_path(dir, "t.json"), cut, &err) == 0, "%s", err.msg);
    sv_tracer_free(t);
    char *text = slurp(tmp_path(dir, "t.json"));
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "the trace is not JSON");
    free(text);
    rm_dir(dir);
    return j;
}

static const char *str_of(const cJSON *e, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_of(const cJSON *e, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A disaggregated run's trace: one step slice per engine step the replicas counted, with
 * its batch; one transfer per request with the bytes the simulator sent (input tokens x
 * KV bytes per token of the replica); one slice per request whose phases tile its life
 * exactly (their durations add up to it); and the run itself is the same traced or not. */
START_TEST(test_trace_events)
{
    sv_scenario_t *sc;
    sv_result_t *res;
    sv_trace_cut_t cut;
    cJSON *j = traced_run(disagg, 0, 0, &sc, &res, &cut);
    ck_assert_int_eq(cut.cut, 0);
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
    ck_assert(cJSON_IsArray(ev));
    long steps = 0, steps_run = 0, prefill_tokens = 0, xfers = 0, lives = 0;
    double life[30] = {0}, phase_sum[30] = {0};
    for (int i = 0; i < res->replicas; i++)
        steps_run += res->rstats[i].steps;
    const cJSON *e;
    cJSON_ArrayForEach(e, ev)
    {
        if (strcmp(str_of(e, "ph"), "X") != 0) continue;
        const char *c = str_of(e, "cat");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        int tid = (int)num_of(e, "tid");
        if (strcmp(c, "step") == 0) {
            steps++;
            prefill_tokens += (long)num_of(args, "prefill_tokens");
        } else if (strcmp(c, "kv_transfer") == 0) {
            int id = (int)num_of(args, "request");
            ck_assert(id >= 0 && id < 30);
            const sv_req_t *r = &res->pool.r[id];
            tu_assert_rel(num_of(args, "bytes"), r->input * res->pools[0].perf.kv_bytes_token_total,
                          1e-12);
            tu_assert_rel(num_of(e, "dur"), (r->xfer_end - r->xfer_start) * 1e6, 1e-6);
            xfers++;
        } else if (strcmp(c, "request") == 0) {
            ck_assert(tid >= 0 && tid < 30);
            life[tid] = num_of(e, "dur");
            lives++;
        } else if (strcmp(c, "phase") == 0) {
            phase_sum[tid] += num_of(e, "dur");
        }
    }
    ck_assert_int_eq(steps, steps_run);
    /* every prompt token is prefilled once (no preemption here) */
    double inputs = 0;
    for (int i = 0; i < 30; i++)
        inputs += res->pool.r[i].input;
    ck_assert_int_eq(res->preemptions, 0);
    ck_assert_int_eq(prefill_tokens, (long)inputs);
    ck_assert_int_eq(res->summary.completed, 30);
    ck_assert_int_eq(xfers, 30);
    ck_assert_int_eq(lives, 30);
    for (int i = 0; i < 30; i++) {
        const sv_req_t *r = &res->pool.r[i];
        tu_assert_rel(life[i], (r->last_token - r->arrival) * 1e6, 1e-9);
        ck_assert_msg(fabs(phase_sum[i] - life[i]) < 0.01, "request %d: phases %.3f us, life %.3f",
                      i, phase_sum[i], life[i]);
    }
    /* the same run without the tracer */
    sv_result_t *plain;
    sv_error_t err;
    ck_assert_int_eq(sv_sim_run(sc, &plain, &err), 0);
    ck_assert_int_eq(plain->events, res->events);
    ck_assert(plain->summary.ttft.mean == res->summary.ttft.mean);
    ck_assert(plain->summary.duration == res->summary.duration);
    sv_result_free(plain);
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

/* The flow events of request id, in file order (at most 16). */
static int flow_of(const cJSON *j, int id, const cJSON **out)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents"))
    {
        if (strcmp(str_of(e, "cat"), "flow") != 0 || (int)num_of(e, "id") != id) continue;
        ck_assert(n < 16);
        char nm[32];
        snprintf(nm, sizeof nm, "request %d", id);
        ck_assert_str_eq(str_of(e, "name"), nm);
        ck_assert_str_eq(str_of(e, "bp"), "e");
        out[n++] = e;
    }
    return n;
}

/* The slice of category kind on p's track that holds p's time (start <= ts < end); fails
 * when none does. */
static const cJSON *slice_holding(const cJSON *j, const cJSON *p, const char *kind)
{
    const cJSON *e;
    double ts = num_of(p, "ts");
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents"))
    {
        if (strcmp(str_of(e, "ph"), "X") != 0 || strcmp(str_of(e, "cat"), kind) != 0) continue;
        if (num_of(e, "pid") != num_of(p, "pid") || num_of(e, "tid") != num_of(p, "tid")) continue;
        if (num_of(e, "ts") <= ts && ts < num_of(e, "ts") + num_of(e, "dur")) return e;
    }
    ck_abort_msg("flow point at %.3f us (pid %g, tid %g) is in no %s slice", ts, num_of(p, "pid"),
                 num_of(p, "tid"), kind);
    return NULL;
}

/* Flow point k of a request: its phase, its track, and the slice it binds to, whose start
 * (t0_s >= 0) or end (t1_s >= 0) is a time of the request's record; the point is the
 * slice's middle. Gives the slice. */
static const cJSON *expect_point(const cJSON *j, const cJSON *p, const char *ph, int pid, int tid,
                                 const char *kind, double t0_s, double t1_s)
{
    ck_assert_str_eq(str_of(p, "ph"), ph);
    ck_assert_int_eq((int)num_of(p, "pid"), pid);
    ck_assert_int_eq((int)num_of(p, "tid"), tid);
    const cJSON *s = slice_holding(j, p, kind);
    double a = num_of(s, "ts"), d = num_of(s, "dur");
    if (t0_s >= 0)
        ck_assert_msg(fabs(a - t0_s * 1e6) < 0.0015, "starts %.3f, not %.3f", a, t0_s * 1e6);
    if (t1_s >= 0)
        ck_assert_msg(fabs(a + d - t1_s * 1e6) < 0.0015, "ends %.3f, not %.3f", a + d, t1_s * 1e6);
    ck_assert_msg(fabs(num_of(p, "ts") - (a + d / 2)) < 0.0015, "not the slice's middle");
    return s;
}

/* Past its step limit the trace stops at the first step it could not hold: it says so
 * (otherData and the cut), holds exactly the steps before that instant and only the
 * requests that arrived before it. */
START_TEST(test_trace_cut_at_the_step_limit)
{
    sv_scenario_t *sc;
    sv_result_t *res;
    sv_trace_cut_t cut;
    cJSON *j = traced_run(colocated, 25, 0, &sc, &res, &cut);
    ck_assert_int_eq(cut.cut, 1);
    ck_assert_int_eq(cut.steps, 25);
    ck_assert(cut.steps_all > 25);
    ck_assert_int_eq(cut.steps_all, res->rstats[0].steps);
    long arrived = 0;
    for (size_t i = 0; i < res->pool.n; i++)
        arrived += res->pool.r[i].arrival < cut.until_s;
    ck_assert_int_eq(cut.requests, arrived);
    ck_assert(arrived < 40);
    const cJSON *other = cJSON_GetObjectItemCaseSensitive(j, "otherData");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(other, "cut")));
    ck_assert(num_of(other, "steps_written") == 25);
    long steps = 0, lives = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents"))
    {
        if (strcmp(str_of(e, "cat"), "step") == 0) {
            steps++;
            ck_assert(num_of(e, "ts") < cut.until_s * 1e6);
        }
        lives += strcmp(str_of(e, "cat"), "request") == 0 && strcmp(str_of(e, "ph"), "X") == 0;
    }
    ck_assert_int_eq(steps, 25);
    ck_assert_int_eq(lives, arrived);
    /* the requests' flows bind only to steps the trace holds */
    long flow_steps = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents"))
    {
        if (strcmp(str_of(e, "cat"), "flow") != 0 || num_of(e, "pid") > res->npools) continue;
        slice_holding(j, e, "step");
        flow_steps++;
    }
    long scheduled = 0; /* each request scheduled before the cut has a step in its flow */
    for (size_t i = 0; i < res->pool.n; i++)
        scheduled += res->pool.r[i].scheduled >= 0 && res->pool.r[i].scheduled < cut.until_s;
    ck_assert(scheduled > 0);
    ck_assert(flow_steps >= scheduled);
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

/* Each request's flow, colocated: it starts on the request's own track (inside its slice,
 * before its first step) and goes to the step that first scheduled it (it starts at
 * `scheduled`), the step that made its first token (it ends at first_token: a 3000-token
 * prompt in 2048-token chunks takes two steps), and ends at the step that made its last
 * token (ends at last_token): its output - 2 = 2 decode steps lie between those two. */
START_TEST(test_trace_flows_colocated)
{
    const char *yaml = "name: flows\nseed: 3\nmodel: llama-3.1-8b\n"
                       "hardware: {gpu: h100-sxm}\n"
                       "engine: {max_num_seqs: 16, max_num_batched_tokens: 2048}\n"
                       "workload: {num_requests: 2, rate: 20, input: 3000, output: 4}\n";
    sv_scenario_t *sc;
    sv_result_t *res;
    sv_trace_cut_t cut;
    cJSON *j = traced_run(yaml, 0, 0, &sc, &res, &cut);
    ck_assert_int_eq(res->summary.completed, 2);
    int pid_req = res->npools + 2;
    for (int i = 0; i < 2; i++) {
        const sv_req_t *r = &res->pool.r[i];
        ck_assert_int_eq(r->replica, 0);
        const cJSON *p[16];
        ck_assert_int_eq(flow_of(j, i, p), 4);
        ck_assert_str_eq(str_of(p[0], "ph"), "s");
        ck_assert_int_eq((int)num_of(p[0], "pid"), pid_req);
        ck_assert_int_eq((int)num_of(p[0], "tid"), i);
        ck_assert(num_of(p[0], "ts") > r->arrival * 1e6 && num_of(p[0], "ts") < num_of(p[1], "ts"));
        const cJSON *s1 = expect_point(j, p[1], "t", 1, 0, "step", r->scheduled, -1);
        if (i == 0) /* alone on the replica: its first chunk fills the step */
            ck_assert_int_eq(
                (int)num_of(cJSON_GetObjectItemCaseSensitive(s1, "args"), "prefill_tokens"), 2048);
        const cJSON *s2 = expect_point(j, p[2], "t", 1, 0, "step", -1, r->first_token);
        const cJSON *s3 = expect_point(j, p[3], "f", 1, 0, "step", -1, r->last_token);
        double end2 = num_of(s2, "ts") + num_of(s2, "dur"), start3 = num_of(s3, "ts");
        ck_assert(num_of(s1, "ts") < num_of(s2, "ts"));
        int between = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "traceEvents"))
        {
            if (strcmp(str_of(e, "cat"), "step") == 0 && num_of(e, "ts") >= end2 - 0.0015 &&
                num_of(e, "ts") < start3 - 0.0015)
                between++;
        }
        ck_assert_int_eq(between, r->output - 2);
    }
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

/* One disaggregated request: request track, then its prefill step on the prefill replica
 * (it starts at `scheduled` and ends at prefill_end: a 300-token prompt is one step), its KV
 * transfer on the link (from xfer_start to xfer_end), the decode replica's step its decoding
 * started in (it starts at decode_start) and, last, the one that made its last token. */
START_TEST(test_trace_flows_disaggregated)
{
    sv_scenario_t *sc;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "%s", disagg);
    char *n = strstr(yaml, "num_requests: 30");
    ck_assert(n != NULL);
    memcpy(n, "num_requests:  1", 16);
    sv_result_t *res;
    sv_trace_cut_t cut;
    cJSON *j = traced_run(yaml, 0, 0, &sc, &res, &cut);
    ck_assert_int_eq(res->summary.completed, 1);
    const sv_req_t *r = &res->pool.r[0];
    ck_assert_int_eq(r->prefill_replica, 0);
    ck_assert(r->replica == 1 || r->replica == 2);
    const cJSON *p[16];
    ck_assert_int_eq(flow_of(j, 0, p), 5);
    ck_assert_str_eq(str_of(p[0], "ph"), "s");
    ck_assert_int_eq((int)num_of(p[0], "pid"), 4);
    ck_assert_int_eq((int)num_of(p[0], "tid"), 0);
    expect_point(j, p[1], "t", 1, 0, "step", r->scheduled, r->prefill_end);
    const cJSON *x = expect_point(j, p[2], "t", 3, 0, "kv_transfer", r->xfer_start, r->xfer_end);
    ck_assert_int_eq((int)num_of(cJSON_GetObjectItemCaseSensitive(x, "args"), "request"), 0);
    expect_point(j, p[3], "t", 2, r->replica, "step", r->decode_start, -1);
    expect_point(j, p[4], "f", 2, r->replica, "step", -1, r->last_token);
    cJSON_Delete(j);
    tu_done(sc, res);
}
END_TEST

/* Shared axes: a run's reach is its data's (the largest TTFT, the last sample), the JSON's
 * servesim.axes reads back to the same numbers, a larger reach read from another run wins,
 * and the report's TTFT chart then runs to it (ticks to 1000 ms for a 1000 ms reach, where
 * this run's own TTFTs stay far below). */
START_TEST(test_axes_from_another_run)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, colocated, NULL, 0, &sc);
    sv_run_axes_t own, back, wide;
    sv_run_axes_of(res, &own);
    double ttft = 0;
    for (int i = 0; i < 40; i++)
        if (sv_req_ttft(&res->pool.r[i]) * 1e3 > ttft) ttft = sv_req_ttft(&res->pool.r[i]) * 1e3;
    ck_assert(own.ttft_ms == ttft);
    ck_assert(ttft < 400);
    size_t ns;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &ns);
    ck_assert(own.time_s == sm[ns - 1].t);
    char dir[] = "/tmp/sv_report_XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    sv_error_t err;
    char json[256];
    snprintf(json, sizeof json, "%s", tmp_path(dir, "r.json"));
    ck_assert_int_eq(sv_report_json(res, 0, json, &err), 0);
    memset(&back, 0, sizeof back);
    ck_assert_msg(sv_run_axes_read(json, &back, &err) == 0, "%s", err.msg);
    ck_assert(back.ttft_ms == own.ttft_ms && back.tpot_ms == own.tpot_ms);
    ck_assert(back.phase_ms == own.phase_ms && back.time_s == own.time_s);
    ck_assert(back.requests == own.requests && back.kv_pct == own.kv_pct);
    wide = own;
    wide.ttft_ms = 1000;
    ck_assert_int_eq(sv_run_axes_read(json, &wide, &err), 0);
    ck_assert(wide.ttft_ms == 1000 && wide.tpot_ms == own.tpot_ms);
    ck_assert_int_eq(sv_html_run_axes(res, &wide, "other.json", tmp_path(dir, "r.html"), &err), 0);
    char *svg = slurp(tmp_path(dir, "r-ttft-cdf.svg"));
    ck_assert_msg(strstr(svg, ">1000</text>") != NULL, "the TTFT axis does not reach 1000 ms");
    free(svg);
    char *html = slurp(tmp_path(dir, "r.html"));
    ck_assert(strstr(html, "Shared axes (this run and other.json)") != NULL);
    free(html);
    ck_assert_int_eq(sv_html_run(res, tmp_path(dir, "own.html"), &err), 0);
    svg = slurp(tmp_path(dir, "own-ttft-cdf.svg"));
    ck_assert(strstr(svg, ">1000</text>") == NULL);
    free(svg);
    rm_dir(dir);
    tu_done(sc, res);
}
END_TEST

/* The report of yaml (with sets) as text; the directory is removed. */
static char *html_of(const sv_result_t *res)
{
    char dir[] = "/tmp/sv_report_XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    sv_error_t err;
    ck_assert_msg(sv_html_run(res, tmp_path(dir, "r.html"), &err) == 0, "%s", err.msg);
    char *html = slurp(tmp_path(dir, "r.html"));
    rm_dir(dir);
    return html;
}

static void expect_in(const char *html, const char *want)
{
    ck_assert_msg(strstr(html, want) != NULL, "the report lacks %s", want);
}

/* The percentile p of summary s's standard list (50, 90, 95, 99 are always there). */
static double pct_of(const sv_summary_t *s, const sv_stat_t *st, double p)
{
    for (int i = 0; i < s->npcts; i++)
        if (s->pcts[i] == p) return st->pct[i];
    ck_abort_msg("no p%g in the summary", p);
    return NAN;
}

/* A run with none of the optional features has none of their sections (so the reports of
 * such runs are as they were). */
/* The x tick labels of a chart, joined by '|' (ticks are the only middle-anchored grey text). */
static void x_ticks(const char *svg, char *out, size_t n)
{
    static const char key[] = "text-anchor=\"middle\" fill=\"#333\">";
    out[0] = '\0';
    for (const char *p = strstr(svg, key); p; p = strstr(p, key)) {
        p += sizeof key - 1;
        size_t len = strcspn(p, "<"), have = strlen(out);
        if (have + len + 2 < n) {
            memcpy(out + have, p, len);
            out[have + len] = '|';
            out[have + len + 1] = '\0';
        }
    }
}

/* Two charts over the same run's seconds: the waiting queue has a value every second, TTFT
 * only where first tokens came (NAN after second 140, as in the lab's queue lesson). With
 * the run's end as the reach both span 0..160 in steps of 20; each on its own, TTFT's axis
 * would stop at 140. */
START_TEST(test_time_charts_share_one_axis)
{
    double t[160], q[160], ttft[160];
    for (int i = 0; i < 160; i++) {
        t[i] = i + 1;
        q[i] = i % 7;
        ttft[i] = i < 140 ? 50 + i : NAN;
    }
    sv_chart_spec_t a, b;
    memset(&a, 0, sizeof a);
    a.title = "queue", a.xlabel = "time (s)", a.ylabel = "requests";
    a.s[a.ns++] = (sv_chart_series_t){.name = "waiting", .x = t, .y = q, .n = 160};
    a.hline = a.vline = NAN;
    a.linear_x = 1;
    b = a;
    b.title = "ttft";
    b.s[0] = (sv_chart_series_t){.name = "TTFT", .x = t, .y = ttft, .n = 160};
    char ta[256], tb[256];
    char *own = sv_chart_lines(&b);
    x_ticks(own, tb, sizeof tb);
    ck_assert_str_eq(tb, "0|20|40|60|80|100|120|140|");
    free(own);
    a.xmax = b.xmax = t[159];
    char *sa = sv_chart_lines(&a), *sb = sv_chart_lines(&b);
    x_ticks(sa, ta, sizeof ta);
    x_ticks(sb, tb, sizeof tb);
    ck_assert_str_eq(ta, "0|20|40|60|80|100|120|140|160|");
    ck_assert_str_eq(tb, ta);
    free(sa);
    free(sb);
}
END_TEST

START_TEST(test_html_no_optional_sections)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, colocated, NULL, 0, &sc);
    char *html = html_of(res);
    const char *absent[] = {"<h2>Contract", "<h2>Request classes", "<h2>Sessions",
                            "<h2>Cost and energy", "Client-server round trip"};
    for (int i = 0; i < 5; i++)
        ck_assert_msg(strstr(html, absent[i]) == NULL, "unexpected %s", absent[i]);
    free(html);
    tu_done(sc, res);
}
END_TEST

static const char *classes =
    "name: cls\nseed: 5\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
    "engine: {max_num_seqs: 64, max_num_batched_tokens: 4096}\n"
    "workload:\n  num_requests: 60\n  rate: 10\n  classes:\n"
    "    - {name: chat, share: 0.7, input: 400, output: 60, "
    "slo: {ttft_ms: {p99: 4000}, tpot_ms: {per_request: 50, p90: 60}}}\n"
    "    - {name: batch, share: 0.3, priority: 1, input: 2000, output: 100, "
    "slo: {e2el_ms: {p50: 1}}}\n";

/* Classes with percentile budgets: a Contract section with the verdict (batch's e2el p50
 * budget of 1 ms cannot be met), a budget row whose value is chat's p99 TTFT, and a
 * Request classes table whose chat row has chat's completed count and p99 TTFT. */
START_TEST(test_html_contract_and_classes)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, classes, NULL, 0, &sc);
    ck_assert_ptr_nonnull(res->class_summary);
    const sv_summary_t *chat = &res->class_summary[0];
    ck_assert_int_gt(chat->completed, 0);
    char *html = html_of(res);
    char want[256];
    expect_in(html, "<h2>Contract</h2>");
    expect_in(html, "missed</b>, worst broken: batch: e2el p50");
    double t99 = pct_of(chat, &chat->ttft, 99.0);
    snprintf(want, sizeof want,
             "<tr><td class=\"l\">chat</td><td class=\"l\">ttft p99 ms</td><td>%.2f</td>"
             "<td>4000.00</td><td>%+.2f</td><td class=\"l\">met</td></tr>",
             t99, 4000.0 - t99);
    expect_in(html, want);
    expect_in(html, "<h2>Request classes</h2>");
    snprintf(want, sizeof want,
             "<tr><td class=\"l\">chat</td><td>0.70</td><td>0</td><td>%ld</td><td>%ld</td>",
             chat->completed, chat->failed);
    expect_in(html, want);
    snprintf(want, sizeof want, "<td>%.2f</td><td>%.2f</td>", t99, pct_of(chat, &chat->tpot, 99.0));
    expect_in(html, want);
    free(html);
    tu_done(sc, res);
}
END_TEST

/* The configuration block of a class workload: a classes.NAME section per class (share,
 * priority, lengths, the SLO in words), "SLOs: per class", and no top-level lengths. */
START_TEST(test_json_config_classes)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, classes, NULL, 0, &sc);
    char dir[] = "/tmp/sv_report_XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    sv_error_t err;
    ck_assert_msg(sv_report_json(res, 0, tmp_path(dir, "r.json"), &err) == 0, "%s", err.msg);
    char *text = slurp(tmp_path(dir, "r.json"));
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "the JSON does not parse");
    const cJSON *c = get(get(j, "servesim"), "config");
    const cJSON *chat = get(get(c, "classes"), "chat"), *batch = get(get(c, "classes"), "batch");
    expect_num(chat, "share", 0.7);
    expect_num(batch, "priority", 1);
    expect_str(chat, "input", "fixed 400");
    expect_str(chat, "slo", "TPOT 50 ms per request; ttft p99 4000 ms, tpot p90 60 ms");
    expect_str(batch, "slo", "e2el p50 1 ms");
    expect_str(get(c, "slo"), "slos", "per class");
    ck_assert_msg(cJSON_GetObjectItemCaseSensitive(get(c, "workload"), "input") == NULL,
                  "a class workload's config shows the unused top-level input");
    cJSON_Delete(j);
    free(text);
    rm_dir(dir);
    tu_done(sc, res);
}
END_TEST

static const char *sessions =
    "name: sess\nseed: 9\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
    "engine: {max_num_seqs: 64, max_num_batched_tokens: 4096}\n"
    "workload:\n  rate: 2\n  input: 300\n  output: 40\n"
    "  sessions: {count: 20, turns: 3, think_time_ms: 500, message: 50}\n";

/* Sessions: the section, its lines with the summary's task latency, and the per-call
 * table's first row with call 1's TTFT p50; and no "Request rate configured" (the terminal
 * prints the session rate in the sessions block instead). */
START_TEST(test_html_sessions)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, sessions, NULL, 0, &sc);
    const sv_session_summary_t *ss = &res->session_sum;
    ck_assert_int_eq(ss->sessions, 20);
    ck_assert_int_eq(ss->nturn, 3);
    ck_assert_int_eq(ss->turn[0].requests, 20);
    char *html = html_of(res);
    char want[256];
    expect_in(html, "<h2>Sessions (chain, with history)</h2>");
    snprintf(want, sizeof want,
             "<tr><th class=\"l\">Session duration P50/P90/P99 (s)</th><td class=\"l\">"
             "%.2f / %.2f / %.2f</td></tr>",
             ss->duration_p50, ss->duration_p90, ss->duration_p99);
    expect_in(html, want);
    snprintf(want, sizeof want,
             "<tr><td class=\"l\">1</td><td>20</td><td>%ld</td><td>%.2f</td><td>%.2f</td>",
             ss->turn[0].completed, ss->turn[0].ttft_p50_ms, ss->turn[0].ttft_p99_ms);
    expect_in(html, want);
    expect_in(html, "<tr><th class=\"l\">Session rate configured (per s)</th><td "
                    "class=\"l\">2.00</td></tr>");
    ck_assert_msg(strstr(html, "Request rate configured") == NULL,
                  "a request rate row for a sessions run");
    free(html);
    tu_done(sc, res);
}
END_TEST

/* A cost map: the finance section with the total cost as sv_finance_of() computes it. */
START_TEST(test_html_finance)
{
    const char *sets[] = {"cost={host_w_per_server: 2000, gpus_per_server: 8, pue: 1.3, "
                          "energy_usd_per_kwh: 0.08}"};
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, colocated, sets, 1, &sc);
    sv_finance_t x;
    sv_finance_of(res, &x);
    ck_assert(x.total_usd > 0);
    tu_assert_rel(x.wall_energy_j, 1.3 * (x.gpu_energy_j + x.host_energy_j), 1e-12);
    char *html = html_of(res);
    char want[256];
    expect_in(html, "<h2>Cost and energy (finance)</h2>");
    snprintf(want, sizeof want,
             "<tr><th class=\"l\">Total cost ($)</th><td class=\"l\">%.4f</td></tr>", x.total_usd);
    expect_in(html, want);
    snprintf(want, sizeof want,
             "<tr><th class=\"l\">Energy at the wall (Wh, PUE 1.30)</th><td class=\"l\">%.2f"
             "</td></tr>",
             x.wall_energy_j / 3600.0);
    expect_in(html, want);
    free(html);
    tu_done(sc, res);
}
END_TEST

/* A client-server round trip: its line in servesim's block, as the terminal words it. */
START_TEST(test_html_network)
{
    const char *sets[] = {"network.rtt_ms=40"};
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, colocated, sets, 1, &sc);
    char *html = html_of(res);
    expect_in(html, "<tr><th class=\"l\">Client-server round trip</th><td class=\"l\">40 ms, "
                    "half each way</td></tr>");
    free(html);
    tu_done(sc, res);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_html_labels_the_configured_percentile);
    tcase_add_test(tc, test_html_labels_every_percentile);
    tcase_add_test(tc, test_json_config_block);
    tcase_add_test(tc, test_json_config_chunked_prefill_off);
    tcase_add_test(tc, test_html_pool_sections);
    tcase_add_test(tc, test_trace_events);
    tcase_add_test(tc, test_trace_cut_at_the_step_limit);
    tcase_add_test(tc, test_trace_flows_colocated);
    tcase_add_test(tc, test_trace_flows_disaggregated);
    tcase_add_test(tc, test_axes_from_another_run);
    tcase_add_test(tc, test_html_no_optional_sections);
    tcase_add_test(tc, test_html_contract_and_classes);
    tcase_add_test(tc, test_json_config_classes);
    tcase_add_test(tc, test_html_sessions);
    tcase_add_test(tc, test_html_finance);
    tcase_add_test(tc, test_html_network);
    tcase_add_test(tc, test_time_charts_share_one_axis);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
