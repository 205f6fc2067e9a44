/*
 * Tests of multi-turn sessions and agentic programs (workload.sessions, issue 12): a chat
 * whose every turn finds its history cached (exact hit tokens), the same chat with a cache
 * too small to keep it (no hits), accounting (every block free or cached at the end, every
 * call one request, counts adding up), task latency of a chain as the exact sum of its
 * calls' latencies and think times, a fan-out's latency as its slowest call's, the
 * tail-at-scale figure (1% slow calls make about 9.56% of 10-call chains slow), and bad
 * input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "servesim/report/report.h"
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

/* Every call of every session is one request; the summary's counts add up. */
static void check_sessions(const sv_result_t *res)
{
    const sv_session_log_t *log = &res->sessions;
    const sv_session_summary_t *ss = &res->session_sum;
    ck_assert_uint_eq(log->nreq, res->pool.n);
    long sent = 0, done = 0, failed = 0;
    for (size_t k = 0; k < log->n; k++) {
        sent += log->s[k].sent;
        done += log->s[k].done;
        failed += log->s[k].failed;
    }
    ck_assert_int_eq(sent, (long)res->pool.n);
    ck_assert_int_eq(done, res->summary.completed);
    ck_assert_int_eq(failed, res->summary.failed);
    ck_assert_int_eq(ss->calls_sent, sent);
    ck_assert_int_eq(ss->calls_done + ss->calls_failed, ss->calls_sent);
    ck_assert_int_eq(ss->complete + ss->failed + ss->cut, ss->sessions);
    ck_assert_int_eq(ss->calls_planned, ss->calls_sent + ss->calls_not_sent);
    long rows = 0;
    for (int i = 0; i < ss->nturn; i++)
        rows += ss->turn[i].requests;
    ck_assert_int_eq(rows, sent);
}

/* One chat of 5 turns: a first prompt of 256 tokens, answers of 65, new messages of 47
 * (65 + 47 = 112 = 7 blocks, so every history ends on a block boundary but for the last
 * answer token). Turn k's prompt is 256 + 112 (k - 1) tokens. A turn computes its prompt
 * and all but its last output token (whose KV is never computed, as in vLLM): prompt + 64
 * tokens, a whole number of blocks, all cached. So turn k + 1 hits exactly its history
 * but the last answer token: prompt(k + 1) - 47 - 1 = prompt(k) + 64 tokens. */
static const char *chat = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                          "workload:\n  rate: 1\n  input: 256\n  output: 65\n"
                          "  sessions: {count: 1, turns: 5, think_time_ms: 2000, message: 47}\n";

START_TEST(test_five_turns_hit_history)
{
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, chat, NULL, 0, &sc, &err), 0);
    sc->check = 1;
    sv_result_t *res;
    ck_assert_msg(sv_sim_run(sc, &res, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(res->pool.n, 5);
    double hits = 0, queries = 0;
    for (int k = 0; k < 5; k++) {
        const sv_req_t *r = &res->pool.r[k];
        ck_assert_int_eq(res->sessions.turn[k], k);
        ck_assert_int_eq(r->state, SV_RQ_DONE);
        ck_assert_int_eq(r->input, 256 + 112 * k);
        ck_assert_int_eq(r->cached, k == 0 ? 0 : 256 + 112 * (k - 1) + 64);
        ck_assert_int_eq(r->nseg, 1 + 2 * k); /* messages and answers */
        hits += r->cached;
        queries += r->input;
        /* sent exactly 2 s after the previous turn ended */
        if (k > 0) ck_assert_double_eq_tol(r->start, res->pool.r[k - 1].end + 2.0, 1e-12);
    }
    ck_assert_double_eq(res->prefix_hits, hits);       /* 320 + 432 + 544 + 656 = 1952 */
    ck_assert_double_eq(res->prefix_queries, queries); /* 256 + 368 + 480 + 592 + 704 */
    ck_assert_double_eq(hits, 1952.0);
    const sv_session_summary_t *ss = &res->session_sum;
    ck_assert_int_eq(ss->nturn, 5);
    ck_assert_int_eq(ss->complete, 1);
    ck_assert_double_eq_tol(ss->turn[1].hit_rate, 320.0 / 368.0, 1e-12);
    ck_assert_double_eq_tol(ss->turn[4].hit_rate, 656.0 / 704.0, 1e-12);
    ck_assert_double_eq(ss->calls_done_mean, 5.0);
    tu_check_accounting(res);
    check_sessions(res);
    tu_done(sc, res);
}
END_TEST

/* The same chat on 1 prefill and 1 decode replica: the decode replica keeps each turn's
 * prompt and answer blocks, so the next turn's transfer moves only its new message and the
 * answer's last token (47 + 1 tokens: its history ends on a block boundary): 256 + 4 x 48
 * = 448 tokens of KV over the link, against 256 + 368 + 480 + 592 + 704 = 2,400 with the
 * decode pool's cache off. */
START_TEST(test_disagg_chat_sends_new_tokens)
{
    const char *fmt = "model: llama-3.1-8b\npools:\n"
                      "  - {name: prefill, role: prefill, gpu: h100-sxm, replicas: 1}\n"
                      "  - {name: decode, role: decode, gpu: h100-sxm, replicas: 1, "
                      "engine: {enable_prefix_caching: %s}}\n"
                      "disaggregation: {kv_link: {kind: infiniband}}\n"
                      "workload:\n  rate: 1\n  input: 256\n  output: 65\n"
                      "  sessions: {count: 1, turns: 5, think_time_ms: 2000, message: 47}\n";
    for (int on = 0; on < 2; on++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml, fmt, on ? "true" : "false");
        sv_scenario_t *sc;
        sv_error_t err;
        ck_assert_int_eq(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err), 0);
        sc->check = 1;
        sv_result_t *res;
        ck_assert_msg(sv_sim_run(sc, &res, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(res->session_sum.complete, 1);
        ck_assert_double_eq(res->pools[0].link_bytes, (on ? 448.0 : 2400.0) * 131072.0);
        tu_check_accounting(res);
        check_sessions(res);
        tu_done(sc, res);
    }
}
END_TEST

/* 30 chats of 2 turns of 2,000-token prompts, a session a second, 20 s of thought between
 * turns. With the whole H100's cache, every second turn hits its first turn's prompt and
 * all but the last of its 20 answer tokens: floor(2019 / 16) = 126 blocks, 2016 tokens.
 * With a quarter of the GPU's memory (1,816 blocks) the 20 chats that start in the
 * meantime (126 blocks each) evict it first (LRU): no hit at all. */
static const char *small =
    "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
    "engine: {max_model_len: 8192}\n"
    "workload:\n  rate: 1\n  burstiness: inf\n  input: 2000\n  output: 20\n"
    "  sessions: {count: 30, turns: 2, think_time_ms: 20000, message: 100}\n";

START_TEST(test_cache_too_small)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, small, NULL, 0, &sc);
    ck_assert_double_eq(res->prefix_hits, 30 * 2016.0);
    ck_assert_int_eq(res->session_sum.turn[1].requests, 30);
    ck_assert_double_eq_tol(res->session_sum.turn[1].hit_rate, 2016.0 / 2120.0, 1e-12);
    tu_check_accounting(res);
    check_sessions(res);
    tu_done(sc, res);
    const char *tiny[] = {"hardware.gpu_memory_utilization=0.25"};
    res = tu_run_yaml(cat, small, tiny, 1, &sc);
    ck_assert_int_eq(res->pools[0].mem.kv_blocks, 1816);
    ck_assert_double_eq(res->prefix_hits, 0.0);
    ck_assert_double_eq(res->session_sum.turn[1].hit_rate, 0.0);
    ck_assert_int_eq(res->session_sum.complete, 30);
    tu_check_accounting(res);
    check_sessions(res);
    tu_done(sc, res);
}
END_TEST

/* A failed call ends its session: the calls after it are never sent (not requests), and
 * everything still adds up. Prompts that grow past max_model_len fail as too long: turn k
 * is 1000 + 600 (k - 1) tokens plus 100 output, so with 3000 tokens turn 4 (2800 + 100)
 * fits and turn 5 (3400) fails; turns 6 to 8 are not sent. */
START_TEST(test_failure_ends_session)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "engine: {max_model_len: 3000}\n"
                       "workload:\n  rate: 2\n  input: 1000\n  output: 100\n"
                       "  sessions: {count: 4, turns: 8, think_time_ms: 100, message: 500}\n";
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err), 0);
    sc->check = 1;
    sv_result_t *res;
    ck_assert_msg(sv_sim_run(sc, &res, &err) == 0, "%s", err.msg);
    const sv_session_summary_t *ss = &res->session_sum;
    ck_assert_uint_eq(res->pool.n, 4 * 5);
    ck_assert_int_eq(res->summary.failed_by[SV_FAIL_TOO_LONG], 4);
    ck_assert_int_eq(ss->failed, 4);
    ck_assert_int_eq(ss->calls_not_sent, 4 * 3);
    ck_assert_int_eq(ss->calls_done, 4 * 4);
    ck_assert_int_eq(ss->turn[4].failed, 4);
    tu_check_accounting(res);
    check_sessions(res);
    tu_done(sc, res);
}
END_TEST

/* A fanout whose calls fail as they are sent (too long for max_model_len) is over once,
 * when its last call ends: its first call (input 2000) fails at once and the other three
 * (message 100) complete; with every call too long, it is over as soon as it starts.
 * Ending it at each early failure counted it over several times (sessions live < 0). */
START_TEST(test_fanout_fails_at_send)
{
    static const char *const msg[] = {"100", "3000"};
    for (int m = 0; m < 2; m++) {
        char yaml[512];
        snprintf(yaml, sizeof yaml,
                 "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                 "engine: {max_model_len: 1000}\n"
                 "workload:\n  rate: 4\n  input: 2000\n  output: 20\n"
                 "  sessions: {count: 6, turns: 4, shape: fanout, history: false, message: %s}\n",
                 msg[m]);
        sv_scenario_t *sc;
        sv_result_t *res = tu_run_checked(cat, yaml, &sc);
        const sv_session_log_t *log = &res->sessions;
        ck_assert_uint_eq(log->n, 6);
        for (size_t k = 0; k < log->n; k++) {
            const sv_session_rec_t *r = &log->s[k];
            ck_assert(r->over && !r->cut && r->sent == 4);
            ck_assert_int_eq(r->failed, m == 0 ? 1 : 4);
            ck_assert_int_eq(r->done, m == 0 ? 3 : 0);
            ck_assert(m == 0 ? r->end > r->start : r->end == r->start);
        }
        ck_assert_int_eq(res->session_sum.failed, 6);
        ck_assert_int_eq(res->summary.failed_by[SV_FAIL_TOO_LONG], m == 0 ? 6 : 24);
        tu_check_accounting(res);
        check_sessions(res);
        tu_done(sc, res);
    }
}
END_TEST

/* An agent chain of 4 calls, no history, 500 ms of thought between calls: each task's
 * latency is exactly the sum of its calls' latencies (E2EL) plus 3 x 0.5 s. */
START_TEST(test_chain_latency_is_sum)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload:\n  rate: 0.5\n  input: {dist: uniform, min: 100, max: 900}\n"
                       "  output: {dist: uniform, min: 5, max: 200}\n"
                       "  sessions: {count: 20, turns: 4, think_time_ms: 500, history: false}\n";
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    const sv_session_log_t *log = &res->sessions;
    double sum_e2el[20] = {0};
    for (size_t i = 0; i < res->pool.n; i++)
        sum_e2el[log->session[i]] += sv_req_e2el(&res->pool.r[i]);
    for (int k = 0; k < 20; k++) {
        ck_assert_int_eq(log->s[k].done, 4);
        ck_assert_double_eq_tol(log->s[k].think_s, 1.5, 1e-12);
        ck_assert_double_eq_tol(log->s[k].end - log->s[k].start, sum_e2el[k] + 1.5, 1e-9);
    }
    /* no history: every prompt is its own message, nothing to hit */
    ck_assert_double_eq(res->prefix_hits, 0.0);
    check_sessions(res);
    tu_done(sc, res);
}
END_TEST

/* A fan-out of 6 calls: all sent when the task starts, and the task ends with the
 * slowest (the join). */
START_TEST(test_fanout_join)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload:\n  rate: 1\n  input: 300\n"
                       "  output: {dist: uniform, min: 5, max: 300}\n"
                       "  sessions: {count: 10, turns: 6, shape: fanout}\n";
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    const sv_session_log_t *log = &res->sessions;
    ck_assert_uint_eq(res->pool.n, 60);
    double last[10] = {0};
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        ck_assert_double_eq(r->start, log->s[log->session[i]].start);
        if (r->end > last[log->session[i]]) last[log->session[i]] = r->end;
    }
    for (int k = 0; k < 10; k++)
        ck_assert_double_eq(log->s[k].end, last[k]);
    ck_assert_int_eq(res->session_sum.nturn, 6);
    check_sessions(res);
    tu_done(sc, res);
}
END_TEST

/* The summary's P95s (the lab's tail lesson reads them): 10 fan-out tasks, so the task
 * P95 is numpy's linear percentile at rank 0.95 x 9 = 8.55 of the sorted durations,
 * d[8] + 0.55 (d[9] - d[8]); the call P95 over the 60 calls, rank 0.95 x 59 = 56.05. The
 * JSON's sessions block shows them only when metrics.percentiles lists 95. */
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int json_has(const sv_result_t *res, const char *key)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sv_report_json_stream(res, 0, f, NULL), 0);
    fclose(f);
    int has = strstr(buf, key) != NULL;
    free(buf);
    return has;
}

START_TEST(test_session_p95)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload:\n  rate: 1\n  input: 300\n"
                       "  output: {dist: uniform, min: 5, max: 300}\n"
                       "  sessions: {count: 10, turns: 6, shape: fanout}\n";
    const char *p95[] = {"metrics.percentiles=[95, 99]"};
    for (int with = 0; with < 2; with++) {
        sv_scenario_t *sc;
        sv_result_t *res = tu_run_yaml(cat, yaml, with ? p95 : NULL, with, &sc);
        const sv_session_log_t *log = &res->sessions;
        double d[10], e[60];
        for (int k = 0; k < 10; k++)
            d[k] = log->s[k].end - log->s[k].start;
        for (int i = 0; i < 60; i++)
            e[i] = sv_req_e2el(&res->pool.r[i]);
        qsort(d, 10, sizeof *d, cmp_dbl);
        qsort(e, 60, sizeof *e, cmp_dbl);
        ck_assert_double_eq_tol(res->session_sum.duration_p95, d[8] + 0.55 * (d[9] - d[8]), 1e-12);
        ck_assert_double_eq_tol(res->session_sum.call_p95, e[56] + 0.05 * (e[57] - e[56]), 1e-12);
        ck_assert(res->session_sum.duration_p95 > res->session_sum.duration_p90);
        ck_assert_int_eq(json_has(res, "\"duration_p95_s\""), with);
        ck_assert_int_eq(json_has(res, "\"call_latency_p95_s\""), with);
        ck_assert_int_eq(json_has(res, "\"duration_p99_s\""), 1);
        tu_done(sc, res);
    }
}
END_TEST

/* Tail at scale (Dean and Barroso, "The Tail at Scale", CACM 2013): outputs are 10 tokens
 * but 1,000 for 1% of calls (an empirical distribution of 99 tens and one 1,000, drawn
 * uniformly). A 10-call chain is slow when any call is: 1 - 0.99^10 = 9.562% of tasks.
 * Over 10,000 tasks the share must lie within 4 binomial standard deviations
 * (sqrt(p (1 - p) / n) = 0.294 points, so within 1.18 points); the slow calls' share,
 * over 100,000 calls, within 4 sigma of 1% (0.126 points). A fast call takes about 0.1 s,
 * a slow one about 9 s, so a task is slow when it takes over 4 s. */
START_TEST(test_tail_at_scale)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
             "workload:\n  rate: 20\n  input: 64\n"
             "  output: {dist: empirical, file: %s, column: output}\n"
             "  sessions: {count: 10000, turns: 10, history: false}\n",
             tu_data("bimodal_output.csv"));
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    const sv_session_log_t *log = &res->sessions;
    ck_assert_uint_eq(res->pool.n, 100000);
    long slow_calls = 0, slow_tasks = 0;
    double fast_max = 0, slow_min = INFINITY;
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        slow_calls += r->output == 1000;
        double e = sv_req_e2el(r);
        if (r->output == 1000 && e < slow_min) slow_min = e;
        if (r->output != 1000 && e > fast_max) fast_max = e;
    }
    ck_assert_msg(fast_max < 1.0 && slow_min > 4.0, "fast calls up to %g s, slow from %g s",
                  fast_max, slow_min);
    for (size_t k = 0; k < log->n; k++)
        slow_tasks += log->s[k].end - log->s[k].start > 4.0;
    double p = 1.0 - pow(0.99, 10), share = (double)slow_tasks / 10000.0;
    ck_assert_double_eq_tol(p, 0.095618, 1e-6);
    ck_assert_msg(fabs(share - p) <= 4.0 * sqrt(p * (1 - p) / 10000.0),
                  "%.4f of tasks slow, expected %.4f", share, p);
    double q = (double)slow_calls / 100000.0;
    ck_assert_msg(fabs(q - 0.01) <= 4.0 * sqrt(0.01 * 0.99 / 100000.0), "%.5f of calls slow", q);
    /* the summary shows it: the task p99 is a slow task, the call p90 a fast call */
    ck_assert(res->session_sum.duration_p99 > 4.0 && res->session_sum.call_p90 < 1.0);
    fprintf(stderr, "tail at scale: %.2f%% of calls slow, %.2f%% of 10-call tasks slow\n", 100 * q,
            100 * share);
    check_sessions(res);
    tu_done(sc, res);
}
END_TEST

/* workload.num_requests bounds the calls (as `--set workload.num_requests=300` cuts any
 * scenario short): no call is made past it, and the calls not made are counted. */
START_TEST(test_request_bound)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload:\n  rate: 0.01\n  burstiness: inf\n  num_requests: 25\n"
                       "  input: 100\n  output: 10\n"
                       "  sessions: {count: 10, turns: 4, think_time_ms: 100}\n";
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    const sv_session_summary_t *ss = &res->session_sum;
    /* sessions start 100 s apart and last well under 100 s: one at a time, so the bound
     * leaves 6 complete sessions (24 calls), a seventh with one call, then nothing */
    ck_assert_uint_eq(res->pool.n, 25);
    ck_assert_int_eq(ss->sessions, 7);
    ck_assert_int_eq(ss->complete, 6);
    ck_assert_int_eq(ss->cut, 1);
    ck_assert_int_eq(ss->calls_not_sent, 3);
    check_sessions(res);
    tu_done(sc, res);
}
END_TEST

/* A closed loop of sessions (rate inf, max_concurrency 4): four users, each starting a
 * new chat when their last one is over. The first four start at 0; every later one
 * starts at the very instant an earlier one ended; never more than four are live. */
START_TEST(test_closed_loop_of_sessions)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload:\n  max_concurrency: 4\n  input: 300\n"
                       "  output: {dist: uniform, min: 10, max: 200}\n"
                       "  sessions: {count: 20, turns: 3, think_time_ms: 1000, message: 50}\n";
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err), 0);
    sc->check = 1;
    sv_result_t *res;
    ck_assert_msg(sv_sim_run(sc, &res, &err) == 0, "%s", err.msg);
    const sv_session_log_t *log = &res->sessions;
    ck_assert_uint_eq(log->n, 20);
    ck_assert_uint_eq(res->pool.n, 60);
    for (size_t k = 0; k < log->n; k++) {
        const sv_session_rec_t *x = &log->s[k];
        ck_assert_int_eq(x->done, 3);
        if (k < 4) {
            ck_assert_double_eq(x->start, 0.0);
            continue;
        }
        int found = 0;
        for (size_t j = 0; j < k; j++)
            found |= log->s[j].end == x->start;
        ck_assert_msg(found, "session %zu starts at %.9g, when none ended", k, x->start);
        int live = 0;
        for (size_t j = 0; j < log->n; j++)
            live += log->s[j].start <= x->start && log->s[j].end > x->start;
        ck_assert_int_le(live, 4);
    }
    check_sessions(res);
    tu_done(sc, res);
}
END_TEST

/* Bad input: each a clear error naming the key. */
START_TEST(test_bad_input)
{
    struct {
        const char *wl, *want;
    } cases[] = {
        {"{rate: 1, input: 8, output: 8, duration_s: 5, sessions: {count: 2, turns: 2}}",
         "workload.duration_s cannot be combined with workload.sessions"},
        {"{rate: 1, input: 8, output: 8, sessions: {count: 2, turns: 2, shape: fanout, "
         "history: true}}",
         "none can carry another's answer"},
        {"{rate: 1, input: 8, output: 8, sessions: {count: 2}}",
         "workload.sessions: missing required key 'turns'"},
        {"{rate: 1, input: 8, output: 8, sessions: {count: 2, turns: 2, shape: tree}}",
         "workload.sessions.shape: expected chain or fanout, got 'tree'"},
        {"{rate: 1, input: 8, output: 8, sessions: {count: 2, turns: 2, shape: fanout, "
         "think_time_ms: 5}}",
         "think times are for shape: chain"},
        {"{rate: 1, input: 8, output: 8, sessions: {count: 2, turns: 200000}}",
         "workload.sessions.turns: at most 100000 calls per session"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\nworkload: %s\n", cases[i].wl);
        sv_scenario_t *sc = NULL;
        sv_error_t err;
        ck_assert_int_ne(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err), 0);
        ck_assert_msg(strstr(err.msg, cases[i].want), "case %zu: %s", i, err.msg);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sessions");
    TCase *tc = tcase_create("sessions");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_five_turns_hit_history);
    tcase_add_test(tc, test_fanout_fails_at_send);
    tcase_add_test(tc, test_cache_too_small);
    tcase_add_test(tc, test_disagg_chat_sends_new_tokens);
    tcase_add_test(tc, test_failure_ends_session);
    tcase_add_test(tc, test_chain_latency_is_sum);
    tcase_add_test(tc, test_fanout_join);
    tcase_add_test(tc, test_session_p95);
    tcase_add_test(tc, test_tail_at_scale);
    tcase_add_test(tc, test_request_bound);
    tcase_add_test(tc, test_closed_loop_of_sessions);
    tcase_add_test(tc, test_bad_input);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
