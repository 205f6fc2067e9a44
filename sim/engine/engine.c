/*
 * The event queue (see include/servesim/engine/engine.h): a binary min-heap on (time, seq).
 */
#include "servesim/engine/engine.h"

#include <stdlib.h>

#include "servesim/base/error.h"

void sv_evq_init(sv_evq_t *q, size_t max_events)
{
    q->heap = NULL;
    q->n = q->cap = 0;
    q->max = max_events ? max_events : ((size_t)1 << 26);
    q->next_seq = 0;
}

void sv_evq_free(sv_evq_t *q)
{
    free(q->heap);
    q->heap = NULL;
    q->n = q->cap = 0;
}

static inline int before(const sv_event_t *a, const sv_event_t *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

int sv_evq_push(sv_evq_t *q, double time, int32_t type, int32_t id)
{
    if (q->n == q->cap) {
        if (q->n >= q->max) return SV_ELIMIT;
        size_t nc = q->cap ? q->cap * 2 : 64;
        if (nc > q->max) nc = q->max;
        sv_event_t *h = realloc(q->heap, nc * sizeof *h);
        if (!h) return SV_ENOMEM;
        q->heap = h;
        q->cap = nc;
    }
    sv_event_t ev = {.time = time, .seq = q->next_seq++, .type = type, .id = id};
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&ev, &q->heap[parent])) break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = ev;
    return 0;
}

int sv_evq_pop(sv_evq_t *q, sv_event_t *ev)
{
    if (q->n == 0) return 0;
    *ev = q->heap[0];
    sv_event_t last = q->heap[--q->n];
    size_t i = 0, n = q->n;
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n) break;
        size_t c = (l + 1 < n && before(&q->heap[l + 1], &q->heap[l])) ? l + 1 : l;
        if (!before(&q->heap[c], &last)) break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n) q->heap[i] = last;
    return 1;
}
