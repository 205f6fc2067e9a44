/*
 * The simulator (see include/servesim/cluster/sim.h): the event loop, the benchmark client
 * (arrivals, semaphore, closed loop, timeouts), routing over pools, the prefill-to-decode
 * hand-off with its KV links, sampling, and the cost and energy totals of a run.
 */
#include "servesim/cluster/sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/base/numeric.h"
#include "servesim/cluster/network.h"
#include "servesim/engine/engine.h"
#include "servesim/traffic/identity.h"
#include "servesim/traffic/session.h"
#include "servesim/traffic/workload.h"
#include "base/vec_int.h"

enum {
    EV_ARRIVAL = 1,
    EV_DISPATCH,
    EV_STEP_END,
    EV_TIMEOUT,
    EV_SAMPLE,
    EV_LINK,
    EV_SCALE,
    EV_READY,
    EV_RECEIVED, /* the last token reached the client (network): its slot is free */
    EV_TURN,     /* a session's next call is due (id: the session) */
    EV_ENGINE_IN, /* a request passed its replica's API server: the engine core has it */
    EV_PP_EXIT    /* a replica's oldest micro-batch leaves its last pipeline stage */
};

/* The life of a replica under an autoscaler (a fixed pool's replicas stay ACTIVE). */
enum { RS_OFF = 0, RS_STARTING, RS_ACTIVE, RS_DRAINING };

/* Recent TTFTs for the ttft_p90 policy: a ring of the newest completions. */
#define SV_TTFT_RING 65536

/*
 * The simulator is a handful of actors, each with its own state below and its own
 * handlers in the EVENTS table; the loop pops an event and calls its handler. An actor
 * reads another's state where it must (the client asks the replicas to take a request,
 * the sampler reads the autoscaler's replica states) but owns only its own.
 */

/* The benchmark client: arrivals, the semaphore (max_concurrency), the closed loop,
 * timeouts, and the network between it and the servers. */
typedef struct client {
    sv_workload_t *wl;    /* arrivals and lengths (driven by wcfg) */
    sv_workload_cfg_t wcfg;
    sv_identity_t *ident; /* prompt identity, when the workload has any */
    uint8_t own_tail;     /* its prompts' sv_req_t.own_tail: own messages, no sessions */
    int closed;           /* a closed loop: a new request whenever a slot is free */
    int to_send;          /* closed, or requests held back: pump has work (pump) */
    int exhausted;        /* the workload has no more requests */
    long inflight;        /* sent and not ended (or their last token on the way) */
    long outstanding;     /* generated and not ended */
    long ended;           /* requests ended so far (sv_sim_ended) */
    int32_t *backlog;     /* held by the semaphore, FIFO */
    size_t nback, headback, capback;
    int have_next; /* the next arrival, drawn ahead (EV_ARRIVAL pending) */
    double next_t;
    /* An open loop's one pending EV_ARRIVAL is kept here, not in the event queue, and
     * merged with it by (time, sequence) as the API server's FIFO is: arr_on, its seq. */
    int arr_on;
    uint64_t arr_seq;
    int32_t next_in, next_out;
    long instant_fails; /* closed loop: consecutive requests that failed the instant sent */
    sv_network_t *net;  /* NULL: none; else each request's RTT / 2, and last tokens on the way */
    double *half_rtt;
    size_t cap_rtt;
    long receiving;
    double last_end; /* the latest request end: the benchmark's duration, where up time stops */
    int external;    /* requests also come from outside (sv_sim_inject) until closed */
    int only_external; /* ... and the workload sends none (SV_SIM_ONLY_EXTERNAL) */
    int unheld;        /* injected requests skip the semaphore (SV_SIM_UNHELD) */
} client_t;

/* Sessions (workload.sessions): their starts come from the client's workload. */
typedef struct sessions {
    sv_session_gen_t *sgen; /* NULL without sessions */
    long live;              /* started and not over */
    long starting;          /* 1 + the session whose calls session_start is making; 0: none */
    sv_segment_t *sbuf;     /* a prompt being built */
    size_t capsbuf;
} sessions_t;

/* The replicas and the routing to them. */
typedef struct fleet {
    sv_replica_t **reps;
    /* routing: entry replicas (colocated or prefill) and decode replicas */
    int *entry, nentry, *dec, ndec, *cand; /* cand: scratch, one slot per replica */
    int *kicks, nkicks;                    /* replicas to start a step when the instant ends */
    uint8_t *kicked;                       /* ... as a set */
    sv_router_t router, drouter;
    long dec_min_len;      /* shortest max_model_len of the decode pools */
    long dec_max_blocks;   /* most KV tokens a decode replica can ever hold */
    double *stall_since;   /* per replica: since when work waits with no room, or -1 */
    double *step_end;      /* per replica: when the step it started last ends */
    int stream_stride;     /* pipeline parallelism: the replicas' metrics streams per lane
                              (sv_engine_cfg_t.stream_stride; 0 without pp > 1) */
    sv_chain_memo_t *memo; /* the first-segment chains every replica with prefix caching
                              looks up (sv_replica_share_memo), so that each replica does
                              not hash each shared prompt again; owned, freed after the
                              replicas; NULL when no pool caches */
} fleet_t;

/* The API server's events (EV_ENGINE_IN), all a pool's fixed delay after their pushes, so
 * pushed in time order: a FIFO beside the event queue, merged with it by (time, sequence)
 * (one pushed before the last one's time goes to the queue). */
typedef struct api_ev {
    double t;
    uint64_t seq;
    int32_t id;
} api_ev_t;
typedef struct apiq {
    api_ev_t *v;
    size_t head, n, cap;
} apiq_t;

/* The earlier of the two events kept beside the queue (the API server's front, the
 * arrival's slot), kept up to date as they change so that the loop weighs one against
 * the queue's top (side_front). */
enum { SIDE_NONE = 0, SIDE_API, SIDE_ARRIVAL };
typedef struct side {
    double t;
    uint64_t seq;
    int kind; /* SIDE_* */
} side_t;

/* Disaggregation: the hand-off queue and the KV links of the prefill replicas. */
typedef struct kvlinks {
    int32_t *xq; /* prefilled requests waiting for decode room, FIFO */
    size_t nxq, headxq, capxq;
    sv_link_t *links;  /* one per replica (used for prefill replicas) */
    sv_timer_t *timer; /* per replica: EV_LINK, armed for its link's next landing */
    int32_t *buf;      /* scratch: the transfers that landed */
    size_t capbuf;
    int *recv_n;       /* per replica: transfers in flight into it (decode replicas) */
    int *moving_n;     /* scratch per replica: of those, the ones moving bytes now */
    double *cap;       /* scratch: one link's caps */
    size_t capcap;
    int contended;     /* receivers with more transfers in flight than ranks */
    int caps_dirty;    /* some receiver's count crossed its ranks: caps to recompute */
} kvlinks_t;

/* The autoscalers of the pools that have one. */
typedef struct scaler {
    int any;                          /* some pool is autoscaled */
    uint8_t *rstate;                  /* RS_* per replica */
    double *up_since;                 /* when it was last started (RS_OFF: unused) */
    sv_timer_t *ready;                /* per replica: EV_READY, armed while RS_STARTING */
    double below_since[SV_MAX_POOLS]; /* scale-down: first evaluation asking for fewer; -1 */
    int down_max[SV_MAX_POOLS];       /* ... and the most asked for since */
    double *ttft_end, *ttft_ms;       /* the ring of recent TTFTs */
    long nttft;
    size_t capscale;
} scaler_t;

/* The time series: the interval doubles (and kept rounds thin) past SV_MAX_SAMPLES. */
typedef struct sampler {
    double dt;
    long rounds, cap;
} sampler_t;

typedef struct sv_sim {
    const sv_scenario_t *sc;
    sv_result_t *res;
    sv_evq_t q;
    double now;
    client_t cl;
    sessions_t ss;
    fleet_t fl;
    kvlinks_t kv;
    apiq_t api;
    side_t side;
    scaler_t as;
    sampler_t smp;
    /* the watchdog: events that could make progress (all but samples) pending in the
     * queue, and how many were handled since a request was last generated or ended */
    long pending, since_progress, progress_bound;
    const sv_sim_hooks_t *hooks; /* observers (--trace-json); NULL: none */
    int rc;
    sv_error_t *err;     /* the message of the first halt() */
    sv_error_t scratch;  /* ... when the caller gave none */
} sim_t;

/* Requests the closed-loop client may send in a row that all fail at the instant they
 * are sent, with an open-ended (duration-bounded) workload, before the run stops. */
#define SV_MAX_INSTANT_FAILS 100000L
/* Memory the per-request records may take, checked before the run (docs/errors.md). */
#define SV_MAX_RECORD_BYTES (16.0 * 1024 * 1024 * 1024)
/* Bytes per request: its record, its decode segments and its share of the metrics. */
#define SV_BYTES_PER_REQUEST 450.0

/* Stop the run with an error: the first message is kept. */
static void halt(sim_t *s, int rc, const char *fmt, ...)
{
    if (s->rc) return;
    s->rc = rc;
    va_list ap;
    va_start(ap, fmt);
    char msg[SV_ERRMSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sv_errorf(s->err, rc, "%s", msg);
}

static sv_req_t *R(sim_t *s, int32_t id)
{
    return sv_reqpool_req(&s->res->pool, id);
}

/* Whether request id has ended: its record may be released then (a windowed pool). */
static int is_over(sim_t *s, int32_t id)
{
    if (sv_reqpool_released(&s->res->pool, id)) return 1;
    const sv_req_t *r = R(s, id);
    return r->state == SV_RQ_DONE || r->state == SV_RQ_FAILED;
}

static int progress_event(int type); /* the EVENTS table: a step towards the run's end */

static inline __attribute__((always_inline)) void push(sim_t *s, double t, int type, int32_t id)
{
    if (sv_evq_push(&s->q, t, type, id))
        halt(s, SV_ENOMEM, "out of memory: the event queue could not grow");
    else if (progress_event(type))
        s->pending++;
}

/* (Re)arm a timer (its events all make progress); a firing it had pending is cancelled. */
static void arm(sim_t *s, sv_timer_t t, double time)
{
    if (sv_evq_timer_start(&s->q, t, time))
        halt(s, SV_ENOMEM, "out of memory: the event queue could not grow");
    else
        s->pending++;
}

/* A new request; its prompt gets the workload's identity when ident is set. */
static int32_t new_request(sim_t *s, double arrival, int32_t in, int32_t out, int ident)
{
    sv_reqpool_t *p = &s->res->pool;
    if (p->n >= (size_t)SV_MAX_REQUESTS ||
        (!p->windowed && (double)(p->n + 1) * SV_BYTES_PER_REQUEST > SV_MAX_RECORD_BYTES)) {
        halt(s, SV_ELIMIT,
             "workload: more than %zu requests would exceed the bound on per-request records "
             "(%.0f GiB at about %.0f bytes each); shorten workload.duration_s or lower the rate",
             p->n, SV_MAX_RECORD_BYTES / (1024.0 * 1024 * 1024), SV_BYTES_PER_REQUEST);
        return -1;
    }
    int32_t id = sv_reqpool_add(p);
    if (id < 0) {
        halt(s, SV_ENOMEM, "out of memory after %zu requests", p->n);
        return -1;
    }
    sv_req_t *r = R(s, id);
    r->arrival = arrival;
    r->output = out;
    if (s->sc->workload.nclasses > 0) { /* the class of the request the workload just gave */
        r->cls = (uint8_t)sv_workload_last_class(s->cl.wl);
        r->priority = s->sc->workload.classes[r->cls].priority;
    }
    if (s->cl.ident && ident) {
        const sv_segment_t *seg;
        int n = sv_identity_next(s->cl.ident, id, &in, &seg);
        if (sv_reqpool_set_segments(p, id, seg, n)) {
            halt(s, SV_ENOMEM, "out of memory for prompt identities after %zu requests", p->n);
            return -1;
        }
        r->own_tail = s->cl.own_tail;
    }
    r->input = in;
    s->cl.outstanding++;
    s->since_progress = 0;
    return id;
}

/* The client holds request id at its semaphore or sends it now. */
static void send(sim_t *s, int32_t id);
static void offer(sim_t *s, int32_t id)
{
    long cap = s->sc->workload.max_concurrency;
    /* (a closed loop of sessions bounds sessions, not requests) */
    if (cap > 0 && s->cl.inflight >= cap && !(s->cl.closed && s->ss.sgen)) {
        if (SV_GROW(s->cl.backlog, s->cl.capback, s->cl.nback + 1)) {
            halt(s, SV_ENOMEM, "out of memory: the client's backlog could not grow");
            return;
        }
        s->cl.backlog[s->cl.nback++] = id;
        s->cl.to_send = 1;
    } else {
        send(s, id);
    }
}

/* ---- sessions ----------------------------------------------------------------------------- */

/* Call `turn` of session k: a request arriving now, logged as the session's. Its prompt
 * is seg[0..nseg) when given (the history), else what the workload's identity makes of
 * it, else a message of its own (so that its blocks are cached for the next call). */
static int32_t session_call(sim_t *s, long k, int32_t turn, double arrival, int32_t in, int32_t out,
                            const sv_segment_t *seg, int nseg)
{
    sv_session_log_t *log = &s->res->sessions;
    int32_t id = new_request(s, arrival, in, out, nseg == 0);
    if (id < 0) return -1;
    if (sv_session_log_request(log, id, (int32_t)k, turn)) {
        halt(s, SV_ENOMEM, "out of memory for the session log after %zu requests", s->res->pool.n);
        return -1;
    }
    sv_session_rec_t *rec = &log->s[k];
    if (rec->sent == 0) rec->start = arrival;
    rec->sent++;
    rec->last = id;
    sv_reqpool_t *p = &s->res->pool;
    sv_segment_t own = {sv_session_message_id(id), R(s, id)->input};
    if (nseg > 0) s->ss.sbuf[nseg - 1].id = sv_session_message_id(id); /* seg is sbuf */
    if (!R(s, id)->nseg &&
        sv_reqpool_set_segments(p, id, nseg > 0 ? seg : &own, nseg > 0 ? nseg : 1)) {
        halt(s, SV_ENOMEM, "out of memory for prompt identities after %zu requests", p->n);
        return -1;
    }
    return id;
}

/* workload.num_requests bounds the calls of sessions: none is made past it. */
static int session_bound(const sim_t *s)
{
    long n = s->sc->workload.num_requests;
    return n > 0 && (long)s->res->pool.n >= n;
}

/* Session rec is over (cut: a fanout past the request bound). */
static void session_over(sim_t *s, sv_session_rec_t *rec)
{
    rec->over = 1;
    rec->cut = rec->failed == 0 && rec->sent < rec->planned;
    rec->end = s->now;
    s->ss.live--;
}

/* A session starts: its first call (a chain) or all of them (a fanout) are made now
 * (those the request bound allows). */
static void session_start(sim_t *s, double t, int32_t in, int32_t out)
{
    long k = sv_session_log_open(&s->res->sessions);
    if (k < 0) {
        halt(s, SV_ENOMEM, "out of memory for the session log");
        return;
    }
    sv_session_rec_t *rec = &s->res->sessions.s[k];
    rec->planned = sv_session_turns(s->ss.sgen);
    s->ss.live++;
    int n = s->sc->sessions.shape == SV_SESSION_FANOUT ? rec->planned : 1;
    s->ss.starting = k + 1; /* calls that fail as they are sent do not end it before the rest */
    for (int i = 0; i < n && !s->rc && !session_bound(s); i++) {
        if (i > 0) sv_session_lengths(s->ss.sgen, &in, &out);
        int32_t id = session_call(s, k, i, t, in, out, NULL, 0);
        if (id >= 0) offer(s, id);
    }
    s->ss.starting = 0;
    if (!s->rc && rec->done + rec->failed == rec->sent) session_over(s, rec);
}

/* The next call of chain k is due: with history its prompt is the last call's segments,
 * its answer (under the id the engine cached its output blocks with) and a new message;
 * without, a new message alone. */
static void session_next(sim_t *s, long k)
{
    sv_session_rec_t *rec = &s->res->sessions.s[k];
    sv_reqpool_t *p = &s->res->pool;
    if (session_bound(s)) { /* cut: the rest is not sent */
        rec->cut = rec->over = 1;
        rec->end = s->now;
        s->ss.live--;
        return;
    }
    int32_t prev = rec->last, msg, out;
    sv_session_lengths(s->ss.sgen, &msg, &out);
    int n = 0;
    long in = msg;
    if (s->sc->sessions.history) {
        const sv_req_t *q = R(s, prev);
        if (SV_GROW(s->ss.sbuf, s->ss.capsbuf, (size_t)q->nseg + 2)) {
            halt(s, SV_ENOMEM, "out of memory building a session's prompt");
            return;
        }
        memcpy(s->ss.sbuf, p->seg + q->seg_off, (size_t)q->nseg * sizeof *s->ss.sbuf);
        n = q->nseg;
        s->ss.sbuf[n++] = (sv_segment_t){sv_output_segment_id(prev), q->output};
        s->ss.sbuf[n++] = (sv_segment_t){0, msg}; /* its id is the new request's */
        in += (long)q->input + q->output;
        if (in > INT32_MAX) {
            halt(s, SV_ELIMIT, "workload.sessions: session %ld's history passes 2^31 tokens", k);
            return;
        }
    }
    int32_t id = session_call(s, k, rec->sent, s->now, (int32_t)in, out, s->ss.sbuf, n);
    if (id >= 0) offer(s, id);
}

/* Call id of a session ended: the session goes on (the next call after a think time),
 * waits for its other calls (a fanout), or is over. */
static void session_ended(sim_t *s, int32_t id)
{
    sv_session_log_t *log = &s->res->sessions;
    long k = log->session[id];
    sv_session_rec_t *rec = &log->s[k];
    const sv_req_t *r = R(s, id);
    if (r->state == SV_RQ_DONE)
        rec->done++;
    else
        rec->failed++;
    if (rec->done + rec->failed < rec->sent) return; /* a fanout's other calls */
    if (s->ss.starting == k + 1) return;                 /* ... or its calls not sent yet */
    int chain = s->sc->sessions.shape == SV_SESSION_CHAIN;
    if (chain && rec->failed == 0 && rec->sent < rec->planned) {
        double think = sv_session_think(s->ss.sgen);
        rec->think_s += think;
        push(s, s->now + think, EV_TURN, (int32_t)k);
        return;
    }
    session_over(s, rec);
}

/* The side events changed (the arrival's slot, the API server's front): the earlier of
 * them by (time, sequence) into s->side. */
static void side_front(sim_t *s)
{
    side_t *f = &s->side;
    f->kind = SIDE_NONE;
    if (s->api.n > s->api.head) {
        const api_ev_t *a = &s->api.v[s->api.head];
        *f = (side_t){a->t, a->seq, SIDE_API};
    }
    if (s->cl.arr_on && (f->kind == SIDE_NONE || s->cl.next_t < f->t ||
                         (s->cl.next_t == f->t && s->cl.arr_seq < f->seq)))
        *f = (side_t){s->cl.next_t, s->cl.arr_seq, SIDE_ARRIVAL};
}

static void schedule_next_arrival(sim_t *s)
{
    s->cl.have_next = sv_workload_next(s->cl.wl, &s->cl.next_t, &s->cl.next_in, &s->cl.next_out);
    if (s->cl.have_next) { /* an EV_ARRIVAL, in its slot beside the queue */
        s->cl.arr_on = 1;
        s->cl.arr_seq = sv_evq_take_seq(&s->q);
        s->pending++;
        side_front(s);
    } else {
        s->cl.exhausted = 1;
    }
}

/* A replica may have new work. It decides its next step only once every event of this
 * instant has been handled, so requests arriving together join one step (as vLLM's
 * scheduler sees everything queued when it runs); replicas start in the order first told. */
static void kick(sim_t *s, int rep)
{
    if (s->fl.kicked[rep]) return;
    s->fl.kicked[rep] = 1;
    s->fl.kicks[s->fl.nkicks++] = rep;
}

static void finish_drain(sim_t *s, int rep);

static void start_step(sim_t *s, int rep)
{
    sv_replica_t *r = s->fl.reps[rep];
    if (s->as.rstate[rep] == RS_DRAINING) finish_drain(s, rep);
    /* (pipeline parallelism: a micro-batch can start while others are in flight) */
    if (s->fl.stream_stride ? !sv_replica_ready(r) : sv_replica_busy(r)) return;
    double d = sv_replica_start_step(r, s->now);
    if (d > 0) {
        push(s, s->now + d, EV_STEP_END, rep);
        if (s->fl.stream_stride) { /* pipeline parallelism: the micro-batch's exit */
            double x = sv_replica_exit_at(r);
            if (x >= 0) push(s, x, EV_PP_EXIT, rep);
        }
        s->fl.step_end[rep] = s->now + d;
        if (s->hooks && s->hooks->step) {
            sv_step_event_t ev = {.replica = rep, .start = s->now, .dur = d};
            sv_replica_step_info(r, &ev.info);
            s->hooks->step(s->hooks->ctx, &ev);
        }
        if (s->fl.stall_since[rep] >= 0) {
            s->res->stall_s[rep] += s->now - s->fl.stall_since[rep];
            s->fl.stall_since[rep] = -1;
        }
    } else if (s->fl.stall_since[rep] < 0 && sv_replica_waiting_visible(r, s->now)) {
        s->fl.stall_since[rep] = s->now; /* work the scheduler sees waits: no KV room */
    }
}

/* The instant is over: the replicas told of new work decide their steps. */
static void start_steps(sim_t *s)
{
    for (int i = 0; i < s->fl.nkicks; i++) {
        s->fl.kicked[s->fl.kicks[i]] = 0;
        start_step(s, s->fl.kicks[i]);
    }
    s->fl.nkicks = 0;
}

/* Request id has ended (completed or failed): its client slot is free again. */
static void ended(sim_t *s, int32_t id)
{
    sv_req_t *r = R(s, id);
    if (r->ended) {
        halt(s, SV_EINVAL, "internal error: request %d ended twice (t=%.9g s)", (int)id, s->now);
        return;
    }
    r->ended = 1;
    s->cl.ended++;
    /* its end as recorded: a request timed out inside a replica ends there when the
     * replica lets it go, later than the end that counts for the duration */
    double end = r->end >= 0 && r->end < s->now ? r->end : s->now;
    if (end > s->cl.last_end) s->cl.last_end = end;
    if (s->as.ttft_end && r->state == SV_RQ_DONE && r->first_token >= 0) {
        long k = s->as.nttft++ % SV_TTFT_RING;
        s->as.ttft_end[k] = s->now;
        s->as.ttft_ms[k] = sv_req_ttft(r) * 1e3;
    }
    if (s->cl.net && r->state == SV_RQ_DONE) { /* the client sees the end RTT/2 later */
        s->cl.receiving++;
        push(s, s->now + s->cl.half_rtt[id], EV_RECEIVED, id);
    } else {
        s->cl.inflight--;
    }
    s->cl.outstanding--;
    s->since_progress = 0;
    sv_metrics_request_end(s->res->metrics, r, id); /* (streaming mode folds it in now) */
    if (s->ss.sgen) session_ended(s, id);
}

/* A request fails outside any replica (at the client, or between pools). */
static void fail(sim_t *s, int32_t id, int reason)
{
    sv_req_t *r = R(s, id);
    r->state = SV_RQ_FAILED;
    r->fail = (uint8_t)reason;
    r->end = s->now;
    ended(s, id);
}

/* An EV_ENGINE_IN at time t: into the FIFO when it is not before its last event. */
static void push_api(sim_t *s, double t, int32_t id)
{
    apiq_t *a = &s->api;
    if (a->n > a->head && a->v[a->n - 1].t > t) {
        push(s, t, EV_ENGINE_IN, id);
        return;
    }
    if (SV_GROW(a->v, a->cap, a->n + 1)) {
        halt(s, SV_ENOMEM, "out of memory: the event queue could not grow");
        return;
    }
    a->v[a->n++] = (api_ev_t){t, sv_evq_take_seq(&s->q), id};
    s->pending++;
    if (a->n == a->head + 1) side_front(s); /* a new front */
}

static void dispatch(sim_t *s, int32_t id)
{
    sv_req_t *r = R(s, id);
    if (s->sc->disaggregated) {
        /* The decode pool must be able to hold the whole sequence, or it would wait for
         * room forever. */
        long len = (long)r->input + r->output;
        if (len > s->fl.dec_min_len) {
            fail(s, id, SV_FAIL_TOO_LONG);
            return;
        }
        if (len > s->fl.dec_max_blocks) {
            fail(s, id, SV_FAIL_KV_CAPACITY);
            return;
        }
    }
    int rep = s->fl.entry[sv_router_pick(&s->fl.router, s->fl.reps, s->fl.entry, s->fl.nentry, id)];
    if (sv_replica_submit(s->fl.reps[rep], id, s->now) != SV_FAIL_NONE) {
        ended(s, id);
        return;
    }
    /* (no kick for a replica in a step that ends later: its start_step would do nothing,
     * wherever it stood among the kicks, as at the API server's front) */
    if (!(sv_replica_busy(s->fl.reps[rep]) && s->fl.step_end[rep] > s->now)) kick(s, rep);
    /* The replica's API server (HTTP, tokenisation, the hand-over to the engine core's
     * input queue) takes engine.api_server_ms before its scheduler sees the request: the
     * replica holds it till then (the router counts it), and is woken when it is through. */
    double api = s->sc->pools[s->res->rpool[rep]].engine.api_server;
    if (api > 0) push_api(s, s->now + api, id);
}

static void send(sim_t *s, int32_t id)
{
    R(s, id)->start = s->now;
    sv_metrics_request_start(s->res->metrics, id, R(s, id));
    s->cl.inflight++;
    if (s->sc->workload.timeout > 0) push(s, s->now + s->sc->workload.timeout, EV_TIMEOUT, id);
    double up = 0.0; /* the way to the server: half the request's round trip */
    if (s->cl.net) {
        if (SV_GROW(s->cl.half_rtt, s->cl.cap_rtt, (size_t)id + 1)) {
            halt(s, SV_ENOMEM, "out of memory for the network round trips");
            return;
        }
        /* the request's class's own round trip, else the network's (none: 0) */
        const sv_network_cfg_t *c = &s->sc->class_rtt[R(s, id)->cls];
        if (!c->enabled) c = &s->sc->network;
        up = s->cl.half_rtt[id] = c->enabled ? sv_network_rtt_of(s->cl.net, c) / 2.0 : 0.0;
    }
    if (s->sc->router_latency + up > 0)
        push(s, s->now + s->sc->router_latency + up, EV_DISPATCH, id);
    else
        dispatch(s, id);
}

/* Send what the semaphore now allows: held requests first, then (closed loop) new ones. */
static void session_start(sim_t *s, double t, int32_t in, int32_t out);
static int session_bound(const sim_t *s);

/* A closed loop of sessions (rate inf and max_concurrency): that many users, each
 * starting a new session when their last one is over, until sessions.count. */
static void pump_sessions(sim_t *s)
{
    long cap = s->sc->workload.max_concurrency;
    while (!s->rc && !s->cl.exhausted && s->ss.live < cap) {
        double t;
        int32_t in, out;
        if (session_bound(s) || !sv_workload_next(s->cl.wl, &t, &in, &out)) {
            s->cl.exhausted = 1;
            break;
        }
        session_start(s, s->now, in, out);
    }
}

static void pump_send(sim_t *s)
{
    long cap = s->sc->workload.max_concurrency;
    if (s->cl.closed && s->ss.sgen) {
        pump_sessions(s);
        return;
    }
    while (!s->rc && (cap == 0 || s->cl.inflight < cap)) {
        if (s->cl.headback < s->cl.nback) {
            send(s, s->cl.backlog[s->cl.headback++]);
            continue;
        }
        if (!s->cl.closed || s->cl.exhausted) break;
        double dur = s->sc->workload.duration;
        double t;
        int32_t in, out;
        if ((dur > 0 && s->now > dur) || !sv_workload_next(s->cl.wl, &t, &in, &out)) {
            s->cl.exhausted = 1;
            break;
        }
        int32_t id = new_request(s, s->now, in, out, 1);
        if (id < 0) break;
        send(s, id);
        /* A request that fails the instant it is sent frees its slot at once; with no
         * request bound the loop would resend forever without time moving. */
        const sv_req_t *r = R(s, id);
        s->cl.instant_fails = r->state == SV_RQ_FAILED && r->end == s->now ? s->cl.instant_fails + 1 : 0;
        if (s->cl.instant_fails >= SV_MAX_INSTANT_FAILS && s->sc->workload.num_requests == 0)
            halt(s, SV_ELIMIT,
                 "workload: the closed-loop client sent %ld requests in a row at t=%.6g s that "
                 "all failed the instant they were sent (last: %s); with workload.duration_s "
                 "and no workload.num_requests it would resend them forever",
                 s->cl.instant_fails, s->now, sv_fail_name(r->fail));
    }
}

/* (An open loop with nothing held back has nothing to send: the common case, after every
 * event, checked inline on one flag, to_send.) */
static inline void pump(sim_t *s)
{
    if (!s->cl.to_send) return;
    pump_send(s);
    s->cl.to_send = s->cl.closed || s->cl.headback < s->cl.nback;
}

static void arrive(sim_t *s)
{
    if (s->ss.sgen) {
        double t = s->cl.next_t;
        int32_t in = s->cl.next_in, out = s->cl.next_out;
        if (session_bound(s)) { /* workload.num_requests reached: no more sessions */
            s->cl.have_next = 0;
            s->cl.exhausted = 1;
            return;
        }
        schedule_next_arrival(s);
        session_start(s, t, in, out);
        return;
    }
    int32_t id = new_request(s, s->cl.next_t, s->cl.next_in, s->cl.next_out, 1);
    if (id < 0) return;
    schedule_next_arrival(s);
    offer(s, id);
}

/* ---- disaggregation ------------------------------------------------------------------ */

/* Bytes on the prefill replica's link (tp x the per-GPU bandwidth) for request id: its
 * tokens x the busier side's per-GPU bytes x the prefill tp (sv_perf_kv_handoff), so that
 * the link's time is that of the busiest GPU's NIC. */
static double kv_bytes(sim_t *s, int32_t id)
{
    const sv_req_t *r = R(s, id);
    const sv_perf_t *pre = &s->res->pools[s->res->rpool[r->prefill_replica]].perf;
    const sv_perf_t *dec = &s->res->pools[s->res->rpool[r->replica]].perf;
    sv_kv_handoff_t h;
    sv_perf_kv_handoff(pre, dec, &h);
    /* only what the decode replica's prefix cache lacks crosses the link */
    return (double)(sv_replica_handoff_tokens(s->fl.reps[r->prefill_replica], id) -
                    sv_replica_transfer_cached(s->fl.reps[r->replica], id)) *
           h.link_tok;
}

/* The attention ranks of replica d's layout (1 without DP attention): transfers into a
 * DP-attention worker are taken as spread over its ranks, each with its own NICs. */
static int recv_ranks(const sim_t *s, int d)
{
    int dp = s->res->pools[s->res->rpool[d]].perf.dp;
    return dp > 1 ? dp : 1;
}

/* A transfer into d started (+1) or ended (-1); past d's ranks its receivers contend. */
static void recv_count(sim_t *s, int d, int delta)
{
    int before = s->kv.recv_n[d];
    s->kv.recv_n[d] += delta;
    int ranks = recv_ranks(s, d), after = s->kv.recv_n[d];
    s->kv.contended += (after > ranks) - (before > ranks);
    if (before > ranks || after > ranks) s->kv.caps_dirty = 1;
}

/*
 * Receiver NIC contention (docs/disaggregation.md, "Receiving links"): the n transfers
 * moving bytes into one decode replica (past their latency) share its GPUs' receive links
 * fairly, so one moves at most ranks / n of the rate its receivers take alone: on its
 * sender's link, tp x the per-GPU bandwidth x (link_gpu / recv_gpu) x ranks / n
 * (sv_perf_kv_handoff: a lone transfer's receivers are never the busier side). No cap
 * while n <= ranks.
 */
static double recv_cap(sim_t *s, int p, int32_t id)
{
    const sv_req_t *r = R(s, id);
    int d = r->replica, n = s->kv.moving_n[d], ranks = recv_ranks(s, d);
    if (n <= ranks) return INFINITY;
    const sv_perf_t *pre = &s->res->pools[s->res->rpool[p]].perf;
    const sv_perf_t *dec = &s->res->pools[s->res->rpool[d]].perf;
    sv_kv_handoff_t h;
    sv_perf_kv_handoff(pre, dec, &h);
    return s->kv.links[p].bw * (h.link_gpu / h.recv_gpu) * ranks / n;
}

static void service_link(sim_t *s, int rep);

/*
 * After the receivers' counts changed: the transfers moving into each receiver at now
 * counted, then each link's caps from them. A link whose caps would bind nowhere (none
 * below its equal share now) keeps none, so its rates, events and bytes stay what they were
 * without receivers; a link whose caps change is moved to now at its old rates first.
 * Landings on the way change counts: repeat.
 */
static void settle_caps(sim_t *s)
{
    int n = s->res->replicas;
    while (s->kv.caps_dirty && !s->rc) {
        s->kv.caps_dirty = 0;
        memset(s->kv.moving_n, 0, (size_t)n * sizeof *s->kv.moving_n);
        for (int p = 0; p < n; p++)
            for (size_t i = 0; i < s->kv.links[p].n; i++)
                if (s->kv.links[p].x[i].ready <= s->now)
                    s->kv.moving_n[R(s, s->kv.links[p].x[i].id)->replica]++;
        for (int p = 0; p < n && !s->rc; p++) {
            sv_link_t *l = &s->kv.links[p];
            if (l->n == 0) continue;
            if (SV_GROW(s->kv.cap, s->kv.capcap, l->n)) {
                halt(s, SV_ENOMEM, "out of memory: a KV link's caps could not grow");
                return;
            }
            size_t m = 0;
            for (size_t i = 0; i < l->n; i++)
                m += l->x[i].ready <= s->now;
            double eq = m ? (l->fifo ? l->bw : l->bw / (double)m) : INFINITY;
            int binds = 0, change = 0;
            for (size_t i = 0; i < l->n; i++) {
                s->kv.cap[i] = recv_cap(s, p, l->x[i].id);
                binds |= s->kv.cap[i] < eq;
            }
            for (size_t i = 0; i < l->n; i++) {
                if (!binds) s->kv.cap[i] = INFINITY;
                change |= s->kv.cap[i] != l->x[i].cap;
            }
            if (!change) continue;
            service_link(s, p); /* to now at the old rates (it may land some) */
            for (size_t i = 0; i < l->n; i++)
                sv_link_set_cap(l, l->x[i].id, binds ? recv_cap(s, p, l->x[i].id) : INFINITY);
            service_link(s, p); /* re-arm at the new rates */
        }
    }
}

/* Move a link's bytes up to now; land the transfers that finished; re-arm its event. */
static void service_link(sim_t *s, int rep)
{
    sv_link_t *l = &s->kv.links[rep];
    if (SV_GROW(s->kv.buf, s->kv.capbuf, l->n + 1)) {
        halt(s, SV_ENOMEM, "out of memory: a KV link's transfer list could not grow");
        return;
    }
    size_t n = sv_link_advance(l, s->now, s->kv.buf, l->n + 1);
    for (size_t i = 0; i < n; i++) {
        int32_t id = s->kv.buf[i];
        sv_req_t *r = R(s, id);
        int d = r->replica;
        sv_replica_release(s->fl.reps[rep], id);
        r->xfer_end = s->now;
        recv_count(s, d, -1);
        r->decode_start = sv_replica_free_at(s->fl.reps[d], s->now);
        sv_replica_inject(s->fl.reps[d], id, s->now);
        kick(s, d);
    }
    if (n) kick(s, rep); /* freed blocks may let it admit again */
    double next = sv_link_next(l), due;
    if (next == INFINITY)
        sv_evq_timer_stop(&s->q, s->kv.timer[rep]);
    else if (!sv_evq_timer_armed(&s->q, s->kv.timer[rep], &due) || due != next)
        arm(s, s->kv.timer[rep], next);
}

/* A link's event: its landings, then the caps they change. */
static void on_link(sim_t *s, int rep)
{
    service_link(s, rep);
    if (s->kv.contended) s->kv.caps_dirty = 1; /* a transfer may have left its latency */
    settle_caps(s);
}

/* Start transfers, FIFO, while some decode replica has room for the head. */
static void start_transfers(sim_t *s)
{
    int *cand = s->fl.cand;
    while (!s->rc && s->kv.headxq < s->kv.nxq) {
        int32_t id = s->kv.xq[s->kv.headxq];
        if (is_over(s, id)) { /* it failed while waiting */
            s->kv.headxq++;
            continue;
        }
        sv_req_t *r = R(s, id);
        if (r->state != SV_RQ_HANDOFF) {
            s->kv.headxq++;
            continue;
        }
        int nc = sv_replica_can_reserve_of(s->fl.reps, s->fl.dec, s->fl.ndec, id, cand);
        if (nc == 0) return; /* head-of-line: wait for decode room */
        int d = cand[sv_router_pick(&s->fl.drouter, s->fl.reps, cand, nc, id)];
        sv_replica_reserve(s->fl.reps[d], id);
        s->kv.headxq++;
        int p = r->prefill_replica;
        r->state = SV_RQ_XFER; /* and r->replica is d (the engine wrote it) */
        r->xfer_start = s->now;
        double bytes = kv_bytes(s, id);
        if (s->sc->link.overlap) {
            /* Layer-by-layer sending overlaps the prefill: what is left is the last layer,
             * or what the link could not move during the prefill. */
            const sv_link_t *l = &s->kv.links[p];
            double left = bytes - l->bw * (r->prefill_end - r->scheduled);
            double last = bytes / s->res->pools[s->res->rpool[p]].perf.model.layers;
            bytes = left > last ? left : last;
        }
        if (s->hooks && s->hooks->xfer) s->hooks->xfer(s->hooks->ctx, id, p, d, bytes);
        service_link(s, p);
        if (sv_link_add(&s->kv.links[p], s->now, id, bytes))
            halt(s, SV_ENOMEM, "out of memory: a KV link's transfer list could not grow");
        recv_count(s, d, +1);
        service_link(s, p);
        settle_caps(s);
    }
    if (s->kv.headxq == s->kv.nxq) s->kv.headxq = s->kv.nxq = 0;
}

static void take_handoffs(sim_t *s, int rep)
{
    long n;
    const int32_t *h = sv_replica_handoffs(s->fl.reps[rep], &n);
    for (long i = 0; i < n; i++) {
        R(s, h[i])->prefill_replica = rep;
        if (SV_GROW(s->kv.xq, s->kv.capxq, s->kv.nxq + 1)) {
            halt(s, SV_ENOMEM, "out of memory: the hand-off queue could not grow");
            return;
        }
        s->kv.xq[s->kv.nxq++] = h[i];
    }
}

/* ---- autoscaling ------------------------------------------------------------------- */

/* The router and the hand-off see only active replicas, in index order. */
static void rebuild_routes(sim_t *s)
{
    s->fl.nentry = s->fl.ndec = 0;
    for (int i = 0; i < s->res->replicas; i++) {
        if (s->as.rstate[i] != RS_ACTIVE) continue;
        if (s->sc->pools[s->res->rpool[i]].role == SV_ROLE_DECODE)
            s->fl.dec[s->fl.ndec++] = i;
        else
            s->fl.entry[s->fl.nentry++] = i;
    }
}

/* Holds nothing: no request, no step, no pinned or reserved KV, nothing owed. */
static int replica_idle(const sim_t *s, int rep)
{
    const sv_replica_t *r = s->fl.reps[rep];
    return !sv_replica_busy(r) && sv_replica_running(r) == 0 && sv_replica_waiting(r) == 0 &&
           sv_replica_reserved(r) == 0 && sv_replica_tokens_owed(r) == 0 &&
           sv_replica_free_blocks(r) == sv_replica_total_blocks(r) && s->kv.links[rep].n == 0;
}

static void switch_off_at(sim_t *s, int rep, double t)
{
    if (t > s->as.up_since[rep]) s->res->up_s[rep] += t - s->as.up_since[rep];
    s->as.rstate[rep] = RS_OFF;
}

static void switch_off(sim_t *s, int rep)
{
    sv_evq_timer_stop(&s->q, s->as.ready[rep]); /* a cold start cancelled */
    s->res->up_s[rep] += s->now - s->as.up_since[rep];
    s->as.rstate[rep] = RS_OFF;
}

/* A draining replica that holds nothing any more is switched off. */
static void finish_drain(sim_t *s, int rep)
{
    if (s->as.rstate[rep] == RS_DRAINING && replica_idle(s, rep)) switch_off(s, rep);
}

/* The p-th percentile of the TTFTs (ms) of requests that ended in (now - window, now]. */
static double recent_ttft(sim_t *s, double window, double p)
{
    long n = s->as.nttft < SV_TTFT_RING ? s->as.nttft : SV_TTFT_RING, k = 0;
    double *v = malloc((size_t)(n + 1) * sizeof *v);
    if (!v) {
        halt(s, SV_ENOMEM, "out of memory: the autoscaler's TTFT window");
        return 0.0;
    }
    for (long i = 0; i < n; i++)
        if (s->as.ttft_end[i] > s->now - window) v[k++] = s->as.ttft_ms[i];
    double out = 0.0;
    if (k) {
        sv_sort_doubles(v, (size_t)k);
        out = sv_percentile_sorted(v, (size_t)k, p);
    }
    free(v);
    return out;
}

/* How long a replica of the pool takes to start: given, or its weights at the load rate. */
static double cold_start_s(const sv_autoscale_cfg_t *a, const sv_pool_result_t *pp)
{
    return a->cold_start >= 0 ? a->cold_start : pp->perf.weight_bytes_gpu / a->load_bw;
}

/* What one evaluation sees of a pool: its replicas by state, and its metric. */
typedef struct scale_view {
    int active, starting, draining;
    double m; /* the policy's metric per active replica */
} scale_view_t;

static void scale_measure(sim_t *s, int p, scale_view_t *v)
{
    const sv_autoscale_cfg_t *a = &s->sc->pools[p].autoscale;
    const sv_pool_result_t *pp = &s->res->pools[p];
    double waiting = 0, held = 0, kv = 0;
    *v = (scale_view_t){0};
    for (int i = pp->first; i < pp->first + pp->count; i++) {
        if (s->as.rstate[i] == RS_DRAINING) finish_drain(s, i);
        v->active += s->as.rstate[i] == RS_ACTIVE;
        v->starting += s->as.rstate[i] == RS_STARTING;
        v->draining += s->as.rstate[i] == RS_DRAINING;
        if (s->as.rstate[i] != RS_ACTIVE) continue;
        waiting += (double)sv_replica_waiting(s->fl.reps[i]);
        held += (double)(sv_replica_waiting(s->fl.reps[i]) + sv_replica_running(s->fl.reps[i]));
        kv += sv_replica_kv_usage(s->fl.reps[i]);
    }
    int n = v->active;
    switch (a->policy) {
    case SV_SCALE_QUEUE:
        v->m = n ? waiting / n : 0;
        break;
    case SV_SCALE_INFLIGHT:
        v->m = n ? held / n : 0;
        break;
    case SV_SCALE_KV:
        v->m = n ? kv / n : 0;
        break;
    default:
        v->m = recent_ttft(s, a->window, 90);
        break;
    }
}

/* Up at once by `need`: draining replicas first (they are warm), then cold ones. 1 if a
 * replica serves now that did not. */
static int scale_up(sim_t *s, int p, int need)
{
    const sv_autoscale_cfg_t *a = &s->sc->pools[p].autoscale;
    sv_pool_result_t *pp = &s->res->pools[p];
    int changed = 0;
    for (int i = pp->first; i < pp->first + pp->count && need > 0; i++)
        if (s->as.rstate[i] == RS_DRAINING) {
            s->as.rstate[i] = RS_ACTIVE;
            need--, changed = 1, pp->scale_ups++;
        }
    double cold = cold_start_s(a, pp);
    for (int i = pp->first; i < pp->first + pp->count && need > 0; i++)
        if (s->as.rstate[i] == RS_OFF) {
            s->as.up_since[i] = s->now;
            need--, pp->scale_ups++;
            if (cold > 0) {
                s->as.rstate[i] = RS_STARTING;
                arm(s, s->as.ready[i], s->now + cold);
            } else {
                s->as.rstate[i] = RS_ACTIVE;
                changed = 1;
            }
        }
    return changed;
}

/* Down by `drop`: cold starts not yet serving are cancelled first (newest first), then the
 * active replicas that hold the least are drained (one at least stays). 1 if a replica
 * stopped serving. */
static int scale_down(sim_t *s, int p, int drop, int active)
{
    sv_pool_result_t *pp = &s->res->pools[p];
    int changed = 0;
    for (int i = pp->first + pp->count - 1; i >= pp->first && drop > 0; i--)
        if (s->as.rstate[i] == RS_STARTING) {
            switch_off(s, i);
            drop--, pp->scale_downs++;
        }
    while (drop > 0 && active > 1) {
        int best = -1;
        long bh = 0;
        for (int i = pp->first; i < pp->first + pp->count; i++) {
            if (s->as.rstate[i] != RS_ACTIVE) continue;
            long h = sv_replica_waiting(s->fl.reps[i]) + sv_replica_running(s->fl.reps[i]);
            if (best < 0 || h < bh) best = i, bh = h;
        }
        s->as.rstate[best] = RS_DRAINING;
        finish_drain(s, best);
        active--, drop--, changed = 1, pp->scale_downs++;
    }
    return changed;
}

/* One evaluation of pool p's autoscaler (see sv_autoscale_cfg_t): HPA's
 * ceil(n x metric / target) replicas, up at once, down after scale_down_delay to the
 * most asked for meanwhile. */
static void autoscale(sim_t *s, int p)
{
    const sv_autoscale_cfg_t *a = &s->sc->pools[p].autoscale;
    sv_pool_result_t *pp = &s->res->pools[p];
    scale_view_t v;
    scale_measure(s, p, &v);
    double want = ceil((double)v.active * v.m / a->target - 1e-9);
    int desired = want > a->max ? a->max : want < a->min ? a->min : (int)want;
    if (s->res->nscale < (size_t)SV_MAX_SCALE_POINTS) {
        if (SV_GROW(s->res->scale, s->as.capscale, s->res->nscale + 1)) {
            halt(s, SV_ENOMEM, "out of memory: the autoscaler's record could not grow");
            return;
        }
        s->res->scale[s->res->nscale++] = (sv_scale_point_t){.t = s->now,
                                                             .pool = p,
                                                             .active = v.active,
                                                             .starting = v.starting,
                                                             .draining = v.draining,
                                                             .measured = v.m,
                                                             .desired = desired};
    }
    int current = v.active + v.starting, changed = 0;
    if (desired >= current) s->as.below_since[p] = -1;
    if (desired > current) {
        changed = scale_up(s, p, desired - current);
    } else if (desired < current) {
        if (s->as.below_since[p] < 0) {
            s->as.below_since[p] = s->now;
            s->as.down_max[p] = desired;
        }
        if (desired > s->as.down_max[p]) s->as.down_max[p] = desired;
        if (s->now - s->as.below_since[p] >= a->scale_down_delay) {
            changed = scale_down(s, p, current - s->as.down_max[p], v.active);
            s->as.below_since[p] = -1;
        }
    }
    int up = 0;
    for (int i = pp->first; i < pp->first + pp->count; i++)
        up += s->as.rstate[i] != RS_OFF;
    if (up > pp->peak_up) pp->peak_up = up;
    if (changed) {
        rebuild_routes(s);
        if (s->sc->disaggregated) start_transfers(s);
    }
}

/* A cold start ended: the replica serves from now on. */
static void ready(sim_t *s, int rep)
{
    s->as.rstate[rep] = RS_ACTIVE;
    rebuild_routes(s);
    if (s->sc->disaggregated) start_transfers(s);
}

/* ---- events ----------------------------------------------------------------------------- */

static void drain(sim_t *s, int rep)
{
    long n;
    const int32_t *done = sv_replica_done(s->fl.reps[rep], &n);
    for (long i = 0; i < n; i++)
        ended(s, done[i]);
}

/* A step ended (rc: its end's return code): the common part of step_end and pp_exit,
 * inlined in both (the step's end is the hot path). */
static inline __attribute__((always_inline)) void stepped(sim_t *s, int rep, int rc)
{
    if (rc) halt(s, SV_ENOMEM, "out of memory in replica %d's step at t=%.9g s", rep, s->now);
    drain(s, rep);
    if (s->sc->check) {
        char msg[SV_ERRMSG_MAX - 64];
        if (sv_replica_check(s->fl.reps[rep], msg, sizeof msg))
            halt(s, SV_EINVAL, "internal error (--check) at t=%.9g s: %s", s->now, msg);
    }
    if (s->sc->disaggregated) {
        take_handoffs(s, rep);
        start_transfers(s);
    }
    pump(s);
    kick(s, rep);
}

/* A step's end as the loop handles it, inlined there (step_end is the EVENTS table's). */
static inline __attribute__((always_inline)) void step_end_now(sim_t *s, int rep)
{
    stepped(s, rep, sv_replica_end_step(s->fl.reps[rep], s->now));
}

static void step_end(sim_t *s, int rep)
{
    step_end_now(s, rep);
}

/* Pipeline parallelism: the oldest micro-batch left the last stage; its tokens are out. */
static void pp_exit(sim_t *s, int rep)
{
    stepped(s, rep, sv_replica_exit(s->fl.reps[rep], s->now));
}

/* The client gives up on request id (reason: SV_FAIL_TIMEOUT, or SV_FAIL_ABORTED when it
 * disconnected): wherever it is, it fails now and what it holds is freed (its KV once the
 * step it is in ends). */
static void give_up(sim_t *s, int32_t id, int reason)
{
    if (is_over(s, id)) return;
    sv_req_t *r = R(s, id);
    if (r->state == SV_RQ_XFER) {
        int p = r->prefill_replica;
        service_link(s, p); /* it may land at this very instant */
        if (r->state == SV_RQ_XFER) {
            sv_link_cancel(&s->kv.links[p], s->now, id);
            recv_count(s, r->replica, -1);
            sv_replica_release(s->fl.reps[p], id);
            sv_replica_unreserve(s->fl.reps[r->replica], id);
            fail(s, id, reason);
            service_link(s, p);
            settle_caps(s);
            kick(s, p);
            start_transfers(s);
            return;
        }
    }
    if (r->state == SV_RQ_HANDOFF) {
        sv_replica_release(s->fl.reps[r->prefill_replica], id);
        fail(s, id, reason);
        kick(s, r->prefill_replica);
        return;
    }
    if (r->state == SV_RQ_NEW) { /* still at the router; dispatch will skip it */
        fail(s, id, reason);
        return;
    }
    int rep = r->replica;
    sv_replica_abort(s->fl.reps[rep], id, s->now, reason);
    drain(s, rep);
    if (s->sc->disaggregated) start_transfers(s);
    pump(s);
    kick(s, rep);
}

static void timeout(sim_t *s, int32_t id)
{
    give_up(s, id, SV_FAIL_TIMEOUT);
}

/* What every part of the cluster holds now, for an error that says where a run is stuck. */
static void describe(sim_t *s, char *buf, size_t size)
{
    long waiting = 0, running = 0, reserved = 0, busy = 0;
    for (int i = 0; i < s->res->replicas; i++) {
        waiting += sv_replica_waiting(s->fl.reps[i]);
        running += sv_replica_running(s->fl.reps[i]);
        reserved += sv_replica_reserved(s->fl.reps[i]);
        busy += sv_replica_busy(s->fl.reps[i]);
    }
    int n = snprintf(buf, size,
                     "%ld requests outstanding; client: %ld sent and not ended (max_concurrency "
                     "%ld), %zu held back; replicas: %ld waiting, %ld running, %ld steps in "
                     "flight, %ld transfers reserved; hand-off queue %zu",
                     s->cl.outstanding, s->cl.inflight, s->sc->workload.max_concurrency,
                     s->cl.nback - s->cl.headback, waiting, running, busy, reserved, s->kv.nxq - s->kv.headxq);
    for (int i = 0; i < s->res->replicas && i < 4 && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "; replica %d: %ld of %ld blocks free", i,
                      sv_replica_free_blocks(s->fl.reps[i]), sv_replica_total_blocks(s->fl.reps[i]));
}

/* Anything left to happen: the periodic events re-arm while it is. */
static int live(const sim_t *s)
{
    return !s->cl.exhausted || s->cl.outstanding > 0 || s->cl.have_next || s->ss.live > 0 ||
           s->cl.external;
}

/* The client's own count: requests sent and not ended, recounted from the records. */
static void check_client(sim_t *s)
{
    long sent = 0, live = 0;
    for (size_t i = s->res->pool.base; i < s->res->pool.n; i++) { /* (released: ended) */
        const sv_req_t *r = R(s, (int32_t)i);
        int over = r->state == SV_RQ_DONE || r->state == SV_RQ_FAILED;
        if (over != r->ended) {
            halt(s, SV_EINVAL, "internal error (--check) at t=%.9g s: request %zu is %s but %s",
                 s->now, i, over ? "over" : "live", r->ended ? "counted ended" : "not counted");
            return;
        }
        sent += r->start >= 0 && !over;
        live += !over;
    }
    sent += s->cl.receiving; /* ended, their last token still on its way to the client */
    if (sent != s->cl.inflight || live != s->cl.outstanding)
        halt(s, SV_EINVAL,
             "internal error (--check) at t=%.9g s: the client counts %ld in flight and %ld "
             "outstanding, the records %ld and %ld",
             s->now, s->cl.inflight, s->cl.outstanding, sent, live);
}

static void sample(sim_t *s)
{
    /* Nothing but samples left to happen, yet requests are outstanding: no event can ever
     * move them, so the run would sample forever. */
    if (s->pending == 0 && s->fl.nkicks == 0 && s->cl.outstanding > 0) {
        char state[SV_ERRMSG_MAX - 96];
        describe(s, state, sizeof state);
        halt(s, SV_EINVAL, "internal error: the simulation is stuck at t=%.9g s: %s", s->now,
             state);
        return;
    }
    if (s->sc->check) check_client(s);
    sv_metrics_t *m = s->res->metrics;
    size_t n;
    sv_metrics_samples(m, &n);
    double next = s->smp.dt;
    int record = 1;
    if ((long)n + s->res->replicas > s->smp.cap) {
        /* Halve the rate: keep rounds 0, 2, 4, ... and continue on that grid. */
        sv_metrics_thin_samples(m);
        record = s->smp.rounds % 2 == 0;
        s->smp.rounds = (s->smp.rounds + 1) / 2;
        s->smp.dt *= 2;
        next = record ? s->smp.dt : s->smp.dt / 2;
    }
    for (int i = 0; record && i < s->res->replicas; i++) {
        sv_replica_t *r = s->fl.reps[i];
        sv_sample_t sm = {.t = s->now,
                          .replica = i,
                          .running = (int32_t)sv_replica_running(r),
                          .waiting = (int32_t)sv_replica_waiting(r),
                          .kv_usage = (float)sv_replica_kv_usage(r),
                          .batch_tokens = (int32_t)sv_replica_batch_tokens(r),
                          .up = s->as.rstate[i] != RS_OFF};
        if (sv_metrics_sample(m, &sm)) halt(s, SV_ENOMEM, "out of memory in the time series");
    }
    s->smp.rounds += record;
    if (live(s)) push(s, s->now + next, EV_SAMPLE, -1);
}

/* ---- totals --------------------------------------------------------------------------- */

/* p50, p99 and max of KV usage over the samples of replicas [first, first + count). */
static void kv_stats(sim_t *s, int first, int count, double *p50, double *p99, double *max)
{
    const sv_result_t *res = s->res;
    size_t n;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &n);
    double *v = malloc((n + 1) * sizeof *v);
    size_t k = 0;
    *p50 = *p99 = *max = 0.0;
    if (!v) {
        halt(s, SV_ENOMEM, "out of memory: the KV usage percentiles");
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (sm[i].replica >= first && sm[i].replica < first + count && sm[i].up)
            v[k++] = sm[i].kv_usage;
    if (k) {
        sv_sort_doubles(v, k);
        *p50 = sv_percentile_sorted(v, k, 50);
        *p99 = sv_percentile_sorted(v, k, 99);
        *max = v[k - 1];
    }
    free(v);
}

static void totals(sim_t *s)
{
    sv_result_t *res = s->res;
    double T = res->summary.duration, busy_all = 0.0, up_total = 0.0;
    res->gpus = res->cost_usd = res->energy_j = res->gpu_hours = 0.0;
    for (int p = 0; p < res->npools; p++) {
        sv_pool_result_t *pp = &res->pools[p];
        const sv_gpu_t *g = &pp->cfg->gpu;
        int tp =
            pp->perf.set.tp * (pp->perf.set.pp > 1 ? pp->perf.set.pp : 1); /* GPUs per replica */
        double busy = 0.0, dsteps = 0.0, dtok = 0.0;
        pp->gpus = (double)pp->count * tp;
        /* A fixed pool pays for every GPU over the benchmark's duration, as before; an
         * autoscaled one for the time each replica was up (cold starts and drains in). */
        int scaled = pp->cfg->autoscale.enabled;
        double up_all = 0.0;
        for (int i = pp->first; i < pp->first + pp->count; i++)
            up_all += scaled ? res->up_s[i] : T;
        pp->gpu_hours = up_all * tp / 3600.0;
        pp->mean_up = T > 0 ? up_all / T : 0.0;
        if (!scaled) pp->peak_up = pp->count;
        if (scaled) pp->gpus = (double)pp->peak_up * tp; /* the GPUs up at the peak */
        pp->cost_usd =
            scaled ? pp->gpu_hours * g->price_per_hour : pp->gpus * g->price_per_hour * T / 3600.0;
        res->gpu_hours += pp->gpu_hours;
        for (int i = pp->first; i < pp->first + pp->count; i++) {
            double up = scaled ? res->up_s[i] : T;
            const sv_replica_stats_t *st = &res->rstats[i];
            busy += st->busy_s;
            pp->preemptions += st->preemptions;
            pp->steps += st->steps;
            pp->decode_steps += st->decode_steps;
            pp->handoffs += st->handoffs;
            dsteps += (double)st->decode_steps;
            dtok += st->decode_tokens;
            pp->energy_j += tp * (g->idle_w * up + (g->tdp_w - g->idle_w) * st->active_s);
            pp->stall_s += res->stall_s[i];
            pp->link_bytes += s->kv.links[i].bytes;
            pp->link_busy_s += s->kv.links[i].busy_s;
            pp->transfers += s->kv.links[i].transfers;
        }
        /* busy over the time its replicas were up (all of T for a fixed pool) */
        pp->busy_share = up_all > 0 ? busy / up_all : 0.0;
        up_total += up_all;
        pp->mean_decode_batch = dsteps > 0 ? dtok / dsteps : 0.0;
        kv_stats(s, pp->first, pp->count, &pp->kv_usage_p50, &pp->kv_usage_p99, &pp->kv_usage_max);
        busy_all += busy;
        res->gpus += pp->gpus;
        res->cost_usd += pp->cost_usd;
        res->energy_j += pp->energy_j;
        res->preemptions += pp->preemptions;
    }
    for (int i = 0; i < res->replicas; i++) {
        res->prefix_queries += res->rstats[i].prefix_queries;
        res->prefix_hits += res->rstats[i].prefix_hits;
    }
    res->busy_share = up_total > 0 ? busy_all / up_total : 0.0;
    double out = (double)res->summary.total_output;
    res->cost_per_mtok = out > 0 ? res->cost_usd / (out / 1e6) : 0.0;
    res->energy_per_tok = out > 0 ? res->energy_j / out : 0.0;
    kv_stats(s, 0, res->replicas, &res->kv_usage_p50, &res->kv_usage_p99, &res->kv_usage_max);
}

void sv_result_free(sv_result_t *res)
{
    if (!res) return;
    sv_metrics_free(res->metrics);
    sv_reqpool_free(&res->pool);
    sv_session_log_free(&res->sessions);
    free(res->rstats);
    free(res->rpool);
    free(res->stall_s);
    free(res->up_s);
    free(res->scale);
    free(res->class_summary);
    free(res);
}

/* ---- setup ---------------------------------------------------------------------------- */

static int setup_pool(sim_t *s, int p, sv_engine_cfg_t *ecfg, sv_error_t *err)
{
    const sv_scenario_t *sc = s->sc;
    const sv_pool_cfg_t *pc = &sc->pools[p];
    sv_pool_result_t *pp = &s->res->pools[p];
    pp->cfg = pc;
    int rc = sv_perf_init(&pp->perf, &pc->gpu, &sc->model, &pc->perf, err);
    if (!rc && pc->perf.spec_method == SV_SPEC_DRAFT)
        rc = sv_perf_draft_init(&pp->perf, &pp->draft, &pc->draft_model, err);
    if (!rc) rc = sv_perf_memplan(&pp->perf, &pp->mem, err);
    if (rc) {
        char msg[SV_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return sv_errorf(err, rc, "pool '%s' (%d x %s, tp=%d): %s", pc->name, pc->replicas,
                         pc->gpu.name, pc->perf.tp, msg);
    }
    long cap = pp->mem.kv_tokens, mml = pc->engine.max_model_len;
    /* Attention data parallelism: a sequence's KV lives on one rank's GPUs. */
    if (pp->mem.dp_ranks > 1) cap = pp->mem.rank_kv_tokens;
    if (pp->mem.dp_ranks > 1 && mml > cap)
        return sv_errorf(err, SV_EINVAL,
                         "pool '%s': dp_attention=%d leaves each rank room for %ld tokens of KV, "
                         "less than one sequence of engine.max_model_len (%ld); lower "
                         "dp_attention or max_model_len, or give the cache more memory",
                         pc->name, pp->mem.dp_ranks, cap, mml);
    if (mml > cap)
        return sv_errorf(err, SV_EINVAL,
                         "pool '%s': engine.max_model_len (%ld) is larger than the KV cache of "
                         "one replica (%ld tokens); lower it or give the cache more memory",
                         pc->name, mml, cap);
    if (mml == 0)
        mml =
            sc->model.max_context > 0 && sc->model.max_context < cap ? sc->model.max_context : cap;
    pp->max_model_len = mml;
    *ecfg = pc->engine;
    ecfg->max_model_len = mml;
    /* Attention data parallelism, simply: each rank spends its own token budget, so the
     * replica's step takes dp_attention x max_num_batched_tokens, and the cost model costs the
     * slowest rank (docs/cost-model.md). */
    if (pp->mem.dp_ranks > 1) ecfg->max_num_batched_tokens *= pp->mem.dp_ranks;
    ecfg->prefix_caching = pc->engine.prefix_caching > 0;
    /* As vLLM's SchedulerConfig: concurrent partial prefills with no threshold given cap
     * each request's chunk at 4% of max_model_len. */
    if (ecfg->max_partial_prefills > 1 && ecfg->long_prefill_threshold == 0)
        ecfg->long_prefill_threshold = (long)(0.04 * (double)mml);
    ecfg->handoff = pc->role == SV_ROLE_PREFILL;
    ecfg->first_token_at_decode = sc->first_token_at_decode;
    ecfg->spec_seed = sv_stream_seed(sc->seed, SV_STREAM_SPEC);
    ecfg->stream_stride = s->fl.stream_stride;
    return 0;
}

/* The per-replica arrays of the result and of every actor. */
static int alloc_replicas(sim_t *s, int total, sv_error_t *err)
{
    sv_result_t *res = s->res;
    size_t n = (size_t)total;
    res->replicas = total;
    /* With pipeline parallelism each lane of a replica has its own decode steps (one
     * metrics stream per lane: replica k's lane l is k + l x total). */
    int lanes = 1;
    for (int p = 0; p < s->sc->npools; p++)
        if (s->sc->pools[p].perf.pp > lanes) lanes = s->sc->pools[p].perf.pp;
    s->fl.stream_stride = lanes > 1 ? total : 0;
    res->metrics = sv_metrics_new(&s->sc->metrics, total * lanes);
    res->rstats = calloc(n, sizeof *res->rstats);
    res->rpool = calloc(n, sizeof *res->rpool);
    res->stall_s = calloc(n, sizeof *res->stall_s);
    res->up_s = calloc(n, sizeof *res->up_s);
    fleet_t *f = &s->fl;
    f->reps = calloc(n, sizeof *f->reps);
    f->stall_since = malloc(n * sizeof *f->stall_since);
    f->step_end = calloc(n, sizeof *f->step_end);
    f->entry = malloc(n * sizeof *f->entry);
    f->dec = malloc(n * sizeof *f->dec);
    f->cand = malloc(n * sizeof *f->cand);
    f->kicks = malloc(n * sizeof *f->kicks);
    f->kicked = calloc(n, sizeof *f->kicked);
    s->kv.links = calloc(n, sizeof *s->kv.links);
    s->kv.timer = malloc(n * sizeof *s->kv.timer);
    s->kv.recv_n = calloc(n, sizeof *s->kv.recv_n);
    s->kv.moving_n = calloc(n, sizeof *s->kv.moving_n);
    s->as.rstate = calloc(n, sizeof *s->as.rstate);
    s->as.up_since = calloc(n, sizeof *s->as.up_since);
    s->as.ready = malloc(n * sizeof *s->as.ready);
    if (!s->as.rstate || !s->as.up_since || !s->as.ready || !res->up_s || !f->cand || !f->kicks ||
        !f->kicked || !res->metrics || !f->reps || !res->rstats || !res->rpool || !res->stall_s ||
        !f->stall_since || !f->step_end || !s->kv.links || !s->kv.timer || !s->kv.recv_n ||
        !s->kv.moving_n || !f->entry || !f->dec)
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    return 0;
}

/* Pool p's replicas from index k on: engines, links, timers, initial states. */
static int setup_replicas(sim_t *s, int p, int k, const sv_engine_cfg_t *ecfg, sv_error_t *err)
{
    const sv_scenario_t *sc = s->sc;
    const sv_pool_cfg_t *pc = &sc->pools[p];
    sv_pool_result_t *pp = &s->res->pools[p];
    if (ecfg->prefix_caching && !s->fl.memo && !(s->fl.memo = sv_chain_memo_new()))
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    for (int i = 0; i < pc->replicas; i++, k++) {
        int rc = sv_replica_new(k, &pp->perf, pp->mem.kv_blocks, ecfg, &s->res->pool,
                                s->res->metrics, &s->fl.reps[k], err);
        if (rc) return rc;
        if (ecfg->prefix_caching) sv_replica_share_memo(s->fl.reps[k], s->fl.memo);
        s->res->rpool[k] = p;
        /* a fixed pool is up all along; an autoscaled one starts with its initial
         * replicas serving and the rest off */
        s->as.rstate[k] = !pc->autoscale.enabled || i < pc->autoscale.initial ? RS_ACTIVE : RS_OFF;
        s->fl.stall_since[k] = -1;
        if (sv_evq_timer_new(&s->q, EV_LINK, k, &s->kv.timer[k]) ||
            sv_evq_timer_new(&s->q, EV_READY, k, &s->as.ready[k]))
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        double bw = sc->link.bw_per_gpu * pp->perf.set.tp;
        sv_link_init(&s->kv.links[k], bw, sc->link.latency + sc->handoff, sc->link.fifo);
    }
    return 0;
}

/* Pool p's autoscaler, if it has one: its cold start must end within the horizon. */
static int setup_scaler(sim_t *s, int p, sv_error_t *err)
{
    const sv_scenario_t *sc = s->sc;
    const sv_pool_cfg_t *pc = &sc->pools[p];
    sv_pool_result_t *pp = &s->res->pools[p];
    if (!pc->autoscale.enabled) return 0;
    const sv_autoscale_cfg_t *a = &pc->autoscale;
    double cold = cold_start_s(a, pp);
    if (sc->horizon > 0 && cold >= sc->horizon)
        return sv_errorf(err, SV_EINVAL,
                         "pool '%s': autoscaler: the cold start (%.3g GB of weights per "
                         "GPU at %.3g GB/s = %.3g s) is not shorter than horizon_s (%g "
                         "s); give autoscaler.cold_start_s or load_bandwidth_gb_s",
                         pc->name, pp->perf.weight_bytes_gpu / 1e9, a->load_bw / 1e9, cold,
                         sc->horizon);
    s->as.any = 1;
    pp->peak_up = pc->autoscale.initial;
    s->as.below_since[p] = -1;
    return 0;
}

/* Every pool: its cost model, replicas and autoscaler; the decode pools' limits. */
static int setup_pools(sim_t *s, sv_error_t *err)
{
    const sv_scenario_t *sc = s->sc;
    s->fl.dec_min_len = s->fl.dec_max_blocks = -1;
    int k = 0, rc;
    for (int p = 0; p < sc->npools; p++) {
        sv_engine_cfg_t ecfg;
        if ((rc = setup_pool(s, p, &ecfg, err))) return rc;
        sv_pool_result_t *pp = &s->res->pools[p];
        const sv_pool_cfg_t *pc = &sc->pools[p];
        pp->first = k;
        pp->count = pc->replicas;
        if (pc->role == SV_ROLE_DECODE) {
            long usable = (pp->mem.kv_blocks - sv_watermark_blocks(&ecfg, pp->mem.kv_blocks) - 1) *
                          pp->mem.block_size;
            if (s->fl.dec_min_len < 0 || pp->max_model_len < s->fl.dec_min_len)
                s->fl.dec_min_len = pp->max_model_len;
            if (usable > s->fl.dec_max_blocks) s->fl.dec_max_blocks = usable;
        }
        if ((rc = setup_replicas(s, p, k, &ecfg, err)) || (rc = setup_scaler(s, p, err)))
            return rc;
        k += pc->replicas;
    }
    rebuild_routes(s);
    if (s->as.any) {
        s->as.ttft_end = malloc(SV_TTFT_RING * sizeof *s->as.ttft_end);
        s->as.ttft_ms = malloc(SV_TTFT_RING * sizeof *s->as.ttft_ms);
        if (!s->as.ttft_end || !s->as.ttft_ms) return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    return 0;
}

/* The per-request records are the run's one large allocation: refuse up front what
 * cannot fit the bound, naming the key that asks for it. */
/* Whether the run keeps a window of records (metrics.window, docs/performance.md): the
 * streaming summary reads none after a request ends, and neither do a run without
 * sessions (their next calls and summaries read earlier ones), a network (the client's
 * view moves every record at the end) and requests from outside (served live). */
static int windowed(const sv_scenario_t *sc, int external)
{
    return sc->metrics.window && sc->metrics.sketch && sc->metrics.nclasses == 0 &&
           !sc->sessions.given && !sc->network.enabled && !sc->has_class_rtt && !external;
}

int sv_sim_windowed(const sv_scenario_t *sc)
{
    return windowed(sc, 0);
}

static int check_record_bound(const sv_scenario_t *sc, int external, sv_error_t *err)
{
    const sv_workload_cfg_t *w = &sc->workload;
    double n_req = 0;
    const char *key = "workload.num_requests";
    if (w->num_requests > 0)
        n_req = (double)w->num_requests;
    else if (w->has_trace && sc->trace)
        n_req = (double)sc->trace->n, key = "workload.trace";
    else if (w->duration > 0 && isfinite(w->rate))
        n_req = w->rate * w->duration, key = "workload.rate x workload.duration_s";
    if (!windowed(sc, external) && n_req * SV_BYTES_PER_REQUEST > SV_MAX_RECORD_BYTES)
        return sv_errorf(err, SV_ELIMIT,
                         "%s: %.0f requests need about %.1f GiB of per-request records, over the "
                         "bound of %.0f GiB; simulate fewer requests (or shard the study)",
                         key, n_req, n_req * SV_BYTES_PER_REQUEST / (1024.0 * 1024 * 1024),
                         SV_MAX_RECORD_BYTES / (1024.0 * 1024 * 1024));
    return 0;
}

/* The client (workload, sessions, prompt identity, network) and the routers. */
static int setup_client(sim_t *s, sv_error_t *err)
{
    const sv_scenario_t *sc = s->sc;
    client_t *c = &s->cl;
    int rc;
    c->wcfg = sc->workload;
    if (sc->sessions.given) { /* the arrivals are the sessions' starts */
        c->wcfg.num_requests = sc->sessions.count;
        if ((rc = sv_session_gen_new(&sc->sessions, &sc->workload, sc->seed, &s->ss.sgen, err)))
            return rc;
    }
    if ((rc = sv_workload_new(&c->wcfg, sc->trace, sc->seed, &c->wl, err))) return rc;
    if ((sc->shared_prefix.given || sc->prompts) &&
        (rc = sv_identity_new(sc->shared_prefix.given ? &sc->shared_prefix : NULL, sc->prompts,
                              sc->seed, &c->ident, err)))
        return rc;
    /* (a session's later calls repeat its first call's message in their history) */
    c->own_tail = (uint8_t)(c->ident && !s->ss.sgen && sv_identity_own_messages(c->ident));
    if (sv_router_init(&s->fl.router, (sv_route_t)sc->route,
                       sv_stream_seed(sc->seed, SV_STREAM_ROUTER)) ||
        sv_router_init(&s->fl.drouter, (sv_route_t)sc->decode_route,
                       sv_stream_seed(sc->seed, SV_STREAM_ROUTER + 1)))
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    if ((sc->network.enabled || sc->has_class_rtt) &&
        !(c->net = sv_network_new(&sc->network, sc->seed)))
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    c->closed =
        isinf(sc->workload.rate) && sc->workload.max_concurrency > 0 && !sc->workload.has_trace;
    c->to_send = c->closed;
    return 0;
}

static int setup(sim_t *s, sv_error_t *err)
{
    const sv_scenario_t *sc = s->sc;
    sv_evq_init(&s->q, 0);
    s->res->npools = sc->npools;
    int total = 0, rc;
    for (int p = 0; p < sc->npools; p++)
        total += sc->pools[p].replicas;
    if ((rc = alloc_replicas(s, total, err)) || (rc = setup_pools(s, err)) ||
        (rc = check_record_bound(sc, s->cl.external, err)) || (rc = setup_client(s, err)))
        return rc;
    if (windowed(sc, s->cl.external) &&
        sv_reqpool_window(&s->res->pool, sc->metrics.on_record, sc->metrics.out_ctx))
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    /* The engine's state of ended requests goes (served live, a failed request's tokens
     * are still asked of the engine): the records stay for the summary. */
    if (!s->cl.external) sv_reqpool_side_window(&s->res->pool);
    s->smp.dt = sc->metrics.sample_interval;
    s->smp.cap = SV_MAX_SAMPLES > 2L * total ? SV_MAX_SAMPLES : 2L * total;
    /* Between two request ends a replica runs at most one step per token of its longest
     * sequence (more only through preemptions); far more events than that is a livelock. */
    long longest = 0;
    for (int p = 0; p < sc->npools; p++)
        if (s->res->pools[p].max_model_len > longest) longest = s->res->pools[p].max_model_len;
    s->progress_bound = 20000000L + 4L * total * longest;
    return 0;
}

static void teardown(sim_t *s)
{
    if (s->fl.reps)
        for (int i = 0; i < s->res->replicas; i++)
            sv_replica_free(s->fl.reps[i]);
    sv_chain_memo_free(s->fl.memo);
    if (s->kv.links)
        for (int i = 0; i < s->res->replicas; i++)
            sv_link_free(&s->kv.links[i]);
    free(s->fl.reps);
    free(s->kv.links);
    free(s->kv.timer);
    free(s->kv.recv_n);
    free(s->kv.moving_n);
    free(s->kv.cap);
    free(s->fl.entry);
    free(s->fl.dec);
    free(s->fl.cand);
    free(s->fl.kicks);
    free(s->fl.kicked);
    free(s->as.rstate);
    free(s->as.up_since);
    free(s->as.ready);
    free(s->as.ttft_end);
    free(s->as.ttft_ms);
    free(s->kv.xq);
    free(s->kv.buf);
    free(s->fl.stall_since);
    free(s->fl.step_end);
    free(s->api.v);
    sv_router_free(&s->fl.router);
    sv_router_free(&s->fl.drouter);
    sv_workload_free(s->cl.wl);
    sv_identity_free(s->cl.ident);
    sv_session_gen_free(s->ss.sgen);
    free(s->ss.sbuf);
    sv_evq_free(&s->q);
    free(s->cl.backlog);
    sv_network_free(s->cl.net);
    free(s->cl.half_rtt);
}

/* The horizon ended the run: everything still in flight fails as unfinished. */
static void end_at_horizon(sim_t *s)
{
    s->now = s->sc->horizon;
    for (int i = 0; i < s->res->replicas; i++) {
        sv_replica_fail_all(s->fl.reps[i], s->now);
        drain(s, i);
    }
    for (size_t i = s->res->pool.base; i < s->res->pool.n; i++) { /* (released: ended) */
        sv_req_t *r = R(s, (int32_t)i);
        if (r->state == SV_RQ_DONE || r->state == SV_RQ_FAILED) continue;
        /* Between pools: give back the pinned prefill blocks and the decode reservation. */
        if (r->state == SV_RQ_HANDOFF || r->state == SV_RQ_XFER)
            sv_replica_release(s->fl.reps[r->prefill_replica], (int32_t)i);
        if (r->state == SV_RQ_XFER) sv_replica_unreserve(s->fl.reps[r->replica], (int32_t)i);
        if (r->start < 0) { /* still held by the client's semaphore: never sent */
            r->start = s->now;
            s->cl.inflight++;
        }
        r->state = SV_RQ_FAILED;
        r->fail = SV_FAIL_UNFINISHED;
        r->end = s->now;
        ended(s, (int32_t)i);
    }
}

/* What the client saw (network): every token of a completed request reached it RTT/2
 * after the server made it; last tokens the horizon left on the way free their slots. */
static void client_view(sim_t *s)
{
    s->cl.inflight -= s->cl.receiving;
    s->cl.receiving = 0;
    for (size_t i = 0; i < s->res->pool.n; i++) {
        sv_req_t *r = R(s, (int32_t)i);
        if (r->state != SV_RQ_DONE) continue;
        r->first_token += s->cl.half_rtt[i];
        r->last_token += s->cl.half_rtt[i];
        r->end += s->cl.half_rtt[i];
    }
}

/* Sessions add up: every call sent is one request, logged once; each session's calls
 * ended completed or failed; a chain stopped at its first failure; every session over
 * (or cut by the horizon, with no call in flight). */
static void check_sessions(sim_t *s)
{
    const sv_session_log_t *log = &s->res->sessions;
    size_t sent = 0;
    for (size_t k = 0; k < log->n; k++) {
        const sv_session_rec_t *x = &log->s[k];
        sent += (size_t)x->sent;
        int chain = s->sc->sessions.shape == SV_SESSION_CHAIN;
        if (x->done + x->failed != x->sent || x->sent > x->planned || x->sent < 1 ||
            (!x->over && !x->cut) || (chain && x->failed > 1) ||
            (chain && !x->failed && !x->cut && x->sent != x->planned)) {
            halt(s, SV_EINVAL,
                 "internal error: session %zu ends with %d of %d calls sent, %d done, %d failed%s",
                 k, x->sent, x->planned, x->done, x->failed, x->over ? "" : ", not over");
            return;
        }
    }
    if (sent != s->res->pool.n || log->nreq != s->res->pool.n || s->ss.live != 0)
        halt(s, SV_EINVAL,
             "internal error: %zu calls sent in %zu sessions, %zu requests, %zu logged, %ld "
             "sessions live",
             sent, log->n, s->res->pool.n, log->nreq, s->ss.live);
}

/* The invariants every run must end with, checked every time: each request ended once,
 * no client slot held, every KV block free, no reservation or owed token left. */
static void check_end(sim_t *s)
{
    for (int i = 0; i < s->res->replicas; i++) {
        const sv_replica_t *r = s->fl.reps[i];
        long free_b = sv_replica_free_blocks(r), total = sv_replica_total_blocks(r);
        char msg[SV_ERRMSG_MAX - 64] = "";
        if (s->sc->check && sv_replica_check(r, msg, sizeof msg)) {
            halt(s, SV_EINVAL, "internal error (--check) at the end: %s", msg);
            return;
        }
        if (free_b != total || sv_replica_reserved(r) != 0 || sv_replica_tokens_owed(r) != 0 ||
            sv_replica_busy(r)) {
            halt(s, SV_EINVAL,
                 "internal error: replica %d ends the run with %ld of %ld KV blocks free, %ld "
                 "transfers reserved, %ld tokens owed%s",
                 i, free_b, total, sv_replica_reserved(r), sv_replica_tokens_owed(r),
                 sv_replica_busy(r) ? ", a step in flight" : "");
            return;
        }
    }
    size_t ended_n = s->res->pool.base; /* released: ended */
    for (size_t i = s->res->pool.base; i < s->res->pool.n; i++)
        ended_n += R(s, (int32_t)i)->ended;
    if (ended_n != s->res->pool.n || s->cl.inflight != 0)
        halt(s, SV_EINVAL, "internal error: %zu of %zu requests ended, %ld client slots still held",
             ended_n, s->res->pool.n, s->cl.inflight);
    if (s->ss.sgen) check_sessions(s);
}

int sv_sim_run(const sv_scenario_t *sc, sv_result_t **out, sv_error_t *err)
{
    return sv_sim_run_hooked(sc, NULL, out, err);
}

/* ---- the loop ------------------------------------------------------------------------ */

static void on_arrival(sim_t *s, int32_t id)
{
    (void)id;
    arrive(s);
}

static void on_dispatch(sim_t *s, int32_t id)
{
    if (!is_over(s, id) && R(s, id)->state == SV_RQ_NEW)
        dispatch(s, id); /* not timed out at the router */
}

static void on_engine_in(sim_t *s, int32_t id)
{
    if (is_over(s, id)) return;
    sv_req_t *r = R(s, id);
    if (r->state == SV_RQ_WAITING) kick(s, r->replica); /* still waiting (not timed out) */
}

static void on_received(sim_t *s, int32_t id)
{
    (void)id;
    s->cl.receiving--;
    s->cl.inflight--;
}

static void on_turn(sim_t *s, int32_t k)
{
    session_next(s, k);
}

static void on_sample(sim_t *s, int32_t id)
{
    (void)id;
    sample(s);
}

static void on_scale(sim_t *s, int32_t p)
{
    autoscale(s, p);
    if (live(s)) push(s, s->now + s->sc->pools[p].autoscale.interval, EV_SCALE, p);
}

/* Which actor handles each kind of event, and whether it counts as work for the watchdog
 * (the periodic samples and autoscaler evaluations do not). Adding an actor (another
 * arrival source, a scheduler of its own) is rows here. */
static const struct {
    void (*fn)(sim_t *s, int32_t id);
    const char *actor;
    int progress;
} EVENTS[] = {
    [EV_ARRIVAL] = {on_arrival, "client", 1},     [EV_DISPATCH] = {on_dispatch, "client", 1},
    [EV_TIMEOUT] = {timeout, "client", 1},        [EV_RECEIVED] = {on_received, "client", 1},
    [EV_TURN] = {on_turn, "sessions", 1},         [EV_STEP_END] = {step_end, "replicas", 1},
    [EV_LINK] = {on_link, "KV links", 1},    [EV_SCALE] = {on_scale, "autoscaler", 0},
    [EV_READY] = {ready, "autoscaler", 1},        [EV_SAMPLE] = {on_sample, "sampler", 0},
    [EV_ENGINE_IN] = {on_engine_in, "client", 1}, [EV_PP_EXIT] = {pp_exit, "replicas", 1},
};

static int progress_event(int type)
{
    return EVENTS[type].progress;
}

/* The watchdog: work keeps happening but no request is generated or ends. 1: halted. */
static int watchdog_halt(sim_t *s);
static inline int watchdog(sim_t *s)
{
    s->pending--;
    if (++s->since_progress <= s->progress_bound) return 0;
    return watchdog_halt(s);
}

static int watchdog_halt(sim_t *s)
{
    char state[SV_ERRMSG_MAX - 128];
    describe(s, state, sizeof state);
    halt(s, SV_ELIMIT,
         "internal error: no request was generated or ended over the last %ld events (t=%.9g "
         "s): %s",
         s->progress_bound, s->now, state);
    return 1;
}

/* The API server's front event, as the loop handles an event; its kick is left out when
 * the replica is in a step that ends later (its start_step would do nothing, wherever it
 * stood among the kicks). 1: the watchdog halted. */
static int engine_in(sim_t *s)
{
    apiq_t *a = &s->api;
    api_ev_t e = a->v[a->head++];
    if (a->head == a->n) a->head = a->n = 0;
    side_front(s);
    s->now = e.t;
    s->res->events++;
    if (watchdog(s)) return 1;
    if (!is_over(s, e.id)) {
        const sv_req_t *r = R(s, e.id);
        int rep = r->replica;
        if (r->state == SV_RQ_WAITING &&
            !(sv_replica_busy(s->fl.reps[rep]) && s->fl.step_end[rep] > s->now))
            kick(s, rep);
    }
    pump(s);
    sv_reqpool_release(&s->res->pool);
    return 0;
}

/* The arrival in its slot, as the loop handles an event. 1: the watchdog halted. */
static int arrival(sim_t *s)
{
    s->cl.arr_on = 0;
    s->now = s->cl.next_t;
    s->res->events++;
    if (watchdog(s)) return 1;
    arrive(s);
    if (!s->cl.arr_on) side_front(s); /* no next arrival (its slot took its place if any) */
    pump(s);
    sv_reqpool_release(&s->res->pool);
    return 0;
}

/* Handle the events in time order while there are any up to `until`; once each instant
 * is over, the replicas told of new work start their steps. */
static void run_until(sim_t *s, double until)
{
    sv_event_t ev;
    double next;
    while (!s->rc) {
        uint64_t seq;
        int more = sv_evq_peek(&s->q, &next, &seq), side = SIDE_NONE;
        const side_t *f = &s->side; /* the side events first when the earlier is */
        if (f->kind != SIDE_NONE &&
            (!more || f->t < next || (f->t == next && f->seq < seq))) {
            next = f->t;
            more = 1;
            side = f->kind;
        }
        if (s->fl.nkicks > 0 && (!more || next > s->now)) {
            start_steps(s); /* may schedule events, so look again */
            continue;
        }
        if (!more || next > until) break;
        if (side != SIDE_NONE) {
            if (side == SIDE_API ? engine_in(s) : arrival(s)) break;
            continue;
        }
        sv_evq_pop(&s->q, &ev);
        s->now = ev.time;
        s->res->events++;
        if (ev.type == EV_STEP_END) { /* the common event, called directly (never a timer's) */
            if (watchdog(s)) break;
            step_end_now(s, ev.id); /* (stepped pumps, before its kick: no second pump) */
            sv_reqpool_release(&s->res->pool);
            continue;
        }
        if (EVENTS[ev.type].progress && watchdog(s)) break;
        if (!ev.cancelled) EVENTS[ev.type].fn(s, ev.id);
        /* Any event may have freed a client slot (a request failed at dispatch, timed
         * out between pools, ...): the client sends what the semaphore now allows. */
        pump(s);
        sv_reqpool_release(&s->res->pool); /* (a windowed pool: between events) */
    }
}

/* The first events: the client's first requests, the sampler, the autoscalers. */
static void start(sim_t *s)
{
    const sv_scenario_t *sc = s->sc;
    if (s->cl.only_external)
        s->cl.exhausted = 1; /* every request comes from outside */
    else if (s->cl.closed)
        pump(s);
    else
        schedule_next_arrival(s);
    push(s, 0.0, EV_SAMPLE, -1);
    for (int p = 0; p < sc->npools; p++)
        if (sc->pools[p].autoscale.enabled) push(s, sc->pools[p].autoscale.interval, EV_SCALE, p);
}

/* The loop is over: the horizon fails what is left, sessions are cut, stalls and up times
 * close, and the run's invariants are checked. */
static void wind_down(sim_t *s)
{
    if (!s->rc && s->sc->horizon > 0 && s->cl.outstanding > 0) end_at_horizon(s);
    /* Sessions whose next call was not due before the horizon: the rest is not sent. */
    for (size_t k = 0; s->ss.sgen && k < s->res->sessions.n; k++) {
        sv_session_rec_t *x = &s->res->sessions.s[k];
        if (x->over || x->done + x->failed != x->sent) continue;
        x->cut = x->over = 1;
        x->end = s->now;
        s->ss.live--;
    }
    for (int i = 0; i < s->res->replicas && s->fl.stall_since; i++)
        if (s->fl.stall_since[i] >= 0) s->res->stall_s[i] += s->now - s->fl.stall_since[i];
    if (!s->rc && s->cl.outstanding != 0) {
        char state[SV_ERRMSG_MAX - 128];
        describe(s, state, sizeof state);
        halt(s, SV_EINVAL, "internal error: the simulation stopped at t=%.9g s with %s", s->now,
             state);
    }
    for (int i = 0; i < s->res->replicas && s->as.rstate; i++)
        if (s->as.rstate[i] != RS_OFF) switch_off_at(s, i, s->cl.last_end);
    if (s->cl.net) client_view(s);
    if (!s->rc && sv_metrics_oom(s->res->metrics))
        halt(s, SV_ENOMEM, "out of memory in the metrics after %zu requests", s->res->pool.n);
    if (!s->rc) check_end(s);
    if (!s->rc) sv_reqpool_release_all(&s->res->pool); /* (every record through on_record) */
}

/* The result: replica statistics, the summaries (all, per class, sessions), the totals. */
static int summarize(sim_t *s, sv_error_t *err)
{
    const sv_scenario_t *sc = s->sc;
    sv_result_t *res = s->res;
    int rc = s->rc;
    res->sample_interval = s->smp.dt;
    for (int i = 0; i < res->replicas && s->fl.reps; i++) {
        sv_replica_stats_t *st = &res->rstats[i];
        *st = *sv_replica_stats(s->fl.reps[i]);
        st->blocks_free_end = sv_replica_free_blocks(s->fl.reps[i]);
        st->blocks_total = sv_replica_total_blocks(s->fl.reps[i]);
        st->owed_end = sv_replica_tokens_owed(s->fl.reps[i]);
    }
    if (!rc) rc = sv_metrics_summarize(res->metrics, &res->pool, &res->summary, err);
    if (!rc && sc->workload.nclasses > 0) {
        res->class_summary = calloc((size_t)sc->workload.nclasses, sizeof *res->class_summary);
        if (!res->class_summary) rc = sv_errorf(err, SV_ENOMEM, "out of memory");
        for (int k = 0; !rc && k < sc->workload.nclasses; k++)
            rc = sv_metrics_summarize_class(res->metrics, &res->pool, k, &res->class_summary[k],
                                            err);
    }
    if (!rc) {
        totals(s);
        rc = s->rc; /* totals halts when its scratch memory runs out */
    }
    if (!rc && s->ss.sgen)
        rc = sv_sessions_summarize(&res->sessions, &res->pool, &res->session_sum, err);
    return rc;
}

int sv_sim_open(const sv_scenario_t *sc, const sv_sim_hooks_t *hooks, int external, sv_sim_t **out,
                sv_error_t *err)
{
    *out = NULL;
    sim_t *s = calloc(1, sizeof *s);
    if (!s) return sv_errorf(err, SV_ENOMEM, "out of memory");
    s->sc = sc;
    s->hooks = hooks;
    s->err = err ? err : &s->scratch; /* the run still reads its own messages */
    s->cl.external = external != 0;
    s->cl.only_external = (external & SV_SIM_ONLY_EXTERNAL) != 0;
    s->cl.unheld = (external & SV_SIM_UNHELD) != 0;
    s->res = calloc(1, sizeof *s->res);
    if (!s->res) {
        free(s);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    s->res->sc = sc;
    int rc = setup(s, s->err);
    if (rc) {
        teardown(s);
        sv_result_free(s->res);
        free(s);
        return rc;
    }
    start(s);
    *out = s;
    return 0;
}

/* The last time a run may reach. */
static double end_time(const sim_t *s)
{
    return s->sc->horizon > 0 ? s->sc->horizon : INFINITY;
}

int sv_sim_advance(sv_sim_t *s, double t)
{
    double until = t < end_time(s) ? t : end_time(s);
    run_until(s, until);
    if (!s->rc && s->cl.external && until > s->now && until < INFINITY) s->now = until;
    return s->rc;
}

double sv_sim_now(const sv_sim_t *s)
{
    return s->now;
}

double sv_sim_next(const sv_sim_t *s)
{
    double next;
    if (s->fl.nkicks > 0) return s->now;
    int more = sv_evq_peek_time(&s->q, &next);
    if (s->api.n > s->api.head && (!more || s->api.v[s->api.head].t < next)) {
        next = s->api.v[s->api.head].t;
        more = 1;
    }
    if (s->cl.arr_on && (!more || s->cl.next_t < next)) {
        next = s->cl.next_t;
        more = 1;
    }
    if (!more || next > end_time(s)) return INFINITY;
    return next;
}

const sv_result_t *sv_sim_result(const sv_sim_t *s)
{
    return s->res;
}

long sv_sim_ended(const sv_sim_t *s)
{
    return s->cl.ended;
}

const sv_replica_t *sv_sim_replica(const sv_sim_t *s, int i)
{
    return s->fl.reps[i];
}

int sv_sim_inject(sv_sim_t *s, int32_t input, int32_t output, int32_t *id)
{
    return sv_sim_inject_prompt(s, input, output, NULL, 0, id);
}

int sv_sim_inject_prompt(sv_sim_t *s, int32_t input, int32_t output, const sv_segment_t *seg,
                         int nseg, int32_t *id)
{
    *id = -1;
    if (s->rc) return s->rc;
    if (input < 1 || output < 1)
        return sv_errorf(s->err, SV_EINVAL,
                         "an injected request "
                                                  "needs at least 1 input and 1 output token");
    long covered = 0;
    for (int i = 0; i < nseg; i++)
        covered += seg[i].len;
    if (nseg > 0 && covered != input)
        return sv_errorf(s->err, SV_EINVAL, "internal error: an injected prompt's segments "
                         "cover %ld of its %d tokens", covered, (int)input);
    int32_t k = new_request(s, s->now, input, output, 0);
    if (k < 0) return s->rc;
    if (nseg > 0 && sv_reqpool_set_segments(&s->res->pool, k, seg, nseg)) {
        halt(s, SV_ENOMEM, "out of memory for prompt identities after %zu requests",
             s->res->pool.n);
        return s->rc;
    }
    if (s->sc->workload.nclasses > 0) { /* not one the workload drew: the first class */
        R(s, k)->cls = 0;
        R(s, k)->priority = s->sc->workload.classes[0].priority;
    }
    if (s->cl.unheld)
        send(s, k);
    else
        offer(s, k);
    *id = k;
    return s->rc;
}

int sv_sim_abort(sv_sim_t *s, int32_t id)
{
    if (s->rc) return s->rc;
    if (id < 0 || (size_t)id >= s->res->pool.n || R(s, id)->start < 0)
        return sv_errorf(s->err, SV_EINVAL, "internal error: request %d was never sent", (int)id);
    give_up(s, id, SV_FAIL_ABORTED);
    return s->rc;
}

int sv_sim_close(sv_sim_t *s, sv_result_t **out, sv_error_t *err)
{
    *out = NULL;
    s->cl.external = 0;
    run_until(s, end_time(s));
    wind_down(s);
    int rc = summarize(s, s->err);
    if (rc && err && err != s->err) *err = *s->err;
    teardown(s);
    if (rc)
        sv_result_free(s->res);
    else
        *out = s->res;
    free(s);
    return rc;
}

int sv_sim_run_hooked(const sv_scenario_t *sc, const sv_sim_hooks_t *hooks, sv_result_t **out,
                      sv_error_t *err)
{
    sv_sim_t *s;
    *out = NULL;
    int rc = sv_sim_open(sc, hooks, 0, &s, err);
    return rc ? rc : sv_sim_close(s, out, err);
}
