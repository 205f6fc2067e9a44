/*
 * A live run: the scenario's cluster simulated while requests come from outside (an HTTP
 * server: servesim serve, docs/serve.md). The caller moves the simulated clock forward
 * (sv_live_advance) and submits each request at the instant reached, so a request enters
 * the event loop when it arrives; between calls it reads how many tokens each request has
 * made, which is when a streamed token is ready. Closing runs what is in flight to its
 * end and leaves the same result a batch run leaves (summary, per-request records).
 *
 * Not thread-safe: one caller at a time (the server holds a lock around every call).
 *
 * Ownership: sv_live_open() returns a run sv_live_close() frees; the result it leaves is
 * the caller's (sv_result_free) and borrows the scenario, which must outlive both.
 */
#ifndef SERVESIM_LIVE_H
#define SERVESIM_LIVE_H

#include "servesim/base/error.h"
#include "servesim/cluster/sim.h"

typedef struct sv_live sv_live_t;

/* A run at simulated time 0. background: the scenario's own workload arrives too. */
int sv_live_open(const sv_scenario_t *sc, int background, sv_live_t **out, sv_error_t *err);
/* Handle every event up to simulated time t (s) and stand there. 0, or the error that
 * stopped the run (sv_live_error). */
int sv_live_advance(sv_live_t *l, double t);
double sv_live_next(sv_live_t *l); /* the next event's time; INFINITY: none */
double sv_live_now(const sv_live_t *l);
/* A request of input prompt and output reply tokens, sent now: its id, or -1 (the run
 * stopped: sv_live_error). */
int32_t sv_live_submit(sv_live_t *l, int32_t input, int32_t output);
/* The same with the prompt's identity (sv_sim_inject_prompt): nseg segments (copied) whose
 * lengths add up to input, so prompts that begin alike share cached KV blocks. */
int32_t sv_live_submit_prompt(sv_live_t *l, int32_t input, int32_t output,
                              const sv_segment_t *seg, int nseg);
/* The client of request id left: it fails as SV_FAIL_ABORTED and frees its KV
 * (sv_sim_abort). 0, or the error that stopped the run. */
int sv_live_abort(sv_live_t *l, int32_t id);
/* Tokens per KV block that every pool's block size is a multiple of (their gcd). */
int sv_live_block_tokens(const sv_live_t *l);
const char *sv_live_error(const sv_live_t *l);

/* Where request id stands: tokens made so far, and its record (valid until the next call). */
long sv_live_tokens(sv_live_t *l, int32_t id);
const sv_req_t *sv_live_req(sv_live_t *l, int32_t id);
/* A count that grows whenever a request may have made a token or ended: the replicas'
 * decode steps and prompt tokens computed (a step's end makes every token) and the
 * requests ended. Equal before and after an event: no request's tokens or end changed. */
double sv_live_progress(const sv_live_t *l);

/* The cluster now, summed over replicas (vLLM's gauges). */
typedef struct sv_live_gauges {
    long running, waiting;
    double kv_usage; /* mean over replicas, 0..1 */
    long preemptions;
} sv_live_gauges_t;
void sv_live_gauges(sv_live_t *l, sv_live_gauges_t *g);
/* Per replica: running, waiting, KV usage. */
void sv_live_replica(sv_live_t *l, int i, long *running, long *waiting, double *kv);
int sv_live_replicas(const sv_live_t *l);
/* Replica i's counters so far (steps, preemptions, prefix-cache queries and hits). */
const sv_replica_stats_t *sv_live_replica_stats(sv_live_t *l, int i);
/* The longest prompt + reply every pool accepts (the shortest max_model_len). */
long sv_live_max_model_len(const sv_live_t *l);

/* Run what is in flight to its end: *out the run's result (0), or NULL and an error. */
int sv_live_close(sv_live_t *l, sv_result_t **out, sv_error_t *err);

#endif
