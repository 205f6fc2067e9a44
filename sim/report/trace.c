/*
 * The timeline of a run as a Chrome / Perfetto trace (see include/servesim/report/trace.h):
 * the simulator's hooks record each engine step and each KV transfer's size while the run
 * goes; the writer adds the requests' phases from their records and the replicas' samples
 * from the metrics, and writes one event per line. Times are integer nanoseconds printed
 * as microseconds with three decimals, so a phase that ends where its request ends nests
 * exactly inside it.
 */
#include "servesim/report/trace.h"

#include "base/jsonw_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec_int.h"
#include "base/fileio_int.h"

#ifndef SERVESIM_VERSION
#define SERVESIM_VERSION "0"
#endif

typedef struct step_rec {
    int32_t replica;
    double start, dur;
    sv_step_info_t info;
} step_rec_t;

struct sv_tracer {
    long max_steps, max_req;
    step_rec_t *steps;
    size_t n, cap;
    long steps_all;
    double first_unrecorded; /* start of the first step past the limit; INFINITY */
    double *xbytes;          /* KV bytes per request id < max_req; NAN: no transfer */
    int oom;
};

static void on_step(void *ctx, const sv_step_event_t *ev)
{
    sv_tracer_t *t = ctx;
    t->steps_all++;
    if ((long)t->n >= t->max_steps) {
        if (isinf(t->first_unrecorded)) t->first_unrecorded = ev->start;
        return;
    }
    if (SV_GROW(t->steps, t->cap, t->n + 1)) {
        t->oom = 1;
        if (isinf(t->first_unrecorded)) t->first_unrecorded = ev->start;
        t->max_steps = (long)t->n; /* stop here: the trace is cut where memory ran out */
        return;
    }
    t->steps[t->n++] = (step_rec_t){ev->replica, ev->start, ev->dur, ev->info};
}

static void on_xfer(void *ctx, int32_t id, int from, int to, double bytes)
{
    sv_tracer_t *t = ctx;
    (void)from;
    (void)to;
    if (id >= 0 && id < t->max_req) t->xbytes[id] = bytes;
}

int sv_tracer_new(long max_steps, long max_requests, sv_tracer_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_tracer_t *t = calloc(1, sizeof *t);
    if (!t) return sv_errorf(err, SV_ENOMEM, "out of memory for the trace");
    t->max_steps = max_steps > 0 ? max_steps : SV_TRACE_MAX_STEPS;
    t->max_req = max_requests > 0 ? max_requests : SV_TRACE_MAX_REQUESTS;
    t->first_unrecorded = INFINITY;
    t->xbytes = malloc((size_t)t->max_req * sizeof *t->xbytes);
    if (!t->xbytes) {
        free(t);
        return sv_errorf(err, SV_ENOMEM, "out of memory for the trace");
    }
    for (long i = 0; i < t->max_req; i++)
        t->xbytes[i] = NAN;
    *out = t;
    return 0;
}

void sv_tracer_free(sv_tracer_t *t)
{
    if (!t) return;
    free(t->steps);
    free(t->xbytes);
    free(t);
}

void sv_tracer_hooks(sv_tracer_t *t, sv_sim_hooks_t *hooks)
{
    memset(hooks, 0, sizeof *hooks);
    hooks->ctx = t;
    hooks->step = on_step;
    hooks->xfer = on_xfer;
}

/* ---- writing -------------------------------------------------------------------------- */

static long long ns(double t)
{
    return llround(t * 1e9);
}

/* Integer nanoseconds as microseconds: "1234.567". */
static void put_us(FILE *f, long long v)
{
    if (v < 0) {
        fputc('-', f);
        v = -v;
    }
    fprintf(f, "%lld.%03lld", v / 1000, v % 1000);
}

typedef struct out {
    FILE *f;
    int first;
} out_t;

/* Start the next event: the separator, then "{". */
static void ev_open(out_t *o)
{
    fputs(o->first ? "\n{" : ",\n{", o->f);
    o->first = 0;
}

static void meta(out_t *o, const char *what, int pid, long tid, const char *name, long sort)
{
    ev_open(o);
    fprintf(o->f,
            "\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %ld, \"args\": {\"name\": ",
            what, pid, tid);
    sv__jw_put_string(o->f, name);
    fputs("}}", o->f);
    if (sort >= 0) {
        ev_open(o);
        fprintf(o->f,
                "\"name\": \"%s_sort_index\", \"ph\": \"M\", \"pid\": %d, \"tid\": %ld, "
                "\"args\": {\"sort_index\": %ld}}",
                strcmp(what, "process_name") == 0 ? "process" : "thread", pid, tid, sort);
    }
}

/* A complete event: name, category, [t0, t1] in ns, pid, tid; args follow (ev_args). */
static void slice(out_t *o, const char *name, const char *cat, long long t0, long long t1, int pid,
                  long tid)
{
    ev_open(o);
    fputs("\"name\": ", o->f);
    sv__jw_put_string(o->f, name);
    fprintf(o->f, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": ", cat);
    put_us(o->f, t0);
    fputs(", \"dur\": ", o->f);
    put_us(o->f, t1 - t0);
    fprintf(o->f, ", \"pid\": %d, \"tid\": %ld", pid, tid);
}

typedef struct xfer {
    long long t0, t1;
    int link;
    int32_t id;
} xfer_t;

static int cmp_xfer(const void *a, const void *b)
{
    const xfer_t *x = a, *y = b;
    if (x->link != y->link) return x->link - y->link;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return x->id - y->id;
}

static const char *step_name(const sv_step_info_t *i)
{
    if (i->prefill_seqs > 0 && i->decode_seqs > 0) return "mixed";
    return i->prefill_seqs > 0 ? "prefill" : "decode";
}

/* The phases of one request: names and the times they start at (-1: never reached). */
static int phases(const sv_req_t *r, int disagg, const char **name, double *t0)
{
    int n = 0;
#define PH(nm, t) (name[n] = (nm), t0[n++] = (t))
    PH("client wait", r->arrival);
    PH("queue", r->start);
    PH("prefill", r->scheduled);
    if (disagg && r->xfer_start >= 0) {
        PH("KV wait", r->prefill_end);
        PH("KV transfer", r->xfer_start);
        PH("decode queue", r->xfer_end);
        PH("decode", r->decode_start);
    } else if (disagg) {
        PH("KV wait", r->prefill_end);
    } else {
        PH("decode", r->prefill_end);
    }
#undef PH
    return n;
}

static void write_requests(out_t *o, const sv_result_t *res, size_t nreq, int pid)
{
    FILE *f = o->f;
    int disagg = res->sc->disaggregated;
    for (size_t i = 0; i < nreq; i++) {
        const sv_req_t *r = &res->pool.r[i];
        int ok = r->state == SV_RQ_DONE;
        double life_end = ok ? r->last_token : r->end;
        if (life_end < r->arrival) life_end = r->arrival;
        char nm[48];
        snprintf(nm, sizeof nm, "request %zu", i);
        long long a = ns(r->arrival), e = ns(life_end);
        slice(o, nm, "request", a, e, pid, (long)i);
        fprintf(f, ", \"args\": {\"input_tokens\": %d, \"output_tokens\": %d, \"status\": \"%s\"",
                r->input, r->output, ok ? "completed" : sv_fail_name(r->fail));
        if (ok) {
            fprintf(f, ", \"ttft_ms\": %.3f, \"e2el_ms\": %.3f", sv_req_ttft(r) * 1e3,
                    sv_req_e2el(r) * 1e3);
            if (r->output > 1) fprintf(f, ", \"tpot_ms\": %.3f", sv_req_tpot(r) * 1e3);
        }
        if (r->replica >= 0) fprintf(f, ", \"replica\": %d", r->replica);
        if (disagg && r->xfer_start >= 0)
            fprintf(f, ", \"prefill_replica\": %d", r->prefill_replica);
        if (r->preemptions) fprintf(f, ", \"preemptions\": %u", (unsigned)r->preemptions);
        fputs("}}", f);
        const char *name[8];
        double t0[8];
        int n = phases(r, disagg, name, t0);
        for (int k = 0; k < n && t0[k] >= 0; k++) {
            double t1 = (k + 1 < n && t0[k + 1] >= 0) ? t0[k + 1] : life_end;
            long long s0 = ns(t0[k]), s1 = ns(t1);
            if (s0 < a) s0 = a;
            if (s1 > e) s1 = e;
            if (s1 <= s0) continue;
            slice(o, name[k], "phase", s0, s1, pid, (long)i);
            fputs("}", f);
        }
        if (!ok) {
            ev_open(o);
            fputs("\"name\": ", f);
            snprintf(nm, sizeof nm, "failed: %s", sv_fail_name(r->fail));
            sv__jw_put_string(f, nm);
            fputs(", \"cat\": \"request\", \"ph\": \"i\", \"s\": \"t\", \"ts\": ", f);
            put_us(f, e);
            fprintf(f, ", \"pid\": %d, \"tid\": %zu}", pid, i);
        }
    }
}

/* Transfers of the requests written, on lanes of their prefill replica's link. */
static int write_links(out_t *o, const sv_tracer_t *t, const sv_result_t *res, size_t nreq, int pid,
                       long *lane_tid)
{
    size_t nx = 0;
    for (size_t i = 0; i < nreq; i++)
        nx += res->pool.r[i].xfer_start >= 0;
    if (nx == 0) return 0;
    xfer_t *x = malloc(nx * sizeof *x);
    if (!x) return SV_ENOMEM;
    nx = 0;
    for (size_t i = 0; i < nreq; i++) {
        const sv_req_t *r = &res->pool.r[i];
        if (r->xfer_start < 0) continue;
        double end = r->xfer_end >= 0 ? r->xfer_end : r->end;
        if (end < r->xfer_start) end = r->xfer_start;
        x[nx++] = (xfer_t){ns(r->xfer_start), ns(end), r->prefill_replica, (int32_t)i};
    }
    qsort(x, nx, sizeof *x, cmp_xfer);
    long long *lane_end = NULL;
    int nlanes = 0, link = -1, named = 0;
    size_t caplanes = 0;
    for (size_t k = 0; k < nx; k++) {
        if (x[k].link != link) {
            link = x[k].link;
            nlanes = named = 0;
        }
        int l = 0;
        while (l < nlanes && lane_end[l] > x[k].t0)
            l++;
        if (l == nlanes) {
            if (SV_GROW(lane_end, caplanes, (size_t)nlanes + 1)) {
                free(lane_end);
                free(x);
                return SV_ENOMEM;
            }
            nlanes++;
        }
        lane_end[l] = x[k].t1;
        long tid = (long)link * 1000 + l;
        lane_tid[x[k].id] = tid;
        if (l >= named) {
            char nm[96];
            snprintf(nm, sizeof nm, "link of replica %d, lane %d", link, l);
            meta(o, "thread_name", pid, tid, nm, tid);
            named = l + 1;
        }
        const sv_req_t *r = &res->pool.r[x[k].id];
        char nm[48];
        snprintf(nm, sizeof nm, "KV of request %d", x[k].id);
        slice(o, nm, "kv_transfer", x[k].t0, x[k].t1, pid, tid);
        fprintf(o->f, ", \"args\": {\"request\": %d, \"from_replica\": %d, \"to_replica\": %d",
                x[k].id, r->prefill_replica, r->replica);
        if (!isnan(t->xbytes[x[k].id])) fprintf(o->f, ", \"bytes\": %.0f", t->xbytes[x[k].id]);
        if (r->xfer_end < 0) fputs(", \"cancelled\": true", o->f);
        fputs("}}", o->f);
    }
    free(lane_end);
    free(x);
    return 0;
}

/* ---- flows ---------------------------------------------------------------------------- */

/* The written steps of each replica in time order (a replica's steps never overlap): the
 * steps of replica i are idx[off[i] .. off[i + 1]), with their times in ns. */
typedef struct step_index {
    size_t *idx, *off;
    long long *t0, *t1; /* per recorded step */
} step_index_t;

static int index_steps(const sv_tracer_t *t, int replicas, double until, step_index_t *x)
{
    memset(x, 0, sizeof *x);
    x->off = calloc((size_t)replicas + 1, sizeof *x->off);
    x->idx = malloc((t->n ? t->n : 1) * sizeof *x->idx);
    x->t0 = malloc((t->n ? t->n : 1) * sizeof *x->t0);
    x->t1 = malloc((t->n ? t->n : 1) * sizeof *x->t1);
    if (!x->off || !x->idx || !x->t0 || !x->t1) return SV_ENOMEM;
    for (size_t i = 0; i < t->n; i++) {
        const step_rec_t *s = &t->steps[i];
        x->t0[i] = ns(s->start);
        x->t1[i] = ns(s->start + s->dur);
        if (s->start < until && s->replica >= 0 && s->replica < replicas) x->off[s->replica + 1]++;
    }
    for (int r = 0; r < replicas; r++)
        x->off[r + 1] += x->off[r];
    size_t *fill = calloc((size_t)replicas, sizeof *fill);
    if (!fill) return SV_ENOMEM;
    for (size_t i = 0; i < t->n; i++) { /* recorded in time order, so each replica's too */
        const step_rec_t *s = &t->steps[i];
        if (s->start < until && s->replica >= 0 && s->replica < replicas)
            x->idx[x->off[s->replica] + fill[s->replica]++] = i;
    }
    free(fill);
    return 0;
}

static void index_free(step_index_t *x)
{
    free(x->idx);
    free(x->off);
    free(x->t0);
    free(x->t1);
}

/* The step of replica rep running at v ns: start <= v < end (ending: start < v <= end, the
 * step that ended at v). Its record's index, or -1. */
static long step_at(const step_index_t *x, int rep, int replicas, long long v, int ending)
{
    if (rep < 0 || rep >= replicas) return -1;
    size_t lo = x->off[rep], hi = x->off[rep + 1]; /* the last step starting before (at) v */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        long long s0 = x->t0[x->idx[mid]];
        if (ending ? s0 < v : s0 <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == x->off[rep]) return -1;
    size_t k = x->idx[lo - 1];
    int in = ending ? v <= x->t1[k] : v < x->t1[k];
    return in && x->t1[k] > x->t0[k] ? (long)k : -1;
}

typedef struct point {
    long long ts;
    int pid;
    long tid;
} point_t;

/* Add the middle of slice [t0, t1) on (pid, tid) unless the last point is that slice's. */
static void add_point(point_t *p, int *n, long long t0, long long t1, int pid, long tid)
{
    long long m = t0 + (t1 - t0) / 2;
    if (*n > 0 && p[*n - 1].pid == pid && p[*n - 1].tid == tid && p[*n - 1].ts == m) return;
    p[(*n)++] = (point_t){m, pid, tid};
}

static void add_step(point_t *p, int *n, const step_index_t *x, const sv_result_t *res, long k,
                     int rep)
{
    if (k >= 0) add_point(p, n, x->t0[k], x->t1[k], res->rpool[rep] + 1, rep);
}

/* One flow per request (id = its id), from its slice to the steps and the transfer it went
 * through, each point in the middle of the slice it binds to. */
static void write_flows(out_t *o, const sv_tracer_t *t, const sv_result_t *res, size_t nreq,
                        int pid_req, const long *lane_tid, const step_index_t *x)
{
    int R = res->replicas;
    for (size_t i = 0; i < nreq; i++) {
        const sv_req_t *r = &res->pool.r[i];
        if (r->scheduled < 0) continue;
        int pre = r->prefill_replica >= 0 ? r->prefill_replica : r->replica;
        point_t p[8];
        int n = 0;
        /* the step that first scheduled it, and the one its prompt finished in */
        add_step(p, &n, x, res, step_at(x, pre, R, ns(r->scheduled), 0), pre);
        long kf = r->prefill_end >= 0 ? step_at(x, pre, R, ns(r->prefill_end), 1) : -1;
        add_step(p, &n, x, res, kf, pre);
        /* where the server made the first token: the client sees tokens shift later */
        double first = r->prefill_end;
        if (r->xfer_start >= 0 && lane_tid[i] >= 0) {
            long long x0 = ns(r->xfer_start);
            long long x1 = ns(r->xfer_end >= 0 ? r->xfer_end : r->end);
            if (x1 > x0) add_point(p, &n, x0, x1, res->npools + 1, lane_tid[i]);
            if (r->decode_start >= 0) {
                long kd = step_at(x, r->replica, R, ns(r->decode_start), 0);
                add_step(p, &n, x, res, kd, r->replica);
                if (res->sc->first_token_at_decode)
                    first = kd >= 0 ? t->steps[kd].start + t->steps[kd].dur : -1.0;
            }
        }
        /* the step that made its last token (completed requests) */
        if (r->state == SV_RQ_DONE && first >= 0 && r->first_token >= 0) {
            double last = r->last_token - (r->first_token - first);
            add_step(p, &n, x, res, step_at(x, r->replica, R, ns(last), 1), r->replica);
        }
        if (n == 0) continue;
        /* it starts on the request's own track, halfway from its arrival to the first step */
        double life_end = r->state == SV_RQ_DONE ? r->last_token : r->end;
        long long a = ns(r->arrival), s = a + (p[0].ts - a) / 2;
        if (s >= p[0].ts || s >= ns(life_end)) continue;
        char nm[48];
        snprintf(nm, sizeof nm, "request %zu", i);
        for (int k = -1; k < n; k++) {
            point_t q = k < 0 ? (point_t){s, pid_req, (long)i} : p[k];
            ev_open(o);
            fputs("\"name\": ", o->f);
            sv__jw_put_string(o->f, nm);
            fprintf(o->f,
                    ", \"cat\": \"flow\", \"ph\": \"%s\", \"bp\": \"e\", \"id\": %zu, \"ts\": ",
                    k < 0        ? "s"
                    : k == n - 1 ? "f"
                                 : "t",
                    i);
            put_us(o->f, q.ts);
            fprintf(o->f, ", \"pid\": %d, \"tid\": %ld}", q.pid, q.tid);
        }
    }
}

int sv_tracer_write(const sv_tracer_t *t, const sv_result_t *res, const char *path,
                    sv_trace_cut_t *cut, sv_error_t *err)
{
    sv_trace_cut_t c;
    memset(&c, 0, sizeof c);
    if (t->oom) return sv_errorf(err, SV_ENOMEM, "out of memory recording the trace");
    /* Where the trace stops: the first step past the limit, or the first request past it. */
    double until = INFINITY;
    if (t->steps_all > (long)t->n) until = t->first_unrecorded;
    if ((long)res->pool.n > t->max_req && res->pool.r[t->max_req].arrival < until)
        until = res->pool.r[t->max_req].arrival;
    size_t nreq = 0;
    while (nreq < res->pool.n && (long)nreq < t->max_req && res->pool.r[nreq].arrival < until)
        nreq++;
    long nsteps = 0;
    for (size_t i = 0; i < t->n; i++)
        nsteps += t->steps[i].start < until;
    c.cut = !isinf(until);
    c.until_s = c.cut ? until : 0.0;
    c.steps = nsteps;
    c.steps_all = t->steps_all;
    c.requests = (long)nreq;
    c.requests_all = (long)res->pool.n;

    FILE *f = fopen(path, "w");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    out_t o = {f, 1};
    const sv_scenario_t *sc = res->sc;
    int P = res->npools, pid_links = P + 1, pid_req = P + 2;
    fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"servesim ", f);
    fputs(SERVESIM_VERSION "\", \"scenario\": ", f);
    sv__jw_put_string(f, sc->name);
    fprintf(f,
            ", \"seed\": %llu, \"time\": \"simulated microseconds\", \"limit_steps\": %ld, "
            "\"limit_requests\": %ld, \"cut\": %s, \"steps_written\": %ld, \"steps_all\": %ld, "
            "\"requests_written\": %ld, \"requests_all\": %ld",
            (unsigned long long)sc->seed, t->max_steps, t->max_req, c.cut ? "true" : "false",
            c.steps, c.steps_all, c.requests, c.requests_all);
    if (c.cut) fprintf(f, ", \"until_s\": %.9g", c.until_s);
    fputs("},\n\"traceEvents\": [", f);

    /* Names of the tracks. */
    for (int p = 0; p < P; p++) {
        char nm[160];
        const sv_pool_result_t *pr = &res->pools[p];
        snprintf(nm, sizeof nm, "pool %s (%s, %d x %s TP%d)", pr->cfg->name,
                 sv_role_name(pr->cfg->role), pr->count, pr->cfg->gpu.name, pr->perf.set.tp);
        meta(&o, "process_name", p + 1, 0, nm, p + 1);
        for (int i = pr->first; i < pr->first + pr->count; i++) {
            snprintf(nm, sizeof nm, "replica %d", i);
            meta(&o, "thread_name", p + 1, i, nm, i);
        }
    }
    if (sc->disaggregated) meta(&o, "process_name", pid_links, 0, "KV links", pid_links);
    meta(&o, "process_name", pid_req, 0, "requests", pid_req);

    /* Steps. */
    for (size_t i = 0; i < t->n; i++) {
        const step_rec_t *s = &t->steps[i];
        if (s->start >= until) continue;
        const sv_step_info_t *in = &s->info;
        int pid = res->rpool[s->replica] + 1;
        slice(&o, step_name(in), "step", ns(s->start), ns(s->start + s->dur), pid, s->replica);
        fprintf(f,
                ", \"args\": {\"prefill_seqs\": %ld, \"prefill_tokens\": %ld, "
                "\"prefill_cached_tokens\": %ld, \"decode_seqs\": %ld, "
                "\"decode_mean_context\": %.1f, \"running\": %ld, \"waiting\": %ld, "
                "\"kv_usage_pct\": %.2f",
                in->prefill_seqs, in->prefill_tokens, in->cached_tokens, in->decode_seqs,
                in->decode_ctx_mean, in->running, in->waiting, 100.0 * in->kv_usage);
        if (in->swap_s > 0) fprintf(f, ", \"swap_ms\": %.3f", in->swap_s * 1e3);
        if (in->preempted) fputs(", \"preempted\": true", f);
        fputs("}}", f);
    }

    /* The replicas' samples as counters. */
    size_t nsm;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &nsm);
    for (size_t i = 0; i < nsm; i++) {
        const sv_sample_t *s = &sm[i];
        if (s->t >= until) break;
        int pid = res->rpool[s->replica] + 1;
        ev_open(&o);
        fprintf(f, "\"name\": \"replica %d KV usage (%%)\", \"ph\": \"C\", \"ts\": ", s->replica);
        put_us(f, ns(s->t));
        fprintf(f, ", \"pid\": %d, \"args\": {\"kv\": %.2f}}", pid, 100.0 * (double)s->kv_usage);
        ev_open(&o);
        fprintf(f, "\"name\": \"replica %d requests\", \"ph\": \"C\", \"ts\": ", s->replica);
        put_us(f, ns(s->t));
        fprintf(f, ", \"pid\": %d, \"args\": {\"running\": %d, \"waiting\": %d}}", pid, s->running,
                s->waiting);
    }

    long *lane_tid = malloc((nreq ? nreq : 1) * sizeof *lane_tid);
    step_index_t sx;
    memset(&sx, 0, sizeof sx);
    int rc = lane_tid ? index_steps(t, res->replicas, until, &sx) : SV_ENOMEM;
    for (size_t i = 0; lane_tid && i < nreq; i++)
        lane_tid[i] = -1;
    if (!rc && sc->disaggregated) rc = write_links(&o, t, res, nreq, pid_links, lane_tid);
    if (!rc) {
        for (size_t i = 0; i < nreq; i++) {
            char nm[48];
            snprintf(nm, sizeof nm, "request %zu", i);
            meta(&o, "thread_name", pid_req, (long)i, nm, (long)i);
        }
        write_requests(&o, res, nreq, pid_req);
        write_flows(&o, t, res, nreq, pid_req, lane_tid, &sx);
    }
    index_free(&sx);
    free(lane_tid);
    fputs("\n]}\n", f);
    if (rc) {
        fclose(f);
        return sv_errorf(err, rc, "out of memory writing the trace %s", path);
    }
    if (sv__close_out(f, path, err)) return SV_EIO;
    if (cut) *cut = c;
    return 0;
}
