/*
 * Unit tests of the engine's containers: the event queue's timers (a restarted or stopped
 * timer's old firing comes out cancelled, at its own time and place), the heap template
 * shared by every priority queue (order, removal from the middle, tracked positions), and
 * the KV block ledger (allocation evicting idle cached blocks least recently used first,
 * sharing a cached block frees the request's copy, reservations and pins, and the one
 * invariant check catching a block that is not accounted for).
 */
#include "servesim/engine/engine.h"
#include "base/heap_int.h"
#include "engine/kvledger_int.h"
#include "testutil.h"

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
    ck_assert_int_eq(sv__kv_cache(p, ha, 0, 2), 0);
    ck_assert_int_eq(sv__kv_check(p, 1, msg, sizeof msg), 0);
    /* Request B computed blocks 1, 9 itself (2 blocks): block 1 is cached already, so its
     * copy goes back to the free pool and it shares A's. */
    sv__kv_take(p, 2);
    ck_assert_int_eq(p->free, 5);
    ck_assert_int_eq(sv__kv_cache(p, hb, 0, 2), 0);
    ck_assert_int_eq(p->free, 6);
    ck_assert_int_eq(sv__kv_check(p, 1, msg, sizeof msg), 0);
    /* A ends: its own block is freed, its cached ones unreferenced (2 idle, 1 shared by B). */
    sv__kv_give(p, 1);
    sv__kv_uncache(p, ha, 2);
    ck_assert_int_eq(sv__kv_avail(p), 8);
    ck_assert_int_eq(sv__kv_used(p), 2);
    long slots[2], touched;
    ck_assert_int_eq(sv__kv_hits(p, ha, 2, slots, &touched), 2);
    ck_assert_int_eq(touched, 1); /* block 2 is idle, block 1 B shares */
    ck_assert_int_eq(sv__kv_prefix(p, hb, 2), 2);
    /* Taking 8 evicts the idle cached block (2) once the 7 free ones are gone. */
    sv__kv_take(p, 8);
    ck_assert_int_eq(p->free, 0);
    ck_assert_int_eq(sv__kv_prefix(p, ha, 2), 1);
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
    sv__kv_uncache(p, hb, 2);
    ck_assert_int_eq(sv__kv_avail(p), 10);
    sv__kv_fini(&l);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("containers");
    tcase_add_test(tc, test_timers);
    tcase_add_test(tc, test_heap);
    tcase_add_test(tc, test_ledger);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
