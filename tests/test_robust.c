/*
 * Regression tests of the robustness fixes (issue 8): every reproducer that once hung,
 * lost a request or ate memory, run to its exact outcome; the bound on time-series
 * samples and its sampling grid; the sparse per-second token bins; the watermark as
 * vLLM rounds it; the up-front bound on per-request records; and the KV recount of
 * --check catching a broken block count.
 */
#include <math.h>
#include <unistd.h>

#include "servesim/engine/replica.h"
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

/* Load, turn on --check (the per-step KV and client recount), run. */
static sv_result_t *run_checked(const char *yaml, sv_scenario_t **sc)
{
    sv_error_t err;
    ck_assert_msg(tu_load_yaml(cat, yaml, NULL, 0, sc, &err) == 0, "scenario: %s", err.msg);
    (*sc)->check = 1;
    sv_result_t *res;
    ck_assert_msg(sv_sim_run(*sc, &res, &err) == 0, "run: %s", err.msg);
    tu_check_accounting(res);
    return res;
}

/* vLLM v0 with swap preemption: when every sequence is swapped out and none runs, the
 * next step swaps them back in (v0's _schedule_default schedules swapped groups whenever
 * it schedules no prefill). Only swapping in after decodes left 15 requests swapped with
 * 1214 of 1214 blocks free, stuck at t = 6 s. */
START_TEST(test_v0_swap_all_swapped)
{
    const char *yaml = "model: opt-13b\nhardware: {gpu: a40}\n"
                       "engine: {scheduler: vllm-v0, preemption: swap}\n"
                       "workload: {num_requests: 63, rate: inf, input: 374, output: 14}\n";
    sv_scenario_t *sc;
    sv_result_t *res = run_checked(yaml, &sc);
    ck_assert_int_eq(res->summary.completed, 63);
    ck_assert(res->rstats[0].swaps > 0);
    tu_done(sc, res);
}
END_TEST

/* A freed client slot sends the next request, whichever event freed it. Two requests
 * wait 100 ms at the router; the client's 10 ms timeout fails them there at t = 0.01,
 * which must send the next two, and so on. */
START_TEST(test_timeout_at_router_frees_slot)
{
    sv_scenario_t *sc;
    sv_result_t *res = run_checked("model: llama-3.1-8b\n"
                                   "hardware: {gpu: h200}\n"
                                   "router: {latency_ms: 100}\n"
                                   "workload: {num_requests: 5, max_concurrency: 2, "
                                   "timeout_s: 0.01, input: 10, output: 10}\n",
                                   &sc);
    const double start[5] = {0, 0, 0.01, 0.01, 0.02};
    ck_assert_int_eq((long)res->pool.n, 5);
    for (int i = 0; i < 5; i++) {
        tu_assert_rel(res->pool.r[i].start + 1.0, start[i] + 1.0, 1e-12);
        ck_assert_int_eq(res->pool.r[i].fail, SV_FAIL_TIMEOUT);
    }
    ck_assert_int_eq(res->summary.failed_by[SV_FAIL_TIMEOUT], 5);
    tu_done(sc, res);
}
END_TEST

/* A prompt longer than max_model_len fails when it reaches the replica (1 ms after it is
 * sent): its slot goes to the next request at that instant. */
START_TEST(test_too_long_at_dispatch_frees_slot)
{
    sv_scenario_t *sc;
    sv_result_t *res = run_checked("model: llama-3.1-8b\n"
                                   "hardware: {gpu: h200}\n"
                                   "engine: {max_model_len: 100}\n"
                                   "router: {latency_ms: 1}\n"
                                   "workload: {num_requests: 5, max_concurrency: 2, "
                                   "input: 200, output: 10}\n",
                                   &sc);
    const double start[5] = {0, 0, 0.001, 0.001, 0.002};
    for (int i = 0; i < 5; i++) {
        tu_assert_rel(res->pool.r[i].start + 1.0, start[i] + 1.0, 1e-12);
        ck_assert_int_eq(res->pool.r[i].fail, SV_FAIL_TOO_LONG);
    }
    tu_done(sc, res);
}
END_TEST

/* A timeout that fires while the KV crosses a slow link (2000 tokens x 128 KiB at 1 MB/s:
 * minutes) frees the slot: request 2 is sent exactly when request 0 times out. */
START_TEST(test_timeout_during_transfer_frees_slot)
{
    sv_scenario_t *sc;
    sv_result_t *res = run_checked("model: llama-3.1-8b\n"
                                   "pools:\n"
                                   "  - {name: p, role: prefill, gpu: h100-sxm}\n"
                                   "  - {name: d, role: decode, gpu: h100-sxm}\n"
                                   "disaggregation: {kv_link: {bandwidth_gb_s: 0.001}}\n"
                                   "workload: {num_requests: 5, max_concurrency: 2, "
                                   "timeout_s: 1, input: 2000, output: 10}\n",
                                   &sc);
    ck_assert_int_eq(res->summary.failed_by[SV_FAIL_TIMEOUT], 5);
    for (int i = 0; i < 5; i++)
        ck_assert(res->pool.r[i].xfer_start >= 0); /* each timed out on the link */
    tu_assert_rel(res->pool.r[2].start, 1.0, 1e-12);
    tu_assert_rel(res->pool.r[3].start, 1.0, 1e-12);
    tu_assert_rel(res->pool.r[4].start, 2.0, 1e-12);
    tu_done(sc, res);
}
END_TEST

/* Open loop behind a semaphore with a horizon: every request is sent and times out long
 * before the horizon; none is left "unfinished" in the client's backlog. */
START_TEST(test_open_loop_backlog_drains)
{
    sv_scenario_t *sc;
    sv_result_t *res = run_checked("model: llama-3.1-8b\n"
                                   "hardware: {gpu: h200}\n"
                                   "router: {latency_ms: 100}\n"
                                   "horizon_s: 5\n"
                                   "workload: {num_requests: 50, rate: 100, max_concurrency: 2, "
                                   "timeout_s: 0.01, input: 10, output: 10}\n",
                                   &sc);
    ck_assert_int_eq(res->summary.failed_by[SV_FAIL_TIMEOUT], 50);
    ck_assert_int_eq(res->summary.failed_by[SV_FAIL_UNFINISHED], 0);
    tu_done(sc, res);
}
END_TEST

/* orca and static prefill pools reserve prompt + output blocks; the hand-off must give
 * back all of them (it once released only the prompt's, and 20 requests hung). */
START_TEST(test_reserving_prefill_pool_frees_all)
{
    const char *sched[] = {"orca", "static"};
    for (int k = 0; k < 2; k++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "model: opt-13b\n"
                 "pools:\n"
                 "  - {name: p, role: prefill, gpu: l40s, engine: {scheduler: %s}}\n"
                 "  - {name: d, role: decode, gpu: b200}\n"
                 "workload: {num_requests: 20, rate: 1, input: 1000, output: 1000}\n",
                 sched[k]);
        sv_scenario_t *sc;
        sv_result_t *res = run_checked(yaml, &sc);
        ck_assert_int_eq(res->summary.completed, 20);
        tu_done(sc, res);
    }
}
END_TEST

/* A closed loop bounded only by duration whose every request fails at once would resend
 * forever at t = 0: a clear error instead. */
START_TEST(test_closed_loop_instant_failures_stop)
{
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\n"
                                  "hardware: {gpu: h100-sxm}\n"
                                  "engine: {max_model_len: 100}\n"
                                  "workload: {rate: inf, max_concurrency: 4, duration_s: 10, "
                                  "input: 200, output: 10}\n",
                                  NULL, 0, &sc, &err),
                     0);
    sv_result_t *res = NULL;
    ck_assert_int_eq(sv_sim_run(sc, &res, &err), SV_ELIMIT);
    ck_assert_ptr_null(res);
    ck_assert_msg(strstr(err.msg, "workload.duration_s") && strstr(err.msg, "too_long"), "%s",
                  err.msg);
    sv_scenario_free(sc);
}
END_TEST

/* Three requests 1e9 s apart: the samples stay under their bound by thinning, on a grid
 * of the final interval, and the run finishes; the per-second bins (sparse here) give a
 * peak of exactly one request's 10 tokens, since each request's tokens fall within one
 * second of its integer start. */
START_TEST(test_samples_bounded_and_sparse_bins)
{
    char csv[] = "/tmp/sv_gap_XXXXXX";
    int fd = mkstemp(csv);
    const char *rows = "t,in,out\n0,100,10\n1000000000,100,10\n2000000000,100,10\n";
    ck_assert(write(fd, rows, strlen(rows)) == (ssize_t)strlen(rows));
    close(fd);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "model: llama-3.1-8b\n"
             "hardware: {gpu: h100-sxm}\n"
             "workload: {trace: {file: %s, time_column: t, input_column: in, "
             "output_column: out}}\n",
             csv);
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    unlink(csv);
    tu_check_accounting(res);
    ck_assert_int_eq(res->summary.completed, 3);
    ck_assert_double_eq(res->summary.max_output_tokens_per_s, 10.0);
    size_t n;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &n);
    ck_assert(n <= (size_t)SV_MAX_SAMPLES && n > 1000);
    /* 2e9 s at 1 s would be 2e9 samples; the interval doubled to a power of two. */
    double dt = res->sample_interval;
    ck_assert(dt > 1.0 && dt == exp2(round(log2(dt))));
    for (size_t i = 1; i < n; i++)
        tu_assert_rel(sm[i].t - sm[i - 1].t, dt, 1e-6);
    tu_done(sc, res);
}
END_TEST

/* vLLM keeps int(watermark x blocks) free: 0 of a one-block cache, so a request that fits
 * one block runs (rounding up once rejected everything). */
START_TEST(test_watermark_rounds_down)
{
    sv_engine_cfg_t e = {.scheduler = SV_SCHED_VLLM, .watermark = 0.01};
    ck_assert_int_eq(sv_watermark_blocks(&e, 1), 0);
    ck_assert_int_eq(sv_watermark_blocks(&e, 199), 1);
    ck_assert_int_eq(sv_watermark_blocks(&e, 28323), 283);
    e.scheduler = SV_SCHED_ORCA;
    ck_assert_int_eq(sv_watermark_blocks(&e, 28323), 0);
    sv_scenario_t *sc;
    /* 0.9 x 85.52 GB - 16.06 GB of weights - this reserve leaves one 2 MiB block. */
    sv_result_t *res = run_checked("model: llama-3.1-8b\n"
                                   "hardware: {gpu: h100-sxm, activation_reserve_gb: 60.9041}\n"
                                   "workload: {num_requests: 3, rate: 1, input: 4, output: 4}\n",
                                   &sc);
    ck_assert_int_eq(res->pools[0].mem.kv_blocks, 1);
    ck_assert_int_eq(res->summary.completed, 3);
    tu_done(sc, res);
}
END_TEST

/* Per-request records have a stated bound, checked before anything runs. */
START_TEST(test_record_bound_up_front)
{
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\n"
                                  "hardware: {gpu: h100-sxm}\n"
                                  "workload: {num_requests: 90000000, rate: 10, input: 10, "
                                  "output: 10}\n",
                                  NULL, 0, &sc, &err),
                     0);
    sv_result_t *res = NULL;
    ck_assert_int_eq(sv_sim_run(sc, &res, &err), SV_ELIMIT);
    ck_assert_msg(strstr(err.msg, "workload.num_requests: 90000000 requests need about"), "%s",
                  err.msg);
    sv_scenario_free(sc);
}
END_TEST

/* The recount of --check finds a block count that no longer matches the requests:
 * releasing a request that was never handed off frees blocks nobody held. */
START_TEST(test_replica_check_catches_drift)
{
    sv_scenario_t *sc;
    sv_error_t err;
    sv_perf_t perf;
    sv_metrics_t *m;
    /* api_server_ms 0: the request is visible to the step started at its submission */
    tu_replica_parts(cat,
                     "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                     "engine: {api_server_ms: 0}\n"
                     "workload: {num_requests: 1, input: 100, output: 10}\n",
                     &sc, &perf, &m);
    sv_reqpool_t pool = {0};
    ck_assert_int_eq(sv_reqpool_add(&pool), 0);
    pool.r[0].input = 100;
    pool.r[0].output = 10;
    sv_engine_cfg_t e = sc->pools[0].engine;
    e.max_model_len = 4096;
    e.prefix_caching = 0; /* as the simulator sets it for requests without identity */
    sv_replica_t *r;
    ck_assert_int_eq(sv_replica_new(0, &perf, 100, &e, &pool, m, &r, &err), 0);
    char msg[256];
    ck_assert_int_eq(sv_replica_submit(r, 0, 0.0), SV_FAIL_NONE);
    double d = sv_replica_start_step(r, 0.0);
    ck_assert(d > 0);
    ck_assert_int_eq(sv_replica_end_step(r, d), 0);
    ck_assert_int_eq(sv_replica_check(r, msg, sizeof msg), 0); /* 100 tokens: 7 blocks held */
    ck_assert_int_eq(sv_replica_free_blocks(r), 92); /* of 99: one is vLLM V1's null block */
    sv_replica_release(r, 0); /* wrong: it was never handed off */
    ck_assert_int_eq(sv_replica_check(r, msg, sizeof msg), -1);
    ck_assert_msg(strstr(msg, "replica 0: a negative reservation (held 0 = running 7 + pinned -7"),
                  "%s", msg);
    sv_replica_free(r);
    sv_metrics_free(m);
    sv_reqpool_free(&pool);
    sv_scenario_free(sc);
}
END_TEST

/* The pool's side array: elements for requests added before and after the attach, set up
 * by the attaching layer's hook and released by its fini; a second, different attach is
 * refused. */
static int finis;
static void side_init(void *el)
{
    *(long *)el = -7;
}
static void side_fini(void *el)
{
    finis += *(long *)el == -7;
}
START_TEST(test_pool_side_array)
{
    sv_reqpool_t pool = {0};
    ck_assert_int_eq(sv_reqpool_add(&pool), 0);
    ck_assert_int_eq(sv_reqpool_add(&pool), 1);
    ck_assert_ptr_null(pool.side);
    ck_assert_int_eq(sv_reqpool_attach(&pool, sizeof(long), side_init, side_fini), 0);
    ck_assert_int_eq(sv_reqpool_attach(&pool, sizeof(long), side_init, side_fini), 0);
    ck_assert_int_eq(sv_reqpool_attach(&pool, sizeof(int), side_init, NULL), SV_EINVAL);
    for (int i = 0; i < 200; i++)
        ck_assert_int_eq(sv_reqpool_add(&pool), i + 2);
    const long *side = pool.side;
    for (int i = 0; i < 202; i++)
        ck_assert_int_eq(side[i], -7);
    finis = 0;
    sv_reqpool_free(&pool);
    ck_assert_int_eq(finis, 202);
    ck_assert_ptr_null(pool.side);
    ck_assert_uint_eq(pool.n, 0);
}
END_TEST

/* error.h allows a NULL error record: loading and running still fail cleanly with it. */
START_TEST(test_null_error_record)
{
    sv_scenario_t *sc = NULL;
    int rc = tu_load_yaml(cat,
                          "model: no-such-model\nhardware: {gpu: h100-sxm}\n"
                          "workload: {num_requests: 1, input: 10, output: 2}\n",
                          NULL, 0, &sc, NULL);
    ck_assert_int_lt(rc, 0);
    ck_assert_ptr_null(sc);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("robust");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_timeout_at_router_frees_slot);
    tcase_add_test(tc, test_too_long_at_dispatch_frees_slot);
    tcase_add_test(tc, test_timeout_during_transfer_frees_slot);
    tcase_add_test(tc, test_open_loop_backlog_drains);
    tcase_add_test(tc, test_reserving_prefill_pool_frees_all);
    tcase_add_test(tc, test_closed_loop_instant_failures_stop);
    tcase_add_test(tc, test_samples_bounded_and_sparse_bins);
    tcase_add_test(tc, test_watermark_rounds_down);
    tcase_add_test(tc, test_record_bound_up_front);
    tcase_add_test(tc, test_replica_check_catches_drift);
    tcase_add_test(tc, test_pool_side_array);
    tcase_add_test(tc, test_null_error_record);
    tcase_add_test(tc, test_v0_swap_all_swapped);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
