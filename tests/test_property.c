/*
 * Property test: random valid scenarios (every scheduler, preemption mode, router policy,
 * colocated and disaggregated pools with either first-token definition, KV links fair or
 * FIFO with or without overlap, timeouts, router latency, horizons, queue limits, small
 * KV caches, open and closed loops, duration-bounded closed loops, swap preemption, rate
 * profiles (some with a stretch at rate 0), autoscaled pools, client round trips,
 * sessions (chains and fanouts, whose calls fail inside them: too long, queue full, timed
 * out), request classes with priorities under either scheduling policy, bounded by a
 * count or a duration, and SLOs) must each finish with exact accounting: every request
 * ended exactly once (its `ended` mark set, state done or failed), completed + failed by
 * reason = all generated, no KV block, reservation or owed token left, --check's per-step
 * recount of blocks and client slots holding throughout, every session over with its
 * calls adding up (so sessions live reached 0, never below: the simulator checks at the
 * end), mean replicas up <= peak <= the pool's size, and goodput and attainment equal to
 * a recount of the per-request records against the SLO. A hang is caught by the
 * simulator's watchdog or, failing that, by this test's timeout.
 *
 * SERVESIM_PROPERTY_COUNT sets how many scenarios (default 1000, the count tools/test
 * runs; tools/fuzz runs 10,000); SERVESIM_PROPERTY_SEED the first seed (default 1). The
 * summary line counts the cases of each feature, so a generator change that stops making
 * one shows.
 * A failing case prints its YAML, so it can be replayed with `servesim run --check`.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "servesim/metrics/contract.h"
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

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

static const char *pick(gsl_rng *g, const char *const *v, size_t n)
{
    return v[gsl_rng_uniform_int(g, (unsigned long)n)];
}
#define PICK(g, arr) pick((g), (arr), sizeof(arr) / sizeof *(arr))

static int coin(gsl_rng *g, double p)
{
    return gsl_rng_uniform(g) < p;
}

/* What the generated case holds, counted over the run. */
enum { F_SWAP, F_PROFILE, F_AUTOSCALE, F_SESSIONS, F_FANOUT, F_CLASSES, F_PRIORITY,
       F_DURATION, F_RTT, F_SLO, F_TIMEOUT, F_COUNT };
static const char *const feature_names[F_COUNT] = {
    "swap", "rate profile", "autoscaler", "sessions", "fanout", "classes", "priority",
    "duration-bound", "rtt", "slo", "timeout"};
static int features[F_COUNT];

/* The engine map of one pool. */
static int engine_yaml(gsl_rng *g, char *buf, size_t size, int decode_role)
{
    static const char *const sched[] = {"vllm", "vllm-v0", "orca", "static", "trtllm"};
    static const long seqs[] = {2, 8, 32, 256};
    static const long budget[] = {512, 2048, 8192};
    const char *s = decode_role ? (coin(g, 0.5) ? "vllm" : "orca") : PICK(g, sched);
    long mns = seqs[gsl_rng_uniform_int(g, 4)];
    long mbt = budget[gsl_rng_uniform_int(g, 3)];
    if (mbt < mns) mbt = mns;
    int n = snprintf(buf, size, "{scheduler: %s, max_num_seqs: %ld, max_num_batched_tokens: %ld", s,
                     mns, mbt);
    if (strcmp(s, "vllm") != 0 && coin(g, 0.4)) { /* V1 only recomputes */
        n += snprintf(buf + n, size - (size_t)n, ", preemption: swap");
        features[F_SWAP] = 1;
    }
    if (coin(g, 0.25)) {
        n += snprintf(buf + n, size - (size_t)n, ", scheduling_policy: priority");
        features[F_PRIORITY] = 1;
    }
    int chunked = strcmp(s, "vllm") == 0 || strcmp(s, "trtllm") == 0;
    if (chunked && coin(g, 0.2))
        n += snprintf(buf + n, size - (size_t)n, ", long_prefill_token_threshold: %ld",
                      64 + (long)gsl_rng_uniform_int(g, 2000));
    if (chunked && coin(g, 0.2)) { /* vLLM V1 takes only its default, 1 */
        long parts = 1 + (long)gsl_rng_uniform_int(g, 4);
        n += snprintf(buf + n, size - (size_t)n, ", max_num_partial_prefills: %ld",
                      strcmp(s, "vllm") == 0 ? 1 : parts);
    }
    if (coin(g, 0.3)) n += snprintf(buf + n, size - (size_t)n, ", block_size: 32");
    if (strcmp(s, "vllm-v0") == 0 && coin(g, 0.5))
        n += snprintf(buf + n, size - (size_t)n, ", enable_prefix_caching: true");
    if (coin(g, 0.2)) n += snprintf(buf + n, size - (size_t)n, ", max_queue: 5");
    if (coin(g, 0.2))
        n += snprintf(buf + n, size - (size_t)n, ", max_model_len: %ld",
                      512 + (long)gsl_rng_uniform_int(g, 3000));
    return n + snprintf(buf + n, size - (size_t)n, "}");
}

/* The hardware keys of one pool: a GPU that holds Llama-3.1-8B, sometimes a tiny cache. */
static void hw_yaml(gsl_rng *g, char *buf, size_t size)
{
    static const char *const gpus[] = {"h100-sxm", "a100-80gb", "h200", "l40s"};
    const char *gpu = PICK(g, gpus);
    int tp = coin(g, 0.3) ? 2 : 1;
    /* 0.25 of an H100 leaves a few GB of KV: preemption and back-pressure. */
    double util = coin(g, 0.4) ? 0.9 : 0.25 + 0.1 * gsl_rng_uniform(g);
    if (strcmp(gpu, "l40s") == 0 && tp == 1) util = 0.6 + 0.3 * gsl_rng_uniform(g);
    snprintf(buf, size, "gpu: %s, tp: %d, gpu_memory_utilization: %.3f, replicas: %d", gpu, tp,
             util, 1 + (int)gsl_rng_uniform_int(g, 3));
}

static void make_yaml(gsl_rng *g, char *y, size_t size)
{
    static const char *const routes[] = {"round-robin", "random", "least-outstanding",
                                         "least-tokens", "kv-aware"};
    char hw[256], eng[256], hw2[256], eng2[256];
    memset(features, 0, sizeof features);
    unsigned long seed = gsl_rng_get(g) % 1000;
    if (coin(g, 0.06)) {
        /* A KV cache that holds a few dozen sequences, all of one length arriving at once,
         * under swap: they grow in step, so every running one can be swapped out at once
         * (OPT-13B on an A40). */
        static const char *const v0[] = {"vllm-v0", "orca", "static", "trtllm"};
        features[F_SWAP] = 1;
        snprintf(y, size,
                 "seed: %lu\nmodel: opt-13b\nhardware: {gpu: a40}\n"
                 "engine: {scheduler: %s, preemption: swap, max_num_seqs: %ld}\n"
                 "workload: {num_requests: %ld, rate: inf, input: %ld, output: %ld}\n",
                 seed, PICK(g, v0), 8 + (long)gsl_rng_uniform_int(g, 250),
                 20 + (long)gsl_rng_uniform_int(g, 100), 100 + (long)gsl_rng_uniform_int(g, 700),
                 1 + (long)gsl_rng_uniform_int(g, 60));
        return;
    }
    int n = snprintf(y, size, "seed: %lu\nmodel: llama-3.1-8b\n", seed);
    hw_yaml(g, hw, sizeof hw);
    if (coin(g, 0.35)) {
        engine_yaml(g, eng, sizeof eng, 0);
        hw_yaml(g, hw2, sizeof hw2);
        engine_yaml(g, eng2, sizeof eng2, 1);
        n += snprintf(y + n, size - (size_t)n,
                      "pools:\n  - {name: p, role: prefill, %s, engine: %s}\n"
                      "  - {name: d, role: decode, %s, engine: %s}\n"
                      "disaggregation: {first_token: %s, decode_router: %s, kv_link: "
                      "{bandwidth_gb_s: %.3g, sharing: %s, overlap: %s}}\n",
                      hw, eng, hw2, eng2, coin(g, 0.5) ? "prefill" : "decode", PICK(g, routes),
                      coin(g, 0.3) ? 0.05 + gsl_rng_uniform(g) : 1 + 100 * gsl_rng_uniform(g),
                      coin(g, 0.5) ? "fair" : "fifo", coin(g, 0.3) ? "true" : "false");
    } else {
        engine_yaml(g, eng, sizeof eng, 0);
        n += snprintf(y + n, size - (size_t)n, "hardware: {%s}\nengine: %s\n", hw, eng);
    }
    if (coin(g, 0.25)) {
        /* An autoscaler for every pool (issue 13): replicas start, serve, drain, stop. */
        static const char *const pols[] = {"queue", "inflight", "kv", "ttft_p90"};
        const char *pol = PICK(g, pols);
        int mx = 1 + (int)gsl_rng_uniform_int(g, 4);
        features[F_AUTOSCALE] = 1;
        n += snprintf(y + n, size - (size_t)n,
                      "autoscaler: {policy: %s, target: %.3g, min_replicas: 1, max_replicas: %d, "
                      "interval_s: %.3g, cold_start_s: %.3g, scale_down_delay_s: %.3g, "
                      "window_s: %.3g}\n",
                      pol,
                      strcmp(pol, "kv") == 0         ? 0.05 + 0.9 * gsl_rng_uniform(g)
                      : strcmp(pol, "ttft_p90") == 0 ? 10 + 500 * gsl_rng_uniform(g)
                                                     : 0.5 + 8 * gsl_rng_uniform(g),
                      mx, 0.05 + gsl_rng_uniform(g), coin(g, 0.3) ? 0.0 : 2 * gsl_rng_uniform(g),
                      coin(g, 0.3) ? 0.0 : 2 * gsl_rng_uniform(g), 0.2 + 3 * gsl_rng_uniform(g));
    }
    n += snprintf(y + n, size - (size_t)n, "router: {policy: %s, latency_ms: %g}\n",
                  PICK(g, routes), coin(g, 0.3) ? 50 * gsl_rng_uniform(g) : 0.0);
    if (coin(g, 0.25))
        n += snprintf(y + n, size - (size_t)n, "horizon_s: %.3g\n", 1 + 30 * gsl_rng_uniform(g));
    /* a client round trip (added at the end: sessions do not take one) */
    char net[128] = "";
    if (coin(g, 0.2)) {
        if (coin(g, 0.5))
            snprintf(net, sizeof net, "network: {rtt_ms: %.3g}\n", 1 + 80 * gsl_rng_uniform(g));
        else
            snprintf(net, sizeof net, "network: {rtt_ms: {dist: uniform, min: 1, max: %.3g}}\n",
                     2 + 80 * gsl_rng_uniform(g));
    }
    if (coin(g, 0.4)) {
        features[F_SLO] = 1;
        n += snprintf(y + n, size - (size_t)n, "slo: {ttft_ms: %.4g, tpot_ms: %.4g%s}\n",
                      20 + 2000 * gsl_rng_uniform(g), 5 + 80 * gsl_rng_uniform(g),
                      coin(g, 0.3) ? ", e2el_ms: 3000" : "");
    }
    /* Traffic: open loop, closed loop by count, or closed loop by duration. */
    long count = 20 + (long)gsl_rng_uniform_int(g, 150);
    int mode = (int)gsl_rng_uniform_int(g, 3);
    n += snprintf(y + n, size - (size_t)n, "workload:\n");
    if (mode == 0 && coin(g, 0.3)) {
        /* A rate profile (issue 13): steps, a ramp or a sinusoid, sometimes a spike. */
        static const char *const kinds[] = {"steps", "linear", "diurnal"};
        const char *kind = PICK(g, kinds);
        double r0 = coin(g, 0.2) ? 0.0 : 40 * gsl_rng_uniform(g), r1 = 0.5 + 40 * gsl_rng_uniform(g);
        features[F_PROFILE] = 1;
        if (coin(g, 0.5))
            n += snprintf(y + n, size - (size_t)n, "  num_requests: %ld\n", count);
        else
            n += snprintf(y + n, size - (size_t)n, "  duration_s: %.3g\n",
                          1 + 6 * gsl_rng_uniform(g)), features[F_DURATION] = 1;
        if (strcmp(kind, "diurnal") == 0)
            n += snprintf(y + n, size - (size_t)n,
                          "  rate_profile: {kind: diurnal, mean_rate: %.3g, peak_to_trough: %.3g, "
                          "period_s: %.3g",
                          r1, 1 + 9 * gsl_rng_uniform(g), 0.5 + 5 * gsl_rng_uniform(g));
        else
            n += snprintf(y + n, size - (size_t)n,
                          "  rate_profile: {kind: %s, points: [[0, %.3g], [%.3g, %.3g]]", kind, r0,
                          0.1 + 3 * gsl_rng_uniform(g), r1);
        if (coin(g, 0.4))
            n += snprintf(y + n, size - (size_t)n,
                          ", spikes: [{at_s: %.3g, duration_s: %.3g, factor: %.3g}]",
                          2 * gsl_rng_uniform(g), 0.1 + gsl_rng_uniform(g), 5 * gsl_rng_uniform(g));
        n += snprintf(y + n, size - (size_t)n, "}\n");
    } else if (mode == 0) {
        if (coin(g, 0.3))
            n += snprintf(y + n, size - (size_t)n, "  duration_s: %.3g\n  rate: %.3g\n",
                          0.5 + 4 * gsl_rng_uniform(g), 0.5 + 40 * gsl_rng_uniform(g)),
                features[F_DURATION] = 1;
        else
            n += snprintf(y + n, size - (size_t)n, "  num_requests: %ld\n  rate: %.3g\n", count,
                          0.5 + 40 * gsl_rng_uniform(g));
        if (coin(g, 0.5))
            n +=
                snprintf(y + n, size - (size_t)n, "  burstiness: %.3g\n", 0.2 + gsl_rng_uniform(g));
        if (coin(g, 0.4))
            n += snprintf(y + n, size - (size_t)n, "  max_concurrency: %d\n",
                          1 + (int)gsl_rng_uniform_int(g, 16));
    } else {
        if (mode == 1)
            n += snprintf(y + n, size - (size_t)n, "  num_requests: %ld\n", count);
        else
            n += snprintf(y + n, size - (size_t)n, "  duration_s: %.3g\n",
                          0.5 + 3 * gsl_rng_uniform(g)),
                features[F_DURATION] = 1;
        n += snprintf(y + n, size - (size_t)n, "  rate: inf\n  max_concurrency: %d\n",
                      1 + (int)gsl_rng_uniform_int(g, 64));
    }
    if (coin(g, 0.35)) {
        n +=
            snprintf(y + n, size - (size_t)n, "  timeout_s: %.3g\n", 0.02 + 5 * gsl_rng_uniform(g));
        features[F_TIMEOUT] = 1;
    }
    if (coin(g, 0.4))
        n += snprintf(y + n, size - (size_t)n,
                      "  shared_prefix: {tokens: %ld, prompts: %ld, share: %.3g}\n",
                      1 + (long)gsl_rng_uniform_int(g, 3000), 1 + (long)gsl_rng_uniform_int(g, 4),
                      0.1 + 0.9 * gsl_rng_uniform(g));
    double u = gsl_rng_uniform(g);
    if (u < 0.2 && !features[F_DURATION] && !features[F_PROFILE]) {
        /* Request classes, each its own lengths and priority (lower first under
         * scheduling_policy: priority); shares add up to 1. */
        int nc = 2 + (int)gsl_rng_uniform_int(g, 2);
        double share = 1.0 / nc;
        features[F_CLASSES] = 1;
        n += snprintf(y + n, size - (size_t)n, "  classes:\n");
        for (int k = 0; k < nc; k++)
            n += snprintf(y + n, size - (size_t)n,
                          "    - {name: c%d, share: %.17g, priority: %d, input: {dist: uniform, "
                          "min: 1, max: %ld}, output: {dist: uniform, min: 1, max: %ld}}\n",
                          k, k == nc - 1 ? 1.0 - share * (nc - 1) : share,
                          (int)gsl_rng_uniform_int(g, 3), 1 + (long)gsl_rng_uniform_int(g, 4000),
                          1 + (long)gsl_rng_uniform_int(g, 400));
    } else {
        n += snprintf(y + n, size - (size_t)n,
                      "  input: {dist: uniform, min: 1, max: %ld}\n"
                      "  output: {dist: uniform, min: 1, max: %ld}\n",
                      1 + (long)gsl_rng_uniform_int(g, 4000), 1 + (long)gsl_rng_uniform_int(g, 400));
        if (u > 0.75 && !features[F_DURATION]) {
            /* Sessions: chains (with or without history, think times) or fanouts; the
             * small max_model_len, max_queue and timeouts above fail calls inside them. */
            int fan = coin(g, 0.4);
            features[F_SESSIONS] = 1;
            features[F_FANOUT] |= fan;
            n += snprintf(y + n, size - (size_t)n,
                          "  sessions: {count: %ld, turns: {dist: uniform, min: 1, max: %ld}, "
                          "message: {dist: uniform, min: 1, max: %ld}, shape: %s",
                          3 + (long)gsl_rng_uniform_int(g, 20), 1 + (long)gsl_rng_uniform_int(g, 6),
                          1 + (long)gsl_rng_uniform_int(g, 1500), fan ? "fanout" : "chain");
            if (!fan && coin(g, 0.5))
                n += snprintf(y + n, size - (size_t)n, ", think_time_ms: %ld",
                              1 + (long)gsl_rng_uniform_int(g, 500));
            if (!fan) n += snprintf(y + n, size - (size_t)n, ", history: %s",
                                    coin(g, 0.6) ? "true" : "false");
            if (fan) n += snprintf(y + n, size - (size_t)n, ", history: false");
            n += snprintf(y + n, size - (size_t)n, "}\n");
        }
    }
    n += snprintf(y + n, size - (size_t)n, "metrics: {sample_interval_s: 0.25}\n");
    if (net[0] && !features[F_SESSIONS]) {
        snprintf(y + n, size - (size_t)n, "%s", net);
        features[F_RTT] = 1;
    }
}

/* What every run must satisfy beyond tu_check_accounting (see the top of the file). */
static void check_run(const sv_scenario_t *sc, const sv_result_t *res, long k, const char *yaml)
{
    const sv_reqpool_t *pool = &res->pool;
    for (size_t i = 0; i < pool->n; i++)
        ck_assert_msg(pool->r[i].ended == 1, "case %ld: request %zu not ended once\n%s", k, i, yaml);
    /* sessions: each over, its calls adding up */
    const sv_session_log_t *log = &res->sessions;
    if (sc->sessions.given) {
        long sent = 0;
        ck_assert_uint_eq(log->nreq, pool->n);
        for (size_t j = 0; j < log->n; j++) {
            const sv_session_rec_t *r = &log->s[j];
            ck_assert_msg(r->over && r->done + r->failed == r->sent && r->sent <= r->planned &&
                              r->end >= r->start,
                          "case %ld: session %zu: over %d, %d sent, %d done, %d failed, %d "
                          "planned\n%s",
                          k, j, r->over, r->sent, r->done, r->failed, r->planned, yaml);
            sent += r->sent;
        }
        ck_assert_int_eq(sent, (long)pool->n);
        const sv_session_summary_t *ss = &res->session_sum;
        ck_assert_int_eq(ss->complete + ss->failed + ss->cut, ss->sessions);
        ck_assert_int_eq(ss->calls_done + ss->calls_failed, ss->calls_sent);
    }
    /* replicas: the mean up is at most the peak, the peak at most the pool */
    for (int p = 0; p < res->npools; p++) {
        const sv_pool_result_t *pp = &res->pools[p];
        ck_assert_msg(pp->mean_up <= pp->peak_up + 1e-9 && pp->peak_up <= pp->count,
                      "case %ld: pool %d: mean %.17g, peak %d, count %d replicas up\n%s", k, p,
                      pp->mean_up, pp->peak_up, pp->count, yaml);
    }
    /* goodput and attainment from the per-request records */
    sv_slo_t slo;
    sv_metrics_slo(&sc->metrics, -1, &slo);
    int per_request = !isnan(slo.ttft_ms) || !isnan(slo.tpot_ms) || !isnan(slo.e2el_ms);
    if (per_request && sc->metrics.nclasses == 0) {
        long good = 0;
        for (size_t i = 0; i < pool->n; i++) {
            const sv_req_t *r = &pool->r[i];
            if (r->state != SV_RQ_DONE) continue;
            good += (isnan(slo.ttft_ms) || slo.ttft_ms / 1e3 >= sv_req_ttft(r)) &&
                    (isnan(slo.tpot_ms) || slo.tpot_ms / 1e3 >= sv_req_tpot(r)) &&
                    (isnan(slo.e2el_ms) || slo.e2el_ms / 1e3 >= sv_req_e2el(r));
        }
        const sv_summary_t *sm = &res->summary;
        ck_assert_msg(good == sm->good, "case %ld: %ld good records, summary %ld\n%s", k, good,
                      sm->good, yaml);
        if (sm->duration > 0)
            ck_assert_msg(sm->request_goodput == (double)good / sm->duration,
                          "case %ld: goodput %.17g, records %.17g\n%s", k, sm->request_goodput,
                          (double)good / sm->duration, yaml);
        sv_slo_check_t chk;
        sv_slo_check(&slo, sm, &chk);
        if (pool->n > 0)
            ck_assert_msg(chk.attained == (double)good / (double)pool->n,
                          "case %ld: attainment %.17g, records %.17g\n%s", k, chk.attained,
                          (double)good / (double)pool->n, yaml);
    }
}

START_TEST(test_random_scenarios)
{
    long count = env_long("SERVESIM_PROPERTY_COUNT", 1000);
    unsigned long seed0 = (unsigned long)env_long("SERVESIM_PROPERTY_SEED", 1);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    long runs = 0, requests = 0, refused = 0, seen[F_COUNT] = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long k = 0; k < count; k++) {
        gsl_rng_set(g, seed0 + (unsigned long)k);
        char yaml[8192];
        make_yaml(g, yaml, sizeof yaml);
        sv_scenario_t *sc = NULL;
        sv_error_t err;
        if (tu_load_yaml(cat, yaml, NULL, 0, &sc, &err)) {
            /* The generator keeps to valid keys; a model that does not fit a small GPU
             * slice is a refusal the loader or the memory plan must word clearly. */
            ck_assert_msg(strstr(err.msg, "fit") || strstr(err.msg, "max_model_len") ||
                              strstr(err.msg, "not shorter than horizon_s"),
                          "case %ld refused unclearly: %s\n%s", k, err.msg, yaml);
            refused++;
            continue;
        }
        sc->check = 1;
        sv_result_t *res = NULL;
        int rc = sv_sim_run(sc, &res, &err);
        /* A duration-bounded closed loop whose requests all fail when sent (queue full,
         * too long) would resend forever at one instant: refused, by design. */
        if (rc && (strstr(err.msg, "does not fit") || strstr(err.msg, "larger than the KV") ||
                   strstr(err.msg, "would resend them forever"))) {
            refused++;
            sv_scenario_free(sc);
            continue;
        }
        ck_assert_msg(rc == 0, "case %ld (seed %lu): %s\n%s", k, seed0 + (unsigned long)k, err.msg,
                      yaml);
        tu_check_accounting(res);
        check_run(sc, res, k, yaml);
        for (int f = 0; f < F_COUNT; f++)
            seen[f] += features[f];
        runs++;
        requests += (long)res->pool.n;
        tu_done(sc, res);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("property: %ld scenarios (%ld ran, %ld refused as documented), %ld requests, "
           "all accounted, in %.1f s; ran with:",
           count, runs, refused, requests, wall);
    for (int f = 0; f < F_COUNT; f++)
        printf(" %s %ld%s", feature_names[f], seen[f], f + 1 < F_COUNT ? "," : "\n");
    ck_assert(runs >= count * 3 / 4); /* the generator must mostly make runnable cases */
    for (int f = 0; f < F_COUNT && count >= 200; f++) /* ... of every kind */
        ck_assert_msg(seen[f] >= count / 50, "only %ld runs with %s", seen[f], feature_names[f]);
    gsl_rng_free(g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("property");
    TCase *tc = tcase_create("random-scenarios");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 3600); /* long runs (tools/fuzz); the watchdog bounds each case */
    tcase_add_test(tc, test_random_scenarios);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
