/*
 * One simulated request: what the workload made of it and what happened to it (the
 * times the client and the engine saw, where it ran, how it ended). Requests live in one
 * pool indexed by request id, shared by the simulator, the replicas, metrics and reports.
 *
 * A windowed pool (sv_reqpool_window) keeps only the records from the oldest request not
 * yet ended on: those of ended requests below it are released (a hook may read each one
 * first, in id order), so its memory follows the requests in flight and not the run. A
 * released id's record must not be read (sv_reqpool_released says which are). A pool that
 * keeps every record may still release the side elements of ended requests the same way
 * (sv_reqpool_side_window): the attached layer's state follows the requests in flight
 * while the records stay for the summary (sv_reqpool_side_released says which are gone).
 *
 * Ownership: the pool owns its arrays (sv_reqpool_free); ids (int32) stay valid across
 * growth and release, pointers into the arrays do not.
 */
#ifndef SERVESIM_REQUEST_H
#define SERVESIM_REQUEST_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "servesim/base/numeric.h"

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
    SV_FAIL_ABORTED,       /* its client disconnected (servesim serve; vLLM: FINISHED_ABORTED) */
    SV_FAIL_COUNT
} sv_fail_t;

/* Request classes a workload may mix (workload.classes); sv_req_t.cls indexes them. */
#define SV_MAX_CLASSES 16

/* "queue_full", "timeout", ... */
const char *sv_fail_name(int reason);

/*
 * Who writes what: the simulator (sim.c) writes arrival, start, xfer_start, xfer_end,
 * decode_start, input, output, prefill_replica, own_tail and ended; the replica engine writes
 * scheduled, first_token, last_token, prefill_end, replica and preemptions; both move
 * state along its life and either may fail it (state, fail, end).
 * The engine's own bookkeeping (what is computed, queue membership, the decode aggregate)
 * is private to it (sim/engine/reqeng_int.h), never in this record.
 */
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
    uint8_t state, fail;
    uint8_t ended; /* the simulator counted its end (each request ends exactly once) */
    uint8_t cls;   /* its request class (workload.classes), 0 without classes */
    uint16_t preemptions;
    /* 1: the last prompt segment and the output are the request's own, repeated by no
     * other prompt (a generated message, no sessions): only the request itself, after a
     * preemption, could look up their blocks, so the engine hashes them only then. */
    uint8_t own_tail;
    int32_t nseg;     /* segments its prompt is made of (prefix caching); 0: unique content */
    int32_t priority; /* scheduling priority (lower first, as vLLM's), its class's */
    int32_t cached;   /* prompt tokens the engine found in its prefix cache (last admission) */
    int64_t seg_off;  /* where they start in the pool's segment array */
} sv_req_t;

/* The per-request metrics, defined once, as vLLM's benchmark computes them
 * (../shared/spec/metrics.md), in seconds, for a completed request: TTFT = first token -
 * start; E2EL (latency) = last token - start; TPOT = (latency - TTFT) / (output - 1), 0
 * for a single output token. Every summary, file and chart uses these. */
static inline double sv_req_ttft(const sv_req_t *r)
{
    return r->first_token - r->start;
}
static inline double sv_req_e2el(const sv_req_t *r)
{
    return r->last_token - r->start;
}
static inline double sv_req_tpot(const sv_req_t *r)
{
    return r->output > 1 ? (sv_req_e2el(r) - sv_req_ttft(r)) / (double)(r->output - 1) : 0.0;
}

/* A run of prompt tokens whose identity other requests may share: a system prompt, a
 * block of a trace's hash ids, a previous turn. Two requests whose prompts begin with the
 * same segments begin with the same tokens, so their KV blocks can be shared. */
typedef struct sv_segment {
    uint64_t id;
    int32_t len; /* tokens */
} sv_segment_t;

/* The identity of request id's output as a segment: the engine hashes the blocks a request
 * decodes with it, so a later prompt that repeats this answer (the next turn of a chat)
 * names it with the same id and finds those blocks cached. */
static inline uint64_t sv_output_segment_id(int32_t id)
{
    return sv_splitmix64(0x0b7c0deULL ^ (uint64_t)id);
}

/* The pool holds, next to each public record, one element of a side array whose type
 * belongs to the layer that attaches it (the replica engine's private per-request state,
 * sim/engine/reqeng_int.h): this layer sees only its size and its two hooks. */
typedef struct sv_reqpool {
    sv_req_t *r;      /* public records of ids base..n-1: request id's is r[id - base] */
    void *side;       /* a ring of the attached layer's state of ids side_base..n-1: id's is
                         element id & side_mask; NULL until attached */
    size_t side_size; /* bytes per element; 0 until attached */
    void (*side_init)(void *element); /* sets up a zeroed element */
    void (*side_fini)(void *element); /* releases what an element owns (not the element) */
    size_t n, cap;                    /* n: requests ever added (the next id) */
    size_t cap_side, side_mask;       /* the ring's room (a power of two, or 0) and room - 1 */
    sv_segment_t *seg; /* prompt segments of the held requests (sv_req_t.seg_off, nseg) */
    size_t nseg, cap_seg;
    /* The windows (sv_reqpool_window, sv_reqpool_side_window; base and side_base stay 0
     * without): */
    size_t base;       /* ids below had their records released */
    size_t side_base;  /* ids below had their side elements released (>= base; = base when
                          windowed) */
    int windowed;      /* records of ended requests are released (with their side elements) */
    int side_windowed; /* only the side elements of ended requests are released */
    size_t look_at;    /* n at which sv_reqpool_release looks again (SIZE_MAX: no window) */
    void (*on_release)(void *ctx, int32_t id, const sv_req_t *r); /* NULL: none */
    void *release_ctx;
} sv_reqpool_t;

/* Whether request id's record was released (it has ended): the lazy checks of ended
 * requests (timers, stale queue entries) ask this before they read the record. */
static inline int sv_reqpool_released(const sv_reqpool_t *p, int32_t id)
{
    return (size_t)id < p->base;
}
/* Whether request id's side element was released (it has ended): implied by the release of
 * its record; the lazy checks of ended requests in the attached layer ask this. */
static inline int sv_reqpool_side_released(const sv_reqpool_t *p, int32_t id)
{
    return (size_t)id < p->side_base;
}
/* Where request id (held: not released, below n) is in r. */
static inline size_t sv_reqpool_slot(const sv_reqpool_t *p, int32_t id)
{
    return (size_t)id - p->base;
}
/* Where request id (its side element not released, below n) is in side. */
static inline size_t sv_reqpool_side_slot(const sv_reqpool_t *p, int32_t id)
{
    assert((size_t)id >= p->side_base && (size_t)id < p->n);
    return (size_t)id & p->side_mask;
}
/* Request id's record. */
static inline sv_req_t *sv_reqpool_req(const sv_reqpool_t *p, int32_t id)
{
    return &p->r[sv_reqpool_slot(p, id)];
}

/* Add a request: a record with every time -1, state NEW and no replica, and a fresh side
 * element when a side array is attached. Returns its id, or -1 when memory (or the id
 * range) runs out. */
int32_t sv_reqpool_add(sv_reqpool_t *p);
/* Attach a side array of `size`-byte elements with the given hooks (fini may be NULL):
 * every existing request gets a fresh element. Attaching the same size and hooks again
 * does nothing. 0, SV_EINVAL when another side array is attached, or SV_ENOMEM. */
int sv_reqpool_attach(sv_reqpool_t *p, size_t size, void (*init)(void *), void (*fini)(void *));
/* Give request id its prompt's segments (copied; their lengths must add up to its input).
 * 0, or SV_ENOMEM. */
int sv_reqpool_set_segments(sv_reqpool_t *p, int32_t id, const sv_segment_t *seg, int n);
/* Held records a windowed pool lets accumulate before it first looks for ended ones; it
 * looks again each time what it holds has doubled since. (A build may set smaller ones, and
 * the side window's, to exercise the windows.) */
#ifndef SV_REQPOOL_WINDOW_MIN
#define SV_REQPOOL_WINDOW_MIN 4096
#endif
/* Requests a side window lets be added between two looks for ended ones. */
#ifndef SV_REQPOOL_SIDE_STRIDE
#define SV_REQPOOL_SIDE_STRIDE 256
#endif

/* Make p a windowed pool: sv_reqpool_release may release the records of ended requests,
 * each read by on_release (may be NULL) just before, in id order. Call before the first
 * request; 0, SV_EINVAL after it, or SV_ENOMEM. */
int sv_reqpool_window(sv_reqpool_t *p, void (*on_release)(void *ctx, int32_t id, const sv_req_t *r),
                      void *ctx);
/* Make p release the side elements of ended requests (not their records) at
 * sv_reqpool_release, each time SV_REQPOOL_SIDE_STRIDE requests were added since it last
 * looked: those below the oldest request not ended go, so the ring's room follows the
 * span of requests in flight. The attached layer must then read no released id's element
 * (sv_reqpool_side_released). Nothing for a windowed pool, which releases them with the
 * records. */
void sv_reqpool_side_window(sv_reqpool_t *p);
/* A pool with a window, at a point where nothing holds a pointer into it (between two
 * events): when it is time to look, the records (windowed) or only the side elements
 * (sv_reqpool_side_window) of the ended requests below the oldest one not ended are
 * released (side elements finished, a windowed pool's segments dropped). Cheap to call
 * often. */
void sv__reqpool_compact(sv_reqpool_t *p);
static inline void sv_reqpool_release(sv_reqpool_t *p)
{
    if (p->n >= p->look_at) sv__reqpool_compact(p);
}
/* Release every record left (the end of a run whose requests have all ended): each read by
 * on_release in id order. */
void sv_reqpool_release_all(sv_reqpool_t *p);
/* Free the arrays (calling side_fini on every element) and empty the pool; NULL-safe. */
void sv_reqpool_free(sv_reqpool_t *p);

#endif
