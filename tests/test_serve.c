/*
 * Unit tests of what `servesim serve` is built from:
 *   a live run (servesim/cluster/live.h) given the requests of a batch run at the same
 *   instants makes them at exactly the same times (the same event loop), and the tokens
 *   it reports go 0, 1, ..., output, the first at the record's first_token and the last
 *   at its last_token; so on a disaggregated cluster, whose first token comes from the
 *   prefill replica and the rest from a decode replica;
 *   a request aborted (its client left) while it waits, while it runs, and inside the step
 *   in flight fails as `aborted` at the instant of the abort, frees every KV block, and
 *   the run's counts still add up; an abort after the end changes nothing; so on a
 *   disaggregated cluster, during the prefill and after the first token;
 *   a prompt given the same segments as an earlier one finds its full blocks cached
 *   (vLLM never hits the last token: floor((prompt - 1) / block) blocks);
 *   the shared HTTP server's Host rule (servesim/serve/httpd.h): this machine's names and
 *   addresses, with or without a port, and nothing else.
 */
#include <math.h>
#include <unistd.h>

#include "servesim/cluster/live.h"
#include "servesim/serve/httpd.h"
#include "testsim.h"

static const char *burst = "name: live\n"
                           "seed: 5\n"
                           "model: llama-3.1-8b\n"
                           "hardware: {gpu: h100-sxm, tp: 1, replicas: 1}\n"
                           "workload:\n"
                           "  num_requests: 6\n"
                           "  rate: inf\n"
                           "  input: 700\n"
                           "  output: 24\n";

/* Events after which sv_live_progress stood still (run_live): the server skips its look
 * at the streams after them. */
static int quiet_events;

/* Advance event by event; at each instant check every request's token count against its
 * record: monotone, 1 exactly from first_token on, output from last_token on; and that an
 * event after which sv_live_progress is unchanged made no token and ended no request. */
static void run_live(sv_live_t *l, int n, const int32_t *id, long *tokens_seen)
{
    int ended[8];
    ck_assert_int_le(n, 8);
    quiet_events = 0;
    for (int guard = 0; guard < 1000000; guard++) {
        double t = sv_live_next(l);
        int over = 1;
        for (int k = 0; k < n; k++) {
            const sv_req_t *r = sv_live_req(l, id[k]);
            ended[k] = r->state == SV_RQ_DONE || r->state == SV_RQ_FAILED;
            over &= ended[k];
        }
        if (over || !isfinite(t)) return;
        double p = sv_live_progress(l);
        ck_assert_int_eq(sv_live_advance(l, t), 0);
        int quiet = sv_live_progress(l) == p;
        quiet_events += quiet;
        for (int k = 0; k < n; k++) {
            long g = sv_live_tokens(l, id[k]);
            const sv_req_t *r = sv_live_req(l, id[k]);
            if (quiet)
                ck_assert_msg(g == tokens_seen[k] && ended[k] == (r->state == SV_RQ_DONE ||
                                                                  r->state == SV_RQ_FAILED),
                              "request %d: tokens or its end changed at %.9g, progress did not",
                              (int)id[k], t);
            ck_assert_msg(g >= tokens_seen[k], "request %d: tokens went back", (int)id[k]);
            if (g > 0 && tokens_seen[k] == 0) /* its first token: made now */
                ck_assert_msg(r->first_token == t, "request %d: first token at %.9g, seen at %.9g",
                              (int)id[k], r->first_token, t);
            if (g == r->output && tokens_seen[k] < g && r->state == SV_RQ_DONE)
                ck_assert(r->last_token == t);
            tokens_seen[k] = g;
        }
    }
    ck_abort_msg("the live run did not end");
}

START_TEST(test_live_equals_batch)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sa, *sb;
    sv_result_t *a = tu_run_yaml(cat, burst, NULL, 0, &sa);
    ck_assert_int_eq(a->summary.completed, 6);
    sv_error_t err;
    ck_assert(tu_load_yaml(cat, burst, NULL, 0, &sb, &err) == 0);
    sv_live_t *l;
    ck_assert_msg(sv_live_open(sb, 0, &l, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sv_live_max_model_len(l), a->pools[0].max_model_len);
    int32_t id[6];
    long seen[6] = {0};
    for (int k = 0; k < 6; k++) {
        id[k] = sv_live_submit(l, 700, 24);
        ck_assert_int_eq(id[k], k);
        ck_assert_int_eq(sv_live_tokens(l, id[k]), 0);
    }
    run_live(l, 6, id, seen);
    ck_assert_int_gt(quiet_events, 0); /* (the arrivals at the engine: api_server) */
    sv_live_gauges_t g;
    sv_live_gauges(l, &g);
    ck_assert_int_eq(g.running + g.waiting, 0);
    sv_result_t *b;
    ck_assert_msg(sv_live_close(l, &b, &err) == 0, "%s", err.msg);
    tu_check_accounting(b);
    ck_assert_int_eq((long)b->pool.n, 6);
    for (int k = 0; k < 6; k++) {
        const sv_req_t *x = &a->pool.r[k], *y = &b->pool.r[k];
        ck_assert_int_eq(seen[k], 24);
        ck_assert(x->first_token == y->first_token && x->last_token == y->last_token &&
                  x->end == y->end && x->scheduled == y->scheduled);
    }
    ck_assert(a->summary.itl.mean == b->summary.itl.mean);
    tu_done(sa, a);
    tu_done(sb, b);
    sv_catalog_free(cat);
}
END_TEST

/* A live run of one prefill and one decode replica of Llama-3.1-8B on H100s. */
static sv_live_t *open_live_pd(const char *name, sv_catalog_t **cat, sv_scenario_t **sc)
{
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "name: %s\nseed: 1\nmodel: llama-3.1-8b\npools:\n"
             "  - {name: p, role: prefill, gpu: h100-sxm, replicas: 1}\n"
             "  - {name: d, role: decode, gpu: h100-sxm, replicas: 1}\n"
             "workload: {num_requests: 1, rate: 1, input: 100, output: 2}\n",
             name);
    sv_error_t err;
    *cat = tu_catalog();
    ck_assert_msg(tu_load_yaml(*cat, yaml, NULL, 0, sc, &err) == 0, "%s", err.msg);
    sv_live_t *l;
    ck_assert_msg(sv_live_open(*sc, 0, &l, &err) == 0, "%s", err.msg);
    return l;
}

/* Disaggregated: 1 prefill and 1 decode replica; two requests sent 50 ms apart. Every
 * token is reported once, the first at the prefill's end (the prefill replica makes it). */
START_TEST(test_live_disaggregated)
{
    sv_catalog_t *cat;
    sv_scenario_t *sc;
    sv_live_t *l = open_live_pd("live-pd", &cat, &sc);
    sv_error_t err;
    ck_assert_int_eq(sv_live_replicas(l), 2);
    int32_t id[2];
    long seen[2] = {0};
    id[0] = sv_live_submit(l, 3000, 40);
    ck_assert_int_eq(sv_live_advance(l, 0.05), 0);
    id[1] = sv_live_submit(l, 200, 10);
    run_live(l, 2, id, seen);
    ck_assert_int_eq(seen[0], 40);
    ck_assert_int_eq(seen[1], 10);
    const sv_req_t *r = sv_live_req(l, id[1]);
    ck_assert(fabs(r->start - 0.05) < 1e-12);
    ck_assert(r->first_token == r->prefill_end && r->prefill_replica == 0 && r->replica == 1);
    sv_result_t *res;
    ck_assert_msg(sv_live_close(l, &res, &err) == 0, "%s", err.msg);
    tu_check_accounting(res);
    ck_assert_int_eq(res->summary.completed, 2);
    tu_done(sc, res);
    sv_catalog_free(cat);
}
END_TEST

/* With the background workload (a closed loop of max_concurrency 1): requests from
 * outside pass the client's semaphore (both start at once, at 0, while the loop's first
 * is in flight) and the loop's next waits for a free slot; the clock stops at the
 * horizon, past which no event is next. */
START_TEST(test_live_background_horizon)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc;
    sv_error_t err;
    const char *yaml = "name: live-bg\n"
                       "seed: 2\n"
                       "model: llama-3.1-8b\n"
                       "hardware: {gpu: h100-sxm, tp: 1, replicas: 1}\n"
                       "horizon_s: 5\n"
                       "workload: {num_requests: 3, rate: inf, max_concurrency: 1, input: 100, "
                       "output: 4}\n";
    ck_assert_msg(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err) == 0, "%s", err.msg);
    sv_live_t *l;
    ck_assert_msg(sv_live_open(sc, 1, &l, &err) == 0, "%s", err.msg);
    ck_assert(sv_live_req(l, 0)->start == 0.0); /* the loop's first, sent at open */
    int32_t a = sv_live_submit(l, 100, 4), b = sv_live_submit(l, 100, 4);
    ck_assert_int_eq(a, 1);
    ck_assert_int_eq(b, 2);
    ck_assert(sv_live_req(l, a)->start == 0.0 && sv_live_req(l, b)->start == 0.0);
    ck_assert_int_eq(sv_live_advance(l, 10.0), 0);
    ck_assert(sv_live_now(l) == 5.0);
    ck_assert(!isfinite(sv_live_next(l)));
    const sv_req_t *r3 = sv_live_req(l, 3); /* the loop's second: after all three ended */
    double last = 0;
    for (int k = 0; k < 3; k++)
        if (sv_live_req(l, k)->end > last) last = sv_live_req(l, k)->end;
    ck_assert(r3->start == last);
    sv_result_t *res;
    ck_assert_msg(sv_live_close(l, &res, &err) == 0, "%s", err.msg);
    tu_check_accounting(res);
    ck_assert_int_eq((long)res->pool.n, 5);
    ck_assert_int_eq(res->summary.completed, 5);
    tu_done(sc, res);
    sv_catalog_free(cat);
}
END_TEST

/* A live run of the burst scenario (one replica), no request in it yet. */
static sv_live_t *burst_live(sv_catalog_t *cat, sv_scenario_t **sc)
{
    sv_error_t err;
    ck_assert(tu_load_yaml(cat, burst, NULL, 0, sc, &err) == 0);
    sv_live_t *l;
    ck_assert_msg(sv_live_open(*sc, 0, &l, &err) == 0, "%s", err.msg);
    return l;
}

/* One replica: C is aborted the instant it is sent (before any step), A (2,000 tokens) at
 * the event that made its 2nd token, B between two events, while the step in flight holds
 * it: each fails as aborted at that instant, and every block is free again. */
START_TEST(test_live_abort)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc;
    sv_error_t err;
    sv_live_t *l = burst_live(cat, &sc);
    int32_t c = sv_live_submit(l, 500, 50);
    ck_assert_int_eq(sv_live_abort(l, c), 0); /* at once, before any step */
    const sv_req_t *rc = sv_live_req(l, c);
    ck_assert(rc->state == SV_RQ_FAILED && rc->fail == SV_FAIL_ABORTED && rc->end == 0.0);
    int32_t a = sv_live_submit(l, 2000, 400), b = sv_live_submit(l, 300, 400);
    double ta = -1, tb = -1;
    for (int guard = 0; guard < 100000 && (ta < 0 || tb < 0); guard++) {
        double t = sv_live_next(l);
        ck_assert(isfinite(t));
        ck_assert_int_eq(sv_live_advance(l, t), 0);
        if (ta < 0 && sv_live_tokens(l, a) >= 2) {
            ta = t;
            ck_assert_int_eq(sv_live_abort(l, a), 0);
        }
        if (ta >= 0 && tb < 0 && sv_live_tokens(l, b) >= 10) {
            /* between two events: the step in flight holds b */
            tb = (t + sv_live_next(l)) / 2;
            ck_assert_int_eq(sv_live_advance(l, tb), 0);
            ck_assert_int_eq(sv_live_abort(l, b), 0);
        }
    }
    ck_assert(ta > 0 && tb > ta);
    ck_assert_int_eq(sv_live_advance(l, tb + 1.0), 0);
    const sv_req_t *ra = sv_live_req(l, a), *rb = sv_live_req(l, b);
    ck_assert(ra->state == SV_RQ_FAILED && ra->fail == SV_FAIL_ABORTED && ra->end == ta);
    ck_assert(rb->state == SV_RQ_FAILED && rb->fail == SV_FAIL_ABORTED && rb->end == tb);
    ck_assert_int_eq(sv_live_tokens(l, b) < 400, 1);
    long run, wait;
    double kv;
    sv_live_replica(l, 0, &run, &wait, &kv);
    ck_assert_int_eq(run + wait, 0);
    ck_assert_msg(kv == 0.0, "KV usage %g after every request was aborted", kv);
    ck_assert_int_eq(sv_live_abort(l, a), 0); /* ended already: nothing */
    ck_assert_int_eq(sv_live_abort(l, 99), SV_EINVAL);
    int32_t d = sv_live_submit(l, 100, 4); /* the replica serves on */
    sv_result_t *res;
    ck_assert_msg(sv_live_close(l, &res, &err) == 0, "%s", err.msg);
    tu_check_accounting(res);
    ck_assert_int_eq((long)res->pool.n, 4);
    ck_assert_int_eq(res->summary.completed, 1);
    ck_assert_int_eq(res->summary.failed_by[SV_FAIL_ABORTED], 3);
    ck_assert(res->pool.r[d].state == SV_RQ_DONE);
    ck_assert_int_eq(res->rstats[0].blocks_free_end, res->rstats[0].blocks_total);
    tu_done(sc, res);
    sv_catalog_free(cat);
}
END_TEST

/* Disaggregated (1 prefill, 1 decode replica): one request aborted during its prefill, one
 * once its first token came (on its way to, or on, the decode replica): both fail as
 * aborted and, closed, every block of both replicas is free. */
START_TEST(test_live_abort_disaggregated)
{
    sv_catalog_t *cat;
    sv_scenario_t *sc;
    sv_live_t *l = open_live_pd("live-pd-abort", &cat, &sc);
    sv_error_t err;
    int32_t a = sv_live_submit(l, 8000, 40);
    ck_assert_int_eq(sv_live_advance(l, sv_live_next(l)), 0); /* its prefill starts */
    ck_assert_int_eq(sv_live_abort(l, a), 0);
    int32_t b = sv_live_submit(l, 3000, 400);
    for (int guard = 0; guard < 100000 && sv_live_tokens(l, b) < 1; guard++)
        ck_assert_int_eq(sv_live_advance(l, sv_live_next(l)), 0);
    ck_assert_int_eq(sv_live_abort(l, b), 0);
    ck_assert_int_eq(sv_live_advance(l, sv_live_now(l) + 1.0), 0);
    const sv_req_t *ra = sv_live_req(l, a), *rb = sv_live_req(l, b);
    ck_assert(ra->state == SV_RQ_FAILED && ra->fail == SV_FAIL_ABORTED);
    ck_assert(rb->state == SV_RQ_FAILED && rb->fail == SV_FAIL_ABORTED);
    sv_result_t *res;
    ck_assert_msg(sv_live_close(l, &res, &err) == 0, "%s", err.msg);
    tu_check_accounting(res);
    ck_assert_int_eq(res->summary.failed_by[SV_FAIL_ABORTED], 2);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(res->rstats[i].blocks_free_end, res->rstats[i].blocks_total);
    tu_done(sc, res);
    sv_catalog_free(cat);
}
END_TEST

/* Two prompts of 1,000 tokens made of the same 16-token segments, the second sent after the
 * first ended: its 62 full blocks but never the last token (floor(999 / 16) = 62 blocks,
 * 992 tokens) are hits, and its TTFT is shorter; a third with other segments hits nothing. */
START_TEST(test_live_prompt_identity)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc;
    sv_error_t err;
    sv_live_t *l = burst_live(cat, &sc);
    ck_assert_int_eq(sv_live_block_tokens(l), 16);
    sv_segment_t seg[63], other[63];
    for (int k = 0; k < 63; k++) {
        seg[k] = (sv_segment_t){1000u + (uint64_t)k, k < 62 ? 16 : 8};
        other[k] = (sv_segment_t){5000u + (uint64_t)k, k < 62 ? 16 : 8};
    }
    int32_t id[3];
    const sv_segment_t *which[3] = {seg, seg, other};
    for (int k = 0; k < 3; k++) {
        id[k] = sv_live_submit_prompt(l, 1000, 4, which[k], 63);
        ck_assert_int_eq(id[k], k);
        double before = sv_live_replica_stats(l, 0)->prefix_hits;
        while (sv_live_req(l, id[k])->state != SV_RQ_DONE)
            ck_assert_int_eq(sv_live_advance(l, sv_live_next(l)), 0);
        double hits = sv_live_replica_stats(l, 0)->prefix_hits - before;
        ck_assert_msg(hits == (k == 1 ? 992.0 : 0.0), "request %d: %g tokens hit", k, hits);
    }
    ck_assert(sv_req_ttft(sv_live_req(l, 1)) < sv_req_ttft(sv_live_req(l, 0)));
    ck_assert_int_eq(sv_live_submit_prompt(l, 999, 4, seg, 63), -1); /* 1,000 tokens: not 999 */
    sv_result_t *res;
    sv_live_close(l, &res, &err);
    sv_result_free(res);
    sv_scenario_free(sc);
    sv_catalog_free(cat);
}
END_TEST

static enum MHD_Result no_answer(void *cls, sv_httpd_req_t *q)
{
    (void)cls;
    (void)q;
    return MHD_NO;
}

START_TEST(test_host_rule)
{
    sv_httpd_cfg_t cfg = {.bind = "127.0.0.1",
                          .max_conns = 4,
                          .per_client = 4,
                          .deadline_s = 5,
                          .idle_s = 5,
                          .max_body = 1024,
                          .conn_memory = 32768,
                          .handler = no_answer};
    sv_httpd_t *h;
    int port;
    sv_error_t err;
    ck_assert_msg(sv_httpd_start(&cfg, &h, &port, &err) == 0, "%s", err.msg);
    ck_assert(port > 0);
    static const char *const yes[] = {"127.0.0.1", "127.0.0.1:8000", "localhost", "LOCALHOST:1",
                                      "[::1]", "[::1]:80"};
    static const char *const no[] = {NULL,          "",          "evil.example", "127.0.0.1.evil",
                                     "localhost.x", "127.0.0.1:", "127.0.0.1:8a", "[::1]x",
                                     "10.1.2.3"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        ck_assert_msg(sv_httpd_host_ok(h, yes[i]), "refused %s", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        ck_assert_msg(!sv_httpd_host_ok(h, no[i]), "accepted %s", no[i] ? no[i] : "(none)");
    char name[256];
    ck_assert(gethostname(name, sizeof name) == 0);
    ck_assert_msg(!sv_httpd_host_ok(h, name) || strcmp(name, "localhost") == 0,
                  "bound to 127.0.0.1, the host name %s is not this server's", name);
    sv_httpd_stop(h);
    /* bound to every interface: the host name is this machine's */
    cfg.bind = "0.0.0.0";
    ck_assert_msg(sv_httpd_start(&cfg, &h, &port, &err) == 0, "%s", err.msg);
    ck_assert_msg(sv_httpd_host_ok(h, name), "bound to 0.0.0.0, refused the host name %s", name);
    ck_assert(!sv_httpd_host_ok(h, "evil.example"));
    sv_httpd_stop(h);
    cfg.bind = "localhost";
    ck_assert_int_eq(sv_httpd_start(&cfg, &h, &port, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--bind: expected an IP address like 127.0.0.1, got 'localhost'");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("serve");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_live_equals_batch);
    tcase_add_test(tc, test_live_disaggregated);
    tcase_add_test(tc, test_live_background_horizon);
    tcase_add_test(tc, test_live_abort);
    tcase_add_test(tc, test_live_abort_disaggregated);
    tcase_add_test(tc, test_live_prompt_identity);
    tcase_add_test(tc, test_host_rule);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
