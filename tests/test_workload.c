/*
 * Unit tests of the event queue and of workloads: arrival processes against their
 * distributions, vLLM's rescaling, length distributions and clamps, trace replay, and
 * independent random streams.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "servesim/engine/engine.h"
#include "servesim/traffic/identity.h"
#include "servesim/traffic/workload.h"
#include "testutil.h"
#include "traffic/workload_int.h"

START_TEST(test_event_order)
{
    sv_evq_t q;
    sv_evq_init(&q, 0);
    /* Equal times pop in insertion order; times in order. */
    ck_assert_int_eq(sv_evq_push(&q, 2.0, 1, 10), 0);
    ck_assert_int_eq(sv_evq_push(&q, 1.0, 1, 20), 0);
    ck_assert_int_eq(sv_evq_push(&q, 2.0, 1, 11), 0);
    ck_assert_int_eq(sv_evq_push(&q, 2.0, 1, 12), 0);
    ck_assert_int_eq(sv_evq_push(&q, 0.5, 1, 30), 0);
    int expect[] = {30, 20, 10, 11, 12};
    sv_event_t ev;
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(sv_evq_pop(&q, &ev), 1);
        ck_assert_int_eq(ev.id, expect[i]);
    }
    ck_assert_int_eq(sv_evq_pop(&q, &ev), 0);
    /* Many random events come out sorted by (time, seq). */
    srand(7);
    for (int i = 0; i < 20000; i++)
        sv_evq_push(&q, (double)(rand() % 100), 0, i);
    double pt = -1;
    uint64_t ps = 0;
    while (sv_evq_pop(&q, &ev)) {
        ck_assert(ev.time > pt || (ev.time == pt && ev.seq > ps));
        pt = ev.time;
        ps = ev.seq;
    }
    sv_evq_free(&q);
    sv_evq_init(&q, 3); /* bounded */
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(sv_evq_push(&q, 1.0, 0, i), 0);
    ck_assert_int_eq(sv_evq_push(&q, 1.0, 0, 3), SV_ELIMIT);
    sv_evq_free(&q);
}
END_TEST

static sv_workload_cfg_t base_cfg(long n, double rate, double burstiness)
{
    sv_workload_cfg_t c;
    memset(&c, 0, sizeof c);
    c.num_requests = n;
    c.rate = rate;
    c.burstiness = burstiness;
    c.input = (sv_lendist_t){.kind = SV_LEN_FIXED, .value = 100, .min = 1, .max = 1000000};
    c.output = c.input;
    return c;
}

/* A rescaled workload of more requests than the workload keeps arrivals for (2^20) draws
 * its gaps twice and keeps none: every arrival is still the cumulative sum of the same
 * exponential draws (mt19937 seeded with the arrival stream's seed) times N / rate over
 * their total, to the bit, and the last lands at N / rate. */
START_TEST(test_rescale_unkept)
{
    long n = (1L << 20) + 3;
    sv_workload_cfg_t c = base_cfg(n, 50.0, 1.0);
    c.rescale = 1;
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, (unsigned long)sv_stream_seed(9, SV_STREAM_ARRIVALS));
    double total = 0.0;
    for (long i = 0; i < n; i++)
        total += gsl_ran_exponential(g, 1.0 / 50.0);
    double f = ((double)n / 50.0) / total;
    gsl_rng_set(g, (unsigned long)sv_stream_seed(9, SV_STREAM_ARRIVALS));
    sv_workload_t *w;
    sv_error_t err;
    ck_assert_int_eq(sv_workload_new(&c, NULL, 9, &w, &err), 0);
    double t, acc = 0.0;
    int32_t in, out;
    long k = 0, differ = 0;
    while (sv_workload_next(w, &t, &in, &out)) {
        acc += gsl_ran_exponential(g, 1.0 / 50.0);
        differ += t != acc * f;
        k++;
    }
    ck_assert_int_eq(k, n);
    ck_assert_int_eq(differ, 0);
    tu_assert_rel(t, (double)n / 50.0, 1e-12);
    sv_workload_free(w);
    gsl_rng_free(g);
}
END_TEST

/* Gaps of n arrivals: mean and squared coefficient of variation. */
static void gap_stats(const sv_workload_cfg_t *c, uint64_t seed, double *mean, double *cv2,
                      double *last)
{
    sv_workload_t *w;
    sv_error_t err;
    ck_assert_int_eq(sv_workload_new(c, NULL, seed, &w, &err), 0);
    double t, prev = 0, s = 0, ss = 0;
    int32_t in, out;
    long n = 0;
    while (sv_workload_next(w, &t, &in, &out)) {
        double g = t - prev;
        ck_assert(g >= 0);
        s += g;
        ss += g * g;
        prev = t;
        n++;
    }
    *mean = s / n;
    *cv2 = (ss / n - *mean * *mean) / (*mean * *mean);
    *last = prev;
    sv_workload_free(w);
}

START_TEST(test_arrivals)
{
    double mean, cv2, last;
    /* Poisson at 10 req/s: gaps exponential, mean 0.1 s, CV^2 = 1. */
    sv_workload_cfg_t c = base_cfg(200000, 10.0, 1.0);
    c.rescale = 0;
    gap_stats(&c, 1, &mean, &cv2, &last);
    tu_assert_rel(mean, 0.1, 0.01);
    tu_assert_rel(cv2, 1.0, 0.02);
    /* Gamma with burstiness 0.25: same mean, CV^2 = 1 / burstiness = 4. */
    c.burstiness = 0.25;
    gap_stats(&c, 2, &mean, &cv2, &last);
    tu_assert_rel(mean, 0.1, 0.02);
    tu_assert_rel(cv2, 4.0, 0.05);
    /* Burstiness inf: constant gaps. */
    c.burstiness = INFINITY;
    gap_stats(&c, 3, &mean, &cv2, &last);
    tu_assert_rel(mean, 0.1, 1e-9);
    ck_assert(fabs(cv2) < 1e-6);
    /* vLLM's rescaling: the last of N arrivals lands at exactly N / rate. */
    c = base_cfg(1000, 10.0, 1.0);
    c.rescale = 1;
    gap_stats(&c, 4, &mean, &cv2, &last);
    tu_assert_rel(last, 100.0, 1e-12);
    /* Rate inf: all at t = 0. */
    c = base_cfg(50, INFINITY, 1.0);
    gap_stats(&c, 5, &mean, &cv2, &last);
    ck_assert(last == 0.0);
    /* Duration bound: Poisson at 10 req/s for 100 s gives about 1000 requests. */
    c = base_cfg(0, 10.0, 1.0);
    c.duration = 100.0;
    sv_workload_t *w;
    sv_error_t err;
    ck_assert_int_eq(sv_workload_new(&c, NULL, 6, &w, &err), 0);
    double t;
    int32_t in, out;
    long n = 0;
    while (sv_workload_next(w, &t, &in, &out)) {
        ck_assert(t <= 100.0);
        n++;
    }
    ck_assert(n > 900 && n < 1100);
    sv_workload_free(w);
}
END_TEST

START_TEST(test_lengths)
{
    sv_workload_cfg_t c = base_cfg(100000, 10.0, 1.0);
    c.input = (sv_lendist_t){
        .kind = SV_LEN_LOGNORMAL, .mean = 1000, .std = 500, .min = 1, .max = 10000000};
    c.output = (sv_lendist_t){.kind = SV_LEN_UNIFORM, .lo = 5, .hi = 9, .min = 5, .max = 9};
    sv_workload_t *w;
    sv_error_t err;
    ck_assert_int_eq(sv_workload_new(&c, NULL, 9, &w, &err), 0);
    double t, s = 0, ss = 0;
    int32_t in, out, lo = 100, hi = 0;
    long n = 0;
    while (sv_workload_next(w, &t, &in, &out)) {
        s += in;
        ss += (double)in * in;
        if (out < lo) lo = out;
        if (out > hi) hi = out;
        n++;
    }
    double mean = s / n, sd = sqrt(ss / n - mean * mean);
    tu_assert_rel(mean, 1000.0, 0.01);
    tu_assert_rel(sd, 500.0, 0.03);
    ck_assert_int_eq(lo, 5);
    ck_assert_int_eq(hi, 9);
    sv_workload_free(w);

    /* Clamps: a normal around 10 with std 100 never leaves [8, 12]. */
    c.input = (sv_lendist_t){.kind = SV_LEN_NORMAL, .mean = 10, .std = 100, .min = 8, .max = 12};
    ck_assert_int_eq(sv_workload_new(&c, NULL, 9, &w, &err), 0);
    while (sv_workload_next(w, &t, &in, &out))
        ck_assert(in >= 8 && in <= 12);
    sv_workload_free(w);

    /* Empirical: only the values of the file. */
    long *v;
    size_t nv;
    ck_assert_int_eq(sv_empirical_load(tu_data("lengths.csv"), "tokens", &v, &nv, &err), 0);
    ck_assert_int_eq((int)nv, 2);
    c.input = (sv_lendist_t){
        .kind = SV_LEN_EMPIRICAL, .samples = v, .nsamples = nv, .min = 1, .max = 100};
    ck_assert_int_eq(sv_workload_new(&c, NULL, 9, &w, &err), 0);
    int seen5 = 0, seen7 = 0;
    while (sv_workload_next(w, &t, &in, &out)) {
        ck_assert(in == 5 || in == 7);
        seen5 |= in == 5;
        seen7 |= in == 7;
    }
    ck_assert(seen5 && seen7);
    sv_workload_free(w);
    free(v);
    ck_assert_int_eq(sv_empirical_load(tu_data("lengths.csv"), "nope", &v, &nv, &err), SV_EPARSE);
    ck_assert_msg(
        strstr(err.msg, "lengths.csv:1: no column 'nope' in the header (columns: tokens)"), "%s",
        err.msg);
}
END_TEST

START_TEST(test_streams_independent)
{
    /* Changing the output distribution leaves arrivals and inputs untouched. */
    sv_workload_cfg_t a = base_cfg(1000, 5.0, 1.0);
    a.input =
        (sv_lendist_t){.kind = SV_LEN_LOGNORMAL, .mean = 100, .std = 50, .min = 1, .max = 100000};
    sv_workload_cfg_t b = a;
    b.output = (sv_lendist_t){.kind = SV_LEN_UNIFORM, .lo = 1, .hi = 1000, .min = 1, .max = 1000};
    sv_workload_t *wa, *wb;
    sv_error_t err;
    ck_assert_int_eq(sv_workload_new(&a, NULL, 77, &wa, &err), 0);
    ck_assert_int_eq(sv_workload_new(&b, NULL, 77, &wb, &err), 0);
    double ta, tb;
    int32_t ia, ib, oa, ob;
    while (sv_workload_next(wa, &ta, &ia, &oa)) {
        ck_assert_int_eq(sv_workload_next(wb, &tb, &ib, &ob), 1);
        ck_assert(ta == tb);
        ck_assert_int_eq(ia, ib);
    }
    sv_workload_free(wa);
    sv_workload_free(wb);
    ck_assert(sv_stream_seed(1, SV_STREAM_ARRIVALS) != sv_stream_seed(1, SV_STREAM_INPUT));
    ck_assert(sv_stream_seed(1, SV_STREAM_INPUT) != sv_stream_seed(2, SV_STREAM_INPUT));
}
END_TEST

static sv_trace_cfg_t trace_cfg(const char *path)
{
    sv_trace_cfg_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.path, sizeof t.path, "%s", path);
    snprintf(t.time_col, sizeof t.time_col, "TIMESTAMP");
    snprintf(t.input_col, sizeof t.input_col, "ContextTokens");
    snprintf(t.output_col, sizeof t.output_col, "GeneratedTokens");
    t.speedup = 1.0;
    return t;
}

START_TEST(test_traces)
{
    sv_error_t err;
    sv_trace_t *t;
    sv_trace_cfg_t c = trace_cfg(tu_data("small_trace.csv"));
    c.speedup = 2.0;
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), 0);
    ck_assert_int_eq((int)t->n, 3);
    /* Times relative to the first row, divided by the speedup: 0, 0.25, 1.25 s. */
    tu_assert_rel(t->time[1], 0.25, 1e-9);
    tu_assert_rel(t->time[2], 1.25, 1e-9);
    ck_assert(t->time[0] == 0.0);
    ck_assert_int_eq(t->input[2], 300);
    ck_assert_int_eq(t->output[1], 20);
    sv_trace_free(t);

    c = trace_cfg(tu_data("bad_trace.csv"));
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "bad_trace.csv:3: column ContextTokens: expected a whole "
                                  "number >= 1, got 'abc'") != NULL,
                  "%s", err.msg);

    /* The real Azure conversation trace, when ../shared is here. */
    const char *shared = getenv("SV_SHARED_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/traces/AzureLLMInferenceTrace_conv.csv", shared ? shared : "");
    if (!shared || access(path, R_OK) != 0) return; /* skipped: no shared traces here */
    c = trace_cfg(path);
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), 0);
    ck_assert_int_eq((int)t->n, 19366);
    double in = 0, out = 0;
    for (size_t i = 0; i < t->n; i++) {
        in += t->input[i];
        out += t->output[i];
    }
    /* The trace's README: input mean 1,155, output mean 211, about 58 minutes. */
    tu_assert_rel(in / t->n, 1155.0, 0.01);
    tu_assert_rel(out / t->n, 211.0, 0.01);
    ck_assert(t->time[t->n - 1] > 55 * 60 && t->time[t->n - 1] < 60 * 60);
    sv_trace_free(t);
}
END_TEST

/* The work thinning does is bounded: the candidates it draws are the peak rate times the
 * time the expected arrivals take to reach the count (or the duration); a profile at rate
 * 0 for 1e8 s before 1000 req/s needs 1e11 of them and is refused instead of hanging. */
START_TEST(test_profile_candidates)
{
    sv_rate_profile_t p = {.kind = SV_PROFILE_STEPS, .n = 2};
    p.t[1] = 10, p.rate[0] = 0, p.rate[1] = 5;
    /* 20 arrivals: none before t = 10, then 20 / 5 = 4 s: 14 s at peak 5 */
    tu_assert_rel(sv_profile_candidates(&p, 20, 0), 70.0, 1e-12);
    tu_assert_rel(sv_profile_candidates(&p, 20, 12), 60.0, 1e-12);
    p.kind = SV_PROFILE_LINEAR, p.rate[1] = 10;
    /* the ramp's area reaches 50 at t = 10 exactly: 10 s at peak 10 */
    tu_assert_rel(sv_profile_candidates(&p, 50, 0), 100.0, 1e-12);
    /* a x2 spike on [10, 15): 100 arrivals there, the next 50 in 5 s: 20 s at peak 20 */
    p.spikes[0] = (sv_spike_t){.at = 10, .duration = 5, .factor = 2};
    p.nspikes = 1;
    tu_assert_rel(sv_profile_candidates(&p, 200, 0), 400.0, 1e-12);
    p.nspikes = 0;
    /* diurnal, peak / trough 3: peak = mean x 1.5; 40 arrivals at mean 4 take 10 s */
    sv_rate_profile_t d = {.kind = SV_PROFILE_DIURNAL, .mean = 4, .ratio = 3, .period = 5};
    tu_assert_rel(sv_profile_candidates(&d, 40, 0), 60.0, 1e-12);
    tu_assert_rel(sv_profile_candidates(&d, 0, 5), 30.0, 1e-12);

    sv_workload_cfg_t c = base_cfg(100, 1, 1);
    c.profile.kind = SV_PROFILE_STEPS;
    c.profile.n = 2;
    c.profile.t[1] = 1e8, c.profile.rate[0] = 0, c.profile.rate[1] = 1000;
    tu_assert_rel(sv_profile_candidates(&c.profile, 100, 0), 1e11 + 100, 1e-12);
    sv_workload_t *w = NULL;
    sv_error_t err;
    ck_assert_int_eq(sv_workload_new(&c, NULL, 1, &w, &err), SV_ELIMIT);
    ck_assert_msg(strstr(err.msg, "about 1e+11 candidate arrivals to thin"), "%s", err.msg);
    ck_assert_ptr_null(w);
}
END_TEST

/* A Mooncake trace written to a temporary file and read with 512-token blocks. */
static int mooncake_text(const char *text, sv_trace_t **t, sv_prompts_t **p, sv_error_t *err)
{
    char path[] = "/tmp/servesim-mooncake-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    sv_mooncake_cfg_t c = {.given = 1, .block_tokens = 512, .speedup = 1};
    snprintf(c.path, sizeof c.path, "%s", path);
    int rc = sv_mooncake_load(&c, t, p, err);
    unlink(path);
    return rc;
}

/* Hash ids are 64-bit integers read from the text: 2^53 and 2^53 + 1 (one double) stay two
 * blocks, 2^64 - 1 is read, 2^64, 1.0 and -1 are refused, and text after a line's object
 * is an error, not ignored. */
START_TEST(test_mooncake_hash_ids)
{
    sv_trace_t *t = NULL;
    sv_prompts_t *p = NULL;
    sv_error_t err;
    int rc = mooncake_text("{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 1, "
                           "\"hash_ids\": [9007199254740992, 9007199254740993]}\n"
                           "{\"hash_ids\": [18446744073709551615], \"timestamp\": 5, "
                           "\"note\": {\"hash_ids\": [7]}, \"input_length\": 3, "
                           "\"output_length\": 2}\n",
                           &t, &p, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_int_eq(t->n, 2);
    ck_assert_int_eq(p->nseg[0], 2);
    ck_assert(p->seg[0].id != p->seg[1].id);
    ck_assert(p->seg[0].id == (0x7ace000000000000ULL ^ 9007199254740992ULL));
    ck_assert(p->seg[1].id == (0x7ace000000000000ULL ^ 9007199254740993ULL));
    ck_assert_int_eq(p->seg[1].len, 88);
    ck_assert(p->seg[2].id == (0x7ace000000000000ULL ^ 18446744073709551615ULL));
    sv_trace_free(t);
    sv_prompts_free(p);
    static const char *const bad[] = {"18446744073709551616", "1.0", "-1", "1e3"};
    for (int i = 0; i < 4; i++) {
        char line[256];
        snprintf(line, sizeof line,
                 "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, "
                 "\"hash_ids\": [%s]}\n",
                 bad[i]);
        ck_assert_int_eq(mooncake_text(line, &t, &p, &err), SV_EINVAL);
        ck_assert_msg(strstr(err.msg, ":1: hash_ids[0]: expected a whole number in [0, "
                                      "18446744073709551615]"),
                      "%s: %s", bad[i], err.msg);
    }
    ck_assert_int_eq(mooncake_text("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": "
                                   "1, \"hash_ids\": [1]} {\"junk\": 1}\n",
                                   &t, &p, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, ":1: text after the JSON object; expected one object per line"),
                  "%s", err.msg);
}
END_TEST

/* Count the arrivals of a profile in [a, b) for each of nseg segments; returns the total. */
static long profile_counts(sv_workload_cfg_t *c, const double *edges, int nseg, long *counts)
{
    sv_error_t err;
    sv_workload_t *w;
    ck_assert_int_eq(sv_workload_new(c, NULL, 2024, &w, &err), 0);
    double t, prev = 0;
    int32_t in, out;
    long total = 0;
    for (int k = 0; k < nseg; k++)
        counts[k] = 0;
    while (sv_workload_next(w, &t, &in, &out)) {
        ck_assert(t >= prev); /* arrivals in order */
        ck_assert(t <= c->duration);
        prev = t;
        total++;
        for (int k = 0; k < nseg; k++)
            if (t >= edges[k] && t < edges[k + 1]) counts[k]++;
    }
    sv_workload_free(w);
    return total;
}

/* Within 4 standard deviations of a Poisson count with mean m. */
#define assert_poisson(n, m)                                                                       \
    ck_assert_msg(fabs((double)(n) - (m)) <= 4.0 * sqrt(m), "%s = %ld, expected %g +- %g", #n,     \
                  (long)(n), (double)(m), 4.0 * sqrt(m))

/* Issue 13: a piecewise-constant profile gives each segment its own count (thinning at the
 * peak rate keeps rate(t)/peak of the candidates) and the right total; a spike multiplies
 * its window; a linear ramp gives the area under it. */
START_TEST(test_profile_steps)
{
    sv_workload_cfg_t c = base_cfg(0, 1, 1);
    c.duration = 3000;
    c.profile.kind = SV_PROFILE_STEPS;
    double pts[3][2] = {{0, 5}, {1000, 20}, {2000, 1}};
    for (int i = 0; i < 3; i++)
        c.profile.t[i] = pts[i][0], c.profile.rate[i] = pts[i][1];
    c.profile.n = 3;
    tu_assert_rel(sv_profile_peak(&c.profile), 20.0, 1e-12);
    tu_assert_rel(sv_profile_rate(&c.profile, 1500), 20.0, 1e-12);
    tu_assert_rel(sv_profile_rate(&c.profile, 2999), 1.0, 1e-12);
    tu_assert_rel(sv_profile_mean(&c.profile, 0, 3000), 26000.0 / 3000, 1e-4);
    double edges[4] = {0, 1000, 2000, 3000};
    long n[3];
    long total = profile_counts(&c, edges, 3, n);
    assert_poisson(n[0], 5000.0);
    assert_poisson(n[1], 20000.0);
    assert_poisson(n[2], 1000.0);
    assert_poisson(total, 26000.0);
    ck_assert_int_eq(total, n[0] + n[1] + n[2]);

    /* a spike of x4 over [500, 600) adds 3 x 5 x 100 = 1500 there */
    c.profile.spikes[0] = (sv_spike_t){.at = 500, .duration = 100, .factor = 4};
    c.profile.nspikes = 1;
    double e2[3] = {500, 600, 3000};
    long m[2];
    profile_counts(&c, e2, 2, m);
    assert_poisson(m[0], 2000.0);
    tu_assert_rel(sv_profile_peak(&c.profile), 80.0, 1e-12);
    c.profile.nspikes = 0;

    /* a linear ramp 0 -> 10 req/s over 1000 s, then flat at 10: 5000 + 10000 */
    c.profile.kind = SV_PROFILE_LINEAR;
    c.profile.t[1] = 1000, c.profile.rate[0] = 0, c.profile.rate[1] = 10;
    c.profile.n = 2;
    c.duration = 2000;
    double e3[3] = {0, 1000, 2000};
    long r[2];
    profile_counts(&c, e3, 2, r);
    assert_poisson(r[0], 5000.0);
    assert_poisson(r[1], 10000.0);
    tu_assert_rel(sv_profile_rate(&c.profile, 250), 2.5, 1e-12);
}
END_TEST

/* Issue 13: thinning a diurnal sinusoid: the mean rate over whole periods is within 1% of
 * the profile's mean, and the peak quarter holds more than the trough quarter in the
 * ratio of the integrals of the sinusoid over them. */
START_TEST(test_profile_diurnal)
{
    sv_workload_cfg_t c = base_cfg(0, 1, 1);
    c.profile.kind = SV_PROFILE_DIURNAL;
    c.profile.mean = 50;
    c.profile.ratio = 3; /* amplitude a = 0.5: 25 .. 75 req/s */
    c.profile.period = 1000;
    c.profile.peak_at = 500;
    c.duration = 10 * c.profile.period;
    tu_assert_rel(sv_profile_peak(&c.profile), 75.0, 1e-12);
    tu_assert_rel(sv_profile_rate(&c.profile, 0), 25.0, 1e-12);
    tu_assert_rel(sv_profile_rate(&c.profile, 500), 75.0, 1e-12);
    tu_assert_rel(sv_profile_mean(&c.profile, 0, 1000), 50.0, 1e-6);
    /* per period: trough quarter [0,125)+[875,1000), peak quarter [375, 625) */
    double edges[11];
    for (int k = 0; k <= 10; k++)
        edges[k] = k * 1000.0;
    long n[10];
    long total = profile_counts(&c, edges, 10, n);
    tu_assert_rel((double)total / c.duration, 50.0, 0.01);
    for (int k = 0; k < 10; k++)
        assert_poisson(n[k], 50000.0);
    double pk[2] = {375, 625};
    long peak_q;
    c.duration = 1000;
    profile_counts(&c, pk, 1, &peak_q);
    /* integral over the peak quarter: 250 x 50 + 50 x 0.5 x 2 x 1000 / (2 pi) x sin(pi/4) */
    double expect = 250 * 50 + 50 * 0.5 * 1000 / 3.14159265358979 * sin(3.14159265358979 / 4);
    assert_poisson(peak_q, expect);
}
END_TEST

/* Issue 13: a trace window, a rescale to a target mean rate, and loops. */
START_TEST(test_trace_window_loop)
{
    sv_error_t err;
    sv_trace_t *t;
    /* small_trace.csv: rows at 0, 0.5, 2.5 s */
    sv_trace_cfg_t c = trace_cfg(tu_data("small_trace.csv"));
    c.window_start = 0.4;
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), 0);
    ck_assert_int_eq((int)t->n, 2);
    ck_assert(t->time[0] == 0.0);
    tu_assert_rel(t->time[1], 2.0, 1e-12);
    sv_trace_free(t);
    c = trace_cfg(tu_data("small_trace.csv"));
    c.mean_rate = 4; /* 2 gaps over 2.5 s = 0.8 req/s; x5 */
    c.loop = 3;
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), 0);
    ck_assert_int_eq((int)t->n, 9);
    tu_assert_rel(t->time[2], 0.5, 1e-12);
    /* each pass starts one mean gap (0.25 s) after the last row before */
    tu_assert_rel(t->time[3], 0.75, 1e-12);
    tu_assert_rel(t->time[8], 2 * 0.75 + 0.5, 1e-12);
    ck_assert_int_eq(t->input[5], t->input[2]);
    sv_trace_free(t);
    c = trace_cfg(tu_data("small_trace.csv"));
    c.window_start = 10;
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "no data rows in the window") != NULL, "%s", err.msg);
}
END_TEST

/* Issue 8 item 9: a UTF-8 byte-order mark is skipped; a NUL byte and a column named
 * twice are errors naming the line. */
START_TEST(test_trace_text_hazards)
{
    sv_error_t err;
    sv_trace_t *t = NULL;
    sv_trace_cfg_t c = trace_cfg(tu_data("trace_bom.csv"));
    ck_assert_msg(sv_trace_load(&c, &t, &err) == 0, "%s", err.msg);
    ck_assert_int_eq((int)t->n, 2);
    ck_assert_int_eq(t->input[1], 200);
    ck_assert_int_eq(t->output[1], 20);
    sv_trace_free(t);
    c = trace_cfg(tu_data("trace_nul.csv"));
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "trace_nul.csv:3: a NUL byte in the line (expected a text CSV)"),
                  "%s", err.msg);
    c = trace_cfg(tu_data("trace_dupcol.csv"));
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "trace_dupcol.csv:1: column 'ContextTokens' appears twice in "
                                  "the header (columns 2 and 4)"),
                  "%s", err.msg);
    c = trace_cfg(tu_data(""));
    ck_assert_int_eq(sv_trace_load(&c, &t, &err), SV_EIO);
    ck_assert_msg(strstr(err.msg, ": is a directory (expected a file)"), "%s", err.msg);
}
END_TEST

START_TEST(test_mt19937_as_gsl)
{
    /* The workload's generator gives gsl_rng_mt19937's words from the same seed (0 taken
     * as GSL's 4357; only a seed's low 32 bits count), past several regenerations of its
     * 624-word block, and GSL's distributions drawn from it, and the inline lognormal and
     * exponential, give GSL's doubles bit for bit. */
    unsigned long seeds[] = {0, 1, 4357, 42, 0x1234567890abcdefUL, 4294967295UL};
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
        gsl_rng *a = gsl_rng_alloc(sv__mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
        ck_assert(a && b);
        gsl_rng_set(a, seeds[k]);
        gsl_rng_set(b, seeds[k]);
        ck_assert_uint_eq(gsl_rng_max(a), gsl_rng_max(b));
        ck_assert_uint_eq(gsl_rng_min(a), gsl_rng_min(b));
        for (int i = 0; i < 3000; i++)
            ck_assert_uint_eq(gsl_rng_get(a), gsl_rng_get(b));
        for (int i = 0; i < 3000; i++) {
            double x = sv__lognormal(a, 5.1, 0.65), y = gsl_ran_lognormal(b, 5.1, 0.65);
            ck_assert(memcmp(&x, &y, sizeof x) == 0);
            x = sv__exponential(a, 1.0 / 700);
            y = gsl_ran_exponential(b, 1.0 / 700);
            ck_assert(memcmp(&x, &y, sizeof x) == 0);
            x = gsl_ran_gamma(a, 0.5, 2.0);
            y = gsl_ran_gamma(b, 0.5, 2.0);
            ck_assert(memcmp(&x, &y, sizeof x) == 0);
            ck_assert_uint_eq(gsl_rng_uniform_int(a, 1000), gsl_rng_uniform_int(b, 1000));
            x = gsl_rng_uniform(a);
            y = gsl_rng_uniform(b);
            ck_assert(memcmp(&x, &y, sizeof x) == 0);
        }
        gsl_rng_free(a);
        gsl_rng_free(b);
    }
    /* Seeded 0, MT19937's first word as GSL gives it for its default seed 4357 (GSL's
     * reference manual: gsl_rng_get of a default mt19937 starts 4293858116). */
    gsl_rng *a = gsl_rng_alloc(sv__mt19937);
    ck_assert_uint_eq(gsl_rng_get(a), 4293858116UL);
    gsl_rng_free(a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("workload");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_event_order);
    tcase_add_test(tc, test_mt19937_as_gsl);
    tcase_add_test(tc, test_arrivals);
    tcase_add_test(tc, test_rescale_unkept);
    tcase_add_test(tc, test_lengths);
    tcase_add_test(tc, test_streams_independent);
    tcase_add_test(tc, test_traces);
    tcase_add_test(tc, test_trace_text_hazards);
    tcase_add_test(tc, test_profile_steps);
    tcase_add_test(tc, test_profile_candidates);
    tcase_add_test(tc, test_mooncake_hash_ids);
    tcase_add_test(tc, test_profile_diurnal);
    tcase_add_test(tc, test_trace_window_loop);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
