/*
 * The simulator (see include/servesim/sim.h): the event loop, the benchmark client
 * (arrivals, semaphore, closed loop, timeouts), routing, sampling, and the
 * cost and energy totals of a run.
 */
#include "servesim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/engine.h"
#include "servesim/workload.h"
#include "vec_int.h"

enum { EV_ARRIVAL = 1, EV_STEP_END, EV_TIMEOUT, EV_SAMPLE };

typedef struct sim {
    const sv_scenario_t *sc;
    sv_result_t *res;
    sv_evq_t q;
    sv_workload_t *wl;
    sv_replica_t **reps;
    double now;
    /* the client */
    int closed;      /* rate inf with max_concurrency: send the next as one ends */
    int exhausted;   /* the workload has no more requests */
    long inflight, outstanding;
    int32_t *backlog; /* requests held at the semaphore, FIFO */
    size_t nback, headback, capback;
    int have_next;
    double next_t;
    int32_t next_in, next_out;
    long rr;
    int least_outstanding;
    int32_t *done;
    size_t capdone;
    int rc;
} sim_t;

static int32_t new_request(sim_t *s, double arrival, int32_t in, int32_t out)
{
    sv_reqpool_t *p = &s->res->pool;
    if (p->n >= (size_t)SV_MAX_REQUESTS || SV_GROW(p->r, p->cap, p->n + 1)) {
        s->rc = SV_ENOMEM;
        return -1;
    }
    sv_req_t *r = &p->r[p->n];
    memset(r, 0, sizeof *r);
    r->arrival = arrival;
    r->start = r->scheduled = r->first_token = r->last_token = -1.0;
    r->input = in;
    r->output = out;
    r->replica = -1;
    r->heap_pos = r->seg = r->prev = r->next = -1;
    r->state = SV_RQ_NEW;
    s->outstanding++;
    return (int32_t)p->n++;
}

static void push(sim_t *s, double t, int type, int32_t id)
{
    if (sv_evq_push(&s->q, t, type, id)) s->rc = SV_ENOMEM;
}

static void schedule_next_arrival(sim_t *s)
{
    s->have_next = sv_workload_next(s->wl, &s->next_t, &s->next_in, &s->next_out);
    if (s->have_next) push(s, s->next_t, EV_ARRIVAL, -1);
    else s->exhausted = 1;
}

static int route(sim_t *s)
{
    int n = s->res->replicas;
    if (!s->least_outstanding) return (int)(s->rr++ % n);
    int best = 0;
    long best_load = -1;
    for (int i = 0; i < n; i++) {
        long load = sv_replica_running(s->reps[i]) + sv_replica_waiting(s->reps[i]);
        if (best_load < 0 || load < best_load) {
            best = i;
            best_load = load;
        }
    }
    return best;
}

static void kick(sim_t *s, int rep)
{
    if (sv_replica_busy(s->reps[rep])) return;
    double d = sv_replica_start_step(s->reps[rep], s->now);
    if (d > 0) push(s, s->now + d, EV_STEP_END, rep);
}

static void ended(sim_t *s)
{
    s->inflight--;
    s->outstanding--;
}

static void send(sim_t *s, int32_t id)
{
    sv_req_t *r = &s->res->pool.r[id];
    r->start = s->now;
    s->inflight++;
    int rep = route(s);
    if (sv_replica_submit(s->reps[rep], id, s->now) != SV_FAIL_NONE) {
        ended(s);
        return;
    }
    if (s->sc->workload.timeout > 0) push(s, s->now + s->sc->workload.timeout, EV_TIMEOUT, id);
    kick(s, rep);
}

/* Send what the semaphore now allows: held requests first, then (closed loop) new ones. */
static void pump(sim_t *s)
{
    long cap = s->sc->workload.max_concurrency;
    while (!s->rc && (cap == 0 || s->inflight < cap)) {
        if (s->headback < s->nback) {
            send(s, s->backlog[s->headback++]);
            continue;
        }
        if (!s->closed || s->exhausted) break;
        double dur = s->sc->workload.duration;
        double t;
        int32_t in, out;
        if ((dur > 0 && s->now > dur) || !sv_workload_next(s->wl, &t, &in, &out)) {
            s->exhausted = 1;
            break;
        }
        int32_t id = new_request(s, s->now, in, out);
        if (id < 0) break;
        send(s, id);
    }
}

static void arrive(sim_t *s)
{
    int32_t id = new_request(s, s->next_t, s->next_in, s->next_out);
    if (id < 0) return;
    schedule_next_arrival(s);
    long cap = s->sc->workload.max_concurrency;
    if (cap > 0 && s->inflight >= cap) {
        if (SV_GROW(s->backlog, s->capback, s->nback + 1)) {
            s->rc = SV_ENOMEM;
            return;
        }
        s->backlog[s->nback++] = id;
    } else {
        send(s, id);
    }
}

/* Requests a replica ended: release their semaphore slots. */
static void drain(sim_t *s, int rep)
{
    long n;
    sv_replica_done(s->reps[rep], &n);
    for (long i = 0; i < n; i++) ended(s);
}

static void sample(sim_t *s)
{
    for (int i = 0; i < s->res->replicas; i++) {
        sv_replica_t *r = s->reps[i];
        sv_sample_t sm = {.t = s->now,
                          .replica = i,
                          .running = (int32_t)sv_replica_running(r),
                          .waiting = (int32_t)sv_replica_waiting(r),
                          .kv_usage = (float)sv_replica_kv_usage(r),
                          .batch_tokens = (int32_t)sv_replica_batch_tokens(r)};
        if (sv_metrics_sample(s->res->metrics, &sm)) s->rc = SV_ENOMEM;
    }
    if (!s->exhausted || s->outstanding > 0 || s->have_next)
        push(s, s->now + s->sc->metrics.sample_interval, EV_SAMPLE, -1);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void totals(sim_t *s)
{
    sv_result_t *res = s->res;
    const sv_scenario_t *sc = s->sc;
    double T = res->summary.duration;
    int tp = res->perf.set.tp;
    res->gpus = (double)res->replicas * tp;
    res->cost_usd = res->gpus * sc->gpu.price_per_hour * T / 3600.0;
    double busy = 0.0;
    res->energy_j = 0.0;
    for (int i = 0; i < res->replicas; i++) {
        const sv_replica_stats_t *st = &res->rstats[i];
        busy += st->busy_s;
        res->preemptions += st->preemptions;
        res->energy_j += tp * (sc->gpu.idle_w * T + (sc->gpu.tdp_w - sc->gpu.idle_w) * st->active_s);
    }
    res->busy_share = T > 0 ? busy / (T * res->replicas) : 0.0;
    double out = (double)res->summary.total_output;
    res->cost_per_mtok = out > 0 ? res->cost_usd / (out / 1e6) : 0.0;
    res->energy_per_tok = out > 0 ? res->energy_j / out : 0.0;
    size_t n;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &n);
    float *kv = malloc((n + 1) * sizeof *kv);
    if (kv && n) {
        for (size_t i = 0; i < n; i++) kv[i] = sm[i].kv_usage;
        qsort(kv, n, sizeof *kv, cmp_float);
        double *d = malloc(n * sizeof *d);
        if (d) {
            for (size_t i = 0; i < n; i++) d[i] = kv[i];
            res->kv_usage_p50 = sv_percentile_sorted(d, n, 50);
            res->kv_usage_p99 = sv_percentile_sorted(d, n, 99);
            res->kv_usage_max = d[n - 1];
            free(d);
        }
    }
    free(kv);
}

void sv_result_free(sv_result_t *res)
{
    if (!res) return;
    sv_metrics_free(res->metrics);
    free(res->pool.r);
    free(res->rstats);
    free(res);
}

static int setup(sim_t *s, sv_error_t *err)
{
    const sv_scenario_t *sc = s->sc;
    sv_result_t *res = s->res;
    int rc = sv_perf_init(&res->perf, &sc->gpu, &sc->model, &sc->perf, err);
    if (rc || (rc = sv_perf_memplan(&res->perf, &res->mem, err))) return rc;
    res->kv_blocks = res->mem.kv_blocks;
    long cap = res->mem.kv_tokens;
    long mml = sc->engine.max_model_len;
    if (mml > cap)
        return sv_errorf(err, SV_EINVAL,
                         "engine.max_model_len (%ld) is larger than the KV cache of one replica "
                         "(%ld tokens); lower it or give the cache more memory",
                         mml, cap);
    if (mml == 0) mml = sc->model.max_context > 0 && sc->model.max_context < cap ? sc->model.max_context : cap;
    res->max_model_len = mml;
    sv_engine_cfg_t ecfg = sc->engine;
    ecfg.max_model_len = mml;
    res->replicas = sc->replicas;
    res->metrics = sv_metrics_new(&sc->metrics, sc->replicas);
    s->reps = calloc((size_t)sc->replicas, sizeof *s->reps);
    res->rstats = calloc((size_t)sc->replicas, sizeof *res->rstats);
    if (!res->metrics || !s->reps || !res->rstats) return sv_errorf(err, SV_ENOMEM, "out of memory");
    for (int i = 0; i < sc->replicas; i++)
        if ((rc = sv_replica_new(i, &res->perf, res->kv_blocks, &ecfg, &res->pool, res->metrics,
                                 &s->reps[i], err)))
            return rc;
    if ((rc = sv_workload_new(&sc->workload, sc->trace, sc->seed, &s->wl, err))) return rc;
    sv_evq_init(&s->q, 0);
    s->least_outstanding = strcmp(sc->router, "least-outstanding") == 0;
    s->closed = isinf(sc->workload.rate) && sc->workload.max_concurrency > 0 && !sc->workload.has_trace;
    return 0;
}

static void teardown(sim_t *s)
{
    if (s->reps)
        for (int i = 0; i < s->res->replicas; i++) sv_replica_free(s->reps[i]);
    free(s->reps);
    sv_workload_free(s->wl);
    sv_evq_free(&s->q);
    free(s->backlog);
    free(s->done);
}

int sv_sim_run(const sv_scenario_t *sc, sv_result_t **out, sv_error_t *err)
{
    *out = NULL;
    sim_t s;
    memset(&s, 0, sizeof s);
    s.sc = sc;
    s.res = calloc(1, sizeof *s.res);
    if (!s.res) return sv_errorf(err, SV_ENOMEM, "out of memory");
    s.res->sc = sc;
    int rc = setup(&s, err);
    if (rc) {
        teardown(&s);
        sv_result_free(s.res);
        return rc;
    }
    if (s.closed) pump(&s);
    else schedule_next_arrival(&s);
    push(&s, 0.0, EV_SAMPLE, -1);

    sv_event_t ev;
    while (!s.rc && sv_evq_pop(&s.q, &ev)) {
        if (sc->horizon > 0 && ev.time > sc->horizon) break;
        s.now = ev.time;
        s.res->events++;
        switch (ev.type) {
        case EV_ARRIVAL: arrive(&s); break;
        case EV_STEP_END:
            if (sv_replica_end_step(s.reps[ev.id], s.now)) s.rc = SV_ENOMEM;
            drain(&s, ev.id);
            pump(&s);
            kick(&s, ev.id);
            break;
        case EV_TIMEOUT: {
            sv_req_t *r = &s.res->pool.r[ev.id];
            if (r->state == SV_RQ_DONE || r->state == SV_RQ_FAILED) break;
            sv_replica_abort(s.reps[r->replica], ev.id, s.now);
            drain(&s, r->replica);
            pump(&s);
            kick(&s, r->replica);
            break;
        }
        case EV_SAMPLE: sample(&s); break;
        default: break;
        }
    }
    if (!s.rc && sc->horizon > 0 && s.outstanding > 0) {
        /* The horizon ended the run: whatever is still in flight fails as unfinished. */
        s.now = sc->horizon;
        for (size_t i = s.headback; i < s.nback; i++) {
            sv_req_t *r = &s.res->pool.r[s.backlog[i]];
            r->state = SV_RQ_FAILED;
            r->fail = SV_FAIL_UNFINISHED;
            r->start = r->end = sc->horizon;
            s.outstanding--;
        }
        for (int i = 0; i < s.res->replicas; i++) {
            sv_replica_fail_all(s.reps[i], sc->horizon);
            long n;
            sv_replica_done(s.reps[i], &n);
            s.outstanding -= n;
        }
    }
    if (!s.rc && s.outstanding != 0)
        rc = sv_errorf(err, SV_EINVAL,
                       "internal error: the simulation stopped with %ld requests unaccounted for",
                       s.outstanding);
    else if (s.rc || sv_metrics_oom(s.res->metrics))
        rc = sv_errorf(err, SV_ENOMEM, "out of memory (or a bound was hit) after %zu requests",
                       s.res->pool.n);
    for (int i = 0; i < s.res->replicas && s.reps; i++) s.res->rstats[i] = *sv_replica_stats(s.reps[i]);
    teardown(&s);
    if (!rc) rc = sv_metrics_summarize(s.res->metrics, &s.res->pool, &s.res->summary, err);
    if (rc) {
        sv_result_free(s.res);
        return rc;
    }
    totals(&s);
    *out = s.res;
    return 0;
}
