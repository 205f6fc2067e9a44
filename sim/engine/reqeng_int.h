/*
 * The replica engine's private state per request: where it is in the engine's queues,
 * how much of it is computed, and its place in the decode aggregate. Only the replica
 * engine (sim/engine/replica.c) reads or writes it; the replica attaches it to the request
 * pool as the pool's side array (sv_reqpool_attach), which holds it while the request is
 * in flight and releases it once it has ended (sv_reqpool_side_window): the engine reads
 * no released request's entry (sv_reqpool_side_released). Nothing else includes this
 * header.
 *
 * Ownership: the request pool owns the array (sv_reqpool_t.side), one entry per request
 * id held; each entry owns its `chain`, `slots` and `xslots` (a request that ends on a
 * replica leaves its slot arrays to that replica, for the next requests': room() in
 * sim/engine/replica.c).
 */
#ifndef SERVESIM_REQENG_INT_H
#define SERVESIM_REQENG_INT_H

#include <stdint.h>

#include "servesim/traffic/request.h"

/* Which of the engine's queues holds the request (the queues are cleaned lazily: an entry
 * whose request is no longer in that queue of that replica is dropped when reached). */
enum { SV__Q_NONE = 0, SV__Q_WAITING, SV__Q_SWAPPED };

/* sv_reqeng_t.heap_pos of a decoding sequence in its lane's finish wheel (replica.c). */
#define SV__IN_WHEEL (-2)

typedef struct sv_reqeng {
    int32_t at;               /* replica holding this state, -1 before any */
    int32_t target;           /* tokens to prefill: input, or input + generated after a recompute */
    int32_t computed;         /* tokens of target in the KV cache */
    int32_t generated;        /* output tokens produced (outside the decode set) */
    int32_t c_join, g_join;   /* computed and generated when it joined the decode set */
    int64_t kd_join;          /* the replica's decode-step count then */
    int32_t heap_pos;         /* while decoding: its finish-heap slot, or SV__IN_WHEEL; -1
                                 otherwise */
    int32_t wprev, wnext;     /* in the finish wheel: its bucket's list, -1 terminated */
    int32_t prev, next;       /* running list, -1 terminated */
    int32_t phase;            /* lockstep decoding: its lane's bucket (replica.c's phase_of) */
    int64_t run_seq;          /* its stamp there: the running list's order */
    int32_t seg;              /* open decode segment of the metrics, -1 */
    int32_t reserved;         /* blocks reserved up front (orca, static) */
    int32_t cached_n;         /* leading full blocks held through the prefix cache (shared, not
                                 counted as its own) */
    int32_t xfer_hit;         /* decode replica: leading full blocks of its incoming KV found in
                                 the prefix cache at reservation, referenced until it lands */
    uint64_t *chain;          /* prefix caching: hashes of all its full blocks (owned) */
    int32_t *slots;           /* ... cache slots of its cached_n leading blocks (owned) */
    int32_t *xslots;          /* ... decode replica: those of its xfer_hit blocks, apart while
                                 the prefill replica still holds `slots` (owned) */
    int32_t capslots, capxslots; /* ... room in each */
    int32_t nchain, chain_bs; /* ... how many, and the block size they were made for */
    double visible;           /* when the scheduler can first see it (engine.api_server_ms) */
    int32_t kv_tr, kv_tr_at;  /* a hybrid model's blocks this step frees when it ends (its window
                                 slid, its chunk ended), and the epoch they are of (of the
                                 replica's lane whose step it is: unique across lanes) */
    /* Sampled speculative decoding (the replica's spec_k > 0): */
    int32_t spec_tok;         /* tokens emitted since it joined the decode set */
    int32_t spec_blocks;      /* blocks it holds while decoding, its verify step's slots in (a
                                 hybrid model: its growing groups' list length, replica.c's
                                 spec_held) */
    int32_t spec_skip;        /* ... a hybrid model: tokens computed when its windows were cut */
    uint64_t spec_draws;      /* uniforms drawn from its acceptance stream so far (kept across
                                 preemptions and hand-offs: one stream per request) */
    uint8_t queue;            /* SV__Q_* */
    uint8_t in_decode;        /* member of the decode aggregate */
    uint8_t abort_pending;    /* given up during a step: fails (this reason) when it ends */
    uint8_t joining;          /* landed on a decode replica, joins its batch at the next step */
    uint8_t lane;             /* the replica's lane (replica.c's lane_t) whose decode set holds
                                 it, or whose step last took a chunk of its prompt (0 unless
                                 pipeline parallelism keeps micro-batches in flight) */
    uint8_t inflight;         /* pp > 1: a chunk of its prompt is in a micro-batch in flight */
} sv_reqeng_t;

#endif
