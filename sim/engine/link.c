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

/*
 * Each transfer's rate at the link's time: 0 in its latency; FIFO: the first moving one at
 * min(bw, cap); fair: bw / m each when no cap is below that (the common case, computed
 * alone so that it is exactly the share), else water-filling: the transfers whose cap is
 * below the equal share of what is left take their cap, in increasing order of cap, and
 * the rest split the remainder.
 */
static void rates(sv_link_t *l)
{
    size_t m = moving(l, l->t), k = 0;
    double share = m ? l->bw / (double)m : 0.0;
    int binds = 0;
    for (size_t i = 0; i < l->n; i++) {
        sv_xfer_t *x = &l->x[i];
        x->rate = 0.0;
        if (x->ready > l->t || k >= m) continue;
        k++;
        x->rate = l->fifo ? fmin(l->bw, x->cap) : share;
        if (x->cap < share) binds = 1;
    }
    if (!binds || l->fifo) return;
    double left = l->bw;
    size_t open = m;
    for (;;) { /* each round fixes at least one capped transfer, or ends */
        double eq = left / (double)open;
        int fixed = 0;
        for (size_t i = 0; i < l->n; i++) {
            sv_xfer_t *x = &l->x[i];
            if (x->ready > l->t || x->rate < 0) continue;
            if (x->cap < eq) {
                x->rate = -x->cap; /* fixed: negative marks it until the end */
                left -= x->cap;
                open--;
                fixed = 1;
            }
        }
        if (!fixed || open == 0) break;
    }
    double eq = open ? left / (double)open : 0.0;
    for (size_t i = 0; i < l->n; i++) {
        sv_xfer_t *x = &l->x[i];
        if (x->ready > l->t) continue;
        x->rate = x->rate < 0 ? -x->rate : eq;
    }
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
        for (size_t i = 0; i < l->n; i++) {
            if (l->x[i].rate <= 0) continue;
            double moved = l->x[i].rate * dt;
            if (moved > l->x[i].remaining) moved = l->x[i].remaining;
            l->x[i].remaining -= moved;
            l->bytes += moved;
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
    rates(l);
    return nd;
}

int sv_link_add(sv_link_t *l, double now, int32_t id, double bytes)
{
    if (SV_GROW(l->x, l->cap, l->n + 1)) return SV_ENOMEM;
    if (now > l->t) l->t = now;
    l->x[l->n++] = (sv_xfer_t){.id = id,
                               .ready = now + l->latency,
                               .remaining = bytes,
                               .total = bytes,
                               .cap = INFINITY};
    rates(l);
    return 0;
}

int sv_link_set_cap(sv_link_t *l, int32_t id, double cap)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->x[i].id == id) {
            l->x[i].cap = cap;
            rates(l);
            return 1;
        }
    return 0;
}

int sv_link_cancel(sv_link_t *l, double now, int32_t id)
{
    (void)now; /* the caller advanced the link to now */
    for (size_t i = 0; i < l->n; i++) {
        if (l->x[i].id != id) continue;
        memmove(&l->x[i], &l->x[i + 1], (l->n - i - 1) * sizeof *l->x);
        l->n--;
        rates(l);
        return 1;
    }
    return 0;
}

double sv_link_next(const sv_link_t *l)
{
    double next = INFINITY;
    for (size_t i = 0; i < l->n; i++) {
        const sv_xfer_t *x = &l->x[i];
        if (x->ready > l->t) {
            if (x->ready < next) next = x->ready;
        } else if (x->rate > 0) {
            double t = l->t + x->remaining / x->rate;
            /* Late in a long run the last sliver of bytes can take less than one step of
             * the clock: then it finishes at the next representable time. */
            if (t <= l->t) t = nextafter(l->t, INFINITY);
            if (t < next) next = t;
        }
    }
    return next;
}
