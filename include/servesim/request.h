/*
 * One simulated request: what the workload made of it, the times the client and the
 * engine saw, and the engine's bookkeeping while it runs. Requests live in one pool
 * (an array indexed by request id) shared by the simulator, the replicas and metrics.
 *
 * Ownership: the pool owns its array; ids (int32) stay valid across growth, pointers
 * into the array do not.
 */
#ifndef SERVESIM_REQUEST_H
#define SERVESIM_REQUEST_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SV_RQ_NEW = 0, /* generated, not yet sent (waiting at the client's semaphore) */
    SV_RQ_WAITING, /* at a replica, not running */
    SV_RQ_RUNNING, /* admitted: holds KV blocks */
    SV_RQ_SWAPPED, /* preempted with its KV in host memory */
    SV_RQ_HANDOFF, /* prefilled on a prefill replica, KV pinned there, waiting for decode room */
    SV_RQ_XFER,    /* its KV is on the link to a decode replica */
    SV_RQ_DONE,
    SV_RQ_FAILED
} sv_rq_state_t;

typedef enum {
    SV_FAIL_NONE = 0,
    SV_FAIL_QUEUE_FULL,    /* max_queue reached at the replica (HTTP 429) */
    SV_FAIL_TIMEOUT,       /* the client gave up after workload.timeout */
    SV_FAIL_TOO_LONG,      /* input + output > max_model_len (HTTP 400) */
    SV_FAIL_PROMPT_BUDGET, /* whole-prompt scheduler: prompt > max_num_batched_tokens */
    SV_FAIL_KV_CAPACITY,   /* the sequence can never fit the KV cache */
    SV_FAIL_UNFINISHED,    /* still in flight when the horizon ended the run */
    SV_FAIL_COUNT
} sv_fail_t;

/* "queue_full", "timeout", ... */
const char *sv_fail_name(int reason);

typedef struct sv_req {
    double arrival;     /* when the client meant to send it */
    double start;       /* when it was sent (vLLM's start_time) */
    double scheduled;   /* first time the engine scheduled it; -1 before */
    double first_token; /* -1 before */
    double last_token;  /* newest token so far (for decoding requests: at segment ends) */
    double end;         /* completion or failure time */
    /* Phases, for the per-request breakdown (colocated: all equal to first_token): */
    double prefill_end;  /* the prompt's KV exists (DistServe's first token) */
    double xfer_start;   /* the KV transfer started (decode room was found) */
    double xfer_end;     /* it landed on the decode replica */
    double decode_start; /* its first decode step started */
    int32_t input, output;
    int32_t replica;         /* where it is (or ended) */
    int32_t prefill_replica; /* disaggregated: where it was prefilled */
    uint8_t state, fail, in_decode, abort_pending;
    uint8_t joining; /* landed on a decode replica, joins its batch at the next step */
    uint8_t ended;   /* the simulator counted its end (each request ends exactly once) */
    uint16_t preemptions;
    /* engine bookkeeping (sim/replica.c) */
    int32_t target;    /* tokens to prefill: input, or input + generated after a recompute */
    int32_t computed;  /* tokens of target in the KV cache */
    int32_t generated; /* output tokens produced (outside the decode set) */
    int32_t c_join, g_join;
    int64_t kd_join;
    int32_t heap_pos;   /* finish-heap slot while decoding, -1 otherwise */
    int32_t prev, next; /* running list, -1 terminated */
    int32_t seg;        /* open decode segment, -1 */
    int32_t reserved;   /* blocks reserved up front (static, orca) */
} sv_req_t;

typedef struct sv_reqpool {
    sv_req_t *r;
    size_t n, cap;
} sv_reqpool_t;

#endif
