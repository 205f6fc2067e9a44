/*
 * The request pool's window (servesim/traffic/request.h): the records of ended requests
 * released in id order once enough are held, each read by the hook first, the rest (and
 * their segments) still found by id; the side window releasing only the side elements; a
 * streaming run with the window prints the same summary as without it, and writes the
 * same --requests-csv and JSON lists as requests end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "servesim/report/recstream.h"
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

/* A side window (sv_reqpool_side_window): every SV_REQPOOL_SIDE_STRIDE requests added, the
 * side elements of the ended requests below the oldest one not ended go, while every
 * record stays; what is held (and the ring's room) follows the requests in flight. */
static long fini_sum;
static void side_fini_sum(void *el)
{
    fini_sum += *(int32_t *)el;
}

START_TEST(test_side_window_follows_in_flight)
{
    const int S = SV_REQPOOL_SIDE_STRIDE;
    sv_reqpool_t p = {0};
    sv_reqpool_side_window(&p);
    ck_assert_int_eq(sv_reqpool_attach(&p, sizeof(int32_t), side_init, side_fini), 0);
    finis = 0;
    /* Request 5 stays live: the first look (S added) releases the 5 below it. */
    add_n(&p, 2 * S, 5);
    sv_reqpool_release(&p);
    ck_assert_uint_eq(p.side_base, 5);
    ck_assert_int_eq(finis, 5);
    ck_assert(sv_reqpool_side_released(&p, 4) && !sv_reqpool_side_released(&p, 5));
    /* Once it ends, the next look (S more added) releases all but the newest, still live. */
    sv_reqpool_req(&p, 5)->ended = 1;
    add_n(&p, S - 1, -1);
    sv_reqpool_release(&p); /* 3S - 1 added: not looked at */
    ck_assert_uint_eq(p.side_base, 5);
    add_n(&p, 1, 3 * S - 1);
    sv_reqpool_release(&p);
    ck_assert_uint_eq(p.side_base, 3 * (size_t)S - 1);
    ck_assert_int_eq(finis, 3 * S - 1);
    ck_assert_int_eq(((int32_t *)p.side)[sv_reqpool_side_slot(&p, 3 * S - 1)], -7);
    ck_assert_uint_eq(p.cap_side, 4 * (size_t)S); /* the room 3S - 4 held needed */
    ck_assert_uint_eq(p.base, 0);
    for (int id = 0; id < 3 * S; id++) /* every record and segment found by id */
        ck_assert(sv_reqpool_req(&p, id)->input == id &&
                  p.seg[sv_reqpool_req(&p, id)->seg_off].len == id);
    /* 64S requests, each ending 3 requests after it started: a look leaves the 3 in
     * flight, so at most S + 2 are held after a release, and the ring does not grow. */
    size_t most = 0;
    sv_reqpool_req(&p, 3 * S - 1)->ended = 1;
    for (int i = 0; i < 64 * S; i++) {
        add_n(&p, 1, (int32_t)p.n);
        sv_reqpool_req(&p, (int32_t)p.n - 4)->ended = 1;
        sv_reqpool_release(&p);
        if (p.n - p.side_base > most) most = p.n - p.side_base;
    }
    ck_assert_uint_eq(most, (size_t)S + 2);
    ck_assert_uint_eq(p.cap_side, 4 * (size_t)S);
    ck_assert_uint_eq(p.base, 0);
    ck_assert_int_eq((long)p.side_base, finis);
    sv_reqpool_free(&p);
    ck_assert_int_eq(finis, 67 * S); /* the rest finished once each */

    /* The ring grows while its ids wrap around it (request 100 live through 2,000 more):
     * every element keeps its request's value, and each is finished once. */
    sv_reqpool_t q = {0};
    sv_reqpool_side_window(&q);
    ck_assert_int_eq(sv_reqpool_attach(&q, sizeof(int32_t), NULL, side_fini_sum), 0);
    fini_sum = 0;
    for (int32_t id = 0; id < 3000; id++) {
        ck_assert_int_eq(sv_reqpool_add(&q), id);
        ((int32_t *)q.side)[sv_reqpool_side_slot(&q, id)] = id;
        if (id >= 3 && id - 3 != 100) sv_reqpool_req(&q, id - 3)->ended = 1;
        if (id == 2100) sv_reqpool_req(&q, 100)->ended = 1;
        sv_reqpool_release(&q);
        if (id == 2000) ck_assert_uint_eq(q.side_base, 100);
    }
    ck_assert_uint_ge(q.cap_side, 2048); /* grew past 1,900 held */
    ck_assert_uint_ge(q.side_base, 3000 - 3 - S);
    long held_sum = 0;
    for (int32_t id = (int32_t)q.side_base; id < 3000; id++) {
        ck_assert_int_eq(((int32_t *)q.side)[sv_reqpool_side_slot(&q, id)], id);
        held_sum += id;
    }
    ck_assert_int_eq(fini_sum, 2999L * 3000 / 2 - held_sum); /* the released ones' */
    sv_reqpool_free(&q);
    ck_assert_int_eq(fini_sum, 2999L * 3000 / 2);

    /* Without a window nothing goes. */
    sv_reqpool_t u = {0};
    ck_assert_int_eq(sv_reqpool_attach(&u, sizeof(int32_t), side_init, side_fini), 0);
    add_n(&u, 2 * S, -1);
    sv_reqpool_release(&u);
    ck_assert_uint_eq(u.side_base, 0);
    sv_reqpool_free(&u);
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
        else /* every record kept, the engine's state of ended requests released */
            ck_assert(res->pool.base == 0 && res->pool.side_base > 0 &&
                      res->pool.n - res->pool.side_base <= 20000 / 2);
        text[w] = summary_text(res);
        tu_done(sc, res);
    }
    ck_assert_str_eq(text[0], text[1]);
    free(text[0]);
    free(text[1]);
    sv_catalog_free(cat);
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The JSON's per-request lists: from "input_lens" to the key after the last of them. */
static char *lists_of(char *json)
{
    char *a = strstr(json, "\"input_lens\""), *b = strstr(json, "\"max_output_tokens_per_s\"");
    ck_assert(a && b && a < b);
    *b = '\0';
    return a;
}

START_TEST(test_window_streams_outputs)
{
    /* --requests-csv and --detailed's lists written as the requests end, from a windowed
     * streaming run: byte for byte those the exact run writes from its records at the end
     * (neither depends on how percentiles are taken). */
    sv_catalog_t *cat = tu_catalog();
    const char *yaml = "model: llama-3.1-8b\n"
                       "hardware: {gpu: h100-sxm, replicas: 2}\n"
                       "engine: {max_num_seqs: 64, max_queue: 40}\n"
                       "workload:\n"
                       "  num_requests: 12000\n"
                       "  rate: 150\n"
                       "  timeout_s: 2\n"
                       "  input: {dist: lognormal, mean: 300, std: 200, min: 4, max: 4096}\n"
                       "  output: {dist: lognormal, mean: 100, std: 80, min: 1, max: 1024}\n";
    char csv[2][64], json[2][64];
    for (int w = 0; w < 2; w++) {
        snprintf(csv[w], sizeof csv[w], "/tmp/sv_test_rq_%d_%d.csv", (int)getpid(), w);
        snprintf(json[w], sizeof json[w], "/tmp/sv_test_rq_%d_%d.json", (int)getpid(), w);
        sv_scenario_t *sc;
        sv_error_t err;
        ck_assert(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err) == 0);
        sv_recstream_t *rs = NULL;
        if (w) {
            sc->metrics.sketch = 1;
            ck_assert_int_eq(sv_recstream_new(sc, csv[w], 1, 1, &rs, &err), 0);
            sv_recstream_attach(rs, sc);
            ck_assert(sv_sim_windowed(sc));
        }
        sv_result_t *res;
        ck_assert_msg(sv_sim_run(sc, &res, &err) == 0, "%s", err.msg);
        if (w) {
            ck_assert_uint_eq(res->pool.base, res->pool.n); /* every record released */
            ck_assert_int_eq(sv_recstream_finish(rs, &err), 0);
            ck_assert_int_eq(sv_report_json_streamed(res, rs, 1, json[w], &err), 0);
        } else {
            ck_assert_int_eq(sv_report_requests_csv(res, csv[w], &err), 0);
            ck_assert_int_eq(sv_report_json(res, 1, json[w], &err), 0);
        }
        sv_recstream_free(rs);
        tu_done(sc, res);
    }
    char *c0 = slurp(csv[0]), *c1 = slurp(csv[1]), *j0 = slurp(json[0]), *j1 = slurp(json[1]);
    ck_assert(strlen(c0) > 12000 * 50);
    ck_assert_str_eq(c0, c1);
    ck_assert_str_eq(lists_of(j0), lists_of(j1));
    for (int w = 0; w < 2; w++) {
        unlink(csv[w]);
        unlink(json[w]);
    }
    free(c0);
    free(c1);
    free(j0);
    free(j1);
    sv_catalog_free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("reqpool");
    TCase *tc = tcase_create("window");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_window_releases_in_order);
    tcase_add_test(tc, test_side_window_follows_in_flight);
    tcase_add_test(tc, test_window_same_summary);
    tcase_add_test(tc, test_window_streams_outputs);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
