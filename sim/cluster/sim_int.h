/*
 * Internal: the seams of the event loop (sim/cluster/sim.c) that a live run
 * (sim/cluster/live.c) drives. A batch run (sv_sim_run) opens, handles every event and
 * finishes in one call; a live run opens the same simulator, then alternates between
 * injecting requests at the simulated instant reached and advancing the clock, and
 * finishes when it is closed. Nothing else includes this header.
 *
 * Ownership: sv__sim_open() returns a simulator that sv__sim_close() frees (NULL-safe);
 * the result it leaves belongs to the caller (sv_result_free). The scenario, the hooks and
 * the error record given to open must outlive the simulator.
 */
#ifndef SERVESIM_SIM_INT_H
#define SERVESIM_SIM_INT_H

#include "servesim/cluster/sim.h"

typedef struct sim sv__sim_t;

/* A simulator at t = 0 whose samples (and autoscalers) go on while it is open. With
 * background, the scenario's own workload arrives as in a batch run; without, no request
 * comes but those injected. 0, or an error (err). */
int sv__sim_open(const sv_scenario_t *sc, const sv_sim_hooks_t *hooks, int background,
                 sv__sim_t **out, sv_error_t *err);
/* Handle every event up to time t, then stand at t (the clock never goes back). Returns
 * 0, or the code of the error that stopped the run (its message in open's err). */
int sv__sim_advance(sv__sim_t *s, double t);
/* The time of the next event (now when replicas are about to decide steps), INFINITY
 * when none is pending. */
double sv__sim_next(sv__sim_t *s);
double sv__sim_now(const sv__sim_t *s);
/* A request of input prompt tokens and output reply tokens sent now, past the client's
 * semaphore (it is not the scenario's client that sends it). Its id, or -1 when the run
 * has stopped (the request bound reached, out of memory: see open's err). */
int32_t sv__sim_inject(sv__sim_t *s, int32_t input, int32_t output);
/* What the run has so far (requests, pools, metrics): read between calls only. */
sv_result_t *sv__sim_result(sv__sim_t *s);
sv_replica_t *sv__sim_replica(sv__sim_t *s, int i);
/* No more requests: run what is in flight to its end, check and summarize as a batch run
 * does; *out the result, or NULL on an error (err). Frees s. */
int sv__sim_close(sv__sim_t *s, sv_result_t **out, sv_error_t *err);

#endif
