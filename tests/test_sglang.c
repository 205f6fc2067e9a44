/*
 * SGLang's admission and retraction (the `sglang` scheduler), each pinned against the
 * SGLang source it follows (sgl-project/sglang 0.5, python/sglang/srt/managers/:
 * schedule_policy.py PrefillAdder, scheduler.py get_new_batch_prefill and
 * update_running_batch, schedule_batch.py retract_decode; the constants of
 * python/sglang/srt/environ.py). A one-replica rig (Llama-3.1-8B on an H100, 16-token
 * blocks, the overlap loop off, no API-server path) drives the replica step by step, so
 * every decision below is counted by hand.
 */
#include <math.h>

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

/* Builds and ends one step at t (there must be work); *si: the step as built. */
static double one_step(rig_t *g, double t, sv_step_info_t *si)
{
    double d = sv_replica_start_step(g->r, t);
    ck_assert(d > 0);
    sv_replica_step_info(g->r, si);
    ck_assert_int_eq(sv_replica_end_step(g->r, t + d), 0);
    char msg[SV_ERRMSG_MAX];
    ck_assert_msg(sv_replica_check(g->r, msg, sizeof msg) == 0, "%s", msg);
    return t + d;
}

/*
 * One admission decision, by the new-token ratio and with ignore_eos. 16 blocks (256
 * tokens). A (32 + 200 tokens) comes alone and is prefilled in step 1 (it holds 2 blocks
 * and has made 1 token). B (32 + 40) and C (10 + 8) come; building step 2 the KV free is
 * 14 x 16 = 224 tokens and A reserves 0.7 (the initial ratio: no decode step yet) x its
 * 199 tokens left = 139.3 (rem_total_tokens = 84.7).
 *   By the ratio (add_one_req): B needs 32 + 40 = 72 < 84.7 and is admitted, reserving
 *   72 (rem_total 12.7); C needs 10 + 8 = 18, not < 12.7: refused, the batch is full.
 *   Step 2 prefills B alone; C is admitted only once a request has left the batch (B,
 *   after its 40 tokens), never while B runs.
 *   With ignore_eos (add_one_req_ignore_eos, no radix cache): B's 32 tokens fit both
 *   figures, and played forward (B 40 left holding 32, A 199 left holding 33; 224 - 32 =
 *   192 free) 192 - 2 x 40 = 112 > 2 and 192 + 32 - 199 = 25 > 1: admitted. C's 10 tokens
 *   fit 12.7; played forward (C 8 left holding 10 first; 182 free) 182 - 3 x 8 = 158 > 3,
 *   182 + 10 - 2 x 40 = 112 > 2, 182 + 42 - 199 = 25 > 1: admitted too. Step 2 prefills
 *   B and C, 42 tokens; vLLM's block count would have taken both by either rule.
 */
START_TEST(test_admission_by_ratio_and_ignore_eos)
{
    const int input[3] = {32, 32, 10}, output[3] = {200, 40, 8};
    for (int eos = 0; eos < 2; eos++) {
        rigcfg_t c = {.kv_blocks = 16, .seqs = 8, .budget = 8192, .sglang = 1, .ignore_eos = eos};
        rig_t g;
        tu_rig_new(&g, cat, &c, 3, input, output, NULL, NULL);
        ck_assert_int_eq(sv_replica_submit(g.r, 0, 0.0), SV_FAIL_NONE);
        sv_step_info_t si;
        double t = one_step(&g, 0.0, &si);
        ck_assert_int_eq(si.prefill_tokens, 32);
        ck_assert_int_eq(sv_replica_free_blocks(g.r), 14);
        for (int i = 1; i < 3; i++)
            ck_assert_int_eq(sv_replica_submit(g.r, i, t), SV_FAIL_NONE);
        t = one_step(&g, t, &si);
        ck_assert_double_eq_tol(si.new_token_ratio, 0.7, 1e-12);
        ck_assert_int_eq(si.prefill_seqs, eos ? 2 : 1);
        ck_assert_int_eq(si.prefill_tokens, eos ? 42 : 32);
        ck_assert_int_eq(si.decode_seqs, 0); /* a prefill batch runs alone */
        ck_assert_int_eq(si.waiting, eos ? 0 : 1);
        tu_rig_steps(&g, t, 1 << 20);
        for (int i = 0; i < 3; i++)
            ck_assert(g.pool.r[i].state == SV_RQ_DONE);
        if (!eos) ck_assert(g.pool.r[2].scheduled >= g.pool.r[1].end);
        ck_assert_int_eq(g.pool.r[0].preemptions + g.pool.r[1].preemptions, 0);
        tu_rig_free(&g);
    }
}
END_TEST

/*
 * A retraction and the ratio it sets. 150 blocks (2,400 tokens). A (16 + 2000) runs alone:
 * step 1 prefills it, steps 2-701 decode it (700 steps: the ratio decays by
 * (0.7 - 0.098) / 600 a step to its floor 0.7 x 0.14 = 0.098). B (64 + 700) and C
 * (16 + 700) come: A holds ceil(716 / 16) = 45 blocks, so 105 x 16 = 1680 tokens are free
 * and A reserves 0.098 x 1299 = 127.3; B needs 764 < 1552.7, C 716 < 788.7: step 702
 * prefills both. From step 703 all three decode; at their j-th decode step A, B and C hold
 * 716 + j, 64 + j and 16 + j tokens: 149 blocks at j = 528, 151 needed at j = 529, one
 * more than the one free. Building step 702 + 529 = 1231, check_decode_mem fails and
 * retract_decode takes the request with the fewest output tokens, among those the longest
 * prompt: B (B and C have each made 529; vLLM would have taken C, the last admitted). The
 * ratio becomes (made + 20 a request) / outputs over A and C: (1229 + 20 + 529 + 20) /
 * (2000 + 700) = 1798 / 2700. B waits at the back of the queue and is prefilled again
 * (its prompt and the 529 tokens it made) later; every request ends.
 */
START_TEST(test_retraction_sets_the_ratio)
{
    const int input[3] = {16, 64, 16}, output[3] = {2000, 700, 700};
    rigcfg_t c = {.kv_blocks = 150, .seqs = 8, .budget = 8192, .sglang = 1};
    rig_t g;
    tu_rig_new(&g, cat, &c, 3, input, output, NULL, NULL);
    ck_assert_int_eq(sv_replica_submit(g.r, 0, 0.0), SV_FAIL_NONE);
    sv_step_info_t si;
    double t = 0.0;
    for (int k = 1; k <= 701; k++)
        t = one_step(&g, t, &si);
    ck_assert_double_eq_tol(si.new_token_ratio, 0.098, 1e-12);
    ck_assert_int_eq(sv_replica_free_blocks(g.r), 105);
    for (int i = 1; i < 3; i++)
        ck_assert_int_eq(sv_replica_submit(g.r, i, t), SV_FAIL_NONE);
    t = one_step(&g, t, &si); /* step 702 */
    ck_assert_int_eq(si.prefill_seqs, 2);
    ck_assert_int_eq(si.prefill_tokens, 80);
    for (int k = 703; k < 1231; k++) {
        t = one_step(&g, t, &si);
        ck_assert(!si.preempted);
    }
    t = one_step(&g, t, &si); /* step 1231 */
    ck_assert(si.preempted);
    ck_assert_int_eq(si.decode_seqs, 2);
    ck_assert_double_eq_tol(si.new_token_ratio, 1798.0 / 2700.0, 1e-12);
    ck_assert_int_eq(g.pool.r[0].preemptions, 0);
    ck_assert_int_eq(g.pool.r[1].preemptions, 1);
    ck_assert_int_eq(g.pool.r[2].preemptions, 0);
    ck_assert(g.pool.r[1].state == SV_RQ_WAITING);
    tu_rig_steps(&g, t, 1 << 20);
    for (int i = 0; i < 3; i++)
        ck_assert(g.pool.r[i].state == SV_RQ_DONE);
    tu_rig_free(&g);
}
END_TEST

/*
 * An idle engine admits again after a refusal made under the overlap loop. 16 blocks (256
 * tokens). A (32 + 200) and B (64 + 10) come at once: A is admitted (32 + 200 = 232 < 256),
 * B is refused (rem_total 256 - 232 = 24 < 74) and the batch is full. A's last token ends
 * its step; building the next one under the overlap loop, A's 15 blocks are still held
 * (its results are processed after the next step is launched), so B (5 blocks) does not
 * fit and the batch is marked full again, with nothing running. SGLang then runs an empty
 * batch, whose batch_is_full is False (a new ScheduleBatch), and admits B once A's blocks
 * are freed: B is prefilled and both end. A batch left marked full would never admit B.
 */
START_TEST(test_empty_batch_admits_after_overlap_refusal)
{
    const int input[2] = {32, 64}, output[2] = {200, 10};
    rigcfg_t c = {.kv_blocks = 16, .seqs = 8, .budget = 8192, .sglang = 1, .overlap = 1};
    rig_t g;
    tu_rig_new(&g, cat, &c, 2, input, output, NULL, NULL);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(sv_replica_submit(g.r, i, 0.0), SV_FAIL_NONE);
    tu_rig_steps(&g, 0.0, 1 << 20);
    for (int i = 0; i < 2; i++)
        ck_assert(g.pool.r[i].state == SV_RQ_DONE);
    ck_assert(g.pool.r[1].scheduled >= g.pool.r[0].end);
    ck_assert_int_eq(g.pool.r[0].preemptions + g.pool.r[1].preemptions, 0);
    tu_rig_free(&g);
}
END_TEST

/*
 * SGLang's decode-side headroom (disaggregation/decode.py, DecodePreallocQueue.
 * pop_preallocated: a request's prompt plus num_reserved_decode_tokens, 512, must fit in
 * the free KV less 512 for every request already held). Three 1,000-token prompts are
 * prefilled on a handing-off replica and offered to a decode replica of 250 blocks; each
 * transfer takes its KV plus its next token's block: ceil(1,000 / 16) = 63 blocks.
 *   sglang: the first needs 63 + 512/16 = 95 of 250 (155 left over), the second, one
 *   held, 63 + 2 x 32 = 127 of 187 (60 left over), the third 63 + 96 = 159 of 124: refused.
 *   vllm (no headroom; 249 free, one being vLLM V1's null block): 3 x 63 = 189 fit, so
 *   all three are taken.
 */
START_TEST(test_decode_headroom)
{
    for (int sglang = 0; sglang <= 1; sglang++) {
        rig_t g;
        const int in[3] = {1000, 1000, 1000}, out[3] = {50, 50, 50};
        tu_rig_new(&g, cat, &(rigcfg_t){.kv_blocks = 250, .seqs = 64, .sglang = sglang}, 3, in,
                   out, NULL, NULL);
        sv_engine_cfg_t e = g.sc->pools[0].engine;
        e.handoff = 1;
        e.max_model_len = 4096;
        e.max_num_batched_tokens = 4096;
        e.max_num_seqs = 64;
        sv_replica_t *pre = NULL;
        sv_error_t err;
        ck_assert_int_eq(sv_replica_new(1, &g.perf, 1000, &e, &g.pool, g.m, &pre, &err), 0);
        for (int i = 0; i < 3; i++)
            ck_assert_int_eq(sv_replica_submit(pre, i, 0.0), SV_FAIL_NONE);
        double d = sv_replica_start_step(pre, 0.0);
        ck_assert(d > 0);
        ck_assert_int_eq(sv_replica_end_step(pre, d), 0);
        long n = 0;
        sv_replica_handoffs(pre, &n);
        ck_assert_int_eq(n, 3);
        int took = 0;
        for (int i = 0; i < 3; i++) {
            ck_assert_int_eq(sv_replica_handoff_tokens(pre, i), 1000);
            took += sv_replica_reserve(g.r, i);
        }
        ck_assert_int_eq(took, sglang ? 2 : 3);
        ck_assert_int_eq(sv_replica_free_blocks(g.r), sglang ? 250 - 2 * 63 : 249 - 3 * 63);
        for (int i = 0; i < took; i++)
            sv_replica_unreserve(g.r, i);
        for (int i = 0; i < 3; i++)
            sv_replica_release(pre, i);
        sv_replica_free(pre);
        tu_rig_free(&g);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sglang");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_admission_by_ratio_and_ignore_eos);
    tcase_add_test(tc, test_retraction_sets_the_ratio);
    tcase_add_test(tc, test_empty_batch_admits_after_overlap_refusal);
    tcase_add_test(tc, test_decode_headroom);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
