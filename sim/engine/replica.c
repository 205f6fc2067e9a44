/*
 * The replica engine (see include/servesim/engine/replica.h): continuous batching over a
 * paged KV cache, with the four schedulers, preemption by recompute or swap, and the
 * lockstep decode aggregate that keeps each step O(prefill chunks + log n); with pipeline
 * stages, one aggregate (a lane) per micro-batch in flight, run through the stages.
 */
#include "servesim/engine/replica.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/base/numeric.h"
#include "engine/kvledger_int.h"
#include "engine/reqeng_int.h"
#include "base/heap_int.h"
#include "base/vec_int.h"

/* Power model: a memory-bound step draws this share of the dynamic power (TDP - idle);
 * public H100 profiling shows about 380 W in decode against 700 W in prefill, 75 W idle. */
#define MEMORY_BOUND_ACTIVITY 0.45

/* Where decoding sequences wait for the decode step whose token is their last (the key,
 * counted in their lane's decode steps): a timing wheel of FINISH_WHEEL buckets for the keys
 * less than FINISH_WHEEL - 1 steps ahead (O(1) to join, leave and pop), and a binary heap
 * for the few further out, which move to the wheel as their step comes near. Those that
 * finish at one step leave in running order (as vLLM's scheduler walks them). */
#define FINISH_WHEEL 1024
typedef struct hent {
    int64_t key; /* decode step whose token is the request's last */
    int32_t id;
} hent_t;
typedef SV_HEAP_OF(hent_t) fheap_t;

typedef struct ring {
    int32_t *v;
    size_t cap, head, len;
} ring_t;

typedef struct chunk {
    int32_t id, n;
} chunk_t;

/* A request whose last token came with the step that ended, by its place in the running
 * list (the order vLLM scheduled, and frees, them). */
typedef struct fin {
    int64_t run_seq;
    int32_t id;
} fin_t;

/* A waiting request under the priority policy: a min-heap on (priority, arrival, id),
 * as vLLM's PriorityRequestQueue (vllm/v1/core/sched/request_queue.py). */
typedef struct pent {
    int32_t prio, id;
    double t;
} pent_t;
typedef SV_HEAP_OF(pent_t) pheap_t;

/* ---- schedulers as data ------------------------------------------------------------------ */

/* The phases a step is built from. Each scheduler lists the ones it runs, in order. */
typedef enum {
    PH_END = 0,
    PH_ADMIT_IF_IDLE,     /* static: form a new batch only when the last one has finished */
    PH_PREFILL_FIRST,     /* admit whole prompts (none swapped out); a step that admits any
                             runs those prompts alone, and decodes wait (vLLM V0) */
    PH_DECODES,           /* every running decode gets its next token's block, preempting the
                             most recently admitted while there are too few */
    PH_SWAP_IN,           /* after the decodes: swapped-out sequences rejoin them */
    PH_JOIN_LANDED,       /* decode role: requests whose KV landed join the batch */
    PH_CONTINUE_PREFILLS, /* partially prefilled prompts take their next chunk */
    PH_SWAP_IN_ADMIT,     /* unless this step preempted: swap in, then admit waiting requests */
    PH_SGL_ADMIT,         /* SGLang's PrefillAdder: admit by the new-token ratio (or, with
                             ignore_eos, by whether all can finish); a step that admits or
                             continues a prompt runs prompts alone */
    PH_SGL_DECODES,       /* SGLang's update_running_batch: the decodes' blocks, retracting
                             when there are too few, and the new-token ratio's decay */
} phase_t;

typedef struct sched_traits {
    const char *name;
    int reserve;      /* KV for prompt + output reserved at admission (else paged: a block
                         when a token needs one, with preemption when none is free) */
    int chunked;      /* prompts cut to the step's token budget (else whole prompts only) */
    int static_batch; /* a batch's prompts go in one pass, whatever the budget */
    phase_t phases[6];
} sched_traits_t;

/* vLLM V1's phases (and TensorRT-LLM's: the same order), named once for its row and for
 * build_step, which unrolls them. */
#define VLLM_PHASES PH_DECODES, PH_JOIN_LANDED, PH_CONTINUE_PREFILLS, PH_SWAP_IN_ADMIT

/* Indexed by sv_sched_t. Adding a scheduler is a row here (and at most a new phase). */
static const sched_traits_t SCHEDULERS[] = {
    [SV_SCHED_VLLM] =
        {"vllm", 0, 1, 0, {VLLM_PHASES}},
    [SV_SCHED_VLLM_V0] =
        {"vllm-v0", 0, 0, 0, {PH_PREFILL_FIRST, PH_DECODES, PH_SWAP_IN, PH_JOIN_LANDED}},
    [SV_SCHED_ORCA] = {"orca", 1, 0, 0, {PH_DECODES, PH_JOIN_LANDED, PH_SWAP_IN_ADMIT}},
    [SV_SCHED_STATIC] = {"static", 1, 0, 1, {PH_ADMIT_IF_IDLE, PH_DECODES, PH_JOIN_LANDED}},
    [SV_SCHED_TRTLLM] =
        {"trtllm", 1, 1, 0, {VLLM_PHASES}},
    /* SGLang (scheduler.py get_next_batch_to_run): a prefill batch (the chunked request
     * first, then new ones, cut to the token budget, admitted by SGLang's PrefillAdder:
     * sgl_admit()) runs whenever one can be formed, and the decode batch waits (retracting
     * when its next tokens do not fit: sgl_decodes()); mixed chunks are off by default.
     * Its default loop is the overlap one (Scheduler.event_loop_overlap;
     * --disable-overlap-schedule turns it off, engine.overlap_schedule=false here; the
     * scenario resolves that default): it receives requests, builds and launches the next
     * batch, and only then processes the last batch's results, so a request received
     * during step n runs in step n + 2. */
    [SV_SCHED_SGLANG] = {"sglang",
                         0,
                         1,
                         0,
                         {PH_CONTINUE_PREFILLS, PH_SGL_ADMIT, PH_SGL_DECODES, PH_SWAP_IN,
                          PH_JOIN_LANDED}},
};
#define NSCHED ((int)(sizeof SCHEDULERS / sizeof *SCHEDULERS))
_Static_assert(NSCHED == SV_SCHED_COUNT, "a row of SCHEDULERS per sv_sched_t");

/* SGLang's admission constants as it ships them (sgl-project/sglang, 0.5:
 * python/sglang/srt/environ.py SGLANG_INIT_NEW_TOKEN_RATIO, SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR,
 * SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS, SGLANG_RETRACT_DECODE_STEPS,
 * SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION; managers/schedule_policy.py IGNORE_EOS_RESERVE_TOKENS),
 * with --schedule-conservativeness 1: the ratio starts at 0.7 and decays to 0.7 x 0.14 over
 * 600 decode steps (Scheduler.init_new_token_ratio, min_new_token_ratio, new_token_ratio_decay). */
static const struct {
    double init_ratio, min_factor;
    int decay_steps, retract_steps, clip, eos_reserve;
} SGL = {0.7, 0.14, 600, 20, 4096, 1};

/* The chained hashes of the blocks that lie wholly inside one first segment: the same for
 * every prompt that starts with it (and every replica with its block size), so computed
 * once per segment and block size (sv_chain_memo_t, replica.h: a memo of PREFIX_MEMO
 * entries, a segment's looked for in the PREFIX_PROBE from its home on; when all of those
 * hold others, its home is recomputed for it, which gives the same hashes). */
enum { PREFIX_MEMO = 4096, PREFIX_PROBE = 8 };
typedef struct memo_entry {
    uint64_t id;     /* the segment */
    int32_t len, bs; /* its tokens; the block size the chain is for */
    long n;          /* its full blocks: len / bs */
    uint64_t *h;     /* their hashes; NULL for an unused entry */
} memo_entry_t;

struct sv_chain_memo {
    memo_entry_t *e; /* PREFIX_MEMO entries; NULL until the first lookup */
    long hashed;     /* chains hashed into it (misses) */
};

/*
 * A lane: a decode aggregate and the step it has in flight. A replica has one; with
 * pipeline parallelism (pp > 1) it has pp, one per micro-batch the engine keeps in flight
 * (vLLM's EngineCore.step_with_batch_queue, vllm/v1/engine/core.py: a queue of pp
 * scheduled batches; SGLang's SchedulerPPMixin.event_loop_pp,
 * python/sglang/srt/managers/scheduler_pp_mixin.py, keeps a running batch per micro-batch
 * slot, running_mbs). The sequences decoding in a lane advance in lockstep with its own
 * step count, so each lane's micro-batch stays O(prefill chunks + log n).
 */
typedef struct lane {
    /* the decode set */
    long n_dec;
    double ctx_sum;
    int64_t kd; /* decode steps done */
    int kd_mod; /* kd % block size, kept as kd grows: the bucket lockstep_need() reads */
    long *bucket;
    int32_t *wheel; /* the finish wheel's buckets: heads of lists, -1 empty (NULL until the
                       first sequence joins) */
    fheap_t fh;     /* the finish heap: keys FINISH_WHEEL - 1 or more steps ahead */
    int32_t *stamp; /* joined with no token yet: their first decode step makes the first */
    size_t nstamp, capstamp;
    /* the step being built or in flight */
    int in_flight, dec_allocated, preempted_now;
    long step_n_dec, step_tokens;
    double step_start, step_dur, swap_time;
    double exit; /* pp > 1: when its micro-batch leaves the last stage */
    chunk_t *chunks;
    size_t nchunks, capchunks;
    int32_t *aborts; /* given up while in its step: failed when it ends */
    size_t naborts, capaborts;
    long kv_tr;
    int32_t tr_epoch;
    int stream;    /* the metrics' decode-step stream of its steps */
    uint8_t index; /* its place in the replica's lanes */
} lane_t;

/* Pipeline parallelism's stages and the micro-batches in flight (pp > 1; see
 * sv_replica_start_step). */
typedef struct pipe {
    double *stage_free; /* when each stage is next free */
    int s0_busy;        /* the first stage holds the last micro-batch formed */
    int *fifo;          /* lanes in flight, oldest first (a ring of pp) */
    int head, n;
} pipe_t;

enum { KEPT_SLOTS = 64 }; /* ended requests' slot arrays a replica keeps (kept) */

struct sv_replica {
    int id;
    const sv_perf_t *perf;
    sv_perf_memo_t step_memo; /* the last decode-only steps' costs (sv_perf_spec_step_memo) */
    sv_engine_cfg_t cfg;
    const sched_traits_t *tr; /* the scheduler's row */
    sv_reqpool_t *pool;
    sv_metrics_t *m;
    int bs;
    long seq_blocks; /* blocks every sequence holds besides its tokens' (sv_perf_seq_blocks) */
    /* A hybrid model (sv_kvspec_t: windowed, chunked or linear-state layers) without sampled
     * speculative decoding counts a sequence's blocks by KV cache group (sv_kv_blocks); g_step
     * is the blocks one more block's worth of tokens takes (one per growing group; 1 for a
     * dense model); a lane's kv_tr the blocks its step frees when it ends (windows that
     * slid, chunks that ended), of its epoch tr_epoch (unique: epoch_next the next). */
    int hyb, g_step;
    long la; /* lookahead slots every sequence holds past its tokens (a hybrid model with
                sampled speculative decoding: the k it drafts next) */
    int32_t epoch_next;
    int reserve; /* tr->reserve, read on every decode step */
    /* tr->chunked, unless engine.chunked_prefill turned the trtllm scheduler's chunking off */
    int chunked;
    sv__kvledger_t kv; /* every KV block of the replica (one pool so far: SV__KV_FULL) */
    long watermark_blocks;
    ring_t wq, sq; /* waiting, swapped (lazily cleaned: entries no longer in that queue) */
    int prio;      /* priority policy: waiting requests live in ph (lazily cleaned too) */
    pheap_t ph;
    long n_waiting, n_swapped;
    int32_t run_head, run_tail;
    long n_running;
    int32_t *pf; /* prefilling requests in admission order (compacted each step) */
    size_t npf, cappf;
    /* The lanes (lane_t): one, or pp with pipeline parallelism; ln the one whose step is
     * being built or ended. */
    lane_t *lanes, *ln;
    int pp;
    pipe_t pipe; /* pp > 1: the stages and the micro-batches in flight */
    /* Sampled speculative decoding (spec_k > 0): each verify step draws every decoding
     * sequence's accepted drafts from its own stream, so the sequences advance by different
     * counts; the finish heap and the buckets rest, and a step walks its sequences. */
    int spec_k;
    double spec_a[SV_SPEC_MAX_K]; /* acceptance of position i given i - 1 accepted */
    long dec_tokens; /* tokens a decoding sequence takes of a step's budget: 1 + spec_k */
    /* vLLM V0's multi-step scheduling (ms_n = num_scheduler_steps > 1): a decode step is a
     * round of ms_n GPU steps scheduled once, its tokens handed out together at its end;
     * it rides the path above with spec_k = ms_n - 1 lookahead slots, all "accepted". */
    int ms_n;
    /* None of the above nor the like (pp 1, no speculative or multi-step decoding, no hybrid
     * KV, no reservation, vLLM's phases without attention-DP balancing): a step is built,
     * costed and ended by the code compiled for this case (start_lane, build_step_as,
     * end_lane with `plain` set), those tests folded away. */
    int plain;
    long budget; /* of the step being built */
    sv_chunk_t *pch;
    size_t cappch;
    int32_t *done;
    size_t ndone, capdone;
    fin_t *fin; /* the step's finished requests, before they are freed in order */
    size_t nfin, capfin;
    int64_t run_seq; /* stamps of the running list: increasing from its head to its tail */
    int32_t *hand; /* prefill role: handed off in the last step */
    size_t nhand, caphand;
    int32_t *pending; /* decode role: landed, to join at the next step */
    size_t npend, cappend;
    long n_reserved; /* sequence slots promised to transfers on their way (their blocks:
                        the ledger's reservations) */
    long owed;       /* prompt tokens to prefill + output tokens to generate, of all here */
    long *sbuf;      /* scratch: cache slots of one request's blocks */
    size_t caps;
    /* Slot arrays of ended requests, kept for the next (room()): a request's, of about a
     * kilobyte, is past malloc's per-thread cache, and malloc and free cost about 450
     * instructions a request otherwise. At most KEPT_SLOTS, so their memory is bounded. */
    int32_t *kept[KEPT_SLOTS];
    int32_t kept_cap[KEPT_SLOTS];
    int nkept;
    sv_chain_memo_t own_memo; /* first segments' chains when no memo is shared */
    sv_chain_memo_t *memo;    /* where they are looked up (block_hashes()): own_memo, or
                                 the simulation's (sv_replica_share_memo; borrowed) */
    /* Async scheduling's one-step lag (vLLM's EngineCore.step_with_batch_queue): the step
     * that follows another at once was built when that one started, so it sees only the
     * requests that had arrived by then (cutoff) and still counts the sequence slots and
     * blocks of those the last step finished (lag_seqs, lag_blocks, left at lag_at). */
    double cutoff, lag_at;
    long lag_seqs, lag_blocks;
    int lag_on;
    /* fcfs: the time its first waiting request passes the API server (its `visible`), as
     * submitted to an empty queue or as the admission last stopped at it, not yet visible;
     * -inf when the front may have changed since (a pop, a preempted request put back in
     * front, a waiting request failed) or under priorities. The admission is skipped while
     * the step's cutoff is before it. */
    double front_vis;
    /* SGLang's admission state (sgl_admit): new_token_ratio, and batch_is_full (a prefill
     * found no room; none is tried again till a request leaves the batch). */
    double ntr;
    int sgl_full;
    long (*sgl_st)[2]; /* scratch of sgl_all_finish(): (tokens left, tokens held) */
    size_t capsgl;
    /* TensorRT-LLM's attention-DP balancing (adp_hold): its two counters, and whether
     * this step holds its context requests back. */
    long adp_wait, adp_batch;
    int adp_held;
    int oom;
    sv_replica_stats_t st;
};

/* the public record, the engine's private state (servesim/traffic/request.h: by slot) */
#define Q(r, id) sv_reqpool_req((r)->pool, (id))
#define E(r, id) ((sv_reqeng_t *)(r)->pool->side + sv_reqpool_side_slot((r)->pool, (id)))
#define KVP(r) (&(r)->kv.pool[SV__KV_FULL])              /* its pool of full-attention KV */

int sv_sched_parse(const char *s, sv_sched_t *out)
{
    for (int i = 0; i < NSCHED; i++) {
        if (strcmp(s, SCHEDULERS[i].name) == 0) {
            *out = (sv_sched_t)i;
            return 0;
        }
    }
    return SV_ENOTFOUND;
}

const char *sv_sched_name(sv_sched_t s)
{
    return ((int)s >= 0 && (int)s < NSCHED) ? SCHEDULERS[s].name : "?";
}

/* ---- small containers ------------------------------------------------------------------ */

static int ring_grow(ring_t *q)
{
    size_t nc = q->cap ? q->cap * 2 : 64;
    int32_t *v = malloc(nc * sizeof *v);
    if (!v) return SV_ENOMEM;
    for (size_t i = 0; i < q->len; i++)
        v[i] = q->v[(q->head + i) % q->cap];
    free(q->v);
    q->v = v;
    q->cap = nc;
    q->head = 0;
    return 0;
}

/* (Inlined: a request's submission pushes it, and its call frame cost more than the push.) */
static inline __attribute__((always_inline)) int ring_push_back(ring_t *q, int32_t x)
{
    if (q->len == q->cap && ring_grow(q)) return SV_ENOMEM;
    q->v[(q->head + q->len++) % q->cap] = x;
    return 0;
}

static int ring_push_front(ring_t *q, int32_t x)
{
    if (q->len == q->cap && ring_grow(q)) return SV_ENOMEM;
    q->head = (q->head + q->cap - 1) % q->cap;
    q->v[q->head] = x;
    q->len++;
    return 0;
}

/* Front entry whose request is still in queue `which` of this replica (SV__Q_*; stale
 * entries are dropped), or -1. */
/* Whether a queue's entry id is still this replica's request in queue which (its state not
 * released, not moved to another queue or replica since it was queued). */
static inline int queued_here(const sv_replica_t *r, int32_t id, int which)
{
    if (sv_reqpool_side_released(r->pool, id)) return 0;
    const sv_reqeng_t *e = E(r, id);
    return e->queue == which && e->at == r->id;
}

/* Whether a waiting entry is still this replica's waiting request. */
static inline int waiting_here(const sv_replica_t *r, int32_t id)
{
    return queued_here(r, id, SV__Q_WAITING);
}

static int32_t ring_front(sv_replica_t *r, ring_t *q, int which)
{
    while (q->len) {
        int32_t id = q->v[q->head];
        if (queued_here(r, id, which)) return id;
        q->head = (q->head + 1) % q->cap;
        q->len--;
    }
    return -1;
}

static void ring_pop(ring_t *q)
{
    q->head = (q->head + 1) % q->cap;
    q->len--;
}

/* ---- the priority policy's waiting heap and victim ------------------------------------- */

static int pent_less(const pent_t *a, const pent_t *b)
{
    if (a->prio != b->prio) return a->prio < b->prio;
    if (a->t != b->t) return a->t < b->t;
    return a->id < b->id;
}

SV_HEAP_DEFINE(pheap, pheap_t, pent_t, 2, pent_less, SV_HEAP_UNTRACKED)

static int pq_push(sv_replica_t *r, int32_t id)
{
    return pheap_push(&r->ph, NULL, (pent_t){Q(r, id)->priority, id, Q(r, id)->start});
}

static void pq_pop(sv_replica_t *r)
{
    pheap_pop(&r->ph, NULL);
}

/* The waiting queue, whichever the policy: add at the back (fcfs) or by priority. */
static int wq_push(sv_replica_t *r, int32_t id)
{
    return r->prio ? pq_push(r, id) : ring_push_back(&r->wq, id);
}

/* The first waiting request (stale entries dropped), or -1; wq_pop removes it. */
static int32_t wq_front(sv_replica_t *r)
{
    if (!r->prio) return ring_front(r, &r->wq, SV__Q_WAITING);
    while (r->ph.n) {
        int32_t id = r->ph.v[0].id;
        if (waiting_here(r, id)) return id;
        pq_pop(r);
    }
    return -1;
}

/* wq_front inline where its fcfs front is current (the admission loops' common case). */
static inline __attribute__((always_inline)) int32_t wq_front_now(sv_replica_t *r)
{
    if (!r->prio && r->wq.len > 0 && waiting_here(r, r->wq.v[r->wq.head]))
        return r->wq.v[r->wq.head];
    return wq_front(r);
}

static void wq_pop(sv_replica_t *r)
{
    r->front_vis = -INFINITY; /* a new front */
    if (r->prio)
        pq_pop(r);
    else
        ring_pop(&r->wq);
}

static int32_t pipe_victim(sv_replica_t *r);

/* A running request's place in the priority policy's order (pent_less). */
static pent_t prio_of(const sv_replica_t *r, int32_t id)
{
    return (pent_t){Q(r, id)->priority, id, Q(r, id)->start};
}

/* The running request to preempt: the last admitted (fcfs), or under the priority policy
 * the largest (priority, arrival) (vLLM V1's Scheduler.schedule, max(self.running, key=
 * (priority, arrival_time)), vllm/v1/core/sched/scheduler.py). Requests sent at one
 * instant reach vLLM one after the other, each stamped with its own arrival_time, so among
 * equal (priority, send time) the victim is the latest to arrive: the largest id, as the
 * waiting queue orders them. */
static int32_t victim_of(sv_replica_t *r)
{
    if (r->pp > 1) return pipe_victim(r);
    if (!r->prio) return r->run_tail;
    int32_t best = r->run_head;
    for (int32_t id = best >= 0 ? E(r, best)->next : -1; id >= 0; id = E(r, id)->next) {
        const pent_t a = prio_of(r, id), b = prio_of(r, best);
        if (pent_less(&b, &a)) best = id;
    }
    return best;
}

static int push_id(sv_replica_t *r, int32_t **arr, size_t *n, size_t *cap, int32_t id)
{
    if (sv__grow((void **)arr, cap, *n + 1, sizeof **arr)) {
        r->oom = 1;
        return SV_ENOMEM;
    }
    (*arr)[(*n)++] = id;
    return 0;
}

static inline int hent_less(const hent_t *a, const hent_t *b)
{
    return a->key < b->key;
}
#define HENT_MOVED(ctx, e, i) (E((sv_replica_t *)(ctx), (e)->id)->heap_pos = (int32_t)(i))
SV_HEAP_DEFINE(fheap, fheap_t, hent_t, 2, hent_less, HENT_MOVED)

/* The lane whose decode set holds (or whose step last took a chunk of) request e. */
#define LANE(r, e) (&(r)->lanes[(e)->lane])

static int heap_push(sv_replica_t *r, int64_t key, int32_t id)
{
    if (fheap_push(&r->ln->fh, r, (hent_t){key, id})) {
        r->oom = 1;
        return SV_ENOMEM;
    }
    return 0;
}

static void heap_remove(sv_replica_t *r, lane_t *L, size_t i)
{
    E(r, L->fh.v[i].id)->heap_pos = -1;
    fheap_remove(&L->fh, r, i);
}

/* Request id, whose last token is of lane L's decode step key, into the bucket of key. */
static int wheel_add(sv_replica_t *r, lane_t *L, int32_t id, int64_t key)
{
    if (!L->wheel) {
        L->wheel = malloc(FINISH_WHEEL * sizeof *L->wheel);
        if (!L->wheel) {
            r->oom = 1;
            return SV_ENOMEM;
        }
        memset(L->wheel, 0xff, FINISH_WHEEL * sizeof *L->wheel); /* -1: empty */
    }
    sv_reqeng_t *e = E(r, id);
    int32_t *head = &L->wheel[key & (FINISH_WHEEL - 1)];
    e->heap_pos = SV__IN_WHEEL;
    e->wprev = -1;
    e->wnext = *head;
    if (*head >= 0) E(r, *head)->wprev = id;
    *head = id;
    return 0;
}

/* A decoding sequence of lane r->ln waits for the step whose token is its last. */
static int finish_add(sv_replica_t *r, int32_t id, int64_t key)
{
    if (key - r->ln->kd < FINISH_WHEEL - 1) return wheel_add(r, r->ln, id, key);
    return heap_push(r, key, id);
}

/* Request id (of lane L's decode set) leaves its bucket, whose key its join fixed. */
static void wheel_remove(sv_replica_t *r, lane_t *L, int32_t id)
{
    sv_reqeng_t *e = E(r, id);
    int64_t key = e->kd_join + Q(r, id)->output - e->g_join - 1;
    if (e->wprev >= 0)
        E(r, e->wprev)->wnext = e->wnext;
    else
        L->wheel[key & (FINISH_WHEEL - 1)] = e->wnext;
    if (e->wnext >= 0) E(r, e->wnext)->wprev = e->wprev;
    e->heap_pos = -1;
}

/* Lane L's decode step k ended (L->kd is k + 1): its bucket's sequences made their last
 * token; they are appended to the step's finished list in running order, and the heap's
 * keys that came within reach of the wheel move to it. */
static void wheel_pop(sv_replica_t *r, lane_t *L, int64_t k);

static void run_append(sv_replica_t *r, int32_t id)
{
    sv_reqeng_t *e = E(r, id);
    e->run_seq = r->run_seq++;
    e->prev = r->run_tail;
    e->next = -1;
    if (r->run_tail >= 0)
        E(r, r->run_tail)->next = id;
    else
        r->run_head = id;
    r->run_tail = id;
    r->n_running++;
}

static void run_remove(sv_replica_t *r, int32_t id)
{
    sv_reqeng_t *e = E(r, id);
    if (e->prev >= 0)
        E(r, e->prev)->next = e->next;
    else
        r->run_head = e->next;
    if (e->next >= 0)
        E(r, e->next)->prev = e->prev;
    else
        r->run_tail = e->prev;
    e->prev = e->next = -1;
    r->n_running--;
    r->sgl_full = 0; /* SGLang: a batch that shrank is no longer full (batch_is_full) */
}

/* ---- life and death ---------------------------------------------------------------------- */

/* Side-array hooks: a request's engine state starts outside every queue. */
static void reqeng_init(void *el)
{
    sv_reqeng_t *e = el;
    e->at = e->heap_pos = e->seg = e->prev = e->next = -1;
}

static void free_hashes(sv_reqeng_t *e);
static void reqeng_fini(void *el)
{
    free_hashes(el);
}

/* A memo's chains and table (the memo itself stays, empty). */
static void memo_fini(sv_chain_memo_t *m)
{
    for (int i = 0; m->e && i < PREFIX_MEMO; i++)
        free(m->e[i].h);
    free(m->e);
    m->e = NULL;
}

int sv_replica_new(int id, const sv_perf_t *perf, long kv_blocks, const sv_engine_cfg_t *cfg,
                   sv_reqpool_t *pool, sv_metrics_t *metrics, sv_replica_t **out, sv_error_t *err)
{
    *out = NULL;
    int arc = sv_reqpool_attach(pool, sizeof(sv_reqeng_t), reqeng_init, reqeng_fini);
    if (arc)
        return sv_errorf(err, arc,
                         arc == SV_ENOMEM ? "out of memory"
                                          : "the request pool serves another engine");
    sv_replica_t *r = calloc(1, sizeof *r);
    if (!r) return sv_errorf(err, SV_ENOMEM, "out of memory");
    r->id = id;
    r->lag_at = -1.0;
    r->front_vis = -INFINITY;
    r->perf = perf;
    r->cfg = *cfg;
    r->pool = pool;
    r->m = metrics;
    r->bs = cfg->block_size;
    r->memo = &r->own_memo;
    r->seq_blocks = sv_perf_seq_blocks(perf, r->bs);
    r->tr = &SCHEDULERS[cfg->scheduler];
    r->reserve = r->tr->reserve;
    r->chunked = r->tr->chunked && !cfg->no_chunked_prefill;
    r->prio = cfg->priority_policy;
    r->ntr = SGL.init_ratio;
    r->spec_k = perf->set.spec_expected ? 0 : sv_spec_k(&perf->set);
    for (int i = 0; i < r->spec_k; i++)
        r->spec_a[i] = sv_spec_accept(&perf->set, i);
    r->dec_tokens = 1 + r->spec_k;
    r->ms_n = 1;
    if (perf->set.sched_steps > 1 && !r->spec_k) {
        /* vLLM's _get_num_lookahead_slots: n - 1 slots beyond the step's token, each
         * decode costing one token of the budget (num_new_tokens 1, _schedule_running). */
        r->ms_n = perf->set.sched_steps;
        r->spec_k = r->ms_n - 1;
        r->dec_tokens = 1;
    }
    const sv_kvspec_t *ks = &perf->kvs;
    /* (Multi-step scheduling is vLLM V0's, which had no hybrid allocator; speculative
     * decoding by its expected acceptance keeps the fixed draft slots of sv_perf_seq_blocks.) */
    r->hyb = ks->hybrid && r->ms_n == 1 && ks->block_size == r->bs &&
             !(perf->set.spec_expected && sv_spec_k(&perf->set) > 0);
    r->la = r->hyb ? r->spec_k : 0;
    r->g_step = r->hyb ? ks->groups[SV_KV_FULL] + ks->groups[SV_KV_WINDOW] + ks->groups[SV_KV_CHUNK] : 1;
    sv__kv_init(&r->kv);
    /* The prefix cache itself comes with the first block cached. vLLM V1's block pool
     * keeps one block aside as its null block (vllm/v1/core/block_pool.py, BlockPool:
     * null_block, and get_usage over num_gpu_blocks - 1): the others are given out. */
    long usable = kv_blocks - (cfg->scheduler == SV_SCHED_VLLM && kv_blocks > 1 ? 1 : 0);
    sv__kv_add_pool(&r->kv, usable, r->bs, cfg->prefix_caching && !r->reserve);
    r->watermark_blocks = sv_watermark_blocks(cfg, kv_blocks);
    r->run_head = r->run_tail = -1;
    r->pp = perf->set.pp > 1 ? perf->set.pp : 1;
    r->plain = r->pp == 1 && !r->spec_k && r->ms_n == 1 && !r->hyb && !r->reserve &&
               !cfg->adp_balance &&
               (r->tr == &SCHEDULERS[SV_SCHED_VLLM] || r->tr == &SCHEDULERS[SV_SCHED_TRTLLM]);
    r->lanes = calloc((size_t)r->pp, sizeof *r->lanes);
    r->ln = r->lanes;
    int bad = !r->lanes;
    for (int l = 0; !bad && l < r->pp; l++) {
        lane_t *L = &r->lanes[l];
        L->tr_epoch = 1 + l;
        L->index = (uint8_t)l;
        L->stream = id + l * cfg->stream_stride;
        L->bucket = calloc((size_t)r->bs, sizeof *L->bucket);
        bad = !L->bucket;
    }
    r->epoch_next = 1 + r->pp;
    if (!bad && r->pp > 1) {
        r->pipe.stage_free = calloc((size_t)r->pp, sizeof *r->pipe.stage_free);
        r->pipe.fifo = calloc((size_t)r->pp, sizeof *r->pipe.fifo);
        bad = !r->pipe.stage_free || !r->pipe.fifo;
    }
    if (bad) {
        sv_replica_free(r);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    *out = r;
    return 0;
}

void sv_replica_free(sv_replica_t *r)
{
    if (!r) return;
    free(r->wq.v);
    free(r->ph.v);
    free(r->sq.v);
    free(r->pf);
    for (int l = 0; r->lanes && l < r->pp; l++) {
        lane_t *L = &r->lanes[l];
        free(L->bucket);
        free(L->fh.v);
        free(L->wheel);
        free(L->chunks);
        free(L->aborts);
        free(L->stamp);
    }
    free(r->lanes);
    free(r->pipe.stage_free);
    free(r->pipe.fifo);
    free(r->pch);
    free(r->done);
    free(r->fin);
    free(r->hand);
    free(r->pending);
    free(r->sgl_st);
    sv__kv_fini(&r->kv);
    free(r->sbuf);
    for (int i = 0; i < r->nkept; i++)
        free(r->kept[i]);
    memo_fini(&r->own_memo); /* (a shared memo is the simulation's) */
    free(r);
}

sv_chain_memo_t *sv_chain_memo_new(void)
{
    return calloc(1, sizeof(sv_chain_memo_t));
}

void sv_chain_memo_free(sv_chain_memo_t *m)
{
    if (!m) return;
    memo_fini(m);
    free(m);
}

long sv_chain_memo_hashed(const sv_chain_memo_t *m)
{
    return m->hashed;
}

void sv_replica_share_memo(sv_replica_t *r, sv_chain_memo_t *m)
{
    r->memo = m ? m : &r->own_memo;
}

long sv_watermark_blocks(const sv_engine_cfg_t *cfg, long kv_blocks)
{
    return SCHEDULERS[cfg->scheduler].reserve ? 0 : (long)floor(cfg->watermark * (double)kv_blocks);
}

/* Blocks of a sequence with `tokens` of KV at rest: a hybrid model's in every KV cache
 * group (sv_kv_blocks); else its tokens' blocks and, from its first token, the fixed ones
 * of sv_perf_seq_blocks (draft slots; a hybrid model's window and state under sampled
 * speculative decoding). */
static long blocks_for(const sv_replica_t *r, long tokens)
{
    if (r->hyb) return tokens > 0 ? sv_kv_blocks(&r->perf->kvs, tokens, tokens + r->la, NULL) : 0;
    return sv__kv_blocks(KVP(r), tokens) + (tokens > 0 ? r->seq_blocks : 0);
}

/* ... while a step gives a sequence with c tokens n more: a hybrid model's windowed and
 * chunked groups keep, for that step, the blocks its new tokens' window no longer covers
 * (vLLM frees them when it next schedules the request: KVCacheManager.allocate_slots calls
 * remove_skipped_blocks before allocating, vllm/v1/core/kv_cache_manager.py). */
static long blocks_step(const sv_replica_t *r, long c, long n)
{
    return r->hyb ? sv_kv_blocks(&r->perf->kvs, c, c + n + r->la, NULL) : blocks_for(r, c + n);
}

/* ... over its whole life of len tokens, at most at rest (what a whole-sequence scheduler
 * reserves). */
static long whole_blocks(const sv_replica_t *r, long len)
{
    return r->hyb ? sv_kv_peak_blocks(&r->perf->kvs, len + r->la, NULL) : blocks_for(r, len);
}

/* ... at most in any step, so that a request that needs more is refused, not left waiting
 * forever: a hybrid model's step holds the blocks its new tokens' window left behind, a
 * whole prompt's (its re-prefill's after a preemption) in every growing group without
 * chunked prefill, at most a budget's more than at rest with it. */
static long step_bound(const sv_replica_t *r, long len)
{
    if (!r->hyb || r->reserve) return whole_blocks(r, len);
    long whole = blocks_step(r, 0, len);
    if (!r->chunked) return whole;
    long n = len < r->cfg.max_num_batched_tokens ? len : r->cfg.max_num_batched_tokens;
    long bound = whole_blocks(r, len) + r->g_step * ((n + r->bs - 1) / r->bs);
    return bound < whole ? bound : whole;
}

/* A hybrid model: n of request e's blocks go back when the step being built ends. */
static void add_tr(sv_replica_t *r, sv_reqeng_t *e, long n)
{
    if (n <= 0) return;
    if (e->kv_tr_at != r->ln->tr_epoch) e->kv_tr = 0;
    e->kv_tr_at = r->ln->tr_epoch;
    e->kv_tr += (int32_t)n;
    r->ln->kv_tr += n;
}

/* ... no longer: given back now (give; a prefill chunk's, which it keeps computed) or not
 * (a decoding sequence taken out before its token, whose window did not slide). */
static void drop_tr(sv_replica_t *r, sv_reqeng_t *e, int give)
{
    if (e->kv_tr_at != r->ln->tr_epoch || e->kv_tr == 0) return;
    r->ln->kv_tr -= e->kv_tr;
    if (give) sv__kv_give(KVP(r), e->kv_tr);
    e->kv_tr = 0;
}

/* The step ended: what its windows and chunks left behind is free. */
static void end_tr(sv_replica_t *r)
{
    if (r->ln->kv_tr) sv__kv_give(KVP(r), r->ln->kv_tr);
    r->ln->kv_tr = 0;
    r->ln->tr_epoch = r->epoch_next++;
}

/* Blocks that can be given out (the ledger's free and idle cached ones). */
static long avail(const sv_replica_t *r)
{
    return sv__kv_avail(KVP(r)) - (r->lag_on ? r->lag_blocks : 0);
}

/* ---- the prefix cache: a request's block hashes ------------------------------------------ */

/*
 * The chained hashes of request id's full blocks (at least its first n): its tokens are
 * its prompt's segments (a request without any is one segment of its own) and then its
 * output, a segment of its own; a block's hash mixes its parent's with every piece of a
 * segment it covers (segment, offset, length), so equal prefixes give equal chains.
 * Computed once per request and block size, for every block it can ever fill.
 */
static uint64_t piece_hash(uint64_t parent, const sv_segment_t *sg, long off, long n)
{
    return sv_splitmix64(parent ^ (sg->id + (uint64_t)off * 0x100000001b3ULL +
                                   (uint64_t)n * 0x9e3779b1ULL));
}

/*
 * The memo's entry for the chain inside first segment sg at replica r's block size
 * (computed here on a miss), or NULL without memory (the caller hashes every block
 * itself). A miss may overwrite another entry's hashes in place (or move them), so what
 * an entry holds is valid only until the next lookup in the memo, by r or by any replica
 * sharing it. That is enough: every caller of block_hashes() hands the hashes to the
 * ledger in the same call (register_blocks, chain_hits, sv_replica_cached_prefix; the
 * prefix cache copies the values it keeps, never the pointer), no lookup comes in between,
 * and a simulation calls one replica at a time; so no replica reads or keeps an array
 * another one's lookup rewrites. The memo's memory is bounded: PREFIX_MEMO entries, each
 * one chain of a segment's blocks (at most max_model_len / block_size).
 */
static const memo_entry_t *first_segment_chain(sv_replica_t *r, const sv_segment_t *sg)
{
    if (sg->len < r->bs) return NULL;
    sv_chain_memo_t *M = r->memo;
    if (!M->e && !(M->e = calloc(PREFIX_MEMO, sizeof *M->e))) return NULL;
    /* (the block size in the home: one segment's chains of two sizes probe apart) */
    uint64_t home = sv_splitmix64(sg->id ^ ((uint64_t)r->bs << 40));
    memo_entry_t *m = NULL;
    for (int i = 0; i < PREFIX_PROBE && !m; i++) {
        memo_entry_t *t = &M->e[(home + (uint64_t)i) & (PREFIX_MEMO - 1)];
        if (t->h && t->id == sg->id && t->len == sg->len && t->bs == r->bs) return t;
        if (!t->h) m = t;
    }
    if (!m) m = &M->e[home & (PREFIX_MEMO - 1)];
    long n = sg->len / r->bs;
    uint64_t *v = m->n >= n ? m->h : realloc(m->h, (size_t)n * sizeof *v);
    if (!v) return NULL;
    *m = (memo_entry_t){.id = sg->id, .len = sg->len, .bs = r->bs, .n = n, .h = v};
    M->hashed++;
    uint64_t h = 0x51ed5eedULL;
    for (long b = 0; b < n; b++)
        v[b] = h = piece_hash(h, sg, b * r->bs, r->bs);
    return m;
}

/* The leading full blocks of request id inside its first segment (the memo's chain, kept by
 * the cache a run at a time); 0 when that segment is its own message or shorter than a
 * block. */
static long chain_blocks(const sv_replica_t *r, int32_t id)
{
    const sv_req_t *q = Q(r, id);
    if (!q->nseg || (q->own_tail && q->nseg == 1)) return 0;
    return r->pool->seg[q->seg_off].len / r->bs;
}

/* The full blocks of request id that another prompt may begin with: those inside the
 * segments before its own message (sv_req_t.own_tail); LONG_MAX when any may be shared. */
static long shared_blocks(const sv_replica_t *r, int32_t id)
{
    const sv_req_t *q = Q(r, id);
    if (!q->own_tail) return LONG_MAX;
    return ((long)q->input - r->pool->seg[q->seg_off + q->nseg - 1].len) / r->bs;
}

/* The full blocks of request id a lookup can find anywhere: past its shared ones only
 * those it cached itself before a preemption (register_all()). */
static long findable_blocks(const sv_replica_t *r, int32_t id)
{
    return Q(r, id)->preemptions ? LONG_MAX : shared_blocks(r, id);
}

static const uint64_t *block_hashes(sv_replica_t *r, int32_t id, long n)
{
    sv_reqeng_t *e = E(r, id);
    if (e->chain && e->chain_bs == r->bs && e->nchain >= n) return e->chain;
    const sv_req_t *q = Q(r, id);
    /* An unpreempted own_tail prompt of a system prompt and its message: what can be
     * asked of it is the system prompt's chain, read from the memo, not copied (valid
     * until the next lookup in the memo, which no caller makes while it reads them, nor
     * any replica sharing the memo: first_segment_chain()). */
    if (q->own_tail && q->nseg == 2 && !q->preemptions) {
        const memo_entry_t *m = first_segment_chain(r, &r->pool->seg[q->seg_off]);
        if (m && m->n >= n) return m->h;
    }
    long total = ((long)q->input + q->output - 1) / r->bs;
    /* (an unpreempted own message and output are never hashed: only its shared blocks) */
    if (findable_blocks(r, id) < total) total = findable_blocks(r, id);
    if (total < n) total = n;
    /* Sized exactly (not sv__grow's doubling): one chain per live request, bounded by
     * max_model_len / block_size. */
    uint64_t *c = realloc(e->chain, ((size_t)total + 1) * sizeof *c);
    if (!c) {
        r->oom = 1;
        return NULL;
    }
    e->chain = c;
    e->nchain = (int32_t)total;
    e->chain_bs = r->bs;
    const sv_segment_t *seg = q->nseg ? r->pool->seg + q->seg_off : NULL;
    sv_segment_t own = {sv_splitmix64(0x5e9f00d ^ (uint64_t)id), q->input};
    sv_segment_t out = {sv_output_segment_id(id), q->output};
    int nseg = q->nseg ? q->nseg : 1, k = 0;
    long off = 0; /* tokens of the current segment already covered */
    uint64_t h = 0x51ed5eedULL;
    long b = 0;
    /* (the first segment of an own_tail prompt of one segment is its own message) */
    const memo_entry_t *m =
        seg && total > 0 && !(q->own_tail && q->nseg == 1) ? first_segment_chain(r, &seg[0]) : NULL;
    if (m && m->n > 0) {
        b = m->n < total ? m->n : total;
        memcpy(c, m->h, (size_t)b * sizeof *c);
        h = c[b - 1];
        off = b * r->bs;
        if (off == seg[0].len) {
            k = 1;
            off = 0;
        }
    }
    for (; b < total; b++) {
        long need = r->bs;
        while (need > 0) {
            const sv_segment_t *sg = k < nseg ? (seg ? &seg[k] : &own) : &out;
            if (k > nseg || sg->len <= off) {
                /* Past the prompt and the output (segments shorter than the input, or an
                 * empty one): the rest are tokens of this request's own. */
                sg = &own;
                if (k <= nseg) {
                    k = nseg + 1;
                    off = 0;
                }
                own.len = INT32_MAX;
            }
            long take_n = sg->len - off < need ? sg->len - off : need;
            h = piece_hash(h, sg, off, take_n);
            need -= take_n;
            off += take_n;
            if (off == sg->len) {
                k++;
                off = 0;
            }
        }
        c[b] = h;
    }
    return c;
}

/* Room for n cache slots in *arr (of *cap), or NULL: sized for every block request id can
 * fill, exactly, as the chain (one per live request); a new request's is the array an
 * ended one left (end_hashes()), grown if it has less room. */
static int32_t *room(sv_replica_t *r, int32_t id, int32_t **arr, int32_t *cap, long n)
{
    if (*cap >= n) return *arr;
    const sv_req_t *q = Q(r, id);
    long c = ((long)q->input + q->output) / r->bs + 1;
    if (c < n) c = n;
    if (!*arr && r->nkept > 0) { /* the last kept; grown below when too small */
        *arr = r->kept[--r->nkept];
        *cap = r->kept_cap[r->nkept];
        if (*cap >= c) return *arr;
    }
    int32_t *v = realloc(*arr, (size_t)c * sizeof *v);
    if (!v) {
        r->oom = 1;
        return NULL;
    }
    *arr = v;
    *cap = (int32_t)c;
    return v;
}

/* Room for the cache slots of request id's first n blocks (its slots), or NULL. */
static int32_t *slots_of(sv_replica_t *r, int32_t id, long n)
{
    return room(r, id, &E(r, id)->slots, &E(r, id)->capslots, n);
}

/* Request id shares the n cached blocks whose slots chain_hits() left in r->sbuf (as its
 * incoming KV's, in xslots, when xfer). */
static void take_hits(sv_replica_t *r, int32_t id, long n, int xfer)
{
    sv_reqeng_t *e = E(r, id);
    int32_t *v = n <= 0 ? NULL
                 : xfer ? room(r, id, &e->xslots, &e->capxslots, n)
                        : slots_of(r, id, n);
    if (n > 0 && !v) return;
    sv__kv_ref(KVP(r), r->sbuf, n);
    for (long j = 0; j < n; j++)
        v[j] = (int32_t)r->sbuf[j];
}

/* Request id no longer uses the first n blocks of its chain in the cache. */
static void unref_chain(sv_replica_t *r, int32_t id, long n)
{
    if (!KVP(r)->pc || n == 0) return;
    sv__kv_uncache(KVP(r), E(r, id)->slots, n);
}

/* Its slots are of no more use. */
static void free_slots(sv_reqeng_t *e)
{
    free(e->slots);
    free(e->xslots);
    e->slots = e->xslots = NULL;
    e->capslots = e->capxslots = 0;
}

/* Its block hashes and their slots are of no more use (most requests never had any: no
 * call to free then). */
static void free_hashes(sv_reqeng_t *e)
{
    if (e->chain) {
        free(e->chain);
        e->chain = NULL;
    }
    if (e->slots || e->xslots) free_slots(e); /* (room held: an array there) */
}

/* Slot array *arr (of *cap) joins replica r's kept ones (room()) if there is space. */
static void keep(sv_replica_t *r, int32_t **arr, int32_t *cap)
{
    if (!*arr || r->nkept == KEPT_SLOTS) return;
    r->kept[r->nkept] = *arr;
    r->kept_cap[r->nkept++] = *cap;
    *arr = NULL;
    *cap = 0;
}

/* ... request e ended on replica r: its slot arrays are kept there for the next requests'
 * while it has space (room()), the rest freed. */
static void end_hashes(sv_replica_t *r, sv_reqeng_t *e)
{
    if (e->slots || e->xslots) {
        keep(r, &e->slots, &e->capslots);
        keep(r, &e->xslots, &e->capxslots);
    }
    free_hashes(e);
}

/* Blocks of request id that its cache references hold (0 without the cache). */
static void drop_cached(sv_replica_t *r, int32_t id)
{
    sv_reqeng_t *e = E(r, id);
    unref_chain(r, id, e->cached_n);
    e->cached_n = 0;
}

/*
 * The full blocks among request id's first `tokens` join the cache, each its own entry
 * even where another request cached the same content meanwhile (as vLLM keeps both
 * blocks). vLLM hashes every full block (vllm/v1/core/block_pool.py,
 * BlockPool.cache_full_blocks); here the blocks of a prompt with an identity are hashed as
 * they are scheduled, and those of a prompt that shares nothing, which only the request
 * itself could ever look up, when it is preempted (preempt()); until then, freed, they are
 * parked in the LRU list without a hash (release_blocks()). Either way every freed full
 * block waits there and is evicted oldest first, as in vLLM's one free queue.
 */
static void register_blocks(sv_replica_t *r, int32_t id, long full)
{
    sv_reqeng_t *e = E(r, id);
    if (!KVP(r)->caching || full <= e->cached_n) return;
    const uint64_t *h = block_hashes(r, id, full);
    int32_t *v = h ? slots_of(r, id, full) : NULL;
    if (!v || sv__kv_cache(KVP(r), h, chain_blocks(r, id), e->cached_n, full, v)) r->oom = 1;
    e->cached_n = (int32_t)full;
}

/* ... as they are scheduled: those past its shared blocks wait (sv_req_t.own_tail: as a
 * prompt that shares nothing, they are parked when freed, hashed when it is preempted). */
static void register_upto(sv_replica_t *r, int32_t id, long tokens)
{
    if (!KVP(r)->caching) return;
    long full = tokens / r->bs, sh = shared_blocks(r, id);
    register_blocks(r, id, full < sh ? full : sh);
}

/* The full blocks request id has computed join the cache. */
static void register_full(sv_replica_t *r, int32_t id)
{
    register_upto(r, id, E(r, id)->computed);
}

/* ... every one of them (it is preempted and may look them up again). */
static void register_all(sv_replica_t *r, int32_t id)
{
    register_blocks(r, id, E(r, id)->computed / r->bs);
}

/*
 * A waiting request with nothing computed looks up the longest chain of its prompt's
 * full blocks in the cache (never its last token, which must be computed). Returns the
 * number of hits and, in *touched, how many of them nobody referenced (taking them uses
 * up available blocks); their slots are left in r->sbuf.
 */
static long chain_hits(sv_replica_t *r, int32_t id, long max, long *touched);
static long findable_hits(sv_replica_t *r, int32_t id, long *touched);
static inline __attribute__((always_inline)) long lookup_prefix(sv_replica_t *r, int32_t id,
                                                                 long *touched)
{
    sv_reqeng_t *e = E(r, id);
    const sv_req_t *q = Q(r, id);
    *touched = 0;
    /* A prompt without identity is unique: only its own blocks, kept when it was
     * preempted, can be found. */
    if (!KVP(r)->pc || e->computed > 0 || (!q->nseg && !q->preemptions)) return 0;
    return findable_hits(r, id, touched);
}

/* ... the lookup itself, up to the blocks it can find (apart, so that the checks above
 * stay small enough to be inline in the admission loops). */
static long findable_hits(sv_replica_t *r, int32_t id, long *touched)
{
    long max = (E(r, id)->target - 1) / r->bs, fb = findable_blocks(r, id);
    return chain_hits(r, id, max < fb ? max : fb, touched);
}

/* The longest run of request id's first max full blocks found in the cache: how many,
 * their slots in r->sbuf and, in *touched, how many of them nobody references. */
static long chain_hits(sv_replica_t *r, int32_t id, long max, long *touched)
{
    *touched = 0;
    if (max <= 0) return 0;
    const uint64_t *h = block_hashes(r, id, max);
    if (!h || sv__grow((void **)&r->sbuf, &r->caps, (size_t)max + 1, sizeof *r->sbuf)) {
        r->oom = 1;
        return 0;
    }
    return sv__kv_hits(KVP(r), h, chain_blocks(r, id), max, r->sbuf, touched);
}

/* Tokens a decoding sequence has emitted since it joined: one a step in the lockstep, what
 * its verify steps accepted with sampled speculative decoding. */
static long member_tokens(const sv_replica_t *r, const sv_reqeng_t *e)
{
    if (r->spec_k) return e->spec_tok;
    return (long)((r->pp > 1 ? LANE(r, e) : r->ln)->kd - e->kd_join);
}

/* The bucket of a sequence joining lane r->ln's decode set now (kd_join its kd): its
 * tokens' offset in their block, less the lane's steps' (c_join - kd_join, modulo the block
 * size); kept in e->phase till it leaves. */
static int phase_of(const sv_replica_t *r, const sv_reqeng_t *e)
{
    int p = (int)(e->c_join % r->bs) - r->ln->kd_mod;
    return p < 0 ? p + r->bs : p;
}

static int needs_block(const sv_replica_t *r, const sv_reqeng_t *e)
{
    return !e->reserved && (e->c_join + member_tokens(r, e)) % r->bs == 0;
}

/* Tokens the request still costs this replica: prompt left to prefill, outputs to make. */
static long owed_of(const sv_replica_t *r, int32_t id)
{
    const sv_req_t *q = Q(r, id);
    const sv_reqeng_t *e = E(r, id);
    if (e->in_decode) return q->output - (e->g_join + member_tokens(r, e));
    /* A swapped-out sequence has decoded past its prompt: nothing left to prefill. */
    long prefill = (long)e->target - e->computed;
    return (prefill > 0 ? prefill : 0) + (q->output - e->generated);
}

static long reserve_need(const sv_replica_t *r, long tokens);
static long own_blocks(const sv_replica_t *r, const sv_reqeng_t *e);

/* Sampled spec decoding: the blocks a decoding sequence holds. A hybrid model's: its
 * growing groups' lists of spec_blocks blocks (they never shrink: vLLM keeps a rejected
 * draft's slots) less what the windows left behind when it was last scheduled with
 * spec_skip tokens computed (SlidingWindowManager.remove_skipped_blocks). */
static long spec_held(const sv_replica_t *r, const sv_reqeng_t *e)
{
    if (!r->hyb) return e->spec_blocks;
    return sv_kv_blocks(&r->perf->kvs, e->spec_skip, (long)e->spec_blocks * r->bs, NULL);
}

/* Request id joins the decode set; slot: it holds the block its next token needs too (a
 * swapped-in or landed sequence, whose blocks were taken with reserve_need()). */
static void join_decode(sv_replica_t *r, int32_t id, int slot)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    e->in_decode = 1;
    e->lane = r->ln->index;
    e->c_join = e->computed;
    e->g_join = e->generated;
    e->kd_join = r->ln->kd;
    r->ln->n_dec++;
    r->ln->ctx_sum += e->c_join;
    if (r->spec_k) {
        e->spec_tok = 0;
        if (r->hyb) {
            /* its growing groups' block lists and where their windows were cut */
            long slots = e->c_join + (slot ? 1 : 0) + r->la;
            e->spec_blocks = (int32_t)((slots + r->bs - 1) / r->bs);
            e->spec_skip = e->c_join;
        } else {
            e->spec_blocks = (int32_t)(slot ? reserve_need(r, e->c_join) : blocks_for(r, e->c_join));
        }
    } else {
        e->phase = phase_of(r, e);
        if (!e->reserved) r->ln->bucket[e->phase]++;
        finish_add(r, id, r->ln->kd + q->output - e->g_join - 1);
        if (slot && r->hyb && !e->reserved)
            add_tr(r, e, blocks_step(r, e->c_join, 1) - blocks_for(r, e->c_join + 1));
    }
    /* With no token yet, its first decode step makes its first token (TTFT, no ITL). */
    e->seg = sv_metrics_seg_open(r->m, id, r->ln->stream, r->ln->kd,
                                 e->generated ? q->last_token : NAN);
    if (!e->generated) push_id(r, &r->ln->stamp, &r->ln->nstamp, &r->ln->capstamp, id);
}

/* (Inlined: once a request, mostly from the finish wheel's pop, whose loop then keeps its
 * registers across it.) */
static inline __attribute__((always_inline)) void leave_decode(sv_replica_t *r, int32_t id)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    lane_t *L = r->pp > 1 ? LANE(r, e) : r->ln; /* (a victim: perhaps a lane at rest) */
    long s = member_tokens(r, e);
    long held = r->spec_k ? own_blocks(r, e) : 0;
    if (!e->reserved && !r->spec_k) L->bucket[e->phase]--;
    L->n_dec--;
    L->ctx_sum -= e->c_join + s;
    if (e->heap_pos >= 0)
        heap_remove(r, L, (size_t)e->heap_pos);
    else if (e->heap_pos == SV__IN_WHEEL)
        wheel_remove(r, L, id);
    q->last_token = sv_metrics_seg_close(r->m, e->seg, L->kd);
    e->seg = -1;
    e->computed = (int32_t)(e->c_join + s);
    e->generated = (int32_t)(e->g_join + s);
    e->in_decode = 0;
    /* Sampled spec decoding: the slots its last verify took beyond its tokens go back. */
    if (held > own_blocks(r, e)) sv__kv_give(KVP(r), held - own_blocks(r, e));
    /* What it decoded is cached from here (lazily: when it leaves the batch). */
    if (q->nseg) register_full(r, id);
}

/* Blocks for a transfer of `tokens` (or a swap-in): its KV plus the block its next token
 * needs; under multi-step scheduling, the slots of the round's n tokens (vLLM's
 * _schedule_swapped appends the lookahead slots too). */
static long reserve_need(const sv_replica_t *r, long tokens)
{
    if (r->ms_n > 1) return blocks_for(r, tokens + r->ms_n);
    if (r->hyb) return blocks_step(r, tokens, 1);
    return blocks_for(r, tokens) + (tokens % r->bs == 0 ? 1 : 0);
}

/*
 * The one rule for what a request holds here as its own (the ledger's "held by
 * requests"), not counting the leading blocks it shares through the prefix cache: what
 * a whole-sequence scheduler reserved at admission; else the blocks of its tokens in KV
 * (a decoding sequence's grow by one per decode step since it joined), and a request
 * whose transfer landed but has not joined the batch yet also holds the block its next
 * token needs (reserved with the transfer).
 */
static inline __attribute__((always_inline)) long own_blocks(const sv_replica_t *r,
                                                               const sv_reqeng_t *e)
{
    if (e->reserved) return e->reserved;
    if (e->in_decode && r->spec_k) return spec_held(r, e) - e->cached_n;
    long tokens = e->in_decode ? e->c_join + member_tokens(r, e) : e->computed;
    return (e->joining ? reserve_need(r, tokens) : blocks_for(r, tokens)) - e->cached_n;
}

/* Every block the request holds here goes back: its own to the free pool, the ones it
 * shares through the prefix cache back to the cache. */
static void release_blocks(sv_replica_t *r, int32_t id)
{
    sv_reqeng_t *e = E(r, id);
    long own = own_blocks(r, e);
    if (KVP(r)->caching && (!Q(r, id)->nseg || Q(r, id)->own_tail)) {
        /* Its own full blocks, not hashed, are parked in the LRU list (register_upto()); a
         * partial one is freed. */
        long full = e->computed / r->bs - e->cached_n;
        if (full > own) full = own;
        if (full > 0 && sv__kv_park(KVP(r), full)) r->oom = 1;
        if (full > 0) own -= full;
    }
    sv__kv_give(KVP(r), own);
    drop_cached(r, id);
    e->reserved = 0;
    e->joining = 0;
}

static void finish(sv_replica_t *r, int32_t id, double now)
{
    sv_req_t *q = Q(r, id);
    release_blocks(r, id);
    run_remove(r, id);
    end_hashes(r, E(r, id));
    q->state = SV_RQ_DONE;
    q->end = now;
    push_id(r, &r->done, &r->ndone, &r->capdone, id);
}

/* Remove a request from wherever it is here and fail it with reason at time t. */
static void remove_and_fail(sv_replica_t *r, int32_t id, int reason, double t)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    if (q->state == SV_RQ_WAITING || q->state == SV_RQ_SWAPPED || q->state == SV_RQ_RUNNING)
        r->owed -= owed_of(r, id);
    switch (q->state) {
    case SV_RQ_WAITING:
        r->n_waiting--;
        r->front_vis = -INFINITY; /* it may have been the front */
        break;
    case SV_RQ_SWAPPED:
        r->n_swapped--;
        break;
    case SV_RQ_RUNNING:
        if (e->in_decode) leave_decode(r, id);
        release_blocks(r, id);
        run_remove(r, id);
        break;
    default:
        return;
    }
    q->state = SV_RQ_FAILED;
    q->fail = (uint8_t)reason;
    q->end = t;
    e->abort_pending = 0;
    e->queue = SV__Q_NONE;
    end_hashes(r, e);
    push_id(r, &r->done, &r->ndone, &r->capdone, id);
}

/* ---- submitting ---------------------------------------------------------------------------- */

static int fail_now(sv_req_t *q, int reason, double now)
{
    q->state = SV_RQ_FAILED;
    q->fail = (uint8_t)reason;
    q->end = now;
    return reason;
}

int sv_replica_submit(sv_replica_t *r, int32_t id, double now)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    q->replica = r->id;
    e->at = r->id;
    e->queue = SV__Q_NONE;
    e->target = q->input;
    e->computed = e->generated = 0;
    e->heap_pos = e->seg = -1;
    e->prev = e->next = -1;
    e->reserved = 0;
    e->kv_tr = 0;
    e->in_decode = e->abort_pending = 0;
    e->visible = now + r->cfg.api_server;
    q->scheduled = q->first_token = q->last_token = -1.0;
    long len = (long)q->input + q->output;
    if (len > r->cfg.max_model_len) return fail_now(q, SV_FAIL_TOO_LONG, now);
    if (!r->chunked && !r->tr->static_batch && q->input > r->cfg.max_num_batched_tokens)
        return fail_now(q, SV_FAIL_PROMPT_BUDGET, now);
    if (step_bound(r, len) > KVP(r)->total - r->watermark_blocks)
        return fail_now(q, SV_FAIL_KV_CAPACITY, now);
    if (r->cfg.max_queue > 0 && r->n_waiting >= r->cfg.max_queue)
        return fail_now(q, SV_FAIL_QUEUE_FULL, now);
    if (wq_push(r, id)) {
        r->oom = 1;
        return fail_now(q, SV_FAIL_QUEUE_FULL, now);
    }
    q->state = SV_RQ_WAITING;
    e->queue = SV__Q_WAITING;
    if (r->n_waiting == 0 && !r->prio) r->front_vis = e->visible; /* the first waiting */
    r->n_waiting++;
    r->owed += (long)q->input + q->output;
    if (r->n_waiting > r->st.peak_waiting) r->st.peak_waiting = r->n_waiting;
    return SV_FAIL_NONE;
}

long sv_replica_cached_prefix(sv_replica_t *r, int32_t id)
{
    /* A prompt without identity has no block hashed anywhere until it is preempted
     * (preempt()): nothing to hash or look up. */
    if (!KVP(r)->pc || (!Q(r, id)->nseg && !Q(r, id)->preemptions)) return 0;
    long max = ((long)Q(r, id)->input - 1) / r->bs, fb = findable_blocks(r, id);
    if (fb < max) max = fb;
    const uint64_t *h = max > 0 ? block_hashes(r, id, max) : NULL;
    return h ? sv__kv_prefix(KVP(r), h, chain_blocks(r, id), max) * r->bs : 0;
}

/* ---- building a step ----------------------------------------------------------------------- */

/* A chunk of n tokens for request id in the step being built. Its full blocks join the
 * prefix cache now, when they are scheduled, as vLLM's KVCacheManager.allocate_slots
 * caches up to num_computed + num_new tokens (vllm/v1/core/kv_cache_manager.py): a
 * request admitted later in the same step already finds them. */
static void add_chunk(sv_replica_t *r, int32_t id, long n)
{
    if (SV_GROW(r->ln->chunks, r->ln->capchunks, r->ln->nchunks + 1)) {
        r->oom = 1;
        return;
    }
    r->ln->chunks[r->ln->nchunks++] = (chunk_t){id, (int32_t)n};
    r->budget -= n;
    if (Q(r, id)->nseg) register_upto(r, id, E(r, id)->computed + n);
}

static void preempt(sv_replica_t *r, int32_t id)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    r->owed -= owed_of(r, id);
    r->ln->preempted_now = 1;
    r->st.preemptions++;
    q->preemptions++;
    if (e->in_decode) {
        /* pp > 1: a victim may decode in another lane at rest, whose blocks and budget
         * this step did not take */
        int here = LANE(r, e) == r->ln && r->ln->dec_allocated;
        long extra = (here && !r->spec_k && needs_block(r, e)) ? r->g_step : 0;
        if (here) r->budget += r->dec_tokens;
        drop_tr(r, e, 0);
        leave_decode(r, id);
        sv__kv_give(KVP(r), extra);
        /* Recomputing, it will find what of its KV is still cached (vLLM V1 keeps a
         * preempted request's blocks, hashed, in its free queue). */
        if (!r->cfg.preempt_swap) register_all(r, id);
        release_blocks(r, id);
        run_remove(r, id);
        if (r->cfg.preempt_swap) {
            /* The KV goes to host memory; it comes back before new requests are admitted. */
            q->state = SV_RQ_SWAPPED;
            e->queue = SV__Q_SWAPPED;
            r->ln->swap_time += e->computed * r->perf->kv_bytes_token / r->cfg.swap_bw;
            r->st.swaps++;
            if (ring_push_back(&r->sq, id)) r->oom = 1;
            r->n_swapped++;
            r->owed += owed_of(r, id);
            return;
        }
    } else {
        for (size_t i = 0; i < r->ln->nchunks; i++) { /* a chunk already granted this step */
            if (r->ln->chunks[i].id != id) continue;
            /* Its blocks were allocated, and its full ones cached, when it was granted:
             * they are released with the rest (vLLM frees a request preempted after being
             * scheduled the same way; its blocks keep their hashes). */
            e->computed += r->ln->chunks[i].n;
            r->budget += r->ln->chunks[i].n;
            r->ln->chunks[i] = r->ln->chunks[--r->ln->nchunks];
            break;
        }
        drop_tr(r, e, 1);
        register_all(r, id);
        release_blocks(r, id);
        run_remove(r, id);
    }
    /* Recompute: everything generated so far is prefilled again. */
    e->target = q->input + e->generated;
    e->computed = 0;
    q->state = SV_RQ_WAITING;
    e->queue = SV__Q_WAITING;
    /* back at the front (fcfs), or at its place by priority (vLLM's prepend_request) */
    if (r->prio ? pq_push(r, id) : ring_push_front(&r->wq, id)) r->oom = 1;
    r->front_vis = -INFINITY;
    r->n_waiting++;
    r->owed += owed_of(r, id);
}

/* Sampled spec decoding: tokens of KV the blocks a decoding sequence holds can take. */
static long spec_room(const sv_replica_t *r, const sv_reqeng_t *e)
{
    if (r->hyb) return e->reserved ? 1L << 40 : (long)e->spec_blocks * r->bs - r->la;
    long held = e->reserved ? e->reserved + e->cached_n : e->spec_blocks;
    return (held - r->seq_blocks) * r->bs;
}

/* ... a hybrid model's: the blocks its growing groups' lists reach with its verify step's
 * slots (below) and the k it drafts next (r->la) */
static long spec_lists(const sv_replica_t *r, const sv_reqeng_t *e)
{
    long m = (e->c_join + e->spec_tok + 1 + r->spec_k + r->la + r->bs - 1) / r->bs;
    return m > e->spec_blocks ? m : e->spec_blocks;
}

/* ... the blocks its verify step needs beyond those it holds: slots for its pending token
 * and its k drafts (vLLM's allocate_slots with 1 + k new tokens, vllm/v1/core/sched/
 * scheduler.py; the k it drafts next, num_lookahead_tokens there, are the draft slots every
 * sequence holds in seq_blocks, a hybrid model's in r->la); the rejected drafts' slots stay
 * its own till it leaves. */
static long spec_need(const sv_replica_t *r, const sv_reqeng_t *e)
{
    if (r->hyb) /* may be negative: the windows' blocks it no longer needs go back */
        return sv_kv_blocks(&r->perf->kvs, e->c_join + e->spec_tok, spec_lists(r, e) * r->bs, NULL) -
               spec_held(r, e);
    long want = blocks_for(r, e->c_join + e->spec_tok + 1 + r->spec_k);
    return want > e->spec_blocks ? want - e->spec_blocks : 0;
}

/* ... every decoding sequence gets them, preempting from the most recently admitted while
 * there are not enough (as the lockstep's allocate_decode). */
static void spec_allocate(sv_replica_t *r)
{
    long need = 0;
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next)
        if (E(r, id)->in_decode) need += spec_need(r, E(r, id));
    while (need > avail(r) && r->n_running > 0) {
        int32_t victim = victim_of(r);
        if (E(r, victim)->in_decode) need -= spec_need(r, E(r, victim));
        preempt(r, victim);
    }
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next) {
        sv_reqeng_t *e = E(r, id);
        if (!e->in_decode) continue;
        if (r->hyb) {
            e->spec_blocks = (int32_t)spec_lists(r, e);
            e->spec_skip = (int32_t)(e->c_join + e->spec_tok);
        } else {
            e->spec_blocks += (int32_t)spec_need(r, e);
        }
    }
    if (need >= 0)
        sv__kv_take(KVP(r), need);
    else
        sv__kv_give(KVP(r), -need);
}

/* Give every decoding sequence the block its next token needs, preempting from the most
 * recently admitted while there are not enough. */
/* Blocks the lockstep decodes' next tokens take: the sequences whose next token opens a
 * block (their bucket), one per growing KV cache group (a hybrid model's every growing group
 * takes its block at the same token, sv_kv_blocks). */
static long lockstep_need(const sv_replica_t *r)
{
    const lane_t *L = r->ln;
    return L->bucket[L->kd_mod ? r->bs - L->kd_mod : 0] * r->g_step;
}

static void allocate_decode(sv_replica_t *r)
{
    if (r->reserve) return;
    if (r->spec_k) {
        spec_allocate(r);
        return;
    }
    long need = lockstep_need(r);
    while (need > avail(r) && r->n_running > 0) {
        int32_t victim = victim_of(r);
        if (victim < 0) break; /* pp > 1: every other request is in flight */
        if (E(r, victim)->in_decode && needs_block(r, E(r, victim))) need -= r->g_step;
        preempt(r, victim);
    }
    sv__kv_take(KVP(r), need);
    if (!r->hyb) return;
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next) {
        sv_reqeng_t *e = E(r, id);
        if (!e->in_decode || e->reserved || LANE(r, e) != r->ln) continue; /* this lane's */
        long t = e->c_join + member_tokens(r, e);
        add_tr(r, e, blocks_step(r, t, 1) - blocks_for(r, t + 1));
    }
}

/* allocate_decode's common case read inline (a step whose decodes' blocks are free or
 * evictable, no preemption, a dense model decoding a token a step), else the call; the
 * call would do the same. */
static inline __attribute__((always_inline)) void allocate_decodes(sv_replica_t *r, int plain)
{
    if (!plain && r->reserve) return;
    if (plain || (!r->spec_k && !r->hyb)) {
        long need = lockstep_need(r);
        if (need <= avail(r)) {
            sv__kv_take(KVP(r), need);
            return;
        }
    }
    allocate_decode(r);
}

static void continue_prefills(sv_replica_t *r)
{
    for (size_t i = 0; i < r->npf && r->budget > 0; i++) {
        int32_t id = r->pf[i];
        if (sv_reqpool_side_released(r->pool, id)) continue; /* ended since (dropped below) */
        sv_req_t *q = Q(r, id);
        sv_reqeng_t *e = E(r, id);
        if (q->state != SV_RQ_RUNNING || e->in_decode) continue;
        /* pp > 1: not while a chunk of it is in a micro-batch in flight (vLLM's scheduler
         * skips a request whose tokens are all scheduled), nor once given up */
        if (r->pp > 1 && (e->inflight || e->abort_pending)) continue;
        long n = e->target - e->computed;
        if (r->cfg.long_prefill_threshold > 0 && n > r->cfg.long_prefill_threshold)
            n = r->cfg.long_prefill_threshold;
        if (n > r->budget) n = r->budget;
        /* Reserving schedulers hold the whole sequence's blocks since admission. */
        long newb = r->reserve ? 0 : blocks_step(r, e->computed, n) - blocks_for(r, e->computed);
        int self = 0;
        while (newb > avail(r)) {
            int32_t victim = victim_of(r);
            if (victim >= 0) preempt(r, victim);
            if (victim == id || victim < 0) {
                self = 1;
                break;
            }
        }
        /* Its own victim: nothing more of the running list is scheduled this step (vLLM's
         * Scheduler.schedule: `if preempted_req == request: break`, then it stops). */
        if (self) break;
        sv__kv_take(KVP(r), newb);
        if (r->hyb && !r->reserve)
            add_tr(r, e, blocks_step(r, e->computed, n) - blocks_for(r, e->computed + n));
        add_chunk(r, id, n);
    }
}

/* (Inlined, as admit_hits below: the admission loop's one call each a request, whose frames
 * cost more than their work.) */
static inline __attribute__((always_inline)) void admit(sv_replica_t *r, int32_t id, long n,
                                                        long blocks, double now)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    wq_pop(r);
    e->queue = SV__Q_NONE;
    r->n_waiting--;
    sv__kv_take(KVP(r), blocks);
    if (r->reserve) e->reserved = (int32_t)blocks;
    q->state = SV_RQ_RUNNING;
    run_append(r, id);
    if (q->scheduled < 0) q->scheduled = now;
    push_id(r, &r->pf, &r->npf, &r->cappf, id);
    add_chunk(r, id, n);
}

/* A request being admitted takes the `hit` cached blocks its lookup found. */
static inline __attribute__((always_inline)) void admit_hits(sv_replica_t *r, int32_t id, long hit)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    if (!KVP(r)->caching) return;
    if (hit > 0) take_hits(r, id, hit, 0); /* (none: nothing to reference) */
    e->cached_n = (int32_t)hit;
    e->computed = (int32_t)(hit * r->bs);
    r->owed -= e->computed;
    /* A request re-admitted after a preemption is recorded apart, as vLLM's
     * PrefixCacheStats.record(preempted=...) does (vllm/v1/metrics/stats.py); the hit rate
     * and its counters are of new requests only. */
    if (q->preemptions) {
        r->st.prefix_preempted_queries += e->target;
        r->st.prefix_preempted_hits += e->computed;
    } else {
        r->st.prefix_queries += e->target;
        r->st.prefix_hits += e->computed;
    }
    q->cached = e->computed;
}

static void admit_waiting(sv_replica_t *r, double now)
{
    long slots = r->cfg.max_num_seqs - (r->lag_on ? r->lag_seqs : 0);
    while (r->n_running < slots && r->n_waiting > 0) {
        int32_t id = wq_front_now(r);
        if (id < 0) break;
        /* Not yet through the API server, or (async) arrived after this step was built:
         * the next steps skip the admission till their cutoff reaches it (front_vis). */
        if (E(r, id)->visible > r->cutoff) {
            if (!r->prio) r->front_vis = E(r, id)->visible;
            break;
        }
        sv_req_t *q = Q(r, id);
        sv_reqeng_t *e = E(r, id);
        long touched, hit = lookup_prefix(r, id, &touched);
        long rem = e->target - (e->computed + hit * r->bs), n = rem;
        if (r->tr->static_batch) {
            /* the whole batch's prompts go in one pass */
        } else if (!r->chunked) {
            /* A whole prompt must fit what is left of the budget. One longer than the whole
             * budget (a re-prefill after a preemption) runs when it is the only prompt. */
            if (n > r->budget && (r->ln->nchunks > 0 || n <= r->cfg.max_num_batched_tokens)) break;
        } else {
            if (r->budget <= 0) break;
            /* vLLM's max_num_partial_prefills: prompts being prefilled at once. */
            if (r->cfg.max_partial_prefills > 0 && (long)r->npf >= r->cfg.max_partial_prefills)
                break;
            if (r->cfg.long_prefill_threshold > 0 && n > r->cfg.long_prefill_threshold)
                n = r->cfg.long_prefill_threshold;
            if (n > r->budget) n = r->budget;
        }
        /* With cache hits, only the blocks past them are new; hits nobody referenced stop
         * being available. */
        long blocks = r->reserve ? whole_blocks(r, (long)q->input + q->output)
                                 : blocks_step(r, hit * r->bs, n) - hit;
        if (avail(r) - blocks - touched < r->watermark_blocks) break;
        admit_hits(r, id, hit);
        if (r->hyb && !r->reserve)
            add_tr(r, e, blocks_step(r, hit * r->bs, n) - blocks_for(r, hit * r->bs + n));
        admit(r, id, n, blocks, now);
    }
}

/* ---- SGLang's admission and retraction ------------------------------------------------------ */

/* Output tokens request id has made so far (SGLang's len(req.output_ids)). */
static long made_of(const sv_replica_t *r, const sv_reqeng_t *e)
{
    return e->in_decode ? e->g_join + member_tokens(r, e) : e->generated;
}

static int sgl_left_cmp(const void *a, const void *b)
{
    long x = (*(const long(*)[2])a)[0], y = (*(const long(*)[2])b)[0];
    return (x > y) - (x < y);
}

/*
 * SGLang's check for requests that ignore EOS (PrefillAdder.add_one_req_ignore_eos,
 * python/sglang/srt/managers/schedule_policy.py): every running request and the candidate
 * `cand` will make exactly their remaining output (ratio 1), so it plays their future
 * forward. Sorted by tokens left, when the i-th finishes the n - i still running have each
 * grown by its tokens left and those before it have freed what they held (input + output
 * so far); with `cur` free tokens (the KV free now less this round's prompts, the
 * candidate's included), it fits if at every such point more than IGNORE_EOS_RESERVE_TOKENS
 * a request is left: cur + freed - left_i x (n - i) > (n - i).
 */
static int sgl_all_finish(sv_replica_t *r, int32_t cand, double cur)
{
    size_t n = 0;
    if (SV_GROW(r->sgl_st, r->capsgl, (size_t)r->n_running + 1)) {
        r->oom = 1;
        return 0;
    }
    for (int32_t id = cand; id >= 0; id = id == cand ? r->run_head : E(r, id)->next) {
        long made = made_of(r, E(r, id)), left = Q(r, id)->output - made;
        if (left <= 0) continue;
        r->sgl_st[n][0] = left;
        r->sgl_st[n++][1] = (long)Q(r, id)->input + made;
    }
    qsort(r->sgl_st, n, sizeof *r->sgl_st, sgl_left_cmp);
    double freed = 0.0;
    for (size_t i = 0; i < n; i++) {
        double bs = (double)(n - i);
        if (cur + freed - (double)r->sgl_st[i][0] * bs <= SGL.eos_reserve * bs) return 0;
        freed += (double)r->sgl_st[i][1];
    }
    return 1;
}

/*
 * SGLang's PrefillAdder over the waiting queue, first come first served (Scheduler.
 * get_new_batch_prefill, schedule_policy.py PrefillAdder.add_one_req): the KV it may
 * promise is the free KV less new_token_ratio x each running request's remaining output
 * (clipped at 4,096: rem_total_tokens) and less, for each prompt admitted this round, its
 * tokens and its whole output (clipped). A prompt whose tokens plus remaining output
 * (clipped) do not fit what is left is refused; with ignore_eos and no radix cache
 * (add_one_req_ignore_eos) it must fit the free KV and every request must be able to finish
 * (sgl_all_finish). A refusal, or room used up, marks the batch full (batch_is_full): no
 * prompt is tried again till a request leaves the batch (run_remove). A prompt longer than
 * the step's budget left is chunked and reserves no output yet. Tokens are counted as
 * blocks x block size; the blocks are taken as each prompt is admitted.
 */
static void sgl_admit(sv_replica_t *r, double now)
{
    /* An empty batch is never full: SGLang starts a new ScheduleBatch (batch_is_full False)
     * when the running batch empties. Without this a refusal made while the overlap lag
     * still held the last finished requests' blocks would keep an idle engine from ever
     * admitting again. */
    if (r->n_running == 0) r->sgl_full = 0;
    if (r->n_swapped > 0 || r->sgl_full) return;
    long slots = r->cfg.max_num_seqs - (r->lag_on ? r->lag_seqs : 0);
    int eos = r->cfg.ignore_eos && !KVP(r)->caching;
    double have = (double)avail(r) * r->bs, total_off = 0.0, cur_off = 0.0;
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next)
        if (E(r, id)->in_decode)
            total_off += fmin(Q(r, id)->output - made_of(r, E(r, id)), SGL.clip) * r->ntr;
    /* the chunked prompt's last chunk reserves its output (add_chunked_req) */
    for (size_t i = 0; i < r->ln->nchunks; i++) {
        const sv_reqeng_t *e = E(r, r->ln->chunks[i].id);
        if (e->computed + r->ln->chunks[i].n == e->target)
            total_off += fmin(Q(r, r->ln->chunks[i].id)->output - e->generated, SGL.clip);
    }
    while (r->n_waiting > 0 && r->budget > 0) {
        if (r->n_running >= slots) {
            r->sgl_full = 1;
            break;
        }
        int32_t id = wq_front(r);
        if (id < 0 || E(r, id)->visible > r->cutoff) break;
        sv_req_t *q = Q(r, id);
        sv_reqeng_t *e = E(r, id);
        long touched, hit = lookup_prefix(r, id, &touched);
        long ext = e->target - (e->computed + hit * r->bs), n = ext < r->budget ? ext : r->budget;
        double left = fmin(fmax(q->output - e->generated, 0), SGL.clip);
        double rem_total = have - total_off, cur_rem = have - cur_off;
        int fits = eos ? ext <= fmin(cur_rem, rem_total) && sgl_all_finish(r, id, cur_rem - ext)
                       : ext + left < rem_total;
        /* An idle engine takes its first request: SGLang caps max_new_tokens so that prompt
         * and output stay below its pool (Scheduler.handle_generate_request, max_req_len),
         * which sv_replica_submit checks in blocks. */
        fits = fits || r->n_running == 0;
        long blocks = blocks_step(r, hit * r->bs, n) - hit;
        if (!fits || avail(r) - blocks - touched < r->watermark_blocks) {
            r->sgl_full = 1;
            break;
        }
        if (!eos && ext >= r->budget && r->ln->nchunks > 0) break; /* the next step's */
        total_off += (double)n + (n == ext ? left : 0.0);
        cur_off += (double)n;
        admit_hits(r, id, hit);
        if (r->hyb)
            add_tr(r, e, blocks_step(r, hit * r->bs, n) - blocks_for(r, hit * r->bs + n));
        admit(r, id, n, blocks, now);
        if (have - total_off <= 0 || have - cur_off <= 0) r->sgl_full = 1; /* budget_state */
    }
}

/* Blocks the decoding sequences' next tokens need (as allocate_decode gives them). */
static long decode_need(const sv_replica_t *r)
{
    if (r->reserve) return 0;
    if (!r->spec_k) return lockstep_need(r);
    long need = 0;
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next)
        if (E(r, id)->in_decode) need += spec_need(r, E(r, id));
    return need;
}

/*
 * SGLang's decode batch (Scheduler.update_running_batch, scheduler.py): when the next
 * tokens do not fit (ScheduleBatch.check_decode_mem), it retracts (ScheduleBatch.
 * retract_decode, schedule_batch.py): the decoding request with the fewest output tokens,
 * among those the longest prompt, goes back to the end of the waiting queue to be prefilled
 * again with what it made, then the next, till the rest fit; the new-token ratio becomes
 * (output made + 20 x requests) / (their outputs), at most 1, over those left. A step
 * without retraction lowers the ratio by its decay, down to its floor. What is still
 * short (prompts being prefilled hold the rest) is preempted as the paged schedulers do.
 */
static void sgl_decodes(sv_replica_t *r)
{
    long need = decode_need(r), retracted = 0;
    while (need > avail(r) && r->ln->n_dec > 1) {
        int32_t v = -1;
        for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next) {
            const sv_reqeng_t *e = E(r, id);
            if (!e->in_decode || LANE(r, e) != r->ln) continue; /* pp > 1: this lane's */
            long dm = v < 0 ? 0 : made_of(r, e) - made_of(r, E(r, v));
            if (v < 0 || dm < 0 || (dm == 0 && Q(r, id)->input > Q(r, v)->input)) v = id;
        }
        preempt(r, v);
        if (!r->prio) { /* to the back of the queue (Scheduler._add_request_to_queue) */
            ring_pop(&r->wq);
            if (ring_push_back(&r->wq, v)) r->oom = 1;
        }
        need = decode_need(r);
        retracted++;
    }
    if (retracted) {
        double made = 0.0, outs = 0.0;
        for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next)
            if (E(r, id)->in_decode) {
                made += (double)made_of(r, E(r, id)) + SGL.retract_steps;
                outs += Q(r, id)->output;
            }
        r->ntr = outs > 0 ? fmin(1.0, made / outs) : 1.0;
    } else {
        double floor = SGL.init_ratio * SGL.min_factor;
        r->ntr = fmax(r->ntr - (SGL.init_ratio - floor) / SGL.decay_steps, floor);
    }
    allocate_decode(r);
}

static void swap_in(sv_replica_t *r)
{
    while (r->n_swapped > 0 && r->n_running < r->cfg.max_num_seqs && r->budget > 0) {
        int32_t id = ring_front(r, &r->sq, SV__Q_SWAPPED);
        if (id < 0) break;
        sv_req_t *q = Q(r, id);
        sv_reqeng_t *e = E(r, id);
        long need = reserve_need(r, e->computed);
        if (avail(r) - need < r->watermark_blocks) break;
        ring_pop(&r->sq);
        e->queue = SV__Q_NONE;
        r->n_swapped--;
        sv__kv_take(KVP(r), need);
        r->ln->swap_time += e->computed * r->perf->kv_bytes_token / r->cfg.swap_bw;
        q->state = SV_RQ_RUNNING;
        run_append(r, id);
        join_decode(r, id, 1);
        r->budget -= r->dec_tokens;
    }
}

static inline void compact_prefilling(sv_replica_t *r)
{
    size_t k = 0;
    for (size_t i = 0; i < r->npf; i++) {
        if (sv_reqpool_side_released(r->pool, r->pf[i])) continue; /* it ended */
        sv_req_t *q = Q(r, r->pf[i]);
        sv_reqeng_t *e = E(r, r->pf[i]);
        if (q->state == SV_RQ_RUNNING && !e->in_decode && e->at == r->id) r->pf[k++] = r->pf[i];
    }
    r->npf = k;
}

/* Decode role: requests whose KV landed join the decode batch; their blocks (this
 * step's included) were reserved before the transfer. */
static void join_landed(sv_replica_t *r)
{
    for (size_t i = 0; i < r->npend; i++) {
        if (sv_reqpool_side_released(r->pool, r->pending[i])) continue; /* it ended */
        sv_reqeng_t *e = E(r, r->pending[i]);
        if (!e->joining || Q(r, r->pending[i])->state != SV_RQ_RUNNING || e->at != r->id) continue;
        e->joining = 0; /* from here its blocks are counted as a decoding sequence's */
        join_decode(r, r->pending[i], 1);
        r->budget -= r->dec_tokens;
    }
    r->npend = 0;
}

/* ---- TensorRT-LLM's attention-DP balancing ------------------------------------------------ */


/* The context requests this step could schedule, counted up to `most`: prompts being
 * prefilled, then visible waiting requests in queue order while sequence slots remain. */
static long ctx_candidates(sv_replica_t *r, long most)
{
    long n = 0;
    for (size_t i = 0; i < r->npf && n < most; i++) {
        if (sv_reqpool_side_released(r->pool, r->pf[i])) continue;
        const sv_reqeng_t *e = E(r, r->pf[i]);
        if (Q(r, r->pf[i])->state == SV_RQ_RUNNING && !e->in_decode && e->computed < e->target)
            n++;
    }
    long slots = r->cfg.max_num_seqs - (r->lag_on ? r->lag_seqs : 0) - r->n_running;
    size_t len = r->prio ? r->ph.n : r->wq.len;
    for (size_t i = 0; i < len && n < most && slots > 0; i++) {
        int32_t id = r->prio ? r->ph.v[i].id : r->wq.v[(r->wq.head + i) % r->wq.cap];
        if (!waiting_here(r, id)) continue;
        if (E(r, id)->visible > r->cutoff) {
            if (r->prio) continue;
            break; /* fcfs: admit_waiting stops at the first not yet visible */
        }
        n++;
        slots--;
    }
    return n;
}

/*
 * Whether this step holds its context requests back: TensorRT-LLM's
 * PyExecutor._balance_adp_requests (NVIDIA/TensorRT-LLM,
 * tensorrt_llm/_torch/pyexecutor/py_executor.py; AttentionDpConfig in llmapi/llm_args.py),
 * run every iteration with attention DP and enable_balance. Each rank all-gathers its
 * scheduled context and generation counts; when every rank has a free slot (generation
 * requests < max_batch_size) and a context request, the waiting count resets and, if every
 * rank also has generation requests, the contexts wait batching_wait_iters more iterations;
 * otherwise they are held, the waiting count rises, and they go when it reaches
 * timeout_iters or when some rank has no generation request. servesim's replica is the
 * ranks' one scheduler whose batch the cost model deals round-robin (sv_perf_step), so
 * "every rank has one" reads as: at least dp of them (contexts: ctx_candidates; decodes:
 * n_dec), and a rank's max_batch_size as ceil(max_num_seqs / dp).
 */
static int adp_hold(sv_replica_t *r)
{
    long dp = r->perf->dp, per_rank = (r->cfg.max_num_seqs + dp - 1) / dp;
    int all_ctx = ctx_candidates(r, dp) >= dp, all_gen = r->ln->n_dec >= dp;
    int all_free = (r->ln->n_dec + dp - 1) / dp < per_rank;
    if (all_free && all_ctx) {
        r->adp_wait = 0;
        if (!all_gen) return 0;
        if (r->adp_batch < r->cfg.adp_batching_wait_iters) {
            r->adp_batch++;
            return 1;
        }
        r->adp_batch = 0;
        return 0;
    }
    r->adp_wait++;
    if (r->adp_wait >= r->cfg.adp_timeout_iters || !all_gen) {
        r->adp_wait = 0;
        return 0;
    }
    return 1;
}

/* One phase of the step being built (prefill_only: whether it runs prompts alone so far;
 * had_decodes: whether sequences were decoding when it began). Inlined where the phase is
 * a constant, so a scheduler's row unrolled below is compiled to its phases' code alone. */
static inline __attribute__((always_inline)) void
run_phase(sv_replica_t *r, phase_t ph, double now, int had_decodes, int *prefill_only, int plain)
{
    lane_t *L = r->ln;
    switch (ph) {
    case PH_ADMIT_IF_IDLE:
        if (r->n_running == 0) admit_waiting(r, now);
        break;
    case PH_PREFILL_FIRST:
        if (r->n_swapped == 0) admit_waiting(r, now);
        *prefill_only = L->nchunks > 0;
        break;
    case PH_DECODES:
    case PH_SGL_DECODES:
        if (!had_decodes || *prefill_only) break;
        if (ph == PH_SGL_DECODES)
            sgl_decodes(r);
        else
            allocate_decodes(r, plain);
        L->dec_allocated = 1;
        r->budget -= L->n_dec * r->dec_tokens;
        break;
    case PH_SWAP_IN:
        /* after the decodes; with none running (all swapped out) too, as vLLM v0's
         * _schedule_default swaps in whenever the step schedules no prefill */
        if (L->dec_allocated || (!had_decodes && !*prefill_only)) swap_in(r);
        break;
    case PH_JOIN_LANDED:
        if (!*prefill_only && r->npend > 0) join_landed(r);
        break;
    case PH_CONTINUE_PREFILLS:
        /* Attention-DP balancing decides before the contexts are scheduled (the
         * trtllm scheduler only, the scenario checks). */
        if (!plain && r->cfg.adp_balance && r->perf->dp > 1) r->adp_held = adp_hold(r);
        if ((plain || !r->adp_held) && r->npf > 0) continue_prefills(r);
        break;
    case PH_SWAP_IN_ADMIT:
        if (L->preempted_now) break;
        if (r->n_swapped > 0) swap_in(r);
        /* (front_vis: the front is not visible yet, as the admission found it; a step that
         * follows another at once sees what arrived during that one first) */
        if (r->n_swapped == 0 && (plain || !r->adp_held) && r->n_waiting > 0 &&
            r->front_vis <= r->cutoff)
            admit_waiting(r, now);
        break;
    case PH_SGL_ADMIT:
        sgl_admit(r, now);
        *prefill_only = L->nchunks > 0;
        break;
    case PH_END:
        break;
    }
}

/* Run the scheduler's phases once: the step's chunks and decodes. Returns whether the step
 * runs prompts alone (vLLM V0's prefill-first); *had_decodes: whether sequences were
 * decoding when it began. The rows of VLLM_PHASES, the common ones, are unrolled: four
 * calls of run_phase with constant phases, each compiled to its phase's code. */
#define RUN_PHASES4(a, b, c, d)                                                                    \
    do {                                                                                           \
        run_phase(r, a, now, *had_decodes, &prefill_only, plain);                                  \
        run_phase(r, b, now, *had_decodes, &prefill_only, plain);                                  \
        run_phase(r, c, now, *had_decodes, &prefill_only, plain);                                  \
        run_phase(r, d, now, *had_decodes, &prefill_only, plain);                                  \
    } while (0)
#define RUN_PHASES(...) RUN_PHASES4(__VA_ARGS__)
static inline __attribute__((always_inline)) int build_step_as(sv_replica_t *r, double now,
                                                               int *had_decodes, int plain)
{
    lane_t *L = r->ln;
    L->nchunks = 0;
    r->budget = r->cfg.max_num_batched_tokens;
    L->preempted_now = L->dec_allocated = 0;
    L->swap_time = 0.0;
    *had_decodes = L->n_dec > 0;
    r->adp_held = 0;
    int prefill_only = 0;
    if (plain || r->tr == &SCHEDULERS[SV_SCHED_VLLM] || r->tr == &SCHEDULERS[SV_SCHED_TRTLLM]) {
        RUN_PHASES(VLLM_PHASES);
    } else {
        for (const phase_t *ph = r->tr->phases; *ph != PH_END; ph++)
            run_phase(r, *ph, now, *had_decodes, &prefill_only, plain);
    }
    /* Only a preemption makes an entry stale within a step (a victim re-admitted later
     * would be listed twice); the end of the step compacts the rest (end_lane), and the
     * count itself is read only by max_partial_prefills' admission and with pp > 1, where
     * lanes build between other lanes' ends. */
    if (r->npf > 0 &&
        (L->preempted_now || (!plain && r->pp > 1) || r->cfg.max_partial_prefills > 0))
        compact_prefilling(r);
    return prefill_only;
}

/* The step being built, compiled for any replica (a plain one's is inlined in start_lane). */
static int build_step(sv_replica_t *r, double now, int *had_decodes)
{
    return build_step_as(r, now, had_decodes, 0);
}

/*
 * The step's time, its engine CPU share (what async scheduling overlaps) and its compute
 * time: one forward pass (sv_perf_spec_step = sv_perf_step without spec decoding; through
 * the replica's memo of its last decode-only step, sv_perf_spec_step_memo); a
 * sampled verify step as it runs, its tokens emitted per sequence as drawn; or a
 * multi-step round: ms_n passes over the same batch (vLLM's multi-step model runner runs
 * every step of the round for every sequence), its context a token longer a sequence
 * each pass, the engine's CPU cost paid once (sv_perf's 1/n a pass).
 */
static inline __attribute__((always_inline)) void
step_cost(sv_replica_t *r, sv_batch_t *b, double *total, double *cpu, double *tc, int plain)
{
    int passes = !plain && r->ms_n > 1 && b->n_decode > 0 ? r->ms_n : 1;
    if (passes == 1) {
        /* The common step, one pass: its sums taken after the call, in the loop's order from
         * 0 (the same bits), so that none is kept across it. */
        const sv_step_cost_t *cost = sv_perf_spec_step_memo(r->perf, &r->step_memo, b);
        if (!plain && r->spec_k && b->n_decode > 0) {
            *total = 0.0 + (cost->spec_verify + cost->spec_draft);
            *cpu = 0.0 + cost->spec_cpu;
        } else {
            *total = 0.0 + cost->total;
            *cpu = 0.0 + (cost->eng_step + cost->eng_seq);
        }
        double t = 0.0;
        for (int i = 0; i < SV_OP_COUNT; i++)
            t += cost->op[i].t_compute;
        *tc = t;
        b->decode_ctx_sum += (double)b->n_decode;
        return;
    }
    *total = *cpu = *tc = 0.0;
    for (int p = 0; p < passes; p++) {
        const sv_step_cost_t *cost = sv_perf_spec_step_memo(r->perf, &r->step_memo, b);
        if (r->spec_k && b->n_decode > 0 && r->ms_n == 1) {
            *total += cost->spec_verify + cost->spec_draft;
            *cpu += cost->spec_cpu;
        } else {
            *total += cost->total;
            *cpu += cost->eng_step + cost->eng_seq;
        }
        for (int i = 0; i < SV_OP_COUNT; i++)
            *tc += cost->op[i].t_compute;
        b->decode_ctx_sum += (double)b->n_decode;
    }
}

/* pp > 1: one micro-batch's cost (speculative decoding and multi-step rounds are refused
 * with pp): its first stage's time with the engine's costs, their CPU share, its compute
 * time and its send to the next stage (sv_perf_micro_batch). */
static __attribute__((noinline)) void micro_cost(sv_replica_t *r, const sv_batch_t *b,
                                                 double *total, double *cpu, double *tc,
                                                 double *send)
{
    const sv_step_cost_t *c = &r->step_memo.scratch;
    sv_perf_micro_batch(r->perf, b, &r->step_memo.scratch);
    *total = c->total;
    *cpu = c->eng_step + c->eng_seq;
    *send = c->pp_send;
    *tc = 0.0;
    for (int i = 0; i < SV_OP_COUNT; i++)
        *tc += c->op[i].t_compute;
}

/* A hybrid model: the blocks each kind of group holds for the running requests, at rest
 * (sv_replica_stats_t.peak_kind_blocks; a walk of the running list, hybrid models only). */
static void kind_peaks(sv_replica_t *r)
{
    long sum[SV_KV_KINDS] = {0}, v[SV_KV_KINDS];
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next) {
        const sv_reqeng_t *e = E(r, id);
        long t = e->in_decode ? e->c_join + member_tokens(r, e) : e->computed;
        sv_kv_blocks(&r->perf->kvs, t, t, v);
        v[SV_KV_FULL] -= e->cached_n;
        for (int i = 0; i < SV_KV_KINDS; i++)
            sum[i] += v[i];
    }
    for (int i = 0; i < SV_KV_KINDS; i++)
        if (sum[i] > r->st.peak_kind_blocks[i]) r->st.peak_kind_blocks[i] = sum[i];
}

/* ---- pipeline parallelism: micro-batches in flight ------------------------------------------ */

/* Uneven stages: stage s's time, the heaviest stage's ts x its share of that stage's
 * layers (sv_perf_t.pp_layers; the LM head scales with it, a small part of a stage). */
static double stage_time(const sv_replica_t *r, double ts, int s)
{
    return ts * r->perf->pp_layers[s] / r->perf->stage_layers;
}

/* Whether a micro-batch can be formed now: the first stage is free and fewer than pp are
 * in flight (vLLM's batch queue has a free slot). */
static int pipe_ready(const sv_replica_t *r)
{
    return !r->pipe.s0_busy && r->pipe.n < r->pp;
}

/* The lane the next micro-batch is formed in: of the lanes at rest, the one whose
 * sequences came back first (their micro-batch left the last stage earliest), else one
 * with none decoding. A lane's sequences go on together and two lanes never merge: vLLM
 * schedules every request not in flight, but its loop processes one batch's outputs between
 * two scheduler calls (EngineCore.step_with_batch_queue), so those are that batch's own
 * (and the newly admitted); SGLang keeps a running batch per slot (running_mbs). */
static __attribute__((noinline)) lane_t *pipe_lane(sv_replica_t *r)
{
    lane_t *best = NULL, *empty = NULL;
    for (int l = 0; l < r->pp; l++) {
        lane_t *L = &r->lanes[l];
        if (L->in_flight) continue;
        if (L->n_dec == 0) {
            if (!empty) empty = L;
        } else if (!best || L->exit < best->exit) {
            best = L;
        }
    }
    return best ? best : empty;
}

/*
 * The micro-batch just built (lane r->ln) enters the pipeline at now: its first stage at
 * once, for `first` (the stage time with the engine's costs and any swap-in); stage s once
 * stage s is free and the micro-batch has left stage s - 1 and crossed to it (send), for
 * `ts`. Stages serve micro-batches in the order formed, so they leave in that order too.
 */
static __attribute__((noinline)) void pipe_enter(sv_replica_t *r, double now, double first,
                                                 double ts, double send)
{
    pipe_t *p = &r->pipe;
    double t = now + first;
    p->stage_free[0] = t;
    for (int s = 1; s < r->pp; s++) {
        t = sv_fmax(p->stage_free[s], t + send) + (r->perf->pp_uneven ? stage_time(r, ts, s) : ts);
        p->stage_free[s] = t;
    }
    r->ln->exit = t;
    p->fifo[(p->head + p->n) % r->pp] = r->ln->index;
    p->n++;
    p->s0_busy = 1;
    for (size_t i = 0; i < r->ln->nchunks; i++) {
        sv_reqeng_t *e = E(r, r->ln->chunks[i].id);
        e->lane = r->ln->index;
        e->inflight = 1;
    }
}

/* Whether request e is in a step in flight: with pp > 1, a chunk of its prompt in a
 * micro-batch in flight, or its lane's micro-batch in flight while it decodes. */
static int req_in_flight(const sv_replica_t *r, const sv_reqeng_t *e)
{
    if (r->pp == 1) return r->ln->in_flight;
    return e->inflight || (e->in_decode && LANE(r, e)->in_flight);
}

/* pp > 1: victim_of's choice among the running requests not in a micro-batch in flight
 * (their KV is in use; the request being scheduled can still be its own victim), -1 when
 * every one is. */
static int32_t pipe_victim(sv_replica_t *r)
{
    int32_t best = -1;
    for (int32_t id = r->run_tail; id >= 0; id = E(r, id)->prev) {
        const sv_reqeng_t *e = E(r, id);
        if (req_in_flight(r, e) || e->abort_pending) continue;
        if (!r->prio) return id;
        if (best < 0) {
            best = id;
            continue;
        }
        const pent_t a = prio_of(r, id), b = prio_of(r, best);
        if (pent_less(&b, &a)) best = id;
    }
    return best;
}

/* Build and start lane r->ln's step (piped: a micro-batch of a pipeline); its duration, or 0.
 * Inlined into its two callers, so the step of pp 1 is compiled without the pipeline's
 * branches. */
static inline __attribute__((always_inline)) double start_lane(sv_replica_t *r, double now,
                                                               int piped, int plain)
{
    lane_t *L = r->ln;
    if (L->in_flight) return 0.0;
    /* Async scheduling: a step that follows the last at once was built when it started. */
    r->lag_on = (r->cfg.async_scheduling || r->cfg.overlap_schedule) && r->lag_at == now;
    r->cutoff = r->lag_on ? L->step_start : now;
    /* (One loop for the builds, so that a plain replica's is inlined once.) */
    int had_decodes, prefill_only, pass = 0;
    for (;;) {
        prefill_only =
            plain ? build_step_as(r, now, &had_decodes, 1) : build_step(r, now, &had_decodes);
        /* Nothing to build then: the engine waits for the step's outputs and builds at once. */
        if (pass == 0 && r->lag_on && L->nchunks == 0 && L->n_dec == 0 && !L->preempted_now) {
            r->lag_on = 0;
            r->cutoff = now;
            pass = 1;
            continue;
        }
        /* A pass that preempted and scheduled nothing (every running request was a victim)
         * leaves the preempted waiting; vLLM's engine loop calls the scheduler again at once
         * (vllm/v1/engine/core.py, EngineCore.step), which admits them. */
        if (pass < 2 && L->nchunks == 0 && L->n_dec == 0 && L->preempted_now) {
            pass = 2;
            continue;
        }
        break;
    }

    r->lag_on = 0;
    L->step_n_dec = (had_decodes || L->n_dec > 0) && !prefill_only ? L->n_dec : 0;
    if (L->nchunks == 0 && L->step_n_dec == 0) {
        r->ntr = SGL.init_ratio; /* SGLang, idle: self_check_during_idle resets the ratio */
        return 0.0;
    }

    if (sv__grow((void **)&r->pch, &r->cappch, L->nchunks + 1, sizeof *r->pch)) {
        r->oom = 1;
        return 0.0;
    }
    long tokens = L->step_n_dec;
    for (size_t i = 0; i < L->nchunks; i++) {
        const sv_reqeng_t *e = E(r, L->chunks[i].id);
        r->pch[i] = (sv_chunk_t){.new_tokens = L->chunks[i].n,
                                 .cached_tokens = e->computed,
                                 .last = e->computed + L->chunks[i].n == e->target};
        tokens += L->chunks[i].n;
    }
    sv_batch_t b = {.chunks = r->pch,
                    .n_chunks = (int)L->nchunks,
                    .n_decode = L->step_n_dec,
                    .decode_ctx_sum = L->step_n_dec ? L->ctx_sum : 0.0};
    double total, cpu, tc, send = 0.0;
    if (piped)
        micro_cost(r, &b, &total, &cpu, &tc, &send);
    else
        step_cost(r, &b, &total, &cpu, &tc, plain);
    double ts = total - cpu; /* pp > 1: the heaviest stage's time */
    if (piped && r->perf->pp_uneven) total = stage_time(r, ts, 0) + cpu;
    /* Async scheduling: the CPU's share of the engine's cost (scheduling, sampling, output
     * processing: per step and per sequence) overlaps the GPU's work of the step before. */
    double dur = (r->cfg.async_scheduling ? sv_fmax(total - cpu, cpu) : total) + L->swap_time;
    if (piped) pipe_enter(r, now, dur, ts, send);
    double u = dur > 0 ? sv_fmin(1.0, tc / dur) : 0.0;
    r->st.active_s += (u + MEMORY_BOUND_ACTIVITY * (1.0 - u)) * dur;
    r->st.busy_s += dur;
    r->st.steps++;
    r->st.prefill_chunks += (long)L->nchunks;
    if (r->n_running > r->st.peak_running) r->st.peak_running = r->n_running;
    long used = sv__kv_used(KVP(r));
    if (used > r->st.peak_blocks_used) r->st.peak_blocks_used = used;
    if (!plain && r->hyb) kind_peaks(r);
    L->in_flight = 1;
    L->step_start = now;
    L->step_dur = dur;
    L->step_tokens = tokens;
    return dur;
}

static __attribute__((noinline)) double pipe_start(sv_replica_t *r, double now)
{
    if (!pipe_ready(r)) return 0.0;
    r->ln = pipe_lane(r);
    return start_lane(r, now, 1, 0);
}

double sv_replica_start_step(sv_replica_t *r, double now)
{
    if (r->pp > 1) return pipe_start(r, now);
    return r->plain ? start_lane(r, now, 0, 1) : start_lane(r, now, 0, 0);
}

/* ---- ending a step ------------------------------------------------------------------------ */

/* Prefill role: the prompt is in; the request leaves for a decode replica, its blocks
 * pinned here until sv_replica_release(). */
static void hand_off(sv_replica_t *r, int32_t id, double now)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    q->prefill_end = now;
    if (!r->cfg.first_token_at_decode) {
        q->first_token = q->last_token = now;
        e->generated++;
        r->owed--;
        if (e->generated >= q->output) {
            finish(r, id, now);
            return;
        }
    }
    r->owed -= owed_of(r, id);
    /* Whole-sequence schedulers reserved blocks for the output too: only the prompt's KV
     * stays pinned for the transfer, the rest goes back now. */
    long keep = blocks_for(r, e->computed);
    if (e->reserved) sv__kv_give(KVP(r), e->reserved - keep);
    e->reserved = 0;
    sv__kv_pin(KVP(r), own_blocks(r, e)); /* its cached blocks stay referenced */
    run_remove(r, id);
    q->state = SV_RQ_HANDOFF;
    r->st.handoffs++;
    push_id(r, &r->hand, &r->nhand, &r->caphand, id);
}

/* Request id made its last token in the step that ends: it is freed with the others. */
static void finished(sv_replica_t *r, int32_t id)
{
    if (SV_GROW(r->fin, r->capfin, r->nfin + 1)) {
        r->oom = 1;
        return;
    }
    r->fin[r->nfin++] = (fin_t){E(r, id)->run_seq, id};
}

static int fin_cmp(const void *a, const void *b)
{
    int64_t x = ((const fin_t *)a)->run_seq, y = ((const fin_t *)b)->run_seq;
    return (x > y) - (x < y);
}

/* The step's finished requests in running order. Their stamps are distinct (one per
 * admission to the running list), so any sort leaves the same order: a few (the common
 * step) by insertion, more by qsort. */
static void sort_fin(fin_t *f, size_t n)
{
    if (n > 16) {
        qsort(f, n, sizeof *f, fin_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        fin_t x = f[i];
        size_t k = i;
        for (; k > 0 && f[k - 1].run_seq > x.run_seq; k--)
            f[k] = f[k - 1];
        f[k] = x;
    }
}

/* Whether wheel_pop(r, L, k) has nothing to do: bucket k is empty and the heap holds no key
 * within the wheel's reach (read inline at each step's end; most steps finish nobody). */
static inline int wheel_idle(const lane_t *L, int64_t k)
{
    return (!L->wheel || L->wheel[k & (FINISH_WHEEL - 1)] < 0) &&
           (L->fh.n == 0 || L->fh.v[0].key - L->kd >= FINISH_WHEEL - 1);
}

static void wheel_pop(sv_replica_t *r, lane_t *L, int64_t k)
{
    size_t first = r->nfin;
    if (L->wheel) {
        int32_t *head = &L->wheel[k & (FINISH_WHEEL - 1)];
        for (int32_t id = *head; id >= 0; id = E(r, id)->wnext) {
            E(r, id)->heap_pos = -1; /* (the bucket empties at once) */
            finished(r, id);
        }
        *head = -1;
    }
    if (r->nfin > first) sort_fin(r->fin + first, r->nfin - first); /* (fin may be NULL) */
    for (size_t i = first; i < r->nfin; i++)
        leave_decode(r, r->fin[i].id);
    while (L->fh.n > 0 && L->fh.v[0].key - L->kd < FINISH_WHEEL - 1) {
        hent_t h = L->fh.v[0];
        fheap_pop(&L->fh, r);
        if (wheel_add(r, L, h.id, h.key)) return;
    }
}

/*
 * Multi-step scheduling, a round ended: each sequence takes the n tokens its steps made, as
 * many as its request still lacks (vLLM's MultiStepOutputProcessor truncates the rest to
 * max_tokens), in one chunk; a sequence done early still ran every step of the round.
 * Sampled spec decoding, a verify step ended: each of its sequences accepts the leading
 * drafts its own stream accepts (position i with probability a_i once i - 1 is in: one
 * uniform per position looked at) and emits them and the bonus token, as many as its
 * request still lacks, in one chunk; the done ones leave. A sequence verifies k drafts, fewer
 * where its slots end (one that joined after the step's blocks were given), none before its
 * first token (its first decode step makes that token, as a decode replica does).
 */
static void spec_verified(sv_replica_t *r)
{
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next) {
        sv_reqeng_t *e = E(r, id);
        if (!e->in_decode) continue;
        long c = e->c_join + e->spec_tok, made = e->g_join + e->spec_tok;
        long left = Q(r, id)->output - made, k = spec_room(r, e) - c - 1, a = 0;
        if (k > r->spec_k) k = r->spec_k;
        if ((made == 0 && r->ms_n == 1) || k < 0) k = 0;
        if (r->ms_n > 1) a = k; /* multi-step: every step of the round makes a token */
        while (r->ms_n == 1 && a < k &&
               sv_replica_spec_uniform(r->cfg.spec_seed, id, e->spec_draws++) < r->spec_a[a])
            r->st.spec_pos[a++]++;
        if (k > 0 && r->ms_n == 1) {
            r->st.spec_drafts++;
            r->st.spec_draft_tokens += (double)k;
            r->st.spec_accepted += (double)a;
        }
        long emit = a + 1 < left ? a + 1 : left;
        e->spec_tok += (int32_t)emit;
        r->ln->ctx_sum += (double)emit;
        r->owed -= emit;
        r->st.decode_tokens += (double)emit;
        if (emit == left) {
            leave_decode(r, id);
            finished(r, id);
        }
    }
}

/* Lane r->ln's step ends at now: its tokens, finished prompts, aborts and finishes
 * (inlined in both callers: the step's end at pp 1 is the hot path). */
static inline __attribute__((always_inline)) int end_lane(sv_replica_t *r, double now, int plain)
{
    lane_t *L = r->ln;
    if (!L->in_flight) return 0;
    L->in_flight = 0;
    if (!plain && r->hyb) end_tr(r); /* (only a hybrid model's steps give blocks back: add_tr) */
    int64_t last_k = -1;
    if (L->step_n_dec > 0) {
        last_k = L->kd;
        if (sv_metrics_decode_step(r->m, L->stream, now) < 0) r->oom = 1;
        L->kd++;
        if (++L->kd_mod == r->bs) L->kd_mod = 0;
        if (plain || !r->spec_k) {
            L->ctx_sum += (double)L->n_dec;
            r->owed -= L->n_dec;
            r->st.decode_tokens += (double)L->n_dec;
        }
        r->st.decode_steps += plain ? 1 : r->ms_n;
        for (size_t i = 0; i < L->nstamp; i++) {
            sv_req_t *q = Q(r, L->stamp[i]);
            sv_reqeng_t *e = E(r, L->stamp[i]);
            if (e->in_decode && e->at == r->id) q->first_token = now;
        }
        L->nstamp = 0;
        if (!plain && r->spec_k) spec_verified(r);
    }
    size_t prompts_in = 0; /* chunks whose prompt is in: their requests leave r->pf */
    for (size_t i = 0; i < L->nchunks; i++) {
        int32_t id = L->chunks[i].id;
        sv_req_t *q = Q(r, id);
        sv_reqeng_t *e = E(r, id);
        e->computed += L->chunks[i].n;
        r->owed -= L->chunks[i].n;
        r->st.prefill_tokens += L->chunks[i].n;
        if (e->abort_pending || q->state != SV_RQ_RUNNING || e->computed < e->target) continue;
        prompts_in++;
        if (r->cfg.handoff && e->generated == 0) {
            hand_off(r, id, now);
            continue;
        }
        /* The prompt is in: its last position yields the next token now. */
        if (e->generated == 0)
            q->first_token = q->prefill_end = now;
        else if (sv_metrics_single(r->m, id, now, now - q->last_token))
            r->oom = 1;
        e->generated++;
        q->last_token = now;
        r->owed--;
        if (e->generated >= q->output)
            finished(r, id);
        else
            join_decode(r, id, 0);
    }
    L->nchunks = 0;
    for (size_t i = 0; i < L->naborts; i++) {
        int32_t id = L->aborts[i];
        if (E(r, id)->abort_pending) remove_and_fail(r, id, E(r, id)->abort_pending, Q(r, id)->end);
    }
    L->naborts = 0;
    if (last_k >= 0 && (plain || !r->spec_k) && !wheel_idle(L, last_k)) wheel_pop(r, L, last_k);
    /* Freed in the order they were scheduled, as vLLM's Scheduler.update_from_output walks
     * the step's requests (vllm/v1/core/sched/scheduler.py): running order, not the finish
     * heap's. The order of their blocks in the LRU list and of the done list follows. */
    r->lag_at = now;
    r->lag_seqs = (long)r->nfin;
    r->lag_blocks = 0;
    if (r->nfin > 0) { /* (most steps finish nobody) */
        sort_fin(r->fin, r->nfin);
        long before = sv__kv_avail(KVP(r));
        for (size_t i = 0; i < r->nfin; i++)
            finish(r, r->fin[i].id, now);
        r->lag_blocks = sv__kv_avail(KVP(r)) - before;
        r->nfin = 0;
    }
    /* With one lane, every chunk's request is listed in r->pf (admitted or continued from
     * it), each step's chunks of distinct requests: when as many prompts came in as r->pf
     * lists, those were all of it, and every one has left it (decoding, done or handed off). */
    if (r->npf > 0) {
        if ((plain || r->pp == 1) && prompts_in == r->npf)
            r->npf = 0;
        else
            compact_prefilling(r);
    }
    return r->oom ? SV_ENOMEM : 0;
}

int sv_replica_end_step(sv_replica_t *r, double now)
{
    r->ndone = 0;
    r->nhand = 0;
    if (r->pp > 1) { /* the first stage is free: the next micro-batch can be formed */
        r->pipe.s0_busy = 0;
        return 0;
    }
    return r->plain ? end_lane(r, now, 1) : end_lane(r, now, 0);
}

double sv_replica_exit_at(const sv_replica_t *r)
{
    return r->pp > 1 && r->ln->in_flight ? r->ln->exit : -1.0;
}

int sv_replica_exit(sv_replica_t *r, double now)
{
    r->ndone = 0;
    r->nhand = 0;
    pipe_t *p = &r->pipe;
    if (r->pp == 1 || p->n == 0 || r->lanes[p->fifo[p->head]].exit > now) return 0;
    r->ln = &r->lanes[p->fifo[p->head]];
    p->head = (p->head + 1) % r->pp;
    p->n--;
    for (size_t i = 0; i < r->ln->nchunks; i++)
        E(r, r->ln->chunks[i].id)->inflight = 0;
    return end_lane(r, now, 0);
}

const int32_t *sv_replica_done(const sv_replica_t *r, long *n)
{
    *n = (long)r->ndone;
    return r->done;
}

void sv_replica_abort(sv_replica_t *r, int32_t id, double now, int reason)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    if (q->state == SV_RQ_DONE || q->state == SV_RQ_FAILED || e->abort_pending) return;
    r->ndone = 0;
    if (q->state == SV_RQ_RUNNING && req_in_flight(r, e)) {
        lane_t *L = r->pp > 1 ? LANE(r, e) : r->ln;
        e->abort_pending = (uint8_t)reason;
        q->end = now;
        push_id(r, &L->aborts, &L->naborts, &L->capaborts, id);
        return;
    }
    remove_and_fail(r, id, reason, now);
}

void sv_replica_fail_all(sv_replica_t *r, double now)
{
    r->ndone = 0;
    for (int l = 0; l < r->pp; l++) {
        r->ln = &r->lanes[l];
        if (!r->ln->in_flight) continue;
        /* The step in flight already holds its blocks: each chunk's, and the next block of
         * every decoding sequence that needed one. Count them as its requests' own. */
        for (size_t i = 0; i < r->ln->nchunks; i++) {
            E(r, r->ln->chunks[i].id)->computed += r->ln->chunks[i].n;
            E(r, r->ln->chunks[i].id)->inflight = 0;
            r->owed -= r->ln->chunks[i].n;
        }
        r->ln->nchunks = 0;
        if (r->ln->step_n_dec > 0 && !r->reserve && !r->spec_k)
            sv__kv_give(KVP(r), lockstep_need(r));
        /* The chunks' computed tokens stay; the decodes' tokens never came. */
        for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next)
            drop_tr(r, E(r, id), !E(r, id)->in_decode);
        end_tr(r);
    }
    while (r->run_head >= 0)
        remove_and_fail(r, r->run_head, SV_FAIL_UNFINISHED, now);
    int32_t id;
    while ((id = wq_front(r)) >= 0) {
        wq_pop(r);
        remove_and_fail(r, id, SV_FAIL_UNFINISHED, now);
    }
    while ((id = ring_front(r, &r->sq, SV__Q_SWAPPED)) >= 0) {
        ring_pop(&r->sq);
        remove_and_fail(r, id, SV_FAIL_UNFINISHED, now);
    }
    for (int l = 0; l < r->pp; l++)
        r->lanes[l].in_flight = 0;
    r->ln = r->lanes;
    r->pipe.n = r->pipe.s0_busy = 0;
}

const int32_t *sv_replica_handoffs(const sv_replica_t *r, long *n)
{
    *n = (long)r->nhand;
    return r->hand;
}

long sv_replica_handoff_tokens(const sv_replica_t *r, int32_t id)
{
    return E(r, id)->computed;
}

void sv_replica_release(sv_replica_t *r, int32_t id)
{
    sv__kv_unpin(KVP(r), own_blocks(r, E(r, id)));
    drop_cached(r, id);
}

/* Blocks a decode replica sets aside for an incoming request: its KV plus the next
 * token's block, or, for a scheduler that reserves whole sequences, prompt + output. */
static long transfer_blocks(const sv_replica_t *r, int32_t id)
{
    const sv_req_t *q = Q(r, id);
    const sv_reqeng_t *e = E(r, id);
    return r->reserve ? whole_blocks(r, (long)q->input + q->output) : reserve_need(r, e->computed);
}

/* The leading full blocks of request id's incoming KV this replica's cache holds (their
 * slots in r->sbuf; *touched: how many nobody references). */
static long transfer_hits(sv_replica_t *r, int32_t id, long *touched)
{
    *touched = 0;
    if (!KVP(r)->pc || !Q(r, id)->nseg) return 0;
    long max = E(r, id)->computed / r->bs, fb = findable_blocks(r, id);
    return chain_hits(r, id, max < fb ? max : fb, touched);
}

/* SGLang's decode side (sgl-project/sglang, disaggregation/decode.py,
 * DecodePreallocQueue.pop_preallocated) pre-allocates an incoming request only when its
 * prompt plus num_reserved_decode_tokens (server_args, default 512) fits in the free KV
 * less 512 tokens set aside for each request it already holds, running, transferring or
 * waiting (_allocatable_token_budgets): the blocks of that headroom, this request's
 * included. Other schedulers keep none. */
enum { SGL_RESERVED_DECODE_TOKENS = 512 };
static long decode_headroom(const sv_replica_t *r)
{
    if (r->cfg.scheduler != SV_SCHED_SGLANG) return 0;
    return whole_blocks(r, SGL_RESERVED_DECODE_TOKENS * (r->n_running + r->n_reserved + 1));
}

/* Room for request id's incoming KV, given the hits and untouched hits its cache holds
 * (room_for): a sequence slot ... */
static int seq_free(const sv_replica_t *r)
{
    return r->n_running + r->n_reserved < r->cfg.max_num_seqs;
}

/* ... the KV half of it: `need` its transfer_blocks(). */
static int blocks_free(const sv_replica_t *r, long need, long hit, long touched)
{
    return avail(r) - (need - hit) - touched - decode_headroom(r) >= r->watermark_blocks;
}

static int room_for(const sv_replica_t *r, int32_t id, long hit, long touched)
{
    return seq_free(r) && blocks_free(r, transfer_blocks(r, id), hit, touched);
}

int sv_replica_can_reserve(sv_replica_t *r, int32_t id)
{
    long touched, hit = transfer_hits(r, id, &touched);
    return room_for(r, id, hit, touched);
}

/* Whether two replicas count a request's blocks alike: transfer_blocks() reads their cost
 * model, block size and scheduler alone (what sv_replica_new derives from them). */
static int blocks_alike(const sv_replica_t *a, const sv_replica_t *b)
{
    return a->perf == b->perf && a->bs == b->bs && a->tr == b->tr;
}

int sv_replica_can_reserve_of(sv_replica_t *const *reps, const int *idx, int n, int32_t id,
                              int *out)
{
    int k = 0;
    const sv_replica_t *like = NULL; /* the last replica transfer_blocks() was worked out on */
    long need = 0;
    for (int i = 0; i < n; i++) { /* room_for() on each (its test, in its order), the
                                   * request's blocks counted once */
        sv_replica_t *r = reps[idx[i]];
        long touched, hit = transfer_hits(r, id, &touched);
        if (!seq_free(r)) continue;
        if (!like || !blocks_alike(like, r)) {
            need = transfer_blocks(r, id);
            like = r;
        }
        if (blocks_free(r, need, hit, touched)) out[k++] = idx[i];
    }
    return k;
}

int sv_replica_reserve(sv_replica_t *r, int32_t id)
{
    long touched, hit = transfer_hits(r, id, &touched);
    if (!room_for(r, id, hit, touched)) return 0;
    /* The hits first: taking blocks must not evict them. */
    take_hits(r, id, hit, 1);
    E(r, id)->xfer_hit = (int32_t)hit;
    sv__kv_reserve(KVP(r), transfer_blocks(r, id) - hit);
    r->n_reserved++;
    Q(r, id)->replica = r->id; /* where its KV is headed */
    long used = sv__kv_used(KVP(r));
    if (used > r->st.peak_blocks_used) r->st.peak_blocks_used = used;
    return 1;
}

void sv_replica_unreserve(sv_replica_t *r, int32_t id)
{
    sv_reqeng_t *e = E(r, id);
    sv__kv_unreserve(KVP(r), transfer_blocks(r, id) - e->xfer_hit);
    r->n_reserved--;
    if (e->xfer_hit) sv__kv_uncache(KVP(r), e->xslots, e->xfer_hit);
    e->xfer_hit = 0;
}

long sv_replica_transfer_cached(const sv_replica_t *r, int32_t id)
{
    return (long)E(r, id)->xfer_hit * r->bs;
}

void sv_replica_inject(sv_replica_t *r, int32_t id, double now)
{
    sv_req_t *q = Q(r, id);
    sv_reqeng_t *e = E(r, id);
    (void)now;
    long b = transfer_blocks(r, id);
    e->kv_tr = 0; /* its last step's, on the prefill replica, are behind it */
    r->n_reserved--;
    sv__kv_claim(KVP(r), b - e->xfer_hit); /* from here the request's own */
    e->cached_n = e->xfer_hit;             /* the hits are held through the cache */
    e->xfer_hit = 0;
    /* The prefill replica has released its slots: the incoming ones become the request's. */
    int32_t *v = e->slots, cap = e->capslots;
    e->slots = e->xslots;
    e->capslots = e->capxslots;
    e->xslots = v;
    e->capxslots = cap;
    q->replica = r->id;
    q->state = SV_RQ_RUNNING;
    e->at = r->id;
    e->queue = SV__Q_NONE;
    e->target = e->computed;
    e->heap_pos = e->seg = -1;
    e->reserved = r->reserve ? (int32_t)b : 0;
    e->in_decode = e->abort_pending = 0;
    e->joining = 1;
    run_append(r, id);
    r->owed += owed_of(r, id);
    if (r->n_running > r->st.peak_running) r->st.peak_running = r->n_running;
    push_id(r, &r->pending, &r->npend, &r->cappend, id);
}

double sv_replica_free_at(const sv_replica_t *r, double now)
{
    if (r->pp == 1) return r->ln->in_flight ? r->ln->step_start + r->ln->step_dur : now;
    const pipe_t *p = &r->pipe;
    if (p->s0_busy) return p->stage_free[0];
    return p->n < r->pp ? now : r->lanes[p->fifo[p->head]].exit;
}

int sv_replica_busy(const sv_replica_t *r)
{
    return r->pp == 1 ? r->ln->in_flight : r->pipe.n > 0 || r->pipe.s0_busy;
}

int sv_replica_ready(const sv_replica_t *r)
{
    return r->pp == 1 ? !r->ln->in_flight : pipe_ready(r);
}

long sv_replica_running(const sv_replica_t *r)
{
    return r->n_running;
}

long sv_replica_reserved(const sv_replica_t *r)
{
    return r->n_reserved;
}

long sv_replica_waiting(const sv_replica_t *r)
{
    return r->n_waiting + r->n_swapped;
}

long sv_replica_outstanding(const sv_replica_t *r)
{
    return r->n_running + (r->n_waiting + r->n_swapped) + r->n_reserved;
}

int sv_replica_waiting_visible(sv_replica_t *r, double now)
{
    if (r->n_swapped > 0) return 1;
    int32_t id = r->n_waiting > 0 ? wq_front(r) : -1;
    return id >= 0 && E(r, id)->visible <= now;
}

long sv_replica_tokens_owed(const sv_replica_t *r)
{
    return r->owed;
}

double sv_replica_spec_uniform(uint64_t seed, int32_t id, uint64_t n)
{
    const uint64_t gamma = 0x9e3779b97f4a7c15ULL;
    uint64_t s = sv_mix64(seed + ((uint64_t)id + 1) * gamma);
    return (double)(sv_mix64(s + (n + 1) * gamma) >> 11) * 0x1.0p-53;
}

void sv_replica_spec_counters(const sv_replica_stats_t *st, const sv_perf_settings_t *set,
                              sv_spec_counters_t *out)
{
    sv_spec_counters(set, st->decode_tokens, out);
    if (out->k == 0 || set->spec_expected) return;
    out->drafts = st->spec_drafts;
    out->draft_tokens = st->spec_draft_tokens;
    out->accepted = st->spec_accepted;
    out->mean_len = st->spec_drafts > 0 ? 1.0 + st->spec_accepted / st->spec_drafts : 0.0;
    for (int i = 0; i < out->k; i++)
        out->per_pos[i] = st->spec_pos[i];
}

long sv_replica_generated(const sv_replica_t *r, int32_t id)
{
    const sv_reqeng_t *e = E(r, id);
    if (e->in_decode && e->at == r->id) return e->g_join + member_tokens(r, e);
    return e->generated;
}

double sv_replica_kv_usage(const sv_replica_t *r)
{
    return KVP(r)->total ? (double)sv__kv_used(KVP(r)) / (double)KVP(r)->total : 0.0;
}

long sv_replica_free_blocks(const sv_replica_t *r)
{
    return avail(r);
}

long sv_replica_total_blocks(const sv_replica_t *r)
{
    return KVP(r)->total;
}

long sv_replica_batch_tokens(const sv_replica_t *r)
{
    long n = 0;
    for (int l = 0; l < r->pp; l++)
        if (r->lanes[l].in_flight) n += r->lanes[l].step_tokens;
    return n;
}

const sv_replica_stats_t *sv_replica_stats(const sv_replica_t *r)
{
    return &r->st;
}

void sv_replica_step_info(const sv_replica_t *r, sv_step_info_t *out)
{
    memset(out, 0, sizeof *out);
    if (!r->ln->in_flight) return;
    for (size_t i = 0; i < r->ln->nchunks; i++) {
        out->prefill_tokens += r->ln->chunks[i].n;
        out->cached_tokens += r->pch[i].cached_tokens;
    }
    out->prefill_seqs = (long)r->ln->nchunks;
    out->decode_seqs = r->ln->step_n_dec;
    out->decode_ctx_mean = r->ln->step_n_dec > 0 ? r->ln->ctx_sum / (double)r->ln->step_n_dec : 0.0;
    out->running = r->n_running;
    out->waiting = sv_replica_waiting(r);
    out->kv_usage = sv_replica_kv_usage(r);
    out->swap_s = r->ln->swap_time;
    out->preempted = r->ln->preempted_now;
    out->new_token_ratio = r->ntr;
}

/* pp > 1, micro-batches in flight: no request is in two at once. Each chunk in flight is
 * its request's one (marked in flight, of that lane, there once) and of no decoding
 * sequence (whose tokens come with its own lane's micro-batch). */
static int pipe_check(const sv_replica_t *r, char *msg, size_t size)
{
    for (int l = 0; l < r->pp; l++) {
        const lane_t *L = &r->lanes[l];
        for (size_t i = 0; L->in_flight && i < L->nchunks; i++) {
            int32_t id = L->chunks[i].id;
            const sv_reqeng_t *e = E(r, id);
            int twice = 0;
            for (int k = 0; k < r->pp; k++)
                for (size_t j = 0; r->lanes[k].in_flight && j < r->lanes[k].nchunks; j++)
                    twice += r->lanes[k].chunks[j].id == id;
            if (e->inflight && e->lane == l && !e->in_decode && twice == 1) continue;
            snprintf(msg, size,
                     "replica %d: request %d is in two micro-batches in flight (lane %d's chunk; "
                     "marked %d, lane %d, decoding %d, chunks in flight %d)",
                     r->id, (int)id, l, e->inflight, e->lane, e->in_decode, twice);
            return -1;
        }
    }
    return 0;
}

/* Every lockstep decoding sequence waits where its key puts it: in the wheel's bucket of
 * its key while that is less than FINISH_WHEEL - 1 steps ahead of its lane, else at its
 * slot of the heap; and nothing else waits there. */
static int finish_check(const sv_replica_t *r, char *msg, size_t size)
{
    if (r->spec_k) return 0;
    long waiting = 0, decoding = 0;
    for (int l = 0; l < r->pp; l++) {
        const lane_t *L = &r->lanes[l];
        waiting += (long)L->fh.n;
        for (int b = 0; L->wheel && b < FINISH_WHEEL; b++)
            for (int32_t id = L->wheel[b]; id >= 0; id = E(r, id)->wnext)
                waiting++;
        decoding += L->n_dec;
    }
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next) {
        const sv_reqeng_t *e = E(r, id);
        if (!e->in_decode) continue;
        const lane_t *L = LANE(r, e);
        int64_t key = e->kd_join + Q(r, id)->output - e->g_join - 1, ahead = key - L->kd;
        int found = 0;
        if (e->heap_pos == SV__IN_WHEEL && ahead >= 0 && ahead < FINISH_WHEEL - 1)
            for (int32_t j = L->wheel[key & (FINISH_WHEEL - 1)]; j >= 0 && !found; j = E(r, j)->wnext)
                found = j == id;
        else if (e->heap_pos >= 0 && (size_t)e->heap_pos < L->fh.n && ahead >= FINISH_WHEEL - 1)
            found = L->fh.v[e->heap_pos].id == id && L->fh.v[e->heap_pos].key == key;
        if (!found) {
            snprintf(msg, size,
                     "replica %d: decoding request %d (its last token at step %lld, the lane at "
                     "%lld) is not where the finish wheel or heap should hold it (slot %d)",
                     r->id, (int)id, (long long)key, (long long)L->kd, e->heap_pos);
            return -1;
        }
    }
    if (waiting == decoding) return 0;
    snprintf(msg, size, "replica %d: %ld sequences wait to finish, %ld are decoding", r->id,
             waiting, decoding);
    return -1;
}

/* The lockstep's buckets, kept as sequences join and leave and the lanes step, against a
 * recount: each lane's kd_mod is its kd modulo the block size; each decoding sequence's
 * phase is (c_join - kd_join) modulo the block size; each bucket counts the sequences of
 * its lane whose phase it is (those holding reserved blocks aside). */
static int bucket_check(const sv_replica_t *r, char *msg, size_t size)
{
    if (r->spec_k) return 0;
    long *count = calloc((size_t)r->pp * (size_t)r->bs, sizeof *count);
    if (!count) return 0; /* (no memory to check with: nothing found) */
    int bad = 0;
    for (int32_t id = r->run_head; id >= 0 && !bad; id = E(r, id)->next) {
        const sv_reqeng_t *e = E(r, id);
        if (!e->in_decode) continue;
        long p = ((long)e->c_join - e->kd_join) % r->bs;
        if (p < 0) p += r->bs;
        if (e->phase != p) {
            snprintf(msg, size, "replica %d: decoding request %d has phase %d, not %ld", r->id,
                     (int)id, (int)e->phase, p);
            bad = 1;
        }
        if (!e->reserved) count[(size_t)e->lane * (size_t)r->bs + (size_t)p]++;
    }
    for (int l = 0; l < r->pp && !bad; l++) {
        const lane_t *L = &r->lanes[l];
        if (L->kd_mod != L->kd % r->bs) {
            snprintf(msg, size, "replica %d: lane %d's step count %lld has kd_mod %d", r->id, l,
                     (long long)L->kd, L->kd_mod);
            bad = 1;
        }
        for (int b = 0; b < r->bs && !bad; b++) {
            if (L->bucket[b] == count[(size_t)l * (size_t)r->bs + (size_t)b]) continue;
            snprintf(msg, size, "replica %d: lane %d's bucket %d counts %ld sequences, %ld are in it",
                     r->id, l, b, L->bucket[b], count[(size_t)l * (size_t)r->bs + (size_t)b]);
            bad = 1;
        }
    }
    free(count);
    return bad ? -1 : 0;
}

int sv_replica_check(const sv_replica_t *r, char *msg, size_t size)
{
    if (r->pp > 1 && pipe_check(r, msg, size)) return -1;
    if (finish_check(r, msg, size)) return -1;
    if (bucket_check(r, msg, size)) return -1;
    if (sv_replica_busy(r)) return 0;
    long held = 0, n = 0;
    for (int32_t id = r->run_head; id >= 0; id = E(r, id)->next, n++)
        held += own_blocks(r, E(r, id));
    char what[SV_ERRMSG_MAX];
    if (n != r->n_running)
        snprintf(what, sizeof what, "the running list's length differs from the running count");
    else if (r->n_reserved < 0)
        snprintf(what, sizeof what, "a negative reservation");
    else if (sv__kv_check(KVP(r), held, what, sizeof what) == 0)
        return 0;
    snprintf(msg, size, "replica %d: %s; running %ld counted %ld", r->id, what, r->n_running, n);
    return -1;
}
