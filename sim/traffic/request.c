/*
 * The request pool (see include/servesim/traffic/request.h): public records and, when a
 * higher layer attaches one, its side array of per-request state, both indexed by request
 * id. A windowed pool holds the records from base on: compaction releases the leading
 * records of ended requests (a hook reads them first) and moves the rest down, only once
 * the ended prefix is at least a quarter of what is held, so that each record is moved a
 * bounded number of times on average. The side array is a ring whose room is a power of
 * two (request id's element at id & side_mask): releasing the side elements below the
 * oldest request not ended moves nothing, and growing it moves each held element at most
 * once, to the new half.
 */
#include "servesim/traffic/request.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec_int.h"
#include "servesim/base/error.h"

static void *side_el(const sv_reqpool_t *p, size_t id)
{
    return (char *)p->side + (id & p->side_mask) * p->side_size;
}

static void side_fresh(sv_reqpool_t *p, size_t id)
{
    void *el = side_el(p, id);
    memset(el, 0, p->side_size);
    if (p->side_init) p->side_init(el);
}

/* Room in the ring for `need` held side elements: a power of two, each held element (ids
 * side_base..n-1) moved to its slot in the larger ring. 0, SV_ENOMEM or SV_ELIMIT. */
static int side_grow(sv_reqpool_t *p, size_t need)
{
    size_t oc = p->cap_side, nc = oc ? oc : 16;
    if (need <= oc) return 0;
    if (need > ((size_t)1 << 34) / p->side_size) return SV_ELIMIT;
    while (nc < need)
        nc *= 2;
    char *v = realloc(p->side, nc * p->side_size);
    if (!v) return SV_ENOMEM;
    /* An element of id at slot id & (oc - 1) goes to id & (nc - 1): the same slot or one
     * in the new part, which no other element moves from (the held ids span at most oc). */
    for (size_t id = p->side_base; oc && id < p->n; id++) {
        size_t from = id & (oc - 1), to = id & (nc - 1);
        if (from != to) memcpy(v + to * p->side_size, v + from * p->side_size, p->side_size);
    }
    p->side = v;
    p->cap_side = nc;
    p->side_mask = nc - 1;
    return 0;
}

static void record_fresh(sv_req_t *r)
{
    memset(r, 0, sizeof *r);
    r->start = r->scheduled = r->first_token = r->last_token = -1.0;
    r->prefill_end = r->xfer_start = r->xfer_end = r->decode_start = -1.0;
    r->replica = r->prefill_replica = -1;
    r->state = SV_RQ_NEW;
}

int32_t sv_reqpool_add(sv_reqpool_t *p)
{
    if (p->n >= (size_t)INT32_MAX) return -1;
    size_t k = p->n - p->base; /* its record's slot */
    if (SV_GROW(p->r, p->cap, k + 1)) return -1;
    if (p->side_size && p->n - p->side_base == p->cap_side && side_grow(p, p->cap_side + 1))
        return -1;
    record_fresh(&p->r[k]);
    if (p->side_size) side_fresh(p, p->n);
    return (int32_t)p->n++;
}

int sv_reqpool_window(sv_reqpool_t *p, void (*on_release)(void *ctx, int32_t id, const sv_req_t *r),
                      void *ctx)
{
    if (p->n > 0) return SV_EINVAL;
    p->windowed = 1;
    p->look_at = SV_REQPOOL_WINDOW_MIN;
    p->on_release = on_release;
    p->release_ctx = ctx;
    return 0;
}

void sv_reqpool_side_window(sv_reqpool_t *p)
{
    if (p->windowed || p->side_windowed) return;
    p->side_windowed = 1;
    p->look_at = p->n + SV_REQPOOL_SIDE_STRIDE;
}

/* Release the side elements of the k held ids from side_base (ended): each is finished;
 * nothing moves. */
static void release_side(sv_reqpool_t *p, size_t k)
{
    for (size_t i = 0; p->side_size && p->side_fini && i < k; i++)
        p->side_fini(side_el(p, p->side_base + i));
    p->side_base += k;
}

/* Release the k leading held records (all ended): the hook reads each, its side element
 * is finished, the rest move down, and the segments no held record uses are dropped. */
static void release_prefix(sv_reqpool_t *p, size_t k)
{
    size_t held = p->n - p->base;
    for (size_t i = 0; p->on_release && i < k; i++)
        p->on_release(p->release_ctx, (int32_t)(p->base + i), &p->r[i]);
    release_side(p, k); /* (side_base = base) */
    memmove(p->r, p->r + k, (held - k) * sizeof *p->r);
    p->base += k;
    held -= k;
    size_t cut = p->nseg; /* the first segment a held record uses */
    for (size_t i = 0; i < held; i++)
        if (p->r[i].nseg > 0 && (size_t)p->r[i].seg_off < cut) cut = (size_t)p->r[i].seg_off;
    if (cut == 0) return;
    memmove(p->seg, p->seg + cut, (p->nseg - cut) * sizeof *p->seg);
    p->nseg -= cut;
    for (size_t i = 0; i < held; i++)
        if (p->r[i].nseg > 0) p->r[i].seg_off -= (int64_t)cut;
}

void sv__reqpool_compact(sv_reqpool_t *p)
{
    if (!p->windowed && !p->side_windowed) { /* no window: never again */
        p->look_at = SIZE_MAX;
        return;
    }
    size_t held = p->n - p->side_base, k = 0; /* (windowed: side_base = base) */
    const sv_req_t *r = p->r + (p->side_base - p->base);
    while (k < held && r[k].ended)
        k++;
    if (!p->windowed) { /* the side elements alone: nothing moves, so all go at once */
        release_side(p, k);
        p->look_at = p->n + SV_REQPOOL_SIDE_STRIDE;
        return;
    }
    if (k > 0 && k >= held / 4) {
        release_prefix(p, k);
        held -= k;
    }
    p->look_at = p->base + (held * 2 > SV_REQPOOL_WINDOW_MIN ? held * 2 : SV_REQPOOL_WINDOW_MIN);
}

void sv_reqpool_release_all(sv_reqpool_t *p)
{
    if (!p->windowed) return;
    size_t held = p->n - p->base, k = 0;
    while (k < held && p->r[k].ended)
        k++;
    if (k > 0) release_prefix(p, k);
}

int sv_reqpool_attach(sv_reqpool_t *p, size_t size, void (*init)(void *), void (*fini)(void *))
{
    if (p->side_size)
        return (p->side_size == size && p->side_init == init && p->side_fini == fini) ? 0
                                                                                      : SV_EINVAL;
    if (!size) return SV_EINVAL;
    p->side_size = size;
    p->side_init = init;
    p->side_fini = fini;
    if (side_grow(p, p->n - p->side_base + 1)) {
        p->side_size = 0;
        return SV_ENOMEM;
    }
    for (size_t id = p->side_base; id < p->n; id++)
        side_fresh(p, id);
    return 0;
}

int sv_reqpool_set_segments(sv_reqpool_t *p, int32_t id, const sv_segment_t *seg, int n)
{
    if (SV_GROW(p->seg, p->cap_seg, p->nseg + (size_t)n)) return SV_ENOMEM;
    memcpy(p->seg + p->nseg, seg, (size_t)n * sizeof *seg);
    sv_req_t *r = sv_reqpool_req(p, id);
    r->seg_off = (int64_t)p->nseg;
    r->nseg = n;
    p->nseg += (size_t)n;
    return 0;
}

void sv_reqpool_free(sv_reqpool_t *p)
{
    if (!p) return;
    for (size_t id = p->side_base; p->side && p->side_fini && id < p->n; id++)
        p->side_fini(side_el(p, id));
    free(p->r);
    free(p->side);
    free(p->seg);
    memset(p, 0, sizeof *p);
}
