/*
 * Contracts (docs/contracts.md): layered percentile budgets judged on hand-made latency
 * lists, per-class attainment on a small hand-made pool, and the priority scheduling
 * policy's admission and preemption order on a replica driven step by step, predicted
 * from vLLM V1's rules (vllm/v1/core/sched/scheduler.py, request_queue.py). Times are
 * binary fractions so comparisons are exact.
 */
#include <math.h>

#include "servesim/engine/replica.h"
#include "servesim/metrics/contract.h"
#include "servesim/studies/sweep.h"
#include "testrig.h"

static sv_catalog_t *cat;

static void setup(void)
{
    cat = tu_catalog();
}

static void teardown(void)
{
    sv_catalog_free(cat);
}

/* A completed request with one output token: TTFT = E2EL = ttft (s). */
static sv_req_t done_req(double start, double ttft, int cls)
{
    sv_req_t r;
    memset(&r, 0, sizeof r);
    r.arrival = r.start = r.scheduled = start;
    r.first_token = r.last_token = r.end = r.prefill_end = start + ttft;
    r.xfer_start = r.xfer_end = r.decode_start = -1.0;
    r.input = 16;
    r.output = 1;
    r.state = SV_RQ_DONE;
    r.cls = (uint8_t)cls;
    return r;
}

static sv_metrics_cfg_t base_cfg(void)
{
    sv_metrics_cfg_t c = {.percentiles = {99.0},
                          .npercentiles = 1,
                          .selected = SV_M_TTFT,
                          .slo_ttft_ms = NAN,
                          .slo_tpot_ms = NAN,
                          .slo_e2el_ms = NAN,
                          .attainment = 0.9,
                          .sample_interval = 1.0};
    return c;
}

/*
 * TTFTs of ten requests: nine of 0.125 s and one of 5 s. numpy's linear percentiles:
 * p50 at rank 4.5 = 125 ms; p90 at rank 8.1 = 125 + 0.1 x 4875 = 612.5 ms; p99 at rank
 * 8.91 = 125 + 0.91 x 4875 = 4561.25 ms. Budgets p50 <= 200, p90 <= 1000, p99 <= 4000:
 * met with margins 75 and 387.5 ms, missed at p99 by 561.25 ms.
 */
START_TEST(test_layered_budget_met_p50_missed_p99)
{
    sv_metrics_cfg_t c = base_cfg();
    c.budgets[0] = (sv_budget_t){SV_K_TTFT, 50, 200};
    c.budgets[1] = (sv_budget_t){SV_K_TTFT, 90, 1000};
    c.budgets[2] = (sv_budget_t){SV_K_TTFT, 99, 4000};
    c.nbudgets = 3;
    sv_metrics_t *m = sv_metrics_new(&c, 1);
    sv_reqpool_t pool = {0};
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq(sv_reqpool_add(&pool), i);
        pool.r[i] = done_req(0.0, i == 9 ? 5.0 : 0.125, 0);
    }
    sv_summary_t s;
    sv_error_t err;
    ck_assert_int_eq(sv_metrics_summarize(m, &pool, &s, &err), 0);
    tu_assert_rel(s.budget_ms[0], 125.0, 1e-12);
    tu_assert_rel(s.budget_ms[1], 612.5, 1e-12);
    tu_assert_rel(s.budget_ms[2], 4561.25, 1e-12);
    sv_slo_t slo;
    sv_metrics_slo(&c, -1, &slo);
    sv_slo_check_t k;
    sv_slo_check(&slo, &s, &k);
    ck_assert_int_eq(k.nbudgets, 3);
    ck_assert_int_eq(k.budget[0].met, 1);
    tu_assert_rel(k.budget[0].margin, 75.0, 1e-12);
    ck_assert_int_eq(k.budget[1].met, 1);
    tu_assert_rel(k.budget[1].margin, 387.5, 1e-12);
    ck_assert_int_eq(k.budget[2].met, 0);
    tu_assert_rel(k.budget[2].margin, -561.25, 1e-12);
    ck_assert_int_eq(k.met, 0);
    ck_assert_int_eq(k.per_request, 0);
    ck_assert_str_eq(k.broken, "ttft p99");
    sv_contract_check_t v;
    sv_contract_check(&c, &s, NULL, &v);
    ck_assert_int_eq(v.given, 1);
    ck_assert_int_eq(v.layered, 1);
    ck_assert_int_eq(v.met, 0);
    ck_assert_str_eq(v.broken, "ttft p99");
    /* A p99 budget of exactly the value holds (inclusive, as vLLM's goodput). */
    c.budgets[2].ms = s.budget_ms[2];
    sv_contract_check(&c, &s, NULL, &v);
    ck_assert_int_eq(v.met, 1);
    ck_assert_str_eq(v.broken, "");
    sv_metrics_free(m);
    sv_reqpool_free(&pool);
}
END_TEST

/*
 * ITL budgets come from the pool of every gap (vLLM's ITL), weighted as the summary's.
 * Replica 0's decode steps end at 0.25, 0.375, 0.5625, 0.75 s; request 0 (first token
 * 0.125) decodes in steps 0 and 1, request 1 (first token 0.25) in steps 1 to 3. Gaps:
 * 0.125, 0.125 and 0.125, 0.1875, 0.1875. Sorted [125, 125, 125, 187.5, 187.5] ms: p50
 * at rank 2 = 125; p70 at rank 2.8 = 125 + 0.8 x 62.5 = 175.
 */
START_TEST(test_itl_budgets)
{
    sv_metrics_cfg_t c = base_cfg();
    c.budgets[0] = (sv_budget_t){SV_K_ITL, 50, 125};
    c.budgets[1] = (sv_budget_t){SV_K_ITL, 70, 170};
    c.budgets[2] = (sv_budget_t){SV_K_TTFT, 50, 1000};
    c.nbudgets = 3;
    sv_metrics_t *m = sv_metrics_new(&c, 1);
    const double steps[] = {0.25, 0.375, 0.5625, 0.75};
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq((int)sv_metrics_decode_step(m, 0, steps[k]), k);
    int32_t s0 = sv_metrics_seg_open(m, 0, 0, 0, 0.125);
    int32_t s1 = sv_metrics_seg_open(m, 1, 0, 1, 0.25);
    ck_assert(sv_metrics_seg_close(m, s0, 2) == 0.375);
    ck_assert(sv_metrics_seg_close(m, s1, 4) == 0.75);
    sv_reqpool_t pool = {0};
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(sv_reqpool_add(&pool), i);
    pool.r[0] = done_req(0.0, 0.125, 0);
    pool.r[0].last_token = pool.r[0].end = 0.375;
    pool.r[0].output = 3;
    pool.r[1] = done_req(0.0625, 0.1875, 0);
    pool.r[1].last_token = pool.r[1].end = 0.75;
    pool.r[1].output = 4;
    sv_summary_t s;
    sv_error_t err;
    ck_assert_int_eq(sv_metrics_summarize(m, &pool, &s, &err), 0);
    ck_assert_int_eq(s.itl.n, 5);
    tu_assert_rel(s.budget_ms[0], 125.0, 1e-12);
    tu_assert_rel(s.budget_ms[1], 175.0, 1e-12);
    tu_assert_rel(s.budget_ms[2], 156.25, 1e-12); /* TTFTs 125 and 187.5 ms */
    sv_slo_t slo;
    sv_metrics_slo(&c, -1, &slo);
    sv_slo_check_t k;
    sv_slo_check(&slo, &s, &k);
    ck_assert_int_eq(k.budget[0].met, 1); /* inclusive: 125 <= 125 */
    ck_assert_int_eq(k.budget[1].met, 0);
    tu_assert_rel(k.budget[1].margin, -5.0, 1e-12);
    ck_assert_int_eq(k.budget[2].met, 1);
    ck_assert_str_eq(k.broken, "itl p70");
    sv_metrics_free(m);
    sv_reqpool_free(&pool);
}
END_TEST

/* A failed request never met a budget: 1 failure in 10 leaves no room for p95 (5%). */
START_TEST(test_budget_missed_by_failures)
{
    sv_metrics_cfg_t c = base_cfg();
    c.budgets[0] = (sv_budget_t){SV_K_TTFT, 50, 200};
    c.budgets[1] = (sv_budget_t){SV_K_TTFT, 95, 200};
    c.nbudgets = 2;
    sv_metrics_t *m = sv_metrics_new(&c, 1);
    sv_reqpool_t pool = {0};
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq(sv_reqpool_add(&pool), i);
        pool.r[i] = done_req(0.0, 0.125, 0);
    }
    pool.r[9].state = SV_RQ_FAILED;
    pool.r[9].fail = SV_FAIL_TIMEOUT;
    sv_summary_t s;
    sv_error_t err;
    ck_assert_int_eq(sv_metrics_summarize(m, &pool, &s, &err), 0);
    sv_slo_t slo;
    sv_metrics_slo(&c, -1, &slo);
    sv_slo_check_t k;
    sv_slo_check(&slo, &s, &k);
    tu_assert_rel(k.budget[1].value, 125.0, 1e-12); /* over the nine completed */
    ck_assert_int_eq(k.budget[0].met, 1);
    ck_assert_int_eq(k.budget[1].met, 0);
    ck_assert_str_eq(k.broken, "ttft p95");
    sv_metrics_free(m);
    sv_reqpool_free(&pool);
}
END_TEST

/*
 * Two classes: chat (per-request TTFT <= 150 ms, p50 TTFT <= 200 ms) and batch (TTFT <=
 * 1000 ms per request). chat TTFTs 0.125, 0.25, 0.125 s: 2 of 3 meet. batch TTFTs 0.5,
 * 1.5, 0.75 s and one failure: 2 of 4. Overall, each judged by its class: 4 of 7.
 * Duration: the last end, 0.0 + 1.5 = 1.5 s; chat's throughput 3 / 1.5 = 2 req/s.
 */
START_TEST(test_two_classes_attainment)
{
    sv_metrics_cfg_t c = base_cfg();
    c.nclasses = 2;
    snprintf(c.class_name[0], SV_CLASS_NAME, "chat");
    snprintf(c.class_name[1], SV_CLASS_NAME, "batch");
    sv_slo_t chat = {.ttft_ms = 150, .tpot_ms = NAN, .e2el_ms = NAN, .attainment = 0.6};
    chat.budget[0] = (sv_budget_t){SV_K_TTFT, 50, 200};
    chat.nbudgets = 1;
    sv_slo_t batch = {.ttft_ms = 1000, .tpot_ms = NAN, .e2el_ms = NAN, .attainment = 0.6};
    c.class_slo[0] = chat;
    c.class_slo[1] = batch;
    sv_metrics_t *m = sv_metrics_new(&c, 1);
    sv_reqpool_t pool = {0};
    const double ttft[7] = {0.125, 0.25, 0.125, 0.5, 1.5, 0.75, 0.25};
    const int cls[7] = {0, 0, 0, 1, 1, 1, 1};
    for (int i = 0; i < 7; i++) {
        ck_assert_int_eq(sv_reqpool_add(&pool), i);
        pool.r[i] = done_req(0.0, ttft[i], cls[i]);
    }
    pool.r[6].state = SV_RQ_FAILED;
    pool.r[6].fail = SV_FAIL_TIMEOUT;
    sv_summary_t all, k[2];
    sv_error_t err;
    ck_assert_int_eq(sv_metrics_summarize(m, &pool, &all, &err), 0);
    ck_assert_int_eq(sv_metrics_summarize_class(m, &pool, 0, &k[0], &err), 0);
    ck_assert_int_eq(sv_metrics_summarize_class(m, &pool, 1, &k[1], &err), 0);
    ck_assert_int_eq(all.completed, 6);
    ck_assert_int_eq(all.failed, 1);
    ck_assert_int_eq(all.good, 4);
    ck_assert_int_eq(k[0].completed, 3);
    ck_assert_int_eq(k[0].failed, 0);
    ck_assert_int_eq(k[0].good, 2);
    ck_assert_int_eq(k[1].completed, 3);
    ck_assert_int_eq(k[1].failed, 1);
    ck_assert_int_eq(k[1].good, 2);
    ck_assert(k[0].duration == 1.5 && k[1].duration == 1.5);
    ck_assert(k[0].request_throughput == 2.0);
    tu_assert_rel(k[0].ttft.mean, 500.0 / 3.0, 1e-12);
    tu_assert_rel(k[1].ttft.median, 750.0, 1e-12);
    tu_assert_rel(k[0].budget_ms[0], 125.0, 1e-12);
    /* chat: 2/3 >= 0.6 and p50 125 <= 200: met; batch: 2/4 < 0.6: missed. */
    sv_slo_check_t ck;
    sv_slo_check(&chat, &k[0], &ck);
    tu_assert_rel(ck.attained, 2.0 / 3.0, 1e-15);
    ck_assert_int_eq(ck.met, 1);
    sv_slo_check(&batch, &k[1], &ck);
    ck_assert(ck.attained == 0.5);
    ck_assert_int_eq(ck.met, 0);
    sv_contract_check_t v;
    sv_contract_check(&c, &all, k, &v);
    ck_assert_int_eq(v.met, 0);
    ck_assert_str_eq(v.broken, "batch: attainment");
    sv_metrics_free(m);
    sv_reqpool_free(&pool);
}
END_TEST

/* ---- the priority policy on one replica, step by step ---------------------------------- */

/* A replica of kv_blocks blocks (16 tokens) and max_num_seqs seqs, and n requests of
 * input tokens and output tokens with the given priorities and start times; the first
 * nsub are submitted at t = 0 (tests/testrig.h). */
static void rig_new(rig_t *g, int policy, long kv_blocks, long seqs, int n, int nsub,
                    const int *prio, const double *start, int input, int output)
{
    enum { MAXN = 8 };
    int in[MAXN], out[MAXN];
    ck_assert(n <= MAXN);
    for (int i = 0; i < n; i++) {
        in[i] = input;
        out[i] = output;
    }
    rigcfg_t c = {.kv_blocks = kv_blocks, .seqs = seqs, .priority = policy};
    tu_rig_new(g, cat, &c, n, in, out, prio, start);
    for (int i = 0; i < nsub; i++)
        ck_assert_int_eq(sv_replica_submit(g->r, i, 0.0), SV_FAIL_NONE);
}

/*
 * One sequence at a time, four requests queued at once: priorities 1, 0, 1, 0 sent at
 * 0, 1/8, 2/8, 3/8 s. FCFS admits them in id order; priority by (priority, arrival):
 * 1, 3, 0, 2.
 */
START_TEST(test_priority_admission_order)
{
    const int prio[4] = {1, 0, 1, 0};
    const double start[4] = {0, 0.125, 0.25, 0.375};
    const int want[2][4] = {{0, 1, 2, 3}, {1, 3, 0, 2}};
    for (int policy = 0; policy < 2; policy++) {
        rig_t g;
        rig_new(&g, policy, 1000, 1, 4, 4, prio, start, 64, 4);
        tu_rig_steps(&g, 0.0, 1000);
        for (int i = 0; i < 4; i++)
            ck_assert(g.pool.r[i].state == SV_RQ_DONE);
        for (int j = 1; j < 4; j++)
            ck_assert_msg(g.pool.r[want[policy][j - 1]].scheduled <
                              g.pool.r[want[policy][j]].scheduled,
                          "policy %d: request %d should be admitted before %d", policy,
                          want[policy][j - 1], want[policy][j]);
        tu_rig_free(&g);
    }
}
END_TEST

/*
 * Seven blocks of 16 tokens to give out (eight, one being vLLM V1's null block),
 * 32-token prompts (2 blocks each). Request 0 (priority 1)
 * comes alone and is prefilled (2 blocks); then requests 1 and 2 (priority 0) come: the
 * next step gives request 0 its 3rd block and prefills both (7 blocks, none free). In the
 * step after, 1 and 2 each need a 3rd block: one running request is preempted. FCFS takes
 * the last admitted, request 2 (its 2 blocks let request 1 go on); priority the largest
 * (priority, arrival), request 0, though it is the first in the running list.
 */
START_TEST(test_priority_preemption_victim)
{
    const int prio[3] = {1, 0, 0};
    const double start[3] = {0, 0.125, 0.125};
    const int victim[2] = {2, 0};
    for (int policy = 0; policy < 2; policy++) {
        rig_t g;
        rig_new(&g, policy, 8, 8, 3, 1, prio, start, 32, 8);
        double t = tu_rig_steps(&g, 0.0, 1); /* request 0's prefill */
        ck_assert_int_eq(sv_replica_free_blocks(g.r), 5);
        ck_assert_int_eq(sv_replica_submit(g.r, 1, t), SV_FAIL_NONE);
        ck_assert_int_eq(sv_replica_submit(g.r, 2, t), SV_FAIL_NONE);
        t = tu_rig_steps(&g, t, 1); /* request 0 decodes, 1 and 2 prefill */
        ck_assert_int_eq(sv_replica_free_blocks(g.r), 0);
        for (int i = 0; i < 3; i++)
            ck_assert_int_eq(g.pool.r[i].preemptions, 0);
        t = tu_rig_steps(&g, t, 1); /* one is preempted */
        for (int i = 0; i < 3; i++)
            ck_assert_msg(g.pool.r[i].preemptions == (i == victim[policy]),
                          "policy %d: request %d preempted %d times", policy, i,
                          g.pool.r[i].preemptions);
        tu_rig_steps(&g, t, 10000);
        for (int i = 0; i < 3; i++)
            ck_assert(g.pool.r[i].state == SV_RQ_DONE);
        tu_rig_free(&g);
    }
}
END_TEST

/* The scenario: classes with shares, lengths, priorities and SLOs; a run reports each. */
static const char *CLASSES =
    "model: llama-3.1-8b\nseed: 3\nhardware: {gpu: h100-sxm}\n"
    "engine: {scheduling_policy: priority}\n"
    "workload:\n  num_requests: 400\n  rate: 20\n  classes:\n"
    "    - {name: chat, share: 0.75, priority: 0, input: 256, output: 32,\n"
    "       slo: {ttft_ms: {p50: 400, p99: 5000}}}\n"
    "    - {name: batch, share: 0.25, priority: 5, input: 2048, output: 64}\n"
    "slo: {ttft_ms: 10000, attainment: 0.5}\n";

START_TEST(test_classes_run)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, CLASSES, NULL, 0, &sc);
    tu_check_accounting(res);
    ck_assert_int_eq(sc->workload.nclasses, 2);
    ck_assert(sc->pools[0].engine.priority_policy == 1);
    ck_assert(res->class_summary != NULL);
    long n[2] = {0, 0};
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        n[r->cls]++;
        ck_assert_int_eq(r->input, r->cls ? 2048 : 256);
        ck_assert_int_eq(r->priority, r->cls ? 5 : 0);
    }
    ck_assert_int_eq(n[0] + n[1], 400);
    ck_assert(n[0] > 250 && n[0] < 350); /* 300 expected from a share of 0.75 */
    ck_assert_int_eq(res->class_summary[0].completed + res->class_summary[0].failed, n[0]);
    ck_assert_int_eq(res->class_summary[1].completed + res->class_summary[1].failed, n[1]);
    ck_assert_int_eq(res->class_summary[0].total_output + res->class_summary[1].total_output,
                     res->summary.total_output);
    /* batch has no slo of its own: the top-level one (10 s per request) applies */
    ck_assert(res->sc->metrics.class_slo[1].ttft_ms == 10000);
    ck_assert(isnan(res->sc->metrics.class_slo[0].ttft_ms)); /* chat's own replaces it */
    ck_assert_int_eq(res->sc->metrics.class_slo[0].nbudgets, 2);
    tu_done(sc, res);
}
END_TEST

static void load_fails(const char *yaml, const char *set, const char *want)
{
    sv_scenario_t *sc = NULL;
    sv_error_t err;
    const char *sets[1] = {set};
    ck_assert_int_ne(tu_load_yaml(cat, yaml, set ? sets : NULL, set ? 1 : 0, &sc, &err), 0);
    ck_assert_msg(strstr(err.msg, want), "got: %s", err.msg);
}

START_TEST(test_bad_contracts)
{
    load_fails(CLASSES, "slo.ttft_ms={p100: 5}",
               "slo.ttft_ms.p100: expected a percentile budget key pNN or pNN.N with 0 < NN < 100");
    load_fails(CLASSES, "slo.ttft_ms={p0: 5}", "slo.ttft_ms.p0: expected a percentile budget key");
    load_fails(CLASSES, "slo.ttft_ms={p99.: 5}", "slo.ttft_ms.p99.: expected a percentile");
    load_fails(CLASSES, "slo.itl_ms=50", "slo.itl_ms: expected {p50: 200, p99: 4000}");
    load_fails(CLASSES, "workload.classes.1.share=0.2",
               "workload.classes: the shares add up to 0.95, expected 1 (within 1e-9)");
    load_fails(CLASSES, "engine.scheduling_policy=lifo",
               "engine.scheduling_policy: expected fcfs or priority, got 'lifo'");
    load_fails(CLASSES, "workload.input=5",
               "workload.input cannot be combined with workload.classes");
    load_fails(CLASSES, "workload.classes.1.name=chat",
               "workload.classes[1].name: 'chat' names two classes");
    load_fails(CLASSES, "workload.classes.1.name=a b",
               "workload.classes[1].name: expected letters, digits, '_', '.' or '-', got 'a b'");
    /* both forms of a metric at once, and a decimal percentile, load */
    sv_scenario_t *sc;
    sv_error_t err;
    const char *sets[1] = {"slo.tpot_ms={per_request: 80, p99.9: 200}"};
    ck_assert_msg(tu_load_yaml(cat, CLASSES, sets, 1, &sc, &err) == 0, "%s", err.msg);
    ck_assert(sc->metrics.slo_tpot_ms == 80);
    ck_assert_int_eq(sc->metrics.nbudgets, 1);
    ck_assert(sc->metrics.budgets[0].pct == 99.9 && sc->metrics.budgets[0].ms == 200);
    ck_assert_int_eq(sc->metrics.budgets[0].metric, SV_K_TPOT);
    sv_scenario_free(sc);
}
END_TEST

/* A whole file into a caller-freed, NUL-terminated buffer; 0 or -1. */
static int read_whole(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    *buf = malloc(1 << 20);
    *len = fread(*buf, 1, (1 << 20) - 1, f);
    (*buf)[*len] = '\0';
    fclose(f);
    return 0;
}

/*
 * Sweep's knee with a layered contract: four points whose per-request attainment is 100%
 * everywhere, the contract broken at the third (p99 TTFT). The knee is the second point,
 * and the text, sweep.json and sweep.csv name the broken budget; merging the directory
 * keeps it.
 */
START_TEST(test_sweep_knee_first_broken_budget)
{
    char keys[SV_MAX_VARY][128] = {"workload.rate"};
    const char *broke[4] = {"-", "-", "ttft p99", "chat: tpot p50"};
    static const char *load[4] = {"1", "2", "3", "4"};
    sv_row_t rows[4];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 4; i++) {
        rows[i].index = i;
        rows[i].ok = 1;
        rows[i].vals[0] = load[i];
        for (int c = 0; c < SV_NCOLS; c++)
            rows[i].m[c] = NAN;
        rows[i].m[SV_COL_ATTAIN] = 1.0;
        rows[i].m[SV_COL_ATTAIN_TARGET] = 0.9;
        rows[i].m[SV_COL_GOODPUT] = i + 1.0;
        snprintf(rows[i].broke, sizeof rows[i].broke, "%s", broke[i]);
    }
    char dir[] = "/tmp/sv_knee_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char out[160], merged[160], path[200], text[4096] = "";
    snprintf(out, sizeof out, "%s/a", dir);
    snprintf(merged, sizeof merged, "%s/m", dir);
    sv_error_t err;
    FILE *t = tmpfile();
    ck_assert_int_eq(sv_sweep_write(out, keys, 1, rows, 4, NULL, t, &err), 0);
    rewind(t);
    size_t n = fread(text, 1, sizeof text - 1, t);
    text[n] = '\0';
    fclose(t);
    ck_assert_msg(strstr(text, "knee: workload.rate=2 is the highest load"), "%s", text);
    ck_assert_msg(strstr(text, "first broken budget: ttft p99 at workload.rate=3"), "%s", text);
    const char *dirs[1] = {out};
    ck_assert_msg(sv_sweep_merge(merged, dirs, 1, NULL, NULL, &err) == 0, "%s", err.msg);
    for (int d = 0; d < 2; d++) {
        char *buf;
        size_t len;
        snprintf(path, sizeof path, "%s/sweep.json", d ? merged : out);
        ck_assert_int_eq(read_whole(path, &buf, &len), 0);
        ck_assert_msg(strstr(buf, "\"first_broken_budget\": \"ttft p99\""), "%s", buf);
        ck_assert(strstr(buf, "\"broken_budget\": \"chat: tpot p50\""));
        ck_assert(strstr(buf, "\"knee\": {\"workload.rate\": \"2\""));
        free(buf);
        snprintf(path, sizeof path, "%s/sweep.csv", d ? merged : out);
        ck_assert_int_eq(read_whole(path, &buf, &len), 0);
        ck_assert(strstr(buf, ",error,broken_budget\n"));
        ck_assert(strstr(buf, ",,ttft p99\n"));
        free(buf);
    }
    char rm[200];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    ck_assert_int_eq(system(rm), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("contract");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_layered_budget_met_p50_missed_p99);
    tcase_add_test(tc, test_budget_missed_by_failures);
    tcase_add_test(tc, test_itl_budgets);
    tcase_add_test(tc, test_two_classes_attainment);
    tcase_add_test(tc, test_priority_admission_order);
    tcase_add_test(tc, test_priority_preemption_victim);
    tcase_add_test(tc, test_classes_run);
    tcase_add_test(tc, test_bad_contracts);
    tcase_add_test(tc, test_sweep_knee_first_broken_budget);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
