/*
 * The event core: a priority queue of timed events ordered by (time, insertion
 * sequence), so events at equal times pop in the order they were pushed and every run
 * is deterministic. Simulated time is in seconds (double).
 *
 * Ownership: sv_evq_init() sets up caller-owned storage; sv_evq_free() releases the
 * heap array (NULL-safe on a zeroed queue). Events are plain values.
 */
#ifndef SERVESIM_ENGINE_H
#define SERVESIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sv_event {
    double time;
    uint64_t seq; /* insertion order, breaks ties */
    int32_t type;
    int32_t id; /* what the event is about (request, replica), by the caller's meaning */
} sv_event_t;

typedef struct sv_evq {
    sv_event_t *heap;
    size_t n, cap;
    size_t max; /* bound on queued events; pushing past it fails */
    uint64_t next_seq;
} sv_evq_t;

/* max_events bounds the queue (0: 1<<26). */
void sv_evq_init(sv_evq_t *q, size_t max_events);
void sv_evq_free(sv_evq_t *q);

/* 0, or SV_ENOMEM / SV_ELIMIT. */
int sv_evq_push(sv_evq_t *q, double time, int32_t type, int32_t id);

/* Pop the earliest event into *ev; returns 0 when the queue is empty, 1 otherwise. */
int sv_evq_pop(sv_evq_t *q, sv_event_t *ev);

/* The time of the earliest event into *t without removing it; 0 when the queue is
 * empty, 1 otherwise. */
static inline int sv_evq_peek_time(const sv_evq_t *q, double *t)
{
    if (q->n == 0) return 0;
    *t = q->heap[0].time;
    return 1;
}

#endif
