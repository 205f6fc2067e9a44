/*
 * The event core: a priority queue of timed events ordered by (time, insertion
 * sequence), so events at equal times pop in the order they were pushed and every run
 * is deterministic. Simulated time is in seconds (double).
 *
 * An event is pushed once and fires once (sv_evq_push), or belongs to a timer: a handle
 * for one recurring kind of event of one owner (a replica's KV link, its cold start) that
 * can be started, restarted at another time or stopped, as libuv's uv_timer_t. Restarting
 * or stopping cancels the firing that was due: sv_evq_pop still hands it out at its time
 * with `cancelled` set (a tombstone: the clock and the count of events handled do not
 * depend on whether a timer moved), and the caller dispatches nothing for it. Whether a
 * firing is current is decided by the queue (its sequence number against the timer's),
 * never by comparing times.
 *
 * Ownership: sv_evq_init() sets up caller-owned storage; sv_evq_free() releases the
 * heap and the timers (NULL-safe on a zeroed queue). Events are plain values; timers are
 * indices the queue hands out, valid until sv_evq_free().
 */
#ifndef SERVESIM_ENGINE_H
#define SERVESIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sv_event {
    double time;
    uint64_t seq; /* insertion order, breaks ties */
    int32_t type;
    int32_t id;        /* what the event is about (request, replica), by the caller's meaning */
    int32_t timer;     /* the timer it belongs to, or -1 */
    uint8_t cancelled; /* a timer's firing that was stopped or moved: dispatch nothing */
} sv_event_t;

typedef int32_t sv_timer_t;

/* Internal: a heap entry (a timer's entry names the timer in `id`, flagged in `type`). */
typedef struct sv__event {
    double time;
    uint64_t seq;
    int32_t type, id;
} sv__event_t;

typedef struct sv__etimer {
    uint64_t seq; /* the sequence of its current firing */
    int32_t type, id;
    double time;
    int armed;
} sv__etimer_t;

typedef struct sv__evheap {
    sv__event_t *v;
    size_t n, cap;
} sv__evheap_t;

typedef struct sv_evq {
    sv__evheap_t heap; /* a 4-ary min-heap on (time, seq): sim/base/heap_int.h */
    /* A pop leaves its hole at the leaf it reached, counted in heap.n, for the next push to
     * rise from (a step's end pops the replica's event and pushes its next: one sift, not
     * two); anything else fills it with the last entry first. 0: none (the root is never
     * left a hole). */
    size_t hole;
    sv__etimer_t *timers;
    size_t ntimers, captimers;
    size_t max; /* bound on queued events; pushing past it fails */
    uint64_t next_seq;
} sv_evq_t;

/* max_events bounds the queue (0: 1<<26). */
void sv_evq_init(sv_evq_t *q, size_t max_events);
void sv_evq_free(sv_evq_t *q);

/* Internal: the queue's order, (time, seq). */
static inline int sv__evq_before(const sv__event_t *a, const sv__event_t *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}
/* Internal: e into the 4-ary heap v from the hole at i, up while it is before its parent
 * (the push's and the pop's last step; forced inline: GCC did not inline it everywhere). */
static inline __attribute__((always_inline)) void sv__evq_sift_up(sv__event_t *v, size_t i,
                                                                  const sv__event_t *e)
{
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!sv__evq_before(e, &v[p])) break;
        v[i] = v[p];
        i = p;
    }
    v[i] = *e;
}
/* Internal: sv_evq_push when the heap must grow first (or cannot). */
int sv__evq_push_grow(sv_evq_t *q, double time, int32_t type, int32_t id);

/* An event that fires once. 0, or SV_ENOMEM / SV_ELIMIT. Inline: with room in the heap
 * (every push but a few) the entry sifts up the 4-ary heap as a value, without a call,
 * from the hole the last pop left (sv_evq_t.hole) or else from its new leaf; growing is
 * out of line. */
static inline int sv_evq_push(sv_evq_t *q, double time, int32_t type, int32_t id)
{
    sv__evheap_t *h = &q->heap;
    size_t i = q->hole;
    if (i == 0) { /* (with a hole, the heap holds one fewer than n: there is room) */
        if (h->n >= h->cap || h->n >= q->max) return sv__evq_push_grow(q, time, type, id);
        i = h->n++;
    }
    q->hole = 0;
    sv__event_t e = {time, q->next_seq++, type, id};
    sv__evq_sift_up(h->v, i, &e);
    return 0;
}

/* A new timer for events (type, id), stopped, into *out. 0, or SV_ENOMEM / SV_ELIMIT. */
int sv_evq_timer_new(sv_evq_t *q, int32_t type, int32_t id, sv_timer_t *out);
/* Arm timer t to fire at time; a firing it had pending is cancelled. 0, or SV_ENOMEM /
 * SV_ELIMIT. */
int sv_evq_timer_start(sv_evq_t *q, sv_timer_t t, double time);
/* Cancel its pending firing, if any. */
void sv_evq_timer_stop(sv_evq_t *q, sv_timer_t t);
/* 1 with its due time in *time (may be NULL) when timer t is armed, else 0. A timer is
 * disarmed when its firing pops. */
int sv_evq_timer_armed(const sv_evq_t *q, sv_timer_t t, double *time);

/* Pop the earliest event into *ev; returns 0 when the queue is empty, 1 otherwise. */
int sv_evq_pop(sv_evq_t *q, sv_event_t *ev);

/* The time and sequence of the earliest event without removing it; 0 when the queue is
 * empty, 1 otherwise. */
static inline int sv_evq_peek(const sv_evq_t *q, double *t, uint64_t *seq)
{
    if (q->heap.n == 0) return 0;
    *t = q->heap.v[0].time;
    *seq = q->heap.v[0].seq;
    return 1;
}

/* The sequence number the next push would take, taken, for an event its caller keeps in
 * a queue of its own and merges with this one by (time, sequence). */
static inline uint64_t sv_evq_take_seq(sv_evq_t *q)
{
    return q->next_seq++;
}

/* The time of the earliest event into *t without removing it; 0 when the queue is
 * empty, 1 otherwise. */
static inline int sv_evq_peek_time(const sv_evq_t *q, double *t)
{
    if (q->heap.n == 0) return 0;
    *t = q->heap.v[0].time;
    return 1;
}

#endif
