/*
 * The simulator: one run of a scenario. It owns the event queue and drives the client
 * (arrivals, the max_concurrency semaphore, timeouts), the router, the pools of replicas
 * and, when prefill and decode are disaggregated, the hand-off of each prefilled request
 * to a decode replica over a KV link; it feeds metrics and leaves a result for the report.
 *
 * Disaggregation: a prefill replica prefills (DistServe's first token is its last
 * prefill step), then the request waits, its KV pinned on the prefill replica, until a
 * decode replica has room (blocks for its KV and a sequence slot), FIFO over requests;
 * the KV then crosses the prefill replica's link (latency + bytes / bandwidth, shared
 * fairly or FIFO among concurrent transfers); when it lands the prefill blocks are freed
 * and the decode replica takes the request into its batch at its next step. A full
 * decode pool therefore backs up into the prefill pool, which stalls.
 *
 * Autoscaling: each pool allocates its autoscaler's max_replicas at setup; a replica is
 * off, starting (cold start: paid, not routed to), active, or draining (not routed to,
 * finishing what it holds, then off). The router and the hand-off only see active
 * replicas. Cost, energy and GPU-hours count the time a replica is up.
 *
 * Sessions (workload.sessions): the client starts sessions at the workload's arrivals (a
 * closed loop, rate inf with max_concurrency N, keeps N sessions live instead);
 * when a call of a chain ends completed, its session's next call is created and sent a
 * think time later (its prompt the history when asked); a failed call ends its session and
 * the calls not yet made are never sent (counted as not sent, not as requests). A fanout
 * sends its calls together. The horizon cuts sessions whose next call is not yet due.
 *
 * Event order at equal times is insertion order (engine.h), so a run is a pure
 * function of the scenario and its seed.
 *
 * Ownership: sv_sim_run() returns a result the caller frees with sv_result_free(); the
 * result borrows the scenario, which must outlive it.
 */
#ifndef SERVESIM_SIM_H
#define SERVESIM_SIM_H

#include "servesim/base/error.h"
#include "servesim/metrics/metrics.h"
#include "servesim/metrics/sessions.h"
#include "servesim/cost/perf.h"
#include "servesim/engine/link.h"
#include "servesim/engine/replica.h"
#include "servesim/cluster/router.h"
#include "servesim/traffic/request.h"
#include "servesim/cluster/scenario.h"

/* What one pool did. */
typedef struct sv_pool_result {
    const sv_pool_cfg_t *cfg;
    sv_perf_t perf;
    sv_perf_t draft; /* speculative: draft: the draft model's cost model perf borrows */
    sv_memplan_t mem;
    long max_model_len;
    int first, count; /* its replicas are [first, first + count) */
    double gpus;      /* count x tp */
    double cost_usd, energy_j;
    double busy_share; /* busy time / time up, over its replicas (autoscaled: those up) */
    double kv_usage_p50, kv_usage_p99, kv_usage_max;
    long preemptions, steps, decode_steps, handoffs;
    double mean_decode_batch; /* sequences per decode step */
    double stall_s;           /* summed over replicas: idle while requests waited (no KV room) */
    double link_bytes, link_busy_s; /* prefill pools: KV sent, time the links moved bytes */
    long transfers;
    /* Autoscaling (all pools; a fixed pool is up all run): */
    double gpu_hours;            /* GPUs x hours up, cold starts and drains included */
    double mean_up;              /* replicas up, averaged over the run */
    int peak_up;                 /* most replicas up at once */
    long scale_ups, scale_downs; /* replicas started, replicas drained */
} sv_pool_result_t;

/* One autoscaler evaluation of one pool. */
typedef struct sv_scale_point {
    double t;
    int pool;
    int active, starting, draining; /* replicas in each state before the decision */
    double measured;                /* the policy's metric */
    int desired;                    /* what the autoscaler asked for */
} sv_scale_point_t;

#define SV_MAX_SCALE_POINTS (1L << 20)

typedef struct sv_result {
    const sv_scenario_t *sc;
    sv_pool_result_t pools[SV_MAX_POOLS];
    int npools;
    sv_reqpool_t pool;
    sv_metrics_t *metrics;
    sv_summary_t summary;
    int replicas;                                    /* over all pools */
    sv_replica_stats_t *rstats;                      /* one per replica */
    int *rpool;                                      /* pool index of each replica */
    double *stall_s;                                 /* per replica */
    double kv_usage_p50, kv_usage_p99, kv_usage_max; /* over all samples, 0..1 */
    long preemptions;
    double prefix_queries, prefix_hits; /* prompt tokens looked up in prefix caches, found */
    double busy_share;                  /* busy time / time up, over all replicas */
    double gpus;                        /* all pools */
    double cost_usd;                    /* sum over pools of gpus x price x duration */
    double energy_j;                    /* idle power all along + dynamic power while busy */
    double cost_per_mtok;               /* USD per million output tokens */
    double energy_per_tok;              /* J per output token */
    long events;
    double sample_interval;  /* s between kept time-series samples (more than asked if thinned) */
    double *up_s;            /* per replica: seconds up (starting, active or draining) */
    double gpu_hours;        /* all pools */
    sv_scale_point_t *scale; /* autoscaler evaluations in time order (first SV_MAX_SCALE_POINTS) */
    size_t nscale;
    sv_summary_t *class_summary;      /* workload.classes: one per class, judged by its SLO; NULL
                                         without classes */
    sv_session_log_t sessions;        /* workload.sessions: who is which call (empty without) */
    sv_session_summary_t session_sum; /* ... summarized */
} sv_result_t;

int sv_sim_run(const sv_scenario_t *sc, sv_result_t **out, sv_error_t *err);
/* Whether a run of sc (sv_sim_run) releases the records of ended requests: metrics.window
 * asked, the streaming summary, and no sessions or network (they read earlier records).
 * Its result's pool then holds no record (every reader of them ran as they were released). */
int sv_sim_windowed(const sv_scenario_t *sc);

/* Observers of a run, for timelines (servesim run --trace-json): step is called when a
 * replica starts a step, with what the step holds; xfer when request id's KV starts
 * across the link of prefill replica `from` to decode replica `to` (bytes it moves).
 * NULL hooks (or NULL members) cost the run nothing; hooks must change nothing. */
typedef struct sv_step_event {
    int replica;
    double start, dur; /* s */
    sv_step_info_t info;
} sv_step_event_t;
typedef struct sv_sim_hooks {
    void *ctx;
    void (*step)(void *ctx, const sv_step_event_t *ev);
    void (*xfer)(void *ctx, int32_t id, int from, int to, double bytes);
} sv_sim_hooks_t;
/* sv_sim_run() with hooks (NULL: none); the result is the same with or without. */
int sv_sim_run_hooked(const sv_scenario_t *sc, const sv_sim_hooks_t *hooks, sv_result_t **out,
                      sv_error_t *err);
void sv_result_free(sv_result_t *res);

/*
 * A run driven step by step (sv_sim_run_hooked is open, then close): sv_sim_open sets it
 * up and schedules its first events; sv_sim_advance handles every event up to a time;
 * sv_sim_close runs it to its end (the horizon, or when nothing is left) and hands back
 * the result. Advancing in steps and closing gives the result sv_sim_run gives.
 *
 * With `external` set (SV_SIM_EXTERNAL), requests also come from outside: sv_sim_inject
 * adds one that arrives at the run's current time (sv_sim_now), and the run does not end
 * before sv_sim_close however quiet it is (the sampler and autoscalers go on);
 * sv_sim_advance then moves the clock to the time asked even when no event lies there.
 * The other flags, for a server whose clients are not the scenario's (servesim serve):
 * SV_SIM_ONLY_EXTERNAL, the workload sends no request of its own; SV_SIM_UNHELD, an
 * injected request is sent at once, past the client's semaphore (it still holds a slot).
 * Between calls sv_sim_next, sv_sim_result and sv_sim_replica read where the run stands.
 *
 * Ownership: sv_sim_open returns a run freed by sv_sim_close (which also frees it on
 * error); err of sv_sim_open (may be NULL) receives the message of an error that stops
 * the run while it advances, and must outlive the run; sv_sim_close copies it to its own
 * err. The result is the caller's (sv_result_free).
 */
typedef struct sv_sim sv_sim_t;
enum {
    SV_SIM_EXTERNAL = 1,      /* requests from outside too; the run lasts until closed */
    SV_SIM_ONLY_EXTERNAL = 2, /* ... and none of the workload's own (implies EXTERNAL) */
    SV_SIM_UNHELD = 4         /* injected requests skip the client's semaphore */
};
int sv_sim_open(const sv_scenario_t *sc, const sv_sim_hooks_t *hooks, int external, sv_sim_t **out,
                sv_error_t *err);
/* Handle the events up to time t (never past the horizon). 0, or the code of the error
 * that stopped the run (then only sv_sim_close is left to call). */
int sv_sim_advance(sv_sim_t *s, double t);
double sv_sim_now(const sv_sim_t *s);
/* The time of the next event the run will handle (now while replicas are about to start
 * steps); INFINITY when none is left before the horizon. */
double sv_sim_next(const sv_sim_t *s);
/* What the run holds so far (requests, pools, replica count; summaries only once closed)
 * and its replica i: borrowed, valid until the next call that moves the run. */
const sv_result_t *sv_sim_result(const sv_sim_t *s);
const sv_replica_t *sv_sim_replica(const sv_sim_t *s, int i);
long sv_sim_ended(const sv_sim_t *s); /* requests ended (completed or failed) so far */
/* A request of input and output tokens from outside (its class the first, no prompt
 * identity), arriving now: the client sends it or holds it at its semaphore (sent at
 * once with SV_SIM_UNHELD). Its id in
 * *id. 0, SV_EINVAL for fewer than 1 token of either, or the run's error code. */
int sv_sim_inject(sv_sim_t *s, int32_t input, int32_t output, int32_t *id);
/* The same with the prompt's identity: seg (copied) holds nseg segments whose lengths add
 * up to input (NULL, 0: a prompt no other shares). */
int sv_sim_inject_prompt(sv_sim_t *s, int32_t input, int32_t output, const sv_segment_t *seg,
                         int nseg, int32_t *id);
/* The client of sent request id disconnected: it fails now as SV_FAIL_ABORTED wherever it
 * is (waiting, running, in a KV transfer), its KV freed at once or when the step it is in
 * ends, as vLLM's engine aborts a request whose HTTP client left. Nothing for a request
 * already ended. 0, SV_EINVAL for an id never sent, or the run's error code. */
int sv_sim_abort(sv_sim_t *s, int32_t id);
/* Run to the end, check the invariants, summarize, free the run. */
int sv_sim_close(sv_sim_t *s, sv_result_t **out, sv_error_t *err);

#endif
