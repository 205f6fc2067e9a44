/*
 * Unit tests of the engine's containers: the event queue's timers (a restarted or stopped
 * timer's old firing comes out cancelled, at its own time and place), the heap template
 * shared by every priority queue (order, removal from the middle, tracked positions), the
 * event queue's own pop (order by time and insertion, ties included), and
 * the KV block ledger (allocation evicting idle cached blocks least recently used first,
 * a second copy of cached content kept as its own entry, reservations and pins, and the one
 * invariant check catching a block that is not accounted for), and runs driven from
 * outside (advanced in steps they equal one run; injected requests arrive at the time the
 * run was advanced to and are served as any other), and the lockstep decode's buckets
 * (each sequence's phase, kept from its join to its leave, recounted by --check).
 */
#include "servesim/engine/engine.h"
#include "base/heap_int.h"
#include "engine/kvledger_int.h"
#include "engine/reqeng_int.h"
#include "servesim/engine/replica.h"
#include <math.h>

#include "testsim.h"

/* Pop the next event and check what it is. */
static void expect_pop(sv_evq_t *q, double t, int32_t type, int32_t id, int cancelled)
{
    sv_event_t ev;
    ck_assert_int_eq(sv_evq_pop(q, &ev), 1);
    ck_assert_double_eq(ev.time, t);
    ck_assert_int_eq(ev.type, type);
    ck_assert_int_eq(ev.id, id);
    ck_assert_int_eq(ev.cancelled, cancelled);
}

/* An event kept outside the queue takes its sequence from it (sv_evq_take_seq) and sorts
 * with the queue's events by (time, sequence): sv_evq_peek gives both. */
START_TEST(test_peek_and_taken_seq)
{
    sv_evq_t q;
    sv_evq_init(&q, 0);
    double t = -1.0;
    uint64_t seq = 99;
    ck_assert_int_eq(sv_evq_peek(&q, &t, &seq), 0);
    ck_assert_int_eq(sv_evq_push(&q, 2.0, 1, 10), 0);   /* seq 0 */
    ck_assert_uint_eq(sv_evq_take_seq(&q), 1);          /* kept outside, at 2.0 too */
    ck_assert_int_eq(sv_evq_push(&q, 2.0, 1, 11), 0);   /* seq 2 */
    ck_assert_int_eq(sv_evq_push(&q, 1.5, 1, 12), 0);   /* seq 3, earliest */
    ck_assert_int_eq(sv_evq_peek(&q, &t, &seq), 1);
    ck_assert(t == 1.5 && seq == 3);
    expect_pop(&q, 1.5, 1, 12, 0);
    ck_assert_int_eq(sv_evq_peek(&q, &t, &seq), 1);
    ck_assert(t == 2.0 && seq == 0); /* before the outside one (1), which is before seq 2 */
    expect_pop(&q, 2.0, 1, 10, 0);
    ck_assert_int_eq(sv_evq_peek(&q, &t, &seq), 1);
    ck_assert(t == 2.0 && seq == 2);
    ck_assert_uint_eq(sv_evq_take_seq(&q), 4);
    sv_evq_free(&q);
}
END_TEST

START_TEST(test_timers)
{
    sv_evq_t q;
    sv_evq_init(&q, 0);
    sv_timer_t a, b;
    ck_assert_int_eq(sv_evq_timer_new(&q, 7, 100, &a), 0);
    ck_assert_int_eq(sv_evq_timer_new(&q, 8, 200, &b), 0);
    ck_assert_int_eq(sv_evq_timer_armed(&q, a, NULL), 0);
    ck_assert_int_eq(sv_evq_timer_start(&q, a, 5.0), 0);
    ck_assert_int_eq(sv_evq_push(&q, 3.0, 1, 1), 0);
    ck_assert_int_eq(sv_evq_timer_start(&q, a, 2.0), 0); /* moved earlier: 5.0 cancelled */
    ck_assert_int_eq(sv_evq_timer_start(&q, b, 3.0), 0); /* after the plain event at 3.0 */
    double due = 0;
    ck_assert_int_eq(sv_evq_timer_armed(&q, a, &due), 1);
    ck_assert_double_eq(due, 2.0);
    expect_pop(&q, 2.0, 7, 100, 0);
    ck_assert_int_eq(sv_evq_timer_armed(&q, a, NULL), 0); /* fired: disarmed */
    sv_evq_timer_stop(&q, b);
    ck_assert_int_eq(sv_evq_timer_start(&q, a, 4.0), 0);
    expect_pop(&q, 3.0, 1, 1, 0);
    expect_pop(&q, 3.0, 8, 200, 1); /* stopped */
    expect_pop(&q, 4.0, 7, 100, 0);
    expect_pop(&q, 5.0, 7, 100, 1); /* the firing moved to 2.0 */
    sv_event_t ev;
    ck_assert_int_eq(sv_evq_pop(&q, &ev), 0);
    /* Restarting at the same time is still a new firing: the old one is cancelled. */
    ck_assert_int_eq(sv_evq_timer_start(&q, b, 1.0), 0);
    ck_assert_int_eq(sv_evq_timer_start(&q, b, 1.0), 0);
    expect_pop(&q, 1.0, 8, 200, 1);
    expect_pop(&q, 1.0, 8, 200, 0);
    sv_evq_free(&q);
}
END_TEST

typedef struct item {
    int key, id;
} item_t;
typedef SV_HEAP_OF(item_t) iheap_t;
static int item_less(const item_t *a, const item_t *b)
{
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}
#define ITEM_MOVED(ctx, e, i) (((long *)(ctx))[(e)->id] = (long)(i))
SV_HEAP_DEFINE(iheap, iheap_t, item_t, 3, item_less, ITEM_MOVED)

START_TEST(test_heap)
{
    enum { N = 1000 };
    long pos[N];
    iheap_t h = {0};
    srand(3);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(iheap_push(&h, pos, (item_t){rand() % 50, i}), 0);
    for (size_t i = 0; i < h.n; i++) /* every element knows where it is */
        ck_assert_int_eq(pos[h.v[i].id], (long)i);
    for (int id = 0; id < N; id += 2) /* remove the even ids from wherever they are */
        iheap_remove(&h, pos, (size_t)pos[id]);
    ck_assert_uint_eq(h.n, N / 2);
    item_t prev = {-1, -1};
    while (h.n) {
        item_t x = h.v[0];
        ck_assert(x.id % 2 == 1);
        ck_assert(item_less(&prev, &x));
        prev = x;
        iheap_remove(&h, pos, 0);
    }
    free(h.v);
}
END_TEST

/* A pop leaves its hole at a leaf for the next push (sv_evq_t.hole): the top read between
 * them is the true least, and a timer's start or another pop fills the hole first. */
START_TEST(test_evq_hole)
{
    sv_evq_t q;
    sv_evq_init(&q, 0);
    for (int i = 1; i <= 7; i++) /* 7 entries: the root's first child has two */
        ck_assert_int_eq(sv_evq_push(&q, (double)i, 1, i), 0);
    expect_pop(&q, 1.0, 1, 1, 0); /* its hole ends at index 5, not the last */
    ck_assert_uint_eq(q.hole, 5);
    double t;
    uint64_t seq;
    ck_assert_int_eq(sv_evq_peek(&q, &t, &seq), 1);
    ck_assert_double_eq(t, 2.0);
    ck_assert_uint_eq(seq, 1);
    sv_timer_t a;
    ck_assert_int_eq(sv_evq_timer_new(&q, 9, 90, &a), 0);
    ck_assert_int_eq(sv_evq_timer_start(&q, a, 0.5), 0); /* fills the hole, then pushes */
    ck_assert_uint_eq(q.hole, 0);
    expect_pop(&q, 0.5, 9, 90, 0);
    expect_pop(&q, 2.0, 1, 2, 0);
    ck_assert_uint_ne(q.hole, 0);
    ck_assert_int_eq(sv_evq_push(&q, 2.5, 1, 25), 0); /* into the hole the pop left */
    ck_assert_uint_eq(q.hole, 0);
    for (int i = 0; i < 6; i++) {
        static const double want[] = {2.5, 3, 4, 5, 6, 7};
        expect_pop(&q, want[i], 1, i == 0 ? 25 : (int32_t)want[i], 0); /* pop after pop */
    }
    sv_event_t ev;
    ck_assert_int_eq(sv_evq_pop(&q, &ev), 0);
    ck_assert_int_eq(sv_evq_peek(&q, &t, &seq), 0);
    sv_evq_free(&q);
}
END_TEST

/* The event queue pops by (time, insertion order) while pushes and pops interleave, at
 * sizes where a level's last group of children is partial and with many equal times (its
 * pop moves the hole down to a leaf and lifts the last entry from there): checked against
 * a plain list searched for its least (time, push number) entry. */
START_TEST(test_evq_order)
{
    enum { N = 4000 };
    static double lt[N];
    static int32_t lid[N];
    static uint8_t gone[N];
    sv_evq_t q;
    sv_evq_init(&q, 0);
    srand(11);
    int pushed = 0, popped = 0;
    double now = 0.0;
    while (popped < N) {
        /* keep 0 to 40 entries: pushes win while under a size drawn now and then */
        int held = pushed - popped, want = 1 + rand() % 40;
        if (pushed < N && (held == 0 || held < want)) {
            double t = now + (double)(rand() % 8) * 0.25; /* ties on a coarse grid */
            lt[pushed] = t;
            lid[pushed] = pushed;
            ck_assert_int_eq(sv_evq_push(&q, t, 3, pushed), 0);
            pushed++;
            continue;
        }
        int best = -1;
        for (int k = 0; k < pushed; k++)
            if (!gone[k] && (best < 0 || lt[k] < lt[best])) best = k; /* first: least seq */
        sv_event_t ev;
        ck_assert_int_eq(sv_evq_pop(&q, &ev), 1);
        ck_assert_int_eq(ev.id, lid[best]);
        ck_assert_double_eq(ev.time, lt[best]);
        ck_assert_uint_eq(ev.seq, (uint64_t)best);
        gone[best] = 1;
        now = ev.time;
        popped++;
    }
    sv_event_t ev;
    ck_assert_int_eq(sv_evq_pop(&q, &ev), 0);
    sv_evq_free(&q);
}
END_TEST

START_TEST(test_ledger)
{
    sv__kvledger_t l;
    sv__kv_init(&l);
    ck_assert_int_eq(sv__kv_add_pool(&l, 10, 16, 1), SV__KV_FULL);
    sv__kvpool_t *p = &l.pool[SV__KV_FULL];
    char msg[512];
    ck_assert_int_eq(sv__kv_blocks(p, 33), 3);
    /* Request A takes 3 blocks and caches its 2 full ones (hashes 1, 2): it holds 1. */
    sv__kv_take(p, 3);
    uint64_t ha[] = {1, 2}, hb[] = {1, 9};
    int32_t sa[2], sb[2];
    ck_assert_int_eq(sv__kv_cache(p, ha, 0, 0, 2, sa), 0);
    ck_assert_int_eq(sv__kv_check(p, 1, msg, sizeof msg), 0);
    /* Request B computed blocks 1, 9 itself (2 blocks): both become entries of their own,
     * block 1 a second copy of A's, as vLLM's BlockPool.cache_full_blocks keeps both. */
    sv__kv_take(p, 2);
    ck_assert_int_eq(p->free, 5);
    ck_assert_int_eq(sv__kv_cache(p, hb, 0, 0, 2, sb), 0);
    ck_assert_int_eq(p->free, 5);
    ck_assert(sa[0] != sb[0]);
    ck_assert_int_eq(sv__kv_check(p, 1, msg, sizeof msg), 0);
    /* A ends: its own block is freed, its cached ones unreferenced (2 idle; B's 2 in use). */
    sv__kv_give(p, 1);
    sv__kv_uncache(p, sa, 2);
    ck_assert_int_eq(sv__kv_avail(p), 8);
    ck_assert_int_eq(sv__kv_used(p), 2);
    long slots[2], touched;
    ck_assert_int_eq(sv__kv_hits(p, ha, 0, 2, slots, &touched), 2);
    ck_assert_int_eq(slots[0], sa[0]); /* the first copy cached is found */
    ck_assert_int_eq(touched, 2);     /* A's two, both idle */
    ck_assert_int_eq(sv__kv_prefix(p, hb, 0, 2), 2);
    /* Taking 8 evicts the two idle cached blocks (A's 2, then A's 1) once the 6 free ones
     * are gone; B's copy of block 1 is still found. */
    sv__kv_take(p, 8);
    ck_assert_int_eq(p->free, 0);
    ck_assert_int_eq(sv__kv_prefix(p, ha, 0, 2), 1);
    ck_assert_int_eq(sv__kv_check(p, 8, msg, sizeof msg), 0);
    /* Reservations and pins count as held; a block nobody accounts for is caught. */
    sv__kv_give(p, 8);
    sv__kv_reserve(p, 3);
    sv__kv_pin(p, 0);
    ck_assert_int_eq(sv__kv_check(p, 0, msg, sizeof msg), 0);
    sv__kv_claim(p, 3);
    ck_assert_int_eq(sv__kv_check(p, 0, msg, sizeof msg), -1);
    ck_assert_msg(strstr(msg, "held 2 = running 0 + pinned 0 + reserved 0 + cached 2"), "%s", msg);
    ck_assert_int_eq(sv__kv_check(p, 3, msg, sizeof msg), 0);
    sv__kv_give(p, 3);
    sv__kv_uncache(p, sb, 2);
    ck_assert_int_eq(sv__kv_avail(p), 10);
    sv__kv_fini(&l);
}
END_TEST

static const char *chat = "seed: 5\n"
                          "model: llama-3.1-8b\n"
                          "hardware: {gpu: h100-sxm}\n"
                          "workload:\n"
                          "  num_requests: 300\n"
                          "  rate: 12\n"
                          "  input: {dist: lognormal, mean: 1024, std: 768, min: 16, max: 8192}\n"
                          "  output: {dist: lognormal, mean: 256, std: 192, min: 8, max: 2048}\n";

START_TEST(test_stepped_run)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc;
    sv_result_t *one = tu_run_yaml(cat, chat, NULL, 0, &sc), *res;
    sv_sim_t *s;
    sv_error_t err;
    ck_assert_int_eq(sv_sim_open(sc, NULL, 0, &s, &err), 0);
    for (double t = 0.37; t < 60; t += 0.91) {
        ck_assert_int_eq(sv_sim_advance(s, t), 0);
        ck_assert(sv_sim_now(s) <= t);
    }
    ck_assert_int_eq(sv_sim_close(s, &res, &err), 0);
    ck_assert_int_eq(res->events, one->events);
    ck_assert_uint_eq(res->pool.n, one->pool.n);
    ck_assert_int_eq(res->summary.completed, one->summary.completed);
    for (size_t i = 0; i < res->pool.n; i++) {
        ck_assert_double_eq(res->pool.r[i].first_token, one->pool.r[i].first_token);
        ck_assert_double_eq(res->pool.r[i].end, one->pool.r[i].end);
    }
    sv_result_free(res);
    tu_done(sc, one);
    sv_catalog_free(cat);
}
END_TEST

static const char *two = "seed: 3\n"
                         "model: llama-3.1-8b\n"
                         "hardware: {gpu: h100-sxm}\n"
                         "workload:\n"
                         "  num_requests: 2\n"
                         "  rate: 1\n"
                         "  input: 512\n"
                         "  output: 16\n";

START_TEST(test_injected_requests)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc, *sc1;
    const char *sets[] = {"workload.num_requests=1"};
    sv_result_t *single = tu_run_yaml(cat, two, sets, 1, &sc1), *res;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, two, NULL, 0, &sc, &err), 0);
    sv_sim_t *s;
    ck_assert_int_eq(sv_sim_open(sc, NULL, 1, &s, &err), 0);
    /* The clock moves to the time asked; a request injected then arrives then. */
    ck_assert_int_eq(sv_sim_advance(s, 0.25), 0);
    ck_assert_double_eq(sv_sim_now(s), 0.25);
    int32_t a, b, bad;
    ck_assert_int_eq(sv_sim_inject(s, 300, 8, &a), 0);
    ck_assert_int_eq(sv_sim_inject(s, 0, 8, &bad), SV_EINVAL);
    ck_assert_int_eq(bad, -1);
    ck_assert_int_eq(sv_sim_advance(s, 30.0), 0);
    ck_assert_double_eq(sv_sim_now(s), 30.0);
    ck_assert_int_eq(sv_sim_inject(s, 512, 16, &b), 0);
    ck_assert_int_eq(sv_sim_advance(s, 31.0), 0);
    ck_assert_int_eq(sv_sim_close(s, &res, &err), 0);
    ck_assert_uint_eq(res->pool.n, 4); /* the workload's two and the two injected */
    tu_check_accounting(res);
    const sv_req_t *ra = &res->pool.r[a], *rb = &res->pool.r[b], *r1 = &single->pool.r[0];
    ck_assert_double_eq(ra->arrival, 0.25);
    ck_assert_int_eq(ra->input, 300);
    ck_assert_int_eq(ra->output, 8);
    ck_assert_int_eq(ra->state, SV_RQ_DONE);
    ck_assert_double_eq(rb->arrival, 30.0);
    /* Alone on an idle replica, the request injected at 30 s is served as the workload's
     * lone request of the same lengths is in a run of its own. */
    ck_assert_int_eq(rb->state, SV_RQ_DONE);
    /* (equal but for the rounding of times near 30 s against times near 1 s) */
    tu_assert_rel(rb->first_token - rb->arrival, r1->first_token - r1->arrival, 1e-12);
    tu_assert_rel(rb->end - rb->arrival, r1->end - r1->arrival, 1e-12);
    sv_result_free(res);
    sv_scenario_free(sc);
    tu_done(sc1, single);
    sv_catalog_free(cat);
}
END_TEST

/* Outputs of 900 to 3,200 tokens, on a KV cache small enough to preempt: the decoding
 * sequences' last tokens lie both within the finish wheel's 1,023 steps and beyond (in the
 * heap, moving to the wheel as their step comes near), and preemptions take sequences out
 * of both. --check verifies at every step that each decoding sequence waits where its key
 * puts it and that nothing else waits (sv_replica_check). */
static const char *long_outputs = "seed: 5\n"
                                  "model: llama-3.1-8b\n"
                                  "hardware: {gpu: h100-sxm, gpu_memory_utilization: 0.3}\n"
                                  "workload:\n"
                                  "  num_requests: 60\n"
                                  "  rate: 20\n"
                                  "  input: {dist: uniform, min: 16, max: 256}\n"
                                  "  output: {dist: uniform, min: 900, max: 3200}\n";

static const char *fixed_1025 = "seed: 5\n"
                                "model: llama-3.1-8b\n"
                                "hardware: {gpu: h100-sxm}\n"
                                "workload:\n"
                                "  num_requests: 20\n"
                                "  rate: 20\n"
                                "  input: 64\n"
                                "  output: 1025\n";

START_TEST(test_finish_wheel_and_heap)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_checked(cat, long_outputs, &sc);
    tu_check_accounting(res);
    ck_assert_int_eq(res->summary.completed, 60);
    ck_assert_int_gt(res->preemptions, 0);
    long beyond = 0;
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *r = &res->pool.r[i];
        ck_assert_int_eq(r->state, SV_RQ_DONE);
        beyond += r->output > 1024;
        /* a request decodes output - 1 steps after its first token: its TPOT is at least
         * the fastest step of the run, a step of one sequence (over 2 ms here) */
        ck_assert(sv_req_tpot(r) > 2e-3);
    }
    ck_assert_int_gt(beyond, 30); /* most join with their last token past the wheel */
    tu_done(sc, res);
    /* Output 1,025: a prompt that ends in a step with decodes joins with its last token
     * 1,023 steps past the new count, 1,024 past the step that just ended, whose bucket
     * (the same one, modulo 1,024) is emptied after the joins: such a key goes to the
     * heap, else it would leave 1,024 steps early. */
    sv_result_t *one = tu_run_checked(cat, fixed_1025, &sc);
    tu_check_accounting(one);
    ck_assert_int_eq(one->summary.completed, 20);
    for (size_t i = 0; i < one->pool.n; i++)
        ck_assert(sv_req_tpot(&one->pool.r[i]) > 2e-3);
    tu_done(sc, one);
    sv_catalog_free(cat);
}
END_TEST

/* The lockstep's buckets: a sequence joining the decode set is filed by its phase, its
 * tokens' offset in their block less its lane's decode steps' (modulo the block size, 16),
 * which it keeps till it leaves; sv_replica_check recounts the buckets and phases at every
 * step and catches a phase that drifted. */
START_TEST(test_decode_phases_checked)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc;
    sv_error_t err;
    sv_perf_t perf;
    sv_metrics_t *m;
    /* (the pool below is filled by hand; api_server_ms 0: seen by the first step) */
    tu_replica_parts(cat,
                     "model: llama-3.1-8b\nengine: {api_server_ms: 0}\n"
                     "hardware: {gpu: h100-sxm}\nworkload: {num_requests: 3, input: 64, output: 40}\n",
                     &sc, &perf, &m);
    sv_reqpool_t pool = {0};
    const int input[3] = {100, 37, 250};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(sv_reqpool_add(&pool), i);
        pool.r[i].input = input[i];
        pool.r[i].output = 40;
    }
    sv_engine_cfg_t e = sc->pools[0].engine;
    e.max_model_len = 4096;
    e.prefix_caching = 0;
    ck_assert_int_eq(e.block_size, 16);
    sv_replica_t *r;
    ck_assert_int_eq(sv_replica_new(0, &perf, 1000, &e, &pool, m, &r, &err), 0);
    char msg[256];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(sv_replica_submit(r, i, 0.0), SV_FAIL_NONE);
    /* The first step prefills the three prompts; they join with the lane at step 0. */
    double t = sv_replica_start_step(r, 0.0);
    ck_assert(t > 0);
    ck_assert_int_eq(sv_replica_end_step(r, t), 0);
    const sv_reqeng_t *side = pool.side;
    const int phase[3] = {100 % 16, 37 % 16, 250 % 16};
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(side[sv_reqpool_side_slot(&pool, i)].phase, phase[i]);
    /* Twelve decode steps: a sequence takes a block at the token that opens one (request 1
     * at its 12th, the 49th token; request 2 at its 7th, the 257th; request 0's next is its
     * 113th), and the checks pass at every step. */
    long free0 = sv_replica_free_blocks(r);
    for (int k = 0; k < 12; k++) {
        double d = sv_replica_start_step(r, t);
        ck_assert(d > 0);
        t += d;
        ck_assert_int_eq(sv_replica_end_step(r, t), 0);
        ck_assert_msg(sv_replica_check(r, msg, sizeof msg) == 0, "%s", msg);
    }
    /* request 0: 112 tokens, 7 blocks (7 at 100); request 1: 49, 4 (3 at 37); request 2:
     * 262, 17 (16 at 250) */
    ck_assert_int_eq(free0 - sv_replica_free_blocks(r), 2);
    /* A phase that drifted is caught. */
    sv_reqeng_t *one = (sv_reqeng_t *)pool.side + sv_reqpool_side_slot(&pool, 1);
    one->phase = 6;
    ck_assert_int_eq(sv_replica_check(r, msg, sizeof msg), -1);
    ck_assert_msg(strstr(msg, "replica 0: decoding request 1 has phase 6, not 5"), "%s", msg);
    one->phase = 5;
    ck_assert_int_eq(sv_replica_check(r, msg, sizeof msg), 0);
    sv_replica_free(r);
    sv_metrics_free(m);
    sv_reqpool_free(&pool);
    sv_scenario_free(sc);
    sv_catalog_free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("containers");
    tcase_add_test(tc, test_peek_and_taken_seq);
    tcase_add_test(tc, test_timers);
    tcase_add_test(tc, test_heap);
    tcase_add_test(tc, test_evq_order);
    tcase_add_test(tc, test_evq_hole);
    tcase_add_test(tc, test_ledger);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("driven runs");
    tcase_add_test(tr, test_stepped_run);
    tcase_add_test(tr, test_injected_requests);
    tcase_add_test(tr, test_finish_wheel_and_heap);
    tcase_add_test(tr, test_decode_phases_checked);
    suite_add_tcase(s, tr);
    return s;
}

TU_MAIN(suite)
