/*
 * KV transfer links with fair-share or FIFO bandwidth (see include/servesim/engine/link.h).
 */
#include "servesim/engine/link.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/base/error.h"
#include "base/vec_int.h"

void sv_link_init(sv_link_t *l, double bw, double latency, int fifo)
{
    memset(l, 0, sizeof *l);
    l->bw = bw;
    l->latency = latency;
    l->fifo = fifo;
}

void sv_link_free(sv_link_t *l)
{
    free(l->x);
    l->x = NULL;
    l->n = l->cap = 0;
}

/* Moving transfers at time t: those past their latency. For FIFO only the first of them. */
static size_t moving(const sv_link_t *l, double t)
{
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->x[i].ready <= t) m++;
    return (l->fifo && m > 1) ? 1 : m;
}

static int done_bytes(const sv_xfer_t *x)
{
    return x->remaining <= 1e-9 * x->total + 1e-6;
}

size_t sv_link_advance(sv_link_t *l, double now, int32_t *done, size_t max)
{
    double dt = now - l->t;
    size_t m = moving(l, l->t);
    if (dt > 0 && m > 0) {
        double share = l->bw / (double)m;
        size_t k = 0;
        for (size_t i = 0; i < l->n && k < m; i++) {
            if (l->x[i].ready > l->t) continue;
            double moved = share * dt;
            if (moved > l->x[i].remaining) moved = l->x[i].remaining;
            l->x[i].remaining -= moved;
            l->bytes += moved;
            k++;
        }
        l->busy_s += dt;
    }
    if (now > l->t) l->t = now;
    size_t nd = 0, w = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->x[i].ready <= l->t && done_bytes(&l->x[i]) && nd < max) {
            l->bytes += l->x[i].remaining;
            done[nd++] = l->x[i].id;
            l->transfers++;
        } else {
            l->x[w++] = l->x[i]; /* order kept: FIFO serves the earliest added */
        }
    }
    l->n = w;
    return nd;
}

int sv_link_add(sv_link_t *l, double now, int32_t id, double bytes)
{
    if (SV_GROW(l->x, l->cap, l->n + 1)) return SV_ENOMEM;
    if (now > l->t) l->t = now;
    l->x[l->n++] =
        (sv_xfer_t){.id = id, .ready = now + l->latency, .remaining = bytes, .total = bytes};
    return 0;
}

int sv_link_cancel(sv_link_t *l, double now, int32_t id)
{
    (void)now; /* the caller advanced the link to now */
    for (size_t i = 0; i < l->n; i++) {
        if (l->x[i].id != id) continue;
        memmove(&l->x[i], &l->x[i + 1], (l->n - i - 1) * sizeof *l->x);
        l->n--;
        return 1;
    }
    return 0;
}

double sv_link_next(const sv_link_t *l)
{
    double next = INFINITY;
    size_t m = moving(l, l->t);
    double share = m ? l->bw / (double)m : 0.0;
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        const sv_xfer_t *x = &l->x[i];
        if (x->ready > l->t) {
            if (x->ready < next) next = x->ready;
        } else if (k < m) {
            double t = l->t + x->remaining / share;
            /* Late in a long run the last sliver of bytes can take less than one step of
             * the clock: then it finishes at the next representable time. */
            if (t <= l->t) t = nextafter(l->t, INFINITY);
            if (t < next) next = t;
            k++;
        }
    }
    return next;
}
