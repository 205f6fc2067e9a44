/*
 * Unit tests of the client-server network (servesim/cluster/network.h): a round trip seen
 * by the client, half each way. Each case runs the same scenario with and without the
 * network and checks the differences worked out by hand from the definitions:
 *   TTFT and E2EL grow by exactly the RTT, TPOT and ITL do not change;
 *   a closed loop of one slot sends the next request only when the last token arrived,
 *   so each request after the first starts one RTT later than without the network.
 */
#include <math.h>

#include "servesim/cluster/network.h"
#include "testsim.h"

static const char *closed = "name: net\n"
                            "seed: 3\n"
                            "model: llama-3.1-8b\n"
                            "hardware: {gpu: h100-sxm, tp: 1, replicas: 1}\n"
                            "workload:\n"
                            "  num_requests: 3\n"
                            "  rate: inf\n"
                            "  max_concurrency: 1\n"
                            "  input: 512\n"
                            "  output: 32\n";

#define NEAR(a, b) ck_assert_msg(fabs((a) - (b)) < 1e-9, "%s = %.12g, expected %.12g", #a, a, b)

/* Closed loop, one slot, RTT 100 ms: request k is sent at k x (server time of one
 * request + 0.1 s) and every one of them sees its TTFT and E2EL grow by 0.1 s. The server
 * does the same work at shifted times, so TPOT and the ITLs are equal; the benchmark
 * lasts 3 x 0.1 s longer (three round trips one after another). */
START_TEST(test_closed_loop_fixed)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *s0, *s1;
    sv_result_t *a = tu_run_yaml(cat, closed, NULL, 0, &s0);
    const char *set[] = {"network.rtt_ms=100"};
    sv_result_t *b = tu_run_yaml(cat, closed, set, 1, &s1);
    tu_check_accounting(b);
    ck_assert(s1->network.enabled);
    ck_assert_int_eq(b->summary.completed, 3);
    for (int k = 0; k < 3; k++) {
        const sv_req_t *x = &a->pool.r[k], *y = &b->pool.r[k];
        NEAR(y->start - x->start, 0.1 * k);
        NEAR(sv_req_ttft(y) - sv_req_ttft(x), 0.1);
        NEAR(sv_req_e2el(y) - sv_req_e2el(x), 0.1);
        NEAR(sv_req_tpot(y), sv_req_tpot(x));
    }
    NEAR(b->summary.duration - a->summary.duration, 0.3);
    NEAR(b->summary.ttft.mean - a->summary.ttft.mean, 100.0);
    NEAR(b->summary.e2el.mean - a->summary.e2el.mean, 100.0);
    NEAR(b->summary.tpot.mean, a->summary.tpot.mean);
    NEAR(b->summary.itl.mean, a->summary.itl.mean);
    NEAR(b->summary.itl.pct[0], a->summary.itl.pct[0]);
    tu_done(s0, a);
    tu_done(s1, b);
    sv_catalog_free(cat);
}
END_TEST

/* --check's recount of client slots counts the requests that ended on the server but
 * whose last token is still on its way (RTT / 2): they hold their slot. Counting only the
 * records not over was a false alarm ("8 in flight ..., the records 7") in every closed
 * loop with a round trip (the recount runs at each 10 ms sample). */
START_TEST(test_check_with_rtt)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc;
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\nnetwork: {rtt_ms: 20}\n"
                       "metrics: {sample_interval_s: 0.01}\n"
                       "workload: {num_requests: 50, rate: inf, max_concurrency: 8, "
                       "input: {dist: uniform, min: 10, max: 2000}, output: {dist: uniform, "
                       "min: 1, max: 200}}\n";
    sv_result_t *res = tu_run_checked(cat, yaml, &sc);
    ck_assert_int_eq(res->summary.completed, 50);
    tu_check_accounting(res);
    tu_done(sc, res);
    sv_catalog_free(cat);
}
END_TEST

/* A distribution: requests far apart (one every 10 s, each done in well under a second)
 * never meet, so each one's TTFT grows by its own RTT, drawn in [20, 60] ms; the same
 * seed draws the same RTTs. */
START_TEST(test_uniform_rtt)
{
    const char *open = "name: net2\n"
                       "seed: 5\n"
                       "model: llama-3.1-8b\n"
                       "hardware: {gpu: h100-sxm}\n"
                       "workload:\n"
                       "  num_requests: 20\n"
                       "  rate: 0.1\n"
                       "  burstiness: inf\n"
                       "  input: 256\n"
                       "  output: 16\n";
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *s0, *s1, *s2;
    sv_result_t *a = tu_run_yaml(cat, open, NULL, 0, &s0);
    const char *set[] = {"network.rtt_ms={dist: uniform, min: 20, max: 60}"};
    sv_result_t *b = tu_run_yaml(cat, open, set, 1, &s1);
    sv_result_t *c = tu_run_yaml(cat, open, set, 1, &s2);
    double lo = 1, hi = 0;
    for (int k = 0; k < 20; k++) {
        const sv_req_t *x = &a->pool.r[k], *y = &b->pool.r[k];
        double d = sv_req_ttft(y) - sv_req_ttft(x);
        ck_assert_msg(d >= 0.020 - 1e-12 && d <= 0.060 + 1e-12, "request %d: +%g s", k, d);
        NEAR(sv_req_e2el(y) - sv_req_e2el(x), d);
        NEAR(sv_req_tpot(y), sv_req_tpot(x));
        NEAR(sv_req_ttft(&c->pool.r[k]), sv_req_ttft(y));
        lo = fmin(lo, d);
        hi = fmax(hi, d);
    }
    ck_assert(hi - lo > 0.01); /* drawn, not fixed */
    tu_done(s0, a);
    tu_done(s1, b);
    tu_done(s2, c);
    sv_catalog_free(cat);
}
END_TEST

/* Request classes (workload.classes), each with its own round trip: class "near" with
 * rtt_ms 0 and "far" with 100 ms, in a closed loop of one slot. Every request meets an
 * idle server, so the server's part of each is the same with and without the network: a
 * far request's TTFT and E2EL grow by exactly 0.1 s and its TPOT does not change, a near
 * request's latencies do not change at all (only its start, behind the far ones). */
static const char *classes = "name: netc\n"
                             "seed: 4\n"
                             "model: llama-3.1-8b\n"
                             "hardware: {gpu: h100-sxm, tp: 1, replicas: 1}\n"
                             "workload:\n"
                             "  num_requests: 8\n"
                             "  rate: inf\n"
                             "  max_concurrency: 1\n"
                             "  classes:\n"
                             "    - {name: near, share: 0.5, input: 512, output: 32}\n"
                             "    - {name: far, share: 0.5, input: 256, output: 16}\n";

/* Runs `classes` with sets; checks each request's TTFT/E2EL grew by add[class] s over
 * the run without them, TPOT equal; returns how many requests each class had. */
static void class_deltas(const char **set, int nset, const double add[2], int count[2])
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *s0, *s1;
    sv_result_t *a = tu_run_yaml(cat, classes, NULL, 0, &s0);
    sv_result_t *b = tu_run_yaml(cat, classes, set, nset, &s1);
    tu_check_accounting(b);
    ck_assert_int_eq(b->summary.completed, 8);
    ck_assert(!s0->has_class_rtt && s1->has_class_rtt);
    count[0] = count[1] = 0;
    for (int k = 0; k < 8; k++) {
        const sv_req_t *x = &a->pool.r[k], *y = &b->pool.r[k];
        ck_assert_int_eq(x->cls, y->cls);
        count[y->cls]++;
        NEAR(sv_req_ttft(y) - sv_req_ttft(x), add[y->cls]);
        NEAR(sv_req_e2el(y) - sv_req_e2el(x), add[y->cls]);
        NEAR(sv_req_tpot(y), sv_req_tpot(x));
    }
    tu_done(s0, a);
    tu_done(s1, b);
    sv_catalog_free(cat);
}

START_TEST(test_class_rtt)
{
    const char *set[] = {"workload.classes=[{name: near, share: 0.5, input: 512, output: 32, "
                         "rtt_ms: 0}, {name: far, share: 0.5, input: 256, output: 16, rtt_ms: "
                         "100}]"};
    const double add[2] = {0.0, 0.1};
    int count[2];
    class_deltas(set, 1, add, count);
    ck_assert_int_gt(count[0], 0);
    ck_assert_int_gt(count[1], 0);
}
END_TEST

/* A class's rtt_ms overrides network.rtt_ms; a class without one takes the network's:
 * network 50 ms, far 100 ms (fixed as a distribution map). */
START_TEST(test_class_rtt_overrides)
{
    const char *set[] = {"network.rtt_ms=50",
                         "workload.classes=[{name: near, share: 0.5, input: 512, output: 32}, "
                         "{name: far, share: 0.5, input: 256, output: 16, rtt_ms: {dist: fixed, "
                         "value: 100}}]"};
    const double add[2] = {0.05, 0.1};
    int count[2];
    class_deltas(set, 2, add, count);
    ck_assert_int_gt(count[0], 0);
    ck_assert_int_gt(count[1], 0);
}
END_TEST

START_TEST(test_errors)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc = NULL;
    sv_error_t err;
    const char *neg[] = {"network.rtt_ms=-5"};
    ck_assert_int_ne(tu_load_yaml(cat, closed, neg, 1, &sc, &err), 0);
    ck_assert(strstr(err.msg, "network.rtt_ms"));
    const char *dist[] = {"network.rtt_ms={dist: zipf}"};
    ck_assert_int_eq(tu_load_yaml(cat, closed, dist, 1, &sc, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--set network.rtt_ms={dist: zipf}: network.rtt_ms.dist: expected "
                              "fixed, uniform, normal or lognormal, got 'zipf'");
    const char *cneg[] = {"workload.classes=[{name: a, share: 1, input: 9, output: 9, rtt_ms: "
                          "{dist: uniform, min: 30, max: 10}}]"};
    ck_assert_int_eq(tu_load_yaml(cat, classes, cneg, 1, &sc, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--set workload.classes=[{name: a, share: 1, input: 9, output: 9, "
                              "rtt_ms: {dist: uniform, min: 30, max: 10}}]: "
                              "workload.classes[0].rtt_ms: min (30) is greater than max (10)");
    sv_catalog_free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("network");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_closed_loop_fixed);
    tcase_add_test(tc, test_check_with_rtt);
    tcase_add_test(tc, test_uniform_rtt);
    tcase_add_test(tc, test_class_rtt);
    tcase_add_test(tc, test_class_rtt_overrides);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
