/*
 * The event queue (see include/servesim/engine/engine.h): a 4-ary min-heap on
 * (time, seq) from sim/base/heap_int.h with a pop of its own (evheap_pop_top, which leaves
 * its hole for the next push), and the timers whose firings it tells current from
 * cancelled by their sequence numbers.
 */
#include "servesim/engine/engine.h"

#include <stdlib.h>

#include "servesim/base/error.h"
#include "base/heap_int.h"
#include "base/vec_int.h"

/* A timer's heap entry has this bit in its type and the timer's index as its id. */
#define TIMER_FLAG ((int32_t)1 << 30)

static inline int before(const sv__event_t *a, const sv__event_t *b)
{
    return sv__evq_before(a, b);
}

/* The heap's arity (evheap_pop_top and engine.h's sv__evq_sift_up walk it as 4 too). */
SV_HEAP_DEFINE(evheap, sv__evheap_t, sv__event_t, 4, before, SV_HEAP_UNTRACKED)

/* Remove the top: its hole goes down to a leaf along the least children (the last entry
 * among them), where it is left for the next push to rise from (sv_evq_t.hole); at the
 * last position it is simply dropped. The order is total (no two entries share a
 * sequence), so the heap pops the same order whichever way it is kept. */
static inline void evheap_pop_top(sv_evq_t *q)
{
    sv__evheap_t *h = &q->heap;
    size_t n = h->n, i = 0;
    sv__event_t *v = h->v;
    for (;;) {
        size_t c = 4 * i + 1, first = c;
        if (c + 4 <= n) {
            c = before(&v[first + 1], &v[c]) ? first + 1 : c;
            c = before(&v[first + 2], &v[c]) ? first + 2 : c;
            c = before(&v[first + 3], &v[c]) ? first + 3 : c;
        } else if (c < n) {
            for (size_t k = first + 1; k < n; k++)
                if (before(&v[k], &v[c])) c = k;
        } else {
            break;
        }
        v[i] = v[c];
        i = c;
    }
    if (i == n - 1)
        h->n = n - 1;
    else
        q->hole = i;
}

/* The hole a pop left, filled as that pop would have: the last entry rises from it. */
static void fill_hole(sv_evq_t *q)
{
    sv__evheap_t *h = &q->heap;
    sv__event_t e = h->v[--h->n];
    sv__evq_sift_up(h->v, q->hole, &e);
    q->hole = 0;
}

void sv_evq_init(sv_evq_t *q, size_t max_events)
{
    q->heap.v = NULL;
    q->heap.n = q->heap.cap = 0;
    q->timers = NULL;
    q->ntimers = q->captimers = 0;
    q->max = max_events ? max_events : ((size_t)1 << 26);
    q->next_seq = 0;
    q->hole = 0;
}

void sv_evq_free(sv_evq_t *q)
{
    free(q->heap.v);
    free(q->timers);
    q->heap.v = NULL;
    q->heap.n = q->heap.cap = 0;
    q->hole = 0;
    q->timers = NULL;
    q->ntimers = q->captimers = 0;
}

static int push_entry(sv_evq_t *q, double time, int32_t type, int32_t id, uint64_t *seq)
{
    if (q->hole) fill_hole(q);
    if (q->heap.n >= q->max) return SV_ELIMIT;
    *seq = q->next_seq;
    int rc = evheap_push(&q->heap, NULL, (sv__event_t){time, q->next_seq, type, id});
    if (!rc) q->next_seq++;
    return rc;
}

int sv__evq_push_grow(sv_evq_t *q, double time, int32_t type, int32_t id)
{
    uint64_t seq;
    return push_entry(q, time, type, id, &seq);
}

int sv_evq_timer_new(sv_evq_t *q, int32_t type, int32_t id, sv_timer_t *out)
{
    if (q->ntimers >= (size_t)INT32_MAX) return SV_ELIMIT;
    int rc = SV_GROW(q->timers, q->captimers, q->ntimers + 1);
    if (rc) return rc;
    q->timers[q->ntimers] = (sv__etimer_t){.type = type, .id = id};
    *out = (sv_timer_t)q->ntimers++;
    return 0;
}

int sv_evq_timer_start(sv_evq_t *q, sv_timer_t t, double time)
{
    sv__etimer_t *tm = &q->timers[t];
    uint64_t seq;
    int rc = push_entry(q, time, tm->type | TIMER_FLAG, t, &seq);
    if (rc) return rc;
    tm->seq = seq; /* the firing it had pending, if any, is a tombstone from here */
    tm->time = time;
    tm->armed = 1;
    return 0;
}

void sv_evq_timer_stop(sv_evq_t *q, sv_timer_t t)
{
    q->timers[t].armed = 0;
}

int sv_evq_timer_armed(const sv_evq_t *q, sv_timer_t t, double *time)
{
    const sv__etimer_t *tm = &q->timers[t];
    if (tm->armed && time) *time = tm->time;
    return tm->armed;
}

int sv_evq_pop(sv_evq_t *q, sv_event_t *ev)
{
    if (q->hole) fill_hole(q);
    if (q->heap.n == 0) return 0;
    sv__event_t e = q->heap.v[0];
    evheap_pop_top(q);
    ev->time = e.time;
    ev->seq = e.seq;
    ev->type = e.type;
    ev->id = e.id;
    ev->timer = -1;
    ev->cancelled = 0;
    if (e.type & TIMER_FLAG) {
        sv__etimer_t *tm = &q->timers[e.id];
        ev->type = tm->type;
        ev->id = tm->id;
        ev->timer = e.id;
        ev->cancelled = !tm->armed || tm->seq != e.seq;
        if (!ev->cancelled) tm->armed = 0;
    }
    return 1;
}
