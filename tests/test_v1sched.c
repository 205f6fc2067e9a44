/*
 * vLLM V1's scheduling semantics, each pinned against the vLLM source it follows (the
 * file and function are named at each test): when a scheduled block becomes hittable,
 * how a preempted request's lookup is counted, which blocks a prompt that shares nothing
 * leaves in the cache, the priority policy's victim among ties, and what happens when the
 * request being scheduled is its own victim. The version followed is the one named in
 * docs/prefix-caching.md.
 *
 * Whole runs check totals; a one-replica rig (a replica driven step by step, as the
 * simulator drives it) checks step-level choices.
 */
#include <string.h>

#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
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

/* ---- whole runs ------------------------------------------------------------------------ */

/*
 * 64 requests sent at once, each a 2048-token system prompt and 128 tokens of its own, on
 * one H100 (vLLM's default budget there: 8192 tokens a step). vLLM caches a block when it
 * is scheduled (vllm/v1/core/kv_cache_manager.py, KVCacheManager.allocate_slots ->
 * coordinator.cache_blocks), so the second request of the first step already hits the
 * first's 128 prefix blocks (vLLM's tests/v1/core/test_prefix_caching.py::test_prefill
 * expects a hit while the first request's blocks are still in use). Hand count: the first
 * prefills 2176 tokens, every other one its 128 own: 2176 + 63 x 128 = 10,240 prefill
 * tokens (48 requests in the first step: 2176 + 47 x 128 = 8192), hits 63 x 2048 =
 * 129,024 of 64 x 2176 = 139,264 looked up. Caching blocks only when the step ended
 * computed 16,384 tokens and hit 122,880.
 */
START_TEST(test_scheduled_blocks_hit_in_the_same_step)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload:\n  num_requests: 64\n  rate: inf\n  input: 128\n  output: 16\n"
                       "  shared_prefix: {tokens: 2048}\n";
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err), 0);
    ck_assert_int_eq(sc->pools[0].engine.max_num_batched_tokens, 8192);
    sc->check = 1; /* every block recounted after every step */
    sv_result_t *res;
    ck_assert_int_eq(sv_sim_run(sc, &res, &err), 0);
    ck_assert_double_eq(res->rstats[0].prefill_tokens, 10240.0);
    ck_assert_double_eq(res->prefix_hits, 129024.0);
    ck_assert_double_eq(res->prefix_queries, 139264.0);
    ck_assert_int_eq(res->rstats[0].prefill_chunks, 64);
    /* 48 prompts in the first step, 16 in the second: the first 48 share a first token
     * time, the last 16 another, later one. */
    double t0 = res->pool.r[0].first_token;
    for (int i = 0; i < 64; i++)
        ck_assert(i < 48 ? res->pool.r[i].first_token == t0 : res->pool.r[i].first_token > t0);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/*
 * A closed loop of 256 unique prompts (no identity) on a cache that holds fewer: requests
 * are preempted and re-admitted. vLLM records a re-admitted request's lookup apart
 * (vllm/v1/metrics/stats.py, PrefixCacheStats.record(preempted=True) -> preempted_queries,
 * preempted_hits) and its hit rate and Prometheus counters count new requests only: here
 * every request is looked up once as new (300 x 128 tokens queried) and none hits, while
 * the re-admitted ones find some of their own blocks, counted apart.
 */
START_TEST(test_preempted_lookups_counted_apart)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm, gpu_memory_utilization: 0.3}\n"
                       "workload:\n  num_requests: 300\n  rate: inf\n  max_concurrency: 256\n"
                       "  input: 128\n  output: 1000\n";
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    ck_assert(res->preemptions > 0);
    ck_assert_double_eq(res->prefix_queries, 300.0 * 128.0);
    ck_assert_double_eq(res->prefix_hits, 0.0);
    const sv_replica_stats_t *st = &res->rstats[0];
    ck_assert(st->prefix_preempted_queries > 0);
    ck_assert(st->prefix_preempted_hits > 0);
    ck_assert(st->prefix_preempted_hits <= st->prefix_preempted_queries);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/* ---- one replica, step by step --------------------------------------------------------- */

/* One step at t (there must be work); returns its end. The blocks are recounted. */
static double rig_step(rig_t *g, double t)
{
    double d = sv_replica_start_step(g->r, t);
    ck_assert(d > 0);
    ck_assert_int_eq(sv_replica_end_step(g->r, t + d), 0);
    char msg[SV_ERRMSG_MAX];
    ck_assert_msg(sv_replica_check(g->r, msg, sizeof msg) == 0, "%s", msg);
    return t + d;
}

/*
 * Prompts that share nothing (no identity) leave their freed full blocks in the cache's
 * one LRU list, as vLLM does: it hashes every full block (vllm/v1/core/block_pool.py,
 * BlockPool.cache_full_blocks) and keeps freed ones in one free queue that allocation
 * takes from oldest first (BlockPool.get_new_blocks, _maybe_evict_cached_block). So a
 * preempted request's blocks, freed before a finished request's, are evicted first.
 * Nine blocks to give out (ten, one being vLLM V1's null block: BlockPool.null_block),
 * chunks of at most 64 tokens, priority policy; all prompts unique.
 *   step 1: P (priority 1, 64 tokens) prefills: 4 blocks.
 *   step 2: P decodes (its 5th block); A (priority 0, 128 tokens) takes a chunk of 64:
 *           4 blocks, none free.
 *   step 3: A's second chunk needs 4: the victim is P (the larger priority). P has 65
 *           tokens: 4 full blocks, cached, freed tail first, and a partial one, freed.
 *           A takes the free one and evicts P's 4th, 3rd and 2nd: P's 1st stays. A ends
 *           (one output token): its 8 blocks go idle behind P's 1st.
 *   step 4: C (priority 0, 128 tokens) comes: its 4 blocks evict P's 1st and 3 of A's;
 *           P comes back behind it and finds nothing of its own: 0 hits.
 * Freeing A's blocks to the free pool (they had no identity) let C take them, and P found
 * its first block: 16 tokens.
 */
START_TEST(test_freed_blocks_evicted_oldest_first)
{
    const int input[3] = {64, 128, 128}, output[3] = {30, 1, 1}, prio[3] = {1, 0, 0};
    const double start[3] = {0, 0.001, 0.002};
    rigcfg_t c = {.kv_blocks = 10, .seqs = 8, .budget = 8192, .threshold = 64, .priority = 1,
                  .caching = 1};
    rig_t g;
    tu_rig_new(&g, cat, &c, 3, input, output, prio, start);
    enum { P, A, C };
    ck_assert_int_eq(sv_replica_total_blocks(g.r), 9);
    ck_assert_int_eq(sv_replica_free_blocks(g.r), 9);
    ck_assert_int_eq(sv_replica_submit(g.r, P, 0.0), SV_FAIL_NONE);
    double t = rig_step(&g, 0.0);
    ck_assert_int_eq(sv_replica_submit(g.r, A, t), SV_FAIL_NONE);
    t = rig_step(&g, t);
    ck_assert_int_eq(sv_replica_free_blocks(g.r), 0);
    t = rig_step(&g, t);
    ck_assert_int_eq(g.pool.r[P].preemptions, 1);
    ck_assert(g.pool.r[A].state == SV_RQ_DONE);
    ck_assert_int_eq(sv_replica_cached_prefix(g.r, P), 16); /* its 1st block */
    ck_assert_int_eq(sv_replica_submit(g.r, C, t), SV_FAIL_NONE);
    double d = sv_replica_start_step(g.r, t);
    ck_assert(d > 0);
    ck_assert(g.pool.r[C].state == SV_RQ_RUNNING && g.pool.r[P].state == SV_RQ_RUNNING);
    ck_assert_int_eq(g.pool.r[P].cached, 0);
    const sv_replica_stats_t *st = sv_replica_stats(g.r);
    ck_assert_double_eq(st->prefix_preempted_queries, 66.0); /* 64 + its 2 tokens */
    ck_assert_double_eq(st->prefix_preempted_hits, 0.0);
    ck_assert_double_eq(st->prefix_queries, 64.0 + 128.0 + 128.0);
    ck_assert_int_eq(sv_replica_end_step(g.r, t + d), 0);
    tu_rig_steps(&g, t + d, 1 << 30);
    for (int i = 0; i < 3; i++)
        ck_assert(g.pool.r[i].state == SV_RQ_DONE);
    tu_rig_free(&g);
}
END_TEST

/*
 * The priority policy's victim among equal (priority, arrival): vLLM takes
 * max(self.running, key=(priority, arrival_time)) (vllm/v1/core/sched/scheduler.py,
 * Scheduler.schedule); requests sent together reach it one after the other, each with its
 * own arrival_time, so the latest to arrive is the victim. Seven blocks to give out (and
 * vLLM's null block), 32-token prompts (2 blocks), all priority 0 and sent at 0: request 0
 * prefills alone; then 1 and 2 are submitted and prefilled while 0 takes its 3rd block (7
 * used); in the next step 1 and 2
 * each need a 3rd block: one is preempted, request 2 (the latest id), not request 0 (the
 * first in running order, which the tie went to before).
 */
START_TEST(test_priority_victim_among_ties_is_latest)
{
    const int input[3] = {32, 32, 32}, output[3] = {8, 8, 8}, prio[3] = {0, 0, 0};
    const double start[3] = {0, 0, 0};
    rigcfg_t c = {.kv_blocks = 8, .seqs = 8, .budget = 8192, .priority = 1};
    rig_t g;
    tu_rig_new(&g, cat, &c, 3, input, output, prio, start);
    ck_assert_int_eq(sv_replica_submit(g.r, 0, 0.0), SV_FAIL_NONE);
    double t = rig_step(&g, 0.0);
    ck_assert_int_eq(sv_replica_submit(g.r, 1, t), SV_FAIL_NONE);
    ck_assert_int_eq(sv_replica_submit(g.r, 2, t), SV_FAIL_NONE);
    t = rig_step(&g, t);
    ck_assert_int_eq(sv_replica_free_blocks(g.r), 0);
    t = rig_step(&g, t);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(g.pool.r[i].preemptions == (i == 2), "request %d preempted %d times", i,
                      g.pool.r[i].preemptions);
    tu_rig_steps(&g, t, 1 << 30);
    for (int i = 0; i < 3; i++)
        ck_assert(g.pool.r[i].state == SV_RQ_DONE);
    tu_rig_free(&g);
}
END_TEST

/*
 * The request being scheduled is its own victim: vLLM stops scheduling the running list
 * (vllm/v1/core/sched/scheduler.py, Scheduler.schedule: `if preempted_req == request:
 * break`, then `if new_blocks is None: break`). Five blocks to give out (and vLLM's null
 * block), chunks of at most 16 tokens
 * (long_prefill_token_threshold), priority policy. Request 0 (priority 1, 64 tokens) comes
 * alone: step 1 prefills 16 (1 block). Request 1 (priority 0, 64 tokens) comes: step 2
 * gives each 16 (3 blocks), step 3 16 more each (5 blocks, none free). In step 4 request
 * 0's chunk needs a block: the victim, the largest (priority, arrival), is request 0
 * itself, and request 1 gets nothing in that pass, which schedules nothing; vLLM's next
 * schedule() call (the engine loop runs at once, vllm/v1/engine/core.py) gives request 1
 * its chunk (one of request 0's two freed blocks) and, nobody being preempted in it,
 * re-admits request 0 with the other: two chunks of 16. Carrying on past the
 * self-preemption gave request 1 its chunk in the preempting pass, which admits nobody:
 * one chunk, and request 0 a step later.
 */
START_TEST(test_own_victim_stops_the_running_list)
{
    const int input[2] = {64, 64}, output[2] = {4, 4}, prio[2] = {1, 0};
    const double start[2] = {0, 0.001};
    rigcfg_t c = {.kv_blocks = 6, .seqs = 8, .budget = 8192, .threshold = 16, .priority = 1};
    rig_t g;
    tu_rig_new(&g, cat, &c, 2, input, output, prio, start);
    ck_assert_int_eq(sv_replica_submit(g.r, 0, 0.0), SV_FAIL_NONE);
    double t = rig_step(&g, 0.0);
    ck_assert_int_eq(sv_replica_submit(g.r, 1, t), SV_FAIL_NONE);
    t = rig_step(&g, t);
    t = rig_step(&g, t);
    ck_assert_int_eq(sv_replica_free_blocks(g.r), 0);
    double d = sv_replica_start_step(g.r, t);
    ck_assert(d > 0);
    sv_step_info_t si;
    sv_replica_step_info(g.r, &si);
    ck_assert_int_eq(g.pool.r[0].preemptions, 1);
    ck_assert_int_eq(g.pool.r[1].preemptions, 0);
    ck_assert_int_eq(si.prefill_seqs, 2);
    ck_assert_int_eq(si.prefill_tokens, 32);
    ck_assert(g.pool.r[0].state == SV_RQ_RUNNING); /* re-admitted */
    ck_assert_int_eq(sv_replica_end_step(g.r, t + d), 0);
    tu_rig_steps(&g, t + d, 1 << 30);
    for (int i = 0; i < 2; i++)
        ck_assert(g.pool.r[i].state == SV_RQ_DONE);
    tu_rig_free(&g);
}
END_TEST

/*
 * Requests that finish in one step are freed in the order they were scheduled: vLLM's
 * Scheduler.update_from_output (vllm/v1/core/sched/scheduler.py) walks the step's
 * num_scheduled_tokens, filled in running order, and frees each finished request as it
 * comes (_free_request -> KVCacheManager.free), which also sets the order of their blocks
 * in the free queue. Three 16-token prompts of 4 output tokens, sent together: prefilled
 * in one step, they decode together and end at the same step. The finish heap gave them
 * out as 0, 2, 1 (equal keys: the last element moves to the root); running order is
 * 0, 1, 2.
 */
START_TEST(test_finished_freed_in_scheduled_order)
{
    const int input[3] = {16, 16, 16}, output[3] = {4, 4, 4};
    rigcfg_t c = {.kv_blocks = 100, .seqs = 8, .budget = 8192, .caching = 1};
    rig_t g;
    tu_rig_new(&g, cat, &c, 3, input, output, NULL, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(sv_replica_submit(g.r, i, 0.0), SV_FAIL_NONE);
    double t = 0;
    long n = 0;
    for (int k = 0; k < 4; k++) { /* the prefill, then 3 decode steps */
        t = rig_step(&g, t);
        sv_replica_done(g.r, &n);
        ck_assert_int_eq(n, k < 3 ? 0 : 3);
    }
    const int32_t *done = sv_replica_done(g.r, &n);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(done[i], i);
    tu_rig_free(&g);
}
END_TEST

/*
 * A block computed twice stays two blocks: vLLM's BlockPool.cache_full_blocks files a
 * second block under a hash it holds already (vllm/v1/core/block_pool.py,
 * BlockHashToBlockMap keeps both) and the request goes on using its own; nothing is
 * de-duplicated. Two 80-token prompts (a 64-token system prompt, then 16 of their own) sent
 * together, chunks of at most 32 tokens (long_prefill_token_threshold): step 1 gives A
 * prefix blocks 0-1 and B, which finds them, its own copies of prefix blocks 2-3; step 2
 * gives A blocks 2-3 (copies of B's) and B its block 4; step 3 gives A its block 4 and B,
 * decoding its 81st token, a 6th block: 2 shared + A's 3 + B's 4 = 9 blocks in use, the
 * peak. Freeing A's copies of blocks 2-3 in favour of B's gave 7.
 */
START_TEST(test_duplicate_blocks_kept)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "engine: {long_prefill_token_threshold: 32}\n"
                       "workload:\n  num_requests: 2\n  rate: inf\n  input: 16\n  output: 2\n"
                       "  shared_prefix: {tokens: 64}\n";
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err), 0);
    sc->check = 1;
    sv_result_t *res;
    ck_assert_int_eq(sv_sim_run(sc, &res, &err), 0);
    ck_assert_double_eq(res->prefix_hits, 32.0); /* B's lookup in step 1 */
    ck_assert_double_eq(res->rstats[0].prefill_tokens, 80.0 + 48.0);
    ck_assert_int_eq(res->rstats[0].peak_blocks_used, 9);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("v1sched");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_scheduled_blocks_hit_in_the_same_step);
    tcase_add_test(tc, test_preempted_lookups_counted_apart);
    tcase_add_test(tc, test_freed_blocks_evicted_oldest_first);
    tcase_add_test(tc, test_priority_victim_among_ties_is_latest);
    tcase_add_test(tc, test_own_victim_stops_the_running_list);
    tcase_add_test(tc, test_finished_freed_in_scheduled_order);
    tcase_add_test(tc, test_duplicate_blocks_kept);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
