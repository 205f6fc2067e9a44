/*
 * Tests of autoscaling (issue 13): on a step-up load the autoscaler reaches the replica
 * count Little's law predicts; a cold start delays the first service of new replicas by
 * exactly its length and shows in the TTFT of the requests that arrived during it;
 * scaling down drains without losing a request; cost and GPU-hours count each replica's
 * up time exactly. Every run here is under --check (sc->check = 1).
 */
#include <math.h>
#include <unistd.h>

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

/* 2 req/s, 20 req/s on [200, 400), then 2 req/s until 600 s; 256 in, 128 out. Each H100
 * replica runs at most 8 sequences, so 20 req/s needs several. */
static const char *STEP =
    "seed: 3\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\nengine: {max_num_seqs: 8}\n"
    "workload:\n  duration_s: 600\n"
    "  rate_profile: {kind: steps, points: [[0, 2], [200, 20], [400, 2]]}\n"
    "  input: {dist: fixed, value: 256}\n  output: {dist: fixed, value: 128}\n"
    "autoscaler: {policy: inflight, target: 6, min_replicas: 1, max_replicas: 16, "
    "interval_s: 5, cold_start_s: 0, scale_down_delay_s: 30}\n";

static sv_result_t *run(const char *yaml, const char **sets, int nsets, sv_scenario_t **sc)
{
    sv_error_t err;
    ck_assert_msg(tu_load_yaml(cat, yaml, sets, nsets, sc, &err) == 0, "scenario: %s", err.msg);
    (*sc)->check = 1;
    sv_result_t *res;
    ck_assert_msg(sv_sim_run(*sc, &res, &err) == 0, "run: %s", err.msg);
    tu_check_accounting(res);
    return res;
}

/* Mean of end - start (s) of the requests that arrived in [a, b). */
static double mean_e2e(const sv_result_t *res, double a, double b)
{
    double acc = 0;
    long n = 0;
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        if (r->arrival < a || r->arrival >= b) continue;
        acc += r->end - r->start;
        n++;
    }
    return n ? acc / n : 0;
}

/* Zero cold start, a requests-in-flight target on a step-up load: in the second half of
 * the step the pool holds ceil(rate x E2E / target) replicas (Little's law: requests in
 * flight = rate x time in the system), give or take the one a Poisson peak adds. */
START_TEST(test_step_up_predicted)
{
    sv_scenario_t *sc;
    sv_result_t *res = run(STEP, NULL, 0, &sc);
    double e2e = mean_e2e(res, 300, 400);
    int predicted = (int)ceil(20.0 * e2e / 6.0);
    long n = 0;
    for (size_t i = 0; i < res->nscale; i++) {
        const sv_scale_point_t *p = &res->scale[i];
        if (p->t < 300 || p->t >= 400) continue;
        ck_assert_msg(p->active >= predicted - 1 && p->active <= predicted + 1,
                      "t=%g: %d active, predicted %d (E2E %.3f s)", p->t, p->active, predicted,
                      e2e);
        n++;
    }
    ck_assert_int_eq(n, 20); /* every 5 s */
    ck_assert(predicted >= 3);
    /* before the step one replica suffices */
    for (size_t i = 0; i < res->nscale && res->scale[i].t < 200; i++)
        ck_assert_int_eq(res->scale[i].active, 1);
    ck_assert_int_eq(res->summary.failed, 0);
    ck_assert(res->pools[0].scale_ups >= predicted - 1);
    ck_assert(res->pools[0].scale_downs >= predicted - 1); /* back down after 400 s */
    tu_done(sc, res);
}
END_TEST

/* A cold start of C seconds: no request is scheduled on a started replica before the
 * first decision after the step plus C, and the requests that arrive in the C seconds
 * after the step wait for it: their TTFT is far above the zero-cold-start run's. */
START_TEST(test_cold_start)
{
    const double C = 30;
    const char *cold[] = {"autoscaler.cold_start_s=30"};
    sv_scenario_t *sc0, *sc1;
    sv_result_t *r0 = run(STEP, NULL, 0, &sc0), *r1 = run(STEP, cold, 1, &sc1);
    double first_up = INFINITY;
    for (size_t i = 0; i < r1->nscale; i++)
        if (r1->scale[i].desired > r1->scale[i].active + r1->scale[i].starting) {
            first_up = r1->scale[i].t;
            break;
        }
    ck_assert(first_up >= 200 && first_up <= 205);
    double earliest = INFINITY;
    for (size_t i = 0; i < r1->pool.n; i++) {
        const sv_req_t *r = &r1->pool.r[i];
        if (r->replica != 0 && r->scheduled < earliest) earliest = r->scheduled;
    }
    ck_assert_msg(earliest >= first_up + C, "served at %g, before %g + %g", earliest, first_up, C);
    double t0 = 0, t1 = 0;
    long n0 = 0, n1 = 0;
    for (size_t i = 0; i < r0->pool.n; i++)
        if (r0->pool.r[i].arrival >= 200 && r0->pool.r[i].arrival < 200 + C)
            t0 += r0->pool.r[i].first_token - r0->pool.r[i].start, n0++;
    for (size_t i = 0; i < r1->pool.n; i++)
        if (r1->pool.r[i].arrival >= 200 && r1->pool.r[i].arrival < 200 + C)
            t1 += r1->pool.r[i].first_token - r1->pool.r[i].start, n1++;
    t0 /= n0, t1 /= n1;
    /* One replica serves about 8 / 1.2 s = 7 req/s of the 20 that arrive: the backlog of
     * C seconds takes longer than C to clear, so the mean wait exceeds C / 2. */
    ck_assert_msg(t1 > C / 2 && t1 > 10 * t0, "TTFT %g s with the cold start, %g s without", t1,
                  t0);
    ck_assert_int_eq(r1->summary.failed, 0);
    tu_done(sc0, r0);
    tu_done(sc1, r1);
}
END_TEST

/* Scaling down drains: every request completes, replicas come and go. */
START_TEST(test_scale_down_drains)
{
    const char *sets[] = {"autoscaler.scale_down_delay_s=0", "autoscaler.interval_s=1",
                          "autoscaler.cold_start_s=3", "router=least-outstanding"};
    sv_scenario_t *sc;
    sv_result_t *res = run(STEP, sets, 4, &sc);
    ck_assert_int_eq(res->summary.failed, 0);
    ck_assert_int_eq(res->summary.completed, (long)res->pool.n);
    ck_assert(res->pools[0].scale_downs >= 5);
    /* the drained replicas served requests and were switched off before the end */
    int off_early = 0;
    for (int i = 1; i < res->replicas; i++)
        off_early += res->up_s[i] > 0 && res->up_s[i] < res->summary.duration - 100;
    ck_assert(off_early >= 3);
    tu_done(sc, res);
}
END_TEST

/* Accounting: GPU-hours are the sum of up times; cost is GPU-hours x price; a pool whose
 * autoscaler cannot move (min = max) costs exactly what the fixed pool costs. */
START_TEST(test_accounting)
{
    sv_scenario_t *sc;
    sv_result_t *res = run(STEP, NULL, 0, &sc);
    const sv_pool_result_t *pp = &res->pools[0];
    double up = 0;
    for (int i = 0; i < res->replicas; i++) {
        ck_assert(res->up_s[i] >= 0 && res->up_s[i] <= res->summary.duration + 1e-9);
        up += res->up_s[i];
    }
    tu_assert_rel(pp->gpu_hours, up / 3600.0, 1e-12);
    tu_assert_rel(pp->cost_usd, pp->gpu_hours * sc->pools[0].gpu.price_per_hour, 1e-12);
    tu_assert_rel(res->cost_usd, pp->cost_usd, 1e-12);
    tu_assert_rel(pp->mean_up, up / res->summary.duration, 1e-12);
    ck_assert(pp->mean_up > 1 && pp->mean_up < pp->peak_up);
    tu_done(sc, res);

    const char *pinned[] = {"autoscaler.min_replicas=3", "autoscaler.max_replicas=3"};
    const char *fixed[] = {"autoscaler=", "hardware.replicas=3"};
    sv_scenario_t *sa, *sf;
    sv_result_t *ra = run(STEP, pinned, 2, &sa), *rf = run(STEP, fixed, 2, &sf);
    ck_assert_int_eq(ra->pools[0].scale_ups + ra->pools[0].scale_downs, 0);
    tu_assert_rel(ra->cost_usd, rf->cost_usd, 1e-12);
    tu_assert_rel(ra->gpu_hours, rf->gpu_hours, 1e-12);
    tu_assert_rel(ra->energy_j, rf->energy_j, 1e-12);
    ck_assert_int_eq((long)ra->pool.n, (long)rf->pool.n);
    tu_done(sa, ra);
    tu_done(sf, rf);
}
END_TEST

/* Disaggregated: each pool scales on its own; nothing lost, KV all free at the end. */
START_TEST(test_disaggregated_pools)
{
    const char *yaml =
        "seed: 5\nmodel: llama-3.1-8b\n"
        "pools:\n"
        "  - {name: p, role: prefill, gpu: h100-sxm, engine: {max_num_seqs: 8},\n"
        "     autoscaler: {policy: queue, target: 2, max_replicas: 6, interval_s: 2, "
        "cold_start_s: 5, scale_down_delay_s: 10}}\n"
        "  - {name: d, role: decode, gpu: h100-sxm, engine: {max_num_seqs: 8},\n"
        "     autoscaler: {policy: inflight, target: 6, max_replicas: 8, interval_s: 2, "
        "cold_start_s: 5, scale_down_delay_s: 10}}\n"
        "disaggregation: {kv_link: {kind: infiniband}}\n"
        "workload:\n  duration_s: 200\n"
        "  rate_profile: {kind: linear, points: [[0, 1], [100, 15], [200, 1]]}\n"
        "  input: {dist: fixed, value: 1024}\n  output: {dist: fixed, value: 128}\n";
    sv_scenario_t *sc;
    sv_result_t *res = run(yaml, NULL, 0, &sc);
    ck_assert_int_eq(res->summary.failed, 0);
    ck_assert(res->pools[1].scale_ups > 0 && res->pools[1].scale_downs > 0);
    ck_assert(res->pools[1].peak_up > 1);
    tu_done(sc, res);
}
END_TEST

/* Bad autoscalers are one-line errors naming the key. */
/* Up time stops at the benchmark's end, the last request's recorded end: a request timed
 * out inside a replica is let go at the replica's next step end (here 1.457 s), after its
 * own end; charging up time to that moment gave 1 replica up 1.19 on average over the
 * 1.22 s duration, more than the peak of 1. */
START_TEST(test_up_time_within_duration)
{
    const char *yaml =
        "seed: 232\nmodel: llama-3.1-8b\n"
        "hardware: {gpu: l40s, tp: 2, gpu_memory_utilization: 0.255, replicas: 1}\n"
        "engine: {scheduler: trtllm, max_num_seqs: 8, max_num_batched_tokens: 8192, "
        "scheduling_policy: priority, max_model_len: 1148}\n"
        "autoscaler: {policy: ttft_p90, target: 443, min_replicas: 1, max_replicas: 4, "
        "interval_s: 0.601, cold_start_s: 1.44, scale_down_delay_s: 0, window_s: 0.297}\n"
        "router: {policy: kv-aware}\n"
        "workload:\n  duration_s: 0.64\n  rate: inf\n  max_concurrency: 50\n  timeout_s: 0.603\n"
        "  shared_prefix: {tokens: 2471, prompts: 4, share: 0.427}\n"
        "  input: {dist: uniform, min: 1, max: 3043}\n"
        "  output: {dist: uniform, min: 1, max: 104}\n";
    sv_scenario_t *sc;
    sv_result_t *res = run(yaml, NULL, 0, &sc);
    const sv_pool_result_t *pp = &res->pools[0];
    ck_assert_int_eq(pp->peak_up, 1);
    ck_assert_msg(pp->mean_up <= 1.0, "mean %.17g replicas up", pp->mean_up);
    tu_assert_rel(pp->mean_up, 1.0, 1e-12); /* its one replica, up all along */
    ck_assert(res->summary.failed_by[SV_FAIL_TIMEOUT] > 0);
    tu_done(sc, res);
}
END_TEST

START_TEST(test_bad_autoscaler)
{
    sv_scenario_t *sc;
    sv_error_t err;
    const char *minmax[] = {"autoscaler.min_replicas=5", "autoscaler.max_replicas=2"};
    ck_assert_int_eq(tu_load_yaml(cat, STEP, minmax, 2, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "autoscaler: min_replicas (5) is greater than max_replicas (2)"),
                  "%s", err.msg);
    const char *cold[] = {"horizon_s=20", "autoscaler.cold_start_s=60"};
    ck_assert_int_eq(tu_load_yaml(cat, STEP, cold, 2, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "autoscaler.cold_start_s: 60 s is not shorter than horizon_s"),
                  "%s", err.msg);
    const char *pol[] = {"autoscaler.policy=cpu"};
    ck_assert_int_eq(tu_load_yaml(cat, STEP, pol, 1, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "expected queue, inflight, kv or ttft_p90, got 'cpu'"), "%s",
                  err.msg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("autoscale");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_step_up_predicted);
    tcase_add_test(tc, test_cold_start);
    tcase_add_test(tc, test_scale_down_drains);
    tcase_add_test(tc, test_accounting);
    tcase_add_test(tc, test_disaggregated_pools);
    tcase_add_test(tc, test_bad_autoscaler);
    tcase_add_test(tc, test_up_time_within_duration);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
