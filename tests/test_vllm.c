/*
 * Tests of the scheduler details that make a run match vLLM's (issue 11): requests that
 * arrive at one instant join one step; `vllm serve`'s engine defaults per GPU; the V1
 * scheduler's admission (no watermark, recompute only), long_prefill_token_threshold and
 * max_num_partial_prefills (with vLLM's 4% rule); percentile labels as Python's str();
 * and the decode starvation of the prefill-first (V0) baseline of DistServe and Splitwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "servesim/report/report.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
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

/* 16 clients send 512-token prompts at t = 0: vLLM schedules all of them in the first
 * step (16 x 512 = the 8192-token budget), so every TTFT is that one step's time. Before,
 * the first request ran alone (17 ms) and fifteen waited a whole step (238 ms). With the
 * vllm profile's defaults (current vLLM) all sixteen come through the API server together,
 * 12 ms after they are sent (engine.api_server_ms), and still share that first step, which
 * async scheduling times as max(GPU part, CPU part); without them (async scheduling off,
 * no API-server path) the step starts at t = 0 and takes the cost model's total. */
START_TEST(test_same_instant_arrivals_share_a_step)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat,
                                   "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                   "engine: {max_num_seqs: 256, max_num_batched_tokens: 8192}\n"
                                   "workload: {num_requests: 16, rate: inf, max_concurrency: 16, "
                                   "input: 512, output: 128}\n",
                                   NULL, 0, &sc);
    sv_chunk_t ch[16];
    for (int i = 0; i < 16; i++)
        ch[i] = (sv_chunk_t){.new_tokens = 512, .cached_tokens = 0, .last = 1};
    sv_batch_t b = {.chunks = ch, .n_chunks = 16};
    sv_step_cost_t cost;
    sv_perf_step(&res->pools[0].perf, &b, &cost);
    for (int i = 0; i < 16; i++) {
        const sv_req_t *r = &res->pool.r[i];
        tu_assert_rel(r->first_token - r->start, 12e-3 + tu_step_s(&cost, 1), 1e-12);
        tu_assert_rel(r->scheduled, 12e-3, 1e-12);
    }
    tu_check_accounting(res);
    tu_done(sc, res);
    const char *sync[] = {"engine.async_scheduling=false", "engine.api_server_ms=0"};
    res = tu_run_yaml(cat,
                      "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "engine: {max_num_seqs: 256, max_num_batched_tokens: 8192}\n"
                      "workload: {num_requests: 16, rate: inf, max_concurrency: 16, "
                      "input: 512, output: 128}\n",
                      sync, 2, &sc);
    for (int i = 0; i < 16; i++) {
        const sv_req_t *r = &res->pool.r[i];
        tu_assert_rel(r->first_token - r->start, cost.total, 1e-12);
        ck_assert_double_eq(r->scheduled, 0.0);
    }
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/* What the scenario leaves unset takes vLLM's `vllm serve` defaults for the GPU
 * (EngineArgs.get_batch_defaults): >= 70 GiB and not an A100: 1024 and 8192; else 256 and
 * 2048. Other schedulers keep 256 and 8192. Given values win. */
START_TEST(test_engine_defaults_per_gpu)
{
    struct {
        const char *gpu, *sched;
        long seqs, tokens;
    } cases[] = {{"h100-sxm", "vllm", 1024, 8192},   {"h200", "vllm", 1024, 8192},
                 {"a100-80gb", "vllm", 256, 2048},   {"l40s", "vllm", 256, 2048},
                 {"h100-sxm", "vllm-v0", 256, 8192}, {"a100-80gb", "orca", 256, 8192}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char yaml[512];
        snprintf(yaml, sizeof yaml,
                 "model: llama-3.1-8b\nhardware: {gpu: %s}\nengine: {scheduler: %s}\n"
                 "workload: {num_requests: 1, input: 8, output: 8}\n",
                 cases[i].gpu, cases[i].sched);
        sv_scenario_t *sc;
        sv_error_t err;
        ck_assert_msg(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err) == 0, "%s", err.msg);
        const sv_pool_cfg_t *p = &sc->pools[0];
        ck_assert_int_eq(p->engine.max_num_seqs, cases[i].seqs);
        ck_assert_int_eq(p->engine.max_num_batched_tokens, cases[i].tokens);
        ck_assert_int_eq(p->perf.max_batched_tokens, cases[i].tokens);
        ck_assert_int_eq(p->defaulted, SV_DEFAULT_MAX_NUM_SEQS | SV_DEFAULT_MAX_BATCHED);
        /* V1 keeps no admission watermark; V0 and the others keep 1%. */
        ck_assert_double_eq(p->engine.watermark, strcmp(cases[i].sched, "vllm") ? 0.01 : 0.0);
        sv_scenario_free(sc);
    }
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {max_num_seqs: 64}\n"
                                  "workload: {num_requests: 1, input: 8, output: 8}\n",
                                  NULL, 0, &sc, &err),
                     0);
    ck_assert_int_eq(sc->pools[0].engine.max_num_seqs, 64);
    ck_assert_int_eq(sc->pools[0].engine.max_num_batched_tokens, 8192);
    ck_assert_int_eq(sc->pools[0].defaulted, SV_DEFAULT_MAX_BATCHED);
    sv_scenario_free(sc);
}
END_TEST

/*
 * The engine settings beyond a step's cost follow the engine version each profile models
 * (models/engines.yaml, `scheduler_defaults`). Current vLLM main turns async scheduling on
 * unless something rules it out: vllm/config/scheduler.py leaves SchedulerConfig.
 * async_scheduling None unless it is set, and vllm/config/vllm.py's VllmConfig.
 * __post_init__ then sets it True when no pooling model, incompatible speculative method
 * or executor backend forbids it (default since vllm-project/vllm#27614); its API server's
 * request preprocessing outside the engine core took 12-15 ms at 96 concurrent requests
 * (vllm-project/vllm#21139), of which the profile takes 12. vLLM's V0 engine had no async
 * scheduling (it came to V1 as an experimental flag in vllm-project/vllm#19970), and the
 * sglang and trtllm profiles give no defaults: those pools, and Orca's and static batching
 * on the vllm profile, keep servesim's own (off, 0 ms). A value the scenario gives wins,
 * and the pool records which settings came from the profile.
 */
START_TEST(test_profile_defaults_follow_the_engine)
{
    const sv_engine_profile_t *vllm;
    ck_assert_int_eq(sv_catalog_engine(cat, "vllm", &vllm, NULL), 0);
    const sv_engine_sched_defaults_t *d = sv_engine_sched_defaults(vllm, "vllm");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->async_scheduling, 1);
    ck_assert_double_eq(d->api_server_ms, 12.0);
    ck_assert_ptr_null(sv_engine_sched_defaults(vllm, "vllm-v0"));
    const int both = SV_PROFILE_ASYNC | SV_PROFILE_API_SERVER;
    struct {
        const char *engine;
        int async;
        double api_s;
        int from;
    } cases[] = {
        {"vllm", 1, 12e-3, both},
        {"{name: vllm-v1}", 1, 12e-3, both},
        {"{scheduler: vllm}", 1, 12e-3, both},
        {"vllm-v0", 0, 0.0, 0},
        {"{name: vllm-0.6}", 0, 0.0, 0},
        {"sglang", 0, 0.0, 0},
        {"trtllm", 0, 0.0, 0},
        {"{scheduler: orca}", 0, 0.0, 0},
        {"{scheduler: static}", 0, 0.0, 0},
        {"{scheduler: vllm, profile: trtllm}", 0, 0.0, 0},
        {"{async_scheduling: false}", 0, 12e-3, SV_PROFILE_API_SERVER},
        {"{api_server_ms: 3}", 1, 3e-3, SV_PROFILE_ASYNC},
        {"{async_scheduling: false, api_server_ms: 0}", 0, 0.0, 0},
        {"{name: sglang, async_scheduling: true}", 1, 0.0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char yaml[512];
        snprintf(yaml, sizeof yaml,
                 "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\nengine: %s\n"
                 "workload: {num_requests: 1, input: 8, output: 8}\n",
                 cases[i].engine);
        sv_scenario_t *sc;
        sv_error_t err;
        ck_assert_msg(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err) == 0, "%s", err.msg);
        const sv_pool_cfg_t *p = &sc->pools[0];
        ck_assert_msg(p->engine.async_scheduling == cases[i].async, "%s", cases[i].engine);
        ck_assert_msg(fabs(p->engine.api_server - cases[i].api_s) < 1e-15, "%s", cases[i].engine);
        ck_assert_msg(p->profile_defaulted == cases[i].from, "%s", cases[i].engine);
        sv_scenario_free(sc);
    }
    /* Any profile may give defaults, for any scheduler: an sglang profile that turned its
     * overlap scheduler into async scheduling would give its pools the lag, with no API
     * path, and the vllm scheduler on that profile would still take none. */
    sv_engine_profile_t *sg = NULL;
    for (size_t i = 0; i < cat->nengines; i++)
        if (strcmp(cat->engines[i].name, "sglang") == 0) sg = &cat->engines[i];
    ck_assert_ptr_nonnull(sg);
    ck_assert_int_eq(sg->nscheds, 0);
    sg->scheds[sg->nscheds++] = (sv_engine_sched_defaults_t){
        .scheduler = "sglang", .async_scheduling = 1, .api_server_ms = NAN};
    const char *yaml[2] = {"engine: sglang", "engine: {scheduler: vllm, profile: sglang}"};
    for (int i = 0; i < 2; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n%s\n"
                 "workload: {num_requests: 1, input: 8, output: 8}\n",
                 yaml[i]);
        sv_scenario_t *sc;
        sv_error_t err;
        ck_assert_msg(tu_load_yaml(cat, text, NULL, 0, &sc, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(sc->pools[0].engine.async_scheduling, i == 0);
        ck_assert(sc->pools[0].engine.api_server == 0.0);
        ck_assert_int_eq(sc->pools[0].profile_defaulted, i == 0 ? SV_PROFILE_ASYNC : 0);
        sv_scenario_free(sc);
    }
}
END_TEST

/* V1 only recomputes; the chunk options belong to the chunked scheduler. */
START_TEST(test_v1_options_checked)
{
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {preemption: swap}\n"
                                  "workload: {num_requests: 1, input: 8, output: 8}\n",
                                  NULL, 0, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3:"), "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "engine.preemption: the vllm (V1) scheduler only recomputes"),
                  "%s", err.msg);
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {scheduler: orca, long_prefill_token_threshold: 64}\n"
                                  "workload: {num_requests: 1, input: 8, output: 8}\n",
                                  NULL, 0, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(
        strstr(err.msg, "engine.long_prefill_token_threshold: only the vllm and trtllm schedulers"),
        "%s", err.msg);
}
END_TEST

/* One 1000-token prompt with a 300-token threshold: chunks of 300, 300, 300, 100, so the
 * first token comes at the end of the fourth step, each step's time exact (synchronous
 * steps, sent straight to the engine: the cost model's totals from t = 0). */
START_TEST(test_long_prefill_threshold_chunks)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat,
                                   "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                   "engine: {long_prefill_token_threshold: 300, "
                                   "async_scheduling: false, api_server_ms: 0}\n"
                                   "workload: {num_requests: 1, input: 1000, output: 2}\n",
                                   NULL, 0, &sc);
    const sv_perf_t *p = &res->pools[0].perf;
    double t = 0.0;
    long done = 0;
    const long chunk[4] = {300, 300, 300, 100};
    for (int i = 0; i < 4; i++) {
        sv_chunk_t c = {.new_tokens = chunk[i], .cached_tokens = done, .last = i == 3};
        sv_batch_t b = {.chunks = &c, .n_chunks = 1};
        sv_step_cost_t cost;
        sv_perf_step(p, &b, &cost);
        t += cost.total;
        done += chunk[i];
    }
    tu_assert_rel(res->pool.r[0].first_token, t, 1e-12);
    ck_assert_int_eq(res->rstats[0].prefill_chunks, 4);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/* max_num_partial_prefills. vLLM V1 refuses any value but its default, 1
 * (EngineArgs._check_feature_supported, vllm/engine/arg_utils.py: "Concurrent Partial
 * Prefill"), and its scheduler never reads it: with 1, two 600-token prompts sent together
 * (budget 8192) are both prefilled in the first step. TensorRT-LLM's scheduler here keeps
 * V0's meaning: 1 lets one prompt be prefilled at a time (the second starts after the
 * first is in), and above 1 with no threshold vLLM's rule caps chunks at 4% of
 * max_model_len. Sent straight to the engine (no API-server path): the first step at t = 0. */
START_TEST(test_partial_prefill_limit)
{
    sv_scenario_t *sc;
    const char *two = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "engine: {scheduler: %s, max_num_partial_prefills: 1, api_server_ms: 0}\n"
                      "workload: {num_requests: 2, rate: inf, input: 600, output: 4}\n";
    char yaml[512];
    snprintf(yaml, sizeof yaml, two, "vllm");
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    ck_assert_double_eq(res->pool.r[0].scheduled, 0.0);
    ck_assert_double_eq(res->pool.r[1].scheduled, 0.0); /* the same step */
    ck_assert_double_eq(res->pool.r[1].first_token, res->pool.r[0].first_token);
    tu_check_accounting(res);
    tu_done(sc, res);
    snprintf(yaml, sizeof yaml, two, "trtllm");
    res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    const sv_req_t *a = &res->pool.r[0], *b = &res->pool.r[1];
    ck_assert_double_eq(a->scheduled, 0.0);
    ck_assert_double_eq(b->scheduled, a->first_token); /* admitted in the next step */
    tu_check_accounting(res);
    tu_done(sc, res);
    res = tu_run_yaml(cat,
                      "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "engine: {scheduler: trtllm, max_num_partial_prefills: 2, "
                      "max_model_len: 10000}\n"
                      "workload: {num_requests: 1, input: 1000, output: 2}\n",
                      NULL, 0, &sc);
    /* 4% of 10000 = 400: chunks 400, 400, 200. */
    ck_assert_int_eq(res->rstats[0].prefill_chunks, 3);
    tu_done(sc, res);
    sv_error_t err;
    ck_assert_int_ne(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {max_num_partial_prefills: 2}\n"
                                  "workload: {num_requests: 1, input: 10, output: 2}\n",
                                  NULL, 0, &sc, &err),
                     0);
    ck_assert_msg(strstr(err.msg, "engine.max_num_partial_prefills: vLLM V1 (the vllm scheduler) "
                                  "supports only 1"),
                  "%s", err.msg);
}
END_TEST

/* engine.chunked_prefill: false, TensorRT-LLM's default (ExecutorConfig's
 * enableChunkedContext is false; MicroBatchScheduler then schedules a context request
 * only when its whole prompt fits the tokens the step has left). Two 5000-token prompts
 * sent together under the 8192-token budget: chunked, the first step holds A whole and
 * B's first 3192 tokens, so A's first token comes at that step's cost and B is scheduled
 * at t = 0 in two chunks (three chunks in all); unchunked, the first step is A alone, B waits for the second
 * step (scheduled at A's first token) and goes in whole. A 9000-token prompt cannot fit
 * any step without chunks and fails at once (prompt_budget); other schedulers refuse the
 * key. Sent straight to the engine: the first step at t = 0. */
START_TEST(test_trtllm_chunked_prefill_off)
{
    const char *two = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "engine: {scheduler: trtllm, chunked_prefill: %s}\n"
                      "workload: {num_requests: 2, rate: inf, input: 5000, output: 2}\n";
    char yaml[512];
    sv_scenario_t *sc;
    snprintf(yaml, sizeof yaml, two, "true");
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    ck_assert_int_eq(sc->pools[0].engine.max_num_batched_tokens, 8192);
    const sv_perf_t *p = &res->pools[0].perf;
    sv_chunk_t c2[2] = {{.new_tokens = 5000, .cached_tokens = 0, .last = 1},
                        {.new_tokens = 3192, .cached_tokens = 0, .last = 0}};
    sv_batch_t b2 = {.chunks = c2, .n_chunks = 2};
    sv_step_cost_t cost;
    sv_perf_step(p, &b2, &cost);
    tu_assert_rel(res->pool.r[0].first_token, cost.total, 1e-12);
    ck_assert_double_eq(res->pool.r[1].scheduled, 0.0);
    ck_assert_int_eq(res->rstats[0].prefill_chunks, 3); /* A's one, B's two */
    tu_check_accounting(res);
    tu_done(sc, res);
    snprintf(yaml, sizeof yaml, two, "false");
    res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    p = &res->pools[0].perf;
    sv_chunk_t c1 = {.new_tokens = 5000, .cached_tokens = 0, .last = 1};
    sv_batch_t b1 = {.chunks = &c1, .n_chunks = 1};
    sv_perf_step(p, &b1, &cost);
    const sv_req_t *a = &res->pool.r[0], *b = &res->pool.r[1];
    tu_assert_rel(a->first_token, cost.total, 1e-12);
    ck_assert_double_eq(b->scheduled, a->first_token); /* the second step */
    ck_assert_int_eq(res->rstats[0].prefill_chunks, 2); /* one each */
    ck_assert(b->first_token > a->first_token + cost.total); /* its step carries A's decode */
    tu_check_accounting(res);
    tu_done(sc, res);
    res = tu_run_yaml(cat,
                      "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "engine: {scheduler: trtllm, chunked_prefill: false}\n"
                      "workload: {num_requests: 1, input: 9000, output: 2}\n",
                      NULL, 0, &sc);
    ck_assert_int_eq(res->pool.r[0].fail, SV_FAIL_PROMPT_BUDGET);
    tu_done(sc, res);
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {scheduler: vllm, chunked_prefill: false}\n"
                                  "workload: {num_requests: 1, input: 10, output: 2}\n",
                                  NULL, 0, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, ":3:"), "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "engine.chunked_prefill: only the trtllm scheduler turns its "
                                  "chunked prefill on or off (this pool's is vllm)"),
                  "%s", err.msg);
}
END_TEST

/* Only max_num_batched_tokens given (512 on an H100): vLLM caps its default max_num_seqs
 * (1024 there) at the budget (EngineArgs, `self.max_num_seqs = min(self.max_num_seqs,
 * self.max_num_batched_tokens)` when max_num_seqs was not given), where servesim refused
 * the scenario. Both given and out of order is still an error (the cli_checks row
 * sc-batched-tokens). */
START_TEST(test_default_seqs_capped_at_budget)
{
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {max_num_batched_tokens: 512}\n"
                                  "workload: {num_requests: 1, input: 10, output: 2}\n",
                                  NULL, 0, &sc, &err),
                     0);
    ck_assert_int_eq(sc->pools[0].engine.max_num_seqs, 512);
    ck_assert_int_eq(sc->pools[0].engine.max_num_batched_tokens, 512);
    sv_scenario_free(sc);
}
END_TEST

/* Percentile labels as vLLM writes them (str(p)): 99.9 stays 99.9 and 99.99999 is never
 * rounded to 100, in the summary and in the JSON keys. */
START_TEST(test_percentile_labels)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat,
                                   "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                   "workload: {num_requests: 20, rate: 5, input: 100, output: 20}\n"
                                   "metrics: {percentiles: [50, 99.9, 99.99999]}\n",
                                   NULL, 0, &sc);
    char path[] = "/tmp/sv_pct_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w+");
    sv_report_summary(res, f);
    rewind(f);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_msg(strstr(buf, "P99.9 TTFT (ms):"), "%s", buf);
    ck_assert_msg(strstr(buf, "P99.99999 TTFT (ms):"), "%s", buf);
    ck_assert(!strstr(buf, "P100"));
    sv_error_t err;
    ck_assert_int_eq(sv_report_json(res, 0, path, &err), 0);
    f = fopen(path, "r");
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    ck_assert(strstr(buf, "\"p99.99999_ttft_ms\""));
    ck_assert(strstr(buf, "\"p99.9_itl_ms\""));
    tu_done(sc, res);
}
END_TEST

/* The prefill-first baseline (vllm-v0) starves decodes near its capacity: every arrival
 * runs its 2048-token prompt alone (about 51 ms) while all decodes wait, so at 12 req/s
 * (capacity is about 13) the p90 TPOT
 * is over four decode steps long (78 ms). The same load under chunked prefill
 * (vllm) mixes the prompt chunks into decode steps and stays lower. */
START_TEST(test_prefill_first_starves_decodes)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "engine: {max_num_seqs: 256, max_num_batched_tokens: 8192}\n"
                       "workload: {num_requests: 600, rate: 12, input: 2048, output: 128}\n"
                       "metrics: {percentiles: [90]}\n";
    const char *v0[] = {"engine.scheduler=vllm-v0"};
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, v0, 1, &sc);
    /* The decode step alone at the run's mean batch and the mean context. */
    double step = sv_perf_decode_time(&res->pools[0].perf,
                                      (long)lround(res->pools[0].mean_decode_batch), 2112, NULL);
    double p90_v0 = res->summary.tpot.pct[0] / 1e3;
    ck_assert_msg(p90_v0 > 4.0 * step, "p90 TPOT %.2f ms vs decode step %.2f ms", p90_v0 * 1e3,
                  step * 1e3);
    tu_check_accounting(res);
    tu_done(sc, res);
    res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    double p90_v1 = res->summary.tpot.pct[0] / 1e3;
    ck_assert_msg(p90_v1 < 0.85 * p90_v0, "chunked %.2f ms vs prefill-first %.2f ms", p90_v1 * 1e3,
                  p90_v0 * 1e3);
    tu_done(sc, res);
    /* SGLang's default scheduler also runs a prefill batch before the decode batch (its
     * chunked prefill cuts long prompts, it does not mix them into decode steps): its
     * decodes wait like V0's. */
    const char *sg[] = {"engine.scheduler=sglang"};
    res = tu_run_yaml(cat, yaml, sg, 1, &sc);
    double p90_sg = res->summary.tpot.pct[0] / 1e3;
    ck_assert_msg(p90_sg > 4.0 * step && p90_sg > p90_v1 / 0.85, "sglang p90 TPOT %.2f ms",
                  p90_sg * 1e3);
    tu_check_accounting(res);
    tu_done(sc, res);
    /* A prompt longer than the budget is cut into chunks: 20,000 tokens in 3 steps of at
     * most 8192 (V0 would have to run it whole). */
    const char *one = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                      "engine: {scheduler: sglang, max_num_batched_tokens: 8192}\n"
                      "workload: {num_requests: 1, rate: inf, input: 20000, output: 2}\n";
    res = tu_run_yaml(cat, one, NULL, 0, &sc);
    sv_chunk_t c[3] = {{8192, 0, 0}, {8192, 8192, 0}, {3616, 16384, 1}};
    double ttft = 0.0;
    for (int i = 0; i < 3; i++) {
        sv_batch_t b = {.chunks = &c[i], .n_chunks = 1};
        sv_step_cost_t cost;
        sv_perf_step(&res->pools[0].perf, &b, &cost);
        ttft += cost.total;
    }
    tu_assert_rel(res->summary.ttft.median / 1e3, ttft, 1e-9);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/* Async scheduling overlaps the engine's CPU work (per step and per sequence) with the
 * GPU's: a decode step takes max(GPU part, CPU part) instead of their sum. One request
 * of 100 + 2 tokens: its one decode step is exactly that. */
START_TEST(test_async_scheduling)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload: {num_requests: 1, input: 100, output: 2}\n";
    const char *set[2][1] = {{"engine.async_scheduling=false"}, {"engine.async_scheduling=true"}};
    for (int a = 0; a < 2; a++) {
        sv_scenario_t *sc;
        sv_result_t *res = tu_run_yaml(cat, yaml, set[a], 1, &sc);
        sv_batch_t b = {.n_decode = 1, .decode_ctx_sum = 100};
        sv_step_cost_t cost;
        sv_perf_step(&res->pools[0].perf, &b, &cost);
        double cpu = cost.eng_step + cost.eng_seq;
        ck_assert(cpu > 0 && cpu < cost.total - cpu);
        double want = a ? fmax(cost.total - cpu, cpu) : cost.total;
        tu_assert_rel(res->summary.tpot.mean / 1e3, want, 1e-9);
        tu_done(sc, res);
    }
}
END_TEST

/* The way to the engine (engine.api_server_ms): vLLM's API server tokenises the prompt
 * and hands it to the engine core's input queue (vllm/entrypoints/openai/serving_*.py ->
 * AsyncLLM.add_request -> EngineCore's input socket); EngineCore.run_busy_loop
 * (vllm/v1/engine/core.py) starts its next step at once with whatever the queue holds,
 * and `vllm bench serve`'s client sends its next request only after the last streamed
 * chunk. So a closed loop's replacement misses the step that starts the instant its
 * predecessor ends, and requests sent together at t = 0 still share one step. The runs
 * without the path set api_server_ms 0 (the vllm profile's default is 12). */
START_TEST(test_api_server_on_the_way_in)
{
    const char *burst = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                        "workload: {num_requests: 16, rate: inf, max_concurrency: 16, "
                        "input: 512, output: 8}\n";
    const char *none[] = {"engine.api_server_ms=0"}, *api[] = {"engine.api_server_ms=5"};
    sv_scenario_t *sc0, *sc1;
    sv_result_t *r0 = tu_run_yaml(cat, burst, none, 1, &sc0);
    sv_result_t *r1 = tu_run_yaml(cat, burst, api, 1, &sc1);
    for (int i = 0; i < 16; i++) {
        ck_assert(r0->pool.r[i].scheduled == 0.0);
        tu_assert_rel(r1->pool.r[i].scheduled, 5e-3, 1e-12); /* all in one step, 5 ms on */
        tu_assert_rel(r1->pool.r[i].first_token, 5e-3 + r0->pool.r[0].first_token, 1e-12);
    }
    tu_done(sc0, r0);
    tu_done(sc1, r1);
    /* A closed loop of one: the replacement is sent as its predecessor ends (no network)
     * and reaches the scheduler 5 ms later; before, it was scheduled that very instant.
     * With the vllm profile's defaults (a = 2: 12 ms, async scheduling on) it waits the
     * 12 ms: the engine is idle then, so async scheduling adds no step. */
    const char *loop = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload: {num_requests: 2, rate: inf, max_concurrency: 1, "
                       "input: 512, output: 8}\n";
    const double wait[3] = {0.0, 5e-3, 12e-3};
    for (int a = 0; a < 3; a++) {
        sv_scenario_t *sc;
        sv_result_t *res = tu_run_yaml(cat, loop, a == 1 ? api : none, a < 2, &sc);
        const sv_req_t *q = &res->pool.r[1];
        ck_assert(q->start == res->pool.r[0].end);
        tu_assert_rel(q->scheduled - q->start, wait[a], 1e-9);
        tu_done(sc, res);
    }
}
END_TEST

/* A run of the trace rows (t,in,out) on one H100 with the engine map given (each gives
 * api_server_ms 0: requests reach the scheduler when sent, so a step boundary is all
 * that decides when one is first scheduled). */
static sv_result_t *run_trace(const char *rows, const char *engine, sv_scenario_t **sc)
{
    char csv[] = "/tmp/sv_async_XXXXXX", yaml[512];
    int fd = mkstemp(csv);
    ck_assert(fd >= 0 && write(fd, rows, strlen(rows)) == (ssize_t)strlen(rows));
    close(fd);
    snprintf(yaml, sizeof yaml,
             "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\nengine: %s\n"
             "workload: {trace: {file: %s, time_column: t, input_column: in, "
             "output_column: out}}\n",
             engine, csv);
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, sc);
    unlink(csv);
    return res;
}

/* One step's cost of request A alone (100-token prompt), as the replica times it. */
static double step_of(const sv_perf_t *perf, int prefill, long ctx, int async)
{
    sv_chunk_t ch = {.new_tokens = 100, .cached_tokens = 0, .last = 1};
    sv_batch_t b = prefill ? (sv_batch_t){.chunks = &ch, .n_chunks = 1}
                           : (sv_batch_t){.n_decode = 1, .decode_ctx_sum = (double)ctx};
    sv_step_cost_t cost;
    sv_perf_step(perf, &b, &cost);
    double cpu = cost.eng_step + cost.eng_seq;
    return async ? fmax(cost.total - cpu, cpu) : cost.total;
}

/* The ends of request A's steps when it runs alone (100-token prompt): t[0] its prefill,
 * t[j] its j-th decode step, summed from the cost model (async: with the CPU hidden). */
static void steps_alone(int async, double t[8])
{
    sv_scenario_t *sc0;
    sv_result_t *r0 = tu_run_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "workload: {num_requests: 1, input: 100, output: 2}\n",
                                  NULL, 0, &sc0);
    const sv_perf_t *perf = &r0->pools[0].perf;
    t[0] = step_of(perf, 1, 0, async);
    for (int j = 1; j < 8; j++)
        t[j] = t[j - 1] + step_of(perf, 0, 100 + j - 1, async);
    tu_done(sc0, r0);
}

/* Async scheduling's one-step lag: EngineCore.step_with_batch_queue (vllm/v1/engine/
 * core.py) schedules step n+1 as soon as step n is launched, before its outputs are
 * back, so a request reaching the input queue during step n is first scheduled in step
 * n+2. A decodes alone (100-token prompt, 40 tokens); B arrives in the middle of A's
 * third decode step: it is scheduled when that step ends without async scheduling, and
 * one step later with it. A's step boundaries are summed from the cost model. */
START_TEST(test_async_scheduling_lags_a_step)
{
    for (int a = 0; a < 2; a++) {
        double t[8];
        steps_alone(a, t);
        double tb = (t[2] + t[3]) / 2; /* during the decode step [t2, t3] */
        char rows[256];
        snprintf(rows, sizeof rows, "t,in,out\n0,100,40\n%.17g,100,4\n", tb);
        sv_scenario_t *sc;
        sv_result_t *res = run_trace(rows,
                                     a ? "{async_scheduling: true, api_server_ms: 0}"
                                       : "{async_scheduling: false, api_server_ms: 0}",
                                     &sc);
        tu_assert_rel(res->pool.r[0].first_token, t[0], 1e-9);
        tu_assert_rel(res->pool.r[1].start, tb, 1e-12);
        tu_assert_rel(res->pool.r[1].scheduled, a ? t[4] : t[3], 1e-9);
        tu_done(sc, res);
    }
}
END_TEST

/* vLLM V0's multi-step scheduling (--num-scheduler-steps n, vLLM 0.6-0.7): one decode
 * round is n passes over the same batch, scheduled once (LLMEngine.step schedules only when
 * no step of the last round remains, _has_remaining_steps, vllm/engine/llm_engine.py), its
 * outputs appended together at its end (MultiStepOutputProcessor, vllm/engine/
 * output_processor/multi_step.py). A round of request A alone over context ctx: n passes
 * at ctx, ctx + 1, ..., each paying 1/n of the profile's per-step and per-sequence cost. */
static double round_of(const sv_perf_t *perf, long ctx, int n)
{
    double t = 0.0;
    for (int i = 0; i < n; i++)
        t += step_of(perf, 0, ctx + i, 0);
    return t;
}

static const char *multi_step4 = "{name: vllm-v0, num_scheduler_steps: 4, api_server_ms: 0}";

/* A alone, 100 in and 16 out, n = 4: the prefill step makes the first token (TTFT as
 * single-step: prefills run one step), then the other 15 come in rounds of 4, 4, 4 and 3:
 * 4 ITLs, the j-th the round at context 100 + 4j, all four passes of the last round paid
 * though it delivers 3 tokens. TPOT = the four rounds over 15 tokens. */
START_TEST(test_multi_step_chunks)
{
    sv_scenario_t *sc;
    sv_result_t *res = run_trace("t,in,out\n0,100,16\n", multi_step4, &sc);
    const sv_perf_t *perf = &res->pools[0].perf;
    ck_assert_int_eq(perf->set.sched_steps, 4);
    const sv_req_t *r = &res->pool.r[0];
    double prefill = step_of(perf, 1, 0, 0);
    tu_assert_rel(r->first_token, prefill, 1e-12);
    double *itl;
    size_t n;
    ck_assert_int_eq(sv_metrics_itls(res->metrics, &res->pool, 0, &itl, &n), 0);
    ck_assert_int_eq((int)n, 4);
    double sum = 0.0;
    for (int j = 0; j < 4; j++) {
        double round = round_of(perf, 100 + 4 * j, 4);
        tu_assert_rel(itl[j], round, 1e-9);
        ck_assert(itl[j] > 3.9 * step_of(perf, 0, 100 + 4 * j, 0)); /* about 4 steps */
        sum += round;
    }
    free(itl);
    tu_assert_rel(r->last_token - r->first_token, sum, 1e-9);
    tu_assert_rel(res->summary.tpot.mean, sum / 15.0 * 1e3, 1e-9);
    tu_assert_rel(res->summary.ttft.mean, prefill * 1e3, 1e-9);
    /* 16 GPU steps ran (the last round's fourth made nothing), 15 decode tokens kept. */
    ck_assert(res->rstats[0].decode_steps == 16 && res->rstats[0].decode_tokens == 15.0);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/* A round is scheduled whole: B, sent in the middle of A's first round, waits for its end
 * (vLLM schedules only between rounds), and its prompt then runs alone (prefill first). */
START_TEST(test_multi_step_admits_between_rounds)
{
    sv_scenario_t *sc;
    sv_result_t *res = run_trace("t,in,out\n0,100,40\n", multi_step4, &sc);
    const sv_perf_t *perf = &res->pools[0].perf;
    double t0 = step_of(perf, 1, 0, 0), r1 = round_of(perf, 100, 4);
    double single = step_of(perf, 0, 100, 0);
    tu_done(sc, res);
    double tb = t0 + r1 / 2;
    char rows[256];
    snprintf(rows, sizeof rows, "t,in,out\n0,100,40\n%.17g,100,4\n", tb);
    res = run_trace(rows, multi_step4, &sc);
    ck_assert(t0 + single < tb); /* past the round's first pass: single-step admits sooner */
    tu_assert_rel(res->pool.r[1].start, tb, 1e-12);
    tu_assert_rel(res->pool.r[1].scheduled, t0 + r1, 1e-9);
    tu_assert_rel(res->pool.r[1].first_token, t0 + r1 + t0, 1e-9);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/* The round's lookahead KV: a decoding sequence holds slots for the n tokens the round
 * makes (vLLM's num_lookahead_slots = n - 1 beyond the step's token, append_slots). A
 * 110-token prompt, 2 out, blocks of 16: single-step, its decode needs 111 slots (7
 * blocks); with n = 8 the round takes 110 + 8 = 118 (8 blocks). */
START_TEST(test_multi_step_lookahead_blocks)
{
    for (int n = 1; n <= 8; n += 7) {
        char eng[128];
        snprintf(eng, sizeof eng, "{name: vllm-v0, num_scheduler_steps: %d, api_server_ms: 0}", n);
        sv_scenario_t *sc;
        sv_result_t *res = run_trace("t,in,out\n0,110,2\n", eng, &sc);
        ck_assert_int_eq(sc->pools[0].engine.block_size, 16);
        ck_assert_int_eq((int)res->rstats[0].peak_blocks_used, n == 1 ? 7 : 8);
        tu_check_accounting(res);
        tu_done(sc, res);
    }
}
END_TEST

/* ... and a finished request's slot frees one step later: Scheduler.update_from_output
 * (vllm/v1/core/sched/scheduler.py) frees it when step n's outputs are processed, after
 * step n+1 was scheduled. max_num_seqs 2; A (3 tokens), B (40) and C sent at t = 0: C
 * waits for A's slot. Without async scheduling C is admitted when A ends; with it, the
 * step after A's last was built while A still held its slot, so C waits exactly one
 * more step, B's third decode step alone (context 100 + 2). */
START_TEST(test_async_scheduling_frees_slots_a_step_later)
{
    const char *rows = "t,in,out\n0,100,3\n0,100,40\n0,100,4\n";
    for (int a = 0; a < 2; a++) {
        sv_scenario_t *sc;
        sv_result_t *res =
            run_trace(rows,
                      a ? "{max_num_seqs: 2, async_scheduling: true, api_server_ms: 0}"
                        : "{max_num_seqs: 2, async_scheduling: false, api_server_ms: 0}",
                      &sc);
        const sv_req_t *A = &res->pool.r[0], *C = &res->pool.r[2];
        double lag = a ? step_of(&res->pools[0].perf, 0, 102, 1) : 0.0;
        tu_assert_rel(C->scheduled - A->end, lag, 1e-9);
        if (a) ck_assert(lag > 0);
        tu_check_accounting(res);
        tu_done(sc, res);
    }
}
END_TEST

/* engine.overlap_schedule: SGLang's default loop is the overlap one (Scheduler.
 * event_loop_overlap, sgl-project/sglang python/sglang/srt/managers/scheduler.py), as is
 * TensorRT-LLM's PyTorch executor with its overlap scheduler: step n+1 is launched before
 * step n's results are processed, so a request received during step n runs in step n+2,
 * while the steps keep the profile's whole cost. The run of
 * test_async_scheduling_lags_a_step with unhidden step times: B, arriving in the middle of
 * A's third decode step, is scheduled at t4 with the overlap (sglang by default, trtllm
 * when set) and at t3 without it (sglang with --disable-overlap-schedule, trtllm's
 * default). */
START_TEST(test_overlap_schedule_lags_a_step)
{
    double t[8];
    steps_alone(0, t);
    ck_assert(t[4] > t[3]);
    double tb = (t[2] + t[3]) / 2;
    char rows[256];
    snprintf(rows, sizeof rows, "t,in,out\n0,100,40\n%.17g,100,4\n", tb);
    static const struct {
        const char *engine;
        int lag;
    } cases[] = {
        {"{scheduler: sglang}", 1},
        {"{scheduler: sglang, overlap_schedule: false}", 0},
        {"{scheduler: trtllm}", 0},
        {"{scheduler: trtllm, overlap_schedule: true}", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sv_scenario_t *sc;
        sv_result_t *res = run_trace(rows, cases[i].engine, &sc);
        tu_assert_rel(res->pool.r[0].first_token, t[0], 1e-9);
        tu_assert_rel(res->pool.r[1].scheduled, cases[i].lag ? t[4] : t[3], 1e-9);
        tu_check_accounting(res);
        tu_done(sc, res);
    }
}
END_TEST

/* SGLang turns its overlap loop off for EAGLE-style speculative decoding (MTP too) unless
 * SGLANG_ENABLE_SPEC_V2 is set (SGLang's docs, advanced_features/speculative_decoding.md,
 * "Speculative Decoding V2 (Overlap Scheduler)"): the sglang default follows it, and an
 * explicit overlap_schedule: true still wins. */
START_TEST(test_overlap_off_with_speculative)
{
    static const struct {
        const char *hw, *engine;
        int overlap;
    } cases[] = {
        {"{gpu: h100-sxm}", "{scheduler: sglang}", 1},
        {"{gpu: h100-sxm, speculative: eagle}", "{scheduler: sglang}", 0},
        {"{gpu: h100-sxm, speculative: eagle}", "{scheduler: sglang, overlap_schedule: true}", 1},
        {"{gpu: h100-sxm, speculative: eagle}", "{scheduler: trtllm}", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char yaml[512];
        snprintf(yaml, sizeof yaml,
                 "model: llama-3.1-8b\nhardware: %s\nengine: %s\n"
                 "workload: {num_requests: 1, input: 8, output: 8}\n",
                 cases[i].hw, cases[i].engine);
        sv_scenario_t *sc;
        sv_error_t err;
        ck_assert_msg(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(sc->pools[0].engine.overlap_schedule, cases[i].overlap);
        sv_scenario_free(sc);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("vllm");
    TCase *tc = tcase_create("scheduler");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_same_instant_arrivals_share_a_step);
    tcase_add_test(tc, test_engine_defaults_per_gpu);
    tcase_add_test(tc, test_profile_defaults_follow_the_engine);
    tcase_add_test(tc, test_v1_options_checked);
    tcase_add_test(tc, test_trtllm_chunked_prefill_off);
    tcase_add_test(tc, test_long_prefill_threshold_chunks);
    tcase_add_test(tc, test_partial_prefill_limit);
    tcase_add_test(tc, test_default_seqs_capped_at_budget);
    tcase_add_test(tc, test_percentile_labels);
    tcase_add_test(tc, test_prefill_first_starves_decodes);
    tcase_add_test(tc, test_async_scheduling);
    tcase_add_test(tc, test_api_server_on_the_way_in);
    tcase_add_test(tc, test_async_scheduling_lags_a_step);
    tcase_add_test(tc, test_async_scheduling_frees_slots_a_step_later);
    tcase_add_test(tc, test_overlap_schedule_lags_a_step);
    tcase_add_test(tc, test_overlap_off_with_speculative);
    tcase_add_test(tc, test_multi_step_chunks);
    tcase_add_test(tc, test_multi_step_admits_between_rounds);
    tcase_add_test(tc, test_multi_step_lookahead_blocks);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
