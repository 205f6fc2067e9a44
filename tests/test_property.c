/*
 * Property test: random valid scenarios (every scheduler, preemption mode, router policy,
 * colocated and disaggregated pools with either first-token definition, KV links fair or
 * FIFO with or without overlap, timeouts, router latency, horizons, queue limits, small
 * KV caches, open and closed loops, duration-bounded closed loops) must each finish with
 * exact accounting: every request ended exactly once, completed + failed by reason = all
 * generated, no KV block, reservation or owed token left, and --check's per-step recount
 * of blocks and client slots holding throughout. A hang is caught by the simulator's
 * watchdog or, failing that, by this test's timeout.
 *
 * SERVESIM_PROPERTY_COUNT sets how many scenarios (default 500, the count tools/test
 * runs; tools/fuzz runs thousands); SERVESIM_PROPERTY_SEED the first seed (default 1).
 * A failing case prints its YAML, so it can be replayed with `servesim run --check`.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

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
    if (strcmp(s, "vllm") != 0 && coin(g, 0.3)) /* V1 only recomputes */
        n += snprintf(buf + n, size - (size_t)n, ", preemption: swap");
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
    int n = snprintf(y, size, "seed: %lu\nmodel: llama-3.1-8b\n", gsl_rng_get(g) % 1000);
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
    /* Traffic: open loop, closed loop by count, or closed loop by duration. */
    long count = 20 + (long)gsl_rng_uniform_int(g, 150);
    int mode = (int)gsl_rng_uniform_int(g, 3);
    n += snprintf(y + n, size - (size_t)n, "workload:\n");
    if (mode == 0 && coin(g, 0.3)) {
        /* A rate profile (issue 13): steps, a ramp or a sinusoid, sometimes a spike. */
        static const char *const kinds[] = {"steps", "linear", "diurnal"};
        const char *kind = PICK(g, kinds);
        double r0 = 40 * gsl_rng_uniform(g), r1 = 0.5 + 40 * gsl_rng_uniform(g);
        if (coin(g, 0.5))
            n += snprintf(y + n, size - (size_t)n, "  num_requests: %ld\n", count);
        else
            n += snprintf(y + n, size - (size_t)n, "  duration_s: %.3g\n",
                          1 + 6 * gsl_rng_uniform(g));
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
                          0.5 + 3 * gsl_rng_uniform(g));
        n += snprintf(y + n, size - (size_t)n, "  rate: inf\n  max_concurrency: %d\n",
                      1 + (int)gsl_rng_uniform_int(g, 64));
    }
    if (coin(g, 0.35))
        n +=
            snprintf(y + n, size - (size_t)n, "  timeout_s: %.3g\n", 0.02 + 5 * gsl_rng_uniform(g));
    if (coin(g, 0.4))
        n += snprintf(y + n, size - (size_t)n,
                      "  shared_prefix: {tokens: %ld, prompts: %ld, share: %.3g}\n",
                      1 + (long)gsl_rng_uniform_int(g, 3000), 1 + (long)gsl_rng_uniform_int(g, 4),
                      0.1 + 0.9 * gsl_rng_uniform(g));
    n += snprintf(y + n, size - (size_t)n,
                  "  input: {dist: uniform, min: 1, max: %ld}\n"
                  "  output: {dist: uniform, min: 1, max: %ld}\n",
                  1 + (long)gsl_rng_uniform_int(g, 4000), 1 + (long)gsl_rng_uniform_int(g, 400));
    snprintf(y + n, size - (size_t)n, "metrics: {sample_interval_s: 0.25}\n");
}

START_TEST(test_random_scenarios)
{
    long count = env_long("SERVESIM_PROPERTY_COUNT", 500);
    unsigned long seed0 = (unsigned long)env_long("SERVESIM_PROPERTY_SEED", 1);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    long runs = 0, requests = 0, refused = 0;
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
        runs++;
        requests += (long)res->pool.n;
        tu_done(sc, res);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("property: %ld scenarios (%ld ran, %ld refused as documented), %ld requests, "
           "all accounted, in %.1f s\n",
           count, runs, refused, requests, wall);
    ck_assert(runs >= count * 3 / 4); /* the generator must mostly make runnable cases */
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
