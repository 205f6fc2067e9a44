/*
 * One serving replica: the scheduler and the paged KV-cache block manager of an engine
 * like vLLM, stepping iteration by iteration. The simulator asks it to start a step
 * (it picks the batch and returns how long the cost model says it takes) and tells it
 * when the step ends (it applies the tokens, finishes and frees).
 *
 * Schedulers (engine.scheduler):
 *   vllm     chunked prefill: each step spends max_num_batched_tokens, running decodes
 *            first, then prefill chunks of partially prefilled and waiting requests, up
 *            to max_num_seqs sequences (vLLM's current default);
 *   vllm-v0  prefill-first: a step is either the whole prompts of newly admitted requests
 *            or all decodes, never mixed;
 *   orca     iteration-level batching of whole prompts mixed with decodes, KV reserved
 *            for prompt + output at admission (contiguous allocation, as in Orca);
 *   static   a batch is formed, runs until every sequence in it finishes, then the next;
 *   trtllm   TensorRT-LLM's in-flight batching with its default capacity policy
 *            (GUARANTEED_NO_EVICT): chunked prefill as vllm, but KV for prompt + output
 *            reserved at admission, so no request is ever preempted;
 *   sglang   SGLang's default: a step is a prefill batch (a chunked prompt's next chunk,
 *            then new prompts, within max_num_batched_tokens) whenever one can be formed,
 *            else the decode batch; paged KV, retraction by recompute; its overlap
 *            loop (overlap_schedule below) is on by default.
 * Paged schedulers admit a request only when its blocks fit above a watermark; a decode
 * that needs a block when none is free preempts the most recently admitted running
 * request (recompute: its blocks are freed and it re-prefills later from the front of
 * the queue; swap: its KV goes to host memory over swap_bandwidth and comes back before
 * new requests are admitted).
 *
 * Decoding sequences advance in lockstep, so the replica keeps them as an aggregate
 * (count, sum of contexts, per-phase block counters, a heap of finish steps): the work
 * per step is O(prefill chunks + log n), independent of how many sequences decode. With
 * pipeline stages (pp > 1) a replica keeps pp such aggregates, one per micro-batch in
 * flight, and a step is one micro-batch (sv_replica_start_step).
 *
 * Ownership: the replica borrows the request pool, cost model and metrics collector
 * (they must outlive it); sv_replica_free() releases what sv_replica_new() allocated.
 */
#ifndef SERVESIM_REPLICA_H
#define SERVESIM_REPLICA_H

#include <stddef.h>
#include <stdint.h>

#include "servesim/base/error.h"
#include "servesim/metrics/metrics.h"
#include "servesim/cost/perf.h"
#include "servesim/traffic/request.h"

typedef enum {
    SV_SCHED_VLLM = 0,
    SV_SCHED_VLLM_V0,
    SV_SCHED_ORCA,
    SV_SCHED_STATIC,
    SV_SCHED_TRTLLM,
    SV_SCHED_SGLANG,
    SV_SCHED_COUNT /* how many there are */
} sv_sched_t;

/* "vllm" -> SV_SCHED_VLLM, ...; SV_ENOTFOUND otherwise. */
int sv_sched_parse(const char *s, sv_sched_t *out);
/* The name of scheduler s ("?" out of range); 0 .. SV_SCHED_COUNT - 1 in table order. */
const char *sv_sched_name(sv_sched_t s);

typedef struct sv_engine_cfg {
    sv_sched_t scheduler;
    long max_num_seqs;
    long max_num_batched_tokens;
    int block_size;
    int preempt_swap;   /* 0 recompute, 1 swap */
    double swap_bw;     /* bytes/s per GPU between device and host */
    double watermark;   /* share of blocks kept free when admitting */
    long max_model_len; /* longest input + output accepted; 0 = model context / KV capacity */
    long max_queue;     /* waiting requests beyond which arrivals fail; 0 = unbounded */
    /* vllm (chunked) only: */
    long long_prefill_threshold; /* most prompt tokens of one request per step; 0 = none */
    long max_partial_prefills;   /* most prompts being prefilled at once; 0 = no limit */
    /* engine.chunked_prefill as given: 1 true, 0 false, -1 unset (the trtllm scheduler
     * only; the scenario checks that) */
    int chunked_prefill;
    /* 1: the trtllm scheduler without chunked prefill (engine.chunked_prefill: false,
     * TensorRT-LLM's enable_chunked_context, false by default in its executor): a prompt
     * goes whole into one step, and only when it fits what the step's token budget has
     * left, as the orca scheduler's; 0 (zeroed configs too): the scheduler's own rule */
    int no_chunked_prefill;
    int prefix_caching;          /* automatic prefix caching (paged schedulers) */
    /* vLLM's async scheduling (--async-scheduling): the CPU prepares step n+1 while the
     * GPU runs step n, so step n+1 is built before step n's outputs are back: a request
     * arriving during step n waits for step n+2, and one finishing in step n keeps its
     * sequence slot and KV blocks while step n+1 is built. */
    int async_scheduling;
    /* An overlap loop (engine.overlap_schedule): the engine launches step n+1 before it
     * reads step n's outputs, as SGLang's default Scheduler.event_loop_overlap and
     * TensorRT-LLM's PyTorch overlap scheduler do: async scheduling's one-step lag, with
     * the profile's step costs left whole (those profiles' per-step costs are what the
     * overlap leaves). 1 on, 0 off; the scenario resolves the default (on for sglang
     * without speculative decoding, sv_scenario_load). */
    int overlap_schedule;
    /* engine.ignore_eos: the clients send ignore_eos, every request generating exactly its
     * output; SGLang's admission reads it (the sglang scheduler only). */
    int ignore_eos;
    double api_server; /* s from the server's door to the engine core (engine.api_server_ms):
                        * a submitted request is invisible to the scheduler till then */
    /* TensorRT-LLM's attention-DP balancing (engine.attention_dp_balance, the trtllm
     * scheduler with hardware.dp_attention > 1 only; its AttentionDpConfig enable_balance,
     * timeout_iters, batching_wait_iters): context requests wait until every rank has one
     * (and batching_wait more steps) or timeout steps pass (docs/simulator.md). */
    int adp_balance;
    long adp_timeout_iters, adp_batching_wait_iters;
    /* engine.scheduling_policy: 0 fcfs; 1 priority (vLLM's --scheduling-policy priority:
     * waiting requests by (priority, arrival), preemption of the largest of those) */
    int priority_policy;
    /* Disaggregation (set by the simulator, not by scenario keys of this map): */
    int handoff;               /* prefill replica: a prefilled request is handed off, not decoded */
    int first_token_at_decode; /* handoff: the decode replica makes the first token */
    /* Set by the simulator too: the seed of the requests' acceptance streams (sampled
     * speculative decoding; request id's stream is sv_replica_spec_uniform's). */
    uint64_t spec_seed;
    /* Set by the simulator too: lane l of replica id (pipeline parallelism keeps pp
     * micro-batches in flight, each lane's sequences decoding in lockstep) records its
     * decode steps as the metrics' stream id + l x stream_stride (the collector has
     * stream_stride x the largest pp streams; 0 with no pp > 1). */
    int stream_stride;
} sv_engine_cfg_t;

/* Blocks kept free when admitting: floor(watermark x blocks), as vLLM's block manager
 * computes it (int()); 0 for the schedulers that reserve a whole sequence up front. */
long sv_watermark_blocks(const sv_engine_cfg_t *cfg, long kv_blocks);

typedef struct sv_replica_stats {
    long steps, decode_steps, prefill_chunks;
    long preemptions, swaps;
    double busy_s;   /* time with a step in flight */
    double active_s; /* busy time weighted by how hard the GPU works (power model) */
    double prefill_tokens, decode_tokens;
    /* Sampled speculative decoding: vLLM's counters as drawn (sv_replica_spec_counters). */
    double spec_drafts, spec_draft_tokens, spec_accepted, spec_pos[SV_SPEC_MAX_K];
    long peak_running, peak_waiting;
    long peak_blocks_used;
    long peak_kind_blocks[SV_KV_KINDS]; /* a hybrid model: the most blocks its running requests
                                          held at a step's start in each kind of KV cache
                                          group (sv_kvspec_t; full: not counting the
                                          prefix-cache's shared blocks); 0 otherwise */
    long handoffs;
    double prefix_queries, prefix_hits; /* prompt tokens looked up in the prefix cache, found */
    double prefix_preempted_queries, prefix_preempted_hits; /* the same, of requests
                                                             re-admitted after a preemption */
    /* At the end of a run (filled by the simulator): every block should be free again
     * and no token owed. */
    long blocks_free_end, blocks_total, owed_end;
} sv_replica_stats_t;

typedef struct sv_replica sv_replica_t;

int sv_replica_new(int id, const sv_perf_t *perf, long kv_blocks, const sv_engine_cfg_t *cfg,
                   sv_reqpool_t *pool, sv_metrics_t *metrics, sv_replica_t **out, sv_error_t *err);
void sv_replica_free(sv_replica_t *r);

/*
 * The memo of first-segment chains: the chained block hashes inside a prompt's first
 * segment (a shared system prompt) are the same on every replica with the same block
 * size, so the replicas of one simulation can share one memo and hash each segment once
 * rather than once per replica. It is keyed by (segment, its length, block size): replicas
 * of pools with different block sizes share it without mixing their chains. It holds at
 * most a fixed number of chains (the oldest of a probe run give way), so its memory stays
 * bounded; it changes no result, only how often a chain is hashed.
 *
 * Use: one thread at a time (as a simulation runs its replicas). A chain read from it is
 * valid until the next lookup in it by any replica sharing it; the replica reads it only
 * inside the call that looked it up and keeps no pointer into it (docs/prefix-caching.md).
 *
 * Ownership: sv_chain_memo_new() returns a memo freed with sv_chain_memo_free() (NULL-safe),
 * after the last call into any replica given it (sv_replica_share_memo); a replica
 * borrows it and does not free it.
 */
typedef struct sv_chain_memo sv_chain_memo_t;
/* An empty memo (its table comes with the first lookup); NULL without memory. */
sv_chain_memo_t *sv_chain_memo_new(void);
void sv_chain_memo_free(sv_chain_memo_t *m);
/* Chains hashed into it so far (its misses). */
long sv_chain_memo_hashed(const sv_chain_memo_t *m);
/* Replica r looks first-segment chains up in m from now on (NULL: in its own memo, as a
 * new replica does). Safe at any time: a memo only saves hashing. */
void sv_replica_share_memo(sv_replica_t *r, sv_chain_memo_t *m);

/* A request arrives at now; its scheduler sees it from now + cfg.api_server (the caller
 * starts a step then). Returns SV_FAIL_NONE, or the reason it failed at once (the
 * request is then marked failed with end = now). */
int sv_replica_submit(sv_replica_t *r, int32_t id, double now);

/* Start a step if there is work and sv_replica_ready(): returns its duration (> 0), or 0
 * when the replica stays idle. With pipeline parallelism (the perf's pp > 1) a step is one
 * micro-batch and its duration its time on the first stage; it leaves the last stage at
 * sv_replica_exit_at(), read right after, when the caller calls sv_replica_exit(). Up to
 * pp micro-batches are in flight, each of requests in no other (vLLM's
 * EngineCore.step_with_batch_queue, vllm/v1/engine/core.py; docs/cost-model.md). */
double sv_replica_start_step(sv_replica_t *r, double now);
/* Whether a step can start now: none in flight, or (pp > 1) the first stage free and
 * fewer than pp micro-batches in flight. */
int sv_replica_ready(const sv_replica_t *r);

/* The step in flight ends at now (pp > 1: the first stage frees; the tokens come with
 * sv_replica_exit). Requests that finished or failed during it are listed by
 * sv_replica_done() until the next call. */
int sv_replica_end_step(sv_replica_t *r, double now);
/* pp > 1: when the micro-batch sv_replica_start_step just started leaves the last stage;
 * -1 with pp 1. */
double sv_replica_exit_at(const sv_replica_t *r);
/* pp > 1: the oldest micro-batch in flight leaves the last stage at now (when it is due):
 * its tokens, finished prompts and finishes, listed as sv_replica_end_step's are. */
int sv_replica_exit(sv_replica_t *r, double now);
const int32_t *sv_replica_done(const sv_replica_t *r, long *n);

/* The client gave up on request id at now (reason: SV_FAIL_TIMEOUT, SV_FAIL_ABORTED): it
 * fails at now, and its KV is freed at once or, if it is in the step in flight, when that
 * step ends. */
void sv_replica_abort(sv_replica_t *r, int32_t id, double now, int reason);

/* Prefill role: requests whose prefill ended in the last step and now wait, with their
 * KV blocks pinned here, to move to a decode replica. Valid until the next end_step. */
const int32_t *sv_replica_handoffs(const sv_replica_t *r, long *n);
/* Tokens of KV a handed-off request holds here (what its transfer moves). */
long sv_replica_handoff_tokens(const sv_replica_t *r, int32_t id);
/* Their KV has left (or they failed): free the pinned blocks. */
void sv_replica_release(sv_replica_t *r, int32_t id);

/* Decode role: reserve room for request id's incoming KV transfer: a sequence slot and
 * blocks for its r->computed tokens plus the next token's (orca and static: for its whole
 * input + output). With prefix caching, the leading full blocks this replica's cache holds
 * already are referenced instead (they need not cross the link). 1 if reserved (the
 * request's `replica` is this one from then on), 0 if there is no room. */
int sv_replica_reserve(sv_replica_t *r, int32_t id);
int sv_replica_can_reserve(sv_replica_t *r, int32_t id); /* the same test, no change */
/* The same test on the n replicas reps[idx[0..n)], in that order: those with room go into
 * out (room for n, which the caller owns), in order; returns how many. */
int sv_replica_can_reserve_of(sv_replica_t *const *reps, const int *idx, int n, int32_t id,
                              int *out);
void sv_replica_unreserve(sv_replica_t *r, int32_t id);
/* Tokens of a reserved transfer's KV found in this replica's prefix cache (not sent). */
long sv_replica_transfer_cached(const sv_replica_t *r, int32_t id);
/* The transfer landed: the request (its KV = r->computed tokens, r->generated tokens
 * made so far) joins the decode batch at the next step. */
void sv_replica_inject(sv_replica_t *r, int32_t id, double now);
/* When the replica can next start a step: the end of the one in flight, or now. */
double sv_replica_free_at(const sv_replica_t *r, double now);

/* Fail every request still here (horizon reached) with SV_FAIL_UNFINISHED at now. */
void sv_replica_fail_all(sv_replica_t *r, double now);

int sv_replica_busy(const sv_replica_t *r);
long sv_replica_running(const sv_replica_t *r);
long sv_replica_reserved(const sv_replica_t *r); /* transfers on their way here */
long sv_replica_waiting(const sv_replica_t *r);
/* running + waiting + reserved (the least-outstanding router's load), in one call. */
long sv_replica_outstanding(const sv_replica_t *r);
/* Whether the scheduler sees waiting work at now: a swapped-out request, or the head of the
 * waiting queue through the API server (engine.api_server_ms). An idle replica whose
 * waiting requests are all still on that path is waiting for input, not stalled. */
int sv_replica_waiting_visible(sv_replica_t *r, double now);
long sv_replica_tokens_owed(const sv_replica_t *r); /* + output tokens not yet generated */
/* Output tokens request id has made so far, counted to the last step that ended (a live
 * run streams them: sim/cluster/live.c); r is the replica it decodes on, or any other
 * while it is not decoding. O(1); the engine keeps no number per token for it. */
long sv_replica_generated(const sv_replica_t *r, int32_t id);
/* The n-th uniform in [0, 1) of request id's acceptance stream: splitmix64 seeded with
 * sv_mix64(seed + (id + 1) x the golden gamma), so a request draws the same whatever the
 * replica, its neighbours in the batch or the order they were stepped in. */
double sv_replica_spec_uniform(uint64_t seed, int32_t id, uint64_t n);
/* The scenario seed's stream the simulator derives spec_seed from (sv_stream_seed; after
 * network.h's SV_STREAM_NETWORK). */
#define SV_STREAM_SPEC 102
/* vLLM's speculative-decoding counters of a replica: as drawn when its settings sample
 * acceptance (st's spec_* counts), else their expected values (sv_spec_counters of its
 * decode tokens); all 0 without spec decoding, mean_len 0 when it verified no draft. */
void sv_replica_spec_counters(const sv_replica_stats_t *st, const sv_perf_settings_t *set,
                              sv_spec_counters_t *out);
double sv_replica_kv_usage(const sv_replica_t *r);  /* used blocks / all blocks */
long sv_replica_free_blocks(const sv_replica_t *r);
long sv_replica_total_blocks(const sv_replica_t *r);
long sv_replica_batch_tokens(const sv_replica_t *r); /* tokens in the step in flight */
const sv_replica_stats_t *sv_replica_stats(const sv_replica_t *r);

/* What the step in flight holds (all zero when none is): for timelines (servesim run
 * --trace-json). Read on demand, so the engine does no work for it otherwise. */
typedef struct sv_step_info {
    long prefill_seqs;      /* requests with prompt tokens in the step */
    long prefill_tokens;    /* new prompt tokens computed */
    long cached_tokens;     /* their prompt tokens already in KV (earlier chunks, prefix hits) */
    long decode_seqs;       /* sequences making one token each */
    double decode_ctx_mean; /* their mean context (tokens) */
    long running, waiting;  /* requests admitted (holding KV), waiting */
    double kv_usage;        /* used blocks / all blocks, 0..1 */
    double swap_s;          /* time of the step spent swapping KV back in */
    int preempted;          /* building the step preempted a request */
    double new_token_ratio; /* the sglang scheduler's new-token ratio after building it */
} sv_step_info_t;
void sv_replica_step_info(const sv_replica_t *r, sv_step_info_t *out);

/* Prompt tokens of request id (not yet here) that this replica's prefix cache holds:
 * the longest chain of its leading full blocks found (0 without the cache). */
long sv_replica_cached_prefix(sv_replica_t *r, int32_t id);

/* Recount every block from the requests that hold them (running sequences, hand-offs
 * pinned here, transfers reserved here) and compare with the free count: 0 when
 * held + free = total, else -1 with what differs in msg. O(running); a replica with a
 * step in flight is not checked. With pipeline parallelism, also that no request is in two
 * micro-batches in flight (checked with micro-batches in flight too). For --check and
 * tests. */
int sv_replica_check(const sv_replica_t *r, char *msg, size_t size);

#endif
