/*
 * Unit tests of scenario loading: defaults, overrides, relative paths, and bad input
 * reported at its file, line, column and key.
 */
#include <math.h>

#include "servesim/cluster/scenario.h"
#include "servesim/cluster/schema.h"
#include "servesim/cluster/sim.h"
#include "testutil.h"

static sv_catalog_t *cat;

static void setup(void)
{
    cat = tu_catalog();
}

static void teardown(void)
{
    sv_catalog_free(cat);
}

static int load(const char *name, const char **sets, int n, sv_scenario_t **sc, sv_error_t *err)
{
    return sv_scenario_load(tu_data(name), sets, n, cat, sc, err);
}

START_TEST(test_defaults_and_overrides)
{
    sv_scenario_t *sc;
    sv_error_t err;
    const char *sets[] = {"engine.max_num_seq=32"}; /* the typo survives an override */
    ck_assert_int_eq(load("unknown_key.yaml", sets, 1, &sc, &err), SV_ENOKEY);
    const char *fix[] = {"engine={max_num_seqs: 64}", "hardware.tp=2", "seed=9",
                         "workload.output={dist: uniform, min: 5, max: 9}"};
    ck_assert_msg(load("unknown_key.yaml", fix, 4, &sc, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sc->pools[0].engine.max_num_seqs, 64);
    ck_assert_int_eq(sc->pools[0].perf.tp, 2);
    ck_assert(sc->seed == 9);
    ck_assert_int_eq(sc->workload.output.kind, SV_LEN_UNIFORM);
    ck_assert_int_eq(sc->pools[0].engine.scheduler, SV_SCHED_VLLM);
    ck_assert_int_eq(sc->pools[0].engine.max_num_batched_tokens, 8192);
    ck_assert_int_eq(sc->pools[0].engine.block_size, 16);
    ck_assert_int_eq(sc->pools[0].replicas, 1);
    ck_assert(isnan(sc->metrics.slo_ttft_ms));
    ck_assert_int_eq(sc->metrics.npercentiles, 1);
    ck_assert(sc->metrics.percentiles[0] == 99.0);
    ck_assert_str_eq(sc->name, "unknown_key");
    sv_scenario_free(sc);
}
END_TEST

START_TEST(test_bad_input_is_located)
{
    sv_scenario_t *sc = NULL;
    sv_error_t err;
    ck_assert_int_eq(load("bad_yaml.yaml", NULL, 0, &sc, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "bad_yaml.yaml:5:1: malformed YAML") != NULL, "%s", err.msg);
    ck_assert_int_eq(load("unknown_key.yaml", NULL, 0, &sc, &err), SV_ENOKEY);
    ck_assert_msg(strstr(err.msg, "unknown_key.yaml:5:16: unknown key 'engine.max_num_seq' "
                                  "(did you mean 'engine.max_num_seqs'?)") != NULL,
                  "%s", err.msg);
    ck_assert_int_eq(load("negative_rate.yaml", NULL, 0, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "negative_rate.yaml:6:9: workload.rate: expected requests per "
                                  "second > 0 or inf, got '-2'") != NULL,
                  "%s", err.msg);
    ck_assert_int_eq(load("bad_trace_scenario.yaml", NULL, 0, &sc, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "bad_trace.csv:3: column ContextTokens: expected a whole number "
                                  ">= 1, got 'abc'") != NULL,
                  "%s", err.msg);
    const char *tp[] = {"hardware.tp=x"};
    ck_assert_int_eq(load("negative_rate.yaml", tp, 1, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "--set hardware.tp=x: hardware.tp: expected a whole number") !=
                      NULL,
                  "%s", err.msg);
    const char *gpu[] = {"hardware.gpu=h100x"};
    ck_assert_int_eq(load("negative_rate.yaml", gpu, 1, &sc, &err), SV_ENOTFOUND);
    ck_assert_msg(strstr(err.msg, "hardware.gpu: unknown GPU 'h100x'") != NULL, "%s", err.msg);
    const char *sched[] = {"engine.scheduler=fifo"};
    ck_assert_int_eq(load("negative_rate.yaml", sched, 1, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg,
                         "engine.scheduler: expected vllm, vllm-v0, orca, static, trtllm or sglang, "
                         "got 'fifo'") != NULL,
                  "%s", err.msg);
    const char *none[] = {"workload.rate=1", "workload.num_requests="};
    ck_assert_int_eq(load("negative_rate.yaml", none, 2, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "give num_requests or duration_s") != NULL, "%s", err.msg);
    const char *inf[] = {"workload.rate=-2", "workload.rate=inf",
                         "workload.num_requests=", "workload.duration_s=10"};
    ck_assert_int_eq(load("negative_rate.yaml", inf, 4, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "rate inf sends every request at once") != NULL, "%s", err.msg);
    ck_assert_ptr_null(sc);
    ck_assert_int_eq(sv_scenario_load("/nonexistent.yaml", NULL, 0, cat, &sc, &err), SV_EIO);
}
END_TEST

START_TEST(test_trace_scenario_runs)
{
    /* A trace path is relative to the scenario file; arrivals follow it, at 2x speed. */
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_msg(load("trace_scenario.yaml", NULL, 0, &sc, &err) == 0, "%s", err.msg);
    sv_result_t *res;
    ck_assert_int_eq(sv_sim_run(sc, &res, &err), 0);
    ck_assert_int_eq(res->summary.completed, 3);
    ck_assert(res->pool.r[1].arrival == res->pool.r[1].start);
    tu_assert_rel(res->pool.r[1].arrival, 0.25, 1e-9);
    tu_assert_rel(res->pool.r[2].arrival, 1.25, 1e-9);
    ck_assert_int_eq(res->summary.total_input, 600);
    ck_assert_int_eq(res->summary.total_output, 60);
    /* The trace is recorded as an input, so that outputs can refuse to overwrite it. */
    ck_assert_int_eq(sc->ninputs, 1);
    ck_assert_str_eq(sc->inputs[0], tu_data("small_trace.csv"));
    sv_result_free(res);
    sv_scenario_free(sc);
}
END_TEST

/* Variants of one parsed source: each is what sv_scenario_load with the base and its own
 * overrides gives; a trace they share is read once and lent; the source's own document
 * is never changed by a variant's overrides; a bad override is located as in a load. */
START_TEST(test_variants_of_one_source)
{
    const char *base[] = {"engine.max_num_seqs=64"};
    sv_scenario_src_t *src;
    sv_error_t err;
    ck_assert_msg(sv_scenario_src_open(tu_data("trace_scenario.yaml"), base, 1, &src, &err) == 0,
                  "%s", err.msg);
    const char *v1[] = {"engine.max_num_seqs=8"}, *v2[] = {"hardware.tp=2"};
    sv_scenario_t *a, *b, *c, *ref;
    ck_assert_int_eq(sv_scenario_src_load(src, v1, 1, cat, &a, &err), 0);
    ck_assert_int_eq(sv_scenario_src_load(src, v2, 1, cat, &b, &err), 0);
    ck_assert_int_eq(a->pools[0].engine.max_num_seqs, 8);
    ck_assert_int_eq(b->pools[0].engine.max_num_seqs, 64); /* v1 did not reach the source */
    ck_assert_int_eq(b->pools[0].perf.tp, 2);
    ck_assert_ptr_nonnull(a->trace);
    ck_assert_ptr_eq(a->trace, b->trace); /* read once */
    const char *both[] = {"engine.max_num_seqs=64", "hardware.tp=2"};
    ck_assert_int_eq(load("trace_scenario.yaml", both, 2, &ref, &err), 0);
    ck_assert_int_eq(ref->pools[0].engine.max_num_seqs, b->pools[0].engine.max_num_seqs);
    ck_assert_int_eq(ref->trace->n, b->trace->n);
    ck_assert_int_eq(ref->pools[0].perf.tp, b->pools[0].perf.tp);
    const char *bad[] = {"engine.max_num_seqs=lots"};
    ck_assert_int_eq(sv_scenario_src_load(src, bad, 1, cat, &c, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "--set engine.max_num_seqs=lots: engine.max_num_seqs:"), "%s",
                  err.msg);
    sv_scenario_free(ref);
    sv_scenario_free(a);
    sv_scenario_free(b);
    sv_scenario_src_free(src);
}
END_TEST

/* The schema's cost-model rows are exactly the keys the cost layer parses, each once; every
 * row is in a section its reader knows and has what its type needs. */
START_TEST(test_schema_rows)
{
    int ncost = 0, nperf = 0;
    for (const sv_keydef_t *k = sv_scenario_keys; k->name; k++) {
        if (k->type == SV_KEY_COST) {
            ncost++;
            int found = 0;
            for (int i = 0; sv_perf_setting_keys[i]; i++)
                found += strcmp(sv_perf_setting_keys[i], k->name) == 0;
            ck_assert_msg(found == 1, "cost row %s.%s is not a sv_perf_setting_keys key",
                          k->section, k->name);
            ck_assert_msg(strcmp(k->section, "hardware") == 0 || strcmp(k->section, "engine") == 0,
                          "cost row %s in section %s", k->name, k->section);
        }
        if (k->type == SV_KEY_ENUM) ck_assert_msg(k->nnames > 0, "%s: no names", k->name);
        if (k->type == SV_KEY_INT || k->type == SV_KEY_NUM)
            ck_assert_msg(k->lo <= k->hi && k->size > 0, "%s.%s: range or field", k->section,
                          k->name);
        if (k->type == SV_KEY_TEXT) ck_assert_msg(k->size > 1, "%s: no room", k->name);
        ck_assert_msg(sv_scenario_key(k->section, k->name) == k, "%s.%s twice", k->section,
                      k->name);
    }
    while (sv_perf_setting_keys[nperf])
        nperf++;
    ck_assert_int_eq(ncost, nperf);
    ck_assert(sv_scenario_key("engine", "max_num_seqs")->type == SV_KEY_INT);
    ck_assert(sv_scenario_key("engine", "nope") == NULL);
}
END_TEST

/* vLLM's get_batch_defaults: >= 70 GiB and not an A100: 1024 and 8192; else 256 and 2048;
 * the other schedulers 256 and 8192 on every GPU. */
START_TEST(test_batch_defaults)
{
    const sv_batch_default_t *b = sv_batch_default(1, 79.6, "h100-sxm");
    ck_assert_int_eq(b->max_num_seqs, 1024);
    ck_assert_int_eq(b->max_num_batched_tokens, 8192);
    b = sv_batch_default(1, 79.6, "a100-80gb");
    ck_assert_int_eq(b->max_num_seqs, 256);
    ck_assert_int_eq(b->max_num_batched_tokens, 2048);
    b = sv_batch_default(1, 44.4, "l40s");
    ck_assert_int_eq(b->max_num_seqs, 256);
    ck_assert_int_eq(b->max_num_batched_tokens, 2048);
    b = sv_batch_default(0, 141, "h200");
    ck_assert_int_eq(b->max_num_seqs, 256);
    ck_assert_int_eq(b->max_num_batched_tokens, 8192);
    /* Through the loader: an H200 (141 GB) with the V1 scheduler. */
    sv_scenario_t *sc;
    sv_error_t err;
    const char *fix[] = {"hardware.gpu=h200", "engine="};
    ck_assert_msg(load("unknown_key.yaml", fix, 2, &sc, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sc->pools[0].engine.max_num_seqs, 1024);
    ck_assert_int_eq(sc->pools[0].engine.max_num_batched_tokens, 8192);
    ck_assert(sc->pools[0].engine.swap_bw == 25e9); /* the row's default 25 GB/s */
    ck_assert_int_eq(sc->pools[0].defaulted, SV_DEFAULT_MAX_NUM_SEQS | SV_DEFAULT_MAX_BATCHED);
    sv_scenario_free(sc);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("scenario");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_defaults_and_overrides);
    tcase_add_test(tc, test_bad_input_is_located);
    tcase_add_test(tc, test_trace_scenario_runs);
    tcase_add_test(tc, test_variants_of_one_source);
    tcase_add_test(tc, test_schema_rows);
    tcase_add_test(tc, test_batch_defaults);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
