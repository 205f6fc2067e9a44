/*
 * The request pool's window (servesim/traffic/request.h): the records of ended requests
 * released in id order once enough are held, each read by the hook first, the rest (and
 * their segments) still found by id; and a streaming run with the window prints the same
 * summary as without it, in a fraction of the records' memory.
 */
#include <stdio.h>
#include <stdlib.h>

#include "servesim/report/report.h"
#include "servesim/traffic/request.h"
#include "testsim.h"

typedef struct {
    int32_t next; /* the id the hook expects next */
    long bad;     /* records read out of order or with the wrong input */
} hook_t;

static void on_release(void *ctx, int32_t id, const sv_req_t *r)
{
    hook_t *h = ctx;
    h->bad += id != h->next || r->input != id || !r->ended;
    h->next = id + 1;
}

static long finis;
static void side_init(void *el)
{
    *(int32_t *)el = -7;
}
static void side_fini(void *el)
{
    finis += *(int32_t *)el == -7;
}

/* Add n requests, each with input = id and one segment {id, id}; ended unless it is `live`. */
static void add_n(sv_reqpool_t *p, int n, int32_t live)
{
    for (int i = 0; i < n; i++) {
        int32_t id = sv_reqpool_add(p);
        ck_assert(id >= 0);
        sv_req_t *r = sv_reqpool_req(p, id);
        r->input = id;
        r->ended = id != live;
        sv_segment_t seg = {(uint64_t)id, id};
        ck_assert_int_eq(sv_reqpool_set_segments(p, id, &seg, 1), 0);
    }
}

START_TEST(test_window_releases_in_order)
{
    const int W = SV_REQPOOL_WINDOW_MIN;
    sv_reqpool_t p = {0};
    hook_t h = {0, 0};
    ck_assert_int_eq(sv_reqpool_window(&p, on_release, &h), 0);
    ck_assert_int_eq(sv_reqpool_attach(&p, sizeof(int32_t), side_init, side_fini), 0);
    add_n(&p, W - 1, -1);
    sv_reqpool_release(&p); /* fewer than W held: not looked at */
    ck_assert_uint_eq(p.base, 0);
    add_n(&p, 1, -1);
    sv_reqpool_release(&p); /* W held, all ended: all released */
    ck_assert_uint_eq(p.base, (size_t)W);
    ck_assert_int_eq(h.next, W);
    ck_assert_int_eq(finis, W);
    ck_assert_uint_eq(p.nseg, 0); /* no held record uses a segment */
    ck_assert(sv_reqpool_released(&p, W - 1) && !sv_reqpool_released(&p, W));
    /* Request W stays live: nothing below it is released, and the next look waits till
     * 2W are held. */
    add_n(&p, W, W);
    sv_reqpool_release(&p);
    ck_assert_uint_eq(p.base, (size_t)W);
    add_n(&p, W - 1, -1);
    sv_reqpool_release(&p); /* 2W - 1 held: not looked at */
    ck_assert_uint_eq(p.base, (size_t)W);
    sv_reqpool_req(&p, W)->ended = 1;
    add_n(&p, 1, 3 * W - 1); /* the last one stays live */
    sv_reqpool_release(&p);
    ck_assert_uint_eq(p.base, 3 * (size_t)W - 1);
    ck_assert_int_eq(h.next, 3 * W - 1);
    /* The record left and its segment are found by id. */
    const sv_req_t *r = sv_reqpool_req(&p, 3 * W - 1);
    ck_assert_int_eq(r->input, 3 * W - 1);
    ck_assert_uint_eq(p.seg[r->seg_off].id, 3 * (uint64_t)W - 1);
    ck_assert_uint_eq(p.nseg, 1);
    sv_reqpool_req(&p, 3 * W - 1)->ended = 1;
    sv_reqpool_release_all(&p);
    ck_assert_int_eq(h.next, 3 * W);
    ck_assert_int_eq(h.bad, 0);
    ck_assert_int_eq(finis, 3 * W);
    ck_assert_uint_eq(p.n, 3 * (size_t)W);
    sv_reqpool_free(&p);
    ck_assert_int_eq(finis, 3 * W); /* nothing held: no element finished twice */
    sv_reqpool_t q = {0};
    ck_assert_int_eq(sv_reqpool_add(&q), 0);
    ck_assert_int_eq(sv_reqpool_window(&q, NULL, NULL), SV_EINVAL); /* only before the first */
    sv_reqpool_free(&q);
}
END_TEST

static char *summary_text(const sv_result_t *res)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    ck_assert(f != NULL);
    sv_report_summary(res, f);
    fclose(f);
    return buf;
}

START_TEST(test_window_same_summary)
{
    /* Overloaded with timeouts and a bounded queue, so that requests end out of order,
     * time out inside replicas and leave stale queue entries and timers behind. */
    sv_catalog_t *cat = tu_catalog();
    const char *yaml = "model: llama-3.1-8b\n"
                       "hardware: {gpu: h100-sxm, replicas: 2}\n"
                       "engine: {max_num_seqs: 64, max_queue: 40}\n"
                       "workload:\n"
                       "  num_requests: 20000\n"
                       "  rate: 150\n"
                       "  timeout_s: 2\n"
                       "  input: {dist: lognormal, mean: 300, std: 200, min: 4, max: 4096}\n"
                       "  output: {dist: lognormal, mean: 150, std: 100, min: 2, max: 1024}\n"
                       "slo: {ttft_ms: 500, tpot_ms: 50}\n";
    char *text[2];
    for (int w = 0; w < 2; w++) {
        sv_scenario_t *sc;
        sv_error_t err;
        ck_assert(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err) == 0);
        sc->metrics.sketch = 1;
        sc->metrics.window = w;
        sc->check = 1;
        sv_result_t *res;
        ck_assert_msg(sv_sim_run(sc, &res, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(res->pool.n, 20000);
        ck_assert(res->summary.completed > 1000 && res->summary.failed > 1000);
        if (w) /* ended records released: what is held stays well below the run */
            ck_assert(res->pool.base > 0 && res->pool.n - res->pool.base <= 20000 / 2);
        else
            ck_assert_uint_eq(res->pool.base, 0);
        text[w] = summary_text(res);
        tu_done(sc, res);
    }
    ck_assert_str_eq(text[0], text[1]);
    free(text[0]);
    free(text[1]);
    sv_catalog_free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("reqpool");
    TCase *tc = tcase_create("window");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_window_releases_in_order);
    tcase_add_test(tc, test_window_same_summary);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
