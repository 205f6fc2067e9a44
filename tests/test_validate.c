/*
 * Unit tests of `servesim validate`'s disaggregated rows: a row's layout builds the pools
 * it names (hand-counted workers, GPUs and settings), its per-GPU throughput divides by
 * every GPU of both pools, and a malformed layout fails with one line naming the file,
 * line, column and key; rows of two versions of one engine run on their own profiles and
 * are printed so; a row's prefill pool takes its own per-request cost.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "servesim/cluster/schema.h"
#include "servesim/cost/perf.h"
#include "servesim/cluster/sim.h"
#include "servesim/studies/validate.h"
#include "testutil.h"

static sv_catalog_t *cat;
static char path[64];

static void setup(void)
{
    cat = tu_catalog();
}

static void teardown(void)
{
    sv_catalog_free(cat);
    if (path[0]) unlink(path);
    path[0] = '\0';
}

/* A one-row table (header with the optional layout column) in a temporary file. */
static const char *table(const char *row)
{
    snprintf(path, sizeof path, "/tmp/sv-validate-XXXXXX");
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    ck_assert(f != NULL);
    fprintf(f,
            "# a comment\nfamily,kind,model,gpu,tp,weight_dtype,kv_dtype,profile,input,output,"
            "batch,concurrency,requests,measured,unit,fitted,sets,source,layout\n%s\n",
            row);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

START_TEST(test_layout_pools)
{
    /* The InferenceX SGLang run of 1 prefill worker TP8 EP8 DPA8 and 6 decode workers
     * TP8 EP8 DPA8: 7 workers of 8 GPUs, 56 GPUs. */
    sv_validation_t *v = NULL;
    sv_error_t err;
    const char *p = table(
        "x,throughput,deepseek-r1,h200,0,fp8,bf16,sglang,1024,1024,0,128,1280,154.2,"
        "total_tok_s_gpu,no,engine.ignore_eos=true;pools.decode.engine.max_num_seqs=512;"
        "hardware.gpu_memory_utilization=0.8,s,"
        "prefill workers=1 tp=8 ep=8 dp_attention=8 + decode workers=6 tp=8 ep=8 dp_attention=8");
    ck_assert_msg(sv_validation_load(p, &v, &err) == 0, "%s", err.msg);
    const sv_vrow_t *w = &v->rows[0];
    ck_assert_int_eq(w->npools, 2);
    ck_assert_int_eq(sv_vrow_gpus(w), 56);
    sv_scenario_t *sc = NULL;
    ck_assert_msg(sv_validation_scenario(w, cat, &sc, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sc->npools, 2);
    ck_assert(sc->disaggregated);
    ck_assert_int_eq(sc->first_token_at_decode, 1);
    ck_assert_str_eq(sc->link.kind, "infiniband");
    ck_assert(fabs(sc->link.bw_per_gpu - 50e9) < 1.0);
    const sv_pool_cfg_t *pre = &sc->pools[0], *dec = &sc->pools[1];
    ck_assert_int_eq(pre->role, SV_ROLE_PREFILL);
    ck_assert_int_eq(dec->role, SV_ROLE_DECODE);
    ck_assert_int_eq(pre->replicas, 1);
    ck_assert_int_eq(dec->replicas, 6);
    ck_assert_int_eq(pre->perf.tp, 8);
    ck_assert_int_eq(pre->perf.ep, 8);
    ck_assert_int_eq(pre->perf.dp_attention, 8);
    ck_assert_int_eq(dec->perf.dp_attention, 8);
    /* pools.decode.KEY sets the decode pool alone; engine.KEY and hardware.KEY both. */
    ck_assert_int_eq(dec->engine.max_num_seqs, 512);
    ck_assert_int_eq(pre->engine.max_num_seqs, 1024);
    ck_assert(pre->engine.ignore_eos && dec->engine.ignore_eos);
    ck_assert(fabs(pre->perf.gpu_memory_utilization - 0.8) < 1e-12 &&
              fabs(dec->perf.gpu_memory_utilization - 0.8) < 1e-12);
    sv_scenario_free(sc);
    sv_validation_free(v);
}
END_TEST

START_TEST(test_per_gpu_divisor)
{
    /* One prefill and three decode Llama-3.1-8B workers of one H100 each: the row's per-GPU
     * throughput is the run's total token throughput over 4 GPUs. */
    sv_validation_t *v = NULL;
    sv_error_t err;
    const char *p = table("x,throughput,llama-3.1-8b,h100-sxm,0,bf16,bf16,vllm,512,64,0,8,40,100,"
                          "total_tok_s_gpu,no,,s,prefill workers=1 tp=1 + decode workers=3 tp=1");
    ck_assert_msg(sv_validation_load(p, &v, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sv_vrow_gpus(&v->rows[0]), 4);
    ck_assert_msg(sv_validation_run(v, cat, NULL, &err) == 0, "%s", err.msg);
    sv_scenario_t *sc = NULL;
    sv_result_t *res = NULL;
    ck_assert_msg(sv_validation_scenario(&v->rows[0], cat, &sc, &err) == 0, "%s", err.msg);
    ck_assert_msg(sv_sim_run(sc, &res, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(res->summary.completed, 40);
    double total = res->summary.total_token_throughput;
    ck_assert(total > 0);
    ck_assert(v->rows[0].simulated == total / 4.0);
    sv_result_free(res);
    sv_scenario_free(sc);
    sv_validation_free(v);
}
END_TEST

START_TEST(test_engine_versions)
{
    /* Two versions of one engine in one family (InferenceX's MI325X rows ran SGLang 0.5.12
     * and 0.5.9's ROCm build): the 0.5.9 row runs on SGLang's scheduler with that build's
     * MoE and MLA terms (models/engines.yaml: 0.56714, 0.28018, 91.007) in place of the
     * MI325X's, and the table names both profiles, and the version on its row. */
    ck_assert_str_eq(sv_engine_of_profile("sglang-0.5.9-rocm"), "sglang");
    ck_assert_str_eq(sv_engine_of_profile("sglang"), "sglang");
    ck_assert_ptr_null(sv_engine_of_profile("sglangx"));
    ck_assert_ptr_null(sv_engine_of_profile("eager"));
    sv_validation_t *v = NULL;
    sv_error_t err;
    const char *p = table("x,step,deepseek-r1,mi325x,8,fp8,fp8,sglang,1024,16,8,0,0,30,ms,no,,s,\n"
                          "x,step,deepseek-r1,mi325x,8,fp8,fp8,sglang-0.5.9-rocm,1024,16,8,0,0,30,"
                          "ms,no,,s,\n"
                          "x,throughput,deepseek-r1,mi325x,8,fp8,fp8,sglang-0.5.9-rocm,1024,16,0,"
                          "4,8,30,total_tok_s_gpu,no,,s,");
    ck_assert_msg(sv_validation_load(p, &v, &err) == 0, "%s", err.msg);
    ck_assert_msg(sv_validation_run(v, cat, NULL, &err) == 0, "%s", err.msg);
    double now = v->rows[0].simulated, old = v->rows[1].simulated;
    sv_scenario_t *sc = NULL;
    ck_assert_msg(sv_validation_scenario(&v->rows[2], cat, &sc, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sc->pools[0].engine.scheduler, SV_SCHED_SGLANG);
    ck_assert_str_eq(sc->pools[0].perf.engine, "sglang-0.5.9-rocm");
    ck_assert_str_eq(sc->pools[0].engine_note, "");
    sv_scenario_free(sc);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sv_validation_print(v, f);
    fclose(f);
    ck_assert_msg(strstr(text, "(deepseek-r1, mi325x x8, fp8/fp8, profiles sglang, "
                               "sglang-0.5.9-rocm)  [check only]"),
                  "%s", text);
    ck_assert_msg(strstr(text, "  step       in 1024 out 16 batch 8 sglang-0.5.9-rocm "), "%s",
                  text);
    ck_assert_msg(!strstr(text, "batch 8 sglang "), "%s", text);
    free(text);
    sv_validation_free(v);
    unlink(path);
    /* the same step on the sglang profile, the MI325X given the 0.5.9 build's terms */
    sv_catalog_t copy = *cat;
    copy.gpus = malloc(cat->ngpus * sizeof *cat->gpus);
    ck_assert(copy.gpus != NULL);
    memcpy(copy.gpus, cat->gpus, cat->ngpus * sizeof *cat->gpus);
    const sv_gpu_t *g;
    ck_assert_int_eq(sv_catalog_gpu(&copy, "mi325x", &g, &err), 0);
    sv_gpu_t *m = &copy.gpus[g - copy.gpus];
    m->curve[SV_CV_GROUPED_EFF] = 0.56714;
    m->curve[SV_CV_MLA_EFF] = 0.28018;
    m->curve[SV_CV_GROUPED_N_HALF] = 91.007;
    p = table("x,step,deepseek-r1,mi325x,8,fp8,fp8,sglang,1024,16,8,0,0,30,ms,no,,s,");
    ck_assert_msg(sv_validation_load(p, &v, &err) == 0, "%s", err.msg);
    ck_assert_msg(sv_validation_run(v, &copy, NULL, &err) == 0, "%s", err.msg);
    ck_assert_double_eq(v->rows[0].simulated, old);
    ck_assert(old > 1.2 * now); /* the older build's step at batch 8 is the slower */
    sv_validation_free(v);
    free(copy.gpus);
}
END_TEST

START_TEST(test_prefill_request_cost)
{
    /* The Dynamo SGLang rows' workers (tools/gen-inferencex-disagg): the prefill pool pays
     * 12 ms a request (pools.prefill.seq_overhead_us=12000), the decode pool 3.5 ms a step
     * (pools.decode.iteration_overhead_ms=3.5). A prefill step of four 1,024-token prompts
     * costs 4 x 12 ms per sequence and the sglang profile's 1 ms per step on the prefill
     * pool, 4 x the profile's 10 us and 3.5 ms on the decode pool. */
    sv_validation_t *v = NULL;
    sv_error_t err;
    const char *p = table(
        "x,ttft,deepseek-r1,h200,0,fp8,bf16,sglang,1024,1024,0,4,40,1,ms,no,"
        "engine.ignore_eos=true;pools.prefill.seq_overhead_us=12000;"
        "pools.decode.iteration_overhead_ms=3.5,s,"
        "prefill workers=1 tp=8 + decode workers=6 tp=8");
    ck_assert_msg(sv_validation_load(p, &v, &err) == 0, "%s", err.msg);
    sv_scenario_t *sc = NULL;
    ck_assert_msg(sv_validation_scenario(&v->rows[0], cat, &sc, &err) == 0, "%s", err.msg);
    const sv_gpu_t *g;
    const sv_model_t *m;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h200", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "deepseek-r1", &m, &err), 0);
    sv_chunk_t c[4];
    for (int i = 0; i < 4; i++)
        c[i] = (sv_chunk_t){.new_tokens = 1024, .cached_tokens = 0, .last = 1};
    sv_batch_t b = {.chunks = c, .n_chunks = 4};
    const double seq[2] = {4 * 12e-3, 4 * 10e-6}, step[2] = {1.0e-3, 3.5e-3};
    for (int k = 0; k < 2; k++) {
        sv_perf_t perf;
        ck_assert_msg(sv_perf_init(&perf, g, m, &sc->pools[k].perf, &err) == 0, "%s", err.msg);
        sv_step_cost_t cost;
        sv_perf_step(&perf, &b, &cost);
        ck_assert_msg(fabs(cost.eng_seq - seq[k]) < 1e-12, "pool %d: %g", k, cost.eng_seq);
        ck_assert_msg(fabs(cost.eng_step - step[k]) < 1e-12, "pool %d: %g", k, cost.eng_step);
    }
    sv_scenario_free(sc);
    sv_validation_free(v);
}
END_TEST

/* Loading the row fails; the message holds want. */
static void bad(const char *row, const char *want)
{
    sv_validation_t *v = NULL;
    sv_error_t err;
    const char *p = table(row);
    ck_assert_int_eq(sv_validation_load(p, &v, &err), SV_EINVAL);
    ck_assert(v == NULL);
    char full[512];
    snprintf(full, sizeof full, "%s:3: %s", p, want);
    ck_assert_msg(strstr(err.msg, full), "%s (wanted %s)", err.msg, full);
    unlink(path);
}

START_TEST(test_bad_layouts)
{
    const char *head = "x,throughput,deepseek-r1,h200,0,fp8,bf16,sglang,1024,1024,0,4,40,1,"
                       "total_tok_s_gpu,no,,s,";
    static const char *const cases[][2] = {
        {"prefill workers=1 tp=8 + decode workers=9 tpp=8",
         "decode: unknown key 'tpp' (expected workers, tp, ep or dp_attention)"},
        {"prefill workers=0 tp=8 + decode workers=9 tp=8",
         "prefill workers: expected a whole number in [1, 1024], got '0'"},
        {"decode workers=9 tp=8", "pool 1: expected 'prefill' first, got 'decode'"},
        {"prefill workers=1 tp=8", "expected a prefill and a decode pool joined by '+', got 1"},
        {"prefill workers=1 tp=8 ep=3 + decode workers=1 tp=8",
         "prefill: ep (3) and dp_attention (1) must divide tp (8)"},
        {"prefill tp=8 + decode workers=1 tp=8", "prefill: missing key 'workers'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char row[512], want[256];
        snprintf(row, sizeof row, "%s%s", head, cases[i][0]);
        snprintf(want, sizeof want, "column 'layout': %s", cases[i][1]);
        bad(row, want);
    }
    /* tp 0 goes with a layout, and a layout with tp 0. */
    bad("x,throughput,deepseek-r1,h200,8,fp8,bf16,sglang,1024,1024,0,4,40,1,total_tok_s_gpu,no,,s,"
        "prefill workers=1 tp=8 + decode workers=1 tp=8",
        "column 'tp': a row with a layout gives tp 0 (its pools give theirs)");
    bad("x,throughput,deepseek-r1,h200,0,fp8,bf16,sglang,1024,1024,0,4,40,1,total_tok_s_gpu,no,,s,",
        "column 'tp': expected a whole number >= 1, got '0'");
    bad("x,step,deepseek-r1,h200,0,fp8,bf16,sglang,1024,1024,4,0,0,1,ms,no,,s,"
        "prefill workers=1 tp=8 + decode workers=1 tp=8",
        "column 'layout': a step row is one batch of the cost model");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("validate");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_layout_pools);
    tcase_add_test(tc, test_per_gpu_divisor);
    tcase_add_test(tc, test_bad_layouts);
    tcase_add_test(tc, test_engine_versions);
    tcase_add_test(tc, test_prefill_request_cost);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
