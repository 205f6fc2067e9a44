/*
 * Pipeline parallelism as the engines schedule it: a replica with pp stages keeps up to pp
 * micro-batches in flight (vLLM's EngineCore.step_with_batch_queue, vllm/v1/engine/core.py),
 * forms the next when the first stage frees from the requests in no micro-batch in flight,
 * runs stage s of a micro-batch once stage s is free and the micro-batch has left stage
 * s - 1 and crossed to it, and emits its tokens when it leaves the last stage
 * (docs/cost-model.md, "Pipeline parallelism").
 *
 * A one-replica rig drives the replica as the simulator does (sim/cluster/sim.c: the first
 * stage's end, each micro-batch's exit, the arrivals, then one start per instant); the
 * expected times are the recurrence above worked by hand over the cost model's stage time
 * t_s and send time t_x of each micro-batch (sv_perf_micro_batch). Whole runs check that
 * no request is ever in two micro-batches at once (--check) and what is refused.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "servesim/engine/replica.h"
#include "servesim/metrics/metrics.h"
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

/* ---- the rig ----------------------------------------------------------------------------- */

enum { MAXREQ = 8, MAXMB = 64 };

typedef struct prig {
    sv_scenario_t *sc;
    sv_perf_t perf;
    sv_metrics_t *m;
    sv_reqpool_t pool;
    sv_replica_t *r;
    int pp;
    /* what the rig saw: each micro-batch's start and exit, in the order formed */
    double start[MAXMB], exit[MAXMB];
    int nmb;
} prig_t;

/* Llama-3.1-8B (32 layers) on H100s at TP 1 and pp stages, synchronous steps, requests
 * visible when submitted; n requests of the given input and output tokens. */
static void rig_new_hw(prig_t *g, int pp, const char *hw, int n, const int *input,
                       const int *output)
{
    sv_error_t err;
    memset(g, 0, sizeof *g);
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "model: llama-3.1-8b\nhardware: {gpu: h100-sxm, pp: %d%s}\n"
             "engine: {async_scheduling: false, api_server_ms: 0}\n"
             "workload: {num_requests: 1, input: 100, output: 10}\n",
             pp, hw);
    ck_assert_int_eq(tu_load_yaml(cat, yaml, NULL, 0, &g->sc, &err), 0);
    ck_assert_int_eq(
        sv_perf_init(&g->perf, &g->sc->pools[0].gpu, &g->sc->model, &g->sc->pools[0].perf, &err),
        0);
    g->pp = pp;
    g->m = sv_metrics_new(&g->sc->metrics, pp); /* a decode-step stream per lane */
    sv_engine_cfg_t e = g->sc->pools[0].engine;
    e.max_model_len = 4096;
    e.stream_stride = 1;
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(sv_reqpool_add(&g->pool), i);
        g->pool.r[i].input = input[i];
        g->pool.r[i].output = output[i];
    }
    ck_assert_int_eq(sv_replica_new(0, &g->perf, 4096, &e, &g->pool, g->m, &g->r, &err), 0);
}

static void rig_new(prig_t *g, int pp, int n, const int *input, const int *output)
{
    rig_new_hw(g, pp, "", n, input, output);
}

static void rig_free(prig_t *g)
{
    sv_replica_free(g->r);
    sv_metrics_free(g->m);
    sv_reqpool_free(&g->pool);
    sv_scenario_free(g->sc);
}

/* Run to the end: request i is sent at at[i]. At each instant the rig handles what is due
 * (the oldest micro-batch's exit, the first stage's end, arrivals), then starts a step once,
 * as the simulator's kicks do. */
static void rig_run(prig_t *g, int n, const double *at)
{
    double s0 = -1.0; /* the first stage's end, -1 when it is free */
    int head = 0, sent = 0;
    char msg[256];
    for (int guard = 0; guard < 100000; guard++) {
        double t = INFINITY;
        if (s0 >= 0) t = s0;
        if (head < g->nmb && g->exit[head] < t) t = g->exit[head];
        if (sent < n && at[sent] < t) t = at[sent];
        if (isinf(t)) break;
        while (head < g->nmb && g->exit[head] <= t) {
            ck_assert_int_eq(sv_replica_exit(g->r, t), 0);
            head++;
        }
        if (s0 >= 0 && s0 <= t) {
            ck_assert_int_eq(sv_replica_end_step(g->r, t), 0);
            s0 = -1.0;
        }
        while (sent < n && at[sent] <= t) {
            g->pool.r[sent].arrival = g->pool.r[sent].start = at[sent];
            ck_assert_int_eq(sv_replica_submit(g->r, sent, t), SV_FAIL_NONE);
            sent++;
        }
        ck_assert_msg(sv_replica_check(g->r, msg, sizeof msg) == 0, "%s", msg);
        if (!sv_replica_ready(g->r)) continue;
        double d = sv_replica_start_step(g->r, t);
        if (d <= 0) continue;
        ck_assert_int_lt(g->nmb, MAXMB);
        s0 = t + d;
        g->start[g->nmb] = t;
        g->exit[g->nmb++] = sv_replica_exit_at(g->r);
        ck_assert_msg(sv_replica_check(g->r, msg, sizeof msg) == 0, "%s", msg);
    }
    ck_assert(!sv_replica_busy(g->r));
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(g->pool.r[i].state, SV_RQ_DONE);
}

/* A micro-batch's terms, by hand: its first stage (t_s with the engine's per-step and
 * per-sequence costs), t_s, and t_x. */
typedef struct mb {
    double first, ts, tx;
} mb_t;

static mb_t prefill_mb(const prig_t *g, long n)
{
    sv_chunk_t ch = {.new_tokens = n, .cached_tokens = 0, .last = 1};
    sv_batch_t b = {.chunks = &ch, .n_chunks = 1};
    sv_step_cost_t c;
    sv_perf_micro_batch(&g->perf, &b, &c);
    return (mb_t){c.total, c.total - c.eng_step - c.eng_seq, c.pp_send};
}

static mb_t decode_mb(const prig_t *g, long seqs, double ctx_sum)
{
    sv_batch_t b = {.n_decode = seqs, .decode_ctx_sum = ctx_sum};
    sv_step_cost_t c;
    sv_perf_micro_batch(&g->perf, &b, &c);
    return (mb_t){c.total, c.total - c.eng_step - c.eng_seq, c.pp_send};
}

/* The recurrence: a micro-batch formed at t0 holds the first stage for `first`, then each
 * next stage s from max(its free time, leaving s - 1 + t_x) for t_s; returns its exit. */
static double through(double *stage_free, int pp, double t0, mb_t m)
{
    double t = t0 + m.first;
    stage_free[0] = t;
    for (int s = 1; s < pp; s++) {
        t = fmax(stage_free[s], t + m.tx) + m.ts;
        stage_free[s] = t;
    }
    return t;
}

/* ---- the bubble ------------------------------------------------------------------------- */

/*
 * One request alone at pp = 4: every micro-batch is m = 1 < pp of one sequence, so each
 * trip is first + 3 (t_x + t_s) with the stages idle the rest of it. Input 64, output 3:
 * the prompt's micro-batch makes the first token at its exit e1; the decodes at contexts 64
 * and 65 make the next two at e2, e3, each formed when the one before came back. The first
 * stage works first_1 + first_2 + first_3 of e3: the bubble is the rest, about
 * (pp - m)/pp = 3/4 of the time.
 */
START_TEST(test_bubble_one_micro_batch)
{
    int in[] = {64}, out[] = {3};
    double at[] = {0.0};
    prig_t g;
    rig_new(&g, 4, 1, in, out);
    rig_run(&g, 1, at);
    double sf[4] = {0};
    mb_t p = prefill_mb(&g, 64), d1 = decode_mb(&g, 1, 64), d2 = decode_mb(&g, 1, 65);
    double e1 = through(sf, 4, 0.0, p);
    tu_assert_rel(e1, p.first + 3 * (p.tx + p.ts), 1e-12);
    double e2 = through(sf, 4, e1, d1), e3 = through(sf, 4, e2, d2);
    tu_assert_rel(e3 - e2, d2.first + 3 * (d2.tx + d2.ts), 1e-12);
    ck_assert_int_eq(g.nmb, 3);
    tu_assert_rel(g.exit[0], e1, 1e-12);
    tu_assert_rel(g.start[1], e1, 1e-12);
    tu_assert_rel(g.exit[2], e3, 1e-12);
    tu_assert_rel(g.pool.r[0].first_token, e1, 1e-12);
    tu_assert_rel(g.pool.r[0].end, e3, 1e-12);
    /* The first stage's busy time is the replica's (each of the 4 stages works t_s on each
     * micro-batch, the engine's costs on the first): the rest is the bubble. */
    double busy = p.first + d1.first + d2.first;
    const sv_replica_stats_t *st = sv_replica_stats(g.r);
    tu_assert_rel(st->busy_s, busy, 1e-12);
    /* Each stage's GPUs work t_s a micro-batch: idle the rest, (pp - m)/pp = 3/4 of each
     * trip's stage time plus the sends and the engine's costs. */
    double bubble = 1.0 - (p.ts + d1.ts + d2.ts) / e3;
    double quarter = 3.0 / 4.0;
    ck_assert_msg(bubble > quarter && bubble < quarter + 0.1, "bubble %.4f", bubble);
    printf("pp 4, one micro-batch: trip %.3f ms, t_s %.3f ms, t_x %.1f us, bubble %.3f\n",
           (e3 - e2) * 1e3, d2.ts * 1e3, d2.tx * 1e6, bubble);
    /* Every decode step of the one lane went to metrics stream 0. */
    rig_free(&g);
}
END_TEST

/*
 * pp = 2 with two equal requests in two micro-batches: A (input 64, output 4) at t = 0,
 * B (the same) while A's prompt holds the first stage, so B's prompt is the second
 * micro-batch, formed when the first stage frees at T = first(prefill 64). From then on
 * each request's micro-batch is formed when the first stage frees and its own came back:
 * A, B, A, B, ... of equal terms, the first stage busy all along (no bubble on it: every
 * micro-batch is formed the moment it frees) as long as each comes back by then
 * (t_x < the engine's per-step cost). A and B make a token each per round of
 * 2 first(decode) against one step of both at pp = 1.
 */
START_TEST(test_equal_micro_batches)
{
    int in[] = {64, 64}, out[] = {4, 4};
    prig_t g;
    rig_new(&g, 2, 2, in, out);
    mb_t p = prefill_mb(&g, 64);
    double at[] = {0.0, 0.5 * p.first};
    rig_run(&g, 2, at);
    /* By hand: formation k at max(first stage free, lane k % 2's last exit). */
    mb_t seq[8];
    seq[0] = seq[1] = p;
    for (int k = 0; k < 3; k++)
        seq[2 + 2 * k] = seq[3 + 2 * k] = decode_mb(&g, 1, 64 + k);
    double sf[2] = {0}, start[8], ex[8];
    for (int k = 0; k < 8; k++) {
        start[k] = k == 0 ? 0.0 : sf[0];
        if (k >= 2) start[k] = fmax(start[k], ex[k - 2]);
        ex[k] = through(sf, 2, start[k], seq[k]);
    }
    ck_assert_int_eq(g.nmb, 8);
    double busy = 0.0;
    for (int k = 0; k < 8; k++) {
        tu_assert_rel(g.start[k], start[k], 1e-12);
        tu_assert_rel(g.exit[k], ex[k], 1e-12);
        busy += seq[k].first;
        /* no bubble on the first stage: each micro-batch formed the moment it freed */
        if (k > 0) tu_assert_rel(start[k], start[k - 1] + seq[k - 1].first, 1e-12);
    }
    tu_assert_rel(g.start[7] + seq[7].first, busy, 1e-12);
    tu_assert_rel(g.pool.r[0].first_token, ex[0], 1e-12);
    tu_assert_rel(g.pool.r[1].first_token, ex[1], 1e-12);
    tu_assert_rel(g.pool.r[0].end, ex[6], 1e-12);
    tu_assert_rel(g.pool.r[1].end, ex[7], 1e-12);
    /* Decode-bound throughput: 2 tokens a round of 2 first(decode) here (the first stage
     * the bottleneck), 2 a step of the pair at pp = 1, where the step holds all 32 layers. */
    double round = g.start[7] - g.start[5];
    tu_assert_rel(round, seq[5].first + seq[6].first, 1e-12);
    rig_free(&g);

    /* pp = 1, both at t = 0: a step of the two prompts, then three of both decoding at
     * contexts 64, 65, 66 each; the last is the pair's step. */
    prig_t g1;
    rig_new(&g1, 1, 2, in, out);
    double at1[] = {0.0, 0.0};
    rig_run(&g1, 2, at1);
    sv_chunk_t two[2] = {{.new_tokens = 64, .last = 1}, {.new_tokens = 64, .last = 1}};
    sv_batch_t b = {.chunks = two, .n_chunks = 2};
    sv_step_cost_t c;
    sv_perf_step(&g1.perf, &b, &c);
    double t1 = c.total;
    for (int k = 0; k < 3; k++) {
        b = (sv_batch_t){.n_decode = 2, .decode_ctx_sum = 2 * (64.0 + k)};
        sv_perf_step(&g1.perf, &b, &c);
        t1 += c.total;
    }
    ck_assert_int_eq(g1.nmb, 4);
    tu_assert_rel(g1.pool.r[0].end, t1, 1e-12);
    tu_assert_rel(g1.pool.r[1].end, t1, 1e-12);
    double tput2 = 2.0 / round, tput1 = 2.0 / c.total;
    /* Each stage reads half the weights for one sequence, the pp = 1 step all of them for
     * two: the replica's tokens per second stay within the engine's extra per-step cost of
     * each other (paid once per micro-batch: twice a round), per GPU about half. */
    ck_assert_msg(tput2 > 0.8 * tput1 && tput2 < 1.25 * tput1, "pp 2: %.1f tok/s, pp 1: %.1f",
                  tput2, tput1);
    ck_assert(tput2 / 2 < 0.65 * tput1);
    printf("decode-bound, 2 sequences: pp 2 %.1f tok/s (round %.3f ms), pp 1 %.1f tok/s "
           "(step %.3f ms)\n",
           tput2, round * 1e3, tput1, c.total * 1e3);
    rig_free(&g1);
}
END_TEST

/*
 * pp = 2: A (input 64, output 2) at t = 0; B (input 64, output 1) at T/2, T = first(prefill
 * 64), while A's prompt holds the first stage. B need not wait for A's micro-batch to come
 * back (e1 = T + t_x + t_s): its prompt is the next micro-batch, formed when the first stage
 * frees at T, and leaves the last stage at max(e1, 2T + t_x) + t_s = 2T + t_x + t_s (the
 * engine's per-step cost makes 2T + t_x the later). Its first token then; under the
 * lockstep of one step at a time it would have started at e1 with A's decode.
 */
START_TEST(test_arrival_mid_step)
{
    int in[] = {64, 64}, out[] = {2, 1};
    prig_t g;
    rig_new(&g, 2, 2, in, out);
    mb_t p = prefill_mb(&g, 64);
    double T = p.first, at[] = {0.0, 0.5 * T};
    rig_run(&g, 2, at);
    double e1 = T + p.tx + p.ts;
    ck_assert(2 * T + p.tx > e1);
    tu_assert_rel(g.pool.r[1].scheduled, T, 1e-12);
    ck_assert(g.pool.r[1].scheduled < e1);
    tu_assert_rel(g.pool.r[1].first_token, 2 * T + p.tx + p.ts, 1e-12);
    tu_assert_rel(g.pool.r[1].end, 2 * T + p.tx + p.ts, 1e-12);
    tu_assert_rel(g.pool.r[0].first_token, e1, 1e-12);
    /* A's decode is formed when the first stage frees after B's prompt (2T), A being back
     * by then: A's second token at 2T + first(decode) + t_x + t_s, after B's exit. */
    mb_t d = decode_mb(&g, 1, 64);
    double s1 = 2 * T + p.tx + p.ts; /* stage 2 free after B */
    tu_assert_rel(g.pool.r[0].end, fmax(s1, 2 * T + d.first + d.tx) + d.ts, 1e-12);
    rig_free(&g);
}
END_TEST

/* ---- whole runs -------------------------------------------------------------------------- */

/*
 * No request is ever in two micro-batches at once: an overloaded pp = 2 and pp = 4 replica
 * with chunked prompts (a 2048-token budget against prompts of up to 2000 tokens at 80 a
 * second), preemptions (a small KV cache: the weights and about 1.6 GB per GPU) and
 * timeouts (8 s), under --check, which checks every chunk in flight against the others at
 * each stage end and exit (sv_replica_check). Every request ends and every block comes
 * back. Last, a hybrid model (gpt-oss-20b: sliding-window layers, whose blocks behind the
 * window go back when a step ends) at pp 2 and 4: a lane's step gives back only its own
 * sequences' (the recount fails otherwise).
 */
START_TEST(test_no_request_in_two_micro_batches)
{
    const char *yaml =
        "model: %s\nseed: 3\n"
        "hardware: {gpu: h100-sxm, pp: %d, gpu_memory_utilization: %.2f}\n"
        "engine: {scheduler: %s, max_num_seqs: 64, max_num_batched_tokens: 2048}\n"
        "workload: {num_requests: 300, rate: 80, timeout_s: 8,\n"
        "  input: {dist: uniform, min: 16, max: 2000}, output: {dist: uniform, min: 8, max: 300}}\n";
    const char *scheds[] = {"vllm", "sglang", "vllm-v0", "trtllm", "vllm"};
    long preempted = 0, timed_out = 0;
    for (int pp = 2; pp <= 4; pp *= 2) {
        for (int k = 0; k < 5; k++) {
            char text[1024];
            double mem = k < 4 ? (pp == 2 ? 0.12 : 0.07) : (pp == 2 ? 0.10 : 0.06);
            snprintf(text, sizeof text, yaml, k < 4 ? "llama-3.1-8b" : "gpt-oss-20b", pp, mem,
                     scheds[k]);
            sv_scenario_t *sc;
            sv_result_t *res = tu_run_checked(cat, text, &sc);
            tu_check_accounting(res);
            ck_assert_int_gt(res->summary.completed, 0);
            preempted += res->preemptions;
            timed_out += res->summary.failed_by[SV_FAIL_TIMEOUT];
            tu_done(sc, res);
        }
    }
    ck_assert_int_gt(preempted, 0);
    ck_assert_int_gt(timed_out, 0);
}
END_TEST

/* What a replica with pipeline stages does not combine (docs/errors.md). */
/* ---- uneven stages --------------------------------------------------------------------- */

/* The stages' layers as vLLM splits them (get_pp_indices, vllm/distributed/utils.py: layers
 * / pp each, the remainder one each to the stages before the last, from the last but one
 * backwards), worked by hand for 32, 61 and 126 layers. */
START_TEST(test_uneven_split)
{
    const struct {
        const char *model;
        int pp, tp, want[4];
    } cases[] = {
        {"llama-3.1-8b", 3, 1, {11, 11, 10}},
        {"llama-3.1-405b", 4, 8, {31, 32, 32, 31}},
        {"llama-3.1-8b", 4, 1, {8, 8, 8, 8}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const sv_gpu_t *gpu;
        const sv_model_t *m;
        sv_error_t err;
        ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &gpu, &err), 0);
        ck_assert_int_eq(sv_catalog_model(cat, cases[i].model, &m, &err), 0);
        sv_perf_settings_t s = sv_perf_settings_default();
        s.tp = cases[i].tp;
        s.pp = cases[i].pp;
        s.weight_dtype = SV_DT_FP8;
        sv_perf_t p;
        ck_assert_msg(sv_perf_init(&p, gpu, m, &s, &err) == 0, "%s", err.msg);
        int most = 0;
        for (int k = 0; k < cases[i].pp; k++) {
            ck_assert_int_eq(p.pp_layers[k], cases[i].want[k]);
            if (cases[i].want[k] > most) most = cases[i].want[k];
        }
        ck_assert_int_eq(p.pp_uneven, most * cases[i].pp != m->layers);
        tu_assert_rel(p.stage_layers, most, 0);
    }
}
END_TEST

/*
 * Llama-3.1-8B (32 layers, BF16: 436,224,000 bytes a layer with its norms; embedding and
 * LM head 1,050,673,152 bytes each, final norm 8,192) at pp = 3. vLLM's 11, 11, 10: the
 * first stage is the heaviest GPU, 11 layers + the embedding = 5,849,137,152 bytes (the
 * last: 10 layers + norm + LM head = 5,412,921,344); KV per token on it 11 layers x 2 x 8
 * heads x 128 x 2 bytes = 45,056. With pp_layer_partition 10, 11, 11 the last is the
 * heaviest: 11 layers + 1,050,681,344 = 5,849,145,344. One request alone then makes each
 * trip first + 2 (t_x) + t_s (11 layers) + t_s (11 layers) where the first stage's own
 * time is 10/11 of t_s plus the engine's per-step and per-sequence costs.
 */
START_TEST(test_uneven_stages)
{
    int in[] = {64}, out[] = {3};
    double at[] = {0.0};
    prig_t g;
    rig_new(&g, 3, 1, in, out);
    ck_assert(g.perf.pp_uneven);
    tu_assert_rel(g.perf.weight_bytes_gpu, 5849137152.0, 1e-15);
    tu_assert_rel(g.perf.kv_bytes_token, 45056.0, 1e-15);
    tu_assert_rel(g.perf.kv_bytes_token_total, 32.0 * 4096.0, 1e-15);
    rig_free(&g);

    rig_new_hw(&g, 3, ", pp_layer_partition: '10,11,11'", 1, in, out);
    ck_assert_int_eq(g.perf.pp_layers[0], 10);
    tu_assert_rel(g.perf.weight_bytes_gpu, 5849145344.0, 1e-15);
    rig_run(&g, 1, at);
    mb_t p = prefill_mb(&g, 64), d1 = decode_mb(&g, 1, 64), d2 = decode_mb(&g, 1, 65);
    double eng_p = p.first - p.ts, eng_d1 = d1.first - d1.ts, eng_d2 = d2.first - d2.ts;
    double e1 = eng_p + p.ts * 10.0 / 11.0 + 2.0 * (p.tx + p.ts);
    double e2 = e1 + eng_d1 + d1.ts * 10.0 / 11.0 + 2.0 * (d1.tx + d1.ts);
    double e3 = e2 + eng_d2 + d2.ts * 10.0 / 11.0 + 2.0 * (d2.tx + d2.ts);
    ck_assert_int_eq(g.nmb, 3);
    tu_assert_rel(g.exit[0], e1, 1e-12);
    tu_assert_rel(g.exit[2], e3, 1e-12);
    tu_assert_rel(g.pool.r[0].first_token, e1, 1e-12);
    /* The first stage's occupancy is its own 10 layers' share. */
    const sv_replica_stats_t *st = sv_replica_stats(g.r);
    tu_assert_rel(st->busy_s, eng_p + eng_d1 + eng_d2 + (p.ts + d1.ts + d2.ts) * 10.0 / 11.0, 1e-12);
    /* The cost model's step of one micro-batch is the same trip: 32/11 stage times. */
    sv_batch_t b = {.n_decode = 1, .decode_ctx_sum = 64};
    sv_step_cost_t c;
    sv_perf_step(&g.perf, &b, &c);
    tu_assert_rel(c.total, d1.ts * 32.0 / 11.0 + 2.0 * d1.tx + c.eng_step + c.eng_seq, 1e-12);
    rig_free(&g);
}
END_TEST

START_TEST(test_refused)
{
    const char *base = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm, pp: 2%s}\n"
                       "engine: {scheduler: %s%s}\n"
                       "workload: {num_requests: 1, input: 100, output: 10}\n";
    const struct {
        const char *hw, *sched, *engine, *msg;
    } cases[] = {
        {", speculative: eagle", "vllm", "", "speculative decoding with pp=2 is not modelled"},
        {"", "vllm", ", async_scheduling: true", "async_scheduling with pp=2 is not modelled"},
        {"", "sglang", ", overlap_schedule: true", "overlap_schedule with pp=2 is not modelled"},
        {"", "vllm-v0", ", num_scheduler_steps: 8",
         "num_scheduler_steps=8 with pp=2 is not modelled"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, base, cases[i].hw, cases[i].sched, cases[i].engine);
        sv_scenario_t *sc = NULL;
        sv_error_t err;
        ck_assert_int_eq(tu_load_yaml(cat, text, NULL, 0, &sc, &err), SV_EINVAL);
        ck_assert_msg(strstr(err.msg, cases[i].msg), "%s", err.msg);
    }
    /* Stages that cannot hold the layers: more stages than layers, a partition of the wrong
     * length or sum. */
    const struct {
        const char *hw, *msg;
    } parts[] = {
        {"pp: 33", "pp=33 exceeds the 32 layers of model 'llama-3.1-8b'"},
        {"pp: 3, pp_layer_partition: '16,16'", "pp_layer_partition: 2 stage(s) given for pp=3"},
        {"pp: 2, pp_layer_partition: '16,15'",
         "pp_layer_partition: its stages hold 31 layers; model 'llama-3.1-8b' has 32"},
        {"pp: 2, pp_layer_partition: '16,0,16'", "pp_layer_partition: expected the layers"},
    };
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "model: llama-3.1-8b\nhardware: {gpu: h100-sxm, %s}\n"
                 "workload: {num_requests: 1, input: 100, output: 10}\n",
                 parts[i].hw);
        sv_scenario_t *sc3 = NULL;
        sv_error_t err3;
        ck_assert_int_eq(tu_load_yaml(cat, text, NULL, 0, &sc3, &err3), SV_EINVAL);
        ck_assert_msg(strstr(err3.msg, parts[i].msg), "%s", err3.msg);
    }
    /* Left unset, vLLM's async default and SGLang's overlap loop resolve off with pp > 1. */
    const char *sgl = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm, pp: 2}\n"
                      "engine: {scheduler: sglang}\n"
                      "workload: {num_requests: 1, input: 100, output: 10}\n";
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, sgl, NULL, 0, &sc, &err), 0);
    ck_assert_int_eq(sc->pools[0].engine.overlap_schedule, 0);
    sv_scenario_free(sc);
    const char *vl = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm, pp: 2}\n"
                     "workload: {num_requests: 1, input: 100, output: 10}\n";
    ck_assert_int_eq(tu_load_yaml(cat, vl, NULL, 0, &sc, &err), 0);
    ck_assert_int_eq(sc->pools[0].engine.async_scheduling, 0);
    sv_scenario_free(sc);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bubble_one_micro_batch);
    tcase_add_test(tc, test_equal_micro_batches);
    tcase_add_test(tc, test_arrival_mid_step);
    tcase_add_test(tc, test_no_request_in_two_micro_batches);
    tcase_add_test(tc, test_uneven_split);
    tcase_add_test(tc, test_uneven_stages);
    tcase_add_test(tc, test_refused);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
