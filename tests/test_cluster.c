/*
 * Tests of the cluster layer: KV links (exact transfer times, fair and FIFO sharing),
 * disaggregated prefill/decode (hand-off, back-pressure, accounting), routing policies,
 * heterogeneous pools and their costs, and bad cluster input.
 */
#include <math.h>
#include <unistd.h>

#include "servesim/engine/link.h"
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

static sv_result_t *run(const char *yaml, const char **sets, int nsets, sv_scenario_t **sc)
{
    return tu_run_yaml(cat, yaml, sets, nsets, sc);
}

#define done tu_done
#define check_accounting tu_check_accounting

/* ---- links ----------------------------------------------------------------------------- */

/* Run a link to idle; record when each transfer finished. */
static void drain_link(sv_link_t *l, double *t_done)
{
    int32_t ids[8];
    double t;
    while ((t = sv_link_next(l)) < INFINITY) {
        size_t n = sv_link_advance(l, t, ids, 8);
        for (size_t i = 0; i < n; i++)
            t_done[ids[i]] = t;
    }
}

START_TEST(test_link_times)
{
    sv_link_t l;
    double done[4];
    /* One transfer alone: latency + bytes / bandwidth, exactly. */
    sv_link_init(&l, 50e9, 10e-6, 0);
    sv_link_advance(&l, 1.0, NULL, 0);
    ck_assert_int_eq(sv_link_add(&l, 1.0, 0, 268435456.0), 0);
    drain_link(&l, done);
    tu_assert_rel(done[0] - 1.0, 10e-6 + 268435456.0 / 50e9, 1e-12);
    ck_assert(l.bytes == 268435456.0);
    sv_link_free(&l);
    /* Two at once under fair share: each takes twice as long to move its bytes. */
    sv_link_init(&l, 50e9, 10e-6, 0);
    sv_link_add(&l, 0.0, 0, 1e9);
    sv_link_add(&l, 0.0, 1, 1e9);
    drain_link(&l, done);
    tu_assert_rel(done[0], 10e-6 + 2.0 * 1e9 / 50e9, 1e-12);
    tu_assert_rel(done[1], 10e-6 + 2.0 * 1e9 / 50e9, 1e-12);
    tu_assert_rel(l.busy_s, 2.0 * 1e9 / 50e9, 1e-12);
    sv_link_free(&l);
    /* FIFO: the first at full speed, the second after it. */
    sv_link_init(&l, 50e9, 10e-6, 1);
    sv_link_add(&l, 0.0, 0, 1e9);
    sv_link_add(&l, 0.0, 1, 1e9);
    drain_link(&l, done);
    tu_assert_rel(done[0], 10e-6 + 1e9 / 50e9, 1e-12);
    tu_assert_rel(done[1], 10e-6 + 2.0 * 1e9 / 50e9, 1e-12);
    sv_link_free(&l);
    /* A second transfer arriving half-way shares what is left: the first moved 0.5 GB
     * alone in 10 ms, then both share: the first's last 0.5 GB takes 20 ms more. */
    sv_link_init(&l, 50e9, 0.0, 0);
    sv_link_add(&l, 0.0, 0, 1e9);
    int32_t ids[4];
    ck_assert_int_eq((int)sv_link_advance(&l, 0.01, ids, 4), 0);
    sv_link_add(&l, 0.01, 1, 1e9);
    drain_link(&l, done);
    tu_assert_rel(done[0], 0.03, 1e-12);
    tu_assert_rel(done[1], 0.04, 1e-12);
    /* Cancelling frees the bandwidth. */
    sv_link_add(&l, 0.04, 2, 1e9);
    sv_link_add(&l, 0.04, 3, 1e9);
    sv_link_advance(&l, 0.05, ids, 4);
    ck_assert_int_eq(sv_link_cancel(&l, 0.05, 3), 1);
    drain_link(&l, done);
    tu_assert_rel(done[2], 0.05 + 0.75e9 / 50e9, 1e-12);
    sv_link_free(&l);
    /* Far into a run (t = 1e6 s) a transfer still finishes: a last sliver of bytes shorter
     * than one step of the clock must not stall the link. */
    sv_link_init(&l, 50e9, 10e-6, 0);
    sv_link_advance(&l, 1e6, NULL, 0);
    sv_link_add(&l, 1e6, 0, 123456789.0);
    int guard = 0;
    double t;
    while ((t = sv_link_next(&l)) < INFINITY && guard++ < 10)
        sv_link_advance(&l, t, ids, 4);
    ck_assert(guard < 10);
    ck_assert_int_eq((int)l.transfers, 1);
    sv_link_free(&l);
}
END_TEST


/* Two transfers of 1 GB added at 0 on a 50 GB/s link without latency, the first capped at
 * cap: when each lands. */
static void capped_pair(int fifo, double cap, double want0, double want1)
{
    sv_link_t l;
    double done[4];
    sv_link_init(&l, 50e9, 0.0, fifo);
    sv_link_add(&l, 0.0, 0, 1e9);
    sv_link_add(&l, 0.0, 1, 1e9);
    ck_assert_int_eq(sv_link_set_cap(&l, 0, cap), 1);
    ck_assert_int_eq(sv_link_set_cap(&l, 7, cap), 0); /* no such transfer */
    drain_link(&l, done);
    tu_assert_rel(done[0], want0, 1e-12);
    tu_assert_rel(done[1], want1, 1e-12);
    sv_link_free(&l);
}

START_TEST(test_link_caps)
{
    /* Fair, cap 10 GB/s (its receiver's share): water-filling gives it 10 and the other 40
     * GB/s. The other lands at 1e9 / 40e9 = 25 ms; the capped one has then moved 0.25 GB and,
     * alone, still takes only its cap: 0.75e9 / 10e9 = 75 ms more, landing at 100 ms. */
    capped_pair(0, 10e9, 0.100, 0.025);
    /* A cap above the equal share changes nothing: 25 GB/s each, both at 40 ms. */
    capped_pair(0, 30e9, 0.040, 0.040);
    /* FIFO: the one moving transfer at min(bandwidth, cap): 1e9 / 20e9 = 50 ms, then the
     * next at the full 50 GB/s, 20 ms more. */
    capped_pair(1, 20e9, 0.050, 0.070);
}
END_TEST

/* ---- disaggregation ------------------------------------------------------------------- */

static const char *disagg =
    "name: disagg\n"
    "seed: 3\n"
    "model: llama-3.1-8b\n"
    "pools:\n"
    "  - {name: prefill, role: prefill, gpu: h100-sxm, replicas: 2}\n"
    "  - {name: decode, role: decode, gpu: h100-sxm, replicas: 2}\n"
    "disaggregation:\n"
    "  kv_link: {kind: infiniband, bandwidth_gb_s: 50, latency_us: 10}\n"
    "workload:\n"
    "  num_requests: 3000\n"
    "  rate: 20\n"
    "  input: {dist: lognormal, mean: 2048, std: 1024, min: 64, max: 8192}\n"
    "  output: {dist: lognormal, mean: 256, std: 128, min: 8, max: 1024}\n"
    "slo: {ttft_ms: 1000, tpot_ms: 20}\n";

START_TEST(test_transfer_per_rank)
{
    /* Workers of their own layout: a prefill worker of TP 2 (65,536 KV bytes a token per
     * GPU) hands to a decode worker of TP 1 (131,072 on its one GPU). The prefill link is
     * 2 x 50 GB/s, but the one receiving GPU takes the whole 131,072 bytes a token through
     * its own 50 GB/s: latency + 2048 x 131,072 / 50e9, twice what the senders alone would
     * take (2048 x 65,536 / 50e9). */
    const char *sets[] = {"workload.num_requests=1", "workload.input=2048", "workload.output=16",
                          "pools.prefill.tp=2"};
    sv_scenario_t *sc;
    sv_result_t *res = run(disagg, sets, 4, &sc);
    const sv_req_t *r = &res->pool.r[0];
    ck_assert(res->pools[0].perf.kv_bytes_token == 65536.0);
    tu_assert_rel(r->xfer_end - r->xfer_start, 10e-6 + 2048.0 * 131072.0 / 50e9, 1e-9);
    check_accounting(res);
    done(sc, res);
    /* The other way (TP 1 to TP 2) the one sending GPU is the busier side: the same time. */
    const char *sets2[] = {"workload.num_requests=1", "workload.input=2048",
                           "workload.output=16", "pools.decode.tp=2"};
    res = run(disagg, sets2, 4, &sc);
    r = &res->pool.r[0];
    tu_assert_rel(r->xfer_end - r->xfer_start, 10e-6 + 2048.0 * 131072.0 / 50e9, 1e-9);
    done(sc, res);
    /* TP 2 to TP 2: each of the two GPUs sends and takes its half, 2048 x 65,536 / 50e9. */
    const char *sets3[] = {"workload.num_requests=1", "workload.input=2048", "workload.output=16",
                           "pools.prefill.tp=2", "pools.decode.tp=2"};
    res = run(disagg, sets3, 5, &sc);
    r = &res->pool.r[0];
    tu_assert_rel(r->xfer_end - r->xfer_start, 10e-6 + 2048.0 * 65536.0 / 50e9, 1e-9);
    done(sc, res);
}
END_TEST

START_TEST(test_receiver_contention)
{
    /* Two prefill replicas each hand a 2048-token prompt to the one decode replica at the
     * same instant (rate inf: both sent at t = 0, prefilled side by side). Each sender's
     * link is 50 GB/s, but the decode replica's one GPU receives both through its own
     * 50 GB/s NIC: a fair share of 25 GB/s each, so each transfer takes 10 us + 2048 x
     * 131,072 / 25e9 = 10.747 ms instead of 10 us + 5.369 ms alone. */
    const char *sets[] = {"workload.num_requests=2", "workload.rate=inf",
                          "workload.input=2048",     "workload.output=16",
                          "pools.decode.replicas=1", "router.policy=round-robin"};
    sv_scenario_t *sc;
    sv_result_t *res = run(disagg, sets, 6, &sc);
    for (int i = 0; i < 2; i++) {
        const sv_req_t *r = &res->pool.r[i];
        ck_assert(r->xfer_start == res->pool.r[0].xfer_start);
        tu_assert_rel(r->xfer_end - r->xfer_start, 10e-6 + 2048.0 * 131072.0 / 25e9, 1e-9);
    }
    ck_assert(res->pool.r[0].prefill_replica != res->pool.r[1].prefill_replica);
    check_accounting(res);
    done(sc, res);
    /* Two decode replicas: each takes one, no contention, each transfer as alone. */
    const char *sets2[] = {"workload.num_requests=2", "workload.rate=inf",
                           "workload.input=2048",     "workload.output=16",
                           "router.policy=round-robin"};
    res = run(disagg, sets2, 5, &sc);
    for (int i = 0; i < 2; i++) {
        const sv_req_t *r = &res->pool.r[i];
        tu_assert_rel(r->xfer_end - r->xfer_start, 10e-6 + 2048.0 * 131072.0 / 50e9, 1e-9);
    }
    done(sc, res);
}
END_TEST

START_TEST(test_single_transfer_exact)
{
    /* One request: TTFT is the prefill alone (DistServe), its KV crosses in exactly
     * latency + 2048 tokens x 131,072 B / 50 GB/s, and decoding starts when it lands.
     * Synchronous steps and no API-server path in either pool (the vllm profile's defaults
     * are test_sim.c's and test_vllm.c's): steps at the cost model's totals. */
    const char *sets[] = {"workload.num_requests=1",
                          "workload.input=2048",
                          "workload.output=16",
                          "pools.0.engine.async_scheduling=false",
                          "pools.0.engine.api_server_ms=0",
                          "pools.1.engine.async_scheduling=false"};
    sv_scenario_t *sc;
    sv_result_t *res = run(disagg, sets, 6, &sc);
    const sv_req_t *r = &res->pool.r[0];
    double prefill = sv_perf_prefill_time(&res->pools[0].perf, 2048, NULL);
    tu_assert_rel(r->first_token - r->start, prefill, 1e-12);
    ck_assert(r->prefill_end == r->first_token);
    ck_assert(r->xfer_start == r->prefill_end); /* the decode pool had room */
    tu_assert_rel(r->xfer_end - r->xfer_start, 10e-6 + 2048.0 * 131072.0 / 50e9, 1e-9);
    ck_assert(r->decode_start == r->xfer_end);
    ck_assert(r->prefill_replica == 0 && r->replica >= 2);
    /* 15 decode steps on the decode replica, the first one's gap includes the transfer. */
    double step = sv_perf_decode_time(&res->pools[1].perf, 1, 2048, NULL);
    double *itl;
    size_t n;
    ck_assert_int_eq(sv_metrics_itls(res->metrics, &res->pool, 0, &itl, &n), 0);
    ck_assert_int_eq((int)n, 15);
    tu_assert_rel(itl[0], (r->xfer_end - r->xfer_start) + step, 1e-9);
    free(itl);
    check_accounting(res);
    done(sc, res);
    /* First token at the decode side: TTFT = prefill + transfer + one decode step. */
    const char *sets2[] = {"workload.num_requests=1",
                           "workload.input=2048",
                           "workload.output=16",
                           "pools.0.engine.async_scheduling=false",
                           "pools.0.engine.api_server_ms=0",
                           "pools.1.engine.async_scheduling=false",
                           "disaggregation.first_token=decode"};
    res = run(disagg, sets2, 7, &sc);
    r = &res->pool.r[0];
    tu_assert_rel(r->first_token - r->start, prefill + 10e-6 + 2048.0 * 131072.0 / 50e9 + step,
                  1e-9);
    ck_assert_int_eq(res->summary.completed, 1);
    ck_assert_int_eq(res->summary.itl.n, 15);
    check_accounting(res);
    done(sc, res);
}
END_TEST

START_TEST(test_handoff_in_ttft)
{
    /* disaggregation.handoff_ms = 128: the transfer of one 2048-token prompt takes the link's
     * 10 us + 128 ms + 2048 x 131,072 B / 50 GB/s (5.369 ms) = 133.379 ms, so with the first
     * token at the decode side TTFT = prefill + 133.379 ms + one decode step, exactly 128 ms
     * more than without it; the KV stays on the prefill replica (xfer_end - prefill_end). */
    const char *sets[] = {"workload.num_requests=1",
                          "workload.input=2048",
                          "workload.output=16",
                          "pools.0.engine.async_scheduling=false",
                          "pools.0.engine.api_server_ms=0",
                          "pools.1.engine.async_scheduling=false",
                          "disaggregation.first_token=decode",
                          "disaggregation.handoff_ms=128"};
    sv_scenario_t *sc;
    sv_result_t *res = run(disagg, sets, 8, &sc);
    const sv_req_t *r = &res->pool.r[0];
    double prefill = sv_perf_prefill_time(&res->pools[0].perf, 2048, NULL);
    double step = sv_perf_decode_time(&res->pools[1].perf, 1, 2048, NULL);
    ck_assert(sc->handoff == 0.128);
    ck_assert(r->xfer_start == r->prefill_end);
    tu_assert_rel(r->xfer_end - r->xfer_start, 0.133379, 1e-5);
    tu_assert_rel(r->xfer_end - r->xfer_start, 10e-6 + 0.128 + 2048.0 * 131072.0 / 50e9, 1e-12);
    tu_assert_rel(r->first_token - r->start,
                  prefill + 10e-6 + 0.128 + 2048.0 * 131072.0 / 50e9 + step, 1e-9);
    ck_assert_int_eq(res->summary.completed, 1);
    check_accounting(res);
    done(sc, res);
    /* Out of range: refused naming the key. */
    const char *bad[] = {"disaggregation.handoff_ms=-1"};
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, disagg, bad, 1, &sc, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg,
                         "--set disaggregation.handoff_ms=-1: disaggregation.handoff_ms: expected "
                         "a number in [0, 1e+06], got '-1'") != NULL,
                  "%s", err.msg);
}
END_TEST

/* The way in, by hand: the router's 5 ms, then the replica's API server (12 ms, the vllm
 * profile's default for the vllm scheduler: vllm-project/vllm#21139's measured
 * preprocessing), then the prefill step, which async scheduling (on by default in current
 * vLLM) shortens to max(GPU part, CPU part). Queue time is both paths. */
START_TEST(test_router_latency_in_ttft)
{
    const char *yaml = "seed: 1\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "router: {policy: round-robin, latency_ms: 5}\n"
                       "workload: {num_requests: 1, rate: 1, input: 512, output: 4}\n";
    sv_scenario_t *sc;
    sv_result_t *res = run(yaml, NULL, 0, &sc);
    const sv_req_t *r = &res->pool.r[0];
    sv_step_cost_t c;
    sv_perf_prefill_time(&res->pools[0].perf, 512, &c);
    tu_assert_rel(r->first_token - r->start, 5e-3 + 12e-3 + tu_step_s(&c, 1), 1e-12);
    tu_assert_rel(r->scheduled - r->start, 5e-3 + 12e-3, 1e-12);
    done(sc, res);
    /* Without the API server's path and async scheduling: the router alone, then the
     * cost model's prefill. */
    const char *sync[] = {"engine.async_scheduling=false", "engine.api_server_ms=0"};
    res = run(yaml, sync, 2, &sc);
    r = &res->pool.r[0];
    tu_assert_rel(r->first_token - r->start, 5e-3 + c.total, 1e-12);
    tu_assert_rel(r->scheduled - r->start, 5e-3, 1e-12); /* queue time includes the router */
    done(sc, res);
}
END_TEST

START_TEST(test_backpressure_and_stall)
{
    /* A decode pool with a small KV cache cannot take the prefills as fast as they come:
     * prefilled requests wait for room with their KV pinned, and the prefill pool stalls. */
    const char *sets[] = {"pools.1.gpu_memory_utilization=0.25"};
    sv_scenario_t *sc;
    sv_result_t *res = run(disagg, sets, 1, &sc);
    ck_assert(res->summary.xfer_wait.mean > 1000.0); /* ms */
    ck_assert(res->pools[0].stall_s > 0.1 * res->summary.duration);
    ck_assert(res->pools[0].handoffs > 0);
    ck_assert_int_eq(res->summary.completed, 3000);
    check_accounting(res);
    done(sc, res);
    /* With a roomy decode pool there is no wait and no stall. */
    res = run(disagg, NULL, 0, &sc);
    ck_assert(res->summary.xfer_wait.mean == 0.0);
    ck_assert(res->pools[0].stall_s == 0.0);
    ck_assert(res->pools[0].link_bytes > 0 && res->pools[0].transfers == 3000);
    check_accounting(res);
    done(sc, res);
}
END_TEST

START_TEST(test_accounting_across_pools)
{
    /* Timeouts hit requests in every phase (prefill, waiting for room, on the link,
     * decoding); a horizon cuts the rest; FIFO links with overlap; decode-side first token. */
    const char *variants[][4] = {
        {"pools.1.gpu_memory_utilization=0.25", "workload.timeout_s=3", NULL, NULL},
        {"workload.rate=60", "workload.timeout_s=4", "disaggregation.kv_link.sharing=fifo", NULL},
        {"horizon_s=40", "disaggregation.kv_link.overlap=true", NULL, NULL},
        {"disaggregation.first_token=decode",
         "pools.1.engine={scheduler: vllm-v0, preemption: swap}",
         "pools.1.gpu_memory_utilization=0.3", NULL},
    };
    for (int v = 0; v < 4; v++) {
        int n = 0;
        while (n < 4 && variants[v][n])
            n++;
        sv_scenario_t *sc;
        sv_result_t *res = run(disagg, variants[v], n, &sc);
        check_accounting(res);
        if (v < 2) ck_assert(res->summary.failed_by[SV_FAIL_TIMEOUT] > 0);
        if (v == 2) ck_assert(res->summary.failed_by[SV_FAIL_UNFINISHED] > 0);
        done(sc, res);
    }
}
END_TEST

/* ---- routing and pools ------------------------------------------------------------------ */

static const char *four = "seed: 9\nmodel: llama-3.1-8b\nhardware: {gpu: h100-sxm, replicas: 4}\n"
                          "workload:\n  num_requests: 4003\n  rate: inf\n  input: 256\n"
                          "  output: 64\n";

static void per_replica(const sv_result_t *res, long *count)
{
    for (int i = 0; i < res->replicas; i++)
        count[i] = 0;
    for (size_t i = 0; i < res->pool.n; i++)
        count[res->pool.r[i].replica]++;
}

START_TEST(test_routing_spread)
{
    /* A burst of 4,003 identical requests: the balancing policies split it 1001/1001/1001/1000. */
    const char *pol[] = {"router=round-robin", "router=least-outstanding", "router=least-tokens"};
    for (int p = 0; p < 3; p++) {
        sv_scenario_t *sc;
        sv_result_t *res = run(four, &pol[p], 1, &sc);
        long c[4];
        per_replica(res, c);
        for (int i = 0; i < 4; i++)
            ck_assert_msg(c[i] == 1000 || c[i] == 1001, "%s: %ld", pol[p], c[i]);
        check_accounting(res);
        done(sc, res);
    }
    /* Random: about a quarter each (4,003 draws: within 10%), and another seed differs. */
    const char *rnd[] = {"router=random"};
    sv_scenario_t *sc;
    sv_result_t *res = run(four, rnd, 1, &sc);
    long c[4];
    per_replica(res, c);
    for (int i = 0; i < 4; i++)
        ck_assert(labs(c[i] - 1001) < 100);
    done(sc, res);
    /* Uniform load (a closed loop of 10 identical requests): least-outstanding sends each new
     * request where one just ended, so in-flight counts stay within 1 at every sample. */
    const char *lo[] = {"router=least-outstanding", "workload.max_concurrency=10",
                        "metrics.sample_interval_s=0.05"};
    res = run(four, lo, 3, &sc);
    size_t n;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &n);
    size_t full = 0; /* samples with all 10 slots busy (the tail drains unevenly) */
    for (size_t i = 0; i + 4 <= n; i += 4) {
        int lo_ = 1 << 30, hi = -1, total = 0;
        for (int k = 0; k < 4; k++) {
            int v = sm[i + k].running + sm[i + k].waiting;
            total += v;
            if (v < lo_) lo_ = v;
            if (v > hi) hi = v;
        }
        if (total < 10) continue;
        full++;
        ck_assert_msg(hi - lo_ <= 1, "t=%g: in flight %d..%d", sm[i].t, lo_, hi);
    }
    ck_assert(full > n / 4 * 9 / 10);
    done(sc, res);
    /* kv-aware spreads a steady stream too. */
    const char *kv[] = {"router=kv-aware", "workload.rate=40"};
    res = run(four, kv, 2, &sc);
    per_replica(res, c);
    for (int i = 0; i < 4; i++)
        ck_assert(c[i] > 700);
    check_accounting(res);
    done(sc, res);
}
END_TEST

START_TEST(test_heterogeneous_costs)
{
    const char *yaml = "seed: 2\nmodel: llama-3.1-8b\n"
                       "pools:\n"
                       "  - {name: new, gpu: h100-sxm}\n"
                       "  - {name: old, gpu: a100-80gb, replicas: 2, price_per_hour_usd: 2.0}\n"
                       "router: least-outstanding\n"
                       "workload: {num_requests: 2000, rate: 10, input: 512, output: 128}\n";
    sv_scenario_t *sc;
    sv_result_t *res = run(yaml, NULL, 0, &sc);
    double T = res->summary.duration;
    tu_assert_rel(res->pools[0].cost_usd, 1 * 3.50 * T / 3600.0, 1e-12);
    tu_assert_rel(res->pools[1].cost_usd, 2 * 2.00 * T / 3600.0, 1e-12); /* overridden price */
    tu_assert_rel(res->cost_usd, (3.50 + 4.00) * T / 3600.0, 1e-12);
    ck_assert(res->gpus == 3.0);
    /* Energy: each pool's own idle and TDP (H100 75/700 W, A100 63/400 W). */
    const double idle[] = {75, 63}, tdp[] = {700, 400};
    for (int p = 0; p < 2; p++) {
        double e = 0;
        for (int i = res->pools[p].first; i < res->pools[p].first + res->pools[p].count; i++)
            e += idle[p] * T + (tdp[p] - idle[p]) * res->rstats[i].active_s;
        tu_assert_rel(res->pools[p].energy_j, e, 1e-12);
    }
    /* The faster H100 decodes faster: its requests' TPOT is lower. */
    double tp[3] = {0, 0, 0};
    long cnt[3] = {0, 0, 0};
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        tp[r->replica] += (r->last_token - r->first_token) / (r->output - 1);
        cnt[r->replica]++;
    }
    ck_assert(tp[0] / cnt[0] < tp[1] / cnt[1]);
    check_accounting(res);
    done(sc, res);
}
END_TEST

START_TEST(test_bad_cluster_input)
{
    sv_scenario_t *sc = NULL;
    sv_error_t err;
    ck_assert_int_eq(sv_scenario_load(tu_data("no_decode_pool.yaml"), NULL, 0, cat, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "no_decode_pool.yaml:3:3: pools: a disaggregated scenario needs "
                                  "a decode pool") != NULL,
                  "%s", err.msg);
    ck_assert_int_eq(sv_scenario_load(tu_data("zero_link.yaml"), NULL, 0, cat, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "zero_link.yaml:6:47: disaggregation.kv_link.bandwidth_gb_s: "
                                  "expected a number > 0 and <= 1e+06") != NULL,
                  "%s", err.msg);
    /* The model fits the big pool but not the small one: the run names the pool. */
    ck_assert_int_eq(sv_scenario_load(tu_data("pool_no_fit.yaml"), NULL, 0, cat, &sc, &err), 0);
    sv_result_t *res;
    ck_assert_int_eq(sv_sim_run(sc, &res, &err), SV_ENOFIT);
    ck_assert_msg(strstr(err.msg, "pool 'small' (1 x a100-40gb, tp=1): model 'llama-3.1-70b' (bf16 "
                                  "weights) does not fit") != NULL,
                  "%s", err.msg);
    sv_scenario_free(sc);
    const char *mix[] = {"pools.1.role=decode", "pools.0.role=colocated"};
    ck_assert_int_eq(sv_scenario_load(tu_data("no_decode_pool.yaml"), mix, 2, cat, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "colocated pools cannot be mixed") != NULL, "%s", err.msg);
    const char *both[] = {"hardware={gpu: h100-sxm}"};
    ck_assert_int_eq(sv_scenario_load(tu_data("no_decode_pool.yaml"), both, 1, cat, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "give either pools or hardware/engine") != NULL, "%s", err.msg);
    const char *pol[] = {"pools.1.role=decode", "router=fastest"};
    ck_assert_int_eq(sv_scenario_load(tu_data("no_decode_pool.yaml"), pol, 2, cat, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "router: expected round-robin, random, least-outstanding") !=
                      NULL,
                  "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cluster");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_link_times);
    tcase_add_test(tc, test_link_caps);
    tcase_add_test(tc, test_receiver_contention);
    tcase_add_test(tc, test_single_transfer_exact);
    tcase_add_test(tc, test_transfer_per_rank);
    tcase_add_test(tc, test_handoff_in_ttft);
    tcase_add_test(tc, test_router_latency_in_ttft);
    tcase_add_test(tc, test_backpressure_and_stall);
    tcase_add_test(tc, test_accounting_across_pools);
    tcase_add_test(tc, test_routing_spread);
    tcase_add_test(tc, test_heterogeneous_costs);
    tcase_add_test(tc, test_bad_cluster_input);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
