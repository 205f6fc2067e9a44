/*
 * Replaying a real benchmark: `servesim replay REAL.json SCENARIO.yaml`.
 *
 * A result with per-request data (vLLM's `input_lens`, `output_lens` and `start_times`,
 * written by `vllm bench serve --save-detailed` and by `servesim run --json F --detailed`)
 * becomes an in-memory trace: the same requests, sent at the same times, through the
 * workload's trace mechanism (workload.h), so the simulator runs it like any trace. The
 * scenario keeps its model, hardware and engine; its workload is replaced by the trace and
 * the result's `max_concurrency` (null: none). Prompt identities go too (the file's
 * input_lens are whole prompts and do not say which began alike): no
 * `workload.shared_prefix`, no Mooncake hash ids, so the prefix cache finds no hits.
 *
 * Send times: sorted (stably); when the earliest is later than the run's `duration` the
 * clock is absolute (epoch or perf_counter seconds) and every time is rebased to the
 * benchmark's start, recovered as the last completion (start + latency) minus `duration`
 * (without latencies: to the first send); otherwise, and always for servesim's own
 * results (backend "servesim"), they are kept as written, so that a replay of servesim's
 * result repeats its run exactly. Failed requests (non-empty `errors`; without `errors`,
 * output length 0) are left out and counted: the output length they would have had is
 * unknown.
 *
 * Ownership: sv_replay_trace() returns a trace freed with sv_trace_free();
 * sv_replay_apply() hands the trace to the scenario, which frees it with itself.
 */
#ifndef SERVESIM_REPLAY_H
#define SERVESIM_REPLAY_H

#include "servesim/studies/compare.h"
#include "servesim/cluster/scenario.h"
#include "servesim/traffic/workload.h"

/* The requests of b as a trace. *skipped: failed requests left out. Errors name the file
 * and the missing or bad key (with its index). */
int sv_replay_trace(const sv_bench_t *b, sv_trace_t **out, long *skipped, sv_error_t *err);

/* Replace sc's workload by b's requests and max_concurrency. */
int sv_replay_apply(sv_scenario_t *sc, const sv_bench_t *b, long *skipped, sv_error_t *err);

#endif
